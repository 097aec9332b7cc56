"""Commit observers: called per commit, removable, released exactly once,
and an exception in one never reaches C."""

from __future__ import annotations

import gc
import threading

import pytest

import ydbview
from ydbview._callbacks import live as live_callbacks


def put(conn: ydbview.Connection, key: str) -> None:
    with conn.read_write() as t:
        t.set("c", key, b"v")


def test_observer_sees_each_commit_then_stops(db: ydbview.Database, conn: ydbview.Connection) -> None:
    seen: list = []
    token = db.add_commit_observer(seen.append)
    put(conn, "a")
    put(conn, "b")
    assert [n.snapshot for n in seen] == [1, 2]
    assert seen[1].changed_rows == {("c", "b"): ydbview.RowChange.OBJECT_CHANGED
                                    | ydbview.RowChange.METADATA_CHANGED}
    db.remove_commit_observer(token)
    put(conn, "c")
    assert len(seen) == 2
    with pytest.raises(ydbview.NotFoundError):
        db.remove_commit_observer(token)


def test_registry_entry_released_on_remove_and_close() -> None:
    before = live_callbacks()
    db = ydbview.Database()
    token = db.add_commit_observer(lambda n: None)
    db.add_commit_observer(lambda n: None)
    assert live_callbacks() == before + 2
    db.remove_commit_observer(token)
    assert live_callbacks() == before + 1
    db.close()
    assert live_callbacks() == before


def test_observer_exception_becomes_a_warning(db: ydbview.Database, conn: ydbview.Connection) -> None:
    def broken(notification: ydbview.CommitNotification) -> None:
        raise ValueError("observer bug")

    calls: list = []
    db.add_commit_observer(broken)
    db.add_commit_observer(calls.append)
    with pytest.warns(ydbview.ObserverWarning, match="observer bug"):
        put(conn, "a")
    assert len(calls) == 1  # other observers still ran
    with conn.read() as t:
        assert t.get("c", "a") == b"v"  # the commit stands


def test_observer_runs_on_the_committing_thread(db: ydbview.Database) -> None:
    threads: list = []
    db.add_commit_observer(lambda n: threads.append(threading.get_ident()))

    def commit() -> None:
        with db.new_connection() as conn:
            put(conn, "x")

    worker = threading.Thread(target=commit)
    worker.start()
    worker.join()
    assert threads == [worker.ident]


def test_observer_may_read_through_another_connection(db: ydbview.Database, conn: ydbview.Connection,
                                                      other: ydbview.Connection) -> None:
    values: list = []

    def read_back(notification: ydbview.CommitNotification) -> None:
        with other.read() as t:
            values.append(t.get("c", "a"))

    db.add_commit_observer(read_back)
    put(conn, "a")
    assert values == [b"v"]


def test_notifications_outlive_the_database() -> None:
    db = ydbview.Database()
    conn = db.new_connection()
    kept: list = []
    db.add_commit_observer(kept.append)
    put(conn, "a")
    conn.close()
    db.close()
    del db, conn
    gc.collect()
    assert kept[0].has_change("c", "a")
    assert kept[0].snapshot == 1
