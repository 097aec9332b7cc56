"""Views: rows grouped and sorted by Python callbacks, kept up to date by
every commit, and queried in any transaction.

>>> db = Database(serializer=JSONSerializer())                  # doctest: +SKIP
>>> @ydbview.grouping(flavour="object")
... def by_genre(row):
...     return row.object["genre"]            # None leaves the row out
>>> @ydbview.sorting(flavour="object")
... def by_title(group, a, b):
...     return (a.object["title"] > b.object["title"]) - (a.object["title"] < b.object["title"])
>>> db.register_view("books", by_genre, by_title, version_tag="1")
>>> with conn.read() as t:
...     t.view("books").keys("sci-fi")

A plain callable is a grouping/sorting of flavour ``"row"`` (it gets object
and metadata). Declare what a callback reads with the ``grouping`` /
``sorting`` decorators (or ``Grouping(fn, flavour=...)``) so the view skips
loading what it does not need and re-runs it only when that changes.

A callback that reads other rows asks for the transaction running it with
``transaction=True``; it is then called with a read-only
``CallbackTransaction`` first, valid during the call::

    @ydbview.grouping(flavour="object", transaction=True)
    def by_author_country(txn, row):
        author = txn.get("authors", row.object["author"])
        return None if author is None else author["country"]

Its reads see the running transaction's own writes (an author set just
before the book). Views cannot be read there, and writing or ending
through it raises ``MisuseError`` ("the callback's transaction is
read-only"); used after the call, it raises ``MisuseError``. A row it only
read is not a dependency: changing the author later does not regroup the
book -- touch the book (``touch_object``) to re-run its callbacks.

A filtered view (``Database.register_filtered_view``) shows the rows of
another view that a filter keeps, in that view's groups and order::

    @ydbview.filtering(flavour="object")
    def unread(group, row):
        return not row.object["read"]
    db.register_filtered_view("unread", "messages", unread, version_tag="1")

An exception raised by a callback aborts the write (and so the transaction)
or the registration, and is re-raised to the caller with its traceback.
"""

from __future__ import annotations

import enum
import struct
import threading
import weakref
from contextlib import contextmanager
from ctypes import byref, c_char_p, c_int, c_size_t, c_void_p, sizeof, string_at
from itertools import repeat
from typing import Any, Callable, Dict, Iterable, Iterator, List, Optional, Tuple, Union

from . import _callbacks, _ffi
from ._base import _check, _count, _enumerate, _index, _require_view, _timeout_milliseconds, _Transaction
from ._ffi import lib
from ._text import decode, encode
from ._values import IndexPath, Row, ViewRow
from .errors import Status, error_for
from .mappings import Mappings
from .notifications import CommitNotification, _NotificationList
from .serializers import Serializer, deserializer_of
from .sortkeys import KeyShapes, encode_value, encode_values_shaped, key_shape

#: ``ydb_view_read_rows``'s row header: four native int32 sizes.
_ROW_HEADER = struct.Struct("=iiii")

__all__ = [
    "Flavour",
    "InvokeOptions",
    "ViewRow",
    "Grouping",
    "Sorting",
    "KeySorting",
    "grouping",
    "sorting",
    "key_sorting",
    "Filtering",
    "filtering",
    "RegistrationOutcome",
    "ViewRegistration",
    "ViewTransaction",
    "has_view_changes",
    "has_group_changes",
]


def _unpack_rows(packed: bytes, count: int, load: Optional[Callable[[bytes], Any]],
                 load_metadata: Optional[Callable[[bytes], Any]]) -> List[ViewRow]:
    """The ``count`` rows ``ydb_view_read_rows`` packed into ``packed``:
    per row a header of four sizes (collection, key, object, metadata; -1:
    no metadata), then those bytes. One loop with everything it touches in
    locals: it runs for every row shown (e.g. 50 per screen). Names are
    decoded strictly, as ``_text.decode`` does, without its call per name;
    ``load``/``load_metadata`` None keep the bytes (see
    ``ReadTransaction._deserializers``)."""
    unpack_from, header_size, new_tuple, row_type = _ROW_HEADER.unpack_from, _ROW_HEADER.size, tuple.__new__, ViewRow
    offset, found = 0, []
    append = found.append
    for _ in range(count):
        collection_size, key_size, object_size, metadata_size = unpack_from(packed, offset)
        offset += header_size
        key_start = offset + collection_size
        object_start = key_start + key_size
        metadata_start = object_start + object_size
        if metadata_size >= 0:
            end = metadata_start + metadata_size
            metadata = packed[metadata_start:end]
            if load_metadata is not None:
                metadata = load_metadata(metadata)
        else:
            end, metadata = metadata_start, None
        obj = packed[object_start:metadata_start]
        append(new_tuple(row_type, (packed[offset:key_start].decode("utf-8"),
                                    packed[key_start:object_start].decode("utf-8"),
                                    obj if load is None else load(obj), metadata)))
        offset = end
    return found


class Flavour(enum.IntEnum):
    """What a callback reads (``YDB_FLAVOUR_*``)."""

    KEY = 0
    OBJECT = 1
    METADATA = 2
    ROW = 3


class RegistrationOutcome(enum.IntEnum):
    """How registering a view built it (``YDB_VIEW_*``)."""

    #: Populated from the rows: a new view, or one that is not persistent.
    BUILT = 1
    #: Loaded as stored (same version tag, saw every row change): no callback ran.
    LOADED = 2
    #: Repopulated: the stored version tag differs.
    REBUILT_NEW_TAG = 3
    #: Repopulated: rows changed while the view was not registered (by this
    #: library without it, or by another SQLite client).
    REBUILT_STALE = 4


class InvokeOptions(enum.IntFlag):
    """Which changes to an existing row make a callback run again
    (``YDB_INVOKE_*``); a callback always runs when a row is inserted.
    ``None`` where an option is accepted means the flavour's default."""

    INSERT_ONLY = 0
    OBJECT_MODIFIED = 1
    METADATA_MODIFIED = 2
    OBJECT_TOUCHED = 4
    METADATA_TOUCHED = 8
    ANY = 15


_INVOKE_DEFAULT = 256
FlavourLike = Union[str, Flavour]


