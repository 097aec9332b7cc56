"""Mappings through the Python package: getters under static and dynamic
groups, dynamic sections, fixed and flexible ranges, reverse,
consolidation, dependencies, successive updates, range options read back
live and set again, rows by index path and bad input."""

from __future__ import annotations

import dataclasses
import threading
from typing import Any, Iterator, List

import pytest

import ydbview
from ydbview import IndexPath, Mappings, RangeOptions, RangePosition


@pytest.fixture
def setup() -> Iterator[Any]:
    db = ydbview.Database(serializer=ydbview.JSONSerializer())
    writer, ui = db.new_connection(), db.new_connection()
    db.register_view("v", ydbview.Grouping(lambda row: row.object["g"], flavour="object"),
                     ydbview.Sorting(lambda g, a, b: (a.object["n"] > b.object["n"]) - (a.object["n"] < b.object["n"]),
                                     flavour="object"))
    with writer.read_write() as t:
        for n in range(5):
            t.set("c", f"a{n}", {"g": "a", "n": n})
        for n in range(3):
            t.set("c", f"b{n}", {"g": "b", "n": n})
    ui.begin_long_lived_read_transaction()
    yield db, writer, ui
    db.close()


def update(ui: ydbview.Connection, mappings: Mappings) -> None:
    ui.begin_long_lived_read_transaction()
    with ui.read() as t:
        mappings.update(t)


def follow(ui: ydbview.Connection, mappings: Mappings) -> None:
    mappings.changes(ui.begin_long_lived_read_transaction())


def test_range_options_read_back_live(setup: Any) -> None:
    db, writer, ui = setup
    m = Mappings(["a", "b"], "v")
    m.set_range_options("a", RangeOptions.flexible(2, pin="end"))
    m.set_range_options("b", RangeOptions.flexible(1, offset=1, pin="beginning"))
    assert m.range_options("a") == RangeOptions.flexible(2, pin="end")  # before the first update: as set
    update(ui, m)

    # a grows at its pinned end; a row before b pushes it away from its pin.
    with writer.read_write() as t:
        t.set("c", "a5", {"g": "a", "n": 5})
        t.set("c", "a6", {"g": "a", "n": 6})
        t.set("c", "b-1", {"g": "b", "n": -1})
    follow(ui, m)
    assert m.range_options("a") == RangeOptions.flexible(4, offset=0, pin="end")
    assert m.range_position("a") == RangePosition(3, 0, 4)
    assert m.range_options("b") == RangeOptions.flexible(1, offset=2, pin="beginning")

    # Set back unchanged, the window stays; then a new length and offset.
    now = m.range_options("a")
    assert now is not None
    m.set_range_options("a", now)
    assert m.range_position("a") == RangePosition(3, 0, 4)
    now = now.copy_with_new_length(3).copy_with_new_offset(2)
    m.set_range_options("a", now)
    assert m.range_position("a") == RangePosition(2, 2, 3)

    # max_length lowered after creation: the next changeset trims to it.
    m.set_range_options("a", dataclasses.replace(now, offset=0, max_length=4))
    assert m.range_position("a") == RangePosition(4, 0, 3)
    with writer.read_write() as t:
        t.set("c", "a7", {"g": "a", "n": 7})
        t.set("c", "a8", {"g": "a", "n": 8})
    follow(ui, m)
    now = m.range_options("a")
    assert now is not None and now.length == 4 and now.max_length == 4
    assert m.range_position("a") == RangePosition(5, 0, 4)

    # grow changed after creation: a row at the edge away from the pin joins.
    m.set_range_options("a", dataclasses.replace(now, max_length=None, grow="non_pin_side"))
    with writer.read_write() as t:
        t.set("c", "a45", {"g": "a", "n": 4.5})
    follow(ui, m)
    now = m.range_options("a")
    assert now is not None and now.length == 5 and now.grow == "non_pin_side"

    # min_length raised after creation: rows deleted from the window are replaced.
    m.set_range_options("a", dataclasses.replace(now, min_length=5))
    with writer.read_write() as t:
        t.remove("c", "a6")
        t.remove("c", "a7")
    follow(ui, m)
    assert m.range_options("a") == RangeOptions.flexible(5, pin="end", min_length=5, grow="non_pin_side")
    assert m.range_position("a") == RangePosition(3, 0, 5)

    # A reversed group: pin and offset in display order.
    m.set_is_reversed("b", True)
    m.set_range_options("b", RangeOptions.flexible(1, offset=1, pin="beginning"))
    with writer.read_write() as t:
        t.set("c", "b9", {"g": "b", "n": 9})  # above the window on screen
    follow(ui, m)
    assert m.range_options("b") == RangeOptions.flexible(1, offset=2, pin="beginning")
    assert m.range_position("b") == RangePosition(2, 2, 1)
    m.set_is_reversed("b", False)

    # A fixed range reads back its clipped length; max_length is its length as set.
    m.set_range_options("b", RangeOptions.fixed(10))
    fixed = m.range_options("b")
    assert fixed == RangeOptions("fixed", 5, 0, "beginning", 10, 0, "pin_side")
    m.set_range_options("b", fixed)
    with writer.read_write() as t:
        for n in range(3, 9):
            t.set("c", f"b{n}", {"g": "b", "n": n})
    follow(ui, m)
    assert m.number_of_items_in_group("b") == 10
    assert m.range_options("b") == RangeOptions.fixed(10)
    m.set_range_options("b", fixed.copy_with_new_length(2))
    assert m.number_of_items_in_group("b") == 2 and m.range_options("b") == RangeOptions.fixed(2)

    # A flexible range may be set with length 0: an empty window at its offset.
    m.set_range_options("b", RangeOptions.flexible(3, offset=4).copy_with_new_length(0))
    assert m.number_of_items_in_group("b") == 0 and m.range_position("b") == RangePosition(4, 7, 0)

    # Bad values change nothing.
    m.set_range_options("b", fixed)
    for bad in (dataclasses.replace(fixed, length=11), dataclasses.replace(fixed, min_length=1),
                dataclasses.replace(fixed, grow="both_sides"), RangeOptions.flexible(2).copy_with_new_length(-1),
                RangeOptions.flexible(2, offset=-1), RangeOptions.fixed(2, offset=2**63)):
        with pytest.raises(ydbview.InvalidArgumentError):
            m.set_range_options("b", bad)
    with pytest.raises(ValueError):
        m.set_range_options("b", dataclasses.replace(fixed, grow="sideways"))
    assert m.range_options("b") == RangeOptions.fixed(10) and m.number_of_items_in_group("b") == 10
    m.close()


