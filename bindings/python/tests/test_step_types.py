"""The loop users write to apply Changeset.steps() to a list (docs/list-views.md)
type-checks under mypy --strict: each step type's fields it always has are
not Optional, narrowed by ``step.type``. Skipped when mypy is not installed
(scripts/setup.sh installs it into .venv)."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

pytest.importorskip("mypy", reason="mypy is not installed (scripts/setup.sh installs it)")

PACKAGE_ROOT = Path(__file__).resolve().parents[1]

APPLY = textwrap.dedent("""
    from typing import List, Tuple

    import ydbview
    from ydbview import StepType

    Row = Tuple[str, str]

    def apply(changeset: ydbview.Changeset, table: List[List[Row]], new: List[List[Row]]) -> None:
        for step in changeset.steps():
            if step.type == StepType.REMOVE_SECTION:
                del table[step.section]
            elif step.type == StepType.INSERT_SECTION:
                table.insert(step.section, [])
                name: str = step.group
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


def mypy(source: str, tmp_path: Path) -> subprocess.CompletedProcess:
    program = tmp_path / "apply_steps.py"
    program.write_text(source, encoding="utf-8")
    env = dict(os.environ, MYPYPATH=str(PACKAGE_ROOT))
    return subprocess.run([sys.executable, "-m", "mypy", "--strict", "--no-incremental",
                           "--cache-dir", os.devnull, str(program)],
                          env=env, capture_output=True, text=True, timeout=300, cwd=tmp_path)


def test_the_usual_apply_loop_type_checks(tmp_path: Path) -> None:
    done = mypy(APPLY, tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr


def test_a_field_the_step_lacks_is_still_optional(tmp_path: Path) -> None:
    # The check is strict enough to see Optional misuse: a remove's final
    # row does not exist (it is None), and mypy says so.
    wrong = APPLY.replace("table[step.section].pop(step.row)\n",
                          "table[step.section].pop(step.final_row)\n", 1)
    assert wrong != APPLY
    done = mypy(wrong, tmp_path)
    assert done.returncode != 0, done.stdout
    assert "Optional[int]" in done.stdout or "int | None" in done.stdout, done.stdout
