/*
** The engine's one re-entrancy rule, as C sees it (the Swift ReentryTests
** and Python's test_reentry.py check the same cases), and the close()
** deadlock: an observer holding the last reference to a connection.
*/
#include <stdlib.h>
#include <string.h>

#include "ydbview.h"
#include "view_helpers.h"

/* ---- a commit observer may write, on the committing connection too ---- */

typedef struct {
    ydb_connection *conn;
    uint64_t seen[4];
    int calls;
    int write_status;
} echo;

static void echo_back(void *ctx, const ydb_notification *n) {
    echo *e = (echo *)ctx;
    int own = 0;
    if (e->calls < 4) ydb_notification_snapshot(n, &e->seen[e->calls]);
    e->calls++;
    if (ydb_notification_has_change(n, "c", "echo", &own) == YDB_OK && own) return;
    e->write_status = put(e->conn, "c", "echo", "from observer", NULL);
}

static void test_observer_writes(void) {
    ydb_database *db;
    echo e;
    uint64_t token;
    memset(&e, 0, sizeof e);
    REQUIRE_OK(ydb_database_open(NULL, &db));
    REQUIRE_OK(ydb_connection_open(db, &e.conn));
    REQUIRE_OK(ydb_database_add_commit_observer(db, echo_back, &e, NULL, &token));
    CHECK_OK(put(e.conn, "c", "k", "v", NULL));
    CHECK(e.write_status == YDB_OK);
    CHECK(e.calls == 2 && e.seen[0] == 1 && e.seen[1] == 2); /* its own commit after, in order */
    CHECK(reads_as(e.conn, "c", "echo", "from observer"));
    ydb_connection_close(e.conn);
    ydb_database_close(db);
}

/* ---- an enumeration may read and write its transaction, not end it ---- */

typedef struct {
    ydb_txn *txn;
    int read_status, write_status, end_status, commit_status, calls;
} visit_state;

static int visit(void *ctx, const char *key) {
    visit_state *v = (visit_state *)ctx;
    int exists = 0;
    v->calls++;
    v->read_status = ydb_txn_exists(v->txn, "c", key, &exists);
    v->write_status = ydb_txn_set_object(v->txn, "d", key, "copied", 6, NULL, 0);
    v->end_status = ydb_txn_rollback(v->txn);
    v->commit_status = ydb_txn_commit(v->txn);
    return 0;
}

static void test_enumeration(void) {
    ydb_database *db;
    ydb_connection *conn;
    visit_state v;
    memset(&v, 0, sizeof v);
    REQUIRE_OK(ydb_database_open(NULL, &db));
    REQUIRE_OK(ydb_connection_open(db, &conn));
    REQUIRE_OK(put(conn, "c", "a", "1", NULL));
    REQUIRE_OK(ydb_txn_begin_read_write(conn, &v.txn));
    CHECK_OK(ydb_txn_enumerate_keys(v.txn, "c", visit, &v));
    CHECK(v.calls == 1);
    CHECK(v.read_status == YDB_OK && v.write_status == YDB_OK);
    CHECK(v.end_status == YDB_MISUSE && v.commit_status == YDB_MISUSE);
    CHECK_OK(ydb_txn_commit(v.txn)); /* still open, and committable */
    CHECK(reads_as(conn, "d", "a", "copied"));
    ydb_connection_close(conn);
    ydb_database_close(db);
}

/* ---- a view callback reads rows, never views, and writes nothing ---- */

typedef struct {
    ydb_txn *writing;
    ydb_connection *other;
    int tried;
    int same_txn, handle_read, view_read, handle_view_read, same_txn_write, write_elsewhere, read_elsewhere;
} inside_state;

