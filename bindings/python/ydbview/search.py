"""Full-text indexes (SQLite FTS5; docs/full-text-index.md), thin over the C API.

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

Imports nothing of the package but its leaf modules and ``views``.
"""

from __future__ import annotations

from ctypes import byref, c_char_p, c_int, c_void_p
from typing import Any, Callable, Dict, Iterable, List, NamedTuple, Optional

from . import _callbacks, _ffi
from ._base import _c_int, _check, _count, _Transaction
from ._ffi import lib
from ._text import decode, encode
from .errors import Status
from .views import _INVOKE_DEFAULT, FlavourLike, InvokeOptions, RegistrationOutcome, _flavour, _view_row
from .serializers import Serializer, deserializer_of

__all__ = ["Match"]


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
