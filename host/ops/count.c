/* count.c: the number of selected elements, device-resident (the count
 * lands in a device buffer, no host sync) and blocking. */
#include "ops/ops.h"
#include "slices/slices.h"

clnz_status clnz_count_enqueue(clnz_context *ctx, const clnz_tensor *in, cl_mem in_buf,
                               size_t in_offset, const clnz_predicate *pred, cl_mem count_buf,
                               size_t count_offset, cl_uint num_events,
                               const cl_event *wait_list, cl_event *out_event)
{
    CTX_ENTER(ctx);
    tensor_info t;
    nz_job job = {0};
    clnz_status st = events_check(ctx, num_events, wait_list);
    if (!st)
        st = buffer_check(ctx, count_buf, "count", count_offset, 1, sizeof(cl_ulong));
    if (!st)
        st = tensor_check(ctx, in, &t);
    if (!st)
        tensor_memory_order(&t); /* a count reads in any order */
    if (!st)
        st = job_on_buffer(ctx, &job, &t, pred, in_buf, in_offset);
    if (st) {
        job_release(&job);
        return st;
    }
    job.emit = ABI_EMIT_COUNT;
    job.count = count_buf;
    job.count_off = count_offset / sizeof(cl_ulong);
    st = job_apart(ctx, &job);
    if (st) {
        job_release(&job);
        return st;
    }
    chain ch;
    chain_begin(&ch, ctx, num_events, wait_list);
    const strategy *s;
    st = strategy_choose(ctx, &job, &s);
    if (!st)
        st = s->count(&ch, &job);
    st = chain_end(&ch, st, out_event);
    job_release(&job);
    return st;
}

clnz_status count_direct(clnz_context *ctx, const tensor_info *t, const void *data,
                         const clnz_predicate *pred, int64_t *count)
{
    host_job h;
    tensor_info m = *t;
    tensor_memory_order(&m); /* a count reads in any order */
    clnz_status st = job_init(ctx, &h.job, &m, pred);
    if (st)
        return st;
    h.job.emit = ABI_EMIT_COUNT;
    st = host_job_begin(ctx, &h, data);
    if (!st)
        st = host_job_count(&h, NULL);
    if (!st)
        *count = (int64_t)h.z;
    return host_job_end(&h, st);
}

typedef struct {
    const clnz_predicate *pred;
    int64_t total;
} count_sum;

static clnz_status count_slice(clnz_context *ctx, void *user, const view *s, const box *at)
{
    (void)at;
    count_sum *c = user;
    clnz_tensor t = view_tensor(&s[0]);
    tensor_info ti;
    int64_t z = 0;
    clnz_status st = tensor_check(ctx, &t, &ti);
    if (!st)
        st = count_direct(ctx, &ti, s[0].data, c->pred, &z);
    c->total += z;
    return st;
}

clnz_status clnz_count(clnz_context *ctx, const clnz_tensor *in, const void *data,
                       const clnz_predicate *pred, int64_t *count)
{
    CTX_ENTER(ctx);
    if (!count)
        return ctx_fail(ctx, CLNZ_ERROR_INVALID_ARGUMENT, "count is NULL");
    tensor_info t;
    view v;
    int fits;
    clnz_status st = host_view(ctx, in, data, &t, &v, &fits);
    if (st)
        return st;
    if (fits) {
        st = count_direct(ctx, &t, data, pred, count);
        if (st != CLNZ_ERROR_TOO_LARGE)
            return st;
        /* more elements than the span has bytes (a broadcast view): the
         * counting pass's scratch grows with them, and did not fit */
        ctx_clear_message(ctx);
    }
    count_sum c = {pred, 0};
    /* a slice's elements are bounded too (1 a byte of budget: no cut a
     * dense view does not make anyway), for its scratch; after a view that
     * fitted whole, half of it at once */
    slicing s = {&v, 1, fits ? ctx->max_alloc / 2 : ctx->max_alloc, 1, 0};
    st = slices_each(ctx, &s, count_slice, &c);
    if (!st)
        *count = c.total;
    return st;
}
