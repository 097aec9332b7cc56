"""A persistent view that missed row changes is repopulated when registered
again with the same version tag, and the registration says so."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import List

import pytest

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


def test_version_1_file_migrates_and_its_views_repopulate(tmp_path: Path) -> None:
    # A file as version 1 of the library wrote it: a table per view.
    path = tmp_path / "v1.sqlite"
    old = sqlite3.connect(path)
    old.executescript("""
        PRAGMA journal_mode = WAL;
        CREATE TABLE ydb_meta (name TEXT PRIMARY KEY, value INTEGER NOT NULL);
        CREATE TABLE ydb_rows (rowid INTEGER PRIMARY KEY AUTOINCREMENT, collection TEXT NOT NULL,
            key TEXT NOT NULL, object BLOB NOT NULL, metadata BLOB, UNIQUE (collection, key));
        CREATE TABLE ydb_views (name TEXT PRIMARY KEY, id INTEGER NOT NULL UNIQUE,
            version_tag TEXT NOT NULL, format INTEGER NOT NULL);
        CREATE TABLE ydb_view_1 (rowid INTEGER PRIMARY KEY, grp TEXT NOT NULL, label INTEGER NOT NULL);
        CREATE INDEX ydb_view_1_order ON ydb_view_1 (grp, label);
        INSERT INTO ydb_meta VALUES ('snapshot', 3), ('schema_version', 1);
        INSERT INTO ydb_rows (collection, key, object) VALUES ('c', 'b', x'00'), ('c', 'a', x'00'),
            ('c', 'gone', x'00');
        DELETE FROM ydb_rows WHERE key = 'gone';
        INSERT INTO ydb_views VALUES ('v', 1, '', 1);
        INSERT INTO ydb_view_1 VALUES (1, 'g', 0);
    """)
    old.close()
    with ydbview.Database(str(path)) as db:
        # Stored in the old format: rebuilt as for a new version tag.
        assert db.register_view("v", one_group, by_key) == RegistrationOutcome.REBUILT_NEW_TAG
        assert keys(db) == ["a", "b"]
        with db.new_connection().read_write() as t:
            t.set("c", "new", b"\x00")
    check = sqlite3.connect(path)
    tables = {name for (name,) in check.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    version = check.execute("SELECT value FROM ydb_meta WHERE name = 'schema_version'").fetchone()[0]
    rows_sql = check.execute("SELECT sql FROM sqlite_master WHERE name = 'ydb_rows'").fetchone()[0]
    ids = dict(check.execute("SELECT key, rowid FROM ydb_rows").fetchall())
    triggers = {name for (name,) in check.execute("SELECT name FROM sqlite_master WHERE type = 'trigger'")}
    check.close()
    assert "ydb_view_1" not in tables and "ydb_view_rows" in tables
    assert version == 5
    # Version 4 hands out row ids itself: no AUTOINCREMENT, the ids kept, and
    # the removed row's id (3) not reused.
    assert "AUTOINCREMENT" not in rows_sql.upper()
    assert ids == {"b": 1, "a": 2, "new": 4}
    # The rebuilt table still counts other programs' writes.
    assert triggers == {"ydb_rows_inserted", "ydb_rows_updated", "ydb_rows_deleted"}


def test_sqlite_code_is_kept(tmp_path: Path) -> None:
    path = tmp_path / "not-a-database.sqlite"
    path.write_bytes(b"this is not an SQLite database, not even close -- " * 4)
    with pytest.raises(ydbview.CorruptError) as caught:
        ydbview.Database(str(path))
    assert caught.value.sqlite_code == 26     # SQLITE_NOTADB
