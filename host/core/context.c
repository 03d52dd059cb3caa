/* context.c: creating, wrapping and releasing a clnz context. */
#include "core/devices.h"
#include "core/driver_lock.h"
#include "core/error.h"
#include "core/cache.h"
#include "core/chain.h"
#include "core/program.h"
#include "core/quote.h"
#include "core/result_mem.h"
#include "core/tensor.h"
#include "tune/tune.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *clnz_version_string(void) { return CLNZ_VERSION_STRING; }
int clnz_version_number(void) { return CLNZ_VERSION_NUMBER; }

static void set_msg(char *msg, size_t n, const char *text, cl_int err)
{
    if (msg && n)
        snprintf(msg, n, "%s: %s", text, clnz_status_string(err));
}

/* A zeroed context with its lock, or NULL. */
static clnz_context *context_new(void)
{
    clnz_context *c = calloc(1, sizeof *c);
    if (!c)
        return NULL;
    pthread_mutexattr_t attr;
    int e = pthread_mutexattr_init(&attr);
    if (!e) {
        e = pthread_mutexattr_settype(&attr, PTHREAD_MUTEX_RECURSIVE);
        if (!e)
            e = pthread_mutex_init(&c->lock, &attr);
        pthread_mutexattr_destroy(&attr);
    }
    if (!e && (e = pthread_mutex_init(&c->msg_lock, NULL)) != 0)
        pthread_mutex_destroy(&c->lock);
    if (e) {
        free(c);
        return NULL;
    }
    result_mem_context_made();
    return c;
}

/* In a child forked after OpenCL was in use the lock is not taken: a
 * thread of the parent may have held it at the fork, and it never unlocks
 * there. Every call that would change the context has failed by then
 * (CLNZ_ERROR_FORKED); the queries that are left only read it. */
clnz_context *ctx_hold(const clnz_context *ctx)
{
    clnz_context *c = (clnz_context *)ctx; /* the lock is the one field a const call changes */
    if (c && !fork_guard_tripped())
        pthread_mutex_lock(&c->lock);
    return c;
}

void ctx_hold_end(clnz_context **held)
{
    if (*held && !fork_guard_tripped()) /* as ctx_hold: a process is forked or not for good */
        pthread_mutex_unlock(&(*held)->lock);
}

/* Tuned launches if the cache has them; with CLNZ_AUTOTUNE=1 (autotune), a
 * device that has none is tuned (quickly) on first use. */
static void launch_from_store(clnz_context *c, int autotune)
{
    tune_result r;
    clnz_launch_source src = tune_store_load(c, &c->id, &r);
    char *dir = NULL;
    int unstorable = src != CLNZ_LAUNCH_TUNED && autotune ? tune_store_writable(c, &dir) : 0;
    if (unstorable) { /* a tuning no later process finds: each would pay it again */
        char shown[400];
        ctx_warn(c,
                 "warning: CLNZ_AUTOTUNE: not tuning, the result could not be stored in %s "
                 "(%s) and every process would tune again: make the cache folder writable, "
                 "or run 'clnz tune' where it is",
                 dir ? quote_name(dir, shown, sizeof shown) : "(no cache folder)",
                 strerror(unstorable));
    } else if (src != CLNZ_LAUNCH_TUNED && autotune) {
        if (clnz_tune(c, 1, NULL, NULL, NULL, 0, NULL) == CLNZ_SUCCESS) {
            free(dir);
            return;
        }
        char why[400]; /* copied: the warning must not be written from its own slot */
        snprintf(why, sizeof why, "%s", clnz_context_message(c));
        ctx_warn(c, "warning: autotuning failed: %s", why);
        ctx_clear_message(c);
    }
    free(dir);
    if (src == CLNZ_LAUNCH_DEFAULT)
        return;
    for (int f = 0; f < TUNE_KERNELS; ++f) {
        c->launch[f] = r.launch[f];
        c->launch_source[f] = src;
    }
    c->preferred_strategy = r.strategy;
}

/* A CLNZ_* variable's value clnz does not take: the creation fails with
 * INVALID_VALUE, the value quoted (it may hold anything, a line break too). */
static clnz_status bad_env(char *msg, size_t msg_size, const char *name, const char *value,
                           const char *takes)
{
    char q[112];
    if (msg && msg_size)
        snprintf(msg, msg_size, "%s=%s: %s", name, quote_name(value, q, sizeof q), takes);
    return CLNZ_ERROR_INVALID_VALUE;
}

/* A yes/no CLNZ_* variable: unset, empty or 0 is no, 1 is yes, anything
 * else ("yes", "true", "2") fails the creation rather than being read as
 * either. */
