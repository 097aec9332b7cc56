"""The ydbview-gtk model driven from Python through its typelib (PyGObject).

ctest runs this file with the system Python (python3-gi) and
GI_TYPELIB_PATH / LD_LIBRARY_PATH pointing into the build (test
gtk_python_typelib); it exits 77 (skipped) when PyGObject or the typelib is
missing. Under the project's venv pytest, which has no PyGObject, it skips.

What it checks: a model made with ``ydbview.gtk.list_model`` from Python
``Database`` and ``Mappings`` objects (a view and dynamic groups written in
Python) follows two writer threads on a GLib main loop, through the wakeup
descriptor alone; a consumer that knows only ``items-changed`` (on the list
and on every section) ends with exactly the rows the mappings show, with
their objects; a lagging model reloads; closing works in either order; and
without the typelib ``import ydbview.gtk`` says what to do.
"""

from __future__ import annotations

import os
import random
import subprocess
import sys
import threading
from typing import Any, List, Tuple

if __name__ != "__main__":
    import pytest

    pytest.importorskip("gi")
    try:
        import ydbview.gtk  # noqa: F401
    except ImportError as missing:
        pytest.skip(f"the YdbviewGtk typelib is not found: {missing}", allow_module_level=True)

import ydbview  # noqa: E402

try:
    from ydbview.gtk import GLib, list_model, value_of  # noqa: E402
except ImportError as missing:  # run as a script without PyGObject or the typelib
    print(f"skipped: {missing}")
    sys.exit(77)

GROUPS = ["a", "b", "c", "d"]


def open_database() -> ydbview.Database:
    db = ydbview.Database(serializer=ydbview.JSONSerializer())
    db.register_view("byRank", lambda row: row.object["g"], key=lambda group, row: (row.object["r"], row.key))
    return db


def expected(db: ydbview.Database, model: Any, mappings: ydbview.Mappings) -> List[Tuple[str, List[str]]]:
    """What the mappings show at the model's snapshot, read through the Python API."""
    reader = db.new_connection()
    reader.begin_long_lived_read_transaction()
    assert reader.snapshot == model.get_snapshot()
    sections = []
    with reader.read() as t:
        for s in range(mappings.number_of_sections):
            rows = []
            for r in range(mappings.number_of_items_in_section(s)):
                collection, key = t.view("byRank").key_at(*mappings.group_and_index_for_row((s, r)))
                rows.append(f"{collection}/{key}={t.get(collection, key)}")
            sections.append((mappings.group_for_section(s), rows))
    reader.close()
    return sections


def describe(db: ydbview.Database, item: Any) -> str:
    return f"{item.props.collection}/{item.props.key}={value_of(db, item)}"


class Replay:
    """A consumer that knows only items-changed."""

    def __init__(self, db: ydbview.Database, model: Any) -> None:
        self.db, self.model = db, model
        self.rows = [describe(db, item) for item in model]
        self.handler = model.connect("items-changed", self.changed)

    def changed(self, model: Any, position: int, removed: int, added: int) -> None:
        self.rows[position:position + removed] = [describe(self.db, model.get_item(position + i))
                                                  for i in range(added)]
        assert model.get_n_items() == len(self.rows)


class SectionsReplay:
    def __init__(self, db: ydbview.Database, sections: Any) -> None:
        self.db, self.sections = db, sections  # held: nothing else keeps the sections model
        self.shown = [(section.props.group, Replay(db, section)) for section in sections]
        sections.connect("items-changed", self.changed)

    def changed(self, sections: Any, position: int, removed: int, added: int) -> None:
        self.shown[position:position + removed] = [
            (section.props.group, Replay(self.db, section))
            for section in (sections.get_item(position + i) for i in range(added))]

    def table(self) -> List[Tuple[str, List[str]]]:
        return [(group, replay.rows) for group, replay in self.shown]


