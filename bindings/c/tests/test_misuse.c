/*
** test_misuse.c -- bad input never crashes: NULL, stale and closed handles,
** ended transactions, invalid UTF-8, hostile names, huge blobs, writes in a
** read transaction, nested transactions, re-entry from callbacks. Each gives
** an error code and leaves nothing half-applied.
*/
#include <unistd.h>

#include "check.h"

static const char invalid_utf8[] = {'b', 'a', 'd', (char)0xff, (char)0xfe, 0};
static const char overlong_nul[] = {(char)0xc0, (char)0x80, 0};
static const char lone_surrogate[] = {(char)0xed, (char)0xa0, (char)0x80, 0};

static void test_null_handles(void) {
    ydb_database *db = (ydb_database *)&db;
    ydb_connection *conn = (ydb_connection *)&conn;
    ydb_txn *txn = (ydb_txn *)&txn;
    uint64_t snapshot = 0;
    size_t count = 0;
    int flag = 0;
    void *data = NULL;
    const char *path = NULL;

    CHECK_RC(ydb_database_open(NULL, NULL), YDB_MISUSE);
    CHECK_RC(ydb_database_snapshot(NULL, &snapshot), YDB_MISUSE);
    CHECK(ydb_errcode() == YDB_MISUSE);
    CHECK(strstr(ydb_errmsg(), "NULL") != NULL);
    CHECK_RC(ydb_database_path(NULL, &path), YDB_MISUSE);
    CHECK(path == NULL);
    CHECK_RC(ydb_connection_open(NULL, &conn), YDB_MISUSE);
    CHECK(conn == NULL);
    CHECK_RC(ydb_connection_snapshot(NULL, &snapshot), YDB_MISUSE);
    CHECK_RC(ydb_connection_begin_long_lived_read(NULL, NULL), YDB_MISUSE);
    CHECK_RC(ydb_connection_end_long_lived_read(NULL), YDB_MISUSE);
    CHECK_RC(ydb_connection_is_in_long_lived_read(NULL, &flag), YDB_MISUSE);
    CHECK_RC(ydb_txn_begin_read(NULL, &txn), YDB_MISUSE);
    CHECK(txn == NULL);
    CHECK_RC(ydb_txn_begin_read_write(NULL, &txn), YDB_MISUSE);
    CHECK_RC(ydb_txn_commit(NULL), YDB_MISUSE);
    CHECK_RC(ydb_txn_get_object(NULL, "c", "k", &data, &count), YDB_MISUSE);
    CHECK_RC(ydb_txn_set_object(NULL, "c", "k", "v", 1, NULL, 0), YDB_MISUSE);
    CHECK_RC(ydb_txn_count_all(NULL, &count), YDB_MISUSE);
    CHECK_RC(ydb_notification_snapshot(NULL, &snapshot), YDB_MISUSE);
    CHECK_RC(ydb_notification_list_count(NULL, &count), YDB_MISUSE);

    /* Destructors accept NULL. */
    CHECK_OK(ydb_database_close(NULL));
    CHECK_OK(ydb_connection_close(NULL));
    CHECK_OK(ydb_txn_end(NULL));
    CHECK_OK(ydb_txn_rollback(NULL));
    ydb_free(NULL);
    ydb_notification_free(NULL);
    ydb_notification_list_free(NULL);

    /* Pointers the library never handed out. */
    CHECK_RC(ydb_database_snapshot(db, &snapshot), YDB_MISUSE);
    CHECK_RC(ydb_database_close(db), YDB_MISUSE);
    CHECK_RC(ydb_connection_close((ydb_connection *)&flag), YDB_MISUSE);
    CHECK_RC(ydb_txn_end((ydb_txn *)&count), YDB_MISUSE);
    ydb_notification_free((ydb_notification *)&count);
    ydb_notification_list_free((ydb_notification_list *)&count);
}

