"""Python callables that C calls back: one registry keeps them alive, and one
rule carries their exceptions back to Python.

Keeping them alive. C holds a callback as a function pointer and a
``void *ctx``. The function pointers are trampolines made once, when a
module loads (``trampoline``), so they live as long as the package; the
ctx is a small integer naming an entry of this registry, which holds the
Python callable. An entry that C keeps -- a view's grouping and sorting, a
commit observer, a dynamic mappings' filter and sort -- is released by
``RELEASE``, the destructor C calls exactly once when it is done with it
(also when registering fails). An entry that C uses during one call only
-- an enumeration's body, a find -- is released when that call returns
(``registered``).

Exceptions. No exception may cross into C. The trampoline keeps an
exception raised by the callable, on the calling thread (or, when the
entry has an ``exceptions`` list of its own, in that list: callbacks of a
background registration run on a thread of the library's, and its
``result()`` raises them), and returns the
failure value to C (for an enumeration that is "stop", for a filter
"hide", for a group sort "equal"); C finishes its call, and the Python
function that made the call raises the original exception instead of the
error C reported (``_base._check``), with the callback's traceback: a
``ValueError`` raised by a grouping comes out of ``t.set(...)`` as that
``ValueError``, not as a ``CallbackFailedError``. When several callbacks
of one call raised (C goes on asking a filter after it raised), the first
is raised. Commit observers are the one case where nothing is raised in
place of a failure: their commit has happened, so
``ReadWriteTransaction.commit`` reports each exception as an
``ObserverWarning`` whose ``__cause__`` is the original -- and raises one
that is not an ``Exception`` (``KeyboardInterrupt``, ``SystemExit``).

A callback may call into C itself (a read in an enumeration, a query in
an observer). While it runs, the exceptions already kept for the call
around it are set aside, so that its own calls raise only their own.

Imports nothing of the package but ``_ffi``.
"""

from __future__ import annotations

import itertools
import threading
from contextlib import contextmanager
from typing import Any, Callable, Dict, Iterator, List, Optional

from . import _ffi

# ---------------------------------------------------------------------------
# The registry
# ---------------------------------------------------------------------------

_lock = threading.Lock()
_entries: Dict[int, Any] = {}
_ids = itertools.count(1)


def register(entry: Any) -> int:
    """Keeps ``entry`` under a new ctx until C calls ``RELEASE`` with it."""
    with _lock:
        ctx = next(_ids)
        _entries[ctx] = entry
    return ctx


def _release(ctx: Optional[int]) -> None:
    try:
        with _lock:
            _entries.pop(ctx or 0, None)
    except BaseException:  # pragma: no cover - interpreter shutting down
        pass


#: The destructor to hand C with a ctx from ``register``.
RELEASE = _ffi.DESTRUCTOR_FN(_release)


@contextmanager
def registered(entry: Any) -> Iterator[int]:
    """The ctx of ``entry`` for a C call that uses it only while it runs."""
    ctx = register(entry)
    try:
        yield ctx
    finally:
        _release(ctx)


def pop(ctx: Optional[int]) -> Any:
    """Releases the entry of ``ctx`` and returns it (None when there is none):
    for a callback that C calls once, last, and that releases its own entry."""
    with _lock:
        return _entries.pop(ctx or 0, None)


def live() -> int:
    """How many callables C may still call (for tests)."""
    return len(_entries)


# ---------------------------------------------------------------------------
# Exceptions kept for the Python call that runs C
# ---------------------------------------------------------------------------

class _Kept(threading.local):
    def __init__(self) -> None:
        self.exceptions: List[BaseException] = []


_kept = _Kept()


def take() -> List[BaseException]:
    """The exceptions callbacks raised on this thread during the C call that
    just returned, oldest first; forgets them."""
    kept = _kept.exceptions
    if not kept:
        return []
    taken = list(kept)
    kept.clear()  # in place: a trampoline further out may hold this list (see run)
    return taken


def trampoline(fn_type: Any, failed: Any, call: Optional[Callable[..., Any]] = None) -> Any:
    """A C function pointer of ``fn_type`` that runs ``call(entry, *args)``
    -- or ``entry(*args)`` -- for the entry its ctx names, and returns what
    that returns; when it raises, the exception is kept (see the module)
    and C gets ``failed``."""

    def run(ctx: Optional[int], *args: Any) -> Any:
        kept = _kept.exceptions
        # Exceptions already kept for the running C call wait in `kept` while
        # this callback makes calls of its own. Only then is there a new list:
        # a callback usually starts with none kept, and this runs per comparison.
        set_aside = bool(kept)
        if set_aside:
            _kept.exceptions = []
        entry = None
        try:
            # No lock: a dict lookup is atomic, and C calls no entry after releasing it.
            entry = _entries[ctx or 0]
            return entry(*args) if call is None else call(entry, *args)
        except BaseException as exc:  # noqa: B902 - nothing may reach C
            own = getattr(entry, "exceptions", None)
            (kept if own is None else own).append(exc)
            return failed
        finally:
            if set_aside:
                _kept.exceptions = kept

    return fn_type(run)
