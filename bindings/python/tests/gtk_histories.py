"""Replays seeded random histories through examples/gtk_list_model.py's
``MappingsListModel`` (a ``Gio.ListModel``) with a consumer that, like a
GTK list view, knows the items only through ``items-changed`` and
``get_item``: it keeps its own copy of the list, updated by each signal,
and checks at every signal that its length is the model's. After every
catch-up the copy, and the model, must be exactly the mappings' table.
Then one model follows commits made on another thread through GLib's main
loop. Needs PyGObject (python3-gi), not GTK; run by test_gtk_list_model.py:

    python gtk_histories.py FIRST_SEED COUNT [--gtk]

With --gtk (GTK 4's introspection data and a display, e.g. under
xvfb-run) GTK's own consumers join in: a ``Gtk.SortListModel`` over the
model, shown by a ``Gtk.ListView`` in a window, must hold the same rows.
"""

from __future__ import annotations

import random
import sys
import time
from typing import List, Tuple

from gi.repository import GLib

import ydbview
from gtk_list_model import MappingsListModel
from list_histories import begin_history, mappings_table, random_commit, write_from_another_thread


class Consumer:
    """What a list view knows: the items, as the signals told it."""

    def __init__(self, model: MappingsListModel) -> None:
        self.model = model
        self.items = self.read(0, model.get_n_items())
        self.signals = 0
        model.connect("items-changed", self.changed)

    def read(self, position: int, count: int) -> List[Tuple[str, str]]:
        rows = [self.model.get_item(position + offset) for offset in range(count)]
        assert all(row is not None for row in rows), "get_item answered None inside the list"
        return [(row.collection, row.key) for row in rows]

    def changed(self, model: MappingsListModel, position: int, removed: int, added: int) -> None:
        assert position + removed <= len(self.items), (position, removed, len(self.items))
        self.items[position:position + removed] = self.read(position, added)
        assert len(self.items) == model.get_n_items(), (len(self.items), model.get_n_items())
        assert model.get_item(model.get_n_items()) is None
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
        rows = [row for _, section in mappings_table(db, model.mappings) for row in section]
        assert consumer.items == rows, f"seed {seed}: the consumer's copy {consumer.items} != {rows}"
        assert consumer.read(0, model.get_n_items()) == rows, f"seed {seed}: the model != {rows}"
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


def main() -> None:
    first, count = int(sys.argv[1]), int(sys.argv[2])
    screen = OnScreen() if "--gtk" in sys.argv[3:] else None
    counts = {"catch-ups": 0, "signals": 0}
    for seed in range(first, first + count):
        replay(seed, counts, screen)
    follow_another_thread()
    shown = f", shown by GTK {screen.Gtk.get_major_version()}.{screen.Gtk.get_minor_version()}" if screen else ""
    print(f"{count} histories, {counts['catch-ups']} catch-ups, {counts['signals']} items-changed signals"
          f"{shown}: ok")


if __name__ == "__main__":
    main()
