"""Changesets as ordered edit scripts (``Changeset.steps()``): applied one
step at a time to the old table -- each step checked against the table as
it then stands -- they give the new table, over seeded random histories
and mappings configurations; and a hand-made case whose order matters."""

from __future__ import annotations

import random
from typing import Any, Iterator

import pytest

import ydbview
from list_histories import apply_steps, new_mappings, random_commit, random_configuration, read_table
from ydbview import Mappings, StepType


@pytest.fixture
def setup() -> Iterator[Any]:
    db = ydbview.Database(serializer=ydbview.JSONSerializer())
    writer, ui = db.new_connection(), db.new_connection()
    db.register_view("v", ydbview.Grouping(lambda row: row.object["g"], flavour="object"),
                     ydbview.KeySorting(lambda group, row: (row.object["n"], row.key),
                                        flavour="object"))
    yield db, writer, ui
    db.close()


def start(ui: ydbview.Connection, mappings: Mappings) -> None:
    ui.begin_long_lived_read_transaction()
    with ui.read() as t:
        mappings.update(t)


def test_an_insert_lands_after_its_predecessor_while_a_moved_row_waits(setup: Any) -> None:
    db, writer, ui = setup
    with writer.read_write() as t:
        for name, n in (("a", 1), ("b", 2), ("c", 3)):
            t.set("c", name, {"g": "g", "n": n})
    m = Mappings(["g"], "v")
    start(ui, m)
    old = read_table(db, m)
    with writer.read_write() as t:
        t.set("c", "b", {"g": "g", "n": 9})   # b moves to the end
        t.set("c", "x", {"g": "g", "n": 4})   # x lands between c and b
    changeset = m.changes(ui.begin_long_lived_read_transaction())
    new = read_table(db, m)
    steps = changeset.steps()
    assert [(s.type, s.section, s.row, s.to_row) for s in steps] == [
        (StepType.INSERT_ROW, 0, 3, None), (StepType.MOVE_ROW, 0, 1, 3), (StepType.RELOAD_ROW, 0, 3, None)]
    assert apply_steps(steps, old, new) == new == (["g"], [[("c", "a"), ("c", "c"), ("c", "x"), ("c", "b")]])
    assert steps[1].to_dict()["type"] == "move_row" and steps[1].key == "b"


def test_steps_rebuild_the_new_table_over_random_histories(setup: Any) -> None:
    db, writer, ui = setup
    kinds = {kind: 0 for kind in StepType}
    for seed in range(120):
        rng = random.Random(7_000 + seed)
        with writer.read_write() as t:
            t.remove_all_collections()
            for i in range(rng.randint(0, 10)):
                t.set("c", f"k{i}", {"g": rng.choice("abcd"), "n": rng.randint(0, 9)})
        dynamic, configure = random_configuration(rng)
        m = new_mappings(dynamic, configure)
        start(ui, m)
        for _ in range(rng.randint(1, 4)):
            old = read_table(db, m)
            for _ in range(rng.randint(1, 3)):
                random_commit(writer, rng)
            changeset = m.changes(ui.begin_long_lived_read_transaction())
            new = read_table(db, m)
            steps = changeset.steps()
            for step in steps:
                kinds[step.type] += 1
            assert apply_steps(steps, old, new) == new, f"seed {7_000 + seed}: {steps}"
    assert all(count > 0 for count in kinds.values()), kinds
