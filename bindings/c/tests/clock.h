/*
** clock.h -- the C tests' clock: monotonic seconds and sleeps. Include it
** after defining _POSIX_C_SOURCE (clock_gettime, nanosleep).
*/
#ifndef YDBVIEW_TESTS_CLOCK_H
#define YDBVIEW_TESTS_CLOCK_H

#include <time.h>

static inline double now_seconds(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static inline void sleep_us(long us) {
    struct timespec t;
    t.tv_sec = us / 1000000L;
    t.tv_nsec = (us % 1000000L) * 1000L;
    nanosleep(&t, NULL);
}

static inline void sleep_ms(long ms) { sleep_us(ms * 1000L); }

#endif
