"""ydbview: YapDatabase-style persistent views over a key/value store on SQLite.

Python bindings (ctypes) to libydbview.so::

    import ydbview

    with ydbview.Database(serializer=ydbview.JSONSerializer()) as db:
        conn = db.new_connection()
        with conn.read_write() as t:
            t.set("books", "b1", {"title": "Dune"}, metadata={"genre": "sci-fi"})
        with conn.read() as t:
            print(t.get("books", "b1"))

See ``Database``, ``Connection``, ``ReadTransaction``,
``ReadWriteTransaction`` and ``CommitNotification``; views
(``Database.register_view``, ``ReadTransaction.view``), filtered views
(``Database.register_filtered_view``), ``Mappings`` and ``Changeset``;
full-text indexes (``Database.register_fts_index``, ``ReadTransaction.search``)
and search views over them (``Database.register_search_view``,
``Database.search``).
"""

from ._ffi import library_path, version as library_version, version_number as library_version_number
from .errors import (
    BusyError,
    CallbackFailedError,
    CancelledError,
    CantOpenError,
    ClosedError,
    CorruptError,
    InvalidArgumentError,
    MismatchError,
    MisuseError,
    NotFoundError,
    ObserverWarning,
    ReloadRequired,
    SQLiteError,
    Status,
    TooBigError,
    YDBError,
)
from .serializers import BytesSerializer, JSONSerializer, PickleSerializer, Serializer
from ._values import IndexPath, Row, ViewRow
from .notifications import CommitNotification, RowChange, has_change, has_change_in_collection
from .mappings import (
    ChangeFlags,
    Changeset,
    ChangeType,
    EditStep,
    InsertRowStep,
    InsertSectionStep,
    Mappings,
    MoveRowStep,
    ReloadRowStep,
    RemoveRowStep,
    RemoveSectionStep,
    Step,
    RangeOptions,
    RangePosition,
    SectionChangeType,
    StepType,
    ViewRowChange,
    ViewSectionChange,
)
from .search import BackgroundSearch, Match
from .sortkeys import desc, sort_key
from .views import (
    Filtering,
    Flavour,
    Grouping,
    InvokeOptions,
    KeySorting,
    key_sorting,
    RegistrationOutcome,
    Sorting,
    ViewRegistration,
    ViewTransaction,
    grouping,
    has_group_changes,
    filtering,
    has_view_changes,
    sorting,
)
from .store import CallbackTransaction, Connection, Database, ReadTransaction, ReadWriteTransaction

__version__ = "0.2.0"

__all__ = [
    "BackgroundSearch",
    "ChangeFlags",
    "ChangeType",
    "Changeset",
    "EditStep",
    "RemoveSectionStep",
    "InsertSectionStep",
    "RemoveRowStep",
    "InsertRowStep",
    "MoveRowStep",
    "ReloadRowStep",
    "Filtering",
    "Flavour",
    "Match",
    "RegistrationOutcome",
    "Grouping",
    "IndexPath",
    "InvokeOptions",
    "Mappings",
    "RangeOptions",
    "RangePosition",
    "SectionChangeType",
    "Sorting",
    "StepType",
    "ViewRow",
    "ViewRowChange",
    "ViewSectionChange",
    "ViewRegistration",
    "ViewTransaction",
    "filtering",
    "grouping",
    "has_group_changes",
    "has_view_changes",
    "sorting",
    "KeySorting",
    "key_sorting",
    "sort_key",
    "desc",
    "BusyError",
    "BytesSerializer",
    "CallbackFailedError",
    "CallbackTransaction",
    "CancelledError",
    "CantOpenError",
    "ClosedError",
    "CommitNotification",
    "Connection",
    "CorruptError",
    "ReloadRequired",
    "Database",
    "InvalidArgumentError",
    "JSONSerializer",
    "MismatchError",
    "MisuseError",
    "NotFoundError",
    "ObserverWarning",
    "PickleSerializer",
    "ReadTransaction",
    "ReadWriteTransaction",
    "Row",
    "RowChange",
    "SQLiteError",
    "TooBigError",
    "Serializer",
    "Status",
    "YDBError",
    "has_change",
    "has_change_in_collection",
    "library_path",
    "library_version",
    "library_version_number",
]
