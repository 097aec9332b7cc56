"""The engine's one re-entrancy rule, as Python sees it (the Swift
ReentryTests and the C test_reentry.c check the same cases):

- a commit observer may read and write, on the committing connection too;
- an enumeration callback may read and write its transaction, not end it;
- a view callback may read rows of the transaction running it, not its
  views, and may not write it; a write on any connection is refused (this
  thread holds the write); reading another connection is fine;
- registering a view while this thread holds a write is refused.
"""

from __future__ import annotations

from typing import List

import pytest

import ydbview
from ydbview import MisuseError


def test_observer_may_write_on_the_committing_connection(db: ydbview.Database,
                                                         conn: ydbview.Connection) -> None:
    seen: List[int] = []

    def write_back(notification: ydbview.CommitNotification) -> None:
        seen.append(notification.snapshot)
        if notification.has_change("c", "echo"):
            return
        with conn.read_write() as t:
            t.set("c", "echo", b"from observer")

    db.add_commit_observer(write_back)
    with conn.read_write() as t:
        t.set("c", "k", b"v")
    assert seen == [1, 2]  # its own commit is delivered after, in order
    with conn.read() as t:
        assert t.get("c", "echo") == b"from observer"


def test_enumeration_may_read_and_write_but_not_end(conn: ydbview.Connection) -> None:
    with conn.read_write() as t:
        t.set("c", "a", b"1")
        t.set("c", "b", b"2")
    refused: List[MisuseError] = []
    with conn.read_write() as t:
        def visit(key: str) -> None:
            assert t.get("c", key) is not None  # reading: fine
            t.set("d", key, b"copied")  # writing: fine
            with pytest.raises(MisuseError) as error:
                t.rollback()
            refused.append(error.value)

        t.enumerate_keys("c", visit)
    assert len(refused) == 2 and "own callbacks" in refused[0].message
    with conn.read() as t:
        assert t.get("d", "a") == b"copied" and t.get("d", "b") == b"copied"


def test_view_callback_reads_rows_but_not_views_and_never_writes(db: ydbview.Database, conn: ydbview.Connection,
                                                  other: ydbview.Connection) -> None:
    with other.read_write() as t:
        t.set("c", "seen", b"by other")
    outcomes: dict = {}
    writing: List[ydbview.ReadWriteTransaction] = []

    def group(row: ydbview.ViewRow) -> str:
        if writing and not outcomes:
            for name, attempt in [("same transaction", lambda: writing[0].get("c", "seen")),
                                  ("same transaction's view", lambda: writing[0].view("v").count()),
                                  ("same transaction write", lambda: writing[0].touch_object("c", "seen")),
                                  ("same connection", lambda: conn.read()),
                                  ("write elsewhere", lambda: other.read_write())]:
                try:
                    attempt()
                    outcomes[name] = "ok"
                except MisuseError as error:
                    outcomes[name] = error.message
            with other.read() as t:
                outcomes["read elsewhere"] = t.get("c", "seen")
        return "all"

    db.register_view("v", ydbview.Grouping(group, flavour="key"),
                     ydbview.Sorting(lambda g, a, b: (a.key > b.key) - (a.key < b.key), flavour="key"))
    with conn.read_write() as t:
        writing.append(t)
        t.set("c", "new", b"x")
    assert outcomes["same transaction"] == "ok"  # rows may be read
    assert "half-updated" in outcomes["same transaction's view"]
    assert "read-only" in outcomes["same transaction write"]
    assert outcomes["same connection"] != "ok"
    assert "wait for itself" in outcomes["write elsewhere"]
    assert outcomes["read elsewhere"] == b"by other"


def test_registering_while_this_thread_writes_is_refused(db: ydbview.Database,
                                                         conn: ydbview.Connection) -> None:
    with conn.read_write():
        with pytest.raises(MisuseError):
            db.register_view("v", ydbview.Grouping(lambda row: "g", flavour="key"),
                             ydbview.Sorting(lambda g, a, b: 0, flavour="key"))