def test_row_for_index_is_the_table_row(setup: Any) -> None:
    db, writer, ui = setup
    with Mappings(["a", "b"], "v") as m:
        m.set_auto_consolidate_groups(100, "all")
        m.set_range_options("b", RangeOptions.fixed(2, offset=1))
        update(ui, m)
        # Consolidated: b shows its indexes 1 and 2 after a's five rows.
        assert m.row_for_index("b", 2) == 6
        assert m.row_and_section_for_index("b", 2) == IndexPath(0, 6)
        assert m.window_row_for_index("b", 2) == 1 and m.index_for_row_in_group("b", 1) == 2
        assert m.row_for_index("a", 4) == 4
        assert m.row_for_index("b", 0) is None and m.window_row_for_index("b", 0) is None
        assert m.row_for_index("all", 0) is None and m.window_row_for_index("b", -1) is None
        # Not consolidated: the table row is the window's row.
        m.set_auto_consolidate_groups(0, "all")
        assert m.row_for_index("b", 2) == 1 and m.window_row_for_index("b", 2) == 1


def test_static_getters(setup: Any) -> None:
    db, writer, ui = setup
    with Mappings(["a", "b", "c", "a"], "v") as m:
        assert m.view == "v" and not m.has_dynamic_groups
        assert m.snapshot_of_last_update is None
        assert m.number_of_sections == 0 and m.is_empty
        assert m.group_for_section(0) is None and m.number_of_items_in_group("a") is None
        update(ui, m)
        assert m.snapshot_of_last_update == ui.snapshot
        assert m.all_groups == ["a", "b", "c"] and m.visible_groups == ["a", "b", "c"]
        assert m.number_of_sections == 3
        assert [m.number_of_items_in_section(s) for s in range(4)] == [5, 3, 0, None]
        assert m.number_of_items_in_section(-1) is None
        assert m.group_for_section(2) == "c" and m.section_for_group("b") == 1
        assert m.section_for_group("zzz") is None
        assert m.number_of_items_in_group("b") == 3 and m.number_of_items_in_all_groups == 8
        assert m.group_and_index_for_row(IndexPath(1, 2)) == ("b", 2) and m.group_and_index_for_row((1, 3)) is None
        assert m.index_for_row_in_section((0, 4)) == 4 and m.index_for_row_in_group("b", 1) == 1
        assert m.row_and_section_for_index("b", 2) == IndexPath(1, 2)
        assert m.index_path_for_index("b", 3) is None
        assert m.row_for_index("a", 4) == 4
        assert m.range_position("a") == RangePosition(0, 0, 5) and m.range_position("zzz") is None
        assert m.nearest_index_path("b", 9) == IndexPath(1, 2)
        assert m.nearest_index_path("c", 0) == IndexPath(1, 2)

        m.set_is_dynamic_section("c", True)
        assert m.is_dynamic_section("c") and m.number_of_sections == 2
        m.set_is_dynamic_section_for_all_groups(False)
        assert m.number_of_sections == 3 and not m.is_dynamic_section_for_all_groups
        m.set_is_dynamic_section_for_all_groups(True)
        assert m.is_dynamic_section_for_all_groups and m.number_of_sections == 2

        with writer.read_write() as t:
            t.set("c", "c0", {"g": "c", "n": 0})
        snapshot = m.snapshot_of_last_update
        update(ui, m)
        assert m.number_of_sections == 3 and m.number_of_items_in_section(2) == 1
        assert m.snapshot_of_last_update == snapshot + 1

        with ui.read() as t:
            v = t.view("v")
            assert v.key_at_index_path((1, 2), m) == ("c", "b2")
            assert v.key_at_index_path(IndexPath(1, 3), m) is None
            assert v.object_at_index_path((0, 1), m) == {"g": "a", "n": 1}
            assert v.metadata_at_index_path((0, 1), m) is None
            assert v.index_path_for_key("c", "c0", m) == IndexPath(2, 0)
            assert v.index_path_for_key("c", "nope", m) is None
    assert m.closed
    with pytest.raises(ydbview.MisuseError):
        m.number_of_sections
    m.close()


