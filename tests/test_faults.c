/* test_faults.c: fault injection. This suite is linked with --wrap for the
 * OpenCL calls that allocate, enqueue, build, map or read, and for the
 * library's host allocations (malloc, calloc, realloc, posix_memalign): the
 * k-th such call fails with a realistic error (CL_MEM_OBJECT_ALLOCATION_FAILURE,
 * CL_OUT_OF_RESOURCES, CL_BUILD_PROGRAM_FAILURE, CL_MAP_FAILURE, NULL).
 * For every k along a whole nonzero, select, where, batched, channel and
 * sliced call, on a fresh context each time: the call returns the injected
 * status (or succeeds with the right answer, where clnz has a fallback:
 * a program cache it cannot read), the same context then gives the right
 * answer, and (under make test-asan) nothing leaks. */
#include "fault_calls.h"
#include "testutil.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- the injector ---- */
static int armed;          /* count calls and fail the k-th */
static long calls, fail_at;
static int fired;          /* the k-th call happened */
static cl_int injected;    /* what it returned */
static const char *victim; /* which call it was */
static int should_fail(cl_int code);

static const char *fail_every; /* while armed, every call of this name fails too */

static int should_fail_at(cl_int code, const char *name)
{
    if (armed && fail_every && strcmp(name, fail_every) == 0) {
        fired = 1;
        injected = code;
        victim = name;
        return 1;
    }
    if (!should_fail(code))
        return 0;
    victim = name;
    return 1;
}

static int should_fail(cl_int code)
{
    if (!armed)
        return 0;
    if (++calls != fail_at)
        return 0;
    fired = 1;
    injected = code;
    return 1;
}

/* Mappings the library made and has not undone: a buffer left mapped is
 * never freed, nor the context it holds (valgrind found one, after a failed
 * unmap), so every call must end with none. */
static long mapped;

static void count_mapping(const char *name, int ok)
{
    if (ok && strcmp(name, "clEnqueueMapBuffer") == 0)
        ++mapped;
    if (ok && strcmp(name, "clEnqueueUnmapMemObject") == 0)
        --mapped;
}

