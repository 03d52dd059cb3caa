/* test_queue.c: a caller's queue stays the caller's (clnz.h, at
 * clnz_context_wrap): no clnz call finishes it, a call that blocks waits on
 * its own commands only. On an out-of-order queue the rule can be seen: a
 * command of the caller's waits on a user event that the test completes
 * only at the end, and every blocking call on that queue, and each *_alloc
 * call, must return meanwhile with the right answer. A call that waits for
 * the whole queue (clFinish) would wait for that command forever: each call
 * runs in a thread of its own under a deadline, and one still blocked at
 * the deadline fails the test (the user event is completed then, so that
 * it returns). On an in-order queue OpenCL itself orders clnz's commands
 * after the caller's, so nothing there can show the rule; nor on a device
 * that takes the out-of-order property and still runs commands in order
 * (NVIDIA's, driver 580): there a command of no dependency never passes
 * the held one, and the test skips. */
#include "testutil.h"

#include "core/held.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

enum { N = 100000, DEADLINE_S = 120 };

typedef struct {
    clnz_context *ctx;
    const float *x;        /* N values, half of them nonzero */
    const unsigned char *m; /* N mask bytes */
    cl_mem xbuf;
    int64_t z_x, z_m;      /* the reference counts */
} inputs;

/* Whether a command of no dependency, enqueued after `held`'s, completes
 * while that one waits (up to 10 s): if not, the device runs the queue in
 * order whatever its properties say. */
static int runs_out_of_order(cl_command_queue q, cl_mem buf)
{
    cl_uint pattern = 9;
    cl_event free_ev = NULL;
    assert_int_equal(clEnqueueFillBuffer(q, buf, &pattern, sizeof pattern, 0, 64, 0, NULL,
                                         &free_ev),
                     CL_SUCCESS);
    clFlush(q);
    cl_int status = CL_QUEUED;
    for (int ms = 0; ms < 10000 && status != CL_COMPLETE; ++ms) {
        clGetEventInfo(free_ev, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof status, &status, NULL);
        if (status != CL_COMPLETE)
            nanosleep(&(struct timespec){0, 1000000}, NULL);
    }
    clReleaseEvent(free_ev);
    assert_true(status >= 0); /* a failed probe is a failure, not an in-order queue */
    return status == CL_COMPLETE;
}

/* One blocking call and a check of its result: 0 if right. */
typedef int (*call_fn)(const inputs *in);

static int call_nonzero(const inputs *in)
{
    int64_t shape[1] = {N};
    clnz_tensor t = {CLNZ_F32, 1, shape, NULL};
    clnz_result r;
    if (clnz_nonzero(in->ctx, &t, in->x, NULL, NULL, &r))
        return 1;
    /* z x 8 bytes, past the size that comes home with its count in one read */
    int bad = r.count != in->z_x || r.shape[0] != in->z_x;
    for (int64_t k = 0, i = 0; !bad && i < N; ++i)
        if (in->x[i] != 0.0f)
            bad = ((int64_t *)r.indices)[k++] != i;
    clnz_result_free(&r);
    return bad;
}

static int call_count(const inputs *in)
{
    int64_t shape[1] = {N}, z = 0;
    clnz_tensor t = {CLNZ_F32, 1, shape, NULL};
    return clnz_count(in->ctx, &t, in->x, NULL, &z) || z != in->z_x;
}

static int call_select(const inputs *in)
{
    int64_t shape[1] = {N};
    clnz_tensor t = {CLNZ_F32, 1, shape, NULL}, mt = {CLNZ_U8, 1, shape, NULL};
    clnz_array a;
    if (clnz_select(in->ctx, &t, in->x, &mt, in->m, NULL, &a))
        return 1;
    int bad = a.shape[0] != in->z_m;
    for (int64_t k = 0, i = 0; !bad && i < N; ++i)
        if (in->m[i])
            bad = ((float *)a.data)[k++] != in->x[i];
    clnz_array_free(&a);
    return bad;
}

static int call_where(const inputs *in)
{
    int64_t shape[1] = {N};
    clnz_tensor mt = {CLNZ_U8, 1, shape, NULL}, t = {CLNZ_F32, 1, shape, NULL};
    clnz_operand x = clnz_operand_array(&t), y = clnz_operand_float(-1.0);
    clnz_array a;
    if (clnz_where(in->ctx, &mt, in->m, NULL, &x, in->x, &y, NULL, &a))
        return 1;
    int bad = 0;
    for (int64_t i = 0; !bad && i < N; ++i)
        bad = ((float *)a.data)[i] != (in->m[i] ? in->x[i] : -1.0f);
    clnz_array_free(&a);
    return bad;
}

static int call_batched(const inputs *in)
{
    int64_t shape[2] = {N / 100, 100};
    clnz_tensor t = {CLNZ_F32, 2, shape, NULL};
    clnz_result r;
    clnz_array offs;
    if (clnz_nonzero_batched(in->ctx, &t, in->x, NULL, NULL, &r, &offs))
        return 1;
    int bad = r.count != in->z_x || ((int64_t *)offs.data)[N / 100] != in->z_x;
    clnz_result_free(&r);
    clnz_array_free(&offs);
    return bad;
}

static int call_channels(const inputs *in)
{
    int64_t shape[2] = {N / 2, 2};
    clnz_tensor t = {CLNZ_F32, 2, shape, NULL};
    clnz_result r;
    if (clnz_nonzero_channels(in->ctx, &t, in->x, NULL, CLNZ_CHANNELS_ANY, NULL, &r))
        return 1;
    int64_t want = 0;
    for (int64_t p = 0; p < N / 2; ++p)
        want += in->x[2 * p] != 0.0f || in->x[2 * p + 1] != 0.0f;
    int bad = r.count != want;
    clnz_result_free(&r);
    return bad;
}

/* The _alloc calls: the result's size on the host against the reference
 * counts (its entries are test_exact's). */
static int alloc_done(cl_mem out, cl_event ev, uint64_t z, int64_t want)
{
    int bad = clWaitForEvents(1, &ev) != CL_SUCCESS || z != (uint64_t)want;
    clReleaseEvent(ev);
    if (out)
        clReleaseMemObject(out);
    return bad;
}

