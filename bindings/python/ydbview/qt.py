"""Qt item models over a ``Mappings`` (needs PySide6: the ``qt`` extra, ``pip install ".[qt]"`` in a checkout).

``MappingsModel`` shows each section as a top-level item with its rows as
children; ``FlatMappingsModel`` shows every section's rows as one list. Both
follow the database: after each commit (a commit observer, delivered to the
model's thread through a queued signal) they catch up, compute the
changeset and apply its edit script (``Changeset.steps()``) with the
matching ``beginInsertRows``/``beginRemoveRows``/``beginMoveRows`` …
``end…`` calls, and ``dataChanged`` for reloads -- what Qt's views and
proxies follow, and what ``QAbstractItemModelTester`` checks.

What the model answers must agree with what it has announced, at every
signal: a ``QSortFilterProxyModel`` re-sorts or re-filters a row only when
told (``dataChanged``), and reads the other rows' ``data()`` at each
structural signal. And a commit should cost in proportion to what it
changed. So:

- between two steps the model answers from a shadow of the table, each
  section's rows as (collection, key);
- a row's object and metadata are read when a view first asks for them and
  kept while the row is shown and unchanged: a commit never re-reads rows it
  did not change;
- during a catch-up, a row the commits changed is answered as the view saw
  it until its own step (its insertion, or its reload): from what was read
  before, or else read at the snapshot before the catch-up. The model keeps
  two connections for that: one at the snapshot the model shows, one at or
  past it; a catch-up moves the second one forward, which then becomes the
  model's, while the first one, still at the old snapshot, answers until
  the steps are done, and then moves forward in turn;
- steps of one kind at adjacent places go to Qt as one range (one
  ``beginInsertRows`` for rows inserted one after the other, one
  ``dataChanged`` for a run of reloads);
- an edit script that moves ``LAYOUT_CHANGE_MOVES`` rows or more goes to Qt
  as one layout change (``layoutAboutToBeChanged`` … ``layoutChanged``,
  persistent indexes moved to their rows' new places), then its reloads:
  a sorting proxy sorts all its rows again at every move it hears of.
  Nothing else is announced that way, and a reset
  (``beginResetModel``/``endResetModel``) only when the commits in between
  are gone (``Database.max_commits_behind``).

    model = MappingsModel(db, Mappings(["inbox", "done"], "byDate"),
                          display=lambda row: row.object["title"])
    tree = QTreeView(); tree.setModel(model); tree.show()
"""

from __future__ import annotations

import enum
from typing import Any, Callable, Dict, Iterator, List, NamedTuple, Optional, Set, Tuple

try:
    from PySide6.QtCore import QAbstractItemModel, QAbstractListModel, QByteArray, QModelIndex, QObject, Qt, Signal
except ModuleNotFoundError as missing:
    # PySide6 is an optional dependency (the "qt" extra), so its absence is
    # the usual first error of a user who installed plain ydbview: say what
    # to install. Only PySide6 itself missing is rewritten; anything else
    # (a broken PySide6 install) keeps its own message. Still a
    # ModuleNotFoundError (an ImportError), so existing handlers catch it.
    if missing.name is None or missing.name.split(".")[0] != "PySide6":
        raise
    raise ModuleNotFoundError(
        "ydbview.qt needs PySide6, which is not installed: install the Qt extra with "
        "pip install \"ydbview[qt]\" (in a checkout: pip install \".[qt]\")",
        name=missing.name) from missing

from .errors import ReloadRequired
from .mappings import EditStep, Mappings, StepType
from .notifications import CommitNotification
from .store import Connection, Database

__all__ = ["FlatMappingsModel", "MappingsModel", "Roles", "ShownRow"]

RowName = Tuple[str, str]


class Roles(enum.IntEnum):
    """Item data roles beyond ``Qt.DisplayRole``."""

    COLLECTION = Qt.ItemDataRole.UserRole + 1
    KEY = Qt.ItemDataRole.UserRole + 2
    OBJECT = Qt.ItemDataRole.UserRole + 3
    METADATA = Qt.ItemDataRole.UserRole + 4


# The functional form: with postponed annotations, the class form's
# generated __init__ carries its annotations as strings that documentation
# tools cannot resolve.
ShownRow = NamedTuple("ShownRow", [("collection", str), ("key", str), ("object", Any), ("metadata", Any)])
ShownRow.__doc__ = """What ``display`` receives: a row as the model shows it."""


