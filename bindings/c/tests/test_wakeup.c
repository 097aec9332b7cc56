/*
** test_wakeup.c -- following commits from C with poll() on a connection's
** wakeup descriptor alone (ydb_connection_wakeup_fd): readable after
** another connection's commit and not after the connection's own, cleared
** by catching up; two writer threads commit while the main thread waits in
** poll(), catches up and takes each changeset (never a mismatch: no commit
** is lost), and ends on the newest snapshot with the table a fresh read
** gives. An alarm fails a hang.
*/
#define _POSIX_C_SOURCE 200809L
#include <poll.h>
#include <pthread.h>
#include <stdint.h>
#include <unistd.h>

#include "view_helpers.h"

static int readable(int fd) {
    struct pollfd waiter;
    waiter.fd = fd;
    waiter.events = POLLIN;
    waiter.revents = 0;
    return poll(&waiter, 1, 0) == 1 && (waiter.revents & POLLIN);
}

static void test_readable_until_caught_up(void) {
    ydb_database *db;
    ydb_connection *ui, *writer, *late;
    int fd = -1, again = -1, own = -1;
    ydb_txn *txn = NULL;
    REQUIRE_OK(ydb_database_open(NULL, &db));
    REQUIRE_OK(ydb_connection_open(db, &ui));
    REQUIRE_OK(ydb_connection_open(db, &writer));
    CHECK_OK(ydb_connection_begin_long_lived_read(ui, NULL));
    CHECK_OK(ydb_connection_wakeup_fd(ui, &fd));
    CHECK(fd >= 0);
    CHECK_OK(ydb_connection_wakeup_fd(ui, &again));
    CHECK(again == fd);
    CHECK_OK(ydb_connection_wakeup_fd(writer, &own));
    CHECK(!readable(fd));

    CHECK_OK(set_row(writer, "c", "k1", "a:1"));
    CHECK(readable(fd));
    CHECK(readable(fd));   /* level-triggered: readable until it catches up */
    CHECK(!readable(own)); /* the writer's own commit */
    CHECK_OK(ydb_connection_begin_long_lived_read(ui, NULL));
    CHECK(!readable(fd));

    /* A plain read on the newest snapshot catches up too; a connection
    ** that had not read since commits came is readable at once. */
    REQUIRE_OK(ydb_connection_open(db, &late));
    CHECK_OK(set_row(writer, "c", "k2", "a:2"));
    CHECK_OK(ydb_connection_wakeup_fd(late, &fd));
    CHECK(readable(fd));
    CHECK_OK(ydb_txn_begin_read(late, &txn));
    CHECK_OK(ydb_txn_end(txn));
    CHECK(!readable(fd));

    CHECK_RC(ydb_connection_wakeup_fd(late, NULL), YDB_MISUSE);
    CHECK_RC(ydb_connection_wakeup_fd(NULL, &fd), YDB_MISUSE);
    CHECK_OK(ydb_connection_close(late));
    CHECK_OK(ydb_connection_close(ui));
    CHECK_OK(ydb_connection_close(writer));
    CHECK_OK(ydb_database_close(db));
}

/* ---- two writers, one follower waiting in poll() ---- */

enum { COMMITS_EACH = 150, KEYS = 40 };

typedef struct {
    ydb_database *db;
    unsigned seed;
    int status;
} writer_job;

static pthread_mutex_t writers_lock = PTHREAD_MUTEX_INITIALIZER;
static int writers_done = 0;

static void *write_commits(void *argument) {
    writer_job *job = (writer_job *)argument;
    ydb_connection *conn = NULL;
    char key[16], object[32];
    int i;
    job->status = ydb_connection_open(job->db, &conn);
    for (i = 0; i < COMMITS_EACH && job->status == YDB_OK; i++) {
        job->seed = job->seed * 1103515245u + 12345u;
        snprintf(key, sizeof key, "k%u", (job->seed >> 8) % KEYS);
        if ((job->seed >> 20) % 4 == 0) {
            job->status = remove_row(conn, "c", key);
        } else {
            snprintf(object, sizeof object, "%c:%u", "ab"[(job->seed >> 4) % 2], (job->seed >> 12) % 1000);
            job->status = set_row(conn, "c", key, object);
        }
    }
    if (conn != NULL) ydb_connection_close(conn);
    pthread_mutex_lock(&writers_lock);
    writers_done++;
    pthread_mutex_unlock(&writers_lock);
    return NULL;
}

