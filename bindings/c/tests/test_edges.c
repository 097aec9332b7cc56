/*
** test_edges.c -- the engine's edges: values SQLite cannot store
** (YDB_TOOBIG), one Database per database file, and a second writer on the
** thread that already writes (YDB_MISUSE, never a hang).
*/
#define _POSIX_C_SOURCE 200809L /* setenv, mkdtemp, symlink, fork */
#include <signal.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"

/* A regression that hangs fails the test instead (ctest would wait). */
static void on_alarm(int sig) {
    (void)sig;
    static const char message[] = "test_edges: timed out (a call hung)\n";
    if (write(2, message, sizeof message - 1) < 0) _exit(3);
    _exit(2);
}

static char directory[64];

static void path_in_directory(char *out, size_t size, const char *name) {
    snprintf(out, size, "%s/%s", directory, name);
}

/* True when the metadata of (collection, key) is exactly `want`. */
static int metadata_is(ydb_connection *conn, const char *collection,
                       const char *key, const char *want) {
    ydb_txn *txn = NULL;
    void *data = NULL;
    size_t size = 0;
    int same = 0;
    if (ydb_txn_begin_read(conn, &txn) != YDB_OK) return 0;
    if (ydb_txn_get_metadata(txn, collection, key, &data, &size) == YDB_OK) {
        same = size == strlen(want) && memcmp(data, want, size) == 0;
        ydb_free(data);
    }
    ydb_txn_end(txn);
    return same;
}

/* ---- 1. values SQLite cannot store ---- */

static void test_too_big(void) {
    enum { limit = 4096 };
    ydb_database *db = NULL;
    ydb_connection *conn = NULL;
    ydb_txn *txn = NULL;
    char *big = malloc(limit + 1);
    memset(big, 'x', limit + 1);

    CHECK(strcmp(ydb_errstr(YDB_TOOBIG), "unknown error") != 0);
    setenv("YDBVIEW_MAX_VALUE_BYTES", "4096", 1);
    REQUIRE_OK(ydb_database_open(NULL, &db));
    unsetenv("YDBVIEW_MAX_VALUE_BYTES"); /* read at open: this db keeps it */
    REQUIRE_OK(ydb_connection_open(db, &conn));
    REQUIRE_OK(put(conn, "c", "k", "small", "meta"));

    REQUIRE_OK(ydb_txn_begin_read_write(conn, &txn));
    /* An object over the limit: refused, sizes named. */
    CHECK_RC(ydb_txn_set_object(txn, "c", "k", big, limit + 1, NULL, 0), YDB_TOOBIG);
    CHECK(strstr(ydb_errmsg(), "4097") != NULL && strstr(ydb_errmsg(), "4096") != NULL);
    CHECK_RC(ydb_txn_set_object(txn, "c", "new", big, limit + 1, NULL, 0), YDB_TOOBIG);
    CHECK_RC(ydb_txn_replace_object(txn, "c", "k", big, limit + 1), YDB_TOOBIG);
    /* Metadata over the limit: refused, not stored as NULL. */
    CHECK_RC(ydb_txn_set_object(txn, "c", "k", "o", 1, big, limit + 1), YDB_TOOBIG);
    CHECK_RC(ydb_txn_replace_metadata(txn, "c", "k", big, limit + 1), YDB_TOOBIG);
    CHECK(strstr(ydb_errmsg(), "metadata") != NULL);
    /* Parts that fit but a row that does not. */
    CHECK_RC(ydb_txn_set_object(txn, "c", "k", big, limit / 2 + 1, big, limit / 2 + 1),
             YDB_TOOBIG);
    /* Nothing was written and the transaction goes on. */
    CHECK(object_is(txn, "c", "k", "small"));
    CHECK_OK(ydb_txn_set_object(txn, "c", "other", "fits", 4, NULL, 0));
    CHECK_OK(ydb_txn_commit(txn));
    CHECK(reads_as(conn, "c", "k", "small"));
    CHECK(metadata_is(conn, "c", "k", "meta"));
    CHECK(missing(conn, "c", "new"));
    CHECK(reads_as(conn, "c", "other", "fits"));

    CHECK_OK(ydb_connection_close(conn));
    CHECK_OK(ydb_database_close(db));
    free(big);
}

int main(void) {
    signal(SIGALRM, on_alarm);
    alarm(60);
    snprintf(directory, sizeof directory, "/tmp/ydbview-edges-XXXXXX");
    if (mkdtemp(directory) == NULL) return 1;
    (void)path_in_directory;

    test_too_big();

    rmdir(directory);
    return check_summary();
}
