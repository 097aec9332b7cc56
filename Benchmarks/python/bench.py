"""ydbview from Python against sqlite3 (and sortedcontainers), in one run.

    PYTHONPATH=bindings/python YDBVIEW_LIBRARY=build/libydbview.so \\
        .venv/bin/python Benchmarks/python/bench.py [rows] [commits]

For `rows` rows (default 100,000) in one group, sorted by a rank:
  * inserting them one commit of all rows, with a view sorted by a Python
    comparator and by a Python key function, against sqlite3 with an index,
    against a sortedcontainers.SortedKeyList (when installed), and against
    both together (issue 10's baseline: the table and the sorted list);
  * one-row insert and update commits (medians), against sqlite3;
  * reading the top 50 rows of the group, with the connection's row cache
    on (default) and off, against ``LIMIT 50``.
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
from typing import Any, Callable, List

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


def engine(directory: str, name: str, sorting: Any, key: Any, values: List[int]) -> dict:
    figures = {}
    with ydbview.Database(os.path.join(directory, name + ".sqlite")) as db:
        db.register_view("v", one_group, sorting, key=key)
        conn = db.new_connection()

        def load() -> None:
            with conn.read_write() as t:
                for i, rank in enumerate(values):
                    t.set("items", f"k{i}", RANK.pack(rank))

        figures["load"] = timed(load)
        rng = random.Random(5)
        inserts, updates = [], []
        for i in range(COMMITS):
            start = time.perf_counter()
            with conn.read_write() as t:
                t.set("items", f"n{i}", RANK.pack(rng.getrandbits(40)))
            inserts.append(time.perf_counter() - start)
            key = f"k{rng.randrange(ROWS)}"
            start = time.perf_counter()
            with conn.read_write() as t:
                t.set("items", key, RANK.pack(rng.getrandbits(40)))
            updates.append(time.perf_counter() - start)
        for name, limit in (("top50", 250), ("top50_uncached", 0)):
            conn.row_cache_limit = limit
            reads = []
            with conn.read() as t:
                view = t.view("v")
                for _ in range(COMMITS):
                    start = time.perf_counter()
                    view.rows("all", 0, 50)
                    reads.append(time.perf_counter() - start)
            figures[name] = median_of(reads)
        figures.update(insert=median_of(inserts), update=median_of(updates))
    return figures


def plain(directory: str, values: List[int]) -> dict:
    figures = {}
    db = sqlite3.connect(os.path.join(directory, "plain.sqlite"), isolation_level=None)
    db.execute("PRAGMA journal_mode=WAL")
    db.execute("PRAGMA synchronous=NORMAL")
    db.execute("CREATE TABLE t (key TEXT PRIMARY KEY, grp TEXT, rank INTEGER, object BLOB) WITHOUT ROWID")
    db.execute("CREATE INDEX t_order ON t (grp, rank, key)")

    def load() -> None:
        db.execute("BEGIN")
        db.executemany("INSERT INTO t VALUES (?, 'all', ?, ?)",
                       ((f"k{i}", rank, RANK.pack(rank)) for i, rank in enumerate(values)))
        db.execute("COMMIT")

    figures["load"] = timed(load)
    rng = random.Random(5)
    inserts, updates, reads = [], [], []
    for i in range(COMMITS):
        rank = rng.getrandbits(40)
        start = time.perf_counter()
        db.execute("BEGIN")
        db.execute("INSERT INTO t VALUES (?, 'all', ?, ?)", (f"n{i}", rank, RANK.pack(rank)))
        db.execute("COMMIT")
        inserts.append(time.perf_counter() - start)
        key, rank = f"k{rng.randrange(ROWS)}", rng.getrandbits(40)
        start = time.perf_counter()
        db.execute("BEGIN")
        db.execute("UPDATE t SET rank = ?, object = ? WHERE key = ?", (rank, RANK.pack(rank), key))
        db.execute("COMMIT")
        updates.append(time.perf_counter() - start)
    for _ in range(COMMITS):
        start = time.perf_counter()
        db.execute("SELECT key, object FROM t WHERE grp = 'all' ORDER BY rank, key LIMIT 50").fetchall()
        reads.append(time.perf_counter() - start)
    db.close()
    figures.update(insert=median_of(inserts), update=median_of(updates), top50=median_of(reads))
    figures["top50_uncached"] = figures["top50"]  # sqlite3 has one way to read
    return figures


def sorted_list(values: List[int]) -> float:
    try:
        from sortedcontainers import SortedKeyList
    except ImportError:
        return float("nan")
    return timed(lambda: SortedKeyList(((rank, f"k{i}") for i, rank in enumerate(values)),
                                       key=lambda item: item))


def main() -> None:
    values = ranks(1)
    with tempfile.TemporaryDirectory(prefix="ydbview-py-bench-") as directory:
        print(f"rows {ROWS}, commits {COMMITS}", file=sys.stderr)
        base = plain(directory, values)
        keyed = engine(directory, "keyed", None, rank_key, values)
        compared = engine(directory, "compared", by_rank, None, values)
        sorted_load = sorted_list(values)

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
    for name, label in [("insert", "one-row insert commit"), ("update", "one-row update commit"),
                        ("top50", "read the top 50 rows"),
                        ("top50_uncached", "read the top 50 rows, row cache off")]:
        print(f"| {label} | {us(base[name])} | {us(keyed[name])} | {keyed[name] / base[name]:.1f}x | "
              f"{us(compared[name])} | {compared[name] / base[name]:.1f}x |")


if __name__ == "__main__":
    main()