static int call_alloc(const inputs *in)
{
    int64_t shape[1] = {N};
    clnz_tensor t = {CLNZ_F32, 1, shape, NULL};
    cl_mem out = NULL;
    uint64_t z = 0;
    cl_event ev = NULL;
    if (clnz_nonzero_alloc(in->ctx, &t, in->xbuf, 0, NULL, NULL, &out, &z, NULL, 0, 0, NULL,
                           &ev))
        return 1;
    return alloc_done(out, ev, z, in->z_x);
}

static int call_select_alloc(const inputs *in)
{
    int64_t shape[1] = {N};
    clnz_tensor t = {CLNZ_F32, 1, shape, NULL};
    cl_mem out = NULL;
    uint64_t z = 0;
    cl_event ev = NULL;
    if (clnz_select_alloc(in->ctx, &t, in->xbuf, 0, NULL, NULL, 0, NULL, &out, &z, NULL, 0, 0, NULL,
                          &ev))
        return 1;
    return alloc_done(out, ev, z, in->z_x);
}

static int call_batched_alloc(const inputs *in)
{
    int64_t shape[2] = {N / 100, 100};
    clnz_tensor t = {CLNZ_F32, 2, shape, NULL};
    cl_mem out = NULL, offs = tu_buffer((N / 100 + 1) * sizeof(int64_t), NULL);
    uint64_t z = 0;
    cl_event ev = NULL;
    clnz_status st = clnz_nonzero_batched_alloc(in->ctx, &t, in->xbuf, 0, NULL, NULL, &out, &z,
                                                offs, 0, 0, NULL, &ev);
    clReleaseMemObject(offs); /* OpenCL keeps it while the commands need it */
    return st ? 1 : alloc_done(out, ev, z, in->z_x);
}

static int call_channels_alloc(const inputs *in)
{
    int64_t shape[2] = {N / 2, 2};
    clnz_tensor t = {CLNZ_F32, 2, shape, NULL};
    cl_mem out = NULL;
    uint64_t z = 0;
    cl_event ev = NULL;
    if (clnz_nonzero_channels_alloc(in->ctx, &t, in->xbuf, 0, NULL, CLNZ_CHANNELS_ANY, NULL, &out,
                                    &z, NULL, 0, 0, NULL, &ev))
        return 1;
    int64_t want = 0;
    for (int64_t p = 0; p < N / 2; ++p)
        want += in->x[2 * p] != 0.0f || in->x[2 * p + 1] != 0.0f;
    return alloc_done(out, ev, z, want);
}

/* An _alloc call waiting on g_wait: 0 if it fails as its wait list did. */
static cl_event g_wait;
static int call_alloc_on_wait(const inputs *in)
{
    int64_t shape[1] = {N};
    clnz_tensor t = {CLNZ_F32, 1, shape, NULL};
    cl_mem out = NULL;
    uint64_t z = 0;
    clnz_status st = clnz_nonzero_alloc(in->ctx, &t, in->xbuf, 0, NULL, NULL, &out, &z, NULL, 0, 1,
                                        &g_wait, NULL);
    if (out)
        clReleaseMemObject(out);
    return st != CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST || out;
}

/* Every kind of call that waits for its own commands. */
static const struct {
    const char *name;
    call_fn fn;
} blocking_calls[] = {{"clnz_nonzero", call_nonzero},
                      {"clnz_count", call_count},
                      {"clnz_select", call_select},
                      {"clnz_where", call_where},
                      {"clnz_nonzero_batched", call_batched},
                      {"clnz_nonzero_channels", call_channels},
                      {"clnz_nonzero_alloc", call_alloc},
                      {"clnz_select_alloc", call_select_alloc},
                      {"clnz_nonzero_batched_alloc", call_batched_alloc},
                      {"clnz_nonzero_channels_alloc", call_channels_alloc}};
#define N_BLOCKING_CALLS (sizeof blocking_calls / sizeof blocking_calls[0])

/* N values half nonzero, N mask bytes half set, the values on the device
 * too; inputs_free releases them. */
static inputs half_nonzero(clnz_context *ctx)
{
    float *x = malloc(N * sizeof *x);
    unsigned char *m = malloc(N);
    assert_true(x && m);
    inputs in = {ctx, x, m, NULL, 0, 0};
    for (int i = 0; i < N; ++i) {
        x[i] = tu_rand() % 2 ? (float)(1 + tu_rand() % 100) : 0.0f;
        m[i] = (unsigned char)(tu_rand() % 2);
        in.z_x += x[i] != 0.0f;
        in.z_m += m[i] != 0;
    }
    in.xbuf = tu_buffer(N * sizeof *x, x);
    return in;
}

static void inputs_free(inputs *in)
{
    clReleaseMemObject(in->xbuf);
    free((void *)in->x);
    free((void *)in->m);
}

/* ---- a call in a thread, with a deadline ---- */
typedef struct {
    call_fn fn;
    const inputs *in;
    int result, done;
    pthread_mutex_t lock;
    pthread_cond_t cond;
} job;

static void *run_job(void *arg)
{
    job *j = arg;
    int r = j->fn(j->in);
    pthread_mutex_lock(&j->lock);
    j->result = r;
    j->done = 1;
    pthread_cond_signal(&j->cond);
    pthread_mutex_unlock(&j->lock);
    return NULL;
}

/* Starts fn in a thread. */
static job *job_start(call_fn fn, const inputs *in, pthread_t *thread)
{
    job *j = calloc(1, sizeof *j);
    assert_non_null(j);
    *j = (job){fn, in, 1, 0, PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER};
    assert_int_equal(pthread_create(thread, NULL, run_job, j), 0);
    return j;
}

/* 1 if the job returned before the deadline (its result in *result), and
 * it is freed. Else 0, and *late is the job still running: the caller lets
 * it finish (join_late) once the queue can drain. */
static int job_wait(job *j, pthread_t thread, int *result, job **late)
{
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_sec += DEADLINE_S;
    pthread_mutex_lock(&j->lock);
    while (!j->done && pthread_cond_timedwait(&j->cond, &j->lock, &until) == 0) {
    }
    int in_time = j->done;
    pthread_mutex_unlock(&j->lock);
    if (!in_time) {
        *late = j;
        return 0;
    }
    pthread_join(thread, NULL);
    *result = j->result;
    free(j);
    return 1;
}

