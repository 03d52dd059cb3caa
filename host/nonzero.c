/* nonzero.c: the device-resident entry points (nonzero, count, mask) and the
 * stages of the fused nonzero pipeline: count per tile, scan, write, fill. */
#include "internal.h"

#include <stdio.h>
#include <string.h>

size_t index_bytes(clnz_index_type t) { return t == CLNZ_INDEX_INT64 ? 8 : 4; }

void clnz_nonzero_options_init(clnz_nonzero_options *o)
{
    if (!o)
        return;
    memset(o, 0, sizeof *o);
    o->pred = clnz_pred_nonzero();
    o->layout = CLNZ_LAYOUT_ROWS;
    o->index_type = CLNZ_INDEX_INT64;
    o->fill = -1;
}

int clnz_nonzero_width(const clnz_nonzero_options *o, int rank)
{
    if (o && o->layout == CLNZ_LAYOUT_FLAT)
        return 1;
    if (o && o->width)
        return o->width;
    return (o && o->layout == CLNZ_LAYOUT_COLUMNS && rank == 0) ? 1 : rank;
}

clnz_status nz_check_options(clnz_context *ctx, const tensor_info *t,
                             const clnz_nonzero_options *o, int *width)
{
    if ((unsigned)o->layout > CLNZ_LAYOUT_FLAT)
        return ctx_fail(ctx, CLNZ_ERROR_INVALID_ARGUMENT, "unknown layout %d", (int)o->layout);
    if ((unsigned)o->index_type > CLNZ_INDEX_UINT32)
        return ctx_fail(ctx, CLNZ_ERROR_INVALID_ARGUMENT, "unknown index type %d",
                        (int)o->index_type);
    if (o->width < 0 || o->width > CLNZ_MAX_RANK)
        return ctx_fail(ctx, CLNZ_ERROR_INVALID_WIDTH, "width %d is outside 0..%d", o->width,
                        CLNZ_MAX_RANK);
    int effective = t->rank;
    for (int d = 0; d < t->rank && t->shape[d] == 1; ++d)
        --effective;
    *width = clnz_nonzero_width(o, t->rank);
    if (o->layout != CLNZ_LAYOUT_FLAT && *width < effective)
        return ctx_fail(ctx, CLNZ_ERROR_INVALID_WIDTH,
                        "width %d is below the effective rank %d of the input (rank %d without "
                        "its leading size-1 dimensions)",
                        *width, effective, t->rank);
    static const char *const names[] = {"int64", "int32", "uint32"};
    uint64_t max = o->index_type == CLNZ_INDEX_INT64   ? INT64_MAX
                   : o->index_type == CLNZ_INDEX_INT32 ? INT32_MAX
                                                       : UINT32_MAX;
    if (o->layout == CLNZ_LAYOUT_FLAT) {
        if (t->n > 0 && t->n - 1 > max)
            return ctx_fail(ctx, CLNZ_ERROR_INDEX_OVERFLOW,
                            "flat indices up to %llu do not fit %s",
                            (unsigned long long)(t->n - 1), names[o->index_type]);
    } else {
        for (int d = 0; d < t->rank; ++d)
            if (t->shape[d] > 0 && (uint64_t)t->shape[d] - 1 > max)
                return ctx_fail(ctx, CLNZ_ERROR_INDEX_OVERFLOW,
                                "dimension %d of extent %lld has indices that do not fit %s", d,
                                (long long)t->shape[d], names[o->index_type]);
    }
    if (o->has_size && o->size < 0)
        return ctx_fail(ctx, CLNZ_ERROR_INVALID_ARGUMENT, "size %lld is negative",
                        (long long)o->size);
    int64_t fmin = o->index_type == CLNZ_INDEX_INT64   ? INT64_MIN
                   : o->index_type == CLNZ_INDEX_INT32 ? INT32_MIN
                                                       : -1; /* -1 is 4294967295 */
    int64_t fmax = o->index_type == CLNZ_INDEX_INT64   ? INT64_MAX
                   : o->index_type == CLNZ_INDEX_INT32 ? INT32_MAX
                                                       : UINT32_MAX;
    if (o->fill < fmin || o->fill > fmax)
        return ctx_fail(ctx, CLNZ_ERROR_INVALID_VALUE, "fill value %lld does not fit %s",
                        (long long)o->fill, names[o->index_type]);
    return CLNZ_SUCCESS;
}

