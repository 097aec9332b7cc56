"""ydbview.qt: the Qt models checked by Qt itself. Each test runs in a
child process, headless (QT_QPA_PLATFORM=offscreen), because the model
tester's fatal mode aborts the process it runs in. Skipped only when
PySide6 is not installed (the test setup installs it into .venv)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("PySide6.QtTest", reason="PySide6 is not installed (scripts/setup.sh installs it)")

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent.parent


def run(*args: str, timeout: int = 300) -> str:
    # The tests' folder too: the inline scripts share list_histories.py.
    path = os.pathsep.join(filter(None, [os.environ.get("PYTHONPATH"), str(HERE)]))
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen", PYTHONPATH=path)
    result = subprocess.run([sys.executable, *args], env=env, capture_output=True, text=True, timeout=timeout)
    assert result.returncode == 0, f"exit {result.returncode}\n{result.stdout}\n{result.stderr}"
    return result.stdout


def test_both_models_pass_qts_model_tester_over_520_random_histories() -> None:
    # Every mappings configuration (static and dynamic groups, fixed and
    # flexible ranges, reverse, dependencies, consolidation; a tenth of the
    # databases let a connection fall only 1-2 commits behind, so some
    # catch-ups reset); after every catch-up each model must show exactly
    # the mappings' table.
    out = run(str(HERE / "qt_histories.py"), "1", "520")
    assert "520 histories" in out and out.rstrip().endswith("ok"), out


FOLLOWS_ANOTHER_THREAD = """
import time
from PySide6.QtCore import QCoreApplication
from PySide6.QtTest import QAbstractItemModelTester
import ydbview
from ydbview.qt import FlatMappingsModel
from list_histories import write_from_another_thread

app = QCoreApplication([])
db = ydbview.Database(serializer=ydbview.JSONSerializer())
db.register_view("v", lambda row: "all", key=lambda group, row: row.object)
model = FlatMappingsModel(db, ydbview.Mappings(["all"], "v"))
tester = QAbstractItemModelTester(model, QAbstractItemModelTester.FailureReportingMode.Fatal)

thread = write_from_another_thread(db)
deadline = time.monotonic() + 30
while model.rowCount() < 30 and time.monotonic() < deadline:
    app.processEvents()
    time.sleep(0.01)
thread.join()
app.processEvents()
values = [model.data(model.index(row, 0), ydbview.qt.Roles.OBJECT) for row in range(model.rowCount())]
assert values == list(range(30)), values
del tester
model.close()
db.close()
print("followed", len(values))
"""


def test_a_model_follows_commits_made_on_another_thread() -> None:
    assert "followed 30" in run("-c", FOLLOWS_ANOTHER_THREAD)


FALLS_BEHIND = """
from PySide6.QtCore import QCoreApplication
from PySide6.QtTest import QAbstractItemModelTester
import ydbview
from ydbview.qt import FlatMappingsModel, MappingsModel, Roles

app = QCoreApplication([])
for make in (MappingsModel, FlatMappingsModel):
    db = ydbview.Database(serializer=ydbview.JSONSerializer())
    db.register_view("v", lambda row: "all", key=lambda group, row: row.object)
    db.max_commits_behind = 2
    writer = db.new_connection()
    with writer.read_write() as t:
        t.set("c", "first", 100)
    model = make(db, ydbview.Mappings(["all"], "v"), follow_commits=False)
    tester = QAbstractItemModelTester(model, QAbstractItemModelTester.FailureReportingMode.Fatal)
    resets = []
    model.modelReset.connect(lambda: resets.append(1))
    parent = model.index(0, 0) if make is MappingsModel else ydbview.qt.QModelIndex()
    for number in range(4):
        with writer.read_write() as t:
            t.set("c", f"k{number}", number)
    # The database released the model's snapshot: data() answers None
    # (what a view paints before the queued catch-up), it does not raise.
    model._cache.clear()          # the tester has read every row already
    assert model.data(model.index(0, 0, parent), Roles.OBJECT) is None
    assert model.data(model.index(0, 0, parent), Roles.KEY) == "first"
    model.catch_up()
    assert resets == [1], resets
    shown = [model.data(model.index(row, 0, parent), Roles.OBJECT) for row in range(model.rowCount(parent))]
    assert shown == [0, 1, 2, 3, 100], shown

    # A release between two steps (while reading an arriving row) resets too.
    with writer.read_write() as t:
        t.set("c", "k9", 9)
    real = model._arriving
    def released(*args):
        raise ydbview.ReloadRequired("released")
    model._arriving = released
    model.catch_up()
    model._arriving = real
    assert resets == [1, 1], resets
    assert model.rowCount(parent) == 6
    del tester
    model.close()
    db.close()
