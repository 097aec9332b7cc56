"""Shared mode from Python (docs/behaviour.md, "Several processes"): a
writer in another process, and a plain ``sqlite3`` client, change the rows;
this process's mappings get changesets whose edit steps, applied one by
one to the old table, give the new one."""

from __future__ import annotations

import os
import random
import select
import sqlite3
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import List

import pytest

import ydbview
from list_histories import apply_steps, new_mappings, random_configuration, table_at

HERE = Path(__file__).resolve().parent

# Run as a separate process: commits random histories to the file in
# shared mode (list_histories.random_commit), printing "done" at the end.
WRITER = """
import random, sys, time
sys.path.insert(0, sys.argv[4])
import ydbview
from list_histories import random_commit
path, seed, commits = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
db = ydbview.Database(path, serializer=ydbview.JSONSerializer(), multi_process=True)
conn = db.new_connection()
rng = random.Random(seed)
for _ in range(commits):
    random_commit(conn, rng)
    time.sleep(0.005)   # a steady writer, not one burst
db.close()
print("done")
"""


def register(db: ydbview.Database) -> None:
    db.register_view("v", ydbview.Grouping(lambda row: row.object["g"], flavour="object"),
                     ydbview.KeySorting(lambda group, row: (row.object["n"], row.key), flavour="object"))


