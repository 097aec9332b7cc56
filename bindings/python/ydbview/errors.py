"""Exceptions: one ``YDBError`` subclass per C status code."""

from __future__ import annotations

import concurrent.futures
import enum
from typing import Dict, Type


class Status(enum.IntEnum):
    """The C ABI's status codes (``YDB_*`` in include/ydbview.h)."""

    OK = 0
    ERROR = 1
    MISUSE = 2
    INVALID_ARGUMENT = 3
    NOTFOUND = 4
    CLOSED = 5
    BUSY = 6
    SQLITE = 7
    CALLBACK_FAILED = 8
    MISMATCH = 9
    CORRUPT = 10
    TOOBIG = 11
    RELOAD = 12
    CANTOPEN = 13
    CANCELLED = 14


class YDBError(Exception):
    """A call into ydbview failed. ``code`` is the C status, ``message`` its text."""

    code: int = Status.ERROR
    #: SQLite's extended result code when SQLite reported the failure (e.g.
    #: 13 for SQLITE_FULL), else 0.
    sqlite_code: int = 0

    def __init__(self, message: str, code: int | None = None, sqlite_code: int = 0) -> None:
        super().__init__(message)
        self.message = message
        self.sqlite_code = sqlite_code
        if code is not None:
            self.code = code

    def __str__(self) -> str:
        return self.message

    def __repr__(self) -> str:
        return f"{type(self).__name__}(code={int(self.code)}, message={self.message!r})"


class MisuseError(YDBError):
    """The API was used out of order: a closed/ended handle, a write in a read
    transaction, a second transaction on one connection."""

    code = Status.MISUSE


class InvalidArgumentError(YDBError, ValueError):
    """An argument was refused (a NUL in a name, invalid UTF-8, ...)."""

    code = Status.INVALID_ARGUMENT


class NotFoundError(YDBError, LookupError):
    """Nothing by that name: an unregistered view (``YDB_NOTFOUND``). Also a ``LookupError``."""

    code = Status.NOTFOUND


class ClosedError(YDBError):
    """The database or connection is closed."""

    code = Status.CLOSED


class BusyError(YDBError):
    """SQLite stayed busy (another process holds the database lock)."""

    code = Status.BUSY


class SQLiteError(YDBError):
    """SQLite failed (I/O error, disk full, not a database, ...)."""

    code = Status.SQLITE


class CallbackFailedError(YDBError):
    """A user callback failed."""

    code = Status.CALLBACK_FAILED


class MismatchError(YDBError):
    """Mappings are not at the snapshot the notifications start from (``changes()``); the mappings are unchanged."""

    code = Status.MISMATCH


class CorruptError(YDBError):
    """Stored data could not be read back (a damaged database or view)."""

    code = Status.CORRUPT


class TooBigError(YDBError, ValueError):
    """A value (object, metadata, key, collection) or row is longer than SQLite
    stores; nothing was written, and the transaction goes on (only a row that SQLite itself
    refuses as a whole poisons it)."""

    code = Status.TOOBIG


class CantOpenError(YDBError, OSError):
    """The database file cannot be opened or created; the message names the
    path and the system's reason."""

    code = Status.CANTOPEN


class ReloadRequired(YDBError):
    """The connection fell more than ``Database.max_commits_behind`` commits
    behind and the notifications in between were dropped. Raised by
    ``begin_long_lived_read_transaction()`` after it moved the connection to
    the newest snapshot anyway (and by reads of a long-lived read that was
    released): rebuild whatever depends on the connection, e.g. update
    mappings from a fresh read transaction."""

    code = Status.RELOAD


class CancelledError(YDBError, concurrent.futures.CancelledError):
    """A background view registration was cancelled (``cancel()``, its
    progress callable raising, or a later registration or unregistration
    of the same name) and installed nothing. Also a
    ``concurrent.futures.CancelledError``."""

    code = Status.CANCELLED


class ObserverWarning(RuntimeWarning):
    """A commit observer raised; the commit itself succeeded."""


_BY_CODE: Dict[int, Type[YDBError]] = {
    cls.code: cls
    for cls in (MisuseError, InvalidArgumentError, NotFoundError, ClosedError, BusyError,
                SQLiteError, CallbackFailedError, MismatchError, CorruptError,
                TooBigError, ReloadRequired, CantOpenError, CancelledError)
}


# The engine's messages are written for its Swift and C callers; these are
# the phrases in them that name a Swift or C spelling where Python has its
# own, so that a Python user is told what to call in Python. Exact phrases,
# not patterns: test_python_terms.py triggers each message for real, so a
# reworded engine message fails a test instead of slipping through.
_PYTHON_TERMS = (
    ("call beginLongLivedReadTransaction()", "call begin_long_lived_read_transaction()"),
    ("(use nil for a temporary database)", "(pass None, or no path, for a temporary database)"),
    ("(pass NULL for a temporary database)", "(pass None, or no path, for a temporary database)"),
)


def python_terms(message: str) -> str:
    """``message`` with the engine's Swift/C spellings in Python's."""
    for engine, python in _PYTHON_TERMS:
        if engine in message:
            message = message.replace(engine, python)
    return message


def error_for(code: int, message: str, sqlite_code: int = 0) -> YDBError:
    """The exception for a C status code (unknown codes give plain YDBError)."""
    cls = _BY_CODE.get(code, YDBError)
    return cls(python_terms(message), code, sqlite_code)
