"""Mappings (a view's groups as table sections) and changesets (what a
table must do to follow the view from one snapshot to a later one).

>>> mappings = Mappings(["sci-fi", "fantasy"], "books")            # doctest: +SKIP
>>> mappings.set_range_options("sci-fi", RangeOptions.fixed(20, offset=0, pin="beginning"))
>>> ui.begin_long_lived_read_transaction()
>>> with ui.read() as t:
...     mappings.update(t)
>>> mappings.number_of_sections, mappings.number_of_items_in_section(0)
>>> # after commits elsewhere:
>>> changeset = mappings.changes(ui.begin_long_lived_read_transaction())
>>> for change in changeset.row_changes: print(change.to_dict())

Method names are YapDatabase's in snake_case. Arguments go container
first: a group before an index in it, a table position as one
``IndexPath`` / ``(section, row)``. Lookups that find nothing return None. A ``Mappings`` is meant for
one thread (like the table it drives); the C layer locks it, so sharing it
never corrupts memory, but the answers then depend on timing.
"""

from __future__ import annotations

import enum
import weakref
from ctypes import byref, c_char_p, c_int, c_size_t, c_uint64
from dataclasses import dataclass, field, replace
from typing import Any, Callable, Dict, Iterable, List, Literal, NamedTuple, Optional, Tuple, Union

from . import _callbacks, _ffi
from ._base import _c_int, _check, _Closeable, _count, _enumerate, _index, _Transaction
from ._ffi import lib
from ._text import decode, encode
from ._values import IndexPath
from .errors import InvalidArgumentError, MisuseError, Status
from .notifications import CommitNotification, _NotificationList

__all__ = [
    "IndexPath",
    "RangePosition",
    "RangeOptions",
    "Mappings",
    "Changeset",
    "ViewSectionChange",
    "ViewRowChange",
    "ChangeType",
    "SectionChangeType",
    "ChangeFlags",
]


class RangePosition(NamedTuple):
    """Where a group's window stands in the whole group, in display order."""

    offset_from_beginning: int
    offset_from_end: int
    length: int


_PINS = {"beginning": 0, "end": 1}
_GROWS = {"pin_side": 0, "non_pin_side": 1, "both_sides": 2}
_KINDS = {"fixed": 1, "flexible": 2}


@dataclass(frozen=True)
class RangeOptions:
    """A window onto one group: ``length`` rows, ``offset`` rows away from
    ``pin`` ("beginning" or "end"). Fixed ranges never move; flexible ones
    follow their rows, keeping at most ``max_length`` (None: no limit) and at
    least ``min_length`` rows, growing at the edges ``grow`` allows
    ("pin_side", "non_pin_side", "both_sides"). Values are checked when set
    on a mappings (``InvalidArgumentError``).

    ``Mappings.range_options`` gives back a range's *current* ``length`` and
    ``offset`` (YapDatabase's ``rangeOptionsForGroup:``); change a value read
    back and set it again to continue from where the range stands::

        now = mappings.range_options("chat")
        mappings.set_range_options("chat", now.copy_with_new_offset(now.offset + 50))
        mappings.set_range_options("chat", dataclasses.replace(now, max_length=300, grow="both_sides"))

    Values are immutable (hashable, like the Swift struct): the mappings keep
    their own copy, so a changed value is always set again explicitly. The
    settings ``max_length``, ``min_length`` and ``grow`` are changed with
    ``dataclasses.replace``, the length and offset with ``copy_with_new_length``
    and ``copy_with_new_offset``. A fixed range's ``max_length`` is its length
    as set (its ``length`` read back may be less, clipped to the group): change
    it with ``copy_with_new_length``, which sets both."""

    kind: str
    length: int
    offset: int = 0
    pin: str = "beginning"
    max_length: Optional[int] = None
    min_length: int = 0
    grow: str = "pin_side"

    @classmethod
    def fixed(cls, length: int, offset: int = 0, pin: str = "beginning") -> "RangeOptions":
        """Returns a fixed window of ``length`` rows, ``offset`` rows from
        ``pin`` ("beginning" or "end"). Values are checked (and refused with
        ``InvalidArgumentError``) by ``Mappings.set_range_options``."""
        return cls("fixed", length, offset, pin, length, 0, "pin_side")

    @classmethod
    def flexible(cls, length: int, offset: int = 0, pin: str = "beginning", *,
                 max_length: Optional[int] = None, min_length: int = 0,
                 grow: str = "pin_side") -> "RangeOptions":
        """Returns a flexible window (it follows its rows; see the class).
        Values are checked by ``Mappings.set_range_options``."""
        return cls("flexible", length, offset, pin, max_length, min_length, grow)

    @property
    def is_fixed(self) -> bool:
        """True for a fixed window."""
        return self.kind == "fixed"

    @property
    def is_flexible(self) -> bool:
        """True for a flexible window."""
        return self.kind == "flexible"

    def copy_with_new_length(self, length: int) -> "RangeOptions":
        """Returns these options with another ``length`` (YapDatabase's
        ``copyWithNewLength:``). For a fixed range it is a new length as set:
        ``max_length`` becomes ``length`` too. A flexible range may be given 0
        (what an empty window reads back as). Values are checked by
        ``Mappings.set_range_options``."""
        if self.is_fixed:
            return replace(self, length=length, max_length=length)
        return replace(self, length=length)

    def copy_with_new_offset(self, offset: int) -> "RangeOptions":
        """Returns these options with another ``offset`` from the pin
        (YapDatabase's ``copyWithNewOffset:``)."""
        return replace(self, offset=offset)


