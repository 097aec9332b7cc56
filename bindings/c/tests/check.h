/*
** check.h -- the smallest test harness: CHECK and CHECK_RC count passes and
** failures, print each failure with its location (and ydb_errmsg()), and
** check_summary() prints "N passed, N failed" and gives the exit status.
*/
#ifndef YDBVIEW_TESTS_CHECK_H
#define YDBVIEW_TESTS_CHECK_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ydbview.h"

static int check_passed = 0;
static int check_failed = 0;

#define CHECK(cond)                                                        \
    do {                                                                   \
        if (cond) {                                                        \
            check_passed++;                                                \
        } else {                                                           \
            check_failed++;                                                \
            fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__,        \
                    __LINE__, #cond);                                      \
        }                                                                  \
    } while (0)

/* Checks that `expr` returns status `want`; on mismatch prints both codes
** and the last error message. */
#define CHECK_RC(expr, want)                                               \
    do {                                                                   \
        int check_rc_ = (expr);                                            \
        if (check_rc_ == (want)) {                                         \
            check_passed++;                                                \
        } else {                                                           \
            check_failed++;                                                \
            fprintf(stderr, "%s:%d: %s returned %d (%s), wanted %d: %s\n", \
                    __FILE__, __LINE__, #expr, check_rc_,                  \
                    ydb_errstr(check_rc_), (int)(want), ydb_errmsg());     \
        }                                                                  \
    } while (0)

#define CHECK_OK(expr) CHECK_RC(expr, YDB_OK)

/* Fails the whole test program at once when a precondition cannot hold. */
#define REQUIRE_OK(expr)                                                   \
    do {                                                                   \
        int require_rc_ = (expr);                                          \
        if (require_rc_ != YDB_OK) {                                       \
            fprintf(stderr, "%s:%d: %s returned %d: %s (giving up)\n",     \
                    __FILE__, __LINE__, #expr, require_rc_, ydb_errmsg()); \
            printf("%d passed, %d failed\n", check_passed,                 \
                   check_failed + 1);                                      \
            exit(1);                                                       \
        }                                                                  \
    } while (0)

static inline int check_summary(void) {
    printf("%d passed, %d failed\n", check_passed, check_failed);
    return check_failed == 0 ? 0 : 1;
}

/* ---- helpers shared by the tests ---- */

/* Sets one row in its own read-write transaction. */
static inline int put(ydb_connection *conn, const char *collection, const char *key,
               const char *object, const char *metadata) {
    ydb_txn *txn = NULL;
    int rc = ydb_txn_begin_read_write(conn, &txn);
    if (rc != YDB_OK) return rc;
    rc = ydb_txn_set_object(txn, collection, key, object, strlen(object),
                            metadata, metadata ? strlen(metadata) : 0);
    if (rc != YDB_OK) {
        ydb_txn_rollback(txn);
        return rc;
    }
    return ydb_txn_commit(txn);
}

/* True when row (collection, key) holds exactly the string `want`. */
static inline int object_is(ydb_txn *txn, const char *collection, const char *key,
                     const char *want) {
    void *data = NULL;
    size_t size = 0;
    int same;
    if (ydb_txn_get_object(txn, collection, key, &data, &size) != YDB_OK)
        return 0;
    same = size == strlen(want) && memcmp(data, want, size) == 0;
    ydb_free(data);
    return same;
}

/* Reads row (collection, key) in a fresh read transaction on `conn`. */
static inline int reads_as(ydb_connection *conn, const char *collection,
                    const char *key, const char *want) {
    ydb_txn *txn = NULL;
    int same;
    if (ydb_txn_begin_read(conn, &txn) != YDB_OK) return 0;
    same = object_is(txn, collection, key, want);
    ydb_txn_end(txn);
    return same;
}

static inline int missing(ydb_connection *conn, const char *collection,
                   const char *key) {
    ydb_txn *txn = NULL;
    int exists = 1;
    if (ydb_txn_begin_read(conn, &txn) != YDB_OK) return 0;
    if (ydb_txn_exists(txn, collection, key, &exists) != YDB_OK) exists = 1;
    ydb_txn_end(txn);
    return !exists;
}

#endif
