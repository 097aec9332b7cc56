"""Replays seeded random histories through examples/gtk_list_model.py's
``MappingsListModel`` (a ``Gio.ListModel``) with a consumer that, like a
GTK list view, knows the items only through ``items-changed`` and
``get_item``: it keeps its own copy of the list, items and all, updated by
each signal, and checks at every signal that its length is the model's
and that the model still answers every item it did not re-read with the
values it had (a row changed by the commits keeps its old values until
its own step, like a Gtk.SortListModel expects). After every catch-up the
copy, and the model, must be exactly the mappings' table, with every
row's values as read anew. Then one model follows commits made on another
thread through GLib's main loop, one follows mappings whose dynamic
groups read the transaction, and four follow a writer thread committing
as fast as it can (commits landing during catch-ups, some of which
reload). Needs PyGObject (python3-gi), not GTK; run by
test_gtk_list_model.py:

    python gtk_histories.py FIRST_SEED COUNT [--gtk]

With --gtk (GTK 4's introspection data and a display, e.g. under
xvfb-run) GTK's own consumers join in: a ``Gtk.SortListModel`` over the
model, shown by a ``Gtk.ListView`` in a window, must hold the same rows.
"""

from __future__ import annotations

import random
import sys
import time
from typing import Any, List, Tuple

from gi.repository import GLib

import ydbview
from gtk_list_model import MappingsListModel
from list_histories import begin_history, busy_writer, hides_the_group_of_k0, mappings_table, new_database, \
    random_commit, write_from_another_thread


Item = Tuple[str, str, Any, Any]


class Consumer:
    """What a list view knows: the items, as the signals told it."""

    def __init__(self, model: MappingsListModel) -> None:
        self.model = model
        self.held = self.read(0, model.get_n_items())
        self.signals = 0
        self.failure = ""   # an exception in a signal handler would only be printed
        model.connect("items-changed", self.changed)

    @property
    def items(self) -> List[Tuple[str, str]]:
        return [(collection, key) for collection, key, _, _ in self.held]

    def read(self, position: int, count: int) -> List[Item]:
        rows = [self.model.get_item(position + offset) for offset in range(count)]
        assert all(row is not None for row in rows), "get_item answered None inside the list"
        return [(row.collection, row.key, row.object, row.metadata) for row in rows]

    def changed(self, model: MappingsListModel, position: int, removed: int, added: int) -> None:
        assert position + removed <= len(self.held), (position, removed, len(self.held))
        self.held[position:position + removed] = self.read(position, added)
        assert len(self.held) == model.get_n_items(), (len(self.held), model.get_n_items())
        assert model.get_item(model.get_n_items()) is None
        now = self.read(0, len(self.held))
        if not self.failure and now != self.held:
            self.failure = f"the model changed items it did not announce: {now} != {self.held}"
        self.signals += 1


class OnScreen:
    """A window whose list view shows the model through GTK's own list
    models; the main loop runs after every catch-up."""

    def __init__(self) -> None:
        import gi
        gi.require_version("Gtk", "4.0")
        from gi.repository import Gtk
        self.Gtk = Gtk
        self.window = Gtk.Window(default_width=240, default_height=400)
        self.window.present()
        self.shown = None

    def show(self, model: MappingsListModel) -> None:
        Gtk = self.Gtk
        factory = Gtk.SignalListItemFactory()
        factory.connect("setup", lambda _, item: item.set_child(Gtk.Label()))
        factory.connect("bind", lambda _, item: item.get_child().set_text(item.get_item().key))
        self.shown = Gtk.SortListModel(model=model)   # no sorter: the model's order
        self.window.set_child(Gtk.ListView(model=Gtk.NoSelection(model=self.shown), factory=factory))
        self.spin()

    def spin(self) -> None:
        context = GLib.MainContext.default()
        for _ in range(20):
            context.iteration(False)

    def rows(self) -> List[Tuple[str, str]]:
        assert self.shown is not None
        self.spin()
        items = [self.shown.get_item(position) for position in range(self.shown.get_n_items())]
        return [(item.collection, item.key) for item in items]


