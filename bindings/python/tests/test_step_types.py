"""The loop users write to apply Changeset.steps() to a list (docs/list-views.md)
type-checks under mypy --strict and pyright's strict mode: each step type's
fields it always has are not Optional, narrowed by ``step.type``. Each
checker's tests are skipped when it is not installed (scripts/setup.sh
installs both into .venv; pyright from PyPI with its ``nodejs`` extra, which
carries Node, so it runs offline)."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import json
from importlib.util import find_spec

import pytest

PACKAGE_ROOT = Path(__file__).resolve().parents[1]

APPLY = textwrap.dedent("""
    from typing import List, Tuple

    import ydbview
    from ydbview import StepType

    Row = Tuple[str, str]

    def apply(changeset: ydbview.Changeset, table: List[List[Row]], new: List[List[Row]],
              inserted_groups: List[str]) -> None:
        for step in changeset.steps():
            if step.type == StepType.REMOVE_SECTION:
                del table[step.section]
            elif step.type == StepType.INSERT_SECTION:
                table.insert(step.section, [])
                inserted_groups.append(step.group)
            elif step.type == StepType.REMOVE_ROW:
                table[step.section].pop(step.row)
            elif step.type == StepType.INSERT_ROW:
                row = new[step.final_section][step.final_row]
                if step.collection is not None and step.key is not None:
                    row = (step.collection, step.key)
                table[step.section].insert(step.row, row)
            elif step.type == StepType.MOVE_ROW:
                moved = table[step.section].pop(step.row)
                table[step.to_section].insert(step.to_row, moved)
            elif step.type == StepType.RELOAD_ROW:
                table[step.section][step.row] = new[step.final_section][step.final_row]
""")


WRONG = APPLY.replace("table[step.section].pop(step.row)\n", "table[step.section].pop(step.final_row)\n", 1)
assert WRONG != APPLY

needs_mypy = pytest.mark.skipif(find_spec("mypy") is None,
                                reason="mypy is not installed (scripts/setup.sh installs it)")
needs_pyright = pytest.mark.skipif(find_spec("pyright") is None,
                                   reason="pyright is not installed (scripts/setup.sh installs it)")


def mypy(source: str, tmp_path: Path) -> subprocess.CompletedProcess:
    program = tmp_path / "apply_steps.py"
    program.write_text(source, encoding="utf-8")
    env = dict(os.environ, MYPYPATH=str(PACKAGE_ROOT))
    return subprocess.run([sys.executable, "-m", "mypy", "--strict", "--no-incremental",
                           "--cache-dir", os.devnull, str(program)],
                          env=env, capture_output=True, text=True, timeout=300, cwd=tmp_path)


def pyright(source: str, tmp_path: Path) -> subprocess.CompletedProcess:
    program = tmp_path / "apply_steps.py"
    program.write_text(source, encoding="utf-8")
    config = {"include": ["apply_steps.py"], "extraPaths": [str(PACKAGE_ROOT)],
              "typeCheckingMode": "strict", "pythonVersion": "3.8"}
    (tmp_path / "pyrightconfig.json").write_text(json.dumps(config), encoding="utf-8")
    return subprocess.run([sys.executable, "-m", "pyright", "--pythonpath", sys.executable],
                          capture_output=True, text=True, timeout=300, cwd=tmp_path)


@needs_mypy
def test_the_usual_apply_loop_type_checks_under_mypy(tmp_path: Path) -> None:
    done = mypy(APPLY, tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr


@needs_mypy
def test_mypy_sees_a_field_the_step_lacks(tmp_path: Path) -> None:
    # The check is strict enough to see Optional misuse: a remove's final
    # row does not exist (it is None), and mypy says so.
    done = mypy(WRONG, tmp_path)
    assert done.returncode != 0, done.stdout
    assert "Optional[int]" in done.stdout or "int | None" in done.stdout, done.stdout


@needs_pyright
def test_the_usual_apply_loop_type_checks_under_pyright(tmp_path: Path) -> None:
    done = pyright(APPLY, tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "0 errors" in done.stdout, done.stdout


@needs_pyright
def test_pyright_sees_a_field_the_step_lacks(tmp_path: Path) -> None:
    done = pyright(WRONG, tmp_path)
    assert done.returncode != 0, done.stdout
    assert "int | None" in done.stdout and "reportArgumentType" in done.stdout, done.stdout
