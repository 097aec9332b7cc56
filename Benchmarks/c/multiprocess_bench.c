/*
** multiprocess_bench.c -- shared mode (YDB_OPEN_MULTI_PROCESS): how long a
** commit in one process takes to reach a changeset in another, and what
** shared mode adds to a local one-row commit.
**
**   ydbview-multiprocess-bench [sizes=10000,100000,1000000] [--rounds N=2000]
**                              [--interval-ms M=2]
**
** For each size, a file with that many rows in one collection ("items"),
** each object a group letter (a..d), a random 64-bit rank and a timestamp,
** is written once in exclusive mode and copied. One view groups the rows by
** letter and sorts them by rank, then key (sort keys). Every process is
** forked from the parent, which never calls the library itself.
**
** Latency: process B opens the file in shared mode, registers the view,
** makes mappings over the four groups and begins a long-lived read;
** process A opens the same file, registers the view too, and makes N
** one-row commits (an update of a random row), one every M ms: the
** timestamp (CLOCK_MONOTONIC) is taken just before the transaction's one
** write and its ydb_txn_commit, and travels in the row's object. B waits in
** poll() on its connection's wakeup descriptor, catches up, computes the
** mappings' changeset, then takes its own timestamp; the difference is the
** latency. A waits for B to have taken each commit before it starts the
** next M ms, so each is measured alone (a catch-up that brought two commits
** is counted, not hidden). p50 / p99 / max.
**
** Commit cost: one process opens two copies of the same rows, one in
** shared mode and one in exclusive mode, registers the view in each, and
** makes N one-row updates and N one-row inserts in each, interleaved
** (shared first, then exclusive first), each its own transaction, timed
** from begin to commit returned. Medians in µs and the ratio
** shared / exclusive. No other process has the shared file open.
**
** Not a test (ctest runs a smoke pass: 1000 --rounds 50).
*/
#define _POSIX_C_SOURCE 200809L
#include <fcntl.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "bench_support.h"

#define COLLECTION "items"
#define VIEW "byLetter"

typedef struct {
    char group;
    char pad[7];
    int64_t rank;
    double stamp; /* CLOCK_MONOTONIC seconds, set by the latency writer */
} item;

static uint64_t random_state = 0x9E3779B97F4A7C15ull;
static uint64_t next_random(void) { return xorshift64(&random_state); }

static item random_item(void) {
    item it;
    memset(&it, 0, sizeof it);
    it.group = (char)('a' + next_random() % 4);
    it.rank = (int64_t)(next_random() >> 1);
    return it;
}

static void key_for(char *out, size_t size, long i) { snprintf(out, size, "k%07ld", i); }

/* ---- the view ---- */

static int by_letter(void *ctx, ydb_txn *txn, const ydb_view_row *row, ydb_group_result *result) {
    char group[2] = {'?', '\0'};
    (void)ctx;
    (void)txn;
    if (row->object_size != sizeof(item)) return 1;
    group[0] = ((const item *)row->object)->group;
    return ydb_group_result_set(result, group);
}

static int rank_then_key(void *ctx, ydb_txn *txn, const char *group, const ydb_view_row *row, ydb_sort_key *key) {
    item it;
    (void)ctx;
    (void)txn;
    (void)group;
    if (row->object_size != sizeof it) return 1;
    memcpy(&it, row->object, sizeof it);
    ydb_sort_key_append_int64(key, it.rank, 0);
    return ydb_sort_key_append_text(key, row->key, 0);
}

static double register_view(ydb_database *db) {
    ydb_view_definition def = YDB_VIEW_DEFINITION_INIT;
    double started = now();
    def.grouping = by_letter;
    def.grouping_flavour = YDB_FLAVOUR_OBJECT;
    def.sort_key = rank_then_key;
    def.sorting_flavour = YDB_FLAVOUR_OBJECT;
    def.version_tag = "1";
    MUST(ydb_view_register(db, VIEW, &def, NULL, NULL));
    return now() - started;
}

static ydb_database *open_database(const char *path, int shared) {
    ydb_database_options options = YDB_DATABASE_OPTIONS_INIT;
    ydb_database *db = NULL;
    if (shared) options.flags |= YDB_OPEN_MULTI_PROCESS;
    MUST(ydb_database_open_with_options(path, &options, &db));
    return db;
}

/* ---- what the processes share: a file mapped by all ---- */

enum { SHARED_UPDATE, EXCLUSIVE_UPDATE, SHARED_INSERT, EXCLUSIVE_INSERT, COSTS };

typedef struct {
    int b_ready, failed;
    uint64_t committed, taken, together;
    double population_a, population_b, population_cost;
    double *latency;     /* rounds */
    double *cost[COSTS]; /* rounds each */
} shared_state;

