"""The GTK list model of docs/list-views.md (examples/gtk_list_model.py),
checked without GTK: PyGObject's GLib and Gio are enough to run the model,
its items-changed signals and a consumer that mirrors them, headless.

PyGObject comes from the system (Debian: python3-gi and gir1.2-glib-2.0;
pip would have to compile it), not from the project's .venv: the test
runs the check with the first Python that can import it -- this one, or a
python3 on PATH -- and skips when there is none. ydbview itself is plain
ctypes, so any Python 3 that can load the library runs it."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import List, Optional

import pytest

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent.parent
EXAMPLES = ROOT / "bindings" / "python" / "examples"


def python_with(namespace: str, version: str) -> Optional[str]:
    """The first Python that can load gi.repository.<namespace> <version>."""
    candidates = [sys.executable] + [os.path.join(folder, "python3") for folder in os.get_exec_path()]
    for candidate in candidates:
        if not os.access(candidate, os.X_OK):
            continue
        probe = subprocess.run([candidate, "-c", f"import gi; gi.require_version('{namespace}', '{version}'); "
                                f"from gi.repository import {namespace}"], capture_output=True)
        if probe.returncode == 0:
            return candidate
    return None


PYTHON = python_with("Gio", "2.0")
GTK_PYTHON = python_with("Gtk", "4.0") if PYTHON else None
XVFB_RUN = shutil.which("xvfb-run")


def check(command: List[str], count: int, *options: str) -> str:
    path = os.pathsep.join([str(ROOT / "bindings" / "python"), str(HERE), str(EXAMPLES)])
    env = dict(os.environ, PYTHONPATH=path)
    result = subprocess.run(command + [str(HERE / "gtk_histories.py"), "1", str(count), *options],
                            env=env, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, f"{command}: exit {result.returncode}\n{result.stdout}\n{result.stderr}"
    assert f"{count} histories" in result.stdout and result.stdout.rstrip().endswith("ok"), result.stdout
    assert "CRITICAL" not in result.stderr, result.stderr
    return result.stdout


@pytest.mark.skipif(PYTHON is None, reason="no Python with PyGObject (Debian: python3-gi) on PATH")
def test_the_gtk_list_model_signals_every_step_over_300_random_histories() -> None:
    assert PYTHON is not None
    check([PYTHON], 300)


@pytest.mark.skipif(GTK_PYTHON is None or XVFB_RUN is None,
                    reason="GTK 4 (Debian: gir1.2-gtk-4.0) and xvfb-run (xvfb) are not installed; "
                           "scripts/setup.sh does not install them")
def test_gtks_own_list_view_shows_the_same_rows_under_xvfb() -> None:
    assert GTK_PYTHON is not None and XVFB_RUN is not None
    assert "shown by GTK 4." in check([XVFB_RUN, "-a", GTK_PYTHON], 100, "--gtk")


def test_the_docs_show_the_gtk_list_model_as_it_is_tested() -> None:
    code = (EXAMPLES / "gtk_list_model.py").read_text()
    body = code[code.index("import gi\n"):]
    docs = (ROOT / "docs" / "list-views.md").read_text()
    assert "```python\n" + body + "```" in docs, "docs/list-views.md must show gtk_list_model.py's code verbatim"
