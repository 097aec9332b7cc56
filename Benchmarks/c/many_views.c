/*
** many_views.c -- what one-row commits cost with 1, 10 or 100 views over
** one collection, against SQLite with as many indexes on the same rows.
**
** Each row is a key and four 64-bit numbers a, b, c, d. View i groups every
** row into one group and sorts by number i % 4, then by key: by a sort key
** ("key" columns), by a C comparator ("cmp"), or by the same comparator
** with sorting_rows_in_memory set. The baseline is a plain
** SQLite table t(key TEXT PRIMARY KEY, a, b, c, d) with index i on
** (column i % 4, key): the same orders, kept by SQLite. Both are files in
** WAL mode with synchronous = NORMAL in one temporary directory. For each
** view count the four stores get the same commits, interleaved (update a
** random row's numbers, insert a new row, delete it again), each its own
** transaction; the engine's reader catches up after each commit, untimed,
** as a screen would. Medians in microseconds, and each store's median over
** SQLite's.
**
**   ydbview-many-views [rows=10000] [commits=500] [view counts=1,10,100]
**
** Instruction counts: the commits are made by profiled_commit, kept out of
** line for callgrind (instructions / (3 x commits) per commit and store):
**
**   valgrind --tool=callgrind --toggle-collect=profiled_commit \
**       build/ydbview-many-views 10000 100 100
**
** Each store's commits go through their own commit_sqlite, commit_sort_keys,
** commit_comparator or commit_comparator_in_memory, whose inclusive costs
** split the profile by store.
**
** Not a test (ctest runs a smoke pass); see Benchmarks/README.md.
*/
#define _POSIX_C_SOURCE 200809L
#include <sqlite3.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench_support.h"

enum { PLAIN, KEYED, COMPARED, IN_MEMORY, STORES };
static const char *const store_names[STORES] = {"SQLite + indexes", "sort keys", "C comparator",
                                                "comparator, rows in memory"};
enum { UPDATE, INSERT, DELETE, KINDS };
static const char *const kind_names[KINDS] = {"update", "insert", "delete"};

typedef struct {
    int64_t number[4];
} numbers;

static uint64_t random_state = 0x9E3779B97F4A7C15ull;
static int64_t next_number(void) { return (int64_t)(xorshift64(&random_state) >> 24); }

static numbers random_numbers(void) {
    numbers n;
    for (int i = 0; i < 4; i++) n.number[i] = next_number();
    return n;
}

/* --- the views: view i sorts by number i % 4, then key --- */

static int group_all(void *ctx, ydb_txn *txn, const ydb_view_row *row, ydb_group_result *result) {
    (void)ctx;
    (void)txn;
    (void)row;
    return ydb_group_result_set(result, "all");
}

static int64_t number_of(const ydb_view_row *row, intptr_t which) {
    int64_t value;
    memcpy(&value, (const char *)row->object + which * (intptr_t)sizeof value, sizeof value);
    return value;
}

static int by_number(void *ctx, ydb_txn *txn, const char *group, const ydb_view_row *a, const ydb_view_row *b,
                     int *out) {
    int64_t x = number_of(a, (intptr_t)ctx), y = number_of(b, (intptr_t)ctx);
    (void)txn;
    (void)group;
    *out = x != y ? (x > y) - (x < y) : strcmp(a->key, b->key);
    return 0;
}

static int number_key(void *ctx, ydb_txn *txn, const char *group, const ydb_view_row *row, ydb_sort_key *key) {
    (void)txn;
    (void)group;
    ydb_sort_key_append_int64(key, number_of(row, (intptr_t)ctx), 0);
    return ydb_sort_key_append_text(key, row->key, 0);
}

/* --- the stores --- */

typedef struct {
    int kind; /* PLAIN, KEYED or COMPARED */
    sqlite3 *plain;
    sqlite3_stmt *statements[KINDS];
    ydb_database *db;
    ydb_connection *writer, *reader;
} store;

static void sql(sqlite3 *db, const char *text) {
    char *error = NULL;
    if (sqlite3_exec(db, text, NULL, NULL, &error) != SQLITE_OK) {
        fprintf(stderr, "sqlite: %s: %s\n", text, error);
        exit(1);
    }
}