static int returns_in_time(call_fn fn, const inputs *in, int *result, job **late, pthread_t *thread)
{
    job *j = job_start(fn, in, thread); /* before *thread is read */
    return job_wait(j, *thread, result, late);
}

static void test_blocking_calls_wait_on_their_own_commands(void **state)
{
    (void)state;
    clnz_context *base = tu_context();
    cl_context cl = clnz_context_cl_context(base);
    cl_device_id dev = clnz_context_device(base);
    cl_int e = CL_SUCCESS;
    cl_command_queue q =
        clCreateCommandQueue(cl, dev, CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE, &e);
    if (e == CL_INVALID_QUEUE_PROPERTIES || e == CL_INVALID_VALUE)
        skip(); /* a device without out-of-order queues cannot show the rule */
    assert_int_equal(e, CL_SUCCESS);
    clnz_context *ctx;
    char msg[300];
    assert_int_equal(clnz_context_wrap(cl, q, &ctx, msg, sizeof msg), CLNZ_SUCCESS);

    inputs in = half_nonzero(ctx);

    /* the caller's command, held up by its user event */
    cl_event user = clCreateUserEvent(cl, &e);
    assert_int_equal(e, CL_SUCCESS);
    cl_mem held = tu_buffer(64, NULL);
    cl_uint pattern = 7;
    cl_event filled = NULL;
    assert_int_equal(clEnqueueFillBuffer(q, held, &pattern, sizeof pattern, 0, 64, 1, &user,
                                         &filled),
                     CL_SUCCESS);
    clFlush(q);
    cl_mem probe = tu_buffer(64, NULL);
    int in_order = !runs_out_of_order(q, probe); /* then no call runs: skipped below */
    clReleaseMemObject(probe);

    const char *stuck = NULL, *wrong = NULL;
    job *late = NULL;
    pthread_t thread;
    for (size_t i = 0; i < N_BLOCKING_CALLS && !stuck && !in_order; ++i) {
        int result = 1;
        if (!returns_in_time(blocking_calls[i].fn, &in, &result, &late, &thread))
            stuck = blocking_calls[i].name;
        else if (result && !wrong)
            wrong = blocking_calls[i].name;
    }
    /* the caller's command was pending all along; now it may run */
    cl_int status = 0;
    clGetEventInfo(filled, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof status, &status, NULL);
    clSetUserEventStatus(user, CL_COMPLETE);
    assert_int_equal(clWaitForEvents(1, &filled), CL_SUCCESS);
    if (stuck) { /* its thread returns now that the queue can drain */
        pthread_join(thread, NULL);
        free(late);
        fail_msg("%s still blocked after %d s: it waited for the caller's command", stuck,
                 DEADLINE_S);
    }
    if (wrong)
        fail_msg("%s gave a wrong result on the out-of-order queue", wrong);
    assert_true(in_order || status > CL_COMPLETE); /* queued or submitted: it had not run */
    clReleaseEvent(filled);
    clReleaseEvent(user);
    clReleaseMemObject(held);
    inputs_free(&in);
    clnz_context_release(ctx);
    clReleaseCommandQueue(q);
    if (in_order)
        skip();
}

/* A call whose wait list held an event that then failed: its commands
 * fail, and the context must go on. Later calls chained on that failed
 * call (PoCL 3.1 never runs a command whose wait list holds a failed
 * event: every later call on the context hung) and a call given the failed
 * event (an error now, not a hang). */
static void test_calls_after_a_failed_event(void **state)
{
    (void)state;
    clnz_context *base = tu_context();
    cl_context cl = clnz_context_cl_context(base);
    cl_int e = CL_SUCCESS;
    cl_command_queue q = clCreateCommandQueue(cl, clnz_context_device(base), 0, &e);
    assert_int_equal(e, CL_SUCCESS);
    clnz_context *ctx;
    char msg[300];
    assert_int_equal(clnz_context_wrap(cl, q, &ctx, msg, sizeof msg), CLNZ_SUCCESS);
    inputs in = half_nonzero(ctx);
    cl_mem out = tu_buffer(N * sizeof(int64_t), NULL), count = tu_buffer(8, NULL);
    int64_t shape[1] = {N};
    clnz_tensor t = {CLNZ_F32, 1, shape, NULL};

    /* 64 elements: one command, which waits on the user event (calls of
     * many commands: test_a_failure_through_calls_of_many_commands) */
    int64_t small_shape[1] = {64};
    clnz_tensor small = {CLNZ_F32, 1, small_shape, NULL};
    cl_event user = clCreateUserEvent(cl, &e), ev = NULL;
    assert_int_equal(e, CL_SUCCESS);
    TU_CHECK(ctx, clnz_nonzero_enqueue(ctx, &small, in.xbuf, 0, NULL, NULL, out, 0, 64, count, 0, 1,
                                       &user, &ev));
    clSetUserEventStatus(user, -1);
    clWaitForEvents(1, &ev);
    cl_int status = CL_COMPLETE;
    clGetEventInfo(ev, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof status, &status, NULL);
    assert_true(status < 0); /* OpenCL failed the call's commands */

    static const call_fn after[] = {call_count, call_nonzero, call_alloc};
    for (size_t i = 0; i < sizeof after / sizeof after[0]; ++i) {
        int result = 1;
        job *late = NULL;
        pthread_t thread;
        if (!returns_in_time(after[i], &in, &result, &late, &thread))
            fail_msg("call %zu after the failed one still blocked after %d s", i, DEADLINE_S);
        assert_int_equal(result, 0);
    }
    assert_int_equal(
        clnz_nonzero_enqueue(ctx, &t, in.xbuf, 0, NULL, NULL, out, 0, N, count, 0, 1, &user, NULL),
        CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST);
    assert_non_null(strstr(clnz_context_message(ctx), "wait_list[0] failed"));
    int result = 1; /* and the context still works after that refusal */
    job *late = NULL;
    pthread_t thread;
    if (!returns_in_time(call_count, &in, &result, &late, &thread))
        fail_msg("clnz_count blocked after a refused wait list");
    assert_int_equal(result, 0);
    clReleaseEvent(ev);
    clReleaseEvent(user);
    clReleaseMemObject(out);
    clReleaseMemObject(count);
    inputs_free(&in);
    clnz_context_release(ctx);
    clReleaseCommandQueue(q);
}