# The roles a row answers; views ask a row for many more (font, colours,
# decoration, …) at every layout, and those are answered before anything
# is looked up.
_ROW_ROLES = frozenset({int(Qt.ItemDataRole.DisplayRole), int(Roles.COLLECTION), int(Roles.KEY),
                        int(Roles.OBJECT), int(Roles.METADATA)})


class _Relay(QObject):
    """Carries "a commit happened" from the committing thread to the
    model's thread (a signal emitted elsewhere is queued)."""

    committed = Signal()


# Steps Qt can take several of in one begin/end pair (or one dataChanged)
# when they touch adjacent places; a move is always a pair of its own.
_RANGED = frozenset({StepType.INSERT_SECTION, StepType.REMOVE_SECTION, StepType.INSERT_ROW,
                     StepType.REMOVE_ROW, StepType.RELOAD_ROW})


def _continues(run: List[EditStep], step: EditStep) -> bool:
    """Whether ``step`` extends ``run`` to the next place: the script removes
    bottom-up and inserts top-down, so a run of removals goes up one place
    at a time, a run of inserts (or reloads) down one."""
    first, last = run[0], run[-1]
    if step.type != first.type or step.type not in _RANGED:
        return False
    if step.type == StepType.INSERT_SECTION:
        return step.section == first.section + len(run)
    if step.type == StepType.REMOVE_SECTION:
        return step.section == last.section - 1
    if step.section != first.section:
        return False
    assert step.row is not None and first.row is not None and last.row is not None
    if step.type == StepType.INSERT_ROW:
        return step.row == first.row + len(run)
    if step.type == StepType.REMOVE_ROW:
        return step.row == last.row - 1
    return step.row == last.row + 1


def _runs(steps: List[EditStep]) -> Iterator[List[EditStep]]:
    """The edit script cut into runs of steps of one kind at adjacent places."""
    run: List[EditStep] = []
    for step in steps:
        if run and not _continues(run, step):
            yield run
            run = []
        run.append(step)
    if run:
        yield run


#: A catch-up whose edit script moves at least this many rows is announced
#: as one layout change: a QSortFilterProxyModel answers every source move
#: by sorting (and filtering) all its rows again, so two moves would cost
#: it two full sorts. Insertions and removals never take this path: a proxy
#: places each inserted row by a binary search, and views lay out once
#: after the event loop turns, however many runs came.
LAYOUT_CHANGE_MOVES = 2

# How many times a reset reads the newest table before it gives up (and
# shows none until the next catch-up): each attempt fails only when more
# than Database.max_commits_behind commits land while it reads.
_RESET_ATTEMPTS = 3


class _CatchUp:
    """What a catch-up in progress knows of rows: which ones its commits
    changed, their values as the view had them, which ones had their step
    (inserted or reloaded: answered at the new snapshot from then on) and
    which ones left the table."""

    def __init__(self, commits: List[CommitNotification], cache: Dict[RowName, Any]) -> None:
        self._rows: Set[RowName] = set().union(*(commit.changed_rows for commit in commits))
        self._collections = frozenset().union(*(commit.removed_collections for commit in commits))
        self._everything = any(commit.removed_all for commit in commits)
        self.seen: Dict[RowName, Any] = {}
        self.stepped: Set[RowName] = set()
        self.left: Set[RowName] = set()
        self.everything_announced = False   # by a layout change
        # What the view was given of a changed row stays what it is told
        # until the row's step; the cache then reads the row anew.
        wide = self._everything or self._collections
        for name in list(cache) if wide else [name for name in self._rows if name in cache]:
            if self.changed(name):
                self.seen[name] = cache.pop(name)

    def changed(self, name: RowName) -> bool:
        return name in self._rows or name[0] in self._collections or self._everything

    def announced(self, name: RowName) -> bool:
        """Whether the view may see the row at the new snapshot."""
        return self.everything_announced or name in self.stepped or not self.changed(name)


