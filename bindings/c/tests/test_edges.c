/*
** test_edges.c -- the engine's edges: values SQLite cannot store
** (YDB_TOOBIG), one Database per database file, and a second writer on the
** thread that already writes (YDB_MISUSE, never a hang).
*/
#define _POSIX_C_SOURCE 200809L /* setenv, mkdtemp, symlink, fork */
#include <errno.h>
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
    /* A name no row can have is simply not found. */
    {
        char *long_name = malloc(limit + 2);
        int exists = 1;
        memset(long_name, 'n', limit + 1);
        long_name[limit + 1] = '\0';
        CHECK_OK(ydb_txn_exists(txn, "c", long_name, &exists));
        CHECK(exists == 0);
        CHECK_OK(ydb_txn_remove_object(txn, long_name, "k"));
        free(long_name);
    }
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

/* ---- 2. one Database per database file ---- */

/* Child mode (`test_edges --hold PATH`): opens PATH, prints the status,
** and holds the database until its stdin reaches end of file. */
static int hold(const char *path) {
    ydb_database *db = NULL;
    char byte;
    int rc = ydb_database_open(path, &db);
    printf("%d\n", rc);
    fflush(stdout);
    while (read(0, &byte, 1) > 0) {
    }
    if (db != NULL) ydb_database_close(db);
    return 0;
}

typedef struct {
    pid_t pid;
    int to_child;    /* closing it lets the child close and exit */
    int status;      /* what the child's open returned */
} holder;

static char self_path[4096];

static holder spawn_holder(const char *path) {
    holder h = {-1, -1, -1};
    int in[2], out[2];
    char line[16] = {0};
    ssize_t got;
    if (pipe(in) != 0 || pipe(out) != 0) return h;
    h.pid = fork();
    if (h.pid == 0) {
        dup2(in[0], 0);
        dup2(out[1], 1);
        close(in[1]);
        close(out[0]);
        execl(self_path, self_path, "--hold", path, (char *)NULL);
        _exit(127);
    }
    close(in[0]);
    close(out[1]);
    h.to_child = in[1];
    got = read(out[0], line, sizeof line - 1);
    close(out[0]);
    if (got > 0) h.status = atoi(line);
    return h;
}

static void end_holder(holder *h, int kill_it) {
    int status = 0;
    if (kill_it) kill(h->pid, SIGKILL);
    close(h->to_child);
    waitpid(h->pid, &status, 0);
}

static void check_busy(const char *path, const char *named) {
    ydb_database *db = NULL;
    CHECK_RC(ydb_database_open(path, &db), YDB_BUSY);
    CHECK(db == NULL);
    CHECK(strstr(ydb_errmsg(), named) != NULL);
    if (db != NULL) ydb_database_close(db);
}

