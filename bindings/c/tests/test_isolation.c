/*
** test_isolation.c -- snapshot isolation between connections, long-lived
** read transactions reporting exactly the skipped commits, and rollback.
*/
#include "check.h"

static void test_reader_keeps_its_snapshot(ydb_connection *writer,
                                           ydb_connection *reader) {
    ydb_txn *read = NULL;
    uint64_t seen = 0, now = 0;
    size_t count = 0;

    REQUIRE_OK(put(writer, "iso", "a", "v1", NULL));
    REQUIRE_OK(ydb_txn_begin_read(reader, &read));
    CHECK_OK(ydb_txn_snapshot(read, &seen));
    CHECK(object_is(read, "iso", "a", "v1"));

    /* The writer commits twice while the reader's transaction is open. */
    CHECK_OK(put(writer, "iso", "a", "v2", NULL));
    CHECK_OK(put(writer, "iso", "b", "new", NULL));

    CHECK(object_is(read, "iso", "a", "v1"));
    CHECK_OK(ydb_txn_count(read, "iso", &count));
    CHECK(count == 1);
    CHECK_OK(ydb_txn_snapshot(read, &now));
    CHECK(now == seen);
    CHECK_OK(ydb_txn_end(read));

    /* A new transaction sees the newest snapshot. */
    REQUIRE_OK(ydb_txn_begin_read(reader, &read));
    CHECK_OK(ydb_txn_snapshot(read, &now));
    CHECK(now == seen + 2);
    CHECK(object_is(read, "iso", "a", "v2"));
    CHECK(object_is(read, "iso", "b", "new"));
    CHECK_OK(ydb_txn_end(read));
}

static void test_uncommitted_writes_are_invisible(ydb_connection *writer,
                                                  ydb_connection *reader) {
    ydb_txn *write = NULL;

    REQUIRE_OK(ydb_txn_begin_read_write(writer, &write));
    CHECK_OK(ydb_txn_set_object(write, "iso", "pending", "p", 1, NULL, 0));
    CHECK(missing(reader, "iso", "pending"));
    CHECK_OK(ydb_txn_commit(write));
    CHECK(reads_as(reader, "iso", "pending", "p"));
}

static void test_rollback(ydb_database *db, ydb_connection *conn) {
    ydb_txn *write = NULL;
    uint64_t before = 0, after = 0;

    REQUIRE_OK(put(conn, "rb", "keep", "original", NULL));
    CHECK_OK(ydb_database_snapshot(db, &before));
    REQUIRE_OK(ydb_txn_begin_read_write(conn, &write));
    CHECK_OK(ydb_txn_set_object(write, "rb", "keep", "changed", 7, NULL, 0));
    CHECK_OK(ydb_txn_set_object(write, "rb", "added", "x", 1, NULL, 0));
    CHECK_OK(ydb_txn_remove_all_objects_in_all_collections(write));
    CHECK_OK(ydb_txn_rollback(write));
    CHECK_OK(ydb_database_snapshot(db, &after));
    CHECK(after == before);
    CHECK(reads_as(conn, "rb", "keep", "original"));
    CHECK(missing(conn, "rb", "added"));

    /* ydb_txn_end on a read-write transaction rolls back too. */
    REQUIRE_OK(ydb_txn_begin_read_write(conn, &write));
    CHECK_OK(ydb_txn_set_object(write, "rb", "keep", "changed", 7, NULL, 0));
    CHECK_OK(ydb_txn_end(write));
    CHECK(reads_as(conn, "rb", "keep", "original"));

    /* The connection is usable again after a rollback. */
    CHECK_OK(put(conn, "rb", "later", "ok", NULL));
    CHECK(reads_as(conn, "rb", "later", "ok"));
}

/* Commits `n` single-row writes "ll"/"k<i>". */
static void commit_rows(ydb_connection *writer, int first, int n) {
    int i;
    char key[16];
    for (i = first; i < first + n; i++) {
        snprintf(key, sizeof key, "k%d", i);
        CHECK_OK(put(writer, "ll", key, "v", NULL));
    }
}

