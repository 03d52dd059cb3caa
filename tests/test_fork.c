/* test_fork.c: clnz in a child of fork(). OpenCL drivers keep threads that
 * fork() leaves behind; on PoCL 3.1 a child's first call that waits on the
 * driver never returns, on a context from before the fork or a new one.
 * A child forked before any OpenCL use works normally; one forked after
 * gets CLNZ_ERROR_FORKED at once from every call that would reach the
 * driver, with the reason, and a release that does nothing (no hang).
 *
 * The tests run in order in one process: the first forks before the
 * process touches OpenCL. A child reports through its exit status; an
 * alarm turns a hang into a failure. */
#include "testutil.h"

#include "core/result_mem.h"

#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

enum { N = 5000, HANG_S = 60 };

static uint8_t data[N];
static int64_t shape[1] = {N};
static const clnz_tensor tensor = {CLNZ_U8, 1, shape, NULL};

static int64_t reference_count(void)
{
    int64_t z = 0;
    for (int i = 0; i < N; ++i)
        z += data[i] != 0;
    return z;
}

/* Runs child() in a forked child, with an alarm; its exit status is what
 * child() returns (0: all well), a signal a failure (the alarm: a hang). */
static void in_child(int (*child)(void))
{
    fflush(NULL);
    pid_t p = fork();
    assert_true(p >= 0);
    if (p == 0) {
        alarm(HANG_S);
        _exit(child());
    }
    int ws = 0;
    assert_int_equal(waitpid(p, &ws, 0), p);
    if (WIFSIGNALED(ws))
        fail_msg("the child died of signal %d%s", WTERMSIG(ws),
                 WTERMSIG(ws) == SIGALRM ? " (a hang: the alarm fired)" : "");
    if (WEXITSTATUS(ws))
        fail_msg("the child failed check %d", WEXITSTATUS(ws));
}

/* Before any OpenCL use: the child makes its own context and counts. */
static int child_before_use(void)
{
    clnz_context *c = NULL;
    char msg[256];
    if (clnz_context_create(NULL, &c, msg, sizeof msg) != CLNZ_SUCCESS)
        return 1;
    int64_t z = -1;
    if (clnz_count(c, &tensor, data, NULL, &z) != CLNZ_SUCCESS)
        return 2;
    if (z != reference_count())
        return 3;
    clnz_context_release(c);
    return 0;
}

static void test_fork_before_opencl(void **state)
{
    (void)state;
    for (int i = 0; i < N; ++i)
        data[i] = (uint8_t)(tu_rand() % 3 == 0 ? 0 : tu_rand());
    in_child(child_before_use);
}

static clnz_context *parent_ctx;

static int child_after_use(void)
{
    const char *why = "forked after OpenCL was in use";
    int64_t z = -1;
    /* the parent's context: refused at once, with the reason */
    if (clnz_count(parent_ctx, &tensor, data, NULL, &z) != CLNZ_ERROR_FORKED || z != -1)
        return 1;
    if (!strstr(clnz_context_message(parent_ctx), why))
        return 2;
    clnz_result res;
    if (clnz_nonzero(parent_ctx, &tensor, data, NULL, NULL, &res) != CLNZ_ERROR_FORKED)
        return 3;
    /* a new context, the device listing: refused too */
    clnz_context *c = NULL;
    char msg[400] = "";
    if (clnz_context_create(NULL, &c, msg, sizeof msg) != CLNZ_ERROR_FORKED || c || !strstr(msg, why))
        return 4;
    int n = -1;
    if (clnz_list_devices(NULL, 0, &n) != CLNZ_ERROR_FORKED || n != 0) /* none listed */
        return 5;
    if (strncmp(clnz_status_string(CLNZ_ERROR_FORKED), "CLNZ_ERROR_FORKED", 17))
        return 6;
    /* the tuner's candidates come from a built kernel: none here (it built one) */
    clnz_launch cands[4];
    if (clnz_tune_candidates(parent_ctx, "nonzero", 1, cands, 4) != 0)
        return 7;
    /* results of the parent's still free, and the release returns */
    clnz_context_release(parent_ctx);
    return 0;
}

/* clnz's context lock, which a parent thread may hold when another forks
 * (internal: declared here as host/core/context.h does) */
clnz_context *ctx_hold(const clnz_context *ctx);
void ctx_hold_end(clnz_context **held);

