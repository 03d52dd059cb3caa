/* select.c: x[mask], the values of x where a predicate holds on a mask of
 * x's shape (or on x itself), device-resident and blocking. The counting
 * pass and the scan are nonzero's (nz_stages.c); the writing pass is
 * select.cl's sel_write, which copies values instead of coordinates. */
#include "ops/ops.h"
#include "core/context.h"
#include "core/error.h"
#include "core/transfer.h"

#include <stdlib.h>
#include <string.h>

void clnz_array_free(clnz_array *a)
{
    if (!a)
        return;
    free(a->data);
    a->data = NULL;
}

/* The mask must have x's shape exactly: select does not broadcast (numpy's
 * x[mask] does not either). */
clnz_status select_same_shape(clnz_context *ctx, const tensor_info *x, const tensor_info *m)
{
    int same = x->rank == m->rank;
    for (int d = 0; same && d < x->rank; ++d)
        same = x->shape[d] == m->shape[d];
    if (same)
        return CLNZ_SUCCESS;
    char xs[200], ms[200];
    shape_text(x->rank, x->shape, xs, sizeof xs);
    shape_text(m->rank, m->shape, ms, sizeof ms);
    return ctx_fail(ctx, CLNZ_ERROR_SHAPE_MISMATCH, "the mask's shape %s differs from x's %s", ms,
                    xs);
}

/* Checks x and the mask and plans on the mask (x when there is none). */
static clnz_status select_plan(clnz_context *ctx, const clnz_tensor *x, const clnz_tensor *mask,
                               const clnz_predicate *pred, tensor_info *xi, nz_plan *p)
{
    clnz_predicate nonzero = clnz_pred_nonzero();
    clnz_status st = tensor_check(ctx, x, xi);
    if (!st)
        st = nz_plan_make(ctx, mask ? mask : x, pred ? pred : &nonzero, xi->elem, p);
    if (!st && mask)
        st = select_same_shape(ctx, xi, &p->t);
    return st;
}

clnz_status clnz_select_enqueue(clnz_context *ctx, const clnz_tensor *x, cl_mem x_buf,
                                size_t x_offset, const clnz_tensor *mask, cl_mem mask_buf,
                                size_t mask_offset, const clnz_predicate *pred, cl_mem out_buf,
                                size_t out_offset, uint64_t capacity, cl_mem count_buf,
                                size_t count_offset, cl_uint num_events,
                                const cl_event *wait_list, cl_event *out_event)
{
    CTX_HOLD(ctx);
    if (!ctx)
        return CLNZ_ERROR_INVALID_ARGUMENT;
    ctx_clear_message(ctx);
    tensor_info xi;
    nz_plan p;
    sel_values v = {x_buf, 0, NULL, 0};
    int64_t mbase = 0;
    cl_mem mmeta = NULL;
    if (!mask)
        mask_buf = x_buf, mask_offset = x_offset;
    clnz_status st = events_check(ctx, num_events, wait_list);
    if (!st)
        st = select_plan(ctx, x, mask, pred, &xi, &p);
    if (st)
        return st;
    if (capacity > UINT64_MAX / 8)
        return ctx_fail(ctx, CLNZ_ERROR_INVALID_ARGUMENT, "capacity is absurd");
    if (capacity > 0)
        st = buffer_check(ctx, out_buf, "output", out_offset, capacity, xi.elem);
    else if (out_offset % xi.elem)
        st = ctx_fail(ctx, CLNZ_ERROR_INVALID_ARGUMENT, "output offset is misaligned");
    if (!st)
        st = buffer_check(ctx, count_buf, "count", count_offset, 1, sizeof(cl_ulong));
    if (!st)
        st = tensor_base(ctx, &xi, x_buf, x_offset, &v.base);
    if (!st)
        st = tensor_base(ctx, &p.t, mask_buf, mask_offset, &mbase);
    if (!st)
        st = tensor_meta_buffer(ctx, &xi, &v.meta);
    if (!st)
        st = tensor_meta_buffer(ctx, &p.t, &mmeta);
    if (st)
        goto done;
    v.contiguous = xi.contiguous;
    chain ch;
    chain_begin(&ch, ctx, num_events, wait_list);
    uint64_t count_off = count_offset / sizeof(cl_ulong), out_off = out_offset / xi.elem;
    if (p.tiles == 1) { /* one tile: one launch counts and writes */
        st = sel_enqueue_write(&ch, &p, mask_buf, mbase, mmeta, &v,
                               capacity ? out_buf : ctx->scratch, out_off, capacity, count_buf,
                               count_off, 1);
    } else {
        st = nz_enqueue_count(&ch, &p, mask_buf, mbase, mmeta, count_buf, count_off);
        if (!st)
            st = sel_enqueue_write(&ch, &p, mask_buf, mbase, mmeta, &v, out_buf, out_off,
                                   capacity, ctx->scratch, 0, 0);
    }
    st = chain_end(&ch, st, out_event);
done:
    if (v.meta)
        clReleaseMemObject(v.meta);
    if (mmeta)
        clReleaseMemObject(mmeta);
    return st;
}

clnz_status select_direct(clnz_context *ctx, const clnz_tensor *x, const void *x_data,
                          const clnz_tensor *mask, const void *mask_data,
                          const clnz_predicate *pred, clnz_array *out)
{
    clnz_predicate nonzero = clnz_pred_nonzero();
    tensor_info xi;
    sel_values v = {NULL, 0, NULL, 0};
    cl_mem outb = NULL;
    void *host = NULL;
    host_run r; /* the counting half runs on the mask (x when there is none) */
    clnz_status st = tensor_check(ctx, x, &xi);
    if (st)
        return st;
    TRY(host_run_begin(ctx, mask ? mask : x, mask ? mask_data : x_data, pred ? pred : &nonzero,
                       xi.elem, &r));
    if (mask) {
        TRY(select_same_shape(ctx, &xi, &r.p.t));
        TRY(upload(ctx, &xi, x_data, &v.buf, &v.base));
        TRY(tensor_meta_buffer(ctx, &xi, &v.meta));
        v.contiguous = xi.contiguous;
    } else {
        v = (sel_values){r.inb, r.base, r.meta, r.p.t.contiguous};
    }
    TRY(host_run_counted(&r));
    size_t bytes = (size_t)r.z * xi.elem;
    TRY(result_alloc(ctx, bytes, &host, &outb));
    if (bytes) {
        TRY(sel_enqueue_write(&r.ch, &r.p, r.inb, r.base, r.meta, &v, outb, 0, r.z,
                              ctx->scratch, 0, 0));
        TRY(fetch_result(&r.ch, outb, bytes, host, ctx->is_cpu));
    }
    out->data = host;
    host = NULL;
    out->dtype = xi.dtype;
    out->rank = 1;
    out->shape[0] = (int64_t)r.z;
done:
    st = host_run_end(&r, st);
    if (mask && v.buf)
        clReleaseMemObject(v.buf);
    if (mask && v.meta)
        clReleaseMemObject(v.meta);
    if (outb)
        clReleaseMemObject(outb);
    free(host);
    return st;
}
