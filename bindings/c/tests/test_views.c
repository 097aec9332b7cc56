/*
** test_views.c -- views through the C ABI: registration over existing rows,
** every mutation, callbacks and their laws (invoke options, failures,
** destructors), persistence across restarts, queries, find, enumeration,
** snapshot isolation, hostile names and misuse.
*/
#define _POSIX_C_SOURCE 200809L /* mkstemp */
#include <unistd.h>

#include "view_helpers.h"

static const char *V = "byGroup";

/* ---- population and mutations ---- */

static void test_population_and_mutations(void) {
    ydb_database *db;
    ydb_connection *conn;
    ydb_txn *txn;
    view_counter counter = {0};
    size_t count = 0;
    int calls;

    REQUIRE_OK(ydb_database_open(NULL, &db));
    REQUIRE_OK(ydb_connection_open(db, &conn));
    CHECK_OK(set_row(conn, "books", "b1", "a:3"));
    CHECK_OK(set_row(conn, "books", "b2", "a:1"));
    CHECK_OK(set_row(conn, "books", "b3", "b:2"));
    CHECK_OK(set_row(conn, "books", "x1", "x:excluded"));

    /* Registration populates from the existing rows. */
    CHECK_OK(register_standard(db, V, "1", 1, &counter));
    CHECK(counter.grouping_calls == 4);
    CHECK(group_count(conn, V, "a") == 2);
    CHECK(group_count(conn, V, "b") == 1);
    CHECK(key_at_is(conn, V, "a", 0, "b2"));
    CHECK(key_at_is(conn, V, "a", 1, "b1"));

    /* Insert in the middle. */
    CHECK_OK(set_row(conn, "books", "b4", "a:2"));
    CHECK(key_at_is(conn, V, "a", 1, "b4"));
    CHECK(group_count(conn, V, "a") == 3);

    /* A row moves to another group. */
    CHECK_OK(set_row(conn, "books", "b4", "b:0"));
    CHECK(group_count(conn, V, "a") == 2);
    CHECK(key_at_is(conn, V, "b", 0, "b4"));

    /* A row becomes excluded, then comes back. */
    CHECK_OK(set_row(conn, "books", "b3", "xb:2"));
    CHECK(group_count(conn, V, "b") == 1);
    CHECK_OK(set_row(conn, "books", "b3", "b:9"));
    CHECK(key_at_is(conn, V, "b", 1, "b3"));

    /* Replace the object: re-grouped and re-sorted. */
    REQUIRE_OK(ydb_txn_begin_read_write(conn, &txn));
    CHECK_OK(ydb_txn_replace_object(txn, "books", "b1", "a:0", 3));
    CHECK_OK(ydb_txn_commit(txn));
    CHECK(key_at_is(conn, V, "a", 0, "b1"));

    /* Metadata-only changes do not run object-flavour callbacks. */
    calls = counter.grouping_calls + counter.sorting_calls;
    REQUIRE_OK(ydb_txn_begin_read_write(conn, &txn));
    CHECK_OK(ydb_txn_replace_metadata(txn, "books", "b1", "m", 1));
    CHECK_OK(ydb_txn_touch_metadata(txn, "books", "b2"));
    CHECK_OK(ydb_txn_commit(txn));
    CHECK(counter.grouping_calls + counter.sorting_calls == calls);

    /* Touching the object runs the grouping callback again (default). */
    calls = counter.grouping_calls;
    REQUIRE_OK(ydb_txn_begin_read_write(conn, &txn));
    CHECK_OK(ydb_txn_touch_object(txn, "books", "b1"));
    CHECK_OK(ydb_txn_commit(txn));
    CHECK(counter.grouping_calls == calls + 1);
    CHECK(key_at_is(conn, V, "a", 0, "b1"));

    /* Remove one, several, a collection, everything. */
    CHECK_OK(remove_row(conn, "books", "b1"));
    CHECK(group_count(conn, V, "a") == 1);
    CHECK_OK(set_row(conn, "other", "o1", "a:5"));
    REQUIRE_OK(ydb_txn_begin_read_write(conn, &txn));
    CHECK_OK(ydb_txn_remove_all_objects(txn, "books"));
    CHECK_OK(ydb_txn_commit(txn));
    CHECK(group_count(conn, V, "a") == 1);
    CHECK(group_count(conn, V, "b") == 0);
    REQUIRE_OK(ydb_txn_begin_read_write(conn, &txn));
    CHECK_OK(ydb_txn_remove_all_objects_in_all_collections(txn));
    CHECK_OK(ydb_txn_commit(txn));
    REQUIRE_OK(ydb_txn_begin_read(conn, &txn));
    CHECK_OK(ydb_view_count_all(txn, V, &count));
    CHECK(count == 0);
    {
        int empty = 0;
        CHECK_OK(ydb_view_is_empty(txn, V, &empty));
        CHECK(empty == 1);
        CHECK_OK(ydb_view_group_count(txn, V, &count));
        CHECK(count == 0);
    }
    ydb_txn_end(txn);

    CHECK(counter.destroyed == 0);
    CHECK_OK(ydb_connection_close(conn));
    CHECK_OK(ydb_database_close(db));
    CHECK(counter.destroyed == 1); /* closing the database releases the view */
}

/* ---- invoke options: a key-flavour view runs on insert only ---- */

static int group_constant(void *ctx, ydb_txn *txn, const ydb_view_row *row, ydb_group_result *result) {
    (void)txn;
    view_counter *counter = (view_counter *)ctx;
    counter->grouping_calls++;
    if (row->object != NULL || row->metadata != NULL) return 1; /* key flavour reads neither */
    return ydb_group_result_set(result, "all");
}

static int sort_by_key(void *ctx, ydb_txn *txn, const char *group, const ydb_view_row *a,
                       const ydb_view_row *b, int *out_order) {
    (void)txn;
    view_counter *counter = (view_counter *)ctx;
    (void)group;
    counter->sorting_calls++;
    *out_order = strcmp(a->key, b->key);
    return 0;
}