static int child_with_lock_held(void)
{
    clnz_stats st;
    if (clnz_context_stats(parent_ctx, &st) != CLNZ_ERROR_FORKED)
        return 1;
    clnz_launch l;
    if (clnz_context_launch(parent_ctx, "nonzero", &l, NULL) != CLNZ_ERROR_FORKED)
        return 2;
    if (clnz_context_strategy(parent_ctx) != CLNZ_STRATEGY_TWO_PASS)
        return 3;
    if (clnz_context_auto_strategy(parent_ctx) >= CLNZ_STRATEGY_COUNT)
        return 4;
    int64_t z = -1;
    if (clnz_count(parent_ctx, &tensor, data, NULL, &z) != CLNZ_ERROR_FORKED)
        return 5;
    if (!strstr(clnz_context_message(parent_ctx), "forked after OpenCL"))
        return 6;
    if (clnz_context_set_strategy(parent_ctx, CLNZ_STRATEGY_AUTO) != CLNZ_ERROR_FORKED)
        return 7;
    clnz_context_release(parent_ctx);
    return 0;
}

static pthread_mutex_t gate = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t gate_cond = PTHREAD_COND_INITIALIZER;
static int holding, forked;

/* Holds a lock of clnz's (which: arg, 0 the context's, 1 the kept result
 * blocks') until the main thread has forked. */
static void *lock_holder(void *arg)
{
    int which = *(const int *)arg;
    clnz_context *held = which ? NULL : ctx_hold(parent_ctx);
    if (which)
        assert_true(result_mem_hold());
    pthread_mutex_lock(&gate);
    holding = 1;
    pthread_cond_broadcast(&gate_cond);
    while (!forked)
        pthread_cond_wait(&gate_cond, &gate);
    pthread_mutex_unlock(&gate);
    if (which)
        result_mem_hold_end();
    else
        ctx_hold_end(&held);
    return NULL;
}

/* child() forked while another thread of the parent holds lock `which`. */
static void in_child_with_held(int which, int (*child)(void))
{
    holding = forked = 0;
    pthread_t t;
    assert_int_equal(pthread_create(&t, NULL, lock_holder, &which), 0);
    pthread_mutex_lock(&gate);
    while (!holding)
        pthread_cond_wait(&gate_cond, &gate);
    pthread_mutex_unlock(&gate);
    in_child(child);
    pthread_mutex_lock(&gate);
    forked = 1;
    pthread_cond_broadcast(&gate_cond);
    pthread_mutex_unlock(&gate);
    assert_int_equal(pthread_join(t, NULL), 0);
}

/* Another thread of the parent holds the context's lock at the fork: the
 * child's queries answer, its other calls fail with FORKED, none hangs. */
static void test_fork_with_the_lock_held(void **state)
{
    (void)state;
    TU_CHECK(parent_ctx, clnz_context_set_strategy(parent_ctx, CLNZ_STRATEGY_TWO_PASS));
    in_child_with_held(0, child_with_lock_held);
    TU_CHECK(parent_ctx, clnz_context_set_strategy(parent_ctx, CLNZ_STRATEGY_AUTO));
    clnz_stats st;
    TU_CHECK(parent_ctx, clnz_context_stats(parent_ctx, &st)); /* the parent's lock works on */
}

/* A result of the parent's, large enough to be kept (above 32 MiB) */
static void *large_result;

static int child_frees_a_result(void)
{
    free_result(large_result); /* takes the kept blocks' lock while a context lives */
    void *p = alloc_result((size_t)48 << 20); /* looks among the kept blocks */
    if (!p)
        return 1;
    free_result(p);
    return 0;
}

/* Another thread of the parent holds the kept result blocks' lock at the
 * fork (it frees a result, say): the child frees and allocates results
 * with no hang. They waited for that lock for ever. */
static void test_fork_with_the_result_lock_held(void **state)
{
    (void)state;
    large_result = alloc_result((size_t)48 << 20);
    assert_non_null(large_result);
    in_child_with_held(1, child_frees_a_result);
    free_result(large_result);
}

static void test_fork_after_opencl(void **state)
{
    (void)state;
    parent_ctx = tu_context();
    int64_t z = -1;
    TU_CHECK(parent_ctx, clnz_count(parent_ctx, &tensor, data, NULL, &z));
    assert_int_equal(z, reference_count());
    in_child(child_after_use);
    /* the parent goes on as before */
    z = -1;
    TU_CHECK(parent_ctx, clnz_count(parent_ctx, &tensor, data, NULL, &z));
    assert_int_equal(z, reference_count());
}

int main(void)
{
    tu_seed("test_fork");
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fork_before_opencl), /* first: nothing has touched OpenCL */
        cmocka_unit_test(test_fork_after_opencl),
        cmocka_unit_test(test_fork_with_the_lock_held), /* after: the context is made */
        cmocka_unit_test(test_fork_with_the_result_lock_held),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    tu_context_done();
    return rc;
}