def _flavour(value: FlavourLike) -> Flavour:
    if isinstance(value, Flavour):
        return value
    try:
        return Flavour[str(value).upper()]
    except KeyError:
        raise ValueError(f"flavour must be 'key', 'object', 'metadata' or 'row', not {value!r}") from None


class _Callback:
    """A view callback with its flavour (what it reads), invoke options
    (which changes make it run again) and whether it takes the transaction
    running it (``transaction=True``: a read-only ``CallbackTransaction``,
    passed first)."""

    _what = "a callback"

    def __init__(self, fn: Callable[..., Any], *, flavour: FlavourLike = "row",
                 invoke: Optional[InvokeOptions] = None, transaction: bool = False) -> None:
        if not callable(fn):
            raise TypeError(f"{self._what} must be callable")
        self.fn = fn
        self.flavour = _flavour(flavour)
        self.invoke = invoke
        self.transaction = bool(transaction)

    def __call__(self, *args: Any) -> Any:
        return self.fn(*args)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.fn!r}, flavour={self.flavour.name.lower()!r})"


class Grouping(_Callback):
    """A grouping callback ``fn(row) -> group name or None`` (with
    ``transaction=True``: ``fn(txn, row)``) with its flavour and invoke
    options."""

    _what = "a grouping"


class Sorting(_Callback):
    """A sorting callback ``fn(group, row1, row2) -> int`` (negative: row1
    first; 0: equal; positive: row2 first; with ``transaction=True``:
    ``fn(txn, group, row1, row2)``) with its flavour and invoke options. It
    must be a consistent total order."""

    _what = "a sorting"


class KeySorting(_Callback):
    """The key form of a view's sorting: ``fn(group, row)`` returns the
    row's sort value (an int, float, str, bytes, ``desc(...)`` or a tuple of
    them, see ``ydbview.sortkeys``); rows sort by it as ``sorted(key=...)``
    would, ties keeping the order rows arrived in. The view keeps the keys,
    so ``fn`` runs once per inserted or changed row, never per comparison.
    A ``bytes`` return value is used as the key itself (say, one made with
    ``ydbview.sort_key``). With ``transaction=True`` it is
    ``fn(txn, group, row)``."""

    _what = "a key function"


class Filtering(_Callback):
    """A filtered view's filter ``fn(group, row)``: a true answer keeps
    ``row``, which the parent view puts in ``group`` (any value, judged as
    ``if`` would); with ``transaction=True`` it is ``fn(txn, group, row)``.
    With its flavour and invoke options, as a grouping has them (see
    ``Database.register_filtered_view``)."""

    _what = "a filter"


def filtering(*, flavour: FlavourLike = "row", invoke: Optional[InvokeOptions] = None,
              transaction: bool = False) -> Callable[[Callable[..., Any]], Filtering]:
    """Decorator: ``@ydbview.filtering(flavour="object")``; with
    ``transaction=True`` the function is ``fn(txn, group, row)``."""
    return lambda fn: Filtering(fn, flavour=flavour, invoke=invoke, transaction=transaction)


def key_sorting(*, flavour: FlavourLike = "row", invoke: Optional[InvokeOptions] = None,
                transaction: bool = False) -> Callable[[Callable[..., Any]], KeySorting]:
    """Decorator: ``@ydbview.key_sorting(flavour="object")``."""
    return lambda fn: KeySorting(fn, flavour=flavour, invoke=invoke, transaction=transaction)


def grouping(*, flavour: FlavourLike = "row", invoke: Optional[InvokeOptions] = None,
             transaction: bool = False) -> Callable[[Callable[..., Any]], Grouping]:
    """Decorator: ``@ydbview.grouping(flavour="object")``; with
    ``transaction=True`` the function is ``fn(txn, row)``."""
    return lambda fn: Grouping(fn, flavour=flavour, invoke=invoke, transaction=transaction)


def sorting(*, flavour: FlavourLike = "row", invoke: Optional[InvokeOptions] = None,
            transaction: bool = False) -> Callable[[Callable[..., Any]], Sorting]:
    """Decorator: ``@ydbview.sorting(flavour="key")``."""
    return lambda fn: Sorting(fn, flavour=flavour, invoke=invoke, transaction=transaction)


# ---------------------------------------------------------------------------
# Registration: a view's callbacks are one registry entry, called through
# module-level trampolines (see _callbacks); C releases the entry with the
# view's destructor.
# ---------------------------------------------------------------------------

_row_at = _ffi.ViewRowStruct.from_address
_memory_at = _ffi.memory_at
_int_at = c_int.from_address
# What ViewRow(...) runs, without the Python-level __new__ of a NamedTuple
# in between: a row is made for every callback call.
_new_tuple = tuple.__new__


def _view_row(address: int, load: Optional[Callable[[bytes], Any]],
              load_metadata: Optional[Callable[[bytes], Any]]) -> ViewRow:
    """The ViewRow of the ``ydb_view_row`` at ``address`` (see
    ``_ffi.GROUPING_FN`` for why an address). ``load``/``load_metadata``
    None keep the bytes (``deserializer_of``): a call per row saved."""
    raw = _row_at(address)
    obj, meta = raw.object, raw.metadata
    if obj is not None:
        obj = _memory_at(obj)[:raw.object_size]
        if load is not None:
            obj = load(obj)
    if meta is not None:
        meta = _memory_at(meta)[:raw.metadata_size]
        if load_metadata is not None:
            meta = load_metadata(meta)
    return _new_tuple(ViewRow, (decode(raw.collection), decode(raw.key), obj, meta))


def _order(value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"a sorting or find callback must return an int, not {type(value).__name__}")
    return (value > 0) - (value < 0)


#: How many group names a view keeps encoded (``_ViewCallbacks.group``).
_GROUP_NAMES_KEPT = 1024