def test_ranges_reverse_consolidation(setup: Any) -> None:
    db, writer, ui = setup
    m = Mappings(["a", "b"], "v")
    update(ui, m)
    m.set_range_options("a", RangeOptions.fixed(2, offset=1, pin="beginning"))
    assert m.number_of_items_in_section(0) == 2
    assert [m.index_for_row_in_section((0, r)) for r in range(3)] == [1, 2, None]
    assert m.range_position("a") == RangePosition(1, 2, 2)
    assert m.range_options("a") == RangeOptions.fixed(2, 1, "beginning")
    m.set_range_options("a", RangeOptions.fixed(2, offset=1, pin="end"))
    assert [m.index_for_row_in_section((0, r)) for r in range(2)] == [2, 3]
    assert m.range_position("a") == RangePosition(2, 1, 2)
    assert m.row_for_index("a", 3) == 1 and m.row_for_index("a", 0) is None

    flexible = RangeOptions.flexible(2, pin="end", max_length=3, min_length=1, grow="both_sides")
    m.set_range_options("b", flexible)
    assert m.range_options("b") == flexible and m.range_options("b").is_flexible  # type: ignore[union-attr]
    assert m.number_of_items_in_section(1) == 2
    m.set_range_options("b", RangeOptions.flexible(2))
    assert m.range_options("b").max_length is None  # type: ignore[union-attr]
    m.remove_range_options("b")
    assert m.range_options("b") is None and m.number_of_items_in_section(1) == 3

    for bad in (RangeOptions.fixed(0), RangeOptions.fixed(-3), RangeOptions.fixed(2, offset=-1),
                RangeOptions.flexible(2, max_length=2, min_length=3), RangeOptions.flexible(2, max_length=0),
                RangeOptions.flexible(2, min_length=-1)):
        with pytest.raises(ydbview.InvalidArgumentError):
            m.set_range_options("b", bad)
    with pytest.raises(ValueError):
        m.set_range_options("b", RangeOptions.fixed(2, pin="middle"))
    assert m.range_options("b") is None

    m.set_is_reversed("b", True)
    assert m.is_reversed("b")
    assert [m.index_for_row_in_section((1, r)) for r in range(3)] == [2, 1, 0]
    m.set_is_reversed("b", False)

    m.set_cell_drawing_dependency_offsets("a", [-1, 1, 0])
    assert m.cell_drawing_dependency_offsets("a") == [-1, 1]
    m.set_cell_drawing_dependency("a", -1)
    assert m.cell_drawing_dependency_offsets("a") == [-1]

    assert m.consolidated_group_name is None
    m.set_auto_consolidate_groups(10, "all")
    assert m.is_using_consolidated_group and m.number_of_sections == 1
    assert m.group_for_section(0) == "all" and m.visible_groups == ["all"]
    assert m.auto_consolidate_groups_threshold == 10 and m.consolidated_group_name == "all"
    assert m.group_and_index_for_row((0, 2)) == ("b", 0)
    m.set_auto_consolidate_groups(0, "all")
    assert not m.is_using_consolidated_group and m.number_of_sections == 2
    with pytest.raises(ValueError):
        m.set_auto_consolidate_groups(-1, "x")
    m.close()


