/* chain.c: enqueueing a call's commands as one chain of events.
 *
 * Each command waits on the one before it, and a call's first command waits
 * on the caller's wait list and on the previous call's last command (which
 * may still use the scratch buffer), so clnz is correct on out-of-order
 * queues too. */
#include "core/chain.h"
#include "core/context.h"
#include "core/error.h"
#include "core/held.h"
#include "core/program.h"

#include <stdio.h>
#include <string.h>

/* CLNZ_DEBUG waits for each launch, but only where that cannot hang: a
 * call that waits on a caller's event not yet complete (a user event the
 * caller sets after this call returns, say) is left to run as it would
 * without the flag, and so is the next call while that one is pending. */
static int debug_may_wait(const clnz_context *ctx, cl_uint n_wait, const cl_event *wait)
{
    if (!ctx->debug)
        return 0;
    for (cl_uint i = 0; i < n_wait; ++i)
        if (!event_done(wait[i]))
            return 0;
    return !(ctx->last_unwaited && ctx->last_event && !event_done(ctx->last_event));
}

/* A previous call whose commands failed (a caller's event in its wait list
 * failed, say) has ended: nothing of it runs any more, so the next call
 * must not wait on it. A command whose wait list holds a failed event
 * fails too (the spec), or never runs (PoCL 3.1): either way every later
 * call on the context would fail or hang. Its commands failed at once,
 * though, maybe while the call before it still ran (an out-of-order
 * queue): the next call waits on what that one waited on instead, or, if
 * that failed too (a call enqueued behind the failed one fails with it),
 * on what that one waited on, and so on down ctx->older. */
static void drop_failed(clnz_context *ctx)
{
    while (ctx->last_event && event_status(ctx->last_event) < 0) {
        clReleaseEvent(ctx->last_event);
        ctx->last_event = ctx->n_older ? ctx->older[--ctx->n_older] : NULL;
    }
}

/* The call just ended waited on ctx->last_event: that goes on the stack of
 * fallbacks. A call whose commands completed ran after everything it
 * waited on, so nothing below an event known complete is needed any more
 * (which keeps the stack short: it grows only while calls are pending).
 * Full, the oldest goes (more than CHAIN_OLDER pending calls failing in a
 * row then leave the next one behind nothing older). */
static void older_push(clnz_context *ctx, cl_event waited_on)
{
    if (!waited_on)
        return;
    if (ctx->n_older == CHAIN_OLDER) { /* it may be pending yet: held till done */
        held_release(&ctx->held, ctx->older[0]);
        memmove(ctx->older, ctx->older + 1, (CHAIN_OLDER - 1) * sizeof ctx->older[0]);
        --ctx->n_older;
    }
    ctx->older[ctx->n_older++] = waited_on;
    int keep = ctx->n_older - 1; /* from the newest down: the first complete one */
    while (keep > 0 && event_status(ctx->older[keep]) != CL_COMPLETE)
        --keep;
    if (keep > 0) {
        for (int i = 0; i < keep; ++i)
            clReleaseEvent(ctx->older[i]);
        memmove(ctx->older, ctx->older + keep,
                (size_t)(ctx->n_older - keep) * sizeof ctx->older[0]);
        ctx->n_older -= keep;
    }
}

/* For a call that waits for its own commands: the previous call's are
 * waited for first, while none of this call's is chained behind them. A
 * previous call may wait on a caller's event that fails while this call
 * runs (set from another thread): chained behind it, this call's commands
 * would fail too, though nothing of theirs went wrong. Waited for first,
 * a failed predecessor is known before chain_begin, which drops it, and
 * the call runs. The cost is small: such a call waited for its
 * predecessor anyway, through its chain; only the enqueueing (and the
 * upload) no longer overlaps that call's last commands. */
void chain_settle(clnz_context *ctx)
{
    /* a previous call that failed already waits for nothing, but one below
     * it may still be pending: chained behind that one, this call would
     * fail with it */
    drop_failed(ctx);
    while (ctx->last_event && !event_done(ctx->last_event)) {
        clFlush(ctx->queue); /* the previous call may have left them unflushed */
        clWaitForEvents(1, &ctx->last_event);
        drop_failed(ctx);
    }
}

