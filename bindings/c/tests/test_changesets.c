/*
** test_changesets.c -- changesets through the C ABI: a top-20 fixed range
** with an insert at 5 (exact index paths), moves between groups, updates,
** section changes, several commits at once, mismatched mappings, and the
** ownership of what a changeset lends out.
*/
#define _POSIX_C_SOURCE 200809L
#include "view_helpers.h"

static const char *V = "byGroup";


static void setup(fixture *f) { open_fixture(f, V, ""); }

static void teardown(fixture *f) {
    ydb_connection_close(f->reader);
    ydb_connection_close(f->writer);
    ydb_database_close(f->db);
}

/* Moves the reader to the newest snapshot and updates the mappings there. */
static void update(fixture *f, ydb_mappings *m) {
    ydb_txn *txn;
    REQUIRE_OK(ydb_connection_begin_long_lived_read(f->reader, NULL));
    REQUIRE_OK(ydb_txn_begin_read(f->reader, &txn));
    REQUIRE_OK(ydb_mappings_update(m, txn));
    ydb_txn_end(txn);
}

/* Moves the reader forward and computes the changeset for what it skipped. */
static int changes(fixture *f, ydb_mappings *m, ydb_changeset **out) {
    ydb_notification_list *skipped = NULL;
    int rc;
    REQUIRE_OK(ydb_connection_begin_long_lived_read(f->reader, &skipped));
    rc = ydb_changeset_new(m, skipped, out);
    ydb_notification_list_free(skipped);
    return rc;
}

static size_t row_count(ydb_changeset *cs) {
    size_t n = 99;
    CHECK_OK(ydb_changeset_row_change_count(cs, &n));
    return n;
}

static int row_type(ydb_changeset *cs, size_t i) {
    int type = -1;
    CHECK_OK(ydb_changeset_row_type(cs, i, &type));
    return type;
}

/* The row change's index path (old) is (section, row); -1s mean "none". */
static int path_is(ydb_changeset *cs, size_t i, long section, long row, int new_path) {
    size_t s = 77, r = 77;
    int rc = new_path ? ydb_changeset_row_new_index_path(cs, i, &s, &r)
                      : ydb_changeset_row_index_path(cs, i, &s, &r);
    if (section < 0) return rc == YDB_NOTFOUND && s == 0 && r == 0;
    return rc == YDB_OK && (long)s == section && (long)r == row;
}

static int key_is(ydb_changeset *cs, size_t i, const char *want) {
    const char *key = (const char *)1;
    int rc = ydb_changeset_row_key(cs, i, &key);
    if (want == NULL) return rc == YDB_NOTFOUND && key == NULL;
    return rc == YDB_OK && strcmp(key, want) == 0;
}

/* ydb_changeset_row must give what the per-field accessors give, for every
** row change; then the changeset is freed. */
typedef int (*path_fn)(const ydb_changeset *, size_t, size_t *, size_t *);
typedef int (*text_fn)(const ydb_changeset *, size_t, const char **);

static int same_path(ydb_changeset *cs, size_t i, path_fn read, size_t want_s, size_t want_r) {
    size_t s = 0, r = 0;
    int rc = read(cs, i, &s, &r);
    if (rc == YDB_NOTFOUND) return want_s == YDB_NO_INDEX && want_r == YDB_NO_INDEX;
    return rc == YDB_OK && s == want_s && r == want_r;
}

static int same_text(ydb_changeset *cs, size_t i, text_fn read, const char *want) {
    const char *text = NULL;
    int rc = read(cs, i, &text);
    if (rc == YDB_NOTFOUND) return want == NULL;
    return rc == YDB_OK && want == text;   /* the same borrowed string */
}

static void free_checked(ydb_changeset *cs) {
    size_t n = 0;
    ydb_row_change c;
    int type;
    unsigned int flags;
    CHECK_OK(ydb_changeset_row_change_count(cs, &n));
    for (size_t i = 0; i < n; i++) {
        CHECK_OK(ydb_changeset_row(cs, i, &c));
        CHECK_OK(ydb_changeset_row_type(cs, i, &type));
        CHECK(c.type == type);
        CHECK_OK(ydb_changeset_row_changes(cs, i, &flags));
        CHECK(c.changes == flags);
        CHECK(same_path(cs, i, ydb_changeset_row_index_path, c.section, c.row));
        CHECK(same_path(cs, i, ydb_changeset_row_new_index_path, c.new_section, c.new_row));
        CHECK(same_path(cs, i, ydb_changeset_row_original_position, c.original_section, c.original_row));
        CHECK(same_path(cs, i, ydb_changeset_row_final_position, c.final_section, c.final_row));
        CHECK(same_text(cs, i, ydb_changeset_row_original_group, c.original_group));
        CHECK(same_text(cs, i, ydb_changeset_row_final_group, c.final_group));
        CHECK(same_text(cs, i, ydb_changeset_row_collection, c.collection));
        CHECK(same_text(cs, i, ydb_changeset_row_key, c.key));
    }
    /* Out of range: an error, and the struct cleared. */
    c.type = 9;
    CHECK(ydb_changeset_row(cs, n, &c) == YDB_INVALID_ARGUMENT);
    CHECK(c.type == 0 && c.section == YDB_NO_INDEX && c.key == NULL);
    CHECK(ydb_changeset_row(cs, 0, NULL) == YDB_MISUSE);
    ydb_changeset_free(cs);
}

