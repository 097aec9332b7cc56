"""include/ydbview.h, parsed, against what the package declares in
``_ffi``: every function's return and argument types, every constant's
value, every struct's members (names, order, types) and layout, every
callback type and every opaque handle type. A declaration changed on one
side only fails here instead of corrupting memory at run time.

The parser is ours and knows only the header's own style: one prototype
per statement, ``#define YDB_*`` constants, ``typedef struct NAME {...}
NAME;`` member lists (``size_t a, b;`` included), ``typedef struct NAME
NAME;`` opaque handles and ``typedef RET (*NAME)(...);`` callbacks. The C
sizes, offsets and constant values come from gcc compiling a small program
against the header (skipped without gcc)."""

from __future__ import annotations

import ctypes
import re
import shutil
import subprocess
from ctypes import POINTER, c_char_p, c_double, c_int, c_int64, c_size_t, c_uint, c_uint64, c_void_p
from pathlib import Path
from typing import Any, Dict, List, Optional, Tuple

import pytest

import ydbview
from ydbview import _ffi, errors, mappings, notifications, views

HEADER = Path(__file__).resolve().parents[3] / "include" / "ydbview.h"

pytestmark = pytest.mark.skipif(not HEADER.is_file(), reason="include/ydbview.h is not next to these tests")

#: Functions of the header Python does not wrap, each with why.
NOT_WRAPPED = {
    # Python reads a row change with ydb_changeset_row, one call a change;
    # these read one answer each.
    "ydb_changeset_row_type", "ydb_changeset_row_index_path",
    "ydb_changeset_row_new_index_path", "ydb_changeset_row_original_position",
    "ydb_changeset_row_final_position", "ydb_changeset_row_original_group",
    "ydb_changeset_row_final_group", "ydb_changeset_row_changes", "ydb_changeset_row_collection",
    "ydb_changeset_row_key",
    # RangeOptions.copy_with_new_length does this on Python's own dataclass.
    "ydb_range_options_set_length",
}

#: Constants of the header Python has no counterpart of, each with why.
NOT_IN_PYTHON = {
    "YDB_VIEW_DEFINITION_MIN_SIZE",   # Python always passes its whole struct
    "YDB_FTS_INDEX_DEFINITION_MIN_SIZE",  # likewise
    "YDB_RANGE_MAX_OFFSET",           # Python lets C refuse larger offsets
}

SCALARS = {"int": c_int, "unsigned int": c_uint, "size_t": c_size_t, "int64_t": c_int64,
           "uint64_t": c_uint64, "double": c_double}


# ---------------------------------------------------------------------------
# The header, parsed
# ---------------------------------------------------------------------------

class Header:
    def __init__(self, text: str) -> None:
        code = re.sub(r"/\*.*?\*/", " ", text, flags=re.S)
        code = re.sub(r"\\\n", " ", code)
        self.defines: Dict[str, str] = {
            name: value.strip() for name, value in re.findall(r"^\s*#define\s+(YDB\w*)[ \t]+(.+)$", code, re.M)}
        body = re.sub(r"^\s*#.*$", " ", code, flags=re.M).replace('extern "C" {', " ")
        self.opaque = set(re.findall(r"typedef\s+struct\s+(ydb_\w+)\s+\1\s*;", body))
        self.structs: Dict[str, List[Tuple[str, str]]] = {}
        for name, members in re.findall(r"typedef\s+struct\s+(ydb_\w+)\s*\{(.*?)\}\s*\1\s*;", body, re.S):
            self.structs[name] = [field for member in members.split(";") if member.strip()
                                  for field in _declarators(member)]
        self.callbacks: Dict[str, Tuple[str, List[str]]] = {
            name: (" ".join(ret.split()), _params(params))
            for ret, name, params in re.findall(r"typedef\s+([\w\s\*]+?)\s*\(\s*\*\s*(ydb_\w+)\s*\)\s*\(([^)]*)\)\s*;",
                                                body)}
        self.enums: Dict[str, int] = {}
        for members in re.findall(r"enum\s*\w*\s*\{(.*?)\}", body, re.S):
            value = -1
            for item in filter(None, (m.strip() for m in members.split(","))):
                name, _, given = item.partition("=")
                value = int(given, 0) if given.strip() else value + 1
                self.enums[name.strip()] = value
        self.functions: Dict[str, Tuple[str, List[str]]] = {}
        for statement in re.split(r"[;{}]", body):
            statement = " ".join(statement.split())
            match = re.fullmatch(r"(.+?)\b(ydb_\w+)\s*\((.*)\)", statement)
            if match and not statement.startswith("typedef"):
                ret, name, params = match.groups()
                self.functions[name] = (ret.strip(), _params(params))