/* Whether an event completes or fails within DEADLINE_S; *status: its last. */
static int settles_in_time(cl_event ev, cl_int *status)
{
    for (long ms = 0; ms < DEADLINE_S * 1000L; ++ms) {
        clGetEventInfo(ev, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof *status, status, NULL);
        if (*status <= CL_COMPLETE)
            return 1;
        nanosleep(&(struct timespec){0, 1000000}, NULL);
    }
    return 0;
}

/* Enqueues form `form` of the calls of several commands (at N elements)
 * behind *user, its last event in *ev; NULL past the last form. The
 * outputs: out of N x 8 bytes, count of 8. */
static const char *enqueue_behind(int form, clnz_context *ctx, const inputs *in, cl_mem mbuf,
                                  cl_mem out, cl_mem count, cl_event *user, cl_event *ev)
{
    int64_t shape[1] = {N}, rows[2] = {N / 100, 100};
    clnz_tensor t = {CLNZ_F32, 1, shape, NULL}, mt = {CLNZ_U8, 1, shape, NULL};
    clnz_tensor batched = {CLNZ_F32, 2, rows, NULL};
    cl_event first = NULL;
    switch (form) {
    case 0:
        TU_CHECK(ctx, clnz_nonzero_enqueue(ctx, &t, in->xbuf, 0, NULL, NULL, out, 0, N, count, 0, 1,
                                           user, ev));
        return "clnz_nonzero_enqueue";
    case 1:
        TU_CHECK(ctx, clnz_select_enqueue(ctx, &t, in->xbuf, 0, &mt, mbuf, 0, NULL, out, 0, N,
                                          count, 0, 1, user, ev));
        return "clnz_select_enqueue";
    case 2:
        TU_CHECK(ctx, clnz_count_batched_enqueue(ctx, &batched, in->xbuf, 0, NULL, 1, out, 0, 1,
                                                 user, ev));
        return "clnz_count_batched_enqueue";
    case 3: /* the mask bytes as N / 4 u32 */
        TU_CHECK(ctx,
                 clnz_scan_enqueue(ctx, CLNZ_U32, mbuf, 0, out, 0, N / 4, count, 0, 1, user, ev));
        return "clnz_scan_enqueue";
    case 4: /* the second call chained on the first, which waits */
        TU_CHECK(ctx, clnz_count_enqueue(ctx, &t, in->xbuf, 0, NULL, count, 0, 1, user, &first));
        TU_CHECK(ctx, clnz_count_enqueue(ctx, &t, in->xbuf, 0, NULL, out, 0, 0, NULL, ev));
        clReleaseEvent(first);
        return "two clnz_count_enqueue";
    default:
        return NULL;
    }
}

/* A caller's event that fails with calls of several commands behind it:
 * OpenCL fails each command in turn, and the context goes on. PoCL 3.1
 * aborted the process here ("PTHREAD ERROR in pocl_update_event_failed")
 * while clnz released each command's event once the call had enqueued
 * the next, as the spec allows; a call's events are now held until its
 * last command is done (core/held.c). */
static void test_a_failure_through_calls_of_many_commands(void **state)
{
    (void)state;
    clnz_context *ctx = tu_context();
    cl_context cl = clnz_context_cl_context(ctx);
    inputs in = half_nonzero(ctx);
    cl_mem mbuf = tu_buffer(N, in.m), out = tu_buffer(N * 8, NULL), count = tu_buffer(8, NULL);
    const char *name;
    for (int form = 0;; ++form) {
        cl_int e = CL_SUCCESS, status = CL_COMPLETE;
        cl_event user = clCreateUserEvent(cl, &e), ev = NULL;
        assert_int_equal(e, CL_SUCCESS);
        name = enqueue_behind(form, ctx, &in, mbuf, out, count, &user, &ev);
        if (!name) {
            clReleaseEvent(user);
            break;
        }
        clSetUserEventStatus(user, -1);
        if (!settles_in_time(ev, &status))
            fail_msg("%s: its commands never settled after the failure", name);
        if (status >= 0)
            fail_msg("%s: status %d after its wait list failed", name, (int)status);
        int result = 1;
        job *late = NULL;
        pthread_t thread;
        if (!returns_in_time(call_count, &in, &result, &late, &thread) || result)
            fail_msg("clnz_count after the failed %s: blocked or wrong", name);
        clReleaseEvent(ev);
        clReleaseEvent(user);
    }
    clReleaseMemObject(mbuf);
    clReleaseMemObject(out);
    clReleaseMemObject(count);
    inputs_free(&in);
}

/* More one-command calls pending behind a caller's event than the
 * context keeps as fallbacks (CHAIN_OLDER, 16): the oldest such event
 * leaves that stack while later calls wait on it, and PoCL aborted when
 * the event then failed (it was released, not held: core/held.c). */
static void test_a_failure_behind_many_pending_calls(void **state)
{
    (void)state;
    clnz_context *ctx = tu_context();
    cl_context cl = clnz_context_cl_context(ctx);
    inputs in = half_nonzero(ctx);
    cl_mem count = tu_buffer(8, NULL);
    int64_t small_shape[1] = {64}; /* one command each */
    clnz_tensor small = {CLNZ_F32, 1, small_shape, NULL};
    cl_int e = CL_SUCCESS, status = CL_COMPLETE;
    cl_event user = clCreateUserEvent(cl, &e), last = NULL;
    assert_int_equal(e, CL_SUCCESS);
    for (int i = 0; i < 40; ++i) { /* the first waits on user, each next on the one before */
        cl_event ev = NULL;
        TU_CHECK(ctx, clnz_count_enqueue(ctx, &small, in.xbuf, 0, NULL, count, 0, i == 0,
                                         i == 0 ? &user : NULL, i == 39 ? &last : &ev));
        if (ev)
            clReleaseEvent(ev);
    }
    clSetUserEventStatus(user, -1);
    assert_true(settles_in_time(last, &status));
    assert_true(status < 0);
    int result = 1;
    job *late = NULL;
    pthread_t thread;
    if (!returns_in_time(call_count, &in, &result, &late, &thread) || result)
        fail_msg("clnz_count after 40 failed calls: blocked or wrong");
    clReleaseEvent(last);
    clReleaseEvent(user);
    clReleaseMemObject(count);
    inputs_free(&in);
}