#define WRAP_OBJECT(ret, name, code, params, args) \
    ret __real_##name params;                      \
    ret __wrap_##name params                       \
    {                                              \
        if (should_fail_at(code, #name)) {         \
            if (e)                                 \
                *e = code;                         \
            return NULL;                           \
        }                                          \
        ret r = __real_##name args;                \
        count_mapping(#name, r != NULL);           \
        return r;                                  \
    }
#define WRAP_STATUS(name, code, params, args) \
    cl_int __real_##name params;              \
    cl_int __wrap_##name params               \
    {                                         \
        if (should_fail_at(code, #name))      \
            return code;                      \
        cl_int r = __real_##name args;        \
        count_mapping(#name, r == CL_SUCCESS); \
        return r;                             \
    }
#define WRAP_AFTER(name, code, params, args)           \
    cl_int __real_##name params;                       \
    cl_int __wrap_##name params                        \
    {                                                  \
        cl_int e = __real_##name args;                 \
        return should_fail_at(code, #name) ? code : e; \
    }
FAULT_CALLS(WRAP_OBJECT, WRAP_STATUS, WRAP_AFTER)

/* Host allocations of the library (and of this file, but only while armed,
 * i.e. inside the call under test). */
void *__real_malloc(size_t n);
void *__real_calloc(size_t n, size_t s);
void *__real_realloc(void *p, size_t n);
int __real_posix_memalign(void **p, size_t a, size_t n);
void *__wrap_malloc(size_t n) { return should_fail_at(-1, "malloc") ? NULL : __real_malloc(n); }
void *__wrap_calloc(size_t n, size_t s)
{
    return should_fail_at(-1, "calloc") ? NULL : __real_calloc(n, s);
}
void *__wrap_realloc(void *p, size_t n)
{
    return should_fail_at(-1, "realloc") ? NULL : __real_realloc(p, n);
}
int __wrap_posix_memalign(void **p, size_t a, size_t n)
{
    return should_fail_at(-1, "posix_memalign") ? 12 /* ENOMEM */ : __real_posix_memalign(p, a, n);
}

/* ---- the calls under test ---- */
enum { N_ELEMS = 7 * 10001 }; /* the 2-D scenarios are 7 x 10001 */
static float input[N_ELEMS];

/* One scenario: runs a call on ctx, returns its status and a checksum of
 * its result (compared with the un-injected run's). */
typedef clnz_status (*scenario)(clnz_context *ctx, uint64_t *sum);

static uint64_t mix(uint64_t h, const void *p, size_t n)
{
    const unsigned char *c = p;
    for (size_t i = 0; i < n; ++i)
        h = (h ^ c[i]) * 0x100000001b3ULL;
    return h;
}

static clnz_status run_nonzero(clnz_context *ctx, uint64_t *sum)
{
    int64_t shape[2] = {7, 10001};
    clnz_tensor t = {CLNZ_F32, 2, shape, NULL};
    clnz_result r;
    clnz_status st = clnz_nonzero(ctx, &t, input, NULL, NULL, &r);
    if (!st) {
        *sum = mix((uint64_t)r.count, r.indices, (size_t)r.count * 16);
        clnz_result_free(&r);
    }
    return st;
}

static clnz_status run_static_size(clnz_context *ctx, uint64_t *sum)
{
    int64_t shape[1] = {N_ELEMS};
    clnz_tensor t = {CLNZ_F32, 1, shape, NULL};
    clnz_nonzero_options o;
    clnz_nonzero_options_init(&o);
    o.has_size = 1, o.size = 300, o.layout = CLNZ_LAYOUT_COLUMNS;
    clnz_result r;
    clnz_status st = clnz_nonzero(ctx, &t, input, NULL, &o, &r);
    if (!st) {
        *sum = mix((uint64_t)r.count, r.indices, 300 * 8);
        clnz_result_free(&r);
    }
    return st;
}

/* Results made before their count (ops/ahead.c) on one context: a call
 * that counts first (the context's first), one whose count passes the
 * guess the first left (its entries written again), one that falls under
 * half of the guess (moved to a block of its size), and a static size
 * past the one read that brings small results home. */
static clnz_status run_ahead(clnz_context *ctx, uint64_t *sum)
{
    int64_t shape[2] = {7, 10001};
    clnz_tensor t = {CLNZ_F32, 2, shape, NULL};
    clnz_predicate gt = clnz_pred_float(CLNZ_OP_GT, 4.0);
    clnz_nonzero_options fixed;
    clnz_nonzero_options_init(&fixed);
    fixed.has_size = 1, fixed.size = 60000, fixed.fill = -1;
    const clnz_predicate *preds[] = {&gt, NULL, &gt, NULL};
    const clnz_nonzero_options *opts[] = {NULL, NULL, NULL, &fixed};
    *sum = 0;
    for (int i = 0; i < 4; ++i) {
        clnz_result r;
        clnz_status st = clnz_nonzero(ctx, &t, input, preds[i], opts[i], &r);
        if (st)
            return st;
        size_t entries = opts[i] ? (size_t)fixed.size : (size_t)r.count;
        *sum = mix(*sum ^ (uint64_t)r.count, r.indices, entries * 16);
        clnz_result_free(&r);
    }
    return CLNZ_SUCCESS;
}

static clnz_status run_select(clnz_context *ctx, uint64_t *sum)
{
    int64_t shape[1] = {N_ELEMS};
    clnz_tensor t = {CLNZ_F32, 1, shape, NULL};
    clnz_predicate gt = clnz_pred_float(CLNZ_OP_GT, 0.0);
    clnz_array a;
    clnz_status st = clnz_select(ctx, &t, input, &t, input, &gt, &a);
    if (!st) {
        *sum = mix((uint64_t)a.shape[0], a.data, (size_t)a.shape[0] * 4);
        clnz_array_free(&a);
    }
    return st;
}

static clnz_status run_where(clnz_context *ctx, uint64_t *sum)
{
    int64_t shape[2] = {7, 10001}, row[1] = {10001};
    clnz_tensor c = {CLNZ_F32, 2, shape, NULL}, y = {CLNZ_F32, 1, row, NULL};
    clnz_operand xo = clnz_operand_float(2.5), yo = clnz_operand_array(&y);
    clnz_array a;
    clnz_status st = clnz_where(ctx, &c, input, NULL, &xo, NULL, &yo, input, &a);
    if (!st) {
        *sum = mix(0, a.data, N_ELEMS * 4);
        clnz_array_free(&a);
    }
    return st;
}

static clnz_status run_batched(clnz_context *ctx, uint64_t *sum)
{
    int64_t shape[2] = {7, 10001};
    clnz_tensor t = {CLNZ_F32, 2, shape, NULL};
    clnz_result r;
    clnz_array off;
    clnz_status st = clnz_nonzero_batched(ctx, &t, input, NULL, NULL, &r, &off);
    if (!st) {
        *sum = mix(mix(0, off.data, 8 * 8), r.indices, (size_t)r.count * 8);
        clnz_result_free(&r);
        clnz_array_free(&off);
    }
    return st;
}

/* count_batched both ways: the rows (the counting pass), the columns of
 * the same elements (16 items a work-item), and the same in row blocks
 * (items of 70 elements: block counts, then their sums) */
static clnz_status run_count_batched(clnz_context *ctx, uint64_t *sum)
{
    int64_t shape[2] = {7, 10001}, cols[2] = {10001, 7}, col_strides[2] = {1, 10001};
    int64_t long_cols[2] = {1000, 70}, long_strides[2] = {1, 1000};
    clnz_tensor rows = {CLNZ_F32, 2, shape, NULL}, t = {CLNZ_F32, 2, cols, col_strides};
    clnz_tensor blocks = {CLNZ_F32, 2, long_cols, long_strides};
    clnz_array a, b, c;
    clnz_status st = clnz_count_batched(ctx, &rows, input, NULL, 1, &a);
    if (st)
        return st;
    st = clnz_count_batched(ctx, &t, input, NULL, 1, &b);
    if (!st) {
        st = clnz_count_batched(ctx, &blocks, input, NULL, 1, &c);
        if (!st) {
            *sum = mix(mix(mix(0, a.data, 7 * 8), b.data, 10001 * 8), c.data, 1000 * 8);
            clnz_array_free(&c);
        }
        clnz_array_free(&b);
    }
    clnz_array_free(&a);
    return st;
}

static clnz_status run_channels(clnz_context *ctx, uint64_t *sum)
{
    int64_t shape[3] = {100, 233, 3};
    clnz_tensor t = {CLNZ_F32, 3, shape, NULL};
    clnz_result r;
    clnz_status st = clnz_nonzero_channels(ctx, &t, input, NULL, CLNZ_CHANNELS_ALL, NULL, &r);
    if (!st) {
        *sum = mix((uint64_t)r.count, r.indices, (size_t)r.count * 16);
        clnz_result_free(&r);
    }
    return st;
}

static clnz_status run_enqueue(clnz_context *ctx, uint64_t *sum)
{
    /* the device-resident call on buffers made outside the injection, in
     * this context's own cl_context: a buffer of another context is
     * CL_INVALID_MEM_OBJECT on NVIDIA's driver (PoCL does not check) */
    cl_int e;
    cl_context c = clnz_context_cl_context(ctx);
    cl_mem in = __real_clCreateBuffer(c, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, sizeof input,
                                      input, &e);
    cl_mem out = __real_clCreateBuffer(c, CL_MEM_READ_WRITE, N_ELEMS * 8, NULL, &e);
    cl_mem cnt = __real_clCreateBuffer(c, CL_MEM_READ_WRITE, 8, NULL, &e);
    if (!in || !out || !cnt)
        fail_msg("clCreateBuffer: %d", e);
    int64_t shape[1] = {N_ELEMS};
    clnz_tensor t = {CLNZ_F32, 1, shape, NULL};
    cl_event ev = NULL;
    clnz_status st = clnz_nonzero_enqueue(ctx, &t, in, 0, NULL, NULL, out, 0, N_ELEMS, cnt, 0, 0, NULL,
                                          &ev);
    if (!st) {
        __real_clWaitForEvents(1, &ev); /* the check's own wait is not under test */
        clReleaseEvent(ev);
        uint64_t z;
        int was = armed;
        armed = 0; /* the check's own reads are not under test */
        tu_read_on(clnz_context_queue(ctx), cnt, 0, 8, &z);
        uint64_t *idx = __real_malloc(z * 8 + 8);
        tu_read_on(clnz_context_queue(ctx), out, 0, z * 8, idx);
        armed = was;
        *sum = mix(z, idx, z * 8);
        free(idx);
    }
    clReleaseMemObject(in);
    clReleaseMemObject(out);
    clReleaseMemObject(cnt);
    return st;
}

/* Sliced: a context whose allocation limit cuts the input in slices.
 * nonzero and select in C order (slices in order: a select per slice),
 * then flat nonzero and select of the transposed view (slices interleave:
 * keys merged, each slice's values kept beside its keys). */
static clnz_status run_sliced(clnz_context *ctx, uint64_t *sum)
{
    uint64_t part[2] = {0, 0};
    clnz_status st = run_nonzero(ctx, &part[0]);
    if (!st)
        st = run_select(ctx, &part[1]);
    int64_t shape[2] = {10001, 7}, strides[2] = {1, 10001};
    clnz_tensor t = {CLNZ_F32, 2, shape, strides};
    clnz_nonzero_options o;
    clnz_nonzero_options_init(&o);
    o.layout = CLNZ_LAYOUT_FLAT;
    clnz_result r;
    if (!st)
        st = clnz_nonzero(ctx, &t, input, NULL, &o, &r);
    if (st)
        return st;
    uint64_t h = mix(mix((uint64_t)r.count, part, sizeof part), r.indices, (size_t)r.count * 8);
    clnz_result_free(&r);
    clnz_array a;
    st = clnz_select(ctx, &t, input, NULL, NULL, NULL, &a);
    if (!st) {
        *sum = mix(h ^ (uint64_t)a.shape[0], a.data, (size_t)a.shape[0] * 4);
        clnz_array_free(&a);
    }
    return st;
}

/* A context made outside the injection, with its own allocation limit. */
static clnz_context *fresh_context(const char *max_alloc)
{
    clnz_context *ctx = NULL;
    char msg[256];
    if (max_alloc)
        setenv("CLNZ_MAX_ALLOC", max_alloc, 1);
    clnz_status st = clnz_context_create(NULL, &ctx, msg, sizeof msg);
    unsetenv("CLNZ_MAX_ALLOC");
    if (st)
        fail_msg("context: %s", msg);
    return ctx;
}

/* Cold runs: each context gets an empty program cache, so every program is
 * compiled from source (clCreateProgramWithSource, clBuildProgram) and
 * stored (clGetProgramInfo, the cache file's writes). */
static int cold;
static char cold_dir[64];
static char warm_dir[1024]; /* the CLNZ_CACHE_DIR a cold run replaces ... */
static int had_warm_dir;    /* ... if it was set */

static void cold_begin(void)
{
    if (!cold)
        return;
    const char *env = getenv("CLNZ_CACHE_DIR");
    had_warm_dir = env != NULL;
    snprintf(warm_dir, sizeof warm_dir, "%s", env ? env : "");
    snprintf(cold_dir, sizeof cold_dir, "/tmp/clnz-faults-XXXXXX");
    if (!mkdtemp(cold_dir))
        fail_msg("mkdtemp");
    setenv("CLNZ_CACHE_DIR", cold_dir, 1);
}

static void cold_end(void)
{
    if (!cold)
        return;
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", cold_dir);
    if (system(cmd) != 0)
        fail_msg("%s", cmd);
    if (had_warm_dir)
        setenv("CLNZ_CACHE_DIR", warm_dir, 1);
    else
        unsetenv("CLNZ_CACHE_DIR");
}

/* Every injection point of a scenario, OpenCL's and the host's. Returns
 * the number of points exercised. */
static long inject_all(const char *name, scenario run, const char *max_alloc)
{
    cold_begin();
    clnz_context *ctx = fresh_context(max_alloc);
    uint64_t want = 0, got = 0;
    TU_CHECK(ctx, run(ctx, &want)); /* warm: programs built, reference result */
    clnz_stats stats;
    clnz_context_stats(ctx, &stats);
    if (cold && (stats.programs_from_source == 0 || stats.programs_from_cache != 0))
        fail_msg("%s: not cold: %llu programs compiled, %llu from the cache", name,
                 (unsigned long long)stats.programs_from_source,
                 (unsigned long long)stats.programs_from_cache);
    clnz_context_release(ctx);
    cold_end();
    long k = 1;
    for (;; ++k) {
        cold_begin();
        ctx = fresh_context(max_alloc);
        calls = 0, fail_at = k, fired = 0, injected = 0;
        armed = 1;
        got = 0;
        clnz_status st = run(ctx, &got);
        armed = 0;
        if (mapped != 0)
            fail_msg("%s: point %ld (%s) left %ld buffer(s) mapped", name, k, victim, mapped);
        if (!fired) { /* k is past the last point: all were exercised */
            clnz_context_release(ctx);
            cold_end();
            break;
        }
        if (st == CLNZ_SUCCESS) { /* a fallback absorbed the failure: still right */
            if (got != want)
                fail_msg("%s: point %ld (%s) failed quietly and the result is wrong", name, k,
                         victim);
        } else {
            clnz_status expect = injected == -1 ? CLNZ_ERROR_OUT_OF_HOST_MEMORY : injected;
            if (st != expect)
                fail_msg("%s: point %ld (%s) injected %s, the call returned %s (%s)", name, k,
                         victim,
                         clnz_status_string(expect), clnz_status_string(st),
                         clnz_context_message(ctx));
            if (!*clnz_context_message(ctx))
                fail_msg("%s: point %ld: no message", name, k);
        }
        /* the same context goes on working */
        got = 0;
        clnz_status again = run(ctx, &got);
        if (again != CLNZ_SUCCESS || got != want)
            fail_msg("%s: after point %ld (%s) the context gives %s%s", name, k, victim,
                     clnz_status_string(again), again ? "" : " and a wrong result");
        clnz_context_release(ctx);
        cold_end();
    }
    print_message("faults: %-10s %ld injection points, every one survived\n", name, k - 1);
    return k - 1;
}

static void test_every_injection_point(void **state)
{
    (void)state;
    for (int i = 0; i < N_ELEMS; ++i)
        input[i] = (tu_rand() % 3 == 0) ? (float)(1 + tu_rand() % 7) : 0.0f;
    long total = 0;
    total += inject_all("nonzero", run_nonzero, NULL);
    total += inject_all("size", run_static_size, NULL);
    total += inject_all("ahead", run_ahead, NULL);
    total += inject_all("enqueue", run_enqueue, NULL);
    total += inject_all("select", run_select, NULL);
    total += inject_all("where", run_where, NULL);
    total += inject_all("batched", run_batched, NULL);
    total += inject_all("count_batched", run_count_batched, NULL);
    total += inject_all("channels", run_channels, NULL);
    total += inject_all("sliced", run_sliced, "64K");
    cold = 1;
    total += inject_all("cold", run_nonzero, NULL);
    total += inject_all("cold where", run_where, NULL);
    cold = 0;
    print_message("faults: %ld injection points in all\n", total);
    assert_true(total > 100);
}

/* Every point inside clnz_context_create: the injected status (or, for a
 * host allocation, out of host memory) with a one-line reason and no
 * context, or a context that works (where a fallback absorbed it: a tuning
 * file that cannot be read means defaults). */
static void test_context_creation_faults(void **state)
{
    (void)state;
    int64_t shape[1] = {N_ELEMS};
    clnz_tensor t = {CLNZ_F32, 1, shape, NULL};
    int64_t want = 0;
    TU_CHECK(tu_context(), clnz_count(tu_context(), &t, input, NULL, &want));
    long k = 1;
    for (;; ++k) {
        clnz_context *ctx = (clnz_context *)&k; /* must come back NULL on failure */
        char msg[256] = "";
        calls = 0, fail_at = k, fired = 0, injected = 0;
        armed = 1;
        clnz_status st = clnz_context_create(NULL, &ctx, msg, sizeof msg);
        armed = 0;
        if (!fired) {
            clnz_context_release(ctx);
            break;
        }
        if (st) {
            clnz_status expect = injected == -1 ? CLNZ_ERROR_OUT_OF_HOST_MEMORY : injected;
            if (st != expect || ctx != NULL || !msg[0] || strchr(msg, '\n'))
                fail_msg("create: point %ld (%s) injected %s: returned %s, context %p, '%s'", k,
                         victim, clnz_status_string(expect), clnz_status_string(st),
                         (void *)ctx, msg);
            continue;
        }
        int64_t z = -1;
        TU_CHECK(ctx, clnz_count(ctx, &t, input, NULL, &z));
        if (z != want)
            fail_msg("create: after point %ld (%s) the count is %lld, not %lld", k, victim,
                     (long long)z, (long long)want);
        clnz_context_release(ctx);
    }
    print_message("faults: create     %ld injection points, every one survived\n", k - 1);
    assert_true(k - 1 >= 3); /* the context, its queue, the struct at least */
}

/* A blocking call's gate (chain_gate, a CPU device) that can never be
 * opened, every clSetUserEventStatus failing: the call fails with that
 * status instead of waiting forever for commands that never run, the
 * context then fails every call at once saying why (its queue holds them),
 * its release returns, and a new context works. */
static void test_gate_never_opened(void **state)
{
    (void)state;
    for (int i = 0; i < N_ELEMS; ++i)
        input[i] = (tu_rand() % 3 == 0) ? (float)(1 + tu_rand() % 7) : 0.0f;
    clnz_context *ctx = fresh_context(NULL);
    clnz_device_info dev;
    TU_CHECK(ctx, clnz_context_device_info(ctx, &dev));
    uint64_t want = 0, got = 0;
    TU_CHECK(ctx, run_nonzero(ctx, &want));
    calls = 0, fail_at = 0, fired = 0, injected = 0;
    fail_every = "clSetUserEventStatus";
    armed = 1;
    clnz_status st = run_nonzero(ctx, &got);
    armed = 0;
    fail_every = NULL;
    if (strcmp(dev.device_type, "CPU") != 0) { /* no gate: nothing held */
        assert_false(fired);
        TU_CHECK(ctx, st);
        clnz_context_release(ctx);
        return;
    }
    assert_true(fired);
    assert_int_equal(st, CL_OUT_OF_RESOURCES);
    assert_non_null(strstr(clnz_context_message(ctx), "can never run"));
    int64_t shape[1] = {N_ELEMS}, count = -1;
    clnz_tensor t = {CLNZ_F32, 1, shape, NULL};
    assert_int_equal(clnz_count(ctx, &t, input, NULL, &count), CL_OUT_OF_RESOURCES);
    assert_non_null(strstr(clnz_context_message(ctx), "release the context and make another"));
    assert_int_equal(count, -1);
    clnz_context_release(ctx);
    ctx = fresh_context(NULL);
    TU_CHECK(ctx, run_nonzero(ctx, &got));
    assert_true(got == want);
    clnz_context_release(ctx);
}

/* A second thread's failing call finds no memory for a message slot of
 * its own (every calloc fails): its message is its own still, in a slot
 * of its thread's, and the first thread's message stays as it was. It
 * went into the first thread's slot, which then read the other's. */
typedef struct {
    clnz_context *ctx;
    clnz_status status;
    char message[300];
} slot_probe;

static void *bogus_family_no_calloc(void *arg)
{
    slot_probe *p = arg;
    clnz_launch l;
    fail_every = "calloc";
    armed = 1;
    p->status = clnz_context_launch(p->ctx, "bogus_B", &l, NULL);
    armed = 0;
    fail_every = NULL;
    snprintf(p->message, sizeof p->message, "%s", clnz_context_message(p->ctx));
    return NULL;
}

static void test_a_message_with_no_memory_for_its_slot(void **state)
{
    (void)state;
    clnz_context *ctx = fresh_context(NULL);
    clnz_stats st;
    assert_int_equal(clnz_context_stats(ctx, NULL), CLNZ_ERROR_INVALID_ARGUMENT);
    const char *mine = clnz_context_message(ctx);
    assert_string_equal(mine, "stats is NULL");
    slot_probe p = {ctx, 0, ""};
    pthread_t t;
    calls = 0, fail_at = 0, fired = 0, injected = 0;
    assert_int_equal(pthread_create(&t, NULL, bogus_family_no_calloc, &p), 0);
    assert_int_equal(pthread_join(t, NULL), 0);
    assert_true(fired); /* its slot's calloc failed */
    assert_int_equal(p.status, CLNZ_ERROR_INVALID_ARGUMENT);
    assert_non_null(strstr(p.message, "bogus_B"));                   /* its own reason */
    assert_string_equal(clnz_context_message(ctx), "stats is NULL"); /* and this one's */
    TU_CHECK(ctx, clnz_context_stats(ctx, &st));
    clnz_context_release(ctx);
}

int main(void)
{
    tu_seed("test_faults");
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_injection_point),
        cmocka_unit_test(test_context_creation_faults),
        cmocka_unit_test(test_gate_never_opened),
        cmocka_unit_test(test_a_message_with_no_memory_for_its_slot),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    tu_context_done();
    return rc;
}