static shared_state *map_shared(const char *directory, long rounds) {
    char file[600];
    size_t bytes = sizeof(shared_state) + (size_t)rounds * (1 + COSTS) * sizeof(double);
    char *mapped;
    shared_state *state;
    int fd;
    snprintf(file, sizeof file, "%s/shared-state", directory);
    fd = open(file, O_RDWR | O_CREAT | O_TRUNC, 0600);
    if (fd < 0 || ftruncate(fd, (off_t)bytes) != 0) exit(1);
    mapped = (char *)mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    close(fd);
    unlink(file);
    if ((void *)mapped == MAP_FAILED) exit(1);
    memset(mapped, 0, bytes);
    state = (shared_state *)mapped;
    state->latency = (double *)(mapped + sizeof(shared_state));
    for (int k = 0; k < COSTS; k++) state->cost[k] = state->latency + (size_t)rounds * (size_t)(1 + k);
    return state;
}

static uint64_t load(uint64_t *at) { return __atomic_load_n(at, __ATOMIC_SEQ_CST); }
static void store(uint64_t *at, uint64_t value) { __atomic_store_n(at, value, __ATOMIC_SEQ_CST); }

static void pause_seconds(double seconds) {
    struct timespec t;
    if (seconds <= 0) return;
    t.tv_sec = (time_t)seconds;
    t.tv_nsec = (long)((seconds - (double)t.tv_sec) * 1e9);
    nanosleep(&t, NULL);
}

/* ---- the processes ---- */

static void populate(const char *path, long rows) {
    ydb_database *db = open_database(path, 0);
    ydb_connection *conn;
    ydb_txn *txn;
    MUST(ydb_connection_open(db, &conn));
    random_state = 0x9E3779B97F4A7C15ull;
    MUST(ydb_txn_begin_read_write(conn, &txn));
    for (long i = 0; i < rows; i++) {
        char key[32];
        item it = random_item();
        key_for(key, sizeof key, i);
        MUST(ydb_txn_set_object(txn, COLLECTION, key, &it, sizeof it, NULL, 0));
    }
    MUST(ydb_txn_commit(txn));
    MUST(ydb_connection_close(conn));
    MUST(ydb_database_close(db));
}

/* The keys a notification lists (one a commit here). */
typedef struct {
    char keys[8][32];
    size_t count;
} key_list;

static int list_key(void *ctx, const char *collection, const char *key, unsigned int flags) {
    key_list *list = (key_list *)ctx;
    (void)flags;
    if (strcmp(collection, COLLECTION) == 0 && list->count < 8)
        snprintf(list->keys[list->count++], sizeof list->keys[0], "%s", key);
    return 0;
}

/* B: follows A's commits, and times each from A's stamp to its changeset. */
static void follow(const char *path, shared_state *state, long rounds) {
    static const char *const groups[] = {"a", "b", "c", "d"};
    ydb_database *db = open_database(path, 1);
    ydb_connection *conn;
    ydb_mappings *mappings;
    ydb_txn *txn;
    struct pollfd waiter;
    double give_up;
    state->population_b = register_view(db);
    MUST(ydb_connection_open(db, &conn));
    MUST(ydb_mappings_new(VIEW, groups, 4, &mappings));
    MUST(ydb_connection_begin_long_lived_read(conn, NULL));
    MUST(ydb_txn_begin_read(conn, &txn));
    MUST(ydb_mappings_update(mappings, txn));
    MUST(ydb_txn_end(txn));
    MUST(ydb_connection_wakeup_fd(conn, &waiter.fd));
    waiter.events = POLLIN;
    __atomic_store_n(&state->b_ready, 1, __ATOMIC_SEQ_CST);
    give_up = now() + 600;
    while (load(&state->taken) < (uint64_t)rounds && !__atomic_load_n(&state->failed, __ATOMIC_SEQ_CST)) {
        ydb_notification_list *skipped = NULL;
        ydb_changeset *changeset = NULL;
        size_t count = 0, commits = 0;
        double ready;
        int rc;
        if (now() > give_up) {
            fprintf(stderr, "follower: no commit for a long time\n");
            __atomic_store_n(&state->failed, 1, __ATOMIC_SEQ_CST);
            break;
        }
        waiter.revents = 0;
        if (poll(&waiter, 1, 1000) != 1) continue;
        rc = ydb_connection_begin_long_lived_read(conn, &skipped);
        if (rc == YDB_RELOAD) {
            fprintf(stderr, "follower: YDB_RELOAD (the commits since the last catch-up are not measured)\n");
            MUST(ydb_txn_begin_read(conn, &txn));
            MUST(ydb_mappings_update(mappings, txn));
            MUST(ydb_txn_end(txn));
            continue;
        }
        MUST(rc);
        MUST(ydb_changeset_new(mappings, skipped, &changeset));
        ready = now();
        /* Untimed: which rows the commits changed, and the stamps in them. */
        MUST(ydb_notification_list_count(skipped, &count));
        MUST(ydb_txn_begin_read(conn, &txn));
        for (size_t i = 0; i < count; i++) {
            const ydb_notification *n = NULL;
            key_list keys;
            keys.count = 0;
            MUST(ydb_notification_list_get(skipped, i, &n));
            MUST(ydb_notification_enumerate_changed_rows(n, list_key, &keys));
            for (size_t k = 0; k < keys.count; k++) {
                void *object = NULL;
                size_t size = 0;
                item it;
                uint64_t taken = load(&state->taken);
                MUST(ydb_txn_get_object(txn, COLLECTION, keys.keys[k], &object, &size));
                if (size != sizeof it) exit(1);
                memcpy(&it, object, sizeof it);
                ydb_free(object);
                if (taken < (uint64_t)rounds) state->latency[taken] = ready - it.stamp;
                commits++;
                store(&state->taken, taken + 1);
            }
        }
        if (commits > 1) store(&state->together, load(&state->together) + 1);
        MUST(ydb_txn_end(txn));
        ydb_changeset_free(changeset);
        ydb_notification_list_free(skipped);
    }
    ydb_mappings_free(mappings);
    MUST(ydb_connection_close(conn));
    MUST(ydb_database_close(db));
}