/* ---- the top 20 with an insert at 5 ---- */

static void test_top20(void) {
    fixture f;
    ydb_mappings *m = NULL;
    ydb_changeset *cs = NULL;
    const char *groups[] = {"g"};
    const char *collection = NULL;
    ydb_txn *txn;
    char key[8], object[16];
    unsigned int flags = 0;
    int i;

    setup(&f);
    REQUIRE_OK(ydb_txn_begin_read_write(f.writer, &txn));
    for (i = 0; i < 25; i++) {
        sprintf(key, "k%02d", i * 10);
        sprintf(object, "g:%03d", i * 10);
        CHECK_OK(ydb_txn_set_object(txn, "c", key, object, strlen(object), NULL, 0));
    }
    CHECK_OK(ydb_txn_commit(txn));
    CHECK_OK(ydb_mappings_new(V, groups, 1, &m));
    CHECK_OK(ydb_mappings_set_range_fixed(m, "g", 20, 0, YDB_PIN_BEGINNING));
    update(&f, m);

    /* Sort key 045 lands at index 5. */
    CHECK_OK(set_row(f.writer, "c", "new", "g:045"));
    CHECK_OK(changes(&f, m, &cs));
    CHECK(row_count(cs) == 2);
    CHECK(row_type(cs, 0) == YDB_CHANGE_DELETE);
    CHECK(path_is(cs, 0, 0, 19, 0));
    CHECK(path_is(cs, 0, -1, -1, 1));
    CHECK(key_is(cs, 0, NULL)); /* the old #20 itself did not change */
    CHECK_RC(ydb_changeset_row_collection(cs, 0, &collection), YDB_NOTFOUND);
    CHECK(row_type(cs, 1) == YDB_CHANGE_INSERT);
    CHECK(path_is(cs, 1, 0, 5, 1));
    CHECK(path_is(cs, 1, -1, -1, 0));
    CHECK(key_is(cs, 1, "new"));
    CHECK_OK(ydb_changeset_row_collection(cs, 1, &collection));
    CHECK(strcmp(collection, "c") == 0);
    CHECK_OK(ydb_changeset_row_changes(cs, 1, &flags));
    CHECK(flags == (YDB_CHANGED_OBJECT | YDB_CHANGED_METADATA));
    {
        size_t n = 9;
        CHECK_OK(ydb_changeset_section_change_count(cs, &n));
        CHECK(n == 0);
    }
    free_checked(cs);
    ydb_mappings_free(m);
    teardown(&f);
}

/* ---- moves, updates, sections, several commits ---- */

