"""Sort keys: order-preserving bytes for the key form of a view's sorting.

A key function maps a row to a value, the way ``sorted(key=...)`` does;
the view sorts rows by the bytes ``sort_key`` makes of that value. The
encodings are the same as C's ``ydb_sort_key_append_*`` and Swift's
``SortKey``, and are stored in the database.

>>> sort_key(3) < sort_key(10) and sort_key(-1) < sort_key(0)
True
>>> sort_key("ab", 2) < sort_key("b", 1)       # a tuple: the first value decides
True
>>> sort_key(desc(5)) < sort_key(desc(4))      # desc() reverses one value
True

Values: ``int`` (a 64-bit integer; ``bool`` counts as 0/1), ``float``,
``str`` (UTF-8 byte order: code points, not a locale's collation),
``bytes``, ``desc(value)``, and tuples or lists of these (flattened). Use
one kind per position for every row of a group: a view's key function
that returns another kind at a position than for an earlier row of the
group (an ``int`` then a ``str``, or an ``int`` then a ``float``, which
would not compare as numbers: write ``float(x)``) raises TypeError.
"""

from __future__ import annotations

import struct
from typing import Any, Callable, Dict, List, Optional, Tuple

__all__ = ["sort_key", "desc"]

_SIGN = 1 << 63
_NAN_BITS = 0x7FF8000000000000
_INVERT = bytes(255 - b for b in range(256))
_pack_u64 = struct.Struct(">Q").pack
_unpack_u64 = struct.Struct(">Q").unpack
_pack_f64 = struct.Struct(">d").pack


class desc:  # noqa: N801 - reads like a function at the call site
    """Marks a value to sort in descending order inside ``sort_key``."""

    __slots__ = ("value",)

    def __init__(self, value: Any) -> None:
        self.value = value

    def __repr__(self) -> str:
        return f"desc({self.value!r})"


def _escaped(data: bytes) -> bytes:
    # 0x00 -> 00 FF and a 00 01 end: byte order kept, no value a prefix of another.
    if b"\x00" in data:
        data = data.replace(b"\x00", b"\x00\xff")
    return data + b"\x00\x01"


def _int_part(number: int) -> bytes:
    if not -_SIGN <= number < _SIGN:
        raise OverflowError(f"sort key integer {number} does not fit in 64 bits")
    return _pack_u64(number + _SIGN)


def _float_part(value: float) -> bytes:
    if value != value:
        bits = _NAN_BITS
    else:
        bits = _unpack_u64(_pack_f64(value if value != 0 else 0.0))[0]
    return _pack_u64((~bits & 0xFFFFFFFFFFFFFFFF) if bits & _SIGN else bits | _SIGN)


def _str_part(value: str) -> bytes:
    return _escaped(value.encode("utf-8"))


def _bytes_part(value: Any) -> bytes:
    return _escaped(bytes(value))


# One encoder per exact type: a key function runs for every row written, so
# the common values (an int, a str, a tuple of them) are found with one dict
# lookup instead of a chain of isinstance tests; subclasses (bool, an
# IntEnum, a str subclass) take the isinstance path in _part.
_PARTS: Dict[type, Callable[[Any], bytes]] = {
    int: _int_part,
    float: _float_part,
    str: _str_part,
    bytes: _bytes_part,
}


def _part(value: Any) -> bytes:
    """The ascending encoding of one value that is not a tuple, list or desc."""
    part = _PARTS.get(type(value))
    if part is not None:
        return part(value)
    if isinstance(value, int):  # bool and int subclasses: their integer value
        return _int_part(int(value))
    if isinstance(value, float):
        return _float_part(value)
    if isinstance(value, str):
        return _str_part(value)
    if isinstance(value, (bytes, bytearray, memoryview)):
        return _bytes_part(value)
    raise TypeError(f"a sort key cannot hold {type(value).__name__} (int, float, str, bytes, desc or tuples)")