/* A: one-row updates, one every `interval` seconds, each after B took the last. */
static void commit_steadily(const char *path, shared_state *state, long rows, long rounds, double interval) {
    ydb_database *db = open_database(path, 1);
    ydb_connection *conn;
    double next, give_up = now() + 600;
    state->population_a = register_view(db);
    MUST(ydb_connection_open(db, &conn));
    while (!__atomic_load_n(&state->b_ready, __ATOMIC_SEQ_CST)) {
        if (__atomic_load_n(&state->failed, __ATOMIC_SEQ_CST) || now() > give_up) exit(1);
        pause_seconds(0.001);
    }
    random_state = 0x2545F4914F6CDD1Dull;
    next = now();
    for (long i = 0; i < rounds; i++) {
        char key[32];
        item it = random_item();
        ydb_txn *txn;
        double waited = now() + 10;
        /* Each alone: B took every earlier commit. */
        while (load(&state->taken) < (uint64_t)i) {
            if (now() > waited || __atomic_load_n(&state->failed, __ATOMIC_SEQ_CST)) {
                fprintf(stderr, "writer: the follower took %llu of %ld commits in 10 s\n",
                        (unsigned long long)load(&state->taken), i);
                __atomic_store_n(&state->failed, 1, __ATOMIC_SEQ_CST);
                exit(1);
            }
            pause_seconds(0.0001);
        }
        next += interval;
        pause_seconds(next - now());
        if (now() > next + interval) next = now(); /* fell behind: start the pace again */
        key_for(key, sizeof key, (long)(next_random() % (uint64_t)rows));
        MUST(ydb_txn_begin_read_write(conn, &txn));
        it.stamp = now();
        MUST(ydb_txn_set_object(txn, COLLECTION, key, &it, sizeof it, NULL, 0));
        MUST(ydb_txn_commit(txn));
        store(&state->committed, (uint64_t)i + 1);
    }
    MUST(ydb_connection_close(conn));
    MUST(ydb_database_close(db));
}

static double timed_commit(ydb_connection *conn, const char *key, const item *it) {
    ydb_txn *txn;
    double start = now();
    MUST(ydb_txn_begin_read_write(conn, &txn));
    MUST(ydb_txn_set_object(txn, COLLECTION, key, it, sizeof *it, NULL, 0));
    MUST(ydb_txn_commit(txn));
    return now() - start;
}

