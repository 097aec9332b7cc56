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
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen")
    result = subprocess.run([sys.executable, *args], env=env, capture_output=True, text=True, timeout=timeout)
    assert result.returncode == 0, f"exit {result.returncode}\n{result.stdout}\n{result.stderr}"
    return result.stdout


def test_both_models_pass_qts_model_tester_over_520_random_histories() -> None:
    # Every mappings configuration (static and dynamic groups, fixed and
    # flexible ranges, reverse, dependencies, consolidation); after every
    # catch-up each model must show exactly the mappings' table.
    out = run(str(HERE / "qt_histories.py"), "1", "520")
    assert "520 histories" in out and out.rstrip().endswith("ok"), out


FOLLOWS_ANOTHER_THREAD = """
import threading, time
from PySide6.QtCore import QCoreApplication
from PySide6.QtTest import QAbstractItemModelTester
import ydbview
from ydbview.qt import FlatMappingsModel

app = QCoreApplication([])
db = ydbview.Database(serializer=ydbview.JSONSerializer())
db.register_view("v", lambda row: "all", key=lambda group, row: row.object)
model = FlatMappingsModel(db, ydbview.Mappings(["all"], "v"))
tester = QAbstractItemModelTester(model, QAbstractItemModelTester.FailureReportingMode.Fatal)

def write():
    connection = db.new_connection()
    for number in range(30):
        with connection.read_write() as t:
            t.set("c", f"k{number}", (number * 7) % 30)
    connection.close()

thread = threading.Thread(target=write)
thread.start()
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
runpy.run_path(sys.argv[1], run_name="__main__")
print("ran", sys.argv[1])
"""


def test_the_readmes_qt_example_runs(tmp_path: Path) -> None:
    listed = subprocess.run([sys.executable, str(ROOT / "scripts" / "readme_examples.py"), "qt", str(tmp_path)],
                            capture_output=True, text=True, check=True).stdout.split()
    assert listed, "README.md has no ```python qt example"
    for script in listed:
        assert "ran" in run("-c", BRIEF_EXEC, script)