class _Follower:
    """The part both models share: the connections, the mappings, the
    shadow table, the rows read, catching up and walking the edit script.
    The model classes only translate runs of steps into Qt's calls."""

    def _follow(self, database: Database, mappings: Mappings,
                display: Optional[Callable[[ShownRow], Any]], follow_commits: bool) -> None:
        self._database = database
        self._mappings = mappings
        self._display = display
        self._closed = False
        # A row was answered without its values (its snapshot was released):
        # the next catch-up resets the model, so no view keeps that answer.
        self._reset_owed = False
        # Opened before the other one begins its long-lived read, so that it
        # has every commit after that one's snapshot (see _advance_spare).
        self._spare: Connection = database.new_connection()
        self._spare_commits: Optional[List[CommitNotification]] = []
        self._connection: Connection = database.new_connection()
        self._connection.begin_long_lived_read_transaction()
        with self._connection.read() as t:
            mappings.update(t)
        self._advance_spare()
        self._groups: List[str] = []
        self._sections: List[List[RowName]] = []
        # Each section's id, which a tree's child index carries: section
        # numbers shift as sections come and go, ids do not.
        self._section_ids: List[int] = []
        self._last_id = 0
        self._cache: Dict[RowName, Any] = {}
        self._catching_up: Optional[_CatchUp] = None
        self._read_shadow()
        self._observer: Optional[int] = None
        if follow_commits:
            # A child of the model, so it lives (and delivers) on the
            # model's thread, and follows the model to another thread.
            self._relay = _Relay(self)  # type: ignore[arg-type]
            self._relay.committed.connect(self.catch_up, Qt.ConnectionType.QueuedConnection)
            relay = self._relay
            self._observer = database.add_commit_observer(lambda _: relay.committed.emit())

    def close(self) -> None:
        """Stops following commits and closes the model's connections. The
        model keeps showing the rows it has (their keys; objects read
        before): views may still paint it, and catch-ups already queued do
        nothing."""
        if self._closed:
            return
        self._closed = True
        if self._observer is not None:
            self._database.remove_commit_observer(self._observer)
            self._observer = None
            self._relay.committed.disconnect(self.catch_up)
        self._connection.close()
        self._spare.close()

    @property
    def mappings(self) -> Mappings:
        """The mappings the model follows (at the model's snapshot)."""
        return self._mappings

    # -- the shadow table and the rows read --

    def _read_shadow(self) -> None:
        """The table as the mappings show it now, rows by (collection, key)."""
        m = self._mappings
        self._groups = [m.group_for_section(s) or "" for s in range(m.number_of_sections)]
        self._section_ids = self._new_ids(len(self._groups))
        with self._connection.read() as t:
            self._sections = [[self._row_at(s, r, t) for r in range(m.number_of_items_in_section(s) or 0)]
                              for s in range(len(self._groups))]

    def _new_ids(self, count: int) -> List[int]:
        self._last_id += count
        return list(range(self._last_id - count + 1, self._last_id + 1))

    def _row_at(self, section: int, row: int, txn: Any = None) -> RowName:
        """The row the mappings show at (section, row) of the current snapshot."""
        found = self._mappings.group_and_index_for_row((section, row))
        if found is not None:
            if txn is None:
                with self._connection.read() as t:
                    key = t.view(self._mappings.view).key_at(*found)
            else:
                key = txn.view(self._mappings.view).key_at(*found)
            if key is not None:
                return key
        raise LookupError(f"the mappings show no row at ({section}, {row})")

    def _value(self, name: RowName) -> Any:
        """The row's object and metadata as the view has been told of them:
        at the model's snapshot, except, during a catch-up, for a row the
        commits changed whose step has not come yet (at the snapshot before).
        Kept while the row is shown and unchanged. None once the row is
        gone, and None (not kept) when it cannot be read now: the model was
        closed, or its connection fell so far behind that the database
        released its snapshot -- the catch-up already queued resets the
        model. ``data()`` is called from Qt's painting, where an exception
        could only be printed."""
        catching_up = self._catching_up
        if catching_up is not None and not catching_up.announced(name):
            kept, connection = catching_up.seen, self._spare
        else:
            kept, connection = self._cache, self._connection
        if name not in kept:
            if self._closed:
                return None
            try:
                with connection.read() as t:
                    kept[name] = t.get_row(*name)
            except ReloadRequired:
                # Answered without values: a view or proxy may keep that,
                # so the next catch-up resets the model (queued now).
                self._reset_owed = True
                if self._observer is not None:
                    self._relay.committed.emit()
                return None
        return kept[name]

    def _row_data(self, name: RowName, role: int) -> Any:
        if role == Roles.COLLECTION:
            return name[0]
        if role == Roles.KEY:
            return name[1]
        if role not in (Qt.ItemDataRole.DisplayRole, Roles.OBJECT, Roles.METADATA):
            return None
        row = self._value(name)
        if role == Roles.OBJECT:
            return None if row is None else row.object
        if role == Roles.METADATA:
            return None if row is None else row.metadata
        if self._display is None or row is None:
            return name[1]
        return self._display(ShownRow(name[0], name[1], row.object, row.metadata))

    def _role_names(self) -> Dict[int, QByteArray]:
        return {Qt.ItemDataRole.DisplayRole: QByteArray(b"display"),
                Roles.COLLECTION: QByteArray(b"collection"), Roles.KEY: QByteArray(b"key"),
                Roles.OBJECT: QByteArray(b"object"), Roles.METADATA: QByteArray(b"metadata")}

    # -- catching up --

    def catch_up(self) -> None:
        """Moves to the newest snapshot and applies the changeset, run by
        run. Called by the commit observer's signal; call it directly to
        catch up synchronously (tests, or a model made with
        ``follow_commits=False``). Does nothing once the model is closed.

        When the connection fell more than ``Database.max_commits_behind``
        commits behind, the changes in between are gone: the model resets
        (``beginResetModel``/``endResetModel``) and reads the table anew."""
        if self._closed:
            return
        if self._reset_owed:
            self._reset()
            return
        try:
            commits = self._newer_commits()
            if not commits:
                return
            # Read at the new snapshot: dynamic groups whose filter reads
            # the transaction need one, and the others do not mind.
            with self._spare.read() as t:
                changeset = self._mappings.changes(commits, t)
        except ReloadRequired:
            self._reset()
            return
        self._connection, self._spare = self._spare, self._connection
        self._spare_commits = []
        self._catching_up = _CatchUp(commits, self._cache)
        try:
            self._apply(changeset.steps())
        except ReloadRequired:
            # Released (other threads committed that many times meanwhile)
            # while the arriving rows were read, before any signal: no
            # begin/end pair or layout change is open.
            self._reset()
            return
        self._caught_up()

    def _newer_commits(self) -> List[CommitNotification]:
        """Moves the spare connection to the newest snapshot and returns
        the commits after the model's. Kept until the model has moved, so
        that a changeset that fails (a dynamic group's filter raising)
        leaves them for the next catch-up. ReloadRequired: some are gone."""
        if self._spare_commits is None:
            raise ReloadRequired("the model's spare connection lost commits", ReloadRequired.code)
        self._spare_commits = self._spare_commits + self._spare.begin_long_lived_read_transaction()
        return self._spare_commits

    def _advance_spare(self) -> None:
        """Moves the spare connection from the snapshot before to the
        newest, and keeps the commits it sees past the model's snapshot
        (those that landed during the catch-up) for the next one; None
        when they are gone."""
        shown = self._connection.snapshot
        try:
            commits = self._spare.begin_long_lived_read_transaction()
        except ReloadRequired:
            self._spare_commits = [] if self._spare.snapshot == shown else None
            return
        self._spare_commits = [commit for commit in commits if commit.snapshot > shown]

    def _caught_up(self) -> None:
        catching_up, self._catching_up = self._catching_up, None
        assert catching_up is not None
        for name in catching_up.left:    # no longer shown: nothing to keep
            self._cache.pop(name, None)
        self._advance_spare()

    def _reset(self) -> None:
        """Reads the table anew at the newest snapshot, between Qt's
        beginResetModel and endResetModel."""
        self._begin_reset()
        self._catching_up = None
        self._reset_owed = False
        self._cache.clear()
        for _ in range(_RESET_ATTEMPTS):
            try:
                self._read_newest_table()
                break
            except ReloadRequired:
                continue   # released again while it read: writers committed that often meanwhile
        else:
            # Shown empty until the next catch-up, which resets again.
            self._groups, self._sections, self._section_ids = [], [], []
            self._spare_commits = None
        self._end_reset()

    def _read_newest_table(self) -> None:
        # The spare first: it must end at or past the other one.
        for connection in (self._spare, self._connection):
            try:
                connection.begin_long_lived_read_transaction()
            except ReloadRequired:
                pass   # at the newest snapshot all the same
        with self._connection.read() as t:
            self._mappings.update(t)
        self._advance_spare()
        self._read_shadow()

    def _arriving(self, step: EditStep) -> RowName:
        if step.collection is not None and step.key is not None:
            return (step.collection, step.key)
        assert step.final_section is not None and step.final_row is not None
        return self._row_at(step.final_section, step.final_row)

    def _apply(self, steps: List[EditStep]) -> None:
        """Applies the edit script run by run, or as one layout change when
        it moves LAYOUT_CHANGE_MOVES rows or more."""
        # Arriving rows are read first: reading may fail (ReloadRequired),
        # and no begin/end pair or layout change may be left open then.
        arriving = {id(step): self._arriving(step) for step in steps if step.type == StepType.INSERT_ROW}
        runs = list(_runs(steps))
        if sum(step.type == StepType.MOVE_ROW for step in steps) < LAYOUT_CHANGE_MOVES:
            for run in runs:
                self._apply_run(run, arriving, self)
            return
        self.layoutAboutToBeChanged.emit()  # type: ignore[attr-defined]
        persistent = self.persistentIndexList()  # type: ignore[attr-defined]
        shown = [self._persistent_place(index) for index in persistent]
        for run in runs:
            if run[0].type != StepType.RELOAD_ROW:
                self._apply_run(run, arriving, _SILENT)
        assert self._catching_up is not None
        self._catching_up.everything_announced = True
        self.changePersistentIndexList(persistent, self._indexes_of(shown))  # type: ignore[attr-defined]
        self.layoutChanged.emit()  # type: ignore[attr-defined]
        for run in runs:   # rows changed in place: views repaint them, editors reload them
            if run[0].type == StepType.RELOAD_ROW:
                self._apply_run(run, arriving, self)

    def _apply_run(self, run: List[EditStep], arriving: Dict[int, RowName], qt: Any) -> None:
        """Applies one run to the shadow, between the begin and end calls
        of ``qt``: the model, or _SILENT inside a layout change."""
        catching_up = self._catching_up
        assert catching_up is not None
        kind, s, count = run[0].type, run[0].section, len(run)
        # Where the run starts: removals come bottom-up, the rest top-down.
        first = run[-1] if kind in (StepType.REMOVE_ROW, StepType.REMOVE_SECTION) else run[0]
        if kind == StepType.INSERT_SECTION:
            qt._sections_inserting(s, count)
            self._groups[s:s] = [step.group or "" for step in run]
            self._sections[s:s] = [[] for _ in run]
            self._section_ids[s:s] = self._new_ids(count)
            qt._sections_inserted()
        elif kind == StepType.REMOVE_SECTION:
            s = first.section
            qt._sections_removing(s, count)
            del self._groups[s:s + count], self._sections[s:s + count], self._section_ids[s:s + count]
            qt._sections_removed()
        elif kind == StepType.MOVE_ROW:
            step = run[0]
            assert step.row is not None and step.to_section is not None and step.to_row is not None
            announced = qt._row_moving(s, step.row, step.to_section, step.to_row)
            self._sections[step.to_section].insert(step.to_row, self._sections[s].pop(step.row))
            if announced:
                qt._row_moved()
        else:
            r = first.row
            assert r is not None
            if kind == StepType.INSERT_ROW:
                names = [arriving[id(step)] for step in run]
                qt._rows_inserting(s, r, count)
                self._sections[s][r:r] = names
                catching_up.stepped.update(names)
                catching_up.left.difference_update(names)
                qt._rows_inserted()
            elif kind == StepType.REMOVE_ROW:
                qt._rows_removing(s, r, count)
                catching_up.left.update(self._sections[s][r:r + count])
                del self._sections[s][r:r + count]
                qt._rows_removed()
            else:
                catching_up.stepped.update(self._sections[s][r:r + count])
                qt._rows_reloaded(s, r, count)

    def _row_places(self) -> Dict[RowName, Tuple[int, int]]:
        """Where each row is now: (section, row) by name."""
        return {name: (section, row) for section, rows in enumerate(self._sections)
                for row, name in enumerate(rows)}


