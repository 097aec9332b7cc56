"""ydbview.qt's models in real, shown Qt views, against plain models in the
same views with the same changes, in one run.

    PYTHONPATH=bindings/python YDBVIEW_LIBRARY=build/libydbview.so QT_QPA_PLATFORM=offscreen \\
        .venv/bin/python Benchmarks/python/qt_model_bench.py [--sizes 10000,100000] [--rounds 3]

For each size (rows in one group, sorted by a number): ``FlatMappingsModel``
in a ``QListView`` (Qt's defaults: single-pass layout, items sized one by
one) against a ``QStringListModel`` (C++) and a plain Python list model,
and ``MappingsModel`` in an expanded ``QTreeView`` against a
``QStandardItemModel`` tree (C++) and a plain Python tree model. The plain
Python models show what any Python model costs in those views: both views
lay out again after an insert and ask the model for every row (a QListView
for its data, eight roles a row; a QTreeView for an index a row).

Each view follows commits of one row and of 100 rows, inserted at random
places: the figure is the time from the catch-up (the model's; the
baselines' own inserts) until the view has laid out and painted, median of
``--rounds``; the database commit itself is shown apart. Then one more
round counts the models' data() calls and the rows they read from the
database per commit (the plain Python list model counts its data() calls
too). Prints a Markdown table; the ratios are what count.
"""

from __future__ import annotations

import argparse
import bisect
import random
import statistics
import time
from typing import Any, Callable, Dict, List, Optional, Tuple

from PySide6.QtCore import QAbstractItemModel, QAbstractListModel, QModelIndex, QStringListModel, Qt
from PySide6.QtGui import QStandardItem, QStandardItemModel
from PySide6.QtWidgets import QAbstractItemView, QApplication, QListView, QTreeView

import ydbview
import ydbview.store
from ydbview.qt import FlatMappingsModel, MappingsModel

COUNTS = {"data": 0, "reads": 0}


def count_database_reads() -> None:
    get_row = ydbview.store.ReadTransaction.get_row

    def counted(self: Any, collection: str, key: str) -> Any:
        COUNTS["reads"] += 1
        return get_row(self, collection, key)
    ydbview.store.ReadTransaction.get_row = counted  # type: ignore[method-assign]