class _ViewCallbacks:
    """The registry entry of one view: its grouping and sorting, how its
    rows' objects and metadata are deserialized, and how a callback that
    asked for the transaction gets it (``lend``: the C handle in, a
    read-only transaction out -- made only for those callbacks)."""

    def __init__(self, grouping: Grouping, sorting: Union[Sorting, KeySorting], serializer: Serializer,
                 metadata_serializer: Serializer, lend: Callable[[Optional[int]], Any],
                 exceptions: Optional[List[BaseException]] = None) -> None:
        #: Where the trampolines keep what the callbacks raise, when not on
        #: the calling thread (a background registration; see _callbacks).
        self.exceptions = exceptions
        self.grouping = grouping
        self.sorting = sorting
        # Bound once: these run for every row written and every comparison.
        self.group_fn, self.group_lends = grouping.fn, grouping.transaction
        self.sort_fn, self.sort_lends = sorting.fn, sorting.transaction
        # A key function's kinds so far, per group (sortkeys.KeyShapes).
        self.key_shapes = KeyShapes()
        self.load = deserializer_of(serializer)
        self.load_metadata = deserializer_of(metadata_serializer)
        self.lend = lend
        #: Group names already encoded for C: a view has few groups and
        #: names every row's, so each name is checked and encoded once
        #: (up to _GROUP_NAMES_KEPT of them).
        self.group_names: Dict[str, bytes] = {}
        #: What rows the batch callbacks build for each callback's flavour.
        self.group_reads, self.sort_reads = _reads(grouping.flavour), _reads(sorting.flavour)

    def group(self, txn: Optional[int], row: int, result: Optional[int]) -> int:
        viewed = _view_row(row, self.load, self.load_metadata)
        group = self.group_fn(self.lend(txn), viewed) if self.group_lends else self.group_fn(viewed)
        if group is not None:
            status = _group_result_set(result, self._encoded(group))
            if status:
                _check(status)
        return 0

    def _encoded(self, group: Any) -> bytes:
        encoded = self.group_names.get(group) if type(group) is str else None
        if encoded is None:
            encoded = encode(group, "group")
            if len(self.group_names) < _GROUP_NAMES_KEPT:
                self.group_names[group] = encoded
        return encoded

    def group_batch(self, txn: Optional[int], count: int, indexes: int, rows: int, result: Optional[int]) -> int:
        """``grouping_batch``: the groups of a ``set_many``'s rows, handed to
        C in one call."""
        fn = self.group_fn
        groups: List[Any] = []
        lent = self.lend(txn) if self.group_lends else None
        for batch in self._batch_rows(count, indexes, rows, self.group_reads):
            groups += [fn(lent, row) for row in batch] if self.group_lends else map(fn, batch)
        try:
            distinct = [group for group in set(groups) if group is not None]
        except TypeError:  # an unhashable group: named as encode() refuses it
            distinct = [group for group in groups if group is not None]
        names = [self._encoded(group) for group in distinct]
        # One name per group, and per row the number of its name.
        numbers = dict(zip(distinct, range(len(distinct))))
        numbers[None] = _NO_GROUP
        choices = _ffi.size_array(map(numbers.__getitem__, groups))
        status = _group_batch_set(result, (c_char_p * len(names))(*names), len(names), choices.buffer_info()[0])
        if status:
            _check(status)
        return 0

    def sort_key_batch(self, txn: Optional[int], count: int, indexes: int, groups: int, rows: int,
                       result: Optional[int]) -> int:
        """``sort_key_batch``: the keys of a ``set_many``'s rows, handed to C
        in one call."""
        # Read as addresses: a run of rows in one group shares one (C says
        # so), and each address's name is read once.
        addresses = _read_sizes(groups, count)
        named = {address: decode(string_at(address)) for address in set(addresses)}
        names = list(map(named.__getitem__, addresses))
        fn = self.sort_fn
        lent = self.lend(txn) if self.sort_lends else None
        pieces: List[bytes] = []
        lengths = _ffi.size_array(())   # kept while C reads it
        start = 0
        for batch in self._batch_rows(count, indexes, rows, self.sort_reads):
            batch_names = names[start:start + len(batch)]
            start += len(batch)
            if self.sort_lends:
                values = [fn(lent, group, row) for group, row in zip(batch_names, batch)]
            else:
                values = list(map(fn, batch_names, batch))
            keys, sizes, shape = encode_values_shaped(values)
            check = self.key_shapes.check
            if shape is not None:
                for group in set(batch_names):   # every key has this shape
                    check(group, shape)
            else:
                for group, value in zip(batch_names, values):
                    check(group, key_shape(value))
            pieces.append(keys)
            lengths.extend(sizes)
        status = _sort_key_batch_set(result, b"".join(pieces), lengths.buffer_info()[0])
        if status:
            _check(status)
        return 0

    def _batch_rows(self, count: int, indexes: int, rows: int, reads: Tuple[bool, bool]) -> Iterator[List[ViewRow]]:
        """The rows a batch callback was called for, in order, `_SLICE` at
        a time: made from what ``set_many`` still holds (the stored bytes,
        deserialized as C's copies would be), or, for a batch this thread
        did not pass, read from C's ``ydb_view_row`` array. A slice's rows
        (and what the callback makes of them) are freed before the next
        slice is made: with 100,000 rows alive at once, Python's cyclic
        collector's full collections took about 37 ms of a 730 ms
        ``set_many`` (counted with ``gc.callbacks``)."""
        load, load_metadata = self.load, self.load_metadata
        batch = getattr(_batches, "current", None)
        if batch is None:
            size = _ROW_SIZE
            for start in range(0, count, _SLICE):
                yield [_view_row(rows + i * size, load, load_metadata) for i in range(start, min(count, start + _SLICE))]
            return
        collection, keys, data, metadata = batch
        reads_object, reads_metadata = reads
        picked = _read_sizes(indexes, count)
        # Made column by column, with no Python loop per row (a set_many
        # asks for most rows, often all of them in order).
        every = picked == list(range(len(keys)))
        for start in range(0, count, _SLICE):
            end = min(count, start + _SLICE)
            if every:
                def pick(column: List[Any]) -> Any:
                    return column[start:end]
            else:
                part = picked[start:end]

                def pick(column: List[Any]) -> Any:
                    return map(column.__getitem__, part)
            objects: Any = repeat(None)
            if reads_object:
                objects = pick(data) if load is None else map(load, pick(data))
            metas: Any = repeat(None)
            if reads_metadata and metadata is not None:
                metas = pick(metadata)
                if load_metadata is not None:
                    metas = (None if meta is None else load_metadata(meta) for meta in metas)
            yield list(map(_new_tuple, repeat(ViewRow), zip(repeat(collection), pick(keys), objects, metas)))

    def order(self, txn: Optional[int], group: bytes, row1: int, row2: int, out_order: int) -> int:
        load, load_metadata = self.load, self.load_metadata
        first, second = _view_row(row1, load, load_metadata), _view_row(row2, load, load_metadata)
        if self.sort_lends:
            value = self.sort_fn(self.lend(txn), decode(group), first, second)
        else:
            value = self.sort_fn(decode(group), first, second)
        _int_at(out_order).value = _order(value)
        return 0

    def sort_key(self, txn: Optional[int], group: bytes, row: int, key: Optional[int]) -> int:
        viewed = _view_row(row, self.load, self.load_metadata)
        name = decode(group)
        if self.sort_lends:
            value = self.sort_fn(self.lend(txn), name, viewed)
        else:
            value = self.sort_fn(name, viewed)
        self.key_shapes.check(name, key_shape(value))
        encoded = value if isinstance(value, bytes) else encode_value(value)
        status = _sort_key_append_raw(key, encoded, len(encoded))
        if status:
            _check(status)
        return 0