static void test_one_database_per_file(void) {
    char path[128], link_path[128], hard_path[128], missing_path[128];
    ydb_database *db = NULL, *again = NULL;
    ydb_connection *conn = NULL;
    holder h;

    path_in_directory(path, sizeof path, "db.sqlite");
    path_in_directory(link_path, sizeof link_path, "symlink.sqlite");
    path_in_directory(hard_path, sizeof hard_path, "hardlink.sqlite");
    REQUIRE_OK(ydb_database_open(path, &db));
    REQUIRE_OK(ydb_connection_open(db, &conn));
    REQUIRE_OK(put(conn, "c", "k", "first", NULL));
    CHECK(symlink("db.sqlite", link_path) == 0); /* relative to its folder */
    CHECK(link(path, hard_path) == 0);

    /* Same path, a symlink, a hard link: all the same file. */
    check_busy(path, path);
    check_busy(link_path, link_path);
    check_busy(hard_path, hard_path);
    /* No side lock file to delete, and the failed opens broke nothing. */
    {
        char old_lock[160];
        snprintf(old_lock, sizeof old_lock, "%s-ydbview.lock", path);
        CHECK(access(old_lock, F_OK) != 0);
    }
    CHECK_OK(put(conn, "c", "k", "second", NULL));
    CHECK(reads_as(conn, "c", "k", "second"));

    /* Another process, through each name. */
    h = spawn_holder(link_path);
    CHECK(h.status == YDB_BUSY);
    end_holder(&h, 0);
    h = spawn_holder(hard_path);
    CHECK(h.status == YDB_BUSY);
    end_holder(&h, 0);
    CHECK(reads_as(conn, "c", "k", "second"));

    /* Closed (connections included): opens again. */
    CHECK_OK(ydb_connection_close(conn));
    CHECK_OK(ydb_database_close(db));
    REQUIRE_OK(ydb_database_open(link_path, &again));
    CHECK_OK(ydb_database_close(again));

    /* Held by another process: busy until it closes, or is killed. */
    h = spawn_holder(path);
    CHECK(h.status == YDB_OK);
    check_busy(hard_path, hard_path);
    end_holder(&h, 0);
    REQUIRE_OK(ydb_database_open(path, &again));
    CHECK_OK(ydb_database_close(again));
    h = spawn_holder(hard_path);
    CHECK(h.status == YDB_OK);
    check_busy(path, path);
    end_holder(&h, 1);
    REQUIRE_OK(ydb_database_open(path, &again));
    REQUIRE_OK(ydb_connection_open(again, &conn));
    CHECK(reads_as(conn, "c", "k", "second"));
    CHECK_OK(ydb_connection_close(conn));
    CHECK_OK(ydb_database_close(again));

    /* An unopenable path names itself and the OS reason. */
    path_in_directory(missing_path, sizeof missing_path, "no/such/dir.sqlite");
    {
        int rc = ydb_database_open(missing_path, &again);
        CHECK(rc == YDB_CANTOPEN);
        CHECK(again == NULL);
        CHECK(strstr(ydb_errmsg(), missing_path) != NULL);
        CHECK(strstr(ydb_errmsg(), strerror(ENOENT)) != NULL);
    }

    unlink(link_path);
    unlink(hard_path);
    {
        const char *suffixes[] = {"", "-wal", "-shm"};
        char file[160];
        int i;
        for (i = 0; i < 3; i++) {
            snprintf(file, sizeof file, "%s%s", path, suffixes[i]);
            unlink(file);
        }
    }
}

/* ---- 3. a second writer on the thread that already writes ---- */

typedef struct {
    ydb_connection *other;
    int calls;
    int status;  /* of ydb_txn_begin_read_write on `other` */
    char message[256];
} second_writer;

/* Begins (and ends) a read-write transaction on another connection. */
static void try_second_writer(second_writer *attempt) {
    ydb_txn *txn = NULL;
    attempt->calls++;
    attempt->status = ydb_txn_begin_read_write(attempt->other, &txn);
    strncpy(attempt->message, ydb_errmsg(), sizeof attempt->message - 1);
    if (txn != NULL) ydb_txn_rollback(txn);
}

static int second_writer_in_row(void *ctx, const char *key, const void *object,
                                size_t object_size, const void *metadata,
                                size_t metadata_size) {
    (void)key; (void)object; (void)object_size; (void)metadata; (void)metadata_size;
    try_second_writer((second_writer *)ctx);
    return 1;
}

static int second_writer_in_view(void *ctx, const char *collection,
                                 const char *key, size_t index) {
    (void)collection; (void)key; (void)index;
    try_second_writer((second_writer *)ctx);
    return 1;
}

static int group_all(void *ctx, ydb_txn *txn, const ydb_view_row *row, ydb_group_result *result) {
    (void)ctx; (void)txn; (void)row;
    return ydb_group_result_set(result, "all");
}

static int order_by_key(void *ctx, ydb_txn *txn, const char *group, const ydb_view_row *a,
                        const ydb_view_row *b, int *out_order) {
    (void)ctx; (void)txn; (void)group;
    *out_order = strcmp(a->key, b->key);
    return 0;
}