/* The same with the context released while its calls still wait on the
 * caller's event, which then fails, or completes: the calls' commands
 * settle (the held events outlive the context: core/held.c) and, when it
 * completes, give the right count. The calls: one of many commands, then
 * two of one command chained on it (their events, the context's last and
 * its fallback, were released with the context: PoCL aborted). */
static void test_a_context_released_before_its_call_settles(void **state)
{
    (void)state;
    clnz_context *base = tu_context();
    cl_context cl = clnz_context_cl_context(base);
    cl_mem out = tu_buffer(N * 8, NULL), count = tu_buffer(8, NULL);
    inputs in = half_nonzero(base);
    for (int fail = 1; fail >= 0; --fail) {
        cl_int e = CL_SUCCESS, status = CL_COMPLETE;
        cl_command_queue q = clCreateCommandQueue(cl, clnz_context_device(base), 0, &e);
        assert_int_equal(e, CL_SUCCESS);
        clnz_context *ctx;
        char msg[300];
        assert_int_equal(clnz_context_wrap(cl, q, &ctx, msg, sizeof msg), CLNZ_SUCCESS);
        cl_event user = clCreateUserEvent(cl, &e), ev = NULL;
        assert_int_equal(e, CL_SUCCESS);
        enqueue_behind(0, ctx, &in, NULL, out, count, &user, &ev);
        int64_t small_shape[1] = {64};
        clnz_tensor small = {CLNZ_F32, 1, small_shape, NULL};
        for (int k = 0; k < 2; ++k)
            TU_CHECK(ctx, clnz_count_enqueue(ctx, &small, in.xbuf, 0, NULL, out, 0, 0, NULL, NULL));
        clFlush(q);
        clnz_context_release(ctx);
        clSetUserEventStatus(user, fail ? -1 : CL_COMPLETE);
        assert_true(settles_in_time(ev, &status));
        if (fail) {
            assert_true(status < 0);
        } else {
            assert_int_equal(status, CL_COMPLETE);
            uint64_t z = 0;
            tu_read_on(q, count, 0, 8, &z);
            assert_int_equal(z, in.z_x);
        }
        clReleaseEvent(ev);
        clReleaseEvent(user);
        clReleaseCommandQueue(q);
    }
    clReleaseMemObject(out);
    clReleaseMemObject(count);
    inputs_free(&in);
}

/* A context released with a call pending behind a caller's event that is
 * not set for a long time, then more contexts released while their calls
 * wait on events set just after: their held events are released at the
 * next release, whatever is stuck before them. They piled up behind the
 * stuck call's (the orphans' sweep stopped at the first group pending). */
static void test_orphans_a_stuck_call_leaves_do_not_grow(void **state)
{
    (void)state;
    inputs in = half_nonzero(tu_context());
    cl_event stuck = NULL, stuck_ev = NULL;
    size_t after_stuck = 0;
    for (int round = 0; round < 12; ++round) {
        cl_int e = CL_SUCCESS, status = CL_COMPLETE;
        clnz_context *ctx;
        char msg[300];
        assert_int_equal(clnz_context_create(NULL, &ctx, msg, sizeof msg), CLNZ_SUCCESS);
        cl_context own = clnz_context_cl_context(ctx);
        cl_mem x = tu_buffer_on(ctx, N * sizeof(float), in.x);
        cl_mem c = tu_buffer_on(ctx, 8, NULL);
        cl_event user = clCreateUserEvent(own, &e), ev = NULL;
        assert_int_equal(e, CL_SUCCESS);
        int64_t shape[1] = {N};
        clnz_tensor t = {CLNZ_F32, 1, shape, NULL};
        TU_CHECK(ctx, clnz_count_enqueue(ctx, &t, x, 0, NULL, c, 0, 1, &user, &ev));
        clFlush(clnz_context_queue(ctx));
        clnz_context_release(ctx);
        if (round == 0) { /* set at the end only */
            stuck = user;
            stuck_ev = ev;
            after_stuck = held_orphans();
        } else {
            clSetUserEventStatus(user, CL_COMPLETE);
            assert_true(settles_in_time(ev, &status));
            assert_int_equal(status, CL_COMPLETE);
            clReleaseEvent(ev);
            clReleaseEvent(user);
        }
        clReleaseMemObject(x);
        clReleaseMemObject(c);
    }
    /* the last round's group may wait for the next release; none before */
    size_t left = held_orphans();
    clSetUserEventStatus(stuck, CL_COMPLETE);
    cl_int status = CL_COMPLETE;
    assert_true(settles_in_time(stuck_ev, &status));
    clReleaseEvent(stuck_ev);
    clReleaseEvent(stuck);
    inputs_free(&in);
    assert_true(after_stuck > 0);
    if (left > 2 * after_stuck)
        fail_msg("%zu orphaned events held after 11 more contexts (%zu after the stuck one)", left,
                 after_stuck);
}

typedef struct {
    clnz_context *ctx;
    int done; /* __atomic */
    char text[600];
} message_read;

static void *read_message(void *arg)
{
    message_read *r = arg;
    snprintf(r->text, sizeof r->text, "%s", clnz_context_message(r->ctx));
    __atomic_store_n(&r->done, 1, __ATOMIC_RELEASE);
    return NULL;
}

/* A thread reads its message while another thread's blocking call waits
 * on the context's previous call (behind a caller's user event): the read
 * takes the messages' lock, not the call's. It took the call's, and waited
 * as long as that call did: for ever, had the event's setter been the
 * reading thread. */
