/*
** test_multiprocess.c -- shared mode (YDB_OPEN_MULTI_PROCESS) under stress:
** several processes on one database file, some of them killed at random.
**
** One program, several roles, each its own process with its own
** ydb_database (the main role re-executes this program, /proc/self/exe):
**
**   writer PATH SEED [--slot S] [--gen G] [--view] [--seconds T]
**       commits random histories (1-5 writes a transaction: sets of new and
**       existing rows into the view's groups, object and metadata
**       replacements, touches, removals, now and then a whole collection
**       emptied) into its slot's own collections until SIGTERM or T s.
**       Before each commit it appends the transaction to its journal
**       (PATH.journal.S.G, line "I ..."), after ydb_txn_commit returned
**       "K" (committed) or "F" (failed: rolled back); "E ..." records an
**       error. --view registers the view first (one writer slot does, the
**       other does not).
**   sqlite-writer PATH SEED [--gen G] [--seconds T]   (main: --sqlite-writer)
**       the same through the plain sqlite3 API on ydb_rows (INSERT ... ON
**       CONFLICT DO UPDATE, UPDATE, DELETE), a few transactions a second,
**       journaled the same way (slot 2, collection "sql").
**   follower PATH [--stop FILE] [--ready FILE] [--result FILE] [--name N]
**       registers the view, keeps two mappings over it (static groups
**       a..d with dynamic sections c, d; and d..a, all dynamic, b
**       reversed), begins a long-lived read, then loops: poll() on the
**       connection's wakeup descriptor (100 ms), catch up, take each
**       mappings' changeset, apply its edit script step by step to an
**       in-memory model of the table (rows and row ids per section),
**       compare the model with a fresh read through the mappings, and
**       compare the view with the rows at that snapshot (grouped and
**       sorted here). YDB_RELOAD: reload the model (counted). A wakeup
**       descriptor that stays unreadable while the database is ahead of
**       the connection is a failure. When the stop file (default
**       PATH.stop) exists: one last catch-up, with the "sql" rows checked
**       too and every row id the steps gave compared with ydb_rows. Prints
**       "follower: catchups=N steps=N reloads=N mismatches=N ..." and
**       exits 1 on any mismatch or error.
**   (no role) [--seconds T] [--seed N] [--sqlite-writer] [--keep]
**       a temporary directory, 2 writers and a follower (and the SQLite
**       writer), T seconds (default 8; YDBVIEW_LONG_TESTS=1: 150) during
**       which writers are SIGKILLed at random points and restarted, the
**       follower is SIGKILLed once and restarted fresh, and a "sleeper"
**       follower is SIGSTOPped until the commit log no longer holds the
**       commit after it (LOG_LIMIT = 50 in every process), then
**       SIGCONTed: it must reload at least once. Then: writers SIGTERMed
**       (they must exit 0), the stop file, the followers' results (exit 0,
**       0 mismatches); every journal replayed against a fresh reader (a
**       transaction whose "K" is missing because its writer was killed may
**       or may not be there; anything else must be exactly as journaled);
**       the -wal file (<= 16 MiB while the followers keep up; its growth
**       after the sleeper is reported) and ydb_commit_log (<= limit + 64,
**       sampled all along, with plain sqlite3) stay bounded. Prints a
**       summary and exits non-zero on any failure. Seeds are printed:
**       --seed N replays the same random choices (not the same
**       interleaving).
*/
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sqlite3.h>
#include <stdarg.h>
#include <stdint.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"
#include "clock.h"
#include "random.h"

#define VIEW "byLetter"
#define VIEW_TAG "mp-1"
#define LOG_LIMIT 50
#define LOG_SLACK 64 /* each process prunes every min(64, limit) commits */
#define WAL_LIMIT (16L * 1024 * 1024)
#define WRITER_SLOTS 2
#define SQL_SLOT 2
#define SLOTS 3
#define KEYS 40     /* per collection of a writer slot */
#define SQL_KEYS 30 /* in collection "sql" */
#define MAX_SECTIONS 8
#define MAPPINGS 2
#define MAX_REPORTS 5

static volatile sig_atomic_t stop_requested = 0;
static void on_term(int sig) {
    (void)sig;
    stop_requested = 1;
}

static void line_buffered(void) {
    setvbuf(stdout, NULL, _IOLBF, 0);
    setvbuf(stderr, NULL, _IOLBF, 0);
}

static int file_exists(const char *path) { return access(path, F_OK) == 0; }

static void touch_file(const char *path) {
    int fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
    if (fd >= 0) close(fd);
}

/* ---- the view every registering process defines the same way ----
** Objects are "G:RANK:TAG": group G (a..d; anything else is left out),
** sorted by RANK (text), then collection, then key. */

static size_t rank_of(const char *object, size_t size, char *out, size_t out_size) {
    size_t i = 0, n = 0;
    while (i < size && object[i] != ':') i++;
    for (i++; i < size && object[i] != ':' && n + 1 < out_size; i++) out[n++] = object[i];
    out[n] = '\0';
    return n;
}

static int letter_group(void *ctx, ydb_txn *txn, const ydb_view_row *row, ydb_group_result *result) {
    const char *object = (const char *)row->object;
    char group[2];
    (void)ctx;
    (void)txn;
    if (object == NULL) return 1;
    if (row->object_size == 0 || object[0] < 'a' || object[0] > 'd') return 0;
    group[0] = object[0];
    group[1] = '\0';
    return ydb_group_result_set(result, group);
}

static int rank_collection_key(void *ctx, ydb_txn *txn, const char *group, const ydb_view_row *row,
                               ydb_sort_key *key) {
    char rank[32];
    int rc;
    (void)ctx;
    (void)txn;
    (void)group;
    if (row->object == NULL) return 1;
    rank_of((const char *)row->object, row->object_size, rank, sizeof rank);
    rc = ydb_sort_key_append_text(key, rank, 0);
    if (rc == YDB_OK) rc = ydb_sort_key_append_text(key, row->collection, 0);
    if (rc == YDB_OK) rc = ydb_sort_key_append_text(key, row->key, 0);
    return rc;
}

static int register_view(ydb_database *db) {
    ydb_view_definition def = YDB_VIEW_DEFINITION_INIT;
    int rc = YDB_BUSY;
    def.grouping = letter_group;
    def.grouping_flavour = YDB_FLAVOUR_OBJECT;
    def.sort_key = rank_collection_key;
    def.sorting_flavour = YDB_FLAVOUR_OBJECT;
    def.version_tag = VIEW_TAG;
    for (int attempt = 0; attempt < 3 && rc == YDB_BUSY; attempt++) rc = ydb_view_register(db, VIEW, &def, NULL, NULL);
    return rc;
}

/* Opens PATH in shared mode with the test's commit log limit. A YDB_BUSY
** (another process creating the file at the same moment) is retried for
** 10 s and said on stderr. */
static ydb_database *open_shared(const char *path, const char *who) {
    ydb_database_options options = YDB_DATABASE_OPTIONS_INIT;
    double until = now_seconds() + 10;
    int said = 0;
    options.flags |= YDB_OPEN_MULTI_PROCESS;
    for (;;) {
        ydb_database *db = NULL;
        int rc = ydb_database_open_with_options(path, &options, &db), multi = 0;
        if (rc == YDB_OK) {
            if (ydb_database_set_commit_log_limit(db, LOG_LIMIT) != YDB_OK ||
                ydb_database_is_multi_process(db, &multi) != YDB_OK || !multi) {
                fprintf(stderr, "%s: setting up shared mode failed: %s\n", who, ydb_errmsg());
                ydb_database_close(db);
                return NULL;
            }
            return db;
        }
        if (rc != YDB_BUSY || now_seconds() > until) {
            fprintf(stderr, "%s: ydb_database_open_with_options(%s) returned %d: %s\n", who, path, rc, ydb_errmsg());
            return NULL;
        }
        if (!said++) fprintf(stderr, "%s: open gave YDB_BUSY (retrying): %s\n", who, ydb_errmsg());
        sleep_ms(20);
    }
}

/* ---- journals: one line per event, appended with one write() ---- */

static int journal_fd = -1;

static void journal(const char *format, ...) {
    char line[2048];
    va_list args;
    int n;
    va_start(args, format);
    n = vsnprintf(line, sizeof line - 1, format, args);
    va_end(args);
    if (n < 0) return;
    if ((size_t)n > sizeof line - 2) n = (int)sizeof line - 2;
    line[n++] = '\n';
    if (write(journal_fd, line, (size_t)n) != n) {
        perror("journal write");
        _exit(3);
    }
}

static void journal_path(char *out, size_t size, const char *path, int slot, int gen) {
    snprintf(out, size, "%s.journal.%d.%d", path, slot, gen);
}

/* The names of a slot's rows: collection c (0 or 1; the SQL slot has one),
** key k. */
static void slot_collection(char *out, size_t size, int slot, int c) {
    if (slot == SQL_SLOT) snprintf(out, size, "sql");
    else snprintf(out, size, "w%d%c", slot, 'a' + c);
}
static void slot_key(char *out, size_t size, int slot, int k) {
    snprintf(out, size, "%c%02d", slot == SQL_SLOT ? 'q' : 'k', k);
}
static int slot_collections(int slot) { return slot == SQL_SLOT ? 1 : 2; }
static int slot_keys(int slot) { return slot == SQL_SLOT ? SQL_KEYS : KEYS; }

/* ---- writer ---- */

typedef struct {
    char kind; /* S set, O replace object, M replace metadata, T touch, R remove, A remove all */
    int touch; /* T: 0 object, 1 metadata, 2 row */
    char collection[8], key[8];
    char object[48], meta[24]; /* meta "-": none (S) / remove (M) */
} op;

static void random_object(char *out, size_t size, int slot, int gen, long serial) {
    static const char letters[] = "abcdabcdabcdx"; /* "x": left out of the view */
    snprintf(out, size, "%c:%03d:s%dg%dn%ld", letters[pick(sizeof letters - 1)], (int)pick(1000), slot, gen, serial);
}

static void random_op(op *o, int slot, int gen, long serial) {
    unsigned roll = (unsigned)pick(1000);
    memset(o, 0, sizeof *o);
    slot_collection(o->collection, sizeof o->collection, slot, (int)pick((size_t)slot_collections(slot)));
    slot_key(o->key, sizeof o->key, slot, (int)pick((size_t)slot_keys(slot)));
    strcpy(o->meta, "-");
    if (roll < 450) {
        o->kind = 'S';
        random_object(o->object, sizeof o->object, slot, gen, serial);
        if (pick(3) == 0) snprintf(o->meta, sizeof o->meta, "m%ld", serial);
    } else if (roll < 600) {
        o->kind = 'O';
        random_object(o->object, sizeof o->object, slot, gen, serial);
    } else if (roll < 680) {
        o->kind = 'M';
        if (pick(4) != 0) snprintf(o->meta, sizeof o->meta, "n%ld", serial);
    } else if (roll < 780) {
        o->kind = 'T';
        o->touch = (int)pick(3);
    } else if (roll < 997) {
        o->kind = 'R';
    } else {
        o->kind = 'A';
    }
}

