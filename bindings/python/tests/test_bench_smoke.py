"""The Python benchmark still runs end to end (a smoke run on a few rows:
its figures are not checked, only that every row of its table is there
with a ratio)."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

BENCH = Path(__file__).resolve().parents[3] / "Benchmarks" / "python" / "bench.py"


def test_benchmark_prints_every_figure_with_a_ratio() -> None:
    done = subprocess.run([sys.executable, str(BENCH), "300", "20"], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    for label in ("insert 300 rows, one commit", "the same rows through `set_many` (vs sqlite3 + SortedKeyList)",
                  "one-row insert commit", "one-row update commit",
                  "read the top 50 rows", "read the top 50 rows, row cache off"):
        row = next((line for line in done.stdout.splitlines() if line.startswith(f"| {label} |")), None)
        assert row is not None, f"no row {label!r} in:\n{done.stdout}"
        assert re.search(r"\| \d+\.\dx \|", row), row
