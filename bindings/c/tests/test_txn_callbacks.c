/*
** Callbacks that read other rows through the `ydb_txn *txn` they receive:
** books grouped, sorted and found by their author's row, dynamic groups
** shown by a row of their own. The handle is read-only and lives for one
** call. (The Swift TransactionCallbackTests and Python's
** test_txn_callbacks.py check the same cases.)
**
** Rows: authors/A -> "COUNTRY:RANK", books/B -> "A" (the author's key),
** countries/COUNTRY -> "RANK" (the group is shown when the row exists).
*/
#include <stdlib.h>
#include <string.h>

#include "ydbview.h"
#include "view_helpers.h"

/* ---- reading the author through txn ---- */

typedef struct {
    int calls;
    int write_status, commit_status, end_status; /* tried through txn */
    char write_message[200];
    int try_writes;
    ydb_txn *kept;                               /* txn kept past the call */
} author_view;

/* The author's "COUNTRY:RANK" for book `row` (object flavour), or NULL. */
static char *author_of(ydb_txn *txn, const ydb_view_row *row) {
    char key[64];
    void *data = NULL;
    size_t size = 0;
    char *text;
    if (row->object == NULL || row->object_size >= sizeof key) return NULL;
    memcpy(key, row->object, row->object_size);
    key[row->object_size] = '\0';
    if (ydb_txn_get_object(txn, "authors", key, &data, &size) != YDB_OK) return NULL;
    text = (char *)malloc(size + 1);
    memcpy(text, data, size);
    text[size] = '\0';
    ydb_free(data);
    return text;
}

static long rank_of(const char *author) {
    const char *colon = author == NULL ? NULL : strchr(author, ':');
    return colon == NULL ? 0 : strtol(colon + 1, NULL, 10);
}

static int by_author_country(void *ctx, ydb_txn *txn, const ydb_view_row *row, ydb_group_result *result) {
    author_view *v = (author_view *)ctx;
    char *author;
    int rc = 0;
    v->calls++;
    v->kept = txn;
    if (v->try_writes) {
        v->try_writes = 0;
        v->write_status = ydb_txn_set_object(txn, "books", "sneaky", "x", 1, NULL, 0);
        strncpy(v->write_message, ydb_errmsg(), sizeof v->write_message - 1);
        v->commit_status = ydb_txn_commit(txn);
        v->end_status = ydb_txn_end(txn);
    }
    if (strcmp(row->collection, "books") != 0) return 0;
    author = author_of(txn, row);
    if (author != NULL) {
        *strchr(author, ':') = '\0';
        rc = ydb_group_result_set(result, author);
    }
    free(author);
    return rc;
}

/* The txn of the comparison before this one, tried again in this one: each
** comparison's handle is its own, also among those that place one row. */
static ydb_txn *previous_comparison;
static int stale_tried, stale_accepted;

static int by_author_rank(void *ctx, ydb_txn *txn, const char *group, const ydb_view_row *a,
                          const ydb_view_row *b, int *out_order) {
    char *first = author_of(txn, a), *second = author_of(txn, b);
    long left = rank_of(first), right = rank_of(second);
    int exists = 0;
    (void)ctx; (void)group;
    if (previous_comparison != NULL) {
        stale_tried++;
        if (previous_comparison == txn ||
            ydb_txn_exists(previous_comparison, "authors", "a", &exists) != YDB_MISUSE)
            stale_accepted++;
    }
    previous_comparison = txn;
    *out_order = left < right ? -1 : left > right ? 1 : strcmp(a->key, b->key);
    free(first);
    free(second);
    return 0;
}

static int author_rank_key(void *ctx, ydb_txn *txn, const char *group, const ydb_view_row *row,
                           ydb_sort_key *key) {
    char *author = author_of(txn, row);
    int rc = ydb_sort_key_append_int64(key, rank_of(author), 0);
    (void)ctx; (void)group;
    free(author);
    return rc == YDB_OK ? ydb_sort_key_append_text(key, row->key, 0) : rc;
}

