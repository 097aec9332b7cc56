"""A persistent view that missed row changes is repopulated when registered
again with the same version tag, and the registration says so."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import List

import ydbview
from ydbview import RegistrationOutcome


@ydbview.grouping(flavour="key")
def one_group(row: ydbview.ViewRow) -> str:
    return "g"


@ydbview.sorting(flavour="key")
def by_key(group: str, a: ydbview.ViewRow, b: ydbview.ViewRow) -> int:
    return (a.key > b.key) - (a.key < b.key)


def keys(db: ydbview.Database) -> List[str]:
    conn = db.new_connection()
    with conn.read() as t:
        view = t.view("v")
        assert view is not None
        result = [key for _collection, key in view.keys("g")]
    conn.close()
    return result


def write(path: Path, *keys: str) -> None:
    with ydbview.Database(str(path)) as db:
        conn = db.new_connection()
        with conn.read_write() as t:
            for key in keys:
                t.set("c", key, b"x")
        conn.close()


def test_stale_view_is_repopulated(tmp_path: Path) -> None:
    path = tmp_path / "stale.sqlite"
    with ydbview.Database(str(path)) as db:
        assert db.register_view("v", one_group, by_key) == RegistrationOutcome.BUILT
    write(path, "a", "b")  # the view is not registered: it misses these
    with ydbview.Database(str(path)) as db:
        assert db.register_view("v", one_group, by_key) == RegistrationOutcome.REBUILT_STALE
        assert keys(db) == ["a", "b"]
    with ydbview.Database(str(path)) as db:
        assert db.register_view("v", one_group, by_key) == RegistrationOutcome.LOADED
        assert keys(db) == ["a", "b"]
    # Another SQLite client changes rows behind the library's back.
    other = sqlite3.connect(path)
    other.execute("DELETE FROM ydb_rows WHERE key = 'a'")
    other.commit()
    other.close()
    with ydbview.Database(str(path)) as db:
        assert db.register_view("v", one_group, by_key) == RegistrationOutcome.REBUILT_STALE
        assert keys(db) == ["b"]
        assert db.register_view("v", one_group, by_key, version_tag="2") == RegistrationOutcome.REBUILT_NEW_TAG
