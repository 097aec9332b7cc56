"""A key function that returns incomparable kinds for rows of one group
(an int for one row, a str for another) is refused with TypeError naming
both, as sorted() would refuse them, instead of the rows being ordered by
their encodings. Rows of different groups are never compared, so each
group may have its own kinds."""

from __future__ import annotations

from typing import Any, Iterator

import pytest

import ydbview


@ydbview.grouping(flavour="object")
def by_group_field(row: ydbview.ViewRow) -> str:
    return str(row.object["g"])


@ydbview.key_sorting(flavour="object")
def by_key_field(group: str, row: ydbview.ViewRow) -> Any:
    key = row.object["k"]
    return tuple(key) if isinstance(key, list) else key


@pytest.fixture
def conn() -> Iterator[ydbview.Connection]:
    with ydbview.Database(serializer=ydbview.JSONSerializer()) as db:
        db.register_view("v", by_group_field, key=by_key_field)
        yield db.new_connection()


def put(conn: ydbview.Connection, key: str, group: str, value: Any) -> None:
    with conn.read_write() as t:
        t.set("c", key, {"g": group, "k": value})


def test_int_then_str_in_one_group_is_a_type_error(conn: ydbview.Connection) -> None:
    put(conn, "a", "g", 1)
    with pytest.raises(TypeError) as raised:
        put(conn, "b", "g", "one")
    assert "str" in str(raised.value) and "int" in str(raised.value)
    with conn.read() as t:
        assert t.view("v").keys("g") == [("c", "a")]   # the refused row was not written


def test_set_many_with_mixed_kinds_is_a_type_error(conn: ydbview.Connection) -> None:
    with pytest.raises(TypeError, match="str.*int|int.*str"):
        with conn.read_write() as t:
            t.set_many("c", [("a", {"g": "g", "k": 1}), ("b", {"g": "g", "k": "one"})])


def test_set_many_after_set_checks_against_earlier_rows(conn: ydbview.Connection) -> None:
    # A batch of one kind throughout (encoded column by column) is still
    # checked against what the group held before.
    put(conn, "a", "g", "one")
    with pytest.raises(TypeError, match="int.*str"):
        with conn.read_write() as t:
            t.set_many("c", [(f"k{i}", {"g": "g", "k": i}) for i in range(10)])


def test_groups_may_have_their_own_kinds(conn: ydbview.Connection) -> None:
    put(conn, "a", "numbers", 2)
    put(conn, "b", "names", "bo")
    with conn.read_write() as t:
        t.set_many("c", [("c", {"g": "numbers", "k": 1}), ("d", {"g": "names", "k": "al"})])
    with conn.read() as t:
        view = t.view("v")
        assert [k for _c, k in view.keys("numbers")] == ["c", "a"]
        assert [k for _c, k in view.keys("names")] == ["d", "b"]


def test_int_and_float_are_refused_as_they_do_not_sort_as_numbers(conn: ydbview.Connection) -> None:
    put(conn, "a", "g", 1)
    with pytest.raises(TypeError, match=r"float\(x\)"):
        put(conn, "b", "g", 0.5)


def test_bool_is_an_int(conn: ydbview.Connection) -> None:
    put(conn, "a", "g", 1)
    put(conn, "b", "g", True)


def test_tuples_are_checked_by_position(conn: ydbview.Connection) -> None:
    put(conn, "a", "g", ["x", 1])
    put(conn, "b", "g", ["x"])            # a shorter key: a common prefix compares
    put(conn, "c", "g", ["x", 2, "z"])    # and a longer one
    with pytest.raises(TypeError, match="position 2"):
        put(conn, "d", "g", ["x", 3, 4])   # position 2 was a str
    with pytest.raises(TypeError, match="position 1"):
        put(conn, "e", "g", ["x", "y"])


def test_desc_and_plain_do_not_mix() -> None:
    from ydbview.sortkeys import KeyShapes, desc, key_shape
    shapes = KeyShapes()
    shapes.check("g", key_shape(("a", desc(1))))
    with pytest.raises(TypeError, match=r"int.*desc\(int\)"):
        shapes.check("g", key_shape(("a", 1)))