clnz_status nz_plan_make(clnz_context *ctx, const clnz_tensor *in, const clnz_predicate *pred,
                         nz_plan *plan)
{
    clnz_status st = tensor_check(ctx, in, &plan->t);
    if (!st)
        st = pred_to_keys(ctx, plan->t.dtype, pred, &plan->keys);
    if (st)
        return st;
    char opts[64];
    size_t items = plan_items(ctx, 0);
    snprintf(opts, sizeof opts, "-DCLNZ_DTYPE=%d -DITEMS=%zu", (int)plan->t.dtype, items);
    st = program_kernel(ctx, "nonzero", "nz_count", opts, &plan->count_k);
    if (!st)
        st = program_kernel(ctx, "nonzero", "nz_write", opts, &plan->write_k);
    if (st)
        return st;
    cl_kernel ks[2] = {plan->count_k, plan->write_k};
    st = plan_launch(ctx, ks, 2, items, sizeof(cl_ulong), &plan->cfg);
    if (!st)
        st = scan_kit_make(ctx, 1, &plan->scan);
    if (st)
        return st;
    plan->tiles = plan_tiles(plan->t.n, &plan->cfg);
    /* scratch: one count (then offset) per tile, then the scan's levels */
    uint64_t elems = plan->tiles + scan_scratch_elems(&plan->scan, plan->tiles);
    return plan_scratch(ctx, (size_t)elems * sizeof(cl_ulong));
}

/* The arguments nz_count and nz_write share, in their order. */
typedef struct {
    cl_mem in;
    cl_long base;
    cl_ulong n;
    cl_int rank;
    cl_mem meta;
    cl_int contiguous;
    cl_ulong lo, hi;
    cl_uint invert;
} input_args;

static input_args input_args_of(const nz_plan *p, cl_mem in, int64_t base, cl_mem meta)
{
    input_args a = {in,          base,       p->t.n,       p->t.krank,     meta,
                    p->t.contiguous, p->keys.lo, p->keys.hi, p->keys.invert};
    return a;
}

#define INPUT_KARGS(a)                                                                       \
    KARG((a).in), KARG((a).base), KARG((a).n), KARG((a).rank), KARG((a).meta),              \
        KARG((a).contiguous), KARG((a).lo), KARG((a).hi), KARG((a).invert)

clnz_status nz_enqueue_count(chain *ch, nz_plan *p, cl_mem in, int64_t base, cl_mem meta,
                             cl_mem count_buf, uint64_t count_off)
{
    clnz_context *ctx = ch->ctx;
    if (p->t.n == 0)
        return chain_fill(ch, count_buf, count_off * sizeof(cl_ulong), 0, sizeof(cl_ulong));
    input_args a = input_args_of(p, in, base, meta);
    cl_ulong zero = 0;
    cl_uint p2 = p->cfg.p2;
    karg args[] = {INPUT_KARGS(a), KARG(ctx->scratch), KARG(zero), KARG(p2),
                   KLOCAL(p2 * sizeof(cl_ulong))};
    clnz_status st = set_args(ctx, p->count_k, "nz_count", args, 13);
    if (!st)
        st = chain_launch(ch, p->count_k, "nz_count", (size_t)p->tiles * p->cfg.wg, p->cfg.wg);
    if (!st)
        st = scan_run(ch, &p->scan, ctx->scratch, 0, ctx->scratch, 0, p->tiles, count_buf,
                      count_off, p->tiles);
    return st;
}

