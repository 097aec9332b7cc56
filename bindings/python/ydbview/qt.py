"""Qt item models over a ``Mappings`` (needs PySide6: ``pip install ydbview[qt]``).

``MappingsModel`` shows each section as a top-level item with its rows as
children; ``FlatMappingsModel`` shows every section's rows as one list. Both
follow a long-lived read connection of their own: after each commit (a
commit observer, delivered to the model's thread through a queued signal)
they catch up, compute the changeset and apply its edit script
(``Changeset.steps()``) one step at a time with the matching
``beginInsertRows``/``beginRemoveRows``/``beginMoveRows`` … ``end…`` calls,
and ``dataChanged`` for reloads -- which is what Qt's views animate and
what ``QAbstractItemModelTester`` checks.

Between two steps the model answers from a shadow of the table: each
section's rows as (collection, key). Objects and metadata are read lazily,
through the connection, when a view asks for them.

    model = MappingsModel(db, Mappings(["inbox", "done"], "byDate"),
                          display=lambda row: row.object["title"])
    tree = QTreeView(); tree.setModel(model); tree.show()
"""

from __future__ import annotations

import enum
from typing import Any, Callable, Dict, List, NamedTuple, Optional, Tuple

from PySide6.QtCore import QAbstractItemModel, QAbstractListModel, QByteArray, QModelIndex, QObject, Qt, Signal

from .errors import ReloadRequired
from .mappings import EditStep, Mappings, StepType
from .store import Connection, Database

__all__ = ["FlatMappingsModel", "MappingsModel", "Roles", "ShownRow"]

RowName = Tuple[str, str]


class Roles(enum.IntEnum):
    """Item data roles beyond ``Qt.DisplayRole``."""

    COLLECTION = Qt.ItemDataRole.UserRole + 1
    KEY = Qt.ItemDataRole.UserRole + 2
    OBJECT = Qt.ItemDataRole.UserRole + 3
    METADATA = Qt.ItemDataRole.UserRole + 4


class ShownRow(NamedTuple):
    """What ``display`` receives: a row as the model shows it."""

    collection: str
    key: str
    object: Any
    metadata: Any


class _Relay(QObject):
    """Carries "a commit happened" from the committing thread to the
    model's thread (a signal emitted elsewhere is queued)."""

    committed = Signal()


