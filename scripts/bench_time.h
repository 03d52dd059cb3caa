/* bench_time.h: the clock and the sort order of scripts/bench's C
 * helpers (bench_clnz.c, bench_overhead.c), which time and summarize the
 * same way. */
#ifndef CLNZ_BENCH_TIME_H
#define CLNZ_BENCH_TIME_H

#include <time.h>

/* Monotonic wall clock, in milliseconds. */
static inline double bench_now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e3 + t.tv_nsec * 1e-6;
}

/* qsort's order for doubles, ascending. */
static inline int bench_cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

#endif
