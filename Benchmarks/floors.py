"""Issue 42's performance floors in one table: each figure beside its
baseline, both measured in the same run, beside the goal, with a verdict.

    .venv/bin/python Benchmarks/floors.py                    # full mode
    .venv/bin/python Benchmarks/floors.py --quick            # a smoke check, about 20 s
    .venv/bin/python Benchmarks/floors.py --skip-valgrind --skip-swift --skip-python
    Benchmarks/floors.sh [--with-swift] [the options above]  # builds the programs first

This script measures nothing itself. It runs the benchmark programs that
already exist (Benchmarks/README.md, "What each program measures") and
reads the Markdown tables they print:

  build/ydbview-c-bench ROWS COMMITS, twice: as is, and with
      YDBVIEW_BENCH_ROWS_IN_MEMORY=1, where its comparator view keeps its
      rows in memory (the flavour "comparator, rows in memory"). One-row
      update / insert / delete commits with a reader catching up,
      populations against CREATE INDEX, memory per row.
  build/ydbview-c-bench --profile STORE KIND ROWS COMMITS under valgrind's
      callgrind: instructions per one-row commit, the engine's and SQLite's.
  build/ydbview-many-views: one-row commits with 100 views against SQLite
      with 100 indexes.
  build/ydbview-registration-stalls: another writer's p99 latency while a
      view over 1M rows is registered in the background, and how long that
      registration takes against a blocking one.
  .build-bench/release/ydbview-bench (Swift, built by `swift build`, not by
      CMake): the changeset of a 50-row window against LIMIT 50 + diff, and
      reopening a stored view.
  Benchmarks/python/bench.py: the Python package against sqlite3 and
      sortedcontainers' SortedKeyList.

Full mode (the default) runs the C benchmark at 100k and 1M rows, counts
instructions at 100k rows, runs many-views with 100 views at 10k and 100k
rows, the stalls benchmark and the Swift benchmark at 1M rows and bench.py
at 100k rows. On 2 cores shared with a build that took 12.5 minutes: 6.6
for the timed programs, one at a time (many-views at 100k rows alone 2),
then 5.9 for the twelve callgrind runs, two at a time (an instruction
count does not depend on the load). `--quick` runs 10k and 100k rows, 10
views, few commits and no valgrind: about 20 seconds.

The plan and each program's progress go to stderr; the table, then how
long each program took, go to stdout. A ratio is ydbview's figure ÷ its
baseline's (below 1× ydbview is faster), and "met?" compares it, or the
figure itself for memory and latency, with the goal at the precision
printed. An instruction count carries the goal of the time it stands
for: the same floor without the machine's noise. The reopen's baseline
is opening the plain file and reading every row in its index's order.
A program that is missing or fails leaves its
rows saying why; the script goes on and exits with status 1 at the end.
Set TMPDIR to a memory file system (e.g. TMPDIR=/dev/shm) to keep the disk
out of the figures of the programs that honour it.
"""

from __future__ import annotations

import argparse
import math
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Dict, Iterable, List, Optional, Tuple, Union

CHECKOUT = Path(__file__).resolve().parent.parent

# Every path below is relative to the checkout, where the programs run.
C_BENCH = "build/ydbview-c-bench"
MANY_VIEWS = "build/ydbview-many-views"
STALLS = "build/ydbview-registration-stalls"
LIBRARY = "build/libydbview.so"
SWIFT_BENCH = ".build-bench/release/ydbview-bench"
PYTHON_BENCH = "Benchmarks/python/bench.py"
ENGINE_SOURCES = "Sources"

BUILD_SWIFT = "build it with `swift build -c release --scratch-path .build-bench --product ydbview-bench`"
INSTALL_SORTEDCONTAINERS = ".venv/bin/python -m pip install sortedcontainers"


# --- what each mode runs ---


@dataclass(frozen=True)
class Sizes:
    """The sizes one mode runs the programs at."""

    #: (rows, commits) of each C benchmark run; the last also gives the
    #: population and memory floors.
    c_bench: Tuple[Tuple[int, int], ...]
    #: (rows, commits) counted by callgrind, or None for no instruction counts.
    instructions: Optional[Tuple[int, int]]
    #: (rows, commits) of each many-views run, and its number of views.
    many_views: Tuple[Tuple[int, int], ...]
    view_count: int
    stalls_rows: int
    python: Tuple[int, int]
    swift_rows: int
    swift_options: Tuple[str, ...]


