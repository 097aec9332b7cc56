/*
** soak.c -- one writer and four readers (two long-lived reads that catch up
** after every step, two plain readers) on one database for a bounded time,
** each reader checking that the view agrees with the rows at its snapshot.
** A watchdog fails the run, at once and loudly, if no thread makes progress
** for 10 s: a hang must fail CI, not stall it. Prints "N passed, N failed".
**
**   soak [SECONDS]     (default 3; or YDBVIEW_SOAK_SECONDS)
*/
#define _POSIX_C_SOURCE 200809L
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <time.h>
#include <unistd.h>

#include "check.h"

static volatile int stop = 0;
static long progress = 0, commits = 0, reads = 0, errors = 0;

static void note_error(const char *what, int rc) {
    __atomic_add_fetch(&errors, 1, __ATOMIC_SEQ_CST);
    fprintf(stderr, "soak: %s returned %d: %s\n", what, rc, ydb_errmsg());
}

/* Every row is in the view: group = the object's first byte, order = object, then key. */
static int first_byte(void *ctx, ydb_txn *txn, const ydb_view_row *row, ydb_group_result *result) {
    char group[2] = { 'x', 0 };
    (void)ctx; (void)txn;
    if (row->object_size > 0) group[0] = ((const char *)row->object)[0];
    return ydb_group_result_set(result, group);
}

static int object_then_key(void *ctx, ydb_txn *txn, const char *group, const ydb_view_row *a,
                           const ydb_view_row *b, int *out_order) {
    size_t common = a->object_size < b->object_size ? a->object_size : b->object_size;
    int order = common ? memcmp(a->object, b->object, common) : 0;
    (void)ctx; (void)txn; (void)group;
    if (order == 0) order = (a->object_size > b->object_size) - (a->object_size < b->object_size);
    if (order == 0) order = strcmp(a->key, b->key);
    *out_order = order;
    return 0;
}

static void *writer(void *arg) {
    ydb_connection *conn = (ydb_connection *)arg;
    unsigned seed = 7;
    while (!stop) {
        ydb_txn *txn = NULL;
        int rc = ydb_txn_begin_read_write(conn, &txn), i;
        if (rc != YDB_OK) { note_error("begin_read_write", rc); continue; }
        for (i = 0; i < 3 && rc == YDB_OK; i++) {
            char key[16], object[16];
            unsigned roll = (unsigned)rand_r(&seed);
            snprintf(key, sizeof key, "k%u", roll % 300);
            if (roll % 5 == 0) {
                rc = ydb_txn_remove_object(txn, "c", key);
            } else {
                snprintf(object, sizeof object, "%c%05u", 'a' + (int)(roll % 4), roll % 100000);
                rc = ydb_txn_set_object(txn, "c", key, object, strlen(object), NULL, 0);
            }
        }
        if (rc != YDB_OK) { note_error("write", rc); ydb_txn_rollback(txn); continue; }
        rc = ydb_txn_commit(txn);
        if (rc != YDB_OK) note_error("commit", rc);
        __atomic_add_fetch(&commits, 1, __ATOMIC_SEQ_CST);
        __atomic_add_fetch(&progress, 1, __ATOMIC_SEQ_CST);
    }
    return NULL;
}

typedef struct { ydb_connection *conn; int long_lived; } reader_args;

static void *reader(void *arg) {
    reader_args *args = (reader_args *)arg;
    while (!stop) {
        ydb_txn *txn = NULL;
        size_t rows = 0, in_view = 0, groups_total = 0;
        char group[2] = { 'a', 0 };
        int rc;
        if (args->long_lived) {
            ydb_notification_list *skipped = NULL;
            rc = ydb_connection_begin_long_lived_read(args->conn, &skipped);
            if (rc != YDB_OK) { note_error("catch up", rc); continue; }
            ydb_notification_list_free(skipped);
        }
        rc = ydb_txn_begin_read(args->conn, &txn);
        if (rc != YDB_OK) { note_error("begin_read", rc); continue; }
        if ((rc = ydb_txn_count(txn, "c", &rows)) != YDB_OK) note_error("count", rc);
        if ((rc = ydb_view_count_all(txn, "v", &in_view)) != YDB_OK) note_error("view count", rc);
        for (group[0] = 'a'; group[0] <= 'd'; group[0]++) {
            size_t count = 0;
            if ((rc = ydb_view_count_in_group(txn, "v", group, &count)) != YDB_OK) note_error("group count", rc);
            groups_total += count;
        }
        if (rows != in_view || rows != groups_total) {
            fprintf(stderr, "soak: snapshot disagrees: %zu rows, %zu in the view, %zu in its groups\n",
                    rows, in_view, groups_total);
            __atomic_add_fetch(&errors, 1, __ATOMIC_SEQ_CST);
        }
        ydb_txn_end(txn);
        __atomic_add_fetch(&reads, 1, __ATOMIC_SEQ_CST);
        __atomic_add_fetch(&progress, 1, __ATOMIC_SEQ_CST);
    }
    return NULL;
}

static void *watchdog(void *arg) {
    long last = -1;
    int idle = 0;
    (void)arg;
    while (!stop) {
        long now = __atomic_load_n(&progress, __ATOMIC_SEQ_CST);
        idle = now == last ? idle + 1 : 0;
        last = now;
        if (idle >= 10) {
            fprintf(stderr, "soak: no progress for 10 s -- a hang; aborting\n");
            printf("0 passed, 1 failed\n");
            fflush(stdout);
            abort();
        }
        sleep(1);
    }
    return NULL;
}

int main(int argc, char **argv) {
    ydb_database *db = NULL;
    ydb_connection *connections[5];
    reader_args args[4];
    pthread_t threads[6];
    ydb_view_definition def = YDB_VIEW_DEFINITION_INIT;
    const char *env = getenv("YDBVIEW_SOAK_SECONDS");
    int seconds = argc > 1 ? atoi(argv[1]) : env ? atoi(env) : 3, i;
    if (seconds < 1) seconds = 3;
    REQUIRE_OK(ydb_database_open(NULL, &db));
    def.grouping = first_byte;
    def.grouping_flavour = YDB_FLAVOUR_OBJECT;
    def.sorting = object_then_key;
    def.sorting_flavour = YDB_FLAVOUR_OBJECT;
    REQUIRE_OK(ydb_view_register(db, "v", &def, NULL, NULL));
    for (i = 0; i < 5; i++) REQUIRE_OK(ydb_connection_open(db, &connections[i]));
    pthread_create(&threads[0], NULL, watchdog, NULL);
    pthread_create(&threads[1], NULL, writer, connections[0]);
    for (i = 0; i < 4; i++) {
        args[i].conn = connections[i + 1];
        args[i].long_lived = i < 2;
        pthread_create(&threads[i + 2], NULL, reader, &args[i]);
    }
    sleep((unsigned)seconds);
    stop = 1;
    for (i = 1; i < 6; i++) pthread_join(threads[i], NULL);
    pthread_join(threads[0], NULL);
    printf("soak: %d s, %ld commits, %ld reads, %ld errors\n", seconds, commits, reads, errors);
    CHECK(errors == 0);
    CHECK(commits > 0);
    CHECK(reads > 0);
    for (i = 0; i < 5; i++) CHECK_OK(ydb_connection_close(connections[i]));
    CHECK_OK(ydb_database_close(db));
    return check_summary();
}
