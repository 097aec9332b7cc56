"""Property tests: random operation sequences against a dict model, and any
valid name round-trips."""

from __future__ import annotations

from typing import Dict, Tuple

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import ydbview

# Any text without NUL or lone surrogates is a valid name.
names = st.text(st.characters(blacklist_categories=("Cs",), blacklist_characters="\0"), max_size=12)
small_names = st.sampled_from(["a", "b", "c", "d"])
blobs = st.binary(max_size=64)

operations = st.lists(
    st.one_of(
        st.tuples(st.just("set"), small_names, small_names, blobs, st.none() | blobs),
        st.tuples(st.just("replace_object"), small_names, small_names, blobs),
        st.tuples(st.just("replace_metadata"), small_names, small_names, st.none() | blobs),
        st.tuples(st.just("remove"), small_names, small_names),
        st.tuples(st.just("remove_all"), small_names),
        st.tuples(st.just("remove_all_collections")),
        st.tuples(st.just("commit")),
    ),
    max_size=40,
)

Model = Dict[Tuple[str, str], Tuple[bytes, object]]


def apply(model: Model, op: tuple) -> None:
    kind = op[0]
    if kind == "set":
        model[(op[1], op[2])] = (op[3], op[4])
    elif kind == "replace_object" and (op[1], op[2]) in model:
        model[(op[1], op[2])] = (op[3], model[(op[1], op[2])][1])
    elif kind == "replace_metadata" and (op[1], op[2]) in model:
        model[(op[1], op[2])] = (model[(op[1], op[2])][0], op[3])
    elif kind == "remove":
        model.pop((op[1], op[2]), None)
    elif kind == "remove_all":
        for row in [row for row in model if row[0] == op[1]]:
            del model[row]
    elif kind == "remove_all_collections":
        model.clear()


def contents(t: ydbview.ReadTransaction) -> Model:
    found: Model = {}
    for collection in t.collections():
        for key, obj, meta in t.rows(collection):
            found[(collection, key)] = (obj, meta)
    return found


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(operations)
def test_random_operations_match_a_dict_model(ops: list) -> None:
    with ydbview.Database() as db:
        writer, reader = db.new_connection(), db.new_connection()
        committed: Model = {}
        pending: Model = {}
        snapshot_reader = reader.read()  # sees the empty database throughout
        t = writer.read_write()
        for op in ops:
            if op[0] == "commit":
                t.commit()
                committed = dict(pending)
                t = writer.read_write()
                continue
            getattr(t, op[0])(*op[1:])
            apply(pending, op)
            assert t.count_all() == len(pending)
        t.commit()
        committed = dict(pending)
        assert contents(snapshot_reader) == {}
        snapshot_reader.end()
        with reader.read() as r:
            assert contents(r) == committed
            assert r.count_all() == len(committed)
        writer.close()
        reader.close()


@settings(max_examples=80, deadline=None)
@given(collection=names, key=names, value=blobs, metadata=st.none() | blobs)
def test_any_valid_name_round_trips(collection: str, key: str, value: bytes, metadata: object) -> None:
    with ydbview.Database() as db:
        conn = db.new_connection()
        notes: list = []
        db.add_commit_observer(notes.append)
        with conn.read_write() as t:
            t.set(collection, key, value, metadata)
        with conn.read() as t:
            assert t.get_row(collection, key) == (value, metadata)
            assert t.keys(collection) == [key]
            assert t.collections() == [collection]
        assert set(notes[0].changed_rows) == {(collection, key)}
        conn.close()
