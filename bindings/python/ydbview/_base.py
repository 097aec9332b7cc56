"""What every module of the package shares: turning C statuses into
exceptions, calling C functions that call back into Python, and handles that
close. It depends on nothing else in the package, so every module can import
it at the top."""

from __future__ import annotations

import weakref
from typing import Any, Callable, Optional, TypeVar

from . import _callbacks, _ffi
from .errors import Status, error_for


def _check(status: int) -> None:
    """Raises the exception for a failed C call (read on the same thread).

    An exception raised by a Python callback during the call (a view's
    grouping or sorting, a find, a mappings filter) is raised instead, with
    its traceback: it is why the call failed."""
    callback_error = _callbacks.take()
    if callback_error is not None:
        raise callback_error
    if status != Status.OK:
        _, message = _ffi.last_error()
        raise error_for(status, message, _ffi.lib.ydb_errcode_sqlite())


class _Guarded:
    """Wraps a Python callback for C: it never lets an exception escape into
    C (the exception is kept, the enumeration is stopped, and ``reraise``
    raises it once the C call has returned)."""

    def __init__(self, body: Callable[..., Any]) -> None:
        self.body = body
        self.error: Optional[BaseException] = None

    def __call__(self, *args: Any) -> int:
        try:
            return 1 if self.body(*args) else 0
        except BaseException as exc:  # noqa: B902 - nothing may reach C
            self.error = exc
            return 1

    def reraise(self) -> None:
        if self.error is not None:
            error, self.error = self.error, None
            raise error


def _enumerate(call: Callable[[Any], int], fn_type: Any, body: Callable[..., Any]) -> None:
    guarded = _Guarded(body)
    callback = fn_type(guarded)  # referenced here until the C call returns
    status = call(callback)
    guarded.reraise()
    _check(status)


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

    def close(self) -> None:
        """Closes the handle (see the class for what that ends). Safe twice."""
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
