/* transfer.c: moving host arrays to the device and results back, for the
 * blocking calls (the ops layer). On a CPU device nothing is
 * copied: buffers use the host memory where it lies. */
#include "core/transfer.h"
#include "core/context.h"
#include "core/error.h"
#include "core/tensor.h"
#include "core/chain.h"
#include "core/result_mem.h"

#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* A read-only device copy of the bytes the view reaches; *base is the
 * element offset of logical element 0 in it. */
clnz_status upload(clnz_context *ctx, const tensor_info *t, const void *data, cl_mem *buf,
                          int64_t *base)
{
    uint64_t elems = t->n ? (uint64_t)(t->max_off - t->min_off) + 1 : 0;
    uint64_t bytes = elems * t->elem;
    if (t->n && !data)
        return ctx_fail(ctx, CLNZ_ERROR_INVALID_ARGUMENT, "data is NULL");
    if (bytes > ctx->max_alloc)
        return ctx_fail(ctx, CLNZ_ERROR_TOO_LARGE,
                        "the input's %llu bytes exceed the device's largest allocation (%llu)",
                        (unsigned long long)bytes, (unsigned long long)ctx->max_alloc);
    cl_int e = CL_SUCCESS;
    if (bytes == 0) {
        *buf = clCreateBuffer(ctx->cl, CL_MEM_READ_ONLY, 64, NULL, &e);
        *base = 0;
    } else {
        const char *start = (const char *)data + t->min_off * (int64_t)t->elem;
        /* A CPU device reads host memory where it lies: no copy. Kernels only
         * read the input, so the const is kept in fact. */
        cl_mem_flags how = ctx->is_cpu ? CL_MEM_USE_HOST_PTR : CL_MEM_COPY_HOST_PTR;
        *buf = clCreateBuffer(ctx->cl, CL_MEM_READ_ONLY | how, (size_t)bytes, (void *)start, &e);
        *base = -t->min_off;
    }
    return CL_CHECK(ctx, e, "clCreateBuffer(input)");
}

/* Waits for n commands of ours and releases their events. Never clFinish,
 * which waits for every command of the queue (the caller's too, when the
 * queue is the caller's), and never a blocking enqueue: PoCL runs one as
 * the command and a clFinish. The flush makes sure the command starts. */
static cl_int wait_own_n(cl_command_queue q, cl_uint n, cl_event *evs)
{
    cl_int e = clFlush(q);
    cl_int w = clWaitForEvents(n, evs);
    for (cl_uint i = 0; i < n; ++i)
        clReleaseEvent(evs[i]);
    return e ? e : w;
}

static cl_int wait_own(cl_command_queue q, cl_event ev) { return wait_own_n(q, 1, &ev); }

/* Before a wait of a call whose commands are held (chain_gate): lets them
 * go. Where that fails they never run: the n events to be waited for are
 * released, nothing may wait, and the status is returned (its message is
 * set). An error return needs no opening: chain_end opens before it waits. */
static cl_int open_before_wait(chain *ch, cl_uint n, cl_event *evs)
{
    cl_int lost = chain_open(ch);
    for (cl_uint i = 0; lost && i < n; ++i)
        clReleaseEvent(evs[i]);
    return lost;
}

/* The read enqueued, a chain's held commands let go, then the wait. */
static clnz_status read_opened(clnz_context *ctx, chain *ch, cl_mem buf, size_t offset,
                               size_t bytes, void *dst, cl_uint n_wait, const cl_event *wait)
{
    cl_event done = NULL;
    cl_int e = clEnqueueReadBuffer(ctx->queue, buf, CL_FALSE, offset, bytes, dst, n_wait, wait,
                                   &done);
    cl_int lost = ch && !e ? open_before_wait(ch, 1, &done) : CL_SUCCESS;
    if (lost)
        return lost;
    if (!e)
        e = wait_own(ctx->queue, done);
    if (ctx->debug) /* CLNZ_DEBUG: the user asked for a log on stderr */
        fprintf(stderr, "clnz-debug: host read of %zu bytes\n", bytes);
    return CL_CHECK(ctx, e, "clEnqueueReadBuffer");
}

clnz_status read_after(clnz_context *ctx, cl_mem buf, size_t offset, size_t bytes, void *dst,
                       cl_uint n_wait, const cl_event *wait)
{
    return read_opened(ctx, NULL, buf, offset, bytes, dst, n_wait, wait);
}

clnz_status read_back(chain *ch, cl_mem buf, size_t bytes, void *dst)
{
    return read_back_at(ch, buf, 0, bytes, dst);
}

clnz_status read_back_at(chain *ch, cl_mem buf, size_t offset, size_t bytes, void *dst)
{
    cl_event wbuf[2];
    const cl_event *list;
    cl_uint n = chain_wait_list(ch, wbuf, 2, &list);
    return read_opened(ch->ctx, ch, buf, offset, bytes, dst, n, list);
}

/* The result's bytes on the host. A CPU device wrote them in place (the
 * buffer uses the host memory); mapping makes that visible by the book.
 * The map and the unmap are waited for through their own events (see
 * wait_own), together where the map is in place, and a mapping is undone
 * whatever fails after it. */