void chain_forget(clnz_context *ctx)
{
    /* pending yet (behind a caller's event, the context released), later
     * calls' commands waiting on them: held till done (core/held.c) */
    for (int i = 0; i < ctx->n_older; ++i)
        held_release(&ctx->held, ctx->older[i]);
    if (ctx->last_event)
        held_release(&ctx->held, ctx->last_event);
    ctx->last_event = NULL;
    ctx->n_older = 0;
    held_orphan(&ctx->held);
}

void chain_begin_own(chain *ch, clnz_context *ctx)
{
    chain_settle(ctx);
    chain_begin(ch, ctx, 0, NULL);
    chain_gate(ch);
}

void chain_begin(chain *ch, clnz_context *ctx, cl_uint n_wait, const cl_event *wait)
{
    drop_failed(ctx);
    held_sweep(&ctx->held);
    ch->ctx = ctx;
    ch->n_wait = n_wait;
    ch->wait = wait;
    ch->last = NULL;
    ch->debug_wait = debug_may_wait(ctx, n_wait, wait);
    ch->gate = NULL;
    ch->held_from = ctx->held.n;
}

/* Why a gate: on PoCL's CPU device the worker threads start a kernel as
 * soon as it is enqueued, and on two cores they then take the cores from
 * the host thread that is still enqueueing the call's next commands (the
 * read of its result); that command comes late and the workers have gone
 * to sleep by then. Held behind a user event until the host waits, the
 * commands run back to back. f32 4096 at 10 %, blocking nonzero taking
 * turns with the device-resident call, the median of 5 processes' medians:
 * 152 us without the gate, 63 with it (the device-resident call 35-70 us
 * in both; README, Performance). */
void chain_gate(chain *ch)
{
    clnz_context *ctx = ch->ctx;
    /* never under CLNZ_DEBUG, whose wait after each launch (chain_launch)
     * would meet it */
    if (!ctx->is_cpu || ctx->debug || ch->n_wait || ch->last)
        return;
    cl_int e = CL_SUCCESS;
    cl_event g = clCreateUserEvent(ctx->cl, &e);
    if (!e)
        ch->gate = g; /* else ungated: as fast as before, and as correct */
}

cl_int chain_open(chain *ch)
{
    clnz_context *ctx = ch->ctx;
    if (!ch->gate)
        return ctx->queue_lost;
    /* CL_COMPLETE: a status set once cannot be set again, so a second try
     * is only for a driver that failed the first for want of resources */
    cl_int e = clSetUserEventStatus(ch->gate, CL_COMPLETE);
    if (e)
        e = clSetUserEventStatus(ch->gate, CL_COMPLETE);
    clReleaseEvent(ch->gate);
    ch->gate = NULL;
    if (e) {
        ctx->queue_lost = e;
        ctx_queue_lost(ctx);
    }
    return e;
}

#define MAX_WAIT 64

cl_uint chain_wait_list(chain *ch, cl_event *buf, cl_uint buf_max, const cl_event **list)
{
    if (ch->last) {
        buf[0] = ch->last;
        *list = buf;
        return 1;
    }
    cl_uint n = 0, room = ch->gate ? 2 : 1; /* for the gate and the last event */
    for (cl_uint i = 0; i < ch->n_wait && n + room < buf_max; ++i)
        buf[n++] = ch->wait[i];
    if (ch->gate) /* only without a caller's list (chain_gate): both fit in 2 */
        buf[n++] = ch->gate;
    if (ch->ctx->last_event)
        buf[n++] = ch->ctx->last_event;
    *list = n ? buf : NULL;
    return n;
}

static clnz_status chain_took(chain *ch, cl_event ev)
{
    clnz_context *ctx = ch->ctx;
    if (ctx->profiling && !ch->last) { /* the tuner times from the first command */
        if (ctx->first_event)
            clReleaseEvent(ctx->first_event);
        clRetainEvent(ev);
        ctx->first_event = ev;
    }
    if (ch->last) /* kept until the call's last command is done (core/held.c) */
        held_push(&ctx->held, ch->last);
    ch->last = ev;
    return CLNZ_SUCCESS;
}

