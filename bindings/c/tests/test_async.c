/*
** test_async.c -- registering a view in the background
** (ydb_view_register_async): a population of many rows (1,000,000 unless
** YDBVIEW_ASYNC_ROWS says otherwise) while another connection keeps
** committing and a third keeps reading, compared with a synchronous
** registration of the same definition; progress; cancellation; a failing
** callback; closing the database meanwhile; the same-name rule; misuse.
** Prints its timings and "N passed, N failed".
*/
#define _POSIX_C_SOURCE 200809L
#include <pthread.h>
#include <stdint.h>
#include <time.h>
#include <unistd.h>

#include "check.h"
#include "clock.h"

/* ---- the view ------------------------------------------------------------
** Objects are "GROUP:RANK"; group "x" is left out; key "bad" makes the
** grouping fail. Rows sort by RANK, then key: a total order, so any two
** registrations agree. The ctx can hold the population at its pause_at-th
** grouping call until resumed. */

typedef struct {
    pthread_mutex_t lock;
    pthread_cond_t changed;
    long calls;
    long pause_at;   /* 0: never */
    int reached;
    int resumed;
    int destroyed;
} view_ctx;

static void view_ctx_init(view_ctx *ctx, long pause_at) {
    memset(ctx, 0, sizeof *ctx);
    pthread_mutex_init(&ctx->lock, NULL);
    pthread_cond_init(&ctx->changed, NULL);
    ctx->pause_at = pause_at;
}

static void view_ctx_destroy(void *pointer) {
    view_ctx *ctx = (view_ctx *)pointer;
    pthread_mutex_lock(&ctx->lock);
    ctx->destroyed++;
    pthread_mutex_unlock(&ctx->lock);
}

/* Waits (at most 120 s) until the population reached its pause. */
static int wait_until_paused(view_ctx *ctx) {
    struct timespec deadline;
    int reached;
    clock_gettime(CLOCK_REALTIME, &deadline);
    deadline.tv_sec += 120;
    pthread_mutex_lock(&ctx->lock);
    while (!ctx->reached && pthread_cond_timedwait(&ctx->changed, &ctx->lock, &deadline) == 0) {}
    reached = ctx->reached;
    pthread_mutex_unlock(&ctx->lock);
    return reached;
}

static void resume(view_ctx *ctx) {
    pthread_mutex_lock(&ctx->lock);
    ctx->resumed = 1;
    pthread_cond_broadcast(&ctx->changed);
    pthread_mutex_unlock(&ctx->lock);
}

static int by_group(void *pointer, ydb_txn *txn, const ydb_view_row *row, ydb_group_result *result) {
    view_ctx *ctx = (view_ctx *)pointer;
    (void)txn;
    const char *object = (const char *)row->object;
    char group[16];
    size_t n = 0;
    if (ctx != NULL && ctx->pause_at > 0) {
        pthread_mutex_lock(&ctx->lock);
        if (++ctx->calls == ctx->pause_at) {
            ctx->reached = 1;
            pthread_cond_broadcast(&ctx->changed);
            while (!ctx->resumed) pthread_cond_wait(&ctx->changed, &ctx->lock);
        }
        pthread_mutex_unlock(&ctx->lock);
    }
    if (strcmp(row->key, "bad") == 0) return 7;
    while (n < row->object_size && n < sizeof group - 1 && object[n] != ':') n++;
    memcpy(group, object, n);
    group[n] = '\0';
    if (strcmp(group, "x") == 0) return 0;
    return ydb_group_result_set(result, group);
}

static long rank_of(const ydb_view_row *row) {
    const char *object = (const char *)row->object;
    size_t i = 0;
    long rank = 0;
    while (i < row->object_size && object[i] != ':') i++;
    for (i++; i < row->object_size; i++) rank = rank * 10 + (object[i] - '0');
    return rank;
}

static int by_rank_then_key(void *ctx, ydb_txn *txn, const char *group, const ydb_view_row *a,
                            const ydb_view_row *b, int *out_order) {
    long ra = rank_of(a), rb = rank_of(b);
    (void)ctx; (void)txn; (void)group;
    *out_order = ra != rb ? (ra < rb ? -1 : 1) : strcmp(a->key, b->key);
    return 0;
}

