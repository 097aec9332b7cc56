/*
** random.h -- the fuzzers' seeded random numbers (SplitMix64): set
** `random_state` to the seed, then next_random() and pick(n) (0..n-1).
*/
#ifndef YDBVIEW_TESTS_RANDOM_H
#define YDBVIEW_TESTS_RANDOM_H

#include <stddef.h>
#include <stdint.h>

static uint64_t random_state;

static inline uint64_t next_random(void) {
    uint64_t z = (random_state += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}

static inline size_t pick(size_t n) { return (size_t)(next_random() % n); }

#endif
