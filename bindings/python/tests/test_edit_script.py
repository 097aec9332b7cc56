"""Changesets as ordered edit scripts (``Changeset.steps()``): applied one
step at a time to the old table -- each step checked against the table as
it then stands -- they give the new table, over seeded random histories
and mappings configurations; and a hand-made case whose order matters."""

from __future__ import annotations

import random
import typing
from typing import Any, Iterator, List, Tuple

import pytest

import ydbview
from list_histories import mappings_table, new_mappings, random_commit, random_configuration
from ydbview import EditStep, Mappings, StepType

RowName = Tuple[str, str]
Table = Tuple[List[str], List[List[RowName]]]


@pytest.fixture
def setup() -> Iterator[Any]:
    db = ydbview.Database(serializer=ydbview.JSONSerializer())
    writer, ui = db.new_connection(), db.new_connection()
    db.register_view("v", ydbview.Grouping(lambda row: row.object["g"], flavour="object"),
                     ydbview.KeySorting(lambda group, row: (row.object["n"], row.key),
                                        flavour="object"))
    yield db, writer, ui
    db.close()


def read_table(db: ydbview.Database, mappings: Mappings) -> Table:
    """The table the mappings show now, as (groups, rows of each section)."""
    shown = mappings_table(db, mappings)
    return [group for group, _ in shown], [rows for _, rows in shown]


def apply_steps(steps: List[EditStep], old: Table, new: Table) -> Table:
    """Applies ``steps`` one by one, asserting each is valid at its moment."""
    groups, sections = list(old[0]), [list(rows) for rows in old[1]]
    for number, step in enumerate(steps):
        where = f"step {number} ({step})"
        # The step's class types some fields without Optional: they must be set.
        promised = [name for name, hint in typing.get_type_hints(type(step)).items()
                    if type(None) not in typing.get_args(hint) and hint is not Any]
        assert all(getattr(step, name) is not None for name in promised), (where, promised)
        assert isinstance(step, EditStep) and type(step).__name__.lower().startswith(
            step.type.name.replace("_", "").lower()), where
        named = None if step.collection is None else (step.collection, step.key)
        if step.type == StepType.REMOVE_SECTION:
            assert groups[step.section] == step.group and sections[step.section] == [], where
            del groups[step.section], sections[step.section]
        elif step.type == StepType.INSERT_SECTION:
            assert 0 <= step.section <= len(groups) and step.row is None, where
            groups.insert(step.section, step.group)
            sections.insert(step.section, [])
        elif step.type in (StepType.REMOVE_ROW, StepType.MOVE_ROW):
            assert step.row is not None and 0 <= step.row < len(sections[step.section]), where
            taken = sections[step.section].pop(step.row)
            assert named is None or taken == named, where
            if step.type == StepType.MOVE_ROW:
                assert (step.to_section, step.to_row) != (step.section, step.row), where
                assert 0 <= step.to_row <= len(sections[step.to_section]), where
                sections[step.to_section].insert(step.to_row, taken)
        elif step.type == StepType.INSERT_ROW:
            assert 0 <= step.row <= len(sections[step.section]), where
            arriving = named or new[1][step.final_section][step.final_row]
            sections[step.section].insert(step.row, arriving)
        else:
            assert step.type == StepType.RELOAD_ROW, where
            assert (step.section, step.row) == (step.final_section, step.final_row), where
            assert named is None or sections[step.section][step.row] == named, where
    return groups, sections


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
