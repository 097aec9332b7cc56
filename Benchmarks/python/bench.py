"""ydbview from Python against sqlite3 (and sortedcontainers), in one run.

    PYTHONPATH=bindings/python YDBVIEW_LIBRARY=build/libydbview.so \\
        .venv/bin/python Benchmarks/python/bench.py [rows] [commits]

For `rows` rows (default 100,000) in one group, sorted by a rank:
  * inserting them one commit of all rows, with a view sorted by a Python
    comparator and by a Python key function (``set`` row by row, then
    ``set_many`` in one call), against sqlite3 with an index,
    against a sortedcontainers.SortedKeyList (when installed), and against
    both together (issue 10's baseline: the table and the sorted list);
  * one-row insert and update commits (medians), against sqlite3;
  * reading the top 50 rows of the group, with the connection's row cache
    on (default) and off, against ``LIMIT 50``;
  * populating each view over rows already committed (``register_view``
    after the rows), against what an application without ydbview does with
    rows already in sqlite3: ``SELECT key, rank`` and a SortedKeyList of
    them, or ``CREATE INDEX``.
The commits and reads of the three stores take turns, 50 at a time, so
each figure and its baseline are measured over the same stretch of time.
Prints a Markdown table; the ratios are what count.
"""

from __future__ import annotations

import os
import random
import sqlite3
import statistics
import struct
import sys
import tempfile
import time
from typing import Any, Callable, Dict, List, Tuple

import ydbview

ROWS = int(sys.argv[1]) if len(sys.argv) > 1 else 100_000
COMMITS = int(sys.argv[2]) if len(sys.argv) > 2 else 1000
RANK = struct.Struct("<q")


def ranks(seed: int) -> List[int]:
    rng = random.Random(seed)
    return [rng.getrandbits(40) for _ in range(ROWS)]


@ydbview.grouping(flavour="key")
def one_group(row: ydbview.ViewRow) -> str:
    return "all"


@ydbview.sorting(flavour="object")
def by_rank(group: str, a: ydbview.ViewRow, b: ydbview.ViewRow) -> int:
    x, y = RANK.unpack(a.object)[0], RANK.unpack(b.object)[0]
    return (x > y) - (x < y) or (a.key > b.key) - (a.key < b.key)


@ydbview.key_sorting(flavour="object")
def rank_key(group: str, row: ydbview.ViewRow) -> Any:
    return (RANK.unpack(row.object)[0], row.key)


def timed(body: Callable[[], Any]) -> float:
    start = time.perf_counter()
    body()
    return time.perf_counter() - start


def median_of(samples: List[float]) -> float:
    return statistics.median(samples)


class Plain:
    """The baseline: sqlite3, one table with an index that orders the group
    (made later, by ``index()``, when not ``indexed``)."""

    def __init__(self, directory: str, name: str = "plain", indexed: bool = True) -> None:
        self.db = sqlite3.connect(os.path.join(directory, name + ".sqlite"), isolation_level=None)
        self.db.execute("PRAGMA journal_mode=WAL")
        self.db.execute("PRAGMA synchronous=NORMAL")
        self.db.execute("CREATE TABLE t (key TEXT PRIMARY KEY, grp TEXT, rank INTEGER, object BLOB) WITHOUT ROWID")
        if indexed:
            self.index()

    def index(self) -> None:
        self.db.execute("CREATE INDEX t_order ON t (grp, rank, key)")

    def load(self, values: List[int]) -> None:
        self.db.execute("BEGIN")
        self.db.executemany("INSERT INTO t VALUES (?, 'all', ?, ?)",
                            ((f"k{i}", rank, RANK.pack(rank)) for i, rank in enumerate(values)))
        self.db.execute("COMMIT")

    def insert(self, key: str, rank: int) -> None:
        self.db.execute("BEGIN")
        self.db.execute("INSERT INTO t VALUES (?, 'all', ?, ?)", (key, rank, RANK.pack(rank)))
        self.db.execute("COMMIT")

    def update(self, key: str, rank: int) -> None:
        self.db.execute("BEGIN")
        self.db.execute("UPDATE t SET rank = ?, object = ? WHERE key = ?", (rank, RANK.pack(rank), key))
        self.db.execute("COMMIT")

    def reading(self, on: bool, cached: bool = True) -> None:
        pass  # sqlite3 has one way to read

    def top50(self) -> None:
        self.db.execute("SELECT key, object FROM t WHERE grp = 'all' ORDER BY rank, key LIMIT 50").fetchall()

    def close(self) -> None:
        self.db.close()