static int group_and_reenter(void *ctx, ydb_txn *txn, const ydb_view_row *row, ydb_group_result *result) {
    inside_state *s = (inside_state *)ctx;
    (void)row;
    if (s->writing != NULL && !s->tried) {
        ydb_txn *other_txn = NULL;
        int exists = 0;
        size_t count = 0;
        s->tried = 1;
        s->same_txn = ydb_txn_exists(s->writing, "c", "seen", &exists);
        s->handle_read = ydb_txn_exists(txn, "c", "seen", &exists);
        s->view_read = ydb_view_count_all(s->writing, "v", &count);
        s->handle_view_read = ydb_view_count_all(txn, "v", &count);
        s->same_txn_write = ydb_txn_set_object(s->writing, "c", "from callback", "x", 1, NULL, 0);
        s->write_elsewhere = ydb_txn_begin_read_write(s->other, &other_txn);
        if (other_txn != NULL) ydb_txn_rollback(other_txn);
        s->read_elsewhere = reads_as(s->other, "c", "seen", "by other") ? YDB_OK : YDB_ERROR;
    }
    return ydb_group_result_set(result, "all");
}

static int by_key(void *ctx, ydb_txn *txn, const char *group, const ydb_view_row *a, const ydb_view_row *b, int *out) {
    (void)ctx; (void)txn; (void)group;
    *out = strcmp(a->key, b->key);
    return 0;
}

static void test_view_callback(void) {
    ydb_database *db;
    ydb_connection *conn;
    inside_state s;
    ydb_view_definition def = YDB_VIEW_DEFINITION_INIT;
    memset(&s, 0, sizeof s);
    REQUIRE_OK(ydb_database_open(NULL, &db));
    REQUIRE_OK(ydb_connection_open(db, &conn));
    REQUIRE_OK(ydb_connection_open(db, &s.other));
    REQUIRE_OK(put(s.other, "c", "seen", "by other", NULL));
    def.grouping = group_and_reenter;
    def.grouping_flavour = YDB_FLAVOUR_KEY;
    def.sorting = by_key;
    def.sorting_flavour = YDB_FLAVOUR_KEY;
    REQUIRE_OK(ydb_view_register(db, "v", &def, &s, NULL));
    REQUIRE_OK(ydb_txn_begin_read_write(conn, &s.writing));
    CHECK_OK(ydb_txn_set_object(s.writing, "c", "new", "x", 1, NULL, 0));
    CHECK(s.tried);
    CHECK(s.same_txn == YDB_OK && s.handle_read == YDB_OK);           /* rows: yes */
    CHECK(s.view_read == YDB_MISUSE && s.handle_view_read == YDB_MISUSE); /* views: half-updated */
    CHECK(s.same_txn_write == YDB_MISUSE);
    CHECK(s.write_elsewhere == YDB_MISUSE);
    CHECK(s.read_elsewhere == YDB_OK);
    CHECK_OK(ydb_txn_commit(s.writing));

    /* Registering while this thread holds a write: refused, not a hang. */
    REQUIRE_OK(ydb_txn_begin_read_write(conn, &s.writing));
    s.tried = 1;
    CHECK_RC(ydb_view_register(db, "w", &def, &s, NULL), YDB_MISUSE);
    ydb_txn_rollback(s.writing);
    ydb_connection_close(s.other);
    ydb_connection_close(conn);
    ydb_database_close(db);
}

/* ---- the close() deadlock ---- */

/* The observer's destructor closes the last connection it holds: closing
** the database releases the observer, whose release closes a connection,
** which tells the database — that must not happen under its lock. */
static void close_connection(void *ctx) { ydb_connection_close((ydb_connection *)ctx); }
static void ignore(void *ctx, const ydb_notification *n) { (void)ctx; (void)n; }

static void test_close_releases_outside_the_lock(void) {
    ydb_database *db;
    ydb_connection *held;
    uint64_t token;
    REQUIRE_OK(ydb_database_open(NULL, &db));
    REQUIRE_OK(ydb_connection_open(db, &held));
    REQUIRE_OK(ydb_database_add_commit_observer(db, ignore, held, close_connection, &token));
    CHECK_OK(put(held, "c", "k", "v", NULL));
    CHECK_OK(ydb_database_close(db)); /* returns: no deadlock */
}

int main(void) {
    test_observer_writes();
    test_enumeration();
    test_view_callback();
    test_close_releases_outside_the_lock();
    return check_summary();
}