static void test_key_flavour(void) {
    ydb_database *db;
    ydb_connection *conn;
    ydb_txn *txn;
    view_counter counter = {0};
    ydb_view_definition def;
    int calls;

    REQUIRE_OK(ydb_database_open(NULL, &db));
    REQUIRE_OK(ydb_connection_open(db, &conn));
    CHECK_OK(ydb_view_definition_init(&def));
    CHECK(def.persistent == 1 && def.grouping_invoke == YDB_INVOKE_DEFAULT && def.struct_size == sizeof def);
    def.grouping = group_constant;
    def.grouping_flavour = YDB_FLAVOUR_KEY;
    def.sorting = sort_by_key;
    def.sorting_flavour = YDB_FLAVOUR_KEY;
    CHECK_OK(ydb_view_register(db, "keys", &def, &counter, counter_destroy));
    CHECK_OK(set_row(conn, "c", "k2", "v"));
    CHECK_OK(set_row(conn, "c", "k1", "v"));
    CHECK_OK(set_row(conn, "c", "k3", "v"));
    CHECK(counter.grouping_calls == 3);
    calls = counter.grouping_calls + counter.sorting_calls;
    CHECK_OK(set_row(conn, "c", "k2", "changed"));
    REQUIRE_OK(ydb_txn_begin_read_write(conn, &txn));
    CHECK_OK(ydb_txn_touch_row(txn, "c", "k1"));
    CHECK_OK(ydb_txn_commit(txn));
    CHECK(counter.grouping_calls + counter.sorting_calls == calls);
    CHECK(key_at_is(conn, "keys", "all", 0, "k1"));
    CHECK(key_at_is(conn, "keys", "all", 2, "k3"));

    /* Explicit invoke options: metadata changes now re-run grouping. */
    def.grouping_invoke = YDB_INVOKE_METADATA_MODIFIED;
    def.version_tag = "2";
    CHECK_OK(ydb_view_register(db, "keys", &def, &counter, counter_destroy));
    CHECK(counter.destroyed == 1); /* the old callbacks were replaced */
    calls = counter.grouping_calls;
    REQUIRE_OK(ydb_txn_begin_read_write(conn, &txn));
    CHECK_OK(ydb_txn_replace_metadata(txn, "c", "k1", "m", 1));
    CHECK_OK(ydb_txn_commit(txn));
    CHECK(counter.grouping_calls == calls + 1);

    /* Bad flavours and invoke bits are refused (and destroy still runs). */
    def.grouping_flavour = 9;
    CHECK_RC(ydb_view_register(db, "bad", &def, &counter, counter_destroy), YDB_INVALID_ARGUMENT);
    CHECK(counter.destroyed == 2);
    def.grouping_flavour = YDB_FLAVOUR_KEY;
    def.sorting_invoke = 64;
    CHECK_RC(ydb_view_register(db, "bad", &def, &counter, counter_destroy), YDB_INVALID_ARGUMENT);
    CHECK(counter.destroyed == 3);

    CHECK_OK(ydb_view_unregister(db, "keys"));
    CHECK(counter.destroyed == 4);
    CHECK_OK(ydb_view_unregister(db, "keys")); /* unknown: left alone */
    ydb_connection_close(conn);
    ydb_database_close(db);
    CHECK(counter.destroyed == 4);
}

/* ---- persistence: same tag, changed tag, non-persistent ---- */

static void test_persistence(void) {
    char path[] = "/tmp/ydbview-views-XXXXXX";
    int fd = mkstemp(path);
    ydb_database *db;
    ydb_connection *conn;
    view_counter first = {0}, second = {0}, third = {0}, fourth = {0};

    REQUIRE_OK(fd >= 0 ? YDB_OK : YDB_ERROR);
    close(fd);
    unlink(path);
    REQUIRE_OK(ydb_database_open(path, &db));
    REQUIRE_OK(ydb_connection_open(db, &conn));
    CHECK_OK(set_row(conn, "c", "k1", "g:2"));
    CHECK_OK(set_row(conn, "c", "k2", "g:1"));
    CHECK_OK(register_standard(db, V, "v1", 1, &first));
    CHECK_OK(register_standard(db, "memory", "v1", 0, &third));
    CHECK(first.grouping_calls == 2);
    ydb_connection_close(conn);
    ydb_database_close(db);
    CHECK(first.destroyed == 1 && third.destroyed == 1);

    /* Same tag after a restart: no callback at all, contents intact. */
    REQUIRE_OK(ydb_database_open(path, &db));
    REQUIRE_OK(ydb_connection_open(db, &conn));
    {
        ydb_txn *txn;
        int registered = 1;
        REQUIRE_OK(ydb_txn_begin_read(conn, &txn));
        CHECK_OK(ydb_view_is_registered(txn, V, &registered));
        CHECK(registered == 0); /* not until registered again */
        CHECK_RC(ydb_view_count_all(txn, V, &(size_t){0}), YDB_NOTFOUND);
        ydb_txn_end(txn);
    }
    CHECK_OK(register_standard(db, V, "v1", 1, &second));
    CHECK(second.grouping_calls == 0 && second.sorting_calls == 0);
    CHECK(key_at_is(conn, V, "g", 0, "k2"));
    CHECK(group_count(conn, V, "g") == 2);
    /* The non-persistent view repopulates. */
    memset(&third, 0, sizeof third);
    CHECK_OK(register_standard(db, "memory", "v1", 0, &third));
    CHECK(third.grouping_calls == 2);
    /* A changed tag repopulates. */
    CHECK_OK(register_standard(db, V, "v2", 1, &fourth));
    CHECK(second.destroyed == 1);
    CHECK(fourth.grouping_calls == 2);
    CHECK(group_count(conn, V, "g") == 2);
    {
        ydb_txn *txn;
        char *tag = NULL;
        REQUIRE_OK(ydb_txn_begin_read(conn, &txn));
        CHECK_OK(ydb_view_version_tag(txn, V, &tag));
        CHECK(tag != NULL && strcmp(tag, "v2") == 0);
        ydb_free(tag);
        ydb_txn_end(txn);
    }
    ydb_connection_close(conn);
    ydb_database_close(db);
    CHECK(fourth.destroyed == 1 && third.destroyed == 1);
    unlink(path);
}

/* ---- two views, registered names, has_changes ---- */

static int collect_names(void *ctx, const char *name) {
    char *out = (char *)ctx;
    strcat(out, name);
    strcat(out, ";");
    return 0;
}

static void test_two_views_and_changes(void) {
    ydb_database *db;
    ydb_connection *conn, *reader;
    view_counter a = {0}, b = {0};
    ydb_notification_list *skipped = NULL;
    char names[256] = "";
    int flag = -1;

    REQUIRE_OK(ydb_database_open(NULL, &db));
    REQUIRE_OK(ydb_connection_open(db, &conn));
    REQUIRE_OK(ydb_connection_open(db, &reader));
    CHECK_OK(register_standard(db, "one", "", 1, &a));
    CHECK_OK(register_standard(db, "two", "", 0, &b));
    CHECK_OK(ydb_view_enumerate_registered(db, collect_names, names));
    CHECK(strcmp(names, "one;two;") == 0);
    REQUIRE_OK(ydb_connection_begin_long_lived_read(reader, NULL));
    CHECK_OK(set_row(conn, "c", "k", "g:1"));
    CHECK(group_count(conn, "one", "g") == 1 && group_count(conn, "two", "g") == 1);
    CHECK(a.grouping_calls == 1 && b.grouping_calls == 1);
    REQUIRE_OK(ydb_connection_begin_long_lived_read(reader, &skipped));
    CHECK_OK(ydb_view_has_changes(skipped, "one", &flag));
    CHECK(flag == 1);
    CHECK_OK(ydb_view_has_changes(skipped, "nope", &flag));
    CHECK(flag == 0);
    CHECK_OK(ydb_view_has_changes_in_group(skipped, "two", "g", &flag));
    CHECK(flag == 1);
    CHECK_OK(ydb_view_has_changes_in_group(skipped, "two", "h", &flag));
    CHECK(flag == 0);
    CHECK_RC(ydb_view_has_changes(NULL, "one", &flag), YDB_MISUSE);
    ydb_notification_list_free(skipped);

    CHECK_OK(ydb_view_unregister(db, "one"));
    CHECK(a.destroyed == 1 && b.destroyed == 0);
    names[0] = '\0';
    CHECK_OK(ydb_view_enumerate_registered(db, collect_names, names));
    CHECK(strcmp(names, "two;") == 0);
    ydb_connection_close(reader);
    ydb_connection_close(conn);
    ydb_database_close(db);
    CHECK(b.destroyed == 1);
}