clnz_status nz_enqueue_write(chain *ch, nz_plan *p, cl_mem in, int64_t base, cl_mem meta,
                             const clnz_nonzero_options *o, int width, cl_mem out,
                             uint64_t out_off, uint64_t capacity)
{
    clnz_context *ctx = ch->ctx;
    if (p->t.n == 0 || capacity == 0 || width == 0)
        return CLNZ_SUCCESS;
    input_args a = input_args_of(p, in, base, meta);
    cl_ulong zero = 0, a_out_off = out_off, a_cap = capacity;
    cl_int layout = (cl_int)o->layout, a_width = width;
    cl_int idx = (cl_int)index_bytes(o->index_type);
    cl_uint p2 = p->cfg.p2;
    karg args[] = {INPUT_KARGS(a),   KARG(ctx->scratch), KARG(zero), KARG(out),
                   KARG(a_out_off),  KARG(a_cap),        KARG(layout), KARG(a_width),
                   KARG(idx),        KARG(p2),           KLOCAL(p2 * sizeof(cl_ulong))};
    clnz_status st = set_args(ctx, p->write_k, "nz_write", args, 19);
    if (!st)
        st = chain_launch(ch, p->write_k, "nz_write", (size_t)p->tiles * p->cfg.wg, p->cfg.wg);
    return st;
}

clnz_status nz_enqueue_fill(chain *ch, const clnz_nonzero_options *o, int width, cl_mem out,
                            uint64_t out_off, uint64_t capacity, cl_mem count_buf,
                            uint64_t count_off)
{
    clnz_context *ctx = ch->ctx;
    uint64_t slots = capacity * (uint64_t)(o->layout == CLNZ_LAYOUT_FLAT ? 1 : width);
    if (slots == 0)
        return CLNZ_SUCCESS;
    cl_kernel k;
    /* the fill kernel reads no input: any dtype's build of the file has it */
    clnz_status st = program_kernel(ctx, "nonzero", "nz_fill", "-DCLNZ_DTYPE=1 -DITEMS=1", &k);
    if (st)
        return st;
    size_t local = 64;
    size_t kmax = 0;
    cl_int e = clGetKernelWorkGroupInfo(k, ctx->device, CL_KERNEL_WORK_GROUP_SIZE, sizeof kmax,
                                        &kmax, NULL);
    if (e)
        return CL_CHECK(ctx, e, "clGetKernelWorkGroupInfo(nz_fill)");
    if (local > kmax)
        local = kmax;
    cl_ulong a_out_off = out_off, a_cap = capacity, a_count_off = count_off;
    cl_int layout = (cl_int)o->layout, a_width = width;
    cl_int idx = (cl_int)index_bytes(o->index_type);
    cl_long fill = o->fill;
    karg args[] = {KARG(out),      KARG(a_out_off), KARG(a_cap),       KARG(layout), KARG(a_width),
                   KARG(idx),      KARG(count_buf), KARG(a_count_off), KARG(fill)};
    st = set_args(ctx, k, "nz_fill", args, 9);
    if (!st)
        st = chain_launch(ch, k, "nz_fill", (size_t)((slots + local - 1) / local * local), local);
    return st;
}

/* A device buffer must hold `count` elements of `elem` bytes at byte `off`. */
static clnz_status check_buffer(clnz_context *ctx, cl_mem buf, const char *what, size_t off,
                                uint64_t count, size_t elem)
{
    if (!buf)
        return ctx_fail(ctx, CLNZ_ERROR_INVALID_ARGUMENT, "%s buffer is NULL", what);
    if (off % elem)
        return ctx_fail(ctx, CLNZ_ERROR_INVALID_ARGUMENT,
                        "%s offset %zu is not a multiple of %zu bytes", what, off, elem);
    size_t size = 0;
    cl_int e = clGetMemObjectInfo(buf, CL_MEM_SIZE, sizeof size, &size, NULL);
    if (e)
        return CL_CHECK(ctx, e, "clGetMemObjectInfo");
    if (off > size || count > (size - off) / elem)
        return ctx_fail(ctx, CLNZ_ERROR_INVALID_ARGUMENT,
                        "%s buffer of %zu bytes is too small for %llu entries of %zu bytes at "
                        "offset %zu",
                        what, size, (unsigned long long)count, elem, off);
    return CLNZ_SUCCESS;
}

