"""Changesets through the Python package: the top 20 with an insert at 5,
moves between groups, updates, sections, mismatched mappings, to_dict."""

from __future__ import annotations

from typing import Any, Iterator

import pytest

import ydbview
from ydbview import ChangeFlags, ChangeType, IndexPath, Mappings, RangeOptions, SectionChangeType


@pytest.fixture
def setup() -> Iterator[Any]:
    db = ydbview.Database(serializer=ydbview.JSONSerializer())
    writer, ui = db.new_connection(), db.new_connection()
    db.register_view("v", ydbview.Grouping(lambda row: row.object["g"], flavour="object"),
                     ydbview.Sorting(lambda g, a, b: (a.object["n"] > b.object["n"]) - (a.object["n"] < b.object["n"]),
                                     flavour="object"))
    yield db, writer, ui
    db.close()


def start(ui: ydbview.Connection, mappings: Mappings) -> None:
    ui.begin_long_lived_read_transaction()
    with ui.read() as t:
        mappings.update(t)


def test_top20_insert_at_5(setup: Any) -> None:
    db, writer, ui = setup
    with writer.read_write() as t:
        for i in range(25):
            t.set("c", f"k{i * 10:03d}", {"g": "g", "n": i * 10})
    m = Mappings(["g"], "v")
    m.set_range_options("g", RangeOptions.fixed(20, offset=0, pin="beginning"))
    start(ui, m)
    with writer.read_write() as t:
        t.set("c", "new", {"g": "g", "n": 45})
    changeset = m.changes(ui.begin_long_lived_read_transaction())
    assert changeset.section_changes == []
    delete, insert = changeset.row_changes
    assert delete.type == ChangeType.DELETE and delete.index_path == IndexPath(0, 19)
    assert delete.new_index_path is None and delete.key is None and delete.collection is None
    assert insert.type == ChangeType.INSERT and insert.new_index_path == IndexPath(0, 5)
    assert insert.index_path is None and (insert.collection, insert.key) == ("c", "new")
    assert insert.changes == ChangeFlags.OBJECT | ChangeFlags.METADATA
    assert insert.to_dict() == {
        "type": "insert", "index_path": None, "new_index_path": [0, 5], "original_group": None,
        "final_group": "g", "original_section": None, "original_index": None, "final_section": 0,
        "final_index": 5, "changes": ["metadata", "object"], "collection": "c", "key": "new"}
    assert m.number_of_items_in_section(0) == 20


def test_moves_updates_and_sections(setup: Any) -> None:
    db, writer, ui = setup
    with writer.read_write() as t:
        t.set("c", "a0", {"g": "a", "n": 0})
        t.set("c", "a1", {"g": "a", "n": 1})
        t.set("c", "b0", {"g": "b", "n": 0})
    m = Mappings(["a", "b", "c"], "v")
    m.set_is_dynamic_section("c", True)
    start(ui, m)

    with writer.read_write() as t:
        t.set("c", "a0", {"g": "b", "n": 1})
    (move,) = m.changes(ui.begin_long_lived_read_transaction()).row_changes
    assert move.type == ChangeType.MOVE
    assert (move.index_path, move.new_index_path) == (IndexPath(0, 0), IndexPath(1, 1))
    assert (move.original_group, move.final_group) == ("a", "b")
    assert (move.original_section, move.original_index, move.final_section, move.final_index) == (0, 0, 1, 1)

    with writer.read_write() as t:
        t.replace_metadata("c", "b0", {"m": 1})
    (update,) = m.changes(ui.begin_long_lived_read_transaction()).row_changes
    assert update.type == ChangeType.UPDATE and update.changes == ChangeFlags.METADATA
    assert update.index_path == IndexPath(1, 0) and update.new_index_path is None

    with writer.read_write() as t:
        t.set("c", "c0", {"g": "c", "n": 0})
    with writer.read_write() as t:
        t.set("c", "c1", {"g": "c", "n": 1})
    notes = ui.begin_long_lived_read_transaction()
    assert len(notes) == 2 and m.has_changes(notes)
    changeset = m.changes(notes)
    assert [c.to_dict() for c in changeset.section_changes] == [{"type": "insert", "index": 2, "group": "c"}]
    assert changeset.section_changes[0].type == SectionChangeType.INSERT
    assert [c.new_index_path for c in changeset.row_changes] == [IndexPath(2, 0), IndexPath(2, 1)]

    with writer.read_write() as t:
        t.set("c", "z", {"g": "z", "n": 0})
    notes = ui.begin_long_lived_read_transaction()
    assert not m.has_changes(notes)
    empty = m.changes(notes)
    assert empty.is_empty and empty.to_dict() == {"section_changes": [], "row_changes": []}
    assert m.changes([]).is_empty


def test_mismatch_leaves_mappings_unchanged(setup: Any) -> None:
    db, writer, ui = setup
    m = Mappings(["a"], "v")
    never = Mappings(["a"], "v")
    start(ui, m)
    before = m.snapshot_of_last_update
    with writer.read_write() as t:
        t.set("c", "a0", {"g": "a", "n": 0})
    with writer.read_write() as t:
        t.set("c", "a1", {"g": "a", "n": 1})
    notes = ui.begin_long_lived_read_transaction()
    with pytest.raises(ydbview.MismatchError, match="mismatched mappings and notifications") as info:
        m.changes(notes[1:])
    assert info.value.code == ydbview.Status.MISMATCH
    assert m.snapshot_of_last_update == before and m.number_of_items_in_section(0) == 0
    with pytest.raises(ydbview.MismatchError):
        never.changes(notes)
    assert len(m.changes(notes).row_changes) == 2
    with pytest.raises(ydbview.MismatchError):
        m.changes(notes)
    assert m.number_of_items_in_section(0) == 2
