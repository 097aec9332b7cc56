"""GTK 4 list models over a ``Mappings``, from the ydbview-gtk C library
through GObject introspection (the ``YdbviewGtk-1.0`` typelib).

Needs PyGObject (Debian: ``python3-gi``; it is not on the project's venv)
and ydbview-gtk built or installed: ``cmake --build build`` makes
``build/bindings/gtk/YdbviewGtk-1.0.typelib`` and ``libydbview-gtk.so``;
point ``GI_TYPELIB_PATH`` and ``LD_LIBRARY_PATH`` at that folder, or
``cmake --install`` to a prefix GObject introspection searches.

``list_model(database, mappings)`` gives a ``YdbviewGtk.ListModel``: a
``Gio.ListModel`` of ``YdbviewGtk.Item`` (``collection``, ``key``,
``object`` and ``metadata`` as ``GLib.Bytes``, ``group``) showing every
section's rows, top to bottom. It follows commits on the GLib main loop of
the thread that made it (the connection's wakeup descriptor, no thread),
announcing each changeset as ``items-changed`` signals, one per edit step,
so that ``Gtk.ListView``, ``Gtk.SortListModel`` and ``Gtk.FilterListModel``
stay right. ``model.get_sections()`` gives the sections, each a
``Gio.ListModel`` of its rows, for a ``Gtk.TreeListModel``::

    import ydbview
    from ydbview.gtk import list_model, value_of

    db = ydbview.Database(serializer=ydbview.JSONSerializer())
    db.register_view("byDue", lambda row: row.object["list"],
                     key=lambda group, row: (row.object["due"], row.key))
    model = list_model(db, ydbview.Mappings(["today", "later"], "byDue"))
    for item in model:
        print(item.props.key, value_of(db, item))

The model borrows the Python objects' handles and keeps the objects alive
as long as it lives; it drives the mappings (do not use them elsewhere
meanwhile). Close the model (``model.close()``) before the database.
"""

from __future__ import annotations

from ctypes import c_void_p, cast
from typing import Any

try:
    import gi
except ModuleNotFoundError as missing:
    if missing.name != "gi":
        raise
    raise ModuleNotFoundError(
        "ydbview.gtk needs PyGObject (the gi module), which this Python cannot import: "
        "on Debian apt-get install python3-gi and use the system python3 "
        "(or pip install PyGObject, which compiles against GLib)", name="gi") from missing

try:
    gi.require_version("YdbviewGtk", "1.0")
    gi.require_version("Gio", "2.0")
    from gi.repository import Gio, GLib, YdbviewGtk  # noqa: E402
except (ValueError, ImportError) as missing:
    raise ImportError(
        "ydbview.gtk needs the YdbviewGtk-1.0 typelib of the ydbview-gtk library, which GObject "
        "introspection cannot find: build it (cmake -S . -B build -G Ninja && cmake --build build) and set "
        "GI_TYPELIB_PATH=build/bindings/gtk and LD_LIBRARY_PATH=build/bindings/gtk:build, or install it "
        f"(cmake --install build) into a prefix introspection searches ({missing})") from missing

from .mappings import Mappings
from .store import Database

__all__ = ["Gio", "GLib", "YdbviewGtk", "list_model", "value_of", "metadata_of"]


def _address(handle: Any) -> int:
    """The C pointer a ydbview object holds, as an int for a gpointer argument."""
    address = cast(handle, c_void_p).value
    if not address:
        raise ValueError("the object is closed")
    return address


def list_model(database: Database, mappings: Mappings, *, following: bool = True) -> Any:
    """A ``YdbviewGtk.ListModel`` of the rows ``mappings`` show in ``database``,
    following commits on this thread's GLib main loop (``following=False``:
    only when you call ``model.catch_up()``). Raises ``GLib.Error`` (domain
    ``ydbview-gtk-error-quark``) when the model cannot be made, e.g. for a
    view that is not registered."""
    if database.closed or mappings.closed:
        raise ValueError("the database or the mappings are closed")
    model = YdbviewGtk.ListModel.new_borrowed(_address(database._handle), _address(mappings._handle))
    # The model borrows both handles: the wrapper keeps their owners alive
    # (PyGObject keeps a wrapper with attributes alive as long as its object).
    model._ydbview_owners = (database, mappings)
    if not following:
        model.set_following(False)
    return model


def value_of(database: Database, item: Any) -> Any:
    """The item's object, deserialized with the database's serializer (None
    when the model could not read it)."""
    data = item.get_object()
    return None if data is None else database.serializer.deserialize(bytes(data.get_data() or b""))


def metadata_of(database: Database, item: Any) -> Any:
    """The item's metadata, deserialized with the database's metadata
    serializer (None when the row has none)."""
    data = item.get_metadata()
    return None if data is None else database.metadata_serializer.deserialize(bytes(data.get_data() or b""))