static clnz_status env_flag(const char *name, const char *takes, int *on, char *msg,
                            size_t msg_size)
{
    const char *env = getenv(name);
    *on = env && strcmp(env, "1") == 0;
    if (env && *env && !*on && strcmp(env, "0") != 0)
        return bad_env(msg, msg_size, name, env, takes);
    return CLNZ_SUCCESS;
}

/* CLNZ_STRATEGY forces a strategy on every context; a name clnz does not
 * know fails the creation rather than being ignored, with INVALID_VALUE as
 * every other CLNZ_* variable's bad value (UNSUPPORTED_STRATEGY is for a
 * real strategy that cannot serve a call). */
static clnz_status strategy_from_env(clnz_context *c, char *msg, size_t msg_size)
{
    const char *env = getenv("CLNZ_STRATEGY");
    if (!env || !*env)
        return CLNZ_SUCCESS;
    if (clnz_strategy_parse(env, &c->forced_strategy) == CLNZ_SUCCESS)
        return CLNZ_SUCCESS;
    return bad_env(msg, msg_size, "CLNZ_STRATEGY", env,
                   "unknown strategy (auto, single-tile, two-pass, lookback, stream)");
}

/* Whether programs may be compiled here: FPGA platforms have no run-time
 * compiler, and CLNZ_NO_COMPILE=1 makes any device behave so (the tests
 * run bundles on PoCL that way). CLNZ_BUNDLE=DIR then names the programs. */
static clnz_status programs_setup(clnz_context *c, char *msg, size_t msg_size)
{
    cl_bool compiler = CL_TRUE;
    if (clGetDeviceInfo(c->device, CL_DEVICE_COMPILER_AVAILABLE, sizeof compiler, &compiler,
                        NULL) != CL_SUCCESS)
        compiler = CL_TRUE; /* unknown: try, and let the build say */
    int no_compile;
    clnz_status st = env_flag("CLNZ_NO_COMPILE", "1 (never compile) or 0", &no_compile, msg,
                              msg_size);
    if (st)
        return st;
    /* CLNZ_BUILD_OPTIONS and CLNZ_KERNEL_DIR are read again at each build
     * (they may change after); checked here as well, so that a bad value
     * fails the creation, as every CLNZ_* variable's does, not the first
     * call that builds */
    char common[PROGRAM_COMMON_MAX];
    st = program_common_options(c, common, sizeof common);
    if (st) {
        snprintf(msg, msg_size, "%s", clnz_context_message(c));
        return st;
    }
    c->can_compile = compiler && !no_compile;
    c->no_compile_reason = !compiler ? "the device has no compiler" : "CLNZ_NO_COMPILE=1";
    const char *bundle = getenv("CLNZ_BUNDLE");
    if (!bundle || !*bundle)
        return CLNZ_SUCCESS;
    st = clnz_context_use_bundle(c, bundle);
    if (st && msg && msg_size)
        snprintf(msg, msg_size, "CLNZ_BUNDLE: %s", clnz_context_message(c));
    return st;
}

/* A CLNZ_* count: unset or empty leaves *out as it is, digits from lo to
 * hi set it, and anything else (a sign, a space, a suffix, out of range)
 * fails the creation with what it takes. strtoul alone took " 5", "+5"
 * and " -0" (CLNZ_MAX_ALLOC refuses them): the first character must be a
 * digit. */
static clnz_status env_count(const char *name, unsigned long lo, unsigned long hi,
                             const char *takes, unsigned *out, char *msg, size_t msg_size)
{
    const char *env = getenv(name);
    if (!env || !*env)
        return CLNZ_SUCCESS;
    char *end;
    errno = 0;
    unsigned long v = strtoul(env, &end, 10);
    if (*env < '0' || *env > '9' || errno || *end || v < lo || v > hi)
        return bad_env(msg, msg_size, name, env, takes);
    *out = (unsigned)v;
    return CLNZ_SUCCESS;
}

/* The look-back kernel's variant: 64-bit atomics if the device has them,
 * the spin bound, the window of states read at once and how tiles write
 * their entries (see kernels/lookback.cl), with their overrides. */