static void open_store(store *s, int kind, const char *path, int rows, int views) {
    char text[200];
    memset(s, 0, sizeof *s);
    s->kind = kind;
    if (kind == PLAIN) {
        static const char *const prepared[KINDS] = {
            "UPDATE t SET a = ?2, b = ?3, c = ?4, d = ?5 WHERE key = ?1",
            "INSERT INTO t (key, a, b, c, d) VALUES (?1, ?2, ?3, ?4, ?5)", "DELETE FROM t WHERE key = ?1"};
        if (sqlite3_open(path, &s->plain) != SQLITE_OK) exit(1);
        sql(s->plain, "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;"
                      "CREATE TABLE t (key TEXT PRIMARY KEY, a INTEGER, b INTEGER, c INTEGER, d INTEGER)");
        for (int i = 0; i < KINDS; i++)
            if (sqlite3_prepare_v2(s->plain, prepared[i], -1, &s->statements[i], NULL) != SQLITE_OK) exit(1);
    } else {
        MUST(ydb_database_open(path, &s->db));
        MUST(ydb_connection_open(s->db, &s->writer));
        MUST(ydb_connection_open(s->db, &s->reader));
    }
    /* The rows first, then the orders over them (CREATE INDEX / register). */
    random_state = 0x9E3779B97F4A7C15ull;
    ydb_txn *txn = NULL;
    if (kind == PLAIN) sql(s->plain, "BEGIN");
    else MUST(ydb_txn_begin_read_write(s->writer, &txn));
    for (int i = 0; i < rows; i++) {
        char key[32];
        numbers n = random_numbers();
        snprintf(key, sizeof key, "k%d", i);
        if (kind == PLAIN) {
            sqlite3_stmt *insert = s->statements[INSERT];
            sqlite3_bind_text(insert, 1, key, -1, SQLITE_TRANSIENT);
            for (int j = 0; j < 4; j++) sqlite3_bind_int64(insert, j + 2, n.number[j]);
            if (sqlite3_step(insert) != SQLITE_DONE) exit(1);
            sqlite3_reset(insert);
        } else {
            MUST(ydb_txn_set_object(txn, "items", key, &n, sizeof n, NULL, 0));
        }
    }
    if (kind == PLAIN) sql(s->plain, "COMMIT");
    else MUST(ydb_txn_commit(txn));
    for (intptr_t v = 0; v < views; v++) {
        if (kind == PLAIN) {
            snprintf(text, sizeof text, "CREATE INDEX i%d ON t (%c, key)", (int)v, "abcd"[v % 4]);
            sql(s->plain, text);
        } else {
            ydb_view_definition def = YDB_VIEW_DEFINITION_INIT;
            def.grouping = group_all;
            def.grouping_flavour = YDB_FLAVOUR_KEY;
            def.sorting_flavour = YDB_FLAVOUR_OBJECT;
            if (kind == KEYED) def.sort_key = number_key;
            else def.sorting = by_number;
            def.sorting_rows_in_memory = kind == IN_MEMORY;
            snprintf(text, sizeof text, "v%d", (int)v);
            MUST(ydb_view_register(s->db, text, &def, (void *)(v % 4), NULL));
        }
    }
    if (kind != PLAIN) MUST(ydb_connection_begin_long_lived_read(s->reader, NULL));
}

static void close_store(store *s) {
    if (s->kind == PLAIN) {
        for (int i = 0; i < KINDS; i++) sqlite3_finalize(s->statements[i]);
        sqlite3_close(s->plain);
    } else {
        ydb_connection_close(s->reader);
        ydb_connection_close(s->writer);
        ydb_database_close(s->db);
    }
}

/* One commit of `kind`, its own transaction (kept out of line for
** callgrind's --toggle-collect). */
__attribute__((noinline)) void profiled_commit(store *s, int kind, const char *key, const numbers *n) {
    if (s->kind == PLAIN) {
        sqlite3_stmt *statement = s->statements[kind];
        sql(s->plain, "BEGIN");
        sqlite3_bind_text(statement, 1, key, -1, SQLITE_TRANSIENT);
        if (kind != DELETE)
            for (int j = 0; j < 4; j++) sqlite3_bind_int64(statement, j + 2, n->number[j]);
        if (sqlite3_step(statement) != SQLITE_DONE) exit(1);
        sqlite3_reset(statement);
        sql(s->plain, "COMMIT");
    } else {
        ydb_txn *txn;
        MUST(ydb_txn_begin_read_write(s->writer, &txn));
        if (kind == DELETE) MUST(ydb_txn_remove_object(txn, "items", key));
        else MUST(ydb_txn_set_object(txn, "items", key, n, sizeof *n, NULL, 0));
        MUST(ydb_txn_commit(txn));
    }
}