static clnz_status check_events(clnz_context *ctx, cl_uint n, const cl_event *list)
{
    if (n && !list)
        return ctx_fail(ctx, CLNZ_ERROR_INVALID_ARGUMENT, "num_events > 0 with no wait list");
    return CLNZ_SUCCESS;
}

clnz_status clnz_nonzero_enqueue(clnz_context *ctx, const clnz_tensor *in, cl_mem in_buf,
                                 size_t in_offset, const clnz_nonzero_options *opts,
                                 cl_mem out_buf, size_t out_offset, uint64_t capacity,
                                 cl_mem count_buf, size_t count_offset, cl_uint num_events,
                                 const cl_event *wait_list, cl_event *out_event)
{
    if (!ctx)
        return CLNZ_ERROR_INVALID_ARGUMENT;
    ctx_clear_message(ctx);
    clnz_nonzero_options defaults;
    clnz_nonzero_options_init(&defaults);
    const clnz_nonzero_options *o = opts ? opts : &defaults;
    nz_plan p;
    int width;
    int64_t base;
    cl_mem meta = NULL;
    clnz_status st = check_events(ctx, num_events, wait_list);
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
        st = check_buffer(ctx, out_buf, "output", out_offset, capacity * per_entry, ib);
    else if (out_offset % ib)
        st = ctx_fail(ctx, CLNZ_ERROR_INVALID_ARGUMENT, "output offset is misaligned");
    if (!st)
        st = check_buffer(ctx, count_buf, "count", count_offset, 1, sizeof(cl_ulong));
    if (!st)
        st = nz_plan_make(ctx, in, &o->pred, &p);
    if (!st)
        st = tensor_base(ctx, &p.t, in_buf, in_offset, &base);
    if (!st)
        st = tensor_meta_buffer(ctx, &p.t, &meta);
    if (st)
        return st;
    chain ch;
    chain_begin(&ch, ctx, num_events, wait_list);
    uint64_t count_off = count_offset / sizeof(cl_ulong);
    st = nz_enqueue_count(&ch, &p, in_buf, base, meta, count_buf, count_off);
    if (!st)
        st = nz_enqueue_write(&ch, &p, in_buf, base, meta, o, width, out_buf, out_offset / ib,
                              capacity);
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
    if (!ctx)
        return CLNZ_ERROR_INVALID_ARGUMENT;
    ctx_clear_message(ctx);
    nz_plan p;
    int64_t base;
    cl_mem meta = NULL;
    clnz_status st = check_events(ctx, num_events, wait_list);
    if (!st)
        st = check_buffer(ctx, count_buf, "count", count_offset, 1, sizeof(cl_ulong));
    if (!st)
        st = nz_plan_make(ctx, in, pred, &p);
    if (!st)
        st = tensor_base(ctx, &p.t, in_buf, in_offset, &base);
    if (!st)
        st = tensor_meta_buffer(ctx, &p.t, &meta);
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
    clnz_status st = check_events(ctx, num_events, wait_list);
    if (!st)
        st = tensor_check(ctx, in, &t);
    if (!st)
        st = pred_to_keys(ctx, t.dtype, pred, &keys);
    if (!st && t.n)
        st = check_buffer(ctx, mask_buf, "mask", mask_offset, t.n, (size_t)out_bytes);
    if (!st)
        st = tensor_base(ctx, &t, in_buf, in_offset, &base);
    size_t items = plan_items(ctx, 0);
    char opts[64];
    snprintf(opts, sizeof opts, "-DCLNZ_DTYPE=%d -DITEMS=%zu", (int)t.dtype, items);
    if (!st)
        st = program_kernel(ctx, "mask", "mask_write", opts, &k);
    launch_cfg cfg;
    if (!st)
        st = plan_launch(ctx, &k, 1, items, 0, &cfg);
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
