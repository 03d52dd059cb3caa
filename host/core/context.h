/* context.h: what a clnz context holds (the struct behind the public
 * handle) and its lock. Every layer that runs work reads it; only
 * context.c creates and releases one. */
#ifndef CLNZ_CORE_CONTEXT_H
#define CLNZ_CORE_CONTEXT_H

#include "abi.h"
#include "clnz.h"
#include "core/fork_guard.h"
#include "core/held.h"
#include "core/predicate.h"
#include "tune/tune_kernels.h"

#include <pthread.h>

#define CLNZ_MESSAGE_MAX 512
/* Items per work-item above this only serialize the work: a sanity bound. */
#define CLNZ_MAX_ITEMS 65536
/* Tile states a look-back reads at once (kernels/lookback.cl's LB_WINDOW):
 * the default, and the most CLNZ_LOOKBACK_WINDOW takes (work-item 0 holds
 * a window in registers). */
#define LOOKBACK_WINDOW     1
#define LOOKBACK_WINDOW_MAX 64
/* How a look-back tile writes its entries (kernels/abi.h's
 * ABI_LB_SCATTER_*): the default, which CLNZ_LOOKBACK_SCATTER overrides. */
#define LOOKBACK_SCATTER ABI_LB_SCATTER_STAGED

typedef struct {
    char key[224];      /* file, build options (PROGRAM_OPTIONS_MAX) and kernel name */
    size_t program_len; /* key[0..program_len) names the program: file and options */
    size_t wg_limit;    /* CL_KERNEL_WORK_GROUP_SIZE once asked; 0 before */
    cl_program program;
    cl_kernel kernel;
} kernel_entry;

/* One answer of pred_to_keys, kept (predicate.c). */
typedef struct {
    int used;
    clnz_dtype dtype;
    clnz_predicate pred; /* as normalized: CLNZ_OP_NONZERO is x != 0 */
    pred_keys keys;
} pred_memo;
#define PRED_MEMO_SLOTS 4

/* A shape-and-strides buffer the kernels read (tensor.c), kept: such a
 * buffer is never written after it is made, so any call with the same
 * shape and strides may share it. */
typedef struct {
    cl_mem buf; /* NULL: a free slot */
    int krank;
    cl_long meta[2 * CLNZ_MAX_RANK];
} meta_memo;
#define META_MEMO_SLOTS 4

typedef struct {
    char platform[128], device[128], vendor[128], driver[64], type[16];
} device_ident;

/* The last call's message, kept per thread: threads that share a context
 * each read what their own call left (see error.c). */
typedef struct thread_message {
    struct thread_message *next;
    /* whose slot it is (error.c: thread_tag): NULL for the embedded first
     * slot before a thread claims it; a tag whose thread has ended marks a
     * slot the next new thread takes over */
    struct thread_tag *tag;
    char *long_text; /* malloc'd; a build log can be long */
    char text[CLNZ_MESSAGE_MAX];
    char warning[CLNZ_MESSAGE_MAX]; /* this thread's last warning: shown when no error */
} thread_message;

/* The blocking calls whose densities size the next result (ops/ahead.c). */
#define AHEAD_CALLS 4

/* The calls behind the last one that a call may fall back to waiting on
 * when the ones after them failed (core/chain.c: drop_failed). */
#define CHAIN_OLDER 16

struct clnz_context {
    /* Held by every public call for its whole body (CTX_HOLD); recursive
     * because public calls call each other (channels -> nonzero). */
    pthread_mutex_t lock;
    cl_context cl;
    cl_command_queue queue;         /* what calls enqueue on: the tuner's own while it tunes */
    cl_command_queue callers_queue; /* the context's, never changed: clnz_context_queue */
    cl_device_id device;
    cl_device_type type;
    int is_cpu;
    size_t max_work_group;
    cl_ulong local_mem;
    cl_ulong max_alloc;
    size_t forced_wg, forced_items;
    int debug; /* CLNZ_DEBUG: wait for and log every launch */
    /* a gate (chain_gate) that could not be opened: its commands never
     * run, nor does anything behind them on the queue, so every later call
     * fails with this status instead of waiting forever */
    cl_int queue_lost;

    kernel_entry *kernels; /* built kernels, grown on demand */
    int n_kernels, cap_kernels;

    cl_mem scratch; /* tile counts and scan levels, grown on demand */
    size_t scratch_bytes;
    cl_event last_event; /* the last launch of the previous call: scratch reuse waits on it */
    /* what that call waited on for the scratch, what that one waited on,
     * ..., the newest last (chain_begin's fallbacks when calls failed;
     * none kept below one known complete: chain.c) */
    cl_event older[CHAIN_OLDER];
    int n_older;
    int last_unwaited;   /* CLNZ_DEBUG: that call waited on a caller's event still pending */
    held_list held;      /* calls' events kept until each call's last is done (core/held.c) */

