"""The store: databases, connections, transactions and commit notifications.

Every class wraps a C handle (see include/ydbview.h) and releases it in
``close()``/``end()``, on leaving a ``with`` block, or -- as a last resort --
in a finalizer that is safe at interpreter shutdown. Names (collections and
keys) are ``str``; objects and metadata go through the connection's
serializers (bytes unchanged by default).
"""

from __future__ import annotations

import os
import traceback
import warnings
from ctypes import byref, c_char_p, c_int, c_int64, c_size_t, c_uint64, c_void_p
from typing import Any, Callable, Iterable, List, Optional, Tuple, TypeVar, Union

from . import _callbacks, _ffi
from ._base import _check, _Closeable, _count, _enumerate, _integer, _timeout_milliseconds, _timeout_seconds
from ._ffi import lib, memory_at
from ._text import decode, encode
from ._values import Row
from .errors import ObserverWarning, Status, error_for
from .notifications import CommitNotification, RowChange, has_change, has_change_in_collection
from .search import (BackgroundSearch, Match, register_fts_index, register_search_view, search, search_query,
                     set_search_query, snippet, start_search)
from .serializers import BytesSerializer, Serializer, deserializer_of
from .views import (FlavourLike, InvokeOptions, RegistrationOutcome, ViewRegistration, ViewTransaction, _Reporter,
                    filter_definition, register_async, setting_batch, view_definition)

__all__ = [
    "Database",
    "Connection",
    "ReadTransaction",
    "ReadWriteTransaction",
    "CallbackTransaction",
    "CommitNotification",
    "RowChange",
    "Row",
    "has_change",
    "has_change_in_collection",
]

PathLike = Union[str, "os.PathLike[str]"]

# ---------------------------------------------------------------------------
# Commit observers: each is a registry entry (see _callbacks), released when
# C calls the destructor -- on removal, or when the database closes.
# ---------------------------------------------------------------------------

def _deliver(observer: Callable[[CommitNotification], Any], notification: Optional[int]) -> None:
    if notification:
        observer(CommitNotification._copy_of(notification))


# An observer cannot fail in C (it returns nothing): what it raises is kept
# for the commit, which reports it (_warn_observer_failures).
_OBSERVER_TRAMPOLINE = _callbacks.trampoline(_ffi.OBSERVER_FN, failed=None, call=_deliver)


def _warn_observer_failures(failures: List[BaseException]) -> None:
    """After a commit succeeded: each exception an observer raised becomes an
    ``ObserverWarning`` caused by it; one that is not an ``Exception``
    (KeyboardInterrupt, SystemExit) is raised."""
    for exc in failures:
        if not isinstance(exc, Exception):
            raise exc
        text = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))
        warning = ObserverWarning(f"a commit observer raised {exc!r}; the commit succeeded\n{text}")
        warning.__cause__ = exc
        warnings.warn(warning, stacklevel=3)


# ---------------------------------------------------------------------------
# Database
# ---------------------------------------------------------------------------

