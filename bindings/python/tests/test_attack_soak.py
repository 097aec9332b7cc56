"""Multi-threaded soak with a watchdog: one writer and several readers hammer
one database for a bounded time; any error, wrong answer or hang fails.

- The writer commits random transactions, each also storing the number of
  rows of collection "a" in (meta, count_a).
- Plain readers open short read transactions and check, at their snapshot,
  that the view equals its rows grouped and sorted from scratch and that
  (meta, count_a) equals the row count (snapshot isolation).
- Long-lived readers stay on a snapshot, catch up after commits, turn the
  skipped notifications into a changeset for their mappings and apply it to
  the table they hold; then, at the new snapshot, the table must equal the
  view, the mappings must equal fresh mappings updated at that snapshot,
  and the view's counts must equal the rows' counts.

A watchdog in the main thread fails the test, with every thread's stack, if
any thread makes no progress for STALL_LIMIT seconds; a last-resort
faulthandler timer ends the process if even that cannot finish, so a hang
fails CI instead of blocking it.

Default: about 3 s; YDBVIEW_ATTACK_SECONDS sets the duration,
YDBVIEW_ATTACK_SCALE multiplies the default; YDBVIEW_ATTACK_SEED replays the
workload (not the thread interleaving).
"""

from __future__ import annotations

import faulthandler
import random
import sys
import threading
import time
import traceback
from pathlib import Path
from typing import Callable, Dict, List, Tuple

import pytest

import ydbview

from attack_support import (
    META,
    RowKey,
    expected_view,
    random_transaction,
    read_model,
    read_view,
    run_op,
    seconds,
    seed,
    view_grouping,
    view_sorting,
)

VIEW = "soak"
STALL_LIMIT = 10.0  # seconds without progress in one thread: a hang
PLAIN_READERS = 2
LONG_LIVED_READERS = 2


class Soak:
    def __init__(self, db: ydbview.Database, base_seed: int) -> None:
        self.db = db
        self.base_seed = base_seed
        self.stop = threading.Event()
        self.progress: Dict[str, int] = {}
        self.errors: List[str] = []
        self.commits = 0
        self.reads = 0
        self.catch_ups = 0
        self.changesets_applied = 0

    def worker(self, name: str, body: Callable[[str], None]) -> threading.Thread:
        self.progress[name] = 0

        def run() -> None:
            try:
                body(name)
            except BaseException:  # noqa: B902 - every failure must reach the main thread
                self.errors.append(f"{name}:\n{traceback.format_exc()}")
                self.stop.set()

        return threading.Thread(target=run, name=name, daemon=True)

    # -- the writer --

    def write(self, name: str) -> None:
        rng = random.Random(self.base_seed)
        with self.db.new_connection() as connection:
            while not self.stop.is_set():
                ops = random_transaction(rng, max_ops=8)
                with connection.read_write() as txn:
                    for op in ops:
                        run_op(txn, op)
                    txn.set(META, "count_a", txn.count("a"))
                self.commits += 1
                self.progress[name] += 1

    # -- plain readers --

    def read_plain(self, name: str) -> None:
        with self.db.new_connection() as connection:
            while not self.stop.is_set():
                with connection.read() as txn:
                    where = f"{name} at snapshot {txn.snapshot}"
                    model = read_model(txn)
                    assert read_view(txn, VIEW) == expected_view(model), f"{where}: view != rows"
                    assert (txn.get(META, "count_a") or 0) == txn.count("a"), f"{where}: torn snapshot"
                self.reads += 1
                self.progress[name] += 1

    # -- long-lived readers --

    def read_long_lived(self, name: str) -> None:
        with self.db.new_connection() as connection:
            connection.begin_long_lived_read_transaction()
            mappings = ydbview.Mappings.dynamic(lambda group: True, VIEW)
            with connection.read() as txn:
                mappings.update(txn)
                table = table_of(txn, mappings)
            while not self.stop.is_set():
                skipped = connection.begin_long_lived_read_transaction()
                if skipped:
                    changeset = mappings.changes(skipped)
                    table = apply_changeset(table, changeset, name)
                    self.catch_ups += 1
                    self.changesets_applied += not changeset.is_empty
                with connection.read() as txn:
                    where = f"{name} at snapshot {txn.snapshot}"
                    assert mappings.snapshot_of_last_update == txn.snapshot == connection.snapshot, where
                    assert table == table_of(txn, mappings), f"{where}: the changeset-driven table != view"
                    fresh = ydbview.Mappings.dynamic(lambda group: True, VIEW)
                    fresh.update(txn)
                    assert mappings_state(mappings) == mappings_state(fresh), (
                        f"{where}: mappings moved by changesets != fresh mappings")
                    fresh.close()
                    model = read_model(txn)
                    expected = expected_view(model)
                    view = txn.view(VIEW)
                    assert view is not None
                    assert {group: view.count(group) for group in view.groups} == {
                        group: len(keys) for group, keys in expected.items()}, f"{where}: counts != rows"
                    assert (txn.get(META, "count_a") or 0) == txn.count("a"), f"{where}: torn snapshot"
                self.reads += 1
                self.progress[name] += 1
                if not skipped:
                    time.sleep(0.001)  # nothing new: let the writer run
            mappings.close()


