/* batched.c: nonzero over a batch of items in one call, as CSR (offsets per
 * item, then the items' coordinates). It is the fused pipeline over the
 * whole batch: the count pass and the scan as for nonzero, one small kernel
 * that reads each item's offset out of what they left (nz_batch_offsets),
 * and the writing pass with the width of an item, so that the batch
 * coordinate is not written. */
#include "ops/ops.h"
#include "core/context.h"
#include "core/error.h"
#include "core/transfer.h"

#include <stdlib.h>
#include <string.h>

/* Checks the options against one item (shape[1:]); *item_opts is what the
 * writing pass runs with, *width the coordinates per entry. */
static clnz_status batch_check(clnz_context *ctx, const tensor_info *t,
                               const clnz_nonzero_options *o, clnz_nonzero_options *item_opts,
                               int *width)
{
    if (t->rank < 1)
        return ctx_fail(ctx, CLNZ_ERROR_INVALID_ARGUMENT,
                        "batched nonzero needs rank >= 1: dimension 0 is the batch");
    if (o->layout != CLNZ_LAYOUT_ROWS)
        return ctx_fail(ctx, CLNZ_ERROR_INVALID_ARGUMENT, "batched nonzero writes rows only");
    if (o->has_size)
        return ctx_fail(ctx, CLNZ_ERROR_INVALID_ARGUMENT,
                        "batched nonzero has no static size (each item has its own count)");
    if (o->width != 0 && o->width != t->rank - 1)
        return ctx_fail(ctx, CLNZ_ERROR_INVALID_WIDTH,
                        "batched nonzero writes the %d coordinates of an item (width %d asked)",
                        t->rank - 1, o->width);
    tensor_info item = *t; /* what the option checks read: rank, shape, n */
    item.rank = t->rank - 1;
    memmove(item.shape, t->shape + 1, sizeof(int64_t) * (size_t)item.rank);
    item.n = t->shape[0] ? t->n / (uint64_t)t->shape[0] : 0;
    *item_opts = *o;
    item_opts->width = item.rank;
    /* *width is then item.rank: dimensions 1 .. rank-1 of the input */
    return nz_check_options(ctx, &item, item_opts, width);
}

clnz_status clnz_nonzero_batched_enqueue(clnz_context *ctx, const clnz_tensor *in, cl_mem in_buf,
                                         size_t in_offset, const clnz_nonzero_options *opts,
                                         cl_mem out_buf, size_t out_offset, uint64_t capacity,
                                         cl_mem offsets_buf, size_t offsets_offset,
                                         cl_uint num_events, const cl_event *wait_list,
                                         cl_event *out_event)
{
    CTX_HOLD(ctx);
    if (!ctx)
        return CLNZ_ERROR_INVALID_ARGUMENT;
    ctx_clear_message(ctx);
    clnz_nonzero_options defaults, o;
    nz_plan p;
    int width;
    int64_t base;
    cl_mem meta = NULL;
    clnz_status st = events_check(ctx, num_events, wait_list);
    if (!st)
        st = tensor_check(ctx, in, &p.t);
    if (!st)
        st = batch_check(ctx, &p.t, nz_options_or_defaults(opts, &defaults), &o, &width);
    if (st)
        return st;
    uint64_t batches = (uint64_t)p.t.shape[0];
    size_t ib = index_bytes(o.index_type);
    if (width && capacity > UINT64_MAX / 8 / (uint64_t)width)
        return ctx_fail(ctx, CLNZ_ERROR_INVALID_ARGUMENT, "capacity is absurd");
    if (capacity * (uint64_t)width > 0)
        st = buffer_check(ctx, out_buf, "output", out_offset, capacity * (uint64_t)width, ib);
    else if (out_offset % ib)
        st = ctx_fail(ctx, CLNZ_ERROR_INVALID_ARGUMENT, "output offset is misaligned");
    if (!st)
        st = buffer_check(ctx, offsets_buf, "offsets", offsets_offset, batches + 1,
                          sizeof(cl_long));
    if (!st)
        st = nz_plan_make(ctx, in, &o.pred, 0, &p);
    if (!st)
        st = tensor_base(ctx, &p.t, in_buf, in_offset, &base);
    if (!st)
        st = tensor_meta_buffer(ctx, &p.t, &meta);
    if (st)
        return st;
    chain ch;
    chain_begin(&ch, ctx, num_events, wait_list);
    uint64_t off = offsets_offset / sizeof(cl_long);
    st = nz_enqueue_count(&ch, &p, in_buf, base, meta, offsets_buf, off + batches);
    if (!st)
        st = nz_enqueue_batch_offsets(&ch, &p, in_buf, base, meta, batches, offsets_buf, off);
    if (!st)
        st = nz_enqueue_write(&ch, &p, in_buf, base, meta, &o, width, out_buf, out_offset / ib,
                              capacity);
    st = chain_end(&ch, st, out_event);
    clReleaseMemObject(meta);
    return st;
}

