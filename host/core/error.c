/* error.c: status names and the messages of the calls on a context, one
 * per calling thread. */
#include "core/context.h"

#include <CL/cl_ext.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* CLNZ_MAX_RANK as text, for a status string */
#define RANK_TEXT_(n) #n
#define RANK_TEXT_OF(n) RANK_TEXT_(n)
#define RANK_TEXT RANK_TEXT_OF(CLNZ_MAX_RANK)

const char *clnz_status_string(clnz_status s)
{
    switch (s) {
#define NAME(code, text) \
    case code:           \
        return #code ": " text;
        NAME(CLNZ_SUCCESS, "success")
        NAME(CLNZ_ERROR_INVALID_ARGUMENT, "invalid argument")
        NAME(CLNZ_ERROR_UNSUPPORTED_DTYPE, "unsupported element type")
        NAME(CLNZ_ERROR_INDEX_OVERFLOW, "an index does not fit the index type")
        NAME(CLNZ_ERROR_INVALID_WIDTH, "invalid coordinate width (0, or the input's effective "
                                       "rank up to " RANK_TEXT "; flat: 0)")
        NAME(CLNZ_ERROR_OUT_OF_HOST_MEMORY, "out of host memory")
        NAME(CLNZ_ERROR_NO_DEVICE, "no OpenCL device found")
        NAME(CLNZ_ERROR_INVALID_DEVICE, "no such device")
        NAME(CLNZ_ERROR_TOO_LARGE, "larger than the device allows")
        NAME(CLNZ_ERROR_KERNEL_SOURCE, "kernel source not found")
        NAME(CLNZ_ERROR_INVALID_VALUE, "value out of range")
        NAME(CLNZ_ERROR_SHAPE_MISMATCH, "shapes do not match or broadcast")
        NAME(CLNZ_ERROR_DTYPE_MISMATCH, "dtypes differ")
        NAME(CLNZ_ERROR_UNSUPPORTED_STRATEGY, "the strategy cannot serve the call")
        NAME(CLNZ_ERROR_PROGRAM_UNAVAILABLE, "a program is in no bundle and cannot be compiled")
        NAME(CLNZ_ERROR_BUNDLE_REFUSED, "the program bundle is malformed or for another device")
        NAME(CLNZ_ERROR_FORKED, "a child forked after OpenCL was in use: OpenCL calls would hang")
        NAME(CLNZ_ERROR_CACHE_FILE, "a file in the cache folder could not be removed")
        NAME(CL_PLATFORM_NOT_FOUND_KHR, "no OpenCL platform (the ICD loader loaded none)")
        NAME(CL_DEVICE_NOT_FOUND, "device not found")
        NAME(CL_DEVICE_NOT_AVAILABLE, "device not available")
        NAME(CL_COMPILER_NOT_AVAILABLE, "compiler not available")
        NAME(CL_MEM_OBJECT_ALLOCATION_FAILURE, "device memory allocation failed")
        NAME(CL_OUT_OF_RESOURCES, "out of device resources")
        NAME(CL_OUT_OF_HOST_MEMORY, "OpenCL runtime out of host memory")
        NAME(CL_PROFILING_INFO_NOT_AVAILABLE, "profiling info not available")
        NAME(CL_MEM_COPY_OVERLAP, "overlapping copy")
        NAME(CL_BUILD_PROGRAM_FAILURE, "kernel build failed")
        NAME(CL_MAP_FAILURE, "map failed")
        NAME(CL_MISALIGNED_SUB_BUFFER_OFFSET, "misaligned sub-buffer offset")
        NAME(CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST, "an event in the wait list failed")
        NAME(CL_INVALID_VALUE, "invalid value")
        NAME(CL_INVALID_DEVICE_TYPE, "invalid device type")
        NAME(CL_INVALID_PLATFORM, "invalid platform")
        NAME(CL_INVALID_DEVICE, "invalid device")
        NAME(CL_INVALID_CONTEXT, "invalid context")
        NAME(CL_INVALID_QUEUE_PROPERTIES, "invalid queue properties")
        NAME(CL_INVALID_COMMAND_QUEUE, "invalid command queue")
        NAME(CL_INVALID_MEM_OBJECT, "invalid memory object")
        NAME(CL_INVALID_BINARY, "invalid binary")
        NAME(CL_INVALID_BUILD_OPTIONS, "invalid build options")
        NAME(CL_INVALID_PROGRAM, "invalid program")
        NAME(CL_INVALID_PROGRAM_EXECUTABLE, "invalid program executable")
        NAME(CL_INVALID_KERNEL_NAME, "invalid kernel name")
        NAME(CL_INVALID_KERNEL, "invalid kernel")
        NAME(CL_INVALID_ARG_INDEX, "invalid kernel argument index")
        NAME(CL_INVALID_ARG_VALUE, "invalid kernel argument value")
        NAME(CL_INVALID_ARG_SIZE, "invalid kernel argument size")
        NAME(CL_INVALID_KERNEL_ARGS, "kernel arguments not set")
        NAME(CL_INVALID_WORK_DIMENSION, "invalid work dimension")
        NAME(CL_INVALID_WORK_GROUP_SIZE, "invalid work-group size")
        NAME(CL_INVALID_WORK_ITEM_SIZE, "invalid work-item size")
        NAME(CL_INVALID_GLOBAL_OFFSET, "invalid global offset")
        NAME(CL_INVALID_EVENT_WAIT_LIST, "invalid event wait list")
        NAME(CL_INVALID_EVENT, "invalid event")
        NAME(CL_INVALID_OPERATION, "invalid operation")
        NAME(CL_INVALID_BUFFER_SIZE, "invalid buffer size")
        NAME(CL_INVALID_GLOBAL_WORK_SIZE, "invalid global work size")
        /* the rest of OpenCL 1.2's codes: a caller's status passes through
         * clnz unchanged (an image of a format the device lacks, say) */
        NAME(CL_IMAGE_FORMAT_MISMATCH, "image formats differ")
        NAME(CL_IMAGE_FORMAT_NOT_SUPPORTED, "image format not supported")
        NAME(CL_COMPILE_PROGRAM_FAILURE, "program compilation failed")
        NAME(CL_LINKER_NOT_AVAILABLE, "linker not available")
        NAME(CL_LINK_PROGRAM_FAILURE, "program linking failed")
        NAME(CL_DEVICE_PARTITION_FAILED, "device partition failed")
        NAME(CL_KERNEL_ARG_INFO_NOT_AVAILABLE, "kernel argument info not available")
        NAME(CL_INVALID_HOST_PTR, "invalid host pointer")
        NAME(CL_INVALID_IMAGE_FORMAT_DESCRIPTOR, "invalid image format descriptor")
        NAME(CL_INVALID_IMAGE_SIZE, "invalid image size")
        NAME(CL_INVALID_SAMPLER, "invalid sampler")
        NAME(CL_INVALID_KERNEL_DEFINITION, "invalid kernel definition")
        NAME(CL_INVALID_GL_OBJECT, "invalid GL object")
        NAME(CL_INVALID_MIP_LEVEL, "invalid mip level")
        NAME(CL_INVALID_PROPERTY, "invalid property")
        NAME(CL_INVALID_IMAGE_DESCRIPTOR, "invalid image descriptor")
        NAME(CL_INVALID_COMPILER_OPTIONS, "invalid compiler options")
        NAME(CL_INVALID_LINKER_OPTIONS, "invalid linker options")
        NAME(CL_INVALID_DEVICE_PARTITION_COUNT, "invalid device partition count")
#undef NAME
    /* OpenCL 2.x's, which clnz.h's 1.2 headers do not define */
    case -69:
        return "CL_INVALID_PIPE_SIZE: invalid pipe size";
    case -70:
        return "CL_INVALID_DEVICE_QUEUE: invalid device queue";
    case -71:
        return "CL_INVALID_SPEC_ID: invalid specialization constant id";
    case -72:
        return "CL_MAX_SIZE_RESTRICTION_EXCEEDED: a size restriction exceeded";
    default:
        return "unknown status";
    }
}