static ydb_view_definition definition(const char *tag, int persistent) {
    ydb_view_definition def = YDB_VIEW_DEFINITION_INIT;
    def.grouping = by_group;
    def.grouping_flavour = YDB_FLAVOUR_OBJECT;
    def.sorting = by_rank_then_key;
    def.sorting_flavour = YDB_FLAVOUR_OBJECT;
    def.version_tag = tag;
    def.persistent = persistent;
    return def;
}

/* ---- what progress and done saw ------------------------------------------ */

typedef struct {
    pthread_mutex_t lock;
    int done_calls;
    int status;
    int outcome;
    char message[256];
    int destroyed_before_done;
    view_ctx *view;
    uint64_t reports, last_done, last_total, first_done;
    int monotonic;
    int cancel_at_report;   /* nonzero: return nonzero from that report */
    ydb_registration *self; /* waited for from done: must give YDB_MISUSE */
    int wait_from_done_rc;
    double finished_at;
} outcome_ctx;

static void outcome_init(outcome_ctx *out, view_ctx *view) {
    memset(out, 0, sizeof *out);
    pthread_mutex_init(&out->lock, NULL);
    out->monotonic = 1;
    out->status = -1;
    out->view = view;
    out->wait_from_done_rc = -1;
}

static int on_progress(void *pointer, uint64_t done, uint64_t total) {
    outcome_ctx *out = (outcome_ctx *)pointer;
    int cancel;
    pthread_mutex_lock(&out->lock);
    if (out->reports == 0) out->first_done = done;
    if (done < out->last_done || done > total || (out->reports > 0 && total != out->last_total))
        out->monotonic = 0;
    out->reports++;
    out->last_done = done;
    out->last_total = total;
    cancel = out->cancel_at_report != 0 && (uint64_t)out->cancel_at_report == out->reports;
    pthread_mutex_unlock(&out->lock);
    return cancel;
}

static void on_done(void *pointer, int status, int outcome, const char *message) {
    outcome_ctx *out = (outcome_ctx *)pointer;
    int finished = -1;
    int rc = out->self != NULL ? ydb_registration_wait(out->self, 0, &finished) : -1;
    pthread_mutex_lock(&out->lock);
    out->wait_from_done_rc = rc;
    out->done_calls++;
    out->status = status;
    out->outcome = outcome;
    snprintf(out->message, sizeof out->message, "%s", message ? message : "");
    if (out->view != NULL) {
        pthread_mutex_lock(&out->view->lock);
        out->destroyed_before_done = out->view->destroyed;
        pthread_mutex_unlock(&out->view->lock);
    }
    out->finished_at = now_seconds();
    pthread_mutex_unlock(&out->lock);
}

/* ---- helpers ---------------------------------------------------------------- */

static void fill(ydb_connection *conn, long rows, unsigned seed) {
    ydb_txn *txn = NULL;
    long i;
    REQUIRE_OK(ydb_txn_begin_read_write(conn, &txn));
    for (i = 0; i < rows; i++) {
        char key[24], object[32];
        unsigned roll = (unsigned)rand_r(&seed);
        snprintf(key, sizeof key, "k%ld", i);
        if (roll % 9 == 0) snprintf(object, sizeof object, "x:%u", roll % 1000000);
        else snprintf(object, sizeof object, "g%u:%u", roll % 7, (roll / 7) % 1000000);
        REQUIRE_OK(ydb_txn_set_object(txn, "items", key, object, strlen(object), NULL, 0));
    }
    REQUIRE_OK(ydb_txn_commit(txn));
}

static int set_row(ydb_txn *txn, const char *key, const char *object) {
    return ydb_txn_set_object(txn, "items", key, object, strlen(object), NULL, 0);
}

/* One random write on keys k0 .. k(1.1 rows). */
static int random_write(ydb_txn *txn, long rows, unsigned *seed) {
    char key[24], object[32];
    unsigned roll = (unsigned)rand_r(seed);
    unsigned other = (unsigned)rand_r(seed);
    snprintf(key, sizeof key, "k%ld", (long)(other % (unsigned long)(rows + rows / 10 + 1)));
    if (other % 10 == 0) snprintf(object, sizeof object, "x:%u", other % 1000000);
    else snprintf(object, sizeof object, "g%u:%u", other % 7, (other / 7) % 1000000);
    switch (roll % 10) {
    case 0: case 1: case 2: case 3: return set_row(txn, key, object);
    case 4: return ydb_txn_replace_metadata(txn, "items", key, "m", 1);
    case 5: return ydb_txn_touch_object(txn, "items", key);
    case 6: case 7: return ydb_txn_remove_object(txn, "items", key);
    default: {
        int rc = ydb_txn_remove_object(txn, "items", key);
        return rc == YDB_OK ? set_row(txn, key, object) : rc;
    }
    }
}