FULL = Sizes(c_bench=((100_000, 2000), (1_000_000, 1000)), instructions=(100_000, 200),
             # 100 views at 100k rows take about 2.5 minutes (most of it
             # populating 300 views of 100k rows): worth it, since the
             # ratios there differ from those at 10k rows.
             many_views=((10_000, 300), (100_000, 200)), view_count=100,
             stalls_rows=1_000_000, python=(100_000, 1000), swift_rows=1_000_000, swift_options=())
QUICK = Sizes(c_bench=((10_000, 300), (100_000, 300)), instructions=None,
              many_views=((10_000, 100),), view_count=10,
              stalls_rows=100_000, python=(10_000, 200), swift_rows=10_000, swift_options=("--repeats", "1"))


KINDS = ("update", "insert", "delete")

#: The C benchmark's flavours: the run (rows in memory or not) and the
#: column of its table holding the figure; column 1 is plain SQLite's.
C_FLAVOURS = (("sort keys", False, 4), ("C comparator", False, 2), ("comparator, rows in memory", True, 2))
#: `ydbview-c-bench --profile` stores counted by callgrind, and whether
#: with YDBVIEW_BENCH_ROWS_IN_MEMORY=1: plain SQLite, then each flavour's.
INSTRUCTION_STORES = (("plain", False), ("keyed", False), ("compared", False), ("compared", True))
INSTRUCTION_FLAVOURS = (("sort keys", "keyed", False), ("C comparator", "compared", False),
                        ("comparator, rows in memory", "compared", True))


def size_label(rows: int) -> str:
    if rows % 1_000_000 == 0:
        return f"{rows // 1_000_000}M"
    if rows % 1000 == 0:
        return f"{rows // 1000}k"
    return str(rows)


# --- running the programs ---


#: How the rows find a job's run: ("c-bench", rows, in memory), ("stalls", keyed), ...
JobKey = Tuple[Union[str, int, bool], ...]


@dataclass(frozen=True)
class Job:
    """One program to run; `key` is how the rows below find its output."""

    key: JobKey
    command: Tuple[str, ...]
    env: Tuple[Tuple[str, str], ...] = ()
    #: Why it will not run (a file missing, an option), or "" to run it.
    unavailable: str = ""
    #: Whether that is an option given, not something missing: no failure.
    skipped: bool = False
    #: The file callgrind writes its counts to, for a job counting instructions.
    callgrind_out: Optional[Path] = None

    @property
    def description(self) -> str:
        """The command as typed in the checkout; a callgrind run as the
        program it counts (its output file is a temporary one)."""
        if self.callgrind_out is None:
            return shown(self.command, self.env)
        return f"{shown(self.command[self.command.index(C_BENCH):], self.env)} under callgrind"


@dataclass
class Run:
    """What one job printed, or why there is nothing to read."""

    job: Job
    seconds: float = 0.0
    output: str = ""
    problem: str = ""

    @property
    def failed(self) -> bool:
        return bool(self.problem) and not self.job.skipped


def log(message: str) -> None:
    print(f"[floors] {message}", file=sys.stderr, flush=True)


def shown(command: Iterable[str], env: Iterable[Tuple[str, str]] = ()) -> str:
    """The command as typed in the checkout: its paths relative to it."""
    words = [f"{name}={shlex.quote(value)}" for name, value in env]
    for word in command:
        path = Path(word)
        if path.is_absolute() and path.is_relative_to(CHECKOUT):
            word = str(path.relative_to(CHECKOUT))
        words.append(shlex.quote(word))
    return " ".join(words)


def missing(path: str, how: str) -> str:
    """Why a program cannot run, or "" when `path` is there."""
    return "" if (CHECKOUT / path).exists() else f"not run: {path} is missing; {how}"


def cmake_builds(target: str) -> str:
    return f"build it with `cmake --build build --target {target}` (Benchmarks/floors.sh does)"