static void test_null_outputs(ydb_connection *conn) {
    ydb_txn *txn = NULL;
    size_t size = 0;
    void *data = NULL;

    CHECK_RC(ydb_txn_begin_read(conn, NULL), YDB_MISUSE);
    REQUIRE_OK(ydb_txn_begin_read(conn, &txn));
    CHECK_RC(ydb_txn_get_object(txn, "c", "k", NULL, &size), YDB_MISUSE);
    CHECK_RC(ydb_txn_get_object(txn, "c", "k", &data, NULL), YDB_MISUSE);
    CHECK_RC(ydb_txn_get_row(txn, "c", "k", &data, &size, &data, NULL),
             YDB_MISUSE);
    CHECK_RC(ydb_txn_count(txn, "c", NULL), YDB_MISUSE);
    CHECK_RC(ydb_txn_exists(txn, "c", "k", NULL), YDB_MISUSE);
    CHECK_RC(ydb_txn_snapshot(txn, NULL), YDB_MISUSE);
    CHECK_RC(ydb_txn_enumerate_keys(txn, "c", NULL, NULL),
             YDB_INVALID_ARGUMENT);
    CHECK_RC(ydb_txn_enumerate_rows(txn, "c", NULL, NULL),
             YDB_INVALID_ARGUMENT);
    CHECK_RC(ydb_txn_enumerate_collections(txn, NULL, NULL),
             YDB_INVALID_ARGUMENT);
    /* NULL names */
    CHECK_RC(ydb_txn_get_object(txn, NULL, "k", &data, &size),
             YDB_INVALID_ARGUMENT);
    CHECK_RC(ydb_txn_get_object(txn, "c", NULL, &data, &size),
             YDB_INVALID_ARGUMENT);
    CHECK_OK(ydb_txn_end(txn));
}

static void test_closed_and_stale(void) {
    ydb_database *db = NULL;
    ydb_connection *conn = NULL, *conn2 = NULL;
    ydb_txn *txn = NULL, *stale = NULL;
    uint64_t snapshot = 0;
    size_t count = 0;

    REQUIRE_OK(ydb_database_open(NULL, &db));
    REQUIRE_OK(ydb_connection_open(db, &conn));
    REQUIRE_OK(ydb_connection_open(db, &conn2));
    REQUIRE_OK(put(conn, "c", "k", "v", NULL));

    /* Use after end. */
    REQUIRE_OK(ydb_txn_begin_read(conn, &stale));
    CHECK_OK(ydb_txn_end(stale));
    CHECK_RC(ydb_txn_count_all(stale, &count), YDB_MISUSE);
    CHECK_RC(ydb_txn_end(stale), YDB_MISUSE);
    CHECK_RC(ydb_txn_commit(stale), YDB_MISUSE);
    REQUIRE_OK(ydb_txn_begin_read_write(conn, &stale));
    CHECK_OK(ydb_txn_commit(stale));
    CHECK_RC(ydb_txn_set_object(stale, "c", "k", "v", 1, NULL, 0), YDB_MISUSE);
    CHECK_RC(ydb_txn_rollback(stale), YDB_MISUSE);

    /* Close the connection under an open transaction: the transaction is
    ** finished, its handle still has to be ended, and it reports an error. */
    REQUIRE_OK(ydb_txn_begin_read(conn2, &txn));
    CHECK_OK(ydb_connection_close(conn2));
    CHECK(ydb_txn_count_all(txn, &count) != YDB_OK);
    CHECK_OK(ydb_txn_end(txn));
    CHECK_RC(ydb_connection_snapshot(conn2, &snapshot), YDB_MISUSE);
    CHECK_RC(ydb_connection_close(conn2), YDB_MISUSE);

    /* Close the database under a live connection and open transactions:
    ** YDB_CLOSED on the connection, the transactions are ended, and the
    ** write lock they held is released. */
    REQUIRE_OK(ydb_txn_begin_read(conn, &txn));
    REQUIRE_OK(ydb_connection_open(db, &conn2));
    REQUIRE_OK(ydb_txn_begin_read_write(conn2, &stale));
    CHECK_OK(ydb_txn_set_object(stale, "c", "never", "v", 1, NULL, 0));
    CHECK_OK(ydb_database_close(db));
    CHECK_RC(ydb_txn_count_all(txn, &count), YDB_CLOSED);
    CHECK(strstr(ydb_errmsg(), "its database was closed") != NULL);
    CHECK_OK(ydb_txn_end(txn));
    CHECK_RC(ydb_txn_commit(stale), YDB_CLOSED);
    CHECK_RC(ydb_txn_rollback(stale), YDB_MISUSE); /* commit freed it */
    CHECK_RC(ydb_txn_begin_read_write(conn2, &stale), YDB_CLOSED);
    CHECK_OK(ydb_connection_close(conn2));
    CHECK_RC(ydb_database_snapshot(db, &snapshot), YDB_MISUSE);
    CHECK_RC(ydb_database_close(db), YDB_MISUSE);
    CHECK_RC(ydb_txn_begin_read(conn, &txn), YDB_CLOSED);
    CHECK(txn == NULL);
    CHECK(ydb_errcode() == YDB_CLOSED);
    CHECK_OK(ydb_connection_close(conn));
}