static int register_by_author(ydb_database *db, const char *name, author_view *v, int keyed) {
    ydb_view_definition def = YDB_VIEW_DEFINITION_INIT;
    def.grouping = by_author_country;
    def.grouping_flavour = YDB_FLAVOUR_OBJECT;
    if (keyed) def.sort_key = author_rank_key;
    else def.sorting = by_author_rank;
    def.sorting_flavour = YDB_FLAVOUR_OBJECT;
    return ydb_view_register(db, name, &def, v, NULL);
}

/* The group of books/`key` in `view`, or "" (caller frees nothing: static). */
static const char *group_of(ydb_connection *conn, const char *view, const char *key) {
    static char group[64];
    ydb_txn *txn = NULL;
    char *found = NULL;
    size_t index = 0;
    group[0] = '\0';
    if (ydb_txn_begin_read(conn, &txn) != YDB_OK) return group;
    if (ydb_view_position(txn, view, "books", key, &found, &index) == YDB_OK) {
        strncpy(group, found, sizeof group - 1);
        ydb_free(found);
    }
    ydb_txn_end(txn);
    return group;
}

static void test_grouping_reads_same_transaction(void) {
    ydb_database *db;
    ydb_connection *conn;
    ydb_txn *txn;
    author_view v;
    memset(&v, 0, sizeof v);
    REQUIRE_OK(ydb_database_open(NULL, &db));
    REQUIRE_OK(ydb_connection_open(db, &conn));
    /* Registration over existing rows reads them in its own transaction. */
    REQUIRE_OK(put(conn, "authors", "tolstoy", "ru:2", NULL));
    REQUIRE_OK(put(conn, "books", "war", "tolstoy", NULL));
    REQUIRE_OK(register_by_author(db, "byCountry", &v, 0));
    CHECK(strcmp(group_of(conn, "byCountry", "war"), "ru") == 0);

    /* The author is written first in the same transaction as the book. */
    REQUIRE_OK(ydb_txn_begin_read_write(conn, &txn));
    CHECK_OK(ydb_txn_set_object(txn, "authors", "hugo", "fr:1", 4, NULL, 0));
    CHECK_OK(ydb_txn_set_object(txn, "books", "miserables", "hugo", 4, NULL, 0));
    CHECK_OK(ydb_txn_commit(txn));
    CHECK(strcmp(group_of(conn, "byCountry", "miserables"), "fr") == 0);

    /* A book whose author is missing is left out. */
    CHECK_OK(put(conn, "books", "orphan", "nobody", NULL));
    CHECK(strcmp(group_of(conn, "byCountry", "orphan"), "") == 0);

    /* Changing the author alone moves nothing (it was only read)... */
    CHECK_OK(put(conn, "authors", "hugo", "be:1", NULL));
    CHECK(strcmp(group_of(conn, "byCountry", "miserables"), "fr") == 0);
    /* ...touching the book regroups it. */
    REQUIRE_OK(ydb_txn_begin_read_write(conn, &txn));
    CHECK_OK(ydb_txn_touch_object(txn, "books", "miserables"));
    CHECK_OK(ydb_txn_commit(txn));
    CHECK(strcmp(group_of(conn, "byCountry", "miserables"), "be") == 0);

    ydb_connection_close(conn);
    ydb_database_close(db);
}

/* ---- sorting (comparator and sort key) by the author's rank ---- */