def run(job: Job) -> Run:
    if job.unavailable:
        return Run(job, problem=job.unavailable)
    log(f"running {job.description}")
    # The program's progress (stderr) goes straight to ours; its tables
    # (stdout) are what we read.
    started = time.monotonic()
    finished = subprocess.run(job.command, cwd=CHECKOUT, env={**os.environ, **dict(job.env)},
                              stdout=subprocess.PIPE, text=True)
    result = Run(job, seconds=time.monotonic() - started, output=finished.stdout)
    if finished.returncode != 0:
        result.problem = (f"failed: `{job.description}` exited with status {finished.returncode} "
                          "(its stderr is above)")
    elif job.callgrind_out is not None:
        result.output = job.callgrind_out.read_text(errors="replace")
    log(f"  {result.seconds:.1f} s: {job.description}" + (f": {result.problem}" if result.problem else ""))
    return result


# --- reading what they print ---


class NotMeasured(Exception):
    """A figure that is not there: its program did not run, or printed no
    such row. `failed` is false when an option left it out."""

    def __init__(self, reason: str, failed: bool = True) -> None:
        super().__init__(reason)
        self.failed = failed


@dataclass
class Table:
    title: str
    header: List[str]
    rows: List[List[str]]

    def row(self, *first_cells: str) -> List[str]:
        """The row whose first cells begin with the words `first_cells`: a
        label may go on ("populate (CREATE INDEX / register)" finds it with
        ", median of 3" after), a number may not ("10" is not "100")."""
        def begins(cell: str, words: str) -> bool:
            return cell == words or (cell.startswith(words) and not cell[len(words)].isalnum())
        for cells in self.rows:
            if len(cells) >= len(first_cells) and all(map(begins, cells, first_cells)):
                return cells
        raise NotMeasured(f"no row {' / '.join(first_cells)!r} in table {self.title!r}")

    def column(self, name: str) -> int:
        if name not in self.header:
            raise NotMeasured(f"no column {name!r} in table {self.title!r}")
        return self.header.index(name)


def markdown_tables(text: str) -> List[Table]:
    """Every table in `text`, each titled by the last line of text above it."""
    tables: List[Table] = []
    title = ""
    current: Optional[Table] = None
    for line in text.splitlines():
        line = line.strip()
        if not line.startswith("|"):
            current = None
            if line:
                title = line.lstrip("#").strip()
            continue
        cells = [cell.strip() for cell in line.strip("|").split("|")]
        if current is None:
            current = Table(title, cells, [])
            tables.append(current)
        elif not all(set(cell) <= set("-: ") for cell in cells):   # not the |---| line
            current.rows.append(cells)
    return tables


def output_of(run_: Run) -> str:
    if run_.problem:
        raise NotMeasured(run_.problem, failed=run_.failed)
    return run_.output


def table_of(run_: Run, title_start: str = "") -> Table:
    for table in markdown_tables(output_of(run_)):
        if table.title.startswith(title_start):
            return table
    raise NotMeasured(f"`{run_.job.description}` printed no table {title_start!r}")


SCALE = {"ns": 1e-9, "us": 1e-6, "µs": 1e-6, "ms": 1e-3, "s": 1.0, "B/row": 1.0, "B": 1.0}


def seconds_or_bytes(cell: str, unit: str = "") -> float:
    """A cell's first number in seconds (or bytes per row): "31.3 us",
    "58.2 µs / 70.0 µs" (the first, a median), "1816.9" with `unit`."""
    found = re.match(r"(nan|[0-9][0-9,]*(?:\.[0-9]+)?)\s*([^\s/]*)", cell.strip())
    if not found or (found.group(2) or unit) not in SCALE:
        raise NotMeasured(f"no figure in {cell!r}")
    return float(found.group(1).replace(",", "")) * SCALE[found.group(2) or unit]


# --- the figures and the table ---


@dataclass(frozen=True)
class Quantity:
    value: float
    kind: str   # "time" (seconds), "memory" (bytes per row) or "instructions" (per commit)

    def __str__(self) -> str:
        if self.kind == "memory":
            return f"{self.value:.0f} B/row"
        if self.kind == "instructions":
            return f"{self.value / 1e3:,.1f}k instructions"
        for unit, scale in (("s", 1.0), ("ms", 1e-3), ("µs", 1e-6)):
            if self.value >= scale or unit == "µs":
                number = self.value / scale
                return f"{number:.{2 if number < 10 else 1 if number < 100 else 0}f} {unit}"
        raise AssertionError("unreachable")


def time_of(cell: str, unit: str = "") -> Quantity:
    return Quantity(seconds_or_bytes(cell, unit), "time")