def _reads(flavour: Flavour) -> Tuple[bool, bool]:
    """Whether a callback of ``flavour`` sees the object, the metadata."""
    return flavour in (Flavour.OBJECT, Flavour.ROW), flavour in (Flavour.METADATA, Flavour.ROW)


def _read_sizes(address: int, count: int) -> List[int]:
    """The ``count`` size_t (or pointers) at ``address``, read in one C
    loop (iterating a ctypes array makes each item on its own)."""
    return memoryview((c_size_t * count).from_address(address)).cast("B").cast(_ffi.SIZE_T_CODE).tolist()


#: ``YDB_NO_GROUP``: a row a grouping batch leaves out.
_NO_GROUP = (1 << (8 * sizeof(c_size_t))) - 1
#: The ``set_many`` running on this thread (``setting_batch``).
_batches = threading.local()
_ROW_SIZE = sizeof(_ffi.ViewRowStruct)
#: Rows a batch callback makes at a time (`_ViewCallbacks._batch_rows`).
_SLICE = 256


@contextmanager
def setting_batch(collection: str, keys: List[str], data: List[bytes],
                  metadata: Optional[List[Optional[bytes]]]) -> Iterator[None]:
    """Marks the rows of a ``ydb_txn_set_objects`` call this thread makes:
    the batch callbacks it runs build their rows from these (by the index
    C passes) instead of reading C's copies back."""
    outer = getattr(_batches, "current", None)
    _batches.current = (collection, keys, data, metadata)
    try:
        yield
    finally:
        _batches.current = outer


_group_result_set = _ffi.holding_the_gil("ydb_group_result_set")
_sort_key_append_raw = _ffi.holding_the_gil("ydb_sort_key_append_raw")
_group_batch_set = _ffi.holding_the_gil("ydb_group_batch_set")
_sort_key_batch_set = _ffi.holding_the_gil("ydb_sort_key_batch_set")
_GROUPING_BATCH_TRAMPOLINE = _callbacks.trampoline(_ffi.GROUPING_BATCH_FN, failed=1, call=_ViewCallbacks.group_batch)
_SORT_KEY_BATCH_TRAMPOLINE = _callbacks.trampoline(_ffi.SORT_KEY_BATCH_FN, failed=1,
                                                   call=_ViewCallbacks.sort_key_batch)
_GROUPING_TRAMPOLINE = _callbacks.trampoline(_ffi.GROUPING_FN, failed=1, call=_ViewCallbacks.group)
_SORTING_TRAMPOLINE = _callbacks.trampoline(_ffi.SORTING_FN, failed=1, call=_ViewCallbacks.order)
_SORT_KEY_TRAMPOLINE = _callbacks.trampoline(_ffi.SORT_KEY_FN, failed=1, call=_ViewCallbacks.sort_key)


def _as_grouping(value: Any) -> Grouping:
    return value if isinstance(value, Grouping) else Grouping(value)


def _as_sorting(sorting: Any, key: Any) -> Union[Sorting, KeySorting]:
    """``sorting`` (a comparator) or ``key`` (a key function): exactly one."""
    if (sorting is None) == (key is None):
        raise TypeError("give a sorting comparator or a key function (key=...), exactly one")
    if key is not None:
        return key if isinstance(key, KeySorting) else KeySorting(key)
    return sorting if isinstance(sorting, (Sorting, KeySorting)) else Sorting(sorting)


def view_definition(grouping: Any, sorting: Any, key: Any, version_tag: str, persistent: bool,
                    collections: Optional[Iterable[str]], serializer: Serializer,
                    metadata_serializer: Serializer,
                    lend: Callable[[Optional[int]], Any],
                    exceptions: Optional[List[BaseException]] = None,
                    sorting_rows_in_memory: bool = False) -> Tuple[_ffi.ViewDefinitionStruct, int]:
    """The C definition of a view and the ctx of its callbacks, for
    ``ydb_view_register`` or ``ydb_view_set_definition`` to take with
    ``_callbacks.RELEASE``; pass it to C at once (until then nothing would
    release the ctx). The definition holds what it points to (ctypes keeps
    the trampolines and the collection names alive with it). ``lend`` makes
    the read-only transaction of a callback's C handle (the store's
    ``CallbackTransaction``, which this module cannot import). With
    ``exceptions``, what the callbacks raise is kept there instead of on
    the thread that runs them."""
    group_fn, sort_fn = _as_grouping(grouping), _as_sorting(sorting, key)
    definition = _ffi.ViewDefinitionStruct()
    definition.grouping_flavour = int(group_fn.flavour)
    definition.grouping_invoke = _INVOKE_DEFAULT if group_fn.invoke is None else int(group_fn.invoke)
    definition.grouping = _GROUPING_TRAMPOLINE
    definition.grouping_batch = _GROUPING_BATCH_TRAMPOLINE
    # Populations too: one crossing into Python per chunk of rows, not per
    # row (the batch callbacks read C's rows when no set_many is running).
    definition.population_batches = 1
    definition.sorting_flavour = int(sort_fn.flavour)
    definition.sorting_invoke = _INVOKE_DEFAULT if sort_fn.invoke is None else int(sort_fn.invoke)
    if isinstance(sort_fn, KeySorting):
        definition.sort_key = _SORT_KEY_TRAMPOLINE
        definition.sort_key_batch = _SORT_KEY_BATCH_TRAMPOLINE
    else:
        definition.sorting = _SORTING_TRAMPOLINE
    definition.version_tag = encode(version_tag, "version_tag")
    definition.persistent = 1 if persistent else 0
    definition.sorting_rows_in_memory = 1 if sorting_rows_in_memory else 0
    if collections is not None:
        if isinstance(collections, str):
            raise TypeError("collections must be an iterable of names, not one str")
        names = [encode(name, "collection") for name in collections]
        definition.allowed_collections = (c_char_p * max(len(names), 1))(*names)
        definition.allowed_collection_count = len(names)
    ctx = _callbacks.register(_ViewCallbacks(group_fn, sort_fn, serializer, metadata_serializer, lend,
                                             exceptions))
    return definition, ctx


