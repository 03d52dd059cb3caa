/* test_threads.c: several host threads calling clnz at once, on one shared
 * context and on a context each. The jobs (inputs and their expected
 * results, from the sequential references in testutil.c) are made in the
 * main thread first; the workers only call clnz and compare, because
 * cmocka's assertions and the references' random numbers are not
 * thread-safe. Every thread runs every job, each in its own order, so that
 * different calls overlap: nonzero, count, select, where, the device-resident
 * nonzero, batched nonzero, and a call that fails with a message naming its
 * thread (threads sharing a context each read their own message). Also:
 * threads that create and release contexts while giving back and taking
 * the large results clnz keeps for reuse. Run under ThreadSanitizer by
 * make test-tsan. */
#include "testutil.h"

#include "core/context.h"

#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { N_THREADS = 4, N_JOBS = 42, ROUNDS = 2, MAX_WORKERS = 8 };

typedef enum { NONZERO, COUNT, SELECT, WHERE, ENQUEUE, BATCHED, BAD_CALL, N_KINDS } job_kind;
static const char *const kind_names[N_KINDS] = {"nonzero", "count",   "select",  "where",
                                                "enqueue", "batched", "bad call"};

typedef struct {
    job_kind kind;
    int64_t shape[2];
    float *x, *y;      /* input (and where's second operand) */
    int64_t count;     /* expected count */
    int64_t *indices;  /* nonzero / enqueue: rows of 2; batched: the column of each entry */
    int64_t *offsets;  /* batched: shape[0] + 1 */
    float *values;     /* select: count values; where: the whole result */
} job;

static job jobs[N_JOBS];

typedef struct {
    int id;
    clnz_context *ctx; /* NULL: create its own */
    long jobs, calls, mismatches;
    char first_failure[512];
} worker;

/* ---- the jobs and their expected results (main thread) ---- */
static void make_job(job *j, job_kind kind)
{
    j->kind = kind;
    j->shape[0] = 1 + (int64_t)(tu_rand() % 48);
    j->shape[1] = 1 + (int64_t)(tu_rand() % 2500);
    size_t n = (size_t)(j->shape[0] * j->shape[1]);
    double density = tu_uniform();
    j->x = malloc(n * sizeof *j->x);
    j->y = malloc(n * sizeof *j->y);
    for (size_t i = 0; i < n; ++i) {
        j->x[i] = tu_uniform() < density ? (float)(tu_uniform() * 2 - 1) : 0.0f;
        j->y[i] = (float)i;
    }
    clnz_tensor t = {CLNZ_F32, 2, j->shape, NULL};
    clnz_nonzero_options o;
    clnz_nonzero_options_init(&o);
    int64_t entries;
    int per;
    j->indices = tu_ref_nonzero(&t, j->x, NULL, &o, &j->count, &entries, &per);
    j->offsets = calloc((size_t)j->shape[0] + 1, sizeof *j->offsets);
    for (int64_t e = 0; e < j->count; ++e)
        j->offsets[j->indices[2 * e] + 1]++;
    for (int64_t b = 0; b < j->shape[0]; ++b)
        j->offsets[b + 1] += j->offsets[b];
    j->values = malloc(n * sizeof *j->values);
    if (kind == SELECT) {
        clnz_predicate gt = clnz_pred_float(CLNZ_OP_GT, 0.25);
        int64_t z = 0;
        for (size_t i = 0; i < n; ++i)
            if (tu_ref_selected(CLNZ_F32, &j->x[i], &gt))
                j->values[z++] = j->x[i];
        j->count = z;
    } else if (kind == WHERE) {
        for (size_t i = 0; i < n; ++i)
            j->values[i] = j->x[i] != 0.0f ? j->y[i] : -1.0f;
    }
}

static void free_job(job *j)
{
    free(j->x);
    free(j->y);
    free(j->indices);
    free(j->offsets);
    free(j->values);
}

