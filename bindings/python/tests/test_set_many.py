"""``ReadWriteTransaction.set_many``: many rows in one call, a view's Python
callbacks run once per batch (``grouping_batch``/``sort_key_batch``), and
the result is the one ``set`` row by row gives -- the same view, the same
changesets -- including which callbacks run under their invoke options."""

from __future__ import annotations

import random
import struct
from typing import Any, Dict, List, Optional, Tuple

import pytest

import ydbview
from ydbview import InvokeOptions

RANK = struct.Struct("<q")


class Counted:
    """A view's callbacks, counting how many rows each one saw."""

    def __init__(self) -> None:
        self.grouped: List[str] = []
        self.keyed: List[str] = []

    def views(self, db: ydbview.Database, invoke: Optional[InvokeOptions] = None) -> None:
        @ydbview.grouping(flavour="object", invoke=invoke)
        def by_rank(row: ydbview.ViewRow) -> Optional[str]:
            self.grouped.append(row.key)
            rank = RANK.unpack(row.object)[0]
            return None if rank % 7 == 0 else f"g{rank % 3}"

        @ydbview.key_sorting(flavour="row")
        def rank_key(group: str, row: ydbview.ViewRow) -> Any:
            self.keyed.append(row.key)
            meta = row.metadata or b""
            rank = RANK.unpack(row.object)[0]
            if group != f"g{rank % 3}":   # each row comes with its own group
                raise AssertionError(f"{row.key} asked in {group}")
            return (rank // 4, len(meta), row.key)

        @ydbview.sorting(flavour="object")
        def by_value(group: str, a: ydbview.ViewRow, b: ydbview.ViewRow) -> int:
            x, y = RANK.unpack(a.object)[0], RANK.unpack(b.object)[0]
            return (x > y) - (x < y) or (a.key > b.key) - (a.key < b.key)

        db.register_view("keyed", by_rank, None, key=rank_key)
        db.register_view("compared", by_rank, by_value)


def contents(conn: ydbview.Connection, view: str) -> Dict[str, List[str]]:
    with conn.read() as t:
        v = t.view(view)
        return {group: [key for _, key in v.keys(group)] for group in v.groups}


def history(seed: int) -> List[List[Tuple[Any, ...]]]:
    """Batches of (key, object[, metadata]); keys repeat within and across batches."""
    rng = random.Random(seed)
    batches = []
    for _ in range(25):
        batch = []
        for _ in range(rng.randrange(0, 15)):
            row: Tuple[Any, ...] = (f"k{rng.randrange(40)}", RANK.pack(rng.randrange(-50, 50)))
            if rng.random() < 0.3:
                row += (b"m" * rng.randrange(3),)
            batch.append(row)
        batches.append(batch)
    return batches


@pytest.mark.parametrize("seed", range(12))
def test_a_batch_leaves_the_views_and_rows_a_row_by_row_loop_leaves(seed: int) -> None:
    stores = []
    for _ in range(2):
        db = ydbview.Database()
        Counted().views(db)
        stores.append((db, db.new_connection()))
    (db_a, batched), (db_b, single) = stores
    try:
        for batch in history(seed):
            with batched.read_write() as t:
                t.set_many("items", batch)
            with single.read_write() as t:
                for row in batch:
                    t.set("items", *row)
            for view in ("keyed", "compared"):
                assert contents(batched, view) == contents(single, view)
            with batched.read() as a, single.read() as b:
                for key in {row[0] for row in batch}:
                    assert a.get_row("items", key) == b.get_row("items", key)
    finally:
        db_a.close()
        db_b.close()


@pytest.mark.parametrize("seed", range(3))
def test_batches_made_a_few_rows_at_a_time_give_the_same_views(seed: int, monkeypatch: pytest.MonkeyPatch) -> None:
    """The batch callbacks make their rows a slice at a time (to free them
    early); slices of 2 rows make every batch cross several, with rows
    picked and skipped."""
    from ydbview import views
    monkeypatch.setattr(views, "_SLICE", 2)
    test_a_batch_leaves_the_views_and_rows_a_row_by_row_loop_leaves(seed)


def test_each_callback_runs_once_per_row_it_would_run_for(db: ydbview.Database,
                                                          conn: ydbview.Connection) -> None:
    counted = Counted()
    counted.views(db)
    rows = [(f"k{i}", RANK.pack(i + 1)) for i in range(10)]
    with conn.read_write() as t:
        t.set_many("items", rows)
    # Two views share the grouping: each row grouped once per view.
    assert sorted(counted.grouped) == sorted([key for key, _ in rows] * 2)
    # Keys only for the keyed view, and only for rows in a group (7 is out).
    assert sorted(counted.keyed) == sorted(key for key, obj in rows if RANK.unpack(obj)[0] % 7)


def test_invoke_options_decide_as_for_set(db: ydbview.Database, conn: ydbview.Connection) -> None:
    calls: List[str] = []

    @ydbview.grouping(flavour="key")
    def by_key(row: ydbview.ViewRow) -> str:
        calls.append(row.key)
        return "all"

    db.register_view("v", by_key, None, key=lambda group, row: RANK.unpack(row.object)[0])
    conn_rows = [(f"k{i}", RANK.pack(10 - i)) for i in range(5)]
    with conn.read_write() as t:
        t.set_many("items", conn_rows)
    assert sorted(calls) == [key for key, _ in conn_rows]
    calls.clear()
    # A key-flavour grouping does not run again when an object changes...
    with conn.read_write() as t:
        t.set_many("items", [("k0", RANK.pack(100)), ("k9", RANK.pack(0))])
    assert calls == ["k9"]   # ...but a new row is grouped
    assert contents(conn, "v") == {"all": ["k9", "k4", "k3", "k2", "k1", "k0"]}


def test_a_key_given_twice_keeps_its_last_row(db: ydbview.Database, conn: ydbview.Connection) -> None:
    counted = Counted()
    counted.views(db)
    with conn.read_write() as t:
        t.set_many("items", [("a", RANK.pack(1)), ("a", RANK.pack(2), b"m"), ("b", RANK.pack(5))])
        assert t.get_row("items", "a").object == RANK.pack(2)
    assert counted.grouped.count("a") == 2   # once per view, for the last row only


def test_metadata_and_a_json_serializer_reach_the_callbacks(json_db: ydbview.Database) -> None:
    seen: List[Tuple[Any, Any]] = []

    @ydbview.grouping(flavour="row")
    def by_colour(row: ydbview.ViewRow) -> str:
        seen.append((row.object, row.metadata))
        return row.object["colour"]

    json_db.register_view("v", by_colour, None, key=lambda group, row: row.object["n"])
    conn = json_db.new_connection()
    with conn.read_write() as t:
        t.set_many("items", [("a", {"colour": "red", "n": 2}, {"tag": 1}), ("b", {"colour": "red", "n": 1})])
    assert seen == [({"colour": "red", "n": 2}, {"tag": 1}), ({"colour": "red", "n": 1}, None)]
    assert contents(conn, "v") == {"red": ["b", "a"]}
    conn.close()


def test_a_batch_callback_reads_the_transaction_as_it_was_before_the_batch(db: ydbview.Database,
                                                                           conn: ydbview.Connection) -> None:
    @ydbview.grouping(flavour="key", transaction=True)
    def by_partner(txn: Any, row: ydbview.ViewRow) -> str:
        return "paired" if txn.get("items", row.key + "'") is not None else "single"

    db.register_view("v", by_partner, None, key=lambda group, row: row.key)
    with conn.read_write() as t:
        t.set("items", "b'", b"0")
    with conn.read_write() as t:
        # "a" is grouped before "a'" is stored, as a loop of set() would.
        t.set_many("items", [("a", b"1"), ("a'", b"2"), ("b", b"3")])
    assert contents(conn, "v") == {"paired": ["b"], "single": ["a", "a'", "b'"]}


def test_a_bad_row_refuses_the_whole_batch(db: ydbview.Database, conn: ydbview.Connection) -> None:
    Counted().views(db)
    with conn.read_write() as t:
        with pytest.raises(TypeError):
            t.set_many("items", [("a", RANK.pack(1)), (5, RANK.pack(2))])
        with pytest.raises(ydbview.InvalidArgumentError):
            t.set_many("items", [("a", RANK.pack(1)), ("b\0", RANK.pack(2))])
        with pytest.raises(ydbview.InvalidArgumentError):
            t.set_many("items", [("a", RANK.pack(1)), ("\udc80", RANK.pack(2))])
        assert t.count("items") == 0
        t.set_many("items", [("c", RANK.pack(3))])   # the transaction goes on
    with conn.read() as t:
        assert t.count("items") == 1


def test_a_failing_callback_raises_its_own_exception_and_commits_nothing(db: ydbview.Database,
                                                                         conn: ydbview.Connection) -> None:
    def grouping(row: ydbview.ViewRow) -> str:
        if row.key == "bad":
            raise ValueError("no group for bad")
        return "all"

    db.register_view("v", grouping, None, key=lambda group, row: row.key)
    with pytest.raises(ValueError, match="no group for bad"):
        with conn.read_write() as t:
            t.set_many("items", [("a", b"1"), ("bad", b"2")])
    with conn.read() as t:
        assert t.count("items") == 0


def test_an_empty_batch_writes_nothing(db: ydbview.Database, conn: ydbview.Connection) -> None:
    Counted().views(db)
    with conn.read_write() as t:
        t.set_many("items", [])
        t.set_many("items", iter(()))
    with conn.read() as t:
        assert t.count("items") == 0


def test_encode_values_matches_encode_value_for_every_shape() -> None:
    from ydbview.sortkeys import encode_value, encode_values, desc
    shapes: List[List[Any]] = [
        [(3, "a"), (-1, "b\0c"), (2**40, "")],
        [1, 2, -3],
        ["x", "y\0"],
        [1.5, -0.0, float("nan")],
        [b"a\0", b""],
        [(1, "a"), (1, 2)],            # mixed: value by value
        [(1, "a"), (1, "a", 2)],       # mixed widths
        [True, 1],                     # bool is not int's exact type
        [(desc(3), "a"), (desc(4), "b")],
        [],
    ]
    for values in shapes:
        keys, sizes = encode_values(values)
        expected = [encode_value(value) for value in values]
        assert keys == b"".join(expected) and sizes == [len(key) for key in expected], values
    with pytest.raises(OverflowError):
        encode_values([(2**64, "a")])


def test_a_batch_this_binding_did_not_pass_is_read_from_c(db: ydbview.Database, conn: ydbview.Connection) -> None:
    """The batch callbacks build their rows from what ``set_many`` holds; a
    ``ydb_txn_set_objects`` call made some other way (here, straight
    through ctypes) gets them from C's ``ydb_view_row`` array instead."""
    from ctypes import c_char_p, c_size_t

    from ydbview._ffi import lib

    counted = Counted()
    counted.views(db)
    keys = [b"a", b"b", b"c"]
    objects = [RANK.pack(3), RANK.pack(1), RANK.pack(2)]
    with conn.read_write() as t:
        status = lib.ydb_txn_set_objects(t._handle, b"items", 3, (c_char_p * 3)(*keys), (c_char_p * 3)(*objects),
                                         (c_size_t * 3)(8, 8, 8), None, None)
        assert status == 0
    assert sorted(counted.keyed) == ["a", "b", "c"]
    assert contents(conn, "keyed") == {"g0": ["a"], "g1": ["b"], "g2": ["c"]}