/* ---- queries, enumeration, find ---- */

typedef struct {
    char keys[512];
    size_t indexes[32];
    int count;
    int stop_after;
    size_t metadata_rows;
} key_list;

static int collect_key(void *ctx, const char *collection, const char *key, size_t index) {
    key_list *list = (key_list *)ctx;
    (void)collection;
    strcat(list->keys, key);
    strcat(list->keys, ",");
    if (list->count < 32) list->indexes[list->count] = index;
    list->count++;
    return list->stop_after != 0 && list->count >= list->stop_after;
}

static int collect_row(void *ctx, const char *collection, const char *key, size_t index,
                       const void *object, size_t object_size, const void *metadata,
                       size_t metadata_size) {
    key_list *list = (key_list *)ctx;
    (void)object;
    (void)object_size;
    (void)metadata_size;
    if (metadata != NULL) list->metadata_rows++;
    return collect_key(ctx, collection, key, index);
}

/* Finds rows whose sort key starts with the digit in ctx. */
static int find_digit(void *ctx, ydb_txn *txn, const ydb_view_row *row, int *out_order) {
    (void)txn;
    char want = *(const char *)ctx;
    const char *object = (const char *)row->object;
    char have = object[group_length(object, row->object_size) + 1];
    *out_order = (have > want) - (have < want);
    return 0;
}

static int find_fails(void *ctx, ydb_txn *txn, const ydb_view_row *row, int *out_order) {
    (void)ctx; (void)txn;
    (void)row;
    (void)out_order;
    return 3;
}

static void test_queries(void) {
    ydb_database *db;
    ydb_connection *conn;
    ydb_txn *txn;
    view_counter counter = {0};
    key_list list;
    char *collection = NULL, *key = NULL, *group = NULL;
    void *data = NULL, *meta = NULL;
    size_t size = 0, meta_size = 0, index = 99, start = 99, end = 99;
    int flag = -1;
    char digit;
    const char *rows[][2] = {{"k1", "g:1a"}, {"k2", "g:2a"}, {"k3", "g:2b"},
                             {"k4", "g:2c"}, {"k5", "g:3a"}, {"k6", "h:1"}};
    size_t i;

    REQUIRE_OK(ydb_database_open(NULL, &db));
    REQUIRE_OK(ydb_connection_open(db, &conn));
    CHECK_OK(register_standard(db, V, "", 1, &counter));
    REQUIRE_OK(ydb_txn_begin_read_write(conn, &txn));
    for (i = 0; i < sizeof rows / sizeof rows[0]; i++)
        CHECK_OK(ydb_txn_set_object(txn, "c", rows[i][0], rows[i][1], strlen(rows[i][1]),
                                    i == 0 ? "meta" : NULL, i == 0 ? 4 : 0));
    CHECK_OK(ydb_txn_commit(txn));

    REQUIRE_OK(ydb_txn_begin_read(conn, &txn));
    CHECK_OK(ydb_view_group_count(txn, V, &size));
    CHECK(size == 2);
    CHECK_OK(ydb_view_has_group(txn, V, "g", &flag));
    CHECK(flag == 1);
    CHECK_OK(ydb_view_has_group(txn, V, "zzz", &flag));
    CHECK(flag == 0);
    CHECK_OK(ydb_view_count_in_group(txn, V, "zzz", &size));
    CHECK(size == 0);
    CHECK_OK(ydb_view_count_all(txn, V, &size));
    CHECK(size == 6);
    CHECK_OK(ydb_view_first_key(txn, V, "g", &collection, &key));
    CHECK(strcmp(collection, "c") == 0 && strcmp(key, "k1") == 0);
    ydb_free(collection);
    ydb_free(key);
    CHECK_OK(ydb_view_last_key(txn, V, "g", &collection, &key));
    CHECK(strcmp(key, "k5") == 0);
    ydb_free(collection);
    ydb_free(key);
    collection = key = (char *)"garbage";
    CHECK_RC(ydb_view_key_at(txn, V, "g", 5, &collection, &key), YDB_NOTFOUND);
    CHECK(collection == NULL && key == NULL);
    CHECK_RC(ydb_view_first_key(txn, V, "zzz", &collection, &key), YDB_NOTFOUND);
    CHECK_RC(ydb_view_key_at(txn, V, "zzz", 0, &collection, &key), YDB_NOTFOUND);

    CHECK_OK(ydb_view_object_at(txn, V, "g", 1, &data, &size));
    CHECK(size == 4 && memcmp(data, "g:2a", 4) == 0);
    ydb_free(data);
    CHECK_OK(ydb_view_metadata_at(txn, V, "g", 0, &data, &size));
    CHECK(size == 4 && memcmp(data, "meta", 4) == 0);
    ydb_free(data);
    CHECK_RC(ydb_view_metadata_at(txn, V, "g", 1, &data, &size), YDB_NOTFOUND);
    CHECK(data == NULL && size == 0);
    CHECK_OK(ydb_view_row_at(txn, V, "g", 0, &data, &size, &meta, &meta_size));
    CHECK(size == 4 && meta_size == 4 && meta != NULL);
    ydb_free(data);
    ydb_free(meta);
    CHECK_RC(ydb_view_row_at(txn, V, "g", 99, &data, &size, &meta, &meta_size), YDB_NOTFOUND);
    CHECK(data == NULL && meta == NULL);

    CHECK_OK(ydb_view_position(txn, V, "c", "k4", &group, &index));
    CHECK(strcmp(group, "g") == 0 && index == 3);
    ydb_free(group);
    group = (char *)"garbage";
    CHECK_RC(ydb_view_position(txn, V, "c", "missing", &group, &index), YDB_NOTFOUND);
    CHECK(group == NULL && index == 0);

    /* Enumeration: all, a range, reversed, clipped, stopped early. */
    memset(&list, 0, sizeof list);
    CHECK_OK(ydb_view_enumerate_keys(txn, V, "g", 0, YDB_INDEX_END, 0, collect_key, &list));
    CHECK(strcmp(list.keys, "k1,k2,k3,k4,k5,") == 0);
    memset(&list, 0, sizeof list);
    CHECK_OK(ydb_view_enumerate_keys(txn, V, "g", 1, 3, 0, collect_key, &list));
    CHECK(strcmp(list.keys, "k2,k3,") == 0 && list.indexes[0] == 1 && list.indexes[1] == 2);
    memset(&list, 0, sizeof list);
    CHECK_OK(ydb_view_enumerate_keys(txn, V, "g", 1, 4, 1, collect_key, &list));
    CHECK(strcmp(list.keys, "k4,k3,k2,") == 0 && list.indexes[0] == 3);
    memset(&list, 0, sizeof list);
    CHECK_OK(ydb_view_enumerate_keys(txn, V, "g", 3, 100, 0, collect_key, &list));
    CHECK(strcmp(list.keys, "k4,k5,") == 0);
    memset(&list, 0, sizeof list);
    list.stop_after = 2;
    CHECK_OK(ydb_view_enumerate_rows(txn, V, "g", 0, YDB_INDEX_END, 1, collect_row, &list));
    CHECK(strcmp(list.keys, "k5,k4,") == 0);
    memset(&list, 0, sizeof list);
    CHECK_OK(ydb_view_enumerate_rows(txn, V, "g", 0, YDB_INDEX_END, 0, collect_row, &list));
    CHECK(list.count == 5 && list.metadata_rows == 1);
    CHECK_RC(ydb_view_enumerate_keys(txn, V, "g", 3, 1, 0, collect_key, &list), YDB_INVALID_ARGUMENT);
    CHECK_RC(ydb_view_enumerate_keys(txn, V, "g", 0, 1, 0, NULL, &list), YDB_INVALID_ARGUMENT);
    memset(&list, 0, sizeof list);
    CHECK_OK(ydb_view_enumerate_keys(txn, V, "zzz", 0, YDB_INDEX_END, 0, collect_key, &list));
    CHECK(list.count == 0);

    /* Groups, in order. */
    {
        char names[64] = "";
        CHECK_OK(ydb_view_enumerate_groups(txn, V, collect_names, names));
        CHECK(strcmp(names, "g;h;") == 0);
    }

    /* Find: the range of "2x" rows, none for "9", a failing callback. */
    digit = '2';
    CHECK_OK(ydb_view_find(txn, V, "g", YDB_FLAVOUR_OBJECT, find_digit, &digit, &start, &end));
    CHECK(start == 1 && end == 4);
    digit = '1';
    CHECK_OK(ydb_view_find(txn, V, "g", YDB_FLAVOUR_OBJECT, find_digit, &digit, &start, &end));
    CHECK(start == 0 && end == 1);
    digit = '9';
    CHECK_RC(ydb_view_find(txn, V, "g", YDB_FLAVOUR_OBJECT, find_digit, &digit, &start, &end),
             YDB_NOTFOUND);
    CHECK(start == 0 && end == 0);
    CHECK_RC(ydb_view_find(txn, V, "zzz", YDB_FLAVOUR_OBJECT, find_digit, &digit, &start, &end),
             YDB_NOTFOUND);
    CHECK_RC(ydb_view_find(txn, V, "g", YDB_FLAVOUR_OBJECT, find_fails, NULL, &start, &end),
             YDB_CALLBACK_FAILED);
    CHECK_RC(ydb_view_find(txn, V, "g", 42, find_digit, &digit, &start, &end), YDB_INVALID_ARGUMENT);

    /* Unknown views. */
    CHECK_OK(ydb_view_is_registered(txn, "nope", &flag));
    CHECK(flag == 0);
    CHECK_RC(ydb_view_count_in_group(txn, "nope", "g", &size), YDB_NOTFOUND);
    CHECK_RC(ydb_view_key_at(txn, "nope", "g", 0, &collection, &key), YDB_NOTFOUND);
    ydb_txn_end(txn);
    ydb_connection_close(conn);
    ydb_database_close(db);
}

