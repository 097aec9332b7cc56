#!/usr/bin/env python3
"""The README's ydbview-qt snippets are the ones the tests run: its ```cpp qt
block must be, line for line (indentation aside), the part of
bindings/qt/examples/snippet.cpp between its snippet markers (the qt_snippet
test builds and runs that program), and its ```qml block must be
bindings/qt/examples/snippet.qml without its opening comment (the qt_qml
test loads that file). Run by ctest as qt_readme_snippets."""

from __future__ import annotations

import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def readme_block(language: str) -> str:
    with tempfile.TemporaryDirectory() as folder:
        paths = subprocess.run([sys.executable, str(ROOT / "scripts/readme_examples.py"), language, folder],
                               check=True, capture_output=True, text=True).stdout.split()
        if len(paths) != 1:
            sys.exit(f"README.md: expected one ```{language} block for ydbview-qt, found {len(paths)}")
        return Path(paths[0]).read_text(encoding="utf-8")


def main() -> None:
    program = (ROOT / "bindings/qt/examples/snippet.cpp").read_text(encoding="utf-8")
    marked = program.split("// -- snippet: begin --\n", 1)[1].split("// -- snippet: end --", 1)[0]
    marked = textwrap.dedent(marked.rstrip(" ")).strip() + "\n"
    cpp = textwrap.dedent(readme_block("cpp")).strip() + "\n"
    qml_file = (ROOT / "bindings/qt/examples/snippet.qml").read_text(encoding="utf-8")
    qml_file = "".join(line for line in qml_file.splitlines(keepends=True) if not line.startswith("//")).strip()
    qml = readme_block("qml").strip()
    failures = []
    if cpp != marked:
        failures.append("README.md's ```cpp qt block differs from bindings/qt/examples/snippet.cpp's snippet:\n"
                        f"--- README\n{cpp}--- snippet.cpp\n{marked}")
    if qml != qml_file:
        failures.append("README.md's ```qml block differs from bindings/qt/examples/snippet.qml:\n"
                        f"--- README\n{qml}\n--- snippet.qml\n{qml_file}")
    if failures:
        sys.exit("\n".join(failures))
    print("ok: the README's C++ and QML snippets are the ones qt_snippet and qt_qml run")


if __name__ == "__main__":
    main()
