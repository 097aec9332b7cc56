"""Serializers turn Python values into the bytes ydbview stores, and back.

A ``Database`` or ``Connection`` takes one for objects and (optionally) a
different one for metadata. ``BytesSerializer`` (the default) stores bytes
as they are; ``JSONSerializer`` and ``PickleSerializer`` are ready to use.
Write your own with two methods: ``serialize(value) -> bytes`` and
``deserialize(data: bytes) -> value``.
"""

from __future__ import annotations

import json
import pickle
from typing import Any, Callable, Dict, Optional, Protocol, runtime_checkable


@runtime_checkable
class Serializer(Protocol):
    """What a serializer needs: ``serialize(value) -> bytes`` and ``deserialize(bytes) -> value``."""

    def serialize(self, value: Any) -> bytes:
        """Returns the bytes to store for ``value``; raises what the format
        raises for a value it cannot store."""
        ...

    def deserialize(self, data: bytes) -> Any:
        """Returns the value stored as ``data``."""
        ...


class BytesSerializer:
    """Stores bytes-like values unchanged; reads back ``bytes``."""

    def serialize(self, value: Any) -> bytes:
        """Returns ``value`` as bytes; raises TypeError for anything not bytes-like."""
        if isinstance(value, (bytes, bytearray, memoryview)):
            return bytes(value)
        raise TypeError(
            f"BytesSerializer stores bytes, not {type(value).__name__}; "
            "pass serializer=JSONSerializer() or PickleSerializer() for other values")

    def deserialize(self, data: bytes) -> bytes:
        """Returns ``data`` unchanged (``bytes``)."""
        return data

    def __repr__(self) -> str:
        return "BytesSerializer()"


class JSONSerializer:
    """Stores JSON (UTF-8). ``default`` and ``object_hook`` go to ``json``."""

    def __init__(self, *, sort_keys: bool = False,
                 default: Optional[Callable[[Any], Any]] = None,
                 object_hook: Optional[Callable[[Dict[str, Any]], Any]] = None) -> None:
        self.sort_keys = sort_keys
        self.default = default
        self.object_hook = object_hook

    def serialize(self, value: Any) -> bytes:
        """Returns ``value`` as UTF-8 JSON; raises TypeError/ValueError as ``json.dumps`` does."""
        text = json.dumps(value, ensure_ascii=False, separators=(",", ":"),
                          sort_keys=self.sort_keys, default=self.default)
        return text.encode("utf-8")

    def deserialize(self, data: bytes) -> Any:
        """Returns the value decoded from UTF-8 JSON; raises ``json.JSONDecodeError`` for anything else."""
        return json.loads(data.decode("utf-8"), object_hook=self.object_hook)

    def __repr__(self) -> str:
        return f"JSONSerializer(sort_keys={self.sort_keys})"


class PickleSerializer:
    """Stores pickles. Only read databases you trust: unpickling runs code."""

    def __init__(self, protocol: int = pickle.HIGHEST_PROTOCOL) -> None:
        self.protocol = protocol

    def serialize(self, value: Any) -> bytes:
        """Returns ``value`` pickled; raises ``pickle.PicklingError`` for what cannot be pickled."""
        return pickle.dumps(value, protocol=self.protocol)

    def deserialize(self, data: bytes) -> Any:
        """Returns the value unpickled from ``data`` (runs code: trusted data only)."""
        return pickle.loads(data)

    def __repr__(self) -> str:
        return f"PickleSerializer(protocol={self.protocol})"


def deserializer_of(serializer: Serializer) -> Optional[Callable[[bytes], Any]]:
    """``serializer.deserialize``, or None when it returns the bytes it is
    given (a plain ``BytesSerializer``): a loop reading many rows then skips
    a call per row that would change nothing."""
    return None if type(serializer) is BytesSerializer else serializer.deserialize
