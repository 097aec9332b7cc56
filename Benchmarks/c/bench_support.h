/*
** bench_support.h -- what the C benchmark programs share: stop on a failed
** call, a monotonic clock in seconds, a comparison for sorting samples, and
** a seeded random number generator.
*/
#ifndef YDBVIEW_BENCH_SUPPORT_H
#define YDBVIEW_BENCH_SUPPORT_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

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

static inline double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static inline int compare_doubles(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The next number of a xorshift64 sequence kept in *state (never 0): the
** same rows and commits in every run and every store of a run. */
static inline uint64_t xorshift64(uint64_t *state) {
    *state ^= *state << 13;
    *state ^= *state >> 7;
    *state ^= *state << 17;
    return *state;
}

#endif
