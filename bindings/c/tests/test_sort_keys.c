/*
** test_sort_keys.c -- the sort-key form through the C ABI: over random
** histories a sort_key view and the comparator view of the same order hold
** the same rows in the same order and give the same changesets; the keys
** survive a reopen (no callback runs); the append functions keep value
** order; and misuse (a kept handle, both or neither callback, bad text)
** gives an error, never a crash.
*/
#define _POSIX_C_SOURCE 200809L
#include <stdint.h>
#include <stdio.h>
#include <unistd.h>
#include "view_helpers.h"

static int register_keyed(ydb_database *db, const char *name, const char *tag, view_counter *counter) {
    return register_sorted(db, name, tag, 1, counter, NULL, key_by_suffix);
}

static uint64_t rng_state = 0x9E3779B97F4A7C15u;
static unsigned next_random(unsigned bound) {
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return (unsigned)(rng_state % bound);
}

/* Every group's keys of `view`, joined into `out`. */
static void dump(ydb_txn *txn, const char *view, char *out, size_t size) {
    static const char *groups[] = {"a", "b", "c"};
    size_t used = 0, g, i, count;
    out[0] = '\0';
    for (g = 0; g < 3; g++) {
        count = 0;
        CHECK_OK(ydb_view_count_in_group(txn, view, groups[g], &count));
        used += (size_t)snprintf(out + used, size - used, "%s:", groups[g]);
        for (i = 0; i < count && used < size; i++) {
            char *collection = NULL, *key = NULL;
            CHECK_OK(ydb_view_key_at(txn, view, groups[g], i, &collection, &key));
            used += (size_t)snprintf(out + used, size - used, "%s,", key ? key : "?");
            ydb_free(collection);
            ydb_free(key);
        }
    }
}

/* Type, positions and key of every row change, as text. */
static void describe(ydb_changeset *cs, char *out, size_t size) {
    size_t n = 0, i, used = 0, sections = 0;
    CHECK_OK(ydb_changeset_row_change_count(cs, &n));
    CHECK_OK(ydb_changeset_section_change_count(cs, &sections));
    used += (size_t)snprintf(out, size, "%zu sections;", sections);
    for (i = 0; i < n && used < size; i++) {
        int type = 0, had, has;
        size_t s0 = 0, r0 = 0, s1 = 0, r1 = 0;
        const char *key = NULL;
        CHECK_OK(ydb_changeset_row_type(cs, i, &type));
        /* Inserts have no original position, deletes no final one. */
        had = ydb_changeset_row_original_position(cs, i, &s0, &r0);
        has = ydb_changeset_row_final_position(cs, i, &s1, &r1);
        used += (size_t)snprintf(out + used, size - used, "[%d %d]", had, has);
        CHECK_OK(ydb_changeset_row_key(cs, i, &key));
        used += (size_t)snprintf(out + used, size - used, "%d %zu.%zu>%zu.%zu %s;", type, s0, r0, s1, r1,
                                 key ? key : "-");
    }
}

