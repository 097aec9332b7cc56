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
one kind per position for every row of a view: an ``int`` and a ``float``
in the same position do not compare as numbers (write ``float(x)``).
"""

from __future__ import annotations

import struct
from typing import Any, List

__all__ = ["sort_key", "desc"]

_SIGN = 1 << 63
_NAN_BITS = 0x7FF8000000000000
_INVERT = bytes(255 - b for b in range(256))
_PACK_U64 = struct.Struct(">Q")
_PACK_F64 = struct.Struct(">d")


class desc:  # noqa: N801 - reads like a function at the call site
    """Marks a value to sort in descending order inside ``sort_key``."""

    __slots__ = ("value",)

    def __init__(self, value: Any) -> None:
        self.value = value

    def __repr__(self) -> str:
        return f"desc({self.value!r})"


def _escaped(data: bytes) -> bytes:
    # 0x00 -> 00 FF and a 00 01 end: byte order kept, no value a prefix of another.
    return data.replace(b"\x00", b"\x00\xff") + b"\x00\x01"


def _encode(value: Any, out: List[bytes], descending: bool) -> None:
    if isinstance(value, desc):
        _encode(value.value, out, not descending)
        return
    if isinstance(value, (tuple, list)):
        for item in value:
            _encode(item, out, descending)
        return
    if isinstance(value, bool) or isinstance(value, int):
        number = int(value)
        if not -_SIGN <= number < _SIGN:
            raise OverflowError(f"sort key integer {number} does not fit in 64 bits")
        part = _PACK_U64.pack((number + _SIGN) & 0xFFFFFFFFFFFFFFFF)
    elif isinstance(value, float):
        if value != value:
            bits = _NAN_BITS
        else:
            bits = _PACK_U64.unpack(_PACK_F64.pack(value if value != 0 else 0.0))[0]
        part = _PACK_U64.pack((~bits & 0xFFFFFFFFFFFFFFFF) if bits & _SIGN else bits | _SIGN)
    elif isinstance(value, str):
        part = _escaped(value.encode("utf-8"))
    elif isinstance(value, (bytes, bytearray, memoryview)):
        part = _escaped(bytes(value))
    else:
        raise TypeError(f"a sort key cannot hold {type(value).__name__} (int, float, str, bytes, desc or tuples)")
    out.append(part.translate(_INVERT) if descending else part)


def sort_key(*values: Any) -> bytes:
    """The order-preserving bytes of ``values`` (a tuple when several)."""
    out: List[bytes] = []
    _encode(values, out, False)
    return b"".join(out)
