"""Every store operation through the Python package."""

from __future__ import annotations

from pathlib import Path

import pytest

import ydbview
from ydbview import RowChange


def test_library_version_matches_package() -> None:
    assert ydbview.library_version == ydbview.__version__
    assert ydbview.library_version_number == 2000
    assert ydbview.library_path.name.startswith("libydbview.so")


def test_temporary_database_has_a_path_and_is_deleted_on_close() -> None:
    db = ydbview.Database()
    path = Path(db.path)
    assert path.exists()
    assert db.snapshot == 0
    db.close()
    assert not path.exists()
    assert db.closed
    db.close()  # twice is fine


def test_named_database_persists(tmp_path: Path) -> None:
    file = tmp_path / "store.sqlite"
    with ydbview.Database(file) as db:
        assert db.path == str(file)
        with db.new_connection() as conn:
            with conn.read_write() as t:
                t.set("c", "k", b"kept")
    with ydbview.Database(str(file)) as db:
        with db.new_connection() as conn, conn.read() as t:
            assert t.get("c", "k") == b"kept"


def test_set_and_get(conn: ydbview.Connection) -> None:
    with conn.read_write() as t:
        assert t.is_read_write
        t.set("books", "b1", b"dune", metadata=b"meta")
        t.set("books", "b2", b"emma")
        t.set("books", "empty", b"", metadata=b"")
        t.set("films", "f1", bytearray(b"alien"))
        assert t.get("books", "b1") == b"dune"  # own writes are visible
    with conn.read() as t:
        assert not t.is_read_write
        assert t.get("books", "b1") == b"dune"
        assert t.get_metadata("books", "b1") == b"meta"
        assert t.get_metadata("books", "b2") is None
        assert t.get_row("books", "b2") == ydbview.Row(b"emma", None)
        assert t.get_row("books", "empty") == (b"", b"")
        assert t.get("books", "nope") is None
        assert t.get_row("nope", "b1") is None
        # A rowid hint (right for one of these small ids, wrong, or out of
        # range) never changes the answer.
        for key in ("b1", "b2", "empty", "nope"):
            for hint in (0, 1, 2, 3, 4, 5, -1, 2**63 - 1, 2**70, -(2**70)):
                assert t.get_row("books", key, rowid_hint=hint) == t.get_row("books", key)
        with pytest.raises(TypeError):
            t.get_row("books", "b1", rowid_hint="1")  # type: ignore[arg-type]
        assert t.exists("books", "b1") and not t.exists("books", "nope")
        assert t.count("books") == 3
        assert t.count("films") == 1
        assert t.count("none") == 0
        assert t.count_all() == 4
        assert t.collections() == ["books", "films"]
        assert t.keys("books") == ["b1", "b2", "empty"]
        assert t.rows("films") == [("f1", b"alien", None)]
        assert t.rows("books")[2] == ("empty", b"", b"")


def test_enumeration_stops_on_truthy_return(conn: ydbview.Connection) -> None:
    with conn.read_write() as t:
        for index in range(10):
            t.set("c", f"k{index}", b"v")
    seen: list = []
    with conn.read() as t:
        t.enumerate_keys("c", lambda key: seen.append(key) or len(seen) == 3)
        assert seen == ["k0", "k1", "k2"]
        rows: list = []
        t.enumerate_rows("c", lambda key, obj, meta: rows.append(key) or True)
        assert rows == ["k0"]