def _encode(value: Any, out: List[bytes], descending: bool) -> None:
    kind = type(value)
    if kind is tuple or kind is list or isinstance(value, (tuple, list)):
        for item in value:
            _encode(item, out, descending)
    elif kind is desc:
        _encode(value.value, out, not descending)
    else:
        part = _part(value)
        out.append(part.translate(_INVERT) if descending else part)


def encode_value(value: Any) -> bytes:
    """The bytes of one sort value (a tuple or list is flattened), as
    ``sort_key(value)`` -- the form a key function's result takes. A flat
    tuple of plain ints and strs, the usual key, is encoded in one loop
    with no call per item (a key function runs for every row written);
    anything else takes the general path."""
    if type(value) is tuple:
        parts = []
        for item in value:
            kind = type(item)
            if kind is int and -_SIGN <= item < _SIGN:
                parts.append(_pack_u64(item + _SIGN))
            elif kind is str:
                data = item.encode("utf-8")
                # _escaped's work, without a call for the common string with no NUL.
                parts.append(_escaped(data) if b"\x00" in data else data + b"\x00\x01")
            else:
                break
        else:
            return b"".join(parts)
    out: List[bytes] = []
    _encode(value, out, False)
    return b"".join(out)


def _int_column(column: Tuple[Any, ...]) -> List[bytes]:
    pack, sign = _pack_u64, _SIGN
    return [pack(number + sign) for number in column]  # struct.error past 64 bits


def _str_column(column: Tuple[Any, ...]) -> List[bytes]:
    if "\x00" in "".join(column):
        return [_escaped(text.encode("utf-8")) for text in column]
    return [data + b"\x00\x01" for data in map(str.encode, column)]


#: A batch's column of one exact type, encoded at once (see encode_values).
_COLUMNS: Dict[type, Callable[[Tuple[Any, ...]], List[bytes]]] = {
    int: _int_column,
    str: _str_column,
    float: lambda column: [_float_part(value) for value in column],
    bytes: lambda column: [_bytes_part(value) for value in column],
}


def encode_values(values: List[Any]) -> Tuple[bytes, List[int]]:
    """The keys of many sort values, laid end to end, and each one's
    length: ``b"".join(map(encode_value, values))`` and its lengths. When
    every value is a plain int, str, float or bytes, or a flat tuple of
    those with the same types in the same places (what one key function
    returns row after row), each position is encoded for all values at
    once, with no Python loop per value (under half the time); anything
    else is encoded value by value."""
    keys, lengths, _shape = encode_values_shaped(values)
    return keys, lengths


class _Mixed(Exception):
    """The values of a batch are not all of one shape."""


def encode_values_shaped(values: List[Any]) -> Tuple[bytes, List[int], Optional[Shape]]:
    """``encode_values``, and the one shape (``key_shape``) every value
    has when the batch took the column path (which proves it), else None:
    the shape is then the caller's to find, value by value."""
    if values:
        try:
            return _encode_columns(values)
        except (TypeError, struct.error, _Mixed):
            pass
    keys = [encode_value(value) for value in values]
    return b"".join(keys), [len(key) for key in keys], None


def _encode_columns(values: List[Any]) -> Tuple[bytes, List[int], Shape]:
    kinds = set(map(type, values))
    if kinds == {tuple}:
        widths = set(map(len, values))
        if len(widths) != 1:
            raise _Mixed
        columns = list(zip(*values))
    elif len(kinds) == 1:
        columns = [tuple(values)]
    else:
        raise _Mixed
    encoded = []
    shape = []
    for column in columns:
        kind = set(map(type, column))
        only = kind.pop() if len(kind) == 1 else None
        encoder = _COLUMNS.get(only) if only is not None else None
        if encoder is None:
            raise _Mixed
        shape.append(only)
        encoded.append(encoder(column))
    if len(encoded) == 1:
        keys = encoded[0]
        return b"".join(keys), list(map(len, keys)), tuple(shape)
    keys = list(map(b"".join, zip(*encoded)))
    return b"".join(keys), list(map(len, keys)), tuple(shape)


