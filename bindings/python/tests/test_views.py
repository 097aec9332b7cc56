"""Views through the Python package: registration, every mutation, invoke
options, persistence, queries, find, enumeration, isolation, failing
callbacks, callback lifetime, hostile names, and a property test against
sorted()."""

from __future__ import annotations

import gc
import traceback
import weakref
from pathlib import Path
from typing import Any, Dict, List, Optional

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import ydbview
from ydbview._callbacks import live as live_callbacks


class Calls:
    def __init__(self) -> None:
        self.grouping = 0
        self.sorting = 0


def make_view(calls: Calls, flavour: str = "object") -> tuple:
    @ydbview.grouping(flavour=flavour)
    def by_group(row: ydbview.ViewRow) -> Optional[str]:
        calls.grouping += 1
        if row.object.get("hidden"):
            return None
        return row.object["g"]

    @ydbview.sorting(flavour=flavour)
    def by_n(group: str, a: ydbview.ViewRow, b: ydbview.ViewRow) -> int:
        calls.sorting += 1
        return (a.object["n"] > b.object["n"]) - (a.object["n"] < b.object["n"])

    return by_group, by_n


@pytest.fixture
def jdb() -> Any:
    database = ydbview.Database(serializer=ydbview.JSONSerializer())
    yield database
    database.close()


def keys(conn: ydbview.Connection, group: str, view: str = "v") -> List[str]:
    with conn.read() as t:
        v = t.view(view)
        return [k for _c, k in v.keys(group)]


def test_population_and_mutations(jdb: ydbview.Database) -> None:
    conn = jdb.new_connection()
    with conn.read_write() as t:
        t.set("b", "k1", {"g": "a", "n": 3})
        t.set("b", "k2", {"g": "a", "n": 1})
        t.set("b", "k3", {"g": "b", "n": 2})
        t.set("b", "h", {"g": "a", "n": 0, "hidden": True})
    calls = Calls()
    jdb.register_view("v", *make_view(calls), version_tag="1")
    assert calls.grouping == 4
    assert jdb.registered_views == ["v"]
    assert keys(conn, "a") == ["k2", "k1"]
    with conn.read_write() as t:
        t.set("b", "k4", {"g": "a", "n": 2})     # insert in the middle
        t.set("b", "k3", {"g": "a", "n": 9})     # moves group
    assert keys(conn, "a") == ["k2", "k4", "k1", "k3"]
    with conn.read_write() as t:
        t.replace_object("b", "k1", {"g": "a", "n": 0})
    assert keys(conn, "a")[0] == "k1"
    before = calls.grouping + calls.sorting
    with conn.read_write() as t:                 # metadata only: no callback
        t.replace_metadata("b", "k1", {"m": 1})
        t.touch_metadata("b", "k2")
    assert calls.grouping + calls.sorting == before
    with conn.read_write() as t:                 # touch: grouping runs again
        t.touch_object("b", "k2")
    with conn.read_write() as t:
        t.remove("b", "k1")
        t.remove_many("b", ["k2"])
    assert keys(conn, "a") == ["k4", "k3"]
    with conn.read_write() as t:
        t.remove_all("b")
    with conn.read() as t:
        v = t.view("v")
        assert v is not None and v.is_empty and v.count() == 0 and v.groups == []
    with conn.read_write() as t:
        t.set("c", "k", {"g": "z", "n": 1})
        t.remove_all_collections()
    with conn.read() as t:
        assert t.view("v").count() == 0  # type: ignore[union-attr]


def test_touch_runs_object_grouping(jdb: ydbview.Database) -> None:
    conn = jdb.new_connection()
    calls = Calls()
    jdb.register_view("v", *make_view(calls))
    with conn.read_write() as t:
        t.set("b", "k", {"g": "a", "n": 1})
    grouping_calls = calls.grouping
    with conn.read_write() as t:
        t.touch_object("b", "k")
    assert calls.grouping == grouping_calls + 1
    with conn.read_write() as t:
        t.touch_metadata("b", "k")
    assert calls.grouping == grouping_calls + 1