static void test_moves_and_updates(void) {
    fixture f;
    ydb_mappings *m = NULL;
    ydb_changeset *cs = NULL;
    const char *groups[] = {"a", "b", "c"};
    const char *group = NULL;
    ydb_txn *txn;
    size_t n = 0, section = 9, row = 9;
    unsigned int flags = 0;
    int type = 0, flag = -1;

    setup(&f);
    CHECK_OK(set_row(f.writer, "c", "a0", "a:0"));
    CHECK_OK(set_row(f.writer, "c", "a1", "a:1"));
    CHECK_OK(set_row(f.writer, "c", "b0", "b:0"));
    CHECK_OK(ydb_mappings_new(V, groups, 3, &m));
    CHECK_OK(ydb_mappings_set_dynamic_section(m, "c", 1));
    update(&f, m);

    /* a0 moves from a to b (after b0). */
    CHECK_OK(set_row(f.writer, "c", "a0", "b:1"));
    CHECK_OK(changes(&f, m, &cs));
    CHECK(row_count(cs) == 1);
    CHECK(row_type(cs, 0) == YDB_CHANGE_MOVE);
    CHECK(path_is(cs, 0, 0, 0, 0));
    CHECK(path_is(cs, 0, 1, 1, 1));
    CHECK_OK(ydb_changeset_row_original_group(cs, 0, &group));
    CHECK(strcmp(group, "a") == 0);
    CHECK_OK(ydb_changeset_row_final_group(cs, 0, &group));
    CHECK(strcmp(group, "b") == 0);
    CHECK_OK(ydb_changeset_row_original_position(cs, 0, &section, &row));
    CHECK(section == 0 && row == 0);
    CHECK_OK(ydb_changeset_row_final_position(cs, 0, &section, &row));
    CHECK(section == 1 && row == 1);
    CHECK(key_is(cs, 0, "a0"));
    free_checked(cs);

    /* A metadata-only change with object-flavour callbacks: an update, no
    ** callback runs. */
    {
        int calls = f.counter.grouping_calls + f.counter.sorting_calls;
        REQUIRE_OK(ydb_txn_begin_read_write(f.writer, &txn));
        CHECK_OK(ydb_txn_replace_metadata(txn, "c", "b0", "m", 1));
        CHECK_OK(ydb_txn_commit(txn));
        CHECK(f.counter.grouping_calls + f.counter.sorting_calls == calls);
    }
    CHECK_OK(changes(&f, m, &cs));
    CHECK(row_count(cs) == 1);
    CHECK(row_type(cs, 0) == YDB_CHANGE_UPDATE);
    CHECK(path_is(cs, 0, 1, 0, 0));
    CHECK(path_is(cs, 0, -1, -1, 1)); /* an update has no new index path */
    CHECK_OK(ydb_changeset_row_final_position(cs, 0, &section, &row));
    CHECK(section == 1 && row == 0);
    CHECK_OK(ydb_changeset_row_changes(cs, 0, &flags));
    CHECK(flags == YDB_CHANGED_METADATA);
    free_checked(cs);

    /* A dynamic section appears; two commits give one changeset. */
    CHECK_OK(set_row(f.writer, "c", "c0", "c:0"));
    CHECK_OK(set_row(f.writer, "c", "c1", "c:1"));
    CHECK_OK(changes(&f, m, &cs));
    CHECK_OK(ydb_changeset_section_change_count(cs, &n));
    CHECK(n == 1);
    CHECK_OK(ydb_changeset_section_change(cs, 0, &type, &section, &group));
    CHECK(type == YDB_SECTION_INSERT && section == 2 && strcmp(group, "c") == 0);
    CHECK_OK(ydb_changeset_section_change(cs, 0, NULL, NULL, NULL));
    CHECK_RC(ydb_changeset_section_change(cs, 1, &type, &section, &group), YDB_INVALID_ARGUMENT);
    CHECK(type == 0 && group == NULL);
    CHECK(row_count(cs) == 2);
    CHECK(row_type(cs, 0) == YDB_CHANGE_INSERT && row_type(cs, 1) == YDB_CHANGE_INSERT);
    CHECK(path_is(cs, 0, 2, 0, 1) && path_is(cs, 1, 2, 1, 1));
    CHECK_RC(ydb_changeset_row_original_group(cs, 0, &group), YDB_NOTFOUND);
    CHECK(group == NULL);
    CHECK_RC(ydb_changeset_row_type(cs, 2, &type), YDB_INVALID_ARGUMENT);
    free_checked(cs);

    /* And vanishes. */
    REQUIRE_OK(ydb_txn_begin_read_write(f.writer, &txn));
    CHECK_OK(ydb_txn_remove_object(txn, "c", "c0"));
    CHECK_OK(ydb_txn_remove_object(txn, "c", "c1"));
    CHECK_OK(ydb_txn_commit(txn));
    CHECK_OK(changes(&f, m, &cs));
    CHECK_OK(ydb_changeset_section_change(cs, 0, &type, &section, &group));
    CHECK(type == YDB_SECTION_DELETE && section == 2);
    CHECK(row_count(cs) == 2 && row_type(cs, 0) == YDB_CHANGE_DELETE);
    free_checked(cs);

    /* Nothing for the mappings: an empty changeset; has_changes agrees. */
    CHECK_OK(set_row(f.writer, "c", "z0", "z:0"));
    {
        ydb_notification_list *skipped;
        REQUIRE_OK(ydb_connection_begin_long_lived_read(f.reader, &skipped));
        CHECK_OK(ydb_mappings_has_changes(m, skipped, &flag));
        CHECK(flag == 0);
        CHECK_OK(ydb_changeset_new(m, skipped, &cs));
        CHECK_OK(ydb_changeset_is_empty(cs, &flag));
        CHECK(flag == 1);
        free_checked(cs);
        ydb_notification_list_free(skipped);
    }
    CHECK_OK(set_row(f.writer, "c", "a2", "a:2"));
    {
        ydb_notification_list *skipped;
        REQUIRE_OK(ydb_connection_begin_long_lived_read(f.reader, &skipped));
        CHECK_OK(ydb_mappings_has_changes(m, skipped, &flag));
        CHECK(flag == 1);
        ydb_notification_list_free(skipped);
        /* Skipped without a changeset: update instead. */
        update(&f, m);
    }
    ydb_mappings_free(m);
    teardown(&f);
}

