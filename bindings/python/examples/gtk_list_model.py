"""A GTK 4 list model over a ydbview Mappings: a ``Gio.ListModel`` whose
items are the mappings' rows, top to bottom, that announces every
changeset as ``items-changed(position, removed, added)`` signals, one per
edit step. Give it to a ``Gtk.ListView`` (through a selection model).

Needs PyGObject with GLib's introspection data (Debian: python3-gi,
gir1.2-glib-2.0; GTK itself only for the view). The tests drive it
headless through GLib alone (tests/gtk_histories.py).
"""

import gi

gi.require_version("Gio", "2.0")
from gi.repository import Gio, GLib, GObject  # noqa: E402

import ydbview  # noqa: E402


class Row(GObject.Object):
    """An item: which row it is. Read its object when the view binds it."""
    __gtype_name__ = "YdbViewRow"

    def __init__(self, collection, key):
        super().__init__()
        self.collection, self.key = collection, key


class MappingsListModel(GObject.Object, Gio.ListModel):
    __gtype_name__ = "YdbViewMappingsListModel"

    def __init__(self, db, mappings, follow_commits=True):
        super().__init__()
        self.db, self.mappings, self.observer, self.closed = db, mappings, None, False
        self.connection = db.new_connection()
        self.connection.begin_long_lived_read_transaction()
        self.sections = self.read_table()
        if follow_commits:  # observers run on the committing thread: catch up on the main loop
            self.observer = db.add_commit_observer(lambda _: GLib.idle_add(self.catch_up))

    def read_table(self):  # each section's rows as (collection, key), at the connection's snapshot
        with self.connection.read() as t:
            self.mappings.update(t)
            return [[self.row_at(s, r, t) for r in range(self.mappings.number_of_items_in_section(s))]
                    for s in range(self.mappings.number_of_sections)]

    def row_at(self, section, row, t):
        return t.view(self.mappings.view).key_at(*self.mappings.group_and_index_for_row((section, row)))

    def flat(self, section, row):
        return sum(map(len, self.sections[:section])) + row

    def do_get_item_type(self):
        return Row.__gtype__

    def do_get_n_items(self):
        return sum(map(len, self.sections))

    def do_get_item(self, position):
        for rows in self.sections:
            if position < len(rows):
                return Row(*rows[position])
            position -= len(rows)
        return None

    def catch_up(self):
        if self.closed:
            return GLib.SOURCE_REMOVE
        try:
            changeset = self.mappings.changes(self.connection.begin_long_lived_read_transaction())
        except ydbview.ReloadRequired:  # fell too far behind: replace everything
            before = self.do_get_n_items()
            self.sections = self.read_table()
            self.items_changed(0, before, self.do_get_n_items())
            return GLib.SOURCE_REMOVE
        for step in changeset.steps():
            self.apply(step)
        return GLib.SOURCE_REMOVE

    def apply(self, step):
        T, s, r = ydbview.StepType, step.section, step.row
        if step.type == T.INSERT_SECTION:  # sections are empty when they come and go
            self.sections.insert(s, [])
        elif step.type == T.REMOVE_SECTION:
            del self.sections[s]
        elif step.type == T.REMOVE_ROW:
            del self.sections[s][r]
            self.items_changed(self.flat(s, r), 1, 0)
        elif step.type == T.INSERT_ROW:
            if step.key is not None:
                name = (step.collection, step.key)
            else:  # a row that slid into a range: read it from the new table
                with self.connection.read() as t:
                    name = self.row_at(step.final_section, step.final_row, t)
            self.sections[s].insert(r, name)
            self.items_changed(self.flat(s, r), 0, 1)
        elif step.type == T.MOVE_ROW:  # GTK has no move: a removal, then an insertion
            at = self.flat(s, r)
            name = self.sections[s].pop(r)
            self.items_changed(at, 1, 0)
            self.sections[step.to_section].insert(step.to_row, name)
            self.items_changed(self.flat(step.to_section, step.to_row), 0, 1)
        else:  # RELOAD_ROW: the same row, to be bound again
            self.items_changed(self.flat(s, r), 1, 1)

    def close(self):
        self.closed = True
        if self.observer is not None:
            self.db.remove_commit_observer(self.observer)
            self.observer = None
        self.connection.close()
