"""Commit notifications: what one read-write commit changed.

Commit observers receive them, ``Connection.begin_long_lived_read_transaction``
returns them, and views and mappings read them to tell what changed.
"""

from __future__ import annotations

import enum
import weakref
from ctypes import byref, c_int, c_uint64
from typing import Dict, FrozenSet, Iterable, List, Mapping, Tuple

from . import _ffi
from ._base import _check, _enumerate
from ._ffi import lib
from ._text import decode, encode

__all__ = [
    "RowChange",
    "CommitNotification",
    "has_change",
    "has_change_in_collection",
]


class RowChange(enum.IntFlag):
    """How a row changed in a commit (``YDB_ROW_*``)."""

    OBJECT_CHANGED = 1
    METADATA_CHANGED = 2
    OBJECT_TOUCHED = 4
    METADATA_TOUCHED = 8
    REMOVED = 16


class CommitNotification:
    """What one read-write commit changed (YapDatabase's modified notification).

    ``changed_rows`` maps ``(collection, key)`` to ``RowChange`` flags for rows
    set, replaced, touched or removed one by one; rows removed with
    ``remove_all``/``remove_all_collections`` are not listed, see
    ``removed_collections`` and ``removed_all``. ``has_change`` accounts for
    all three.
    """

    snapshot: int
    changed_rows: Mapping[Tuple[str, str], RowChange]
    removed_collections: FrozenSet[str]
    removed_all: bool

    def __init__(self, owned_handle: int) -> None:
        self._handle = owned_handle
        self._finalizer = weakref.finalize(self, lib.ydb_notification_free, owned_handle)
        snapshot = c_uint64()
        _check(lib.ydb_notification_snapshot(owned_handle, byref(snapshot)))
        self.snapshot = snapshot.value
        flag = c_int()
        _check(lib.ydb_notification_removed_all(owned_handle, byref(flag)))
        self.removed_all = bool(flag.value)
        rows: Dict[Tuple[str, str], RowChange] = {}
        _enumerate(lib.ydb_notification_enumerate_changed_rows, owned_handle,
                   each=lambda collection, key, flags: rows.__setitem__(
                       (decode(collection), decode(key)), RowChange(flags)))
        self.changed_rows = rows
        removed: List[str] = []
        _enumerate(lib.ydb_notification_enumerate_removed_collections, owned_handle,
                   each=lambda name: removed.append(decode(name)))
        self.removed_collections = frozenset(removed)

    @classmethod
    def _copy_of(cls, borrowed_handle: int) -> "CommitNotification":
        copy = _ffi.NotificationPointer()
        _check(lib.ydb_notification_copy(borrowed_handle, byref(copy)))
        return cls(copy)

    def has_change(self, collection: str, key: str) -> bool:
        """True when this commit changed row (collection, key)."""
        flag = c_int()
        _check(lib.ydb_notification_has_change(self._handle, encode(collection, "collection"),
                                               encode(key, "key"), byref(flag)))
        return bool(flag.value)

    def has_change_in_collection(self, collection: str) -> bool:
        """True when this commit changed any row of ``collection``."""
        flag = c_int()
        _check(lib.ydb_notification_has_change_in_collection(
            self._handle, encode(collection, "collection"), byref(flag)))
        return bool(flag.value)

    def __repr__(self) -> str:
        return (f"CommitNotification(snapshot={self.snapshot}, changed_rows={len(self.changed_rows)}, "
                f"removed_collections={sorted(self.removed_collections)}, removed_all={self.removed_all})")


def has_change(notifications: Iterable[CommitNotification], collection: str, key: str) -> bool:
    """True when any of ``notifications`` changed row (collection, key)."""
    return any(n.has_change(collection, key) for n in notifications)


def has_change_in_collection(notifications: Iterable[CommitNotification], collection: str) -> bool:
    """True when any of ``notifications`` changed a row of ``collection``."""
    return any(n.has_change_in_collection(collection) for n in notifications)


class _NotificationList:
    """A temporary C list of notifications, for the C calls that read
    several at once (``with _NotificationList(notifications) as handle:``)."""

    def __init__(self, notifications: Iterable[CommitNotification]) -> None:
        handles = [n._handle for n in notifications]
        array = (_ffi.NotificationPointer * max(len(handles), 1))(*handles)
        out = _ffi.NotificationListPointer()
        _check(lib.ydb_notification_list_new(array, len(handles), byref(out)))
        self.handle = out

    def __enter__(self) -> _ffi.NotificationListPointer:
        return self.handle

    def __exit__(self, *exc: object) -> None:
        lib.ydb_notification_list_free(self.handle)
