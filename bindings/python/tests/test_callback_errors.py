"""One rule for an exception raised in a Python callback that C calls: the
call that ran C raises that very exception -- not a CallbackFailedError,
not chained under one -- with the callback's frame in its traceback. A
commit observer's exception cannot fail its commit (it has happened): it
comes back as an ObserverWarning caused by it. See ``ydbview._callbacks``."""

from __future__ import annotations

from typing import Any, Callable, Iterator

import pytest

import ydbview


class Boom(Exception):
    pass


@pytest.fixture
def db() -> Iterator[ydbview.Database]:
    database = ydbview.Database()
    yield database
    database.close()


def raising(error: BaseException) -> Callable[..., Any]:
    def callback(*args: Any) -> Any:
        raise error

    return callback


def by_key(group: str, a: ydbview.ViewRow, b: ydbview.ViewRow) -> int:
    return (a.key > b.key) - (a.key < b.key)


def everything(row: ydbview.ViewRow) -> str:
    return "all"


def put(conn: ydbview.Connection, *keys: str) -> None:
    with conn.read_write() as t:
        for key in keys:
            t.set("c", key, b"v")


def assert_raised_as_is(info: pytest.ExceptionInfo, error: BaseException) -> None:
    assert info.value is error
    assert info.value.__cause__ is None and info.value.__context__ is None
    assert "callback" in [entry.name for entry in info.traceback]


def test_grouping(db: ydbview.Database) -> None:
    error = Boom("grouping")
    db.register_view("v", ydbview.Grouping(raising(error), flavour="key"), ydbview.Sorting(by_key, flavour="key"))
    conn = db.new_connection()
    t = conn.read_write()
    with pytest.raises(Boom) as info:
        t.set("c", "k", b"v")
    assert_raised_as_is(info, error)
    t.rollback()  # the failed write poisoned the transaction


def test_sorting(db: ydbview.Database) -> None:
    error = Boom("sorting")
    db.register_view("v", ydbview.Grouping(everything, flavour="key"),
                     ydbview.Sorting(raising(error), flavour="key"))
    conn = db.new_connection()
    t = conn.read_write()
    t.set("c", "a", b"v")  # alone in its group: nothing to compare
    with pytest.raises(Boom) as info:
        t.set("c", "b", b"v")
    assert_raised_as_is(info, error)
    t.rollback()


def test_sort_key(db: ydbview.Database) -> None:
    error = Boom("key")
    conn = db.new_connection()
    put(conn, "a")
    with pytest.raises(Boom) as info:
        db.register_view("v", ydbview.Grouping(everything, flavour="key"),
                         key=ydbview.KeySorting(raising(error), flavour="key"))
    assert_raised_as_is(info, error)
    assert db.registered_views == []


def test_find(db: ydbview.Database) -> None:
    error = Boom("find")
    db.register_view("v", ydbview.Grouping(everything, flavour="key"), ydbview.Sorting(by_key, flavour="key"))
    conn = db.new_connection()
    put(conn, "a", "b")
    with conn.read() as t:
        view = t.view("v")
        with pytest.raises(Boom) as info:
            view.find("all", raising(error), flavour="key")
        assert_raised_as_is(info, error)
        assert view.count("all") == 2


def test_enumeration(db: ydbview.Database) -> None:
    error = Boom("enumeration")
    conn = db.new_connection()
    put(conn, "a")
    with conn.read() as t:
        with pytest.raises(Boom) as info:
            t.enumerate_keys("c", raising(error))
        assert_raised_as_is(info, error)


def test_mappings_filter(db: ydbview.Database) -> None:
    error = Boom("filter")
    db.register_view("v", ydbview.Grouping(everything, flavour="key"), ydbview.Sorting(by_key, flavour="key"))
    conn = db.new_connection()
    put(conn, "a")
    with ydbview.Mappings.dynamic(raising(error), "v") as mappings, conn.read() as t:
        with pytest.raises(Boom) as info:
            mappings.update(t)
        assert_raised_as_is(info, error)


def test_mappings_group_key(db: ydbview.Database) -> None:
    error = Boom("group key")
    db.register_view("v", ydbview.Grouping(lambda row: row.key, flavour="key"), ydbview.Sorting(by_key, flavour="key"))
    conn = db.new_connection()
    put(conn, "a", "b")
    with ydbview.Mappings.dynamic(lambda group: True, "v", key=raising(error)) as mappings, conn.read() as t:
        with pytest.raises(Boom) as info:
            mappings.update(t)
        assert_raised_as_is(info, error)


def test_observer(db: ydbview.Database) -> None:
    error = Boom("observer")
    db.add_commit_observer(raising(error))
    conn = db.new_connection()
    with pytest.warns(ydbview.ObserverWarning) as records:
        put(conn, "a")
    assert [record.message.__cause__ for record in records] == [error]
    with conn.read() as t:
        assert t.exists("c", "a")  # the commit stands


def test_an_observer_that_is_interrupted_interrupts_the_commit_call(db: ydbview.Database) -> None:
    error = KeyboardInterrupt()
    db.add_commit_observer(raising(error))
    conn = db.new_connection()
    t = conn.read_write()
    t.set("c", "a", b"v")
    with pytest.raises(KeyboardInterrupt) as info:
        t.commit()
    assert info.value is error
    with conn.read() as t:
        assert t.exists("c", "a")


def test_a_callback_calling_c_raises_only_its_own(db: ydbview.Database) -> None:
    # The first observer's exception is kept for the commit while the second
    # runs an enumeration of its own: that enumeration must not raise it.
    first = Boom("first observer")
    seen: list = []
    reader = db.new_connection()

    def reads(notification: ydbview.CommitNotification) -> None:
        with reader.read() as t:
            seen.append(t.keys("c"))

    db.add_commit_observer(raising(first))
    db.add_commit_observer(reads)
    with pytest.warns(ydbview.ObserverWarning) as records:
        put(db.new_connection(), "a")
    assert seen == [["a"]]
    assert [record.message.__cause__ for record in records] == [first]
