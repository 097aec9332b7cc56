/*
** bench.c -- ydbview from C against plain SQLite, in one run.
**
**   build/ydbview-c-bench [rows] [commits]      (defaults: 100000 2000)
**
** For `rows` rows in ONE group (the worst case for a sorted view):
**   population  register a view over existing rows (C comparator; sort key)
**               vs CREATE INDEX on the same rows in a plain table;
**               peak memory while populating, per row
**   commits     one-row update / insert / delete commits with the view
**               registered and a reader in a long-lived read transaction
**               that catches up after every commit, vs the same statement
**               in BEGIN/COMMIT on the indexed plain table; the WAL's
**               largest size over the run
**   reads       the first 50 rows of the group (ydb_view_read_rows), with
**               the connection's row cache on (default) and off, vs
**               SELECT ... ORDER BY rank LIMIT 50 on the indexed table
** Both stores use WAL and synchronous=NORMAL. Medians of `commits` samples.
** Prints a Markdown table; progress goes to stderr.
*/
#define _POSIX_C_SOURCE 200809L
#include <sqlite3.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "ydbview.h"

#define MUST(expr)                                                              \
    do {                                                                        \
        int rc_ = (expr);                                                       \
        if (rc_ != 0) {                                                         \
            fprintf(stderr, "%s:%d: %s failed: %d %s\n", __FILE__, __LINE__,   \
                    #expr, rc_, ydb_errmsg());                                  \
            exit(1);                                                            \
        }                                                                       \
    } while (0)

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static uint64_t rng = 0x2545F4914F6CDD1Du;
static uint64_t next_random(void) {
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

static int compare_doubles(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(double *samples, int count) {
    qsort(samples, (size_t)count, sizeof *samples, compare_doubles);
    return samples[count / 2];
}

/* VmRSS / VmHWM in KiB from /proc/self/status. */
static long memory_kib(const char *field) {
    char line[256];
    long value = -1;
    FILE *status = fopen("/proc/self/status", "r");
    if (!status) return -1;
    while (fgets(line, sizeof line, status))
        if (strncmp(line, field, strlen(field)) == 0) value = atol(line + strlen(field) + 1);
    fclose(status);
    return value;
}

static void reset_peak(void) {
    FILE *f = fopen("/proc/self/clear_refs", "w");
    if (f) {
        fputs("5", f);
        fclose(f);
    }
}

static long file_size(const char *path) {
    struct stat info;
    return stat(path, &info) == 0 ? (long)info.st_size : 0;
}

/* --- the view: one group, sorted by the object's 8-byte rank, then key --- */

static int group_all(void *ctx, ydb_txn *txn, const ydb_view_row *row, ydb_group_result *result) {
    (void)ctx; (void)txn;
    (void)row;
    return ydb_group_result_set(result, "all");
}

static int64_t rank_of(const ydb_view_row *row) {
    int64_t rank;
    memcpy(&rank, row->object, sizeof rank);
    return rank;
}

static int by_rank(void *ctx, ydb_txn *txn, const char *group, const ydb_view_row *a, const ydb_view_row *b, int *out) {
    int64_t x = rank_of(a), y = rank_of(b);
    (void)ctx; (void)txn;
    (void)group;
    *out = x != y ? (x > y) - (x < y) : strcmp(a->key, b->key);
    return 0;
}

static int rank_key(void *ctx, ydb_txn *txn, const char *group, const ydb_view_row *row, ydb_sort_key *key) {
    (void)ctx; (void)txn;
    (void)group;
    ydb_sort_key_append_int64(key, rank_of(row), 0);
    return ydb_sort_key_append_text(key, row->key, 0);
}

static void register_view(ydb_database *db, int keyed) {
    ydb_view_definition def = YDB_VIEW_DEFINITION_INIT;
    def.grouping = group_all;
    def.grouping_flavour = YDB_FLAVOUR_KEY;
    def.sorting_flavour = YDB_FLAVOUR_OBJECT;
    if (keyed) def.sort_key = rank_key;
    else def.sorting = by_rank;
    def.version_tag = keyed ? "keyed" : "compared";
    MUST(ydb_view_register(db, "v", &def, NULL, NULL));
}

/* --- plain SQLite baseline --- */

static void sql(sqlite3 *db, const char *text) {
    char *error = NULL;
    if (sqlite3_exec(db, text, NULL, NULL, &error) != SQLITE_OK) {
        fprintf(stderr, "sqlite: %s: %s\n", text, error);
        exit(1);
    }
}

typedef struct {
    double populate, update, insert, remove, peak_per_row, kept_per_row, top50, top50_uncached;
    long wal, wal_after_register;
} figures;

/* Commit passes run in this order on both stores: update, insert, delete. */
static double *pass_figure(figures *out, int pass) {
    return pass == 0 ? &out->update : pass == 1 ? &out->insert : &out->remove;
}

/* Binds key, rank and object (the statement's ?1 ?2 ?3; a DELETE has ?1 only). */
static void bind_row(sqlite3_stmt *statement, const char *key, int64_t rank) {
    sqlite3_bind_text(statement, 1, key, -1, SQLITE_TRANSIENT);
    if (sqlite3_bind_parameter_count(statement) < 2) return;
    sqlite3_bind_int64(statement, 2, rank);
    sqlite3_bind_blob(statement, 3, &rank, sizeof rank, SQLITE_TRANSIENT);
}

static void run_statement(sqlite3_stmt *statement, const char *key, int64_t rank) {
    bind_row(statement, key, rank);
    sqlite3_step(statement);
    sqlite3_reset(statement);
}

static void plain_run(const char *path, int rows, int commits, figures *out) {
    sqlite3 *db;
    sqlite3_stmt *statements[3];   /* update, insert, delete: the engine's passes */
    double *samples = malloc(sizeof(double) * (size_t)commits), start;
    char key[32];
    int i, pass;
    if (sqlite3_open(path, &db) != SQLITE_OK) exit(1);
    sql(db, "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;"
            "CREATE TABLE t (key TEXT PRIMARY KEY, grp TEXT, rank INTEGER, object BLOB) WITHOUT ROWID;");
    sqlite3_prepare_v2(db, "UPDATE t SET rank = ?2, object = ?3 WHERE key = ?1", -1, &statements[0], NULL);
    sqlite3_prepare_v2(db, "INSERT INTO t VALUES (?1, 'all', ?2, ?3)", -1, &statements[1], NULL);
    sqlite3_prepare_v2(db, "DELETE FROM t WHERE key = ?1", -1, &statements[2], NULL);
    sql(db, "BEGIN");
    for (i = 0; i < rows; i++) {
        snprintf(key, sizeof key, "k%d", i);
        run_statement(statements[1], key, (int64_t)(next_random() >> 24));
    }
    sql(db, "COMMIT");
    start = now();
    sql(db, "CREATE INDEX t_order ON t (grp, rank)");
    out->populate = now() - start;
    for (pass = 0; pass < 3; pass++) {
        for (i = 0; i < commits; i++) {
            int64_t rank = (int64_t)(next_random() >> 24);
            if (pass == 0) snprintf(key, sizeof key, "k%d", (int)(next_random() % (uint64_t)rows));
            else snprintf(key, sizeof key, "n%d", i);
            start = now();
            sql(db, "BEGIN");
            run_statement(statements[pass], key, rank);
            sql(db, "COMMIT");
            samples[i] = now() - start;
        }
        *pass_figure(out, pass) = median(samples, commits);
    }
    {
        sqlite3_stmt *top;
        sqlite3_prepare_v2(db, "SELECT key, object FROM t WHERE grp = 'all' ORDER BY rank LIMIT 50", -1, &top, NULL);
        for (i = 0; i < commits; i++) {
            start = now();
            while (sqlite3_step(top) == SQLITE_ROW) {
                (void)sqlite3_column_text(top, 0);
                (void)sqlite3_column_blob(top, 1);
            }
            sqlite3_reset(top);
            samples[i] = now() - start;
        }
        out->top50 = median(samples, commits);
        sqlite3_finalize(top);
    }
    for (pass = 0; pass < 3; pass++) sqlite3_finalize(statements[pass]);
    sqlite3_close(db);
    free(samples);
}

/* --- ydbview --- */

static void engine_run(const char *path, int rows, int commits, int keyed, figures *out) {
    ydb_database *db;
    ydb_connection *writer, *reader;
    ydb_txn *txn;
    double *samples = malloc(sizeof(double) * (size_t)commits), start;
    char key[32], wal[600];
    long before;
    int i, pass;
    MUST(ydb_database_open(path, &db));
    MUST(ydb_connection_open(db, &writer));
    MUST(ydb_connection_open(db, &reader));
    snprintf(wal, sizeof wal, "%s-wal", path);
    MUST(ydb_txn_begin_read_write(writer, &txn));
    for (i = 0; i < rows; i++) {
        int64_t rank = (int64_t)(next_random() >> 24);
        snprintf(key, sizeof key, "k%d", i);
        MUST(ydb_txn_set_object(txn, "items", key, &rank, sizeof rank, NULL, 0));
    }
    MUST(ydb_txn_commit(txn));
    before = memory_kib("VmRSS:");
    reset_peak();
    start = now();
    register_view(db, keyed);
    out->populate = now() - start;
    out->peak_per_row = (double)(memory_kib("VmHWM:") - before) * 1024.0 / rows;
    out->kept_per_row = (double)(memory_kib("VmRSS:") - before) * 1024.0 / rows;
    /* The registration's own transaction is in the log until a checkpoint
    ** copies it: the first commits may still find it there. */
    out->wal_after_register = file_size(wal);
    MUST(ydb_connection_begin_long_lived_read(reader, NULL));
    out->wal = 0;
    for (pass = 0; pass < 3; pass++) {
        for (i = 0; i < commits; i++) {
            int64_t rank = (int64_t)(next_random() >> 24);
            if (pass == 0) snprintf(key, sizeof key, "k%d", (int)(next_random() % (uint64_t)rows));
            else snprintf(key, sizeof key, "n%d", i);
            start = now();
            MUST(ydb_txn_begin_read_write(writer, &txn));
            if (pass < 2) MUST(ydb_txn_set_object(txn, "items", key, &rank, sizeof rank, NULL, 0));
            else MUST(ydb_txn_remove_object(txn, "items", key));
            MUST(ydb_txn_commit(txn));
            samples[i] = now() - start;
            MUST(ydb_connection_begin_long_lived_read(reader, NULL));
            if (file_size(wal) > out->wal) out->wal = file_size(wal);
        }
        *pass_figure(out, pass) = median(samples, commits);
    }
    for (pass = 0; pass < 2; pass++) {
        /* Pass 1 turns the row cache off: every read goes to SQLite. */
        if (pass == 1) MUST(ydb_connection_set_row_cache_limit(writer, 0));
        MUST(ydb_txn_begin_read(writer, &txn));
        for (i = 0; i < commits; i++) {
            void *buffer;
            size_t size, count;
            start = now();
            MUST(ydb_view_read_rows(txn, "v", "all", 0, 50, 0, &buffer, &size, &count));
            samples[i] = now() - start;
            ydb_free(buffer);
        }
        MUST(ydb_txn_end(txn));
        *(pass ? &out->top50_uncached : &out->top50) = median(samples, commits);
    }
    ydb_connection_close(reader);
    ydb_connection_close(writer);
    ydb_database_close(db);
    free(samples);
}

static void remove_files(const char *path) {
    char side[600];
    unlink(path);
    snprintf(side, sizeof side, "%s-wal", path);
    unlink(side);
    snprintf(side, sizeof side, "%s-shm", path);
    unlink(side);
}

int main(int argc, char **argv) {
    int rows = argc > 1 ? atoi(argv[1]) : 100000;
    int commits = argc > 2 ? atoi(argv[2]) : 2000;
    char directory[] = "/tmp/ydbview-c-bench-XXXXXX", path[512];
    figures plain = {0}, compared = {0}, keyed = {0};
    int form;
    if (rows < 100 || commits < 1 || !mkdtemp(directory)) {
        fprintf(stderr, "usage: %s [rows >= 100] [commits >= 1]\n", argv[0]);
        return 2;
    }
    snprintf(path, sizeof path, "%s/plain.sqlite", directory);
    fprintf(stderr, "plain SQLite, %d rows\n", rows);
    plain_run(path, rows, commits, &plain);
    remove_files(path);
    for (form = 0; form < 2; form++) {
        snprintf(path, sizeof path, "%s/%s.sqlite", directory, form ? "keyed" : "compared");
        fprintf(stderr, "ydbview, %s, %d rows\n", form ? "sort keys" : "C comparator", rows);
        engine_run(path, rows, commits, form, form ? &keyed : &compared);
        remove_files(path);
    }
    rmdir(directory);
    printf("### C: %d rows in one group, %d commits per figure (medians)\n\n", rows, commits);
    printf("| | plain SQLite | C comparator | ratio | sort key | ratio |\n|---|---|---|---|---|---|\n");
    printf("| populate (CREATE INDEX / register) | %.1f ms | %.1f ms | %.2fx | %.1f ms | %.2fx |\n",
           plain.populate * 1e3, compared.populate * 1e3, compared.populate / plain.populate,
           keyed.populate * 1e3, keyed.populate / plain.populate);
    printf("| peak memory while populating | | %.0f B/row | | %.0f B/row | |\n", compared.peak_per_row,
           keyed.peak_per_row);
    printf("| memory kept after populating | | %.0f B/row | | %.0f B/row | |\n", compared.kept_per_row,
           keyed.kept_per_row);
    printf("| update commit, reader catching up | %.1f us | %.1f us | %.2fx | %.1f us | %.2fx |\n",
           plain.update * 1e6, compared.update * 1e6, compared.update / plain.update, keyed.update * 1e6,
           keyed.update / plain.update);
    printf("| insert commit, reader catching up | %.1f us | %.1f us | %.2fx | %.1f us | %.2fx |\n",
           plain.insert * 1e6, compared.insert * 1e6, compared.insert / plain.insert, keyed.insert * 1e6,
           keyed.insert / plain.insert);
    printf("| delete commit, reader catching up | %.1f us | %.1f us | %.2fx | %.1f us | %.2fx |\n",
           plain.remove * 1e6, compared.remove * 1e6, compared.remove / plain.remove, keyed.remove * 1e6,
           keyed.remove / plain.remove);
    printf("| read the first 50 rows | %.1f us | %.1f us | %.2fx | %.1f us | %.2fx |\n", plain.top50 * 1e6,
           compared.top50 * 1e6, compared.top50 / plain.top50, keyed.top50 * 1e6, keyed.top50 / plain.top50);
    printf("| read the first 50 rows, row cache off | %.1f us | %.1f us | %.2fx | %.1f us | %.2fx |\n",
           plain.top50 * 1e6, compared.top50_uncached * 1e6, compared.top50_uncached / plain.top50,
           keyed.top50_uncached * 1e6, keyed.top50_uncached / plain.top50);
    printf("| WAL right after registering | | %.1f MB | | %.1f MB | |\n", compared.wal_after_register / 1e6,
           keyed.wal_after_register / 1e6);
    printf("| largest WAL over %d commits | | %.1f MB | | %.1f MB | |\n", 3 * commits, compared.wal / 1e6,
           keyed.wal / 1e6);
    return 0;
}