/* One-row commits in shared and exclusive mode, interleaved. */
static void commit_costs(const char *shared_path, const char *exclusive_path, shared_state *state, long rows,
                         long rounds) {
    ydb_database *dbs[2];
    ydb_connection *conns[2];
    dbs[0] = open_database(shared_path, 1);
    dbs[1] = open_database(exclusive_path, 0);
    state->population_cost = register_view(dbs[0]);
    register_view(dbs[1]);
    for (int d = 0; d < 2; d++) MUST(ydb_connection_open(dbs[d], &conns[d]));
    random_state = 0x5DEECE66Dull;
    for (long r = 0; r < rounds; r++) {
        char key[32], added[32];
        item updated = random_item(), inserted = random_item();
        key_for(key, sizeof key, (long)(next_random() % (uint64_t)rows));
        snprintf(added, sizeof added, "n%07ld", r);
        for (int turn = 0; turn < 2; turn++) {
            int d = (int)((turn + r) % 2); /* 0 shared, 1 exclusive */
            state->cost[SHARED_UPDATE + d][r] = timed_commit(conns[d], key, &updated);
            state->cost[SHARED_INSERT + d][r] = timed_commit(conns[d], added, &inserted);
        }
    }
    for (int d = 0; d < 2; d++) {
        MUST(ydb_connection_close(conns[d]));
        MUST(ydb_database_close(dbs[d]));
    }
}

/* ---- the parent ---- */

static void copy_file(const char *from, const char *to) {
    char buffer[1 << 16];
    ssize_t n;
    int in = open(from, O_RDONLY), out;
    if (in < 0) return; /* (no -wal: nothing to copy) */
    out = open(to, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (out < 0) exit(1);
    while ((n = read(in, buffer, sizeof buffer)) > 0)
        if (write(out, buffer, (size_t)n) != n) exit(1);
    close(in);
    close(out);
}

static void copy_database(const char *from, const char *to) {
    char a[700], b[700];
    copy_file(from, to);
    snprintf(a, sizeof a, "%s-wal", from);
    snprintf(b, sizeof b, "%s-wal", to);
    copy_file(a, b);
}

static void remove_database(const char *path) {
    static const char *const suffixes[] = {"", "-wal", "-shm", "-ydbview", "-journal"};
    for (size_t i = 0; i < sizeof suffixes / sizeof suffixes[0]; i++) {
        char file[700];
        snprintf(file, sizeof file, "%s%s", path, suffixes[i]);
        unlink(file);
    }
}

/* Runs `role` in a child process; returns its pid. */
typedef struct {
    int role;
    const char *path, *other;
    shared_state *state;
    long rows, rounds;
    double interval;
} job;
enum { POPULATE, FOLLOW, COMMIT, COSTS_ROLE };

static pid_t start(job j) {
    pid_t pid;
    fflush(stdout);
    fflush(stderr);
    pid = fork();
    if (pid < 0) exit(1);
    if (pid > 0) return pid;
    switch (j.role) {
    case POPULATE: populate(j.path, j.rows); break;
    case FOLLOW: follow(j.path, j.state, j.rounds); break;
    case COMMIT: commit_steadily(j.path, j.state, j.rows, j.rounds, j.interval); break;
    default: commit_costs(j.path, j.other, j.state, j.rows, j.rounds); break;
    }
    fflush(stdout);
    _exit(0);
}

static int finish(pid_t pid, const char *what) {
    int status = 0;
    if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        fprintf(stderr, "%s failed (status %d)\n", what, status);
        return 0;
    }
    return 1;
}

static double percentile(double *sorted, long n, double p) {
    long at = (long)(p * (double)(n - 1) + 0.5);
    return n > 0 ? sorted[at < n ? at : n - 1] : 0;
}

static const char *rows_label(long rows, char *out, size_t size) {
    if (rows >= 1000000 && rows % 1000000 == 0) snprintf(out, size, "%ldM", rows / 1000000);
    else if (rows >= 1000 && rows % 1000 == 0) snprintf(out, size, "%ldk", rows / 1000);
    else snprintf(out, size, "%ld", rows);
    return out;
}

