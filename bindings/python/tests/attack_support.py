"""Shared pieces of the attack tests (test_attack_*.py): how long they run,
their seeds, a random workload, the view they register, and a view's
contents computed from scratch in Python to compare the engine against.

Not a test module (pytest collects only test_*.py); the attack tests and
the crash child (attack_crash_child.py) import it.
"""

from __future__ import annotations

import functools
import os
import random
from typing import Any, Dict, List, Optional, Tuple

import ydbview

# Rows live in these collections; META holds bookkeeping rows that no view shows.
COLLECTIONS = ("a", "b")
META = "meta"
GROUPS = ("g0", "g1", "g2", "g3")
KEYS_PER_COLLECTION = 30

RowKey = Tuple[str, str]
Model = Dict[RowKey, Tuple[Any, Any]]  # (collection, key) -> (object, metadata)


def scale() -> float:
    """YDBVIEW_ATTACK_SCALE multiplies every attack's size (default 1: a few
    seconds each, for the normal test run; 10 or more on a benchmark machine)."""
    value = float(os.environ.get("YDBVIEW_ATTACK_SCALE", "1"))
    if value <= 0:
        raise ValueError("YDBVIEW_ATTACK_SCALE must be positive")
    return value


def scaled(count: int) -> int:
    return max(1, int(count * scale()))


def seconds(default: float) -> float:
    """The soak's duration: YDBVIEW_ATTACK_SECONDS if set, else default x scale."""
    explicit = os.environ.get("YDBVIEW_ATTACK_SECONDS")
    return float(explicit) if explicit else default * scale()


def seed() -> int:
    """YDBVIEW_ATTACK_SEED replays a run; otherwise every run attacks with a
    new seed, which the tests print and put in their failure messages."""
    explicit = os.environ.get("YDBVIEW_ATTACK_SEED")
    return int(explicit) if explicit else random.SystemRandom().randrange(2**32)


# ---------------------------------------------------------------------------
# The view: grouped by the object's "g", sorted by metadata rank, then the
# object's "v", then (collection, key) -- a total order, so the expected
# contents are unique.
# ---------------------------------------------------------------------------

def group_of(collection: str, obj: Any) -> Optional[str]:
    if collection == META or not isinstance(obj, dict):
        return None
    return obj.get("g")


def sort_key(collection: str, key: str, obj: Any, metadata: Any) -> Tuple[int, int, str, str]:
    rank = metadata if isinstance(metadata, int) else -1
    value = obj.get("v", 0) if isinstance(obj, dict) else 0
    return (rank, value, collection, key)


def compare(a: Any, b: Any) -> int:
    return (a > b) - (a < b)


@ydbview.grouping(flavour="object")
def view_grouping(row: ydbview.ViewRow) -> Optional[str]:
    return group_of(row.collection, row.object)


@ydbview.sorting(flavour="row")
def view_sorting(group: str, a: ydbview.ViewRow, b: ydbview.ViewRow) -> int:
    return compare(sort_key(a.collection, a.key, a.object, a.metadata),
                   sort_key(b.collection, b.key, b.object, b.metadata))


def expected_view(model: Model) -> Dict[str, List[RowKey]]:
    """The view's contents computed from scratch: group -> keys in order."""
    groups: Dict[str, List[Tuple[Tuple[int, int, str, str], RowKey]]] = {}
    for (collection, key), (obj, metadata) in model.items():
        group = group_of(collection, obj)
        if group is not None:
            groups.setdefault(group, []).append((sort_key(collection, key, obj, metadata), (collection, key)))
    return {group: [row for _, row in sorted(entries)] for group, entries in groups.items()}


def read_model(txn: ydbview.ReadTransaction, collections: Tuple[str, ...] = COLLECTIONS) -> Model:
    """Every row of ``collections`` as of ``txn``."""
    model: Model = {}
    for collection in collections:
        for key, obj, metadata in txn.rows(collection):
            model[(collection, key)] = (obj, metadata)
    return model


