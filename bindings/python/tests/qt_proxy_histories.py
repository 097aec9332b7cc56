"""Replays seeded random histories (list_histories.py: every mappings
configuration, transaction-reading dynamic groups, databases whose
connections may lag only one or two commits) through ``ydbview.qt``'s two
models with ``QSortFilterProxyModel``s stacked on them: one sorting by the
rows' text, one filtering recursively (a section stays while one of its
rows matches), and a sorting one over the filtering one.

A proxy re-sorts or re-filters a row only when the model signals it, and
reads ``data()`` of the other rows at every signal. So, after every single
signal the model sends, each proxy must equal a fresh proxy over the model
as it answers now; and after every catch-up, a fresh proxy over a plain
``QStandardItemModel`` holding the mappings' table with every row read
anew at the newest snapshot (what a fresh model would show). A persistent
index held on every row before a catch-up must show the same row after
it, or be invalid if the row left the table (a catch-up that moves
several rows is one layout change, which moves them itself). Then both
models follow a writer thread through the event loop, commits landing
during catch-ups (some of which reset), and their proxies must end right.
Run by test_qt_model.py in a subprocess, headless:

    QT_QPA_PLATFORM=offscreen python qt_proxy_histories.py FIRST_SEED COUNT
"""

from __future__ import annotations

import random
import sys
from typing import Any, Callable, List, Tuple

from PySide6.QtCore import QAbstractItemModel, QCoreApplication, QModelIndex, QPersistentModelIndex, \
    QRegularExpression, QSortFilterProxyModel, Qt
from PySide6.QtGui import QStandardItem, QStandardItemModel

import ydbview
from ydbview import Mappings
from list_histories import GROUPS, begin_history, busy_writer, hides_the_group_of_k0, mappings_table, \
    new_database, random_commit
from ydbview.qt import FlatMappingsModel, MappingsModel, Roles


def display(row: ydbview.qt.ShownRow) -> str:
    # The rank first: a changed rank moves the row in a sorted proxy.
    return f"{row.object['n']}/{row.key}"


def sorting(source: QAbstractItemModel) -> QSortFilterProxyModel:
    proxy = QSortFilterProxyModel()
    proxy.setSourceModel(source)
    proxy.sort(0)
    return proxy


def filtering(source: QAbstractItemModel) -> QSortFilterProxyModel:
    proxy = QSortFilterProxyModel()
    proxy.setRecursiveFilteringEnabled(True)   # group names never match: a section shows for its rows
    proxy.setFilterRegularExpression(QRegularExpression("^[0-4]/"))
    proxy.setSourceModel(source)
    return proxy


def sorting_filtered(source: QAbstractItemModel) -> QSortFilterProxyModel:
    return sorting(filtering(source))


STACKS: List[Tuple[str, Callable[[QAbstractItemModel], QSortFilterProxyModel]]] = [
    ("sorting", sorting), ("filtering", filtering), ("sorting over filtering", sorting_filtered)]


def contents(model: QAbstractItemModel, parent: Any = QModelIndex()) -> List[Any]:
    """Every row's text, top to bottom, each with its children's."""
    shown = []
    for row in range(model.rowCount(parent)):
        index = model.index(row, 0, parent)
        children = contents(model, index) if model.rowCount(index) else []
        shown.append((model.data(index, Qt.ItemDataRole.DisplayRole), children))
    return shown


def agree(label: str, shown: List[Any], fresh: List[Any]) -> bool:
    """Whether a proxy shows what a fresh one does. Between two steps a
    group may show as two sections (inserted at its new place before it
    leaves the old one): a sorting proxy may order such ties either way."""
    if not label.startswith("sorting"):
        return shown == fresh
    return [text for text, _ in shown] == [text for text, _ in fresh] and sorted(shown) == sorted(fresh)