static void test_invalid_utf8(ydb_connection *conn) {
    ydb_txn *txn = NULL;
    size_t count = 0;
    void *data = NULL;
    int exists = 0;
    ydb_database *db = NULL;

    CHECK_RC(ydb_database_open(invalid_utf8, &db), YDB_INVALID_ARGUMENT);
    CHECK(db == NULL);
    REQUIRE_OK(ydb_txn_begin_read_write(conn, &txn));
    CHECK_RC(ydb_txn_set_object(txn, invalid_utf8, "k", "v", 1, NULL, 0),
             YDB_INVALID_ARGUMENT);
    CHECK(strstr(ydb_errmsg(), "UTF-8") != NULL);
    CHECK_RC(ydb_txn_set_object(txn, "c", invalid_utf8, "v", 1, NULL, 0),
             YDB_INVALID_ARGUMENT);
    CHECK_RC(ydb_txn_set_object(txn, "c", overlong_nul, "v", 1, NULL, 0),
             YDB_INVALID_ARGUMENT);
    CHECK_RC(ydb_txn_set_object(txn, "c", lone_surrogate, "v", 1, NULL, 0),
             YDB_INVALID_ARGUMENT);
    CHECK_RC(ydb_txn_get_object(txn, "c", invalid_utf8, &data, &count),
             YDB_INVALID_ARGUMENT);
    CHECK_RC(ydb_txn_exists(txn, invalid_utf8, "k", &exists),
             YDB_INVALID_ARGUMENT);
    CHECK_RC(ydb_txn_count(txn, invalid_utf8, &count), YDB_INVALID_ARGUMENT);
    CHECK_RC(ydb_txn_remove_object(txn, "c", invalid_utf8),
             YDB_INVALID_ARGUMENT);
    CHECK_RC(ydb_txn_remove_all_objects(txn, invalid_utf8),
             YDB_INVALID_ARGUMENT);
    CHECK_RC(ydb_txn_touch_row(txn, invalid_utf8, "k"), YDB_INVALID_ARGUMENT);
    /* The transaction goes on and commits nothing bad. */
    CHECK_OK(ydb_txn_count_all(txn, &count));
    CHECK_OK(ydb_txn_commit(txn));
}

static void test_no_half_applied_writes(ydb_connection *conn) {
    ydb_txn *txn = NULL;
    size_t before = 0, after = 0;
    const char *keys[3] = {"h1", invalid_utf8, "h2"};
    const char *null_key[2] = {"h1", NULL};

    REQUIRE_OK(put(conn, "half", "h1", "1", NULL));
    REQUIRE_OK(put(conn, "half", "h2", "2", NULL));
    REQUIRE_OK(ydb_txn_begin_read_write(conn, &txn));
    CHECK_OK(ydb_txn_count(txn, "half", &before));
    CHECK_RC(ydb_txn_remove_objects(txn, "half", keys, 3),
             YDB_INVALID_ARGUMENT);
    CHECK_RC(ydb_txn_remove_objects(txn, "half", null_key, 2),
             YDB_INVALID_ARGUMENT);
    CHECK_RC(ydb_txn_remove_objects(txn, "half", NULL, 2),
             YDB_INVALID_ARGUMENT);
    CHECK_OK(ydb_txn_count(txn, "half", &after));
    CHECK(after == before && before == 2);
    /* NULL object with a size, metadata NULL with a size. */
    CHECK_RC(ydb_txn_set_object(txn, "half", "h1", NULL, 5, NULL, 0),
             YDB_INVALID_ARGUMENT);
    CHECK_RC(ydb_txn_set_object(txn, "half", "h1", "x", 1, NULL, 3),
             YDB_INVALID_ARGUMENT);
    CHECK_RC(ydb_txn_set_object(txn, "half", "h1", "x", (size_t)-1, NULL, 0),
             YDB_INVALID_ARGUMENT);
    CHECK_RC(ydb_txn_replace_object(txn, "half", "h1", NULL, 2),
             YDB_INVALID_ARGUMENT);
    CHECK(object_is(txn, "half", "h1", "1"));
    CHECK_OK(ydb_txn_commit(txn));
    CHECK(reads_as(conn, "half", "h1", "1"));
    CHECK(reads_as(conn, "half", "h2", "2"));
}

