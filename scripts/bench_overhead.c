/* bench_overhead.c: the host overhead of one clnz call on an input of one
 * tile, against a bare launch of a trivial kernel on the same queue, for
 * scripts/bench (a measurement, never a pass/fail test; a thin client of
 * include/clnz.h).
 *
 *   build/bench_overhead [N [RUNS [KIND]]]  (default 4096 f32, 2000 runs, every kind)
 *
 * The input is N f32 values, 10 % of them nonzero. Each call is timed RUNS
 * times after a warm-up, the kinds taking turns (wall clock, the call and a wait for its last event
 * or clFinish), and the min and median go to one JSON object, in
 * microseconds:
 *   bare_launch:     clEnqueueNDRangeKernel of an empty kernel (one
 *                    work-item) + clFinish: what any OpenCL call costs;
 *   bare_launch_read: the same and a read of 8 bytes before the clFinish:
 *                    the two commands any call that returns a result to
 *                    the host needs (the blocking calls' floor);
 *   device_nonzero, device_count, device_select: the device-resident calls
 *                    (input, output and count on the device, reused);
 *   device_nonzero_alloc, device_select_alloc: the exact-size forms (one
 *                    8-byte read, a result buffer allocated and released);
 *   host_nonzero, host_count: the blocking calls on the host array.
 * On a shared machine take the min: it is the quiet run. KIND (one of the
 * names above) times that call alone, for a profiler (perf record). */
#include "clnz.h"
#include "bench_time.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static double now_us(void) { return bench_now_ms() * 1e3; }

static const char bare_source[] = "__kernel void bare(__global float *x) { }\n";

typedef struct {
    clnz_context *ctx;
    cl_command_queue q;
    cl_kernel bare;
    clnz_tensor t;
    const float *host;
    cl_mem in, out, count;
    uint64_t z;
} bench;

enum { BARE, BARE_READ, DEV_NONZERO, DEV_COUNT, DEV_SELECT, DEV_NONZERO_ALLOC, DEV_SELECT_ALLOC,
       HOST_NONZERO, HOST_COUNT, N_CALLS };
static const char *const names[N_CALLS] = {
    "bare_launch",          "bare_launch_read",    "device_nonzero",      "device_count", "device_select",
    "device_nonzero_alloc", "device_select_alloc", "host_nonzero", "host_count"};

/* One call of kind k, finished; 0 on success. */
static int call(bench *b, int k)
{
    cl_int e = CL_SUCCESS;
    size_t one = 1;
    cl_mem got = NULL;
    uint64_t z = 0;
    clnz_result res;
    int64_t c;
    switch (k) {
    case BARE:
    case BARE_READ:
        e = clEnqueueNDRangeKernel(b->q, b->bare, 1, NULL, &one, &one, 0, NULL, NULL);
        if (!e && k == BARE_READ)
            e = clEnqueueReadBuffer(b->q, b->count, CL_FALSE, 0, 8, &z, 0, NULL, NULL);
        return e || clFinish(b->q);
    case DEV_NONZERO:
        e = clnz_nonzero_enqueue(b->ctx, &b->t, b->in, 0, NULL, NULL, b->out, 0, b->z, b->count,
                                 0, 0, NULL, NULL);
        return e || clFinish(b->q);
    case DEV_COUNT:
        e = clnz_count_enqueue(b->ctx, &b->t, b->in, 0, NULL, b->count, 0, 0, NULL, NULL);
        return e || clFinish(b->q);
    case DEV_SELECT:
        e = clnz_select_enqueue(b->ctx, &b->t, b->in, 0, NULL, NULL, 0, NULL, b->out, 0, b->z,
                                b->count, 0, 0, NULL, NULL);
        return e || clFinish(b->q);
    case DEV_NONZERO_ALLOC:
        e = clnz_nonzero_alloc(b->ctx, &b->t, b->in, 0, NULL, NULL, &got, &z, NULL, 0, 0, NULL,
                               NULL);
        break;
    case DEV_SELECT_ALLOC:
        e = clnz_select_alloc(b->ctx, &b->t, b->in, 0, NULL, NULL, 0, NULL, &got, &z, NULL, 0, 0,
                              NULL, NULL);
        break;
    case HOST_NONZERO:
        e = clnz_nonzero(b->ctx, &b->t, b->host, NULL, NULL, &res);
        clnz_result_free(&res);
        return e;
    default:
        return clnz_count(b->ctx, &b->t, b->host, NULL, &c);
    }
    if (!e)
        e = clFinish(b->q);
    if (got)
        clReleaseMemObject(got);
    return e || z != b->z;
}

