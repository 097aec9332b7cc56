"""Filtered views and touching many rows from Python: registration, commits
flowing through, a new filter's changeset (exactly the rows entering and
leaving), stacked filters following their parents, ``touch_rows`` and
``touch_group`` re-running a filter that depends on a global, the
transaction form, exceptions and refusals releasing the filter; and random
histories mixing writes, new filters, re-sorts of the parent and group
touches, where every changeset's edit steps applied to the old table give
the new one and each filtered view equals its parent filtered from
scratch."""

from __future__ import annotations

import random
from typing import Any, Callable, Dict, Iterator, List, Tuple

import pytest

import ydbview
from list_histories import apply_steps, new_mappings, random_configuration, read_table
from ydbview import ChangeType, Mappings, RegistrationOutcome, _callbacks

Dump = Dict[str, List[str]]


def by_group() -> ydbview.Grouping:
    return ydbview.Grouping(lambda row: row.object["g"], flavour="object")


def by_rank(descending: bool = False) -> ydbview.KeySorting:
    if descending:
        return ydbview.KeySorting(lambda group, row: (ydbview.desc(row.object["n"]), row.key), flavour="object")
    return ydbview.KeySorting(lambda group, row: (row.object["n"], row.key), flavour="object")


@ydbview.filtering(flavour="object")
def even(group: str, row: ydbview.ViewRow) -> bool:
    return row.object["n"] % 2 == 0


@pytest.fixture
def setup() -> Iterator[Tuple[ydbview.Database, ydbview.Connection]]:
    db = ydbview.Database(serializer=ydbview.JSONSerializer())
    writer = db.new_connection()
    db.register_view("v", by_group(), key=by_rank(), version_tag="1", collections=["c"])
    with writer.read_write() as t:
        for n in range(10):
            t.set("c", f"k{n}", {"g": "a" if n < 5 else "b", "n": n})
    yield db, writer
    db.close()


def dump(connection: ydbview.Connection, view: str) -> Dump:
    with connection.read() as t:
        shown = t.view(view)
        return {group: [key for _, key in shown.keys(group)] for group in shown.groups}


def keys_of(changeset: ydbview.Changeset, kind: ChangeType) -> List[str]:
    return sorted(change.key or "?" for change in changeset.row_changes if change.type == kind)


def test_a_filtered_view_follows_its_parent(setup: Any) -> None:
    db, writer = setup
    assert db.register_filtered_view("even", "v", even, version_tag="1") == RegistrationOutcome.BUILT
    assert dump(writer, "even") == {"a": ["k0", "k2", "k4"], "b": ["k6", "k8"]}
    with writer.read_write() as t:
        t.set("c", "k1", {"g": "b", "n": 12})   # enters, at the end of b
        t.set("c", "k2", {"g": "a", "n": 3})    # leaves
        t.remove("c", "k8")
    assert dump(writer, "even") == {"a": ["k0", "k4"], "b": ["k6", "k1"]}
    with writer.read() as t:
        assert t.view("even").version_tag == "1\x1fover\x1f1"
        assert t.view("even").position("c", "k1") == ("b", 1)
    # The same tag again keeps it as stored; a plain callable reads the whole row.
    assert db.register_filtered_view("even", "v", even, version_tag="1") == RegistrationOutcome.LOADED
    assert db.register_filtered_view("odd", "v", lambda group, row: row.object["n"] % 2 == 1,
                                     persistent=False) == RegistrationOutcome.BUILT
    assert dump(writer, "odd") == {"a": ["k2", "k3"], "b": ["k5", "k7", "k9"]}   # k2 is rank 3 now
    assert db.registered_views == ["even", "odd", "v"]