def replay(seed: int, counts: dict, screen: "OnScreen | None" = None) -> None:
    rng = random.Random(seed)
    db, writer, make_mappings = begin_history(rng)
    model = MappingsListModel(db, make_mappings(), follow_commits=False)
    consumer = Consumer(model)
    if screen is not None:
        screen.show(model)
    for _ in range(rng.randint(1, 4)):
        for _ in range(rng.randint(1, 3)):
            random_commit(writer, rng)
        model.catch_up()
        assert not consumer.failure, f"seed {seed}: {consumer.failure}"
        rows = [row for _, section in mappings_table(db, model.mappings) for row in section]
        with writer.read() as t:
            items = [(*row, *t.get_row(*row)) for row in rows]
        assert consumer.held == items, f"seed {seed}: the consumer's copy {consumer.held} != {items}"
        assert consumer.read(0, model.get_n_items()) == items, f"seed {seed}: the model != {items}"
        if screen is not None:
            assert screen.rows() == rows, f"seed {seed}: GTK's SortListModel {screen.rows()} != {rows}"
        counts["catch-ups"] += 1
    counts["signals"] += consumer.signals
    model.close()
    writer.close()
    db.close()


def follow_another_thread() -> None:
    db = ydbview.Database(serializer=ydbview.JSONSerializer())
    db.register_view("v", lambda row: "all", key=lambda group, row: row.object)
    model = MappingsListModel(db, ydbview.Mappings(["all"], "v"))
    consumer = Consumer(model)

    thread = write_from_another_thread(db)
    context = GLib.MainContext.default()
    deadline = time.monotonic() + 30
    while len(consumer.items) < 30 and time.monotonic() < deadline:
        context.iteration(False)
        time.sleep(0.005)
    thread.join()
    while context.iteration(False):
        pass
    keys = [key for _, key in consumer.items]
    assert keys == [f"k{(value * 13) % 30}" for value in range(30)], keys  # 7 * 13 = 1 (mod 30)
    model.close()
    db.close()


def follow_a_filter_reading_the_transaction() -> None:
    """Mappings whose dynamic groups' filter reads the transaction: the
    model must pass one to every changeset."""
    db = ydbview.Database(serializer=ydbview.JSONSerializer())
    db.register_view("v", lambda row: row.object["g"] if row.collection == "c" else None,
                     key=lambda group, row: row.key)
    hidden = lambda txn, group: group != (txn.get("settings", "hidden") or {}).get("g")  # noqa: E731
    model = MappingsListModel(db, ydbview.Mappings.dynamic(hidden, "v", transaction=True))
    consumer = Consumer(model)
    writer = db.new_connection()
    context = GLib.MainContext.default()
    for commit in ({"a1": "a", "b1": "b"}, {"hidden": "a"}, {"a2": "a", "b2": "b"}, {"hidden": "b"}):
        with writer.read_write() as t:
            for key, group in commit.items():
                t.set("settings" if key == "hidden" else "c", key, {"g": group})
        while context.iteration(False):
            pass
    assert not consumer.failure, consumer.failure
    assert consumer.items == [("c", "a1"), ("c", "a2")], consumer.items
    model.close()
    writer.close()
    db.close()


def follow_a_busy_writer(seed: int) -> None:
    """A model follows a thread that commits as fast as it can, through the
    main loop: commits land during catch-ups, and with max_commits_behind
    3 (odd seeds) some catch-ups reload. The consumer must end with the
    table, values read anew."""
    rng = random.Random(seed)
    db = new_database(rng)
    db.max_commits_behind = 3 if seed % 2 else 1000
    model = MappingsListModel(db, ydbview.Mappings.dynamic(hides_the_group_of_k0, "v", transaction=True))
    consumer = Consumer(model)
    done = busy_writer(db, rng)
    context = GLib.MainContext.default()
    while not done.is_set():
        context.iteration(False)
    while context.iteration(False):
        pass
    rows = [row for _, section in mappings_table(db, model.mappings) for row in section]
    reader = db.new_connection()
    with reader.read() as t:
        items = [(*row, *t.get_row(*row)) for row in rows]
    assert not consumer.failure, f"busy writer {seed}: {consumer.failure}"
    assert consumer.held == items, f"busy writer {seed}: {consumer.held} != {items}"
    reader.close()
    model.close()
    db.close()


def main() -> None:
    first, count = int(sys.argv[1]), int(sys.argv[2])
    screen = OnScreen() if "--gtk" in sys.argv[3:] else None
    counts = {"catch-ups": 0, "signals": 0}
    for seed in range(first, first + count):
        replay(seed, counts, screen)
    follow_another_thread()
    follow_a_filter_reading_the_transaction()
    for seed in range(4):
        follow_a_busy_writer(seed)
    shown = f", shown by GTK {screen.Gtk.get_major_version()}.{screen.Gtk.get_minor_version()}" if screen else ""
    print(f"{count} histories, {counts['catch-ups']} catch-ups, {counts['signals']} items-changed signals"
          f"{shown}: ok")


if __name__ == "__main__":
    main()
