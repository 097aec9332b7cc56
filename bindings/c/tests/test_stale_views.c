/*
** test_stale_views.c -- a persistent view that missed row changes is
** repopulated when registered again with the same version tag, and says so:
** changes made by this library while the view was not registered, and
** changes made by another SQLite client (here: plain sqlite3).
*/
#define _POSIX_C_SOURCE 200809L
#include <sqlite3.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"
#include "view_helpers.h"

static char path[] = "/tmp/ydbview-stale-XXXXXX";

static ydb_database *open_db(void) {
    ydb_database *db = NULL;
    REQUIRE_OK(ydb_database_open(path, &db));
    return db;
}

/* Registers the standard view "v" and returns its outcome (0 on failure). */
static int register_v(ydb_database *db, view_counter *counter) {
    int outcome = 0;
    if (register_standard(db, "v", "1", 1, counter) != YDB_OK) return 0;
    if (ydb_view_registration_outcome(db, "v", &outcome) != YDB_OK) return 0;
    return outcome;
}

static int schema_version(void) {
    sqlite3 *handle = NULL;
    sqlite3_stmt *statement = NULL;
    int version = -1;
    if (sqlite3_open(path, &handle) == SQLITE_OK &&
        sqlite3_prepare_v2(handle, "PRAGMA schema_version", -1, &statement, NULL) == SQLITE_OK &&
        sqlite3_step(statement) == SQLITE_ROW)
        version = sqlite3_column_int(statement, 0);
    sqlite3_finalize(statement);
    sqlite3_close(handle);
    return version;
}

static void write_rows(const char *prefix, int count) {
    ydb_database *db = open_db();
    ydb_connection *conn = NULL;
    int index;
    REQUIRE_OK(ydb_connection_open(db, &conn));
    for (index = 0; index < count; index++) {
        char key[32];
        snprintf(key, sizeof key, "%s%d", prefix, index);
        CHECK_OK(set_row(conn, "c", key, "g:5"));
    }
    ydb_connection_close(conn);
    ydb_database_close(db);
}

