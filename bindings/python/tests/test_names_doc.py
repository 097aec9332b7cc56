"""docs/yapdatabase-names.md is followed literally by people coming from
YapDatabase, so its Python column must be callable as written: every method,
function or class it names exists on the object the row says, its argument
names are the real parameter names in the real order (a swapped pair is a
TypeError or, worse, a silently wrong call), properties are not shown as calls
nor methods as properties. Every ``ydb_*``/``YDB_*`` name of the C column is
declared in include/ydbview.h."""

from __future__ import annotations

import builtins
import dataclasses
import inspect
import re
from pathlib import Path
from typing import Any, Dict, List, Optional, Tuple

import pytest

import ydbview

ROOT = Path(__file__).resolve().parents[3]
DOC = ROOT / "docs" / "yapdatabase-names.md"
HEADER = ROOT / "include" / "ydbview.h"

# The doc's abbreviations (its opening paragraph) for the objects methods are
# shown on. `t` is a read-write transaction: it has every transaction method.
RECEIVERS: Dict[str, Any] = {
    "db": ydbview.Database,
    "conn": ydbview.Connection,
    "t": ydbview.ReadWriteTransaction,
    "v": ydbview.ViewTransaction,
    "m": ydbview.Mappings,
    "ydbview": ydbview,
}

# Sections whose bare names (no receiver) are members of one class.
SECTION_CLASSES: Dict[str, Tuple[Any, ...]] = {
    "Range options": (ydbview.RangeOptions,),
    "Changesets": (ydbview.ViewRowChange, ydbview.ViewSectionChange),
}

# Names the doc uses for the user's own callback, not for package API.
PLACEHOLDER_CALLS = {"fn"}

LITERAL = "<literal>"
# `name=` in the view tables: an argument of register_view or of the
# grouping/sorting decorators and classes.
KEYWORD_TARGETS = (ydbview.Database.register_view, ydbview.grouping, ydbview.sorting,
                   ydbview.key_sorting, ydbview.Grouping, ydbview.Sorting)

CALL = re.compile(r"(?<![\w.])((?:\w+\.)*)(\w+)\(([^()]*)\)")
ATTRIBUTE = re.compile(r"^(\w+)\.(\w+)$")
BARE = re.compile(r"^(\w+)(=)?$")


def rows(text: str) -> List[Tuple[str, int, List[str]]]:
    """(section, line number, cells) of every body row of a four-column table."""
    section = ""
    found: List[Tuple[str, int, List[str]]] = []
    for number, line in enumerate(text.splitlines(), 1):
        if line.startswith("## "):
            section = line[3:].split(" (")[0].strip()
            continue
        if not line.startswith("|") or set(line) <= set("|-: "):
            continue
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        if cells[0] == "YapDatabase":
            continue  # the header row
        assert len(cells) == 4, f"line {number}: expected 4 cells, got {len(cells)}"
        found.append((section, number, cells))
    return found


def spans(cell: str) -> List[str]:
    return re.findall(r"`([^`]+)`", cell)


def _members(cls: Any) -> Dict[str, Any]:
    """Name -> raw class attribute, across the MRO, plus dataclass and
    NamedTuple fields (which need not be class attributes)."""
    if inspect.ismodule(cls):
        return dict(vars(cls))
    members: Dict[str, Any] = {}
    for klass in reversed(cls.__mro__):
        members.update(vars(klass))
        for name in getattr(klass, "__annotations__", {}):
            members.setdefault(name, None)
    if dataclasses.is_dataclass(cls):
        for field in dataclasses.fields(cls):
            members.setdefault(field.name, None)
    return members


def _signature(target: Any) -> List[inspect.Parameter]:
    parameters = list(inspect.signature(target).parameters.values())
    if parameters and parameters[0].name in ("self", "cls"):
        parameters = parameters[1:]
    return parameters