# ---------------------------------------------------------------------------
# Filters: like a view's callbacks, one registry entry per filter, released
# by C with the filter's destructor.
# ---------------------------------------------------------------------------

class _FilterCallbacks:
    """The registry entry of one filter: the callable, how its rows'
    objects and metadata are deserialized, and how it gets the transaction
    when it asked for it (``lend``, as for ``_ViewCallbacks``)."""

    def __init__(self, filter_fn: Filtering, serializer: Serializer, metadata_serializer: Serializer,
                 lend: Callable[[Optional[int]], Any]) -> None:
        self.filter = filter_fn
        # Bound once: this runs for every row of the parent a new filter scans.
        self.fn, self.lends = filter_fn.fn, filter_fn.transaction
        self.load = deserializer_of(serializer)
        self.load_metadata = deserializer_of(metadata_serializer)
        self.lend = lend

    def keep(self, txn: Optional[int], group: bytes, row: int, out_keep: int) -> int:
        viewed = _view_row(row, self.load, self.load_metadata)
        name = decode(group)
        answer = self.fn(self.lend(txn), name, viewed) if self.lends else self.fn(name, viewed)
        _int_at(out_keep).value = 1 if answer else 0
        return 0


_FILTER_TRAMPOLINE = _callbacks.trampoline(_ffi.FILTER_FN, failed=1, call=_FilterCallbacks.keep)


def filter_definition(filter_fn: Any, version_tag: str, persistent: bool, serializer: Serializer,
                      metadata_serializer: Serializer,
                      lend: Callable[[Optional[int]], Any]) -> Tuple[_ffi.FilterDefinitionStruct, int]:
    """The C definition of a filter and the ctx of its callback, for
    ``ydb_filtered_view_register`` or ``ydb_view_set_filter`` to take with
    ``_callbacks.RELEASE``; pass it to C at once (until then nothing would
    release the ctx). A plain callable is a filter of flavour ``"row"``;
    ``lend`` is as for ``view_definition``."""
    chosen = filter_fn if isinstance(filter_fn, Filtering) else Filtering(filter_fn)
    definition = _ffi.FilterDefinitionStruct()
    definition.flavour = int(chosen.flavour)
    definition.invoke = _INVOKE_DEFAULT if chosen.invoke is None else int(chosen.invoke)
    definition.filter = _FILTER_TRAMPOLINE
    definition.version_tag = encode(version_tag, "version_tag")
    definition.persistent = 1 if persistent else 0
    ctx = _callbacks.register(_FilterCallbacks(chosen, serializer, metadata_serializer, lend))
    return definition, ctx


# ---------------------------------------------------------------------------
# Registering in the background (ydb_view_register_async): the progress and
# done callbacks are one registry entry, which the done callback releases
# (C calls it exactly once, last).
# ---------------------------------------------------------------------------

class _Reporter:
    """What a background registration's thread reports to Python: the
    user's progress callable, what the view's callbacks and it raised, and
    how the registration ended."""

    def __init__(self, progress: Optional[Callable[[int, int], Any]]) -> None:
        self.progress = progress
        #: Kept here by the trampolines (see _callbacks): the registration's
        #: thread is not the caller's.
        self.exceptions: List[BaseException] = []
        self.status = -1
        self.outcome = 0
        self.message = ""

    def report(self, done: int, total: int) -> int:
        if self.progress is not None:
            self.progress(done, total)
        return 0


def _finished(ctx: Optional[int], status: int, outcome: int, message: Optional[bytes]) -> None:
    try:
        reporter = _callbacks.pop(ctx)
        if reporter is not None:
            reporter.status, reporter.outcome = status, outcome
            reporter.message = decode(message) if message else ""
    except BaseException:  # pragma: no cover - nothing may reach C
        pass


# A progress callable that raises cancels the registration (C gets 1).
_PROGRESS_TRAMPOLINE = _callbacks.trampoline(_ffi.REGISTRATION_PROGRESS_FN, failed=1, call=_Reporter.report)
_DONE_TRAMPOLINE = _ffi.REGISTRATION_DONE_FN(_finished)


def register_async(database_handle: int, name: str, definition: _ffi.ViewDefinitionStruct, ctx: int,
                   reporter: _Reporter) -> int:
    """Starts ``ydb_view_register_async``; returns the registration handle.
    C releases ``ctx`` (the view's callbacks) whatever happens."""
    callback_ctx = _callbacks.register(reporter)
    handle = _ffi.RegistrationPointer()
    status = lib.ydb_view_register_async(database_handle, encode(name, "view name"), byref(definition), ctx,
                                         _callbacks.RELEASE, _PROGRESS_TRAMPOLINE, _DONE_TRAMPOLINE, callback_ctx,
                                         byref(handle))
    if status != Status.OK:
        _callbacks.pop(callback_ctx)  # nothing started: no callback will come
        _check(status)
    return handle