class ChangeType(enum.IntEnum):
    """A row change's type (``YDB_CHANGE_*``, YapDatabaseViewChangeType)."""

    INSERT = 1
    DELETE = 2
    MOVE = 3
    UPDATE = 4


class SectionChangeType(enum.IntEnum):
    """A section change's type (``YDB_SECTION_*``)."""

    INSERT = 1
    DELETE = 2


class ChangeFlags(enum.IntFlag):
    """What changed (``YDB_CHANGED_*``, YapDatabaseViewChangesBitMask)."""

    NONE = 0
    OBJECT = 1
    METADATA = 2
    DEPENDENCY = 4


@dataclass(frozen=True)
class ViewSectionChange:
    """A section inserted (``index`` final) or deleted (``index`` original)."""

    type: SectionChangeType
    index: int
    group: str

    def to_dict(self) -> Dict[str, Any]:
        """Returns the change as a JSON-ready dict."""
        return {"type": self.type.name.lower(), "index": self.index, "group": self.group}


@dataclass(frozen=True)
class ViewRowChange:
    """One row's change (YapDatabaseViewRowChange). ``index_path`` is the
    original position (delete, move, update), ``new_index_path`` the final
    one (insert, move); ``original_*``/``final_*`` describe where the row was
    and is shown (None when not shown); ``collection``/``key`` are None for a
    row the commits did not touch."""

    type: ChangeType
    index_path: Optional[IndexPath]
    new_index_path: Optional[IndexPath]
    original_group: Optional[str]
    final_group: Optional[str]
    original_section: Optional[int]
    original_index: Optional[int]
    final_section: Optional[int]
    final_index: Optional[int]
    changes: ChangeFlags
    collection: Optional[str]
    key: Optional[str]

    def to_dict(self) -> Dict[str, Any]:
        """Returns the change as a JSON-ready dict (index paths as ``[section, row]``)."""
        def path(value: Optional[IndexPath]) -> Optional[List[int]]:
            return None if value is None else [value.section, value.row]

        return {
            "type": self.type.name.lower(),
            "index_path": path(self.index_path),
            "new_index_path": path(self.new_index_path),
            "original_group": self.original_group,
            "final_group": self.final_group,
            "original_section": self.original_section,
            "original_index": self.original_index,
            "final_section": self.final_section,
            "final_index": self.final_index,
            "changes": sorted(str(flag.name).lower() for flag in ChangeFlags
                              if flag and flag in self.changes),
            "collection": self.collection,
            "key": self.key,
        }


class StepType(enum.IntEnum):
    """An edit step's type (``YDB_STEP_*``)."""

    REMOVE_SECTION = 1
    INSERT_SECTION = 2
    REMOVE_ROW = 3
    INSERT_ROW = 4
    MOVE_ROW = 5
    RELOAD_ROW = 6


@dataclass(frozen=True)
class EditStep:
    """One step of a changeset's edit script (``ydb_edit_step``), valid
    against the table as it stands after the steps before it.

    ``section``/``row``: where the step applies now (``row`` is None for a
    section step; for a move, where the row is before it moves).
    ``to_section``/``to_row``: a move's destination, counted after the row
    was taken out (Qt's ``beginMoveRows`` wants ``to_row + 1`` when moving
    down within one parent). ``original_*``: the row's place in the old
    table (removes, moves); ``final_*``: in the new table (inserts, moves,
    reloads) -- read the row there when ``collection``/``key`` are None.
    ``group``: the section's group, for section steps."""

    type: StepType
    section: int
    row: Optional[int]
    to_section: Optional[int]
    to_row: Optional[int]
    original_section: Optional[int]
    original_row: Optional[int]
    final_section: Optional[int]
    final_row: Optional[int]
    group: Optional[str]
    changes: ChangeFlags
    collection: Optional[str]
    key: Optional[str]
    rowid: Optional[int]

    def to_dict(self) -> Dict[str, Any]:
        """Returns the step as a JSON-ready dict."""
        return {"type": self.type.name.lower(), "section": self.section, "row": self.row,
                "to_section": self.to_section, "to_row": self.to_row,
                "original_section": self.original_section, "original_row": self.original_row,
                "final_section": self.final_section, "final_row": self.final_row,
                "group": self.group,
                "changes": sorted(str(flag.name).lower() for flag in ChangeFlags
                                  if flag and flag in self.changes),
                "collection": self.collection, "key": self.key, "rowid": self.rowid}