/* ---- the workers ---- */
static void mismatch(worker *w, const job *j, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void mismatch(worker *w, const job *j, const char *fmt, ...)
{
    if (w->mismatches++ == 0) {
        int n = snprintf(w->first_failure, sizeof w->first_failure, "thread %d, %s %lldx%lld: ",
                         w->id, kind_names[j->kind], (long long)j->shape[0],
                         (long long)j->shape[1]);
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(w->first_failure + n, sizeof w->first_failure - (size_t)n, fmt, ap);
        va_end(ap);
    }
}

#define CALL_OK(w, j, ctx, call)                                                        \
    do {                                                                                \
        clnz_status st_ = (call);                                                       \
        if (st_ != CLNZ_SUCCESS) {                                                      \
            mismatch(w, j, "%s -> %s: %s", #call, clnz_status_string(st_),              \
                     clnz_context_message(ctx));                                        \
            return;                                                                     \
        }                                                                               \
    } while (0)

static void run_enqueue(worker *w, const job *j, clnz_context *ctx, const clnz_tensor *t)
{
    cl_context cl = clnz_context_cl_context(ctx);
    cl_command_queue q = clnz_context_queue(ctx);
    size_t n = (size_t)(j->shape[0] * j->shape[1]);
    size_t cap = (size_t)j->count + 1, out_bytes = cap * 2 * sizeof(int64_t);
    cl_int e1, e2, e3;
    cl_mem in = clCreateBuffer(cl, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, n * sizeof(float),
                               j->x, &e1);
    cl_mem out = clCreateBuffer(cl, CL_MEM_READ_WRITE, out_bytes, NULL, &e2);
    cl_mem cnt = clCreateBuffer(cl, CL_MEM_READ_WRITE, sizeof(uint64_t), NULL, &e3);
    int64_t *got = malloc(out_bytes);
    uint64_t z = 0;
    if (e1 || e2 || e3 || !got) {
        mismatch(w, j, "clCreateBuffer: %d %d %d", e1, e2, e3);
    } else {
        clnz_status st = clnz_nonzero_enqueue(ctx, t, in, 0, NULL, NULL, out, 0, cap, cnt, 0, 0, NULL,
                                              NULL);
        cl_int e = st ? CL_SUCCESS
                      : clEnqueueReadBuffer(q, cnt, CL_TRUE, 0, sizeof z, &z, 0, NULL, NULL);
        if (!st && !e)
            e = clEnqueueReadBuffer(q, out, CL_TRUE, 0, out_bytes, got, 0, NULL, NULL);
        if (st || e)
            mismatch(w, j, "nonzero_enqueue -> %s, read %d: %s", clnz_status_string(st), e,
                     clnz_context_message(ctx));
        else if ((int64_t)z != j->count ||
                 memcmp(got, j->indices, (size_t)j->count * 2 * sizeof(int64_t)) != 0)
            mismatch(w, j, "count %llu (expected %lld) or the coordinates differ",
                     (unsigned long long)z, (long long)j->count);
    }
    free(got);
    clReleaseMemObject(in);
    clReleaseMemObject(out);
    clReleaseMemObject(cnt);
}

static void run_job(worker *w, const job *j, clnz_context *ctx)
{
    clnz_tensor t = {CLNZ_F32, 2, j->shape, NULL};
    size_t n = (size_t)(j->shape[0] * j->shape[1]);
    w->jobs++;
    w->calls += j->kind != BAD_CALL; /* the bad call counts its repeats */
    switch (j->kind) {
    case NONZERO: {
        clnz_result r;
        CALL_OK(w, j, ctx, clnz_nonzero(ctx, &t, j->x, NULL, NULL, &r));
        if (r.count != j->count ||
            memcmp(r.indices, j->indices, (size_t)j->count * 2 * sizeof(int64_t)) != 0)
            mismatch(w, j, "count %lld (expected %lld) or the coordinates differ",
                     (long long)r.count, (long long)j->count);
        clnz_result_free(&r);
        break;
    }
    case COUNT: {
        int64_t z = -1;
        CALL_OK(w, j, ctx, clnz_count(ctx, &t, j->x, NULL, &z));
        if (z != j->count)
            mismatch(w, j, "count %lld, expected %lld", (long long)z, (long long)j->count);
        break;
    }
    case SELECT: {
        clnz_predicate gt = clnz_pred_float(CLNZ_OP_GT, 0.25);
        clnz_array a;
        CALL_OK(w, j, ctx, clnz_select(ctx, &t, j->x, NULL, NULL, &gt, &a));
        if (a.shape[0] != j->count ||
            memcmp(a.data, j->values, (size_t)j->count * sizeof(float)) != 0)
            mismatch(w, j, "%lld values (expected %lld) or they differ", (long long)a.shape[0],
                     (long long)j->count);
        clnz_array_free(&a);
        break;
    }
    case WHERE: {
        clnz_operand xo = clnz_operand_array(&t), yo = clnz_operand_float(-1.0);
        clnz_array a;
        CALL_OK(w, j, ctx, clnz_where(ctx, &t, j->x, NULL, &xo, j->y, &yo, NULL, &a));
        if (a.rank != 2 || memcmp(a.data, j->values, n * sizeof(float)) != 0)
            mismatch(w, j, "the result differs");
        clnz_array_free(&a);
        break;
    }
    case ENQUEUE:
        run_enqueue(w, j, ctx, &t);
        break;
    case BATCHED: {
        clnz_result r;
        clnz_array off;
        CALL_OK(w, j, ctx, clnz_nonzero_batched(ctx, &t, j->x, NULL, NULL, &r, &off));
        const int64_t *got = r.indices, *got_off = off.data;
        int same = r.count == j->count &&
                   memcmp(got_off, j->offsets, (size_t)(j->shape[0] + 1) * 8) == 0;
        for (int64_t e = 0; same && e < j->count; ++e)
            same = got[e] == j->indices[2 * e + 1];
        if (!same)
            mismatch(w, j, "offsets or columns differ");
        clnz_result_free(&r);
        clnz_array_free(&off);
        break;
    }
    default: {
        /* A width no call accepts, one for each thread: the message must name
         * this thread's width, whatever the other threads did meanwhile (the
         * yield lets them). Cheap, so repeated. */
        clnz_nonzero_options o;
        clnz_nonzero_options_init(&o);
        o.width = 100 + w->id;
        char want[32];
        snprintf(want, sizeof want, "width %d", o.width);
        for (int rep = 0; rep < 20; ++rep, ++w->calls) {
            clnz_result r;
            clnz_status st = clnz_nonzero(ctx, &t, j->x, NULL, &o, &r);
            sched_yield();
            if (st != CLNZ_ERROR_INVALID_WIDTH || !strstr(clnz_context_message(ctx), want)) {
                mismatch(w, j, "status %s, message '%s' (expected '%s')",
                         clnz_status_string(st), clnz_context_message(ctx), want);
                break;
            }
        }
        break;
    }
    }
}

static void *worker_main(void *arg)
{
    worker *w = arg;
    clnz_context *own = NULL;
    if (!w->ctx) {
        char msg[300];
        if (clnz_context_create(NULL, &own, msg, sizeof msg) != CLNZ_SUCCESS) {
            w->mismatches = 1;
            snprintf(w->first_failure, sizeof w->first_failure, "thread %d: %s", w->id, msg);
            return NULL;
        }
    }
    clnz_context *ctx = own ? own : w->ctx;
    /* Each thread walks the jobs with its own stride, so the calls that
     * overlap differ from thread to thread and round to round. */
    for (int r = 0; r < ROUNDS; ++r)
        for (int k = 0; k < N_JOBS; ++k)
            run_job(w, &jobs[(k * (2 * w->id + 1) + r * 7) % N_JOBS], ctx);
    clnz_context_release(own);
    return NULL;
}

/* Runs fn on n workers (at most MAX_WORKERS) sharing `shared` (NULL: none),
 * prints each one's first failure and sums their counters into *sum. */
static void run_workers(void *(*fn)(void *), int n, clnz_context *shared, worker *sum)
{
    pthread_t th[MAX_WORKERS];
    worker ws[MAX_WORKERS];
    assert_true(n <= MAX_WORKERS);
    for (int i = 0; i < n; ++i) {
        ws[i] = (worker){.id = i, .ctx = shared};
        assert_int_equal(pthread_create(&th[i], NULL, fn, &ws[i]), 0);
    }
    *sum = (worker){0};
    for (int i = 0; i < n; ++i) {
        pthread_join(th[i], NULL);
        sum->jobs += ws[i].jobs;
        sum->calls += ws[i].calls;
        sum->mismatches += ws[i].mismatches;
        if (ws[i].mismatches)
            print_error("%s\n", ws[i].first_failure);
    }
}

static void run_threads(clnz_context *shared)
{
    worker sum;
    run_workers(worker_main, N_THREADS, shared, &sum);
    printf("%d threads on %s: %ld jobs, %ld calls, %ld mismatches\n", N_THREADS,
           shared ? "one context" : "a context each", sum.jobs, sum.calls, sum.mismatches);
    assert_int_equal(sum.jobs, N_THREADS * N_JOBS * ROUNDS);
    assert_int_equal(sum.mismatches, 0);
}

/* ---- issue 16, item 3: contexts created and released by many threads at once ---- */
enum { LIFE_THREADS = 8, LIFE_ROUNDS = 20 };

/* Each round: a context of its own (device discovery and, in the first
 * rounds, program builds racing the other threads'), one nonzero and one
 * count checked against the reference, release. */
static void *lifecycle_main(void *arg)
{
    worker *w = arg;
    for (int r = 0; r < LIFE_ROUNDS; ++r) {
        clnz_context *ctx = NULL;
        char msg[300];
        clnz_status st = clnz_context_create(NULL, &ctx, msg, sizeof msg);
        if (st != CLNZ_SUCCESS) {
            if (w->mismatches++ == 0)
                snprintf(w->first_failure, sizeof w->first_failure,
                         "thread %d, round %d: clnz_context_create: %s", w->id, r, msg);
            continue;
        }
        run_job(w, &jobs[(w->id * LIFE_ROUNDS + r) % N_JOBS / N_KINDS * N_KINDS + NONZERO], ctx);
        run_job(w, &jobs[(w->id * LIFE_ROUNDS + r) % N_JOBS / N_KINDS * N_KINDS + COUNT], ctx);
        clnz_context_release(ctx);
    }
    return NULL;
}

/* Runs first, on a cold cache of its own, so that the driver's first
 * platform discovery and the first program builds race (PoCL crashed). */
static void test_issue16_item3_threads_create_call_release(void **state)
{
    (void)state;
    const char *old = getenv("CLNZ_CACHE_DIR");
    char *saved = old ? strdup(old) : NULL;
    assert_int_equal(tu_cache_setup(NULL), 0);
    worker sum;
    run_workers(lifecycle_main, LIFE_THREADS, NULL, &sum);
    long jobs_run = sum.jobs, bad = sum.mismatches;
    printf("%d threads x %d rounds of create / call / release: %ld jobs, %ld mismatches\n",
           LIFE_THREADS, LIFE_ROUNDS, jobs_run, bad);
    tu_cache_teardown(NULL);
    if (saved)
        setenv("CLNZ_CACHE_DIR", saved, 1);
    else
        unsetenv("CLNZ_CACHE_DIR");
    free(saved);
    assert_int_equal(bad, 0);
    assert_int_equal(jobs_run, LIFE_THREADS * LIFE_ROUNDS * 2);
}

/* ---- large results kept for reuse (host/core/result_mem.c) ---- */
enum { KEEP_THREADS = 3, KEEP_ROUNDS = 2 };
#define KEEP_N ((int64_t)19 << 18) /* 4.75 Mi floats; 7/8 selected: a 33 MiB result */
static float *keep_input;

/* Each round: a context of its own, so that the count of live contexts
 * goes to zero and back while other threads give blocks back and take
 * them (the kept blocks go with the last context); one blocking nonzero
 * whose result is large enough to be kept, checked entry by entry, and
 * given back through clnz_result_free. */
static void *keep_main(void *arg)
{
    worker *w = arg;
    for (int r = 0; r < KEEP_ROUNDS && !w->mismatches; ++r) {
        clnz_context *ctx = NULL;
        char msg[300];
        if (clnz_context_create(NULL, &ctx, msg, sizeof msg) != CLNZ_SUCCESS) {
            w->mismatches = 1;
            snprintf(w->first_failure, sizeof w->first_failure, "thread %d: %s", w->id, msg);
            break;
        }
        int64_t shape[] = {KEEP_N};
        clnz_tensor t = {CLNZ_F32, 1, shape, NULL};
        clnz_result res;
        clnz_status st = clnz_nonzero(ctx, &t, keep_input, NULL, NULL, &res);
        w->calls++;
        int64_t z = 0;
        int differs = 0;
        for (int64_t i = 0; !st && !differs && i < KEEP_N; ++i)
            if (keep_input[i] != 0.0f)
                differs = z >= res.count || ((int64_t *)res.indices)[z++] != i;
        if (st || differs || z != res.count) {
            w->mismatches = 1;
            snprintf(w->first_failure, sizeof w->first_failure, "thread %d, round %d: %s", w->id,
                     r, st ? clnz_context_message(ctx)
                        : differs ? "an entry differs" : "the count differs");
        }
        if (!st)
            clnz_result_free(&res);
        clnz_context_release(ctx);
    }
    return NULL;
}

static void test_threads_keep_and_take_large_results(void **state)
{
    (void)state;
    keep_input = malloc((size_t)KEEP_N * sizeof *keep_input);
    assert_non_null(keep_input);
    for (int64_t i = 0; i < KEEP_N; ++i)
        keep_input[i] = i % 8 ? (float)(i % 977) + 0.25f : 0.0f;
    worker sum;
    run_workers(keep_main, KEEP_THREADS, NULL, &sum);
    free(keep_input);
    assert_int_equal(sum.mismatches, 0);
    assert_int_equal(sum.calls, KEEP_THREADS * KEEP_ROUNDS);
}

static void test_threads_share_one_context(void **state)
{
    (void)state;
    run_threads(tu_context());
    /* the context is still sound for the main thread afterwards */
    clnz_tensor t = {CLNZ_F32, 2, jobs[0].shape, NULL};
    int64_t z;
    TU_CHECK(tu_context(), clnz_count(tu_context(), &t, jobs[0].x, NULL, &z));
    assert_int_equal(z, jobs[0].count); /* job 0 is a nonzero job: its count is the count */
}

static void test_threads_with_own_contexts(void **state)
{
    (void)state;
    run_threads(NULL);
}

/* A warning belongs to the thread whose call raised it, as an error does:
 * thread A's "cannot write the program cache" (a program compiled after
 * the cache folder became a file) never shows in the main thread's
 * message, read again or after its next call. It did: one warning per
 * context, copied into every thread's message. */
static char warned[600];

static void *count_f32(void *arg)
{
    clnz_context *c = arg;
    float d[16] = {1, 0, 2};
    int64_t shape[1] = {16}, z = -1;
    clnz_tensor t = {CLNZ_F32, 1, shape, NULL};
    if (clnz_count(c, &t, d, NULL, &z) == CLNZ_SUCCESS && z == 2)
        snprintf(warned, sizeof warned, "%s", clnz_context_message(c));
    return NULL;
}

static void test_warnings_stay_with_their_thread(void **state)
{
    (void)state;
    const char *env = getenv("CLNZ_CACHE_DIR");
    char *saved = env ? strdup(env) : NULL;
    assert_int_equal(tu_cache_setup(NULL), 0); /* a fresh cache: programs are written */
    clnz_context *c = NULL;
    char msg[300];
    assert_int_equal(clnz_context_create(NULL, &c, msg, sizeof msg), CLNZ_SUCCESS);
    uint8_t d[16] = {1, 0, 3};
    int64_t shape[1] = {16}, z = -1;
    clnz_tensor t = {CLNZ_U8, 1, shape, NULL};
    TU_CHECK(c, clnz_count(c, &t, d, NULL, &z));
    assert_string_equal(clnz_context_message(c), "");
    char cmd[200];
    snprintf(cmd, sizeof cmd, "rm -rf '%s/programs' && touch '%s/programs'", tu_cache_dir(),
             tu_cache_dir());
    assert_int_equal(system(cmd), 0);
    pthread_t a;
    assert_int_equal(pthread_create(&a, NULL, count_f32, c), 0);
    assert_int_equal(pthread_join(a, NULL), 0);
    assert_non_null(strstr(warned, "warning: cannot write the program cache")); /* A's own */
    assert_string_equal(clnz_context_message(c), ""); /* read again: still the main thread's */
    TU_CHECK(c, clnz_count(c, &t, d, NULL, &z)); /* compiles nothing, writes nothing */
    assert_string_equal(clnz_context_message(c), "");
    clnz_context_release(c);
    assert_int_equal(tu_cache_teardown(NULL), 0);
    if (saved)
        setenv("CLNZ_CACHE_DIR", saved, 1);
    else
        unsetenv("CLNZ_CACHE_DIR");
    free(saved);
}

/* A thread's message is the thread's own, also when a new thread is given
 * the pthread_t of one that ended (glibc hands out the ended one's at
 * once): a new thread's message is empty until its own call. It was the
 * ended thread's, its slot found by the pthread_t. */
typedef struct {
    clnz_context *ctx;
    pthread_t self;
    char message[600];
} message_probe;

static void *fail_a_call(void *arg)
{
    message_probe *p = arg;
    p->self = pthread_self();
    int64_t shape[1] = {16};
    clnz_tensor t = {CLNZ_F32, 1, shape, NULL};
    float d[16] = {0};
    assert_int_equal(clnz_count(p->ctx, &t, d, NULL, NULL), CLNZ_ERROR_INVALID_ARGUMENT);
    snprintf(p->message, sizeof p->message, "%s", clnz_context_message(p->ctx));
    return NULL;
}

static void *read_message(void *arg)
{
    message_probe *p = arg;
    p->self = pthread_self();
    snprintf(p->message, sizeof p->message, "%s", clnz_context_message(p->ctx));
    return NULL;
}

static void test_a_new_thread_never_reads_an_ended_ones_message(void **state)
{
    (void)state;
    clnz_context *c = tu_context();
    message_probe ended = {c, 0, ""}, next = {c, 0, ""};
    pthread_t t;
    assert_int_equal(pthread_create(&t, NULL, fail_a_call, &ended), 0);
    assert_int_equal(pthread_join(t, NULL), 0);
    assert_true(ended.message[0] != '\0'); /* the reason of its failed call */
    int same = 0;
    for (int i = 0; i < 20 && !same; ++i) {
        assert_int_equal(pthread_create(&t, NULL, read_message, &next), 0);
        assert_int_equal(pthread_join(t, NULL), 0);
        assert_string_equal(next.message, "");
        same = pthread_equal(next.self, ended.self);
    }
    if (!same) /* this C library never reused the ended thread's pthread_t */
        skip();
}

/* Threads that end do not leave their message slots behind: each new
 * thread takes over an ended one's. Threads on stacks of their own each
 * get a pthread_t never seen before, so slots keyed by it grew by one per
 * thread (120 here). */
static void test_ended_threads_leave_no_slots(void **state)
{
    (void)state;
    clnz_context *c = NULL;
    assert_int_equal(clnz_context_create(NULL, &c, NULL, 0), CLNZ_SUCCESS);
    enum { THREADS = 120, STACK = 2 << 20 }; /* ThreadSanitizer's threads need about 1 MiB */
    void *stacks[THREADS];
    for (int i = 0; i < THREADS; ++i) {
        message_probe p = {c, 0, ""};
        pthread_attr_t attr;
        assert_int_equal(pthread_attr_init(&attr), 0);
        assert_int_equal(posix_memalign(&stacks[i], 4096, STACK), 0); /* freed after: new ids */
        assert_int_equal(pthread_attr_setstack(&attr, stacks[i], STACK), 0);
        pthread_t t;
        assert_int_equal(pthread_create(&t, &attr, fail_a_call, &p), 0);
        assert_int_equal(pthread_join(t, NULL), 0);
        pthread_attr_destroy(&attr);
        assert_non_null(strstr(p.message, "count is NULL")); /* each its own message */
    }
    int slots = 0;
    for (thread_message *o = c->other_threads; o; o = o->next)
        ++slots;
    clnz_context_release(c);
    for (int i = 0; i < THREADS; ++i)
        free(stacks[i]);
    if (slots > 2)
        fail_msg("%d message slots after %d threads that ran one at a time", slots, THREADS);
}

/* A pthread key destructor of the application's that runs after clnz's
 * (created later) and makes a clnz call: the ending thread gets a fresh tag
 * and its own message. It used the tag clnz's destructor had freed (ASan:
 * a use after free). */
static pthread_key_t late_key;
static clnz_context *late_ctx;
static char late_message[300];

static void late_destructor(void *unused)
{
    (void)unused;
    clnz_stats st;
    if (clnz_context_stats(late_ctx, NULL) == CLNZ_ERROR_INVALID_ARGUMENT)
        snprintf(late_message, sizeof late_message, "%s", clnz_context_message(late_ctx));
    clnz_context_stats(late_ctx, &st); /* and a call that succeeds */
}

static void *call_then_end(void *unused)
{
    (void)unused;
    clnz_stats st;
    clnz_context_stats(late_ctx, &st); /* the thread's tag */
    pthread_setspecific(late_key, &late_key);
    return NULL;
}

static void test_a_call_from_a_later_key_destructor(void **state)
{
    (void)state;
    late_ctx = tu_context();
    assert_int_equal(clnz_context_stats(late_ctx, NULL), CLNZ_ERROR_INVALID_ARGUMENT);
    assert_int_equal(pthread_key_create(&late_key, late_destructor), 0); /* after clnz's */
    pthread_t t;
    assert_int_equal(pthread_create(&t, NULL, call_then_end, NULL), 0);
    assert_int_equal(pthread_join(t, NULL), 0);
    assert_string_equal(late_message, "stats is NULL");
    pthread_key_delete(late_key);
}

int main(void)
{
    tu_seed("test_threads");
    for (int i = 0; i < N_JOBS; ++i)
        make_job(&jobs[i], (job_kind)(i % N_KINDS));
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_issue16_item3_threads_create_call_release),
        cmocka_unit_test(test_threads_keep_and_take_large_results), /* no context lives yet */
        cmocka_unit_test(test_threads_share_one_context),
        cmocka_unit_test(test_threads_with_own_contexts),
        cmocka_unit_test(test_warnings_stay_with_their_thread),
        cmocka_unit_test(test_a_new_thread_never_reads_an_ended_ones_message),
        cmocka_unit_test(test_ended_threads_leave_no_slots),
        cmocka_unit_test(test_a_call_from_a_later_key_destructor),
    };
    int failed = cmocka_run_group_tests(tests, NULL, NULL);
    for (int i = 0; i < N_JOBS; ++i)
        free_job(&jobs[i]);
    tu_context_done();
    return failed;
}
