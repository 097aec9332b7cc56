"""Snapshot isolation, long-lived read transactions, rollback."""

from __future__ import annotations

import threading

import pytest

import ydbview


def put(conn: ydbview.Connection, key: str, value: bytes, collection: str = "c") -> None:
    with conn.read_write() as t:
        t.set(collection, key, value)


def test_reader_keeps_its_snapshot(conn: ydbview.Connection, other: ydbview.Connection) -> None:
    put(conn, "a", b"v1")
    with other.read() as reader:
        seen = reader.snapshot
        put(conn, "a", b"v2")
        put(conn, "b", b"new")
        assert reader.get("c", "a") == b"v1"
        assert reader.count("c") == 1
        assert reader.snapshot == seen
    with other.read() as reader:
        assert reader.snapshot == seen + 2
        assert reader.get("c", "a") == b"v2"


def test_uncommitted_writes_are_invisible(conn: ydbview.Connection, other: ydbview.Connection) -> None:
    with conn.read_write() as t:
        t.set("c", "pending", b"p")
        with other.read() as reader:
            assert reader.get("c", "pending") is None
    with other.read() as reader:
        assert reader.get("c", "pending") == b"p"


def test_exception_rolls_back(db: ydbview.Database, conn: ydbview.Connection) -> None:
    put(conn, "keep", b"original")
    before = db.snapshot
    with pytest.raises(RuntimeError, match="boom"):
        with conn.read_write() as t:
            t.set("c", "keep", b"changed")
            t.set("c", "added", b"x")
            t.remove_all_collections()
            raise RuntimeError("boom")
    assert db.snapshot == before
    with conn.read() as t:
        assert t.get("c", "keep") == b"original"
        assert t.get("c", "added") is None
    put(conn, "later", b"ok")  # the connection works again


def test_explicit_rollback(conn: ydbview.Connection) -> None:
    put(conn, "keep", b"original")
    with conn.read_write() as t:
        t.set("c", "keep", b"changed")
        t.rollback()
    with conn.read() as t:
        assert t.get("c", "keep") == b"original"


def test_long_lived_read_reports_exactly_the_skipped_commits(
        db: ydbview.Database, conn: ydbview.Connection, other: ydbview.Connection) -> None:
    assert not other.is_in_long_lived_read_transaction
    with other.read():
        pass  # catch up
    put(conn, "x", b"1")
    first = other.begin_long_lived_read_transaction()
    assert [n.snapshot for n in first] == [db.snapshot]
    assert other.is_in_long_lived_read_transaction
    frozen = other.snapshot

    for index in range(3):
        put(conn, f"k{index}", b"v")
    assert other.snapshot == frozen
    with other.read() as t:
        assert t.get("c", "k0") is None
    skipped = other.begin_long_lived_read_transaction()
    assert [n.snapshot for n in skipped] == [frozen + 1, frozen + 2, frozen + 3]
    assert [set(n.changed_rows) for n in skipped] == [{("c", f"k{i}")} for i in range(3)]
    assert ydbview.has_change(skipped, "c", "k1")
    with other.read() as t:
        assert t.get("c", "k2") == b"v"

    assert other.begin_long_lived_read_transaction() == []
    other.end_long_lived_read_transaction()
    assert not other.is_in_long_lived_read_transaction
    other.end_long_lived_read_transaction()  # not in one: fine
    put(conn, "after", b"v")
    with other.read() as t:
        assert t.get("c", "after") == b"v"


def test_long_lived_connection_cannot_write(conn: ydbview.Connection) -> None:
    conn.begin_long_lived_read_transaction()
    with pytest.raises(ydbview.MisuseError):
        conn.read_write()
    conn.end_long_lived_read_transaction()
    put(conn, "k", b"v")


def test_writers_on_threads_are_serialised(db: ydbview.Database) -> None:
    def work(worker: int) -> None:
        with db.new_connection() as conn:
            for index in range(20):
                with conn.read_write() as t:
                    count = t.count("counter")
                    t.set("counter", f"{worker}-{index}", str(count).encode())

    threads = [threading.Thread(target=work, args=(n,)) for n in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    with db.new_connection() as conn, conn.read() as t:
        values = sorted(int(v) for _, v, _ in t.rows("counter"))
    assert values == list(range(80))  # each writer saw every earlier commit
    assert db.snapshot == 80