static void test_a_message_read_while_a_call_waits(void **state)
{
    (void)state;
    clnz_context *ctx = tu_context();
    cl_context cl = clnz_context_cl_context(ctx);
    inputs in = half_nonzero(ctx);
    cl_mem out = tu_buffer(64 * sizeof(int64_t), NULL), count = tu_buffer(8, NULL);
    int64_t small_shape[1] = {64}; /* one command (test_calls_after_a_failed_event) */
    clnz_tensor small = {CLNZ_F32, 1, small_shape, NULL};
    cl_int e = CL_SUCCESS;
    cl_event user = clCreateUserEvent(cl, &e), ev = NULL;
    assert_int_equal(e, CL_SUCCESS);
    TU_CHECK(ctx, clnz_nonzero_enqueue(ctx, &small, in.xbuf, 0, NULL, NULL, out, 0, 64, count, 0, 1,
                                       &user, &ev));
    pthread_t thread, reader;
    job *j = job_start(call_count, &in, &thread), *late = NULL;
    nanosleep(&(struct timespec){0, 100000000}, NULL); /* it waits by now */
    message_read r = {ctx, 0, ""};
    assert_int_equal(pthread_create(&reader, NULL, read_message, &r), 0);
    int in_time = 0;
    for (int ms = 0; ms < 10000 && !in_time; ++ms) {
        in_time = __atomic_load_n(&r.done, __ATOMIC_ACQUIRE);
        if (!in_time)
            nanosleep(&(struct timespec){0, 1000000}, NULL);
    }
    clSetUserEventStatus(user, CL_COMPLETE); /* the blocked call (and a blocked read) go on */
    int result = 1;
    assert_true(job_wait(j, thread, &result, &late));
    assert_int_equal(result, 0);
    assert_int_equal(pthread_join(reader, NULL), 0);
    if (!in_time)
        fail_msg("clnz_context_message waited for another thread's call");
    assert_string_equal(r.text, ""); /* the reader made no call: no message */
    clReleaseEvent(ev);
    clReleaseEvent(user);
    clReleaseMemObject(out);
    clReleaseMemObject(count);
    inputs_free(&in);
}

/* The same failure, but late: a blocking call is already waiting behind the
 * device-resident call (chained on it for the scratch buffers) when the
 * caller's event fails. Nothing of the blocking call went wrong, and it
 * must return its right answer (it waits for the previous call before it
 * enqueues anything: chain_settle), not the failure of the call before. */
static void test_a_late_failure_before_a_blocking_call(void **state)
{
    (void)state;
    clnz_context *ctx = tu_context();
    cl_context cl = clnz_context_cl_context(ctx);
    inputs in = half_nonzero(ctx);
    cl_mem out = tu_buffer(64 * sizeof(int64_t), NULL), count = tu_buffer(8, NULL);
    int64_t small_shape[1] = {64}; /* one command (test_calls_after_a_failed_event) */
    clnz_tensor small = {CLNZ_F32, 1, small_shape, NULL};
    for (size_t i = 0; i < N_BLOCKING_CALLS; ++i) {
        cl_int e = CL_SUCCESS;
        cl_event user = clCreateUserEvent(cl, &e), ev = NULL;
        assert_int_equal(e, CL_SUCCESS);
        TU_CHECK(ctx, clnz_nonzero_enqueue(ctx, &small, in.xbuf, 0, NULL, NULL, out, 0, 64, count,
                                           0, 1, &user, &ev));
        pthread_t thread;
        job *j = job_start(blocking_calls[i].fn, &in, &thread), *late = NULL;
        nanosleep(&(struct timespec){0, 100000000}, NULL); /* it waits by now */
        clSetUserEventStatus(user, -1);
        int result = 1;
        if (!job_wait(j, thread, &result, &late))
            fail_msg("%s still blocked %d s after a late failure of the call before",
                     blocking_calls[i].name, DEADLINE_S);
        cl_int status = CL_COMPLETE;
        clGetEventInfo(ev, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof status, &status, NULL);
        assert_true(status < 0); /* the call before it did fail */
        if (result)
            fail_msg("%s failed or was wrong after a late failure of the call before",
                     blocking_calls[i].name);
        clReleaseEvent(ev);
        clReleaseEvent(user);
    }
    /* an _alloc call given the same event, which fails while it waits for
     * the call before: its own wait list failed, an error in time (PoCL
     * never runs a command enqueued behind a failed event: it hung) */
    cl_int e = CL_SUCCESS;
    cl_event ev = NULL;
    g_wait = clCreateUserEvent(cl, &e);
    assert_int_equal(e, CL_SUCCESS);
    TU_CHECK(ctx, clnz_nonzero_enqueue(ctx, &small, in.xbuf, 0, NULL, NULL, out, 0, 64, count, 0, 1,
                                       &g_wait, &ev));
    pthread_t thread;
    job *j = job_start(call_alloc_on_wait, &in, &thread), *late = NULL;
    nanosleep(&(struct timespec){0, 100000000}, NULL);
    clSetUserEventStatus(g_wait, -1);
    int result = 1;
    if (!job_wait(j, thread, &result, &late))
        fail_msg("clnz_nonzero_alloc still blocked %d s after its wait list failed", DEADLINE_S);
    assert_int_equal(result, 0);
    clReleaseEvent(ev);
    clReleaseEvent(g_wait);
    clReleaseMemObject(out);
    clReleaseMemObject(count);
    inputs_free(&in);
}

/* Two calls in a row that failed while an older one still waits on its
 * caller's event: the next call must still come after that older one
 * (the calls of a context share its scratch buffers), not after nothing
 * (chain.c: drop_failed walks back over every failed call; it used to go
 * one call back only). An out-of-order queue shows it: there nothing else
 * holds the next call up. */
/* An out-of-order queue on the test's device where a command passes a
 * held one (the probe), else NULL: in order, whatever its properties say,
 * or no such queue (the test then skips). */