static int commit_random(ydb_connection *conn, long rows, unsigned *seed, int writes) {
    ydb_txn *txn = NULL;
    int rc = ydb_txn_begin_read_write(conn, &txn), i;
    for (i = 0; i < writes && rc == YDB_OK; i++) rc = random_write(txn, rows, seed);
    if (rc != YDB_OK) {
        ydb_txn_rollback(txn);
        return rc;
    }
    return ydb_txn_commit(txn);
}

/* FNV-1a of every (group, key) in view order, and the row count. */
typedef struct { uint64_t hash; size_t rows; ydb_txn *txn; const char *view; const char *group; int failed; } digest;

static void mix(digest *d, const char *text) {
    for (; *text; text++) d->hash = (d->hash ^ (unsigned char)*text) * 1099511628211ULL;
    d->hash = (d->hash ^ 0xff) * 1099511628211ULL;
}

static int digest_key(void *pointer, const char *collection, const char *key, size_t index) {
    digest *d = (digest *)pointer;
    (void)collection; (void)index;
    mix(d, key);
    d->rows++;
    return 0;
}

static int digest_group(void *pointer, const char *group) {
    digest *d = (digest *)pointer;
    mix(d, group);
    if (ydb_view_enumerate_keys(d->txn, d->view, group, 0, (size_t)-1, 0, digest_key, d) != YDB_OK) d->failed = 1;
    return 0;
}

static digest view_digest(ydb_txn *txn, const char *view) {
    digest d;
    memset(&d, 0, sizeof d);
    d.hash = 14695981039346656037ULL;
    d.txn = txn;
    d.view = view;
    if (ydb_view_enumerate_groups(txn, view, digest_group, &d) != YDB_OK) d.failed = 1;
    return d;
}

static int is_registered(ydb_connection *conn, const char *view) {
    ydb_txn *txn = NULL;
    int flag = -1;
    if (ydb_txn_begin_read(conn, &txn) != YDB_OK) return -1;
    if (ydb_view_is_registered(txn, view, &flag) != YDB_OK) flag = -1;
    ydb_txn_end(txn);
    return flag;
}

/* ---- 1. many rows under concurrent commits and reads ------------------------ */

typedef struct {
    ydb_database *db;
    long rows;
    volatile int stop;
    volatile int registration_done;
    long commits, commits_during, errors;
    double longest_commit;       /* seconds, while the registration ran */
    long reads;
    uint64_t last_invisible, first_visible;
    int visible_then_invisible;
    int first_visible_complete;  /* -1 unchecked, 0 no, 1 yes */
    uint64_t install_snapshot;
} shared_state;

static void *writer_thread(void *arg) {
    shared_state *s = (shared_state *)arg;
    ydb_connection *conn = NULL;
    unsigned seed = 99;
    if (ydb_connection_open(s->db, &conn) != YDB_OK) { s->errors++; return NULL; }
    while (!s->stop) {
        double started = now_seconds(), took;
        int running = !s->registration_done;
        int rc = commit_random(conn, s->rows, &seed, 1 + (int)(seed % 4));
        took = now_seconds() - started;
        if (rc != YDB_OK) {
            fprintf(stderr, "writer: %d %s\n", rc, ydb_errmsg());
            s->errors++;
            break;
        }
        s->commits++;
        if (running && !s->registration_done) {
            s->commits_during++;
            if (took > s->longest_commit) s->longest_commit = took;
        }
        sleep_us(1000);   /* ~1,000 commits a second: steady, and the catch-up stays bounded */
    }
    ydb_connection_close(conn);
    return NULL;
}

/* Counts the rows a complete view holds at this snapshot: every row of
** "items" whose group is not "x". */
static int count_grouped(void *pointer, const char *key, const void *object, size_t size,
                         const void *metadata, size_t metadata_size) {
    size_t *count = (size_t *)pointer;
    (void)key; (void)metadata; (void)metadata_size;
    if (!(size >= 2 && ((const char *)object)[0] == 'x' && ((const char *)object)[1] == ':')) (*count)++;
    return 0;
}