@dataclass(frozen=True)
class Goal:
    """A ceiling: on the ratio (ydbview ÷ baseline), or on the figure itself
    (`on_figure`, in the figure's units: seconds, bytes per row)."""

    limit: float
    text: str
    on_figure: bool = False

    def met(self, figure: Quantity, ratio: Optional[float]) -> bool:
        if self.on_figure:
            return round(figure.value, 9) <= self.limit
        # The ratio as printed, so that "1.20×" meets "≤ 1.2×".
        return ratio is not None and round(ratio, 2) <= self.limit


def at_most(ratio: float) -> Goal:
    return Goal(ratio, f"≤ {ratio:g}×")


@dataclass
class Row:
    floor: str
    size: str
    flavour: str
    goal: Goal
    ydbview: str = ""
    baseline: str = ""
    ratio: str = ""
    met: str = ""
    failed: bool = False


#: What a row's measure returns: the figure, and its baseline or why there is none.
Measured = Tuple[Quantity, Union[Quantity, str]]


def floor(floor_: str, size: str, flavour: str, goal: Goal, measure: Callable[[], Measured]) -> Row:
    """One row of the table: `measure` reads the figure and its baseline
    from the programs' output, or raises NotMeasured."""
    row = Row(floor_, size, flavour, goal)
    try:
        figure, baseline = measure()
    except NotMeasured as why:
        row.ydbview, row.met, row.failed = str(why), "—", why.failed
        return row
    row.ydbview = str(figure)
    if isinstance(baseline, str):   # no baseline to compare with: no ratio
        row.baseline = baseline
        row.met = ("yes" if goal.met(figure, None) else "no") if goal.on_figure else "—"
        return row
    ratio = figure.value / baseline.value
    row.baseline, row.ratio = str(baseline), f"{ratio:.2f}×"
    row.met = "yes" if goal.met(figure, ratio) else "no"
    return row


def render(rows: List[Row]) -> str:
    lines = ["| floor | size | flavour | ydbview | baseline | ratio | goal | met? |",
             "|---|---|---|---|---|---|---|---|"]
    for r in rows:
        cells = (r.floor, r.size, r.flavour, r.ydbview, r.baseline, r.ratio, r.goal.text, r.met)
        lines.append("| " + " | ".join(cell.replace("|", "\\|") for cell in cells) + " |")
    return "\n".join(lines)


# --- the jobs ---


def plan(sizes: Sizes, options: argparse.Namespace, scratch: Path) -> List[Job]:
    """Every program run, in the order they run (the callgrind runs last)."""
    jobs: List[Job] = []
    c_missing = missing(C_BENCH, cmake_builds("ydbview-c-bench"))
    for rows, commits in sizes.c_bench:
        for in_memory in (False, True):
            env = (("YDBVIEW_BENCH_ROWS_IN_MEMORY", "1"),) if in_memory else ()
            jobs.append(Job(("c-bench", rows, in_memory), (C_BENCH, str(rows), str(commits)), env, c_missing))
    for rows, commits in sizes.many_views:
        jobs.append(Job(("many-views", rows), (MANY_VIEWS, str(rows), str(commits), str(sizes.view_count)),
                        unavailable=missing(MANY_VIEWS, cmake_builds("ydbview-many-views"))))
    for keyed in (True, False):
        jobs.append(Job(("stalls", keyed), (STALLS, str(sizes.stalls_rows), "1" if keyed else "0"),
                        unavailable=missing(STALLS, cmake_builds("ydbview-registration-stalls"))))

    python_env = (("PYTHONPATH", "bindings/python"), ("YDBVIEW_LIBRARY", LIBRARY))
    python_command = (sys.executable, PYTHON_BENCH, *map(str, sizes.python))
    if options.skip_python:
        jobs.append(Job(("python",), python_command, python_env, "not run (--skip-python)", skipped=True))
    else:
        jobs.append(Job(("python",), python_command, python_env, missing(LIBRARY, cmake_builds("ydbview"))))

    for part in ("changesets", "views"):
        command = (SWIFT_BENCH, "--only", part, "--sizes", str(sizes.swift_rows), *sizes.swift_options)
        if options.skip_swift:
            jobs.append(Job(("swift", part), command, unavailable="not run (--skip-swift)", skipped=True))
        else:
            jobs.append(Job(("swift", part), command, unavailable=missing(SWIFT_BENCH, BUILD_SWIFT)))

    if sizes.instructions is not None:
        rows, commits = sizes.instructions
        if options.skip_valgrind:
            unavailable, skipped = "not run (--skip-valgrind)", True
        elif shutil.which("valgrind") is None:
            unavailable, skipped = "not run: valgrind is not installed", False
        else:
            unavailable, skipped = c_missing, False
        for store, in_memory in INSTRUCTION_STORES:
            for kind in KINDS:
                out = scratch / f"{store}{'-in-memory' if in_memory else ''}-{kind}.callgrind"
                command = ("valgrind", "--tool=callgrind", "-q", f"--callgrind-out-file={out}",
                           "--toggle-collect=profiled_commit", C_BENCH, "--profile", store, kind,
                           str(rows), str(commits))
                env = (("YDBVIEW_BENCH_ROWS_IN_MEMORY", "1"),) if in_memory else ()
                jobs.append(Job(("instructions", store, in_memory, kind), command, env, unavailable, skipped,
                                callgrind_out=out))
    return jobs


