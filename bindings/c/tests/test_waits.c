/*
** test_waits.c -- waiting for the write lock from C: the write timeout
** (YDB_BUSY naming the wait instead of waiting forever behind a forgotten
** transaction), YDB_MISUSE instead of a wait that could only end with
** itself (a connection taken by a thread waiting to write; waiting for a
** registration while holding the write lock), and registrations from
** several threads at once, which wait their turn. An alarm fails a hang.
*/
#define _POSIX_C_SOURCE 200809L
#include <pthread.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"
#include "view_helpers.h"

/* ---- a write begun on another thread, so that this one may wait ---- */

typedef struct {
    ydb_connection *conn;
    ydb_txn *txn;
    int status;
} begin_job;

static void *begin_write(void *argument) {
    begin_job *job = (begin_job *)argument;
    job->status = ydb_txn_begin_read_write(job->conn, &job->txn);
    return NULL;
}

static ydb_txn *begin_on_another_thread(ydb_connection *conn) {
    begin_job job;
    pthread_t thread;
    job.conn = conn;
    job.txn = NULL;
    job.status = -1;
    if (pthread_create(&thread, NULL, begin_write, &job) != 0) exit(1);
    pthread_join(thread, NULL);
    REQUIRE_OK(job.status);
    return job.txn;
}

static void test_write_timeout(void) {
    ydb_database *db;
    ydb_connection *forgetful, *other;
    ydb_txn *forgotten, *txn = NULL;
    int64_t timeout = 0;
    double started;
    REQUIRE_OK(ydb_database_open(NULL, &db));
    CHECK_OK(ydb_database_default_write_timeout(db, &timeout));
    CHECK(timeout == 5000);
    REQUIRE_OK(ydb_connection_open(db, &forgetful));
    REQUIRE_OK(ydb_connection_open(db, &other));
    CHECK_OK(ydb_connection_write_timeout(other, &timeout));
    CHECK(timeout == 5000);
    CHECK_OK(ydb_connection_set_write_timeout(other, 120));
    CHECK_OK(ydb_connection_write_timeout(other, &timeout));
    CHECK(timeout == 120);

    forgotten = begin_on_another_thread(forgetful);
    CHECK_OK(ydb_txn_set_object(forgotten, "c", "k", "v", 1, NULL, 0));
    started = now_seconds();
    CHECK_RC(ydb_txn_begin_read_write(other, &txn), YDB_BUSY);
    CHECK(now_seconds() - started >= 0.11);
    CHECK(strstr(ydb_errmsg(), "database is locked: waited 120 ms") != NULL);
    CHECK(txn == NULL);
    /* Registering waits as long as the database's default says. */
    CHECK_OK(ydb_database_set_default_write_timeout(db, 0));
    CHECK_OK(ydb_database_default_write_timeout(db, &timeout));
    CHECK(timeout == 0);
    {
        view_counter counter;
        memset(&counter, 0, sizeof counter);
        CHECK_RC(register_standard(db, "v", "1", 1, &counter), YDB_BUSY);
        CHECK(counter.destroyed == 1);
    }
    CHECK_OK(ydb_connection_set_write_timeout(other, -1));
    CHECK_OK(ydb_connection_write_timeout(other, &timeout));
    CHECK(timeout == -1);
    CHECK_OK(ydb_connection_set_write_timeout(other, INT64_MAX));   /* saturates */
    CHECK_OK(ydb_txn_commit(forgotten));                            /* untouched: commits */
    CHECK_OK(set_row(other, "c", "k2", "w"));
    CHECK_OK(ydb_connection_close(other));
    CHECK_OK(ydb_connection_close(forgetful));
    CHECK_OK(ydb_database_close(db));
}

/* ---- a connection taken by a thread waiting to write ---- */

typedef struct {
    ydb_connection *conn;
    int status;
} write_job;

static void *write_one(void *argument) {
    write_job *job = (write_job *)argument;
    job->status = set_row(job->conn, "c", "from b", "x");
    return NULL;
}

static void test_waiting_writer_does_not_take_its_connection_hostage(void) {
    ydb_database *db;
    ydb_connection *a, *b;
    ydb_txn *holding, *read = NULL;
    write_job job;
    pthread_t thread;
    double started;
    REQUIRE_OK(ydb_database_open(NULL, &db));
    REQUIRE_OK(ydb_connection_open(db, &a));
    REQUIRE_OK(ydb_connection_open(db, &b));
    REQUIRE_OK(ydb_txn_begin_read_write(a, &holding));
    job.conn = b;
    job.status = -1;
    if (pthread_create(&thread, NULL, write_one, &job) != 0) exit(1);
    sleep_ms(100);   /* b's thread waits for the write lock */
    started = now_seconds();
    /* Before: this waited for b, whose thread waited for a's commit. */
    CHECK_RC(ydb_txn_begin_read(b, &read), YDB_MISUSE);
    CHECK(strstr(ydb_errmsg(), "another thread is beginning") != NULL);
    CHECK(now_seconds() - started < 1);
    CHECK_OK(ydb_txn_commit(holding));
    pthread_join(thread, NULL);
    CHECK_OK(job.status);
    CHECK_OK(ydb_connection_close(b));
    CHECK_OK(ydb_connection_close(a));
    CHECK_OK(ydb_database_close(db));
}

/* ---- waiting for a registration while holding the write lock ---- */

static int slow_grouping(void *ctx, ydb_txn *txn, const ydb_view_row *row, ydb_group_result *result) {
    sleep_ms(1);
    return group_by_prefix(ctx, txn, row, result);
}