/* ---- mismatched mappings and notifications ---- */

static void test_mismatch(void) {
    fixture f;
    ydb_mappings *m = NULL, *never = NULL;
    ydb_changeset *cs = (ydb_changeset *)1;
    const char *groups[] = {"a"};
    ydb_notification_list *skipped = NULL, *second_only = NULL, *empty = NULL;
    const ydb_notification *second = NULL;
    uint64_t before = 0, after = 0;
    size_t n = 9;

    setup(&f);
    CHECK_OK(ydb_mappings_new(V, groups, 1, &m));
    CHECK_OK(ydb_mappings_new(V, groups, 1, &never));
    update(&f, m);
    CHECK_OK(ydb_mappings_snapshot_of_last_update(m, &before));
    CHECK_OK(set_row(f.writer, "c", "a0", "a:0"));
    CHECK_OK(set_row(f.writer, "c", "a1", "a:1"));
    REQUIRE_OK(ydb_connection_begin_long_lived_read(f.reader, &skipped));
    CHECK_OK(ydb_notification_list_count(skipped, &n));
    CHECK(n == 2);

    /* Only the second commit: a gap. */
    CHECK_OK(ydb_notification_list_get(skipped, 1, &second));
    CHECK_OK(ydb_notification_list_new(&second, 1, &second_only));
    CHECK_RC(ydb_changeset_new(m, second_only, &cs), YDB_MISMATCH);
    CHECK(cs == NULL);
    CHECK(strstr(ydb_errmsg(), "mismatched mappings and notifications") != NULL);
    CHECK_OK(ydb_mappings_snapshot_of_last_update(m, &after));
    CHECK(after == before); /* unchanged */
    CHECK_OK(ydb_mappings_number_of_items_in_section(m, 0, &n));
    CHECK(n == 0);

    /* Never updated. */
    CHECK_RC(ydb_changeset_new(never, skipped, &cs), YDB_MISMATCH);

    /* The right list works, then the same list again is a mismatch. */
    CHECK_OK(ydb_changeset_new(m, skipped, &cs));
    CHECK(row_count(cs) == 2);
    free_checked(cs);
    CHECK_RC(ydb_changeset_new(m, skipped, &cs), YDB_MISMATCH);
    CHECK_OK(ydb_mappings_number_of_items_in_section(m, 0, &n));
    CHECK(n == 2);

    /* An empty list: an empty changeset, mappings unchanged. */
    CHECK_OK(ydb_notification_list_new(NULL, 0, &empty));
    CHECK_OK(ydb_changeset_new(m, empty, &cs));
    CHECK(row_count(cs) == 0);
    free_checked(cs);

    /* Misuse. */
    CHECK_RC(ydb_changeset_new(NULL, skipped, &cs), YDB_MISUSE);
    CHECK_RC(ydb_changeset_new(m, NULL, &cs), YDB_MISUSE);
    CHECK_RC(ydb_changeset_new(m, skipped, NULL), YDB_MISUSE);
    CHECK_RC(ydb_notification_list_new(NULL, 2, &empty), YDB_INVALID_ARGUMENT);
    CHECK_RC(ydb_changeset_row_change_count(NULL, &n), YDB_MISUSE);
    ydb_changeset_free(NULL);
    ydb_changeset_free(cs); /* already freed: refused */
    CHECK(ydb_errcode() == YDB_MISUSE);

    ydb_notification_list_free(empty);
    ydb_notification_list_free(second_only);
    ydb_notification_list_free(skipped);
    ydb_mappings_free(never);
    ydb_mappings_free(m);
    teardown(&f);
}

/* ---- ownership: borrowed strings outlive mappings and lists ---- */

static void test_ownership(void) {
    fixture f;
    ydb_mappings *m = NULL;
    ydb_changeset *cs = NULL;
    const char *groups[] = {"a"};
    const char *key = NULL, *group = NULL;

    setup(&f);
    CHECK_OK(ydb_mappings_new(V, groups, 1, &m));
    update(&f, m);
    CHECK_OK(set_row(f.writer, "c", "a0", "a:0"));
    CHECK_OK(changes(&f, m, &cs)); /* the list is freed inside */
    ydb_mappings_free(m);          /* the changeset does not need them */
    CHECK_OK(ydb_changeset_row_key(cs, 0, &key));
    CHECK_OK(ydb_changeset_row_final_group(cs, 0, &group));
    CHECK(strcmp(key, "a0") == 0 && strcmp(group, "a") == 0);
    free_checked(cs);
    teardown(&f);
}

int main(void) {
    test_top20();
    test_moves_and_updates();
    test_mismatch();
    test_ownership();
    return check_summary();
}
