// Uses the installed ydbview-qt: a flat model over a temporary database
// follows one commit and prints its row.
#include <QCoreApplication>
#include <cstdio>
#include <cstring>
#include <ydbview-qt/models.h>

static int one(void *, ydb_txn *, const ydb_view_row *, ydb_group_result *result) {
    return ydb_group_result_set(result, "all");
}
static int byKey(void *, ydb_txn *, const char *, const ydb_view_row *a, const ydb_view_row *b, int *order) {
    *order = std::strcmp(a->key, b->key);
    return 0;
}

int main(int argc, char **argv) {
    QCoreApplication app(argc, argv);
    ydb_database *db = nullptr;
    ydb_connection *writer = nullptr;
    ydb_txn *txn = nullptr;
    ydb_database_open(nullptr, &db);
    ydb_connection_open(db, &writer);
    ydb_view_definition def = YDB_VIEW_DEFINITION_INIT;
    def.grouping = one;
    def.grouping_flavour = YDB_FLAVOUR_KEY;
    def.sorting = byKey;
    def.sorting_flavour = YDB_FLAVOUR_KEY;
    ydb_view_register(db, "v", &def, nullptr, nullptr);
    const char *groups[] = {"all"};
    ydb_mappings *mappings = nullptr;
    ydb_mappings_new("v", groups, 1, &mappings);
    int rows = 0;
    {
        ydbview::FlatMappingsModel model(db, mappings);
        ydb_txn_begin_read_write(writer, &txn);
        ydb_txn_set_object(txn, "c", "installed", "x", 1, nullptr, 0);
        ydb_txn_commit(txn);
        model.catchUp();
        rows = model.rowCount();
        if (rows == 1) std::printf("the installed model shows %s\n", qPrintable(model.index(0).data().toString()));
    }
    ydb_connection_close(writer);
    ydb_database_close(db);
    return rows == 1 ? 0 : 1;
}