static int both_writers_done(void) {
    int done;
    pthread_mutex_lock(&writers_lock);
    done = writers_done == 2;
    pthread_mutex_unlock(&writers_lock);
    return done;
}

/* Catches up and takes the changeset; returns the new snapshot. */
static uint64_t catch_up(ydb_connection *ui, ydb_mappings *mappings) {
    ydb_notification_list *skipped = NULL;
    ydb_changeset *changeset = NULL;
    uint64_t snapshot = 0;
    CHECK_OK(ydb_connection_begin_long_lived_read(ui, &skipped));
    CHECK_OK(ydb_changeset_new(mappings, skipped, &changeset));   /* YDB_MISMATCH had a commit been lost */
    ydb_changeset_free(changeset);
    ydb_notification_list_free(skipped);
    CHECK_OK(ydb_connection_snapshot(ui, &snapshot));
    return snapshot;
}

static size_t rows_in_all_groups(ydb_mappings *mappings) {
    size_t count = 0;
    if (ydb_mappings_number_of_items_in_all_groups(mappings, &count) != YDB_OK) return (size_t)-1;
    return count;
}

static void test_poll_follows_two_writers(void) {
    static const char *const groups[] = {"a", "b"};
    ydb_database *db;
    ydb_connection *ui, *fresh;
    ydb_mappings *mappings;
    ydb_txn *txn = NULL;
    view_counter counter;
    writer_job jobs[2];
    pthread_t threads[2];
    struct pollfd waiter;
    uint64_t seen = 0, newest = 1;
    int catch_ups = 0, i;

    memset(&counter, 0, sizeof counter);
    REQUIRE_OK(ydb_database_open(NULL, &db));
    REQUIRE_OK(register_standard(db, "v", "1", 1, &counter));
    REQUIRE_OK(ydb_connection_open(db, &ui));
    REQUIRE_OK(ydb_mappings_new("v", groups, 2, &mappings));
    REQUIRE_OK(ydb_connection_begin_long_lived_read(ui, NULL));
    REQUIRE_OK(ydb_txn_begin_read(ui, &txn));
    REQUIRE_OK(ydb_mappings_update(mappings, txn));
    ydb_txn_end(txn);
    waiter.events = POLLIN;
    REQUIRE_OK(ydb_connection_wakeup_fd(ui, &waiter.fd));

    for (i = 0; i < 2; i++) {
        jobs[i].db = db;
        jobs[i].seed = 17u + (unsigned)i * 1000u;
        jobs[i].status = -1;
        if (pthread_create(&threads[i], NULL, write_commits, &jobs[i]) != 0) exit(1);
    }
    /* poll() alone says when to catch up; the timeout only lets the loop
    ** see that the writers are done. */
    while (!both_writers_done()) {
        if (poll(&waiter, 1, 200) != 1) continue;
        seen = catch_up(ui, mappings);   /* (a writer may have committed again since) */
        catch_ups++;
    }
    for (i = 0; i < 2; i++) {
        pthread_join(threads[i], NULL);
        CHECK_OK(jobs[i].status);
    }
    CHECK_OK(ydb_database_snapshot(db, &newest));
    if (seen != newest) {
        CHECK(readable(waiter.fd));   /* the last commits came after the last catch-up */
        seen = catch_up(ui, mappings);
        catch_ups++;
    }
    CHECK(seen == newest);
    CHECK(catch_ups >= 2);
    CHECK(!readable(waiter.fd));
    /* The mappings' table is a fresh read's. */
    REQUIRE_OK(ydb_connection_open(db, &fresh));
    CHECK(rows_in_all_groups(mappings) == group_count(fresh, "v", "a") + group_count(fresh, "v", "b"));
    printf("followed %d commits in %d catch-ups\n", 2 * COMMITS_EACH, catch_ups);

    ydb_mappings_free(mappings);
    CHECK_OK(ydb_connection_close(fresh));
    CHECK_OK(ydb_connection_close(ui));
    CHECK_OK(ydb_database_close(db));
}

int main(void) {
    alarm(120);
    test_readable_until_caught_up();
    test_poll_follows_two_writers();
    return check_summary();
}