int main(void) {
    view_counter counter = {0};
    ydb_database *db;
    ydb_connection *conn = NULL;
    sqlite3 *other = NULL;
    int fd = mkstemp(path), outcome = 0;
    REQUIRE_OK(fd >= 0 ? YDB_OK : YDB_ERROR);
    close(fd);
    unlink(path);

    /* Built, then loaded as stored when nothing changed meanwhile. */
    db = open_db();
    CHECK(register_v(db, &counter) == YDB_VIEW_BUILT);
    CHECK_RC(ydb_view_registration_outcome(db, "nosuch", &outcome), YDB_NOTFOUND);
    CHECK(strstr(ydb_errmsg(), "no view named 'nosuch' is registered") != NULL);
    {   /* Reading through an unknown view names it too. */
        ydb_connection *reader = NULL;
        ydb_txn *txn = NULL;
        size_t count = 0;
        REQUIRE_OK(ydb_connection_open(db, &reader));
        REQUIRE_OK(ydb_txn_begin_read(reader, &txn));
        CHECK_RC(ydb_view_count_all(txn, "nosuch", &count), YDB_NOTFOUND);
        CHECK(strstr(ydb_errmsg(), "no view named 'nosuch'") != NULL);
        ydb_txn_end(txn);
        ydb_connection_close(reader);
    }
    REQUIRE_OK(ydb_connection_open(db, &conn));
    CHECK_OK(set_row(conn, "c", "a", "g:1"));
    CHECK_OK(set_row(conn, "c", "b", "g:2"));
    ydb_connection_close(conn);
    ydb_database_close(db);
    db = open_db();
    memset(&counter, 0, sizeof counter);
    CHECK(register_v(db, &counter) == YDB_VIEW_LOADED);
    CHECK(counter.grouping_calls == 0);
    ydb_database_close(db);

    /* Rows written by this library without the view: stale. Before, the view
    ** was loaded as it was: it counted 2 rows and its lookups failed. */
    write_rows("w", 2);
    db = open_db();
    REQUIRE_OK(ydb_connection_open(db, &conn));
    memset(&counter, 0, sizeof counter);
    CHECK(register_v(db, &counter) == YDB_VIEW_REBUILT_STALE);
    CHECK(counter.grouping_calls == 4);
    CHECK(group_count(conn, "v", "g") == 4);
    CHECK(key_at_is(conn, "v", "g", 0, "a"));
    CHECK(key_at_is(conn, "v", "g", 3, "w1"));
    ydb_connection_close(conn);
    ydb_database_close(db);

    /* Rows changed by another SQLite client: stale too. */
    REQUIRE_OK(sqlite3_open(path, &other) == SQLITE_OK ? YDB_OK : YDB_ERROR);
    CHECK(sqlite3_exec(other, "DELETE FROM ydb_rows WHERE key = 'a'", NULL, NULL, NULL) == SQLITE_OK);
    sqlite3_close(other);
    db = open_db();
    REQUIRE_OK(ydb_connection_open(db, &conn));
    CHECK(register_v(db, &counter) == YDB_VIEW_REBUILT_STALE);
    CHECK(group_count(conn, "v", "g") == 3);
    CHECK(key_at_is(conn, "v", "g", 0, "b"));
    /* Registered while it changes: fresh, so loaded at the next open. */
    CHECK_OK(set_row(conn, "c", "z", "g:0"));
    ydb_connection_close(conn);
    ydb_database_close(db);
    db = open_db();
    CHECK(register_v(db, &counter) == YDB_VIEW_LOADED);
    /* Another client writes while the database is open, then this library
    ** commits: the next open still finds the view stale (this library's
    ** commits no longer take the other client's writes as seen). */
    REQUIRE_OK(ydb_connection_open(db, &conn));
    REQUIRE_OK(sqlite3_open(path, &other) == SQLITE_OK ? YDB_OK : YDB_ERROR);
    CHECK(sqlite3_exec(other, "DELETE FROM ydb_rows WHERE key = 'z'", NULL, NULL, NULL) == SQLITE_OK);
    sqlite3_close(other);
    CHECK_OK(set_row(conn, "c", "y", "g:9"));
    ydb_connection_close(conn);
    ydb_database_close(db);
    db = open_db();
    REQUIRE_OK(ydb_connection_open(db, &conn));
    CHECK(register_v(db, &counter) == YDB_VIEW_REBUILT_STALE);
    CHECK(group_count(conn, "v", "g") == 4);   /* b, w0, w1 and y; z gone */
    ydb_connection_close(conn);
    /* A new version tag rebuilds and says why. */
    CHECK_OK(register_standard(db, "v", "2", 1, &counter));
    CHECK_OK(ydb_view_registration_outcome(db, "v", &outcome));
    CHECK(outcome == YDB_VIEW_REBUILT_NEW_TAG);
    ydb_database_close(db);

    /* Registering a view changes no schema (all views share one table): a
    ** schema change makes every connection re-read a schema that grew with
    ** every view, so registration got slower with the number of views. */
    {
        int before = schema_version(), index;
        db = open_db();
        for (index = 0; index < 50; index++) {
            char name[32];
            snprintf(name, sizeof name, "many%d", index);
            CHECK_OK(register_standard(db, name, "1", 1, &counter));
        }
        ydb_database_close(db);
        CHECK(schema_version() == before);
    }

    /* A persistent view's commits leave its rows in memory, and closing the
    ** database stores them (above: loaded after two commits and a close).
    ** A process that ends without closing leaves the view marked stale:
    ** rebuilt, with every committed row, never loaded without them. */
    {
        pid_t child;
        int status = 0;
        db = open_db();
        CHECK(register_v(db, &counter) == YDB_VIEW_REBUILT_NEW_TAG);   /* tag "1" again */
        ydb_database_close(db);
        child = fork();
        REQUIRE_OK(child >= 0 ? YDB_OK : YDB_ERROR);
        if (child == 0) {
            ydb_database *mine = open_db();
            ydb_connection *writer = NULL;
            if (register_v(mine, &counter) != YDB_VIEW_LOADED) _exit(2);
            if (ydb_connection_open(mine, &writer) != YDB_OK) _exit(3);
            if (set_row(writer, "c", "gone-without-closing", "g:0") != YDB_OK) _exit(4);
            _exit(0);   /* no ydb_database_close */
        }
        REQUIRE_OK(waitpid(child, &status, 0) == child ? YDB_OK : YDB_ERROR);
        CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
        db = open_db();
        REQUIRE_OK(ydb_connection_open(db, &conn));
        CHECK(register_v(db, &counter) == YDB_VIEW_REBUILT_STALE);
        CHECK(key_at_is(conn, "v", "g", 0, "gone-without-closing"));
        CHECK(group_count(conn, "v", "g") == 5);
        ydb_connection_close(conn);
        ydb_database_close(db);
    }

    /* SQLite's own code survives: a file that is not a database. */
    {
        FILE *file = fopen(path, "wb");
        REQUIRE_OK(file != NULL ? YDB_OK : YDB_ERROR);
        fputs("this is not an SQLite database, not even close -- 0123456789abcdef0123456789abcdef", file);
        fclose(file);
        for (int suffix = 0; suffix < 2; suffix++) {
            char side[sizeof path + 8];
            snprintf(side, sizeof side, "%s%s", path, suffix == 0 ? "-wal" : "-shm");
            unlink(side);
        }
        CHECK_RC(ydb_database_open(path, &db), YDB_CORRUPT);
        CHECK(ydb_errcode_sqlite() == SQLITE_NOTADB);
        CHECK_OK(ydb_database_open(NULL, &db));
        CHECK(ydb_errcode_sqlite() == 0);
        ydb_database_close(db);
    }

    unlink(path);
    return check_summary();
}