def test_a_new_filter_shows_exactly_the_rows_that_enter_and_leave(setup: Any) -> None:
    db, writer = setup
    db.register_filtered_view("f", "v", even, version_tag="even")
    ui = db.new_connection()
    ui.begin_long_lived_read_transaction()
    m = Mappings(["a", "b"], "f")
    with ui.read() as t:
        m.update(t)
    with writer.read_write() as t:
        t.set_filter("f", ydbview.Filtering(lambda group, row: row.object["n"] < 4, flavour="object"),
                     version_tag="low")
    changeset = m.changes(ui.begin_long_lived_read_transaction())
    assert keys_of(changeset, ChangeType.INSERT) == ["k1", "k3"]
    assert keys_of(changeset, ChangeType.DELETE) == ["k4", "k6", "k8"]
    assert len(changeset.row_changes) == 5
    assert dump(writer, "f") == {"a": ["k0", "k1", "k2", "k3"]}
    # The same tag: nothing happens, whatever the filter.
    with writer.read_write() as t:
        t.set_filter("f", lambda group, row: False, version_tag="low")
    assert m.changes(ui.begin_long_lived_read_transaction()).is_empty
    assert dump(writer, "f") == {"a": ["k0", "k1", "k2", "k3"]}
    ui.close()


def test_stacked_filters_follow_a_resort_as_moves(setup: Any) -> None:
    db, writer = setup
    db.register_filtered_view("low", "v", lambda group, row: row.object["n"] < 7, version_tag="1")
    db.register_filtered_view("lowEven", "low", even, version_tag="1")
    assert dump(writer, "lowEven") == {"a": ["k0", "k2", "k4"], "b": ["k6"]}
    with writer.read_write() as t:
        t.set_filter("low", lambda group, row: True, version_tag="all")
    assert dump(writer, "lowEven") == {"a": ["k0", "k2", "k4"], "b": ["k6", "k8"]}
    ui = db.new_connection()
    ui.begin_long_lived_read_transaction()
    m = Mappings(["a", "b"], "lowEven")
    with ui.read() as t:
        m.update(t)
    with writer.read_write() as t:
        t.set_view_definition("v", by_group(), key=by_rank(descending=True), version_tag="2")
    changeset = m.changes(ui.begin_long_lived_read_transaction())
    assert dump(writer, "lowEven") == {"a": ["k4", "k2", "k0"], "b": ["k8", "k6"]}
    # Reversed groups of 3 and 2 rows: 2 + 1 moves, nothing inserted or deleted.
    assert [change.type for change in changeset.row_changes] == [ChangeType.MOVE] * 3
    ui.close()
    with pytest.raises(ydbview.InvalidArgumentError):
        db.register_filtered_view("low", "lowEven", even, version_tag="9")   # a cycle
    db.unregister_view("v")
    assert db.registered_views == []


def test_touching_rows_runs_a_filter_again(setup: Any) -> None:
    db, writer = setup
    threshold = {"n": 3}
    db.register_filtered_view("f", "v", ydbview.Filtering(lambda group, row: row.object["n"] < threshold["n"],
                                                          flavour="object"))
    assert dump(writer, "f") == {"a": ["k0", "k1", "k2"]}
    threshold["n"] = 8
    with writer.read_write() as t:
        t.touch_rows("c", ["k3", "missing", "k5"])
    assert dump(writer, "f") == {"a": ["k0", "k1", "k2", "k3"], "b": ["k5"]}
    # The filtered view's own group holds only the rows it keeps; the
    # parent's group reaches the others.
    with writer.read_write() as t:
        t.touch_group("f", "a")
        t.touch_group("f", "b")
    assert dump(writer, "f") == {"a": ["k0", "k1", "k2", "k3"], "b": ["k5"]}
    with writer.read_write() as t:
        t.touch_group("v", "a")
        t.touch_group("v", "b")
        t.touch_group("v", "no such group")
        t.touch_rows("c", [])
    assert dump(writer, "f") == {"a": ["k0", "k1", "k2", "k3", "k4"], "b": ["k5", "k6", "k7"]}
    with writer.read_write() as t:
        with pytest.raises(TypeError):
            t.touch_rows("c", "k1")
        with pytest.raises(ydbview.InvalidArgumentError):
            t.touch_rows("c", ["k1", "bad\0key"])
    with pytest.raises(ydbview.NotFoundError):
        with writer.read_write() as t:
            t.touch_group("nope", "a")