def counting(model_class: type) -> type:
    """The class with its data() calls counted (used only for the counts)."""
    def data(self: Any, index: Any, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        COUNTS["data"] += 1
        return model_class.data(self, index, role)
    return type(f"Counting{model_class.__name__}", (model_class,), {"data": data})


class PythonListModel(QAbstractListModel):
    """A plain Python list model: the texts, nothing else."""

    counting = False

    def __init__(self, texts: List[str]) -> None:
        super().__init__()
        self.texts = texts

    def rowCount(self, parent: Any = QModelIndex()) -> int:
        return 0 if parent.isValid() else len(self.texts)

    def data(self, index: Any, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if self.counting:
            COUNTS["data"] += 1
        return self.texts[index.row()] if role == Qt.ItemDataRole.DisplayRole and index.isValid() else None

    def insert(self, at: int, text: str) -> None:
        self.beginInsertRows(QModelIndex(), at, at)
        self.texts.insert(at, text)
        self.endInsertRows()


class PythonTreeModel(QAbstractItemModel):
    """A plain Python tree model: one section (internal id 0) whose
    children (internal id 1) are the texts; rows are leaves, as in
    MappingsModel."""

    def __init__(self, texts: List[str]) -> None:
        super().__init__()
        self.texts = texts

    def index(self, row: int, column: int, parent: Any = QModelIndex()) -> QModelIndex:
        if column != 0 or row < 0:
            return QModelIndex()
        if not parent.isValid():
            return self.createIndex(row, 0, 0) if row == 0 else QModelIndex()
        if parent.internalId() == 0 and row < len(self.texts):
            return self.createIndex(row, 0, 1)
        return QModelIndex()

    def parent(self, index: Any = QModelIndex()) -> QModelIndex:  # type: ignore[override]
        return self.createIndex(0, 0, 0) if index.isValid() and index.internalId() == 1 else QModelIndex()

    def rowCount(self, parent: Any = QModelIndex()) -> int:
        if not parent.isValid():
            return 1
        return len(self.texts) if parent.internalId() == 0 else 0

    def columnCount(self, parent: Any = QModelIndex()) -> int:
        return 1

    def flags(self, index: Any) -> Qt.ItemFlag:
        flags = QAbstractItemModel.flags(self, index)
        return flags | Qt.ItemFlag.ItemNeverHasChildren if index.internalId() == 1 else flags

    def data(self, index: Any, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if role != Qt.ItemDataRole.DisplayRole or not index.isValid():
            return None
        return self.texts[index.row()] if index.internalId() == 1 else "all"

    def insert(self, at: int, text: str) -> None:
        self.beginInsertRows(self.createIndex(0, 0, 0), at, at)
        self.texts.insert(at, text)
        self.endInsertRows()


def text(value: int) -> str:
    return f"row {value}"


def show(app: QApplication, view: QAbstractItemView, model: Any, tree: bool) -> QAbstractItemView:
    view.setModel(model)
    if tree:
        view.expandAll()  # type: ignore[attr-defined]
    view.resize(320, 480)
    view.show()
    settle(app, view)
    return view


def settle(app: QApplication, view: QAbstractItemView) -> None:
    """Runs the event loop until the view has laid out, and paints it."""
    app.processEvents()
    view.viewport().repaint()
    app.processEvents()


class Baseline:
    """A plain model in its view, told of each insert at its sorted place."""

    def __init__(self, app: QApplication, kind: str, values: List[int]) -> None:
        self.app, self.kind, self.values = app, kind, list(values)
        texts = [text(value) for value in values]
        if kind == "QStringListModel":
            self.model: Any = QStringListModel(texts)
        elif kind == "Python list model":
            self.model = PythonListModel(texts)
        elif kind == "Python tree model":
            self.model = PythonTreeModel(texts)
        else:
            self.model = QStandardItemModel()
            self.section = QStandardItem("all")
            self.section.appendRows([QStandardItem(t) for t in texts])
            self.model.appendRow(self.section)
        tree = kind in ("QStandardItemModel", "Python tree model")
        self.view = show(app, QTreeView() if tree else QListView(), self.model, tree)

    def insert(self, values: List[int]) -> None:
        for value in values:
            at = bisect.bisect(self.values, value)
            self.values.insert(at, value)
            if self.kind == "QStringListModel":
                self.model.insertRows(at, 1)
                self.model.setData(self.model.index(at), text(value))
            elif self.kind.startswith("Python"):
                self.model.insert(at, text(value))
            else:
                self.section.insertRow(at, QStandardItem(text(value)))
        settle(self.app, self.view)

    def close(self) -> None:
        self.view.close()


class Followed:
    """A ydbview model in its view, following commits to the database."""

    def __init__(self, app: QApplication, db: ydbview.Database, tree: bool, count: bool = False) -> None:
        self.app, self.db = app, db
        model_class = MappingsModel if tree else FlatMappingsModel
        self.model = (counting(model_class) if count else model_class)(
            db, ydbview.Mappings(["all"], "v"), display=lambda row: text(row.object), follow_commits=False)
        self.view = show(app, QTreeView() if tree else QListView(), self.model, tree)
        self.writer = db.new_connection()

    def commit(self, values: List[int]) -> None:
        with self.writer.read_write() as t:
            for value in values:
                t.set("c", f"n{value}", value)

    def follow(self) -> None:
        self.model.catch_up()
        settle(self.app, self.view)

    def close(self) -> None:
        self.view.close()
        self.model.close()
        self.writer.close()


def timed(body: Callable[[], Any]) -> float:
    start = time.perf_counter()
    body()
    return time.perf_counter() - start


def run_size(app: QApplication, size: int, rounds: int, rng: random.Random) -> List[Dict[str, Any]]:
    shown = [2 * number for number in range(size)]   # the rows in the database, in order
    db = ydbview.Database(serializer=ydbview.JSONSerializer())
    db.register_view("v", lambda row: "all", key=lambda group, row: row.object, persistent=False)
    with db.new_connection().read_write() as t:
        t.set_many("c", ((f"k{value}", value) for value in shown))
    odd = iter(rng.sample(range(1, 2 * size, 2), min(size, 2 * (rounds + 1) * 101)))
    results = []
    for tree, baselines in ((False, ["QStringListModel", "Python list model"]),
                            (True, ["QStandardItemModel", "Python tree model"])):
        followed = Followed(app, db, tree)
        plain = {kind: Baseline(app, kind, shown) for kind in baselines}
        for rows in (1, 100):
            commit_times, follow_times = [], []
            base_times: Dict[str, List[float]] = {kind: [] for kind in baselines}
            for _ in range(rounds):
                change = [next(odd) for _ in range(rows)]
                commit_times.append(timed(lambda: followed.commit(change)))
                follow_times.append(timed(followed.follow))
                for kind, baseline in plain.items():
                    base_times[kind].append(timed(lambda: baseline.insert(change)))
                shown = sorted(shown + change)
            results.append({"rows": size, "view": "QTreeView" if tree else "QListView", "commit": rows,
                            "db commit": statistics.median(commit_times),
                            "follow": statistics.median(follow_times),
                            "baselines": {kind: statistics.median(times) for kind, times in base_times.items()}})
        followed.close()
        for baseline in plain.values():
            baseline.close()
        changes = [[next(odd)], [next(odd) for _ in range(100)]]
        for result, count in zip(results[-2:], count_calls(app, db, tree, changes, shown, not tree)):
            result.update(count)
        shown = sorted(shown + changes[0] + changes[1])
    db.close()
    return results


def count_calls(app: QApplication, db: ydbview.Database, tree: bool, changes: List[List[int]],
                values: List[int], plain_python: bool) -> List[Dict[str, Optional[int]]]:
    """One more round of each change, with data() calls and reads counted."""
    followed = Followed(app, db, tree, count=True)
    python = Baseline(app, "Python list model", values) if plain_python else None
    counts = []
    for change in changes:
        followed.commit(change)
        COUNTS.update(data=0, reads=0)
        followed.follow()
        count: Dict[str, Optional[int]] = {"data() calls": COUNTS["data"], "db reads": COUNTS["reads"],
                                           "baseline data() calls": None}
        if python is not None:
            python.model.counting = True
            COUNTS.update(data=0)
            python.insert(change)
            python.model.counting = False
            count["baseline data() calls"] = COUNTS["data"]
        counts.append(count)
    followed.close()
    if python is not None:
        python.close()
    return counts


def milliseconds(seconds: float) -> str:
    return f"{seconds * 1000:.1f}"


def print_table(results: List[Dict[str, Any]]) -> None:
    print("| rows | view | commit | db commit ms | catch-up + layout + paint ms | baseline ms (ratio) "
          "| data() calls | Python list model's data() calls | db reads |")
    print("|---:|---|---:|---:|---:|---|---:|---:|---:|")
    for r in results:
        baselines = ", ".join(f"{kind} {milliseconds(seconds)} ({r['follow'] / seconds:.2f}×)"
                              for kind, seconds in r["baselines"].items())
        python = r["baseline data() calls"]
        print(f"| {r['rows']:,} | {r['view']} | {r['commit']} row{'s' if r['commit'] > 1 else ''} "
              f"| {milliseconds(r['db commit'])} | {milliseconds(r['follow'])} | {baselines} "
              f"| {r['data() calls']:,} | {'—' if python is None else f'{python:,}'} | {r['db reads']} |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="10000,100000", help="table sizes, comma-separated")
    parser.add_argument("--rounds", type=int, default=3, help="commits of each kind timed (median)")
    arguments = parser.parse_args()
    app = QApplication.instance() or QApplication([])
    count_database_reads()
    rng = random.Random(20261127)
    results: List[Dict[str, Any]] = []
    for size in (int(size) for size in arguments.sizes.split(",")):
        results += run_size(app, size, arguments.rounds, rng)
    print_table(results)


if __name__ == "__main__":
    main()
