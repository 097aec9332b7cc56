"""Names are their UTF-8 bytes: canonically equivalent spellings ("é" as
U+00E9 and as "e" + U+0301; "Å" three ways) are different collections, keys,
groups and views, checked against a model over random operations."""

from __future__ import annotations

import random
from typing import Dict, List, Tuple

import ydbview

ALPHABET = ["\u00e9", "e\u0301", "\u00c5", "\u212b", "A\u030a", "a", "b"]


@ydbview.grouping(flavour="object")
def group_is_object(row: ydbview.ViewRow) -> str:
    return row.object.decode("utf-8")


@ydbview.sorting(flavour="key")
def by_key(group: str, a: ydbview.ViewRow, b: ydbview.ViewRow) -> int:
    left, right = (a.key, a.collection), (b.key, b.collection)
    return (left > right) - (left < right)   # str order is code-point order: byte order


def contents(conn: ydbview.Connection, view: str = "v") -> Dict[str, List[str]]:
    with conn.read() as t:
        v = t.view(view)
        result: Dict[str, List[str]] = {}
        for group in v.groups:
            assert group not in result
            result[group] = [key for _collection, key in v.keys(group)]
        return result


def test_random_operations_with_equivalent_names_match_a_byte_exact_model() -> None:
    rng = random.Random(20261122)
    with ydbview.Database() as db:
        db.register_view("v", group_is_object, by_key)
        conn = db.new_connection()
        changed: List[int] = []
        db.add_commit_observer(lambda n: changed.append(len(n.changed_rows)))
        model: Dict[Tuple[str, str], str] = {}
        for _ in range(200):
            touched = set()
            with conn.read_write() as t:
                for _ in range(rng.randint(1, 3)):
                    collection, key = rng.choice(ALPHABET), rng.choice(ALPHABET)
                    if rng.random() < 0.25:
                        t.remove(collection, key)
                        if (collection, key) in model:
                            touched.add((collection, key))
                        model.pop((collection, key), None)
                    else:
                        group = rng.choice(ALPHABET)
                        t.set(collection, key, group.encode("utf-8"))
                        touched.add((collection, key))
                        model[(collection, key)] = group
            expected: Dict[str, List[Tuple[str, str]]] = {}
            for (collection, key), group in model.items():
                expected.setdefault(group, []).append((key, collection))
            assert contents(conn) == {g: [k for k, _c in sorted(m)] for g, m in expected.items()}
            if touched:
                assert changed[-1] == len(touched)
        conn.close()


def test_equivalent_view_names_are_two_views() -> None:
    with ydbview.Database() as db:
        conn = db.new_connection()
        with conn.read_write() as t:
            t.set("c", "k", b"g")
        db.register_view("v\u00e9", group_is_object, by_key)
        db.register_view("ve\u0301", group_is_object, by_key, version_tag="2")
        assert sorted(db.registered_views) == sorted(["v\u00e9", "ve\u0301"])
        db.unregister_view("v\u00e9")
        assert db.registered_views == ["ve\u0301"]
        assert contents(conn, "ve\u0301") == {"g": ["k"]}
        conn.close()