static void *reader_thread(void *arg) {
    shared_state *s = (shared_state *)arg;
    ydb_connection *conn = NULL;
    if (ydb_connection_open(s->db, &conn) != YDB_OK) { s->errors++; return NULL; }
    while (!s->stop) {
        ydb_txn *txn = NULL;
        int flag = 0;
        uint64_t snapshot = 0;
        if (ydb_txn_begin_read(conn, &txn) != YDB_OK) { s->errors++; break; }
        ydb_txn_snapshot(txn, &snapshot);
        if (ydb_view_is_registered(txn, "v", &flag) != YDB_OK) s->errors++;
        if (flag) {
            if (s->first_visible == 0) {
                /* The first time the view shows: it must be complete here. */
                size_t expected = 0, shown = 0;
                s->first_visible = snapshot;
                ydb_txn_enumerate_rows(txn, "items", count_grouped, &expected);
                ydb_view_count_all(txn, "v", &shown);
                s->first_visible_complete = expected == shown;
                if (expected != shown)
                    fprintf(stderr, "reader: at snapshot %llu the view shows %zu rows of %zu\n",
                            (unsigned long long)snapshot, shown, expected);
            }
        } else {
            if (s->first_visible != 0) s->visible_then_invisible = 1;
            s->last_invisible = snapshot;
        }
        s->reads++;
        ydb_txn_end(txn);
        sleep_ms(2);
    }
    ydb_connection_close(conn);
    return NULL;
}

static void observe_install(void *pointer, const ydb_notification *notification) {
    shared_state *s = (shared_state *)pointer;
    ydb_notification_list *list = NULL;
    int flag = 0;
    if (s->install_snapshot != 0) return;
    if (ydb_notification_list_new(&notification, 1, &list) != YDB_OK) return;
    if (ydb_view_has_changes(list, "v", &flag) == YDB_OK && flag)
        ydb_notification_snapshot(notification, &s->install_snapshot);
    ydb_notification_list_free(list);
}

