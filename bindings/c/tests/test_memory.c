/*
** test_memory.c -- running out of memory fails the call, not the process.
** Each case runs in a child process under an address-space limit
** (RLIMIT_AS) a little above what it uses already, and must exit normally:
**   - a 64 MiB object is read with the limit 160 MiB above the process's
**     use: it is copied once on its way out (SQLite's bytes straight into
**     the caller's buffer), so it fits; it was copied twice (192 MiB) and
**     the process was stopped (SIGABRT);
**   - the same read with 40 MiB of room: YDB_ERROR (or SQLite's out of
**     memory), not a crash;
**   - registering a view over 200,000 rows with 8 MiB of room: the
**     population is refused up front ("out of memory ... RLIMIT_AS").
*/
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "view_helpers.h"

#define MIB (1024L * 1024L)

static long address_space_in_use(void) {
    long pages = 0;
    FILE *statm = fopen("/proc/self/statm", "r");
    if (statm == NULL || fscanf(statm, "%ld", &pages) != 1) exit(90);
    fclose(statm);
    return pages * sysconf(_SC_PAGESIZE);
}

static void limit_room(long room) {
    struct rlimit limit;
    limit.rlim_cur = limit.rlim_max = (rlim_t)(address_space_in_use() + room);
    if (setrlimit(RLIMIT_AS, &limit) != 0) exit(91);
}

/* Runs `body` in a child; returns its exit status, or 128 + the signal. */
static int in_child(int (*body)(void *), void *argument) {
    int status = 0;
    pid_t child = fork();
    if (child < 0) return -1;
    if (child == 0) _exit(body(argument));
    if (waitpid(child, &status, 0) != child) return -1;
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

typedef struct {
    const char *path;
    long room;
} read_case;

/* Exit 0: read whole; 1: refused with an error; 2: anything else. */
static int read_big_object(void *argument) {
    read_case *c = (read_case *)argument;
    ydb_database *db;
    ydb_connection *conn;
    ydb_txn *txn;
    void *data = NULL;
    size_t size = 0;
    int rc;
    if (ydb_database_open(c->path, &db) != YDB_OK || ydb_connection_open(db, &conn) != YDB_OK) return 2;
    if (ydb_txn_begin_read(conn, &txn) != YDB_OK) return 2;
    limit_room(c->room);
    rc = ydb_txn_get_object(txn, "c", "big", &data, &size);
    if (rc == YDB_OK) {
        int whole = size == (size_t)(64 * MIB) && ((unsigned char *)data)[size - 1] == 7;
        ydb_free(data);
        return whole ? 0 : 2;
    }
    fprintf(stderr, "(expected) read refused: %d %s\n", rc, ydb_errmsg());
    return rc == YDB_ERROR || rc == YDB_SQLITE ? 1 : 2;
}

static int register_under_limit(void *argument) {
    ydb_database *db;
    view_counter counter;
    int rc;
    memset(&counter, 0, sizeof counter);
    if (ydb_database_open((const char *)argument, &db) != YDB_OK) return 2;
    limit_room(8 * MIB);
    rc = register_standard(db, "v", "1", 1, &counter);
    fprintf(stderr, "(expected) registration refused: %d %s\n", rc, ydb_errmsg());
    return rc == YDB_ERROR && strstr(ydb_errmsg(), "RLIMIT_AS") != NULL ? 1 : 2;
}

int main(void) {
    char directory[] = "/tmp/ydbview-memory-XXXXXX", path[80], rows_path[80];
    ydb_database *db;
    ydb_connection *conn;
    ydb_txn *txn;
    unsigned char *big;
    read_case c;
    int i;

    if (mkdtemp(directory) == NULL) return 1;
    snprintf(path, sizeof path, "%s/big.sqlite", directory);
    snprintf(rows_path, sizeof rows_path, "%s/rows.sqlite", directory);

    REQUIRE_OK(ydb_database_open(path, &db));
    REQUIRE_OK(ydb_connection_open(db, &conn));
    big = calloc(64 * MIB, 1);
    if (big == NULL) return 1;
    big[64 * MIB - 1] = 7;
    REQUIRE_OK(ydb_txn_begin_read_write(conn, &txn));
    REQUIRE_OK(ydb_txn_set_object(txn, "c", "big", big, 64 * MIB, NULL, 0));
    REQUIRE_OK(ydb_txn_commit(txn));
    free(big);
    REQUIRE_OK(ydb_connection_close(conn));
    REQUIRE_OK(ydb_database_close(db));

    c.path = path;
    c.room = 160 * MIB;
    CHECK(in_child(read_big_object, &c) == 0);
    c.room = 40 * MIB;
    CHECK(in_child(read_big_object, &c) == 1);

    REQUIRE_OK(ydb_database_open(rows_path, &db));
    REQUIRE_OK(ydb_connection_open(db, &conn));
    REQUIRE_OK(ydb_txn_begin_read_write(conn, &txn));
    for (i = 0; i < 200000; i++) {
        char key[16];
        snprintf(key, sizeof key, "k%d", i);
        REQUIRE_OK(ydb_txn_set_object(txn, "c", key, "g:1", 3, NULL, 0));
    }
    REQUIRE_OK(ydb_txn_commit(txn));
    REQUIRE_OK(ydb_connection_close(conn));
    REQUIRE_OK(ydb_database_close(db));
    CHECK(in_child(register_under_limit, rows_path) == 1);

    {
        const char *files[] = { path, rows_path };
        const char *suffixes[] = { "", "-wal", "-shm" };
        char name[96];
        size_t f, s;
        for (f = 0; f < 2; f++) {
            for (s = 0; s < 3; s++) {
                snprintf(name, sizeof name, "%s%s", files[f], suffixes[s]);
                remove(name);
            }
        }
        rmdir(directory);
    }
    return check_summary();
}