def commit_goal(flavour: str) -> Goal:
    return at_most(1.2) if flavour == "sort keys" else at_most(1.5)


# --- the rows, one group per floor of the issue ---
#
# Each row's measure() reads its figures as floor() calls it, inside the
# loop, so it may use the loop's variables.


def commit_rows(runs: Dict[JobKey, Run], sizes: Sizes) -> List[Row]:
    rows = []
    for size, _ in sizes.c_bench:
        for kind in KINDS:
            for flavour, in_memory, column in C_FLAVOURS:
                def measure() -> Measured:
                    cells = table_of(runs[("c-bench", size, in_memory)], "C:").row(
                        f"{kind} commit, reader catching up")
                    return time_of(cells[column]), time_of(cells[1])
                rows.append(floor(f"one-row {kind} commit, reader catching up, vs SQLite + index",
                                  size_label(size), flavour, commit_goal(flavour), measure))
    return rows


def instruction_rows(runs: Dict[JobKey, Run], sizes: Sizes) -> List[Row]:
    if sizes.instructions is None:
        return []
    size, commits = sizes.instructions

    def per_commit(run_: Run) -> Quantity:
        found = re.search(r"^(?:totals|summary):\s*(\d+)", output_of(run_), re.MULTILINE)
        if not found:
            raise NotMeasured(f"no totals in {run_.job.callgrind_out}")
        return Quantity(int(found.group(1)) / commits, "instructions")

    rows = []
    for kind in KINDS:
        for flavour, store, in_memory in INSTRUCTION_FLAVOURS:
            def measure() -> Measured:
                return (per_commit(runs[("instructions", store, in_memory, kind)]),
                        per_commit(runs[("instructions", "plain", False, kind)]))
            rows.append(floor(f"one-row {kind} commit: instructions (callgrind) vs SQLite's",
                              size_label(size), flavour, commit_goal(flavour), measure))
    return rows


def many_views_rows(runs: Dict[JobKey, Run], sizes: Sizes) -> List[Row]:
    views = sizes.view_count
    columns = (("sort keys", 3), ("C comparator", 5), ("comparator, rows in memory", 7))
    rows = []
    for size, _ in sizes.many_views:
        for kind in KINDS:
            for flavour, column in columns:
                def measure() -> Measured:
                    cells = table_of(runs[("many-views", size)]).row(str(views), kind)
                    return time_of(cells[column], "us"), time_of(cells[2], "us")
                rows.append(floor(f"one-row {kind} commit, {views} views vs {views} indexes",
                                  size_label(size), flavour, at_most(1.2), measure))
    return rows


def population_rows(runs: Dict[JobKey, Run], sizes: Sizes) -> List[Row]:
    size = sizes.c_bench[-1][0]

    def cells_of(label: str, in_memory: bool) -> List[str]:
        return table_of(runs[("c-bench", size, in_memory)], "C:").row(label)

    rows = []
    for flavour, in_memory, column in C_FLAVOURS:
        def measure() -> Measured:
            cells = cells_of("populate (CREATE INDEX / register)", in_memory)
            return time_of(cells[column]), time_of(cells[1])
        rows.append(floor("population (register over stored rows) vs CREATE INDEX", size_label(size), flavour,
                          at_most(1.3) if flavour == "sort keys" else at_most(2), measure))
    for label, floor_ in (("memory kept after populating", "memory kept after populating"),
                          ("peak memory while populating", "peak memory growth while populating")):
        for flavour, in_memory, column in C_FLAVOURS:
            # The ceilings: a peak of 100 B/row for any view; kept, 64
            # with sort keys (the view holds each row's key), 40 with a comparator.
            limit = 100 if label.startswith("peak") else 64 if flavour == "sort keys" else 40

            def measure() -> Measured:
                cells = cells_of(label, in_memory)
                return Quantity(seconds_or_bytes(cells[column]), "memory"), "(SQLite's page cache included)"
            rows.append(floor(floor_, size_label(size), flavour,
                              Goal(limit, f"≤ {limit} B/row", on_figure=True), measure))
    return rows