def _params(text: str) -> List[str]:
    """Each parameter's type, its name dropped."""
    text = text.strip()
    if text in ("", "void"):
        return []
    return [_type_of(p)[0] for p in text.split(",")]


def _type_of(declaration: str) -> Tuple[str, str]:
    """(type, name) of ``const char *name``: the type normalised to words
    and stars (``const char *``)."""
    match = re.fullmatch(r"(.*?)(\w+)", " ".join(declaration.split()))
    assert match, declaration
    kind = re.sub(r"\s*\*\s*", " *", match.group(1).strip()).replace("* *", "**")
    return kind.strip(), match.group(2)


def _declarators(member: str) -> List[Tuple[str, str]]:
    """``size_t a, b`` as [(a, size_t), (b, size_t)]."""
    first, *rest = [part.strip() for part in member.split(",")]
    kind, name = _type_of(first)
    return [(name, kind)] + [(extra, kind) for extra in rest]


HEADER_TEXT = HEADER.read_text(encoding="utf-8") if HEADER.is_file() else ""
PARSED = Header(HEADER_TEXT)


# ---------------------------------------------------------------------------
# C types as ctypes
# ---------------------------------------------------------------------------

def handle_class(c_name: str) -> Any:
    """``ydb_sort_key`` -> ``_ffi.SortKeyPointer``."""
    return getattr(_ffi, "".join(w.capitalize() for w in c_name[4:].split("_")) + "Pointer", None)


def struct_classes() -> Dict[str, Any]:
    """The package's ctypes Structures by the C struct their docstring names."""
    found = {}
    for value in vars(_ffi).values():
        if isinstance(value, type) and issubclass(value, ctypes.Structure) and value.__doc__:
            match = re.match(r"``(ydb_\w+)``", value.__doc__)
            if match:
                found[match.group(1)] = value
    return found


def _split(kind: str) -> Tuple[str, int]:
    """``const ydb_notification *const *`` -> (``ydb_notification``, 2)."""
    stars = kind.count("*")
    base = " ".join(w for w in kind.replace("*", " ").split() if w != "const")
    return base, stars


def acceptable(kind: str, callback: bool = False) -> List[Any]:
    """The ctypes types that pass C type ``kind`` correctly. Inside a
    callback's arguments pointers may be plain addresses (c_void_p): the
    package reads them with from_address, for speed (see _ffi)."""
    base, stars = _split(kind)
    loose = [c_void_p] if callback else []
    if stars == 0:
        if base == "void":
            return [None]
        if base in SCALARS:
            return [SCALARS[base]]
        if base in PARSED.callbacks:
            return [("callback", base)]
        raise AssertionError(f"no ctypes for {kind!r}")
    if base in PARSED.opaque:
        cls = handle_class(base)
        return ([cls] + loose) if stars == 1 else [POINTER(cls)]
    if base in PARSED.structs:
        cls = struct_classes().get(base)
        return [POINTER(cls)] + loose if stars == 1 else loose
    if base == "char":
        return [c_char_p] + loose if stars == 1 else [POINTER(c_char_p), POINTER(c_void_p), c_void_p]
    if base == "void":
        return [c_void_p] if stars == 1 else [POINTER(c_void_p), c_void_p]
    if base in SCALARS:
        return [POINTER(SCALARS[base]), c_void_p] if stars == 1 else [c_void_p]
    raise AssertionError(f"no ctypes for {kind!r}")