def start_writer(path: Path, seed: int, commits: int) -> "subprocess.Popen[str]":
    return subprocess.Popen([sys.executable, "-c", WRITER, str(path), str(seed), str(commits), str(HERE)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=dict(os.environ))


def test_the_modes_refuse_each_other(tmp_path: Path) -> None:
    path = tmp_path / "db.sqlite"
    with ydbview.Database(path, multi_process=True) as shared:
        assert shared.multi_process
        with ydbview.Database(path, multi_process=True) as second:
            assert second.snapshot == shared.snapshot
        with pytest.raises(ydbview.BusyError):
            ydbview.Database(path)
    with ydbview.Database(path) as exclusive:
        assert not exclusive.multi_process
        with pytest.raises(ydbview.BusyError, match="exclusive mode"):
            ydbview.Database(path, multi_process=True)


def test_commit_log_limit(tmp_path: Path) -> None:
    with ydbview.Database(tmp_path / "db.sqlite", multi_process=True) as db:
        assert db.commit_log_limit == 10_000
        db.commit_log_limit = 5
        assert db.commit_log_limit == 5
        with pytest.raises(ydbview.InvalidArgumentError):
            db.commit_log_limit = 0


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_a_writer_process_drives_this_process_mappings(tmp_path: Path, seed: int) -> None:
    path = tmp_path / "db.sqlite"
    db = ydbview.Database(path, serializer=ydbview.JSONSerializer(), multi_process=True)
    try:
        register(db)
        ui = db.new_connection()
        rng = random.Random(seed)
        groups, configure = random_configuration(rng)
        m = new_mappings(groups, configure)
        ui.begin_long_lived_read_transaction()
        with ui.read() as t:
            m.update(t)
        writer = start_writer(path, seed, 60)
        catchups = 0
        deadline = time.monotonic() + 60
        while True:
            finished = writer.poll() is not None
            readable, _, _ = select.select([ui.wakeup_fd()], [], [], 0.05)
            if readable or finished:
                old = table_at(ui, m)
                notifications = ui.begin_long_lived_read_transaction()
                if notifications:
                    catchups += 1
                    steps = m.changes(notifications).steps()
                    new = table_at(ui, m)
                    assert apply_steps(steps, old, new) == new, f"seed {seed}: {steps}"
            if finished:
                break
            assert time.monotonic() < deadline, "the writer process did not finish"
        out, err = writer.communicate()
        assert writer.returncode == 0 and out.strip() == "done", err
        # The wake-ups came while the writer ran: several catch-ups, not one at the end.
        assert catchups > 1
        with ui.read() as t:
            assert t.snapshot == db.snapshot
    finally:
        db.close()


def test_plain_sqlite_writes_reach_the_views(tmp_path: Path) -> None:
    path = tmp_path / "db.sqlite"
    with ydbview.Database(path, serializer=ydbview.JSONSerializer(), multi_process=True) as db:
        register(db)
        conn = db.new_connection()
        with conn.read_write() as t:
            for n in range(3):
                t.set("c", f"k{n}", {"g": "a", "n": n})
        seen: List[int] = []
        arrived = threading.Event()

        def observe(notification: ydbview.CommitNotification) -> None:
            seen.append(notification.snapshot)
            arrived.set()
        db.add_commit_observer(observe)
        client = sqlite3.connect(path, timeout=5)
        with client:
            client.execute("INSERT INTO ydb_rows (collection, key, object) VALUES ('c', 'plain', ?)",
                           (b'{"g": "a", "n": 1}',))
            client.execute("DELETE FROM ydb_rows WHERE key = 'k2'")
        client.close()
        # The watcher folds them within its once-a-second look.
        assert arrived.wait(10)
        with conn.read() as t:
            view = t.view("v")
            assert [view.key_at("a", index) for index in range(view.count("a"))] == [
                ("c", "k0"), ("c", "k1"), ("c", "plain")]


# A Python writer process in the C follower's terms (bindings/c/tests/
# test_multiprocess.c): objects "G:RANK:TAG", G in a..d (x: left out).
C_PARTNER_WRITER = """
import random, sys, time
import ydbview
path, seed, commits = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
db = ydbview.Database(path, multi_process=True)
conn = db.new_connection()
rng = random.Random(seed)
for serial in range(commits):
    with conn.read_write() as t:
        for _ in range(rng.randint(1, 4)):
            key = f"p{rng.randint(0, 29):02d}"
            roll = rng.random()
            if roll < 0.6:
                object = f"{rng.choice('abcdx')}:{rng.randint(0, 999):03d}:py{serial}".encode()
                t.set("py", key, object)
            elif roll < 0.75:
                t.touch_object("py", key)
            elif roll < 0.98:
                t.remove("py", key)
            else:
                t.remove_all("py")
    time.sleep(0.003)
db.close()
print("done")
"""


def test_a_python_writer_and_a_c_follower(tmp_path: Path) -> None:
    """The cross-language pair: this Python writer's commits reach a C
    process's mappings as exact edit scripts (the C follower checks every
    step, and the view against the rows, and exits 1 on any mismatch)."""
    follower_program = Path(os.environ["YDBVIEW_LIBRARY"]).resolve().parent / "test_multiprocess"
    assert follower_program.exists(), f"build the C tests first: {follower_program}"
    path, stop, ready = tmp_path / "db.sqlite", tmp_path / "stop", tmp_path / "ready"
    ydbview.Database(path, multi_process=True).close()
    follower = subprocess.Popen([str(follower_program), "follower", str(path), "--stop", str(stop),
                                 "--ready", str(ready)], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        deadline = time.monotonic() + 30
        while not ready.exists():
            assert follower.poll() is None, follower.communicate()[0]
            assert time.monotonic() < deadline, "the C follower did not start"
            time.sleep(0.02)
        writer = subprocess.run([sys.executable, "-c", C_PARTNER_WRITER, str(path), "5", "150"],
                                capture_output=True, text=True, env=dict(os.environ), timeout=120)
        assert writer.returncode == 0 and writer.stdout.strip() == "done", writer.stderr
        stop.touch()
        out, _ = follower.communicate(timeout=60)
    finally:
        if follower.poll() is None:
            follower.kill()
            follower.wait()
    assert follower.returncode == 0, out
    summary = [line for line in out.splitlines() if line.startswith("follower:")]
    assert summary and "mismatches=0" in summary[-1], out
    catchups = int(summary[-1].split("catchups=")[1].split()[0])
    steps = int(summary[-1].split("steps=")[1].split()[0])
    assert catchups > 1 and steps > 50, out