class _Silent:
    """Stands in for the model's begin/end calls while a layout change
    applies the steps: the shadow changes, Qt hears nothing until
    ``layoutChanged``. Every call does nothing (and a move reports that
    it was not announced)."""

    def __getattr__(self, name: str) -> Callable[..., bool]:
        return lambda *args: False


_SILENT = _Silent()


class MappingsModel(_Follower, QAbstractItemModel):
    """A tree: sections are top-level items (showing their group), their
    rows are the children. One column."""

    def __init__(self, database: Database, mappings: Mappings, *,
                 display: Optional[Callable[[ShownRow], Any]] = None,
                 follow_commits: bool = True, parent: Optional[QObject] = None) -> None:
        QAbstractItemModel.__init__(self, parent)
        self._follow(database, mappings, display, follow_commits)

    # QAbstractItemModel

    def index(self, row: int, column: int, parent: Any = QModelIndex()) -> QModelIndex:
        if column != 0 or row < 0:
            return QModelIndex()
        if not parent.isValid():
            return self.createIndex(row, 0, 0) if row < len(self._groups) else QModelIndex()
        if parent.internalId() != 0 or parent.row() >= len(self._sections):
            return QModelIndex()
        section = parent.row()
        if row >= len(self._sections[section]):
            return QModelIndex()
        return self.createIndex(row, 0, self._section_ids[section])

    def parent(self, index: Any = QModelIndex()) -> QModelIndex:  # type: ignore[override]
        if not index.isValid() or index.internalId() == 0:
            return QModelIndex()
        section = self._section_ids.index(index.internalId())
        return self.createIndex(section, 0, 0)

    def rowCount(self, parent: Any = QModelIndex()) -> int:
        if not parent.isValid():
            return len(self._groups)
        if parent.internalId() != 0 or parent.column() != 0:
            return 0
        return len(self._sections[parent.row()])

    def columnCount(self, parent: Any = QModelIndex()) -> int:
        return 1

    def flags(self, index: Any) -> Qt.ItemFlag:
        # Rows are leaves. Said so, QTreeView.expandAll() does not keep a
        # persistent index per row (as it does for anything that might
        # have children), which Qt would move at every insert or removal
        # above it: a cost per step that grew with the table.
        flags = QAbstractItemModel.flags(self, index)
        if index.isValid() and index.internalId() != 0:
            flags |= Qt.ItemFlag.ItemNeverHasChildren
        return flags

    def data(self, index: Any, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid():
            return None
        if index.internalId() == 0:
            return self._groups[index.row()] if role == Qt.ItemDataRole.DisplayRole else None
        if role not in _ROW_ROLES:
            return None
        section = self._section_ids.index(index.internalId())
        return self._row_data(self._sections[section][index.row()], role)

    def roleNames(self) -> Dict[int, QByteArray]:
        return self._role_names()

    # runs of steps

    def _section_index(self, section: int) -> QModelIndex:
        return self.createIndex(section, 0, 0)

    def _begin_reset(self) -> None:
        self.beginResetModel()

    def _end_reset(self) -> None:
        self.endResetModel()

    def _sections_inserting(self, section: int, count: int) -> None:
        self.beginInsertRows(QModelIndex(), section, section + count - 1)

    def _sections_inserted(self) -> None:
        self.endInsertRows()

    def _sections_removing(self, section: int, count: int) -> None:
        self.beginRemoveRows(QModelIndex(), section, section + count - 1)

    def _sections_removed(self) -> None:
        self.endRemoveRows()

    def _rows_inserting(self, section: int, row: int, count: int) -> None:
        self.beginInsertRows(self._section_index(section), row, row + count - 1)

    def _rows_inserted(self) -> None:
        self.endInsertRows()

    def _rows_removing(self, section: int, row: int, count: int) -> None:
        self.beginRemoveRows(self._section_index(section), row, row + count - 1)

    def _rows_removed(self) -> None:
        self.endRemoveRows()

    def _row_moving(self, section: int, row: int, to_section: int, to_row: int) -> bool:
        # Qt's destination is a row of the table before the move: one more
        # when moving down within the same parent.
        destination = to_row + 1 if to_section == section and to_row > row else to_row
        if not self.beginMoveRows(self._section_index(section), row, row,
                                  self._section_index(to_section), destination):
            raise RuntimeError(f"Qt refused the move ({section}, {row}) -> ({to_section}, {to_row})")
        return True

    def _row_moved(self) -> None:
        self.endMoveRows()

    def _rows_reloaded(self, section: int, row: int, count: int) -> None:
        section_id = self._section_ids[section]
        self.dataChanged.emit(self.createIndex(row, 0, section_id),
                              self.createIndex(row + count - 1, 0, section_id), [])

    # a layout change: persistent indexes follow their sections and rows

    def _persistent_place(self, index: QModelIndex) -> Tuple[int, Optional[RowName]]:
        if index.internalId() == 0:
            return self._section_ids[index.row()], None
        section_id = index.internalId()
        return section_id, self._sections[self._section_ids.index(section_id)][index.row()]

    def _indexes_of(self, places: List[Tuple[int, Optional[RowName]]]) -> List[QModelIndex]:
        sections = {section_id: section for section, section_id in enumerate(self._section_ids)}
        rows = self._row_places() if any(name is not None for _, name in places) else {}
        indexes = []
        for section_id, name in places:
            if name is None:
                found = sections.get(section_id)
                indexes.append(QModelIndex() if found is None else self.createIndex(found, 0, 0))
            else:
                place = rows.get(name)   # the row may have moved to another section
                indexes.append(QModelIndex() if place is None else
                               self.createIndex(place[1], 0, self._section_ids[place[0]]))
        return indexes


class FlatMappingsModel(_Follower, QAbstractListModel):
    """Every section's rows as one list, top to bottom (for a list view
    over one group, or groups shown without headers)."""

    def __init__(self, database: Database, mappings: Mappings, *,
                 display: Optional[Callable[[ShownRow], Any]] = None,
                 follow_commits: bool = True, parent: Optional[QObject] = None) -> None:
        QAbstractListModel.__init__(self, parent)
        self._follow(database, mappings, display, follow_commits)

    def _flat(self, section: int, row: int) -> int:
        return sum(len(rows) for rows in self._sections[:section]) + row

    def _name_at(self, flat: int) -> Optional[RowName]:
        for rows in self._sections:
            if flat < len(rows):
                return rows[flat]
            flat -= len(rows)
        return None

    # QAbstractListModel

    def rowCount(self, parent: Any = QModelIndex()) -> int:
        return 0 if parent.isValid() else sum(len(rows) for rows in self._sections)

    def data(self, index: Any, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if role not in _ROW_ROLES or not index.isValid():
            return None
        name = self._name_at(index.row())
        return None if name is None else self._row_data(name, role)

    def roleNames(self) -> Dict[int, QByteArray]:
        return self._role_names()

    # runs of steps: sections are empty when inserted or removed, so only rows show

    def _begin_reset(self) -> None:
        self.beginResetModel()

    def _end_reset(self) -> None:
        self.endResetModel()

    def _sections_inserting(self, section: int, count: int) -> None:
        pass

    def _sections_inserted(self) -> None:
        pass

    def _sections_removing(self, section: int, count: int) -> None:
        pass

    def _sections_removed(self) -> None:
        pass

    def _rows_inserting(self, section: int, row: int, count: int) -> None:
        flat = self._flat(section, row)
        self.beginInsertRows(QModelIndex(), flat, flat + count - 1)

    def _rows_inserted(self) -> None:
        self.endInsertRows()

    def _rows_removing(self, section: int, row: int, count: int) -> None:
        flat = self._flat(section, row)
        self.beginRemoveRows(QModelIndex(), flat, flat + count - 1)

    def _rows_removed(self) -> None:
        self.endRemoveRows()

    def _row_moving(self, section: int, row: int, to_section: int, to_row: int) -> bool:
        source = self._flat(section, row)
        # Where it lands, counted without it: a row of the sections before
        # `to_section` leaves them one shorter when it came from there.
        target = self._flat(to_section, to_row) - (1 if section < to_section else 0)
        if target == source:
            return False   # a move between sections that keeps its place in the list
        destination = target + 1 if target > source else target
        return self.beginMoveRows(QModelIndex(), source, source, QModelIndex(), destination)

    def _row_moved(self) -> None:
        self.endMoveRows()

    def _rows_reloaded(self, section: int, row: int, count: int) -> None:
        flat = self._flat(section, row)
        self.dataChanged.emit(self.index(flat, 0), self.index(flat + count - 1, 0), [])

    # a layout change: persistent indexes follow their rows

    def _persistent_place(self, index: QModelIndex) -> Optional[RowName]:
        return self._name_at(index.row())

    def _indexes_of(self, names: List[Optional[RowName]]) -> List[QModelIndex]:
        places = self._row_places()
        indexes = []
        for name in names:
            place = places.get(name) if name is not None else None
            indexes.append(QModelIndex() if place is None else self.index(self._flat(*place), 0))
        return indexes
