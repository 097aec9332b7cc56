"""Importing ydbview.qt without PySide6 (an optional extra) says what to
install, as an ImportError chained from the original one. PySide6's absence
is simulated in a child Python, since this one may have PySide6 loaded."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import pytest

CHILD = textwrap.dedent("""
    import importlib.abc, sys

    class NoPySide6(importlib.abc.MetaPathFinder):
        # Finds nothing, so "import PySide6" raises ModuleNotFoundError as
        # on a machine without it.
        def find_spec(self, name, path=None, target=None):
            if name == "PySide6" or name.startswith("PySide6."):
                raise ModuleNotFoundError(f"No module named {name!r}", name=name)
            return None

    sys.meta_path.insert(0, NoPySide6())
    for loaded in [m for m in sys.modules if m.startswith("PySide6")]:
        del sys.modules[loaded]
    try:
        import ydbview.qt
    except ImportError as error:
        print(type(error).__name__)
        print(isinstance(error, ImportError))
        print(type(error.__cause__).__name__, getattr(error.__cause__, "name", None))
        print(error.name)
        print(error)
    else:
        print("imported")
""")


def run_child(code: str) -> str:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (os.path.dirname(os.path.dirname(__file__)),
                                                    env.get("PYTHONPATH")) if p)
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_import_without_pyside6_says_what_to_install() -> None:
    lines = run_child(CHILD).splitlines()
    assert lines[0] != "imported"
    kind, is_import_error, cause, name, message = lines[0], lines[1], lines[2], lines[3], "\n".join(lines[4:])
    assert is_import_error == "True", kind
    assert cause.startswith("ModuleNotFoundError PySide6"), cause   # chained from the original
    assert name.startswith("PySide6")
    assert 'pip install "ydbview[qt]"' in message
    assert 'pip install ".[qt]"' in message


def test_the_extra_named_in_the_message_exists() -> None:
    # The message names the extra "qt"; the package must declare it.
    pyproject = os.path.join(os.path.dirname(__file__), "..", "..", "..", "pyproject.toml")
    with open(pyproject, encoding="utf-8") as handle:
        text = handle.read()
    section = text.split("[project.optional-dependencies]", 1)[1].split("\n[", 1)[0]
    assert any(line.startswith("qt = ") and "PySide6" in line for line in section.splitlines())


def test_other_missing_modules_keep_their_own_error() -> None:
    # Only PySide6's absence is rewritten: a module PySide6 itself needs
    # (shiboken6, here refused) missing is a broken install, not a missing
    # extra, and keeps its own error.
    pytest.importorskip("PySide6.QtCore", reason="PySide6 is not installed")
    code = CHILD.replace('name == "PySide6" or name.startswith("PySide6.")', 'name == "shiboken6"')
    code = code.replace('m.startswith("PySide6")]', 'm.startswith(("PySide6", "shiboken6"))]')
    lines = run_child(code).splitlines()
    assert lines[0] == "ModuleNotFoundError", lines
    assert "shiboken6" in lines[4] and "ydbview[qt]" not in lines[4], lines