clnz_status fetch_result(chain *ch, cl_mem buf, size_t bytes, void *dst, int in_place)
{
    if (!in_place)
        return read_back(ch, buf, bytes, dst);
    cl_command_queue q = ch->ctx->queue;
    cl_event wbuf[2], ev = NULL;
    const cl_event *list;
    cl_uint n = chain_wait_list(ch, wbuf, 2, &list);
    cl_int e = CL_SUCCESS;
    void *p = clEnqueueMapBuffer(q, buf, CL_FALSE, CL_MAP_READ, 0, bytes, n, list, &ev, &e);
    if (ch->ctx->debug)
        fprintf(stderr, "clnz-debug: host read of %zu bytes (mapped in place)\n", bytes);
    if (e)
        return CL_CHECK(ch->ctx, e, "clEnqueueMapBuffer(result)");
    if (p == dst) {
        /* mapped in place, nothing to copy: the unmap goes right behind the
         * map (after its event: the caller's queue may run out of order) and
         * one wait covers both, a host round trip less (about 6 us of a
         * blocking call on PoCL). Where the unmap cannot be enqueued, the
         * steps below wait for the map and try it again. */
        cl_event unmapped = NULL;
        cl_int u = clEnqueueUnmapMemObject(q, buf, p, 1, &ev, &unmapped);
        cl_event both[2] = {ev, unmapped}; /* queued behind the held commands */
        cl_int lost = open_before_wait(ch, u == CL_SUCCESS ? 2 : 1, both);
        if (lost)
            return lost;
        if (u == CL_SUCCESS)
            return CL_CHECK(ch->ctx, wait_own_n(q, 2, both), "clEnqueueMapBuffer(result)");
    }
    cl_int lost = open_before_wait(ch, 1, &ev);
    if (lost) { /* the map never runs: undone, and neither waited for */
        if (clEnqueueUnmapMemObject(q, buf, p, 0, NULL, &ev) == CL_SUCCESS)
            clReleaseEvent(ev);
        return lost;
    }
    e = wait_own(q, ev);
    if (!e && p != dst) /* a driver that mapped a copy after all */
        memcpy(dst, p, bytes);
    clnz_status st = e ? CL_CHECK(ch->ctx, e, "clEnqueueMapBuffer(result)") : CLNZ_SUCCESS;
    cl_int u = clEnqueueUnmapMemObject(q, buf, p, 0, NULL, &ev);
    if (u) /* a buffer left mapped is never freed, nor its context with it: once more */
        u = clEnqueueUnmapMemObject(q, buf, p, 0, NULL, &ev);
    if (!u)
        u = wait_own(q, ev);
    if (st) /* the first failure is the one to report */
        return st;
    return CL_CHECK(ch->ctx, u, "clEnqueueUnmapMemObject(result)");
}

clnz_status fetch_result_counted(chain *ch, cl_mem buf, size_t bytes, void *dst, int in_place,
                                 cl_mem count_buf, size_t count_off, uint64_t *count)
{
    clnz_context *ctx = ch->ctx;
    cl_event wbuf[2], ev = NULL;
    const cl_event *list;
    cl_uint n = chain_wait_list(ch, wbuf, 2, &list);
    cl_ulong z = 0;
    cl_int e = clEnqueueReadBuffer(ctx->queue, count_buf, CL_FALSE, count_off, sizeof z, &z, n,
                                   list, &ev);
    if (e)
        return CL_CHECK(ctx, e, "clEnqueueReadBuffer(count)");
    clnz_status st = fetch_result(ch, buf, bytes, dst, in_place);
    cl_int lost = open_before_wait(ch, 1, &ev); /* fetch_result's, unless it failed first */
    if (lost)
        return st ? st : lost;
    e = wait_own(ctx->queue, ev); /* whatever failed: z must not be written after return */
    if (ctx->debug)
        fprintf(stderr, "clnz-debug: host read of %zu bytes\n", sizeof z);
    *count = z;
    return st ? st : CL_CHECK(ctx, e, "clEnqueueReadBuffer(count)");
}

clnz_status result_alloc(clnz_context *ctx, size_t bytes, void **host, cl_mem *buf, int *fresh)
{
    int new_pages;
    *buf = NULL;
    *host = alloc_result_fresh(bytes, &new_pages);
    if (fresh)
        *fresh = ctx->is_cpu && new_pages;
    if (!*host)
        return ctx_fail(ctx, CLNZ_ERROR_OUT_OF_HOST_MEMORY, "cannot allocate %zu bytes", bytes);
    if (!bytes)
        return CLNZ_SUCCESS;
    cl_int e = CL_SUCCESS;
    /* a CPU device writes the result where it will be returned */
    cl_mem_flags how = ctx->is_cpu ? CL_MEM_USE_HOST_PTR : 0;
    *buf = clCreateBuffer(ctx->cl, CL_MEM_WRITE_ONLY | how, bytes, ctx->is_cpu ? *host : NULL,
                          &e);
    return CL_CHECK(ctx, e, "clCreateBuffer(output)");
}