# One class per step type, each with the fields its type always has typed
# without Optional, and ``type`` as a Literal: a type checker narrows
# ``if step.type == StepType.INSERT_ROW:`` to InsertRowStep, so the usual
# loop that applies the steps to a list needs no "is not None" for a row
# the step always has. They are EditStep subclasses with the same fields,
# so attribute access, isinstance(step, EditStep) and to_dict() are as
# before. Fields a type does not use keep EditStep's Optional types (they
# are None). The guarantees are the header's (ydb_edit_step's field list);
# test_edit_script.py checks them on every step of its histories.

@dataclass(frozen=True)
class RemoveSectionStep(EditStep):
    """Removes the (empty) section ``section``, which showed ``group``."""

    type: Literal[StepType.REMOVE_SECTION]
    group: str


@dataclass(frozen=True)
class InsertSectionStep(EditStep):
    """Inserts an empty section at ``section``, showing ``group``."""

    type: Literal[StepType.INSERT_SECTION]
    group: str


@dataclass(frozen=True)
class RemoveRowStep(EditStep):
    """Removes row ``row`` of ``section`` (``original_section``/``_row`` in
    the old table)."""

    type: Literal[StepType.REMOVE_ROW]
    row: int
    original_section: int
    original_row: int
    rowid: int


@dataclass(frozen=True)
class InsertRowStep(EditStep):
    """Inserts a row at ``row`` of ``section`` (``final_section``/``_row`` in
    the new table: read it there when ``collection``/``key`` are None)."""

    type: Literal[StepType.INSERT_ROW]
    row: int
    final_section: int
    final_row: int
    rowid: int


@dataclass(frozen=True)
class MoveRowStep(EditStep):
    """Moves row ``row`` of ``section`` to ``to_row`` of ``to_section``
    (counted after the row was taken out)."""

    type: Literal[StepType.MOVE_ROW]
    row: int
    to_section: int
    to_row: int
    original_section: int
    original_row: int
    final_section: int
    final_row: int
    rowid: int


@dataclass(frozen=True)
class ReloadRowStep(EditStep):
    """Row ``row`` of ``section`` (its final place) changed: show it again."""

    type: Literal[StepType.RELOAD_ROW]
    row: int
    final_section: int
    final_row: int
    rowid: int


#: A step of ``Changeset.steps()``: the classes above, told apart by ``type``.
Step = Union[RemoveSectionStep, InsertSectionStep, RemoveRowStep, InsertRowStep, MoveRowStep, ReloadRowStep]

_STEP_CLASSES: Dict[StepType, Any] = {
    StepType.REMOVE_SECTION: RemoveSectionStep,
    StepType.INSERT_SECTION: InsertSectionStep,
    StepType.REMOVE_ROW: RemoveRowStep,
    StepType.INSERT_ROW: InsertRowStep,
    StepType.MOVE_ROW: MoveRowStep,
    StepType.RELOAD_ROW: ReloadRowStep,
}


@dataclass(frozen=True)
class Changeset:
    """Section changes (deletes, then inserts) and row changes (deletes,
    inserts, moves, updates; at most one per row). Apply as a batch update:
    deletes and moves-out at original index paths, then inserts and
    moves-in at final ones; reload updates at their original index paths.
    Or apply ``steps()`` one at a time (Qt, GTK, RecyclerView)."""

    section_changes: List[ViewSectionChange] = field(default_factory=list)
    row_changes: List[ViewRowChange] = field(default_factory=list)
    _script: Optional["_EditScript"] = field(default=None, repr=False, compare=False)

    @property
    def is_empty(self) -> bool:
        """True when there are neither section nor row changes."""
        return not self.section_changes and not self.row_changes

    def steps(self) -> List[Step]:
        """The changeset as an ordered edit script, computed by the engine:
        row removals bottom-up; section inserts (empty); row inserts and moves
        in final order, each right after its final predecessor; section
        removals (empty); reloads at final positions. Applying the steps in
        order to the old table gives the new one (docs/behaviour.md, "Edit
        scripts")."""
        return [] if self._script is None else self._script.steps()

    def to_dict(self) -> Dict[str, Any]:
        """Returns the changeset as a JSON-ready dict."""
        return {"section_changes": [c.to_dict() for c in self.section_changes],
                "row_changes": [c.to_dict() for c in self.row_changes]}