class Engine:
    """ydbview with one view: a Python comparator or a Python key function."""

    def __init__(self, directory: str, name: str, sorting: Any, key: Any) -> None:
        self.db = ydbview.Database(os.path.join(directory, name + ".sqlite"))
        self.db.register_view("v", one_group, sorting, key=key)
        self.conn = self.db.new_connection()

    def load(self, values: List[int]) -> None:
        with self.conn.read_write() as t:
            for i, rank in enumerate(values):
                t.set("items", f"k{i}", RANK.pack(rank))

    def load_many(self, values: List[int]) -> None:
        """The same load through ``set_many``: one call, the callbacks run
        once per batch (as ``executemany`` is to ``execute``)."""
        with self.conn.read_write() as t:
            t.set_many("items", [(f"k{i}", RANK.pack(rank)) for i, rank in enumerate(values)])

    def insert(self, key: str, rank: int) -> None:
        with self.conn.read_write() as t:
            t.set("items", key, RANK.pack(rank))

    update = insert

    def reading(self, on: bool, cached: bool = True) -> None:
        """Begins (or ends) the read transaction the reads share, as a screen
        keeps one, with the row cache on or off."""
        if on:
            self.conn.row_cache_limit = 250 if cached else 0
            self.read = self.conn.read()
            self.view = self.read.view("v")
        else:
            self.read.end()

    def top50(self) -> None:
        self.view.rows("all", 0, 50)

    def close(self) -> None:
        self.db.close()


#: Commits or reads a store makes in a row before the next store's turn.
BLOCK = 50