/* A thread's identity for its message slots: one per thread, alive until
 * the thread ends (a pthread key's destructor), freed when no slot holds it
 * any more. A pthread_t would not do: a new thread may be given an ended
 * one's. */
typedef struct thread_tag {
    int alive; /* __atomic */
    int refs;  /* __atomic: the thread's own, and each slot's */
} thread_tag;

/* The key's destructor is this library's code: it is linked -z nodelete
 * (Makefile), so that a dlclose never unmaps it under a thread that ends
 * later. */
static pthread_key_t tag_key;
static pthread_once_t tag_once = PTHREAD_ONCE_INIT;
static int tag_key_made;
static _Thread_local thread_tag *my_tag;

static void tag_drop(thread_tag *t)
{
    if (t && __atomic_sub_fetch(&t->refs, 1, __ATOMIC_ACQ_REL) == 0)
        free(t);
}

/* A key destructor that runs after this one may still call clnz: the
 * thread then gets a new tag (and this destructor runs again for it). */
static void tag_thread_ended(void *t)
{
    my_tag = NULL;
    __atomic_store_n(&((thread_tag *)t)->alive, 0, __ATOMIC_RELEASE);
    tag_drop(t);
}

static void tag_key_make(void)
{
    tag_key_made = pthread_key_create(&tag_key, tag_thread_ended) == 0;
}