static void test_second_writer_on_the_same_thread(void) {
    ydb_database *db = NULL;
    ydb_connection *conn = NULL, *other = NULL;
    ydb_txn *txn = NULL, *second = NULL;
    ydb_view_definition def;
    second_writer attempt;

    REQUIRE_OK(ydb_database_open(NULL, &db));
    REQUIRE_OK(ydb_connection_open(db, &conn));
    REQUIRE_OK(ydb_connection_open(db, &other));
    REQUIRE_OK(ydb_view_definition_init(&def));
    def.grouping = group_all;
    def.grouping_flavour = YDB_FLAVOUR_KEY;
    def.sorting = order_by_key;
    def.sorting_flavour = YDB_FLAVOUR_KEY;
    REQUIRE_OK(ydb_view_register(db, "keys", &def, NULL, NULL));
    REQUIRE_OK(put(conn, "c", "k", "v", NULL));

    /* Directly: refused, not a wait for ourselves. */
    REQUIRE_OK(ydb_txn_begin_read_write(conn, &txn));
    CHECK_RC(ydb_txn_begin_read_write(other, &second), YDB_MISUSE);
    CHECK(second == NULL);
    CHECK(strstr(ydb_errmsg(), "wait for itself") != NULL);

    /* From inside enumeration callbacks of the write. */
    memset(&attempt, 0, sizeof attempt);
    attempt.other = other;
    CHECK_OK(ydb_txn_enumerate_rows(txn, "c", second_writer_in_row, &attempt));
    CHECK(attempt.calls == 1 && attempt.status == YDB_MISUSE);
    CHECK(strstr(attempt.message, "wait for itself") != NULL);
    memset(&attempt, 0, sizeof attempt);
    attempt.other = other;
    CHECK_OK(ydb_view_enumerate_keys(txn, "keys", "all", 0, YDB_INDEX_END, 0,
                                     second_writer_in_view, &attempt));
    CHECK(attempt.calls == 1 && attempt.status == YDB_MISUSE);
    /* The refusals left the write usable. */
    CHECK_OK(ydb_txn_set_object(txn, "c", "k2", "v2", 2, NULL, 0));
    CHECK_OK(ydb_txn_commit(txn));

    /* Ended (commit or rollback): the thread may write again. */
    REQUIRE_OK(ydb_txn_begin_read_write(other, &second));
    CHECK(object_is(second, "c", "k2", "v2"));
    ydb_txn_rollback(second);
    REQUIRE_OK(ydb_txn_begin_read_write(conn, &txn));
    ydb_txn_rollback(txn);
    second = NULL;
    CHECK_OK(ydb_txn_begin_read_write(other, &second));
    if (second != NULL) ydb_txn_rollback(second);

    /* Inside a read's callbacks the thread holds no write: allowed. */
    REQUIRE_OK(ydb_txn_begin_read(conn, &txn));
    memset(&attempt, 0, sizeof attempt);
    attempt.other = other;
    CHECK_OK(ydb_txn_enumerate_rows(txn, "c", second_writer_in_row, &attempt));
    CHECK(attempt.calls == 1 && attempt.status == YDB_OK);
    ydb_txn_end(txn);

    CHECK_OK(ydb_connection_close(other));
    CHECK_OK(ydb_connection_close(conn));
    CHECK_OK(ydb_database_close(db));
}

int main(int argc, char **argv) {
    if (argc == 3 && strcmp(argv[1], "--hold") == 0) return hold(argv[2]);
    /* The holder process is this program again (execl needs a path, which
    ** ctest gives as argv[0]). */
    if (argc < 1 || strchr(argv[0], '/') == NULL) {
        fprintf(stderr, "run test_edges by a path (e.g. ./test_edges)\n");
        return 1;
    }
    snprintf(self_path, sizeof self_path, "%s", argv[0]);
    signal(SIGALRM, on_alarm);
    alarm(60);
    /* In the working directory (ctest: the build folder). */
    snprintf(directory, sizeof directory, "ydbview-edges-XXXXXX");
    if (mkdtemp(directory) == NULL) return 1;

    test_too_big();
    test_one_database_per_file();
    test_second_writer_on_the_same_thread();

    CHECK(rmdir(directory) == 0); /* every file of the tests was removed */
    return check_summary();
}
