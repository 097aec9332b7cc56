"""Full-text indexes (SQLite FTS5; docs/full-text-index.md) and search
views over them, thin over the C API.

>>> def note_text(row):                                      # doctest: +SKIP
...     return {"title": row.object["title"], "body": row.object["body"]}
>>> db.register_fts_index("notes", ["title", "body"], note_text, flavour="object")
>>> with conn.read() as t:
...     for match in t.search("notes", "swift AND title: sqlite", limit=20):
...         print(match.collection, match.key, match.rank)

``extract(row)`` returns a dict of column name to text, or None to leave
the row out (a column it does not name is empty); with
``transaction=True`` it is ``extract(txn, row)``, ``txn`` a read-only
``CallbackTransaction``. It runs when a row is inserted and, as ``invoke``
says (default: by ``flavour``), when one changes. What it raises is
re-raised by the write (or registration) that ran it, which fails.

Queries are FTS5 MATCH expressions; one FTS5 cannot parse raises
``InvalidArgumentError``, an unknown index ``NotFoundError``. Ranks are
bm25: lower is better, and results come best first.

A search view (docs/behaviour.md, "Search views") shows the rows of a
parent view that a query matches in an index, in the parent's groups and
order; a new query logs exactly the rows entering and leaving, so a list
over it animates as the user types:

>>> db.register_search_view("found", "byDate", "notes")     # doctest: +SKIP
>>> with conn.read_write() as t:
...     t.set_search_query("found", "swi*")
>>> db.search("found", "swif*", callback=lambda s: s.result() and refresh())

``Database.search`` runs in the background and returns a
``BackgroundSearch`` at once; for each view only the newest query runs.

Imports nothing of the package but its leaf modules and ``views``.
"""

from __future__ import annotations

import threading
from ctypes import byref, c_char_p, c_int, c_void_p
from typing import Any, Callable, Dict, Iterable, List, NamedTuple, Optional

from . import _callbacks, _ffi
from ._base import _c_int, _check, _count, _timeout_milliseconds, _Transaction
from ._ffi import lib
from ._text import decode, encode
from .errors import MisuseError, Status, YDBError, error_for
from .views import _INVOKE_DEFAULT, FlavourLike, InvokeOptions, RegistrationOutcome, _flavour, _view_row
from .serializers import Serializer, deserializer_of

__all__ = ["Match", "BackgroundSearch"]


class Match(NamedTuple):
    """One row a search found: its collection and key, and its bm25 rank
    (lower is a better match)."""

    collection: str
    key: str
    rank: float


_columns_set = _ffi.holding_the_gil("ydb_fts_columns_set")


class _Extract:
    """The registry entry of one index: its callback, its columns by name,
    how rows are deserialized and how a callback that asked for the
    transaction gets it (``lend``, as for views)."""

    def __init__(self, fn: Callable[..., Any], columns: List[str], lends: bool, serializer: Serializer,
                 metadata_serializer: Serializer, lend: Callable[[Optional[int]], Any]) -> None:
        self.fn, self.lends, self.lend = fn, lends, lend
        self.positions: Dict[str, int] = {name: index for index, name in enumerate(columns)}
        self.load = deserializer_of(serializer)
        self.load_metadata = deserializer_of(metadata_serializer)

    def extract(self, txn: Optional[int], row: int, result: Optional[int]) -> int:
        viewed = _view_row(row, self.load, self.load_metadata)
        texts = self.fn(self.lend(txn), viewed) if self.lends else self.fn(viewed)
        if texts is None:
            return 0
        if not isinstance(texts, dict):
            raise TypeError(f"an extract callback must return a dict of column to str, or None, "
                            f"not {type(texts).__name__}")
        for column, text in texts.items():
            position = self.positions.get(column)
            if position is None:
                raise KeyError(f"extract callback gave text for {column!r}, not a column of the index "
                               f"{list(self.positions)}")
            if not isinstance(text, str):
                raise TypeError(f"the text of column {column!r} must be str, not {type(text).__name__}")
            # C refuses what is not UTF-8 (a lone surrogate) or holds a NUL.
            data = text.encode("utf-8", "surrogatepass")
            status = _columns_set(result, position, data, len(data))
            if status:
                _check(status)
        return 0


_EXTRACT_TRAMPOLINE = _callbacks.trampoline(_ffi.FTS_EXTRACT_FN, failed=1, call=_Extract.extract)
_MATCH_TRAMPOLINE = _callbacks.trampoline(_ffi.FTS_MATCH_FN, failed=1)


def _names(values: Iterable[str], what: str) -> Any:
    """``values`` as a C array of strings (and its length)."""
    if isinstance(values, str):
        raise TypeError(f"{what} must be an iterable of names, not one str")
    names = [encode(value, what) for value in values]
    return (c_char_p * max(len(names), 1))(*names), len(names)


