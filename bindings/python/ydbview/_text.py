"""Text across the C boundary: one rule each way.

Going in, ``encode`` turns a name (a collection, key, group, view name,
version tag or path) into the NUL-terminated UTF-8 that C reads. A NUL
would cut the string short, so it is refused here; everything else goes to
C as it is -- a lone surrogate too, as the bytes ``surrogatepass`` makes --
and C refuses what is not valid UTF-8, so the engine alone decides what a
valid name is.

Coming back, ``decode`` reads UTF-8 strictly. The engine hands out only
valid UTF-8: names it validated on the way in, and text it wrote itself
(messages, paths). Bytes that are not UTF-8 would mean the engine broke
that promise, so they raise ``UnicodeDecodeError`` rather than become a
name that looks right and is not.

Imports nothing of the package but ``errors``.
"""

from __future__ import annotations

from typing import Callable

from .errors import InvalidArgumentError, Status


def encode(value: str, what: str) -> bytes:
    """``value`` as the bytes C reads; ``what`` names it in the errors
    (TypeError for a value that is not str, InvalidArgumentError for a NUL)."""
    if not isinstance(value, str):
        raise TypeError(f"{what} must be str, not {type(value).__name__}")
    if "\0" in value:
        raise InvalidArgumentError(f"{what} contains a NUL character", Status.INVALID_ARGUMENT)
    return value.encode("utf-8", "surrogatepass")


#: Text that came from C (see the module for why strictly): ``bytes.decode``
#: itself, whose defaults are strict UTF-8. Every view callback decodes its
#: row's collection and key, and a Python function in between cost a call
#: frame for each.
decode: Callable[[bytes], str] = bytes.decode