class Watch:
    """Proxies over one model, checked after every signal the model sends
    (connected after the proxies, so they have handled it by then). An
    exception in a slot would only be printed: the first failure is kept
    and raised once the catch-up returns."""

    def __init__(self, name: str, model: QAbstractItemModel, seed: int, counts: dict) -> None:
        self.name, self.model, self.seed, self.counts = name, model, seed, counts
        self.proxies = [(label, make, make(model)) for label, make in STACKS]
        self.failure = ""
        self.resets = 0
        model.modelReset.connect(self.reset)
        for signal in (model.rowsInserted, model.rowsRemoved, model.rowsMoved, model.dataChanged,
                       model.layoutChanged, model.modelReset):
            signal.connect(self.check_now)

    def check_now(self, *args: Any) -> None:
        for label, make, proxy in self.proxies:
            fresh = make(self.model)
            if not self.failure and not agree(label, contents(proxy), contents(fresh)):
                self.failure = (f"seed {self.seed}: a {label} proxy over the {self.name} model, after a "
                                f"signal: {contents(proxy)} != a fresh proxy's {contents(fresh)}")
        self.counts["signals"] += 1

    def reset(self) -> None:
        self.resets += 1

    def hold_every_row(self) -> None:
        self.resets_before = self.resets
        parents = [QModelIndex()] if self.name == "flat" else \
            [self.model.index(section, 0) for section in range(self.model.rowCount())]
        self.held = [(QPersistentModelIndex(self.model.index(row, 0, parent)),
                      self.model.data(self.model.index(row, 0, parent), Roles.KEY))
                     for parent in parents for row in range(self.model.rowCount(parent))]

    def check_held_rows(self, shown: List[Tuple[str, str]]) -> None:
        if self.resets != self.resets_before:
            return   # a reset (the commits in between were gone) invalidates every index
        for index, key in self.held:
            if ("c", key) in shown:
                assert index.isValid() and index.data(Roles.KEY) == key, \
                    f"seed {self.seed}: a persistent index of {key} on the {self.name} model shows {index.data()}"
            else:
                assert not index.isValid(), f"seed {self.seed}: {key} left, its index did not"

    def check_against(self, fresh_model: QAbstractItemModel) -> None:
        assert not self.failure, self.failure
        for label, make, proxy in self.proxies:
            fresh = make(fresh_model)
            if not agree(label, contents(proxy), contents(fresh)):
                raise AssertionError(f"seed {self.seed}: a {label} proxy over the {self.name} model, after "
                                     f"the catch-up: {contents(proxy)} != over a fresh model {contents(fresh)}")


def table_read_anew(db: ydbview.Database, mappings: ydbview.Mappings, tree: bool) -> QStandardItemModel:
    """The mappings' table as a plain model, every row read at the newest
    snapshot: sections as items with their rows as children, or the rows alone."""
    table = QStandardItemModel()
    reader = db.new_connection()
    with reader.read() as t:
        for group, rows in mappings_table(db, mappings):
            texts = [display(ydbview.qt.ShownRow(collection, key, row.object, row.metadata))
                     for collection, key in rows for row in [t.get_row(collection, key)]]
            parent = QStandardItem(group) if tree else table.invisibleRootItem()
            for text in texts:
                parent.appendRow(QStandardItem(text))
            if tree:
                table.appendRow(parent)
    reader.close()
    return table


def replay(seed: int, counts: dict) -> None:
    rng = random.Random(seed)
    db, writer, make_mappings = begin_history(rng)
    models = [("tree", MappingsModel), ("flat", FlatMappingsModel)]
    watches = [Watch(name, make(db, make_mappings(), display=display, follow_commits=False), seed, counts)
               for name, make in models]
    for _ in range(rng.randint(1, 5)):
        for _ in range(rng.randint(1, 3)):
            random_commit(writer, rng)
        for watch in watches:
            watch.hold_every_row()
            watch.model.catch_up()
            watch.check_against(table_read_anew(db, watch.model.mappings, watch.name == "tree"))
            watch.check_held_rows([row for _, rows in mappings_table(db, watch.model.mappings) for row in rows])
        counts["catch-ups"] += 1
    for watch in watches:
        watch.model.close()
    writer.close()
    db.close()


def follow_a_busy_writer(app: QCoreApplication, seed: int) -> None:
    """Both models follow a thread that commits as fast as it can, through
    the event loop, while sorting proxies over them are read: commits land
    during catch-ups, and with max_commits_behind 3 (every other seed)
    catch-ups reset too. Once the writer is done the proxies must agree
    with the table read anew."""
    rng = random.Random(seed)
    db = new_database(rng)
    db.max_commits_behind = 3 if seed % 2 else 1000
    models = [MappingsModel(db, Mappings(GROUPS, "v"), display=display),
              FlatMappingsModel(db, Mappings.dynamic(hides_the_group_of_k0, "v", transaction=True),
                                display=display)]
    proxies = [sorting(model) for model in models]
    done = busy_writer(db, rng)
    while not done.is_set():
        app.processEvents()
        for proxy in proxies:
            contents(proxy)
    app.processEvents()
    for model, proxy, tree in zip(models, proxies, (True, False)):
        fresh = sorting(table_read_anew(db, model.mappings, tree))
        assert agree("sorting", contents(proxy), contents(fresh)), \
            f"busy writer {seed}: {contents(proxy)} != {contents(fresh)}"
        model.close()
    db.close()


def main() -> None:
    first, count = int(sys.argv[1]), int(sys.argv[2])
    app = QCoreApplication.instance() or QCoreApplication([])
    counts = {"catch-ups": 0, "signals": 0}
    for seed in range(first, first + count):
        replay(seed, counts)
    for seed in range(first, first + 6):
        follow_a_busy_writer(app, seed)
    print(f"{count} histories, {counts['catch-ups']} catch-ups, proxies checked at {counts['signals']} "
          f"signals; 6 models followed a busy writer: ok")
    del app


if __name__ == "__main__":
    main()