def test_key_flavour_and_invoke_options(jdb: ydbview.Database) -> None:
    conn = jdb.new_connection()
    seen: List[ydbview.ViewRow] = []

    @ydbview.grouping(flavour="key")
    def one_group(row: ydbview.ViewRow) -> str:
        seen.append(row)
        return "all"

    jdb.register_view("k", one_group, ydbview.Sorting(lambda g, a, b: (a.key > b.key) - (a.key < b.key),
                                                        flavour="key"))
    with conn.read_write() as t:
        t.set("c", "b", {"x": 1}, metadata={"m": 1})
        t.set("c", "a", {"x": 1})
    assert all(r.object is None and r.metadata is None for r in seen)
    count = len(seen)
    with conn.read_write() as t:
        t.set("c", "b", {"x": 2})
    assert len(seen) == count  # key flavour: insert only
    assert keys(conn, "all", "k") == ["a", "b"]

    with_meta = ydbview.Grouping(lambda row: "all", flavour="key", invoke=ydbview.InvokeOptions.METADATA_MODIFIED)
    runs: List[int] = []
    jdb.register_view("m", ydbview.Grouping(lambda row: runs.append(1) or "all", flavour="key",
                                            invoke=ydbview.InvokeOptions.METADATA_MODIFIED),
                      ydbview.Sorting(lambda g, a, b: 0, flavour="key"))
    runs.clear()
    with conn.read_write() as t:
        t.replace_metadata("c", "a", {"m": 2})
    assert runs == [1]
    assert with_meta.flavour == ydbview.Flavour.KEY
    with pytest.raises(ValueError):
        ydbview.Grouping(lambda row: None, flavour="bogus")


def test_plain_callables_get_the_whole_row(jdb: ydbview.Database) -> None:
    conn = jdb.new_connection()
    rows: List[ydbview.ViewRow] = []

    def group(row: ydbview.ViewRow) -> str:
        rows.append(row)
        return "g"

    jdb.register_view("v", group, lambda g, a, b: 0)
    with conn.read_write() as t:
        t.set("c", "k", {"o": 1}, metadata={"m": 2})
    assert rows[-1] == ydbview.ViewRow("c", "k", {"o": 1}, {"m": 2})


def test_persistence(tmp_path: Path) -> None:
    path = tmp_path / "views.sqlite"
    calls = Calls()
    with ydbview.Database(path, serializer=ydbview.JSONSerializer()) as db:
        conn = db.new_connection()
        with conn.read_write() as t:
            t.set("b", "k1", {"g": "a", "n": 2})
            t.set("b", "k2", {"g": "a", "n": 1})
        db.register_view("v", *make_view(calls), version_tag="1")
        db.register_view("mem", *make_view(Calls()), version_tag="1", persistent=False)
        conn.close()
    again = Calls()
    with ydbview.Database(path, serializer=ydbview.JSONSerializer()) as db:
        conn = db.new_connection()
        with conn.read() as t:
            with pytest.raises(ydbview.NotFoundError, match="no view named 'v' is registered"):
                t.view("v")                      # not until registered again
        db.register_view("v", *make_view(again), version_tag="1")
        assert again.grouping == 0 and again.sorting == 0
        assert keys(conn, "a") == ["k2", "k1"]
        memory = Calls()
        db.register_view("mem", *make_view(memory), version_tag="1", persistent=False)
        assert memory.grouping == 2
        changed = Calls()
        db.register_view("v", *make_view(changed), version_tag="2")
        assert changed.grouping == 2
        with conn.read() as t:
            assert t.view("v").version_tag == "2"  # type: ignore[union-attr]
        conn.close()