clnz_status chain_launch(chain *ch, cl_kernel k, const char *name, size_t global, size_t local)
{
    clnz_context *ctx = ch->ctx;
    cl_event buf[MAX_WAIT]; /* events_check keeps the caller's list shorter */
    const cl_event *list;
    cl_uint n = chain_wait_list(ch, buf, MAX_WAIT, &list);
    cl_event ev = NULL;
    cl_int e = clEnqueueNDRangeKernel(ctx->queue, k, 1, NULL, &global, &local, n, list, &ev);
    if (e) {
        char what[96];
        snprintf(what, sizeof what, "clEnqueueNDRangeKernel(%s, global %zu, local %zu)", name,
                 global, local);
        return CL_CHECK(ctx, e, what);
    }
    if (ctx->debug && !ch->debug_wait) {
        fprintf(stderr, "clnz-debug: %s global %zu local %zu: enqueued, not waited for (it "
                        "waits on a caller's event not yet complete)\n", name, global, local);
    } else if (ctx->debug) {
        /* CLNZ_DEBUG: the user asked for a log on stderr and a wait per launch
         * (for this launch only: the queue may be the caller's) */
        e = clWaitForEvents(1, &ev); /* never held: chain_gate holds nothing then */
        fprintf(stderr, "clnz-debug: %s global %zu local %zu: %s\n", name, global, local,
                clnz_status_string(e));
        if (e) {
            clReleaseEvent(ev);
            return CL_CHECK(ctx, e, "clWaitForEvents");
        }
    }
    return chain_took(ch, ev);
}

clnz_status chain_fill(chain *ch, cl_mem buf, size_t byte_off, uint64_t value, size_t size,
                       uint64_t count)
{
    uint32_t v32 = (uint32_t)value;
    const void *pattern = size == 4 ? (const void *)&v32 : (const void *)&value;
    cl_event wbuf[MAX_WAIT];
    const cl_event *list;
    cl_uint n = chain_wait_list(ch, wbuf, MAX_WAIT, &list);
    cl_event ev = NULL;
    cl_int e = clEnqueueFillBuffer(ch->ctx->queue, buf, pattern, size, byte_off,
                                   (size_t)(size * count), n, list, &ev);
    if (e)
        return CL_CHECK(ch->ctx, e, "clEnqueueFillBuffer");
    return chain_took(ch, ev);
}

clnz_status chain_copy(chain *ch, cl_mem src, size_t src_off, cl_mem dst, size_t dst_off,
                       size_t bytes)
{
    cl_event wbuf[MAX_WAIT];
    const cl_event *list;
    cl_uint n = chain_wait_list(ch, wbuf, MAX_WAIT, &list);
    cl_event ev = NULL;
    cl_int e = clEnqueueCopyBuffer(ch->ctx->queue, src, dst, src_off, dst_off, bytes, n, list, &ev);
    if (e)
        return CL_CHECK(ch->ctx, e, "clEnqueueCopyBuffer");
    return chain_took(ch, ev);
}

clnz_status chain_copy_image(chain *ch, cl_mem image, const size_t *origin, const size_t *region,
                             cl_mem buf)
{
    cl_event wbuf[MAX_WAIT];
    const cl_event *list;
    cl_uint n = chain_wait_list(ch, wbuf, MAX_WAIT, &list);
    size_t org[3] = {origin[0], origin[1], 0}, reg[3] = {region[0], region[1], 1};
    cl_event ev = NULL;
    cl_int e = clEnqueueCopyImageToBuffer(ch->ctx->queue, image, buf, org, reg, 0, n, list, &ev);
    if (e)
        return CL_CHECK(ch->ctx, e, "clEnqueueCopyImageToBuffer");
    return chain_took(ch, ev);
}