static void test_many_rows_under_concurrent_commits(void) {
    const char *env = getenv("YDBVIEW_ASYNC_ROWS");
    long rows = env != NULL ? atol(env) : 1000000;
    shared_state s;
    view_ctx view;
    outcome_ctx out;
    ydb_connection *conn = NULL;
    ydb_registration *registration = NULL;
    ydb_view_definition def = definition("1", 1);
    pthread_t writer, reader;
    uint64_t token = 0;
    int finished = 0, outcome = 0;
    double started, fill_seconds, async_seconds, sync_seconds;
    long i;
    unsigned seed = 5;

    if (rows < 1000) rows = 1000;
    memset(&s, 0, sizeof s);
    s.rows = rows;
    s.first_visible_complete = -1;
    REQUIRE_OK(ydb_database_open(NULL, &s.db));
    REQUIRE_OK(ydb_connection_open(s.db, &conn));
    started = now_seconds();
    fill(conn, rows, 1);
    fill_seconds = now_seconds() - started;
    REQUIRE_OK(ydb_database_add_commit_observer(s.db, observe_install, &s, NULL, &token));
    pthread_create(&writer, NULL, writer_thread, &s);
    pthread_create(&reader, NULL, reader_thread, &s);

    view_ctx_init(&view, rows / 2);
    outcome_init(&out, &view);
    started = now_seconds();
    CHECK_OK(ydb_view_register_async(s.db, "v", &def, &view, view_ctx_destroy, on_progress, on_done, &out,
                                     &registration));
    CHECK(wait_until_paused(&view));
    /* Held half-way: commits still go through, readers see no view. */
    while (s.commits_during < 20) sleep_ms(1);
    for (i = 0; i < 50; i++) CHECK_OK(commit_random(conn, rows, &seed, 3));
    {
        ydb_txn *txn = NULL;
        char key[24];
        REQUIRE_OK(ydb_txn_begin_read_write(conn, &txn));
        /* On both sides of the scan: remove, regroup, leave out, re-insert, insert. */
        CHECK_OK(ydb_txn_remove_object(txn, "items", "k1"));
        snprintf(key, sizeof key, "k%ld", rows - 2);
        CHECK_OK(ydb_txn_remove_object(txn, "items", key));
        CHECK_OK(set_row(txn, "k2", "g9:5"));
        snprintf(key, sizeof key, "k%ld", rows - 3);
        CHECK_OK(set_row(txn, key, "g9:6"));
        CHECK_OK(set_row(txn, "k3", "x:7"));
        CHECK_OK(ydb_txn_remove_object(txn, "items", "k4"));
        CHECK_OK(set_row(txn, "k4", "g0:8"));
        CHECK_OK(set_row(txn, "new", "g8:9"));
        /* Many changed rows: the registration catches up on a read snapshot first. */
        for (i = 0; i < rows; i += rows / 5000 > 0 ? rows / 5000 : 1) {
            char object[32];
            snprintf(key, sizeof key, "k%ld", i);
            snprintf(object, sizeof object, "g%ld:%ld", i % 3, i % 997);
            CHECK_OK(set_row(txn, key, object));
        }
        CHECK_OK(ydb_txn_commit(txn));
    }
    CHECK(is_registered(conn, "v") == 0);
    CHECK_OK(ydb_registration_wait(registration, 0, &finished));
    CHECK(finished == 0);
    CHECK_RC(ydb_registration_result(registration, &outcome), YDB_MISUSE);
    resume(&view);
    CHECK_OK(ydb_registration_wait(registration, -1, &finished));
    async_seconds = out.finished_at - started;
    s.registration_done = 1;
    CHECK(finished == 1);
    CHECK_OK(ydb_registration_result(registration, &outcome));
    CHECK(outcome == YDB_VIEW_BUILT);
    CHECK(out.done_calls == 1 && out.status == YDB_OK && out.outcome == YDB_VIEW_BUILT);
    CHECK(out.destroyed_before_done == 0);
    CHECK(out.monotonic && out.first_done == 0 && out.last_done == out.last_total);
    CHECK(out.last_total > (uint64_t)rows); /* twice the rows at the scan's snapshot */
    CHECK(out.reports >= 3 && out.reports <= 103);
    sleep_ms(50); /* a few more reads and commits with the view installed */
    s.stop = 1;
    pthread_join(writer, NULL);
    pthread_join(reader, NULL);
    CHECK(s.errors == 0);
    CHECK(s.commits_during >= 20);
    CHECK(s.install_snapshot != 0);
    CHECK(s.first_visible >= s.install_snapshot);
    CHECK(s.last_invisible < s.install_snapshot);
    CHECK(s.visible_then_invisible == 0);
    CHECK(s.first_visible_complete == 1);

    /* The same definition registered synchronously now: same groups, same order. */
    def = definition("1", 0);
    started = now_seconds();
    CHECK_OK(ydb_view_register(s.db, "sync", &def, NULL, NULL));
    sync_seconds = now_seconds() - started;
    {
        ydb_txn *txn = NULL;
        digest a, b;
        char *group = NULL;
        size_t index = 0;
        REQUIRE_OK(ydb_txn_begin_read(conn, &txn));
        a = view_digest(txn, "v");
        b = view_digest(txn, "sync");
        CHECK(!a.failed && !b.failed);
        CHECK(a.rows == b.rows && a.hash == b.hash);
        CHECK(a.rows > (size_t)rows / 2);
        CHECK_OK(ydb_view_position(txn, "v", "items", "new", &group, &index));
        CHECK(group != NULL && strcmp(group, "g8") == 0);
        ydb_free(group);
        CHECK_RC(ydb_view_position(txn, "v", "items", "k3", &group, &index), YDB_NOTFOUND);
        ydb_txn_end(txn);
        printf("async registration of %ld rows: %.2f s (fill %.2f s), %ld commits and %ld reads meanwhile, "
               "longest commit %.0f ms; the same view registered synchronously (not persistent, no other "
               "writer): %.2f s\n",
               rows, async_seconds, fill_seconds, s.commits_during, s.reads, s.longest_commit * 1000,
               sync_seconds);
    }
    CHECK_OK(ydb_registration_free(registration));
    CHECK_RC(ydb_registration_wait(registration, 0, &finished), YDB_MISUSE);
    ydb_connection_close(conn);
    CHECK_OK(ydb_database_close(s.db));
    CHECK(view.destroyed == 1);
}

/* ---- 2. progress, cancel, failure, close, same name, misuse ------------------ */