def test_the_transaction_form_reads_other_rows(setup: Any) -> None:
    db, writer = setup
    refused: List[BaseException] = []

    @ydbview.filtering(flavour="key", transaction=True)
    def flagged(txn: ydbview.CallbackTransaction, group: str, row: ydbview.ViewRow) -> bool:
        try:
            txn.touch_rows("c", [row.key])
        except ydbview.MisuseError as error:
            refused.append(error)
        return txn.exists("flags", row.key)

    with writer.read_write() as t:
        t.set("flags", "k3", True)
    db.register_filtered_view("flagged", "v", flagged, version_tag="1")
    assert dump(writer, "flagged") == {"a": ["k3"]}
    assert refused and "read-only" in str(refused[0])
    with writer.read_write() as t:   # the filter sees this transaction's own writes
        t.set("flags", "k9", True)
        t.set("c", "k9", {"g": "b", "n": 9})
    assert dump(writer, "flagged") == {"a": ["k3"], "b": ["k9"]}


def test_exceptions_and_refusals_release_the_filter(setup: Any) -> None:
    db, writer = setup
    db.register_filtered_view("f", "v", even, version_tag="1")
    live = _callbacks.live()

    def fails(group: str, row: ydbview.ViewRow) -> bool:
        if row.object["n"] == 3:
            raise ValueError("no threes")
        return True

    with pytest.raises(ValueError, match="no threes"):
        db.register_filtered_view("g", "v", fails)
    with pytest.raises(ydbview.NotFoundError):
        db.register_filtered_view("g", "nope", even)
    with pytest.raises(ValueError, match="no threes"):
        with writer.read_write() as t:
            t.set("c", "k20", {"g": "a", "n": 20})
            t.set_filter("f", fails, version_tag="2")
    with pytest.raises(ydbview.MisuseError, match="not a filtered view"):
        with writer.read_write() as t:
            t.set_filter("v", even, version_tag="2")
    with pytest.raises(ydbview.MisuseError, match="filtered view"):
        with writer.read_write() as t:
            t.set_view_definition("f", by_group(), key=by_rank(), version_tag="9")
    with pytest.raises(TypeError):
        ydbview.Filtering(42)  # type: ignore[arg-type]
    assert _callbacks.live() == live
    assert db.registered_views == ["f", "v"]
    assert dump(writer, "f") == {"a": ["k0", "k2", "k4"], "b": ["k6", "k8"]}
    with writer.read() as t:
        assert not t.exists("c", "k20")
    db.unregister_view("f")
    assert _callbacks.live() == live - 1


# ---------------------------------------------------------------------------
# Random histories
# ---------------------------------------------------------------------------

Keep = Callable[[str, ydbview.ViewRow], bool]
threshold = {"n": 5}

FILTERS: Dict[str, Tuple[str, Keep]] = {
    "all": ("key", lambda group, row: True),
    "even": ("object", lambda group, row: row.object["n"] % 2 == 0),
    "low": ("object", lambda group, row: row.object["n"] < 5),
    "notA": ("key", lambda group, row: group != "a"),
    "oddKey": ("key", lambda group, row: int(row.key[1:]) % 2 == 1),
    "none": ("key", lambda group, row: False),
    "threshold": ("object", lambda group, row: row.object["n"] < threshold["n"]),
}
ORDERS: Dict[str, Callable[[str, ydbview.ViewRow], Any]] = {
    "rank": lambda group, row: (row.object["n"], row.key),
    "rank descending": lambda group, row: (ydbview.desc(row.object["n"]), row.key),
    "key": lambda group, row: row.key,
    "key descending": lambda group, row: ydbview.desc(row.key),
}


def filtering(name: str) -> ydbview.Filtering:
    flavour, keep = FILTERS[name]
    return ydbview.Filtering(keep, flavour=flavour)


def from_scratch(t: ydbview.ReadTransaction, parent: str, name: str) -> Dump:
    """``parent``'s rows that filter ``name`` keeps, in ``parent``'s order."""
    keep = FILTERS[name][1]
    shown = t.view(parent)
    result = {group: [row.key for row in shown.rows(group) if keep(group, row)] for group in shown.groups}
    return {group: keys for group, keys in result.items() if keys}