static size_t format_op(char *out, size_t size, const op *o) {
    int n;
    switch (o->kind) {
    case 'S': n = snprintf(out, size, "S %s %s %s %s", o->collection, o->key, o->object, o->meta); break;
    case 'O': n = snprintf(out, size, "O %s %s %s", o->collection, o->key, o->object); break;
    case 'M': n = snprintf(out, size, "M %s %s %s", o->collection, o->key, o->meta); break;
    case 'A': n = snprintf(out, size, "A %s", o->collection); break;
    default: n = snprintf(out, size, "%c %s %s", o->kind, o->collection, o->key); break;
    }
    return n < 0 ? 0 : (size_t)n;
}

static int apply_op(ydb_txn *txn, const op *o) {
    int no_meta = strcmp(o->meta, "-") == 0;
    switch (o->kind) {
    case 'S':
        return ydb_txn_set_object(txn, o->collection, o->key, o->object, strlen(o->object), no_meta ? NULL : o->meta,
                                  no_meta ? 0 : strlen(o->meta));
    case 'O': return ydb_txn_replace_object(txn, o->collection, o->key, o->object, strlen(o->object));
    case 'M':
        return ydb_txn_replace_metadata(txn, o->collection, o->key, no_meta ? NULL : o->meta,
                                        no_meta ? 0 : strlen(o->meta));
    case 'T':
        if (o->touch == 0) return ydb_txn_touch_object(txn, o->collection, o->key);
        if (o->touch == 1) return ydb_txn_touch_metadata(txn, o->collection, o->key);
        return ydb_txn_touch_row(txn, o->collection, o->key);
    case 'R': return ydb_txn_remove_object(txn, o->collection, o->key);
    case 'A': return ydb_txn_remove_all_objects(txn, o->collection);
    default: return YDB_ERROR;
    }
}

/* Plans 1-5 operations and their journal line ("I op|op|..."). */
static int plan_transaction(op *ops, char *line, size_t size, int slot, int gen, long *serial, int max_ops) {
    int count = 1 + (int)pick((size_t)max_ops);
    size_t used = (size_t)snprintf(line, size, "I ");
    for (int i = 0; i < count; i++) {
        random_op(&ops[i], slot, gen, (*serial)++);
        if (i > 0 && used + 1 < size) line[used++] = '|';
        used += format_op(line + used, size - used, &ops[i]);
    }
    return count;
}

/* What both writers do first: SIGTERM ends their loop, the seed is set,
** and their journal (its path left in `file`) is open. */
static int start_writer_process(const char *path, uint64_t seed, int slot, int gen, char *file, size_t size) {
    struct sigaction term;

    memset(&term, 0, sizeof term);
    term.sa_handler = on_term;
    term.sa_flags = SA_RESTART;
    sigaction(SIGTERM, &term, NULL);
    random_state = seed;
    journal_path(file, size, path, slot, gen);
    journal_fd = open(file, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    if (journal_fd < 0) {
        perror(file);
        return 0;
    }
    return 1;
}

static int run_writer(const char *path, uint64_t seed, int slot, int gen, int with_view, double seconds) {
    char file[1024], who[64], line[1500];
    ydb_database *db;
    ydb_connection *conn = NULL;
    double deadline = now_seconds() + seconds;
    long serial = 0, commits = 0, failures = 0, errors = 0;

    snprintf(who, sizeof who, "writer slot %d gen %d", slot, gen);
    if (!start_writer_process(path, seed, slot, gen, file, sizeof file)) return 2;
    if ((db = open_shared(path, who)) == NULL) {
        journal("E open: %s", ydb_errmsg());
        return 1;
    }
    if (with_view) {
        int rc = register_view(db);
        if (rc != YDB_OK) {
            fprintf(stderr, "%s: registering the view returned %d: %s\n", who, rc, ydb_errmsg());
            journal("E register %d: %s", rc, ydb_errmsg());
            errors++;
        }
    }
    if (ydb_connection_open(db, &conn) != YDB_OK) {
        journal("E connection: %s", ydb_errmsg());
        ydb_database_close(db);
        return 1;
    }
    while (!stop_requested && now_seconds() < deadline) {
        op ops[5];
        ydb_txn *txn = NULL;
        int count = plan_transaction(ops, line, sizeof line, slot, gen, &serial, 5), rc, i;
        journal("%s", line);
        rc = ydb_txn_begin_read_write(conn, &txn);
        for (i = 0; rc == YDB_OK && i < count; i++) {
            rc = apply_op(txn, &ops[i]);
            if (rc != YDB_OK) {
                fprintf(stderr, "%s: op %d returned %d: %s\n", who, i, rc, ydb_errmsg());
                journal("E op %d returned %d: %s", i, rc, ydb_errmsg());
                ydb_txn_rollback(txn);
            }
        }
        if (rc == YDB_OK) {
            rc = ydb_txn_commit(txn);
            if (rc != YDB_OK) {
                fprintf(stderr, "%s: ydb_txn_commit returned %d: %s\n", who, rc, ydb_errmsg());
                journal("E commit returned %d: %s", rc, ydb_errmsg());
            }
        } else if (i == 0) {
            fprintf(stderr, "%s: ydb_txn_begin_read_write returned %d: %s\n", who, rc, ydb_errmsg());
            journal("E begin returned %d: %s", rc, ydb_errmsg());
        }
        if (rc == YDB_OK) {
            journal("K");
            commits++;
        } else {
            journal("F");
            failures++;
            errors++;
            sleep_ms(10);
        }
        sleep_us((long)pick(3000));
    }
    ydb_connection_close(conn);
    ydb_database_close(db);
    printf("writer slot %d gen %d: commits=%ld failed=%ld errors=%ld\n", slot, gen, commits, failures, errors);
    return errors == 0 ? 0 : 1;
}

/* ---- the plain SQLite writer ---- */

static int sql_step(sqlite3_stmt *statement) {
    int rc = sqlite3_step(statement);
    sqlite3_reset(statement);
    sqlite3_clear_bindings(statement);
    return rc == SQLITE_DONE || rc == SQLITE_ROW ? SQLITE_OK : rc;
}

static int run_sqlite_writer(const char *path, uint64_t seed, int gen, double seconds) {
    char file[1024], line[1500];
    sqlite3 *db = NULL;
    sqlite3_stmt *upsert = NULL, *update = NULL, *delete_row = NULL;
    double deadline = now_seconds() + seconds, ready_by = now_seconds() + 20;
    long serial = 0, commits = 0, errors = 0;

    if (!start_writer_process(path, seed, SQL_SLOT, gen, file, sizeof file)) return 2;
    /* The file and its table are made by the ydbview processes. */
    for (;;) {
        if (file_exists(path) && sqlite3_open_v2(path, &db, SQLITE_OPEN_READWRITE, NULL) == SQLITE_OK) {
            sqlite3_busy_timeout(db, 5000);
            if (sqlite3_prepare_v2(db,
                                   "INSERT INTO ydb_rows (collection, key, object, metadata) VALUES (?1, ?2, ?3, NULL) "
                                   "ON CONFLICT (collection, key) DO UPDATE SET object = excluded.object, "
                                   "metadata = excluded.metadata",
                                   -1, &upsert, NULL) == SQLITE_OK &&
                sqlite3_prepare_v2(db, "UPDATE ydb_rows SET object = ?3 WHERE collection = ?1 AND key = ?2", -1,
                                   &update, NULL) == SQLITE_OK &&
                sqlite3_prepare_v2(db, "DELETE FROM ydb_rows WHERE collection = ?1 AND key = ?2", -1, &delete_row,
                                   NULL) == SQLITE_OK)
                break;
            sqlite3_finalize(upsert);
            sqlite3_finalize(update);
            upsert = update = NULL;
        }
        if (db != NULL) sqlite3_close(db);
        db = NULL;
        if (now_seconds() > ready_by || stop_requested) {
            journal("E the database never had ydb_rows");
            fprintf(stderr, "sqlite writer: the database never had ydb_rows\n");
            return 1;
        }
        sleep_ms(50);
    }
    while (!stop_requested && now_seconds() < deadline) {
        op ops[3];
        int count = plan_transaction(ops, line, sizeof line, SQL_SLOT, gen, &serial, 3), rc, i;
        /* Only what a plain client does: sets without metadata, object updates, deletes. */
        size_t used = (size_t)snprintf(line, sizeof line, "I ");
        for (i = 0; i < count; i++) {
            if (ops[i].kind == 'S' || ops[i].kind == 'A' || ops[i].kind == 'M') {
                ops[i].kind = 'S';
                strcpy(ops[i].meta, "-");
                if (ops[i].object[0] == '\0') random_object(ops[i].object, sizeof ops[i].object, SQL_SLOT, gen, serial++);
            } else if (ops[i].kind == 'T') {
                ops[i].kind = 'R';
            }
            if (i > 0) line[used++] = '|';
            used += format_op(line + used, sizeof line - used, &ops[i]);
        }
        journal("%s", line);
        rc = sqlite3_exec(db, "BEGIN IMMEDIATE", NULL, NULL, NULL);
        for (i = 0; rc == SQLITE_OK && i < count; i++) {
            sqlite3_stmt *statement = ops[i].kind == 'S' ? upsert : ops[i].kind == 'O' ? update : delete_row;
            sqlite3_bind_text(statement, 1, ops[i].collection, -1, SQLITE_TRANSIENT);
            sqlite3_bind_text(statement, 2, ops[i].key, -1, SQLITE_TRANSIENT);
            if (ops[i].kind != 'R')
                sqlite3_bind_blob(statement, 3, ops[i].object, (int)strlen(ops[i].object), SQLITE_TRANSIENT);
            rc = sql_step(statement);
        }
        if (rc == SQLITE_OK) rc = sqlite3_exec(db, "COMMIT", NULL, NULL, NULL);
        if (rc == SQLITE_OK) {
            journal("K");
            commits++;
        } else {
            fprintf(stderr, "sqlite writer: %d: %s\n", rc, sqlite3_errmsg(db));
            journal("E sqlite %d: %s", rc, sqlite3_errmsg(db));
            sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL);
            journal("F");
            errors++;
        }
        sleep_ms(100 + (long)pick(200));
    }
    sqlite3_finalize(upsert);
    sqlite3_finalize(update);
    sqlite3_finalize(delete_row);
    sqlite3_close(db);
    printf("sqlite writer gen %d: commits=%ld errors=%ld\n", gen, commits, errors);
    return errors == 0 ? 0 : 1;
}

