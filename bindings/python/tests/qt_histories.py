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
from typing import Any, Callable, List, Tuple

from PySide6.QtCore import QCoreApplication, QModelIndex, Qt
from PySide6.QtTest import QAbstractItemModelTester

import ydbview
from ydbview import Mappings, RangeOptions, StepType
from ydbview.qt import FlatMappingsModel, MappingsModel, Roles

GROUPS = ["a", "b", "c", "d"]
Configure = Callable[[Mappings], None]


def random_configuration(rng: random.Random) -> Tuple[bool, Configure]:
    """(dynamic groups?, what to set on a fresh Mappings): every model
    gets its own Mappings, configured the same way."""
    dynamic = rng.random() < 0.25
    settings: List[Callable[[Mappings], None]] = []
    if not dynamic and rng.random() < 0.5:
        settings.append(lambda m: m.set_is_dynamic_section_for_all_groups(True))
    for group in GROUPS:
        choice = rng.random()
        length, offset, pin = rng.randint(1, 4), rng.randint(0, 2), rng.choice(["beginning", "end"])
        if choice < 0.2:
            settings.append(lambda m, g=group, o=RangeOptions.fixed(length, offset=offset, pin=pin):
                            m.set_range_options(g, o))
        elif choice < 0.4:
            settings.append(lambda m, g=group, o=RangeOptions.flexible(length, offset=offset, pin=pin):
                            m.set_range_options(g, o))
        if rng.random() < 0.3:
            settings.append(lambda m, g=group: m.set_is_reversed(g, True))
        if rng.random() < 0.2:
            settings.append(lambda m, g=group, d=rng.choice([-1, 1]): m.set_cell_drawing_dependency(g, d))
    if rng.random() < 0.2:
        settings.append(lambda m, t=rng.randint(2, 8): m.set_auto_consolidate_groups(t, "all"))

    def configure(m: Mappings) -> None:
        for setting in settings:
            setting(m)
    return dynamic, configure


def new_mappings(dynamic: bool, configure: Configure) -> Mappings:
    m = Mappings.dynamic(lambda group: group != "d", "v") if dynamic else Mappings(GROUPS, "v")
    configure(m)
    return m


def random_commit(writer: ydbview.Connection, rng: random.Random) -> None:
    with writer.read_write() as t:
        for _ in range(rng.randint(1, 5)):
            key = f"k{rng.randint(0, 14)}"
            choice = rng.random()
            if choice < 0.55:
                t.set("c", key, {"g": rng.choice("abcd"), "n": rng.randint(0, 9)})
            elif choice < 0.7:
                t.touch_object("c", key)
            elif choice < 0.97:
                t.remove("c", key)
            else:
                t.remove_all("c")


def mappings_table(db: ydbview.Database, m: Mappings) -> List[Tuple[str, List[Tuple[str, str]]]]:
    """The table the mappings show, read through its getters and the view
    (at the newest snapshot, which is the models' after a catch-up)."""
    reader = db.new_connection()
    table = []
    with reader.read() as t:
        view = t.view("v")
        for section in range(m.number_of_sections):
            rows = []
            for row in range(m.number_of_items_in_section(section) or 0):
                rows.append(view.key_at(*m.group_and_index_for_row((section, row))))
            table.append((m.group_for_section(section) or "", rows))
    reader.close()
    return table


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
    db = ydbview.Database(serializer=ydbview.JSONSerializer())
    db.register_view("v", ydbview.Grouping(lambda row: row.object["g"], flavour="object"),
                     ydbview.KeySorting(lambda group, row: (row.object["n"], row.key), flavour="object"),
                     persistent=False)
    writer = db.new_connection()
    for _ in range(rng.randint(0, 4)):
        random_commit(writer, rng)
    dynamic, configure = random_configuration(rng)
    tree = MappingsModel(db, new_mappings(dynamic, configure), display=display, follow_commits=False)
    flat = FlatMappingsModel(db, new_mappings(dynamic, configure), display=display, follow_commits=False)
    testers = [QAbstractItemModelTester(model, QAbstractItemModelTester.FailureReportingMode.Fatal)
               for model in (tree, flat)]
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
    counts = {"catch-ups": 0, "rows": 0}
    for seed in range(first, first + count):
        replay(seed, counts)
    print(f"{count} histories, {counts['catch-ups']} catch-ups, {counts['rows']} rows checked: ok")
    del app


if __name__ == "__main__":
    main()
