"""The plain values the store, views and mappings hand out: a row, a row as
a view callback sees it, and a table position. Here, importing nothing of
the package, so that each module can return them without importing the
others. (No postponed annotations here: NamedTuple's generated __init__
would carry them as strings that documentation tools cannot resolve.)"""

from typing import Any, NamedTuple


class Row(NamedTuple):
    """A row's object and metadata (None when the row has no metadata)."""

    object: Any
    metadata: Any


class ViewRow(NamedTuple):
    """A row as a view callback sees it: ``object`` is None unless the
    callback's flavour reads the object; ``metadata`` is None unless it
    reads the metadata and the row has some."""

    collection: str
    key: str
    object: Any
    metadata: Any


class IndexPath(NamedTuple):
    """A table position."""

    section: int
    row: int