static int setup(bench *b, size_t n, float *host, int64_t *shape)
{
    char msg[300];
    if (clnz_context_create(NULL, &b->ctx, msg, sizeof msg)) {
        fprintf(stderr, "bench_overhead: %s\n", msg);
        return 1;
    }
    cl_context cl = clnz_context_cl_context(b->ctx);
    cl_device_id dev = clnz_context_device(b->ctx);
    b->q = clnz_context_queue(b->ctx);
    for (size_t i = 0; i < n; ++i)
        host[i] = i % 10 == 3 ? 1.5f : 0.0f;
    b->z = (n + 6) / 10;
    shape[0] = (int64_t)n;
    b->t = (clnz_tensor){CLNZ_F32, 1, shape, NULL};
    b->host = host;
    cl_int e = CL_SUCCESS;
    const char *src = bare_source;
    cl_program p = clCreateProgramWithSource(cl, 1, &src, NULL, &e);
    if (!e)
        e = clBuildProgram(p, 1, &dev, "", NULL, NULL);
    if (!e)
        b->bare = clCreateKernel(p, "bare", &e);
    b->in = clCreateBuffer(cl, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, n * 4, host, &e);
    if (!e)
        b->out = clCreateBuffer(cl, CL_MEM_READ_WRITE, n * 8 + 8, NULL, &e);
    if (!e)
        b->count = clCreateBuffer(cl, CL_MEM_READ_WRITE, 8, NULL, &e);
    if (!e)
        e = clSetKernelArg(b->bare, 0, sizeof b->in, &b->in);
    if (p)
        clReleaseProgram(p);
    if (e)
        fprintf(stderr, "bench_overhead: OpenCL setup failed: %s\n", clnz_status_string(e));
    return e != CL_SUCCESS;
}

int main(int argc, char **argv)
{
    size_t n = argc > 1 ? strtoull(argv[1], NULL, 10) : 4096;
    int runs = argc > 2 ? atoi(argv[2]) : 2000;
    if (n < 1 || n > ((size_t)1 << 24) || runs < 1 || runs > 1000000) {
        fprintf(stderr, "usage: bench_overhead [N [RUNS [KIND]]] (N up to 2^24)\n");
        return 2;
    }
    float *host = malloc(n * sizeof *host);
    int64_t shape[1];
    bench b = {0};
    if (!host || setup(&b, n, host, shape))
        return 1;
    /* the kinds take turns, one call each per round, so that a noisy
     * moment of the machine falls on all of them alike */
    int only = -1;
    for (int k = 0; argc > 3 && k < N_CALLS; ++k)
        if (strcmp(argv[3], names[k]) == 0)
            only = k;
    if (argc > 3 && only < 0) {
        fprintf(stderr, "bench_overhead: no call named %s\n", argv[3]);
        return 2;
    }
    double *tm = malloc((size_t)N_CALLS * (size_t)runs * sizeof *tm);
    if (!tm)
        return 1;
    for (int r = -runs / 10 - 5; r < runs; ++r) { /* the first tenth warms up */
        for (int k = 0; k < N_CALLS; ++k) {
            if (only >= 0 && k != only)
                continue;
            double t0 = now_us();
            if (call(&b, k)) {
                fprintf(stderr, "bench_overhead: %s failed: %s\n", names[k],
                        clnz_context_message(b.ctx));
                return 1;
            }
            if (r >= 0)
                tm[(size_t)k * (size_t)runs + (size_t)r] = now_us() - t0;
        }
    }
    printf("{\"n\": %zu, \"runs\": %d", n, runs);
    for (int k = 0; k < N_CALLS; ++k) {
        if (only >= 0 && k != only)
            continue;
        double *t = tm + (size_t)k * (size_t)runs;
        qsort(t, (size_t)runs, sizeof *t, bench_cmp_double);
        printf(", \"%s\": [%.2f, %.2f]", names[k], t[0], t[runs / 2]);
    }
    printf("}\n");
    clReleaseKernel(b.bare);
    clReleaseMemObject(b.in);
    clReleaseMemObject(b.out);
    clReleaseMemObject(b.count);
    clnz_context_release(b.ctx);
    free(host);
    free(tm);
    return 0;
}
