"""Exceptions raised by Python callbacks that C calls synchronously (view
grouping/sorting/find, mappings filter/sort).

A callback never lets an exception escape into C: its trampoline keeps the
exception here (per thread, the first one wins), returns "failed" to C, and
the Python wrapper of the C call re-raises it -- with its own traceback --
once the call returns (see ``store._check``).
"""

from __future__ import annotations

import threading
from typing import Optional

_state = threading.local()


def keep(exc: BaseException) -> None:
    """Remembers ``exc`` for the C call running on this thread."""
    try:
        if getattr(_state, "pending", None) is None:
            _state.pending = exc
    except BaseException:  # pragma: no cover - interpreter shutting down
        pass


def take() -> Optional[BaseException]:
    """The exception kept on this thread, if any, forgetting it."""
    pending = getattr(_state, "pending", None)
    if pending is not None:
        _state.pending = None
    return pending