def write(db: ydbview.Database, seed: int, commits: int) -> None:
    rng = random.Random(seed)
    connection = db.new_connection()
    for _ in range(commits):
        with connection.read_write() as t:
            for _ in range(rng.randint(1, 3)):
                key = f"k{rng.randrange(30)}"
                if rng.random() < 0.25:
                    t.remove("rows", key)
                else:
                    t.set("rows", key, {"g": rng.choice(GROUPS), "r": rng.randrange(10)})
    connection.close()


def run_loop_until(condition: Any, seconds: float = 30.0) -> None:
    loop = GLib.MainLoop()
    timed_out = []

    def poll() -> bool:
        if condition():
            loop.quit()
            return False
        return True

    def give_up() -> bool:
        timed_out.append(True)
        loop.quit()
        return False

    GLib.timeout_add(10, poll)
    timeout = GLib.timeout_add(int(seconds * 1000), give_up)
    loop.run()
    if not timed_out:
        GLib.source_remove(timeout)
    assert not timed_out, "the model did not catch up in time"


def test_follows_writer_threads_on_the_main_loop() -> None:
    db = open_database()
    # Dynamic groups written in Python: every group but "d", in reverse order.
    mappings = ydbview.Mappings.dynamic(lambda group: group != "d", "byRank", key=lambda group: [-ord(group)])
    mappings.set_range_options("b", ydbview.RangeOptions.flexible(5, pin="end", grow="both_sides"))
    mappings.set_is_reversed("c", True)
    model = list_model(db, mappings)
    assert model.get_following()
    rows, sections = Replay(db, model), SectionsReplay(db, model.get_sections())
    writers = [threading.Thread(target=write, args=(db, seed, 60)) for seed in (1, 2)]
    for writer in writers:
        writer.start()
    run_loop_until(lambda: not any(w.is_alive() for w in writers) and model.get_snapshot() == db.snapshot)
    table = expected(db, model, mappings)
    assert sections.table() == table, f"{sections.table()}\n{table}"
    assert rows.rows == [row for _, section in table for row in section]
    assert len(rows.rows) > 0
    model.close()
    db.close()


def test_a_lagging_model_reloads() -> None:
    db = open_database()
    db.max_commits_behind = 2
    mappings = ydbview.Mappings(GROUPS, "byRank")
    model = list_model(db, mappings, following=False)
    reloads: List[bool] = []
    model.connect("caught-up", lambda _model, reloaded: reloads.append(reloaded))
    rows = Replay(db, model)
    write(db, 3, 5)
    assert model.catch_up()
    assert reloads == [True]
    write(db, 4, 1)
    assert model.catch_up()
    assert reloads == [True, False]
    assert rows.rows == [row for _, section in expected(db, model, mappings) for row in section]
    # The database closed first: the model stops, keeping its rows.
    db.close()
    assert model.get_n_items() == len(rows.rows)
    try:
        model.catch_up()
    except GLib.Error as error:
        assert "closed" in error.message
    else:
        raise AssertionError("catching up after the database closed should fail")
    model.close()


def test_errors_and_the_missing_typelib() -> None:
    db = open_database()
    try:
        list_model(db, ydbview.Mappings(["a"], "no such view"))
    except GLib.Error as error:
        assert "no such view" in error.message, error.message
    else:
        raise AssertionError("a model over an unregistered view should fail")
    db.close()
    env = dict(os.environ, GI_TYPELIB_PATH="/nonexistent")
    result = subprocess.run([sys.executable, "-c", "import ydbview.gtk"], env=env, capture_output=True, text=True)
    assert result.returncode != 0 and "YdbviewGtk-1.0 typelib" in result.stderr, result.stderr


if __name__ == "__main__":
    tests = [test_follows_writer_threads_on_the_main_loop, test_a_lagging_model_reloads,
             test_errors_and_the_missing_typelib]
    for test in tests:
        test()
        print(f"ok {test.__name__}")
    print(f"{len(tests)} passed, 0 failed")