static clnz_status lookback_setup(clnz_context *c, char *msg, size_t msg_size)
{
    c->lookback_atom64 = devices_have_extension(c->device, "cl_khr_int64_base_atomics");
    c->lookback_spin = 4096;
    c->lookback_window = LOOKBACK_WINDOW;
    c->lookback_scatter = LOOKBACK_SCATTER;
    const char *scatter = getenv("CLNZ_LOOKBACK_SCATTER");
    if (scatter && *scatter) {
        static const char *const names[] = {"staged", "direct", "hybrid"}; /* ABI_LB_SCATTER_* */
        unsigned k = 0;
        while (k < 3 && strcmp(scatter, names[k]) != 0)
            ++k;
        if (k == 3)
            return bad_env(msg, msg_size, "CLNZ_LOOKBACK_SCATTER", scatter,
                           "staged, direct or hybrid");
        c->lookback_scatter = k;
    }
    const char *atomics = getenv("CLNZ_LOOKBACK_ATOMICS");
    if (atomics && *atomics) {
        if (strcmp(atomics, "32") == 0)
            c->lookback_atom64 = 0;
        else if (strcmp(atomics, "64") != 0 || !c->lookback_atom64) {
            return bad_env(msg, msg_size, "CLNZ_LOOKBACK_ATOMICS", atomics,
                           "32, or 64 on a device with cl_khr_int64_base_atomics");
        }
    }
    char takes[64];
    snprintf(takes, sizeof takes, "a number of tile states read at once, 1 to %d",
             LOOKBACK_WINDOW_MAX);
    /* 1 would be every tile publishing: 0's meaning, so it is refused */
    const char *sparse_takes =
        "0 (off) or every how many tiles one publishes its prefix, 2 to 1000";
    c->lookback_test_sparse = 0;
    clnz_status st = env_count("CLNZ_LOOKBACK_SPIN", 0, 1000000000UL,
                               "a number of reads, 0 to 10^9", &c->lookback_spin, msg, msg_size);
    if (!st)
        st = env_count("CLNZ_LOOKBACK_WINDOW", 1, LOOKBACK_WINDOW_MAX, takes, &c->lookback_window,
                       msg, msg_size);
    if (!st)
        st = env_count("CLNZ_LOOKBACK_TEST_SPARSE", 0, 1000, sparse_takes, &c->lookback_test_sparse,
                       msg, msg_size);
    if (!st && c->lookback_test_sparse == 1)
        st = bad_env(msg, msg_size, "CLNZ_LOOKBACK_TEST_SPARSE",
                     getenv("CLNZ_LOOKBACK_TEST_SPARSE"), sparse_takes);
    return st;
}

/* A CLNZ_* variable that forces a choice the library makes on its own:
 * *forced is 1 or 0 when it is set to that, -1 when it is unset or empty
 * (the library's choice). Used for CLNZ_STREAM_STORES (the writing pass's
 * non-temporal stores, strategy/tiles.c) and CLNZ_COUNT_LOCKSTEP
 * (count_items' barriers between runs of steps, ops/count_batched.c). */
static clnz_status env_forced(const char *name, const char *takes, int *forced, char *msg,
                              size_t msg_size)
{
    const char *env = getenv(name);
    int on;
    clnz_status st = env_flag(name, takes, &on, msg, msg_size);
    *forced = st || !env || !*env ? -1 : on;
    return st;
}

/* CLNZ_MAX_ALLOC (bytes, or with a K, M or G suffix) lowers the largest
 * allocation clnz allows itself below the device's: tests and users of a
 * shared device make the blocking calls cut their inputs in chunks with it.
 * It never raises the device's limit; values below 4 KiB are ignored. A
 * value that is not a byte count fails context creation: a limit that is
 * silently dropped is a limit the user thinks holds. 0 with the byte count
 * in *out (ULLONG_MAX when unset), or -1 with the reason in msg. */
static int max_alloc_from_env(unsigned long long *out, char *msg, size_t msg_size)
{
    const char *env = getenv("CLNZ_MAX_ALLOC");
    *out = ULLONG_MAX;
    if (!env || !*env)
        return 0;
    char *end;
    errno = 0;
    int digits = *env >= '0' && *env <= '9';
    unsigned long long v = digits ? strtoull(env, &end, 10) : 0;
    int shift = digits && *end == 'K'   ? 10
                : digits && *end == 'M' ? 20
                : digits && *end == 'G' ? 30
                                        : 0;
    if (!digits || (shift ? end[1] : end[0])) {
        bad_env(msg, msg_size, "CLNZ_MAX_ALLOC", env,
                "not a byte count (digits, then K, M or G)");
        return -1;
    }
    if (errno == ERANGE || v > (ULLONG_MAX >> shift)) { /* was "not a byte count" too */
        bad_env(msg, msg_size, "CLNZ_MAX_ALLOC", env, "a byte count past 2^64 - 1");
        return -1;
    }
    *out = v << shift;
    return 0;
}