def sort_key(*values: Any) -> bytes:
    """The order-preserving bytes of ``values`` (a tuple when several)."""
    return encode_value(values[0] if len(values) == 1 else values)


# Mixed key types. The engine compares sort keys as bytes, so an int key
# and a str key in one group are silently ordered by their encodings' tags
# where sorted() would raise TypeError (and an int and a float are ordered,
# but not as numbers). Each key is encoded alone, so the check must remember
# what earlier rows returned: a view's callbacks keep, per group, the kind
# at each position of the (flattened) key -- its "shape" -- and a row whose
# kind differs at a position is refused with TypeError.
#
# Where: per group, because only rows of one group are ever compared (a key
# function may sort one group by int and another by str). Per position of
# the flattened key, as the encoding flattens: keys of different lengths
# are fine (tuples compare by their common prefix). Stricter than sorted(),
# which only fails when the two values happen to be compared; a view keeps
# its rows and compares them with every later row, so "not yet compared" is
# not "safe". Cost: a row's shape is type() or a tuple of type()s, and the
# check one dict lookup and one tuple comparison; a set_many batch whose
# every key has one shape (the column path of encode_values_shaped proves
# it) is checked once per group, not once per row. Shapes live as long as
# the registration in this process (the rows a previous process wrote are
# not re-read to learn theirs): one small tuple per group seen.

Shape = Tuple[Any, ...]

#: The kind of a value for the check: what it is encoded as.
_PLAIN = frozenset((int, float, str, bytes))
_SCALAR_SHAPES: Dict[type, Shape] = {kind: (kind,) for kind in _PLAIN}


def _kind(value: Any) -> Any:
    if isinstance(value, int):
        return int                      # bool, IntEnum: encoded as ints
    if isinstance(value, float):
        return float
    if isinstance(value, str):
        return str
    if isinstance(value, (bytes, bytearray, memoryview)):
        return bytes
    return type(value)                  # not encodable: encoding raises anyway


def _flat_shape(value: Any, out: List[Any], descending: bool) -> None:
    if isinstance(value, (tuple, list)):
        for item in value:
            _flat_shape(item, out, descending)
    elif type(value) is desc:
        _flat_shape(value.value, out, not descending)
    else:
        kind = _kind(value)
        out.append((desc, kind) if descending else kind)


def key_shape(value: Any) -> Shape:
    """The kind at each position of ``value`` as a key function's result
    (flattened like its encoding; ``(desc, kind)`` for a descending one)."""
    kind = type(value)
    if kind in _PLAIN:
        return _SCALAR_SHAPES[kind]
    if kind is tuple:
        shape = tuple(map(type, value))
        if _PLAIN.issuperset(shape):
            return shape
    out: List[Any] = []
    _flat_shape(value, out, False)
    return tuple(out)


def _kind_name(kind: Any) -> str:
    if isinstance(kind, tuple):
        return f"desc({kind[1].__name__})"
    return str(kind.__name__)


class KeyShapes:
    """The shape of the keys one view's key function returned, per group:
    refuses a key that cannot be compared with the ones before it (see the
    comment above)."""

    __slots__ = ("_groups",)

    def __init__(self) -> None:
        self._groups: Dict[str, Shape] = {}

    def check(self, group: str, shape: Shape) -> None:
        """Raises TypeError when ``shape`` differs from the group's at a
        position both have; else remembers it."""
        known = self._groups.get(group)
        if known == shape:
            return
        if known is None:
            self._groups[group] = shape
            return
        for position, (was, now) in enumerate(zip(known, shape)):
            if was != now:
                where = "" if len(known) == len(shape) == 1 else f" at position {position} of the key"
                numbers = {was, now} == {int, float}
                why = ("an int and a float do not sort as numbers in a sort key: write float(x)" if numbers
                       else "they cannot be compared, as in sorted(): return one type per position")
                raise TypeError(f"the key function returned {_kind_name(now)} for a row of group "
                                f"{group!r}{where}, and {_kind_name(was)} for an earlier row: {why}")
        if len(shape) > len(known):
            self._groups[group] = shape   # the longer one checks more positions