class ViewRegistration:
    """A view registration running in the background
    (``Database.register_view_async``), used like a
    ``concurrent.futures.Future``: ``done()``, ``wait(timeout)``,
    ``result(timeout)``, ``exception(timeout)``, ``cancel()``.

    Its callbacks -- the view's grouping and sorting, and ``progress`` --
    run on a thread of the library's own. What they raise stops the
    registration (nothing is installed) and is raised again by
    ``result()``.
    """

    def __init__(self, database: Any, name: str, handle: int, reporter: _Reporter) -> None:
        self.database = database  # keeps the database open while we are
        self.name = name
        self._handle = handle
        self._reporter = reporter
        self._finalizer = weakref.finalize(self, lib.ydb_registration_free, handle)

    def __repr__(self) -> str:
        state = "finished" if self.done() else "running"
        return f"ViewRegistration({self.name!r}, {state})"

    def cancel(self) -> bool:
        """Asks the registration to stop: it then ends with
        ``CancelledError`` and installs nothing -- unless its install
        already committed. Returns False (and does nothing) when it has
        already finished."""
        if self.done():
            return False
        _check(lib.ydb_registration_cancel(self._handle))
        return True

    def wait(self, timeout: Optional[float] = None) -> bool:
        """Waits until the registration finished (at most ``timeout``
        seconds; None: as long as it takes); returns whether it did. From
        its own callbacks it raises ``MisuseError`` (it would wait for itself)."""
        milliseconds = _timeout_milliseconds(timeout, "timeout")
        finished = c_int()
        _check(lib.ydb_registration_wait(self._handle, milliseconds, byref(finished)))
        return bool(finished.value)

    def done(self) -> bool:
        """Whether the registration finished (installed, failed or cancelled)."""
        return self.wait(0)

    def cancelled(self) -> bool:
        """Whether it finished cancelled."""
        return self.done() and self._reporter.status == Status.CANCELLED

    def exception(self, timeout: Optional[float] = None) -> Optional[BaseException]:
        """What ``result()`` would raise, or None when the view was
        installed; waits as ``result()`` does."""
        if not self.wait(timeout):
            raise TimeoutError(f"the registration of view {self.name!r} is still running")
        reporter = self._reporter
        if reporter.exceptions:
            return reporter.exceptions[0]
        if reporter.status != Status.OK:
            return error_for(reporter.status, reporter.message)
        return None

    def result(self, timeout: Optional[float] = None) -> RegistrationOutcome:
        """Waits (at most ``timeout`` seconds, else ``TimeoutError``) and
        returns how the view was built; or raises why it was not: the
        exception a Python callback raised (as it was raised),
        ``CancelledError``, ``ClosedError`` (its database closed),
        ``CallbackFailedError``, ..."""
        failure = self.exception(timeout)
        if failure is not None:
            raise failure
        return RegistrationOutcome(self._reporter.outcome)


# ---------------------------------------------------------------------------
# Notifications
# ---------------------------------------------------------------------------

def has_view_changes(notifications: Iterable[CommitNotification], view: str) -> bool:
    """True when any of ``notifications`` changed view ``view``."""
    flag = c_int()
    with _NotificationList(notifications) as handle:
        _check(lib.ydb_view_has_changes(handle, encode(view, "view name"), byref(flag)))
    return bool(flag.value)


def has_group_changes(notifications: Iterable[CommitNotification], view: str, group: str) -> bool:
    """True when any of ``notifications`` changed rows of ``group`` in ``view``."""
    flag = c_int()
    with _NotificationList(notifications) as handle:
        _check(lib.ydb_view_has_changes_in_group(handle, encode(view, "view name"),
                                                 encode(group, "group"), byref(flag)))
    return bool(flag.value)


# ---------------------------------------------------------------------------
# Queries
# ---------------------------------------------------------------------------

# A find's callback is a registry entry for the one call.
_FIND_TRAMPOLINE = _callbacks.trampoline(_ffi.FIND_FN, failed=1)