def _read_changeset(handle: int) -> Changeset:
    count = c_size_t()
    _check(lib.ydb_changeset_section_change_count(handle, byref(count)))
    sections = []
    for i in range(count.value):
        kind, index, group = c_int(), c_size_t(), c_char_p()
        _check(lib.ydb_changeset_section_change(handle, i, byref(kind), byref(index), byref(group)))
        sections.append(ViewSectionChange(SectionChangeType(kind.value), index.value, decode(group.value)))
    _check(lib.ydb_changeset_row_change_count(handle, byref(count)))
    change = _ffi.RowChangeStruct()
    rows = []
    for i in range(count.value):
        _check(lib.ydb_changeset_row(handle, i, byref(change)))  # one call a change
        rows.append(ViewRowChange(
            type=ChangeType(change.type),
            index_path=_index_path_or_none(change.section, change.row),
            new_index_path=_index_path_or_none(change.new_section, change.new_row),
            original_group=_text_or_none(change.original_group),
            final_group=_text_or_none(change.final_group),
            original_section=_index_or_none(change.original_section),
            original_index=_index_or_none(change.original_row),
            final_section=_index_or_none(change.final_section),
            final_index=_index_or_none(change.final_row),
            changes=ChangeFlags(change.changes),
            collection=_text_or_none(change.collection),
            key=_text_or_none(change.key)))
    return Changeset(sections, rows, _EditScript(handle))


class _EditScript:
    """A changeset's edit script, read from C on the first ``steps()``
    call: most callers read the row changes only, so the C changeset is
    kept (and freed once the steps are read, or with the ``Changeset``)."""

    def __init__(self, owned_handle: int) -> None:
        self._handle = owned_handle
        self._steps: Optional[List[Step]] = None
        self._finalizer = weakref.finalize(self, lib.ydb_changeset_free, owned_handle)

    def steps(self) -> List[Step]:
        if self._steps is None:
            self._steps = _read_steps(self._handle)
            self._finalizer()
        return list(self._steps)


def _read_steps(handle: int) -> List[Step]:
    count = c_size_t()
    _check(lib.ydb_changeset_step_count(handle, byref(count)))
    step = _ffi.EditStepStruct()
    steps: List[Step] = []
    for i in range(count.value):
        _check(lib.ydb_changeset_step(handle, i, byref(step)))
        is_row_step = step.row != _ffi.NO_INDEX
        kind = StepType(step.type)
        steps.append(_STEP_CLASSES[kind](
            type=kind, section=step.section, row=_index_or_none(step.row),
            to_section=_index_or_none(step.to_section), to_row=_index_or_none(step.to_row),
            original_section=_index_or_none(step.original_section),
            original_row=_index_or_none(step.original_row),
            final_section=_index_or_none(step.final_section), final_row=_index_or_none(step.final_row),
            group=_text_or_none(step.group), changes=ChangeFlags(step.changes),
            collection=_text_or_none(step.collection), key=_text_or_none(step.key),
            rowid=step.rowid if is_row_step else None))
    return steps


# What a row change lacks, C gives as YDB_NO_INDEX or NULL; Python as None.

def _index_or_none(index: int) -> Optional[int]:
    return None if index == _ffi.NO_INDEX else index


def _index_path_or_none(section: int, row: int) -> Optional[IndexPath]:
    return None if section == _ffi.NO_INDEX else IndexPath(section, row)


def _text_or_none(raw: Optional[bytes]) -> Optional[str]:
    return None if raw is None else decode(raw)


# ---------------------------------------------------------------------------
# Dynamic groups: a filter and a key function, called through the registry.
# ---------------------------------------------------------------------------

class _GroupSource:
    """The registry entry of ``Mappings.dynamic``: which groups show, in what
    order. With ``transaction``, ``filter`` and ``key`` take the read-only
    transaction first, made by ``lend`` (set by the call that runs them:
    ``update``, ``changes``); C passes no transaction (NULL) only to
    ``has_changes``, where every group may show."""

    def __init__(self, filter: Callable[..., bool], key: Optional[Callable[..., Any]],
                 transaction: bool) -> None:
        self.filter = filter
        self.key = key
        self.transaction = transaction
        self.lend: Optional[Callable[[Optional[int]], Any]] = None

    def shows(self, txn: Optional[int], group: bytes) -> int:
        if not self.transaction:
            return 1 if self.filter(decode(group)) else 0
        if txn is None or self.lend is None:
            return 1
        return 1 if self.filter(self.lend(txn), decode(group)) else 0

    def compare(self, txn: Optional[int], group1: bytes, group2: bytes) -> int:
        if self.key is None:
            a, b = group1, group2  # the names' UTF-8 bytes
        elif not self.transaction:
            a, b = self.key(decode(group1)), self.key(decode(group2))
        elif txn is None or self.lend is None:
            a, b = group1, group2
        else:
            a, b = self.key(self.lend(txn), decode(group1)), self.key(self.lend(txn), decode(group2))
        return -1 if a < b else (1 if b < a else 0)


# C cannot be told that a filter or sort failed: after an exception the
# group is hidden, or sorts as equal, and the update or changes call raises it.
_FILTER_TRAMPOLINE = _callbacks.trampoline(_ffi.GROUP_FILTER_FN, failed=0, call=_GroupSource.shows)
_SORT_TRAMPOLINE = _callbacks.trampoline(_ffi.GROUP_SORT_FN, failed=0, call=_GroupSource.compare)


