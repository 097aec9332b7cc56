"""Crash recovery: a writer is killed with SIGKILL at random moments, in the
middle of commits; every reopen must find the database whole (no commit it
reported is lost, none half-applied) and the view equal to a computation
from scratch over the rows. YDBVIEW_ATTACK_SCALE=N runs N times as many
kills (default 1: 12 kills)."""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Dict, List, Tuple

import ydbview

import crash_child

SCALE = int(os.environ.get("YDBVIEW_ATTACK_SCALE", "1"))


def from_scratch(conn: ydbview.Connection) -> Dict[str, List[str]]:
    """The view computed directly from the rows."""
    groups: Dict[str, List[Tuple[int, str]]] = {}
    with conn.read() as t:
        for key, obj, _meta in t.rows("books"):
            shelf, rank = obj.split(b"|")
            groups.setdefault(shelf.decode(), []).append((int(rank), key))
    return {shelf: [key for _rank, key in sorted(rows)] for shelf, rows in groups.items()}


def view_contents(conn: ydbview.Connection) -> Dict[str, List[str]]:
    with conn.read() as t:
        view = t.view(crash_child.VIEW)
        return {group: [key for _c, key in view.keys(group)] for group in view.groups}


def test_sigkill_mid_commit_loses_nothing_and_views_stay_true(tmp_path: Path) -> None:
    seed = int(os.environ.get("YDBVIEW_ATTACK_SEED", str(random.randrange(1 << 30))))
    print(f"seed {seed}")
    rng = random.Random(seed)
    path = tmp_path / "crash.sqlite"
    child = Path(crash_child.__file__)
    kills = 12 * SCALE
    reported_total = 0
    for round_number in range(kills):
        process = subprocess.Popen([sys.executable, str(child), str(path), str(seed + round_number)],
                                   stdout=subprocess.PIPE, text=True)
        # Let it commit a little (first round: it also builds the view).
        time.sleep(rng.uniform(0.15, 0.5) + (0.4 if round_number == 0 else 0))
        process.send_signal(signal.SIGKILL)
        output, _ = process.communicate(timeout=30)
        reported = [int(line) for line in output.split()]
        reported_total += len(reported)
        with ydbview.Database(str(path)) as db:
            crash_child.register(db)
            conn = db.new_connection()
            with conn.read() as t:
                counter = int(t.get("meta", "counter") or b"0")
            if reported:
                # The last reported commit is durable; at most one more (the
                # commit that was returning when the signal came) may be too.
                assert reported[-1] <= counter <= reported[-1] + 1, (round_number, reported[-1], counter)
            assert view_contents(conn) == from_scratch(conn), f"round {round_number}, seed {seed}"
            conn.close()
    assert reported_total > kills, "the writer hardly committed: the test proved nothing"