/* ---- snapshot isolation ---- */

static void test_isolation(void) {
    ydb_database *db;
    ydb_connection *reader, *writer;
    ydb_txn *old;
    view_counter counter = {0};
    size_t count = 0;

    REQUIRE_OK(ydb_database_open(NULL, &db));
    REQUIRE_OK(ydb_connection_open(db, &reader));
    REQUIRE_OK(ydb_connection_open(db, &writer));
    CHECK_OK(register_standard(db, V, "", 1, &counter));
    CHECK_OK(set_row(writer, "c", "k1", "g:1"));
    REQUIRE_OK(ydb_txn_begin_read(reader, &old));
    CHECK_OK(set_row(writer, "c", "k0", "g:0"));
    CHECK_OK(set_row(writer, "c", "k1", "h:1"));
    CHECK_OK(ydb_view_count_in_group(old, V, "g", &count));
    CHECK(count == 1);
    CHECK_OK(ydb_view_count_in_group(old, V, "h", &count));
    CHECK(count == 0);
    CHECK(key_at_is(writer, V, "g", 0, "k0"));
    ydb_txn_end(old);
    CHECK(group_count(reader, V, "h") == 1);
    ydb_connection_close(writer);
    ydb_connection_close(reader);
    ydb_database_close(db);
}

/* ---- failing callbacks ---- */

static void test_failures(void) {
    ydb_database *db;
    ydb_connection *conn;
    ydb_txn *txn;
    view_counter counter = {0}, failing = {0}, unused = {0};
    ydb_view_definition def = YDB_VIEW_DEFINITION_INIT;
    int exists = 1;

    REQUIRE_OK(ydb_database_open(NULL, &db));
    REQUIRE_OK(ydb_connection_open(db, &conn));
    CHECK_OK(register_standard(db, V, "", 1, &counter));

    /* A failing grouping callback fails the write and the commit. */
    REQUIRE_OK(ydb_txn_begin_read_write(conn, &txn));
    CHECK_OK(ydb_txn_set_object(txn, "c", "ok", "g:1", 3, NULL, 0));
    CHECK_RC(ydb_txn_set_object(txn, "c", "bad", "g:2", 3, NULL, 0), YDB_CALLBACK_FAILED);
    CHECK(strstr(ydb_errmsg(), "view 'byGroup'") != NULL);
    CHECK_RC(ydb_txn_set_object(txn, "c", "later", "g:3", 3, NULL, 0), YDB_MISUSE);
    CHECK_RC(ydb_txn_commit(txn), YDB_CALLBACK_FAILED);
    CHECK(missing(conn, "c", "ok") && missing(conn, "c", "bad"));
    CHECK(group_count(conn, V, "g") == 0);

    /* A failing sorting callback too. */
    CHECK_OK(set_row(conn, "c", "k1", "g:1"));
    counter.fail_sorting = 1;
    CHECK_RC(set_row(conn, "c", "k2", "g:2"), YDB_CALLBACK_FAILED);
    counter.fail_sorting = 0;
    CHECK(missing(conn, "c", "k2"));
    CHECK(group_count(conn, V, "g") == 1);

    /* Registration over a failing row: nothing registered, destroy once. */
    CHECK_OK(ydb_view_unregister(db, V));
    CHECK(counter.destroyed == 1);
    CHECK_OK(set_row(conn, "d", "bad", "g:1"));
    CHECK_RC(register_standard(db, "second", "", 1, &failing), YDB_CALLBACK_FAILED);
    CHECK(failing.destroyed == 1);
    REQUIRE_OK(ydb_txn_begin_read(conn, &txn));
    CHECK_OK(ydb_view_is_registered(txn, "second", &exists));
    CHECK(exists == 0);
    ydb_txn_end(txn);
    CHECK_OK(remove_row(conn, "d", "bad"));
    memset(&counter, 0, sizeof counter);
    CHECK_OK(register_standard(db, V, "", 1, &counter));

    /* Bad definitions: destroy runs exactly once, before the call returns. */
    CHECK_RC(ydb_view_register(db, "x", NULL, &unused, counter_destroy), YDB_INVALID_ARGUMENT);
    CHECK(unused.destroyed == 1);
    CHECK_RC(ydb_view_register(db, "x", &def, &unused, counter_destroy), YDB_INVALID_ARGUMENT);
    CHECK(unused.destroyed == 2);
    def.grouping = group_by_prefix;
    def.sorting = sort_by_suffix;
    CHECK_RC(ydb_view_register(NULL, "x", &def, &unused, counter_destroy), YDB_MISUSE);
    CHECK(unused.destroyed == 3);
    CHECK_RC(ydb_view_register(db, NULL, &def, &unused, counter_destroy), YDB_INVALID_ARGUMENT);
    CHECK(unused.destroyed == 4);
    CHECK_RC(ydb_view_register(db, "\xff\xfe", &def, &unused, counter_destroy), YDB_INVALID_ARGUMENT);
    CHECK(unused.destroyed == 5);
    def.allowed_collection_count = 2;
    CHECK_RC(ydb_view_register(db, "x", &def, &unused, counter_destroy), YDB_INVALID_ARGUMENT);
    CHECK(unused.destroyed == 6);
    CHECK_RC(ydb_view_register(db, "nodestroy", &def, NULL, NULL), YDB_INVALID_ARGUMENT);
    def.allowed_collection_count = 0;

    /* A read-write transaction open on this thread: registering would wait
    ** for itself. */
    REQUIRE_OK(ydb_txn_begin_read_write(conn, &txn));
    CHECK_RC(register_standard(db, "third", "", 1, &unused), YDB_MISUSE);
    CHECK(unused.destroyed == 7);
    CHECK_RC(ydb_view_unregister(db, V), YDB_MISUSE);
    ydb_txn_rollback(txn);

    /* Writing the running transaction from a callback is refused (reading
    ** rows is allowed: test_txn_callbacks.c). */
    REQUIRE_OK(ydb_txn_begin_read_write(conn, &txn));
    counter.reenter_txn = txn;
    counter.reentry_status = -1;
    CHECK_OK(ydb_txn_set_object(txn, "c", "k3", "g:3", 3, NULL, 0));
    CHECK(counter.reentry_status == YDB_MISUSE);
    counter.reenter_txn = NULL;
    CHECK_OK(ydb_txn_commit(txn));

    ydb_connection_close(conn);
    ydb_database_close(db);
    CHECK(counter.destroyed == 1);
}

