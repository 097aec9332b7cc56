"""A GTK 4 list model over a ydbview Mappings: a ``Gio.ListModel`` whose
items are the mappings' rows, top to bottom, that announces every
changeset as ``items-changed(position, removed, added)`` signals, one per
run of edit steps of one kind at adjacent places. Give it to a
``Gtk.ListView`` (through a selection model).

An item carries its row's object and metadata as the list has been told
of them: a row the commits changed keeps its old values until its own
step (its insertion or its reload) announces the new ones, so a
``Gtk.SortListModel`` or ``Gtk.FilterListModel`` on top never holds an item
it was not told about. For a changed row no one asked for yet, a second
connection stays at the old snapshot until the steps are done.

Needs PyGObject with GLib's introspection data (Debian: python3-gi,
gir1.2-glib-2.0; GTK itself only for the view). The tests drive it
headless through GLib alone (tests/gtk_histories.py).
"""

import gi

gi.require_version("Gio", "2.0")
from gi.repository import Gio, GLib, GObject  # noqa: E402

import ydbview  # noqa: E402

T = ydbview.StepType


class Row(GObject.Object):
    """An item: which row it is, and its object and metadata as the list was told of them."""
    __gtype_name__ = "YdbViewRow"

    def __init__(self, collection, key, object=None, metadata=None):
        super().__init__()
        self.collection, self.key, self.object, self.metadata = collection, key, object, metadata


def changed_by(commits):
    """Whether ``commits`` changed a row (collection, key), and the rows they
    name (None when they removed whole collections: any row may be one)."""
    rows = set().union(*(commit.changed_rows for commit in commits))
    collections = set().union(*(commit.removed_collections for commit in commits))
    everything = any(commit.removed_all for commit in commits)
    return (lambda name: everything or name in rows or name[0] in collections), \
        (None if everything or collections else rows)


def continues(run, step):
    """Whether ``step`` is the next row of ``run``: removals go up, inserts and reloads down."""
    last = run[-1]
    return (step.type == last.type and step.type in (T.REMOVE_ROW, T.INSERT_ROW, T.RELOAD_ROW)
            and step.section == last.section and step.row == last.row + (-1 if step.type == T.REMOVE_ROW else 1))


def runs(steps):
    """The steps cut into runs of one kind at adjacent rows: one items-changed signal each."""
    run = []
    for step in steps:
        if run and not continues(run, step):
            yield run
            run = []
        run.append(step)
    if run:
        yield run


