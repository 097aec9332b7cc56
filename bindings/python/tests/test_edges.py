"""The engine's edges: values SQLite cannot store, one Database per file, and
a second writer on the thread that already writes."""

from __future__ import annotations

import errno
import faulthandler
import os
import re
import signal
import subprocess
import sys
from pathlib import Path
from typing import Iterator

import pytest

import ydbview

LIMIT = 4096


@pytest.fixture
def small_db(monkeypatch: pytest.MonkeyPatch) -> Iterator[ydbview.Database]:
    # Read once when the database opens: lowers SQLite's length limit so the
    # test need not allocate a gigabyte.
    monkeypatch.setenv("YDBVIEW_MAX_VALUE_BYTES", str(LIMIT))
    database = ydbview.Database()
    monkeypatch.delenv("YDBVIEW_MAX_VALUE_BYTES")
    yield database
    database.close()


def test_too_big_values_are_refused_and_nothing_changes(small_db: ydbview.Database) -> None:
    conn = small_db.new_connection()
    big = b"x" * (LIMIT + 1)
    with conn.read_write() as t:
        t.set("c", "k", b"small", b"meta")
    with conn.read_write() as t:
        with pytest.raises(ydbview.TooBigError) as caught:
            t.set("c", "k", big)
        assert str(LIMIT + 1) in caught.value.message and str(LIMIT) in caught.value.message
        assert caught.value.code == ydbview.Status.TOOBIG == 11
        with pytest.raises(ydbview.TooBigError):
            t.set("c", "new", big)
        with pytest.raises(ydbview.TooBigError):
            t.replace_object("c", "k", big)
        with pytest.raises(ydbview.TooBigError, match="metadata"):
            t.set("c", "k", b"o", big)
        with pytest.raises(ydbview.TooBigError, match="metadata"):
            t.replace_metadata("c", "k", big)
        with pytest.raises(ydbview.TooBigError):
            t.set("c", "k" * (LIMIT + 1), b"o")
        # A name no row can have is simply not found.
        long_name = "n" * (LIMIT + 1)
        assert t.get("c", long_name) is None
        assert not t.exists(long_name, "k")
        t.remove("c", long_name)
        # The transaction goes on: nothing was written.
        assert t.get("c", "k") == b"small"
        t.set("c", "other", b"fits")
    with conn.read() as t:
        assert t.get("c", "k") == b"small"
        assert t.get_metadata("c", "k") == b"meta"
        assert not t.exists("c", "new")
        assert t.get("c", "other") == b"fits"
    conn.close()


def test_too_big_error_is_a_value_error() -> None:
    assert issubclass(ydbview.TooBigError, ydbview.YDBError)
    assert ydbview.errors.error_for(11, "m").__class__ is ydbview.TooBigError


# -- one Database per database file ---------------------------------------

_HOLDER = """
import sys, ydbview
try:
    db = ydbview.Database(sys.argv[1])
except ydbview.BusyError:
    print("busy", flush=True)
    sys.exit(0)
print("open", flush=True)
sys.stdin.read()
db.close()
"""


def _spawn_holder(path: Path) -> "tuple[subprocess.Popen[str], str]":
    process = subprocess.Popen([sys.executable, "-c", _HOLDER, str(path)],
                               stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    assert process.stdout is not None
    return process, process.stdout.readline().strip()


def test_second_open_of_the_same_file_is_busy(tmp_path: Path) -> None:
    path = tmp_path / "db.sqlite"
    db = ydbview.Database(path)
    conn = db.new_connection()
    with conn.read_write() as t:
        t.set("c", "k", b"v")
    symlink = tmp_path / "symlink.sqlite"
    symlink.symlink_to(path)
    hard_link = tmp_path / "hardlink.sqlite"
    os.link(path, hard_link)
    for name in (path, symlink, hard_link):
        with pytest.raises(ydbview.BusyError, match=re.escape(str(name))):
            ydbview.Database(name)
        process, said = _spawn_holder(name)
        process.communicate(timeout=30)
        assert said == "busy"
    assert not (tmp_path / "db.sqlite-ydbview.lock").exists()
    # The refused opens broke nothing.
    with conn.read_write() as t:
        t.set("c", "k", b"still")
    with conn.read() as t:
        assert t.get("c", "k") == b"still"
    conn.close()
    db.close()
    ydbview.Database(symlink).close()


@pytest.mark.parametrize("kill", [False, True])
def test_another_process_holds_the_file_until_it_ends(tmp_path: Path, kill: bool) -> None:
    path = tmp_path / "db.sqlite"
    process, said = _spawn_holder(path)
    try:
        assert said == "open"
        with pytest.raises(ydbview.BusyError, match=re.escape(str(path))):
            ydbview.Database(path)
    finally:
        if kill:
            process.send_signal(signal.SIGKILL)
        process.communicate(timeout=30)
    ydbview.Database(path).close()


def test_unopenable_path_names_the_os_reason(tmp_path: Path) -> None:
    missing = tmp_path / "no" / "such.sqlite"
    with pytest.raises(ydbview.YDBError) as caught:
        ydbview.Database(missing)
    assert caught.value.code == ydbview.Status.CANTOPEN
    assert isinstance(caught.value, ydbview.CantOpenError)
    assert str(missing) in caught.value.message
    assert os.strerror(errno.ENOENT) in caught.value.message


# -- a second writer on the thread that already writes --------------------


@pytest.fixture
def watchdog() -> Iterator[None]:
    # A regression would block in C where no Python signal handler runs:
    # faulthandler's own thread ends the run (with tracebacks) instead.
    faulthandler.dump_traceback_later(60, exit=True, file=sys.__stderr__)
    yield
    faulthandler.cancel_dump_traceback_later()


def _second_writer(conn: ydbview.Connection) -> "ydbview.YDBError | None":
    try:
        conn.read_write().rollback()
    except ydbview.YDBError as error:
        return error
    return None


def test_second_writer_on_the_same_thread_is_misuse(db: ydbview.Database, watchdog: None) -> None:
    db.register_view("keys", lambda row: "all", lambda group, a, b: (a.key > b.key) - (a.key < b.key))
    conn, other = db.new_connection(), db.new_connection()
    with conn.read_write() as t:
        t.set("c", "k", b"v")
    with conn.read_write() as t:
        with pytest.raises(ydbview.MisuseError, match="wait for itself"):
            other.read_write()
        seen: list = []
        t.enumerate_rows("c", lambda key, obj, meta: seen.append(_second_writer(other)))
        view = t.view("keys")
        assert view is not None
        view.enumerate_keys("all", lambda collection, key, index: seen.append(_second_writer(other)))
        assert [type(error) for error in seen] == [ydbview.MisuseError, ydbview.MisuseError]
        t.set("c", "k2", b"v2")  # the refusals left the write usable
    # Ended: the thread writes again; a read holds no write.
    with other.read_write() as t:
        assert t.get("c", "k2") == b"v2"
    with conn.read() as t:
        results: list = []
        t.enumerate_rows("c", lambda key, obj, meta: results.append(_second_writer(other)))
        assert results == [None, None]
    conn.close()
    other.close()