def mismatch(kind: str, declared: Any, callback: bool = False) -> Optional[str]:
    """Why ``declared`` cannot pass C type ``kind``, or None when it can."""
    options = acceptable(kind, callback)
    for option in options:
        if isinstance(option, tuple):
            if isinstance(declared, type) and issubclass(declared, ctypes._CFuncPtr):  # type: ignore[attr-defined]
                return callback_mismatch(option[1], declared)
            return f"{kind} wants a CFUNCTYPE, not {declared}"
        if declared is option:
            return None
    return f"{kind} wants one of {options}, not {declared}"


def callback_mismatch(c_name: str, prototype: Any) -> Optional[str]:
    ret, params = PARSED.callbacks[c_name]
    if len(prototype._argtypes_) != len(params):
        return f"{c_name} takes {len(params)} arguments, its CFUNCTYPE {len(prototype._argtypes_)}"
    problems = [mismatch(ret, prototype._restype_ if ret != "void" else None, callback=True)
                if ret != "void" else (None if prototype._restype_ is None else f"{c_name} returns void")]
    problems += [mismatch(kind, declared, callback=True) for kind, declared in zip(params, prototype._argtypes_)]
    found = [p for p in problems if p]
    return f"{c_name}: {found}" if found else None


# ---------------------------------------------------------------------------
# Functions, handles, callbacks
# ---------------------------------------------------------------------------

def test_the_parser_reads_the_whole_header() -> None:
    # As many prototypes as lines that start one, and the shapes it knows.
    starts = re.findall(r"^(?:int|void|const char \*)\s*ydb_\w+\(", HEADER_TEXT, re.M)
    assert len(PARSED.functions) == len(starts) > 150
    assert PARSED.structs["ydb_row_change"][2:4] == [("section", "size_t"), ("row", "size_t")]
    assert PARSED.callbacks["ydb_name_fn"] == ("int", ["void *", "const char *"])
    assert {"ydb_txn", "ydb_connection", "ydb_sort_key_batch"} <= PARSED.opaque


def test_every_function_is_wrapped_or_allowed() -> None:
    missing = sorted(set(PARSED.functions) - set(_ffi._SIGNATURES) - NOT_WRAPPED)
    assert not missing, f"declared in the header, missing from _ffi._SIGNATURES: {missing}"
    unknown = sorted(set(_ffi._SIGNATURES) - set(PARSED.functions))
    assert not unknown, f"in _ffi._SIGNATURES but not in the header: {unknown}"
    stale = sorted(NOT_WRAPPED & set(_ffi._SIGNATURES) | NOT_WRAPPED - set(PARSED.functions))
    assert not stale, f"NOT_WRAPPED names wrapped or unknown functions: {stale}"


@pytest.mark.parametrize("name", sorted(_ffi._SIGNATURES))
def test_signature_matches_the_header(name: str) -> None:
    restype, argtypes = _ffi._SIGNATURES[name]
    ret, params = PARSED.functions[name]
    assert len(argtypes) == len(params), f"{name}: the header has {len(params)} arguments, Python {len(argtypes)}"
    problem = mismatch(ret, restype) if ret != "void" else (None if restype is None else "void wants None")
    problems = [f"return: {problem}"] if problem else []
    for index, (kind, declared) in enumerate(zip(params, argtypes)):
        problem = mismatch(kind, declared)
        if problem:
            problems.append(f"argument {index + 1}: {problem}")
    assert not problems, f"{name}: {problems}"


def test_each_handle_kind_is_its_own_type() -> None:
    classes = {name: handle_class(name) for name in PARSED.opaque}
    assert all(classes.values()), f"no handle class for {[n for n, c in classes.items() if c is None]}"
    assert len(set(classes.values())) == len(classes)
    assert all(issubclass(cls, c_void_p) and cls is not c_void_p for cls in classes.values())


