/*
** bench.c -- ydbview from C against plain SQLite, in one run.
**
**   build/ydbview-c-bench [rows] [commits]      (defaults: 100000 2000)
**   build/ydbview-c-bench --profile <plain|compared|keyed>
**                         <update|insert|delete|populate> [rows] [commits]
**
** For `rows` rows in ONE group (the worst case for a sorted view):
**   population  register a view over existing rows (C comparator; sort key)
**               vs CREATE INDEX on the same rows in a plain table, three
**               rounds in a rotating order, each population and each
**               CREATE INDEX in a child process of its own, on a fresh
**               heap (medians, and each round's ratio); peak memory while
**               populating, per row (the largest of the rounds)
**   commits     one-row update / insert / delete commits with the view
**               registered and a reader in a long-lived read transaction
**               that catches up after every commit, vs the same statement
**               in BEGIN/COMMIT on the indexed plain table; the WAL's
**               largest size over the run. The three stores take turns,
**               50 commits (or reads) at a time.
**   reads       the first 50 rows of the group (ydb_view_read_rows), with
**               the connection's row cache on (default) and off, vs
**               SELECT ... ORDER BY rank LIMIT 50 on the indexed table
** With YDBVIEW_BENCH_ROWS_IN_MEMORY=1 in the environment the comparator
** view keeps its rows in memory (ydb_view_definition.sorting_rows_in_memory).
** Both stores use WAL and synchronous=NORMAL. Medians of `commits` samples,
** and for commits also their means (which count the rare slow commit).
** Prints a Markdown table; progress goes to stderr.
**
** --profile runs one store's one-row commits of one kind (the engine's
** reader catching up after each, outside the count), or its population,
** each inside a function of its own, for an instruction count that covers
** exactly that, e.g. (defaults: 20000 rows, 2000 commits):
**   valgrind --tool=callgrind --toggle-collect=profiled_commit \
**       build/ydbview-c-bench --profile keyed update
**   valgrind --tool=callgrind --toggle-collect=profiled_population \
**       build/ydbview-c-bench --profile plain populate 200000
** Updates pick rows at random; inserts add new keys n0, n1, ...; deletes
** remove such rows in turn, as the bench's delete pass removes its insert
** pass's rows (they are added first, in one transaction, outside the
** count).
*/
#define _POSIX_C_SOURCE 200809L
#include <sqlite3.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "bench_support.h"

static uint64_t rng = 0x2545F4914F6CDD1Du;
static uint64_t next_random(void) { return xorshift64(&rng); }

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
    /* YDBVIEW_BENCH_ROWS_IN_MEMORY=1: the comparator view keeps its rows in
    ** memory (sorting_rows_in_memory), for its commits and memory kept. */
    def.sorting_rows_in_memory = getenv("YDBVIEW_BENCH_ROWS_IN_MEMORY") != NULL;
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
    /* Commit times as means: the medians leave out the rare slow commit
    ** (one that stores a view's waiting rows, or SQLite's checkpoint). */
    double update_mean, insert_mean, remove_mean;
    long wal, wal_after_register;
} figures;

/* Commit passes run in this order on both stores: update, insert, delete. */
static double *pass_figure(figures *out, int pass) {
    return pass == 0 ? &out->update : pass == 1 ? &out->insert : &out->remove;
}

static double *pass_mean(figures *out, int pass) {
    return pass == 0 ? &out->update_mean : pass == 1 ? &out->insert_mean : &out->remove_mean;
}

/* One table row of times (seconds): the baseline, each store and its ratio. */
static void print_times(const char *label, double plain, double compared, double keyed) {
    printf("| %s | %.1f us | %.1f us | %.2fx | %.1f us | %.2fx |\n", label, plain * 1e6, compared * 1e6,
           compared / plain, keyed * 1e6, keyed / plain);
}

