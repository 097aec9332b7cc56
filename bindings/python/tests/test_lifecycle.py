"""Handles are released by close(), by context managers, and by finalizers
(garbage collection and interpreter shutdown) without crashing or leaking a
writer lock."""

from __future__ import annotations

import gc
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import ydbview

import crash_child


def test_dropped_write_transaction_is_rolled_back(db: ydbview.Database, other: ydbview.Connection) -> None:
    conn = db.new_connection()
    writer = conn.read_write()
    writer.set("c", "k", b"never")
    del writer
    gc.collect()
    # The write lock was released: another connection can write.
    with other.read_write() as t:
        t.set("c", "other", b"v")
    with other.read() as t:
        assert t.get("c", "k") is None
    conn.close()


def test_dropped_objects_are_finalized_in_any_order() -> None:
    db = ydbview.Database()
    path = Path(db.path)
    conn = db.new_connection()
    reader = conn.read()
    del db  # the connection keeps the database alive
    gc.collect()
    assert reader.count_all() == 0
    del conn, reader
    gc.collect()
    assert not path.exists()  # temporary database deleted on final close


def test_interpreter_shutdown_with_open_handles(tmp_path: Path) -> None:
    script = textwrap.dedent("""
        import ydbview
        db = ydbview.Database()
        conn = db.new_connection()
        db.add_commit_observer(lambda n: print("observed", n.snapshot))
        with conn.read_write() as t:
            t.set("c", "k", b"v")
        reader = db.new_connection().read()
        writer = conn.read_write()
        writer.set("c", "k2", b"v")
        keep = reader, writer   # all left open on purpose
        print("exiting")
    """)
    env = dict(os.environ)
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                            env=env, timeout=60)
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["observed", "1", "exiting"]
    assert "Exception" not in result.stderr and "Error" not in result.stderr


@pytest.mark.parametrize("ending, outcome", [
    # Left to the finalizer at exit, which closes the database: the view's
    # rows still waiting to be stored are stored, and it loads next time.
    ("pass", ydbview.RegistrationOutcome.LOADED),
    # No close at all, as in a crash: the view is marked stale, and the
    # next registration repopulates it (it never loads without those rows).
    ("os._exit(0)", ydbview.RegistrationOutcome.REBUILT_STALE),
])
def test_a_view_left_open_at_exit_is_stored_or_marked_stale(tmp_path: Path, ending: str,
                                                            outcome: ydbview.RegistrationOutcome) -> None:
    path = tmp_path / "db.sqlite"
    script = textwrap.dedent(f"""
        import os, sys
        sys.path.insert(0, {str(Path(__file__).parent)!r})
        import crash_child, ydbview
        db = ydbview.Database({str(path)!r})
        crash_child.register(db)
        conn = db.new_connection()
        for rank in range(3):
            with conn.read_write() as t:
                t.set("books", f"b{{rank}}", f"s1|{{rank}}".encode())
        {ending}
    """)
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    with ydbview.Database(path) as db:
        assert crash_child.register(db) == outcome
        with db.new_connection() as conn, conn.read() as t:
            assert [key for _c, key in t.view(crash_child.VIEW).keys("s1")] == ["b0", "b1", "b2"]


def test_context_managers_close(tmp_path: Path) -> None:
    with ydbview.Database(tmp_path / "db.sqlite") as db:
        with db.new_connection() as conn:
            with conn.read() as t:
                assert t.active
            assert not t.active
        assert conn.closed
    assert db.closed
    assert "closed" in repr(db) and "closed" in repr(conn) and "ended" in repr(t)
