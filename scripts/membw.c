/* membw.c: the machine's read bandwidth, the bar scripts/bench measures
 * clnz against.
 *
 *   build/membw BYTES REPEATS
 *
 * Prints "threads GB/s" lines for 1 and 2 threads: each thread sums its half
 * of a BYTES buffer (touched beforehand; a small one is read several times
 * per measurement, 256 MiB in all), best of REPEATS measurements. The
 * buffer is the kind of block the benchmark's arrays are read into
 * (io_data_alloc: huge pages from 4 MiB), so the bar reads the pages
 * clnz does. */
#include "io/io.h"
#include "read_loop.h"

#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef struct {
    const uint64_t *p;
    size_t n;
    int passes; /* small buffers are read many times, so thread start-up is noise */
    uint64_t sum;
} part;

static void *reader(void *arg)
{
    part *w = arg;
    uint64_t s = 0;
    for (int pass = 0; pass < w->passes; ++pass)
        s += read_words(w->p, w->n);
    w->sum = s; /* kept, so the loads are not optimized away */
    return NULL;
}

static double seconds(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec * 1e-9;
}

int main(int argc, char **argv)
{
    size_t bytes = argc > 1 ? strtoull(argv[1], NULL, 10) : (size_t)256 << 20;
    int reps = argc > 2 ? atoi(argv[2]) : 5;
    if (bytes < 4096)
        bytes = 4096;
    size_t n = bytes / 8;
    uint64_t *buf = io_data_alloc(n * 8);
    if (!buf)
        return 1;
    memset(buf, 1, n * 8);
    uint64_t sink = 0;
    int passes = bytes >= ((size_t)256 << 20) ? 1 : (int)(((size_t)256 << 20) / bytes);
    for (int threads = 1; threads <= 2; ++threads) {
        double best = 1e30;
        for (int r = 0; r < reps; ++r) {
            part parts[2];
            pthread_t th[2];
            double t0 = seconds();
            for (int k = 0; k < threads; ++k) {
                parts[k].p = buf + k * (n / threads);
                parts[k].n = n / threads;
                parts[k].passes = passes;
                pthread_create(&th[k], NULL, reader, &parts[k]);
            }
            for (int k = 0; k < threads; ++k) {
                pthread_join(th[k], NULL);
                sink += parts[k].sum;
            }
            double t = seconds() - t0;
            if (t < best)
                best = t;
        }
        printf("%d %.2f\n", threads,
               (double)(n / threads * threads) * 8 * passes / best / 1e9);
    }
    free(buf);
    return sink == 42; /* never true in practice: uses the sums */
}
