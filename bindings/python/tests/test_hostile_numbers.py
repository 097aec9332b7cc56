"""Hostile numbers through the Python surface: every number the package
passes to C is checked for its C type first (ctypes would wrap it
silently: 2**64 + 5 becomes 5, -1 becomes 2**64 - 1), and what C accepts
never kills the process later (the engine's arithmetic saturates or the
value is refused). The C side has its own fuzzer (fuzz_numbers.c)."""

from __future__ import annotations

import math

import pytest

import ydbview
from ydbview import InvalidArgumentError, Mappings, RangeOptions

HUGE = [2**53, 2**62, 2**63 - 1, 2**63, 2**64 - 1, 2**64, 2**64 + 5, 2**200]


def grouped(db: ydbview.Database) -> None:
    db.register_view("v", lambda row: row.key[0], key=lambda group, row: row.key)


def test_max_commits_behind_saturates_instead_of_wrapping_and_commits_go_on(db: ydbview.Database,
                                                                            conn: ydbview.Connection,
                                                                            other: ydbview.Connection) -> None:
    for value in HUGE:
        db.max_commits_behind = value
        assert db.max_commits_behind == min(value, 2**64 - 1)
        other.begin_long_lived_read_transaction()
        with conn.read_write() as t:   # the commit that used to overflow the engine
            t.set("c", "k", bytes([value % 7]))
        assert len(other.begin_long_lived_read_transaction()) == 1
    with pytest.raises(ValueError):
        db.max_commits_behind = -1
    with pytest.raises(InvalidArgumentError):
        db.max_commits_behind = 0
    with pytest.raises(TypeError):
        db.max_commits_behind = 1.5  # type: ignore[assignment]


def test_row_cache_limit_and_indexes_never_wrap(db: ydbview.Database, conn: ydbview.Connection) -> None:
    grouped(db)
    with conn.read_write() as t:
        t.set("c", "a1", b"1")
    for value in HUGE:
        conn.row_cache_limit = value
        assert conn.row_cache_limit == min(value, 2**63 - 1)
    with pytest.raises(ValueError):
        conn.row_cache_limit = -1
    with conn.read() as t:
        view = t.view("v")
        for index in HUGE + [-1, -2**70]:
            # 2**64 wrapped to 0 would answer row 0.
            assert view.key_at("a", index) is None
            assert view.row_at("a", index) is None
        assert view.keys("a", start=0, stop=2**70) == [("c", "a1")]
        with pytest.raises(ValueError):
            view.keys("a", start=-1)


def test_mappings_numbers_are_checked_for_their_c_types(db: ydbview.Database, conn: ydbview.Connection) -> None:
    grouped(db)
    mappings = Mappings(["a", "b"], "v")
    with pytest.raises(InvalidArgumentError):   # 2**32 wrapped to 0 would remove the dependency
        mappings.set_cell_drawing_dependency_offsets("a", [2**32])
    with pytest.raises(InvalidArgumentError):
        mappings.set_cell_drawing_dependency_offsets("a", [-2**31 - 1])
    mappings.set_cell_drawing_dependency_offsets("a", [2**31 - 1, -2**31])
    assert mappings.cell_drawing_dependency_offsets("a") == [-2**31, 2**31 - 1]
    mappings.set_auto_consolidate_groups(2**70, "all")
    assert mappings.auto_consolidate_groups_threshold == 2**63 - 1   # what C keeps of "no limit"
    with pytest.raises(ValueError):
        mappings.set_auto_consolidate_groups(-1, "all")
    for section in HUGE + [-1]:
        assert mappings.number_of_items_in_section(section) is None


@pytest.mark.parametrize("offset", [2**53, 2**62, 2**63 - 1])
def test_a_huge_range_offset_is_refused_not_a_crash_at_the_next_changeset(db: ydbview.Database,
                                                                         conn: ydbview.Connection,
                                                                         offset: int) -> None:
    grouped(db)
    mappings = Mappings(["a"], "v")
    with pytest.raises(InvalidArgumentError, match="at most 9007199254740991"):
        mappings.set_range_options("a", RangeOptions.flexible(1, offset))
    with pytest.raises(InvalidArgumentError):
        mappings.set_range_options("a", RangeOptions.fixed(1, offset))
    # The largest offset there is, and inserts before the window: no overflow.
    mappings.set_range_options("a", RangeOptions.flexible(2**63 - 1, 2**53 - 1))
    conn.begin_long_lived_read_transaction()
    with conn.read() as t:
        mappings.update(t)
    writer = db.new_connection()
    for n in range(5):
        with writer.read_write() as t:
            t.set("c", f"a{n}", bytes([n]))
    changeset = mappings.changes(conn.begin_long_lived_read_transaction())
    assert changeset.row_changes == [] and mappings.number_of_items_in_group("a") == 0
    writer.close()


def test_registration_wait_takes_any_timeout(db: ydbview.Database) -> None:
    registration = db.register_view_async("v", lambda row: "g", key=lambda group, row: row.key)
    for timeout in (math.inf, 1e300, 2.0**70, 0, -5):
        registration.wait(timeout)
    assert registration.wait(math.inf)
    with pytest.raises(ValueError):
        registration.wait(math.nan)
    registration.result()
