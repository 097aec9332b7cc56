#!/usr/bin/env python3
"""Writes the README's code examples of one language to files, so the test
command can compile and run exactly what a reader copies.

    python3 scripts/readme_examples.py c|python|swift|qt|gtk|cpp|qml OUTDIR

Every fenced block opened with ```c (```python, ```swift) becomes
OUTDIR/readme_<n>.<ext>, numbered in README order; the paths are printed,
one a line. Blocks that are not meant to run use another info string
(```sh, ```text). ```python qt blocks need PySide6: `qt` writes those (the
Qt tests run them), `python` leaves them out (fresh venvs have no Qt).
```c gtk (ydbview-gtk), ```cpp qt and ```qml (ydbview-qt) are the toolkit
components' snippets, checked by their own tests (ctest -R readme).

    python3 scripts/readme_examples.py shell NAME

prints the lines of the ```sh block right after the README's comment
`<!-- NAME: ... -->` (the install commands the fresh-machine check runs as
written).
"""

from __future__ import annotations

import sys
from pathlib import Path

EXTENSIONS = {"c": "c", "python": "py", "swift": "swift", "qt": "py", "gtk": "c", "cpp": "cpp", "qml": "qml"}
INFO_STRINGS = {"qt": "python qt", "gtk": "c gtk", "cpp": "cpp qt", "qml": "qml"}


def blocks(text: str, language: str) -> list:
    found, current = [], None
    for line in text.splitlines(keepends=True):
        if current is None:
            if line.strip() == "```" + INFO_STRINGS.get(language, language):
                current = []
        elif line.strip() == "```":
            found.append("".join(current))
            current = None
        else:
            current.append(line)
    if current is not None:
        raise SystemExit(f"README.md: a ```{language} block is never closed")
    return found


def marked_shell_block(text: str, name: str) -> str:
    lines = text.splitlines(keepends=True)
    for number, line in enumerate(lines):
        if line.startswith(f"<!-- {name}:"):
            if number + 1 >= len(lines) or lines[number + 1].strip() != "```sh":
                raise SystemExit(f"README.md: <!-- {name} --> is not followed by a ```sh block")
            block = []
            for inner in lines[number + 2:]:
                if inner.strip() == "```":
                    return "".join(block)
                block.append(inner)
            raise SystemExit(f"README.md: the ```sh block after <!-- {name} --> is never closed")
    raise SystemExit(f"README.md has no <!-- {name}: ... --> comment")


def main() -> None:
    readme = Path(__file__).resolve().parent.parent / "README.md"
    if len(sys.argv) == 3 and sys.argv[1] == "shell":
        print(marked_shell_block(readme.read_text(encoding="utf-8"), sys.argv[2]), end="")
        return
    if len(sys.argv) != 3 or sys.argv[1] not in EXTENSIONS:
        raise SystemExit(__doc__)
    language, out = sys.argv[1], Path(sys.argv[2])
    out.mkdir(parents=True, exist_ok=True)
    for number, code in enumerate(blocks(readme.read_text(encoding="utf-8"), language), 1):
        path = out / f"readme_{number}.{EXTENSIONS[language]}"
        path.write_text(code, encoding="utf-8")
        print(path)


if __name__ == "__main__":
    main()