/* The calling thread's tag, or NULL (no memory, no key). */
static thread_tag *thread_tag_get(void)
{
    if (my_tag)
        return my_tag;
    pthread_once(&tag_once, tag_key_make);
    thread_tag *t = malloc(sizeof *t);
    if (!t)
        return NULL;
    *t = (thread_tag){1, 1};
    if (!tag_key_made || pthread_setspecific(tag_key, t) != 0) {
        free(t);
        return NULL;
    }
    return my_tag = t;
}

/* A thread's slot when it cannot have one of the context's (no memory):
 * its own, never another thread's, with the last context that used it. */
static _Thread_local thread_message spare_slot;
static _Thread_local const clnz_context *spare_ctx;

/* m emptied: no message, no warning. */
static void slot_clear(thread_message *m)
{
    free(m->long_text);
    m->long_text = NULL;
    m->text[0] = m->warning[0] = '\0';
}

static thread_message *spare_for(const clnz_context *ctx)
{
    if (spare_ctx != ctx) {
        slot_clear(&spare_slot);
        spare_ctx = ctx;
    }
    return &spare_slot;
}

/* The slots' list is the context's msg_lock's; a forked child takes no lock
 * (as ctx_hold: a thread of the parent may have held it at the fork). */
static void msg_lock(clnz_context *ctx)
{
    if (!fork_guard_tripped())
        pthread_mutex_lock(&ctx->msg_lock);
}

static void msg_unlock(clnz_context *ctx)
{
    if (!fork_guard_tripped())
        pthread_mutex_unlock(&ctx->msg_lock);
}

/* m cleared and given to the thread of tag `me` (a reference taken). */
static thread_message *slot_claim(thread_message *m, thread_tag *me)
{
    slot_clear(m);
    tag_drop(m->tag);
    __atomic_add_fetch(&me->refs, 1, __ATOMIC_RELAXED);
    m->tag = me;
    return m;
}

/* The calling thread's slot, or NULL if it has none and `create` is 0.
 * Called with msg_lock held. A slot of a thread that has ended is cleared
 * and taken over by the next new thread: the slots stay about as many as
 * the threads that use the context at once. */
static thread_message *thread_slot(clnz_context *ctx, int create)
{
    thread_tag *me = thread_tag_get();
    if (!me) /* out of memory */
        return create ? spare_for(ctx) : spare_ctx == ctx ? &spare_slot : NULL;
    thread_message *m = &ctx->first_thread, *ended = NULL;
    for (thread_message *o = m->tag ? m : ctx->other_threads; o;
         o = o == m ? ctx->other_threads : o->next) {
        if (o->tag == me)
            return o;
        if (!ended && !__atomic_load_n(&o->tag->alive, __ATOMIC_ACQUIRE))
            ended = o;
    }
    if (!create)
        return spare_ctx == ctx ? &spare_slot : NULL; /* where memory ran out before */
    if (ended)
        return slot_claim(ended, me);
    if (!m->tag)
        return slot_claim(m, me);
    thread_message *o = calloc(1, sizeof *o);
    if (!o)
        return spare_for(ctx); /* out of memory: this thread's own, not another's */
    o->next = ctx->other_threads;
    ctx->other_threads = o;
    return slot_claim(o, me);
}