static double mean(const double *samples, int count) {
    double total = 0;
    int i;
    for (i = 0; i < count; i++) total += samples[i];
    return total / count;
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

/* One store of the run: the plain table or a ydbview database with its view.
** All three stay open: their commits and reads take turns (see take_turns). */
typedef struct {
    int engine;
    figures out;
    /* plain */
    sqlite3 *plain;
    sqlite3_stmt *statements[3];   /* update, insert, delete: the engine's passes */
    sqlite3_stmt *top;
    /* engine */
    ydb_database *db;
    ydb_connection *writer, *reader;
    ydb_txn *read;
    char wal[600];
} store;

/* The plain table with `rows` rows (no index yet): the baseline's file. */
static void plain_fill(const char *path, int rows, int keyed, figures *out) {
    sqlite3 *db;
    sqlite3_stmt *insert;
    char key[32];
    int i;
    (void)keyed; (void)out;
    if (sqlite3_open(path, &db) != SQLITE_OK) exit(1);
    sql(db, "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;"
            "CREATE TABLE t (key TEXT PRIMARY KEY, grp TEXT, rank INTEGER, object BLOB) WITHOUT ROWID;");
    sqlite3_prepare_v2(db, "INSERT INTO t VALUES (?1, 'all', ?2, ?3)", -1, &insert, NULL);
    sql(db, "BEGIN");
    for (i = 0; i < rows; i++) {
        snprintf(key, sizeof key, "k%d", i);
        run_statement(insert, key, (int64_t)(next_random() >> 24));
    }
    sql(db, "COMMIT");
    sqlite3_finalize(insert);
    sqlite3_close(db);
}

/* One timed CREATE INDEX over the plain table (dropping the last round's). */
static void plain_index(const char *path, int rows, int keyed, figures *out) {
    sqlite3 *db;
    double start;
    (void)rows; (void)keyed;
    if (sqlite3_open(path, &db) != SQLITE_OK) exit(1);
    sql(db, "PRAGMA synchronous=NORMAL; DROP INDEX IF EXISTS t_order;");
    start = now();
    sql(db, "CREATE INDEX t_order ON t (grp, rank)");
    out->populate = now() - start;
    sqlite3_close(db);
}

/* Opens the plain store for the commits and reads (its index is built). */
static void plain_open(store *s, const char *path) {
    if (sqlite3_open(path, &s->plain) != SQLITE_OK) exit(1);
    sql(s->plain, "PRAGMA synchronous=NORMAL");
    sqlite3_prepare_v2(s->plain, "UPDATE t SET rank = ?2, object = ?3 WHERE key = ?1", -1, &s->statements[0], NULL);
    sqlite3_prepare_v2(s->plain, "INSERT INTO t VALUES (?1, 'all', ?2, ?3)", -1, &s->statements[1], NULL);
    sqlite3_prepare_v2(s->plain, "DELETE FROM t WHERE key = ?1", -1, &s->statements[2], NULL);
    sqlite3_prepare_v2(s->plain, "SELECT key, object FROM t WHERE grp = 'all' ORDER BY rank LIMIT 50", -1,
                       &s->top, NULL);
}

/* A ydbview database with `rows` rows and no view: copied before each
** registration (`copy_database`). */
static void engine_fill(const char *path, int rows, int keyed, figures *out) {
    ydb_database *db;
    ydb_connection *writer;
    ydb_txn *txn;
    char key[32];
    int i;
    (void)keyed; (void)out;
    MUST(ydb_database_open(path, &db));
    MUST(ydb_connection_open(db, &writer));
    MUST(ydb_txn_begin_read_write(writer, &txn));
    for (i = 0; i < rows; i++) {
        int64_t rank = (int64_t)(next_random() >> 24);
        snprintf(key, sizeof key, "k%d", i);
        MUST(ydb_txn_set_object(txn, "items", key, &rank, sizeof rank, NULL, 0));
    }
    MUST(ydb_txn_commit(txn));
    ydb_connection_close(writer);
    ydb_database_close(db);
}

/* Registers the view over a copy of engine_fill's rows, measuring the
** registration: its time, the process's peak and what stays resident. */
static void engine_register(const char *path, int rows, int keyed, figures *out) {
    ydb_database *db;
    char wal[600];
    double start;
    long before;
    MUST(ydb_database_open(path, &db));
    before = memory_kib("VmRSS:");
    reset_peak();
    start = now();
    register_view(db, keyed);
    out->populate = now() - start;
    out->peak_per_row = (double)(memory_kib("VmHWM:") - before) * 1024.0 / rows;
    out->kept_per_row = (double)(memory_kib("VmRSS:") - before) * 1024.0 / rows;
    /* The registration's own transaction is in the log until a checkpoint
    ** copies it. */
    snprintf(wal, sizeof wal, "%s-wal", path);
    out->wal_after_register = file_size(wal);
    ydb_database_close(db);
}

typedef void (*job)(const char *path, int rows, int keyed, figures *out);

/* Runs `work` in a child process, before the parent opens anything, and
** returns what it measured. Every population and every CREATE INDEX runs
** this way, on a fresh heap: memory a process frees stays in its heap, and
** a later population reusing it looked smaller (when the sort-key store
** was populated after the comparator store had been closed in the same
** process, its peak at 1M rows read 130-138 B/row; on a fresh heap, 191).
** The data is the same in every child: each starts from the parent's
** random state. */
static void in_child(job work, const char *path, int rows, int keyed, figures *out) {
    int fds[2], status;
    pid_t child;
    if (pipe(fds) != 0 || (child = fork()) < 0) exit(1);
    if (child == 0) {
        figures measured = {0};
        close(fds[0]);
        work(path, rows, keyed, &measured);
        _exit(write(fds[1], &measured, sizeof measured) == (ssize_t)sizeof measured ? 0 : 1);
    }
    close(fds[1]);
    if (read(fds[0], out, sizeof *out) != (ssize_t)sizeof *out || waitpid(child, &status, 0) != child ||
        !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        fprintf(stderr, "a population step on %s failed\n", path);
        exit(1);
    }
    close(fds[0]);
}

static void remove_files(const char *path) {
    char side[600];
    unlink(path);
    snprintf(side, sizeof side, "%s-wal", path);
    unlink(side);
    snprintf(side, sizeof side, "%s-shm", path);
    unlink(side);
}

static void copy_file(const char *from, const char *to) {
    char buffer[1 << 16];
    size_t count;
    FILE *in = fopen(from, "rb"), *out;
    if (!in) return;   /* no log to copy */
    if (!(out = fopen(to, "wb"))) exit(1);
    while ((count = fread(buffer, 1, sizeof buffer, in)) > 0)
        if (fwrite(buffer, 1, count, out) != count) exit(1);
    fclose(in);
    if (fclose(out) != 0) exit(1);
}

/* A fresh copy of a closed database (and its log, if one is left). */
static void copy_database(const char *from, const char *to) {
    char from_wal[600], to_wal[600];
    remove_files(to);
    copy_file(from, to);
    snprintf(from_wal, sizeof from_wal, "%s-wal", from);
    snprintf(to_wal, sizeof to_wal, "%s-wal", to);
    copy_file(from_wal, to_wal);
}

/* Opens a database engine_register made: registering loads the stored view. */
static void engine_open(store *s, const char *path, int keyed) {
    s->engine = 1;
    MUST(ydb_database_open(path, &s->db));
    MUST(ydb_connection_open(s->db, &s->writer));
    MUST(ydb_connection_open(s->db, &s->reader));
    snprintf(s->wal, sizeof s->wal, "%s-wal", path);
    register_view(s->db, keyed);
    MUST(ydb_connection_begin_long_lived_read(s->reader, NULL));
}

/* One commit of `pass` (0 update, 1 insert, 2 delete), without the
** engine's reader catching up: what the bench times, and what --profile
** counts (kept out of line for callgrind's --toggle-collect). */
__attribute__((noinline)) static void profiled_commit(store *s, int pass, const char *key, int64_t rank) {
    if (!s->engine) {
        sql(s->plain, "BEGIN");
        run_statement(s->statements[pass], key, rank);
        sql(s->plain, "COMMIT");
    } else {
        ydb_txn *txn;
        MUST(ydb_txn_begin_read_write(s->writer, &txn));
        if (pass < 2) MUST(ydb_txn_set_object(txn, "items", key, &rank, sizeof rank, NULL, 0));
        else MUST(ydb_txn_remove_object(txn, "items", key));
        MUST(ydb_txn_commit(txn));
    }
}

/* The rows n0 .. n<count - 1> that a profiled delete pass removes, added
** in one transaction. */
static void add_rows_to_delete(store *s, int count) {
    ydb_txn *txn = NULL;
    char key[32];
    int i;
    if (!s->engine) sql(s->plain, "BEGIN");
    else MUST(ydb_txn_begin_read_write(s->writer, &txn));
    for (i = 0; i < count; i++) {
        int64_t rank = (int64_t)(next_random() >> 24);
        snprintf(key, sizeof key, "n%d", i);
        if (!s->engine) run_statement(s->statements[1], key, rank);
        else MUST(ydb_txn_set_object(txn, "items", key, &rank, sizeof rank, NULL, 0));
    }
    if (!s->engine) sql(s->plain, "COMMIT");
    else MUST(ydb_txn_commit(txn));
}

/* One timed one-row commit of `pass`. The engine's reader then catches
** up, untimed, as a screen would. */
static double commit_once(store *s, int pass, const char *key, int64_t rank) {
    double start = now(), took;
    profiled_commit(s, pass, key, rank);
    took = now() - start;
    if (s->engine) {
        MUST(ydb_connection_begin_long_lived_read(s->reader, NULL));
        if (file_size(s->wal) > s->out.wal) s->out.wal = file_size(s->wal);
    }
    return took;
}

/* Begins (cached >= 0: with the row cache on or off) or ends (-1) the read
** transaction the engine's reads share, as a screen keeps one. */
static void reading(store *s, int cached) {
    if (!s->engine) return;
    if (cached < 0) {
        MUST(ydb_txn_end(s->read));
        return;
    }
    MUST(ydb_connection_set_row_cache_limit(s->writer, cached ? 250 : 0));
    MUST(ydb_txn_begin_read(s->writer, &s->read));
}

static double read_once(store *s) {
    double start = now();
    if (!s->engine) {
        while (sqlite3_step(s->top) == SQLITE_ROW) {
            (void)sqlite3_column_text(s->top, 0);
            (void)sqlite3_column_blob(s->top, 1);
        }
        sqlite3_reset(s->top);
    } else {
        void *buffer;
        size_t size, count;
        MUST(ydb_view_read_rows(s->read, "v", "all", 0, 50, 0, &buffer, &size, &count));
        ydb_free(buffer);
    }
    return now() - start;
}

static void store_close(store *s) {
    int pass;
    if (!s->engine) {
        for (pass = 0; pass < 3; pass++) sqlite3_finalize(s->statements[pass]);
        sqlite3_finalize(s->top);
        sqlite3_close(s->plain);
    } else {
        ydb_connection_close(s->reader);
        ydb_connection_close(s->writer);
        ydb_database_close(s->db);
    }
}

/* Rounds of the populations (and of CREATE INDEX). */
#define ROUNDS 3

/* Operations a store makes in a row before the next store's turn. */
#define BLOCK 50

/* The stores take turns, BLOCK operations at a time and in a rotating
** order: each loop runs warm, as when each store ran its whole loop alone,
** but every figure and its baseline see the same stretch of a shared
** machine (run one after the other, the baselines moved by a third between
** runs). `op` -1 reads; 0-2 commit pass `op` with keys[i] and ranks[i]. */
static void take_turns(store *stores, int count, int commits, int op, char (*keys)[32], const int64_t *ranks,
                       double **samples) {
    int start, turn, i;
    for (start = 0; start < commits; start += BLOCK) {
        for (turn = 0; turn < count; turn++) {
            int which = (start / BLOCK + turn) % count;
            for (i = start; i < start + BLOCK && i < commits; i++)
                samples[which][i] = op < 0 ? read_once(&stores[which])
                                           : commit_once(&stores[which], op, keys[i], ranks[i]);
        }
    }
}


/* CREATE INDEX on the plain table, or the view's registration. */
__attribute__((noinline)) static void profiled_population(sqlite3 *plain, ydb_database *db, int keyed) {
    if (plain) sql(plain, "CREATE INDEX t_order ON t (grp, rank)");
    else register_view(db, keyed);
}

static int profile(int argc, char **argv) {
    static const char *const kinds[] = {"plain", "compared", "keyed"};
    static const char *const passes[] = {"update", "insert", "delete", "populate"};
    int rows = argc > 4 ? atoi(argv[4]) : 20000, commits = argc > 5 ? atoi(argv[5]) : 2000;
    int which = -1, pass = -1, i;
    char directory[] = "/tmp/ydbview-c-profile-XXXXXX", path[512], key[32];
    store s;
    for (i = 0; argc > 2 && i < 3; i++) if (strcmp(argv[2], kinds[i]) == 0) which = i;
    for (i = 0; argc > 3 && i < 4; i++) if (strcmp(argv[3], passes[i]) == 0) pass = i;
    if (which < 0 || pass < 0 || rows < 100 || commits < 1 || !mkdtemp(directory)) {
        fprintf(stderr, "usage: %s --profile <plain|compared|keyed> <update|insert|delete|populate> "
                        "[rows >= 100] [commits >= 1]\n", argv[0]);
        return 2;
    }
    snprintf(path, sizeof path, "%s/%s.sqlite", directory, kinds[which]);
    memset(&s, 0, sizeof s);
    if (which == 0) plain_fill(path, rows, 0, NULL);
    else engine_fill(path, rows, 0, NULL);
    if (pass == 3) {
        sqlite3 *plain = NULL;
        ydb_database *db = NULL;
        if (which == 0) {
            if (sqlite3_open(path, &plain) != SQLITE_OK) exit(1);
            sql(plain, "PRAGMA synchronous=NORMAL");
        } else {
            MUST(ydb_database_open(path, &db));
        }
        profiled_population(plain, db, which == 2);
        if (plain) sqlite3_close(plain);
        else ydb_database_close(db);
    } else {
        if (which == 0) {
            plain_index(path, rows, 0, &s.out);
            plain_open(&s, path);
        } else {
            engine_open(&s, path, which == 2);
        }
        if (pass == 2) add_rows_to_delete(&s, commits);
        for (i = 0; i < commits; i++) {
            int64_t rank = (int64_t)(next_random() >> 24);
            if (pass == 0) snprintf(key, sizeof key, "k%d", (int)(next_random() % (uint64_t)rows));
            else snprintf(key, sizeof key, "n%d", i);
            commit_once(&s, pass, key, rank);   /* its catching up lies outside profiled_commit */
        }
        store_close(&s);
    }
    remove_files(path);
    rmdir(directory);
    return 0;
}

int main(int argc, char **argv) {
    if (argc > 1 && strcmp(argv[1], "--profile") == 0) return profile(argc, argv);
    int rows = argc > 1 ? atoi(argv[1]) : 100000;
    int commits = argc > 2 ? atoi(argv[2]) : 2000;
    char directory[] = "/tmp/ydbview-c-bench-XXXXXX", paths[3][512], rows_only[512];
    figures rounds[3][ROUNDS], unused;
    double taken[ROUNDS];
    int round, turn;
    char (*keys)[32];
    int64_t *ranks;
    double *samples[3];
    store stores[3];
    figures plain, compared, keyed;
    int which, pass, i;
    if (rows < 100 || commits < 1 || !mkdtemp(directory)) {
        fprintf(stderr, "usage: %s [rows >= 100] [commits >= 1]\n", argv[0]);
        return 2;
    }
    memset(stores, 0, sizeof stores);
    keys = malloc(sizeof *keys * (size_t)commits);
    ranks = malloc(sizeof *ranks * (size_t)commits);
    for (which = 0; which < 3; which++) samples[which] = malloc(sizeof(double) * (size_t)commits);
    snprintf(paths[0], sizeof paths[0], "%s/plain.sqlite", directory);
    snprintf(paths[1], sizeof paths[1], "%s/compared.sqlite", directory);
    snprintf(paths[2], sizeof paths[2], "%s/keyed.sqlite", directory);
    snprintf(rows_only, sizeof rows_only, "%s/rows.sqlite", directory);
    fprintf(stderr, "%d rows: plain table, ydbview rows\n", rows);
    in_child(plain_fill, paths[0], rows, 0, &unused);
    in_child(engine_fill, rows_only, rows, 0, &unused);
    /* ROUNDS rounds of the three populations, in a rotating order, each on
    ** a fresh heap; every figure is the median of its rounds (one
    ** population per run moved with the baseline by half). */
    for (round = 0; round < ROUNDS; round++) {
        fprintf(stderr, "populations, round %d of %d\n", round + 1, ROUNDS);
        for (turn = 0; turn < 3; turn++) {
            which = (round + turn) % 3;
            if (which == 0) {
                in_child(plain_index, paths[0], rows, 0, &rounds[0][round]);
            } else {
                copy_database(rows_only, paths[which]);
                in_child(engine_register, paths[which], rows, which == 2, &rounds[which][round]);
            }
        }
    }
    remove_files(rows_only);
    for (which = 0; which < 3; which++) {
        stores[which].out = rounds[which][ROUNDS - 1];   /* the WAL after registering: the last round's */
        for (round = 0; round < ROUNDS; round++) taken[round] = rounds[which][round].populate;
        stores[which].out.populate = median(taken, ROUNDS);
        for (round = 0; round < ROUNDS; round++) taken[round] = rounds[which][round].kept_per_row;
        stores[which].out.kept_per_row = median(taken, ROUNDS);
        for (round = 0; round < ROUNDS; round++)   /* the goal is a ceiling: the largest peak */
            if (rounds[which][round].peak_per_row > stores[which].out.peak_per_row)
                stores[which].out.peak_per_row = rounds[which][round].peak_per_row;
    }
    plain_open(&stores[0], paths[0]);
    engine_open(&stores[1], paths[1], 0);
    engine_open(&stores[2], paths[2], 1);
    fprintf(stderr, "commits and reads, the three stores taking turns\n");
    for (pass = 0; pass < 3; pass++) {
        for (i = 0; i < commits; i++) {
            ranks[i] = (int64_t)(next_random() >> 24);
            if (pass == 0) snprintf(keys[i], sizeof keys[i], "k%d", (int)(next_random() % (uint64_t)rows));
            else snprintf(keys[i], sizeof keys[i], "n%d", i);   /* pass 2 deletes pass 1's rows */
        }
        take_turns(stores, 3, commits, pass, keys, ranks, samples);
        for (which = 0; which < 3; which++) {
            *pass_mean(&stores[which].out, pass) = mean(samples[which], commits);
            *pass_figure(&stores[which].out, pass) = median(samples[which], commits);
        }
    }
    for (pass = 0; pass < 2; pass++) {
        /* Pass 1 turns the row cache off: every read goes to SQLite. */
        for (which = 0; which < 3; which++) reading(&stores[which], !pass);
        take_turns(stores, 3, commits, -1, keys, ranks, samples);
        for (which = 0; which < 3; which++) {
            reading(&stores[which], -1);
            *(pass ? &stores[which].out.top50_uncached : &stores[which].out.top50) = median(samples[which], commits);
        }
    }
    for (which = 0; which < 3; which++) {
        store_close(&stores[which]);
        remove_files(paths[which]);
        free(samples[which]);
    }
    rmdir(directory);
    free(keys);
    free(ranks);
    plain = stores[0].out;
    compared = stores[1].out;
    keyed = stores[2].out;
    printf("### C: %d rows in one group, %d commits per figure (medians)\n\n", rows, commits);
    printf("| | plain SQLite | C comparator | ratio | sort key | ratio |\n|---|---|---|---|---|---|\n");
    printf("| populate (CREATE INDEX / register), median of %d | %.1f ms | %.1f ms | %.2fx | %.1f ms | %.2fx |\n",
           ROUNDS, plain.populate * 1e3, compared.populate * 1e3, compared.populate / plain.populate,
           keyed.populate * 1e3, keyed.populate / plain.populate);
    printf("| populate, each round's ratio | | |");
    for (round = 0; round < ROUNDS; round++)
        printf(" %.2f%s", rounds[1][round].populate / rounds[0][round].populate, round + 1 < ROUNDS ? "," : "x |");
    printf(" |");
    for (round = 0; round < ROUNDS; round++)
        printf(" %.2f%s", rounds[2][round].populate / rounds[0][round].populate, round + 1 < ROUNDS ? "," : "x |");
    printf("\n");
    printf("| peak memory while populating, largest of %d | | %.0f B/row | | %.0f B/row | |\n", ROUNDS,
           compared.peak_per_row, keyed.peak_per_row);
    printf("| memory kept after populating | | %.0f B/row | | %.0f B/row | |\n", compared.kept_per_row,
           keyed.kept_per_row);
    print_times("update commit, reader catching up", plain.update, compared.update, keyed.update);
    print_times("insert commit, reader catching up", plain.insert, compared.insert, keyed.insert);
    print_times("delete commit, reader catching up", plain.remove, compared.remove, keyed.remove);
    print_times("update commit, mean", plain.update_mean, compared.update_mean, keyed.update_mean);
    print_times("insert commit, mean", plain.insert_mean, compared.insert_mean, keyed.insert_mean);
    print_times("delete commit, mean", plain.remove_mean, compared.remove_mean, keyed.remove_mean);
    print_times("read the first 50 rows", plain.top50, compared.top50, keyed.top50);
    /* The baseline has no row cache: the same query either way. */
    print_times("read the first 50 rows, row cache off", plain.top50, compared.top50_uncached, keyed.top50_uncached);
    printf("| WAL right after registering | | %.1f MB | | %.1f MB | |\n", compared.wal_after_register / 1e6,
           keyed.wal_after_register / 1e6);
    printf("| largest WAL over %d commits | | %.1f MB | | %.1f MB | |\n", 3 * commits, compared.wal / 1e6,
           keyed.wal / 1e6);
    return 0;
}