def _index_path(value: Any) -> Tuple[int, int]:
    """``(section, row)`` from an IndexPath or a pair of ints."""
    if isinstance(value, tuple) and len(value) == 2:
        return value[0], value[1]
    raise TypeError(f"an index path must be an IndexPath or a (section, row) tuple, not {value!r}")


# ---------------------------------------------------------------------------
# Mappings
# ---------------------------------------------------------------------------

class Mappings(_Closeable):
    """Maps the groups of view ``view`` onto table sections: ``groups`` in
    order (see ``Mappings.dynamic`` for groups found in the view). Update it
    with a transaction before reading it; ``changes(notifications)`` then
    gives each changeset and moves it along. Use it as a context manager or
    call ``close()``."""

    _source: Optional[_GroupSource] = None

    def __init__(self, groups: Iterable[str], view: str) -> None:
        if isinstance(groups, str):
            raise TypeError("groups must be an iterable of group names, not one str")
        names = [encode(group, "group") for group in groups]
        array = (c_char_p * max(len(names), 1))(*names)
        out = _ffi.MappingsPointer()
        _check(lib.ydb_mappings_new(encode(view, "view name"), array, len(names), byref(out)))
        self._own(out, lib.ydb_mappings_free)

    @classmethod
    def dynamic(cls, filter: Callable[..., bool], view: str, *,
                key: Optional[Callable[..., Any]] = None, transaction: bool = False) -> "Mappings":
        """Mappings whose groups are the view's groups for which ``filter``
        is true, ordered by ``key`` (default: the name's UTF-8 bytes), found
        again at every update. An exception in ``filter`` or ``key`` is
        re-raised by the update or changes call; the mappings are then in an
        unspecified (but safe) state: update them again.

        With ``transaction=True`` they read rows: ``filter(txn, group)`` and
        ``key(txn, group)`` get a read-only ``CallbackTransaction`` of the
        transaction given to ``update(txn)`` or ``changes(notifications,
        txn)`` (which then needs one), valid during the call. A row they
        read is not a dependency: groups are found again at each update or
        changeset. ``has_changes`` cannot run them: every group may show."""
        if not callable(filter):
            raise TypeError("filter must be callable")
        self = cls.__new__(cls)
        encoded = encode(view, "view name")
        self._source = source = _GroupSource(filter, key, bool(transaction))
        ctx = _callbacks.register(source)
        out = _ffi.MappingsPointer()
        # On failure C calls the destructor, which releases ctx, before returning.
        _check(lib.ydb_mappings_new_dynamic(encoded, _FILTER_TRAMPOLINE, _SORT_TRAMPOLINE,
                                            ctx, _callbacks.RELEASE, byref(out)))
        self._own(out, lib.ydb_mappings_free)
        return self

    @property
    def _live_handle(self) -> int:
        if self.closed:
            raise MisuseError("the mappings are closed", Status.MISUSE)
        return self._handle

    def __repr__(self) -> str:
        if self.closed:
            return "Mappings(closed)"
        return f"Mappings(view={self.view!r}, sections={self.number_of_sections})"

    # -- small helpers --

    def _flag(self, function: Any, *args: Any) -> bool:
        out = c_int()
        _check(function(self._live_handle, *args, byref(out)))
        return bool(out.value)

    def _size(self, function: Any, *args: Any) -> Optional[int]:
        out = c_size_t()
        status = function(self._live_handle, *args, byref(out))
        if status == Status.NOTFOUND:
            return None
        _check(status)
        return out.value

    def _name(self, function: Any, *args: Any) -> Optional[str]:
        out = c_char_p()
        status = function(self._live_handle, *args, byref(out))
        if status == Status.NOTFOUND:
            return None
        _check(status)
        return decode(out.value)

    def _path(self, function: Any, *args: Any) -> Optional[IndexPath]:
        section, row = c_size_t(), c_size_t()
        status = function(self._live_handle, *args, byref(section), byref(row))
        if status == Status.NOTFOUND:
            return None
        _check(status)
        return IndexPath(section.value, row.value)

    def _names(self, function: Any) -> List[str]:
        names: List[str] = []
        _enumerate(function, self._live_handle, each=lambda name: names.append(decode(name)))
        return names

    # -- identity --

    @property
    def view(self) -> str:
        """The name of the view the mappings read. Raises ``MisuseError`` when closed (as every member does)."""
        return self._name(lib.ydb_mappings_view) or ""

    @property
    def has_dynamic_groups(self) -> bool:
        """True for mappings made by ``Mappings.dynamic``."""
        return self._flag(lib.ydb_mappings_has_dynamic_groups)

    @property
    def all_groups(self) -> List[str]:
        """The mappings' groups, visible or not (dynamic: as of the last update)."""
        return self._names(lib.ydb_mappings_enumerate_all_groups)

    @property
    def visible_groups(self) -> List[str]:
        """The groups shown as sections, in order."""
        return self._names(lib.ydb_mappings_enumerate_visible_groups)

    # -- configuration --

    def set_is_dynamic_section(self, group: str, is_dynamic: bool) -> None:
        """Hides the section of ``group`` while it is empty (``is_dynamic``) or always shows it."""
        _check(lib.ydb_mappings_set_dynamic_section(self._live_handle, encode(group, "group"),
                                                    1 if is_dynamic else 0))

    def is_dynamic_section(self, group: str) -> bool:
        """Returns whether the section of ``group`` is hidden while empty."""
        return self._flag(lib.ydb_mappings_is_dynamic_section, encode(group, "group"))

    def set_is_dynamic_section_for_all_groups(self, is_dynamic: bool) -> None:
        """``set_is_dynamic_section`` for every group, present and future."""
        _check(lib.ydb_mappings_set_dynamic_section_for_all_groups(self._live_handle, 1 if is_dynamic else 0))

    @property
    def is_dynamic_section_for_all_groups(self) -> bool:
        """Whether every group's section is hidden while empty."""
        return self._flag(lib.ydb_mappings_is_dynamic_section_for_all_groups)

    def set_range_options(self, group: str, options: Optional[RangeOptions]) -> None:
        """Shows only a window of ``group`` (None shows all of it again).
        Replaces the group's range: the window is placed afresh from
        ``options.length`` and ``options.offset`` (at once after the first
        update; no changeset describes it, so reload the table). Setting back
        what ``range_options`` returned leaves the window where it is. A fixed
        range's length as set is ``max_length`` (``length`` when that is None);
        a flexible range may have length 0. Raises ``InvalidArgumentError``
        for values out of range, ``ValueError`` for an unknown kind, pin or grow."""
        encoded = encode(group, "group")
        if options is None:
            _check(lib.ydb_mappings_remove_range_options(self._live_handle, encoded))
            return
        if options.pin not in _PINS:
            raise ValueError(f"pin must be 'beginning' or 'end', not {options.pin!r}")
        if options.grow not in _GROWS:
            raise ValueError(f"grow must be one of {sorted(_GROWS)}, not {options.grow!r}")
        if options.kind not in _KINDS:
            raise ValueError(f"range kind must be 'fixed' or 'flexible', not {options.kind!r}")
        if options.is_flexible and options.max_length == 0:
            raise InvalidArgumentError("max_length must be at least 1 (None: no limit)", Status.INVALID_ARGUMENT)
        fields = (options.length, options.offset, options.max_length or 0, options.min_length)
        if not all(-2**63 <= value < 2**63 for value in fields):
            raise InvalidArgumentError("a range value is out of range", Status.INVALID_ARGUMENT)
        struct = _ffi.RangeOptionsStruct(
            kind=_KINDS[options.kind], length=options.length, offset=options.offset, pin=_PINS[options.pin],
            max_length=options.max_length or 0, min_length=options.min_length, grow=_GROWS[options.grow])
        _check(lib.ydb_mappings_set_range_options(self._live_handle, encoded, byref(struct)))

    def range_options(self, group: str) -> Optional[RangeOptions]:
        """The range options of ``group`` (display order), or None. As
        YapDatabase promises, ``length`` and ``offset`` are the range's
        current ones as of the last update or changeset: a flexible range as
        grown, shrunk and shifted; a fixed range's length clipped to the group
        (its length as set is ``max_length``), its offset as set. The settings
        are as set. Before the first update: the options as set."""
        out = _ffi.RangeOptionsStruct()
        status = lib.ydb_mappings_range_options(self._live_handle, encode(group, "group"), byref(out))
        if status == Status.NOTFOUND:
            return None
        _check(status)
        pin = "beginning" if out.pin == 0 else "end"
        grow = {v: k for k, v in _GROWS.items()}[out.grow]
        kind = {v: k for k, v in _KINDS.items()}[out.kind]
        return RangeOptions(kind, out.length, out.offset, pin, out.max_length or None, out.min_length, grow)

    def remove_range_options(self, group: str) -> None:
        """Shows all of ``group`` again (``set_range_options(group, None)``)."""
        self.set_range_options(group, None)

    def set_is_reversed(self, group: str, is_reversed: bool) -> None:
        """Shows ``group`` in reverse view order (or not)."""
        _check(lib.ydb_mappings_set_reversed(self._live_handle, encode(group, "group"), 1 if is_reversed else 0))

    def is_reversed(self, group: str) -> bool:
        """Returns whether ``group`` is shown in reverse view order."""
        return self._flag(lib.ydb_mappings_is_reversed, encode(group, "group"))

    def set_cell_drawing_dependency_offsets(self, group: str, offsets: Iterable[int]) -> None:
        """Each cell of ``group`` is drawn using the cells ``offsets`` rows away."""
        values = [_c_int(offset, "a cell drawing dependency offset") for offset in offsets]
        array = (c_int * max(len(values), 1))(*values)
        _check(lib.ydb_mappings_set_cell_drawing_dependency_offsets(self._live_handle, encode(group, "group"),
                                                                    array, len(values)))

    def set_cell_drawing_dependency(self, group: str, offset: int) -> None:
        """``set_cell_drawing_dependency_offsets(group, [offset])``."""
        self.set_cell_drawing_dependency_offsets(group, [offset])

    def cell_drawing_dependency_offsets(self, group: str) -> List[int]:
        """Returns the offsets set for ``group`` (empty list: none)."""
        encoded = encode(group, "group")
        total = c_size_t()
        _check(lib.ydb_mappings_cell_drawing_dependency_offsets(self._live_handle, encoded, None, 0,
                                                                byref(total)))
        array = (c_int * max(total.value, 1))()
        _check(lib.ydb_mappings_cell_drawing_dependency_offsets(self._live_handle, encoded, array, total.value,
                                                                byref(total)))
        return list(array[:total.value])

    def set_auto_consolidate_groups(self, threshold: int, name: str) -> None:
        """While the visible groups show fewer than ``threshold`` rows, show
        them as one section named ``name`` (0 disables it)."""
        _check(lib.ydb_mappings_set_auto_consolidate_groups(self._live_handle, _count(threshold, "threshold"),
                                                            encode(name, "name")))

    @property
    def auto_consolidate_groups_threshold(self) -> int:
        """The auto-consolidation threshold (0: disabled)."""
        return self._size(lib.ydb_mappings_auto_consolidate_groups_threshold) or 0

    @property
    def consolidated_group_name(self) -> Optional[str]:
        """The consolidated section's name, or None when not set."""
        return self._name(lib.ydb_mappings_consolidated_group_name)

    # -- update and changes --

    def _lending(self, transaction: Optional[_Transaction]) -> None:
        """Dynamic groups reading the transaction get theirs from ``transaction``."""
        if self._source is not None:
            self._source.lend = None if transaction is None else transaction._callback_transaction

    @property
    def allows_unregistered_view(self) -> bool:
        """Whether ``update`` accepts a view not registered at its
        transaction's snapshot and shows it as empty (mappings made before
        their view is registered: the registration's changeset inserts every
        row). False by default: such an update raises ``NotFoundError``."""
        return self._flag(lib.ydb_mappings_allows_unregistered_view)

    @allows_unregistered_view.setter
    def allows_unregistered_view(self, allows: bool) -> None:
        _check(lib.ydb_mappings_set_allows_unregistered_view(self._live_handle, 1 if allows else 0))

    def update(self, transaction: _Transaction) -> None:
        """Caches the view as of ``transaction`` and moves to its snapshot.
        Raises ``NotFoundError`` when the mappings' view is not registered at
        that snapshot, unless ``allows_unregistered_view``."""
        self._lending(transaction)
        try:
            _check(lib.ydb_mappings_update(self._live_handle, transaction._handle))
        finally:
            self._lending(None)

    def changes(self, notifications: Iterable[CommitNotification],
                transaction: Optional[_Transaction] = None) -> Changeset:
        """The changeset for ``notifications`` (as returned by
        ``Connection.begin_long_lived_read_transaction()``), moving the
        mappings to the last one's snapshot. ``MismatchError`` (mappings
        unchanged) when the mappings are not at the snapshot just before the
        first notification. ``transaction`` (reading the last notification's
        snapshot, as a read on the connection that just moved forward does)
        is what dynamic groups made with ``transaction=True`` read; they
        need one (``MisuseError`` without)."""
        if transaction is None and self._source is not None and self._source.transaction:
            raise MisuseError("these mappings' filter and key read the transaction: "
                              "pass one (changes(notifications, txn))", Status.MISUSE)
        with _NotificationList(notifications) as handle:
            out = _ffi.ChangesetPointer()
            if transaction is None:
                _check(lib.ydb_changeset_new(self._live_handle, handle, byref(out)))
            else:
                self._lending(transaction)
                try:
                    _check(lib.ydb_changeset_new_in_txn(self._live_handle, handle, transaction._handle,
                                                        byref(out)))
                finally:
                    self._lending(None)
        try:
            return _read_changeset(out)
        except BaseException:
            lib.ydb_changeset_free(out)
            raise

    def has_changes(self, notifications: Iterable[CommitNotification]) -> bool:
        """Whether ``notifications`` touch any group of the mappings (cheap;
        does not move them)."""
        flag = c_int()
        with _NotificationList(notifications) as handle:
            _check(lib.ydb_mappings_has_changes(self._live_handle, handle, byref(flag)))
        return bool(flag.value)

    @property
    def snapshot_of_last_update(self) -> Optional[int]:
        """The snapshot of the last update or changeset; None: never updated."""
        out = c_uint64()
        status = lib.ydb_mappings_snapshot_of_last_update(self._live_handle, byref(out))
        if status == Status.NOTFOUND:
            return None
        _check(status)
        return out.value

    # -- getters --

    @property
    def number_of_sections(self) -> int:
        """How many sections are shown (0 before the first update)."""
        return self._size(lib.ydb_mappings_number_of_sections) or 0

    def number_of_items_in_section(self, section: int) -> Optional[int]:
        """Returns the rows shown in ``section``, or None for a section that does not exist."""
        if _index(section) is None:
            return None
        return self._size(lib.ydb_mappings_number_of_items_in_section, section)

    def number_of_items_in_group(self, group: str) -> Optional[int]:
        """Returns the rows shown of ``group``, or None for a group not in the mappings."""
        return self._size(lib.ydb_mappings_number_of_items_in_group, encode(group, "group"))

    @property
    def number_of_items_in_all_groups(self) -> int:
        """The rows shown in all sections."""
        return self._size(lib.ydb_mappings_number_of_items_in_all_groups) or 0

    @property
    def is_empty(self) -> bool:
        """True when no row is shown."""
        return self._flag(lib.ydb_mappings_is_empty)

    @property
    def is_using_consolidated_group(self) -> bool:
        """True while the groups are shown as the one consolidated section."""
        return self._flag(lib.ydb_mappings_is_using_consolidated_group)

    def group_for_section(self, section: int) -> Optional[str]:
        """Returns the group shown as ``section``, or None."""
        if _index(section) is None:
            return None
        return self._name(lib.ydb_mappings_group_for_section, section)

    def section_for_group(self, group: str) -> Optional[int]:
        """Returns the section showing ``group``, or None when it is not visible."""
        return self._size(lib.ydb_mappings_section_for_group, encode(group, "group"))

    def group_and_index_for_row(self, index_path: Tuple[int, int]) -> Optional[Tuple[str, int]]:
        """Returns the view group and index shown at ``index_path`` (an
        ``IndexPath`` or ``(section, row)``), or None. Raises TypeError for
        anything else."""
        section, row = _index_path(index_path)
        if _index(row) is None or _index(section) is None:
            return None
        group, index = c_char_p(), c_size_t()
        status = lib.ydb_mappings_group_and_index_for_row(self._live_handle, row, section, byref(group),
                                                          byref(index))
        if status == Status.NOTFOUND:
            return None
        _check(status)
        return decode(group.value), index.value

    def index_for_row_in_section(self, index_path: Tuple[int, int]) -> Optional[int]:
        """Returns the view index (in its group) shown at ``index_path`` (an
        ``IndexPath`` or ``(section, row)``), or None."""
        section, row = _index_path(index_path)
        if _index(row) is None or _index(section) is None:
            return None
        return self._size(lib.ydb_mappings_index_for_row_in_section, row, section)

    def index_for_row_in_group(self, group: str, row: int) -> Optional[int]:
        """Returns the view index of ``group`` shown at ``row`` of its own
        window (its section's row unless consolidated), or None; the inverse
        of ``window_row_for_index``."""
        encoded = encode(group, "group")
        if _index(row) is None:
            return None
        return self._size(lib.ydb_mappings_index_for_row_in_group, row, encoded)

    def row_and_section_for_index(self, group: str, index: int) -> Optional[IndexPath]:
        """Returns where view ``index`` of ``group`` is shown, or None."""
        encoded = encode(group, "group")
        if _index(index) is None:
            return None
        return self._path(lib.ydb_mappings_row_and_section_for_index, index, encoded)

    index_path_for_index = row_and_section_for_index

    def row_for_index(self, group: str, index: int) -> Optional[int]:
        """Returns the table row showing view ``index`` of ``group``, or None
        when not shown: YapDatabase's ``rowForIndex:inGroup:``, always the row
        of ``row_and_section_for_index`` (while consolidated, the row in the
        consolidated section)."""
        encoded = encode(group, "group")
        if _index(index) is None:
            return None
        return self._size(lib.ydb_mappings_row_for_index, index, encoded)

    def window_row_for_index(self, group: str, index: int) -> Optional[int]:
        """Returns the row of ``group``'s own window (range and reverse
        applied) showing view ``index``, consolidated or not, or None outside
        the window; the inverse of ``index_for_row_in_group``."""
        encoded = encode(group, "group")
        if _index(index) is None:
            return None
        return self._size(lib.ydb_mappings_window_row_for_index, index, encoded)

    def range_position(self, group: str) -> Optional[RangePosition]:
        """Returns where the window of ``group`` stands in the whole group, or None."""
        begin, end, length = c_size_t(), c_size_t(), c_size_t()
        status = lib.ydb_mappings_range_position(self._live_handle, encode(group, "group"), byref(begin),
                                                 byref(end), byref(length))
        if status == Status.NOTFOUND:
            return None
        _check(status)
        return RangePosition(begin.value, end.value, length.value)

    def nearest_index_path(self, group: str, row: int) -> Optional[IndexPath]:
        """Returns the table position nearest to view index ``row`` of
        ``group`` (to keep a selection after its row vanished), or None when
        nothing is shown."""
        encoded = encode(group, "group")
        if _index(row) is None:
            row = 0
        return self._path(lib.ydb_mappings_nearest_index_path, row, encoded)