def test_queries_enumeration_and_find(jdb: ydbview.Database) -> None:
    conn = jdb.new_connection()
    jdb.register_view("v", *make_view(Calls()))
    with conn.read_write() as t:
        for i, n in enumerate([5, 1, 4, 2, 3]):
            t.set("c", f"k{n}", {"g": "g", "n": n}, metadata={"i": i} if n == 1 else None)
        t.set("c", "other", {"g": "h", "n": 0})
    with conn.read() as t:
        v = t.view("v")
        assert v.groups == ["g", "h"] and v.group_count == 2
        assert v.has_group("g") and not v.has_group("zzz")
        assert v.count("g") == 5 and v.count("zzz") == 0 and v.count() == 6
        assert v.key_at("g", 0) == ("c", "k1")
        assert v.key_at("g", 5) is None and v.key_at("g", -1) is None and v.key_at("zzz", 0) is None
        assert v.first_key("g") == ("c", "k1") and v.last_key("g") == ("c", "k5")
        assert v.object_at("g", 1) == {"g": "g", "n": 2}
        assert v.metadata_at("g", 0) == {"i": 1} and v.metadata_at("g", 1) is None
        assert v.row_at("g", 0) == ({"g": "g", "n": 1}, {"i": 1})
        assert v.position("c", "k3") == ("g", 2) and v.position("c", "nope") is None
        assert v.group_of("c", "other") == "h"
        assert [k for _c, k in v.keys("g", start=1, stop=3)] == ["k2", "k3"]
        assert [k for _c, k in v.keys("g", start=1, stop=4, reverse=True)] == ["k4", "k3", "k2"]
        assert [k for _c, k in v.keys("g", start=3, stop=100)] == ["k4", "k5"]
        assert [r.key for r in v.rows("g", reverse=True)] == ["k5", "k4", "k3", "k2", "k1"]
        assert v.rows("g", stop=1)[0].metadata == {"i": 1}
        with pytest.raises(ValueError):
            v.keys("g", start=3, stop=1)
        seen: List[int] = []
        v.enumerate_keys("g", lambda c, k, i: seen.append(i) or i >= 1)
        assert seen == [0, 1]
        assert v.find("g", lambda row: (row.object["n"] > 2) - (row.object["n"] < 2), flavour="object") == range(1, 2)
        assert v.find("g", lambda row: 0 if 2 <= row.object["n"] <= 4 else (1 if row.object["n"] > 4 else -1)) \
            == range(1, 4)
        assert v.find("g", lambda row: 1) is None
        assert v.find("zzz", lambda row: 0) is None
        with pytest.raises(ZeroDivisionError):
            v.find("g", lambda row: 1 // 0)
        with pytest.raises(TypeError):
            v.find("g", lambda row: "not an int")  # type: ignore[arg-type,return-value]
        with pytest.raises(ydbview.NotFoundError, match="^no view named 'nope' is registered$") as caught:
            t.view("nope")
        assert caught.value.code == ydbview.Status.NOTFOUND


def test_snapshot_isolation(jdb: ydbview.Database) -> None:
    reader, writer = jdb.new_connection(), jdb.new_connection()
    jdb.register_view("v", *make_view(Calls()))
    with writer.read_write() as t:
        t.set("c", "k1", {"g": "g", "n": 1})
    with reader.read() as old:
        with writer.read_write() as t:
            t.set("c", "k0", {"g": "g", "n": 0})
            t.set("c", "k1", {"g": "h", "n": 1})
        v = old.view("v")
        assert v is not None and v.count("g") == 1 and v.count("h") == 0
    assert keys(reader, "h") == ["k1"]


def test_exception_in_grouping_is_reraised_and_nothing_written(jdb: ydbview.Database) -> None:
    conn = jdb.new_connection()

    def grouping(row: ydbview.ViewRow) -> str:
        if row.key == "bad":
            raise KeyError("no group for bad")
        return "g"

    jdb.register_view("v", grouping, lambda g, a, b: (a.key > b.key) - (a.key < b.key))
    with pytest.raises(KeyError) as info:
        with conn.read_write() as t:
            t.set("c", "ok", {"n": 1})
            t.set("c", "bad", {"n": 2})
    assert "grouping" in "".join(traceback.format_tb(info.value.__traceback__))
    with conn.read() as t:
        assert not t.exists("c", "ok") and not t.exists("c", "bad")
        assert t.view("v").count() == 0  # type: ignore[union-attr]
    # The connection is fine afterwards.
    with conn.read_write() as t:
        t.set("c", "ok", {"n": 1})
    assert keys(conn, "g") == ["ok"]


def test_exception_in_sorting_is_reraised(jdb: ydbview.Database, recwarn: Any) -> None:
    conn = jdb.new_connection()
    fail = {"on": False}

    def sorting(group: str, a: ydbview.ViewRow, b: ydbview.ViewRow) -> int:
        if fail["on"]:
            raise RuntimeError("sorting broke")
        return (a.key > b.key) - (a.key < b.key)

    jdb.register_view("v", lambda row: "g", sorting)
    with conn.read_write() as t:
        t.set("c", "a", {})
    fail["on"] = True
    with pytest.raises(RuntimeError, match="sorting broke"):
        with conn.read_write() as t:
            t.set("c", "b", {})
    with conn.read() as t:
        assert not t.exists("c", "b")
    assert not [w for w in recwarn.list if "nraisable" in str(w.category)]


def test_bad_return_values_fail_cleanly(jdb: ydbview.Database) -> None:
    conn = jdb.new_connection()
    jdb.register_view("v", lambda row: 42, lambda g, a, b: 0)  # type: ignore[arg-type,return-value]
    with pytest.raises(TypeError):
        with conn.read_write() as t:
            t.set("c", "k", {})
    jdb.unregister_view("v")
    jdb.register_view("w", lambda row: "g\0x", lambda g, a, b: 0)
    with pytest.raises(ydbview.InvalidArgumentError):
        with conn.read_write() as t:
            t.set("c", "k", {})


def test_failing_registration_registers_nothing(jdb: ydbview.Database) -> None:
    conn = jdb.new_connection()
    with conn.read_write() as t:
        t.set("c", "k", {})

    def boom(row: ydbview.ViewRow) -> str:
        raise ValueError("boom")

    before = live_callbacks()
    with pytest.raises(ValueError, match="boom"):
        jdb.register_view("v", boom, lambda g, a, b: 0)
    assert jdb.registered_views == []
    assert live_callbacks() == before
    with pytest.raises(ydbview.InvalidArgumentError):
        jdb.register_view("v\0", lambda row: "g", lambda g, a, b: 0)
    assert live_callbacks() == before


def test_callbacks_released_on_unregister_and_close() -> None:
    db = ydbview.Database()

    def grouping(row: ydbview.ViewRow) -> str:
        return "g"

    def sorting(group: str, a: ydbview.ViewRow, b: ydbview.ViewRow) -> int:
        return 0

    ref = weakref.ref(grouping)
    before = live_callbacks()
    db.register_view("v", grouping, sorting)
    db.register_view("w", lambda row: "g", sorting)
    del grouping
    gc.collect()
    assert ref() is not None                 # kept while the view lives
    assert live_callbacks() == before + 2
    db.unregister_view("v")
    gc.collect()
    assert ref() is None
    assert live_callbacks() == before + 1
    db.unregister_view("never registered")
    db.close()
    assert live_callbacks() == before


def test_set_view_definition(jdb: ydbview.Database) -> None:
    conn = jdb.new_connection()
    jdb.register_view("v", *make_view(Calls()), version_tag="1")
    with conn.read_write() as t:
        t.set("c", "k1", {"g": "a", "n": 1})
        t.set("c", "k2", {"g": "a", "n": 2})
    by_key = (ydbview.Grouping(lambda row: row.key, flavour="key"),
              ydbview.Sorting(lambda g, a, b: 0, flavour="key"))
    before = live_callbacks()
    t = conn.read_write()
    t.set_view_definition("v", *by_key, version_tag="2")
    assert t.view("v").count("k1") == 1  # type: ignore[union-attr]
    t.rollback()
    assert live_callbacks() == before
    assert keys(conn, "a") == ["k1", "k2"]
    with conn.read_write() as t:
        t.set_view_definition("v", *by_key, version_tag="2")
    assert keys(conn, "k2") == ["k2"]
    assert live_callbacks() == before
    with pytest.raises(ydbview.NotFoundError):
        with conn.read_write() as t:
            t.set_view_definition("nope", *by_key, version_tag="3")


def test_has_changes(jdb: ydbview.Database) -> None:
    ui, writer = jdb.new_connection(), jdb.new_connection()
    jdb.register_view("v", *make_view(Calls()))
    ui.begin_long_lived_read_transaction()
    with writer.read_write() as t:
        t.set("c", "k", {"g": "a", "n": 1})
    notes = ui.begin_long_lived_read_transaction()
    assert ydbview.has_view_changes(notes, "v")
    assert not ydbview.has_view_changes(notes, "w")
    assert ydbview.has_group_changes(notes, "v", "a")
    assert not ydbview.has_group_changes(notes, "v", "b")


def test_hostile_names(jdb: ydbview.Database) -> None:
    conn = jdb.new_connection()
    view = "it's \"quoted\"; DROP TABLE ydb_rows; -- 🎉"
    collection = "col'\" été"
    jdb.register_view(view, lambda row: row.object["g"], lambda g, a, b: 0, version_tag="t'ag",
                      collections=[collection])
    with conn.read_write() as t:
        t.set(collection, "k'1", {"g": "gr\"oup ✓"})
        t.set("elsewhere", "k2", {"g": "gr\"oup ✓"})
    with conn.read() as t:
        v = t.view(view)
        assert v.groups == ["gr\"oup ✓"]
        assert v.keys("gr\"oup ✓") == [(collection, "k'1")]
    assert jdb.registered_views == [view]
    with pytest.raises(TypeError):
        jdb.register_view("x", lambda row: "g", lambda g, a, b: 0, collections="one")


def test_misuse(jdb: ydbview.Database) -> None:
    conn = jdb.new_connection()
    jdb.register_view("v", *make_view(Calls()))
    t = conn.read()
    v = t.view("v")
    t.end()
    with pytest.raises(ydbview.MisuseError):
        v.count()  # type: ignore[union-attr]
    with conn.read_write() as w:
        with pytest.raises(ydbview.MisuseError):
            jdb.register_view("w", lambda row: "g", lambda g, a, b: 0)  # would wait for itself
    with pytest.raises(TypeError):
        jdb.register_view("w", "not callable", lambda g, a, b: 0)  # type: ignore[arg-type]
    jdb.close()
    with pytest.raises(ydbview.MisuseError):
        jdb.register_view("w", lambda row: "g", lambda g, a, b: 0)


@ydbview.grouping(flavour="object")
def _group_g(row: ydbview.ViewRow) -> Optional[str]:
    return row.object["g"]


@ydbview.sorting(flavour="object")
def _order_n_then_key(group: str, a: ydbview.ViewRow, b: ydbview.ViewRow) -> int:
    left, right = (a.object["n"], a.key), (b.object["n"], b.key)
    return (left > right) - (left < right)


def _assert_view_matches_sorted(conn: ydbview.Connection, model: Dict[str, dict]) -> None:
    """View "v" (``_group_g``, ``_order_n_then_key``) holds exactly
    ``model``'s rows, grouped by "g" and ordered as sorted() orders them."""
    with conn.read() as t:
        v = t.view("v")
        expected: Dict[str, List[str]] = {}
        for key, obj in sorted(model.items(), key=lambda item: (item[1]["n"], item[0])):
            if obj["g"] is not None:
                expected.setdefault(obj["g"], []).append(key)
        assert v.groups == sorted(expected)
        for name, keys_in_order in expected.items():
            assert [k for _c, k in v.keys(name)] == keys_in_order


@settings(max_examples=40, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(["set", "remove", "meta"]),
                          st.integers(0, 15),
                          st.sampled_from(["a", "b", "c", None]),
                          st.integers(-5, 5)),
                max_size=40))
