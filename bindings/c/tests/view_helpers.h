/*
** view_helpers.h -- a small view shared by the view, mappings and changeset
** tests: objects are "GROUP:SORTKEY" strings; the grouping callback puts a
** row in GROUP (objects starting with "x" are left out, key "bad" fails),
** the sorting callback orders by SORTKEY. A counter records every call and
** the destructor.
*/
#ifndef YDBVIEW_TESTS_VIEW_HELPERS_H
#define YDBVIEW_TESTS_VIEW_HELPERS_H

#include "check.h"

typedef struct {
    int grouping_calls;
    int sorting_calls;
    int destroyed;
    int fail_sorting;      /* nonzero: the sorting callback fails */
    int reentry_status;    /* what a call back into ydb returned, if tried */
    ydb_txn *reenter_txn;  /* when set, the grouping callback writes through it */
} view_counter;

static inline void counter_destroy(void *ctx) { ((view_counter *)ctx)->destroyed++; }

/* Length of the GROUP part of an object (up to ':' or the end). */
static inline size_t group_length(const char *object, size_t size) {
    size_t n = 0;
    while (n < size && object[n] != ':') n++;
    return n;
}

static inline int group_by_prefix(void *ctx, ydb_txn *txn, const ydb_view_row *row, ydb_group_result *result) {
    (void)txn;
    view_counter *counter = (view_counter *)ctx;
    const char *object = (const char *)row->object;
    char group[64];
    size_t n;
    counter->grouping_calls++;
    if (counter->reenter_txn != NULL)
        counter->reentry_status = ydb_txn_touch_object(counter->reenter_txn, "c", "k");
    if (strcmp(row->key, "bad") == 0) return 7;
    if (object == NULL) return 1; /* an object flavour always gets the object */
    if (row->object_size > 0 && object[0] == 'x') return 0; /* excluded */
    n = group_length(object, row->object_size);
    if (n >= sizeof group) n = sizeof group - 1;
    memcpy(group, object, n);
    group[n] = '\0';
    return ydb_group_result_set(result, group);
}

static inline int sort_by_suffix(void *ctx, ydb_txn *txn, const char *group, const ydb_view_row *a,
                          const ydb_view_row *b, int *out_order) {
    (void)txn;
    view_counter *counter = (view_counter *)ctx;
    const char *left = (const char *)a->object, *right = (const char *)b->object;
    size_t left_start = group_length(left, a->object_size) + 1;
    size_t right_start = group_length(right, b->object_size) + 1;
    size_t left_size = a->object_size > left_start ? a->object_size - left_start : 0;
    size_t right_size = b->object_size > right_start ? b->object_size - right_start : 0;
    size_t common = left_size < right_size ? left_size : right_size;
    int order = common ? memcmp(left + left_start, right + right_start, common) : 0;
    (void)group;
    counter->sorting_calls++;
    if (counter->fail_sorting) return 1;
    if (order == 0) order = (left_size > right_size) - (left_size < right_size);
    *out_order = order;
    return 0;
}

/* The sort-key form of sort_by_suffix's order: the suffix bytes as they are
** (raw: memcmp, a shorter prefix first -- the comparator's tie-break). */
static inline int key_by_suffix(void *ctx, ydb_txn *txn, const char *group, const ydb_view_row *row,
                                ydb_sort_key *key) {
    (void)txn;
    view_counter *counter = (view_counter *)ctx;
    const char *object = (const char *)row->object;
    size_t start = group_length(object, row->object_size) + 1;
    (void)group;
    counter->sorting_calls++;
    if (counter->fail_sorting) return 1;
    if (row->object_size <= start) return ydb_sort_key_append_raw(key, "", 0);
    return ydb_sort_key_append_raw(key, object + start, row->object_size - start);
}

/* Registers the standard grouping (object flavour) under `name` with `tag`,
** sorted by `sorting` or by `sort_key` (one of them NULL). */
static inline int register_sorted(ydb_database *db, const char *name, const char *tag,
                                  int persistent, view_counter *counter,
                                  ydb_sorting_fn sorting, ydb_sort_key_fn sort_key) {
    ydb_view_definition def = YDB_VIEW_DEFINITION_INIT;
    def.grouping = group_by_prefix;
    def.grouping_flavour = YDB_FLAVOUR_OBJECT;
    def.sorting = sorting;
    def.sort_key = sort_key;
    def.sorting_flavour = YDB_FLAVOUR_OBJECT;
    def.version_tag = tag;
    def.persistent = persistent;
    return ydb_view_register(db, name, &def, counter, counter_destroy);
}

/* Registers the standard view (object flavour) under `name` with `tag`. */
static inline int register_standard(ydb_database *db, const char *name, const char *tag,
                             int persistent, view_counter *counter) {
    return register_sorted(db, name, tag, persistent, counter, sort_by_suffix, NULL);
}

/* Runs one write in its own transaction: set (metadata may be NULL). */
static inline int set_row(ydb_connection *conn, const char *collection, const char *key,
                   const char *object) {
    return put(conn, collection, key, object, NULL);
}

static inline int remove_row(ydb_connection *conn, const char *collection, const char *key) {
    ydb_txn *txn = NULL;
    int rc = ydb_txn_begin_read_write(conn, &txn);
    if (rc != YDB_OK) return rc;
    rc = ydb_txn_remove_object(txn, collection, key);
    if (rc != YDB_OK) {
        ydb_txn_rollback(txn);
        return rc;
    }
    return ydb_txn_commit(txn);
}

/* The key at `index` of `group` equals `want` (checked in a fresh read). */
static inline int key_at_is(ydb_connection *conn, const char *view, const char *group,
                     size_t index, const char *want) {
    ydb_txn *txn = NULL;
    char *collection = NULL, *key = NULL;
    int same = 0;
    if (ydb_txn_begin_read(conn, &txn) != YDB_OK) return 0;
    if (ydb_view_key_at(txn, view, group, index, &collection, &key) == YDB_OK)
        same = strcmp(key, want) == 0;
    ydb_free(collection);
    ydb_free(key);
    ydb_txn_end(txn);
    return same;
}

/* Rows in `group` (or (size_t)-1 when the query fails). */
static inline size_t group_count(ydb_connection *conn, const char *view, const char *group) {
    ydb_txn *txn = NULL;
    size_t count = (size_t)-1;
    if (ydb_txn_begin_read(conn, &txn) != YDB_OK) return count;
    if (ydb_view_count_in_group(txn, view, group, &count) != YDB_OK) count = (size_t)-1;
    ydb_txn_end(txn);
    return count;
}

/* A database with a writer, a reader and the standard view `name`
** (version tag `tag`): what the view, mappings and changeset tests start from. */
typedef struct {
    ydb_database *db;
    ydb_connection *writer;
    ydb_connection *reader;
    view_counter counter;
} fixture;

static inline void open_fixture(fixture *f, const char *name, const char *tag) {
    memset(f, 0, sizeof *f);
    REQUIRE_OK(ydb_database_open(NULL, &f->db));
    REQUIRE_OK(ydb_connection_open(f->db, &f->writer));
    REQUIRE_OK(ydb_connection_open(f->db, &f->reader));
    REQUIRE_OK(register_standard(f->db, name, tag, 1, &f->counter));
}

#endif
