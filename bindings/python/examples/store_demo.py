"""The store from Python: JSON objects, an observer, and a long-lived read
transaction that keeps its snapshot while another connection writes."""

import ydbview

with ydbview.Database(serializer=ydbview.JSONSerializer()) as db:
    writer, ui = db.new_connection(), db.new_connection()
    db.add_commit_observer(
        lambda n: print(f"observer: snapshot {n.snapshot}, changed {sorted(n.changed_rows)}"))

    with writer.read_write() as t:
        t.set("books", "b1", {"title": "Dune", "year": 1965}, metadata={"genre": "sci-fi"})
        t.set("books", "b2", {"title": "Emma", "year": 1815}, metadata={"genre": "classic"})

    ui.begin_long_lived_read_transaction()          # freeze the UI here
    with writer.read_write() as t:
        t.replace_object("books", "b1", {"title": "Dune", "year": 1965, "read": True})
        t.remove("books", "b2")

    with ui.read() as t:
        print("frozen UI sees:", [key for key, _, _ in t.rows("books")])

    skipped = ui.begin_long_lived_read_transaction()   # catch up
    print(f"UI caught up over {len(skipped)} commit(s); b2 changed:",
          ydbview.has_change(skipped, "books", "b2"))
    with ui.read() as t:
        print("UI now sees:", t.rows("books"))
    writer.close()
    ui.close()
