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
#include "testutil.h"

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

static int should_fail_at(cl_int code, const char *name)
{
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

#define WRAP_ERRCODE(ret, name, code, params, args, errarg)  \
    ret __real_##name params;                               \
    ret __wrap_##name params                                \
    {                                                       \
        if (should_fail_at(code, #name)) {                  \
            if (errarg)                                     \
                *(errarg) = code;                           \
            return NULL;                                    \
        }                                                   \
        return __real_##name args;                          \
    }

#define WRAP_STATUS(name, code, params, args) \
    cl_int __real_##name params;              \
    cl_int __wrap_##name params               \
    {                                         \
        if (should_fail_at(code, #name))      \
            return code;                      \
        return __real_##name args;            \
    }

WRAP_ERRCODE(cl_mem, clCreateBuffer, CL_MEM_OBJECT_ALLOCATION_FAILURE,
             (cl_context c, cl_mem_flags f, size_t s, void *h, cl_int *e), (c, f, s, h, e), e)
WRAP_ERRCODE(cl_kernel, clCreateKernel, CL_OUT_OF_HOST_MEMORY,
             (cl_program p, const char *n, cl_int *e), (p, n, e), e)
WRAP_ERRCODE(void *, clEnqueueMapBuffer, CL_MAP_FAILURE,
             (cl_command_queue q, cl_mem b, cl_bool bl, cl_map_flags f, size_t o, size_t s,
              cl_uint n, const cl_event *w, cl_event *ev, cl_int *e),
             (q, b, bl, f, o, s, n, w, ev, e), e)
WRAP_STATUS(clEnqueueNDRangeKernel, CL_OUT_OF_RESOURCES,
            (cl_command_queue q, cl_kernel k, cl_uint d, const size_t *o, const size_t *g,
             const size_t *l, cl_uint n, const cl_event *w, cl_event *e),
            (q, k, d, o, g, l, n, w, e))
WRAP_STATUS(clEnqueueReadBuffer, CL_OUT_OF_RESOURCES,
            (cl_command_queue q, cl_mem b, cl_bool bl, size_t o, size_t s, void *p, cl_uint n,
             const cl_event *w, cl_event *e),
            (q, b, bl, o, s, p, n, w, e))
WRAP_STATUS(clEnqueueFillBuffer, CL_OUT_OF_RESOURCES,
            (cl_command_queue q, cl_mem b, const void *p, size_t ps, size_t o, size_t s,
             cl_uint n, const cl_event *w, cl_event *e),
            (q, b, p, ps, o, s, n, w, e))
WRAP_STATUS(clBuildProgram, CL_BUILD_PROGRAM_FAILURE,
            (cl_program p, cl_uint n, const cl_device_id *d, const char *o,
             void(CL_CALLBACK *cb)(cl_program, void *), void *u),
            (p, n, d, o, cb, u))

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
    clnz_status st = clnz_nonzero(ctx, &t, input, NULL, &r);
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
    clnz_status st = clnz_nonzero(ctx, &t, input, &o, &r);
    if (!st) {
        *sum = mix((uint64_t)r.count, r.indices, 300 * 8);
        clnz_result_free(&r);
    }
    return st;
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
    clnz_status st = clnz_nonzero_batched(ctx, &t, input, NULL, &r, &off);
    if (!st) {
        *sum = mix(mix(0, off.data, 8 * 8), r.indices, (size_t)r.count * 8);
        clnz_result_free(&r);
        clnz_array_free(&off);
    }
    return st;
}

static clnz_status run_channels(clnz_context *ctx, uint64_t *sum)
{
    int64_t shape[3] = {100, 233, 3};
    clnz_tensor t = {CLNZ_F32, 3, shape, NULL};
    clnz_result r;
    clnz_status st = clnz_nonzero_channels(ctx, &t, input, CLNZ_CHANNELS_ALL, NULL, &r);
    if (!st) {
        *sum = mix((uint64_t)r.count, r.indices, (size_t)r.count * 16);
        clnz_result_free(&r);
    }
    return st;
}

static clnz_status run_enqueue(clnz_context *ctx, uint64_t *sum)
{
    /* the device-resident call on buffers made outside the injection */
    static cl_mem in, out, cnt;
    if (!in) {
        cl_int e;
        cl_context c = clnz_context_cl_context(tu_context());
        in = __real_clCreateBuffer(c, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, sizeof input,
                                   input, &e);
        out = __real_clCreateBuffer(c, CL_MEM_READ_WRITE, N_ELEMS * 8, NULL, &e);
        cnt = __real_clCreateBuffer(c, CL_MEM_READ_WRITE, 8, NULL, &e);
    }
    int64_t shape[1] = {N_ELEMS};
    clnz_tensor t = {CLNZ_F32, 1, shape, NULL};
    cl_event ev = NULL;
    clnz_status st = clnz_nonzero_enqueue(ctx, &t, in, 0, NULL, out, 0, N_ELEMS, cnt, 0, 0, NULL,
                                          &ev);
    if (!st) {
        clWaitForEvents(1, &ev);
        clReleaseEvent(ev);
        uint64_t z;
        int was = armed;
        armed = 0; /* the check's own reads are not under test */
        tu_read(cnt, 0, 8, &z);
        uint64_t *idx = __real_malloc(z * 8 + 8);
        tu_read(out, 0, z * 8, idx);
        armed = was;
        *sum = mix(z, idx, z * 8);
        free(idx);
    }
    return st;
}

/* Sliced: a context whose allocation limit cuts the input in slices. */
static clnz_status run_sliced(clnz_context *ctx, uint64_t *sum)
{
    return run_nonzero(ctx, sum);
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

/* Every injection point of a scenario, OpenCL's and the host's. Returns
 * the number of points exercised. */
static long inject_all(const char *name, scenario run, const char *max_alloc)
{
    clnz_context *ctx = fresh_context(max_alloc);
    uint64_t want = 0, got = 0;
    TU_CHECK(ctx, run(ctx, &want)); /* warm: programs built, reference result */
    clnz_context_release(ctx);
    long k = 1;
    for (;; ++k) {
        ctx = fresh_context(max_alloc);
        calls = 0, fail_at = k, fired = 0, injected = 0;
        armed = 1;
        got = 0;
        clnz_status st = run(ctx, &got);
        armed = 0;
        if (!fired) { /* k is past the last point: all were exercised */
            clnz_context_release(ctx);
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
    total += inject_all("enqueue", run_enqueue, NULL);
    total += inject_all("select", run_select, NULL);
    total += inject_all("where", run_where, NULL);
    total += inject_all("batched", run_batched, NULL);
    total += inject_all("channels", run_channels, NULL);
    total += inject_all("sliced", run_sliced, "64K");
    print_message("faults: %ld injection points in all\n", total);
    assert_true(total > 100);
}

int main(void)
{
    tu_seed("test_faults");
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_injection_point),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    tu_context_done();
    return rc;
}