static void test_registration_wait_with_the_write_lock_held(void) {
    ydb_database *db;
    ydb_connection *conn;
    ydb_txn *holding;
    ydb_registration *registration;
    ydb_view_definition def = YDB_VIEW_DEFINITION_INIT;
    view_counter counter;
    int finished = -1, outcome = 0, i;
    char key[16];
    REQUIRE_OK(ydb_database_open(NULL, &db));
    REQUIRE_OK(ydb_connection_open(db, &conn));
    for (i = 0; i < 100; i++) {
        snprintf(key, sizeof key, "k%d", i);
        REQUIRE_OK(set_row(conn, "c", key, "g:1"));
    }
    memset(&counter, 0, sizeof counter);
    def.grouping = slow_grouping;
    def.grouping_flavour = YDB_FLAVOUR_OBJECT;
    def.sorting = sort_by_suffix;
    def.sorting_flavour = YDB_FLAVOUR_OBJECT;
    def.version_tag = "1";
    REQUIRE_OK(ydb_view_register_async(db, "v", &def, &counter, NULL, NULL, NULL, NULL, &registration));
    REQUIRE_OK(ydb_txn_begin_read_write(conn, &holding));
    /* Before: never returned (the registration needs this write lock). */
    CHECK_RC(ydb_registration_wait(registration, -1, &finished), YDB_MISUSE);
    CHECK(strstr(ydb_errmsg(), "holds a read-write transaction") != NULL);
    CHECK_RC(ydb_registration_wait(registration, 50, &finished), YDB_MISUSE);
    CHECK_OK(ydb_registration_wait(registration, 0, &finished));   /* a look is fine */
    CHECK(finished == 0);
    CHECK_OK(ydb_txn_rollback(holding));
    CHECK_OK(ydb_registration_wait(registration, -1, &finished));
    CHECK(finished == 1);
    CHECK_OK(ydb_registration_result(registration, &outcome));
    CHECK(outcome == YDB_VIEW_BUILT);
    CHECK_OK(ydb_registration_free(registration));
    CHECK_OK(ydb_connection_close(conn));
    CHECK_OK(ydb_database_close(db));
}

/* ---- registrations from several threads ---- */

typedef struct {
    ydb_database *db;
    int thread;
    int failures;
    char message[256];
    int done;   /* read and written with __atomic builtins */
} register_job;

static void *register_loop(void *argument) {
    register_job *job = (register_job *)argument;
    view_counter counter;
    char name[16], tag[16];
    int round;
    memset(&counter, 0, sizeof counter);
    snprintf(name, sizeof name, "t%d", job->thread);
    for (round = 0; round < 25; round++) {
        int rc, outcome = 0;
        snprintf(tag, sizeof tag, "%d", round);
        rc = register_standard(job->db, name, tag, round % 2, &counter);
        if (rc == YDB_OK) rc = ydb_view_registration_outcome(job->db, name, &outcome);
        if (rc == YDB_OK && round % 3 == 0) rc = ydb_view_unregister(job->db, name);
        if (rc != YDB_OK && job->failures++ == 0) snprintf(job->message, sizeof job->message, "%s", ydb_errmsg());
    }
    __atomic_store_n(&job->done, 1, __ATOMIC_RELEASE);
    return NULL;
}

static int find_name(void *ctx, const char *name) {
    if (strcmp(name, "always") == 0) *(int *)ctx = 1;
    return 0;
}

static void test_registrations_from_several_threads(void) {
    ydb_database *db;
    ydb_connection *conn;
    view_counter counter;
    register_job jobs[4];
    pthread_t threads[4];
    int i, misses = 0, queries = 0, running;
    REQUIRE_OK(ydb_database_open(NULL, &db));
    REQUIRE_OK(ydb_connection_open(db, &conn));
    for (i = 0; i < 30; i++) {
        char key[16];
        snprintf(key, sizeof key, "k%d", i);
        REQUIRE_OK(set_row(conn, "c", key, i % 2 ? "a:1" : "b:2"));
    }
    memset(&counter, 0, sizeof counter);
    REQUIRE_OK(register_standard(db, "always", "1", 1, &counter));
    for (i = 0; i < 4; i++) {
        jobs[i].db = db;
        jobs[i].thread = i;
        jobs[i].failures = 0;
        jobs[i].message[0] = '\0';
        jobs[i].done = 0;
        if (pthread_create(&threads[i], NULL, register_loop, &jobs[i]) != 0) exit(1);
    }
    /* Meanwhile the view registered all along is always there. */
    do {
        int outcome = 0, found = 0;
        if (ydb_view_registration_outcome(db, "always", &outcome) != YDB_OK) misses++;
        if (ydb_view_enumerate_registered(db, find_name, &found) != YDB_OK || !found) misses++;
        queries++;
        running = 0;
        for (i = 0; i < 4; i++) running |= !__atomic_load_n(&jobs[i].done, __ATOMIC_ACQUIRE);
    } while (running && queries < 100000);
    for (i = 0; i < 4; i++) {
        pthread_join(threads[i], NULL);
        if (jobs[i].failures) fprintf(stderr, "thread %d: %d failures, first: %s\n", i, jobs[i].failures, jobs[i].message);
        CHECK(jobs[i].failures == 0);
    }
    CHECK(misses == 0);
    CHECK_OK(ydb_connection_close(conn));
    CHECK_OK(ydb_database_close(db));
}

int main(void) {
    alarm(120);   /* a hang fails the run */
    test_write_timeout();
    test_waiting_writer_does_not_take_its_connection_hostage();
    test_registration_wait_with_the_write_lock_held();
    test_registrations_from_several_threads();
    return check_summary();
}