static void test_sorting_reads_rows(void) {
    int keyed;
    for (keyed = 0; keyed <= 1; keyed++) {
        ydb_database *db;
        ydb_connection *conn;
        ydb_txn *txn;
        author_view v;
        const char *view = keyed ? "byRankKey" : "byRank";
        memset(&v, 0, sizeof v);
        REQUIRE_OK(ydb_database_open(NULL, &db));
        REQUIRE_OK(ydb_connection_open(db, &conn));
        REQUIRE_OK(put(conn, "authors", "a", "fr:3", NULL));
        REQUIRE_OK(put(conn, "authors", "b", "fr:1", NULL));
        REQUIRE_OK(put(conn, "books", "k1", "a", NULL));
        REQUIRE_OK(register_by_author(db, view, &v, keyed));
        REQUIRE_OK(ydb_txn_begin_read_write(conn, &txn));
        CHECK_OK(ydb_txn_set_object(txn, "authors", "c", "fr:2", 4, NULL, 0));
        CHECK_OK(ydb_txn_set_object(txn, "books", "k2", "b", 1, NULL, 0));
        CHECK_OK(ydb_txn_set_object(txn, "books", "k3", "c", 1, NULL, 0));
        CHECK_OK(ydb_txn_commit(txn));
        /* By author rank: b (1), c (2), a (3). */
        CHECK(key_at_is(conn, view, "fr", 0, "k2"));
        CHECK(key_at_is(conn, view, "fr", 1, "k3"));
        CHECK(key_at_is(conn, view, "fr", 2, "k1"));
        /* k3's placement compared it twice: the first comparison's handle
        ** was refused in the second. */
        if (!keyed) CHECK(stale_tried >= 2 && stale_accepted == 0);
        ydb_connection_close(conn);
        ydb_database_close(db);
    }
}

/* ---- find by the author's rank ---- */

typedef struct {
    long rank;
    int got_txn;
} find_state;

static int find_rank(void *ctx, ydb_txn *txn, const ydb_view_row *row, int *out_order) {
    find_state *f = (find_state *)ctx;
    char *author = author_of(txn, row);
    long rank = rank_of(author);
    f->got_txn += txn != NULL;
    *out_order = rank < f->rank ? -1 : rank > f->rank ? 1 : 0;
    free(author);
    return 0;
}

static void test_find_reads_rows(void) {
    ydb_database *db;
    ydb_connection *conn;
    ydb_txn *txn;
    author_view v;
    find_state f = { 2, 0 };
    size_t start = 9, end = 9;
    memset(&v, 0, sizeof v);
    REQUIRE_OK(ydb_database_open(NULL, &db));
    REQUIRE_OK(ydb_connection_open(db, &conn));
    REQUIRE_OK(register_by_author(db, "byRank", &v, 1));
    REQUIRE_OK(ydb_txn_begin_read_write(conn, &txn));
    CHECK_OK(ydb_txn_set_object(txn, "authors", "a", "fr:1", 4, NULL, 0));
    CHECK_OK(ydb_txn_set_object(txn, "authors", "b", "fr:2", 4, NULL, 0));
    CHECK_OK(ydb_txn_set_object(txn, "books", "k1", "a", 1, NULL, 0));
    CHECK_OK(ydb_txn_set_object(txn, "books", "k2", "b", 1, NULL, 0));
    CHECK_OK(ydb_txn_set_object(txn, "books", "k3", "b", 1, NULL, 0));
    /* Inside the writing transaction: it sees the authors just written. */
    CHECK_OK(ydb_view_find(txn, "byRank", "fr", YDB_FLAVOUR_OBJECT, find_rank, &f, &start, &end));
    CHECK(start == 1 && end == 3);
    CHECK(f.got_txn > 0);
    CHECK_OK(ydb_txn_commit(txn));
    ydb_connection_close(conn);
    ydb_database_close(db);
}

/* ---- dynamic groups shown and ordered by rows ---- */

typedef struct {
    int null_txn_calls, txn_calls;
} groups_state;

/* Shown when countries/GROUP exists; without a transaction, shown. */
static int country_listed(void *ctx, ydb_txn *txn, const char *group) {
    groups_state *g = (groups_state *)ctx;
    int exists = 1;
    if (txn == NULL) {
        g->null_txn_calls++;
        return 1;
    }
    g->txn_calls++;
    if (ydb_txn_exists(txn, "countries", group, &exists) != YDB_OK) return 0;
    return exists;
}