def test_random_operations_match_sorted(ops: List[tuple]) -> None:
    with ydbview.Database(serializer=ydbview.JSONSerializer()) as db:
        conn = db.new_connection()
        db.register_view("v", _group_g, _order_n_then_key)
        model: Dict[str, dict] = {}
        for chunk in range(0, len(ops), 5):
            with conn.read_write() as t:
                for op, number, g, n in ops[chunk:chunk + 5]:
                    key = f"k{number}"
                    if op == "set":
                        model[key] = {"g": g, "n": n}
                        t.set("c", key, model[key])
                    elif op == "remove":
                        model.pop(key, None)
                        t.remove("c", key)
                    elif key in model:
                        t.replace_metadata("c", key, {"n": n})
        _assert_view_matches_sorted(conn, model)


def test_row_cache_shows_each_commit_like_an_uncached_connection(jdb: Any) -> None:
    """Rows a connection read are kept for its next reads (``row_cache_limit``);
    a commit on another connection that changes a row, even without moving
    it (metadata only), or empties a collection, shows at once all the same.
    Every read of a cached connection is compared with one that has none."""
    group, order = make_view(Calls())
    jdb.register_view("v", group, order)
    writer, reader, uncached = jdb.new_connection(), jdb.new_connection(), jdb.new_connection()
    assert reader.row_cache_limit == 250
    uncached.row_cache_limit = 0
    assert uncached.row_cache_limit == 0
    with pytest.raises(ValueError):
        reader.row_cache_limit = -1
    import random
    rng = random.Random(7)
    for step in range(300):
        key, collection = f"k{rng.randrange(12)}", rng.choice(["a", "a", "a", "b"])
        with writer.read_write() as t:
            choice = rng.randrange(10)
            if choice < 5:
                t.set(collection, key, {"g": rng.choice(["x", "y"]), "n": rng.randrange(20)}, {"step": step})
            elif choice < 8:
                if t.get(collection, key) is not None:
                    t.replace_metadata(collection, key, {"step": step})
            elif choice < 9:
                t.remove(collection, key)
            elif rng.randrange(3) == 0:
                t.remove_all(collection)
        for name in ("x", "y"):
            start = rng.randrange(6)
            stop = start + rng.randrange(8)
            with uncached.read() as t:
                expected = t.view("v").rows(name, start, stop)
                expected_at = [t.view("v").row_at(name, i) for i in range(start, stop)]
            for _ in range(2):
                with reader.read() as t:
                    assert t.view("v").rows(name, start, stop) == expected, step
                    assert [t.view("v").row_at(name, i) for i in range(start, stop)] == expected_at, step


