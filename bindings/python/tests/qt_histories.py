"""Replays seeded random histories through ``ydbview.qt``'s two models with
Qt's own ``QAbstractItemModelTester`` attached in fatal mode (a broken
model aborts this process), checking after every catch-up that each
model shows exactly the mappings' table. Run by test_qt_model.py in a
subprocess, headless:

    QT_QPA_PLATFORM=offscreen python qt_histories.py FIRST_SEED COUNT
"""

from __future__ import annotations

import random
import sys
from typing import List, Tuple

from PySide6.QtCore import QCoreApplication, QModelIndex, Qt
from PySide6.QtTest import QAbstractItemModelTester

import ydbview
from list_histories import begin_history, mappings_table, random_commit
from ydbview.qt import FlatMappingsModel, MappingsModel, Roles


def tree_contents(model: MappingsModel) -> List[Tuple[str, List[Tuple[str, str]]]]:
    contents = []
    for section in range(model.rowCount()):
        parent = model.index(section, 0)
        rows = [(model.data(model.index(row, 0, parent), Roles.COLLECTION),
                 model.data(model.index(row, 0, parent), Roles.KEY)) for row in range(model.rowCount(parent))]
        contents.append((model.data(parent, Qt.ItemDataRole.DisplayRole), rows))
    return contents


def flat_contents(model: FlatMappingsModel) -> List[Tuple[str, str]]:
    return [(model.data(model.index(row, 0), Roles.COLLECTION), model.data(model.index(row, 0), Roles.KEY))
            for row in range(model.rowCount(QModelIndex()))]


def display(row: ydbview.qt.ShownRow) -> str:
    return f"{row.key}={row.object['n']}"


def replay(seed: int, counts: dict) -> None:
    rng = random.Random(seed)
    db, writer, make_mappings = begin_history(rng)
    tree = MappingsModel(db, make_mappings(), display=display, follow_commits=False)
    flat = FlatMappingsModel(db, make_mappings(), display=display, follow_commits=False)
    testers = [QAbstractItemModelTester(model, QAbstractItemModelTester.FailureReportingMode.Fatal)
               for model in (tree, flat)]
    tree.modelReset.connect(lambda: counts.__setitem__("resets", counts["resets"] + 1))
    for _ in range(rng.randint(1, 4)):
        for _ in range(rng.randint(1, 3)):
            random_commit(writer, rng)
        tree.catch_up()
        flat.catch_up()
        expected = mappings_table(db, tree.mappings)
        got = tree_contents(tree)
        assert got == expected, f"seed {seed}: tree model {got} != mappings {expected}"
        rows = [row for _, section in expected for row in section]
        assert flat_contents(flat) == rows, f"seed {seed}: flat model {flat_contents(flat)} != {rows}"
        for section, (_, shown) in enumerate(expected):
            for row, (collection, key) in enumerate(shown):
                with writer.read() as t:
                    want = f"{key}={t.get(collection, key)['n']}"
                index = tree.index(row, 0, tree.index(section, 0))
                assert tree.data(index, Qt.ItemDataRole.DisplayRole) == want, f"seed {seed}: display"
        counts["catch-ups"] += 1
        counts["rows"] += len(rows)
    del testers
    tree.close()
    flat.close()
    db.close()


def main() -> None:
    first, count = int(sys.argv[1]), int(sys.argv[2])
    app = QCoreApplication.instance() or QCoreApplication([])
    counts = {"catch-ups": 0, "resets": 0, "rows": 0}
    for seed in range(first, first + count):
        replay(seed, counts)
    print(f"{count} histories, {counts['catch-ups']} catch-ups ({counts['resets']} resets), "
          f"{counts['rows']} rows checked: ok")
    del app


if __name__ == "__main__":
    main()