def shown_by(t: ydbview.ReadTransaction, view: str) -> Dump:
    shown = t.view(view)
    return {group: [key for _, key in shown.keys(group)] for group in shown.groups}


def random_write(t: ydbview.ReadWriteTransaction, rng: random.Random) -> None:
    key = f"k{rng.randint(0, 14)}"
    choice = rng.random()
    if choice < 0.6:
        t.set("c", key, {"g": rng.choice("abcd"), "n": rng.randint(0, 9)})
    elif choice < 0.75:
        t.touch_object("c", key)
    else:
        t.remove("c", key)


def test_random_histories_give_valid_changesets() -> None:
    counts = {"filters": 0, "resorts": 0, "touches": 0, "thresholds": 0, "steps": 0}
    for seed in range(60):
        rng = random.Random(31_000 + seed)
        threshold["n"] = 5
        db = ydbview.Database(serializer=ydbview.JSONSerializer())
        writer, ui = db.new_connection(), db.new_connection()
        db.register_view("v", by_group(), key=ydbview.KeySorting(ORDERS["rank"], flavour="object"),
                         version_tag="0", persistent=rng.random() < 0.5)
        with writer.read_write() as t:
            for _ in range(rng.randint(0, 12)):
                random_write(t, rng)
        current = {"f": rng.choice(list(FILTERS)), "ff": rng.choice(list(FILTERS))}
        parents = {"f": "v", "ff": "f"}
        for view in ("f", "ff"):
            db.register_filtered_view(view, parents[view], filtering(current[view]), version_tag="0",
                                      persistent=rng.random() < 0.5)
        mappings = {}
        for view in ("f", "ff"):
            groups, configure = random_configuration(rng)
            mappings[view] = new_mappings(groups, configure, view)
        ui.begin_long_lived_read_transaction()
        with ui.read() as t:
            for m in mappings.values():
                m.update(t)
        tag = 0
        for round_number in range(rng.randint(1, 4)):
            old = {view: read_table(db, m, view) for view, m in mappings.items()}
            for _ in range(rng.randint(1, 3)):
                with writer.read_write() as t:
                    for _ in range(rng.randint(1, 4)):
                        tag += 1
                        what = rng.random()
                        if what < 0.15:
                            view = rng.choice(["f", "ff"])
                            current[view] = rng.choice(list(FILTERS))
                            t.set_filter(view, filtering(current[view]), version_tag=str(tag))
                            counts["filters"] += 1
                        elif what < 0.25:
                            order = ydbview.KeySorting(ORDERS[rng.choice(list(ORDERS))], flavour="object")
                            t.set_view_definition("v", by_group(), key=order, version_tag=str(tag))
                            counts["resorts"] += 1
                        elif what < 0.35:
                            t.touch_group(rng.choice(["v", "v", "f"]), rng.choice("abcd"))
                            counts["touches"] += 1
                        elif what < 0.4:
                            # The threshold filter answers anew only for rows touched.
                            threshold["n"] = rng.randint(0, 10)
                            for group in "abcd":
                                t.touch_group("v", group)
                            counts["thresholds"] += 1
                        else:
                            random_write(t, rng)
            notifications = ui.begin_long_lived_read_transaction()
            for view, m in mappings.items():
                steps = m.changes(notifications).steps()
                new = read_table(db, m, view)
                counts["steps"] += len(steps)
                assert apply_steps(steps, old[view], new) == new, \
                    f"seed {31_000 + seed} round {round_number} view {view}: {steps}"
            with ui.read() as t:
                for view in ("f", "ff"):
                    assert shown_by(t, view) == from_scratch(t, parents[view], current[view]), \
                        f"seed {31_000 + seed} round {round_number} view {view} filter {current[view]}"
        ui.close()
        writer.close()
        db.close()
    assert counts["filters"] > 30 and counts["resorts"] > 15 and counts["touches"] > 15, counts
    assert counts["thresholds"] > 5 and counts["steps"] > 100, counts