/* ---- changing the definition inside a transaction ---- */

static int group_by_key(void *ctx, ydb_txn *txn, const ydb_view_row *row, ydb_group_result *result) {
    (void)txn;
    view_counter *counter = (view_counter *)ctx;
    counter->grouping_calls++;
    return ydb_group_result_set(result, row->key);
}

static void test_set_definition(void) {
    ydb_database *db;
    ydb_connection *conn;
    ydb_txn *txn;
    view_counter old = {0}, rolled = {0}, same = {0}, kept = {0};
    ydb_view_definition def = YDB_VIEW_DEFINITION_INIT;

    REQUIRE_OK(ydb_database_open(NULL, &db));
    REQUIRE_OK(ydb_connection_open(db, &conn));
    CHECK_OK(register_standard(db, V, "1", 1, &old));
    CHECK_OK(set_row(conn, "c", "k1", "g:1"));
    CHECK_OK(set_row(conn, "c", "k2", "g:2"));
    def.grouping = group_by_key;
    def.grouping_flavour = YDB_FLAVOUR_KEY;
    def.sorting = sort_by_key;
    def.sorting_flavour = YDB_FLAVOUR_KEY;
    def.version_tag = "2";

    /* Rolled back: the new callbacks are released, the old ones stay. */
    REQUIRE_OK(ydb_txn_begin_read_write(conn, &txn));
    CHECK_OK(ydb_view_set_definition(txn, V, &def, &rolled, counter_destroy));
    CHECK(rolled.grouping_calls == 2);
    CHECK_OK(ydb_view_count_in_group(txn, V, "k1", &(size_t){0}));
    CHECK_OK(ydb_txn_rollback(txn));
    CHECK(rolled.destroyed == 1 && old.destroyed == 0);
    CHECK(group_count(conn, V, "g") == 2);
    CHECK_OK(set_row(conn, "c", "k3", "g:3"));
    CHECK(group_count(conn, V, "g") == 3);

    /* Same tag: nothing happens; the given callbacks are released when the
    ** transaction ends, as every definition its commit does not install. */
    def.version_tag = "1";
    REQUIRE_OK(ydb_txn_begin_read_write(conn, &txn));
    CHECK_OK(ydb_view_set_definition(txn, V, &def, &same, counter_destroy));
    CHECK(same.destroyed == 0 && same.grouping_calls == 0);
    CHECK_OK(ydb_txn_commit(txn));
    CHECK(same.destroyed == 1 && old.destroyed == 0);

    /* Committed: regrouped, the old callbacks are released. */
    def.version_tag = "2";
    REQUIRE_OK(ydb_txn_begin_read_write(conn, &txn));
    CHECK_OK(ydb_view_set_definition(txn, V, &def, &kept, counter_destroy));
    CHECK_OK(ydb_txn_commit(txn));
    CHECK(old.destroyed == 1 && kept.destroyed == 0);
    CHECK(group_count(conn, V, "g") == 0);
    CHECK(group_count(conn, V, "k2") == 1);

    /* Misuse: read transaction, unknown view. */
    REQUIRE_OK(ydb_txn_begin_read(conn, &txn));
    CHECK_RC(ydb_view_set_definition(txn, V, &def, &same, counter_destroy), YDB_MISUSE);
    CHECK(same.destroyed == 2);
    ydb_txn_end(txn);
    REQUIRE_OK(ydb_txn_begin_read_write(conn, &txn));
    CHECK_RC(ydb_view_set_definition(txn, "nope", &def, &same, counter_destroy), YDB_NOTFOUND);
    ydb_txn_rollback(txn);
    CHECK(same.destroyed == 3);

    ydb_connection_close(conn);
    ydb_database_close(db);
    CHECK(kept.destroyed == 1);
}

/* ---- hostile names and allowed collections ---- */

static void test_hostile_names(void) {
    ydb_database *db;
    ydb_connection *conn;
    ydb_txn *txn;
    view_counter counter = {0};
    ydb_view_definition def = YDB_VIEW_DEFINITION_INIT;
    const char *view = "it's \"quoted\"; DROP TABLE ydb_rows; -- \xf0\x9f\x8e\x89";
    const char *collection = "col'\" \xc3\xa9t\xc3\xa9";
    const char *allowed[1];
    char *group = NULL;
    size_t index = 9, count = 0;

    allowed[0] = collection;
    REQUIRE_OK(ydb_database_open(NULL, &db));
    REQUIRE_OK(ydb_connection_open(db, &conn));
    def.grouping = group_by_prefix;
    def.grouping_flavour = YDB_FLAVOUR_OBJECT;
    def.sorting = sort_by_suffix;
    def.sorting_flavour = YDB_FLAVOUR_OBJECT;
    def.version_tag = "t'ag";
    def.allowed_collections = allowed;
    def.allowed_collection_count = 1;
    CHECK_OK(ydb_view_register(db, view, &def, &counter, counter_destroy));
    CHECK_OK(set_row(conn, collection, "k'1", "gr\"oup \xe2\x9c\x93:1"));
    CHECK_OK(set_row(conn, "elsewhere", "k2", "gr\"oup \xe2\x9c\x93:0"));
    REQUIRE_OK(ydb_txn_begin_read(conn, &txn));
    CHECK_OK(ydb_view_count_in_group(txn, view, "gr\"oup \xe2\x9c\x93", &count));
    CHECK(count == 1); /* the other collection is not allowed */
    CHECK_OK(ydb_view_position(txn, view, collection, "k'1", &group, &index));
    CHECK(group != NULL && strcmp(group, "gr\"oup \xe2\x9c\x93") == 0 && index == 0);
    ydb_free(group);
    ydb_txn_end(txn);
    CHECK(counter.grouping_calls == 1);
    CHECK_OK(ydb_view_unregister(db, view));
    CHECK(counter.destroyed == 1);
    ydb_connection_close(conn);
    ydb_database_close(db);
}