def registration_rows(runs: Dict[JobKey, Run], sizes: Sizes) -> List[Row]:
    rows = []
    for flavour, keyed in (("sort keys", True), ("C comparator", False)):
        run_ = runs[("stalls", keyed)]

        def p99() -> Measured:
            table = table_of(run_)
            return (time_of(table.row("a background registration")[4], "ms"),
                    time_of(table.row("nothing else runs")[4], "ms"))

        def registration_time() -> Measured:
            found = re.search(r"background registration ([0-9.]+) s .*blocking registration ([0-9.]+) s",
                              output_of(run_))
            if not found:
                raise NotMeasured("no line 'background registration ... blocking registration ...'")
            return Quantity(float(found.group(1)), "time"), Quantity(float(found.group(2)), "time")
        size = size_label(sizes.stalls_rows)
        rows.append(floor("another writer's p99 commit during a background registration (baseline: alone)",
                          size, flavour, Goal(0.010, "≤ 10 ms", on_figure=True), p99))
        rows.append(floor("background registration's time vs a blocking one's", size, flavour,
                          Goal(1.25, "≤ 1.25× (throughput ≥ 0.8×)"), registration_time))
    return rows


def swift_rows(runs: Dict[JobKey, Run], sizes: Sizes) -> List[Row]:
    size = size_label(sizes.swift_rows)

    def window() -> Measured:
        table = table_of(runs[("swift", "changesets")], "Changesets: after a one-row commit")
        cells = table.row(size)
        return (time_of(cells[table.column("engine, 50-row range")]),
                time_of(cells[table.column("baseline: LIMIT 50 + diff")]))

    def reopen() -> Measured:
        table = table_of(runs[("swift", "views")], "Views: reopen")
        cells = table.row(size)
        return (time_of(cells[table.column("open + registerView")]),
                time_of(cells[table.column("plain: open + ordered scan")]))

    return [floor("changeset of a top-50 window after a one-row commit vs LIMIT 50 + diff", size,
                  "Swift comparator closure", at_most(1), window),
            floor("reopen a stored view (register, 0 callbacks) vs an ordered scan", size,
                  "Swift comparator closure", at_most(2), reopen)]


def python_rows(runs: Dict[JobKey, Run], sizes: Sizes) -> List[Row]:
    size = size_label(sizes.python[0])

    def key_function(label: str) -> Callable[[], Measured]:
        def measure() -> Measured:
            cells = table_of(runs[("python",)], "Python:").row(label)
            figure, baseline = time_of(cells[2]), time_of(cells[1])
            if math.isnan(baseline.value):   # bench.py found no sortedcontainers
                raise NotMeasured(f"no SortedKeyList baseline: {INSTALL_SORTEDCONTAINERS}")
            return figure, baseline
        return measure

    return [floor("Python one-row insert commit vs sqlite3", size, "Python key function", at_most(1.5),
                  key_function("one-row insert commit")),
            floor("Python one-row update commit vs sqlite3", size, "Python key function", at_most(1.5),
                  key_function("one-row update commit")),
            floor("Python population (register over stored rows) vs SELECT + SortedKeyList", size,
                  "Python key function", at_most(1.5), key_function("register the view over")),
            floor("Python `set_many` of all rows vs sqlite3 executemany + SortedKeyList", size,
                  "Python key function", at_most(1.5), key_function("the same rows through `set_many`"))]


# --- notes beside the table ---