static void test_progress_cancel_failure(void) {
    ydb_database *db = NULL;
    ydb_connection *conn = NULL;
    ydb_registration *registration = NULL;
    ydb_view_definition def = definition("1", 1);
    view_ctx view;
    outcome_ctx out;
    int finished = 0, outcome = -1;

    REQUIRE_OK(ydb_database_open(NULL, &db));
    REQUIRE_OK(ydb_connection_open(db, &conn));
    fill(conn, 20000, 2);

    /* Progress: monotonic, bounded in number, ends at total. */
    view_ctx_init(&view, 0);
    outcome_init(&out, &view);
    CHECK_OK(ydb_view_register_async(db, "p", &def, &view, view_ctx_destroy, on_progress, on_done, &out,
                                     &registration));
    CHECK_OK(ydb_registration_wait(registration, -1, &finished));
    CHECK(out.monotonic && out.first_done == 0 && out.last_done == 40000 && out.last_total == 40000);
    CHECK(out.reports >= 2 && out.reports <= 103);
    CHECK_OK(ydb_registration_free(registration));
    CHECK_OK(ydb_view_unregister(db, "p"));
    CHECK(view.destroyed == 1);

    /* Cancel while held: nothing installed, done once, destroy before done. */
    view_ctx_init(&view, 5000);
    outcome_init(&out, &view);
    CHECK_OK(ydb_view_register_async(db, "c", &def, &view, view_ctx_destroy, NULL, on_done, &out,
                                     &registration));
    out.self = registration;
    CHECK(wait_until_paused(&view));
    CHECK_OK(ydb_registration_cancel(registration));
    resume(&view);
    CHECK_OK(ydb_registration_wait(registration, 60000, &finished));
    CHECK(finished == 1);
    CHECK(out.done_calls == 1 && out.status == YDB_CANCELLED && out.outcome == 0);
    CHECK(out.wait_from_done_rc == YDB_MISUSE);
    CHECK(out.destroyed_before_done == 1);
    CHECK_RC(ydb_registration_result(registration, &outcome), YDB_CANCELLED);
    CHECK(outcome == 0 && ydb_errcode() == YDB_CANCELLED && strstr(ydb_errmsg(), "cancelled") != NULL);
    CHECK_OK(ydb_registration_cancel(registration)); /* after the end: nothing */
    CHECK(out.done_calls == 1);
    CHECK(is_registered(conn, "c") == 0);
    CHECK_OK(put(conn, "items", "after", "g1:1", NULL));
    CHECK_OK(ydb_registration_free(registration));
    /* Registering again works. */
    view_ctx_init(&view, 0);
    CHECK_OK(ydb_view_register_async(db, "c", &def, &view, view_ctx_destroy, NULL, NULL, NULL, &registration));
    CHECK_OK(ydb_registration_wait(registration, -1, &finished));
    CHECK_OK(ydb_registration_result(registration, &outcome));
    CHECK(outcome == YDB_VIEW_BUILT && is_registered(conn, "c") == 1);
    CHECK_OK(ydb_registration_free(registration));
    CHECK_OK(ydb_view_unregister(db, "c"));
    CHECK(view.destroyed == 1);

    /* The progress callback cancels by returning nonzero. */
    view_ctx_init(&view, 0);
    outcome_init(&out, &view);
    out.cancel_at_report = 2;
    CHECK_OK(ydb_view_register_async(db, "q", &def, &view, view_ctx_destroy, on_progress, on_done, &out,
                                     &registration));
    CHECK_OK(ydb_registration_wait(registration, -1, &finished));
    CHECK(out.status == YDB_CANCELLED && is_registered(conn, "q") == 0);
    CHECK_OK(ydb_registration_free(registration));

    /* A failing callback: the error, nothing installed. */
    CHECK_OK(put(conn, "items", "bad", "g1:2", NULL));
    view_ctx_init(&view, 0);
    outcome_init(&out, &view);
    CHECK_OK(ydb_view_register_async(db, "f", &def, &view, view_ctx_destroy, NULL, on_done, &out, &registration));
    CHECK_OK(ydb_registration_wait(registration, -1, &finished));
    CHECK(out.status == YDB_CALLBACK_FAILED && strstr(out.message, "grouping callback failed") != NULL);
    CHECK(out.destroyed_before_done == 1);
    CHECK_RC(ydb_registration_result(registration, &outcome), YDB_CALLBACK_FAILED);
    CHECK(is_registered(conn, "f") == 0);
    CHECK_OK(ydb_registration_free(registration));

    ydb_connection_close(conn);
    ydb_database_close(db);
}