def interleaved(stores: Dict[str, Any]) -> Dict[str, Dict[str, float]]:
    """Medians of one-row commits and top-50 reads. The stores take turns,
    `BLOCK` operations at a time, in a rotating order: each loop runs warm,
    as when each store ran all of its loop alone, but a figure and its
    baseline now see the same stretch of a shared machine (run alone, one
    after the other, the baseline moved by half between runs)."""
    names = list(stores)
    samples: Dict[str, Dict[str, List[float]]] = {name: {} for name in names}

    def take(steps: List[Tuple[str, Callable[[Any, int], None]]]) -> None:
        for start in range(0, COMMITS, BLOCK):
            turn = (start // BLOCK) % len(names)
            for name in names[turn:] + names[:turn]:
                store = stores[name]
                for i in range(start, min(start + BLOCK, COMMITS)):
                    for figure, step in steps:
                        samples[name].setdefault(figure, []).append(timed(lambda: step(store, i)))

    rng = random.Random(5)
    ops = [(f"n{i}", rng.getrandbits(40), f"k{rng.randrange(ROWS)}", rng.getrandbits(40)) for i in range(COMMITS)]
    take([("insert", lambda store, i: store.insert(ops[i][0], ops[i][1])),
          ("update", lambda store, i: store.update(ops[i][2], ops[i][3]))])
    for figure, cached in (("top50", True), ("top50_uncached", False)):
        for store in stores.values():
            store.reading(True, cached)
        take([(figure, lambda store, i: store.top50())])
        for store in stores.values():
            store.reading(False)
    return {name: {figure: median_of(values) for figure, values in taken.items()}
            for name, taken in samples.items()}


def sorted_list(values: List[int]) -> float:
    try:
        from sortedcontainers import SortedKeyList
    except ImportError:
        return float("nan")
    return timed(lambda: SortedKeyList(((rank, f"k{i}") for i, rank in enumerate(values)),
                                       key=lambda item: item))


def populations(directory: str, values: List[int]) -> Dict[str, float]:
    """Seconds to order `values` once they are committed: each view's
    registration over the stored rows ("keyed", "compared"), and what
    sqlite3 offers for the same rows: reading them into a SortedKeyList
    ("sorted_list", nan without sortedcontainers) or an index ("index")."""
    taken: Dict[str, float] = {}
    plain = Plain(directory, "unindexed", indexed=False)
    plain.load(values)
    try:
        from sortedcontainers import SortedKeyList
        taken["sorted_list"] = timed(lambda: SortedKeyList(plain.db.execute("SELECT key, rank FROM t"),
                                                           key=lambda row: (row[1], row[0])))
    except ImportError:
        taken["sorted_list"] = float("nan")
    taken["index"] = timed(plain.index)
    plain.close()
    for name, sorting, key in (("keyed", None, rank_key), ("compared", by_rank, None)):
        db = ydbview.Database(os.path.join(directory, name + "-populated.sqlite"))
        with db.new_connection().read_write() as t:
            t.set_many("items", [(f"k{i}", RANK.pack(rank)) for i, rank in enumerate(values)])
        taken[name] = timed(lambda: db.register_view("v", one_group, sorting, key=key))
        db.close()
    return taken


def main() -> None:
    values = ranks(1)
    with tempfile.TemporaryDirectory(prefix="ydbview-py-bench-") as directory:
        print(f"rows {ROWS}, commits {COMMITS}", file=sys.stderr)
        stores = {"base": Plain(directory), "keyed": Engine(directory, "keyed", None, rank_key),
                  "compared": Engine(directory, "compared", by_rank, None)}
        loads = {name: timed(lambda: store.load(values)) for name, store in stores.items()}
        # set_many into fresh stores of each kind (the loads above filled theirs).
        many = {name: Engine(directory, name + "-many", sorting, key)
                for name, sorting, key in (("keyed", None, rank_key), ("compared", by_rank, None))}
        loads_many = {name: timed(lambda: store.load_many(values)) for name, store in many.items()}
        for store in many.values():
            store.close()
        sorted_load = sorted_list(values)
        populated = populations(directory, values)
        figures = interleaved(stores)
        for store in stores.values():
            store.close()
    base, keyed, compared = figures["base"], figures["keyed"], figures["compared"]
    for name, load in loads.items():
        figures[name]["load"] = load

    def ms(x: float) -> str:
        return f"{x * 1e3:.1f} ms"

    def us(x: float) -> str:
        return f"{x * 1e6:.1f} µs"

    print(f"### Python: {ROWS:,} rows in one group, medians of {COMMITS} commits/reads\n")
    print("| | sqlite3 + index | key function | ratio | comparator | ratio |")
    print("|---|---|---|---|---|---|")
    print(f"| insert {ROWS:,} rows, one commit | {ms(base['load'])} | {ms(keyed['load'])} | "
          f"{keyed['load'] / base['load']:.1f}x | {ms(compared['load'])} | {compared['load'] / base['load']:.1f}x |")
    print(f"| same rows into SortedKeyList | {ms(sorted_load)} | | {keyed['load'] / sorted_load:.1f}x | | "
          f"{compared['load'] / sorted_load:.1f}x |")
    both = base["load"] + sorted_load  # issue 10's baseline for the load: the table and the sorted list
    print(f"| sqlite3 + SortedKeyList, both | {ms(both)} | | {keyed['load'] / both:.1f}x | | "
          f"{compared['load'] / both:.1f}x |")
    print(f"| the same rows through `set_many` (vs sqlite3 + SortedKeyList) | {ms(both)} | "
          f"{ms(loads_many['keyed'])} | {loads_many['keyed'] / both:.1f}x | {ms(loads_many['compared'])} | "
          f"{loads_many['compared'] / both:.1f}x |")
    for name, label in [("insert", "one-row insert commit"), ("update", "one-row update commit"),
                        ("top50", "read the top 50 rows"),
                        ("top50_uncached", "read the top 50 rows, row cache off")]:
        print(f"| {label} | {us(base[name])} | {us(keyed[name])} | {keyed[name] / base[name]:.1f}x | "
              f"{us(compared[name])} | {compared[name] / base[name]:.1f}x |")
    for baseline, label in [("sorted_list", f"register the view over {ROWS:,} stored rows "
                                            "(vs SELECT key, rank + SortedKeyList)"),
                            ("index", "the same registration vs CREATE INDEX")]:
        print(f"| {label} | {ms(populated[baseline])} | {ms(populated['keyed'])} | "
              f"{populated['keyed'] / populated[baseline]:.1f}x | {ms(populated['compared'])} | "
              f"{populated['compared'] / populated[baseline]:.1f}x |")


if __name__ == "__main__":
    main()
