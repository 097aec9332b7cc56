"""The writer that test_attack_crash.py kills: commits random operations to a
database with a persistent view, without end, and prints each commit's
number after the commit returns. The number is also written, in the same
transaction, into row ("meta", "counter"), so a reopened database tells
whether a reported commit was lost.

    python crash_child.py DATABASE SEED
"""

from __future__ import annotations

import random
import sys
from typing import Optional

import ydbview

VIEW = "by_shelf"


@ydbview.grouping(flavour="object")
def shelf(row: ydbview.ViewRow) -> Optional[str]:
    """Books by shelf; the counter row and shelfless books are left out."""
    if row.collection != "books" or not row.object:
        return None
    return row.object.split(b"|")[0].decode()


@ydbview.sorting(flavour="object")
def by_rank_then_key(group: str, a: ydbview.ViewRow, b: ydbview.ViewRow) -> int:
    left = (int(a.object.split(b"|")[1]), a.key)
    right = (int(b.object.split(b"|")[1]), b.key)
    return (left > right) - (left < right)


def register(db: ydbview.Database) -> ydbview.RegistrationOutcome:
    return db.register_view(VIEW, shelf, by_rank_then_key, version_tag="1")


def main() -> None:
    path, seed = sys.argv[1], int(sys.argv[2])
    rng = random.Random(seed)
    with ydbview.Database(path) as db:
        register(db)
        conn = db.new_connection()
        with conn.read() as t:
            counter = int(t.get("meta", "counter") or b"0")
        while True:
            counter += 1
            with conn.read_write() as t:
                for _ in range(rng.randint(1, 8)):
                    key = f"b{rng.randrange(200)}"
                    roll = rng.random()
                    if roll < 0.6:
                        t.set("books", key, f"s{rng.randrange(5)}|{rng.randrange(1000)}".encode())
                    elif roll < 0.9:
                        t.remove("books", key)
                    elif roll < 0.95:
                        t.touch_row("books", key)
                    else:
                        t.remove_all("books")
                t.set("meta", "counter", str(counter).encode())
            print(counter, flush=True)


if __name__ == "__main__":
    main()