def register_fts_index(database_handle: Any, name: str, columns: Iterable[str], extract: Callable[..., Any], *,
                       version_tag: str, flavour: FlavourLike, invoke: Optional[InvokeOptions], transaction: bool,
                       allowed_collections: Optional[Iterable[str]], tokenizer: Optional[str],
                       serializer: Serializer, metadata_serializer: Serializer,
                       lend: Callable[[Optional[int]], Any]) -> RegistrationOutcome:
    """``Database.register_fts_index``: builds the C definition, registers
    it (C releases the callback's entry through its destructor, also when
    this fails) and returns how the index was built."""
    if not callable(extract):
        raise TypeError("extract must be callable")
    encoded = encode(name, "full-text index name")
    if isinstance(columns, str):
        raise TypeError("columns must be an iterable of names, not one str")
    column_names = list(columns)
    definition = _ffi.FtsIndexDefinitionStruct()
    definition.columns, definition.column_count = _names(column_names, "column")
    definition.extract = _EXTRACT_TRAMPOLINE
    definition.extract_flavour = int(_flavour(flavour))
    definition.extract_invoke = _INVOKE_DEFAULT if invoke is None else int(invoke)
    definition.version_tag = encode(version_tag, "version_tag")
    if allowed_collections is not None:
        definition.allowed_collections, definition.allowed_collection_count = _names(allowed_collections,
                                                                                      "collection")
    if tokenizer is not None:
        definition.tokenizer = encode(tokenizer, "tokenizer")
    ctx = _callbacks.register(_Extract(extract, column_names, bool(transaction), serializer, metadata_serializer,
                                       lend))
    outcome = c_int()
    _check(lib.ydb_fts_index_register(database_handle, encoded, byref(definition), ctx, _callbacks.RELEASE,
                                      byref(outcome)))
    return RegistrationOutcome(outcome.value)


def search(transaction: _Transaction, index: str, query: str, limit: Optional[int]) -> List[Match]:
    """``ReadTransaction.search``: every match, best first (at most ``limit``)."""
    most = 0 if limit is None else _count(limit, "limit")
    found: List[Match] = []
    if limit == 0:
        most = 1   # C's 0 is "all": ask for one, keep none (C still checks the query)

    def each(collection: bytes, key: bytes, rank: float) -> int:
        if limit == 0:
            return 1
        found.append(Match(decode(collection), decode(key), rank))
        return 0

    with _callbacks.registered(each) as ctx:
        status = lib.ydb_txn_search(transaction._handle, encode(index, "full-text index name"),
                                    encode(query, "query"), most, _MATCH_TRAMPOLINE, ctx)
    _check(status)
    return found


def snippet(transaction: _Transaction, index: str, query: str, collection: str, key: str, *,
            column: Optional[str], before: str, after: str, ellipsis: str, tokens: int) -> Optional[str]:
    """``ReadTransaction.snippet``: the text, or None when the row does not match."""
    out = c_void_p()
    status = lib.ydb_txn_search_snippet(
        transaction._handle, encode(index, "full-text index name"), encode(query, "query"),
        encode(collection, "collection"), encode(key, "key"), None if column is None else encode(column, "column"),
        encode(before, "before"), encode(after, "after"), encode(ellipsis, "ellipsis"), _c_int(tokens, "tokens"),
        byref(out))
    if status == Status.NOTFOUND:
        return None
    _check(status)
    return _ffi.take_string(out)


# ---------------------------------------------------------------------------
# Search views: registering one, its query in a transaction, and queries set
# in the background. A background search is one registry entry (see
# _callbacks) that its completion releases: C calls it exactly once.
# ---------------------------------------------------------------------------

def register_search_view(database_handle: Any, name: str, parent: str, index: str,
                         query: str, order: str) -> RegistrationOutcome:
    """``Database.register_search_view``: registers it and returns how it
    was built (always ``BUILT``: a search view is not stored)."""
    if order not in ("parent", "rank"):
        raise ValueError(f"order must be 'parent' or 'rank', not {order!r}")
    register = lib.ydb_search_view_register_by_rank if order == "rank" else lib.ydb_search_view_register
    outcome = c_int()
    _check(register(database_handle, encode(name, "view name"), encode(parent, "parent view name"),
                    encode(index, "full-text index name"), encode(query, "query"), byref(outcome)))
    return RegistrationOutcome(outcome.value)


def set_search_query(transaction: _Transaction, name: str, query: str) -> None:
    """``ReadWriteTransaction.set_search_query``."""
    _check(lib.ydb_search_view_set_query(transaction._handle, encode(name, "view name"), encode(query, "query")))


def search_query(transaction: _Transaction, name: str) -> str:
    """``ReadTransaction.search_query``."""
    out = c_void_p()
    _check(lib.ydb_search_view_query(transaction._handle, encode(name, "view name"), byref(out)))
    return _ffi.take_string(out) or ""


