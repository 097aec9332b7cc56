"""The key form of sorting (``key=``): keys order as the Python values
would under ``sorted()``, a key view and the comparator view of the same
order hold the same rows and give the same changesets over random
histories, keys survive a reopen, and a bad key function fails the write
without changing anything."""

from __future__ import annotations

import math
import random
from pathlib import Path
from typing import Any, List

import pytest

import ydbview
from ydbview import desc, sort_key


def test_encodings_keep_sorted_order() -> None:
    rng = random.Random(7)
    words = ["", "a", "ab", "b", "a\0", "\0", "é", "e\u0301", "😀"]
    ints = [-(2 ** 63), -(2 ** 40), -1, 0, 1, 255, 2 ** 40, 2 ** 63 - 1]
    floats = [-math.inf, -1e300, -2.5, -0.0, 1e-300, 2.5, math.inf]
    values: List[Any] = []
    for _ in range(400):
        values.append((rng.choice(words), rng.choice(ints), rng.choice(floats)))
    encoded = sorted(values, key=lambda v: sort_key(*v))
    # Distinct values give distinct keys; Python orders str by code point =
    # UTF-8 byte order.
    assert len({sort_key(*v) for v in values}) == len(set(values))
    assert encoded == sorted(values, key=lambda v: (v[0].encode(), v[1], v[2]))
    assert sort_key(desc(3)) < sort_key(desc(2)) and sort_key(desc("b")) < sort_key(desc("a"))
    assert sort_key(desc("ab")) < sort_key(desc("a"))
    assert sort_key(-0.0) == sort_key(0.0) and sort_key(math.inf) < sort_key(math.nan)
    # The encodings are the C/Swift ones.
    assert sort_key(1) == bytes.fromhex("8000000000000001")
    assert sort_key(-1.0) == bytes.fromhex("400fffffffffffff")
    assert sort_key("a\0") == b"a\x00\xff\x00\x01"
    with pytest.raises(TypeError):
        sort_key(None)
    with pytest.raises(OverflowError):
        sort_key(2 ** 63)


@ydbview.grouping(flavour="object")
def by_group(row: ydbview.ViewRow) -> Any:
    return row.object[:1].decode() or None


@ydbview.sorting(flavour="object")
def by_rank(group: str, a: ydbview.ViewRow, b: ydbview.ViewRow) -> int:
    left, right = (a.object[1:], a.key), (b.object[1:], b.key)
    return (left > right) - (left < right)


@ydbview.key_sorting(flavour="object")
def rank_key(group: str, row: ydbview.ViewRow) -> Any:
    return (row.object[1:], row.key)


def dump(conn: ydbview.Connection, view: str) -> dict:
    with conn.read() as t:
        v = t.view(view)
        return {g: v.keys(g) for g in v.groups}


def describe(changeset: ydbview.Changeset) -> list:
    return ([(c.type, c.index, c.group) for c in changeset.section_changes]
            + [(c.type, c.index_path, c.new_index_path, c.key) for c in changeset.row_changes])


def test_the_flat_tuple_fast_path_encodes_as_the_general_path() -> None:
    # encode_value encodes a tuple of plain ints and strs in one loop; any
    # other item (bool, float, bytes, desc, a nested tuple, an int subclass)
    # sends the whole value down the general path. Both must give the bytes
    # each value's own encoding gives, joined.
    from ydbview.sortkeys import encode_value

    class Rank(int):
        pass

    items: List[Any] = [0, -1, 2 ** 63 - 1, -(2 ** 63), "", "a\0b", "\0", "é", True, 2.5, b"x\0",
                        desc(3), ("n", 1), Rank(4)]
    rng = random.Random(11)
    for _ in range(2000):
        value = tuple(rng.choice(items) for _ in range(rng.randrange(4)))
        expected = b"".join(sort_key(item) for item in value)
        assert encode_value(value) == expected == sort_key(*value)
    for too_big in [(2 ** 63,), ("a", -(2 ** 63) - 1)]:
        with pytest.raises(OverflowError):
            encode_value(too_big)
    with pytest.raises(TypeError, match="NoneType"):
        encode_value(("a", None))


def test_key_view_matches_comparator_view_over_random_histories() -> None:
    rng = random.Random(20261123)
    with ydbview.Database() as db:
        db.register_view("compared", by_group, by_rank)
        db.register_view("keyed", by_group, key=rank_key)
        writer, reader = db.new_connection(), db.new_connection()
        groups = ["a", "b", "c"]
        compared, keyed = ydbview.Mappings(groups, "compared"), ydbview.Mappings(groups, "keyed")
        for mappings in (compared, keyed):
            mappings.set_is_dynamic_section_for_all_groups(True)   # sections come and go
        reader.begin_long_lived_read_transaction()
        with reader.read() as t:
            compared.update(t)
            keyed.update(t)
        section_changes = 0
        for _commit in range(150):
            with writer.read_write() as t:
                for _ in range(rng.randint(1, 4)):
                    key = f"k{rng.randrange(8)}"   # few rows: groups empty and refill
                    if rng.random() < 0.2:
                        t.remove("c", key)
                    else:
                        rank = bytes(rng.choice(b"xyz") for _ in range(rng.randrange(3)))
                        t.set("c", key, rng.choice(groups).encode() + rank)
            notes = reader.begin_long_lived_read_transaction()
            changeset = compared.changes(notes)
            section_changes += len(changeset.section_changes)
            assert describe(changeset) == describe(keyed.changes(notes))
            assert dump(reader, "compared") == dump(reader, "keyed")
        assert section_changes > 0


def test_keys_survive_a_reopen_and_bad_keys_fail_the_write(tmp_path: Path) -> None:
    path = str(tmp_path / "keys.sqlite")
    calls: List[str] = []

    def key(group: str, row: ydbview.ViewRow) -> Any:
        calls.append(row.key)
        return row.object["n"]

    with ydbview.Database(path, serializer=ydbview.JSONSerializer()) as db:
        db.register_view("v", lambda row: "g", key=key, version_tag="1")
        conn = db.new_connection()
        with conn.read_write() as t:
            for name, n in [("a", 3), ("b", -1), ("c", 2.5)]:
                t.set("c", name, {"n": float(n)})
    with ydbview.Database(path, serializer=ydbview.JSONSerializer()) as db:
        calls.clear()
        assert db.register_view("v", lambda row: "g", key=key, version_tag="1") == ydbview.RegistrationOutcome.LOADED
        assert calls == []
        conn = db.new_connection()
        with conn.read_write() as t:
            t.set("c", "d", {"n": 0.0})
        assert calls == ["d"]
        assert dump(conn, "v") == {"g": [("c", "b"), ("c", "d"), ("c", "c"), ("c", "a")]}
        # A key function that raises, or returns what no key can hold, fails
        # the write and leaves the view as it was.
        with pytest.raises(TypeError):
            with conn.read_write() as t:
                t.set("c", "e", {"n": None})
        assert dump(conn, "v") == {"g": [("c", "b"), ("c", "d"), ("c", "c"), ("c", "a")]}
        with pytest.raises(TypeError):
            db.register_view("w", lambda row: "g", lambda g, a, b: 0, key=key)