int main(int argc, char **argv) {
    const char *sizes = "10000,100000,1000000";
    const char *base = getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
    long rounds = 2000;
    double interval = 0.002;
    char directory[512], command[2048] = "", *list;
    size_t used = 0;
    int ok = 1;

    setvbuf(stdout, NULL, _IOLBF, 0);
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--rounds") == 0 && i + 1 < argc) rounds = atol(argv[++i]);
        else if (strcmp(argv[i], "--interval-ms") == 0 && i + 1 < argc) interval = atof(argv[++i]) / 1000;
        else if (argv[i][0] != '-') sizes = argv[i];
        else {
            fprintf(stderr, "usage: ydbview-multiprocess-bench [sizes, e.g. 10000,100000] [--rounds N] "
                            "[--interval-ms M]\n");
            return 2;
        }
    }
    for (int i = 0; i < argc; i++)
        used += (size_t)snprintf(command + used, used < sizeof command ? sizeof command - used : 0, "%s%s",
                                 i ? " " : "", argv[i]);
    snprintf(directory, sizeof directory, "%s/ydbview-multiprocess-bench-XXXXXX", base);
    if (rounds < 1 || interval < 0 || mkdtemp(directory) == NULL) {
        fprintf(stderr, "usage: ydbview-multiprocess-bench [sizes] [--rounds N >= 1] [--interval-ms M >= 0]\n");
        return 2;
    }

    printf("### Shared mode: a one-row commit in process A to the changeset in process B, and a local one-row "
           "commit shared vs exclusive\n\n");
    printf("    %s\n\n", command);
    printf("%ld commits per figure; A commits every %.1f ms after B took the previous one; one view (4 groups, "
           "sort keys) registered in every process.\n\n",
           rounds, interval * 1000);
    printf("| rows | A commit -> B changeset p50 | p99 | max | catch-ups with 2+ commits | update: shared | "
           "exclusive | ratio | insert: shared | exclusive | ratio |\n");
    printf("|---|---|---|---|---|---|---|---|---|---|---|\n");

    list = strdup(sizes);
    for (char *token = strtok(list, ","); token != NULL && ok; token = strtok(NULL, ",")) {
        long rows = atol(token);
        char original[600], latency_path[600], shared_path[600], exclusive_path[600], label[32];
        shared_state *state;
        job j;
        pid_t follower, writer;
        double medians[COSTS];
        if (rows < 10) {
            fprintf(stderr, "size %s: at least 10 rows\n", token);
            ok = 0;
            break;
        }
        snprintf(original, sizeof original, "%s/rows-%ld.sqlite", directory, rows);
        snprintf(latency_path, sizeof latency_path, "%s/latency-%ld.sqlite", directory, rows);
        snprintf(shared_path, sizeof shared_path, "%s/shared-%ld.sqlite", directory, rows);
        snprintf(exclusive_path, sizeof exclusive_path, "%s/exclusive-%ld.sqlite", directory, rows);
        state = map_shared(directory, rounds);
        memset(&j, 0, sizeof j);
        j.rows = rows;
        j.rounds = rounds;
        j.interval = interval;
        j.state = state;

        fprintf(stderr, "%ld rows: writing the rows...\n", rows);
        j.role = POPULATE;
        j.path = original;
        if (!finish(start(j), "populating")) {
            ok = 0;
            break;
        }
        copy_database(original, latency_path);
        copy_database(original, shared_path);
        copy_database(original, exclusive_path);
        remove_database(original);

        fprintf(stderr, "%ld rows: latency (2 processes)...\n", rows);
        j.path = latency_path;
        j.role = FOLLOW;
        follower = start(j);
        j.role = COMMIT;
        writer = start(j);
        ok = finish(writer, "the writer (A)") & finish(follower, "the follower (B)");
        if (!ok) break;

        fprintf(stderr, "%ld rows: one-row commits, shared vs exclusive...\n", rows);
        j.role = COSTS_ROLE;
        j.path = shared_path;
        j.other = exclusive_path;
        if (!finish(start(j), "the commit costs")) {
            ok = 0;
            break;
        }
        qsort(state->latency, (size_t)rounds, sizeof(double), compare_doubles);
        for (int k = 0; k < COSTS; k++) {
            qsort(state->cost[k], (size_t)rounds, sizeof(double), compare_doubles);
            medians[k] = percentile(state->cost[k], rounds, 0.5) * 1e6;
        }
        printf("| %s | %.2f ms | %.2f ms | %.2f ms | %llu | %.1f µs | %.1f µs | %.2fx | %.1f µs | %.1f µs | %.2fx |\n",
               rows_label(rows, label, sizeof label), percentile(state->latency, rounds, 0.5) * 1e3,
               percentile(state->latency, rounds, 0.99) * 1e3, state->latency[rounds - 1] * 1e3,
               (unsigned long long)state->together, medians[SHARED_UPDATE], medians[EXCLUSIVE_UPDATE],
               medians[SHARED_UPDATE] / medians[EXCLUSIVE_UPDATE], medians[SHARED_INSERT], medians[EXCLUSIVE_INSERT],
               medians[SHARED_INSERT] / medians[EXCLUSIVE_INSERT]);
        fprintf(stderr, "%ld rows: view registration took %.2f s in A, %.2f s in B, %.2f s shared in the cost run\n",
                rows, state->population_a, state->population_b, state->population_cost);
        remove_database(latency_path);
        remove_database(shared_path);
        remove_database(exclusive_path);
        munmap(state, sizeof(shared_state) + (size_t)rounds * (1 + COSTS) * sizeof(double));
    }
    free(list);
    if (ok) rmdir(directory);
    else fprintf(stderr, "files kept in %s\n", directory);
    return ok ? 0 : 1;
}