def read_view(txn: ydbview.ReadTransaction, name: str) -> Dict[str, List[RowKey]]:
    """The engine's contents of view ``name``: group -> keys in order."""
    view = txn.view(name)
    assert view is not None, f"view {name!r} is not registered"
    return {group: view.keys(group) for group in view.groups}


def sorted_by(comparator: Any, group: str, rows: List[Tuple[RowKey, Any, Any]]) -> List[RowKey]:
    """Rows ``(row key, object, metadata)`` sorted by a view comparator."""
    def cmp(x: Tuple[RowKey, Any, Any], y: Tuple[RowKey, Any, Any]) -> int:
        return comparator(group, ydbview.ViewRow(x[0][0], x[0][1], x[1], x[2]),
                          ydbview.ViewRow(y[0][0], y[0][1], y[1], y[2]))
    return [row for row, _, _ in sorted(rows, key=functools.cmp_to_key(cmp))]


# ---------------------------------------------------------------------------
# A random workload: a transaction is a list of operations.
# ---------------------------------------------------------------------------

Op = Tuple[Any, ...]


def random_object(rng: random.Random) -> Dict[str, Any]:
    # About one row in eight has no group and stays out of the view.
    group = None if rng.random() < 0.125 else rng.choice(GROUPS)
    return {"g": group, "v": rng.randrange(50)}


def random_metadata(rng: random.Random) -> Optional[int]:
    return None if rng.random() < 0.2 else rng.randrange(10)


def random_op(rng: random.Random) -> Op:
    collection = rng.choice(COLLECTIONS)
    key = f"k{rng.randrange(KEYS_PER_COLLECTION)}"
    roll = rng.random()
    if roll < 0.45:
        return ("set", collection, key, random_object(rng), random_metadata(rng))
    if roll < 0.60:
        return ("replace_object", collection, key, random_object(rng))
    if roll < 0.72:
        return ("replace_metadata", collection, key, random_metadata(rng))
    if roll < 0.78:
        return ("touch_row", collection, key)
    if roll < 0.98:
        return ("remove", collection, key)
    return ("remove_all", collection)


def random_transaction(rng: random.Random, max_ops: int = 6) -> List[Op]:
    return [random_op(rng) for _ in range(rng.randint(1, max_ops))]


def run_op(txn: ydbview.ReadWriteTransaction, op: Op) -> None:
    kind, args = op[0], op[1:]
    if kind == "set":
        txn.set(*args)
    elif kind == "replace_object":
        txn.replace_object(*args)
    elif kind == "replace_metadata":
        txn.replace_metadata(*args)
    elif kind == "touch_row":
        txn.touch_row(*args)
    elif kind == "remove":
        txn.remove(*args)
    elif kind == "remove_all":
        txn.remove_all(*args)
    else:  # pragma: no cover - a typo in this file
        raise AssertionError(f"unknown op {kind}")


def apply_op(model: Model, op: Op) -> None:
    """What ``op`` does to the rows, per the header's documentation."""
    kind = op[0]
    if kind == "set":
        _, collection, key, obj, metadata = op
        model[(collection, key)] = (obj, metadata)
    elif kind == "replace_object":
        _, collection, key, obj = op
        if (collection, key) in model:  # a missing row is left missing
            model[(collection, key)] = (obj, model[(collection, key)][1])
    elif kind == "replace_metadata":
        _, collection, key, metadata = op
        if (collection, key) in model:
            model[(collection, key)] = (model[(collection, key)][0], metadata)
    elif kind == "touch_row":
        pass
    elif kind == "remove":
        model.pop((op[1], op[2]), None)
    elif kind == "remove_all":
        for row in [row for row in model if row[0] == op[1]]:
            del model[row]
    else:  # pragma: no cover
        raise AssertionError(f"unknown op {kind}")
