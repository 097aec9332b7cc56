"""Disk and memory stay bounded under the readers a UI keeps, a reader that
falls too far behind is told to reload, and observers see commits in
snapshot order when threads commit at once."""

from __future__ import annotations

import os
import threading
from typing import Any, List

import pytest

import ydbview


def wal_bytes(db: ydbview.Database) -> int:
    try:
        return os.path.getsize(db.path + "-wal")
    except FileNotFoundError:
        return 0


def register(db: ydbview.Database) -> None:
    @ydbview.grouping(flavour="key")
    def one_group(row: ydbview.ViewRow) -> str:
        return "g"

    @ydbview.sorting(flavour="key")
    def by_key(group: str, a: ydbview.ViewRow, b: ydbview.ViewRow) -> int:
        return (a.key > b.key) - (a.key < b.key)

    db.register_view("v", one_group, by_key)


def update(conn: ydbview.Connection, index: int) -> None:
    with conn.read_write() as t:
        t.set("c", f"k{index % 50}", bytes([index % 251]) * 300)


def test_catching_up_reader_keeps_the_log_small(db: ydbview.Database) -> None:
    register(db)
    writer, reader = db.new_connection(), db.new_connection()
    reader.begin_long_lived_read_transaction()
    largest = 0
    for index in range(3000):
        update(writer, index)
        assert len(reader.begin_long_lived_read_transaction()) == 1
        largest = max(largest, wal_bytes(db))
    # Without the catch-up checkpoint the log keeps every commit (~25 MB).
    assert 0 < largest < 8 << 20


def test_reader_that_never_catches_up_must_reload(db: ydbview.Database) -> None:
    register(db)
    assert db.max_commits_behind == 1000
    with pytest.raises(ydbview.InvalidArgumentError):
        db.max_commits_behind = 0
    db.max_commits_behind = 20
    writer, reader = db.new_connection(), db.new_connection()
    reader.begin_long_lived_read_transaction()
    for index in range(60):
        update(writer, index)
    with pytest.raises(ydbview.ReloadRequired, match="behind"):
        with reader.read():
            pass
    with pytest.raises(ydbview.ReloadRequired, match="behind"):
        reader.begin_long_lived_read_transaction()
    assert reader.snapshot == db.snapshot
    with reader.read() as t:
        view = t.view("v")
        assert view is not None and view.count("g") == 50
    update(writer, 0)
    assert len(reader.begin_long_lived_read_transaction()) == 1


def test_observers_see_commits_in_snapshot_order(db: ydbview.Database) -> None:
    seen: List[int] = []
    lock = threading.Lock()

    def observe(notification: Any) -> None:
        with lock:
            seen.append(notification.snapshot)

    db.add_commit_observer(observe)

    def commit_many(conn: ydbview.Connection) -> None:
        for index in range(150):
            update(conn, index)

    threads = [threading.Thread(target=commit_many, args=(db.new_connection(),)) for _ in range(3)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    assert len(seen) == 450
    assert seen == sorted(seen)