/* ---- follower: tables as a model ---- */

typedef struct {
    char *collection, *key;
    int64_t rowid; /* 0: not known (read, not placed by a step) */
} model_row;

typedef struct {
    char group[16];
    size_t count, capacity;
    model_row *rows;
} model_section;

typedef struct {
    size_t sections;
    model_section section[MAX_SECTIONS];
} model;

static char *copy_text(const char *text) {
    char *copy = strdup(text ? text : "");
    if (copy == NULL) {
        perror("strdup");
        exit(3);
    }
    return copy;
}

static void model_clear(model *m) {
    for (size_t s = 0; s < m->sections; s++) {
        for (size_t r = 0; r < m->section[s].count; r++) {
            free(m->section[s].rows[r].collection);
            free(m->section[s].rows[r].key);
        }
        free(m->section[s].rows);
    }
    memset(m, 0, sizeof *m);
}

static void model_insert(model_section *section, size_t at, const char *collection, const char *key, int64_t rowid) {
    if (section->count == section->capacity) {
        section->capacity = section->capacity ? 2 * section->capacity : 64;
        section->rows = (model_row *)realloc(section->rows, section->capacity * sizeof *section->rows);
        if (section->rows == NULL) exit(3);
    }
    memmove(&section->rows[at + 1], &section->rows[at], (section->count - at) * sizeof *section->rows);
    section->rows[at].collection = copy_text(collection);
    section->rows[at].key = copy_text(key);
    section->rows[at].rowid = rowid;
    section->count++;
}

static model_row model_take(model_section *section, size_t at) {
    model_row row = section->rows[at];
    memmove(&section->rows[at], &section->rows[at + 1], (section->count - at - 1) * sizeof *section->rows);
    section->count--;
    return row;
}

static void model_copy(model *to, const model *from) {
    model_clear(to);
    to->sections = from->sections;
    for (size_t s = 0; s < from->sections; s++) {
        memcpy(to->section[s].group, from->section[s].group, sizeof to->section[s].group);
        for (size_t r = 0; r < from->section[s].count; r++)
            model_insert(&to->section[s], r, from->section[s].rows[r].collection, from->section[s].rows[r].key,
                         from->section[s].rows[r].rowid);
    }
}

/* Where the last read_table failed (section, row). */
static size_t failed_section, failed_row;

/* The table the mappings show now, read through them in `txn`. */
static int read_table(ydb_txn *txn, ydb_mappings *m, model *out) {
    size_t sections = 0;
    failed_section = failed_row = (size_t)-1;
    model_clear(out);
    if (ydb_mappings_number_of_sections(m, &sections) != YDB_OK || sections > MAX_SECTIONS) return 0;
    for (size_t s = 0; s < sections; s++) {
        const char *group = NULL;
        size_t count = 0;
        if (ydb_mappings_group_for_section(m, s, &group) != YDB_OK ||
            ydb_mappings_number_of_items_in_section(m, s, &count) != YDB_OK)
            return 0;
        snprintf(out->section[s].group, sizeof out->section[s].group, "%s", group);
        out->sections = s + 1;
        for (size_t r = 0; r < count; r++) {
            char *collection = NULL, *key = NULL;
            if (ydb_view_key_at_index_path(txn, m, s, r, &collection, &key) != YDB_OK) {
                failed_section = s;
                failed_row = r;
                return 0;
            }
            model_insert(&out->section[s], r, collection, key, 0);
            ydb_free(collection);
            ydb_free(key);
        }
    }
    return 1;
}

/* Where the two tables differ first (NULL when they are the same). */
static const char *table_difference(const model *a, const model *b, char *why, size_t size) {
    if (a->sections != b->sections) {
        snprintf(why, size, "%zu sections, the mappings show %zu", a->sections, b->sections);
        return why;
    }
    for (size_t s = 0; s < a->sections; s++) {
        const model_section *x = &a->section[s], *y = &b->section[s];
        if (strcmp(x->group, y->group) != 0) {
            snprintf(why, size, "section %zu shows group %s, the mappings %s", s, x->group, y->group);
            return why;
        }
        for (size_t r = 0; r < x->count || r < y->count; r++) {
            if (r >= x->count || r >= y->count || strcmp(x->rows[r].collection, y->rows[r].collection) != 0 ||
                strcmp(x->rows[r].key, y->rows[r].key) != 0) {
                snprintf(why, size, "section %zu (%s) row %zu: model %s/%s, mappings %s/%s (%zu rows vs %zu)", s,
                         x->group, r, r < x->count ? x->rows[r].collection : "-", r < x->count ? x->rows[r].key : "-",
                         r < y->count ? y->rows[r].collection : "-", r < y->count ? y->rows[r].key : "-", x->count,
                         y->count);
                return why;
            }
        }
    }
    return NULL;
}

/* Applies one edit step to `work`; `fresh` is the new table (for the
** names of rows a step does not name). Returns NULL or what is wrong. */
static const char *apply_step(const ydb_edit_step *st, model *work, const model *fresh) {
    size_t s = st->section, r = st->row;
    model_section *section;
    switch (st->type) {
    case YDB_STEP_REMOVE_SECTION:
        if (s >= work->sections) return "removes a section that is not there";
        if (st->group == NULL || strcmp(st->group, work->section[s].group) != 0)
            return "removes a section showing another group";
        if (work->section[s].count != 0) return "removes a section that still has rows";
        free(work->section[s].rows);
        memmove(&work->section[s], &work->section[s + 1], (work->sections - s - 1) * sizeof work->section[0]);
        work->sections--;
        memset(&work->section[work->sections], 0, sizeof work->section[0]);
        return NULL;
    case YDB_STEP_INSERT_SECTION:
        if (s > work->sections || work->sections == MAX_SECTIONS) return "inserts a section past the end";
        if (st->group == NULL) return "inserts a section without a group";
        memmove(&work->section[s + 1], &work->section[s], (work->sections - s) * sizeof work->section[0]);
        memset(&work->section[s], 0, sizeof work->section[0]);
        snprintf(work->section[s].group, sizeof work->section[s].group, "%s", st->group);
        work->sections++;
        return NULL;
    case YDB_STEP_REMOVE_ROW:
    case YDB_STEP_MOVE_ROW:
    case YDB_STEP_RELOAD_ROW: {
        model_row row;
        if (s >= work->sections || r >= work->section[s].count) return "names a row that is not there";
        section = &work->section[s];
        if (st->key != NULL &&
            (strcmp(st->key, section->rows[r].key) != 0 || strcmp(st->collection, section->rows[r].collection) != 0))
            return "names another row than the one at its position";
        if (st->type == YDB_STEP_RELOAD_ROW) {
            if (st->rowid > 0) section->rows[r].rowid = st->rowid;
            return NULL;
        }
        if (st->type == YDB_STEP_REMOVE_ROW && section->rows[r].rowid != 0 && st->rowid != section->rows[r].rowid)
            return "removes a row under another row id than the step that placed it gave";
        row = model_take(section, r);
        if (st->type == YDB_STEP_REMOVE_ROW) {
            free(row.collection);
            free(row.key);
            return NULL;
        }
        if (st->to_section >= work->sections || st->to_row > work->section[st->to_section].count) {
            free(row.collection);
            free(row.key);
            return "moves a row outside the table";
        }
        model_insert(&work->section[st->to_section], st->to_row, row.collection, row.key,
                     st->rowid > 0 ? st->rowid : row.rowid);
        free(row.collection);
        free(row.key);
        return NULL;
    }
    case YDB_STEP_INSERT_ROW: {
        const char *collection = st->collection, *key = st->key;
        if (s >= work->sections || r > work->section[s].count) return "inserts a row outside the table";
        if (key == NULL) {
            if (st->final_section >= fresh->sections || st->final_row >= fresh->section[st->final_section].count)
                return "an insert without a name whose final position is outside the new table";
            collection = fresh->section[st->final_section].rows[st->final_row].collection;
            key = fresh->section[st->final_section].rows[st->final_row].key;
        }
        model_insert(&work->section[s], r, collection, key, st->rowid);
        return NULL;
    }
    default: return "unknown step type";
    }
}

/* ---- follower: the view against the rows ---- */

typedef struct {
    char group;
    char rank[16];
    char *collection, *key;
} expected_row;

typedef struct {
    expected_row *rows;
    size_t count, capacity;
    const char *collection; /* the collection being enumerated */
    int include_sql;
    size_t seen;  /* view rows read for the group being compared */
    size_t wrong; /* first difference index + 1 (0: none) */
    char group;
    size_t first; /* the group's first index in rows */
    size_t group_count;
    char detail[256];
} row_check;

static int compare_expected(const void *a, const void *b) {
    const expected_row *x = (const expected_row *)a, *y = (const expected_row *)b;
    int order = (x->group > y->group) - (x->group < y->group);
    if (order == 0) order = strcmp(x->rank, y->rank);
    if (order == 0) order = strcmp(x->collection, y->collection);
    if (order == 0) order = strcmp(x->key, y->key);
    return order;
}

static int collect_row(void *ctx, const char *key, const void *object, size_t object_size, const void *metadata,
                       size_t metadata_size) {
    row_check *check = (row_check *)ctx;
    const char *text = (const char *)object;
    expected_row *row;
    (void)metadata;
    (void)metadata_size;
    if (object_size == 0 || text == NULL || text[0] < 'a' || text[0] > 'd') return 0;
    if (check->count == check->capacity) {
        check->capacity = check->capacity ? 2 * check->capacity : 256;
        check->rows = (expected_row *)realloc(check->rows, check->capacity * sizeof *check->rows);
        if (check->rows == NULL) exit(3);
    }
    row = &check->rows[check->count++];
    row->group = text[0];
    rank_of(text, object_size, row->rank, sizeof row->rank);
    row->collection = copy_text(check->collection);
    row->key = copy_text(key);
    return 0;
}

typedef struct {
    char names[16][16];
    size_t count;
} name_list;

static int list_name(void *ctx, const char *name) {
    name_list *list = (name_list *)ctx;
    if (list->count < 16) snprintf(list->names[list->count++], sizeof list->names[0], "%s", name);
    return 0;
}