static void test_same_order_and_changesets(void) {
    static const char *groups[] = {"a", "b", "c"};
    ydb_database *db;
    ydb_connection *writer, *reader;
    ydb_mappings *by_comparator, *by_key;
    view_counter compared = {0}, keyed = {0};
    ydb_txn *txn;
    int commit;
    REQUIRE_OK(ydb_database_open(NULL, &db));
    REQUIRE_OK(ydb_connection_open(db, &writer));
    REQUIRE_OK(ydb_connection_open(db, &reader));
    REQUIRE_OK(register_standard(db, "compared", "1", 1, &compared));
    REQUIRE_OK(register_keyed(db, "keyed", "1", &keyed));
    REQUIRE_OK(ydb_mappings_new("compared", groups, 3, &by_comparator));
    REQUIRE_OK(ydb_mappings_new("keyed", groups, 3, &by_key));
    REQUIRE_OK(ydb_connection_begin_long_lived_read(reader, NULL));
    REQUIRE_OK(ydb_txn_begin_read(reader, &txn));
    REQUIRE_OK(ydb_mappings_update(by_comparator, txn));
    REQUIRE_OK(ydb_mappings_update(by_key, txn));
    ydb_txn_end(txn);
    for (commit = 0; commit < 300; commit++) {
        ydb_notification_list *skipped = NULL;
        ydb_changeset *a = NULL, *b = NULL;
        static char left[8192], right[8192];
        int op, ops = 1 + (int)next_random(4);
        REQUIRE_OK(ydb_txn_begin_read_write(writer, &txn));
        for (op = 0; op < ops; op++) {
            char key[16], object[32];
            snprintf(key, sizeof key, "k%u", next_random(40));
            /* Suffixes with shared prefixes and duplicates: ties and prefixes. */
            snprintf(object, sizeof object, "%s:%.*s", groups[next_random(3)], (int)next_random(4), "zzzz" + next_random(2));
            if (next_random(5) == 0) {
                CHECK_OK(ydb_txn_remove_object(txn, "c", key));
            } else {
                CHECK_OK(ydb_txn_set_object(txn, "c", key, object, strlen(object), NULL, 0));
            }
        }
        REQUIRE_OK(ydb_txn_commit(txn));
        REQUIRE_OK(ydb_connection_begin_long_lived_read(reader, &skipped));
        CHECK_OK(ydb_changeset_new(by_comparator, skipped, &a));
        CHECK_OK(ydb_changeset_new(by_key, skipped, &b));
        ydb_notification_list_free(skipped);
        if (a && b) {
            describe(a, left, sizeof left);
            describe(b, right, sizeof right);
            CHECK(strcmp(left, right) == 0);
        }
        ydb_changeset_free(a);
        ydb_changeset_free(b);
        REQUIRE_OK(ydb_txn_begin_read(reader, &txn));
        dump(txn, "compared", left, sizeof left);
        dump(txn, "keyed", right, sizeof right);
        CHECK(strcmp(left, right) == 0);
        if (strcmp(left, right) != 0) fprintf(stderr, "commit %d:\n  %s\n  %s\n", commit, left, right);
        ydb_txn_end(txn);
    }
    ydb_mappings_free(by_comparator);
    ydb_mappings_free(by_key);
    ydb_connection_close(reader);
    ydb_connection_close(writer);
    ydb_database_close(db);
}

static void test_keys_survive_reopen(void) {
    /* Sized so that gcc can prove no snprintf below truncates. */
    char path[40] = "/tmp/ydbview-sort-keys-XXXXXX";
    char file[48], side[56];
    int fd = mkstemp(path), outcome = 0;
    view_counter first = {0}, second = {0};
    ydb_database *db;
    ydb_connection *conn;
    CHECK(fd >= 0);
    close(fd);
    unlink(path);
    snprintf(file, sizeof file, "%s.sqlite", path);
    REQUIRE_OK(ydb_database_open(file, &db));
    REQUIRE_OK(ydb_connection_open(db, &conn));
    REQUIRE_OK(register_keyed(db, "v", "1", &first));
    CHECK_OK(set_row(conn, "c", "k1", "a:m"));
    CHECK_OK(set_row(conn, "c", "k2", "a:b"));
    CHECK_OK(set_row(conn, "c", "k3", "a:z"));
    ydb_connection_close(conn);
    ydb_database_close(db);
    REQUIRE_OK(ydb_database_open(file, &db));
    REQUIRE_OK(ydb_connection_open(db, &conn));
    REQUIRE_OK(register_keyed(db, "v", "1", &second));
    CHECK_OK(ydb_view_registration_outcome(db, "v", &outcome));
    CHECK(outcome == YDB_VIEW_LOADED);
    CHECK(second.grouping_calls == 0 && second.sorting_calls == 0);
    /* A new row is placed by comparing with the stored keys. */
    CHECK_OK(set_row(conn, "c", "k4", "a:c"));
    CHECK(second.sorting_calls == 1);
    CHECK(key_at_is(conn, "v", "a", 0, "k2"));
    CHECK(key_at_is(conn, "v", "a", 1, "k4"));
    CHECK(key_at_is(conn, "v", "a", 2, "k1"));
    CHECK(key_at_is(conn, "v", "a", 3, "k3"));
    ydb_connection_close(conn);
    ydb_database_close(db);
    unlink(file);
    snprintf(side, sizeof side, "%s-wal", file);
    unlink(side);
    snprintf(side, sizeof side, "%s-shm", file);
    unlink(side);
}

/* Each key built from one value: the callback reads which from the object. */
static ydb_sort_key *kept_handle;
static int key_from_object(void *ctx, ydb_txn *txn, const char *group, const ydb_view_row *row, ydb_sort_key *key) {
    char object[64];
    size_t size = row->object_size < sizeof object - 1 ? row->object_size : sizeof object - 1;
    (void)ctx; (void)txn; (void)group;
    memcpy(object, row->object, size);   /* objects are not NUL-terminated */
    object[size] = '\0';
    kept_handle = key;
    switch (object[0]) {
    case 'i': return ydb_sort_key_append_int64(key, strtoll(object + 1, NULL, 10), 0);
    case 'I': return ydb_sort_key_append_int64(key, strtoll(object + 1, NULL, 10), 1);
    case 'd': return ydb_sort_key_append_double(key, strtod(object + 1, NULL), 0);
    case 't': return ydb_sort_key_append_text(key, object + 1, 0);
    case 'T': return ydb_sort_key_append_text(key, object + 1, 1);
    case 'x': return ydb_sort_key_append_text(key, "\xff\xfe", 0);  /* invalid UTF-8 */
    case 'y': return ydb_sort_key_append_text(key, "abcdefghi\xc0\xaf", 0);  /* overlong, after a word of ASCII */
    default: return 1;
    }
}