class _RollBack(Exception):
    pass


@settings(max_examples=30, deadline=None)
@given(st.lists(st.tuples(st.booleans(),
                          st.lists(st.tuples(st.sampled_from(["set", "remove"]), st.integers(0, 15),
                                             st.sampled_from(["a", "b", None]), st.integers(-5, 5)),
                                   min_size=1, max_size=5)),
                max_size=12))
def test_sorting_rows_in_memory_match_sorted_through_rollbacks(chunks: List[tuple]) -> None:
    """A comparator view that keeps its rows in memory orders rows as
    sorted() does, also after transactions that changed and compared rows
    and then rolled back."""
    with ydbview.Database(serializer=ydbview.JSONSerializer()) as db:
        conn = db.new_connection()
        with conn.read_write() as t:
            for number in range(0, 16, 2):
                t.set("c", f"k{number}", {"g": "a", "n": number % 5})
        db.register_view("v", _group_g, _order_n_then_key, sorting_rows_in_memory=True)
        model: Dict[str, dict] = {f"k{number}": {"g": "a", "n": number % 5} for number in range(0, 16, 2)}
        for rolls_back, ops in chunks:
            changed = dict(model)
            try:
                with conn.read_write() as t:
                    for op, number, g, n in ops:
                        key = f"k{number}"
                        if op == "set":
                            changed[key] = {"g": g, "n": n}
                            t.set("c", key, changed[key])
                        else:
                            changed.pop(key, None)
                            t.remove("c", key)
                    if rolls_back:
                        raise _RollBack()
                model = changed
            except _RollBack:
                pass
            _assert_view_matches_sorted(conn, model)