static int compare_view_row(void *ctx, const char *collection, const char *key, size_t index) {
    row_check *check = (row_check *)ctx;
    const expected_row *want;
    (void)index;
    if (!check->include_sql && strcmp(collection, "sql") == 0) return 0;
    if (check->seen >= check->group_count) {
        snprintf(check->detail, sizeof check->detail, "group %c: the view has %s/%s past the %zu rows expected",
                 check->group, collection, key, check->group_count);
        check->wrong = check->seen + 1;
        return 1;
    }
    want = &check->rows[check->first + check->seen];
    if (strcmp(want->collection, collection) != 0 || strcmp(want->key, key) != 0) {
        snprintf(check->detail, sizeof check->detail, "group %c index %zu: the view has %s/%s, the rows say %s/%s",
                 check->group, check->seen, collection, key, want->collection, want->key);
        check->wrong = check->seen + 1;
        return 1;
    }
    check->seen++;
    return 0;
}

/* The view at txn's snapshot is exactly the rows grouped and sorted here.
** Without include_sql the SQLite writer's rows are left out on both sides:
** they reach the view only when a ydbview process folds them into the
** commit log. Returns NULL or the difference. */
static const char *view_matches_rows(ydb_txn *txn, int include_sql, char *why, size_t size) {
    row_check check;
    name_list collections;
    const char *result = NULL;
    memset(&check, 0, sizeof check);
    memset(&collections, 0, sizeof collections);
    check.include_sql = include_sql;
    if (ydb_txn_enumerate_collections(txn, list_name, &collections) != YDB_OK) {
        snprintf(why, size, "enumerating collections failed: %s", ydb_errmsg());
        return why;
    }
    for (size_t c = 0; c < collections.count; c++) {
        if (!include_sql && strcmp(collections.names[c], "sql") == 0) continue;
        check.collection = collections.names[c];
        if (ydb_txn_enumerate_rows(txn, collections.names[c], collect_row, &check) != YDB_OK) {
            snprintf(why, size, "enumerating rows failed: %s", ydb_errmsg());
            result = why;
            break;
        }
    }
    if (result == NULL) qsort(check.rows, check.count, sizeof *check.rows, compare_expected);
    for (char group = 'a'; result == NULL && group <= 'd'; group++) {
        char name[2] = {group, '\0'};
        check.group = group;
        check.first = 0;
        while (check.first < check.count && check.rows[check.first].group < group) check.first++;
        check.group_count = 0;
        while (check.first + check.group_count < check.count && check.rows[check.first + check.group_count].group == group)
            check.group_count++;
        check.seen = 0;
        check.wrong = 0;
        if (ydb_view_enumerate_keys(txn, VIEW, name, 0, YDB_INDEX_END, 0, compare_view_row, &check) != YDB_OK) {
            snprintf(why, size, "enumerating the view failed: %s", ydb_errmsg());
            result = why;
        } else if (check.wrong) {
            snprintf(why, size, "%s", check.detail);
            result = why;
        } else if (check.seen != check.group_count) {
            snprintf(why, size, "group %c: the view has %zu rows, the rows say %zu", group, check.seen,
                     check.group_count);
            result = why;
        }
    }
    for (size_t i = 0; i < check.count; i++) {
        free(check.rows[i].collection);
        free(check.rows[i].key);
    }
    free(check.rows);
    return result;
}

/* ---- follower ---- */

typedef struct {
    const char *path, *name;
    ydb_database *db;
    ydb_connection *conn;
    ydb_mappings *mappings[MAPPINGS];
    model models[MAPPINGS], fresh[MAPPINGS];
    int resync[MAPPINGS]; /* a read failed: the model is not the old table; take the next fresh one */
    size_t catchups, empty_catchups, steps, reloads, mismatches, changesets, view_checks, rowid_mismatches,
        rowids_checked, missed_wakeups, errors, reports;
    /* What the mismatches were: edit scripts that did not give the new
    ** table, changesets refused, views unlike their rows, views that could
    ** not be read (a row they list is missing); and reads through the
    ** mappings that failed (errors). */
    size_t script_mismatches, changeset_mismatches, view_mismatches, view_unreadable, read_failures;
} follower;

static void report(follower *f, const char *format, ...) {
    va_list args;
    if (f->reports++ >= MAX_REPORTS) return;
    fprintf(stderr, "follower %s (pid %d): ", f->name, (int)getpid());
    va_start(args, format);
    vfprintf(stderr, format, args);
    va_end(args);
    fprintf(stderr, "\n");
}

/* Reads everything afresh (first load and YDB_RELOAD); the connection is
** in its long-lived read. */
static void load_all(follower *f, int include_sql) {
    ydb_txn *txn = NULL;
    char why[512];
    int rc = ydb_txn_begin_read(f->conn, &txn);
    for (int attempt = 0; rc == YDB_RELOAD && attempt < 5; attempt++) {
        /* Fell behind again in between: move forward, then read. */
        ydb_connection_begin_long_lived_read(f->conn, NULL);
        rc = ydb_txn_begin_read(f->conn, &txn);
    }
    if (rc != YDB_OK) {
        f->errors++;
        report(f, "reload: ydb_txn_begin_read returned %d: %s", rc, ydb_errmsg());
        return;
    }
    for (int i = 0; i < MAPPINGS; i++) {
        f->resync[i] = 0;
        if ((rc = ydb_mappings_update(f->mappings[i], txn)) != YDB_OK || !read_table(txn, f->mappings[i], &f->models[i])) {
            f->errors++;
            f->read_failures++;
            f->resync[i] = 1;
            report(f, "reload: updating or reading mappings %d failed (%d): %s", i, rc, ydb_errmsg());
        }
    }
    f->view_checks++;
    if (view_matches_rows(txn, include_sql, why, sizeof why) != NULL) {
        f->mismatches++;
        if (strncmp(why, "enumerating", 11) == 0) f->view_unreadable++;
        else f->view_mismatches++;
        report(f, "after a reload, the view is not the rows: %s", why);
    }
    ydb_txn_end(txn);
}

/* Applies the changeset's edit script to the model and compares it with
** the fresh table. */
static void follow_changeset(follower *f, int i, ydb_changeset *cs) {
    size_t count = 0;
    char why[512];
    const char *wrong = NULL;
    if (ydb_changeset_step_count(cs, &count) != YDB_OK) {
        f->errors++;
        return;
    }
    for (size_t n = 0; n < count && wrong == NULL; n++) {
        ydb_edit_step step;
        if (ydb_changeset_step(cs, n, &step) != YDB_OK) {
            wrong = "ydb_changeset_step failed";
            break;
        }
        f->steps++;
        wrong = apply_step(&step, &f->models[i], &f->fresh[i]);
        if (wrong != NULL) snprintf(why, sizeof why, "mappings %d, step %zu of %zu (type %d): %s", i, n, count, step.type, wrong);
    }
    if (wrong == NULL && table_difference(&f->models[i], &f->fresh[i], why, sizeof why) == NULL) return;
    f->mismatches++;
    f->script_mismatches++;
    if (wrong == NULL) report(f, "mappings %d: the steps do not give the new table: %s", i, why);
    else report(f, "%s", why);
    model_copy(&f->models[i], &f->fresh[i]); /* go on from the truth */
}

/* One catch-up; `final`: the writers are done, check everything. */
static void catch_up(follower *f, int final) {
    ydb_notification_list *skipped = NULL;
    ydb_changeset *cs[MAPPINGS] = {NULL, NULL};
    ydb_txn *txn = NULL;
    size_t count = 0;
    char why[512];
    int rc = ydb_connection_begin_long_lived_read(f->conn, &skipped), reload = 0;
    f->catchups++;
    if (rc == YDB_RELOAD) {
        f->reloads++;
        load_all(f, final);
        return;
    }
    if (rc != YDB_OK) {
        f->errors++;
        report(f, "ydb_connection_begin_long_lived_read returned %d: %s", rc, ydb_errmsg());
        return;
    }
    ydb_notification_list_count(skipped, &count);
    if (count == 0 && !final) {
        f->empty_catchups++;
        ydb_notification_list_free(skipped);
        return;
    }
    for (int i = 0; i < MAPPINGS; i++) {
        rc = ydb_changeset_new(f->mappings[i], skipped, &cs[i]);
        if (rc != YDB_OK) {
            /* YDB_MISMATCH: a commit missing from the notifications. */
            f->mismatches++;
            f->changeset_mismatches++;
            report(f, "ydb_changeset_new(mappings %d) over %zu notifications returned %d: %s", i, count, rc,
                   ydb_errmsg());
            reload = 1;
        } else {
            f->changesets++;
        }
    }
    ydb_notification_list_free(skipped);
    rc = ydb_txn_begin_read(f->conn, &txn);
    if (rc != YDB_OK || reload) {
        if (rc == YDB_OK) ydb_txn_end(txn);
        else if (rc != YDB_RELOAD) {
            f->errors++;
            report(f, "ydb_txn_begin_read returned %d: %s", rc, ydb_errmsg());
        }
        /* Fell behind meanwhile (or a mismatch): start again from the rows. */
        for (int i = 0; i < MAPPINGS; i++) ydb_changeset_free(cs[i]);
        if (rc == YDB_RELOAD) {
            f->reloads++;
            ydb_connection_begin_long_lived_read(f->conn, NULL);
        }
        load_all(f, final);
        return;
    }
    for (int i = 0; i < MAPPINGS; i++) {
        if (!read_table(txn, f->mappings[i], &f->fresh[i])) {
            const model *old = &f->models[i];
            const char *was = "?";
            char name[64];
            f->errors++;
            f->read_failures++;
            f->resync[i] = 1;
            if (failed_section < old->sections && failed_row < old->section[failed_section].count) {
                snprintf(name, sizeof name, "%s/%s", old->section[failed_section].rows[failed_row].collection,
                         old->section[failed_section].rows[failed_row].key);
                was = name;
            }
            report(f, "reading mappings %d through ydb_view_key_at_index_path failed at [%zu,%zu] (the old table had "
                      "%s there): %s",
                   i, failed_section, failed_row, was, ydb_errmsg());
        } else if (f->resync[i]) {
            /* The old table was never read: go on from this one. */
            model_copy(&f->models[i], &f->fresh[i]);
            f->resync[i] = 0;
        } else {
            follow_changeset(f, i, cs[i]);
        }
        ydb_changeset_free(cs[i]);
    }
    f->view_checks++;
    if (view_matches_rows(txn, final, why, sizeof why) != NULL) {
        uint64_t snapshot = 0;
        ydb_txn_snapshot(txn, &snapshot);
        f->mismatches++;
        if (strncmp(why, "enumerating", 11) == 0) f->view_unreadable++;
        else f->view_mismatches++;
        report(f, "at snapshot %llu the view is not the rows: %s", (unsigned long long)snapshot, why);
    }
    ydb_txn_end(txn);
}

