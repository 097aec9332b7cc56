"""The package's modules import each other at the top only, in one
direction: no import inside a function or method (an import there hides a
dependency until the call), and no cycle among the package's modules
(counting every import, also one under ``if TYPE_CHECKING``)."""

from __future__ import annotations

import ast
from pathlib import Path
from typing import Dict, List, Optional, Set

import ydbview

PACKAGE = Path(ydbview.__file__).resolve().parent


def _modules() -> Dict[str, ast.Module]:
    return {path.stem: ast.parse(path.read_text(encoding="utf-8"), str(path))
            for path in sorted(PACKAGE.glob("*.py"))}


def _imports_in_functions(tree: ast.Module) -> List[int]:
    lines: List[int] = []
    for function in ast.walk(tree):
        if isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            lines.extend(node.lineno for node in ast.walk(function)
                         if isinstance(node, (ast.Import, ast.ImportFrom)))
    return lines


def _package_imports(tree: ast.Module, modules: Set[str]) -> Set[str]:
    """The package's modules that ``tree`` imports (``__init__`` for ``from . import x`` of a name)."""
    found: Set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.level == 1:
            if node.module is not None:
                found.add(node.module.split(".")[0])
            else:  # from . import a, b: modules, or names of __init__
                found.update(alias.name if alias.name in modules else "__init__" for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and (node.module or "").startswith("ydbview."):
            found.add(node.module.split(".")[1])  # type: ignore[union-attr]
        elif isinstance(node, ast.Import):
            found.update(alias.name.split(".")[1] for alias in node.names
                         if alias.name.startswith("ydbview."))
    return found


def _cycle(graph: Dict[str, Set[str]]) -> Optional[List[str]]:
    """A cycle of ``graph`` as the modules along it, or None."""
    state: Dict[str, str] = {}  # "open" while on the path, "done" after
    path: List[str] = []

    def visit(module: str) -> Optional[List[str]]:
        state[module] = "open"
        path.append(module)
        for imported in sorted(graph.get(module, ())):
            if state.get(imported) == "open":
                return path[path.index(imported):] + [imported]
            if imported not in state:
                found = visit(imported)
                if found:
                    return found
        path.pop()
        state[module] = "done"
        return None

    for module in sorted(graph):
        if module not in state:
            found = visit(module)
            if found:
                return found
    return None


def test_no_import_inside_a_function() -> None:
    offenders = [f"{name}.py:{line}" for name, tree in _modules().items()
                 for line in _imports_in_functions(tree)]
    assert not offenders, "imports inside functions: " + ", ".join(offenders)


def test_the_package_imports_form_no_cycle() -> None:
    modules = _modules()
    graph = {name: _package_imports(tree, set(modules)) - {name} for name, tree in modules.items()}
    assert graph["store"] and graph["views"], "the walk found no import at all"
    cycle = _cycle(graph)
    assert cycle is None, "import cycle: " + " -> ".join(cycle or [])


def test_the_cycle_finder_finds_cycles() -> None:
    # guard against a check that silently passes
    assert _cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert _cycle({"a": {"b", "c"}, "b": {"c"}, "c": set()}) is None
    tree = ast.parse("def f():\n    from . import store\n")
    assert _imports_in_functions(tree) == [2]