static void *resume_later(void *arg) {
    sleep_ms(200);
    resume((view_ctx *)arg);
    return NULL;
}

static void test_close_and_same_name(void) {
    char path[] = "ydbview-async-XXXXXX"; /* in the working directory (ctest: the build folder) */
    char file[64];
    ydb_database *db = NULL;
    ydb_connection *conn = NULL;
    ydb_registration *first = NULL, *second = NULL;
    ydb_view_definition def = definition("1", 1);
    view_ctx view, other;
    outcome_ctx out, out2;
    pthread_t helper;
    int finished = 0, outcome = 0;

    REQUIRE_OK(mkdtemp(path) != NULL ? YDB_OK : YDB_ERROR);
    snprintf(file, sizeof file, "%s/db.sqlite", path);
    REQUIRE_OK(ydb_database_open(file, &db));
    REQUIRE_OK(ydb_connection_open(db, &conn));
    fill(conn, 5000, 3);

    /* Async, then async of the same name: the first is cancelled. */
    view_ctx_init(&view, 1000);
    outcome_init(&out, &view);
    CHECK_OK(ydb_view_register_async(db, "v", &def, &view, view_ctx_destroy, NULL, on_done, &out, &first));
    CHECK(wait_until_paused(&view));
    view_ctx_init(&other, 0);
    outcome_init(&out2, &other);
    def.version_tag = "2";
    CHECK_OK(ydb_view_register_async(db, "v", &def, &other, view_ctx_destroy, NULL, on_done, &out2, &second));
    resume(&view);
    CHECK_OK(ydb_registration_wait(first, -1, &finished));
    CHECK_OK(ydb_registration_wait(second, -1, &finished));
    CHECK(out.status == YDB_CANCELLED && out2.status == YDB_OK);
    CHECK_OK(ydb_registration_free(first));
    CHECK_OK(ydb_registration_free(second));

    /* Async, then a synchronous registration: the synchronous one stays. */
    view_ctx_init(&view, 1000);
    outcome_init(&out, &view);
    def.version_tag = "3";
    CHECK_OK(ydb_view_register_async(db, "v", &def, &view, view_ctx_destroy, NULL, on_done, &out, &first));
    CHECK(wait_until_paused(&view));
    def.version_tag = "4";
    CHECK_OK(ydb_view_register(db, "v", &def, NULL, NULL));
    resume(&view);
    CHECK_OK(ydb_registration_wait(first, -1, &finished));
    CHECK(out.status == YDB_CANCELLED);
    {
        ydb_txn *txn = NULL;
        char *tag = NULL;
        REQUIRE_OK(ydb_txn_begin_read(conn, &txn));
        CHECK_OK(ydb_view_version_tag(txn, "v", &tag));
        CHECK(tag != NULL && strcmp(tag, "4") == 0);
        ydb_free(tag);
        ydb_txn_end(txn);
    }
    CHECK_OK(ydb_registration_free(first));

    /* Async, then unregistering: nothing stays. */
    view_ctx_init(&view, 1000);
    outcome_init(&out, &view);
    def.version_tag = "5";
    CHECK_OK(ydb_view_register_async(db, "v", &def, &view, view_ctx_destroy, NULL, on_done, &out, &first));
    CHECK(wait_until_paused(&view));
    CHECK_OK(ydb_view_unregister(db, "v"));
    resume(&view);
    CHECK_OK(ydb_registration_wait(first, -1, &finished));
    CHECK(out.status == YDB_CANCELLED && is_registered(conn, "v") == 0);
    CHECK_OK(ydb_registration_free(first));

    /* Closing the database while a registration runs: done once with
    ** YDB_CLOSED, and the file can be opened again at once. */
    view_ctx_init(&view, 1000);
    outcome_init(&out, &view);
    def.version_tag = "6";
    CHECK_OK(ydb_view_register_async(db, "v", &def, &view, view_ctx_destroy, NULL, on_done, &out, &first));
    CHECK(wait_until_paused(&view));
    pthread_create(&helper, NULL, resume_later, &view);
    ydb_connection_close(conn);
    CHECK_OK(ydb_database_close(db));
    pthread_join(helper, NULL);
    CHECK_OK(ydb_registration_wait(first, -1, &finished));
    CHECK(out.done_calls == 1 && out.status == YDB_CLOSED && out.destroyed_before_done == 1);
    CHECK_RC(ydb_registration_result(first, &outcome), YDB_CLOSED);
    CHECK_OK(ydb_registration_free(first));
    REQUIRE_OK(ydb_database_open(file, &db));
    REQUIRE_OK(ydb_connection_open(db, &conn));
    CHECK(is_registered(conn, "v") == 0);
    CHECK_OK(ydb_view_register_async(db, "v", &def, NULL, NULL, NULL, NULL, NULL, &first));
    CHECK_OK(ydb_registration_wait(first, -1, &finished));
    CHECK_OK(ydb_registration_result(first, &outcome));
    CHECK(outcome == YDB_VIEW_BUILT);
    CHECK_OK(ydb_registration_free(first));
    ydb_connection_close(conn);
    ydb_database_close(db);
    unlink(file);
    rmdir(path);
}