/* After the last catch-up: every row id a step gave is the row's id in
** ydb_rows, and the connection is at the newest logged commit. */
static void final_checks(follower *f) {
    sqlite3 *db = NULL;
    sqlite3_stmt *select = NULL, *newest = NULL;
    uint64_t snapshot = 0;
    if (sqlite3_open_v2(f->path, &db, SQLITE_OPEN_READONLY, NULL) != SQLITE_OK ||
        sqlite3_prepare_v2(db, "SELECT rowid FROM ydb_rows WHERE collection = ?1 AND key = ?2", -1, &select, NULL) !=
            SQLITE_OK ||
        sqlite3_prepare_v2(db, "SELECT max(snapshot) FROM ydb_commit_log", -1, &newest, NULL) != SQLITE_OK) {
        f->errors++;
        report(f, "final checks: sqlite: %s", sqlite3_errmsg(db));
        sqlite3_close(db);
        return;
    }
    sqlite3_busy_timeout(db, 5000);
    for (int i = 0; i < MAPPINGS; i++)
        for (size_t s = 0; s < f->models[i].sections; s++)
            for (size_t r = 0; r < f->models[i].section[s].count; r++) {
                const model_row *row = &f->models[i].section[s].rows[r];
                int64_t stored = -1;
                if (row->rowid == 0) continue;
                sqlite3_bind_text(select, 1, row->collection, -1, SQLITE_TRANSIENT);
                sqlite3_bind_text(select, 2, row->key, -1, SQLITE_TRANSIENT);
                if (sqlite3_step(select) == SQLITE_ROW) stored = sqlite3_column_int64(select, 0);
                sqlite3_reset(select);
                f->rowids_checked++;
                if (stored != row->rowid) {
                    f->rowid_mismatches++;
                    report(f, "row %s/%s: the steps gave row id %lld, ydb_rows has %lld", row->collection, row->key,
                           (long long)row->rowid, (long long)stored);
                }
            }
    if (sqlite3_step(newest) == SQLITE_ROW && ydb_connection_snapshot(f->conn, &snapshot) == YDB_OK &&
        (uint64_t)sqlite3_column_int64(newest, 0) > snapshot) {
        f->mismatches++;
        report(f, "the last catch-up ended at snapshot %llu, the commit log goes to %lld", (unsigned long long)snapshot,
               (long long)sqlite3_column_int64(newest, 0));
    }
    sqlite3_finalize(select);
    sqlite3_finalize(newest);
    sqlite3_close(db);
}

static int run_follower(const char *path, const char *stop_file, const char *ready_file, const char *result_file,
                        const char *name, double seconds) {
    static const char *const groups[MAPPINGS][4] = {{"a", "b", "c", "d"}, {"d", "c", "b", "a"}};
    follower f;
    struct pollfd waiter;
    double deadline = now_seconds() + seconds;
    char line[640], who[64];
    int rc, timed_out = 0;

    memset(&f, 0, sizeof f);
    f.path = path;
    f.name = name;
    snprintf(who, sizeof who, "follower %s", name);
    if ((f.db = open_shared(path, who)) == NULL) return 1;
    if ((rc = register_view(f.db)) != YDB_OK) {
        fprintf(stderr, "%s: registering the view returned %d: %s\n", who, rc, ydb_errmsg());
        return 1;
    }
    if (ydb_connection_open(f.db, &f.conn) != YDB_OK) return 1;
    for (int i = 0; i < MAPPINGS; i++)
        if (ydb_mappings_new(VIEW, groups[i], 4, &f.mappings[i]) != YDB_OK) return 1;
    CHECK_OK(ydb_mappings_set_dynamic_section(f.mappings[0], "c", 1));
    CHECK_OK(ydb_mappings_set_dynamic_section(f.mappings[0], "d", 1));
    CHECK_OK(ydb_mappings_set_dynamic_section_for_all_groups(f.mappings[1], 1));
    CHECK_OK(ydb_mappings_set_reversed(f.mappings[1], "b", 1));
    f.errors += (size_t)check_failed;
    rc = ydb_connection_begin_long_lived_read(f.conn, NULL);
    if (rc != YDB_OK && rc != YDB_RELOAD) {
        fprintf(stderr, "%s: begin_long_lived_read returned %d: %s\n", who, rc, ydb_errmsg());
        return 1;
    }
    load_all(&f, 0);
    if (ready_file != NULL) touch_file(ready_file);
    waiter.events = POLLIN;
    if (ydb_connection_wakeup_fd(f.conn, &waiter.fd) != YDB_OK) return 1;

    for (;;) {
        int stopping = file_exists(stop_file), ready;
        if (!stopping) {
            if (now_seconds() > deadline) {
                f.errors++;
                report(&f, "no stop file after %.0f s", seconds);
                break;
            }
            waiter.revents = 0;
            ready = poll(&waiter, 1, 100);
            if (ready <= 0) {
                /* Not readable for 100 ms: then the connection must not be
                ** behind this process's newest snapshot for long. */
                uint64_t newest = 0, mine = 0;
                ydb_database_snapshot(f.db, &newest);
                ydb_connection_snapshot(f.conn, &mine);
                if (newest <= mine) {
                    timed_out = 0;
                    continue;
                }
                if (++timed_out < 5) continue;
                waiter.revents = 0;
                if (poll(&waiter, 1, 0) != 1) {
                    f.missed_wakeups++;
                    report(&f, "the wakeup descriptor stayed unreadable for 500 ms with the database at %llu and the "
                               "connection at %llu",
                           (unsigned long long)newest, (unsigned long long)mine);
                }
            }
            timed_out = 0;
        }
        catch_up(&f, stopping);
        if (stopping) break;
    }
    final_checks(&f);
    f.mismatches += f.rowid_mismatches;
    snprintf(line, sizeof line,
             "follower: catchups=%zu steps=%zu reloads=%zu mismatches=%zu (%s: changesets=%zu empty=%zu "
             "view_checks=%zu rowids_checked=%zu; mismatches: script=%zu changeset=%zu view_vs_rows=%zu "
             "view_unreadable=%zu rowid=%zu; missed_wakeups=%zu errors=%zu, of them reads_failed=%zu)",
             f.catchups, f.steps, f.reloads, f.mismatches, name, f.changesets, f.empty_catchups, f.view_checks,
             f.rowids_checked, f.script_mismatches, f.changeset_mismatches, f.view_mismatches, f.view_unreadable,
             f.rowid_mismatches, f.missed_wakeups, f.errors, f.read_failures);
    printf("%s\n", line);
    if (result_file != NULL) {
        FILE *out = fopen(result_file, "w");
        if (out != NULL) {
            fprintf(out, "%s\n", line);
            fclose(out);
        }
    }
    for (int i = 0; i < MAPPINGS; i++) {
        ydb_mappings_free(f.mappings[i]);
        model_clear(&f.models[i]);
        model_clear(&f.fresh[i]);
    }
    ydb_connection_close(f.conn);
    ydb_database_close(f.db);
    return f.mismatches == 0 && f.errors == 0 && f.missed_wakeups == 0 && f.catchups > 0 ? 0 : 1;
}

/* ======================================================================
** main: the processes
** ==================================================================== */

enum { WRITER, SQLITE_WRITER, FOLLOWER };

typedef struct {
    pid_t pid;
    int role, slot, gen;
    char name[32];
    int exited, status;
    int killed; /* we SIGKILLed it */
} child;

#define MAX_CHILDREN 4096
static child children[MAX_CHILDREN];
static int child_count = 0;
static char self_exe[1024];
static int failures = 0;

static void fail(const char *format, ...) {
    va_list args;
    failures++;
    fprintf(stderr, "FAILURE: ");
    va_start(args, format);
    vfprintf(stderr, format, args);
    va_end(args);
    fprintf(stderr, "\n");
}

static child *spawn(int role, int slot, int gen, const char *name, char *const argv[]) {
    pid_t parent = getpid(), pid;
    child *c;
    if (child_count == MAX_CHILDREN) {
        fail("too many children");
        return NULL;
    }
    fflush(stdout);
    fflush(stderr);
    pid = fork();
    if (pid < 0) {
        perror("fork");
        fail("fork failed");
        return NULL;
    }
    if (pid == 0) {
        /* Never outlive the test. */
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        if (getppid() != parent) _exit(9);
        execv(self_exe, argv);
        perror("execv");
        _exit(127);
    }
    c = &children[child_count++];
    memset(c, 0, sizeof *c);
    c->pid = pid;
    c->role = role;
    c->slot = slot;
    c->gen = gen;
    snprintf(c->name, sizeof c->name, "%s", name);
    return c;
}

/* Reaps every child that ended; returns how many. */
static int reap(void) {
    int reaped = 0, status;
    pid_t pid;
    while ((pid = waitpid(-1, &status, WNOHANG)) > 0) {
        for (int i = 0; i < child_count; i++)
            if (children[i].pid == pid && !children[i].exited) {
                children[i].exited = 1;
                children[i].status = status;
            }
        reaped++;
    }
    return reaped;
}

static int wait_exit(child *c, double seconds) {
    double until = now_seconds() + seconds;
    while (!c->exited && now_seconds() < until) {
        reap();
        if (!c->exited) sleep_ms(5);
    }
    return c->exited;
}

static void kill_child(child *c) {
    if (c == NULL || c->exited) return;
    c->killed = 1;
    kill(c->pid, SIGKILL);
    kill(c->pid, SIGCONT);
    if (!wait_exit(c, 10)) fail("%s (pid %d) did not die after SIGKILL", c->name, (int)c->pid);
}

static void kill_everyone(void) {
    for (int i = 0; i < child_count; i++)
        if (!children[i].exited) {
            children[i].killed = 1;
            kill(children[i].pid, SIGKILL);
            kill(children[i].pid, SIGCONT);
        }
    for (int i = 0; i < child_count; i++) wait_exit(&children[i], 5);
}

static void on_alarm(int sig) {
    (void)sig;
    for (int i = 0; i < child_count; i++)
        if (!children[i].exited) kill(children[i].pid, SIGKILL);
    {
        static const char message[] = "FAILURE: test_multiprocess timed out (alarm): every child killed\n";
        if (write(2, message, sizeof message - 1) < 0) _exit(2);
    }
    _exit(2);
}