class MappingsListModel(GObject.Object, Gio.ListModel):
    __gtype_name__ = "YdbViewMappingsListModel"

    def __init__(self, db, mappings, follow_commits=True):
        super().__init__()
        self.db, self.mappings, self.observer, self.closed = db, mappings, None, False
        # Two connections leapfrog: a catch-up moves the spare one to the newest
        # snapshot and makes it the model's; the other one, still at the old
        # snapshot, answers for the changed rows whose step has not come yet.
        self.spare = db.new_connection()   # opened first: it sees every commit after the other's snapshot
        self.spare_commits = []            # the commits it has seen that the model has not
        self.connection = db.new_connection()
        self.connection.begin_long_lived_read_transaction()
        self.items, self.changed = {}, None   # items given out, by name; during a catch-up, changed_by(...)
        self.reload_owed = False   # an item went out without its values (snapshot released): reload
        self.sections = self.read_table()
        if follow_commits:  # observers run on the committing thread: catch up on the main loop
            self.observer = db.add_commit_observer(lambda _: GLib.idle_add(self.catch_up))

    def read_table(self):  # each section's rows as (collection, key), at the connection's snapshot
        with self.connection.read() as t:
            self.mappings.update(t)
            table = [[self.row_at(s, r, t) for r in range(self.mappings.number_of_items_in_section(s))]
                     for s in range(self.mappings.number_of_sections)]
        self.advance_spare()
        return table

    def row_at(self, section, row, t):
        return t.view(self.mappings.view).key_at(*self.mappings.group_and_index_for_row((section, row)))

    def advance_spare(self):
        """Moves the spare connection to the newest snapshot, keeping the
        commits past the model's (None: some are gone, the next catch-up reloads)."""
        shown = self.connection.snapshot
        try:
            commits = self.spare.begin_long_lived_read_transaction()
        except ydbview.ReloadRequired:
            self.spare_commits = [] if self.spare.snapshot == shown else None
            return
        self.spare_commits = [commit for commit in commits if commit.snapshot > shown]

    def flat(self, section, row):
        return sum(map(len, self.sections[:section])) + row

    def do_get_item_type(self):
        return Row.__gtype__

    def do_get_n_items(self):
        return sum(map(len, self.sections))

    def do_get_item(self, position):
        for rows in self.sections:
            if position < len(rows):
                return self.item(rows[position])
            position -= len(rows)
        return None

    def item(self, name):
        """The row's item, kept while the row is shown and unchanged. A row
        changed by the catch-up under way is read at the old snapshot until its step."""
        waiting = self.changed is not None and self.changed(name) and name not in self.stepped
        kept, connection = (self.before, self.spare) if waiting else (self.items, self.connection)
        if name not in kept:
            if self.closed:  # keys only from now on
                return Row(*name)
            try:
                with connection.read() as t:
                    kept[name] = Row(*name, *(t.get_row(*name) or (None, None)))
            except ydbview.ReloadRequired:  # snapshot released: keys only, until a reload announces it anew
                self.reload_owed = True
                GLib.idle_add(self.catch_up)
                return Row(*name)
        return kept[name]

    def catch_up(self):
        if self.closed:
            return GLib.SOURCE_REMOVE
        try:
            if self.spare_commits is None or self.reload_owed:
                raise ydbview.ReloadRequired("the spare connection lost commits, or an item was given out unread")
            self.spare_commits += self.spare.begin_long_lived_read_transaction()
            if not self.spare_commits:
                return GLib.SOURCE_REMOVE
            with self.spare.read() as t:  # the new snapshot: a dynamic group's filter may read it
                changeset = self.mappings.changes(self.spare_commits, t)
            self.connection, self.spare = self.spare, self.connection
            self.begin(self.spare_commits)
            for run in runs(changeset.steps()):
                self.apply(run)
            self.changed = None
            for name in self.left:  # no longer shown: nothing to keep
                self.items.pop(name, None)
            self.advance_spare()
        except ydbview.ReloadRequired:  # fell too far behind: replace everything
            self.reload()
        return GLib.SOURCE_REMOVE

    def begin(self, commits):
        (self.changed, named), self.stepped, self.left = changed_by(commits), set(), set()
        self.before = {}   # the items given out of rows changed: shown until their step
        for name in [name for name in (self.items if named is None else named) if name in self.items]:
            if self.changed(name):
                self.before[name] = self.items.pop(name)

    def reload(self):
        before = self.do_get_n_items()
        self.items, self.changed, self.reload_owed = {}, None, False
        while True:  # again if released while reading: writers committed that often meanwhile
            for connection in (self.spare, self.connection):  # the spare first: it must end at or past the other
                try:
                    connection.begin_long_lived_read_transaction()
                except ydbview.ReloadRequired:
                    pass
            try:
                self.sections = self.read_table()
                break
            except ydbview.ReloadRequired:
                continue
        self.items_changed(0, before, self.do_get_n_items())

    def arriving(self, step):
        if step.key is not None:
            return (step.collection, step.key)
        with self.connection.read() as t:  # a row that slid into a range: read it from the new table
            return self.row_at(step.final_section, step.final_row, t)

    def apply(self, run):
        first, count, s = run[0], len(run), run[0].section
        if first.type == T.INSERT_SECTION:  # sections are empty when they come and go
            self.sections.insert(s, [])
        elif first.type == T.REMOVE_SECTION:
            del self.sections[s]
        elif first.type == T.REMOVE_ROW:  # bottom-up: the run's last step is its top row
            r = run[-1].row
            self.left.update(self.sections[s][r:r + count])
            del self.sections[s][r:r + count]
            self.items_changed(self.flat(s, r), count, 0)
        elif first.type == T.INSERT_ROW:
            names = [self.arriving(step) for step in run]
            self.sections[s][first.row:first.row] = names
            self.stepped.update(names)
            self.left.difference_update(names)
            self.items_changed(self.flat(s, first.row), 0, count)
        elif first.type == T.MOVE_ROW:  # GTK has no move: a removal, then an insertion
            at = self.flat(s, first.row)
            name = self.sections[s].pop(first.row)
            self.items_changed(at, 1, 0)
            self.sections[first.to_section].insert(first.to_row, name)
            self.items_changed(self.flat(first.to_section, first.to_row), 0, 1)
        else:  # RELOAD_ROW: the same rows, with their new values
            self.stepped.update(self.sections[s][first.row:first.row + count])
            self.items_changed(self.flat(s, first.row), count, count)

    def close(self):
        self.closed = True
        if self.observer is not None:
            self.db.remove_commit_observer(self.observer)
            self.observer = None
        self.connection.close()
        self.spare.close()
