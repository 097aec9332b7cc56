"""Waiting for the write lock from Python: ``write_timeout`` (BusyError
naming the wait instead of waiting forever behind a forgotten
transaction), a ResourceWarning for a transaction dropped while open,
MisuseError instead of a wait that could only end with itself, and
registrations from several threads that wait their turn."""

from __future__ import annotations

import gc
import threading
import time
import warnings
from typing import List

import pytest

import ydbview
from ydbview import BusyError, MisuseError


def begin_on_another_thread(connection: ydbview.Connection) -> ydbview.ReadWriteTransaction:
    """A write begun by another thread, so that this one may wait for it."""
    begun: List[ydbview.ReadWriteTransaction] = []
    thread = threading.Thread(target=lambda: begun.append(connection.read_write()))
    thread.start()
    thread.join()
    return begun[0]


def test_a_forgotten_write_fails_other_writers_with_busy_naming_the_wait(db: ydbview.Database,
                                                                        conn: ydbview.Connection,
                                                                        other: ydbview.Connection) -> None:
    assert db.default_write_timeout == 5.0 and other.write_timeout == 5.0
    other.write_timeout = 0.12
    assert other.write_timeout == 0.12
    forgotten = begin_on_another_thread(conn)
    forgotten.set("c", "k", b"1")
    started = time.monotonic()
    with pytest.raises(BusyError, match="database is locked: waited 120 ms"):
        other.read_write()
    assert time.monotonic() - started >= 0.11
    forgotten.commit()   # untouched: it commits, and others write again
    with other.read_write() as t:
        t.set("c", "k2", b"2")
    other.write_timeout = None
    assert other.write_timeout is None
    other.write_timeout = float("inf")
    assert other.write_timeout is None
    with pytest.raises(ValueError):
        other.write_timeout = float("nan")
    db.default_write_timeout = 0
    assert db.new_connection().write_timeout == 0


def test_a_write_transaction_dropped_while_open_warns_and_rolls_back(db: ydbview.Database,
                                                                    conn: ydbview.Connection) -> None:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        transaction = conn.read_write()
        transaction.set("c", "k", b"lost")
        del transaction
        gc.collect()
    assert [w.category for w in caught] == [ResourceWarning]
    assert "dropped while open" in str(caught[0].message)
    with conn.read() as t:
        assert t.get("c", "k") is None
    # A committed or rolled-back one says nothing; nor does a read.
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        done = conn.read_write()
        done.commit()
        reading = conn.read()
        del done, reading
        gc.collect()
    assert caught == []


def test_a_thread_waiting_to_write_does_not_take_its_connection_hostage(db: ydbview.Database,
                                                                       conn: ydbview.Connection,
                                                                       other: ydbview.Connection) -> None:
    holding = conn.read_write()

    def write() -> None:
        with other.read_write() as t:
            t.set("c", "from other", b"x")

    thread = threading.Thread(target=write)
    thread.start()
    time.sleep(0.1)   # the thread waits for the write lock
    started = time.monotonic()
    with pytest.raises(MisuseError, match="another thread is beginning"):
        other.read()   # before: waited for the thread, which waited for this commit
    assert time.monotonic() - started < 1
    holding.commit()
    thread.join(30)
    assert not thread.is_alive()
    with other.read() as t:
        assert t.get("c", "from other") == b"x"


def test_waiting_for_a_registration_while_holding_the_write_lock_is_refused(db: ydbview.Database,
                                                                           conn: ydbview.Connection) -> None:
    with conn.read_write() as t:
        for n in range(100):
            t.set("c", f"k{n}", b"x")
    registration = db.register_view_async("v", lambda row: time.sleep(0.001) or "g", key=lambda group, row: row.key)
    holding = conn.read_write()
    with pytest.raises(MisuseError, match="holds a read-write transaction"):
        registration.wait()
    assert registration.wait(0) is False
    holding.rollback()
    registration.result(30)


def test_registrations_from_several_threads_wait_their_turn(db: ydbview.Database,
                                                           conn: ydbview.Connection) -> None:
    with conn.read_write() as t:
        for n in range(30):
            t.set("c", f"k{n}", b"a" if n % 2 else b"b")
    db.register_view("always", lambda row: "g", key=lambda group, row: row.key)
    failures: List[str] = []

    def register(thread: int) -> None:
        for round_ in range(15):
            try:
                name = f"t{thread}"
                db.register_view(name, lambda row: row.object.decode(), key=lambda group, row: row.key,
                                 version_tag=str(round_))
                if round_ % 3 == 0:
                    db.unregister_view(name)
            except ydbview.YDBError as error:   # before: MisuseError "already active", NotFoundError
                failures.append(f"thread {thread}: {error!r}")

    threads = [threading.Thread(target=register, args=(n,)) for n in range(3)]
    for thread in threads:
        thread.start()
    misses = 0
    while any(thread.is_alive() for thread in threads):
        if "always" not in db.registered_views:
            misses += 1
    for thread in threads:
        thread.join()
    assert failures == [] and misses == 0