static const char *describe_status(int status, char *out, size_t size) {
    if (WIFEXITED(status)) snprintf(out, size, "exit %d", WEXITSTATUS(status));
    else if (WIFSIGNALED(status)) snprintf(out, size, "signal %d", WTERMSIG(status));
    else snprintf(out, size, "status %d", status);
    return out;
}

/* ---- the children main starts ---- */

static char db_path[1024], stop_path[1100];
static uint64_t base_seed;
static double child_seconds;

static uint64_t child_seed(int slot, int gen) { return base_seed * 1000003ULL + (uint64_t)slot * 10007ULL + (uint64_t)gen; }

static child *spawn_writer(int slot, int gen) {
    char seed[32], slot_text[16], gen_text[16], seconds[32], name[32];
    char *argv[16];
    int n = 0;
    child *c;
    snprintf(seed, sizeof seed, "%llu", (unsigned long long)child_seed(slot, gen));
    snprintf(slot_text, sizeof slot_text, "%d", slot);
    snprintf(gen_text, sizeof gen_text, "%d", gen);
    snprintf(seconds, sizeof seconds, "%.0f", child_seconds);
    argv[n++] = self_exe;
    argv[n++] = slot == SQL_SLOT ? "sqlite-writer" : "writer";
    argv[n++] = db_path;
    argv[n++] = seed;
    if (slot != SQL_SLOT) {
        argv[n++] = "--slot";
        argv[n++] = slot_text;
        if (slot == 0) argv[n++] = "--view";
    }
    argv[n++] = "--gen";
    argv[n++] = gen_text;
    argv[n++] = "--seconds";
    argv[n++] = seconds;
    argv[n] = NULL;
    if (slot == SQL_SLOT) snprintf(name, sizeof name, "sqlite writer gen %d", gen);
    else snprintf(name, sizeof name, "writer %d gen %d", slot, gen);
    c = spawn(slot == SQL_SLOT ? SQLITE_WRITER : WRITER, slot, gen, name, argv);
    if (c != NULL) printf("# started %s: pid %d, seed %s\n", name, (int)c->pid, seed);
    return c;
}

static child *spawn_follower(const char *name, char *ready, size_t ready_size, char *result, size_t result_size) {
    char seconds[32];
    char *argv[16];
    int n = 0;
    child *c;
    snprintf(ready, ready_size, "%s.ready.%s", db_path, name);
    snprintf(result, result_size, "%s.result.%s", db_path, name);
    unlink(ready);
    unlink(result);
    snprintf(seconds, sizeof seconds, "%.0f", child_seconds + 60);
    argv[n++] = self_exe;
    argv[n++] = "follower";
    argv[n++] = db_path;
    argv[n++] = "--stop";
    argv[n++] = stop_path;
    argv[n++] = "--ready";
    argv[n++] = ready;
    argv[n++] = "--result";
    argv[n++] = result;
    argv[n++] = "--name";
    argv[n++] = (char *)name;
    argv[n++] = "--seconds";
    argv[n++] = seconds;
    argv[n] = NULL;
    c = spawn(FOLLOWER, -1, 0, name, argv);
    if (c != NULL) printf("# started follower %s: pid %d\n", name, (int)c->pid);
    return c;
}

static int wait_ready(child *c, const char *ready, double seconds) {
    double until = now_seconds() + seconds;
    while (now_seconds() < until) {
        if (file_exists(ready)) return 1;
        reap();
        if (c->exited) {
            char text[32];
            fail("%s exited before it was ready (%s)", c->name, describe_status(c->status, text, sizeof text));
            return 0;
        }
        sleep_ms(10);
    }
    fail("%s was not ready after %.0f s", c->name, seconds);
    return 0;
}

/* ---- watching the files with plain sqlite3 ---- */

typedef struct {
    long long count, oldest, newest;
} log_stats;

static int read_log_stats(log_stats *out) {
    sqlite3 *db = NULL;
    sqlite3_stmt *select = NULL;
    int ok = 0;
    memset(out, 0, sizeof *out);
    if (!file_exists(db_path)) return 0;
    if (sqlite3_open_v2(db_path, &db, SQLITE_OPEN_READONLY, NULL) == SQLITE_OK) {
        sqlite3_busy_timeout(db, 2000);
        if (sqlite3_prepare_v2(db,
                               "SELECT count(*), coalesce(min(snapshot), 0), coalesce(max(snapshot), 0) FROM "
                               "ydb_commit_log",
                               -1, &select, NULL) == SQLITE_OK &&
            sqlite3_step(select) == SQLITE_ROW) {
            out->count = sqlite3_column_int64(select, 0);
            out->oldest = sqlite3_column_int64(select, 1);
            out->newest = sqlite3_column_int64(select, 2);
            ok = 1;
        }
        sqlite3_finalize(select);
    }
    sqlite3_close(db);
    return ok;
}

/* Rows of ydb_external_changes (the SQLite writer's changes not yet in the
** commit log), or -1 when the table does not exist. */
static long long external_changes(void) {
    sqlite3 *db = NULL;
    sqlite3_stmt *select = NULL;
    long long count = -1;
    if (sqlite3_open_v2(db_path, &db, SQLITE_OPEN_READONLY, NULL) == SQLITE_OK) {
        sqlite3_busy_timeout(db, 2000);
        if (sqlite3_prepare_v2(db, "SELECT count(*) FROM ydb_external_changes", -1, &select, NULL) == SQLITE_OK &&
            sqlite3_step(select) == SQLITE_ROW)
            count = sqlite3_column_int64(select, 0);
        sqlite3_finalize(select);
    }
    sqlite3_close(db);
    return count;
}

static long long wal_size(void) {
    char wal[1100];
    struct stat info;
    snprintf(wal, sizeof wal, "%s-wal", db_path);
    return stat(wal, &info) == 0 ? (long long)info.st_size : 0;
}

static char process_state(pid_t pid) {
    char path[64], buffer[512];
    FILE *in;
    char *end;
    snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
    if ((in = fopen(path, "r")) == NULL) return '?';
    buffer[0] = '\0';
    if (fgets(buffer, sizeof buffer, in) == NULL) buffer[0] = '\0';
    fclose(in);
    end = strrchr(buffer, ')');
    return end != NULL && end[1] == ' ' ? end[2] : '?';
}

/* ---- the journals against the final table ---- */

#define MAX_POSSIBLE 8
typedef struct {
    int count;
    int any;                     /* too many possibilities to track: not checked */
    char *value[MAX_POSSIBLE];   /* "object meta" ("-": none); NULL: no row */
} possible;

static int same_value(const char *a, const char *b) {
    if (a == NULL || b == NULL) return a == b;
    return strcmp(a, b) == 0;
}

static void possible_add(possible *p, const char *value) {
    for (int i = 0; i < p->count; i++)
        if (same_value(p->value[i], value)) return;
    if (p->count == MAX_POSSIBLE) {
        p->any = 1;
        return;
    }
    p->value[p->count++] = value ? copy_text(value) : NULL;
}

static void possible_clear(possible *p) {
    for (int i = 0; i < p->count; i++) free(p->value[i]);
    p->count = 0;
}

/* What one op does to a row's value (NULL: no row); returns a new string or NULL. */
static char *apply_to_value(const char *value, const char *const *fields, int field_count) {
    char buffer[128];
    char kind = fields[0][0];
    if (kind == 'S' && field_count >= 5) {
        snprintf(buffer, sizeof buffer, "%s %s", fields[3], fields[4]);
        return copy_text(buffer);
    }
    if (kind == 'R' || kind == 'A') return NULL;
    if (value == NULL) return NULL; /* O, M, T of a missing row: still missing */
    if (kind == 'O' && field_count >= 4) {
        const char *meta = strchr(value, ' ');
        snprintf(buffer, sizeof buffer, "%s %s", fields[3], meta ? meta + 1 : "-");
        return copy_text(buffer);
    }
    if (kind == 'M' && field_count >= 4) {
        const char *space = strchr(value, ' ');
        snprintf(buffer, sizeof buffer, "%.*s %s", (int)(space ? space - value : (long)strlen(value)), value, fields[3]);
        return copy_text(buffer);
    }
    return copy_text(value); /* T */
}

typedef struct {
    int slot;
    possible rows[2][KEYS > SQL_KEYS ? KEYS : SQL_KEYS];
    long transactions, committed, failed, pending, errors;
} slot_state;

/* Whether op `fields` touches row (collection c, key k) of the slot. */
static int op_concerns(const slot_state *st, const char *const *fields, int field_count, int c, int k) {
    char collection[8], key[8];
    slot_collection(collection, sizeof collection, st->slot, c);
    slot_key(key, sizeof key, st->slot, k);
    if (field_count < 2 || strcmp(fields[1], collection) != 0) return 0;
    if (fields[0][0] == 'A') return 1;
    return field_count >= 3 && strcmp(fields[2], key) == 0;
}

/* Applies transaction `ops` ("S c k o m|R c k|...") to every row; when
** `maybe`, the rows keep their old possibilities too. */
static void apply_transaction(slot_state *st, const char *ops, int maybe) {
    char copy[2048];
    char *parts[8][6];
    int fields[8], count = 0;
    char *save_op = NULL;
    snprintf(copy, sizeof copy, "%s", ops);
    for (char *part = strtok_r(copy, "|", &save_op); part != NULL && count < 8; part = strtok_r(NULL, "|", &save_op)) {
        char *save_field = NULL;
        fields[count] = 0;
        for (char *field = strtok_r(part, " ", &save_field); field != NULL && fields[count] < 6;
             field = strtok_r(NULL, " ", &save_field))
            parts[count][fields[count]++] = field;
        if (fields[count] > 0) count++;
    }
    for (int c = 0; c < slot_collections(st->slot); c++)
        for (int k = 0; k < slot_keys(st->slot); k++) {
            possible *p = &st->rows[c][k], next;
            int concerned = 0;
            for (int i = 0; i < count; i++) concerned |= op_concerns(st, (const char *const *)parts[i], fields[i], c, k);
            if (!concerned) continue;
            memset(&next, 0, sizeof next);
            next.any = p->any;
            for (int v = 0; v < p->count; v++) {
                char *value = p->value[v] ? copy_text(p->value[v]) : NULL;
                for (int i = 0; i < count; i++)
                    if (op_concerns(st, (const char *const *)parts[i], fields[i], c, k)) {
                        char *after = apply_to_value(value, (const char *const *)parts[i], fields[i]);
                        free(value);
                        value = after;
                    }
                possible_add(&next, value);
                free(value);
            }
            if (maybe)
                for (int v = 0; v < p->count; v++) possible_add(&next, p->value[v]);
            possible_clear(p);
            *p = next;
        }
}