/* The batched call on an input that fits one allocation (batched_sliced
 * decides): one upload, the count pass with per-item offsets, one write. */
clnz_status batched_direct(clnz_context *ctx, const clnz_tensor *in, const void *data,
                           const clnz_nonzero_options *opts, int width, clnz_result *res,
                           clnz_array *offsets)
{
    clnz_nonzero_options o = *opts;
    clnz_status st = CLNZ_SUCCESS;
    uint64_t batches = (uint64_t)in->shape[0];
    size_t ib = index_bytes(o.index_type);
    host_run r;
    cl_mem offb = NULL, outb = NULL;
    int64_t *offs = malloc((size_t)(batches + 1) * sizeof *offs);
    void *host = NULL;
    if (!offs)
        return ctx_fail(ctx, CLNZ_ERROR_OUT_OF_HOST_MEMORY, "cannot allocate the offsets");
    TRY(host_run_begin(ctx, in, data, &o.pred, 0, &r));
    cl_int e = CL_SUCCESS;
    offb = clCreateBuffer(ctx->cl, CL_MEM_READ_WRITE, (size_t)(batches + 1) * sizeof(cl_long),
                          NULL, &e);
    TRY(CL_CHECK(ctx, e, "clCreateBuffer(offsets)"));
    TRY(nz_enqueue_count(&r.ch, &r.p, r.inb, r.base, r.meta, offb, batches));
    TRY(nz_enqueue_batch_offsets(&r.ch, &r.p, r.inb, r.base, r.meta, batches, offb, 0));
    TRY(read_back(&r.ch, offb, (size_t)(batches + 1) * sizeof *offs, offs));
    r.z = (uint64_t)offs[batches];
    if (width && r.z > ctx->max_alloc / ib / (uint64_t)width)
        TRY(ctx_fail(ctx, CLNZ_ERROR_TOO_LARGE,
                     "the output (%llu entries) exceeds the device's largest allocation",
                     (unsigned long long)r.z));
    size_t bytes = (size_t)(r.z * (uint64_t)width * ib);
    TRY(result_alloc(ctx, bytes, &host, &outb));
    if (bytes) {
        TRY(nz_enqueue_write(&r.ch, &r.p, r.inb, r.base, r.meta, &o, width, outb, 0, r.z));
        TRY(fetch_result(&r.ch, outb, bytes, host, ctx->is_cpu));
    }
    res->indices = host;
    host = NULL;
    res->ndim = 2;
    res->shape[0] = (int64_t)r.z;
    res->shape[1] = width;
    res->count = (int64_t)r.z;
    res->index_type = o.index_type;
    offsets->data = offs;
    offs = NULL;
    offsets->dtype = CLNZ_I64;
    offsets->rank = 1;
    offsets->shape[0] = (int64_t)(batches + 1);
done:
    st = host_run_end(&r, st);
    if (offb)
        clReleaseMemObject(offb);
    if (outb)
        clReleaseMemObject(outb);
    free(host);
    free(offs);
    return st;
}

clnz_status clnz_nonzero_batched(clnz_context *ctx, const clnz_tensor *in, const void *data,
                                 const clnz_nonzero_options *opts, clnz_result *res,
                                 clnz_array *offsets)
{
    CTX_HOLD(ctx);
    if (!ctx)
        return CLNZ_ERROR_INVALID_ARGUMENT;
    clnz_status st = nz_result_start(ctx, res);
    if (st)
        return st;
    if (!offsets)
        return ctx_fail(ctx, CLNZ_ERROR_INVALID_ARGUMENT, "offsets is NULL");
    memset(offsets, 0, sizeof *offsets);
    clnz_nonzero_options defaults, o;
    tensor_info t;
    int width;
    st = tensor_check(ctx, in, &t);
    if (!st)
        st = batch_check(ctx, &t, nz_options_or_defaults(opts, &defaults), &o, &width);
    if (st)
        return st;
    return batched_sliced(ctx, in, data, &o, width, res, offsets);
}
