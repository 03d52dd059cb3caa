/* scan.c: the public exclusive scan of a device buffer (clnz_scan_enqueue),
 * over the multi-level scan the two-pass strategy uses
 * (strategy/scan_levels.c). */
#include "ops/ops.h"

clnz_status clnz_scan_enqueue(clnz_context *ctx, clnz_dtype dtype, cl_mem in_buf,
                              size_t in_offset, cl_mem out_buf, size_t out_offset, uint64_t n,
                              cl_mem total_buf, size_t total_offset, cl_uint num_events,
                              const cl_event *wait_list, cl_event *out_event)
{
    CTX_ENTER(ctx);
    clnz_status st = dtype_check(ctx, dtype);
    if (st)
        return st;
    if (dtype != CLNZ_U32 && dtype != CLNZ_U64)
        return ctx_fail(ctx, CLNZ_ERROR_UNSUPPORTED_DTYPE, "scan takes u32 or u64, not %s",
                        clnz_dtype_name(dtype));
    size_t elem = clnz_dtype_size(dtype);
    st = events_check(ctx, num_events, wait_list);
    if (!st)
        st = buffer_check(ctx, in_buf, "input", in_offset, n, elem);
    if (!st)
        st = buffer_check(ctx, out_buf, "output", out_offset, n, elem);
    if (!st && total_buf)
        st = buffer_check(ctx, total_buf, "total", total_offset, 1, elem);
    if (!st) { /* in place is fine (each tile reads its elements before it writes them), a
                * shifted overlap is not, nor the total over either */
        int in_place = in_buf == out_buf && in_offset == out_offset;
        size_t in_at = in_offset, out_at = out_offset;
        if (!in_place && mem_root(in_buf, &in_at) == mem_root(out_buf, &out_at) &&
            in_at == out_at) /* OpenCL 1.2: a buffer and its sub-buffer in one command */
            return ctx_fail(ctx, CLNZ_ERROR_INVALID_ARGUMENT,
                            "the input and the output are the same bytes through two memory "
                            "objects (a sub-buffer), which OpenCL leaves undefined in one "
                            "command: a scan in place takes the same cl_mem at the same offset");
        mem_span writes[2] = {{out_buf, out_offset, out_offset + n * elem, "output"},
                              {total_buf, total_offset, total_offset + elem, "total"}};
        /* in place, the input is the output, which the total is checked against */
        mem_span read = {in_place ? NULL : in_buf, in_offset, in_offset + n * elem, "input"};
        st = spans_apart(ctx, writes, 2, &read, 1);
    }
    if (st)
        return st;
    scan_kit kit;
    st = scan_kit_make(ctx, dtype == CLNZ_U64, &kit);
    if (!st)
        st = plan_scratch(ctx, scan_scratch_elems(&kit, n) * elem);
    if (st)
        return st;
    chain ch;
    chain_begin(&ch, ctx, num_events, wait_list);
    st = scan_run(&ch, &kit, in_buf, in_offset / elem, out_buf, out_offset / elem, n, total_buf,
                  total_offset / elem, 0);
    return chain_end(&ch, st, out_event);
}