static cl_command_queue passing_queue(cl_context cl, cl_device_id dev)
{
    cl_int e = CL_SUCCESS;
    cl_command_queue q = clCreateCommandQueue(cl, dev, CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE, &e);
    if (e == CL_INVALID_QUEUE_PROPERTIES || e == CL_INVALID_VALUE)
        return NULL;
    assert_int_equal(e, CL_SUCCESS);
    cl_event hold = clCreateUserEvent(cl, &e), held_ev = NULL;
    assert_int_equal(e, CL_SUCCESS);
    cl_mem held = tu_buffer(64, NULL), probe = tu_buffer(64, NULL);
    cl_uint pattern = 7;
    assert_int_equal(
        clEnqueueFillBuffer(q, held, &pattern, sizeof pattern, 0, 64, 1, &hold, &held_ev),
        CL_SUCCESS);
    clFlush(q);
    int in_order = !runs_out_of_order(q, probe);
    clSetUserEventStatus(hold, CL_COMPLETE);
    assert_int_equal(clWaitForEvents(1, &held_ev), CL_SUCCESS);
    clReleaseEvent(held_ev);
    clReleaseEvent(hold);
    clReleaseMemObject(held);
    clReleaseMemObject(probe);
    if (in_order) {
        clReleaseCommandQueue(q);
        return NULL;
    }
    return q;
}

static void test_order_kept_past_two_failed_calls(void **state)
{
    (void)state;
    clnz_context *base = tu_context();
    cl_context cl = clnz_context_cl_context(base);
    cl_int e = CL_SUCCESS;
    cl_command_queue q = passing_queue(cl, clnz_context_device(base));
    if (!q)
        skip();
    clnz_context *ctx;
    char msg[300];
    assert_int_equal(clnz_context_wrap(cl, q, &ctx, msg, sizeof msg), CLNZ_SUCCESS);
    inputs in = half_nonzero(ctx);
    int64_t small_shape[1] = {64}; /* one command each (test_calls_after_a_failed_event) */
    clnz_tensor small = {CLNZ_F32, 1, small_shape, NULL};
    int64_t want = 0;
    for (int i = 0; i < 64; ++i)
        want += in.x[i] != 0;
    cl_mem counts = tu_buffer(4 * 8, NULL);
    cl_event user_a = clCreateUserEvent(cl, &e), user_b = NULL, ev[4] = {NULL};
    assert_int_equal(e, CL_SUCCESS);
    user_b = clCreateUserEvent(cl, &e);
    assert_int_equal(e, CL_SUCCESS);
    /* A waits on user_a (completed at the end); B on user_b, failed below,
     * and C, behind B, fails with it */
    TU_CHECK(ctx, clnz_count_enqueue(ctx, &small, in.xbuf, 0, NULL, counts, 0, 1, &user_a, &ev[0]));
    TU_CHECK(ctx, clnz_count_enqueue(ctx, &small, in.xbuf, 0, NULL, counts, 8, 1, &user_b, &ev[1]));
    TU_CHECK(ctx, clnz_count_enqueue(ctx, &small, in.xbuf, 0, NULL, counts, 16, 0, NULL, &ev[2]));
    clSetUserEventStatus(user_b, -1);
    cl_int status = CL_COMPLETE;
    for (int i = 1; i <= 2; ++i) { /* B's and C's commands failed (a deadline, not a hang) */
        assert_true(settles_in_time(ev[i], &status));
        assert_true(status < 0);
    }
    TU_CHECK(ctx, clnz_count_enqueue(ctx, &small, in.xbuf, 0, NULL, counts, 24, 0, NULL, &ev[3]));
    clFlush(q);
    for (int ms = 0; ms < 300; ++ms) { /* D must wait for A, which waits for user_a */
        clGetEventInfo(ev[3], CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof status, &status, NULL);
        if (status <= CL_COMPLETE)
            break;
        nanosleep(&(struct timespec){0, 1000000}, NULL);
    }
    clGetEventInfo(ev[0], CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof e, &e, NULL);
    clSetUserEventStatus(user_a, CL_COMPLETE);
    assert_true(e > CL_COMPLETE);      /* A had not run */
    assert_true(status > CL_COMPLETE); /* nor D, behind it */
    for (int i = 0; i <= 3; i += 3) {  /* then both ran (behind a failed event: never) */
        assert_true(settles_in_time(ev[i], &status));
        assert_int_equal(status, CL_COMPLETE);
    }
    uint64_t got[4] = {0};
    tu_read(counts, 0, sizeof got, got);
    assert_int_equal(got[0], want);
    assert_int_equal(got[3], want);
    for (int i = 0; i < 4; ++i)
        clReleaseEvent(ev[i]);
    clReleaseEvent(user_a);
    clReleaseEvent(user_b);
    clReleaseMemObject(counts);
    inputs_free(&in);
    clnz_context_release(ctx);
    clReleaseCommandQueue(q);
}

/* Two count calls on ctx: A waits on *user_a (set by the caller later), B
 * on a user event that fails now; returns once B's commands have failed
 * (a deadline, not a hang) while A's still wait. ev: A's and B's events. */
static void hold_one_fail_one(clnz_context *ctx, const inputs *in, cl_mem counts, cl_event *user_a,
                              cl_event ev[2])
{
    cl_context cl = clnz_context_cl_context(ctx);
    int64_t small_shape[1] = {64}; /* one command each (test_calls_after_a_failed_event) */
    clnz_tensor small = {CLNZ_F32, 1, small_shape, NULL};
    cl_int e = CL_SUCCESS, status = CL_COMPLETE;
    *user_a = clCreateUserEvent(cl, &e);
    assert_int_equal(e, CL_SUCCESS);
    cl_event user_b = clCreateUserEvent(cl, &e);
    assert_int_equal(e, CL_SUCCESS);
    TU_CHECK(ctx, clnz_count_enqueue(ctx, &small, in->xbuf, 0, NULL, counts, 0, 1, user_a, &ev[0]));
    TU_CHECK(ctx,
             clnz_count_enqueue(ctx, &small, in->xbuf, 0, NULL, counts, 8, 1, &user_b, &ev[1]));
    clSetUserEventStatus(user_b, -1);
    assert_true(settles_in_time(ev[1], &status));
    assert_true(status < 0);
    clGetEventInfo(ev[0], CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof status, &status, NULL);
    assert_true(status > CL_COMPLETE);
    clReleaseEvent(user_b);
}

/* fn in a thread started after hold_one_fail_one; A's event fails while fn
 * waits: fn's result (0: right), after A's failure is checked. */