Table = List[Tuple[str, List[RowKey]]]  # (group, keys) per section


def table_of(txn: ydbview.ReadTransaction, mappings: ydbview.Mappings) -> Table:
    """What a table view shows for ``mappings``, read from the view."""
    view = txn.view(VIEW)
    assert view is not None
    table: Table = []
    for section in range(mappings.number_of_sections):
        group = mappings.group_for_section(section)
        assert group is not None
        table.append((group, view.keys(group)))
    return table


def mappings_state(mappings: ydbview.Mappings) -> List[Tuple[str, int]]:
    return [(mappings.group_for_section(section) or "", mappings.number_of_items_in_section(section) or 0)
            for section in range(mappings.number_of_sections)]


def apply_changeset(table: Table, changeset: ydbview.Changeset, where: str) -> Table:
    """Applies ``changeset`` to ``table`` as a batch update: section and row
    deletes (and moves out) at original positions, then section and row
    inserts (and moves in) at final positions, in ascending order. Checks
    that each change names the row the table holds where it says."""
    deleted_sections = set()
    for change in changeset.section_changes:
        if change.type == ydbview.SectionChangeType.DELETE:
            assert table[change.index][0] == change.group, f"{where}: section delete {change}"
            deleted_sections.add(change.index)
    leaving = set()
    arriving = []
    for change in changeset.row_changes:
        row = (change.collection, change.key)
        assert None not in row, f"{where}: a change without a key in a table without ranges: {change}"
        if change.type in (ydbview.ChangeType.DELETE, ydbview.ChangeType.MOVE, ydbview.ChangeType.UPDATE):
            section, index = change.index_path
            assert table[section][1][index] == row, f"{where}: {change} does not name the row it moves"
        if change.type in (ydbview.ChangeType.DELETE, ydbview.ChangeType.MOVE):
            leaving.add(tuple(change.index_path))
        if change.type in (ydbview.ChangeType.INSERT, ydbview.ChangeType.MOVE):
            arriving.append((tuple(change.new_index_path), row))
    new_table: Table = [(group, [row for index, row in enumerate(keys) if (section, index) not in leaving])
                        for section, (group, keys) in enumerate(table) if section not in deleted_sections]
    for change in sorted((c for c in changeset.section_changes if c.type == ydbview.SectionChangeType.INSERT),
                         key=lambda c: c.index):
        new_table.insert(change.index, (change.group, []))
    for (section, index), row in sorted(arriving):
        new_table[section][1].insert(index, row)
    return new_table


def test_one_writer_many_readers_no_errors_no_hangs(tmp_path: Path) -> None:
    base_seed = seed()
    duration = seconds(3.0)
    print(f"soak attack: seed {base_seed}, {duration:.1f} s (YDBVIEW_ATTACK_SEED={base_seed} replays the workload)")
    # Last resort: if the watchdog itself cannot finish (a thread stuck in C
    # holding what teardown needs), dump every stack and end the process.
    faulthandler.dump_traceback_later(duration + STALL_LIMIT + 60, exit=True)
    hung = False
    try:
        db = ydbview.Database(tmp_path / "soak.sqlite", serializer=ydbview.JSONSerializer())
        db.register_view(VIEW, view_grouping, view_sorting, version_tag="1")
        soak = Soak(db, base_seed)
        threads = [soak.worker("writer", soak.write)]
        threads += [soak.worker(f"reader{i}", soak.read_plain) for i in range(PLAIN_READERS)]
        threads += [soak.worker(f"long-lived{i}", soak.read_long_lived) for i in range(LONG_LIVED_READERS)]
        for thread in threads:
            thread.start()
        deadline = time.monotonic() + duration
        seen = {thread.name: (-1, time.monotonic()) for thread in threads}
        while any(thread.is_alive() for thread in threads):
            time.sleep(0.05)
            now = time.monotonic()
            if now >= deadline:
                soak.stop.set()
            for thread in threads:
                count = soak.progress[thread.name]
                if count != seen[thread.name][0]:
                    seen[thread.name] = (count, now)
                elif thread.is_alive() and now - seen[thread.name][1] > STALL_LIMIT:
                    hung = True
                    faulthandler.dump_traceback(file=sys.stderr, all_threads=True)
                    soak.stop.set()
                    pytest.fail(f"seed {base_seed}: {thread.name} made no progress for {STALL_LIMIT:.0f} s "
                                f"(stacks on stderr); progress {soak.progress}")
        print(f"soak attack: {soak.commits} commits, {soak.reads} reads, {soak.catch_ups} catch-ups "
              f"({soak.changesets_applied} non-empty changesets applied), progress {soak.progress}")
        assert not soak.errors, f"seed {base_seed}: {len(soak.errors)} errors:\n" + "\n".join(soak.errors)
        assert soak.commits > 0 and soak.reads > 0, f"seed {base_seed}: nothing happened {soak.progress}"
        assert all(count > 0 for count in soak.progress.values()), f"a thread never got through {soak.progress}"
        assert soak.changesets_applied > 0, "no long-lived reader ever applied a changeset"
        db.close()
    finally:
        if not hung:
            faulthandler.cancel_dump_traceback_later()
