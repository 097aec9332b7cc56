"""The Python benchmark and the floors table still run end to end (smoke
runs on a few rows: their figures are not checked, only that every row of
their tables is there with a ratio or a verdict)."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[3] / "Benchmarks" / "python" / "bench.py"


def test_benchmark_prints_every_figure_with_a_ratio() -> None:
    done = subprocess.run([sys.executable, str(BENCH), "300", "20"], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    for label in ("insert 300 rows, one commit", "the same rows through `set_many` (vs sqlite3 + SortedKeyList)",
                  "one-row insert commit", "one-row update commit",
                  "read the top 50 rows", "read the top 50 rows, row cache off"):
        row = next((line for line in done.stdout.splitlines() if line.startswith(f"| {label} |")), None)
        assert row is not None, f"no row {label!r} in:\n{done.stdout}"
        assert re.search(r"\| \d+\.\dx \|", row), row


FLOORS = BENCH.parents[1] / "floors.py"
CHECKOUT = BENCH.parents[2]


def test_the_floors_table_reads_every_program_it_runs() -> None:
    """floors.py's quick mode over the C programs (built by the test
    command): every row it prints has a figure and a verdict, so a change in
    a program's table that the driver no longer reads fails here."""
    programs = [CHECKOUT / "build" / name for name in
                ("ydbview-c-bench", "ydbview-many-views", "ydbview-registration-stalls")]
    missing = [str(program) for program in programs if not program.is_file()]
    if missing:
        pytest.skip(f"not built: {', '.join(missing)}")
    done = subprocess.run([sys.executable, str(FLOORS), "--quick", "--skip-swift", "--skip-python",
                           "--skip-valgrind"], capture_output=True, text=True, timeout=600, cwd=CHECKOUT)
    assert done.returncode == 0, done.stdout + done.stderr
    lines = done.stdout.splitlines()
    header = next(i for i, line in enumerate(lines) if line.startswith("| floor |"))
    table = lines[header + 2:]   # past the header and its |---| line
    table = table[:next((i for i, line in enumerate(table) if not line.startswith("| ")), len(table))]
    rows = [line for line in table if "not run (--skip" not in line]
    assert len(rows) >= 20, done.stdout
    for row in rows:
        assert row.rstrip().endswith(("| yes |", "| no |", "| — |")), row