static void test_hostile_names(ydb_connection *conn) {
    static const char *names[] = {
        "",
        "'",
        "\"; DROP TABLE rows; --",
        "with space",
        "  leading and trailing  ",
        "Robert'); DELETE FROM x;--",
        "\xe2\x9c\x93 check",        /* U+2713 */
        "\xf0\x9f\x98\x80 emoji",    /* U+1F600 */
        "\xe6\x97\xa5\xe6\x9c\xac",  /* 日本 */
        "tab\there\nnewline",
        "%s%n%x",
        "back\\slash",
    };
    size_t n = sizeof names / sizeof names[0];
    size_t i, j, count = 0;
    ydb_txn *txn = NULL;

    REQUIRE_OK(ydb_txn_begin_read_write(conn, &txn));
    for (i = 0; i < n; i++)
        for (j = 0; j < n; j++)
            CHECK_OK(ydb_txn_set_object(txn, names[i], names[j], names[j],
                                        strlen(names[j]), names[i],
                                        strlen(names[i])));
    CHECK_OK(ydb_txn_commit(txn));

    REQUIRE_OK(ydb_txn_begin_read(conn, &txn));
    for (i = 0; i < n; i++) {
        CHECK_OK(ydb_txn_count(txn, names[i], &count));
        CHECK(count == n);
        for (j = 0; j < n; j++) CHECK(object_is(txn, names[i], names[j], names[j]));
    }
    CHECK_OK(ydb_txn_end(txn));

    REQUIRE_OK(ydb_txn_begin_read_write(conn, &txn));
    for (i = 0; i < n; i++) CHECK_OK(ydb_txn_remove_all_objects(txn, names[i]));
    CHECK_OK(ydb_txn_commit(txn));
}

static void test_huge_blob(ydb_connection *conn) {
    const size_t size = 16u * 1024u * 1024u;
    unsigned char *blob = (unsigned char *)malloc(size);
    void *back = NULL;
    size_t back_size = 0, i;
    ydb_txn *txn = NULL;

    if (blob == NULL) return;
    for (i = 0; i < size; i++) blob[i] = (unsigned char)(i * 31u + 7u);
    REQUIRE_OK(ydb_txn_begin_read_write(conn, &txn));
    CHECK_OK(ydb_txn_set_object(txn, "huge", "blob", blob, size, blob, 1024));
    CHECK_OK(ydb_txn_commit(txn));
    REQUIRE_OK(ydb_txn_begin_read(conn, &txn));
    CHECK_OK(ydb_txn_get_object(txn, "huge", "blob", &back, &back_size));
    CHECK(back_size == size && memcmp(back, blob, size) == 0);
    ydb_free(back);
    CHECK_OK(ydb_txn_end(txn));
    free(blob);
    REQUIRE_OK(ydb_txn_begin_read_write(conn, &txn));
    CHECK_OK(ydb_txn_remove_object(txn, "huge", "blob"));
    CHECK_OK(ydb_txn_commit(txn));
}

static void test_transaction_nesting(ydb_connection *conn) {
    ydb_txn *read = NULL, *write = NULL, *other = NULL;

    /* A write inside a read transaction. */
    REQUIRE_OK(ydb_txn_begin_read(conn, &read));
    CHECK_RC(ydb_txn_set_object(read, "n", "k", "v", 1, NULL, 0), YDB_MISUSE);
    CHECK_RC(ydb_txn_remove_all_objects_in_all_collections(read), YDB_MISUSE);
    CHECK_RC(ydb_txn_commit(read), YDB_MISUSE); /* handle stays valid */
    CHECK_RC(ydb_txn_begin_read_write(conn, &write), YDB_MISUSE);
    CHECK(write == NULL);
    CHECK_RC(ydb_txn_begin_read(conn, &other), YDB_MISUSE);
    CHECK_RC(ydb_connection_begin_long_lived_read(conn, NULL), YDB_MISUSE);
    CHECK(object_is(read, "n", "k", "v") == 0);
    CHECK_OK(ydb_txn_end(read));

    /* A nested write. */
    REQUIRE_OK(ydb_txn_begin_read_write(conn, &write));
    CHECK_OK(ydb_txn_set_object(write, "n", "k", "outer", 5, NULL, 0));
    CHECK_RC(ydb_txn_begin_read_write(conn, &other), YDB_MISUSE);
    CHECK(other == NULL);
    CHECK_RC(ydb_txn_begin_read(conn, &other), YDB_MISUSE);
    CHECK_OK(ydb_txn_commit(write));
    CHECK(reads_as(conn, "n", "k", "outer"));
}

/* ---- re-entry from a callback ---- */

typedef struct {
    ydb_connection *conn;
    ydb_txn *txn;
    int status_txn;
    int status_conn;
    int status_commit;
} reentry;

static int reenter(void *ctx, const char *key) {
    reentry *r = (reentry *)ctx;
    size_t count = 0;
    uint64_t snapshot = 0;
    (void)key;
    r->status_txn = ydb_txn_count_all(r->txn, &count);
    r->status_conn = ydb_connection_snapshot(r->conn, &snapshot);
    r->status_commit = ydb_txn_end(r->txn);
    return 1;
}

