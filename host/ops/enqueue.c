/* enqueue.c: the device-resident entry points: nonzero, count and mask on
 * caller buffers. They check everything first, then enqueue the stages
 * (nz_stages.c) as one event chain and return without blocking. */
#include "ops/ops.h"
#include "core/context.h"
#include "core/error.h"
#include "core/program.h"
#include "core/tensor.h"
#include "core/predicate.h"
#include "core/chain.h"
#include "tune/tune.h"

#include <stdio.h>

/* Where logical element 0 sits in the caller's buffer, and the shape for
 * the kernels. */
static clnz_status bind_input(clnz_context *ctx, const tensor_info *t, cl_mem buf, size_t off,
                              int64_t *base, cl_mem *meta)
{
    clnz_status st = tensor_base(ctx, t, buf, off, base);
    return st ? st : tensor_meta_buffer(ctx, t, meta);
}

clnz_status clnz_nonzero_enqueue(clnz_context *ctx, const clnz_tensor *in, cl_mem in_buf,
                                 size_t in_offset, const clnz_nonzero_options *opts,
                                 cl_mem out_buf, size_t out_offset, uint64_t capacity,
                                 cl_mem count_buf, size_t count_offset, cl_uint num_events,
                                 const cl_event *wait_list, cl_event *out_event)
{
    CTX_HOLD(ctx);
    if (!ctx)
        return CLNZ_ERROR_INVALID_ARGUMENT;
    ctx_clear_message(ctx);
    clnz_nonzero_options defaults;
    const clnz_nonzero_options *o = nz_options_or_defaults(opts, &defaults);
    nz_plan p;
    int width;
    int64_t base;
    cl_mem meta = NULL;
    clnz_status st = events_check(ctx, num_events, wait_list);
    if (!st)
        st = tensor_check(ctx, in, &p.t);
    if (!st)
        st = nz_check_options(ctx, &p.t, o, &width);
    if (st)
        return st;
    size_t ib = index_bytes(o->index_type);
    uint64_t per_entry = o->layout == CLNZ_LAYOUT_FLAT ? 1 : (uint64_t)width;
    if (per_entry && capacity > UINT64_MAX / 8 / per_entry)
        return ctx_fail(ctx, CLNZ_ERROR_INVALID_ARGUMENT, "capacity is absurd");
    if (capacity * per_entry > 0)
        st = buffer_check(ctx, out_buf, "output", out_offset, capacity * per_entry, ib);
    else if (out_offset % ib)
        st = ctx_fail(ctx, CLNZ_ERROR_INVALID_ARGUMENT, "output offset is misaligned");
    if (!st)
        st = buffer_check(ctx, count_buf, "count", count_offset, 1, sizeof(cl_ulong));
    if (!st)
        st = nz_plan_make(ctx, in, &o->pred, 0, &p);
    if (!st)
        st = bind_input(ctx, &p.t, in_buf, in_offset, &base, &meta);
    if (st)
        return st;
    chain ch;
    chain_begin(&ch, ctx, num_events, wait_list);
    uint64_t count_off = count_offset / sizeof(cl_ulong);
    if (p.tiles == 1) { /* one tile: one launch counts and writes */
        st = nz_enqueue_single(&ch, &p, in_buf, base, meta, o, width, out_buf, out_offset / ib,
                               capacity, count_buf, count_off);
    } else {
        st = nz_enqueue_count(&ch, &p, in_buf, base, meta, count_buf, count_off);
        if (!st)
            st = nz_enqueue_write(&ch, &p, in_buf, base, meta, o, width, out_buf,
                                  out_offset / ib, capacity);
    }
    if (!st && o->has_size)
        st = nz_enqueue_fill(&ch, o, width, out_buf, out_offset / ib, capacity, count_buf,
                             count_off);
    st = chain_end(&ch, st, out_event);
    clReleaseMemObject(meta); /* freed once the kernels using it are done */
    return st;
}