/* ---- misuse: NULL and stale handles, NULL outputs ---- */

/* Keeps the result handle it was given, then answers: the handle must not
** work after the call. */
static int group_keeping_handle(void *ctx, ydb_txn *txn, const ydb_view_row *row, ydb_group_result *result) {
    (void)txn; (void)row;
    *(ydb_group_result **)ctx = result;
    return ydb_group_result_set(result, "g");
}

static int sort_by_key_only(void *ctx, ydb_txn *txn, const char *group, const ydb_view_row *a,
                            const ydb_view_row *b, int *out_order) {
    (void)ctx; (void)txn; (void)group;
    *out_order = strcmp(a->key, b->key);
    return 0;
}

static void test_misuse(void) {
    ydb_database *db;
    ydb_connection *conn;
    ydb_txn *txn, *stale;
    view_counter counter = {0};
    size_t count = 7;
    char *collection, *key;

    REQUIRE_OK(ydb_database_open(NULL, &db));
    REQUIRE_OK(ydb_connection_open(db, &conn));
    CHECK_OK(register_standard(db, V, "", 1, &counter));
    CHECK_RC(ydb_view_count_all(NULL, V, &count), YDB_MISUSE);
    CHECK(count == 0);
    REQUIRE_OK(ydb_txn_begin_read(conn, &stale));
    ydb_txn_end(stale);
    CHECK_RC(ydb_view_count_all(stale, V, &count), YDB_MISUSE);
    REQUIRE_OK(ydb_txn_begin_read(conn, &txn));
    CHECK_RC(ydb_view_count_all(txn, V, NULL), YDB_MISUSE);
    CHECK_RC(ydb_view_count_all(txn, NULL, &count), YDB_INVALID_ARGUMENT);
    CHECK_RC(ydb_view_count_in_group(txn, V, NULL, &count), YDB_INVALID_ARGUMENT);
    CHECK_RC(ydb_view_key_at(txn, V, "g", 0, NULL, &key), YDB_MISUSE);
    CHECK_RC(ydb_view_key_at(txn, V, "g", (size_t)-1, &collection, &key), YDB_NOTFOUND);
    CHECK_RC(ydb_view_enumerate_groups(txn, V, NULL, NULL), YDB_INVALID_ARGUMENT);
    CHECK_RC(ydb_group_result_set(NULL, "g"), YDB_MISUSE);
    CHECK_RC(ydb_group_result_set((ydb_group_result *)(uintptr_t)0x7000000000000010u, "g"), YDB_MISUSE);
    CHECK_RC(ydb_view_definition_init(NULL), YDB_MISUSE);
    CHECK_RC(ydb_view_enumerate_registered(NULL, collect_names, NULL), YDB_MISUSE);
    ydb_txn_end(txn);
    {
        /* A result handle kept past its grouping call is refused. */
        ydb_group_result *kept = NULL;
        ydb_view_definition def = YDB_VIEW_DEFINITION_INIT;
        CHECK_OK(set_row(conn, "c", "k", "g:1"));
        def.grouping = group_keeping_handle;
        def.sorting = sort_by_key_only;
        def.persistent = 0;
        CHECK_OK(ydb_view_register(db, "keeps", &def, &kept, NULL));
        CHECK(kept != NULL);
        CHECK_RC(ydb_group_result_set(kept, "g"), YDB_MISUSE);
        CHECK(strstr(ydb_errmsg(), "not the one of a grouping callback") != NULL);
    }
    CHECK_RC(ydb_view_unregister((ydb_database *)conn, V), YDB_MISUSE);
    ydb_connection_close(conn);
    ydb_database_close(db);
    CHECK_RC(ydb_view_unregister(db, V), YDB_MISUSE);
    CHECK(counter.destroyed == 1);
}

/* ---- population sorts each group with every row converted once ---- */

/* Orders by object bytes (shorter first on a common prefix), then metadata
** presence and bytes, then collection, then key: every field of the row the
** population hands over is compared, so a wrongly converted field shows. */
typedef struct {
    long comparisons;
    long fail_at;   /* fail the comparison with this number (0: never) */
} sort_probe;

static int compare_bytes(const void *a, size_t a_size, const void *b, size_t b_size) {
    size_t common = a_size < b_size ? a_size : b_size;
    int order = common ? memcmp(a, b, common) : 0;
    return order ? order : (a_size > b_size) - (a_size < b_size);
}

static int sort_every_field(void *ctx, ydb_txn *txn, const char *group, const ydb_view_row *a,
                            const ydb_view_row *b, int *out_order) {
    sort_probe *probe = (sort_probe *)ctx;
    int order;
    (void)txn;
    if (strcmp(group, "g") != 0) return 7;
    if (++probe->comparisons == probe->fail_at) return 9;
    if (a->object == NULL || b->object == NULL) return 8;   /* the row flavour reads objects */
    order = compare_bytes(a->object, a->object_size, b->object, b->object_size);
    if (!order) order = (a->metadata != NULL) - (b->metadata != NULL);
    if (!order && a->metadata) order = compare_bytes(a->metadata, a->metadata_size, b->metadata, b->metadata_size);
    if (!order) order = strcmp(a->collection, b->collection);
    if (!order) order = strcmp(a->key, b->key);
    *out_order = order;
    return 0;
}

static int group_all_rows(void *ctx, ydb_txn *txn, const ydb_view_row *row, ydb_group_result *result) {
    (void)ctx; (void)txn; (void)row;
    return ydb_group_result_set(result, "g");
}

static int register_every_field(ydb_database *db, const char *name, sort_probe *probe) {
    ydb_view_definition def = YDB_VIEW_DEFINITION_INIT;
    def.grouping = group_all_rows;
    def.sorting = sort_every_field;
    def.persistent = 0;
    return ydb_view_register(db, name, &def, probe, NULL);
}