static void replay_journal(slot_state *st, const char *file, int *found) {
    FILE *in = fopen(file, "r");
    char line[2048], pending[2048];
    int has_pending = 0;
    *found = in != NULL;
    if (in == NULL) return;
    while (fgets(line, sizeof line, in) != NULL) {
        size_t n = strlen(line);
        if (n == 0 || line[n - 1] != '\n') break; /* a line cut short by SIGKILL */
        line[--n] = '\0';
        if (line[0] == 'I' && line[1] == ' ') {
            if (has_pending) {
                /* An intent followed by another: cannot happen. */
                fail("journal %s: a transaction without an outcome before the next one", file);
            }
            snprintf(pending, sizeof pending, "%s", line + 2);
            has_pending = 1;
            st->transactions++;
        } else if (strcmp(line, "K") == 0 && has_pending) {
            apply_transaction(st, pending, 0);
            has_pending = 0;
            st->committed++;
        } else if (strcmp(line, "F") == 0 && has_pending) {
            has_pending = 0;
            st->failed++;
        } else if (line[0] == 'E') {
            st->errors++;
            if (st->errors <= 3) fprintf(stderr, "journal %s: %s\n", file, line);
        }
    }
    fclose(in);
    if (has_pending) {
        /* Killed between its commit and the journal: either outcome. */
        apply_transaction(st, pending, 1);
        st->pending++;
    }
}

static int unexpected_key(void *ctx, const char *key) {
    int *bad = (int *)ctx;
    (*bad)++;
    fprintf(stderr, "  unexpected key %s\n", key);
    return 0;
}

/* Checks one slot's rows in a fresh reader against its journals. */
static void check_slot(ydb_connection *reader, int slot, int generations, long *rows_checked, long *uncertain) {
    slot_state st;
    ydb_txn *txn = NULL;
    long wrong = 0;
    memset(&st, 0, sizeof st);
    st.slot = slot;
    for (int c = 0; c < slot_collections(slot); c++)
        for (int k = 0; k < slot_keys(slot); k++) possible_add(&st.rows[c][k], NULL); /* no row to begin with */
    for (int gen = 0; gen < generations; gen++) {
        char file[1100];
        int found = 0;
        journal_path(file, sizeof file, db_path, slot, gen);
        replay_journal(&st, file, &found);
        if (!found) fail("slot %d: journal %s is missing", slot, file);
    }
    if (st.errors > 0) fail("slot %d: %ld errors in the journals (first ones above)", slot, st.errors);
    if (ydb_txn_begin_read(reader, &txn) != YDB_OK) {
        fail("final reader: %s", ydb_errmsg());
        return;
    }
    for (int c = 0; c < slot_collections(slot); c++) {
        char collection[8];
        int bad = 0;
        slot_collection(collection, sizeof collection, slot, c);
        for (int k = 0; k < slot_keys(slot); k++) {
            char key[8], value[160];
            void *object = NULL, *meta = NULL;
            size_t object_size = 0, meta_size = 0;
            const char *actual = NULL;
            possible *p = &st.rows[c][k];
            int rc, ok = 0;
            slot_key(key, sizeof key, slot, k);
            rc = ydb_txn_get_row(txn, collection, key, &object, &object_size, &meta, &meta_size);
            if (rc == YDB_OK) {
                snprintf(value, sizeof value, "%.*s %.*s", (int)object_size, (const char *)object,
                         meta ? (int)meta_size : 1, meta ? (const char *)meta : "-");
                actual = value;
            } else if (rc != YDB_NOTFOUND) {
                fail("final reader: get %s/%s returned %d: %s", collection, key, rc, ydb_errmsg());
            }
            ydb_free(object);
            ydb_free(meta);
            (*rows_checked)++;
            if (p->count > 1 || p->any) (*uncertain)++;
            if (p->any) continue;
            for (int v = 0; v < p->count; v++) ok |= same_value(p->value[v], actual);
            if (!ok && wrong++ < MAX_REPORTS) {
                fprintf(stderr, "  slot %d row %s/%s is \"%s\", the journal says", slot, collection, key,
                        actual ? actual : "(no row)");
                for (int v = 0; v < p->count; v++) fprintf(stderr, " \"%s\"", p->value[v] ? p->value[v] : "(no row)");
                fprintf(stderr, "\n");
            }
        }
        /* No key outside the slot's names. */
        {
            size_t rows = 0;
            int present = 0;
            ydb_txn_count(txn, collection, &rows);
            for (int k = 0; k < slot_keys(slot); k++) {
                char key[8];
                int exists = 0;
                slot_key(key, sizeof key, slot, k);
                ydb_txn_exists(txn, collection, key, &exists);
                present += exists;
            }
            if ((size_t)present != rows) {
                ydb_txn_enumerate_keys(txn, collection, unexpected_key, &bad);
                fail("slot %d: collection %s has %zu rows, %d of them with the slot's keys", slot, collection, rows,
                     present);
            }
        }
    }
    ydb_txn_end(txn);
    if (wrong > 0) fail("slot %d: %ld rows are not what the journals say (a lost or a phantom commit)", slot, wrong);
    printf("# slot %d: %ld transactions journaled over %d processes: %ld committed, %ld failed, %ld cut short by "
           "SIGKILL\n",
           slot, st.transactions, generations, st.committed, st.failed, st.pending);
    for (int c = 0; c < 2; c++)
        for (int k = 0; k < (KEYS > SQL_KEYS ? KEYS : SQL_KEYS); k++) possible_clear(&st.rows[c][k]);
}

static void remove_directory(const char *directory) {
    char command[1200];
    snprintf(command, sizeof command, "rm -rf '%s'", directory);
    if (system(command) != 0) fprintf(stderr, "could not remove %s\n", directory);
}

typedef struct {
    size_t catchups, steps, reloads, mismatches;
    int parsed;
} follower_result;

static follower_result read_result(const char *file) {
    follower_result r;
    FILE *in = fopen(file, "r");
    char line[1024];
    memset(&r, 0, sizeof r);
    if (in == NULL) return r;
    if (fgets(line, sizeof line, in) != NULL &&
        sscanf(line, "follower: catchups=%zu steps=%zu reloads=%zu mismatches=%zu", &r.catchups, &r.steps, &r.reloads,
               &r.mismatches) == 4)
        r.parsed = 1;
    fclose(in);
    return r;
}