print("reset twice, both models")
"""


def test_a_model_that_fell_behind_resets_instead_of_failing() -> None:
    # The one thing a changeset cannot say: the notifications in between
    # are gone (Database.max_commits_behind). The model resets.
    assert "reset twice, both models" in run("-c", FALLS_BEHIND)


CLOSED = """
from PySide6.QtCore import QCoreApplication
import ydbview
from ydbview.qt import MappingsModel, Roles

app = QCoreApplication([])
db = ydbview.Database(serializer=ydbview.JSONSerializer())
db.register_view("v", lambda row: "all", key=lambda group, row: row.object)
writer = db.new_connection()
with writer.read_write() as t:
    t.set("c", "a", 1)
    t.set("c", "z", 26)
model = MappingsModel(db, ydbview.Mappings(["all"], "v"))
rows = model.index(0, 0)
assert model.data(model.index(0, 0, rows), Roles.OBJECT) == 1
with writer.read_write() as t:
    t.set("c", "b", 2)            # queues a catch-up for the model's thread
model.close()
model.close()                     # twice is fine
with writer.read_write() as t:
    t.set("c", "c", 3)            # no observer any more
app.processEvents()               # the queued catch-up finds the model closed
assert model.rowCount(rows) == 2
assert model.data(model.index(0, 0, rows), Roles.KEY) == "a"
assert model.data(model.index(0, 0, rows), Roles.OBJECT) == 1    # read before closing
assert model.data(model.index(1, 0, rows), Roles.KEY) == "z"
assert model.data(model.index(1, 0, rows), Roles.OBJECT) is None  # cannot be read now
db.close()
print("closed quietly")
"""


def test_a_closed_model_keeps_its_rows_and_ignores_queued_catch_ups() -> None:
    # The tests' folder too: the inline scripts share list_histories.py.
    path = os.pathsep.join(filter(None, [os.environ.get("PYTHONPATH"), str(HERE)]))
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen", PYTHONPATH=path)
    result = subprocess.run([sys.executable, "-c", CLOSED], env=env, capture_output=True, text=True, timeout=60)
    assert result.returncode == 0 and "closed quietly" in result.stdout, result.stderr
    # A slot that raises only prints its traceback: there must be none.
    assert "Traceback" not in result.stderr, result.stderr


def test_the_live_list_example_saves_a_screenshot(tmp_path: Path) -> None:
    png = tmp_path / "live.png"
    run(str(ROOT / "bindings" / "python" / "examples" / "qt_live_list.py"), "--screenshot", str(png))
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


# The README's Qt example ends in app.exec(): run it with an event loop
# that stops after a second of commits instead of waiting for the window.
BRIEF_EXEC = """
import runpy, sys, time
from PySide6.QtWidgets import QApplication

def exec_briefly(self=None):
    app = QApplication.instance()
    end = time.monotonic() + 1.5
    while time.monotonic() < end:
        app.processEvents()
        time.sleep(0.01)
    return 0

QApplication.exec = exec_briefly
ran = runpy.run_path(sys.argv[1], run_name="__main__")
print("ran", sys.argv[1])
"""


def test_the_readmes_qt_example_runs(tmp_path: Path) -> None:
    listed = subprocess.run([sys.executable, str(ROOT / "scripts" / "readme_examples.py"), "qt", str(tmp_path)],
                            capture_output=True, text=True, check=True).stdout.split()
    assert listed, "README.md has no ```python qt example"
    for script in listed:
        assert "ran" in run("-c", BRIEF_EXEC, script)


SHOW_MODEL = BRIEF_EXEC + """
model = ran["model"]
for section in range(model.rowCount()):
    parent = model.index(section, 0)
    print(model.data(parent), "|", " / ".join(model.data(model.index(row, 0, parent))
                                              for row in range(model.rowCount(parent))))
"""


def test_the_list_views_docs_qt_example_is_the_example_file_and_runs() -> None:
    example = ROOT / "bindings" / "python" / "examples" / "qt_minimal.py"
    code = example.read_text()
    docs = (ROOT / "docs" / "list-views.md").read_text()
    assert "```python\n" + code + "```" in docs, "docs/list-views.md must show qt_minimal.py verbatim"
    out = run("-c", SHOW_MODEL, str(example))
    assert "today | 09:00  water the plants" in out and "later | 17:30  call Ana" in out, out