static void test_reentry(ydb_connection *conn) {
    reentry r;
    REQUIRE_OK(put(conn, "re", "k", "v", NULL));
    memset(&r, 0, sizeof r);
    r.conn = conn;
    REQUIRE_OK(ydb_txn_begin_read(conn, &r.txn));
    CHECK_OK(ydb_txn_enumerate_keys(r.txn, "re", reenter, &r));
    /* Reading inside an enumeration is fine; ending its transaction is not. */
    CHECK(r.status_txn == YDB_OK);
    CHECK(r.status_conn == YDB_OK);
    CHECK(r.status_commit == YDB_MISUSE);
    /* After the enumeration the transaction works again. */
    CHECK(object_is(r.txn, "re", "k", "v"));
    CHECK_OK(ydb_txn_end(r.txn));
}

static void test_error_state(void) {
    uint64_t snapshot = 0;
    CHECK_RC(ydb_database_snapshot(NULL, &snapshot), YDB_MISUSE);
    CHECK(ydb_errcode() == YDB_MISUSE);
    CHECK(strcmp(ydb_errmsg(), "not an error") != 0);
    CHECK_RC(ydb_database_close(NULL), YDB_OK);
    CHECK(ydb_errcode() == YDB_OK);
    CHECK(strcmp(ydb_errmsg(), "not an error") == 0);
}

/* A destructor given a live handle of another type must leave it alone:
** freeing a read-write transaction as a changeset used to orphan it, with
** the write lock held, and every later writer blocked. */
static void test_destructors_check_the_type(void) {
    ydb_database *db = NULL;
    ydb_connection *conn = NULL, *other = NULL;
    ydb_txn *txn = NULL, *next = NULL;
    REQUIRE_OK(ydb_database_open(NULL, &db));
    REQUIRE_OK(ydb_connection_open(db, &conn));
    REQUIRE_OK(ydb_connection_open(db, &other));
    REQUIRE_OK(ydb_txn_begin_read_write(conn, &txn));
    ydb_mappings_free((ydb_mappings *)txn);
    CHECK(ydb_errcode() == YDB_MISUSE);
    ydb_changeset_free((ydb_changeset *)txn);
    CHECK(ydb_errcode() == YDB_MISUSE);
    ydb_notification_list_free((ydb_notification_list *)txn);
    CHECK(ydb_errcode() == YDB_MISUSE);
    ydb_notification_free((ydb_notification *)txn);
    CHECK(ydb_errcode() == YDB_MISUSE);
    ydb_changeset_free((ydb_changeset *)db);
    CHECK(ydb_errcode() == YDB_MISUSE);
    ydb_mappings_free((ydb_mappings *)conn);
    CHECK(ydb_errcode() == YDB_MISUSE);
    /* ydb_free is for buffers: a handle, live or freed, is refused. */
    ydb_free(txn);
    CHECK(ydb_errcode() == YDB_MISUSE);
    ydb_free(db);
    CHECK(ydb_errcode() == YDB_MISUSE);
    {
        ydb_mappings *m = NULL;
        const char *group = "g";
        CHECK_OK(ydb_mappings_new("v", &group, 1, &m));
        ydb_mappings_free(m);
        ydb_free(m);
        CHECK(ydb_errcode() == YDB_MISUSE);
    }
    /* The transaction is still whole: it commits, and the lock is free. */
    CHECK_OK(ydb_txn_set_object(txn, "c", "k", "v", 1, NULL, 0));
    CHECK_OK(ydb_txn_commit(txn));
    CHECK_OK(ydb_txn_begin_read_write(other, &next));
    CHECK_OK(ydb_txn_commit(next));
    CHECK_OK(ydb_connection_close(other));
    CHECK_OK(ydb_connection_close(conn));
    CHECK_OK(ydb_database_close(db));
}

int main(void) {
    ydb_database *db = NULL;
    ydb_connection *conn = NULL;

    alarm(60); /* a regression here blocks forever: fail instead */
    test_null_handles();
    test_destructors_check_the_type();
    test_closed_and_stale();
    test_error_state();

    REQUIRE_OK(ydb_database_open(NULL, &db));
    REQUIRE_OK(ydb_connection_open(db, &conn));
    test_null_outputs(conn);
    test_invalid_utf8(conn);
    test_no_half_applied_writes(conn);
    test_hostile_names(conn);
    test_huge_blob(conn);
    test_transaction_nesting(conn);
    test_reentry(conn);
    CHECK_OK(ydb_connection_close(conn));
    CHECK_OK(ydb_database_close(db));
    return check_summary();
}
