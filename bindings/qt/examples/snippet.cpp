// The README's C++ snippet (between the markers), in a program the tests
// build and run (ctest -R qt_snippet): a to-do list in two sections, as a
// tree model that follows another connection's commits on the event loop.
#include <QCoreApplication>
#include <QTimer>
#include <cstdio>
#include <cstring>
#include <string>
#include <ydbview-qt/models.h>

// The view: rows grouped by the object's text before '|', sorted by key.
static int byList(void *, ydb_txn *, const ydb_view_row *row, ydb_group_result *result) {
    const char *object = static_cast<const char *>(row->object);
    std::string group(object, strcspn(object, "|"));
    return ydb_group_result_set(result, group.c_str());
}
static int byKey(void *, ydb_txn *, const char *, const ydb_view_row *a, const ydb_view_row *b, int *order) {
    *order = strcmp(a->key, b->key);
    return 0;
}

static void put(ydb_connection *writer, const char *key, const char *object) {
    ydb_txn *txn = nullptr;
    ydb_txn_begin_read_write(writer, &txn);
    ydb_txn_set_object(txn, "tasks", key, object, strlen(object) + 1, nullptr, 0);
    ydb_txn_commit(txn);
}

int main(int argc, char **argv) {
    QCoreApplication app(argc, argv);
    ydb_database *db = nullptr;
    ydb_connection *writer = nullptr;
    ydb_database_open(nullptr, &db);  // a temporary database
    ydb_connection_open(db, &writer);
    ydb_view_definition def = YDB_VIEW_DEFINITION_INIT;
    def.grouping = byList;
    def.grouping_flavour = YDB_FLAVOUR_OBJECT;
    def.sorting = byKey;
    def.sorting_flavour = YDB_FLAVOUR_KEY;
    ydb_view_register(db, "byList", &def, nullptr, nullptr);
    {
        // -- snippet: begin --
        const char *groups[] = {"today", "later"};
        ydb_mappings *mappings = nullptr;
        ydb_mappings_new("byList", groups, 2, &mappings);
        ydbview::MappingsModel model(db, mappings);  // takes the mappings; db must outlive it
        QObject::connect(&model, &ydbview::MappingsModel::caughtUp, [&] {
            for (int s = 0; s < model.rowCount(); ++s) {
                QModelIndex section = model.index(s, 0);
                for (int r = 0; r < model.rowCount(section); ++r)
                    std::printf("%s: %s\n", qPrintable(section.data().toString()),
                                qPrintable(model.index(r, 0, section).data(ydbview::KeyRole).toString()));
            }
            app.quit();
        });
        put(writer, "water the plants", "today|09:00");  // any connection, any thread
        // -- snippet: end --
        put(writer, "call Ana", "later|17:30");
        QTimer::singleShot(5000, &app, [&] { app.exit(1); });  // never hang a test
        int status = app.exec();
        if (status != 0 || !model.isValid()) return 1;
    }
    ydb_connection_close(writer);
    ydb_database_close(db);
    return 0;
}