clnz_status clnz_count_enqueue(clnz_context *ctx, const clnz_tensor *in, cl_mem in_buf,
                               size_t in_offset, const clnz_predicate *pred, cl_mem count_buf,
                               size_t count_offset, cl_uint num_events, const cl_event *wait_list,
                               cl_event *out_event)
{
    CTX_HOLD(ctx);
    if (!ctx)
        return CLNZ_ERROR_INVALID_ARGUMENT;
    ctx_clear_message(ctx);
    nz_plan p;
    int64_t base;
    cl_mem meta = NULL;
    clnz_status st = events_check(ctx, num_events, wait_list);
    if (!st)
        st = buffer_check(ctx, count_buf, "count", count_offset, 1, sizeof(cl_ulong));
    if (!st)
        st = nz_plan_make(ctx, in, pred, 0, &p);
    if (!st)
        st = bind_input(ctx, &p.t, in_buf, in_offset, &base, &meta);
    if (st)
        return st;
    chain ch;
    chain_begin(&ch, ctx, num_events, wait_list);
    st = nz_enqueue_count(&ch, &p, in_buf, base, meta, count_buf,
                          count_offset / sizeof(cl_ulong));
    st = chain_end(&ch, st, out_event);
    clReleaseMemObject(meta);
    return st;
}

clnz_status clnz_mask_enqueue(clnz_context *ctx, const clnz_tensor *in, cl_mem in_buf,
                              size_t in_offset, const clnz_predicate *pred, clnz_dtype mask_dtype,
                              cl_mem mask_buf, size_t mask_offset, cl_uint num_events,
                              const cl_event *wait_list, cl_event *out_event)
{
    CTX_HOLD(ctx);
    if (!ctx)
        return CLNZ_ERROR_INVALID_ARGUMENT;
    ctx_clear_message(ctx);
    if (mask_dtype != CLNZ_U8 && mask_dtype != CLNZ_BOOL && mask_dtype != CLNZ_U32)
        return ctx_fail(ctx, CLNZ_ERROR_UNSUPPORTED_DTYPE, "a mask is u8, bool or u32");
    cl_int out_bytes = (cl_int)clnz_dtype_size(mask_dtype);
    tensor_info t;
    pred_keys keys;
    int64_t base;
    cl_mem meta = NULL;
    cl_kernel k;
    clnz_status st = events_check(ctx, num_events, wait_list);
    if (!st)
        st = tensor_check(ctx, in, &t);
    if (!st)
        st = pred_to_keys(ctx, t.dtype, pred, &keys);
    if (!st && t.n)
        st = buffer_check(ctx, mask_buf, "mask", mask_offset, t.n, (size_t)out_bytes);
    size_t items = plan_items(ctx, CLNZ_KERNEL_MASK);
    char opts[80];
    element_options(opts, sizeof opts, t.dtype, items, keys.nonzero);
    if (!st)
        st = program_kernel(ctx, "mask", "mask_write", opts, &k);
    launch_cfg cfg;
    if (!st)
        st = plan_launch(ctx, CLNZ_KERNEL_MASK, &k, 1, items, 0, &cfg);
    if (!st)
        st = bind_input(ctx, &t, in_buf, in_offset, &base, &meta);
    if (st)
        return st;
    chain ch;
    chain_begin(&ch, ctx, num_events, wait_list);
    if (t.n) {
        cl_int rank = t.krank, contiguous = t.contiguous;
        cl_long a_base = base;
        cl_ulong n = t.n, out_off = mask_offset / (size_t)out_bytes;
        karg args[] = {KARG(in_buf),  KARG(a_base),  KARG(n),       KARG(rank),
                       KARG(meta),    KARG(contiguous), KARG(keys.lo), KARG(keys.hi),
                       KARG(keys.invert), KARG(mask_buf), KARG(out_off), KARG(out_bytes)};
        uint64_t groups = (t.n + (uint64_t)cfg.wg * items - 1) / ((uint64_t)cfg.wg * items);
        st = set_args(ctx, k, "mask_write", args, 12);
        if (!st)
            st = chain_launch(&ch, k, "mask_write", (size_t)groups * cfg.wg, cfg.wg);
    }
    st = chain_end(&ch, st, out_event);
    clReleaseMemObject(meta);
    return st;
}