clnz_status chain_end(chain *ch, clnz_status st, cl_event *out_event)
{
    clnz_context *ctx = ch->ctx;
    /* whatever failed: the held commands run, and may be waited for */
    cl_int lost = chain_open(ch);
    if (lost) { /* they never will: nothing waits for them (ctx->queue_lost) */
        held_end_call(&ctx->held, ch->held_from, NULL);
        if (ch->last)
            clReleaseEvent(ch->last);
        ch->last = NULL;
        return st ? st : lost;
    }
    if (st == CLNZ_SUCCESS && !ch->last) {
        /* nothing was enqueued: a marker still gives the caller an event */
        cl_event buf[MAX_WAIT];
        const cl_event *list;
        cl_uint n = chain_wait_list(ch, buf, MAX_WAIT, &list);
        cl_int e = clEnqueueMarkerWithWaitList(ctx->queue, n, list, &ch->last);
        if (e)
            st = CL_CHECK(ctx, e, "clEnqueueMarkerWithWaitList");
    }
    /* this call's group closed before older_push may hold an older event */
    held_end_call(&ctx->held, ch->held_from, ch->last);
    if (st == CLNZ_SUCCESS) {
        older_push(ctx, ctx->last_event); /* what this call's first command waited on */
        ctx->last_event = ch->last;
        ctx->last_unwaited = ctx->debug && !ch->debug_wait;
        if (out_event) {
            clRetainEvent(ch->last);
            *out_event = ch->last;
        }
    } else if (ch->last) {
        /* commands already enqueued still run; wait so that nothing we free
         * afterwards is in use, and keep the scratch ordering intact */
        clWaitForEvents(1, &ch->last);
    }
    held_sweep(&ctx->held);
    if (st && ch->last)
        clReleaseEvent(ch->last);
    ch->last = NULL;
    return st;
}

clnz_status set_args(clnz_context *ctx, cl_kernel k, const char *name, const karg *args, int n)
{
    for (int i = 0; i < n; ++i) {
        cl_int e = clSetKernelArg(k, (cl_uint)i, args[i].size, args[i].ptr);
        if (e) {
            char what[96];
            snprintf(what, sizeof what, "clSetKernelArg(%s, %d)", name, i);
            return CL_CHECK(ctx, e, what);
        }
    }
    return CLNZ_SUCCESS;
}

clnz_status events_check(clnz_context *ctx, cl_uint n, const cl_event *list)
{
    if (n && !list)
        return ctx_fail(ctx, CLNZ_ERROR_INVALID_ARGUMENT, "num_events > 0 with no wait list");
    if (n >= MAX_WAIT)
        return ctx_fail(ctx, CLNZ_ERROR_INVALID_ARGUMENT, "more than %d events to wait on",
                        MAX_WAIT - 1);
    for (cl_uint i = 0; i < n; ++i) { /* some drivers take a NULL; others crash on it */
        if (!list[i])
            return ctx_fail(ctx, CLNZ_ERROR_INVALID_ARGUMENT, "wait_list[%u] is NULL", i);
        /* what the call would wait on has failed: so would the call (or, on
         * PoCL 3.1, it would never run, and a blocking call would hang) */
        cl_int s = event_status(list[i]);
        if (s < 0) {
            char what[64];
            snprintf(what, sizeof what, "wait_list[%u] failed (status %d)", i, (int)s);
            return CL_CHECK(ctx, CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST, what);
        }
    }
    return CLNZ_SUCCESS;
}

/* One work-item per output slot or item: 64 to a group, or what the
 * kernel allows. A forced launch shape's work-group (clnz_context_set_launch)
 * holds here too, clamped to the kernel's limit, so that the tests that force
 * each shape run these kernels under each of them as well. */
clnz_status small_local(clnz_context *ctx, cl_kernel k, size_t *local)
{
    size_t kmax = 0;
    clnz_status st = program_kernel_wg_limit(ctx, k, &kmax);
    size_t want = ctx->forced_wg ? ctx->forced_wg : 64;
    *local = kmax < want ? kmax : want;
    if (!*local) /* a failed query's: a division by it follows */
        *local = 1;
    return st;
}