class _Completing(threading.local):
    """The search whose callback runs on this thread, if any: its own
    ``result()`` answers at once there, and waiting for another search of
    its database would wait for the thread it blocks."""

    def __init__(self) -> None:
        self.search: Optional["BackgroundSearch"] = None


_completing = _Completing()


class BackgroundSearch:
    """A query set in the background on a search view (``Database.search``),
    used like a ``concurrent.futures.Future``: ``done()``,
    ``wait(timeout)``, ``result(timeout)``, ``exception(timeout)``.

    ``result()`` is True once the results are committed (their changeset
    reaches observers and mappings like any commit's), False when a newer
    query for the same view superseded this one before it ran; or it raises
    why the search failed: ``NotFoundError`` (no search view of that name
    when it ran), ``InvalidArgumentError`` (a malformed query),
    ``ClosedError`` (the database closed first)...

    The callback given to ``Database.search`` is called once, with this
    search, on a thread of the library's own -- never inside the
    ``search`` call that queued it or the one that superseded it -- before
    ``done()`` turns True. What it raises goes to ``threading.excepthook``,
    as an exception ending a thread does.
    """

    def __init__(self, database: Any, view: str, query: str,
                 callback: Optional[Callable[["BackgroundSearch"], Any]]) -> None:
        self.database = database  # keeps the database open while we are
        #: The search view and the query, as given.
        self.view = view
        self.query = query
        self._callback = callback
        self._finished = threading.Event()
        self._status = -1
        self._applied = False
        self._message = ""

    def __repr__(self) -> str:
        state = "finished" if self.done() else "pending"
        return f"BackgroundSearch({self.view!r}, {self.query!r}, {state})"

    def _finish(self, status: int, applied: int, message: str) -> None:
        """The completion, on the search's thread: the outcome, then the
        callback, then the waiters."""
        self._status, self._applied, self._message = status, bool(applied), message
        callback, self._callback = self._callback, None
        try:
            if callback is not None:
                outer, _completing.search = _completing.search, self
                try:
                    callback(self)
                except BaseException as exc:  # noqa: B902 - nothing may reach C
                    threading.excepthook(threading.ExceptHookArgs((type(exc), exc, exc.__traceback__, None)))
                finally:
                    _completing.search = outer
        finally:
            self._finished.set()

    def wait(self, timeout: Optional[float] = None) -> bool:
        """Waits until the search finished and its callback returned (at
        most ``timeout`` seconds; None: as long as it takes); returns
        whether it did. In the search's own callback it returns True. From
        the callback of another search of the same database it raises
        ``MisuseError``: searches complete one at a time, on that thread."""
        _timeout_milliseconds(timeout, "timeout")   # refuses what C would
        if self._finished.is_set() or _completing.search is self:
            return True
        running = _completing.search
        if running is not None and running.database is self.database:
            raise MisuseError("cannot wait for a background search from the callback of another search of "
                              "its database (the searches complete on that thread: it would wait for itself)",
                              Status.MISUSE)
        return self._finished.wait(timeout)

    def done(self) -> bool:
        """Whether the search finished (applied, superseded or failed) and
        its callback returned."""
        return self._finished.is_set()

    def exception(self, timeout: Optional[float] = None) -> Optional[YDBError]:
        """What ``result()`` would raise, or None; waits as ``result()`` does."""
        if not self.wait(timeout):
            raise TimeoutError(f"the search {self.query!r} of view {self.view!r} is still running")
        if self._status != Status.OK:
            return error_for(self._status, self._message)
        return None

    def result(self, timeout: Optional[float] = None) -> bool:
        """Waits (at most ``timeout`` seconds, else ``TimeoutError``) and
        returns True when the query's results were committed, False when a
        newer query for the view superseded it; or raises why it failed."""
        failure = self.exception(timeout)
        if failure is not None:
            raise failure
        return self._applied


def _searched(ctx: Optional[int], status: int, applied: int, message: Optional[bytes]) -> None:
    try:
        search = _callbacks.pop(ctx)
        if search is not None:
            search._finish(status, applied, decode(message) if message else "")
    except BaseException:  # pragma: no cover - nothing may reach C
        pass


_SEARCH_DONE_TRAMPOLINE = _ffi.SEARCH_DONE_FN(_searched)


def start_search(database: Any, name: str, query: str,
                 callback: Optional[Callable[[BackgroundSearch], Any]]) -> BackgroundSearch:
    """``Database.search``: queues the query; the registry keeps the search
    (and so its callback) until C completes it."""
    if callback is not None and not callable(callback):
        raise TypeError("callback must be callable")
    encoded_name, encoded_query = encode(name, "view name"), encode(query, "query")
    pending = BackgroundSearch(database, name, query, callback)
    ctx = _callbacks.register(pending)
    status = lib.ydb_search_view_search(database._handle, encoded_name, encoded_query, _SEARCH_DONE_TRAMPOLINE, ctx)
    if status != Status.OK:
        _callbacks.pop(ctx)  # nothing was queued: no completion will come
        _check(status)
    return pending