static void limit_max_alloc(clnz_context *c, unsigned long long v)
{
    if (v >= 4096 && v < c->max_alloc)
        c->max_alloc = v;
}

static clnz_status context_query(clnz_context *c, char *msg, size_t msg_size)
{
    unsigned long long max_alloc;
    if (max_alloc_from_env(&max_alloc, msg, msg_size))
        return CLNZ_ERROR_INVALID_VALUE;
    cl_device_type type = 0;
    int autotune;
    clnz_status st = env_flag("CLNZ_AUTOTUNE", "1 (tune a device on first use) or 0", &autotune,
                              msg, msg_size);
    if (!st)
        st = strategy_from_env(c, msg, msg_size);
    if (!st)
        st = lookback_setup(c, msg, msg_size);
    if (!st)
        st = env_forced("CLNZ_STREAM_STORES",
                        "1 (non-temporal stores where the kernel can) or 0 (never)",
                        &c->stream_stores, msg, msg_size);
    if (!st)
        st = env_forced("CLNZ_COUNT_LOCKSTEP",
                        "1 (counts along axes step their work-items together) or 0 (never)",
                        &c->count_lockstep, msg, msg_size);
    if (st)
        return st;
    cl_int e = clGetDeviceInfo(c->device, CL_DEVICE_TYPE, sizeof type, &type, NULL);
    if (!e)
        e = clGetDeviceInfo(c->device, CL_DEVICE_MAX_WORK_GROUP_SIZE, sizeof c->max_work_group,
                            &c->max_work_group, NULL);
    if (!e)
        e = clGetDeviceInfo(c->device, CL_DEVICE_LOCAL_MEM_SIZE, sizeof c->local_mem,
                            &c->local_mem, NULL);
    if (!e)
        e = clGetDeviceInfo(c->device, CL_DEVICE_MAX_MEM_ALLOC_SIZE, sizeof c->max_alloc,
                            &c->max_alloc, NULL);
    if (e) {
        set_msg(msg, msg_size, "clGetDeviceInfo", e);
        return e;
    }
    c->type = type;
    c->is_cpu = (type & CL_DEVICE_TYPE_CPU) != 0;
    ident_of_device(c->device, &c->id);
    int too_long;
    c->cache_dir = cache_dir_resolve(&too_long);
    if (too_long)
        ctx_warn(c, "warning: the cache folder's path is PATH_MAX bytes or more: no cache");
    plan_defaults(c);
    /* before the launches: CLNZ_AUTOTUNE=1 tunes here, which builds programs */
    st = programs_setup(c, msg, msg_size);
    if (st)
        return st;
    launch_from_store(c, autotune);
    const char *dbg = getenv("CLNZ_DEBUG");
    c->debug = dbg && *dbg && strcmp(dbg, "0") != 0;
    limit_max_alloc(c, max_alloc);
    return CLNZ_SUCCESS;
}

/* The OpenCL context and queue on c->device, under the driver lock. */
static cl_int context_open(clnz_context *c, cl_platform_id platform, char *msg, size_t msg_size)
{
    DRIVER_HOLD();
    cl_context_properties props[] = {CL_CONTEXT_PLATFORM, (cl_context_properties)platform, 0};
    cl_int e = CL_SUCCESS;
    c->cl = clCreateContext(props, 1, &c->device, NULL, NULL, &e);
    if (e) {
        set_msg(msg, msg_size, "clCreateContext", e);
        return e;
    }
    c->queue = c->callers_queue = clCreateCommandQueue(c->cl, c->device, 0, &e);
    if (e)
        set_msg(msg, msg_size, "clCreateCommandQueue", e);
    return e;
}

clnz_status clnz_context_create(const char *selector, clnz_context **out, char *msg,
                                size_t msg_size)
{
    if (!out)
        return CLNZ_ERROR_INVALID_ARGUMENT;
    *out = NULL;
    char scratch_msg[8];
    if (!msg) {
        msg = scratch_msg;
        msg_size = sizeof scratch_msg;
    }
    if (fork_guard_tripped()) {
        snprintf(msg, msg_size, "%s", FORK_MESSAGE);
        return CLNZ_ERROR_FORKED;
    }
    cl_platform_id platform;
    cl_device_id device;
    clnz_status st = devices_find(selector, &platform, &device, msg, msg_size);
    if (st)
        return st;
    clnz_context *c = context_new();
    if (!c) {
        snprintf(msg, msg_size, "out of host memory");
        return CLNZ_ERROR_OUT_OF_HOST_MEMORY;
    }
    c->device = device;
    cl_int e = context_open(c, platform, msg, msg_size);
    if (e) {
        clnz_context_release(c);
        return e;
    }
    st = context_query(c, msg, msg_size);
    if (st) {
        clnz_context_release(c);
        return st;
    }
    *out = c;
    return CLNZ_SUCCESS;
}