def check_arguments(where: str, target: Any, arguments: str) -> List[str]:
    """Problems with calling target the way the doc writes the arguments."""
    problems: List[str] = []
    parameters = _signature(target)
    by_name = {p.name: p for p in parameters}
    has_var_keyword = any(p.kind is p.VAR_KEYWORD for p in parameters)
    positional_slots = [p for p in parameters if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    shown_positional: List[str] = []
    shown_keyword: List[str] = []
    elided = False
    for argument in (a.strip() for a in arguments.split(",")):
        if not argument:
            continue
        if argument in ("…", "..."):
            elided = True
            continue
        keyword = re.match(r"^(\w+)=", argument)
        if keyword:
            shown_keyword.append(keyword.group(1))
        elif re.match(r"^\w+$", argument) or re.match(r"^(\"[^\"]*\"|'[^']*'|\d+)$", argument):
            if shown_keyword:
                problems.append(f"{where}: positional {argument!r} after a keyword argument")
            # a literal ("name") stands for its parameter, whatever its name
            shown_positional.append(argument if re.match(r"^\w+$", argument) and not argument.isdigit()
                                    else LITERAL)
        else:
            problems.append(f"{where}: cannot read argument {argument!r}")
    real = [p.name for p in positional_slots[:len(shown_positional)]]
    shown_positional = [r if s == LITERAL else s for s, r in zip(shown_positional, real)] + \
        shown_positional[len(real):]
    if len(shown_positional) > len(positional_slots) and not any(
            p.kind is p.VAR_POSITIONAL for p in parameters):
        problems.append(f"{where}: {len(shown_positional)} positional arguments shown, "
                        f"takes {len(positional_slots)} ({', '.join(p.name for p in positional_slots)})")
    elif shown_positional[:len(real)] != real:
        problems.append(f"{where}: arguments ({', '.join(shown_positional)}) but the signature "
                        f"is {inspect.signature(target)}")
    for name in shown_keyword:
        if name not in by_name and not has_var_keyword:
            problems.append(f"{where}: no keyword argument {name!r} in {inspect.signature(target)}")
        elif name in by_name and by_name[name].kind is inspect.Parameter.POSITIONAL_ONLY:
            problems.append(f"{where}: {name!r} is positional only")
    if not elided:
        covered = set(shown_positional[:len(positional_slots)]) | set(shown_keyword)
        for parameter in parameters:
            required = parameter.default is inspect.Parameter.empty and parameter.kind not in (
                parameter.VAR_POSITIONAL, parameter.VAR_KEYWORD)
            if required and parameter.name not in covered:
                problems.append(f"{where}: required argument {parameter.name!r} not shown "
                                f"(signature {inspect.signature(target)})")
    return problems


def _callable_of(owner: Any, name: str, raw: Any) -> Any:
    """What a call of owner.name runs: a class's constructor, a method."""
    if inspect.isclass(raw):
        return raw
    return getattr(owner, name)


def check_python_span(section: str, where: str, span: str) -> List[str]:
    problems: List[str] = []
    calls = list(CALL.finditer(span))
    for call in calls:
        prefix, name, arguments = call.group(1).rstrip("."), call.group(2), call.group(3)
        label = f"{where}: `{call.group(0)}`"
        if not prefix:
            if name in PLACEHOLDER_CALLS:
                continue
            if inspect.isclass(getattr(ydbview, name, None)):
                owner: Any = ydbview
            else:
                owners = [cls for cls in SECTION_CLASSES.get(section, ()) if name in _members(cls)]
                if not owners:
                    problems.append(f"{label}: {name} is neither a ydbview class nor a member "
                                    f"of this section's class")
                    continue
                owner = owners[0]
        elif prefix in RECEIVERS:
            owner = RECEIVERS[prefix]
        elif inspect.isclass(getattr(ydbview, prefix, None)):
            owner = getattr(ydbview, prefix)
        else:
            problems.append(f"{label}: unknown receiver {prefix!r}")
            continue
        members = _members(owner)
        if name not in members:
            problems.append(f"{label}: {getattr(owner, '__name__', owner)} has no {name!r}")
            continue
        if isinstance(members[name], property):
            problems.append(f"{label}: {name} is a property, not a method")
            continue
        problems.extend(check_arguments(label, _callable_of(owner, name, members[name]), arguments))
    if calls:
        return problems
    attribute = ATTRIBUTE.match(span)
    if attribute and attribute.group(1) in RECEIVERS:
        owner = RECEIVERS[attribute.group(1)]
        members = _members(owner)
        name = attribute.group(2)
        if name not in members:
            problems.append(f"{where}: `{span}`: {owner.__name__} has no {name!r}")
        elif inspect.isfunction(members[name]):
            problems.append(f"{where}: `{span}` is a method: call it")
        return problems
    bare = BARE.match(span)
    if bare:
        name, is_keyword = bare.group(1), bool(bare.group(2))
        if is_keyword:
            # `name=` in the view registration table: an argument of register_view.
            targets: List[Any] = list(SECTION_CLASSES.get(section, KEYWORD_TARGETS))
            if not any(name in inspect.signature(t).parameters for t in targets):
                problems.append(f"{where}: `{span}` is not an argument of "
                                f"{', '.join(getattr(t, '__qualname__', str(t)) for t in targets)}")
        elif hasattr(builtins, name):
            pass  # None, True, int: Python's own
        elif name[:1].isupper():
            if not hasattr(ydbview, name):
                problems.append(f"{where}: `{span}`: ydbview has no {name!r}")
        elif section in SECTION_CLASSES:
            if not any(name in _members(cls) for cls in SECTION_CLASSES[section]):
                problems.append(f"{where}: `{span}` is not a member of "
                                f"{', '.join(c.__name__ for c in SECTION_CLASSES[section])}")
    return problems


def python_problems(text: str) -> List[str]:
    problems: List[str] = []
    for section, number, cells in rows(text):
        for span in spans(cells[3]):
            problems.extend(check_python_span(section, f"line {number}", span))
    return problems


C_NAME = re.compile(r"\b((?:ydb|YDB)_\w+)((?:/\w+)+|\*)?")


def c_names(cell: str) -> List[str]:
    """The C names of a cell; `YDB_CHANGE_INSERT/DELETE` stands for two."""
    names: List[str] = []
    for span in spans(cell):
        for match in C_NAME.finditer(span):
            first = match.group(1)
            if match.group(2) == "*":
                names.append(first + "*")   # `YDB_INVOKE_*`: some name with this prefix
                continue
            names.append(first)
            stem = first.rsplit("_", 1)[0]
            for alternative in (match.group(2) or "").split("/")[1:]:
                names.append(f"{stem}_{alternative}")
    return names


def declared(header: str, name: str) -> bool:
    if name.endswith("*"):
        return any(declared(header, n) for n in set(re.findall(rf"\b{name[:-1]}\w+", header)))
    if re.search(rf"\b{name}\s*\(", header):                               # a function
        return True
    if re.search(rf"\b(typedef|struct|enum)\b[^;{{]*\b{name}\b", header):  # a type
        return True
    return bool(re.search(rf"#define\s+{name}\b", header))                # a constant


def c_problems(text: str, header: str) -> List[str]:
    # Comments mention names too; only declarations count.
    code = re.sub(r"/\*.*?\*/", "", header, flags=re.S)
    code = re.sub(r"//[^\n]*", "", code)
    return [f"line {number}: `{name}` is not declared in include/ydbview.h"
            for _section, number, cells in rows(text)
            for name in c_names(cells[2]) if not declared(code, name)]


@pytest.fixture(scope="module")
def doc_text() -> str:
    if not DOC.exists():
        pytest.skip("docs/yapdatabase-names.md is not beside this checkout's bindings")
    return DOC.read_text(encoding="utf-8")


def test_the_tables_have_rows(doc_text: str) -> None:
    # A parser that finds nothing would pass everything below.
    assert len(rows(doc_text)) > 80
    assert sum(len(CALL.findall(cells[3])) for _s, _n, cells in rows(doc_text)) > 50


def test_python_column_matches_the_package(doc_text: str) -> None:
    problems = python_problems(doc_text)
    assert not problems, "\n".join(problems)


def test_c_column_is_declared_in_the_header(doc_text: str) -> None:
    if not HEADER.exists():
        pytest.skip("include/ydbview.h is not beside this checkout's bindings")
    problems = c_problems(doc_text, HEADER.read_text(encoding="utf-8"))
    assert not problems, "\n".join(problems)


# The checker itself, on rows with the mistakes it is there to catch.
@pytest.mark.parametrize("row, fragment", [
    ("`v.key_at(index, group)`", "signature"),
    ("`v.key_at(group)`", "required argument 'index'"),
    ("`m.number_of_sections()`", "property"),
    ("`m.set_range_options`", "method"),
    ("`v.no_such_method(group)`", "has no"),
    ("`db.register_view(name, grouping, sorting, colections=…)`", "no keyword"),
])
def test_the_checker_catches_wrong_rows(row: str, fragment: str) -> None:
    text = f"## S\n\n| YapDatabase | Swift | C | Python |\n|---|---|---|---|\n| x | x | x | {row} |\n"
    problems = python_problems(text)
    assert any(fragment in p for p in problems), problems


def test_the_checker_catches_undeclared_c_names() -> None:
    text = "| YapDatabase | Swift | C | Python |\n|---|---|---|---|\n| x | x | `ydb_view_key_at` / `YDB_CHANGE_INSERT/NOPE` | x |\n"
    header = "int ydb_view_key_at(void);\n#define YDB_CHANGE_INSERT 1\n"
    assert c_problems(text, header) == ["line 3: `YDB_CHANGE_NOPE` is not declared in include/ydbview.h"]
