/*
** registration_stalls.c -- how long another writer waits while a view is
** registered in the background, against the same writer with nothing else
** running, in one run.
**
**   build/ydbview-registration-stalls [rows] [keyed]   (defaults: 1000000 1)
**
** A file database holds `rows` rows in one collection (objects "rank:N").
** A writer thread commits one-row updates of random rows in a loop and
** records each commit's latency (begin to commit returned), pausing 5 ms
** between commits (a writer of its own pace, like a sync daemon):
**   baseline     for two seconds with nothing else running;
**   background   while ydb_view_register_async registers a persistent
**                view over every row (grouped in one group, sorted by rank:
**                sort keys when `keyed` is 1, else a C comparator), from
**                the call until its done callback;
**   blocking     (the writer stopped) ydb_view_register of the same view
**                under another name: the time it takes, for the
**                background registration's throughput.
** Prints a Markdown table: commits, p50 / p99 / max latency, how many
** commits waited more than 10 ms, and the
** background registration's time against the blocking one's.
*/
#define _POSIX_C_SOURCE 200809L
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "bench_support.h"

static void pause_ms(double milliseconds) {
    struct timespec t;
    t.tv_sec = (time_t)(milliseconds / 1000);
    t.tv_nsec = (long)((milliseconds - (double)t.tv_sec * 1000) * 1e6);
    nanosleep(&t, NULL);
}

/* ---- the view ---- */

static int group_all(void *ctx, ydb_txn *txn, const ydb_view_row *row, ydb_group_result *result) {
    (void)ctx; (void)txn; (void)row;
    return ydb_group_result_set(result, "all");
}

static int64_t rank_of(const ydb_view_row *row) {
    char text[32];
    size_t n = row->object_size < sizeof text - 1 ? row->object_size : sizeof text - 1;
    memcpy(text, row->object, n);
    text[n] = '\0';
    return strtoll(text + 5, NULL, 10);   /* "rank:N" */
}

static int by_rank(void *ctx, ydb_txn *txn, const char *group, const ydb_view_row *a, const ydb_view_row *b,
                   int *out) {
    int64_t x = rank_of(a), y = rank_of(b);
    (void)ctx; (void)txn; (void)group;
    *out = x < y ? -1 : x > y ? 1 : strcmp(a->key, b->key);
    return 0;
}

static int rank_key(void *ctx, ydb_txn *txn, const char *group, const ydb_view_row *row, ydb_sort_key *key) {
    (void)ctx; (void)txn; (void)group;
    if (ydb_sort_key_append_int64(key, rank_of(row), 0) != YDB_OK) return 1;
    return ydb_sort_key_append_text(key, row->key, 0);
}

static ydb_view_definition definition(int keyed) {
    ydb_view_definition def = YDB_VIEW_DEFINITION_INIT;
    def.grouping = group_all;
    def.grouping_flavour = YDB_FLAVOUR_OBJECT;
    def.sorting_flavour = YDB_FLAVOUR_OBJECT;
    if (keyed) def.sort_key = rank_key; else def.sorting = by_rank;
    def.version_tag = "1";
    def.persistent = 1;
    return def;
}

/* ---- the writer ---- */

typedef struct {
    ydb_database *db;
    int rows;
    volatile int stop;
    double *latencies;
    size_t count, capacity;
} writer;

static void *write_loop(void *argument) {
    writer *w = (writer *)argument;
    ydb_connection *conn;
    uint64_t random = 0x9E3779B97F4A7C15u;
    MUST(ydb_connection_open(w->db, &conn));
    while (!w->stop) {
        ydb_txn *txn;
        char key[32], object[32];
        double started = now();
        xorshift64(&random);
        snprintf(key, sizeof key, "k%d", (int)(random % (uint64_t)w->rows));
        snprintf(object, sizeof object, "rank:%d", (int)(random >> 33) % 1000000);
        MUST(ydb_txn_begin_read_write(conn, &txn));
        MUST(ydb_txn_set_object(txn, "c", key, object, strlen(object), NULL, 0));
        MUST(ydb_txn_commit(txn));
        if (w->count == w->capacity) {
            w->capacity = w->capacity ? 2 * w->capacity : 4096;
            w->latencies = realloc(w->latencies, w->capacity * sizeof *w->latencies);
            if (w->latencies == NULL) exit(1);
        }
        w->latencies[w->count++] = (now() - started) * 1000;
        pause_ms(5);   /* a writer of its own pace (a sync daemon), not a flood */
    }
    MUST(ydb_connection_close(conn));
    return NULL;
}