class Database(_Closeable):
    """A ydbview database: one SQLite file (WAL mode) shared by its connections.

    ``Database()`` (path None) is a private temporary database, deleted on
    close. Closing it makes its connections raise ``ClosedError`` and removes
    every commit observer, and stores what persistent views still keep in
    memory (also when it is collected or the interpreter exits; a process
    killed within a second of a commit repopulates those views when it
    next registers them). Thread-safe: open one connection per thread.

    >>> with Database(serializer=JSONSerializer()) as db:      # doctest: +SKIP
    ...     conn = db.new_connection()
    ...     with conn.read_write() as t:
    ...         t.set("books", "b1", {"title": "Dune"})

    ``multi_process=True`` opens the file in shared mode: several processes
    (a daemon and its GUI, a script run beside an app) open it at once, and
    each one's views, changesets and commit observers follow the others'
    commits (docs/behaviour.md, "Several processes"). Every process must
    open it so; the two modes refuse each other with ``BusyError``.
    """

    def __init__(self, path: Optional[PathLike] = None, *,
                 serializer: Optional[Serializer] = None,
                 metadata_serializer: Optional[Serializer] = None,
                 multi_process: bool = False) -> None:
        encoded = None if path is None else encode(os.fspath(path), "path")
        handle = _ffi.DatabasePointer()
        options = _ffi.DatabaseOptionsStruct()
        options.flags = _ffi.OPEN_MULTI_PROCESS if multi_process else 0
        _check(lib.ydb_database_open_with_options(encoded, byref(options), byref(handle)))
        self._own(handle, lib.ydb_database_close)
        self.serializer: Serializer = serializer or BytesSerializer()
        self.metadata_serializer: Serializer = metadata_serializer or self.serializer

    def __repr__(self) -> str:
        state = "closed" if self.closed else repr(self.path)
        return f"Database({state})"

    # -- properties --

    @property
    def path(self) -> str:
        """The database file (a temporary file for ``Database()``)."""
        out = c_char_p()
        _check(lib.ydb_database_path(self._handle, byref(out)))
        return decode(out.value)

    @property
    def snapshot(self) -> int:
        """The latest committed snapshot number: one more with each commit
        that changes something, never repeated, though a reopened database
        may continue from a larger one."""
        out = c_uint64()
        _check(lib.ydb_database_snapshot(self._handle, byref(out)))
        return out.value

    @property
    def max_commits_behind(self) -> int:
        """How many commits a connection may fall behind (default 1000).
        Past it the database drops the notifications it kept for that
        connection and releases its long-lived read, so memory and the
        write-ahead log stay bounded; the connection's next
        ``begin_long_lived_read_transaction()`` raises ``ReloadRequired``."""
        out = c_uint64()
        _check(lib.ydb_database_max_commits_behind(self._handle, byref(out)))
        return out.value

    @max_commits_behind.setter
    def max_commits_behind(self, commits: int) -> None:
        # 0 is refused by C (at least 1); past 2**64 - 1: never.
        _check(lib.ydb_database_set_max_commits_behind(self._handle, _count(commits, "max_commits_behind")))

    @property
    def multi_process(self) -> bool:
        """Whether the file was opened in shared mode (``multi_process=True``)."""
        out = c_int()
        _check(lib.ydb_database_is_multi_process(self._handle, byref(out)))
        return out.value != 0

    @property
    def commit_log_limit(self) -> int:
        """Shared mode: how many commits the file's commit log keeps
        (default 10,000). A process that falls further behind rebuilds its
        views from the rows, and its connections raise ``ReloadRequired``."""
        out = c_uint64()
        _check(lib.ydb_database_commit_log_limit(self._handle, byref(out)))
        return out.value

    @commit_log_limit.setter
    def commit_log_limit(self, commits: int) -> None:
        _check(lib.ydb_database_set_commit_log_limit(self._handle, _count(commits, "commit_log_limit")))

    @property
    def default_write_timeout(self) -> Optional[float]:
        """The write timeout new connections start with, in seconds (None:
        no limit); registering and unregistering views wait that long for
        the write lock too. Default 5.0, as ``sqlite3.connect``'s
        ``timeout``. See ``Connection.write_timeout``."""
        out = c_int64()
        _check(lib.ydb_database_default_write_timeout(self._handle, byref(out)))
        return _timeout_seconds(out.value)

    @default_write_timeout.setter
    def default_write_timeout(self, seconds: Optional[float]) -> None:
        _check(lib.ydb_database_set_default_write_timeout(
            self._handle, _timeout_milliseconds(seconds, "default_write_timeout")))

    # -- connections and observers --

    def new_connection(self, *, serializer: Optional[Serializer] = None,
                       metadata_serializer: Optional[Serializer] = None) -> "Connection":
        """A new connection; serializers default to the database's."""
        return Connection(self, serializer or self.serializer,
                          metadata_serializer or (self.metadata_serializer if serializer is None
                                                  else serializer))

    def add_commit_observer(self, observer: Callable[[CommitNotification], Any]) -> int:
        """Calls ``observer(notification)`` after every commit that changed
        something, in snapshot order: usually on the committing thread, but
        when threads commit at once the thread already delivering also
        delivers the later commits. Returns a token for
        ``remove_commit_observer``. An exception in the observer does not
        undo the commit: it is reported as an ``ObserverWarning``."""
        if not callable(observer):
            raise TypeError("observer must be callable")
        ctx = _callbacks.register(observer)
        token = c_uint64()
        # On failure C calls the destructor, which releases ctx, before returning.
        _check(lib.ydb_database_add_commit_observer(
            self._handle, _OBSERVER_TRAMPOLINE, ctx, _callbacks.RELEASE, byref(token)))
        return token.value

    def remove_commit_observer(self, token: int) -> None:
        """Stops the observer; raises ``NotFoundError`` for an unknown token."""
        _check(lib.ydb_database_remove_commit_observer(self._handle, token))

    # -- views --

    def register_view(self, name: str, grouping: Any, sorting: Any = None, *, key: Any = None,
                      version_tag: str = "", persistent: bool = True,
                      collections: Optional[Iterable[str]] = None,
                      sorting_rows_in_memory: bool = False) -> RegistrationOutcome:
        """Registers view ``name`` (see ``ydbview.views``): ``grouping(row)``
        returns a row's group (None leaves it out), ``sorting(group, row1,
        row2)`` returns <0, 0 or >0 -- or, instead of ``sorting``,
        ``key=fn(group, row)`` returns a sort value, as for ``sorted()``
        (see ``ydbview.sortkeys``; the view keeps the keys, so ``fn`` runs
        once per row, not per comparison). Plain callables read the whole
        row; use ``ydbview.grouping``/``ydbview.sorting``/
        ``ydbview.key_sorting`` to declare less.

        A new view populates itself; a persistent view already stored with
        the same ``version_tag`` calls nothing, unless rows changed while it
        was not registered (it is stale); another tag (or
        ``persistent=False``) repopulates. Returns a ``RegistrationOutcome``
        saying which happened. ``collections`` restricts the
        view to those collections. ``sorting_rows_in_memory=True`` makes a
        comparator view keep every row its comparator reads in memory, so
        that a commit reads no compared row back from the file (memory:
        about 160 bytes a row beside its object; no effect with ``key=``).
        Objects and metadata reach the callbacks through this database's
        serializers. An exception raised by a
        callback registers nothing and is re-raised here. The callbacks are
        kept exactly as long as the view: until ``unregister_view``, a new
        registration of ``name``, or ``close()``."""
        encoded = encode(name, "view name")
        definition, ctx = view_definition(grouping, sorting, key, version_tag, persistent, collections,
                                          self.serializer, self.metadata_serializer, self._lender(),
                                          sorting_rows_in_memory=sorting_rows_in_memory)
        # On failure C calls the destructor, which releases ctx, before returning.
        _check(lib.ydb_view_register(self._handle, encoded, byref(definition), ctx, _callbacks.RELEASE))
        outcome = c_int()
        _check(lib.ydb_view_registration_outcome(self._handle, encoded, byref(outcome)))
        return RegistrationOutcome(outcome.value)

    def register_view_async(self, name: str, grouping: Any, sorting: Any = None, *, key: Any = None,
                            version_tag: str = "", persistent: bool = True,
                            collections: Optional[Iterable[str]] = None,
                            sorting_rows_in_memory: bool = False,
                            progress: Optional[Callable[[int, int], Any]] = None) -> ViewRegistration:
        """``register_view`` in the background: returns at once a
        ``ViewRegistration`` (``result()``, ``wait()``, ``done()``,
        ``cancel()``). A thread of the library's own populates the view
        without the write lock -- other connections keep reading and
        committing, and what they commit meanwhile is caught up -- and one
        short write transaction installs it; until then no transaction sees
        it (or, for a name already registered, sees its previous
        definition). ``progress(done, total)`` is called on that thread at
        most every 1% and every 10 ms, first with ``done == 0`` and last with
        ``done == total`` once installed (steps: each row counts once when
        grouped and once when sorted); if it raises, the registration is
        cancelled. A later ``register_view``, ``register_view_async`` or
        ``unregister_view`` of ``name`` cancels it; ``close()`` stops it
        (``ClosedError``). Arguments as for ``register_view``."""
        if progress is not None and not callable(progress):
            raise TypeError("progress must be callable")
        encode(name, "view name")
        reporter = _Reporter(progress)
        definition, ctx = view_definition(grouping, sorting, key, version_tag, persistent, collections,
                                          self.serializer, self.metadata_serializer, self._lender(),
                                          exceptions=reporter.exceptions,
                                          sorting_rows_in_memory=sorting_rows_in_memory)
        handle = register_async(self._handle, name, definition, ctx, reporter)
        return ViewRegistration(self, name, handle, reporter)

    def register_filtered_view(self, name: str, parent: str, filter: Any, *, version_tag: str = "",
                               persistent: bool = True) -> RegistrationOutcome:
        """Registers view ``name`` showing the rows of registered view
        ``parent`` that ``filter(group, row)`` keeps (a true answer keeps
        the row ``parent`` puts in ``group``), in ``parent``'s groups and
        order. A plain callable reads the whole row; use
        ``ydbview.filtering``/``ydbview.Filtering`` to declare less, or
        ``transaction=True`` for ``filter(txn, group, row)``. For every
        reader it is a view like any other (queries, ``Mappings``,
        changesets), and it may be the parent of another filtered view.

        Commits keep it level with ``parent``; ``set_view_definition`` on
        ``parent`` re-sorts it along (as moves), and unregistering
        ``parent`` unregisters it. A filter whose answer depends on
        something outside the row is not re-run when that changes: touch
        the rows (``touch_rows``, or ``touch_group`` on ``parent``) or
        ``set_filter`` with a new tag. Built or loaded as ``register_view``
        does (a persistent one with the same ``version_tag`` over a parent
        with the same tag loads as stored); returns the
        ``RegistrationOutcome``. Raises ``NotFoundError`` when ``parent``
        is not registered, ``InvalidArgumentError`` when ``parent`` is
        ``name`` or filtered over it, and what the filter raises (nothing
        is registered then). The filter is kept exactly as long as the
        view uses it."""
        encoded = encode(name, "view name")
        encoded_parent = encode(parent, "parent view name")
        definition, ctx = filter_definition(filter, version_tag, persistent, self.serializer,
                                            self.metadata_serializer, self._lender())
        # On failure C calls the destructor, which releases ctx, before returning.
        _check(lib.ydb_filtered_view_register(self._handle, encoded, encoded_parent, byref(definition), ctx,
                                              _callbacks.RELEASE))
        outcome = c_int()
        _check(lib.ydb_view_registration_outcome(self._handle, encoded, byref(outcome)))
        return RegistrationOutcome(outcome.value)

    def _lender(self) -> Callable[[Optional[int]], "CallbackTransaction"]:
        """Makes a callback's read-only transaction from its C handle, with
        today's serializers (the view's callbacks keep them too); holds no
        reference to the database."""
        serializer, metadata_serializer = self.serializer, self.metadata_serializer
        return lambda handle: CallbackTransaction(handle, serializer, metadata_serializer)

    def unregister_view(self, name: str) -> None:
        """Unregisters view ``name`` (an unknown name is ignored) and releases
        its callbacks."""
        _check(lib.ydb_view_unregister(self._handle, encode(name, "view name")))

    @property
    def registered_views(self) -> List[str]:
        """Names of the registered views, in ascending order."""
        names: List[str] = []
        _enumerate(lib.ydb_view_enumerate_registered, self._handle, each=lambda name: names.append(decode(name)))
        return names

    # -- full-text indexes (ydbview.search) --

    def register_fts_index(self, name: str, columns: Iterable[str], extract: Callable[..., Any], *,
                           version_tag: str = "", flavour: FlavourLike = "row",
                           invoke: Optional[InvokeOptions] = None, transaction: bool = False,
                           allowed_collections: Optional[Iterable[str]] = None,
                           tokenizer: Optional[str] = None) -> RegistrationOutcome:
        """Registers full-text index ``name`` over FTS5 ``columns``:
        ``extract(row)`` returns a dict of column to str, or None to leave
        the row out (``transaction=True``: ``extract(txn, row)``). Views and
        indexes share one namespace. An index stored with the same
        ``version_tag`` (and columns and tokenizer) is loaded, calling
        nothing, unless rows changed while it was not registered; otherwise
        every allowed row is indexed. Returns a ``RegistrationOutcome``
        saying which happened. ``tokenizer`` is FTS5's tokenize option
        (None: ``unicode61 remove_diacritics 2``). See ``ydbview.search``."""
        return register_fts_index(self._handle, name, columns, extract, version_tag=version_tag, flavour=flavour,
                                  invoke=invoke, transaction=transaction, allowed_collections=allowed_collections,
                                  tokenizer=tokenizer, serializer=self.serializer,
                                  metadata_serializer=self.metadata_serializer, lend=self._lender())

    def unregister_fts_index(self, name: str) -> None:
        """Unregisters full-text index ``name`` and drops its tables (a name
        that is not one is ignored); its callback is released."""
        _check(lib.ydb_fts_index_unregister(self._handle, encode(name, "full-text index name")))

    @property
    def registered_fts_indexes(self) -> List[str]:
        """Names of the registered full-text indexes, in ascending order."""
        names: List[str] = []
        _enumerate(lib.ydb_fts_index_enumerate_registered, self._handle,
                   each=lambda name: names.append(decode(name)))
        return names

    # -- search views (ydbview.search) --

    def register_search_view(self, name: str, parent: str, index: str, query: str = "", *,
                             order: str = "parent") -> RegistrationOutcome:
        """Registers search view ``name``: the rows of the registered view
        ``parent`` that ``query`` (an FTS5 expression; "" matches nothing)
        matches in full-text index ``index``, in the parent's groups and
        order — or, with ``order="rank"``, each group by the query's bm25
        rank, best first (a row is ranked when it is placed). Not stored:
        built at each registration (``BUILT``). A commit changing a row's
        text moves it in or out of the results; unregister it with
        ``unregister_view`` (unregistering the parent or the index does
        too). Raises ``NotFoundError`` for an unknown parent or index,
        ``InvalidArgumentError`` for a malformed query."""
        return register_search_view(self._handle, name, parent, index, query, order)

    def search(self, name: str, query: str,
               callback: Optional[Callable[[BackgroundSearch], Any]] = None) -> BackgroundSearch:
        """Sets the query of search view ``name`` in the background and
        returns at once a ``BackgroundSearch`` (``result()``, ``wait()``,
        ``done()``): typing never waits for a search. For each view only
        the newest query runs; one still waiting when a newer one comes is
        superseded (``result()`` is False). The matches are read without
        the write lock, then applied in a short write whose changeset
        shows only the rows entering and leaving. ``callback(search)`` is
        called once on the search's thread when it finished (kept alive
        until then); ``close()`` completes the searches still waiting
        with ``ClosedError``."""
        return start_search(self, name, query, callback)


