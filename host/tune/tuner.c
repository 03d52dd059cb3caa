/* tuner.c: the autotuner. For each kernel with launch parameters of its own
 * (tune_kernels.h) it tries launch candidates derived from the device's
 * limits, checks each one's results against a host reference, times it
 * with OpenCL profiling events (median after a warm-up) on a cache-sized
 * and a large problem, and keeps the fastest. The compacting kernels run
 * under their strategy (two-pass, lookback), and the faster of the two on
 * the large problem becomes the device's preferred strategy for inputs of
 * many tiles. */
#include "core/context.h"
#include "core/error.h"
#include "core/program.h"
#include "core/chain.h"
#include "core/cache.h"
#include "core/quote.h"
#include "core/result_mem.h"
#include "tune/tune.h"
#include "strategy/strategy.h"
#include "ops/ops.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SMALL_N (1u << 18)
#define LARGE_N_QUICK (1u << 22)
#define LARGE_N_FULL (1u << 24)
/* A GPU's large problem must outgrow its last-level cache, or it times the
 * cache: 2^22 f32 (16 MB) fits an H100's 50 MB L2, where 256 x 32
 * look-back tiles came out 6 % faster than 256 x 48, which is 20-30 %
 * faster at 2^26 and 2^28 (2026-11-28). 2^26 f32 is 256 MB. */
#define LARGE_N_GPU    ((uint64_t)1 << 26)
#define MAX_CANDIDATES 64

clnz_status clnz_context_launch(const clnz_context *ctx, const char *kernel, clnz_launch *l,
                                clnz_launch_source *source)
{
    if (fork_guard_tripped())
        return CLNZ_ERROR_FORKED;
    CTX_HOLD(ctx);
    if (!ctx)
        return CLNZ_ERROR_INVALID_ARGUMENT;
    clnz_context *c = ctx_held_; /* the message is the one thing a query writes */
    ctx_clear_message(c);
    int f = tune_kernel_of(kernel);
    if (f < 0) {
        char known[200] = "";
        for (int i = 0, len = 0; i < TUNE_KERNELS; ++i)
            len += snprintf(known + len, sizeof known - (size_t)len, "%s%s", i ? ", " : "",
                            tune_kernel_names[i]);
        return ctx_fail(c, CLNZ_ERROR_INVALID_ARGUMENT, "unknown kernel family '%.40s' (%s)",
                        kernel ? kernel : "(null)", known);
    }
    if (!l)
        return ctx_fail(c, CLNZ_ERROR_INVALID_ARGUMENT, "launch is NULL");
    *l = ctx->launch[f];
    clnz_launch_source s = ctx->launch_source[f];
    if (ctx->forced_wg) {
        l->work_group_size = ctx->forced_wg;
        s = CLNZ_LAUNCH_FORCED;
    }
    if (ctx->forced_items) {
        l->items_per_work_item = ctx->forced_items;
        s = CLNZ_LAUNCH_FORCED;
    }
    if (source)
        *source = s;
    return CLNZ_SUCCESS;
}

/* The strategy a compacting kernel runs under (AUTO: not a compacting one). */
static clnz_strategy strategy_of(tune_kernel f)
{
    return f == TUNE_TWO_PASS   ? CLNZ_STRATEGY_TWO_PASS
           : f == TUNE_LOOKBACK ? CLNZ_STRATEGY_LOOKBACK
                                : CLNZ_STRATEGY_AUTO;
}

/* The kernel's main OpenCL kernel at `items` a work-item, for its limits
 * (the look-back's depend on items: local memory per work-item). */
static clnz_status family_kernel(clnz_context *ctx, tune_kernel f, size_t items, cl_kernel *k,
                                 size_t *local_elem)
{
    program_ref prog;
    if (f == TUNE_LOOKBACK)
        return lookback_kernel_for_tuning(ctx, items, k, local_elem);
    if (f == TUNE_SCAN) {
        *local_elem = 8;
        scan_program(1, &prog);
        return program_kernel(ctx, &prog, "scan_tiles", k);
    }
    if (f == TUNE_MASK) {
        *local_elem = 0;
        mask_program(CLNZ_F32, 1, &prog);
        return program_kernel(ctx, &prog, "mask_write", k);
    }
    *local_elem = 8;
    job_kind kind = {CLNZ_F32, 1, ABI_EMIT_COORDS, 0, 0};
    program_ref write;
    tile_programs(&kind, &prog, &write);
    return program_kernel(ctx, &write, "nz_write", k);
}

