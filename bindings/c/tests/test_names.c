/*
** test_names.c -- names are their UTF-8 bytes: "é" as U+00E9 and as
** "e" + U+0301 are two groups, two keys, two views (to SQLite, to C and to
** the engine alike). A row moving between the two spellings of a group used
** to crash the process (SIGILL); two such keys were one changed row; two
** such views were one; a population's sort handed rows of the second
** collection to the comparator with the first's name.
*/
#define _POSIX_C_SOURCE 200809L
#include "check.h"
#include "view_helpers.h"

#define E_ONE "\xc3\xa9"     /* U+00E9 */
#define E_TWO "e\xcc\x81"    /* e + U+0301 */

static size_t last_changed_rows = 0;

static void count_changed_rows(void *ctx, const ydb_notification *notification) {
    (void)ctx;
    ydb_notification_changed_row_count(notification, &last_changed_rows);
}

/* Each row's object is its collection's name: the comparator counts rows
** that reach it with another collection. */
static int wrong_collections = 0;

static int by_key_checking_collection(void *ctx, ydb_txn *txn, const char *group, const ydb_view_row *a,
                                      const ydb_view_row *b, int *out) {
    (void)ctx; (void)txn; (void)group;
    if (a->object_size != strlen(a->collection) || memcmp(a->object, a->collection, a->object_size) != 0)
        wrong_collections++;
    if (b->object_size != strlen(b->collection) || memcmp(b->object, b->collection, b->object_size) != 0)
        wrong_collections++;
    *out = strcmp(a->key, b->key);
    return 0;
}

static int group_all(void *ctx, ydb_txn *txn, const ydb_view_row *row, ydb_group_result *result) {
    (void)ctx; (void)txn; (void)row;
    return ydb_group_result_set(result, "all");
}

static int count_view(void *ctx, const char *name) {
    (void)name;
    (*(int *)ctx)++;
    return 0;
}

int main(void) {
    ydb_database *db = NULL;
    ydb_connection *conn = NULL;
    ydb_txn *txn = NULL;
    view_counter first = {0}, second = {0};
    uint64_t token = 0;
    int views = 0;
    REQUIRE_OK(ydb_database_open(NULL, &db));
    REQUIRE_OK(ydb_connection_open(db, &conn));
    REQUIRE_OK(ydb_database_add_commit_observer(db, count_changed_rows, NULL, NULL, &token));
    REQUIRE_OK(register_standard(db, "v", "1", 1, &first));

    /* The same row's group changes from one spelling to the other. */
    CHECK_OK(set_row(conn, "c", "k", E_ONE ":1"));
    CHECK_OK(set_row(conn, "c", "k", E_TWO ":1"));
    CHECK(group_count(conn, "v", E_ONE) == 0);
    CHECK(group_count(conn, "v", E_TWO) == 1);
    CHECK(key_at_is(conn, "v", E_TWO, 0, "k"));

    /* Two spellings of a key are two rows, and two changed rows. */
    REQUIRE_OK(ydb_txn_begin_read_write(conn, &txn));
    CHECK_OK(ydb_txn_set_object(txn, "c", E_ONE, "g:1", 3, NULL, 0));
    CHECK_OK(ydb_txn_set_object(txn, "c", E_TWO, "g:2", 3, NULL, 0));
    CHECK_OK(ydb_txn_commit(txn));
    CHECK(last_changed_rows == 2);
    CHECK(group_count(conn, "v", "g") == 2);

    /* Two spellings of a view name are two views. */
    CHECK_OK(register_standard(db, "w" E_ONE, "1", 1, &second));
    CHECK_OK(register_standard(db, "w" E_TWO, "1", 1, &second));
    CHECK_OK(ydb_view_enumerate_registered(db, count_view, &views));
    CHECK(views == 3);
    CHECK_OK(ydb_view_unregister(db, "w" E_ONE));
    CHECK(group_count(conn, "w" E_TWO, "g") == 2);
    CHECK(group_count(conn, "w" E_ONE, "g") == (size_t)-1);
    /* The other view's callbacks are still there: a write still groups. */
    CHECK_OK(set_row(conn, "c", "new", "g:3"));
    CHECK(group_count(conn, "w" E_TWO, "g") == 3);

    /* A view populated over rows of both spellings of a collection, in
    ** turn: each row reaches the comparator with its own collection. */
    {
        ydb_view_definition def = YDB_VIEW_DEFINITION_INIT;
        char key[16];
        int i;
        REQUIRE_OK(ydb_txn_begin_read_write(conn, &txn));
        for (i = 0; i < 40; i++) {
            const char *collection = i % 2 ? E_TWO : E_ONE;
            snprintf(key, sizeof key, "k%02d", i);
            CHECK_OK(ydb_txn_set_object(txn, collection, key, collection, strlen(collection), NULL, 0));
        }
        REQUIRE_OK(ydb_txn_commit(txn));
        def.grouping = group_all;
        def.grouping_flavour = YDB_FLAVOUR_KEY;
        def.sorting = by_key_checking_collection;
        def.sorting_flavour = YDB_FLAVOUR_OBJECT;
        def.allowed_collections = (const char *[]){E_ONE, E_TWO};
        def.allowed_collection_count = 2;
        CHECK_OK(ydb_view_register(db, "spellings", &def, NULL, NULL));
        CHECK(group_count(conn, "spellings", "all") == 40);
        CHECK(wrong_collections == 0);
    }

    CHECK_OK(ydb_connection_close(conn));
    CHECK_OK(ydb_database_close(db));
    return check_summary();
}