class _Follower:
    """The part both models share: the connection, the mappings, the
    shadow table, catching up and walking the edit script. The model
    classes only translate a step into Qt's begin/end calls."""

    def _follow(self, database: Database, mappings: Mappings,
                display: Optional[Callable[[ShownRow], Any]], follow_commits: bool) -> None:
        self._database = database
        self._mappings = mappings
        self._display = display
        self._closed = False
        self._connection: Connection = database.new_connection()
        self._connection.begin_long_lived_read_transaction()
        with self._connection.read() as t:
            mappings.update(t)
        self._groups: List[str] = []
        self._sections: List[List[RowName]] = []
        self._cache: Dict[RowName, Any] = {}
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
        """Stops following commits and closes the model's connection. The
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

    @property
    def mappings(self) -> Mappings:
        """The mappings the model follows (at the model's snapshot)."""
        return self._mappings

    # -- the shadow table --

    def _read_shadow(self) -> None:
        """The table as the mappings show it now, rows by (collection, key)."""
        m = self._mappings
        self._groups = [m.group_for_section(s) or "" for s in range(m.number_of_sections)]
        with self._connection.read() as t:
            self._sections = [[self._row_at(s, r, t) for r in range(m.number_of_items_in_section(s) or 0)]
                              for s in range(len(self._groups))]

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
        """The row's object and metadata at the model's snapshot (cached
        until the next catch-up); None once the row is gone, and None (not
        cached) when it cannot be read now: the model was closed, or its
        connection fell so far behind that the database released its
        snapshot -- the catch-up already queued resets the model.
        ``data()`` is called from Qt's painting, where an exception could
        only be printed."""
        if name not in self._cache:
            if self._closed:
                return None
            try:
                with self._connection.read() as t:
                    self._cache[name] = t.get_row(*name)
            except ReloadRequired:
                return None
        return self._cache[name]

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
        """Moves to the newest snapshot and applies the changeset step by
        step. Called by the commit observer's signal; call it directly to
        catch up synchronously (tests, or a model made with
        ``follow_commits=False``). Does nothing once the model is closed.

        When the connection fell more than ``Database.max_commits_behind``
        commits behind, the changes in between are gone: the model resets
        (``beginResetModel``/``endResetModel``) and reads the table anew."""
        if self._closed:
            return
        try:
            notifications = self._connection.begin_long_lived_read_transaction()
        except ReloadRequired:
            self._reset()
            return
        changeset = self._mappings.changes(notifications)
        self._cache.clear()
        try:
            for step in changeset.steps():
                self._apply(step)
        except ReloadRequired:
            # Released between two steps (other threads committed that many
            # times meanwhile) while reading an arriving row, which happens
            # before its begin call: no begin/end pair is open.
            self._reset()

    def _reset(self) -> None:
        self._begin_reset()
        try:
            self._connection.begin_long_lived_read_transaction()
        except ReloadRequired:
            pass   # at the newest snapshot all the same
        with self._connection.read() as t:
            self._mappings.update(t)
        self._cache.clear()
        self._read_shadow()
        self._end_reset()

    def _arriving(self, step: EditStep) -> RowName:
        if step.collection is not None and step.key is not None:
            return (step.collection, step.key)
        assert step.final_section is not None and step.final_row is not None
        return self._row_at(step.final_section, step.final_row)

    def _apply(self, step: EditStep) -> None:
        s, r = step.section, step.row
        if step.type == StepType.INSERT_SECTION:
            self._section_inserting(s)
            self._groups.insert(s, step.group or "")
            self._sections.insert(s, [])
            self._section_inserted()
        elif step.type == StepType.REMOVE_SECTION:
            self._section_removing(s)
            del self._groups[s], self._sections[s]
            self._section_removed()
        elif step.type == StepType.INSERT_ROW:
            assert r is not None
            name = self._arriving(step)
            self._row_inserting(s, r)
            self._sections[s].insert(r, name)
            self._row_inserted()
        elif step.type == StepType.REMOVE_ROW:
            assert r is not None
            self._row_removing(s, r)
            del self._sections[s][r]
            self._row_removed()
        elif step.type == StepType.MOVE_ROW:
            assert r is not None and step.to_section is not None and step.to_row is not None
            shown = self._row_moving(s, r, step.to_section, step.to_row)
            self._sections[step.to_section].insert(step.to_row, self._sections[s].pop(r))
            if shown:
                self._row_moved()
        else:
            assert r is not None
            self._row_reloaded(s, r)


class MappingsModel(_Follower, QAbstractItemModel):
    """A tree: sections are top-level items (showing their group), their
    rows are the children. One column."""

    def __init__(self, database: Database, mappings: Mappings, *,
                 display: Optional[Callable[[ShownRow], Any]] = None,
                 follow_commits: bool = True, parent: Optional[QObject] = None) -> None:
        QAbstractItemModel.__init__(self, parent)
        # A child index carries its section's id, not its number: section
        # numbers shift as sections come and go, ids do not.
        self._section_ids: List[int] = []
        self._next_id = 1
        self._follow(database, mappings, display, follow_commits)
        self._section_ids = [self._new_id() for _ in self._groups]

    def _new_id(self) -> int:
        self._next_id += 1
        return self._next_id

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

    def data(self, index: Any, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid():
            return None
        if index.internalId() == 0:
            return self._groups[index.row()] if role == Qt.ItemDataRole.DisplayRole else None
        section = self._section_ids.index(index.internalId())
        return self._row_data(self._sections[section][index.row()], role)

    def roleNames(self) -> Dict[int, QByteArray]:
        return self._role_names()

    # steps

    def _section_index(self, section: int) -> QModelIndex:
        return self.createIndex(section, 0, 0)

    def _begin_reset(self) -> None:
        self.beginResetModel()

    def _end_reset(self) -> None:
        self._section_ids = [self._new_id() for _ in self._groups]
        self.endResetModel()

    def _section_inserting(self, section: int) -> None:
        self.beginInsertRows(QModelIndex(), section, section)
        self._section_ids.insert(section, self._new_id())

    def _section_inserted(self) -> None:
        self.endInsertRows()

    def _section_removing(self, section: int) -> None:
        self.beginRemoveRows(QModelIndex(), section, section)
        del self._section_ids[section]

    def _section_removed(self) -> None:
        self.endRemoveRows()

    def _row_inserting(self, section: int, row: int) -> None:
        self.beginInsertRows(self._section_index(section), row, row)

    def _row_inserted(self) -> None:
        self.endInsertRows()

    def _row_removing(self, section: int, row: int) -> None:
        self.beginRemoveRows(self._section_index(section), row, row)

    def _row_removed(self) -> None:
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

    def _row_reloaded(self, section: int, row: int) -> None:
        index = self.createIndex(row, 0, self._section_ids[section])
        self.dataChanged.emit(index, index, [])


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
        name = self._name_at(index.row()) if index.isValid() else None
        return None if name is None else self._row_data(name, role)

    def roleNames(self) -> Dict[int, QByteArray]:
        return self._role_names()

    # steps: sections are empty when inserted or removed, so only rows show

    def _begin_reset(self) -> None:
        self.beginResetModel()

    def _end_reset(self) -> None:
        self.endResetModel()

    def _section_inserting(self, section: int) -> None:
        pass

    def _section_inserted(self) -> None:
        pass

    def _section_removing(self, section: int) -> None:
        pass

    def _section_removed(self) -> None:
        pass

    def _row_inserting(self, section: int, row: int) -> None:
        flat = self._flat(section, row)
        self.beginInsertRows(QModelIndex(), flat, flat)

    def _row_inserted(self) -> None:
        self.endInsertRows()

    def _row_removing(self, section: int, row: int) -> None:
        flat = self._flat(section, row)
        self.beginRemoveRows(QModelIndex(), flat, flat)

    def _row_removed(self) -> None:
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

    def _row_reloaded(self, section: int, row: int) -> None:
        index = self.index(self._flat(section, row), 0)
        self.dataChanged.emit(index, index, [])