/* The largest work-group a candidate of the family may have: the kernel's
 * limit, local memory for local_elem bytes a work-item, and 1024. */
static size_t wg_limit(clnz_context *ctx, cl_kernel k, size_t local_elem)
{
    size_t kmax = 0, limit = plan_local_limit(ctx, local_elem);
    clGetKernelWorkGroupInfo(k, ctx->device, CL_KERNEL_WORK_GROUP_SIZE, sizeof kmax, &kmax, NULL);
    if (kmax && kmax < limit)
        limit = kmax;
    return limit > 1024 ? 1024 : limit; /* larger groups only lengthen the local scan */
}

static int candidates(clnz_context *ctx, tune_kernel f, int quick, clnz_launch *out, int max)
{
    /* items per work-item: long chunks on CPUs, short ones on GPUs */
    static const size_t cpu_full[] = {64, 256, 1024, 4096, 16384}, cpu_quick[] = {1024, 4096};
    static const size_t gpu_full[] = {1, 2, 4, 8, 16}, gpu_quick[] = {2, 4, 8};
    /* the look-back pays per tile: larger tiles (launch_plan.c's defaults) */
    static const size_t lb_full[] = {8, 16, 32, 48, 64}, lb_quick[] = {16, 32, 48};
    const size_t *src = ctx->is_cpu          ? (quick ? cpu_quick : cpu_full)
                        : f == TUNE_LOOKBACK ? (quick ? lb_quick : lb_full)
                                             : (quick ? gpu_quick : gpu_full);
    int nsrc = ctx->is_cpu ? (quick ? 2 : 5) : (quick ? 3 : 5);
    size_t wgs[16], items[8], limits[8];
    int nw = 0, ni = 0;
    for (int i = 0; i < nsrc; ++i)
        items[ni++] = src[i];
    /* the defaults are always among the candidates, so they can be compared */
    int have_i = 0;
    for (int i = 0; i < ni; ++i)
        have_i |= items[i] == ctx->launch[f].items_per_work_item;
    if (!have_i && ni < 8)
        items[ni++] = ctx->launch[f].items_per_work_item;

    cl_kernel k;
    size_t local_elem, pref = 1, limit = 0;
    /* each items' own limit: the look-back's local memory grows with items */
    for (int i = 0; i < ni; ++i) {
        if (family_kernel(ctx, f, items[i], &k, &local_elem))
            return 0;
        limits[i] = wg_limit(ctx, k, local_elem);
        if (f == TUNE_LOOKBACK && limits[i] > plan_tile_wg(LOOKBACK_MAX_TILE, items[i]))
            limits[i] = plan_tile_wg(LOOKBACK_MAX_TILE, items[i]);
        if (limits[i] > limit)
            limit = limits[i];
    }
    clGetKernelWorkGroupInfo(k, ctx->device, CL_KERNEL_PREFERRED_WORK_GROUP_SIZE_MULTIPLE,
                             sizeof pref, &pref, NULL);
    if (pref < 1 || pref > limit)
        pref = 1;
    /* a CPU runs a work-group as a loop on one core: tiny groups are worth a try */
    int step = 0;
    for (size_t w = ctx->is_cpu ? 1 : pref; w <= limit && nw < 12; w *= 2, ++step)
        if (!quick || step % 2 == 0) /* quick mode keeps every other size */
            wgs[nw++] = w;
    int have_w = 0;
    for (int i = 0; i < nw; ++i)
        have_w |= wgs[i] == ctx->launch[f].work_group_size;
    if (!have_w && ctx->launch[f].work_group_size <= limit && nw < 16)
        wgs[nw++] = ctx->launch[f].work_group_size;
    int n = 0;
    for (int i = 0; i < ni; ++i)
        for (int w = 0; w < nw; ++w)
            if (wgs[w] <= limits[i]) { /* else it would run clamped: a duplicate */
                if (n < max && out)
                    out[n] = (clnz_launch){wgs[w], items[i]};
                ++n;
            }
    return n;
}