static void test_population_sort(void) {
    enum { ROWS = 1500 };
    static const char *collections[] = {"a", "a-much-longer-collection-name", "zz"};
    ydb_database *db;
    ydb_connection *conn;
    ydb_txn *txn;
    sort_probe populated = {0, 0}, committed = {0, 0}, failing = {0, 40};
    unsigned seed = 12345;
    size_t count = 0, i;
    int registered = 1;

    REQUIRE_OK(ydb_database_open(NULL, &db));
    REQUIRE_OK(ydb_connection_open(db, &conn));
    /* "committed" is registered first: it places every row one commit at a
    ** time; "populated" is registered over the same rows afterwards. */
    REQUIRE_OK(register_every_field(db, "committed", &committed));
    REQUIRE_OK(ydb_txn_begin_read_write(conn, &txn));
    for (i = 0; i < ROWS; i++) {
        char key[64], object[8], metadata[3];
        size_t object_size = (seed = seed * 1103515245u + 12345u) % 4;   /* empty objects too */
        size_t j;
        for (j = 0; j < object_size; j++) object[j] = (char)('a' + (seed >> (8 + j)) % 3);
        metadata[0] = (char)('0' + (seed >> 20) % 2);
        /* small keys (stored inside a Swift string) and long ones */
        snprintf(key, sizeof key, (seed >> 24) % 2 ? "k%zu" : "a-key-long-enough-to-live-on-the-heap-%zu", i);
        CHECK_OK(ydb_txn_set_object(txn, collections[(seed >> 16) % 3], key, object, object_size,
                                    (seed >> 12) % 2 ? metadata : NULL, (seed >> 12) % 2 ? 1 : 0));
    }
    REQUIRE_OK(ydb_txn_commit(txn));
    CHECK_OK(register_every_field(db, "populated", &populated));
    CHECK(populated.comparisons > ROWS);

    /* Same order as one commit at a time. */
    REQUIRE_OK(ydb_txn_begin_read(conn, &txn));
    CHECK_OK(ydb_view_count_in_group(txn, "populated", "g", &count));
    CHECK(count == ROWS);
    for (i = 0; i < count; i++) {
        char *c1 = NULL, *k1 = NULL, *c2 = NULL, *k2 = NULL;
        CHECK_OK(ydb_view_key_at(txn, "populated", "g", i, &c1, &k1));
        CHECK_OK(ydb_view_key_at(txn, "committed", "g", i, &c2, &k2));
        if (c1 && c2 && k1 && k2 && (strcmp(c1, c2) != 0 || strcmp(k1, k2) != 0)) {
            CHECK(!"population and commits give the same order");
            i = count;
        }
        ydb_free(c1); ydb_free(k1); ydb_free(c2); ydb_free(k2);
    }
    CHECK_OK(ydb_txn_end(txn));

    /* A comparison failing halfway through the sort: a clear error, and the
    ** view is not registered. */
    CHECK_RC(register_every_field(db, "failing", &failing), YDB_CALLBACK_FAILED);
    CHECK(strstr(ydb_errmsg(), "sorting callback failed") != NULL);
    CHECK(failing.comparisons == failing.fail_at);
    REQUIRE_OK(ydb_txn_begin_read(conn, &txn));
    CHECK_OK(ydb_view_is_registered(txn, "failing", &registered));
    CHECK(registered == 0);
    CHECK_OK(ydb_txn_end(txn));

    CHECK_OK(ydb_connection_close(conn));
    CHECK_OK(ydb_database_close(db));
}

/* ---- the row cache ---- */

/* The metadata of row `index` of ydb_view_read_rows(group "a", [0, 10)) as
** `conn` reads it now, copied into `out` ("-" when the row has none). */
static int metadata_at(ydb_connection *conn, size_t index, char *out, size_t out_size) {
    ydb_txn *txn = NULL;
    void *buffer = NULL;
    size_t size = 0, count = 0, row;
    const unsigned char *at;
    int rc = ydb_txn_begin_read(conn, &txn);
    if (rc != YDB_OK) return rc;
    rc = ydb_view_read_rows(txn, V, "a", 0, 10, 0, &buffer, &size, &count);
    ydb_txn_end(txn);
    if (rc != YDB_OK) return rc;
    at = buffer;
    snprintf(out, out_size, "(none)");
    for (row = 0; row < count; row++) {
        int32_t sizes[4];
        memcpy(sizes, at, sizeof sizes);
        at += sizeof sizes;
        at += sizes[0] + sizes[1] + sizes[2];
        if (row == index) {
            if (sizes[3] < 0) snprintf(out, out_size, "-");
            else snprintf(out, out_size, "%.*s", (int)sizes[3], (const char *)at);
        }
        if (sizes[3] > 0) at += sizes[3];
    }
    ydb_free(buffer);
    return YDB_OK;
}

static void test_row_cache(void) {
    ydb_database *db;
    ydb_connection *writer, *reader, *uncached;
    ydb_txn *txn;
    view_counter counter = {0};
    size_t limit = 0;
    char shown[32], expected[32];
    int round;

    REQUIRE_OK(ydb_database_open(NULL, &db));
    REQUIRE_OK(ydb_connection_open(db, &writer));
    REQUIRE_OK(ydb_connection_open(db, &reader));
    REQUIRE_OK(ydb_connection_open(db, &uncached));
    CHECK_OK(register_standard(db, V, "1", 1, &counter));
    CHECK_OK(set_row(writer, "books", "b1", "a:1"));
    CHECK_OK(set_row(writer, "books", "b2", "a:2"));

    CHECK_OK(ydb_connection_row_cache_limit(reader, &limit));
    CHECK(limit == 250);
    CHECK_OK(ydb_connection_set_row_cache_limit(uncached, 0));
    CHECK_OK(ydb_connection_row_cache_limit(uncached, &limit));
    CHECK(limit == 0);
    CHECK_RC(ydb_connection_set_row_cache_limit(NULL, 5), YDB_MISUSE);
    CHECK_RC(ydb_connection_set_row_cache_limit(reader, (size_t)-1), YDB_INVALID_ARGUMENT);
    CHECK_RC(ydb_connection_row_cache_limit(reader, NULL), YDB_MISUSE);
    CHECK_RC(ydb_connection_row_cache_limit(NULL, &limit), YDB_MISUSE);

    /* A change that moves no row (metadata only) shows at once on the
    ** connection that read the row before, as on one without a cache. */
    for (round = 0; round < 3; round++) {
        char metadata[16];
        CHECK_OK(metadata_at(reader, 1, shown, sizeof shown));
        snprintf(metadata, sizeof metadata, "m%d", round);
        REQUIRE_OK(ydb_txn_begin_read_write(writer, &txn));
        CHECK_OK(ydb_txn_replace_metadata(txn, "books", "b2", metadata, strlen(metadata)));
        CHECK_OK(ydb_txn_commit(txn));
        CHECK_OK(metadata_at(reader, 1, shown, sizeof shown));
        CHECK_OK(metadata_at(uncached, 1, expected, sizeof expected));
        CHECK(strcmp(shown, metadata) == 0);
        CHECK(strcmp(shown, expected) == 0);
    }

    ydb_connection_close(uncached);
    ydb_connection_close(reader);
    ydb_connection_close(writer);
    ydb_database_close(db);
}