def test_replace_touch_and_notifications(db: ydbview.Database, conn: ydbview.Connection) -> None:
    with conn.read_write() as t:
        t.set("books", "b1", b"dune", b"m1")
        t.set("books", "b2", b"emma")
        t.set("films", "f1", b"alien")
    seen: list = []
    token = db.add_commit_observer(seen.append)
    with conn.read_write() as t:
        t.replace_object("books", "b1", b"dune2")
        t.replace_metadata("books", "b2", b"m2")
        t.replace_object("books", "ghost", b"x")  # missing: no-op
        t.replace_metadata("books", "ghost", b"x")
        t.touch_object("films", "f1")
        t.touch_metadata("books", "b1")
        t.touch_row("books", "ghost")
    assert len(seen) == 1
    note = seen[0]
    assert note.snapshot == db.snapshot
    assert note.changed_rows == {
        ("books", "b1"): RowChange.OBJECT_CHANGED | RowChange.METADATA_TOUCHED,
        ("books", "b2"): RowChange.METADATA_CHANGED,
        ("films", "f1"): RowChange.OBJECT_TOUCHED,
    }
    assert note.has_change("books", "b1") and not note.has_change("books", "ghost")
    assert note.has_change_in_collection("films")
    assert not note.removed_all and note.removed_collections == frozenset()
    with conn.read() as t:
        assert t.get_row("books", "b1") == (b"dune2", b"m1")
        assert t.get_row("books", "b2") == (b"emma", b"m2")
        assert not t.exists("books", "ghost")
    with conn.read_write() as t:
        t.replace_metadata("books", "b2", None)
    with conn.read() as t:
        assert t.get_row("books", "b2") == (b"emma", None)
    db.remove_commit_observer(token)


def test_removals(db: ydbview.Database, conn: ydbview.Connection) -> None:
    with conn.read_write() as t:
        for key in "abcd":
            t.set("rm", key, key.encode())
        t.set("other", "x", b"x")
    notes: list = []
    db.add_commit_observer(notes.append)
    with conn.read_write() as t:
        t.remove("rm", "a")
        t.remove("rm", "never")
        t.remove_many("rm", ["b", "c", "not-there"])
        t.remove_many("rm", [])
        assert t.count("rm") == 1
    assert notes[-1].changed_rows == {("rm", k): RowChange.REMOVED for k in "abc"}
    with conn.read_write() as t:
        t.remove_all("rm")
    assert notes[-1].removed_collections == frozenset({"rm"})
    assert notes[-1].has_change("rm", "d")
    with conn.read() as t:
        assert t.collections() == ["other"]
    with conn.read_write() as t:
        t.remove_all_collections()
        assert t.count_all() == 0
    assert notes[-1].removed_all
    assert notes[-1].has_change("any", "thing")
    assert ydbview.has_change(notes, "rm", "a")
    assert not ydbview.has_change(notes[:1], "zzz", "a")
    assert ydbview.has_change_in_collection(notes, "other")


def test_commit_without_changes_makes_no_snapshot(db: ydbview.Database, conn: ydbview.Connection) -> None:
    notes: list = []
    db.add_commit_observer(notes.append)
    before = db.snapshot
    with conn.read_write():
        pass
    assert db.snapshot == before
    assert notes == []


def test_snapshots_count_commits(db: ydbview.Database, conn: ydbview.Connection) -> None:
    start = db.snapshot
    for index in range(3):
        with conn.read_write() as t:
            t.set("c", "k", str(index).encode())
    assert db.snapshot == start + 3
    assert conn.snapshot == start + 3
    with conn.read() as t:
        assert t.snapshot == start + 3


def test_explicit_begin_and_end(conn: ydbview.Connection) -> None:
    t = conn.read_write()
    t.set("c", "k", b"v")
    t.commit()
    assert not t.active
    r = conn.read()
    assert r.active and r.get("c", "k") == b"v"
    r.end()
    r.end()
    assert not r.active


def test_row_enumerations_carry_the_bytes_as_stored(db: ydbview.Database, conn: ydbview.Connection) -> None:
    # Objects and metadata are read from C's memory as each row is visited:
    # an empty object, empty metadata and no metadata stay apart.
    stored = {"a": (b"object", b"meta"), "b": (b"", b""), "c": (b"\x00two\x00", None)}
    db.register_view("all", ydbview.grouping(flavour="key")(lambda row: "g"),
                     key=ydbview.key_sorting(flavour="key")(lambda group, row: row.key))
    with conn.read_write() as t:
        for key, (obj, meta) in stored.items():
            t.set("c", key, obj, meta)
    with conn.read() as t:
        by_collection: list = []
        t.enumerate_rows("c", lambda key, obj, meta: by_collection.append((key, obj, meta)) and None)
        assert by_collection == [(key, obj, meta) for key, (obj, meta) in stored.items()]
        by_view: list = []
        t.view("all").enumerate_rows("g", lambda row, index: by_view.append((index, row)) and None)
        assert by_view == [(index, ydbview.ViewRow("c", key, obj, meta))
                           for index, (key, (obj, meta)) in enumerate(stored.items())]