# ---------------------------------------------------------------------------
# Connection
# ---------------------------------------------------------------------------

class Connection(_Closeable):
    """One reader/writer of a database, running one transaction at a time.

    ``read()`` and ``read_write()`` return transactions that are context
    managers; ``begin_long_lived_read_transaction()`` freezes the connection
    on a snapshot and, called again, catches up and returns the
    ``CommitNotification`` of every commit skipped. Closing it ends any
    transaction and long-lived read.
    """

    def __init__(self, database: Database, serializer: Serializer,
                 metadata_serializer: Serializer) -> None:
        handle = _ffi.ConnectionPointer()
        _check(lib.ydb_connection_open(database._handle, byref(handle)))
        self._own(handle, lib.ydb_connection_close)
        self.database = database  # keeps the database open while we are
        self.serializer = serializer
        self.metadata_serializer = metadata_serializer

    def __repr__(self) -> str:
        return f"Connection({'closed' if self.closed else f'snapshot={self.snapshot}'})"

    @property
    def snapshot(self) -> int:
        """The snapshot the connection reads at (its long-lived one, if any)."""
        out = c_uint64()
        _check(lib.ydb_connection_snapshot(self._handle, byref(out)))
        return out.value

    @property
    def row_cache_limit(self) -> int:
        """How many rows read through views (``rows``, ``row_at``, ranges of
        at most this many rows) the connection keeps for its next read
        transactions; default 250, 0 turns the cache off. A commit makes
        every connection forget the rows it changed."""
        out = c_size_t()
        _check(lib.ydb_connection_row_cache_limit(self._handle, byref(out)))
        return out.value

    @row_cache_limit.setter
    def row_cache_limit(self, limit: int) -> None:
        # C's limit is a size_t of which the library uses up to 2**63 - 1.
        _check(lib.ydb_connection_set_row_cache_limit(self._handle, min(_count(limit, "row_cache_limit"), 2**63 - 1)))

    @property
    def write_timeout(self) -> Optional[float]:
        """How long ``read_write()`` waits for another read-write
        transaction to end, in seconds (None: as long as it takes; 0: not
        at all), before it raises ``BusyError`` ("database is locked",
        naming the wait). Starts as ``Database.default_write_timeout``
        (5.0)."""
        out = c_int64()
        _check(lib.ydb_connection_write_timeout(self._handle, byref(out)))
        return _timeout_seconds(out.value)

    @write_timeout.setter
    def write_timeout(self, seconds: Optional[float]) -> None:
        _check(lib.ydb_connection_set_write_timeout(self._handle, _timeout_milliseconds(seconds, "write_timeout")))

    # -- transactions --

    def read(self) -> "ReadTransaction":
        """Begins a read transaction: ``with conn.read() as t: ...``."""
        handle = _ffi.TxnPointer()
        _check(lib.ydb_txn_begin_read(self._handle, byref(handle)))
        return ReadTransaction(self, handle)

    def read_write(self) -> "ReadWriteTransaction":
        """Begins a read-write transaction: ``with conn.read_write() as t:``
        commits when the block succeeds and rolls back when it raises."""
        handle = _ffi.TxnPointer()
        _check(lib.ydb_txn_begin_read_write(self._handle, byref(handle)))
        return ReadWriteTransaction(self, handle)

    # -- long-lived read transactions --

    def begin_long_lived_read_transaction(self) -> List[CommitNotification]:
        """Freezes the connection on the newest snapshot (or moves it there)
        and returns the notifications of the commits it skipped, oldest first.

        Raises ``ReloadRequired`` when the connection fell more than
        ``Database.max_commits_behind`` commits behind: it is at the newest
        snapshot all the same, but the notifications in between are gone."""
        skipped = _ffi.NotificationListPointer()
        _check(lib.ydb_connection_begin_long_lived_read(self._handle, byref(skipped)))
        try:
            count = c_size_t()
            _check(lib.ydb_notification_list_count(skipped, byref(count)))
            notifications = []
            for index in range(count.value):
                item = _ffi.NotificationPointer()
                _check(lib.ydb_notification_list_get(skipped, index, byref(item)))
                notifications.append(CommitNotification._copy_of(item))
            return notifications
        finally:
            lib.ydb_notification_list_free(skipped)

    def end_long_lived_read_transaction(self) -> None:
        """Leaves the long-lived read: reads see the newest snapshot again."""
        _check(lib.ydb_connection_end_long_lived_read(self._handle))

    def wakeup_fd(self) -> int:
        """A file descriptor that is readable while commits exist that this
        connection has not caught up with: hand it to ``select``,
        ``selectors`` or asyncio's ``loop.add_reader`` (``ydbview.aio``
        does) and catch up with ``begin_long_lived_read_transaction()``
        when it is readable, which makes it unreadable again. The
        connection's own commits never make it readable. It belongs to the
        connection: do not read or close it; it is valid until the
        connection closes (remove it from the event loop first)."""
        fd = c_int()
        _check(lib.ydb_connection_wakeup_fd(self._handle, byref(fd)))
        return fd.value

    def fileno(self) -> int:
        """``wakeup_fd()``, so that the connection itself can be handed to
        ``select.select`` or ``selectors``."""
        return self.wakeup_fd()

    @property
    def is_in_long_lived_read_transaction(self) -> bool:
        """Whether the connection is frozen at a snapshot."""
        flag = c_int()
        _check(lib.ydb_connection_is_in_long_lived_read(self._handle, byref(flag)))
        return bool(flag.value)


