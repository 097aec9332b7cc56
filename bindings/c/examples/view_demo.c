/*
** view_demo.c -- the README's views + mappings + changeset example, built and
** run by ctest so it keeps compiling and printing what the README says.
*/
#include <stdio.h>
#include <string.h>
#include <ydbview.h>

/* Group books by genre (their metadata), sort by title (their object). */
static int by_genre(void *ctx, ydb_txn *txn, const ydb_view_row *row, ydb_group_result *result) {
    char genre[64];
    size_t n = row->metadata_size < 63 ? row->metadata_size : 63;
    (void)ctx; (void)txn;
    if (row->metadata == NULL) return 0;                 /* no genre: left out */
    memcpy(genre, row->metadata, n);
    genre[n] = '\0';
    return ydb_group_result_set(result, genre);          /* copied */
}

static int by_title(void *ctx, ydb_txn *txn, const char *group, const ydb_view_row *a,
                    const ydb_view_row *b, int *out_order) {
    size_t n = a->object_size < b->object_size ? a->object_size : b->object_size;
    int order = memcmp(a->object, b->object, n);
    (void)ctx; (void)txn; (void)group;
    *out_order = order ? order : (a->object_size > b->object_size) - (a->object_size < b->object_size);
    return 0;                                            /* nonzero: failure */
}

int main(void) {
    ydb_database *db;  ydb_connection *conn, *ui;  ydb_txn *txn;
    ydb_mappings *mappings;  ydb_changeset *changes;  ydb_notification_list *skipped;
    ydb_view_definition def = YDB_VIEW_DEFINITION_INIT;
    const char *groups[] = { "sci-fi" };
    size_t rows, i;

    ydb_database_open(NULL, &db);
    ydb_connection_open(db, &conn);
    ydb_connection_open(db, &ui);

    def.grouping = by_genre;  def.grouping_flavour = YDB_FLAVOUR_METADATA;
    def.sorting = by_title;   def.sorting_flavour = YDB_FLAVOUR_OBJECT;
    def.version_tag = "1";
    if (ydb_view_register(db, "byGenre", &def, NULL, NULL) != YDB_OK)
        fprintf(stderr, "%s\n", ydb_errmsg());

    /* The UI: mappings over the view, at the UI connection's snapshot. */
    ydb_mappings_new("byGenre", groups, 1, &mappings);
    ydb_mappings_set_range_fixed(mappings, "sci-fi", 20, 0, YDB_PIN_BEGINNING);
    ydb_connection_begin_long_lived_read(ui, NULL);
    ydb_txn_begin_read(ui, &txn);
    ydb_mappings_update(mappings, txn);
    ydb_txn_end(txn);

    ydb_txn_begin_read_write(conn, &txn);
    ydb_txn_set_object(txn, "books", "b1", "Dune", 4, "sci-fi", 6);
    ydb_txn_set_object(txn, "books", "b2", "Hyperion", 8, "sci-fi", 6);
    ydb_txn_commit(txn);

    /* Catch up: what must the table do? */
    ydb_connection_begin_long_lived_read(ui, &skipped);
    if (ydb_changeset_new(mappings, skipped, &changes) == YDB_OK) {
        ydb_changeset_row_change_count(changes, &rows);
        for (i = 0; i < rows; i++) {
            int type;  size_t section, row;  const char *key;
            ydb_changeset_row_type(changes, i, &type);
            ydb_changeset_row_new_index_path(changes, i, &section, &row);
            ydb_changeset_row_key(changes, i, &key);         /* borrowed */
            printf("%s %s at [%zu, %zu]\n", type == YDB_CHANGE_INSERT ? "insert" : "other",
                   key, section, row);
        }
        ydb_changeset_free(changes);
    }
    ydb_notification_list_free(skipped);

    ydb_mappings_free(mappings);
    ydb_connection_close(ui);
    ydb_connection_close(conn);
    ydb_database_close(db);
    return 0;
}