static void test_long_lived_read(ydb_database *db, ydb_connection *writer,
                                 ydb_connection *ui) {
    ydb_notification_list *skipped = NULL;
    const ydb_notification *item = NULL;
    uint64_t start = 0, snapshot = 0, db_snapshot = 0;
    size_t count = 99;
    int flag = -1;
    size_t i;

    CHECK_OK(ydb_connection_is_in_long_lived_read(ui, &flag));
    CHECK(flag == 0);
    /* The first call reports the commits since the connection last read. */
    CHECK(missing(ui, "ll", "k0")); /* catch up */
    commit_rows(writer, 100, 2);
    CHECK_OK(ydb_connection_begin_long_lived_read(ui, &skipped));
    CHECK_OK(ydb_notification_list_count(skipped, &count));
    CHECK(count == 2);
    ydb_notification_list_free(skipped);
    CHECK_OK(ydb_connection_is_in_long_lived_read(ui, &flag));
    CHECK(flag == 1);
    CHECK_OK(ydb_connection_snapshot(ui, &start));

    commit_rows(writer, 0, 3);

    /* Still on the bookmarked snapshot. */
    CHECK_OK(ydb_connection_snapshot(ui, &snapshot));
    CHECK(snapshot == start);
    CHECK(missing(ui, "ll", "k0"));

    /* Moving forward reports exactly the three commits, oldest first. */
    CHECK_OK(ydb_connection_begin_long_lived_read(ui, &skipped));
    CHECK_OK(ydb_notification_list_count(skipped, &count));
    CHECK(count == 3);
    for (i = 0; i < count; i++) {
        CHECK_OK(ydb_notification_list_get(skipped, i, &item));
        CHECK_OK(ydb_notification_snapshot(item, &snapshot));
        CHECK(snapshot == start + 1 + i);
    }
    CHECK_RC(ydb_notification_list_get(skipped, count, &item),
             YDB_INVALID_ARGUMENT);
    CHECK(item == NULL);
    CHECK_OK(ydb_notification_list_has_change(skipped, "ll", "k1", &flag));
    CHECK(flag == 1);
    CHECK_OK(ydb_notification_list_has_change(skipped, "ll", "zz", &flag));
    CHECK(flag == 0);
    CHECK_OK(ydb_notification_list_has_change_in_collection(skipped, "ll",
                                                            &flag));
    CHECK(flag == 1);
    CHECK_OK(ydb_notification_list_has_change_in_collection(skipped, "other",
                                                            &flag));
    CHECK(flag == 0);
    CHECK_OK(ydb_notification_list_get(skipped, 0, &item));
    ydb_notification_list_free(skipped);
    /* Items are borrowed from the list: gone with it. */
    CHECK_RC(ydb_notification_snapshot(item, &snapshot), YDB_MISUSE);

    CHECK_OK(ydb_database_snapshot(db, &db_snapshot));
    CHECK_OK(ydb_connection_snapshot(ui, &snapshot));
    CHECK(snapshot == db_snapshot);
    CHECK(reads_as(ui, "ll", "k2", "v"));

    /* One more commit: exactly one notification. */
    commit_rows(writer, 3, 1);
    CHECK_OK(ydb_connection_begin_long_lived_read(ui, &skipped));
    CHECK_OK(ydb_notification_list_count(skipped, &count));
    CHECK(count == 1);
    ydb_notification_list_free(skipped);

    /* No commits: an empty list; NULL discards the list. */
    CHECK_OK(ydb_connection_begin_long_lived_read(ui, &skipped));
    CHECK_OK(ydb_notification_list_count(skipped, &count));
    CHECK(count == 0);
    ydb_notification_list_free(skipped);
    commit_rows(writer, 4, 2);
    CHECK_OK(ydb_connection_begin_long_lived_read(ui, NULL));
    CHECK(reads_as(ui, "ll", "k5", "v"));

    CHECK_OK(ydb_connection_end_long_lived_read(ui));
    CHECK_OK(ydb_connection_is_in_long_lived_read(ui, &flag));
    CHECK(flag == 0);
    CHECK_OK(ydb_connection_end_long_lived_read(ui)); /* not in one: fine */
    commit_rows(writer, 6, 1);
    CHECK(reads_as(ui, "ll", "k6", "v"));
    ydb_notification_list_free(NULL);
}

int main(void) {
    ydb_database *db = NULL;
    ydb_connection *writer = NULL, *reader = NULL;

    REQUIRE_OK(ydb_database_open(NULL, &db));
    REQUIRE_OK(ydb_connection_open(db, &writer));
    REQUIRE_OK(ydb_connection_open(db, &reader));

    test_reader_keeps_its_snapshot(writer, reader);
    test_uncommitted_writes_are_invisible(writer, reader);
    test_rollback(db, writer);
    test_long_lived_read(db, writer, reader);

    CHECK_OK(ydb_connection_close(reader));
    CHECK_OK(ydb_connection_close(writer));
    CHECK_OK(ydb_database_close(db));
    return check_summary();
}
