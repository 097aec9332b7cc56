"""What the store, views and mappings share: turning C statuses into
exceptions, running C enumerations, handles that close, indexes and
numbers checked for their C types, and what
views and mappings need of a transaction. It imports only the leaf modules
(``_callbacks``, ``_ffi``, ``_text``, ``errors``), so every module can
import it at the top."""

from __future__ import annotations

import weakref
from ctypes import byref, c_int
from typing import Any, Callable, List, Optional, Protocol, Tuple, TypeVar

from . import _callbacks, _ffi
from ._ffi import lib
from ._text import encode
from .errors import InvalidArgumentError, NotFoundError, Status, error_for


def _check(status: int) -> None:
    """Raises why the C call that just returned on this thread failed.

    That is the exception a Python callback raised during the call (a
    view's grouping or sorting, a find, a mappings filter, an enumeration
    body), as it was raised -- see ``_callbacks`` -- or else the error for
    a failed ``status``."""
    kept = _callbacks.take()
    if kept:
        raise kept[0]
    if status != Status.OK:
        _, message = _ffi.last_error()
        raise error_for(status, message, lib.ydb_errcode_sqlite())


# One trampoline per kind of enumeration callback; the registry entry is the body.
_ENUMERATION_TRAMPOLINES = {
    fn_type: _callbacks.trampoline(fn_type, failed=1)
    for fn_type in (_ffi.NAME_FN, _ffi.ROW_FN, _ffi.ROW_CHANGE_FN, _ffi.VIEW_KEY_FN, _ffi.VIEW_ROW_FN)
}


def _enumerate(function: Any, *args: Any, each: Callable[..., Any]) -> None:
    """Runs the C enumeration ``function(*args, callback, ctx)``, calling
    ``each`` with what C passes for each item (after the ctx); a truthy
    return stops the enumeration, an exception stops it and is raised here."""
    trampoline = _ENUMERATION_TRAMPOLINES[function.argtypes[-2]]  # the declared callback type
    with _callbacks.registered(lambda *item: 1 if each(*item) else 0) as ctx:
        status = function(*args, trampoline, ctx)
    _check(status)


def _integer(value: int, what: str) -> int:
    """``value`` if it is an int (not a bool); else TypeError."""
    if not isinstance(value, int) or isinstance(value, bool):
        raise TypeError(f"{what} must be int, not {type(value).__name__}")
    return value


# ctypes converts an int that does not fit its C type by wrapping it
# silently (2**64 + 5 becomes 5, -1 becomes 2**64 - 1): every number from
# the user goes through one of the helpers below first.


def _index(value: int) -> Optional[int]:
    """A Python index for C, or None for one that cannot exist (negative,
    or past what a size_t holds: no group has that many rows)."""
    value = _integer(value, "an index")
    return value if 0 <= value < _ffi.INDEX_END else None


def _count(value: int, what: str) -> int:
    """A count or limit for a size_t or uint64_t: negative gives ValueError;
    a value past the C type's largest is that largest (\"no limit\")."""
    if _integer(value, what) < 0:
        raise ValueError(f"{what} must be 0 or more (got {value})")
    return min(value, _ffi.INDEX_END)   # SIZE_MAX


def _timeout_milliseconds(seconds: Optional[float], what: str) -> int:
    """A timeout in seconds (None: no limit) as C's milliseconds (-1: no
    limit): past 2**62 ms (infinity included) it is no limit; negative is
    0; NaN or a non-number raise."""
    if seconds is None:
        return -1
    if isinstance(seconds, bool) or not isinstance(seconds, (int, float)):
        raise TypeError(f"{what} must be a number of seconds or None, not {type(seconds).__name__}")
    if seconds != seconds:
        raise ValueError(f"{what} must be a number of seconds or None, not NaN")
    return -1 if seconds * 1000 >= 2**62 else max(0, int(seconds * 1000))


def _timeout_seconds(milliseconds: int) -> Optional[float]:
    """C's milliseconds (-1: no limit) as seconds, or None."""
    return None if milliseconds < 0 else milliseconds / 1000


def _c_int(value: int, what: str) -> int:
    """A value for a C int: outside -2**31 .. 2**31 - 1 gives InvalidArgumentError."""
    if not -2**31 <= _integer(value, what) < 2**31:
        raise InvalidArgumentError(f"{what} {value} is out of range of a C int", Status.INVALID_ARGUMENT)
    return value


# ---------------------------------------------------------------------------
# Transactions, as views and mappings see them
# ---------------------------------------------------------------------------

class _Transaction(Protocol):
    """What views and mappings use of a transaction: its C handle and how it
    turns stored bytes into values. ``store.ReadTransaction`` is the one
    kind there is; views and mappings name it by this protocol because the
    store imports them (``ReadTransaction.view`` makes a ``ViewTransaction``)."""

    _handle: int

    def _load(self, data: Optional[bytes]) -> Any:
        ...

    def _load_metadata(self, data: Optional[bytes]) -> Any:
        ...

    def _deserializers(self) -> Tuple[Optional[Callable[[bytes], Any]], Optional[Callable[[bytes], Any]]]:
        """The ``deserialize`` of the object and metadata serializers, None
        for one that keeps bytes as they are (for loops that read many rows)."""
        ...

    def _callback_transaction(self, handle: Optional[int]) -> Any:
        """The read-only transaction a callback gets for C handle ``handle``."""
        ...


def _require_view(transaction: _Transaction, name: str) -> None:
    """Raises NotFoundError (as C does) unless view ``name`` is registered
    at ``transaction``'s snapshot."""
    flag = c_int()
    _check(lib.ydb_view_is_registered(transaction._handle, encode(name, "view name"), byref(flag)))
    if not flag.value:
        raise NotFoundError(f"no view named '{name}' is registered", Status.NOTFOUND)


# ---------------------------------------------------------------------------
# Handles that close
# ---------------------------------------------------------------------------

_Self = TypeVar("_Self", bound="_Closeable")


class _Closeable:
    """A handle closed by ``close()``, by a ``with`` block, or by a finalizer
    when it is garbage-collected (safe at interpreter shutdown)."""

    _handle: int
    _finalizer: weakref.finalize

    def _own(self, handle: int, release: Callable[[int], int]) -> None:
        self._handle = handle
        self._finalizer = weakref.finalize(self, release, handle)

    def _when_closing(self, hook: Callable[[], None]) -> Callable[[], None]:
        """Runs ``hook`` when ``close()`` is called, before the handle
        closes (``ydbview.aio`` lets go of a wakeup descriptor then, before
        it is closed under its event loop). Returns what removes it."""
        hooks: List[Callable[[], None]] = self.__dict__.setdefault("_closing_hooks", [])
        hooks.append(hook)

        def remove() -> None:
            if hook in hooks:
                hooks.remove(hook)
        return remove

    def close(self) -> None:
        """Closes the handle (see the class for what that ends). Safe twice."""
        for hook in list(self.__dict__.get("_closing_hooks", ())):
            hook()
        status = self._finalizer()
        if status:
            _check(status)

    @property
    def closed(self) -> bool:
        """True once the handle is closed (then every call raises ``MisuseError`` or ``ClosedError``)."""
        return not self._finalizer.alive

    def __enter__(self: _Self) -> _Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
