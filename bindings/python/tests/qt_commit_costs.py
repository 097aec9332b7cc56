"""What one-row commits cost ``ydbview.qt``'s models in real, shown Qt
views, at two table sizes (run by test_qt_model.py in a subprocess,
headless, with a QApplication):

    QT_QPA_PLATFORM=offscreen python qt_commit_costs.py SMALL LARGE

For each size it shows ``FlatMappingsModel`` in a ``QListView`` (as Qt
makes it: single-pass layout, items sized one by one), the same with
uniform item sizes, and ``MappingsModel`` in an expanded ``QTreeView``;
a plain Python list model in a ``QListView`` is the baseline. Each view
then follows one-row commits (an insert, an update in place, an update
that moves the row, a removal; the single-pass QListView, whose layout
asks every row anyway, only the first two, to keep the run short), each
caught up and the event loop run until the view has laid out and painted. Counted per commit: the rows the
model reads from the database, the calls Qt makes into the model while it
applies the changeset, and its ``data()`` calls in all. Prints one JSON
object; the test reads it.
"""

from __future__ import annotations

import json
import sys
from typing import Any, Callable, Dict, List

from PySide6.QtCore import QAbstractListModel, QModelIndex, Qt
from PySide6.QtWidgets import QAbstractItemView, QApplication, QListView, QTreeView

import ydbview
import ydbview.store
from ydbview.qt import FlatMappingsModel, MappingsModel

COUNTS: Dict[str, int] = {"reads": 0, "calls": 0, "data": 0}


def counting(model_class: type) -> type:
    """The model class with every call Qt makes into it counted."""
    def wrap(name: str) -> Callable[..., Any]:
        method = getattr(model_class, name)

        def counted(self: Any, *args: Any) -> Any:
            COUNTS["calls"] += 1
            if name == "data":
                COUNTS["data"] += 1
            return method(self, *args)
        return counted
    names = [name for name in ("data", "index", "parent", "rowCount", "flags") if hasattr(model_class, name)]
    return type(f"Counting{model_class.__name__}", (model_class,), {name: wrap(name) for name in names})


def count_database_reads() -> None:
    get_row = ydbview.store.ReadTransaction.get_row

    def counted(self: Any, collection: str, key: str) -> Any:
        COUNTS["reads"] += 1
        return get_row(self, collection, key)
    ydbview.store.ReadTransaction.get_row = counted  # type: ignore[method-assign]


class PlainListModel(QAbstractListModel):
    """The baseline: a Python list of texts, nothing else."""

    def __init__(self, texts: List[str]) -> None:
        super().__init__()
        self.texts = texts

    def rowCount(self, parent: Any = QModelIndex()) -> int:
        return 0 if parent.isValid() else len(self.texts)

    def data(self, index: Any, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        COUNTS["data"] += 1
        return self.texts[index.row()] if role == Qt.ItemDataRole.DisplayRole and index.isValid() else None


def settle(app: QApplication, view: QAbstractItemView) -> None:
    """Runs the event loop until the view has laid out, then paints it."""
    app.processEvents()
    view.viewport().repaint()
    app.processEvents()


def commits(size: int) -> List[Callable[[ydbview.ReadWriteTransaction], None]]:
    middle = size  # rows hold even numbers 0 .. 2 * size - 2: the middle of the list
    return [lambda t: t.set("c", "new", middle + 1),                 # insert
            lambda t: t.set("c", "k2", 4),                           # update in place (shown)
            lambda t: t.set("c", "k3", middle + 3),                  # update that moves a shown row
            lambda t: t.remove("c", "k5")]                           # removal


def measure(app: QApplication, size: int, kind: str) -> List[Dict[str, int]]:
    db = ydbview.Database(serializer=ydbview.JSONSerializer())
    db.register_view("v", lambda row: "all", key=lambda group, row: row.object, persistent=False)
    writer = db.new_connection()
    with writer.read_write() as t:
        t.set_many("c", ((f"k{number}", 2 * number) for number in range(size)))
    tree = kind == "tree"
    model = counting(MappingsModel if tree else FlatMappingsModel)(db, ydbview.Mappings(["all"], "v"),
                                                                   follow_commits=False)
    view: QAbstractItemView = QTreeView() if tree else QListView()
    if kind == "uniform list":
        view.setUniformItemSizes(True)  # type: ignore[attr-defined]
    view.setModel(model)
    if tree:
        view.expandAll()  # type: ignore[attr-defined]
    view.resize(320, 480)
    view.show()
    settle(app, view)
    costs = []
    for change in commits(size)[:2 if kind == "list" else 4]:
        with writer.read_write() as t:
            change(t)
        COUNTS.update(reads=0, calls=0, data=0)
        model.catch_up()
        applying = COUNTS["calls"]
        settle(app, view)
        costs.append({"reads": COUNTS["reads"], "calls while applying": applying, "data": COUNTS["data"]})
    view.close()
    model.close()
    db.close()
    return costs


def measure_baseline(app: QApplication, size: int) -> List[Dict[str, int]]:
    model = PlainListModel([str(2 * number) for number in range(size)])
    view = QListView()
    view.setModel(model)
    view.resize(320, 480)
    view.show()
    settle(app, view)
    costs = []
    COUNTS.update(data=0)
    model.beginInsertRows(QModelIndex(), size // 2, size // 2)
    model.texts.insert(size // 2, "new")
    model.endInsertRows()
    settle(app, view)
    costs.append({"data": COUNTS["data"]})
    view.close()
    return costs


def main() -> None:
    sizes = [int(argument) for argument in sys.argv[1:3]]
    app = QApplication.instance() or QApplication([])
    count_database_reads()
    results: Dict[str, Any] = {}
    for size in sizes:
        for kind in ("list", "uniform list", "tree"):
            results[f"{kind} {size}"] = measure(app, size, kind)
        results[f"baseline list {size}"] = measure_baseline(app, size)
    print(json.dumps(results))


if __name__ == "__main__":
    main()
