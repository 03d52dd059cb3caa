/* bench_clnz.c: times clnz on one .npy file for scripts/bench (a thin client
 * of include/clnz.h, like the clnz command).
 *
 *   build/bench_clnz FILE.npy RUNS [--strategies [WGxITEMS] [--only two-pass|lookback]]
 *
 * Prints one JSON object: median and min wall times (ms) over RUNS runs of
 * each kind, in three rounds that take turns (each kind's share of a round
 * after a warm-up call; the floor's kinds in rounds of their own, after
 * the rest), of
 *   device_nonzero: clnz_nonzero_enqueue + clFinish, input already on the
 *                   device, output (capacity z), count and scratch reused
 *                   (on a CPU device the input buffer is the host array
 *                   the other kinds read, the output host memory of the
 *                   results' kind, both in place);
 *   device_count:   clnz_count_enqueue + clFinish, likewise;
 *   host_nonzero:   clnz_nonzero on the host array (upload, run, read back
 *                   into a fresh malloc'd result, freed after each run);
 *   host_count:     clnz_count on the host array;
 *   device_nonzero_flat: device_nonzero in the flat layout (one index per
 *                   entry);
 *   c_loop, c_loop_flat: the single-threaded C loop (c_loop.c) writing the
 *                   same entries into a reused host array (f32 and u8 only);
 *   floor, floor_nt, floor_flat, floor_flat_nt: two threads reading the
 *                   input's bytes and writing the entries' bytes of the rows
 *                   (flat) layout into that array and nothing else
 *                   (mem_floor.c), with plain (streaming) stores: the floor
 *                   under any nonzero here (where the C loop is; the flat
 *                   ones of a 1-D input, the rows' own, only when named).
 * With --strategies (the GPU mode of scripts/bench): no host calls; instead,
 * per strategy that serves the input (auto, two-pass, lookback), device
 * nonzero, count and select (x[x != 0]), and "copy": clEnqueueCopyBuffer of
 * the input's bytes device to device, the bandwidth they are held to; and
 * the device's name and driver. WGxITEMS forces every kernel's launch
 * (clnz_context_set_launch): scripts/bench --gpu-sweep's launch shapes.
 * --only times that strategy alone (and the copy): the sweep's
 * look-back variants leave two-pass's times as they are.
 *
 *   build/bench_clnz FILE.npy RUNS --kinds KIND[,KIND...]
 *
 * times those kinds alone (named as above), printing only theirs: a CPU
 * A/B of one kernel (device_nonzero, the rows layout, say) then costs its
 * runs only, and no other kind's calls share its rounds.
 */
#include "io/io.h"
#include "clnz.h"
#include "c_loop.h"
#include "mem_floor.h"
#include "bench_time.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    double median, min;
} stat;

static stat summarize(double *t, int n)
{
    qsort(t, (size_t)n, sizeof *t, bench_cmp_double);
    return (stat){t[n / 2], t[0]};
}

/* One call, timed RUNS times after a warm-up, with clFinish; 0 on error. */
#define TIMED(ctx, q, runs, tm, call, out)                                           \
    do {                                                                             \
        for (int r_ = -1; r_ < (runs); ++r_) {                                       \
            double t0_ = bench_now_ms();                                             \
            if ((call) != CLNZ_SUCCESS) {                                            \
                fprintf(stderr, "bench_clnz: %s: %s\n", #call,                       \
                        clnz_context_message(ctx));                                  \
                return 1;                                                            \
            }                                                                        \
            clFinish(q);                                                             \
            if (r_ >= 0)                                                             \
                (tm)[r_] = bench_now_ms() - t0_;                                     \
        }                                                                            \
        (out) = summarize((tm), (runs));                                             \
    } while (0)

static cl_int copy(cl_command_queue q, cl_mem src, cl_mem dst, size_t bytes)
{
    return clEnqueueCopyBuffer(q, src, dst, 0, 0, bytes, 0, NULL, NULL);
}