static long country_rank(ydb_txn *txn, const char *group) {
    void *data = NULL;
    size_t size = 0;
    char text[32];
    if (txn == NULL || ydb_txn_get_object(txn, "countries", group, &data, &size) != YDB_OK) return 0;
    if (size >= sizeof text) size = sizeof text - 1;
    memcpy(text, data, size);
    text[size] = '\0';
    ydb_free(data);
    return strtol(text, NULL, 10);
}

static int by_country_rank(void *ctx, ydb_txn *txn, const char *group1, const char *group2) {
    long a = country_rank(txn, group1), b = country_rank(txn, group2);
    (void)ctx;
    return a < b ? -1 : a > b ? 1 : strcmp(group1, group2);
}

static int section_is(ydb_mappings *m, size_t section, const char *want) {
    const char *group = NULL;
    return ydb_mappings_group_for_section(m, section, &group) == YDB_OK && strcmp(group, want) == 0;
}

static void test_dynamic_groups_read_rows(void) {
    ydb_database *db;
    ydb_connection *conn, *ui;
    ydb_txn *txn;
    ydb_mappings *m;
    ydb_notification_list *list;
    ydb_changeset *cs;
    author_view v;
    groups_state g = { 0, 0 };
    size_t sections = 0;
    memset(&v, 0, sizeof v);
    REQUIRE_OK(ydb_database_open(NULL, &db));
    REQUIRE_OK(ydb_connection_open(db, &conn));
    REQUIRE_OK(ydb_connection_open(db, &ui));
    REQUIRE_OK(register_by_author(db, "byCountry", &v, 1));
    REQUIRE_OK(ydb_txn_begin_read_write(conn, &txn));
    CHECK_OK(ydb_txn_set_object(txn, "authors", "a", "fr:1", 4, NULL, 0));
    CHECK_OK(ydb_txn_set_object(txn, "authors", "b", "ru:1", 4, NULL, 0));
    CHECK_OK(ydb_txn_set_object(txn, "authors", "c", "de:1", 4, NULL, 0));
    CHECK_OK(ydb_txn_set_object(txn, "books", "k1", "a", 1, NULL, 0));
    CHECK_OK(ydb_txn_set_object(txn, "books", "k2", "b", 1, NULL, 0));
    CHECK_OK(ydb_txn_set_object(txn, "books", "k3", "c", 1, NULL, 0));
    CHECK_OK(ydb_txn_set_object(txn, "countries", "ru", "1", 1, NULL, 0));
    CHECK_OK(ydb_txn_set_object(txn, "countries", "fr", "2", 1, NULL, 0));
    CHECK_OK(ydb_txn_commit(txn));

    REQUIRE_OK(ydb_mappings_new_dynamic("byCountry", country_listed, by_country_rank, &g, NULL, &m));
    REQUIRE_OK(ydb_connection_begin_long_lived_read(ui, &list));
    ydb_notification_list_free(list);
    REQUIRE_OK(ydb_txn_begin_read(ui, &txn));
    CHECK_OK(ydb_mappings_update(m, txn));
    ydb_txn_end(txn);
    /* de is not listed; ru (rank 1) before fr (rank 2). */
    CHECK_OK(ydb_mappings_number_of_sections(m, &sections));
    CHECK(sections == 2);
    CHECK(section_is(m, 0, "ru") && section_is(m, 1, "fr"));
    CHECK(g.txn_calls > 0 && g.null_txn_calls == 0);

    /* Listing de (rank 0) shows it first, in the changeset given the ui's
    ** transaction. */
    REQUIRE_OK(put(conn, "countries", "de", "0", NULL));
    REQUIRE_OK(put(conn, "books", "k4", "c", NULL));
    REQUIRE_OK(ydb_connection_begin_long_lived_read(ui, &list));
    REQUIRE_OK(ydb_txn_begin_read(ui, &txn));
    CHECK_OK(ydb_changeset_new_in_txn(m, list, txn, &cs));
    ydb_changeset_free(cs);
    ydb_txn_end(txn);
    ydb_notification_list_free(list);
    CHECK_OK(ydb_mappings_number_of_sections(m, &sections));
    CHECK(sections == 3);
    CHECK(section_is(m, 0, "de") && section_is(m, 1, "ru") && section_is(m, 2, "fr"));

    /* ydb_changeset_new has no transaction to give: txn is NULL. */
    g.null_txn_calls = 0;
    REQUIRE_OK(put(conn, "books", "k5", "a", NULL));
    REQUIRE_OK(ydb_connection_begin_long_lived_read(ui, &list));
    CHECK_OK(ydb_changeset_new(m, list, &cs));
    ydb_changeset_free(cs);
    ydb_notification_list_free(list);
    CHECK(g.null_txn_calls > 0);

    ydb_mappings_free(m);
    ydb_connection_close(ui);
    ydb_connection_close(conn);
    ydb_database_close(db);
}