# ---------------------------------------------------------------------------
# Transactions
# ---------------------------------------------------------------------------

_Txn = TypeVar("_Txn", bound="ReadTransaction")


class ReadTransaction:
    """A consistent view of the database as of one snapshot.

    Use it as a context manager, or call ``end()``. Arguments are
    ``(collection, key)`` as in the C API.
    """

    _release: Callable[[int], int] = lib.ydb_txn_end

    def __init__(self, connection: Connection, handle: int) -> None:
        self._handle = handle
        # Open until ended. A transaction dropped while open is ended by
        # __del__, not by a weakref.finalize: a finalizer's creation and
        # detach cost 2.4 us, a tenth of a Python one-row commit's own work.
        self._open = True
        self.connection = connection

    def __del__(self) -> None:
        # Dropped while open (a read-write one rolls back). `_open` is
        # missing when __init__ never ran.
        if getattr(self, "_open", False):
            self._open = False
            type(self)._release(self._handle)

    # -- lifecycle --

    def end(self) -> None:
        """Ends the transaction (a read-write one rolls back). Safe twice.
        From inside one of its own callbacks it raises ``MisuseError`` and
        the transaction stays open."""
        if not self._open:
            return
        status = type(self)._release(self._handle)
        if status != Status.MISUSE:
            # Ended (or ending failed for good): the handle is gone either way.
            self._open = False
        _check(status)

    @property
    def active(self) -> bool:
        """True until the transaction ends (commit, rollback, ``end()`` or the ``with`` block)."""
        return self._open

    def __enter__(self: _Txn) -> _Txn:
        return self

    def __exit__(self, exc_type: Optional[type], exc: Optional[BaseException], tb: Any) -> None:
        self.end()

    @property
    def snapshot(self) -> int:
        """The snapshot the transaction reads. Raises ``MisuseError`` once ended."""
        out = c_uint64()
        _check(lib.ydb_txn_snapshot(self._handle, byref(out)))
        return out.value

    @property
    def is_read_write(self) -> bool:
        """True for a ``ReadWriteTransaction``."""
        flag = c_int()
        _check(lib.ydb_txn_is_read_write(self._handle, byref(flag)))
        return bool(flag.value)

    # -- serialization --

    def _load(self, data: Optional[bytes]) -> Any:
        return None if data is None else self.connection.serializer.deserialize(data)

    def _load_metadata(self, data: Optional[bytes]) -> Any:
        return None if data is None else self.connection.metadata_serializer.deserialize(data)

    def _deserializers(self) -> Tuple[Optional[Callable[[bytes], Any]], Optional[Callable[[bytes], Any]]]:
        return (deserializer_of(self.connection.serializer),
                deserializer_of(self.connection.metadata_serializer))

    def _callback_transaction(self, handle: Optional[int]) -> "CallbackTransaction":
        return CallbackTransaction(handle, self.connection.serializer, self.connection.metadata_serializer)

    # -- reading --

    def _get(self, function: Any, collection: str, key: str) -> Optional[bytes]:
        data, size = c_void_p(), c_size_t()
        status = function(self._handle, encode(collection, "collection"), encode(key, "key"),
                          byref(data), byref(size))
        if status == Status.NOTFOUND:
            return None
        _check(status)
        return _ffi.take_blob(data, size)

    def get(self, collection: str, key: str) -> Any:
        """The row's object, or None when there is no such row."""
        return self._load(self._get(lib.ydb_txn_get_object, collection, key))

    def get_metadata(self, collection: str, key: str) -> Any:
        """The row's metadata, or None (no row, or no metadata)."""
        return self._load_metadata(self._get(lib.ydb_txn_get_metadata, collection, key))

    def get_row(self, collection: str, key: str, rowid_hint: int = 0) -> Optional[Row]:
        """The row's object and metadata, or None when there is no such row.

        ``rowid_hint``: the row's id as an edit step or row change gave it
        (``EditStep.rowid``); the row is then found by that id first, one
        lookup instead of two. A wrong or stale hint never changes the answer.
        """
        hint = _integer(rowid_hint, "rowid_hint")
        hint = hint if -(1 << 63) <= hint < (1 << 63) else 0   # no row has such an id: no hint
        obj, obj_size, meta, meta_size = c_void_p(), c_size_t(), c_void_p(), c_size_t()
        status = lib.ydb_txn_get_row_hinted(self._handle, encode(collection, "collection"), encode(key, "key"), hint,
                                            byref(obj), byref(obj_size), byref(meta), byref(meta_size))
        if status == Status.NOTFOUND:
            return None
        _check(status)
        object_bytes = _ffi.take_blob(obj, obj_size)
        metadata_bytes = _ffi.take_blob(meta, meta_size)
        return Row(self._load(object_bytes), self._load_metadata(metadata_bytes))

    def exists(self, collection: str, key: str) -> bool:
        """Returns whether row (collection, key) exists."""
        flag = c_int()
        _check(lib.ydb_txn_exists(self._handle, encode(collection, "collection"), encode(key, "key"),
                                  byref(flag)))
        return bool(flag.value)

    def count(self, collection: str) -> int:
        """Rows in ``collection``."""
        out = c_size_t()
        _check(lib.ydb_txn_count(self._handle, encode(collection, "collection"), byref(out)))
        return out.value

    def count_all(self) -> int:
        """Rows in all collections."""
        out = c_size_t()
        _check(lib.ydb_txn_count_all(self._handle, byref(out)))
        return out.value

    def collections(self) -> List[str]:
        """Returns the collections holding at least one row, in ascending
        order, as a list (C enumerates them by callback only, so there is no
        lazy form)."""
        names: List[str] = []
        _enumerate(lib.ydb_txn_enumerate_collections, self._handle, each=lambda name: names.append(decode(name)))
        return names

    def enumerate_keys(self, collection: str, body: Callable[[str], Optional[bool]]) -> None:
        """Calls ``body(key)`` for each key of ``collection`` in ascending
        order; a truthy return stops. An exception in ``body`` stops the
        enumeration and is re-raised here."""
        encoded = encode(collection, "collection")
        _enumerate(lib.ydb_txn_enumerate_keys, self._handle, encoded, each=lambda key: body(decode(key)))

    def keys(self, collection: str) -> List[str]:
        """Returns the keys of ``collection`` in ascending order as a list
        (C enumerates them by callback only, so there is no lazy form; use
        ``enumerate_keys`` to stop early); empty for an unknown collection."""
        keys: List[str] = []
        self.enumerate_keys(collection, keys.append)
        return keys

    def enumerate_rows(self, collection: str,
                       body: Callable[[str, Any, Any], Optional[bool]]) -> None:
        """Calls ``body(key, object, metadata)`` for each row of
        ``collection`` in key order; a truthy return stops."""
        encoded = encode(collection, "collection")

        def row(key: bytes, obj: Optional[int], obj_size: int,
                meta: Optional[int], meta_size: int) -> Any:
            object_bytes = memory_at(obj)[:obj_size] if obj else b""
            metadata_bytes = memory_at(meta)[:meta_size] if meta else None
            return body(decode(key), self._load(object_bytes), self._load_metadata(metadata_bytes))

        _enumerate(lib.ydb_txn_enumerate_rows, self._handle, encoded, each=row)

    def rows(self, collection: str) -> List[Tuple[str, Any, Any]]:
        """Returns every ``(key, object, metadata)`` of ``collection`` in key
        order as a list (C enumerates them by callback only, so there is no
        lazy form; use ``enumerate_rows`` to stop early)."""
        found: List[Tuple[str, Any, Any]] = []
        self.enumerate_rows(collection, lambda key, obj, meta: found.append((key, obj, meta)))
        return found

    def __repr__(self) -> str:
        return f"{type(self).__name__}({'active' if self.active else 'ended'})"

    # -- views --

    def view(self, name: str) -> ViewTransaction:
        """Queries on view ``name`` as of this transaction. Raises
        ``NotFoundError`` when no such view is registered at its snapshot
        (``has_view`` asks; ``Database.registered_views()`` lists the names)."""
        return ViewTransaction._open(self, name)

    def has_view(self, name: str) -> bool:
        """Whether view ``name`` is registered at this transaction's snapshot."""
        flag = c_int()
        _check(lib.ydb_view_is_registered(self._handle, encode(name, "view name"), byref(flag)))
        return bool(flag.value)

    # -- full-text indexes --

    def search(self, index: str, query: str, limit: Optional[int] = None) -> List[Match]:
        """The rows of full-text index ``index`` matching FTS5 ``query``,
        best (lowest bm25 rank) first, at most ``limit``; a blank query
        matches nothing. Sees this transaction's own writes."""
        return search(self, index, query, limit)

    def snippet(self, index: str, query: str, collection: str, key: str, *, column: Optional[str] = None,
                before: str = "<b>", after: str = "</b>", ellipsis: str = "\u2026",
                tokens: int = 16) -> Optional[str]:
        """FTS5's snippet of row (collection, key) for ``query``: up to
        ``tokens`` words (1 to 64) of ``column`` (None: the best one), the
        words found between ``before`` and ``after``; None when the row does
        not match."""
        return snippet(self, index, query, collection, key, column=column, before=before, after=after,
                       ellipsis=ellipsis, tokens=tokens)

    def search_query(self, name: str) -> str:
        """The query search view ``name`` shows the results of, as of this
        transaction (``NotFoundError`` when it is not a search view)."""
        return search_query(self, name)