def stale_notes(jobs: List[Job]) -> List[str]:
    """Programs built before the engine's sources last changed: their
    figures are of the code as it was then (this script builds nothing)."""
    sources = [path.stat().st_mtime for path in (CHECKOUT / ENGINE_SOURCES).rglob("*") if path.is_file()]
    if not sources:
        return []
    newest = max(sources)
    notes = []
    used = {job.command[0] for job in jobs if not job.unavailable}
    # The C programs and bench.py load build/libydbview.so; ydbview-bench has its own copy of the engine.
    for binary, users in ((LIBRARY, "the C and Python figures"), (SWIFT_BENCH, "the Swift figures")):
        path = CHECKOUT / binary
        if path.exists() and (binary == LIBRARY or binary in used) and path.stat().st_mtime < newest:
            built = time.strftime("%Y-%m-%d %H:%M", time.localtime(path.stat().st_mtime))
            notes.append(f"{binary} was built {built}, before the last change under {ENGINE_SOURCES}/: "
                         f"{users} are of the engine as it was then.")
    return notes


def timings(results: List[Run], callgrind_seconds: float, parallel: int) -> str:
    lines = ["| program | took |", "|---|---|"]
    for result in results:
        took = f"{result.seconds:.1f} s" if not result.job.unavailable else result.problem
        lines.append(f"| `{result.job.description}` | {took} |")
    if callgrind_seconds:
        lines.append(f"| the callgrind runs, {parallel} at a time | {callgrind_seconds:.1f} s in all |")
    return "\n".join(lines)


# --- main ---


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true",
                        help="10k and 100k rows, few commits, no valgrind: a smoke check (about 20 s)")
    parser.add_argument("--skip-python", action="store_true", help="leave out bench.py")
    parser.add_argument("--skip-swift", action="store_true", help="leave out ydbview-bench")
    parser.add_argument("--skip-valgrind", action="store_true", help="leave out the instruction counts")
    options = parser.parse_args()
    sizes = QUICK if options.quick else FULL
    started = time.monotonic()

    with tempfile.TemporaryDirectory(prefix="ydbview-floors-") as scratch:
        jobs = plan(sizes, options, Path(scratch))
        log(f"{'quick' if options.quick else 'full'} mode; the programs it runs, in order:")
        for job in jobs:
            log(f"  {job.description}" + (f"  ({job.unavailable})" if job.unavailable else ""))
        timed = [job for job in jobs if job.callgrind_out is None]
        counted = [job for job in jobs if job.callgrind_out is not None]
        # The timed programs one at a time, so that none slows another's
        # figures; the callgrind runs after them, in parallel, since an
        # instruction count does not depend on the machine's load.
        results = [run(job) for job in timed]
        parallel = os.cpu_count() or 1
        callgrind_started = time.monotonic()
        with ThreadPoolExecutor(max_workers=parallel) as pool:
            results += list(pool.map(run, counted))
        callgrind_seconds = time.monotonic() - callgrind_started if any(
            not job.unavailable for job in counted) else 0.0

    runs = {result.job.key: result for result in results}
    rows = (commit_rows(runs, sizes) + instruction_rows(runs, sizes) + many_views_rows(runs, sizes)
            + population_rows(runs, sizes) + registration_rows(runs, sizes) + swift_rows(runs, sizes)
            + python_rows(runs, sizes))

    print(f"### Issue 42's performance floors ({'quick' if options.quick else 'full'} mode, "
          f"{time.strftime('%Y-%m-%d %H:%M')}, load average {' '.join(f'{x:.2f}' for x in os.getloadavg())})\n")
    print(render(rows))
    verdicts = [row.met for row in rows]
    print(f"\nMet: {verdicts.count('yes')} of {len(rows)} figures; not met: {verdicts.count('no')}; "
          f"no verdict: {len(rows) - verdicts.count('yes') - verdicts.count('no')}. "
          "Ratios are ydbview ÷ baseline; memory is the process's resident growth per row.")
    for note in stale_notes(jobs):
        print(f"\nNote: {note}")
    print(f"\n### How long each program took ({time.monotonic() - started:.0f} s in all)\n")
    print(timings(results, callgrind_seconds, parallel))

    failures = [result for result in results if result.failed]
    unread = [row for row in rows if row.failed and row.ydbview not in {r.problem for r in failures}]
    for result in failures:
        log(result.problem)
    for row in unread:
        log(f"{row.floor}, {row.size}, {row.flavour}: {row.ydbview}")
    return 1 if failures or unread else 0


if __name__ == "__main__":
    sys.exit(main())