static int late_failure_under(call_fn fn, const char *name, const inputs *in, cl_mem counts)
{
    cl_event user_a = NULL, ev[2] = {NULL};
    hold_one_fail_one(in->ctx, in, counts, &user_a, ev);
    pthread_t thread;
    job *j = job_start(fn, in, &thread), *late = NULL;
    nanosleep(&(struct timespec){0, 100000000}, NULL); /* it waits by now */
    clSetUserEventStatus(user_a, -1);
    int result = 1;
    if (!job_wait(j, thread, &result, &late))
        fail_msg("%s still blocked %d s after the calls before it failed", name, DEADLINE_S);
    cl_int status = CL_COMPLETE;
    assert_true(settles_in_time(ev[0], &status));
    assert_true(status < 0); /* A did fail */
    clReleaseEvent(ev[0]);
    clReleaseEvent(ev[1]);
    clReleaseEvent(user_a);
    return result;
}

/* A context on an out-of-order queue where commands pass held ones (under
 * CLNZ_MAX_ALLOC=max_alloc where not NULL), its inputs and two counts;
 * NULL where there is no such queue. */
static clnz_context *passing_context(inputs *in, cl_mem *counts, const char *max_alloc)
{
    clnz_context *base = tu_context();
    cl_context cl = clnz_context_cl_context(base);
    cl_command_queue q = passing_queue(cl, clnz_context_device(base));
    if (!q) /* in order, B could not fail before A */
        return NULL;
    clnz_context *ctx;
    char msg[300];
    if (max_alloc)
        setenv("CLNZ_MAX_ALLOC", max_alloc, 1);
    clnz_status st = clnz_context_wrap(cl, q, &ctx, msg, sizeof msg);
    unsetenv("CLNZ_MAX_ALLOC");
    assert_int_equal(st, CLNZ_SUCCESS);
    clReleaseCommandQueue(q); /* the context holds it */
    *in = half_nonzero(ctx);
    *counts = tu_buffer(3 * 8, NULL);
    return ctx;
}

/* A blocking call after a failed call, while the one before that still
 * waits on its caller's event, which then fails too: the blocking call
 * waits for that older call before it enqueues anything (chain_settle
 * walks down over the failed one), so the older call's failure is none of
 * its own and it returns its right answer. It used to stop at the failed
 * call (done, so nothing to wait for), chain behind the older one, and fail
 * with it. */
static void test_a_late_failure_below_a_failed_call(void **state)
{
    (void)state;
    inputs in;
    cl_mem counts;
    clnz_context *ctx = passing_context(&in, &counts, NULL);
    if (!ctx)
        skip();
    for (size_t i = 0; i < N_BLOCKING_CALLS; ++i)
        if (late_failure_under(blocking_calls[i].fn, blocking_calls[i].name, &in, counts))
            fail_msg("%s failed or was wrong after a late failure two calls before",
                     blocking_calls[i].name);
    clReleaseMemObject(counts);
    inputs_free(&in);
    clnz_context_release(ctx);
}

static void *complete_later(void *user_event)
{
    nanosleep(&(struct timespec){1, 0}, NULL);
    clSetUserEventStatus(user_event, CL_COMPLETE);
    return NULL;
}

/* The tuner's end forgets the context's earlier calls (it waits for them
 * first), so that later calls chain on nothing: it must wait for the
 * older call below a failed one too, or a later call runs beside it (they
 * share the scratch). Its every call failing before it enqueues anything
 * (an allocation limit below its problems) shows it: it used to wait for
 * the failed call only and return at once, and the next call, chained on
 * nothing, ran while the older one still waited. */
static void test_the_tuner_waits_below_a_failed_call(void **state)
{
    (void)state;
    inputs in;
    cl_mem counts;
    clnz_context *ctx = passing_context(&in, &counts, "8K");
    if (!ctx)
        skip();
    cl_event user_a = NULL, ev[3] = {NULL};
    hold_one_fail_one(ctx, &in, counts, &user_a, ev);
    pthread_t thread;
    assert_int_equal(pthread_create(&thread, NULL, complete_later, user_a), 0);
    assert_int_equal(clnz_tune(ctx, 1, NULL, NULL, NULL, 0, NULL), CLNZ_ERROR_TOO_LARGE);
    int64_t small_shape[1] = {64};
    clnz_tensor small = {CLNZ_F32, 1, small_shape, NULL};
    TU_CHECK(ctx, clnz_count_enqueue(ctx, &small, in.xbuf, 0, NULL, counts, 16, 0, NULL, &ev[2]));
    clFlush(clnz_context_queue(ctx));
    cl_int a = CL_QUEUED, d = CL_QUEUED;
    clGetEventInfo(ev[0], CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof a, &a, NULL);
    assert_true(settles_in_time(ev[2], &d));
    assert_int_equal(d, CL_COMPLETE);
    pthread_join(thread, NULL);
    assert_int_equal(a, CL_COMPLETE); /* before the next call ran: the tuner waited for it */
    for (int k = 0; k < 3; ++k)
        clReleaseEvent(ev[k]);
    clReleaseEvent(user_a);
    clReleaseMemObject(counts);
    inputs_free(&in);
    clnz_context_release(ctx);
}

int main(void)
{
    tu_seed("test_queue");
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_blocking_calls_wait_on_their_own_commands),
        cmocka_unit_test(test_calls_after_a_failed_event),
        cmocka_unit_test(test_a_failure_through_calls_of_many_commands),
        cmocka_unit_test(test_a_failure_behind_many_pending_calls),
        cmocka_unit_test(test_a_context_released_before_its_call_settles),
        cmocka_unit_test(test_orphans_a_stuck_call_leaves_do_not_grow),
        cmocka_unit_test(test_a_message_read_while_a_call_waits),
        cmocka_unit_test(test_a_late_failure_before_a_blocking_call),
        cmocka_unit_test(test_order_kept_past_two_failed_calls),
        cmocka_unit_test(test_a_late_failure_below_a_failed_call),
        cmocka_unit_test_setup_teardown(test_the_tuner_waits_below_a_failed_call, tu_cache_setup,
                                        tu_cache_teardown),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    tu_context_done();
    return rc;
}
