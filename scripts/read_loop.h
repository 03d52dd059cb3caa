/* read_loop.h: the read loop of build/membw (the bandwidth bar) and of the
 * memory floor (mem_floor.c), one loop so that both read at one rate. */
#ifndef CLNZ_READ_LOOP_H
#define CLNZ_READ_LOOP_H

#include <stddef.h>
#include <stdint.h>

/* The sum of n aligned words: four sums, so that the adds do not wait on
 * each other and the loads stream. */
static inline uint64_t read_words(const uint64_t *p, size_t n)
{
    uint64_t s0 = 0, s1 = 0, s2 = 0, s3 = 0;
    size_t i = 0;
    for (; i + 4 <= n; i += 4) {
        s0 += p[i];
        s1 += p[i + 1];
        s2 += p[i + 2];
        s3 += p[i + 3];
    }
    for (; i < n; ++i)
        s0 += p[i];
    return s0 + s1 + s2 + s3;
}

#endif
