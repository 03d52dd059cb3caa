/* bench_clnz.c: times clnz on one .npy file for scripts/bench (a thin client
 * of include/clnz.h, like the clnz command).
 *
 *   build/bench_clnz FILE.npy RUNS
 *
 * Prints one JSON object: median and min wall times (ms) over RUNS runs after
 * a warm-up of
 *   device_nonzero: clnz_nonzero_enqueue + clFinish, input already on the
 *                   device, output (capacity z), count and scratch reused;
 *   device_count:   clnz_count_enqueue + clFinish, likewise;
 *   host_nonzero:   clnz_nonzero on the host array (upload, run, read back
 *                   into a fresh malloc'd result, freed after each run);
 *   host_count:     clnz_count on the host array.
 */
#include "io/io.h"
#include "clnz.h"

#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e3 + t.tv_nsec * 1e-6;
}

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

typedef struct {
    double median, min;
} stat;

static stat summarize(double *t, int n)
{
    qsort(t, (size_t)n, sizeof *t, cmp);
    return (stat){t[n / 2], t[0]};
}

#define CHECK(call)                                                                   \
    do {                                                                              \
        clnz_status s_ = (call);                                                      \
        if (s_) {                                                                     \
            fprintf(stderr, "bench_clnz: %s: %s\n", #call, clnz_context_message(ctx)); \
            return 1;                                                                 \
        }                                                                             \
    } while (0)

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: bench_clnz FILE.npy RUNS\n");
        return 2;
    }
    int runs = atoi(argv[2]);
    if (runs < 1 || runs > 1000)
        runs = 5;
    char err[512];
    npy_array a;
    if (npy_read(argv[1], &a, err, sizeof err)) {
        fprintf(stderr, "bench_clnz: %s\n", err);
        return 1;
    }
    clnz_context *ctx;
    if (clnz_context_create(NULL, &ctx, err, sizeof err)) {
        fprintf(stderr, "bench_clnz: %s\n", err);
        return 1;
    }
    clnz_tensor t = npy_tensor(&a);
    size_t n = 1, es = clnz_dtype_size(a.dtype);
    for (int d = 0; d < a.rank; ++d)
        n *= (size_t)a.shape[d];
    int64_t z = 0;
    CHECK(clnz_count(ctx, &t, a.data, NULL, &z));
    int width = a.rank ? a.rank : 0;
    cl_int e;
    cl_context cl = clnz_context_cl_context(ctx);
    cl_command_queue q = clnz_context_queue(ctx);
    cl_mem in = clCreateBuffer(cl, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, n ? n * es : 8,
                               (void *)a.data, &e);
    cl_mem out = clCreateBuffer(cl, CL_MEM_READ_WRITE, (size_t)(z * width + 1) * 8, NULL, &e);
    cl_mem cnt = clCreateBuffer(cl, CL_MEM_READ_WRITE, 8, NULL, &e);
    double *tm = malloc(sizeof(double) * (size_t)(runs + 1));
    stat st[4];
    for (int which = 0; which < 4; ++which) {
        for (int r = -1; r < runs; ++r) {
            double t0 = now_ms();
            if (which == 0) {
                CHECK(clnz_nonzero_enqueue(ctx, &t, in, 0, NULL, NULL, out, 0, (uint64_t)z, cnt, 0, 0,
                                           NULL, NULL));
                clFinish(q);
            } else if (which == 1) {
                CHECK(clnz_count_enqueue(ctx, &t, in, 0, NULL, cnt, 0, 0, NULL, NULL));
                clFinish(q);
            } else if (which == 2) {
                clnz_result res;
                CHECK(clnz_nonzero(ctx, &t, a.data, NULL, NULL, &res));
                clnz_result_free(&res);
            } else {
                int64_t c;
                CHECK(clnz_count(ctx, &t, a.data, NULL, &c));
            }
            if (r >= 0)
                tm[r] = now_ms() - t0;
        }
        st[which] = summarize(tm, runs);
    }
    clnz_launch l;
    clnz_launch_source src;
    clnz_context_launch(ctx, "two-pass", &l, &src);
    static const char *const srcs[] = {"default", "vendor-tuned", "tuned", "forced"};
    printf("{\"z\": %lld, \"launch\": \"%zux%zu %s\"", (long long)z, l.work_group_size,
           l.items_per_work_item, srcs[src]);
    static const char *const names[] = {"device_nonzero", "device_count", "host_nonzero",
                                        "host_count"};
    for (int k = 0; k < 4; ++k)
        printf(", \"%s\": [%.4f, %.4f]", names[k], st[k].median, st[k].min);
    printf("}\n");
    free(tm);
    clReleaseMemObject(in);
    clReleaseMemObject(out);
    clReleaseMemObject(cnt);
    clnz_context_release(ctx);
    npy_free(&a);
    return 0;
}