static void start_writer(writer *w, pthread_t *thread) {
    w->stop = 0;
    w->count = 0;
    if (pthread_create(thread, NULL, write_loop, w) != 0) exit(1);
}

static void stop_writer(writer *w, pthread_t thread) {
    w->stop = 1;
    pthread_join(thread, NULL);
}

static void print_row(const char *label, writer *w, double seconds) {
    size_t over = 0, i;
    if (w->count == 0) {
        printf("| %s | %.1f s | 0 | - | - | - | 0 |\n", label, seconds);
        return;
    }
    qsort(w->latencies, w->count, sizeof *w->latencies, compare_doubles);
    for (i = 0; i < w->count; i++) over += w->latencies[i] > 10;
    printf("| %s | %.1f s | %zu | %.2f | %.2f | %.2f | %zu |\n", label, seconds, w->count,
           w->latencies[w->count / 2], w->latencies[w->count * 99 / 100], w->latencies[w->count - 1], over);
}

/* ---- the background registration ---- */

static volatile int registration_done = 0;
static void on_done(void *ctx, int status, int outcome, const char *message) {
    (void)ctx; (void)outcome;
    if (status != YDB_OK) fprintf(stderr, "registration failed: %s\n", message);
    registration_done = 1;
}

static void fill(ydb_database *db, int rows) {
    ydb_connection *conn;
    int row = 0;
    MUST(ydb_connection_open(db, &conn));
    while (row < rows) {
        ydb_txn *txn;
        int end = row + 50000 < rows ? row + 50000 : rows;
        MUST(ydb_txn_begin_read_write(conn, &txn));
        for (; row < end; row++) {
            char key[32], object[32];
            snprintf(key, sizeof key, "k%d", row);
            snprintf(object, sizeof object, "rank:%d", (int)(((uint64_t)row * 2654435761u) % 1000000));
            MUST(ydb_txn_set_object(txn, "c", key, object, strlen(object), NULL, 0));
        }
        MUST(ydb_txn_commit(txn));
    }
    MUST(ydb_connection_close(conn));
}

int main(int argc, char **argv) {
    int rows = argc > 1 ? atoi(argv[1]) : 1000000;
    int keyed = argc > 2 ? atoi(argv[2]) : 1;
    char directory[] = "/tmp/ydbview-stalls-XXXXXX", path[64];
    ydb_database *db;
    writer w;
    pthread_t thread;
    ydb_registration *registration;
    ydb_view_definition def = definition(keyed);
    double started, background, blocking;

    if (rows < 1 || mkdtemp(directory) == NULL) return 2;
    snprintf(path, sizeof path, "%s/stalls.sqlite", directory);
    MUST(ydb_database_open(path, &db));
    fprintf(stderr, "filling %d rows\n", rows);
    fill(db, rows);
    memset(&w, 0, sizeof w);
    w.db = db;
    w.rows = rows;

    printf("Another writer's one-row commits, %d rows, %s (ms)\n\n", rows, keyed ? "sort keys" : "C comparator");
    printf("| while | for | commits | p50 | p99 | max | over 10 ms |\n|---|---|---|---|---|---|---|\n");
    start_writer(&w, &thread);
    sleep(2);
    stop_writer(&w, thread);
    print_row("nothing else runs", &w, 2.0);

    start_writer(&w, &thread);
    started = now();
    MUST(ydb_view_register_async(db, "background", &def, NULL, NULL, NULL, on_done, NULL, &registration));
    while (!registration_done) pause_ms(1);
    background = now() - started;
    stop_writer(&w, thread);
    print_row("a background registration", &w, background);
    MUST(ydb_registration_free(registration));

    started = now();
    MUST(ydb_view_register(db, "blocking", &def, NULL, NULL));
    blocking = now() - started;
    printf("\nbackground registration %.2f s (with the writer), blocking registration %.2f s "
           "(alone): %.2fx\n", background, blocking, background / blocking);

    free(w.latencies);
    MUST(ydb_database_close(db));
    {
        const char *suffixes[] = { "", "-wal", "-shm" };
        char file[80];
        size_t i;
        for (i = 0; i < 3; i++) {
            snprintf(file, sizeof file, "%s%s", path, suffixes[i]);
            remove(file);
        }
    }
    rmdir(directory);
    return 0;
}