    /* The first thread to record a message uses the embedded slot, so a
     * single-threaded caller never allocates for one; it is also every
     * thread's fallback when a slot cannot be allocated. */
    thread_message first_thread;
    thread_message *other_threads;
    /* Guards the slots' list, not the call: clnz_context_message takes
     * this alone, so a thread reads its message while another thread's
     * call holds the context (waiting on a caller's event, say). */
    pthread_mutex_t msg_lock;

    device_ident id;      /* who the device is: the key of its cache files */
    char *cache_dir;      /* malloc'd; NULL: no cache */
    clnz_launch launch[TUNE_KERNELS];
    clnz_launch_source launch_source[TUNE_KERNELS];
    /* Strategies: the forced one (clnz_context_set_strategy, CLNZ_STRATEGY),
     * and the one the tuning data prefers for inputs of many tiles (AUTO:
     * the device type decides; strategy/choose.c). */
    clnz_strategy forced_strategy;
    clnz_strategy preferred_strategy;
    /* The look-back kernel's build: 64-bit tile states where the device has
     * cl_khr_int64_base_atomics, how long a tile waits on a predecessor
     * before counting it itself, and how many predecessors' states it reads
     * at once. CLNZ_LOOKBACK_ATOMICS=32, CLNZ_LOOKBACK_SPIN=N and
     * CLNZ_LOOKBACK_WINDOW=N override them (tests force every path);
     * CLNZ_LOOKBACK_TEST_SPARSE=k makes tiles publish sparsely (tests);
     * CLNZ_LOOKBACK_SCATTER=staged|direct|hybrid picks how tiles write
     * their entries (LOOKBACK_SCATTER). */
    int lookback_atom64;
    unsigned lookback_spin;
    unsigned lookback_window;
    unsigned lookback_test_sparse;
    unsigned lookback_scatter;
    /* The writing pass's non-temporal stores (kernels/nt_store.cl): -1 the
     * output's size decides (strategy/tiles.c), 0 never, 1 wherever the
     * kernel would (CLNZ_STREAM_STORES=0/1: tests force both). */
    int stream_stores;
    /* count_items built with barriers between runs of steps (COUNT_LOCKSTEP,
     * kernels/count_axes.cl): -1 on a CPU device only, else 0 or 1
     * (CLNZ_COUNT_LOCKSTEP: tests force both). */
    int count_lockstep;
    /* Programs: whether this context may compile (the device has a
     * compiler and CLNZ_NO_COMPILE is not 1; else why not), and the bundle
     * it loads programs from first (clnz_context_use_bundle, CLNZ_BUNDLE). */
    int can_compile;
    const char *no_compile_reason;
    clnz_bundle *bundle;
    int profiling;        /* the tuner times calls: keep their first event */
    cl_event first_event;
    clnz_stats stats;
    /* The densities of the last blocking calls (ops/ahead.c), in 2^-32
     * units, a ring of ahead_calls filled ones whose next slot is
     * ahead_next: how large a result is made before its count. */
    uint64_t ahead_density[AHEAD_CALLS];
    unsigned ahead_calls, ahead_next;
    /* pred_to_keys' last answers: its binary searches over the key range
     * cost about 1 us, as much as the rest of a small call's host code. */
    pred_memo pred_memo[PRED_MEMO_SLOTS];
    unsigned pred_memo_next;
    /* Shape buffers of recent calls: making one is a clCreateBuffer, a
     * fifth of a small call's host time on PoCL. Released with the context. */
    meta_memo meta_memo[META_MEMO_SLOTS];
    unsigned meta_memo_next;
};

clnz_context *ctx_hold(const clnz_context *ctx); /* locks; NULL passes */
void ctx_hold_end(clnz_context **held);
/* The first line of every public call that takes a context: locks it and
 * unlocks on every return (the cleanup attribute of GCC and Clang), so no
 * early return can leave it held. */
#define CTX_HOLD(ctx) \
    clnz_context *ctx_held_ __attribute__((cleanup(ctx_hold_end), unused)) = ctx_hold(ctx)
/* The first line of most public calls: CLNZ_ERROR_FORKED in a child forked
 * after OpenCL was in use (before the lock: a thread of the parent may have
 * held it), CTX_HOLD, a NULL context refused with CLNZ_ERROR_INVALID_ARGUMENT, the last call's message cleared
 * (core/error.h). A declaration and statements, so a function body's first
 * line only. */
#define CTX_ENTER(ctx)                                                                         \
    if (fork_guard_tripped())                                                                  \
        return CLNZ_ERROR_FORKED;                                                              \
    CTX_HOLD(ctx);                                                                             \
    if (!(ctx))                                                                                \
        return CLNZ_ERROR_INVALID_ARGUMENT;                                                    \
    ctx_clear_message(ctx);                                                                    \
    if ((ctx)->queue_lost)                                                                     \
        return ctx_queue_lost(ctx)

#endif
