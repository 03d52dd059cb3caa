/* bench_ab.c: a kernel change measured against the kernels before it, in
 * one process (a thin client of include/clnz.h, like bench_clnz).
 *
 *   build/bench_ab FILE.npy DIR_A DIR_B [ROUNDS [RUNS]] [--flat]
 *
 * Two contexts on the default device, one built from the kernel sources of
 * DIR_A and one from DIR_B (CLNZ_KERNEL_DIR, read when a program is built:
 * each context's programs are built, by a warm-up call, while the variable
 * names its folder), take turns: ROUNDS rounds (default 30) of RUNS
 * device-resident nonzero calls each (default 15; the rows layout, or flat
 * with --flat), A first in even rounds and B first in odd ones. Prints the
 * min and median of each side's calls and the median and range of the
 * rounds' B / A ratios of their mins, after checking that both wrote the
 * same entries (exit 1 if not). Why in one process: on the 2-core VM a
 * whole process runs fast or slow (the same call's min 0.23 ms in one, 0.34
 * in the next), so processes taking turns need many runs to show a 5 %
 * change, and two sides in one process share the process's luck.
 *
 * A baseline from git: mkdir -p /tmp/kold && git archive HEAD kernels |
 * tar -x -C /tmp/kold --strip-components=1, then build/bench_ab IN.npy
 * /tmp/kold "$PWD/kernels". */
#include "io/io.h"
#include "clnz.h"
#include "bench_time.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    clnz_context *ctx;
    cl_mem in, out, cnt;
    double *t;   /* every call's ms */
    double best; /* this round's min */
} side;

static const clnz_nonzero_options *opts; /* NULL: rows */

static int call(side *s, const clnz_tensor *t, uint64_t z)
{
    if (clnz_nonzero_enqueue(s->ctx, t, s->in, 0, NULL, opts, s->out, 0, z, s->cnt, 0, 0, NULL,
                             NULL) != CLNZ_SUCCESS) {
        fprintf(stderr, "bench_ab: %s\n", clnz_context_message(s->ctx));
        return 1;
    }
    return clFinish(clnz_context_queue(s->ctx)) != CL_SUCCESS;
}

/* A context whose programs come from dir, its buffers, and its programs
 * built by one call while CLNZ_KERNEL_DIR names dir. */
static int side_open(side *s, const char *dir, const npy_array *a, const clnz_tensor *t,
                     size_t bytes, uint64_t z, size_t out_bytes)
{
    char err[512];
    setenv("CLNZ_KERNEL_DIR", dir, 1);
    if (clnz_context_create(NULL, &s->ctx, err, sizeof err)) {
        fprintf(stderr, "bench_ab: %s: %s\n", dir, err);
        return 1;
    }
    cl_int e1, e2, e3;
    cl_context cl = clnz_context_cl_context(s->ctx);
    s->in = clCreateBuffer(cl, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, bytes ? bytes : 8,
                           (void *)a->data, &e1);
    s->out = clCreateBuffer(cl, CL_MEM_READ_WRITE, out_bytes + 8, NULL, &e2);
    s->cnt = clCreateBuffer(cl, CL_MEM_READ_WRITE, 8, NULL, &e3);
    if (e1 || e2 || e3) {
        fprintf(stderr, "bench_ab: clCreateBuffer failed\n");
        return 1;
    }
    return call(s, t, z);
}