def test_dynamic_groups(setup: Any) -> None:
    db, writer, ui = setup
    with writer.read_write() as t:
        t.set("c", "c0", {"g": "c", "n": 0})
        t.set("c", "d0", {"g": "d", "n": 0})
    m = Mappings.dynamic(lambda group: group != "c", "v", key=lambda group: -ord(group))
    assert m.has_dynamic_groups and m.all_groups == []
    update(ui, m)
    assert m.all_groups == ["d", "b", "a"] and m.number_of_sections == 3
    with writer.read_write() as t:
        t.set("c", "e0", {"g": "e", "n": 0})
    update(ui, m)
    assert m.group_for_section(0) == "e"
    m.close()

    plain = Mappings.dynamic(lambda group: True, "v")
    update(ui, plain)
    assert plain.all_groups == ["a", "b", "c", "d", "e"]

    def broken(group: str) -> bool:
        raise LookupError("filter broke")

    failing = Mappings.dynamic(broken, "v")
    with pytest.raises(LookupError, match="filter broke"):
        update(ui, failing)
    failing.close()


def test_bad_input(setup: Any) -> None:
    db, writer, ui = setup
    with pytest.raises(TypeError):
        Mappings("ab", "v")
    with pytest.raises(ydbview.InvalidArgumentError):
        Mappings(["a\0"], "v")
    empty = Mappings([], "v")
    update(ui, empty)
    assert empty.number_of_sections == 0
    unknown = Mappings(["a"], "no such view")
    with pytest.raises(ydbview.NotFoundError, match="^no view named 'no such view' is registered$") as caught:
        update(ui, unknown)
    assert caught.value.code == ydbview.Status.NOTFOUND
    assert unknown.snapshot_of_last_update is None     # the refused update did not move it
    db.unregister_view("v")
    with pytest.raises(ydbview.NotFoundError, match="no view named 'v' is registered"):
        update(ui, Mappings(["a"], "v"))
    assert not unknown.allows_unregistered_view
    unknown.allows_unregistered_view = True   # made before its view is registered: shown empty
    assert unknown.allows_unregistered_view
    update(ui, unknown)
    assert unknown.number_of_sections == 1 and unknown.number_of_items_in_section(0) == 0
    with pytest.raises(TypeError):
        unknown.number_of_items_in_group(3)  # type: ignore[arg-type]
    assert unknown.group_and_index_for_row((0, -1)) is None


def test_two_threads_share_one_mappings(setup: Any) -> None:
    db, writer, ui = setup
    m = Mappings(["a", "b"], "v")
    update(ui, m)
    errors: List[BaseException] = []

    def hammer(seed: int) -> None:
        try:
            for i in range(300):
                m.number_of_sections
                m.group_and_index_for_row((0, i % 4))
                if (i + seed) % 2:
                    m.set_range_options("a", RangeOptions.fixed(1 + i % 5, offset=i % 3))
                else:
                    m.set_is_reversed("a", i % 4 == 0)
        except BaseException as exc:  # pragma: no cover - reported below
            errors.append(exc)

    threads = [threading.Thread(target=hammer, args=(n,)) for n in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == [] and m.number_of_sections == 2


def test_unknown_view_is_an_error_at_update() -> None:
    with ydbview.Database() as db:
        conn = db.new_connection()
        mappings = ydbview.Mappings(["g"], "nosuchview")
        with conn.read() as t:
            with pytest.raises(ydbview.NotFoundError, match="no view named 'nosuchview' is registered"):
                mappings.update(t)
        mappings.close()
        conn.close()


def test_argument_order_is_container_first(setup: Any) -> None:
    """(section, row) as one IndexPath or tuple; a group before an index.
    The old (row, section) / (index, group) calls fail loudly, never swap."""
    db, writer, ui = setup
    m = Mappings(["a", "b"], "v")
    update(ui, m)
    assert m.group_and_index_for_row(IndexPath(section=1, row=0)) == ("b", 0)
    assert m.index_for_row_in_section(IndexPath(section=1, row=2)) == 2
    with pytest.raises(TypeError):
        m.group_and_index_for_row(2, 1)  # type: ignore[call-arg]
    with pytest.raises(TypeError):
        m.index_for_row_in_section(0)  # type: ignore[arg-type]
    for call in (m.index_for_row_in_group, m.row_and_section_for_index, m.row_for_index, m.nearest_index_path):
        with pytest.raises(TypeError):
            call(1, "b")  # type: ignore[operator]
    path = m.row_and_section_for_index("b", 1)
    assert path is not None and m.group_and_index_for_row(path) == ("b", 1)
    with ui.read() as t:
        v = t.view("v")
        assert v.key_at("b", 1) == ("c", "b1") == v.key_at_index_path(path, m)
        with pytest.raises(TypeError):
            v.key_at(1, "b")  # type: ignore[arg-type]