void ctx_clear_message(clnz_context *ctx)
{
    if (!ctx)
        return;
    msg_lock(ctx);
    thread_message *m = thread_slot(ctx, 0);
    if (m) {
        free(m->long_text);
        m->long_text = NULL;
        m->text[0] = '\0';
    }
    msg_unlock(ctx);
}

/* The calling thread's slot with its long text gone; msg_lock held. */
static thread_message *fresh_slot(clnz_context *ctx)
{
    thread_message *m = thread_slot(ctx, 1);
    free(m->long_text);
    m->long_text = NULL;
    return m;
}

clnz_status ctx_fail(clnz_context *ctx, clnz_status status, const char *fmt, ...)
{
    if (!ctx)
        return status;
    msg_lock(ctx);
    thread_message *m = fresh_slot(ctx);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(m->text, sizeof m->text, fmt, ap);
    va_end(ap);
    msg_unlock(ctx);
    return status;
}

clnz_status ctx_cl(clnz_context *ctx, cl_int err, const char *what, const char *file, int line)
{
    if (err == CL_SUCCESS)
        return CLNZ_SUCCESS;
    const char *name = clnz_status_string(err);
    size_t len = strcspn(name, ":");
    return ctx_fail(ctx, err, "%s failed: %.*s (%s:%d)", what, (int)len, name, file, line);
}

/* For texts that can be long, such as a kernel build log. */
void ctx_set_long_message(clnz_context *ctx, const char *head, const char *body)
{
    msg_lock(ctx);
    thread_message *m = fresh_slot(ctx);
    size_t n = strlen(head) + strlen(body) + 2;
    m->long_text = malloc(n);
    snprintf(m->text, sizeof m->text, "%s", head);
    if (m->long_text)
        snprintf(m->long_text, n, "%s\n%s", head, body);
    msg_unlock(ctx);
}

/* The warning is the calling thread's, as its errors are: another thread's
 * call on the context never shows it. A new one is added on a line of its
 * own, after the ones before it (the latest alone where both do not fit):
 * one warning replacing another hid the first (a tuning result not stored
 * behind a program cache not written). The command line shows each line
 * once, at the end; the Python module once per line. */
void ctx_warn(clnz_context *ctx, const char *fmt, ...)
{
    char line[sizeof ctx->first_thread.warning];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    msg_lock(ctx);
    thread_message *m = thread_slot(ctx, 1);
    size_t have = strlen(m->warning), add = strlen(line);
    int there = 0; /* this very line is there already */
    for (const char *at = m->warning; !there && (at = strstr(at, line)) != NULL; at += add)
        there = (at == m->warning || at[-1] == '\n') && (at[add] == '\0' || at[add] == '\n');
    if (there) {
    } else if (have && have + 1 + add < sizeof m->warning) {
        m->warning[have] = '\n';
        memcpy(m->warning + have + 1, line, add + 1);
    } else {
        memcpy(m->warning, line, add + 1);
    }
    msg_unlock(ctx);
}

void ctx_free_messages(clnz_context *ctx)
{
    free(ctx->first_thread.long_text);
    tag_drop(ctx->first_thread.tag);
    for (thread_message *o = ctx->other_threads, *next; o; o = next) {
        next = o->next;
        free(o->long_text);
        tag_drop(o->tag);
        free(o);
    }
}

/* The calling thread's message: it stays valid until this thread's next
 * call on the context; after a success, its warning if it has one. */
const char *clnz_context_message(const clnz_context *cctx)
{
    if (!cctx)
        return "";
    if (fork_guard_tripped()) /* every call failed with CLNZ_ERROR_FORKED, before any lock */
        return FORK_MESSAGE;
    /* msg_lock alone, never the call's lock: what the slot holds only this
     * thread's calls write, and the slot stays where it is */
    clnz_context *ctx = (clnz_context *)cctx;
    msg_lock(ctx);
    thread_message *m = thread_slot(ctx, 0);
    const char *text = !m ? "" : m->long_text ? m->long_text : m->text[0] ? m->text : m->warning;
    msg_unlock(ctx);
    return text;
}

clnz_status ctx_queue_lost(clnz_context *ctx)
{
    return ctx_fail(ctx, ctx->queue_lost,
                    "the context's queue holds commands that can never run (a call's user event "
                    "could not be set: %s): release the context and make another",
                    clnz_status_string(ctx->queue_lost));
}