/* One entry point per store, so that callgrind's inclusive costs split the
** profile by store (callgrind_annotate --inclusive=yes). */
__attribute__((noinline)) void commit_sqlite(store *s, int kind, const char *key, const numbers *n) {
    profiled_commit(s, kind, key, n);
}
__attribute__((noinline)) void commit_sort_keys(store *s, int kind, const char *key, const numbers *n) {
    profiled_commit(s, kind, key, n);
}
__attribute__((noinline)) void commit_comparator(store *s, int kind, const char *key, const numbers *n) {
    profiled_commit(s, kind, key, n);
}
__attribute__((noinline)) void commit_comparator_in_memory(store *s, int kind, const char *key, const numbers *n) {
    profiled_commit(s, kind, key, n);
}

static double timed_commit(store *s, int kind, const char *key, const numbers *n) {
    static void (*const commit_by_store[STORES])(store *, int, const char *, const numbers *) = {
        commit_sqlite, commit_sort_keys, commit_comparator, commit_comparator_in_memory};
    double start = now(), took;
    commit_by_store[s->kind](s, kind, key, n);
    took = now() - start;
    if (s->kind != PLAIN) MUST(ydb_connection_begin_long_lived_read(s->reader, NULL));
    return took;
}

int main(int argc, char **argv) {
    int rows = argc > 1 ? atoi(argv[1]) : 10000, commits = argc > 2 ? atoi(argv[2]) : 500;
    const char *counts = argc > 3 ? argv[3] : "1,10,100";
    const char *base = getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
    char directory[512];
    snprintf(directory, sizeof directory, "%s/ydbview-many-views-XXXXXX", base);
    if (rows < 10 || commits < 1 || !mkdtemp(directory)) {
        fprintf(stderr, "usage: ydbview-many-views [rows >= 10] [commits >= 1] [view counts, e.g. 1,10,100]\n");
        return 2;
    }
    printf("### %d rows, %d commits of each kind per figure: one-row commits with N views vs SQLite with N "
           "indexes (medians, us)\n\n", rows, commits);
    printf("| views | commit | %s | %s | ratio | %s | ratio | %s | ratio |\n|---|---|---|---|---|---|---|---|---|\n",
           store_names[PLAIN], store_names[KEYED], store_names[COMPARED], store_names[IN_MEMORY]);
    char *list = strdup(counts);
    for (char *item = strtok(list, ","); item != NULL; item = strtok(NULL, ",")) {
        int views = atoi(item);
        store stores[STORES];
        double *times[STORES][KINDS];
        char paths[STORES][600];
        for (int s = 0; s < STORES; s++) {
            snprintf(paths[s], sizeof paths[s], "%s/%d-%d.sqlite", directory, views, s);
            fprintf(stderr, "%d views: %s...\n", views, store_names[s]);
            open_store(&stores[s], s, paths[s], rows, views);
            for (int k = 0; k < KINDS; k++) times[s][k] = calloc((size_t)commits, sizeof(double));
        }
        random_state = 0x2545F4914F6CDD1Dull;
        for (int c = 0; c < commits; c++) {
            char key[32], added[32];
            numbers n = random_numbers(), m = random_numbers();
            snprintf(key, sizeof key, "k%d", (int)((uint64_t)next_number() % (uint64_t)rows));
            snprintf(added, sizeof added, "n%d", c);
            /* Interleaved: each store in turn, starting with a different one each commit. */
            for (int turn = 0; turn < STORES; turn++) {
                int s = (turn + c) % STORES;
                times[s][UPDATE][c] = timed_commit(&stores[s], UPDATE, key, &n);
                times[s][INSERT][c] = timed_commit(&stores[s], INSERT, added, &m);
                times[s][DELETE][c] = timed_commit(&stores[s], DELETE, added, &m);
            }
        }
        for (int k = 0; k < KINDS; k++) {
            double median[STORES];
            for (int s = 0; s < STORES; s++) {
                qsort(times[s][k], (size_t)commits, sizeof(double), compare_doubles);
                median[s] = times[s][k][commits / 2] * 1e6;
            }
            printf("| %d | %s | %.1f | %.1f | %.2fx | %.1f | %.2fx | %.1f | %.2fx |\n", views, kind_names[k],
                   median[PLAIN], median[KEYED], median[KEYED] / median[PLAIN], median[COMPARED],
                   median[COMPARED] / median[PLAIN], median[IN_MEMORY], median[IN_MEMORY] / median[PLAIN]);
        }
        for (int s = 0; s < STORES; s++) {
            close_store(&stores[s]);
            for (int k = 0; k < KINDS; k++) free(times[s][k]);
            const char *suffixes[] = {"", "-wal", "-shm"};
            for (int x = 0; x < 3; x++) {
                char file[620];
                snprintf(file, sizeof file, "%.599s%s", paths[s], suffixes[x]);
                unlink(file);
            }
        }
    }
    free(list);
    rmdir(directory);
    return 0;
}