class ViewTransaction:
    """Queries on one view inside one transaction (``txn.view(name)``).

    Lookups that find nothing return None. Arguments go group first, then
    the index in it (0-based; negative indexes find nothing); table
    positions are one ``IndexPath`` / ``(section, row)``.
    """

    def __init__(self, transaction: _Transaction, name: str) -> None:
        self.transaction = transaction
        self.name = name
        self._name = encode(name, "view name")

    @classmethod
    def _open(cls, transaction: _Transaction, name: str) -> "ViewTransaction":
        _require_view(transaction, name)
        return cls(transaction, name)

    @property
    def _handle(self) -> int:
        return self.transaction._handle

    def __repr__(self) -> str:
        return f"ViewTransaction({self.name!r})"

    # -- groups --

    @property
    def version_tag(self) -> str:
        """The version tag the view was registered with."""
        out = c_void_p()
        _check(lib.ydb_view_version_tag(self._handle, self._name, byref(out)))
        return _ffi.take_string(out) or ""

    @property
    def groups(self) -> List[str]:
        """Every non-empty group, in ascending order."""
        names: List[str] = []
        _enumerate(lib.ydb_view_enumerate_groups, self._handle, self._name,
                   each=lambda name: names.append(decode(name)))
        return names

    @property
    def group_count(self) -> int:
        """How many non-empty groups the view has."""
        return self._size(lib.ydb_view_group_count)

    def has_group(self, group: str) -> bool:
        """Returns whether ``group`` has rows."""
        flag = c_int()
        _check(lib.ydb_view_has_group(self._handle, self._name, encode(group, "group"), byref(flag)))
        return bool(flag.value)

    def count(self, group: Optional[str] = None) -> int:
        """Rows in ``group`` (0 for an unknown group), or in all groups."""
        if group is None:
            return self._size(lib.ydb_view_count_all)

        out = c_size_t()
        _check(lib.ydb_view_count_in_group(self._handle, self._name, encode(group, "group"), byref(out)))
        return out.value

    @property
    def is_empty(self) -> bool:
        """True when the view holds no row."""
        flag = c_int()
        _check(lib.ydb_view_is_empty(self._handle, self._name, byref(flag)))
        return bool(flag.value)

    def _size(self, function: Any) -> int:
        out = c_size_t()
        _check(function(self._handle, self._name, byref(out)))
        return out.value

    # -- rows by position --

    def _key(self, call: Callable[[Any, Any], int]) -> Optional[Tuple[str, str]]:
        collection, key = c_void_p(), c_void_p()
        status = call(byref(collection), byref(key))
        if status == Status.NOTFOUND:
            return None
        _check(status)
        return _ffi.take_string(collection) or "", _ffi.take_string(key) or ""

    def key_at(self, group: str, index: int) -> Optional[Tuple[str, str]]:
        """``(collection, key)`` of the row at ``index`` of ``group``, or None."""
        position = _index(index)
        if position is None:
            return None
        encoded = encode(group, "group")
        return self._key(lambda c, k: lib.ydb_view_key_at(self._handle, self._name, encoded, position, c, k))

    def first_key(self, group: str) -> Optional[Tuple[str, str]]:
        """Returns ``(collection, key)`` of the first row of ``group``, or None when empty."""
        encoded = encode(group, "group")
        return self._key(lambda c, k: lib.ydb_view_first_key(self._handle, self._name, encoded, c, k))

    def last_key(self, group: str) -> Optional[Tuple[str, str]]:
        """Returns ``(collection, key)`` of the last row of ``group``, or None when empty."""
        encoded = encode(group, "group")
        return self._key(lambda c, k: lib.ydb_view_last_key(self._handle, self._name, encoded, c, k))

    def row_at(self, group: str, index: int) -> Optional[Row]:
        """The object and metadata of the row at ``index`` of ``group``, or None."""
        position = _index(index)
        if position is None:
            return None
        obj, obj_size, meta, meta_size = c_void_p(), c_size_t(), c_void_p(), c_size_t()
        status = lib.ydb_view_row_at(self._handle, self._name, encode(group, "group"), position,
                                     byref(obj), byref(obj_size), byref(meta), byref(meta_size))
        if status == Status.NOTFOUND:
            return None
        _check(status)
        return Row(self.transaction._load(_ffi.take_blob(obj, obj_size)),
                   self.transaction._load_metadata(_ffi.take_blob(meta, meta_size)))

    def object_at(self, group: str, index: int) -> Any:
        """Returns the object of the row at ``index`` of ``group``, or None."""
        row = self.row_at(group, index)
        return None if row is None else row.object

    def metadata_at(self, group: str, index: int) -> Any:
        """Returns the metadata of the row at ``index`` of ``group``, or None."""
        row = self.row_at(group, index)
        return None if row is None else row.metadata

    def position(self, collection: str, key: str) -> Optional[Tuple[str, int]]:
        """``(group, index)`` of row (collection, key), or None when the view
        does not hold it."""
        group, index = c_void_p(), c_size_t()
        status = lib.ydb_view_position(self._handle, self._name, encode(collection, "collection"),
                                       encode(key, "key"), byref(group), byref(index))
        if status == Status.NOTFOUND:
            return None
        _check(status)
        return _ffi.take_string(group) or "", index.value

    def group_of(self, collection: str, key: str) -> Optional[str]:
        """Returns the group holding row (collection, key), or None."""
        found = self.position(collection, key)
        return None if found is None else found[0]

    # -- enumeration --

    @staticmethod
    def _bounds(start: int, stop: Optional[int]) -> Tuple[int, int]:
        start = _count(start, "start")
        stop = None if stop is None else _count(stop, "stop")
        if stop is not None and start > stop:
            raise ValueError(f"start {start} is after stop {stop}")
        return start, _ffi.INDEX_END if stop is None else stop

    def enumerate_keys(self, group: str, body: Callable[[str, str, int], Optional[bool]], *,
                       start: int = 0, stop: Optional[int] = None, reverse: bool = False) -> None:
        """Calls ``body(collection, key, index)`` for the rows of ``group``
        with ``start <= index < stop``, backwards when ``reverse``; a truthy
        return stops. An exception in ``body`` stops and is re-raised."""
        lower, upper = self._bounds(start, stop)
        encoded = encode(group, "group")
        _enumerate(lib.ydb_view_enumerate_keys, self._handle, self._name, encoded, lower, upper,
                   1 if reverse else 0, each=lambda c, k, i: body(decode(c), decode(k), i))

    def keys(self, group: str, start: int = 0, stop: Optional[int] = None,
             reverse: bool = False) -> List[Tuple[str, str]]:
        """Returns ``(collection, key)`` of the rows of ``group`` in
        ``[start, stop)`` as a list (``iter_keys`` yields them lazily)."""
        found: List[Tuple[str, str]] = []
        self.enumerate_keys(group, lambda c, k, _i: found.append((c, k)), start=start, stop=stop,
                            reverse=reverse)
        return found

    def enumerate_rows(self, group: str, body: Callable[[ViewRow, int], Optional[bool]], *,
                       start: int = 0, stop: Optional[int] = None, reverse: bool = False) -> None:
        """Like ``enumerate_keys`` with ``body(row, index)``, ``row`` a ViewRow
        with the object and metadata."""
        lower, upper = self._bounds(start, stop)
        encoded = encode(group, "group")
        txn = self.transaction

        def visit(c: bytes, k: bytes, index: int, obj: Optional[int], obj_size: int,
                  meta: Optional[int], meta_size: int) -> Any:
            object_bytes = _memory_at(obj)[:obj_size] if obj else b""
            metadata_bytes = _memory_at(meta)[:meta_size] if meta else None
            row = ViewRow(decode(c), decode(k), txn._load(object_bytes), txn._load_metadata(metadata_bytes))
            return body(row, index)

        _enumerate(lib.ydb_view_enumerate_rows, self._handle, self._name, encoded, lower, upper,
                   1 if reverse else 0, each=visit)

    def rows(self, group: str, start: int = 0, stop: Optional[int] = None,
             reverse: bool = False) -> List[ViewRow]:
        """Returns the rows of ``group`` in ``[start, stop)`` as a list of
        ViewRows (``iter_rows`` yields them lazily): one C call for the whole
        range (``ydb_view_read_rows``), e.g. the 50 rows on screen. A range no
        longer than ``Connection.row_cache_limit`` goes through the
        connection's row cache."""
        lower, upper = self._bounds(start, stop)
        buffer, size, count = c_void_p(), c_size_t(), c_size_t()
        _check(lib.ydb_view_read_rows(self._handle, self._name, encode(group, "group"), lower, upper,
                                      1 if reverse else 0, byref(buffer), byref(size), byref(count)))
        try:
            packed = string_at(buffer.value, size.value) if size.value else b""
        finally:
            lib.ydb_free(buffer)
        return _unpack_rows(packed, count.value, *self.transaction._deserializers())

    #: Rows fetched per C call by the iterators.
    _CHUNK = 256

    def _chunks(self, group: str, start: int, stop: Optional[int], reverse: bool) -> Iterator[Tuple[int, int]]:
        """``[lower, upper)`` slices of ``[start, stop)`` in iteration order."""
        lower, upper = self._bounds(start, stop)
        upper = min(upper, self.count(group))
        if reverse:
            hi = upper
            while hi > lower:
                lo = max(lower, hi - self._CHUNK)
                yield lo, hi
                hi = lo
        else:
            lo = lower
            while lo < upper:
                hi = min(upper, lo + self._CHUNK)
                yield lo, hi
                lo = hi

    def iter_keys(self, group: str, start: int = 0, stop: Optional[int] = None,
                  reverse: bool = False) -> Iterator[Tuple[str, str]]:
        """Yields ``(collection, key)`` of the rows of ``group`` with
        ``start <= index < stop`` (backwards when ``reverse``), lazily: the
        rows are read from C a chunk at a time, and no C call is in progress
        between two items. Raises ``ValueError`` for negative or crossed
        bounds (when the iteration starts), ``MisuseError`` when the
        transaction ends before the iteration does. Writing to the view in
        the same transaction while iterating gives unspecified (but safe)
        results."""
        self._bounds(start, stop)  # fail before the first next()
        return self._iter(group, start, stop, reverse,
                          lambda lo, hi: self.keys(group, lo, hi, reverse=reverse))

    def iter_rows(self, group: str, start: int = 0, stop: Optional[int] = None,
                  reverse: bool = False) -> Iterator[ViewRow]:
        """Like ``iter_keys``, yielding ``ViewRow``s with object and metadata."""
        self._bounds(start, stop)
        return self._iter(group, start, stop, reverse,
                          lambda lo, hi: self.rows(group, lo, hi, reverse=reverse))

    def _iter(self, group: str, start: int, stop: Optional[int], reverse: bool,
              fetch: Callable[[int, int], List[Any]]) -> Iterator[Any]:
        for lo, hi in self._chunks(group, start, stop, reverse):
            chunk = fetch(lo, hi)
            yield from chunk
            if len(chunk) < hi - lo:
                return  # the group shrank under us (a write in this transaction)

    # -- find --

    def find(self, group: str, fn: Callable[..., int], *, flavour: FlavourLike = "row",
             transaction: bool = False) -> Optional[range]:
        """The range of indexes of ``group`` for which ``fn(row)`` returns 0
        (negative: the row is before the range wanted; positive: after),
        found by binary search; None when there is none. ``fn`` must agree
        with the group's order. With ``transaction=True`` it is ``fn(txn,
        row)``: ``txn`` is a read-only ``CallbackTransaction`` of this
        transaction, valid during the call (rows and views read; writing
        raises ``MisuseError``)."""
        txn = self.transaction
        lend = txn._callback_transaction
        load, load_metadata = txn._deserializers()

        def classify(handle: Optional[int], row: int, out_order: int) -> int:
            viewed = _view_row(row, load, load_metadata)
            _int_at(out_order).value = _order(fn(lend(handle), viewed) if transaction else fn(viewed))
            return 0

        encoded = encode(group, "group")
        start, end = c_size_t(), c_size_t()
        with _callbacks.registered(classify) as ctx:
            status = lib.ydb_view_find(self._handle, self._name, encoded, int(_flavour(flavour)),
                                       _FIND_TRAMPOLINE, ctx, byref(start), byref(end))
        if status == Status.NOTFOUND:
            return None
        _check(status)
        return range(start.value, end.value)

    # -- rows by table position (with mappings) --

    def key_at_index_path(self, index_path: Tuple[int, int], mappings: Mappings) -> Optional[Tuple[str, str]]:
        """``(collection, key)`` shown at ``(section, row)``, or None."""
        section, row = index_path
        if _index(section) is None or _index(row) is None:
            return None
        return self._key(lambda c, k: lib.ydb_view_key_at_index_path(self._handle, mappings._live_handle,
                                                                     section, row, c, k))

    def _blob_at_index_path(self, function: Any, index_path: Tuple[int, int],
                            mappings: Mappings) -> Optional[bytes]:
        section, row = index_path
        if _index(section) is None or _index(row) is None:
            return None
        data, size = c_void_p(), c_size_t()
        status = function(self._handle, mappings._live_handle, section, row, byref(data), byref(size))
        if status == Status.NOTFOUND:
            return None
        _check(status)
        return _ffi.take_blob(data, size)

    def object_at_index_path(self, index_path: Tuple[int, int], mappings: Mappings) -> Any:
        """Returns the object shown at ``(section, row)`` of ``mappings``, or None."""
        return self.transaction._load(
            self._blob_at_index_path(lib.ydb_view_object_at_index_path, index_path, mappings))

    def metadata_at_index_path(self, index_path: Tuple[int, int], mappings: Mappings) -> Any:
        """Returns the metadata shown at ``(section, row)`` of ``mappings``, or None."""
        return self.transaction._load_metadata(
            self._blob_at_index_path(lib.ydb_view_metadata_at_index_path, index_path, mappings))

    def index_path_for_key(self, collection: str, key: str, mappings: Mappings) -> Optional[IndexPath]:
        """Where row (collection, key) is shown, or None."""
        section, row = c_size_t(), c_size_t()
        status = lib.ydb_view_index_path_for_key(self._handle, mappings._live_handle,
                                                 encode(collection, "collection"), encode(key, "key"),
                                                 byref(section), byref(row))
        if status == Status.NOTFOUND:
            return None
        _check(status)
        return IndexPath(section.value, row.value)