int clnz_tune_candidates(clnz_context *ctx, const char *kernel, int quick, clnz_launch *out,
                         int max)
{
    if (fork_guard_tripped()) /* the candidates come from a built kernel's limits */
        return 0;
    CTX_HOLD(ctx);
    int f = tune_kernel_of(kernel);
    if (!ctx || f < 0)
        return 0;
    return candidates(ctx, (tune_kernel)f, quick, out, max);
}

/* ---- measuring one candidate ---- */
typedef struct {
    uint64_t n, z;
    float *host;        /* f32 input, about 10 % nonzero, fixed seed */
    int64_t *want_idx;  /* the reference: flat indices of the nonzeros */
    cl_mem in, out, count, mask, scan_in, scan_out;
} problem;

static void problem_free(problem *p)
{
    cl_mem *ms[] = {&p->in, &p->out, &p->count, &p->mask, &p->scan_in, &p->scan_out};
    for (size_t i = 0; i < sizeof ms / sizeof ms[0]; ++i)
        if (*ms[i])
            clReleaseMemObject(*ms[i]);
    free(p->host);
    free(p->want_idx);
    memset(p, 0, sizeof *p);
}

static clnz_status problem_make(clnz_context *ctx, uint64_t n, problem *p)
{
    memset(p, 0, sizeof *p);
    p->n = n;
    p->host = malloc(n * sizeof(float));
    if (!p->host)
        return ctx_fail(ctx, CLNZ_ERROR_OUT_OF_HOST_MEMORY, "tuning data: out of memory");
    uint64_t s = 0x2545f4914f6cdd1dULL;
    for (uint64_t i = 0; i < n; ++i) {
        s ^= s << 13, s ^= s >> 7, s ^= s << 17;
        p->host[i] = (s % 10 == 0) ? (float)(1 + s % 7) : 0.0f;
        p->z += p->host[i] != 0.0f;
    }
    /* the reference, sized by the count (about n / 10: 2^26 on a GPU) */
    p->want_idx = malloc((p->z + 1) * sizeof(int64_t));
    if (!p->want_idx)
        return ctx_fail(ctx, CLNZ_ERROR_OUT_OF_HOST_MEMORY, "tuning data: out of memory");
    for (uint64_t i = 0, k = 0; i < n; ++i)
        if (p->host[i] != 0.0f)
            p->want_idx[k++] = (int64_t)i;
    cl_int e = CL_SUCCESS;
    p->in = clCreateBuffer(ctx->cl, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, n * 4, p->host, &e);
    if (!e)
        p->out = clCreateBuffer(ctx->cl, CL_MEM_READ_WRITE, (p->z + 1) * 8, NULL, &e);
    if (!e)
        p->count = clCreateBuffer(ctx->cl, CL_MEM_READ_WRITE, 8, NULL, &e);
    if (!e)
        p->mask = clCreateBuffer(ctx->cl, CL_MEM_READ_WRITE, n, NULL, &e);
    if (!e)
        p->scan_out = clCreateBuffer(ctx->cl, CL_MEM_READ_WRITE, n * 8, NULL, &e);
    if (!e) {
        /* the scan's input: the mask as u64, so its scan is the offsets */
        uint64_t *m = malloc(n * 8);
        if (!m)
            return ctx_fail(ctx, CLNZ_ERROR_OUT_OF_HOST_MEMORY, "tuning data: out of memory");
        for (uint64_t i = 0; i < n; ++i)
            m[i] = p->host[i] != 0.0f;
        p->scan_in = clCreateBuffer(ctx->cl, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, n * 8, m,
                                    &e);
        free(m);
    }
    return CL_CHECK(ctx, e, "clCreateBuffer(tuning data)");
}

/* One call of the family on the problem; the chain's events are timed. */
static clnz_status run_family(clnz_context *ctx, tune_kernel f, problem *p, cl_event *last)
{
    int64_t shape[] = {(int64_t)p->n};
    clnz_tensor t = {CLNZ_F32, 1, shape, NULL};
    clnz_predicate nz = clnz_pred_nonzero();
    if (strategy_of(f) != CLNZ_STRATEGY_AUTO) {
        ctx->forced_strategy = strategy_of(f);
        return clnz_nonzero_enqueue(ctx, &t, p->in, 0, NULL, NULL, p->out, 0, p->z, p->count, 0,
                                    0, NULL, last);
    }
    if (f == TUNE_MASK)
        return clnz_mask_enqueue(ctx, &t, p->in, 0, &nz, CLNZ_U8, p->mask, 0, 0, NULL, last);
    return clnz_scan_enqueue(ctx, CLNZ_U64, p->scan_in, 0, p->scan_out, 0, p->n, p->count, 0, 0,
                             NULL, last);
}

