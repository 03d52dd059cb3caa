/* exact.c: results of exactly the count's size on the device, what the
 * *_alloc calls share. A job runs the way a blocking call runs its larger
 * results (blocking.c): the count, one read of it, a buffer of exactly
 * that many entries, then the writing pass, which may reuse what the
 * counting left (strategy.h: write(..., counted)). The difference is that
 * the result stays on the device: the 8 bytes of the count are the one
 * host read, and the call returns once the writing is enqueued. */
#include "ops/ops.h"
#include "core/transfer.h"

void exact_clear(cl_mem *out_buf, uint64_t *count)
{
    if (out_buf)
        *out_buf = NULL;
    if (count)
        *count = 0;
}

clnz_status exact_outputs(clnz_context *ctx, cl_mem *out_buf, uint64_t *count)
{
    if (!out_buf || !count)
        return ctx_fail(ctx, CLNZ_ERROR_INVALID_ARGUMENT, "%s is NULL",
                        out_buf ? "count" : "out_buf");
    return CLNZ_SUCCESS;
}

clnz_status exact_count_buffer(clnz_context *ctx, nz_job *job, cl_mem count_buf,
                               size_t count_offset, cl_mem *owned)
{
    *owned = NULL;
    if (count_buf) {
        job->count = count_buf;
        job->count_off = count_offset / sizeof(cl_ulong);
        return buffer_check(ctx, count_buf, "count", count_offset, 1, sizeof(cl_ulong));
    }
    job->count_off = 0;
    clnz_status st = rw_buffer(ctx, sizeof(cl_ulong), owned, "clCreateBuffer(count)");
    job->count = *owned;
    return st;
}

clnz_status job_run_exact(clnz_context *ctx, nz_job *job, const exact_entries *e,
                          cl_uint n_wait, const cl_event *wait, cl_mem *out_buf,
                          uint64_t *count, cl_event *out_event)
{
    /* a static size too large is known before anything runs: count_buf
     * stays untouched (a result too large for its count is only known
     * once counted, and count_buf then holds that count) */
    clnz_status st = job_apart(ctx, job); /* its count against its input (out is new) */
    if (!st && e->fixed != UINT64_MAX)
        st = result_fits(ctx, e->fixed, e->entry_bytes);
    if (st)
        return st;
    const strategy *s;
    chain ch;
    chain_settle(ctx); /* the call waits for its own count */
    /* a caller's event may have failed while it settled: checked again, as
     * at the call's start (a command enqueued behind a failed event never
     * runs on PoCL 3.1: the count's read would wait for ever) */
    st = events_check(ctx, n_wait, wait);
    if (st)
        return st;
    chain_begin(&ch, ctx, n_wait, wait);
    cl_ulong z = 0;
    st = strategy_choose(ctx, job, &s);
    if (!st)
        st = s->count(&ch, job);
    cl_mem staged = NULL; /* a caller's count the host may not read, copied */
    if (!st)
        st = count_staged(&ch, job->count, (size_t)job->count_off * sizeof z,
                          CL_MEM_HOST_NO_ACCESS | CL_MEM_HOST_WRITE_ONLY, &staged);
    if (!st)
        st = read_back_at(&ch, staged ? staged : job->count,
                          staged ? 0 : (size_t)job->count_off * sizeof z, sizeof z, &z);
    if (staged)
        clReleaseMemObject(staged);
    uint64_t entries = e->fixed != UINT64_MAX ? e->fixed : z;
    if (!st && e->fixed == UINT64_MAX) /* a static size was checked above */
        st = result_fits(ctx, entries, e->entry_bytes);
    if (!st && entries && e->entry_bytes) {
        st = rw_buffer(ctx, (size_t)(entries * e->entry_bytes), out_buf,
                       "clCreateBuffer(result)");
        job->out = *out_buf;
        job->out_off = 0;
        job->capacity = entries;
        job->out_fresh = ctx->is_cpu; /* a new buffer: on a CPU, new pages */
        if (!st)
            st = s->write(&ch, job, 1);
        if (!st && e->has_fill)
            st = job_fill(&ch, job, e->fill);
    }
    st = chain_end(&ch, st, out_event); /* on failure, waits for what was enqueued */
    if (st && *out_buf) {
        clReleaseMemObject(*out_buf);
        *out_buf = NULL;
    }
    *count = st ? 0 : z;
    return st;
}