static void test_misuse(void) {
    ydb_database *db = NULL;
    ydb_registration *registration = (ydb_registration *)0x1;
    ydb_view_definition def = definition("1", 1);
    view_ctx view;
    int finished = 0, outcome = 0;

    REQUIRE_OK(ydb_database_open(NULL, &db));
    view_ctx_init(&view, 0);
    CHECK_RC(ydb_view_register_async(NULL, "v", &def, &view, view_ctx_destroy, NULL, NULL, NULL, &registration),
             YDB_MISUSE);
    CHECK(registration == NULL && view.destroyed == 1);
    CHECK_RC(ydb_view_register_async(db, "v", &def, &view, view_ctx_destroy, NULL, NULL, NULL, NULL), YDB_MISUSE);
    CHECK(view.destroyed == 2);
    CHECK_RC(ydb_view_register_async(db, NULL, &def, &view, view_ctx_destroy, NULL, NULL, NULL, &registration),
             YDB_INVALID_ARGUMENT);
    CHECK_RC(ydb_view_register_async(db, "v", NULL, &view, view_ctx_destroy, NULL, NULL, NULL, &registration),
             YDB_INVALID_ARGUMENT);
    def.grouping = NULL;
    CHECK_RC(ydb_view_register_async(db, "v", &def, &view, view_ctx_destroy, NULL, NULL, NULL, &registration),
             YDB_INVALID_ARGUMENT);
    CHECK(view.destroyed == 5);
    CHECK_RC(ydb_registration_cancel(NULL), YDB_MISUSE);
    CHECK_RC(ydb_registration_wait(NULL, 0, &finished), YDB_MISUSE);
    CHECK_RC(ydb_registration_result(NULL, &outcome), YDB_MISUSE);
    CHECK_OK(ydb_registration_free(NULL));
    CHECK_RC(ydb_registration_cancel((ydb_registration *)db), YDB_MISUSE);   /* another kind of handle */
    CHECK_RC(ydb_registration_free((ydb_registration *)db), YDB_MISUSE);
    CHECK_RC(ydb_registration_wait((ydb_registration *)0x12345, 0, &finished), YDB_MISUSE);
    def = definition("1", 1);
    CHECK_OK(ydb_view_register_async(db, "v", &def, NULL, NULL, NULL, NULL, NULL, &registration));
    CHECK_RC(ydb_registration_wait(registration, 0, NULL), YDB_MISUSE);
    CHECK_RC(ydb_registration_result(registration, NULL), YDB_MISUSE);
    CHECK_OK(ydb_registration_wait(registration, -1, &finished));
    CHECK_OK(ydb_registration_free(registration));
    CHECK_RC(ydb_registration_free(registration), YDB_MISUSE);
    ydb_database_close(db);
    CHECK_RC(ydb_view_register_async(db, "v", &def, NULL, NULL, NULL, NULL, NULL, &registration), YDB_MISUSE);
    CHECK(strcmp(ydb_errstr(YDB_CANCELLED), "the registration was cancelled") == 0);
}

int main(void) {
    test_misuse();
    test_progress_cancel_failure();
    test_close_and_same_name();
    test_many_rows_under_concurrent_commits();
    return check_summary();
}