/* ---- the handle is read-only, and lives for one call ---- */

static void test_handle_is_read_only_and_short_lived(void) {
    ydb_database *db;
    ydb_connection *conn;
    ydb_txn *txn;
    author_view v;
    void *data = NULL;
    size_t size = 0;
    int exists = 0;
    memset(&v, 0, sizeof v);
    REQUIRE_OK(ydb_database_open(NULL, &db));
    REQUIRE_OK(ydb_connection_open(db, &conn));
    REQUIRE_OK(register_by_author(db, "byCountry", &v, 0));
    REQUIRE_OK(ydb_txn_begin_read_write(conn, &txn));
    CHECK_OK(ydb_txn_set_object(txn, "authors", "hugo", "fr:1", 4, NULL, 0));
    v.try_writes = 1;
    /* The callback's write, commit and end are refused; it ignores that and
    ** the transaction goes on. */
    CHECK_OK(ydb_txn_set_object(txn, "books", "miserables", "hugo", 4, NULL, 0));
    CHECK(v.write_status == YDB_MISUSE);
    CHECK(strstr(v.write_message, "read-only") != NULL);
    CHECK(v.commit_status == YDB_MISUSE && v.end_status == YDB_MISUSE);
    CHECK_OK(ydb_txn_set_object(txn, "books", "notre-dame", "hugo", 4, NULL, 0));
    CHECK_OK(ydb_txn_commit(txn));
    CHECK(strcmp(group_of(conn, "byCountry", "miserables"), "fr") == 0);
    CHECK(strcmp(group_of(conn, "byCountry", "notre-dame"), "fr") == 0);
    CHECK(missing(conn, "books", "sneaky"));

    /* Kept past its call: every use is YDB_MISUSE, never a crash. */
    CHECK(v.kept != NULL);
    CHECK_RC(ydb_txn_get_object(v.kept, "authors", "hugo", &data, &size), YDB_MISUSE);
    CHECK_RC(ydb_txn_exists(v.kept, "authors", "hugo", &exists), YDB_MISUSE);
    CHECK_RC(ydb_txn_set_object(v.kept, "books", "late", "hugo", 4, NULL, 0), YDB_MISUSE);
    CHECK_RC(ydb_txn_end(v.kept), YDB_MISUSE);
    CHECK_RC(ydb_txn_commit(v.kept), YDB_MISUSE);

    ydb_connection_close(conn);
    ydb_database_close(db);
}

int main(void) {
    test_grouping_reads_same_transaction();
    test_sorting_reads_rows();
    test_find_reads_rows();
    test_dynamic_groups_read_rows();
    test_handle_is_read_only_and_short_lived();
    return check_summary();
}
