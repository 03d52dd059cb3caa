/* mask.c: the predicate of every element as 0/1 in C order
 * (clnz_mask_enqueue, kernels/mask.cl), for callers who want the mask
 * itself: an element-wise map, one launch, no strategy to choose. */
#include "ops/ops.h"
#include "core/predicate.h"
#include "core/program.h"
#include "tune/tune.h"

void mask_program(clnz_dtype d, int pred_nonzero, program_ref *r)
{
    program_element(r, "mask", d, pred_nonzero);
}

clnz_status clnz_mask_enqueue(clnz_context *ctx, const clnz_tensor *in, cl_mem in_buf,
                              size_t in_offset, const clnz_predicate *pred, clnz_dtype mask_dtype,
                              cl_mem mask_buf, size_t mask_offset, cl_uint num_events,
                              const cl_event *wait_list, cl_event *out_event)
{
    CTX_ENTER(ctx);
    clnz_status st = dtype_check(ctx, mask_dtype);
    if (st)
        return st;
    if (mask_dtype != CLNZ_U8 && mask_dtype != CLNZ_BOOL && mask_dtype != CLNZ_U32)
        return ctx_fail(ctx, CLNZ_ERROR_UNSUPPORTED_DTYPE, "a mask is u8, bool or u32");
    cl_int out_bytes = (cl_int)clnz_dtype_size(mask_dtype);
    tensor_info t;
    pred_keys keys;
    int64_t base;
    cl_mem meta = NULL;
    cl_kernel k;
    st = events_check(ctx, num_events, wait_list);
    if (!st)
        st = tensor_check(ctx, in, &t);
    if (!st)
        st = pred_to_keys(ctx, t.dtype, pred, &keys);
    if (!st && t.n)
        st = buffer_check(ctx, mask_buf, "mask", mask_offset, t.n, (size_t)out_bytes);
    size_t items = plan_items(ctx, TUNE_MASK);
    program_ref prog;
    if (!st)
        mask_program(t.dtype, keys.nonzero, &prog);
    if (!st)
        st = program_kernel(ctx, &prog, "mask_write", &k);
    launch_cfg cfg;
    if (!st)
        st = plan_launch(ctx, TUNE_MASK, &k, 1, items, 0, &cfg);
    if (!st)
        st = tensor_base(ctx, &t, in_buf, in_offset, "input", &base);
    if (!st) {
        mem_span in_span = tensor_span(in_buf, &t, base, "input"),
                 out_span = {mask_buf, mask_offset, mask_offset + t.n * (uint64_t)out_bytes,
                             "mask"};
        st = spans_apart(ctx, &out_span, 1, &in_span, 1);
    }
    if (!st)
        st = tensor_meta_buffer(ctx, &t, &meta);
    if (st)
        return st;
    chain ch;
    chain_begin(&ch, ctx, num_events, wait_list);
    if (t.n) {
        cl_int rank = t.krank, contiguous = t.contiguous;
        cl_long a_base = base;
        cl_ulong n = t.n, out_off = mask_offset / (size_t)out_bytes;
        cl_uint a_items = (cl_uint)items;
        karg args[] = {KARG(in_buf),  KARG(a_base),  KARG(n),       KARG(rank),
                       KARG(meta),    KARG(contiguous), KARG(keys.lo), KARG(keys.hi),
                       KARG(keys.invert), KARG(mask_buf), KARG(out_off), KARG(out_bytes),
                       KARG(a_items)};
        uint64_t groups = (t.n + (uint64_t)cfg.wg * items - 1) / ((uint64_t)cfg.wg * items);
        st = set_args(ctx, k, "mask_write", args, (int)(sizeof args / sizeof args[0]));
        if (!st)
            st = chain_launch(&ch, k, "mask_write", (size_t)groups * cfg.wg, cfg.wg);
    }
    st = chain_end(&ch, st, out_event);
    clReleaseMemObject(meta);
    return st;
}