/* Does the last run's output match the reference? */
static int check_family(clnz_context *ctx, tune_kernel f, const problem *p)
{
    int compacting = strategy_of(f) != CLNZ_STRATEGY_AUTO;
    size_t bytes = compacting ? p->z * 8 : f == TUNE_MASK ? p->n : p->n * 8;
    unsigned char *got = malloc(bytes ? bytes : 1);
    uint64_t count = 0;
    int ok = got != NULL;
    cl_mem src = compacting ? p->out : f == TUNE_MASK ? p->mask : p->scan_out;
    if (ok && bytes)
        ok = clEnqueueReadBuffer(ctx->queue, src, CL_TRUE, 0, bytes, got, 0, NULL, NULL) == 0;
    if (ok && f != TUNE_MASK)
        ok = clEnqueueReadBuffer(ctx->queue, p->count, CL_TRUE, 0, 8, &count, 0, NULL, NULL) == 0 &&
             count == p->z;
    if (ok && compacting)
        ok = memcmp(got, p->want_idx, bytes) == 0;
    for (uint64_t i = 0, run = 0; ok && !compacting && i < p->n; ++i) {
        int sel = p->host[i] != 0.0f;
        if (f == TUNE_MASK)
            ok = got[i] == sel;
        else
            ok = ((uint64_t *)got)[i] == run;
        run += (uint64_t)sel;
    }
    free(got);
    return ok;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* Median kernel time in ms over `runs` timed calls after one warm-up;
 * CLNZ_TUNE_FAILED if a call fails (*failed gets its status, the context's
 * message its reason), CLNZ_TUNE_WRONG if it gives a wrong result. */
static double measure(clnz_context *ctx, tune_kernel f, problem *p, int runs, clnz_status *failed)
{
    double t[16];
    for (int r = -1; r < runs; ++r) {
        cl_event last = NULL;
        if ((*failed = run_family(ctx, f, p, &last)) != CLNZ_SUCCESS)
            return CLNZ_TUNE_FAILED;
        clWaitForEvents(1, &last);
        cl_ulong start = 0, end = 0;
        cl_int e = clGetEventProfilingInfo(ctx->first_event, CL_PROFILING_COMMAND_START,
                                           sizeof start, &start, NULL);
        if (!e)
            e = clGetEventProfilingInfo(last, CL_PROFILING_COMMAND_END, sizeof end, &end, NULL);
        clReleaseEvent(last);
        if ((*failed = CL_CHECK(ctx, e, "clGetEventProfilingInfo")) != CLNZ_SUCCESS)
            return CLNZ_TUNE_FAILED;
        if (r < 0 && !check_family(ctx, f, p)) /* checked before it counts */
            return CLNZ_TUNE_WRONG;
        if (r >= 0)
            t[r] = (double)(end - start) * 1e-6;
    }
    qsort(t, (size_t)runs, sizeof t[0], cmp_double);
    return t[runs / 2];
}

static double bytes_moved(tune_kernel f, const problem *p)
{
    if (strategy_of(f) != CLNZ_STRATEGY_AUTO)
        return (double)p->n * 4 + (double)p->z * 8;
    if (f == TUNE_MASK)
        return (double)p->n * 5;
    return (double)p->n * 16;
}

/* ---- the search ---- */
/* Kernels whose strategy this context cannot run (lookback where the build
 * or the device lacks it) are not tuned: they keep their defaults. */
static int tunable(clnz_context *ctx, tune_kernel f, char *why, size_t n)
{
    cl_kernel k;
    size_t local_elem;
    int ok =
        family_kernel(ctx, f, ctx->launch[f].items_per_work_item, &k, &local_elem) == CLNZ_SUCCESS;
    if (!ok) /* kept: the message is cleared (and its buffer may be reused) */
        snprintf(why, n, "%s", clnz_context_message(ctx));
    ctx_clear_message(ctx);
    return ok;
}

static clnz_status tune_families(clnz_context *ctx, int quick, clnz_tune_progress progress,
                                 void *user, clnz_tune_row *rows, int max_rows, int *n_rows,
                                 tune_result *won)
{
    clnz_launch cands[TUNE_KERNELS][MAX_CANDIDATES];
    double large_ms[TUNE_KERNELS];
    int nc[TUNE_KERNELS], total = 0, done = 0;
    for (int f = 0; f < TUNE_KERNELS; ++f) {
        char why[300] = "the device's limits leave none";
        large_ms[f] = -1; /* not measured */
        nc[f] = tunable(ctx, (tune_kernel)f, why, sizeof why)
                    ? candidates(ctx, (tune_kernel)f, quick, cands[f], MAX_CANDIDATES)
                    : 0;
        if (nc[f] <= 0 && f != TUNE_LOOKBACK)
            return ctx_fail(ctx, CLNZ_ERROR_INVALID_ARGUMENT, "no tuning candidates for %s: %s",
                            tune_kernel_names[f], why);
        if (nc[f] > MAX_CANDIDATES)
            nc[f] = MAX_CANDIDATES;
        total += nc[f];
    }
    problem probs[2] = {{0}}; /* a failed first one leaves the second to free */
    uint64_t sizes[2] = {SMALL_N,
                         ctx->is_cpu ? (quick ? LARGE_N_QUICK : LARGE_N_FULL) : LARGE_N_GPU};
    /* the problem's buffers come to about 22 bytes an element (the scan's
     * two u64 ones 16): all of them within what one allocation may take;
     * on the host about 13 at once (the input, the reference, then the
     * scan's input or a read-back): 24, to spare, within a quarter of its
     * memory */
    uint64_t host = host_memory_bytes();
    while (sizes[1] > SMALL_N && (sizes[1] * 32 > ctx->max_alloc || sizes[1] * 24 > host / 4))
        sizes[1] /= 2;
    int runs = quick ? 3 : 7;
    clnz_status st = problem_make(ctx, sizes[0], &probs[0]);
    if (!st)
        st = problem_make(ctx, sizes[1], &probs[1]);
    for (int f = 0; f < TUNE_KERNELS && !st; ++f) {
        double ms[MAX_CANDIDATES][2], fastest[2] = {-1, -1};
        /* the first failed call's status and reason: with CLNZ_MAX_ALLOC
         * below the problem's buffers every call failed, and the message
         * said only that no candidate gave correct results */
        char why[256] = "";
        clnz_status first_failure = CLNZ_SUCCESS;
        won->launch[f] = ctx->launch[f];
        for (int c = 0; c < nc[f]; ++c) {
            clnz_tune_row row = {tune_kernel_names[f], cands[f][c], 1, 0, 0, {0, 0}, {0, 0}};
            row.is_default = cands[f][c].work_group_size == ctx->launch[f].work_group_size &&
                             cands[f][c].items_per_work_item == ctx->launch[f].items_per_work_item;
            ctx->forced_wg = cands[f][c].work_group_size;
            ctx->forced_items = cands[f][c].items_per_work_item;
            for (int s = 0; s < 2 && row.correct; ++s) {
                clnz_status failed;
                row.ms[s] = measure(ctx, (tune_kernel)f, &probs[s], runs, &failed);
                row.correct = row.ms[s] > 0;
                if (failed && !first_failure) {
                    first_failure = failed;
                    snprintf(why, sizeof why, "%s", clnz_context_message(ctx));
                }
                ctx_clear_message(ctx);
                row.gbps[s] =
                    row.correct ? bytes_moved((tune_kernel)f, &probs[s]) / (row.ms[s] * 1e6) : 0;
            }
            ms[c][0] = ms[c][1] = -1;
            for (int s = 0; s < 2 && row.correct; ++s) {
                ms[c][s] = row.ms[s];
                if (fastest[s] < 0 || row.ms[s] < fastest[s])
                    fastest[s] = row.ms[s];
            }
            if (*n_rows < max_rows && rows)
                rows[*n_rows] = row;
            ++*n_rows;
            if (progress)
                progress(user, ++done, total, &row);
        }
        /* Each size by its time over the fastest candidate's, so both weigh
         * the same: by time per element the small problem, mostly launch
         * overhead on a GPU, outweighed the large one (the H100 kept a
         * look-back tile of 256 x 16 for 2 % at 2^18, 17 % slower at 2^22,
         * 50 % slower at 2^26). */
        double best = -1;
        for (int c = 0; c < nc[f]; ++c) {
            double score = ms[c][0] / fastest[0] + ms[c][1] / fastest[1];
            if (ms[c][1] > 0 && (best < 0 || score < best)) {
                best = score;
                won->launch[f] = cands[f][c];
                large_ms[f] = ms[c][1];
            }
        }
        if (best < 0 && nc[f] > 0 && first_failure)
            st = ctx_fail(ctx, first_failure,
                          "no candidate of the %s kernels ran on the tuning problem of %llu "
                          "elements: %s",
                          tune_kernel_names[f], (unsigned long long)sizes[0],
                          why[0] ? why : clnz_status_string(first_failure));
        else if (best < 0 && nc[f] > 0)
            st = ctx_fail(ctx, CLNZ_ERROR_INVALID_ARGUMENT,
                          "no candidate of the %s kernels gave correct results",
                          tune_kernel_names[f]);
    }
    /* the strategy for inputs of many tiles: the faster on the large problem */
    won->strategy = CLNZ_STRATEGY_TWO_PASS;
    if (large_ms[TUNE_LOOKBACK] > 0 && large_ms[TUNE_LOOKBACK] < large_ms[TUNE_TWO_PASS])
        won->strategy = CLNZ_STRATEGY_LOOKBACK;
    problem_free(&probs[0]);
    problem_free(&probs[1]);
    return st;
}

clnz_status clnz_tune(clnz_context *ctx, int quick, clnz_tune_progress progress, void *user,
                      clnz_tune_row *rows, int max_rows, int *n_rows)
{
    CTX_ENTER(ctx);
    int n_local = 0;
    if (!n_rows)
        n_rows = &n_local;
    *n_rows = 0;
    /* the tuner's own profiling queue; the caller's queue is left alone */
    cl_int e = CL_SUCCESS;
    cl_command_queue q = clCreateCommandQueue(ctx->cl, ctx->device, CL_QUEUE_PROFILING_ENABLE, &e);
    if (e)
        return CL_CHECK(ctx, e, "clCreateCommandQueue(profiling)");
    /* every earlier call done, failed ones skipped: the end forgets them */
    chain_settle(ctx);
    cl_command_queue saved_q = ctx->queue;
    size_t saved_wg = ctx->forced_wg, saved_items = ctx->forced_items;
    clnz_strategy saved_strategy = ctx->forced_strategy;
    ctx->queue = q;
    ctx->profiling = 1;
    tune_result won;
    clnz_status st = tune_families(ctx, quick, progress, user, rows, max_rows, n_rows, &won);
    clFinish(q);
    ctx->queue = saved_q;
    ctx->profiling = 0;
    ctx->forced_wg = saved_wg;
    ctx->forced_items = saved_items;
    ctx->forced_strategy = saved_strategy;
    if (ctx->first_event)
        clReleaseEvent(ctx->first_event);
    ctx->first_event = NULL;
    chain_forget(ctx); /* waited for above, or the tuner's own */
    clReleaseCommandQueue(q);
    if (st)
        return st;
    for (int f = 0; f < TUNE_KERNELS; ++f) {
        ctx->launch[f] = won.launch[f];
        ctx->launch_source[f] = CLNZ_LAUNCH_TUNED;
    }
    ctx->preferred_strategy = won.strategy;
    int err = tune_store_save(ctx, &won);
    if (err) { /* the folder quoted: CLNZ_CACHE_DIR may hold a line break */
        char shown[400], *dir = ctx->cache_dir ? cache_path(ctx->cache_dir, "tuning") : NULL;
        ctx_warn(ctx, "warning: cannot store the tuning result in %s: %s",
                 dir ? quote_name(dir, shown, sizeof shown) : "(no cache folder)",
                 err == EEXIST ? "a file of its name there is not a regular file (a folder, a "
                                 "link, a FIFO)" /* cache_write_atomic */
                               : strerror(err));
        free(dir);
    }
    return CLNZ_SUCCESS;
}