/* ---- struct_size: 0 or less than the first version's is refused; the
** first version's size works, the members past it at their defaults ---- */
static void test_definition_struct_size(void) {
    ydb_database *db;
    ydb_connection *conn;
    ydb_txn *txn;
    ydb_registration *registration = NULL;
    view_counter counter = {0};
    ydb_view_definition def = YDB_VIEW_DEFINITION_INIT;

    REQUIRE_OK(ydb_database_open(NULL, &db));
    REQUIRE_OK(ydb_connection_open(db, &conn));
    CHECK(def.struct_size == sizeof def);
    CHECK(YDB_VIEW_DEFINITION_MIN_SIZE < sizeof def);
    def.grouping = group_by_prefix;
    def.grouping_flavour = YDB_FLAVOUR_OBJECT;
    def.sorting = sort_by_suffix;
    def.sorting_flavour = YDB_FLAVOUR_OBJECT;

    def.struct_size = 0;
    CHECK_RC(ydb_view_register(db, "sized", &def, &counter, counter_destroy), YDB_INVALID_ARGUMENT);
    CHECK(strstr(ydb_errmsg(), "ydb_view_definition.struct_size is 0: initialise it with "
                               "YDB_VIEW_DEFINITION_INIT") != NULL);
    CHECK(counter.destroyed == 1);
    def.struct_size = YDB_VIEW_DEFINITION_MIN_SIZE - sizeof(size_t);
    CHECK_RC(ydb_view_register(db, "sized", &def, &counter, counter_destroy), YDB_INVALID_ARGUMENT);
    CHECK(strstr(ydb_errmsg(), "less than its first version's") != NULL);
    CHECK(counter.destroyed == 2);
    def.struct_size = 0;
    CHECK_RC(ydb_view_register_async(db, "sized", &def, &counter, counter_destroy, NULL, NULL, NULL,
                                     &registration), YDB_INVALID_ARGUMENT);
    CHECK(registration == NULL && counter.destroyed == 3);

    /* The first version ends before sort_key: the sort_key set here is
    ** never read (read, it would join `sorting`: "both set", refused). */
    def.struct_size = YDB_VIEW_DEFINITION_MIN_SIZE;
    def.sort_key = key_by_suffix;
    CHECK_OK(set_row(conn, "c", "k1", "a:2"));
    CHECK_OK(set_row(conn, "c", "k2", "a:1"));
    CHECK_OK(ydb_view_register(db, "sized", &def, &counter, counter_destroy));
    CHECK(key_at_is(conn, "sized", "a", 0, "k2"));
    CHECK(key_at_is(conn, "sized", "a", 1, "k1"));
    CHECK(counter.sorting_calls > 0);

    REQUIRE_OK(ydb_txn_begin_read_write(conn, &txn));
    def.version_tag = "2";
    def.struct_size = 0;
    CHECK_RC(ydb_view_set_definition(txn, "sized", &def, &counter, counter_destroy), YDB_INVALID_ARGUMENT);
    CHECK(strstr(ydb_errmsg(), "struct_size is 0") != NULL);
    CHECK(counter.destroyed == 4);
    def.struct_size = YDB_VIEW_DEFINITION_MIN_SIZE;
    CHECK_OK(ydb_view_set_definition(txn, "sized", &def, &counter, counter_destroy));
    CHECK_OK(ydb_txn_commit(txn));
    CHECK(counter.destroyed == 5); /* the first registration's callbacks */
    CHECK(key_at_is(conn, "sized", "a", 0, "k2"));
    ydb_connection_close(conn);
    ydb_database_close(db);
    CHECK(counter.destroyed == 6);
}

/* ---- sorting_rows_in_memory: a comparator view keeping its rows in
** memory orders every group as one reading them back from SQLite, through
** random commits and rollbacks (a rolled-back transaction changes rows and
** compares them first) ---- */
typedef struct {
    char text[4096];
    char last_suffix[16];
    int out_of_order;
} group_text;

static int append_row(void *ctx, const char *collection, const char *key, size_t index, const void *object,
                      size_t object_size, const void *metadata, size_t metadata_size) {
    group_text *g = (group_text *)ctx;
    char suffix[16] = "";
    size_t start = group_length((const char *)object, object_size) + 1;
    (void)collection;
    (void)index;
    (void)metadata;
    (void)metadata_size;
    if (object_size > start && object_size - start < sizeof suffix)
        memcpy(suffix, (const char *)object + start, object_size - start);
    if (strcmp(suffix, g->last_suffix) < 0) g->out_of_order = 1;
    strcpy(g->last_suffix, suffix);
    if (strlen(g->text) + strlen(key) + 2 < sizeof g->text) {
        strcat(g->text, key);
        strcat(g->text, ",");
    }
    return 0;
}

static void read_group(ydb_connection *conn, const char *view, const char *group, group_text *out) {
    ydb_txn *txn;
    memset(out, 0, sizeof *out);
    REQUIRE_OK(ydb_txn_begin_read(conn, &txn));
    CHECK_OK(ydb_view_enumerate_rows(txn, view, group, 0, (size_t)-1, 0, append_row, out));
    ydb_txn_end(txn);
}

static void test_sorting_rows_in_memory(void) {
    ydb_database *db;
    ydb_connection *conn;
    ydb_view_definition def = YDB_VIEW_DEFINITION_INIT;
    view_counter kept_counter = {0}, read_counter = {0};
    unsigned seed = 7;
    int step, steps_compared = 0;

    REQUIRE_OK(ydb_database_open(NULL, &db));
    REQUIRE_OK(ydb_connection_open(db, &conn));
    CHECK(def.sorting_rows_in_memory == 0);
    for (int k = 0; k < 30; k++) {
        char key[16], object[16];
        snprintf(key, sizeof key, "k%d", k);
        snprintf(object, sizeof object, "g%d:%02d", k % 2, (k * 37) % 50);
        CHECK_OK(set_row(conn, "c", key, object));
    }
    def.grouping = group_by_prefix;
    def.grouping_flavour = YDB_FLAVOUR_OBJECT;
    def.sorting = sort_by_suffix;
    def.sorting_flavour = YDB_FLAVOUR_OBJECT;
    def.sorting_rows_in_memory = 1;
    CHECK_OK(ydb_view_register(db, "kept", &def, &kept_counter, counter_destroy));
    def.sorting_rows_in_memory = 0;
    CHECK_OK(ydb_view_register(db, "read", &def, &read_counter, counter_destroy));

    for (step = 0; step < 300; step++) {
        ydb_txn *txn;
        int writes = 1 + (int)(rand_r(&seed) % 5), rolls_back = rand_r(&seed) % 4 == 0;
        REQUIRE_OK(ydb_txn_begin_read_write(conn, &txn));
        for (int w = 0; w < writes; w++) {
            char key[16], object[16];
            snprintf(key, sizeof key, "k%u", rand_r(&seed) % 40);
            if (rand_r(&seed) % 6 == 0) {
                CHECK_OK(ydb_txn_remove_object(txn, "c", key));
            } else {
                unsigned choice = rand_r(&seed) % 9;
                if (choice == 0) snprintf(object, sizeof object, "x");
                else snprintf(object, sizeof object, "g%u:%02u", choice % 2, rand_r(&seed) % 50);
                CHECK_OK(ydb_txn_set_object(txn, "c", key, object, strlen(object), NULL, 0));
            }
        }
        if (rolls_back) CHECK_OK(ydb_txn_rollback(txn));
        else CHECK_OK(ydb_txn_commit(txn));
        for (int g = 0; g < 2; g++) {
            group_text kept, read;
            read_group(conn, "kept", g ? "g1" : "g0", &kept);
            read_group(conn, "read", g ? "g1" : "g0", &read);
            CHECK(strcmp(kept.text, read.text) == 0);
            CHECK(!kept.out_of_order && !read.out_of_order);
            if (strcmp(kept.text, read.text) == 0) steps_compared++;
        }
    }
    CHECK(steps_compared == 600);
    CHECK(kept_counter.sorting_calls > 0 && read_counter.sorting_calls > 0);
    ydb_connection_close(conn);
    ydb_database_close(db);
    CHECK(kept_counter.destroyed == 1 && read_counter.destroyed == 1);
}

int main(void) {
    test_population_and_mutations();
    test_key_flavour();
    test_persistence();
    test_two_views_and_changes();
    test_queries();
    test_isolation();
    test_failures();
    test_population_sort();
    test_set_definition();
    test_hostile_names();
    test_misuse();
    test_row_cache();
    test_definition_struct_size();
    test_sorting_rows_in_memory();
    return check_summary();
}