clnz_status clnz_context_wrap(cl_context cl_ctx, cl_command_queue queue, clnz_context **out,
                              char *msg, size_t msg_size)
{
    if (!out)
        return CLNZ_ERROR_INVALID_ARGUMENT;
    *out = NULL;
    if (fork_guard_tripped()) {
        if (msg && msg_size)
            snprintf(msg, msg_size, "%s", FORK_MESSAGE);
        return CLNZ_ERROR_FORKED;
    }
    fork_guard_arm(); /* the caller's OpenCL is in use */
    if (!cl_ctx || !queue) {
        if (msg && msg_size)
            snprintf(msg, msg_size, "clnz_context_wrap needs a cl_context and a queue");
        return CLNZ_ERROR_INVALID_ARGUMENT;
    }
    clnz_context *c = context_new();
    if (!c)
        return CLNZ_ERROR_OUT_OF_HOST_MEMORY;
    cl_context qctx = NULL;
    cl_int e = clGetCommandQueueInfo(queue, CL_QUEUE_CONTEXT, sizeof qctx, &qctx, NULL);
    if (!e)
        e = clGetCommandQueueInfo(queue, CL_QUEUE_DEVICE, sizeof c->device, &c->device, NULL);
    if (!e && qctx != cl_ctx)
        e = CL_INVALID_CONTEXT;
    if (e) {
        set_msg(msg, msg_size, "the queue does not belong to the context", e);
        clnz_context_release(c);
        return e;
    }
    clRetainContext(cl_ctx);
    clRetainCommandQueue(queue);
    c->cl = cl_ctx;
    c->queue = c->callers_queue = queue;
    clnz_status st = context_query(c, msg, msg_size);
    if (st) {
        clnz_context_release(c);
        return st;
    }
    *out = c;
    return CLNZ_SUCCESS;
}

void clnz_context_release(clnz_context *c)
{
    /* In a forked child the context's OpenCL objects are the parent's
     * driver's: releasing them would wait on threads that are not here.
     * The child's copy of its memory goes with the child. */
    if (!c || fork_guard_tripped())
        return;
    program_release_all(c);
    clnz_bundle_release(c->bundle);
    if (c->first_event)
        clReleaseEvent(c->first_event);
    chain_forget(c);
    if (c->scratch)
        clReleaseMemObject(c->scratch);
    tensor_meta_release_all(c);
    if (c->queue)
        clReleaseCommandQueue(c->queue);
    if (c->cl)
        clReleaseContext(c->cl);
    ctx_free_messages(c);
    free(c->cache_dir);
    pthread_mutex_destroy(&c->msg_lock);
    pthread_mutex_destroy(&c->lock);
    free(c);
    result_mem_context_released();
}

clnz_status clnz_context_stats(const clnz_context *c, clnz_stats *stats)
{
    if (fork_guard_tripped())
        return CLNZ_ERROR_FORKED;
    if (!c)
        return CLNZ_ERROR_INVALID_ARGUMENT;
    CTX_HOLD(c);
    ctx_clear_message(ctx_held_); /* as every call: a message left is this call's */
    if (!stats)
        return ctx_fail(ctx_held_, CLNZ_ERROR_INVALID_ARGUMENT, "stats is NULL");
    *stats = c->stats;
    return CLNZ_SUCCESS;
}

cl_context clnz_context_cl_context(const clnz_context *c) { return c ? c->cl : NULL; }
/* Set once at creation, so read with no lock: never the tuner's queue */
cl_command_queue clnz_context_queue(const clnz_context *c)
{
    return c ? c->callers_queue : NULL;
}
cl_device_id clnz_context_device(const clnz_context *c) { return c ? c->device : NULL; }

clnz_status clnz_context_set_launch(clnz_context *c, size_t wg, size_t items)
{
    CTX_ENTER(c);
    if (wg > c->max_work_group)
        return ctx_fail(c, CLNZ_ERROR_INVALID_ARGUMENT,
                        "work-group size %zu exceeds the device's limit %zu", wg,
                        c->max_work_group);
    if (items > CLNZ_MAX_ITEMS)
        return ctx_fail(c, CLNZ_ERROR_INVALID_ARGUMENT,
                        "items per work-item %zu is above the limit %d", items, CLNZ_MAX_ITEMS);
    c->forced_wg = wg;
    c->forced_items = items;
    return CLNZ_SUCCESS;
}