/* The GPU mode: each strategy's device-resident calls and a device copy. */
static int strategies(clnz_context *ctx, const clnz_tensor *t, cl_mem in, cl_mem out, cl_mem cnt,
                      size_t bytes, uint64_t z, int runs, double *tm, clnz_strategy only)
{
    cl_command_queue q = clnz_context_queue(ctx);
    char name[256] = "", driver[128] = "";
    clGetDeviceInfo(clnz_context_device(ctx), CL_DEVICE_NAME, sizeof name - 1, name, NULL);
    clGetDeviceInfo(clnz_context_device(ctx), CL_DRIVER_VERSION, sizeof driver - 1, driver,
                    NULL);
    printf("{\"device\": \"%s\", \"driver\": \"%s\"", name, driver);
    cl_int e = CL_SUCCESS;
    cl_mem dst = clCreateBuffer(clnz_context_cl_context(ctx), CL_MEM_READ_WRITE,
                                bytes ? bytes : 8, NULL, &e);
    stat s;
    if (!e && bytes) {
        TIMED(ctx, q, runs, tm, copy(q, in, dst, bytes), s);
        printf(", \"copy\": [%.4f, %.4f]", s.median, s.min);
    }
    clReleaseMemObject(dst);
    const clnz_strategy list[] = {CLNZ_STRATEGY_AUTO, CLNZ_STRATEGY_TWO_PASS,
                                  CLNZ_STRATEGY_LOOKBACK};
    for (size_t k = 0; k < sizeof list / sizeof list[0]; ++k) {
        if (only != CLNZ_STRATEGY_AUTO && list[k] != only)
            continue;
        clnz_context_set_strategy(ctx, list[k]);
        /* a strategy that cannot serve this input is left out, not an error */
        if (clnz_count_enqueue(ctx, t, in, 0, NULL, cnt, 0, 0, NULL, NULL) != CLNZ_SUCCESS)
            continue;
        clFinish(q);
        const char *sname = list[k] == CLNZ_STRATEGY_AUTO
                                ? clnz_strategy_name(clnz_context_auto_strategy(ctx))
                                : clnz_strategy_name(list[k]);
        printf(", \"%s%s\": {", list[k] == CLNZ_STRATEGY_AUTO ? "auto:" : "", sname);
        TIMED(ctx, q, runs, tm,
              clnz_nonzero_enqueue(ctx, t, in, 0, NULL, NULL, out, 0, z, cnt, 0, 0, NULL, NULL), s);
        printf("\"nonzero\": [%.4f, %.4f]", s.median, s.min);
        TIMED(ctx, q, runs, tm, clnz_count_enqueue(ctx, t, in, 0, NULL, cnt, 0, 0, NULL, NULL), s);
        printf(", \"count\": [%.4f, %.4f]", s.median, s.min);
        TIMED(ctx, q, runs, tm,
              clnz_select_enqueue(ctx, t, in, 0, NULL, NULL, 0, NULL, out, 0, z, cnt, 0, 0,
                                  NULL, NULL),
              s);
        printf(", \"select\": [%.4f, %.4f]}", s.median, s.min);
    }
    clnz_context_set_strategy(ctx, CLNZ_STRATEGY_AUTO);
    return 0;
}