def test_a_handle_of_another_kind_is_refused_before_c_sees_it(tmp_path: Path) -> None:
    database, connection = _ffi.DatabasePointer(), _ffi.ConnectionPointer()
    assert _ffi.lib.ydb_database_open(str(tmp_path / "h.sqlite").encode(), ctypes.byref(database)) == 0
    try:
        assert _ffi.lib.ydb_connection_open(database, ctypes.byref(connection)) == 0
        # ctypes reports the TypeError from_param raised as an ArgumentError naming it.
        with pytest.raises(ctypes.ArgumentError, match="TypeError"):
            _ffi.lib.ydb_txn_commit(connection)
        with pytest.raises(ctypes.ArgumentError):
            _ffi.lib.ydb_connection_close(database)
        wrong_out = _ffi.TxnPointer()
        with pytest.raises(ctypes.ArgumentError):
            _ffi.lib.ydb_connection_open(database, ctypes.byref(wrong_out))
        assert _ffi.lib.ydb_connection_close(connection) == 0
    finally:
        assert _ffi.lib.ydb_database_close(database) == 0


@pytest.mark.parametrize("name", sorted(PARSED.callbacks))
def test_callback_type_matches_the_header(name: str) -> None:
    # Every callback type the header declares has a CFUNCTYPE in _ffi that
    # passes it (the same one the signatures use).
    prototypes = [value for key, value in vars(_ffi).items() if key.endswith("_FN") and isinstance(value, type)]
    matches = [p for p in prototypes if callback_mismatch(name, p) is None]
    assert matches, f"no CFUNCTYPE in _ffi matches {name}: " + "; ".join(
        str(callback_mismatch(name, p)) for p in prototypes if len(p._argtypes_) == len(PARSED.callbacks[name][1]))


# ---------------------------------------------------------------------------
# Constants
# ---------------------------------------------------------------------------

def python_constants() -> Dict[str, int]:
    """Each header constant's Python counterpart, by the naming rule the
    package follows (Status.OK is YDB_OK, Flavour.KEY is YDB_FLAVOUR_KEY...)."""
    table: Dict[str, int] = {}
    families = [("YDB_", errors.Status), ("YDB_ROW_", notifications.RowChange), ("YDB_FLAVOUR_", views.Flavour),
                ("YDB_INVOKE_", views.InvokeOptions), ("YDB_VIEW_", views.RegistrationOutcome),
                ("YDB_SECTION_", mappings.SectionChangeType), ("YDB_CHANGE_", mappings.ChangeType),
                ("YDB_CHANGED_", mappings.ChangeFlags), ("YDB_STEP_", mappings.StepType)]
    for prefix, enum_type in families:
        for member_name, member in enum_type.__members__.items():  # flags made of others too
            if member_name not in ("NONE", "INSERT_ONLY"):  # Python's names for 0
                table[prefix + member_name] = int(member)
    for prefix, values in [("YDB_RANGE_", mappings._KINDS), ("YDB_PIN_", mappings._PINS),
                           ("YDB_GROW_", mappings._GROWS)]:
        table.update({prefix + key.upper(): value for key, value in values.items()})
    table.update(YDB_INVOKE_DEFAULT=views._INVOKE_DEFAULT, YDB_NO_GROUP=views._NO_GROUP,
                 YDB_INDEX_END=_ffi.INDEX_END, YDB_NO_INDEX=_ffi.NO_INDEX, YDB_OPEN_MULTI_PROCESS=_ffi.OPEN_MULTI_PROCESS,
                 YDBVIEW_VERSION_NUMBER=_ffi.version_number)
    return table


def header_constants() -> Dict[str, str]:
    """The header's integer constants (not the include guard, the version
    string or the _INIT initialisers)."""
    return {name: value for name, value in PARSED.defines.items()
            if name != "YDBVIEW_H" and not value.startswith(("{", '"'))}