static int group_all(void *ctx, ydb_txn *txn, const ydb_view_row *row, ydb_group_result *result) {
    (void)ctx; (void)txn;
    return ydb_group_result_set(result, ((const char *)row->object)[0] == 'x' ? "x" : "g");
}

/* Registers a view over `objects` (keys k0, k1, ... in that order) and
** checks the view's order is `order` (indexes into objects). */
static void check_order(const char *const *objects, size_t count, const size_t *order) {
    ydb_database *db;
    ydb_connection *conn;
    ydb_view_definition def = YDB_VIEW_DEFINITION_INIT;
    size_t i;
    REQUIRE_OK(ydb_database_open(NULL, &db));
    REQUIRE_OK(ydb_connection_open(db, &conn));
    for (i = 0; i < count; i++) {
        char key[24];
        snprintf(key, sizeof key, "k%zu", i);
        CHECK_OK(set_row(conn, "c", key, objects[i]));
    }
    def.grouping = group_all;
    def.grouping_flavour = YDB_FLAVOUR_OBJECT;
    def.sort_key = key_from_object;
    def.sorting_flavour = YDB_FLAVOUR_OBJECT;
    CHECK_OK(ydb_view_register(db, "v", &def, NULL, NULL));
    for (i = 0; i < count; i++) {
        char key[16];
        snprintf(key, sizeof key, "k%zu", order[i]);
        CHECK(key_at_is(conn, "v", "g", i, key));
    }
    ydb_connection_close(conn);
    ydb_database_close(db);
}

static void test_encodings_keep_value_order(void) {
    static const char *ints[] = {"i5", "i-3", "i0", "i-9223372036854775808", "i9223372036854775807"};
    static const size_t int_order[] = {3, 1, 2, 0, 4};
    static const char *descending[] = {"I5", "I-3", "I0"};
    static const size_t descending_order[] = {0, 2, 1};
    static const char *doubles[] = {"d2.5", "d-inf", "d-0.0", "d-1e300", "dnan", "d1e-300"};
    static const size_t double_order[] = {1, 3, 2, 5, 0, 4};
    /* Longer than 8 bytes too: ASCII is checked a word at a time. */
    static const char *texts[] = {"tb", "ta", "t", "tab", "t\xc3\xa9", "tabcdefghij", "tabcdefgh\xc3\xa9"};
    static const size_t text_order[] = {2, 1, 3, 5, 6, 0, 4};
    static const char *reversed[] = {"Tb", "Ta", "T", "Tab"};
    static const size_t reversed_order[] = {0, 3, 1, 2};
    check_order(ints, 5, int_order);
    check_order(descending, 3, descending_order);
    check_order(doubles, 6, double_order);
    check_order(texts, 7, text_order);
    check_order(reversed, 4, reversed_order);
}

static void test_misuse(void) {
    ydb_database *db;
    ydb_connection *conn;
    ydb_view_definition def = YDB_VIEW_DEFINITION_INIT;
    view_counter counter = {0};
    REQUIRE_OK(ydb_database_open(NULL, &db));
    REQUIRE_OK(ydb_connection_open(db, &conn));
    def.grouping = group_all;
    def.grouping_flavour = YDB_FLAVOUR_OBJECT;
    def.sorting_flavour = YDB_FLAVOUR_OBJECT;
    /* Neither or both orders. */
    CHECK_RC(ydb_view_register(db, "v", &def, &counter, counter_destroy), YDB_INVALID_ARGUMENT);
    CHECK(counter.destroyed == 1);
    def.sorting = sort_by_suffix;
    def.sort_key = key_from_object;
    CHECK_RC(ydb_view_register(db, "v", &def, &counter, counter_destroy), YDB_INVALID_ARGUMENT);
    CHECK(counter.destroyed == 2);
    def.sorting = NULL;
    CHECK_OK(ydb_view_register(db, "v", &def, NULL, NULL));
    CHECK_OK(set_row(conn, "c", "k1", "i1"));
    /* A handle kept past its callback, or never given out. */
    CHECK(kept_handle != NULL);
    CHECK_RC(ydb_sort_key_append_int64(kept_handle, 1, 0), YDB_MISUSE);
    CHECK_RC(ydb_sort_key_append_text(NULL, "a", 0), YDB_MISUSE);
    CHECK_RC(ydb_sort_key_append_raw((ydb_sort_key *)(uintptr_t)0x1234560, "a", 1), YDB_MISUSE);
    /* Invalid UTF-8 text fails the callback and the write. */
    CHECK_RC(set_row(conn, "c", "k2", "x"), YDB_CALLBACK_FAILED);
    CHECK_RC(set_row(conn, "c", "k2", "y"), YDB_CALLBACK_FAILED);
    CHECK_RC(set_row(conn, "c", "k3", "?"), YDB_CALLBACK_FAILED);
    CHECK(group_count(conn, "v", "g") == 1);
    ydb_connection_close(conn);
    ydb_database_close(db);
}