#define CHECK(call)                                                                   \
    do {                                                                              \
        clnz_status s_ = (call);                                                      \
        if (s_) {                                                                     \
            fprintf(stderr, "bench_clnz: %s: %s\n", #call, clnz_context_message(ctx)); \
            return 1;                                                                 \
        }                                                                             \
    } while (0)

/* The kinds timed without --strategies, in the order printed: the first
 * N_DEVICE_KINDS clnz's, then the C loop's and the floors under it (where
 * c_loop_serves the input). */
enum {
    KIND_DEVICE_NONZERO, KIND_DEVICE_COUNT, KIND_HOST_NONZERO, KIND_HOST_COUNT,
    KIND_DEVICE_FLAT, /* the last of clnz's */
    KIND_C_LOOP, KIND_C_LOOP_FLAT,
    KIND_FLOOR, KIND_FLOOR_NT, KIND_FLOOR_FLAT, KIND_FLOOR_FLAT_NT,
    N_TIMED
};
enum { N_DEVICE_KINDS = KIND_DEVICE_FLAT + 1 };
static const char *const kind_names[N_TIMED] = {
    "device_nonzero",      "device_count", "host_nonzero", "host_count",
    "device_nonzero_flat", "c_loop",       "c_loop_flat",  "floor",
    "floor_nt",            "floor_flat",   "floor_flat_nt"};

/* The kinds to time into list (indices into kind_names, in its order) and
 * their count: all that serve the input (but the flat floors of a 1-D
 * input, whose entries are the rows' own), or the ones --kinds names; -1
 * (said on stderr) for any other argument, or a C loop (or floor) the
 * input has none of. */
static int kinds_parse(int argc, char **argv, int c_loop, int rank, int *list)
{
    int want[N_TIMED] = {0}, serves = c_loop ? N_TIMED : N_DEVICE_KINDS, count = 0;
    if (argc == 0) {
        for (int k = 0; k < serves; ++k)
            want[k] = rank > 1 || (k != KIND_FLOOR_FLAT && k != KIND_FLOOR_FLAT_NT);
    } else if (argc != 2 || strcmp(argv[0], "--kinds") != 0) {
        fprintf(stderr, "bench_clnz: %s: not one --kinds KIND[,KIND...] or --strategies\n",
                argv[0]);
        return -1;
    }
    for (const char *p = argc ? argv[1] : NULL; p; ++p) {
        size_t len = strcspn(p, ",");
        int k = 0;
        while (k < N_TIMED && (strlen(kind_names[k]) != len || strncmp(kind_names[k], p, len)))
            ++k;
        if (k >= serves) {
            fprintf(stderr, "bench_clnz: --kinds: %.*s is %s\n", (int)len, p,
                    k == N_TIMED ? "no kind (device_nonzero, ..., floor_flat_nt)"
                                 : "a C loop (or its floor) this input has none of (f32 or "
                                   "u8, rank 1 or more, C order)");
            return -1;
        }
        want[k] = 1;
        p += len;
        if (!*p)
            break;
    }
    for (int k = 0; k < N_TIMED; ++k)
        if (want[k])
            list[count++] = k;
    return count;
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: bench_clnz FILE.npy RUNS [--kinds KIND[,KIND...] | --strategies "
                        "[WGxITEMS] [--only two-pass|lookback]]\n");
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
    int strategies_mode = argc > 3 && strcmp(argv[3], "--strategies") == 0;
    /* C order only */
    int c_loop = c_loop_serves(a.dtype, a.rank) && !a.fortran_order;
    int list[N_TIMED], kinds = 0; /* checked before the context's programs compile */
    if (!strategies_mode && (kinds = kinds_parse(argc - 3, argv + 3, c_loop, a.rank, list)) < 0)
        return 2;
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
    /* On a CPU device the device-resident call reads the very array the
     * blocking call, the C loop and the floor read, and writes memory of the
     * kind their results get (io_data_alloc: huge pages from 4 MiB): the
     * same kernels on f32 2^26 at 10 % took 17.7 ms over PoCL's copy (4 KiB
     * pages), 18.8 ms over the read()-filled array and 16.2 ms over huge
     * pages, which the ratios would otherwise count as the calls'. (The
     * blocking call wraps that array in a buffer of its own as well: two
     * buffers over one host region, both only read.) Elsewhere the input is
     * copied to the device's own memory. */
    cl_device_type type = 0;
    clGetDeviceInfo(clnz_context_device(ctx), CL_DEVICE_TYPE, sizeof type, &type, NULL);
    int on_host = (type & CL_DEVICE_TYPE_CPU) != 0;
    /* room for z coordinates of every dimension (and z values for select) */
    size_t out_bytes = (size_t)(z * (width ? width : 1) + 1) * 8;
    void *out_host = on_host ? io_data_alloc(out_bytes) : NULL;
    if (on_host && !out_host) {
        fprintf(stderr, "bench_clnz: out of memory\n");
        return 1;
    }
    cl_mem_flags from = !n ? 0 : on_host ? CL_MEM_USE_HOST_PTR : CL_MEM_COPY_HOST_PTR;
    cl_mem in = clCreateBuffer(cl, CL_MEM_READ_ONLY | from, n ? n * es : 8,
                               n ? (void *)a.data : NULL, &e);
    cl_int e_out, e_cnt;
    cl_mem out = clCreateBuffer(cl, CL_MEM_READ_WRITE | (on_host ? CL_MEM_USE_HOST_PTR : 0),
                                out_bytes, out_host, &e_out);
    cl_mem cnt = clCreateBuffer(cl, CL_MEM_READ_WRITE, 8, NULL, &e_cnt);
    if (e != CL_SUCCESS || e_out != CL_SUCCESS || e_cnt != CL_SUCCESS) {
        fprintf(stderr, "bench_clnz: the device's buffers (input %d, output %d, count %d)\n", e,
                e_out, e_cnt);
        return 1;
    }
    double *tm = malloc(sizeof(double) * (size_t)(runs + 1));
    if (strategies_mode) {
        unsigned wg = 0, items = 0;
        clnz_strategy only = CLNZ_STRATEGY_AUTO;
        for (int i = 4; i < argc; ++i) {
            char extra;
            if (strcmp(argv[i], "--only") == 0 && i + 1 < argc) {
                if (clnz_strategy_parse(argv[++i], &only) ||
                    (only != CLNZ_STRATEGY_TWO_PASS && only != CLNZ_STRATEGY_LOOKBACK)) {
                    fprintf(stderr, "bench_clnz: --only %s: two-pass or lookback\n", argv[i]);
                    return 2;
                }
            } else if (sscanf(argv[i], "%ux%u%c", &wg, &items, &extra) != 2) {
                fprintf(stderr, "bench_clnz: %s: not WGxITEMS or --only two-pass|lookback\n",
                        argv[i]);
                return 2;
            } else if (clnz_context_set_launch(ctx, wg, items) != CLNZ_SUCCESS) {
                fprintf(stderr, "bench_clnz: launch %s: %s\n", argv[i], clnz_context_message(ctx));
                return 1;
            }
        }
        int rc = strategies(ctx, &t, in, out, cnt, n * es, (uint64_t)z, runs, tm, only);
        printf(", \"z\": %lld}\n", (long long)z);
        return rc;
    }
    clnz_nonzero_options flat;
    clnz_nonzero_options_init(&flat);
    flat.layout = CLNZ_LAYOUT_FLAT;
    /* one entry more than z, for the branch-free store; touched once first */
    size_t c_bytes = (size_t)(z + 1) * (size_t)(width ? width : 1) * 8;
    int64_t *c_out = io_data_alloc(c_bytes);
    if (!c_out) {
        fprintf(stderr, "bench_clnz: out of memory\n");
        return 1;
    }
    memset(c_out, 0, c_bytes);
    /* In ROUNDS rounds, each timing every kind's share of the runs back to
     * back after a warm-up call, each round starting at the next kind: a
     * burst of noise from the rest of the machine then falls on one round
     * of a kind, not on all of its runs (on the 2-core VM, all of one
     * kind's runs and then the next kind's, rows and flat, the same kernel
     * for a 1-D input, came out 0.30 and 0.58 ms by mins in one run).
     * Back to back within a round: a kind's calls right after another's
     * find PoCL's threads asleep or still spinning beside the C loop (one
     * call of each kind in turn: clnz's medians at 2^20 rose 1.5x, the C
     * loop's 1.7x). The floor's kinds take their rounds after all the
     * others': the kind timed right after them ran 5-25 % slower through
     * all its calls (f32 2^20 at 100 %, against the same job later in the
     * turn; not the C loop; more warm-up calls and pinned PoCL workers did
     * not help). */
    enum { ROUNDS = 3 };
    int per_round = (runs + ROUNDS - 1) / ROUNDS;
    double *tk = malloc(sizeof(double) * N_TIMED * (size_t)runs);
    int n_rounds = (runs + per_round - 1) / per_round, n_calls = 0;
    while (n_calls < kinds && list[n_calls] < KIND_FLOOR) /* list is in kind order */
        ++n_calls;
    for (int step = 0; step < 2 * n_rounds; ++step) { /* the rounds of the rest, the floor's */
        int r = step % n_rounds, floors = step >= n_rounds;
        int first = floors ? n_calls : 0, count = floors ? kinds - n_calls : n_calls;
        for (int k = 0; k < count; ++k) {
            int which = list[first + (k + r) % count];
            for (int j = -1; j < per_round && r * per_round + j < runs; ++j) {
                double t0 = bench_now_ms();
                if (which == KIND_DEVICE_NONZERO || which == KIND_DEVICE_FLAT) {
                    CHECK(clnz_nonzero_enqueue(ctx, &t, in, 0, NULL,
                                               which == KIND_DEVICE_FLAT ? &flat : NULL,
                                               out, 0, (uint64_t)z, cnt, 0, 0, NULL, NULL));
                    clFinish(q);
                } else if (which == KIND_DEVICE_COUNT) {
                    CHECK(clnz_count_enqueue(ctx, &t, in, 0, NULL, cnt, 0, 0, NULL, NULL));
                    clFinish(q);
                } else if (which == KIND_HOST_NONZERO) {
                    clnz_result res;
                    CHECK(clnz_nonzero(ctx, &t, a.data, NULL, NULL, &res));
                    clnz_result_free(&res);
                } else if (which == KIND_HOST_COUNT) {
                    int64_t c;
                    CHECK(clnz_count(ctx, &t, a.data, NULL, &c));
                } else if (which >= KIND_FLOOR) {
                    /* floor, floor_nt: the rows' words; floor_flat(_nt): one an entry */
                    int flat_words = which == KIND_FLOOR_FLAT || which == KIND_FLOOR_FLAT_NT;
                    int streaming = which == KIND_FLOOR_NT || which == KIND_FLOOR_FLAT_NT;
                    size_t words = (size_t)z * (flat_words || !width ? 1 : (size_t)width);
                    if (mem_floor_move(a.data, n * es, c_out, words, streaming) == UINT64_MAX) {
                        fprintf(stderr, "bench_clnz: the floor's second thread did not start\n");
                        return 1;
                    }
                } else if (c_loop_nonzero(a.data, a.rank, a.shape, a.dtype,
                                          which == KIND_C_LOOP_FLAT, c_out) != z) {
                    fprintf(stderr, "bench_clnz: the C loop counts other than clnz\n");
                    return 1;
                }
                if (j >= 0) /* j = -1: the warm-up */
                    tk[(size_t)which * (size_t)runs + (size_t)(r * per_round + j)] =
                        bench_now_ms() - t0;
            }
        }
    }
    stat st[N_TIMED];
    for (int k = 0; k < kinds; ++k)
        st[list[k]] = summarize(tk + (size_t)list[k] * (size_t)runs, runs);
    free(tk);
    free(c_out);
    clnz_launch l;
    clnz_launch_source src;
    clnz_context_launch(ctx, "two-pass", &l, &src);
    static const char *const srcs[] = {"default", "vendor-tuned", "tuned", "forced"};
    printf("{\"z\": %lld, \"launch\": \"%zux%zu %s\"", (long long)z, l.work_group_size,
           l.items_per_work_item, srcs[src]);
    for (int k = 0; k < kinds; ++k)
        printf(", \"%s\": [%.4f, %.4f]", kind_names[list[k]], st[list[k]].median, st[list[k]].min);
    printf("}\n");
    free(tm);
    clReleaseMemObject(in);
    clReleaseMemObject(out);
    clReleaseMemObject(cnt);
    free(out_host);
    clnz_context_release(ctx);
    npy_free(&a);
    return 0;
}