def literal(value: str) -> Optional[int]:
    match = re.fullmatch(r"\(?\s*(-?(?:0x[0-9a-fA-F]+|\d+))[uUlL]*\s*\)?", value)
    return int(match.group(1), 0) if match else None


def test_every_constant_has_its_python_value() -> None:
    python, header = python_constants(), header_constants()
    unknown = sorted(set(python) - set(header))
    assert not unknown, f"Python names constants the header lacks: {unknown}"
    missing = sorted(set(header) - set(python) - NOT_IN_PYTHON)
    assert not missing, f"header constants with no Python counterpart: {missing}"
    for name, value in header.items():
        if name in python and literal(value) is not None:
            assert python[name] == literal(value), f"{name} is {value} in the header, {python[name]} in Python"
    assert PARSED.defines["YDBVIEW_VERSION"].strip('"') == ydbview.__version__


# ---------------------------------------------------------------------------
# Structs
# ---------------------------------------------------------------------------

@pytest.mark.parametrize("name", sorted(PARSED.structs))
def test_struct_members_match_the_header(name: str) -> None:
    cls = struct_classes().get(name)
    assert cls is not None, f"no ctypes Structure names ``{name}`` in its docstring"
    members = PARSED.structs[name]
    declared = [(field[0], field[1]) for field in cls._fields_]
    assert [m for m, _ in members] == [d for d, _ in declared], f"{name}: member names or order differ"
    problems = [f"{member}: {mismatch(kind, ctype)}" for (member, kind), (_, ctype) in zip(members, declared)
                if mismatch(kind, ctype)]
    assert not problems, f"{name}: {problems}"


# ---------------------------------------------------------------------------
# What gcc says: sizes, offsets, constant values
# ---------------------------------------------------------------------------

@pytest.fixture(scope="module")
def compiled(tmp_path_factory: pytest.TempPathFactory) -> Dict[str, int]:
    """name -> value, printed by a C program built against the header:
    ``sizeof:S``, ``offsetof:S.m`` and each integer constant."""
    gcc = shutil.which("gcc")
    if gcc is None:
        pytest.skip("gcc is not installed: C sizes, offsets and constant values are not checked")
    lines = ['#include <stdio.h>', '#include "ydbview.h"', "int main(void) {"]
    for struct, members in PARSED.structs.items():
        lines.append(f'    printf("sizeof:{struct} %zu\\n", sizeof({struct}));')
        lines += [f'    printf("offsetof:{struct}.{m} %zu\\n", offsetof({struct}, {m}));' for m, _ in members]
    for name in header_constants():
        lines.append(f'    printf("{name} %lld\\n", (long long)({name}));')
    lines.append("    return 0;\n}\n")
    folder = tmp_path_factory.mktemp("abi")
    (folder / "abi.c").write_text("\n".join(lines), encoding="utf-8")
    subprocess.run([gcc, "-std=c99", "-Wall", "-Werror", "-I", str(HEADER.parent), "-o", str(folder / "abi"),
                    str(folder / "abi.c")], check=True)
    output = subprocess.run([str(folder / "abi")], check=True, capture_output=True, text=True).stdout
    return {name: int(value) for name, value in (line.split() for line in output.splitlines())}


def test_struct_sizes_and_offsets_match_c(compiled: Dict[str, int]) -> None:
    for name, cls in struct_classes().items():
        assert ctypes.sizeof(cls) == compiled[f"sizeof:{name}"], f"sizeof({name})"
        for member, _ in PARSED.structs[name]:
            assert getattr(cls, member).offset == compiled[f"offsetof:{name}.{member}"], f"{name}.{member}"


def test_constant_values_match_c(compiled: Dict[str, int]) -> None:
    python = python_constants()
    for name in header_constants():
        if name in python:
            c_value = compiled[name] % (1 << 64) if python[name] >= 0 else compiled[name]
            assert python[name] == c_value, f"{name} is {compiled[name]} in C, {python[name]} in Python"