int main(int argc, char **argv)
{
    int flat = argc > 4 && strcmp(argv[argc - 1], "--flat") == 0;
    int nargs = argc - flat;
    if (nargs < 4 || nargs > 6) {
        fprintf(stderr, "usage: bench_ab FILE.npy DIR_A DIR_B [ROUNDS [RUNS]] [--flat]\n");
        return 2;
    }
    int rounds = nargs > 4 ? atoi(argv[4]) : 30, runs = nargs > 5 ? atoi(argv[5]) : 15;
    if (rounds < 1 || rounds > 10000 || runs < 1 || runs > 10000) {
        fprintf(stderr, "bench_ab: ROUNDS and RUNS take 1 to 10000\n");
        return 2;
    }
    char err[512];
    npy_array a;
    if (npy_read(argv[1], &a, err, sizeof err)) {
        fprintf(stderr, "bench_ab: %s\n", err);
        return 1;
    }
    clnz_tensor t = npy_tensor(&a);
    size_t n = 1;
    for (int d = 0; d < a.rank; ++d)
        n *= (size_t)a.shape[d];
    size_t bytes = n * clnz_dtype_size(a.dtype);
    clnz_nonzero_options flat_opts;
    clnz_nonzero_options_init(&flat_opts);
    flat_opts.layout = CLNZ_LAYOUT_FLAT;
    opts = flat ? &flat_opts : NULL;
    /* the count, from the embedded kernels (no CLNZ_KERNEL_DIR yet) */
    clnz_context *counter = NULL;
    int64_t z = 0;
    if (clnz_context_create(NULL, &counter, err, sizeof err) ||
        clnz_count(counter, &t, a.data, NULL, &z)) {
        fprintf(stderr, "bench_ab: the count: %s\n", counter ? clnz_context_message(counter) : err);
        return 1;
    }
    clnz_context_release(counter);
    size_t out_bytes = (size_t)z * (flat || a.rank < 1 ? 1 : (size_t)a.rank) * 8;
    side s[2] = {{0}, {0}};
    for (int k = 0; k < 2; ++k) {
        if (side_open(&s[k], argv[2 + k], &a, &t, bytes, (uint64_t)z, out_bytes))
            return 1;
        s[k].t = malloc(sizeof(double) * (size_t)rounds * (size_t)runs);
    }
    unsetenv("CLNZ_KERNEL_DIR");
    char *got[2];
    for (int k = 0; k < 2; ++k) {
        got[k] = malloc(out_bytes + 1);
        clEnqueueReadBuffer(clnz_context_queue(s[k].ctx), s[k].out, CL_TRUE, 0, out_bytes,
                            got[k], 0, NULL, NULL);
    }
    if (memcmp(got[0], got[1], out_bytes) != 0) {
        fprintf(stderr, "bench_ab: A and B wrote different entries\n");
        return 1;
    }
    double *ratio = malloc(sizeof(double) * (size_t)rounds);
    for (int r = 0; r < rounds; ++r) {
        for (int j = 0; j < 2; ++j) {
            side *x = &s[(r + j) % 2];
            x->best = 1e30;
            if (call(x, &t, (uint64_t)z)) /* a warm-up: the other side ran last */
                return 1;
            for (int i = 0; i < runs; ++i) {
                double t0 = bench_now_ms();
                if (call(x, &t, (uint64_t)z))
                    return 1;
                double ms = bench_now_ms() - t0;
                x->t[(size_t)r * (size_t)runs + (size_t)i] = ms;
                if (ms < x->best)
                    x->best = ms;
            }
        }
        ratio[r] = s[1].best / s[0].best;
    }
    size_t all = (size_t)rounds * (size_t)runs;
    for (int k = 0; k < 2; ++k)
        qsort(s[k].t, all, sizeof(double), bench_cmp_double);
    qsort(ratio, (size_t)rounds, sizeof(double), bench_cmp_double);
    printf("{\"z\": %lld, \"A\": [%.4f, %.4f], \"B\": [%.4f, %.4f], \"B/A\": [%.3f, %.3f, %.3f]}\n",
           (long long)z, s[0].t[all / 2], s[0].t[0], s[1].t[all / 2], s[1].t[0],
           ratio[rounds / 2], ratio[0], ratio[rounds - 1]);
    for (int k = 0; k < 2; ++k) {
        clReleaseMemObject(s[k].in);
        clReleaseMemObject(s[k].out);
        clReleaseMemObject(s[k].cnt);
        clnz_context_release(s[k].ctx);
        free(s[k].t);
        free(got[k]);
    }
    free(ratio);
    npy_free(&a);
    return 0;
}