class ReadWriteTransaction(ReadTransaction):
    """A read-write transaction. As a context manager it commits when the
    block succeeds and rolls back when it raises; or call ``commit()`` /
    ``rollback()`` yourself."""

    _release = lib.ydb_txn_rollback

    def __del__(self) -> None:
        # Dropped while open: rolled back (by the base class), and said so,
        # as Python says of a file left open -- the write lock was held
        # until now, and the changes are lost.
        if getattr(self, "_open", False):
            try:
                warnings.warn("a read-write transaction was dropped while open: its changes are rolled back "
                              "(commit or roll back explicitly, or use it in a 'with' block)",
                              ResourceWarning, stacklevel=2, source=self)
            except Exception:   # the interpreter is shutting down: warnings may be gone
                pass
        super().__del__()

    def __exit__(self, exc_type: Optional[type], exc: Optional[BaseException], tb: Any) -> None:
        if not self.active:
            return
        if exc_type is None:
            self.commit()
        else:
            self.rollback()

    def commit(self) -> None:
        """Commits (or, on failure, rolls back and raises). Observers run
        before it returns, unless another thread is calling observers at
        that moment: that thread calls them, in snapshot order. An
        observer's exception becomes a warning."""
        status = lib.ydb_txn_commit(self._handle)
        if status == Status.MISUSE:
            # Refused (inside its own callbacks: still open), or a
            # transaction failed by a misuse (a view that is not a search
            # view...) rolled back and freed. Asking C which one overwrites
            # this thread's last error: why it failed is read first.
            kept = _callbacks.take()
            _, message = _ffi.last_error()
            failure = kept[0] if kept else error_for(status, message, lib.ydb_errcode_sqlite())
            self._open = lib.ydb_txn_snapshot(self._handle, byref(c_uint64())) == Status.OK
            raise failure
        # C freed the handle, whatever the result.
        self._open = False
        if status != Status.OK:
            _check(status)  # a failed commit delivered nothing: only why it failed is kept
        _warn_observer_failures(_callbacks.take())

    def rollback(self) -> None:
        """Discards every change. Safe twice."""
        self.end()

    def set_view_definition(self, name: str, grouping: Any, sorting: Any = None, *, key: Any = None,
                            version_tag: str) -> None:
        """Changes the grouping and sorting of registered view ``name`` in this
        transaction: with a new ``version_tag`` every row is regrouped and
        resorted, and the commit's changeset shows only what changed -- a
        re-sort is the moves needed, never a reset; views filtered over
        ``name`` follow. With the same tag nothing happens. If the
        transaction rolls back the view keeps its old callbacks. A filtered
        view raises ``MisuseError`` (use ``set_filter``)."""
        encoded = encode(name, "view name")
        definition, ctx = view_definition(grouping, sorting, key, version_tag, True, None,
                                          self.connection.serializer, self.connection.metadata_serializer,
                                          self._callback_transaction)
        # On failure C calls the destructor, which releases ctx, before returning.
        _check(lib.ydb_view_set_definition(self._handle, encoded, byref(definition), ctx, _callbacks.RELEASE))

    def set_filter(self, name: str, filter: Any, *, version_tag: str) -> None:
        """Replaces the filter of filtered view ``name`` in this transaction
        (``filter`` as for ``Database.register_filtered_view``): with a new
        ``version_tag`` the new filter runs once on each of the parent's
        rows, and the commit's changeset shows exactly the rows that enter
        and leave; with the same tag nothing happens. Views filtered over
        ``name`` follow. If the transaction rolls back the view keeps its
        old filter. Raises ``NotFoundError`` for an unknown view,
        ``MisuseError`` for a view that is not filtered, and what the
        filter raises; each of these fails the transaction (roll it back)."""
        encoded = encode(name, "view name")
        definition, ctx = filter_definition(filter, version_tag, True, self.connection.serializer,
                                            self.connection.metadata_serializer, self._callback_transaction)
        # On failure C calls the destructor, which releases ctx, before returning.
        _check(lib.ydb_view_set_filter(self._handle, encoded, byref(definition), ctx, _callbacks.RELEASE))

    # -- serialization --

    def _dump(self, value: Any) -> bytes:
        return self.connection.serializer.serialize(value)

    def _dump_metadata(self, value: Any) -> Optional[bytes]:
        return None if value is None else self.connection.metadata_serializer.serialize(value)

    # -- writing --

    def set(self, collection: str, key: str, obj: Any, metadata: Any = None) -> None:
        """Stores ``obj`` (and ``metadata``; None for none) as row (collection, key)."""
        data = self._dump(obj)
        meta = self._dump_metadata(metadata)
        _check(lib.ydb_txn_set_object(self._handle, encode(collection, "collection"), encode(key, "key"),
                                      data, len(data), meta, 0 if meta is None else len(meta)))

    def set_many(self, collection: str, rows: Iterable[Union[Tuple[str, Any], Tuple[str, Any, Any]]]) -> None:
        """Stores many rows of ``collection`` in one call, as ``set`` would
        one by one: ``rows`` yields ``(key, obj)`` or ``(key, obj,
        metadata)``. A key given twice keeps its last row. If any row is
        invalid nothing is stored. Each view's Python callbacks run once for
        the whole batch (grouping, then key function), on the rows they
        would run for one by one, before the rows are stored: a callback
        that reads the transaction sees it as before the call. The way to
        load many rows (``executemany`` to ``set``'s ``execute``)."""
        encoded_collection = encode(collection, "collection")
        rows = rows if isinstance(rows, list) else list(rows)
        metadata: Optional[List[Optional[bytes]]] = None
        if rows and set(map(len, rows)) == {2}:
            keys, objects = zip(*rows)
        else:
            keys, objects, metas = [], [], []
            for row in rows:
                key, obj, meta = row if len(row) == 3 else (*row, None)
                keys.append(key)
                objects.append(obj)
                metas.append(meta)
            if any(meta is not None for meta in metas):
                dump_metadata = self._dump_metadata
                metadata = [dump_metadata(meta) for meta in metas]
        # Checked and converted a column at a time when the values are the
        # usual ones (plain str keys, bytes objects stored as they are).
        if type(self.connection.serializer) is BytesSerializer and set(map(type, objects)) <= {bytes}:
            data = list(objects)
        else:
            dump = self._dump
            data = [dump(obj) for obj in objects]
        if set(map(type, keys)) <= {str} and "\0" not in "".join(keys):
            encoded = [key.encode("utf-8", "surrogatepass") for key in keys]
        else:
            encoded = [encode(key, "key") for key in keys]
        # The joined bytes stay referenced (these locals) until C returned.
        key_bytes, key_addresses = _ffi.pointer_array(encoded, terminated=True)
        object_bytes, object_addresses = _ffi.pointer_array(data, terminated=False)
        sizes = _ffi.size_array(map(len, data))
        metas_c = meta_sizes = None
        if metadata is not None:
            metas_c = (c_char_p * len(metadata))(*metadata)
            meta_sizes = (c_size_t * len(metadata))(*[0 if meta is None else len(meta) for meta in metadata])
        with setting_batch(collection, keys, data, metadata):
            _check(lib.ydb_txn_set_objects(self._handle, encoded_collection, len(encoded),
                                           key_addresses.buffer_info()[0], object_addresses.buffer_info()[0],
                                           sizes.buffer_info()[0], metas_c, meta_sizes))

    def replace_object(self, collection: str, key: str, obj: Any) -> None:
        """Replaces the object of an existing row, keeping its metadata."""
        data = self._dump(obj)
        _check(lib.ydb_txn_replace_object(self._handle, encode(collection, "collection"),
                                          encode(key, "key"), data, len(data)))

    def replace_metadata(self, collection: str, key: str, metadata: Any) -> None:
        """Replaces the metadata of an existing row (None removes it)."""
        meta = self._dump_metadata(metadata)
        _check(lib.ydb_txn_replace_metadata(self._handle, encode(collection, "collection"),
                                            encode(key, "key"), meta,
                                            0 if meta is None else len(meta)))

    def touch_object(self, collection: str, key: str) -> None:
        """Marks the object of (collection, key) changed without writing it (views and observers see a change)."""
        _check(lib.ydb_txn_touch_object(self._handle, encode(collection, "collection"), encode(key, "key")))

    def touch_metadata(self, collection: str, key: str) -> None:
        """Marks the metadata of (collection, key) changed without writing it."""
        _check(lib.ydb_txn_touch_metadata(self._handle, encode(collection, "collection"), encode(key, "key")))

    def touch_row(self, collection: str, key: str) -> None:
        """Marks object and metadata of (collection, key) changed without writing them."""
        _check(lib.ydb_txn_touch_row(self._handle, encode(collection, "collection"), encode(key, "key")))

    def touch_rows(self, collection: str, keys: Iterable[str]) -> None:
        """Touches the rows of ``collection`` named by ``keys`` (object and
        metadata), as ``touch_row`` does each: every view runs its
        callbacks on them again where their invoke options ask for touches
        (the default of every flavour but ``"key"``), so a filter whose
        answer depends on something outside the row answers anew. Missing
        rows are ignored; if any key is invalid, nothing is touched."""
        if isinstance(keys, str):
            raise TypeError("keys must be an iterable of keys, not one str")
        encoded = [encode(key, "key") for key in keys]
        array = (c_char_p * len(encoded))(*encoded)
        _check(lib.ydb_txn_touch_rows(self._handle, encode(collection, "collection"), array, len(encoded)))

    def touch_group(self, view: str, group: str) -> None:
        """Touches every row view ``view`` shows in ``group``, as
        ``touch_rows`` does: a whole group re-evaluated without changing its
        rows. To re-filter the rows a filtered view leaves out, touch the
        group of its parent. A group the view does not have touches
        nothing; an unknown view raises ``NotFoundError`` and fails the
        transaction."""
        _check(lib.ydb_txn_touch_group(self._handle, encode(view, "view name"), encode(group, "group")))

    def remove(self, collection: str, key: str) -> None:
        """Removes one row (a missing row is ignored)."""
        _check(lib.ydb_txn_remove_object(self._handle, encode(collection, "collection"), encode(key, "key")))

    def remove_many(self, collection: str, keys: Iterable[str]) -> None:
        """Removes the rows of ``collection`` named by ``keys``; if any key is
        invalid, nothing is removed."""
        encoded = [encode(key, "key") for key in keys]
        array = (c_char_p * len(encoded))(*encoded)
        _check(lib.ydb_txn_remove_objects(self._handle, encode(collection, "collection"),
                                          array, len(encoded)))

    def remove_all(self, collection: str) -> None:
        """Removes every row of ``collection``."""
        _check(lib.ydb_txn_remove_all_objects(self._handle, encode(collection, "collection")))

    def remove_all_collections(self) -> None:
        """Removes every row of every collection."""
        _check(lib.ydb_txn_remove_all_objects_in_all_collections(self._handle))

    # -- search views --

    def set_search_query(self, name: str, query: str) -> None:
        """Sets the query of search view ``name`` in this transaction: the
        rows the new query matches and the old one did not are inserted,
        the others removed (the commit's changeset shows just those). The
        same query again changes nothing. A malformed query raises
        ``InvalidArgumentError`` and fails the transaction (it rolls back);
        a view that is not a search view raises ``MisuseError``."""
        set_search_query(self, name, query)