/* A population asks its callbacks a batch of rows at a time (256 in a
** release build): over rows spanning several batches, with rows left out
** and ties, views registered over existing rows hold what the same views
** built commit by commit hold, with each callback called once per row. */
static void test_population_matches_commits(void) {
    static const char *groups[] = {"a", "b", "c", "x"};
    static char left[16384], right[16384];
    ydb_database *db;
    ydb_connection *conn;
    ydb_txn *txn;
    view_counter built_cmp = {0}, built_key = {0}, pop_cmp = {0}, pop_key = {0}, failing = {0};
    int i, rows = 0, grouped = 0;
    REQUIRE_OK(ydb_database_open(NULL, &db));
    REQUIRE_OK(ydb_connection_open(db, &conn));
    REQUIRE_OK(register_standard(db, "built_cmp", "1", 1, &built_cmp));
    REQUIRE_OK(register_keyed(db, "built_key", "1", &built_key));
    for (i = 0; i < 700; i++) {
        char key[16], object[32];
        if (i % 100 == 0) REQUIRE_OK(ydb_txn_begin_read_write(conn, &txn));
        snprintf(key, sizeof key, "k%u", next_random(650));
        /* No ties: rows that sort equal keep the order they arrived in,
        ** which differs (a population reads rows in the order they were
        ** first stored). */
        snprintf(object, sizeof object, "%s:%.*s%s", groups[next_random(4)], (int)next_random(4),
                 "zzzz" + next_random(2), key);
        CHECK_OK(ydb_txn_set_object(txn, "c", key, object, strlen(object), NULL, 0));
        if (i % 100 == 99) REQUIRE_OK(ydb_txn_commit(txn));
    }
    REQUIRE_OK(ydb_txn_begin_read(conn, &txn));
    for (i = 0; i < 650; i++) {
        char key[16], *object = NULL;
        size_t size = 0;
        snprintf(key, sizeof key, "k%d", i);
        if (ydb_txn_get_object(txn, "c", key, (void **)&object, &size) != YDB_OK || object == NULL) continue;
        rows++;
        if (object[0] != 'x') grouped++;
        ydb_free(object);
    }
    ydb_txn_end(txn);
    CHECK(rows > 300 && grouped < rows);
    REQUIRE_OK(register_standard(db, "pop_cmp", "1", 1, &pop_cmp));
    REQUIRE_OK(register_keyed(db, "pop_key", "1", &pop_key));
    CHECK(pop_key.grouping_calls == rows && pop_key.sorting_calls == grouped);
    CHECK(pop_cmp.grouping_calls == rows);
    REQUIRE_OK(ydb_txn_begin_read(conn, &txn));
    dump(txn, "built_cmp", left, sizeof left);
    dump(txn, "pop_cmp", right, sizeof right);
    CHECK(strcmp(left, right) == 0);
    dump(txn, "built_key", right, sizeof right);
    CHECK(strcmp(left, right) == 0);
    dump(txn, "pop_key", right, sizeof right);
    CHECK(strcmp(left, right) == 0);
    ydb_txn_end(txn);
    /* A key callback failing part-way fails the registration, naming it. */
    failing.fail_sorting = 1;
    CHECK_RC(register_keyed(db, "failing", "1", &failing), YDB_CALLBACK_FAILED);
    CHECK(strstr(ydb_errmsg(), "sort_key callback failed") != NULL);
    ydb_connection_close(conn);
    ydb_database_close(db);
}

int main(void) {
    test_same_order_and_changesets();
    test_population_matches_commits();
    test_keys_survive_reopen();
    test_encodings_keep_value_order();
    test_misuse();
    return check_summary();
}