static int run_main(double seconds, uint64_t seed, int with_sqlite_writer, int keep) {
    char directory[512], ready[1200], result[1200], sleeper_ready[1200], sleeper_result[1200];
    const char *base = getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
    child *writers[SLOTS] = {NULL, NULL, NULL}, *follower_child, *sleeper = NULL, *first_follower;
    int generations[SLOTS] = {0, 0, 0};
    int writer_kills = 0, sleeper_state = 0, follower_restarted = 0;
    long long max_wal = 0, max_wal_keeping_up = 0, wal_after_sleeper = -1, growth_after_sleeper = 0, max_log = 0,
              sleeper_mark = 0;
    double sleeper_resumed = 0;
    double start, end, next_kill, next_sample = 0, sleeper_until = 0, started;
    log_stats stats;
    struct sigaction alarm_action;

    started = now_seconds();
    base_seed = seed;
    random_state = seed;
    child_seconds = seconds + 120;
    snprintf(directory, sizeof directory, "%s/ydbview-multiprocess-XXXXXX", base);
    if (mkdtemp(directory) == NULL) {
        perror("mkdtemp");
        return 1;
    }
    snprintf(db_path, sizeof db_path, "%s/shared.sqlite", directory);
    snprintf(stop_path, sizeof stop_path, "%s.stop", db_path);
    printf("# test_multiprocess: seed %llu (replay: --seed %llu), %.0f s, %s, database %s\n",
           (unsigned long long)seed, (unsigned long long)seed, seconds,
           with_sqlite_writer ? "with the SQLite writer" : "without the SQLite writer", db_path);
    memset(&alarm_action, 0, sizeof alarm_action);
    alarm_action.sa_handler = on_alarm;
    sigaction(SIGALRM, &alarm_action, NULL);
    alarm((unsigned)(seconds + 150));

    /* Everyone at once: the file is created under concurrent opens. */
    first_follower = follower_child = spawn_follower("first", ready, sizeof ready, result, sizeof result);
    for (int slot = 0; slot < WRITER_SLOTS; slot++) writers[slot] = spawn_writer(slot, generations[slot]++);
    if (with_sqlite_writer) writers[SQL_SLOT] = spawn_writer(SQL_SLOT, generations[SQL_SLOT]++);
    if (follower_child == NULL || !wait_ready(follower_child, ready, 30)) {
        kill_everyone();
        return 1;
    }

    start = now_seconds();
    end = start + seconds;
    next_kill = start + 0.3 + (double)pick(700) / 1000.0;
    while ((now_seconds() < end || sleeper_state == 1 || sleeper_state == 2) && failures == 0) {
        double now = now_seconds();
        reap();
        /* A child that ended by itself is a failure. */
        for (int slot = 0; slot < SLOTS; slot++) {
            child *w = writers[slot];
            if (w != NULL && w->exited && !w->killed) {
                char text[32];
                fail("%s ended by itself (%s)", w->name, describe_status(w->status, text, sizeof text));
            }
        }
        if (follower_child->exited && !follower_child->killed) fail("follower %s ended early", follower_child->name);
        if (sleeper != NULL && sleeper->exited) fail("the sleeper ended early");
        if (failures) break;

        if (now >= next_sample) {
            long long wal = wal_size();
            if (wal > max_wal) max_wal = wal;
            /* The bound holds while the followers keep up: not while the
            ** sleeper is stopped holding its read (SQLite cannot reuse the
            ** log past it, so the file grows), nor after it (the growth
            ** since it caught up is reported). */
            if (sleeper_state == 0 && wal > max_wal_keeping_up) max_wal_keeping_up = wal;
            if (sleeper_state == 3 && now > sleeper_resumed + 2.0) {
                if (wal_after_sleeper < 0) wal_after_sleeper = wal;
                if (wal - wal_after_sleeper > growth_after_sleeper) growth_after_sleeper = wal - wal_after_sleeper;
            }
            if (wal > 128 * WAL_LIMIT) {
                /* 2 GiB: stop before the disk fills (the check below fails). */
                printf("# the -wal file holds %lld bytes: ending the run early\n", wal);
                break;
            }
            if (read_log_stats(&stats) && stats.count > max_log) max_log = stats.count;
            next_sample = now + 0.1;
        }

        /* Writers: SIGKILL at random points, restarted with the next seed. */
        if (now >= next_kill && now < end) {
            int slot = with_sqlite_writer && pick(5) == 0 ? SQL_SLOT : (int)pick(WRITER_SLOTS);
            kill_child(writers[slot]);
            writer_kills++;
            writers[slot] = spawn_writer(slot, generations[slot]++);
            next_kill = now + 0.25 + (double)pick(750) / 1000.0;
        }

        /* The follower, once: killed, and a fresh one started. */
        if (!follower_restarted && now > start + 0.3 * seconds) {
            kill_child(follower_child);
            printf("# SIGKILLed follower first (pid %d)\n", (int)follower_child->pid);
            follower_child = spawn_follower("second", ready, sizeof ready, result, sizeof result);
            follower_restarted = 1;
            if (follower_child == NULL || !wait_ready(follower_child, ready, 30)) break;
        }

        /* The sleeper: stopped until the commit log passed it. */
        if (sleeper_state == 0 && now > start + 0.45 * seconds) {
            sleeper = spawn_follower("sleeper", sleeper_ready, sizeof sleeper_ready, sleeper_result,
                                     sizeof sleeper_result);
            if (sleeper == NULL || !wait_ready(sleeper, sleeper_ready, 30)) break;
            sleep_ms(50); /* let it catch up a few times */
            kill(sleeper->pid, SIGSTOP);
            for (int i = 0; i < 200 && process_state(sleeper->pid) != 'T'; i++) sleep_ms(5);
            if (process_state(sleeper->pid) != 'T') fail("the sleeper did not stop");
            read_log_stats(&stats);
            sleeper_mark = stats.newest;
            sleeper_until = now_seconds() + 30;
            sleeper_state = 2;
            printf("# SIGSTOPped the sleeper (pid %d) at logged snapshot %lld\n", (int)sleeper->pid, sleeper_mark);
        } else if (sleeper_state == 2) {
            if (read_log_stats(&stats) && stats.oldest > sleeper_mark + 1) {
                kill(sleeper->pid, SIGCONT);
                sleeper_state = 3;
                sleeper_resumed = now_seconds();
                printf("# SIGCONTed the sleeper: the log now holds snapshots %lld..%lld\n", stats.oldest, stats.newest);
            } else if (now > sleeper_until) {
                kill(sleeper->pid, SIGCONT);
                sleeper_state = 3;
                fail("the commit log did not pass the stopped sleeper in 30 s (log %lld..%lld, sleeper at %lld): do "
                     "the writers wait for a stopped process?",
                     stats.oldest, stats.newest, sleeper_mark);
            }
        }
        sleep_ms(10);
    }

    if (sleeper_state == 2) kill(sleeper->pid, SIGCONT); /* (the run ended early) */

    /* The end: writers stop (SIGTERM: they finish their transaction and
    ** close), and must have had no error. */
    for (int slot = 0; slot < SLOTS; slot++)
        if (writers[slot] != NULL && !writers[slot]->exited) kill(writers[slot]->pid, SIGTERM);
    for (int slot = 0; slot < SLOTS; slot++) {
        child *w = writers[slot];
        char text[32];
        if (w == NULL) continue;
        if (!wait_exit(w, 20)) {
            fail("%s did not exit within 20 s of SIGTERM", w->name);
            kill_child(w);
        } else if (!w->killed && !(WIFEXITED(w->status) && WEXITSTATUS(w->status) == 0)) {
            fail("%s ended with %s", w->name, describe_status(w->status, text, sizeof text));
        }
    }
    if (with_sqlite_writer) {
        /* The SQLite writer's last changes reach the commit log (about a second). */
        double until = now_seconds() + 15;
        long long left = external_changes();
        while (left > 0 && now_seconds() < until) {
            sleep_ms(50);
            left = external_changes();
        }
        if (left < 0) printf("# no ydb_external_changes table: the SQLite writer's changes are not recorded\n");
        else if (left > 0) fail("%lld changes of the SQLite writer still not in the commit log after 15 s", left);
    }
    if (wal_size() > max_wal) max_wal = wal_size();
    if (read_log_stats(&stats) && stats.count > max_log) max_log = stats.count;

    /* The followers' last catch-up, and their verdicts. */
    touch_file(stop_path);
    {
        child *followers[2] = {follower_child, sleeper};
        const char *results[2] = {result, sleeper_result};
        for (int i = 0; i < 2; i++) {
            child *c = followers[i];
            follower_result r;
            char text[32];
            if (c == NULL) {
                fail("follower %d never started", i);
                continue;
            }
            if (!wait_exit(c, 60)) {
                fail("%s did not stop within 60 s of the stop file", c->name);
                kill_child(c);
                continue;
            }
            r = read_result(results[i]);
            if (!(WIFEXITED(c->status) && WEXITSTATUS(c->status) == 0))
                fail("follower %s ended with %s", c->name, describe_status(c->status, text, sizeof text));
            if (!r.parsed) fail("follower %s left no result", c->name);
            else if (r.mismatches != 0) fail("follower %s saw %zu mismatches", c->name, r.mismatches);
            if (c == sleeper && r.parsed && r.reloads < 1) fail("the sleeper never had to reload");
            if (r.parsed && r.catchups < 2) fail("follower %s caught up only %zu times", c->name, r.catchups);
        }
    }
    kill_everyone(); /* nobody should be left; this only reaps */
    (void)first_follower;

    /* No commit lost: the journals against a fresh reader. */
    {
        ydb_database *db = open_shared(db_path, "final reader");
        ydb_connection *reader = NULL;
        long rows_checked = 0, uncertain = 0;
        if (db == NULL || ydb_connection_open(db, &reader) != YDB_OK) {
            fail("the final reader cannot open the database");
        } else {
            for (int slot = 0; slot < SLOTS; slot++)
                if (slot != SQL_SLOT || with_sqlite_writer) check_slot(reader, slot, generations[slot], &rows_checked, &uncertain);
            printf("# journals: %ld rows checked, %ld of them left open by a writer killed in its commit\n",
                   rows_checked, uncertain);
        }
        ydb_connection_close(reader);
        ydb_database_close(db);
    }

    if (max_wal_keeping_up > WAL_LIMIT)
        fail("the -wal file reached %lld bytes while the followers kept up (limit %ld)", max_wal_keeping_up, WAL_LIMIT);
    /* (Reported, not checked: after a stopped reader pinned it, the log
    ** is not cut back within a short run -- see Benchmarks/README.md.) */
    if (max_log > LOG_LIMIT + LOG_SLACK)
        fail("ydb_commit_log held %lld commits (limit %d + %d)", max_log, LOG_LIMIT, LOG_SLACK);

    printf("# summary: seed %llu, %.1f s, %d writer processes (%d SIGKILLed), %d follower processes, largest WAL "
           "%lld bytes (%lld before the sleeper stopped, grown by %lld after it caught up), largest commit log %lld "
           "entries (limit %d), %d failures\n",
           (unsigned long long)seed, now_seconds() - started, generations[0] + generations[1] + generations[2],
           writer_kills, sleeper ? 3 : 2, max_wal, max_wal_keeping_up, growth_after_sleeper, max_log, LOG_LIMIT,
           failures);
    if (failures == 0 && !keep) remove_directory(directory);
    else printf("# files kept in %s\n", directory);
    printf("%s\n", failures == 0 ? "test_multiprocess: PASS" : "test_multiprocess: FAIL");
    return failures == 0 ? 0 : 1;
}

/* ---- arguments ---- */

static const char *option(int argc, char **argv, const char *name, const char *otherwise) {
    for (int i = 1; i + 1 < argc; i++)
        if (strcmp(argv[i], name) == 0) return argv[i + 1];
    return otherwise;
}

static int flag(int argc, char **argv, const char *name) {
    for (int i = 1; i < argc; i++)
        if (strcmp(argv[i], name) == 0) return 1;
    return 0;
}

int main(int argc, char **argv) {
    const char *role = argc > 1 ? argv[1] : "";
    line_buffered();
    if (strcmp(role, "writer") == 0 && argc > 3)
        return run_writer(argv[2], strtoull(argv[3], NULL, 0), atoi(option(argc, argv, "--slot", "0")),
                          atoi(option(argc, argv, "--gen", "0")), flag(argc, argv, "--view"),
                          atof(option(argc, argv, "--seconds", "600")));
    if (strcmp(role, "sqlite-writer") == 0 && argc > 3)
        return run_sqlite_writer(argv[2], strtoull(argv[3], NULL, 0), atoi(option(argc, argv, "--gen", "0")),
                                 atof(option(argc, argv, "--seconds", "600")));
    if (strcmp(role, "follower") == 0 && argc > 2) {
        char stop[1100];
        snprintf(stop, sizeof stop, "%s.stop", argv[2]);
        return run_follower(argv[2], option(argc, argv, "--stop", stop), option(argc, argv, "--ready", NULL),
                            option(argc, argv, "--result", NULL), option(argc, argv, "--name", "follower"),
                            atof(option(argc, argv, "--seconds", "600")));
    }
    if (role[0] != '\0' && role[0] != '-') {
        fprintf(stderr,
                "usage: %s [--seconds T] [--seed N] [--sqlite-writer] [--keep]\n"
                "       %s writer PATH SEED [--slot S] [--gen G] [--view] [--seconds T]\n"
                "       %s sqlite-writer PATH SEED [--gen G] [--seconds T]\n"
                "       %s follower PATH [--stop FILE] [--ready FILE] [--result FILE] [--name N] [--seconds T]\n",
                argv[0], argv[0], argv[0], argv[0]);
        return 2;
    }
    {
        ssize_t n = readlink("/proc/self/exe", self_exe, sizeof self_exe - 1);
        const char *long_tests = getenv("YDBVIEW_LONG_TESTS");
        double seconds = long_tests && strcmp(long_tests, "1") == 0 ? 150 : 8;
        uint64_t seed;
        if (n > 0) self_exe[n] = '\0';
        else snprintf(self_exe, sizeof self_exe, "%s", argv[0]);
        seconds = atof(option(argc, argv, "--seconds", "0")) > 0 ? atof(option(argc, argv, "--seconds", "0")) : seconds;
        seed = flag(argc, argv, "--seed") ? strtoull(option(argc, argv, "--seed", "1"), NULL, 0)
                                          : (uint64_t)time(NULL) ^ ((uint64_t)getpid() << 20);
        return run_main(seconds, seed, flag(argc, argv, "--sqlite-writer"), flag(argc, argv, "--keep"));
    }
}
