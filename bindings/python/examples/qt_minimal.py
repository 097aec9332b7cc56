import sys
from PySide6.QtWidgets import QApplication, QTreeView
import ydbview
from ydbview.qt import MappingsModel

app = QApplication(sys.argv)
db = ydbview.Database(serializer=ydbview.JSONSerializer())
db.register_view("byDue", lambda row: row.object["list"], key=lambda group, row: (row.object["due"], row.key))
model = MappingsModel(db, ydbview.Mappings(["today", "later"], "byDue"),
                      display=lambda row: f"{row.object['due']}  {row.key}")
tree = QTreeView()
tree.setHeaderHidden(True)
tree.setModel(model)
tree.expandAll()
tree.show()
with db.new_connection().read_write() as t:  # any connection, any thread: the model follows
    t.set("tasks", "water the plants", {"list": "today", "due": "09:00"})
    t.set("tasks", "call Ana", {"list": "later", "due": "17:30"})
app.exec()