class CallbackTransaction(ReadTransaction):
    """The transaction a callback receives when it asks for it
    (``transaction=True``: grouping, sorting, key sorting, find, a dynamic
    mappings' filter and key): a read-only handle of the transaction
    running the callback, valid only during that call.

    It reads like a ``ReadTransaction`` -- rows (including what the running
    transaction wrote so far) and, except inside a view's grouping or
    sorting (views are half-updated there), views. Writing (``set``,
    ``remove``, ``touch_*``...), ``commit``, ``rollback`` or ``end`` raise
    ``MisuseError`` ("the callback's transaction is read-only") and change
    nothing: a callback that catches it leaves the running transaction
    usable. Kept and used after its call, it raises ``MisuseError``.
    ``active`` says whether it is still usable. Nothing is released when it
    goes: it owns nothing."""

    def __init__(self, handle: Optional[int], serializer: Serializer,
                 metadata_serializer: Serializer) -> None:  # no super().__init__: it owns no handle
        self._handle = handle  # type: ignore[assignment]
        self._serializer = serializer
        self._metadata_serializer = metadata_serializer

    def _load(self, data: Optional[bytes]) -> Any:
        return None if data is None else self._serializer.deserialize(data)

    def _load_metadata(self, data: Optional[bytes]) -> Any:
        return None if data is None else self._metadata_serializer.deserialize(data)

    def _deserializers(self) -> Tuple[Optional[Callable[[bytes], Any]], Optional[Callable[[bytes], Any]]]:
        return deserializer_of(self._serializer), deserializer_of(self._metadata_serializer)

    def _callback_transaction(self, handle: Optional[int]) -> "CallbackTransaction":
        return CallbackTransaction(handle, self._serializer, self._metadata_serializer)

    def _dump(self, value: Any) -> bytes:
        return self._serializer.serialize(value)

    def _dump_metadata(self, value: Any) -> Optional[bytes]:
        return None if value is None else self._metadata_serializer.serialize(value)

    @property
    def active(self) -> bool:
        """True during the call it was passed to."""
        return lib.ydb_txn_snapshot(self._handle, byref(c_uint64())) == Status.OK

    def end(self) -> None:
        """Raises ``MisuseError``: a callback cannot end the transaction running it."""
        _check(lib.ydb_txn_end(self._handle))

    def commit(self) -> None:
        """Raises ``MisuseError``: the callback's transaction is read-only."""
        _check(lib.ydb_txn_commit(self._handle))

    rollback = end

    # Writes reach C, which refuses them with the read-only error.
    set = ReadWriteTransaction.set
    replace_object = ReadWriteTransaction.replace_object
    replace_metadata = ReadWriteTransaction.replace_metadata
    touch_object = ReadWriteTransaction.touch_object
    touch_metadata = ReadWriteTransaction.touch_metadata
    touch_row = ReadWriteTransaction.touch_row
    touch_rows = ReadWriteTransaction.touch_rows
    touch_group = ReadWriteTransaction.touch_group
    remove = ReadWriteTransaction.remove
    remove_many = ReadWriteTransaction.remove_many
    remove_all = ReadWriteTransaction.remove_all
    remove_all_collections = ReadWriteTransaction.remove_all_collections
