"""A live, animated list: a Qt tree over a ydbview view, with a writer
thread inserting, re-ranking and deleting players while the model follows
each commit step by step (Qt animates the moves).

    .venv/bin/python bindings/python/examples/qt_live_list.py
    QT_QPA_PLATFORM=offscreen .venv/bin/python bindings/python/examples/qt_live_list.py --screenshot out.png

Needs PySide6 (``pip install ".[qt]"`` in a checkout; the test setup installs it into
the project's .venv).
"""

from __future__ import annotations

import argparse
import random
import threading
import time

from PySide6.QtCore import QEvent, QTimer
from PySide6.QtGui import QFontDatabase
from PySide6.QtWidgets import QApplication, QTreeView

import ydbview
from ydbview.qt import MappingsModel

TEAMS = ["red", "blue"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--screenshot", metavar="PNG", help="render after a few commits, save, and quit")
    args = parser.parse_args()
    app = QApplication([])
    show(app, args.screenshot)


def show(app: QApplication, screenshot: "str | None") -> None:
    db = ydbview.Database(serializer=ydbview.JSONSerializer())
    # Players grouped by team, best score first (a key function: one call a row).
    db.register_view("byScore", ydbview.grouping(flavour="object")(lambda row: row.object["team"]),
                     key=ydbview.key_sorting(flavour="object")(lambda team, row: (-row.object["score"], row.key)))
    with db.new_connection().read_write() as t:
        for number in range(8):
            t.set("players", f"player {number}", {"team": TEAMS[number % 2], "score": 10 * number})

    model = MappingsModel(db, ydbview.Mappings(TEAMS, "byScore"),
                          display=lambda row: f"{row.key:<10} {row.object['score']:>4}")
    view = QTreeView()
    view.setHeaderHidden(True)
    view.setFont(QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont))
    view.setAnimated(True)
    view.setModel(model)
    view.expandAll()
    model.rowsInserted.connect(lambda parent, first, last: view.expand(parent) if parent.isValid()
                               else view.expandAll())
    view.resize(320, 360)
    view.setWindowTitle("ydbview: live scores")
    view.show()

    stop = threading.Event()

    def writer() -> None:
        """Any thread may commit: the model catches up on the UI thread."""
        rng = random.Random(7)
        connection = db.new_connection()
        while not stop.is_set():
            with connection.read_write() as t:
                key = f"player {rng.randrange(12)}"
                if rng.random() < 0.8:
                    t.set("players", key, {"team": rng.choice(TEAMS), "score": rng.randrange(100)})
                else:
                    t.remove("players", key)
            time.sleep(0.1)
        connection.close()

    thread = threading.Thread(target=writer, daemon=True)
    thread.start()
    if screenshot:
        def shoot() -> None:
            view.expandAll()
            view.grab().save(screenshot)
            app.quit()
        QTimer.singleShot(1500, shoot)
    app.exec()
    stop.set()
    thread.join()
    model.close()
    db.close()
    # The window must be gone before the application object: PySide
    # crashes at exit destroying a widget that outlived it, and the timer's
    # and the signal's Python callables keep it alive. Delete it now.
    view.deleteLater()
    app.sendPostedEvents(None, QEvent.Type.DeferredDelete)


if __name__ == "__main__":
    main()
