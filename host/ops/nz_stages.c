/* nz_stages.c: the stages of the fused nonzero pipeline (count per tile,
 * scan, write, fill), its plan, and the checks of its options. */
#include "ops/ops.h"
#include "core/context.h"
#include "core/error.h"
#include "core/program.h"
#include "core/tensor.h"
#include "core/predicate.h"
#include "core/chain.h"
#include "tune/tune.h"

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

const clnz_nonzero_options *nz_options_or_defaults(const clnz_nonzero_options *opts,
                                                   clnz_nonzero_options *defaults)
{
    clnz_nonzero_options_init(defaults);
    return opts ? opts : defaults;
}

clnz_status nz_result_start(clnz_context *ctx, clnz_result *res)
{
    ctx_clear_message(ctx);
    if (!res)
        return ctx_fail(ctx, CLNZ_ERROR_INVALID_ARGUMENT, "result is NULL");
    memset(res, 0, sizeof *res);
    return CLNZ_SUCCESS;
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
    if ((unsigned)o->order > CLNZ_ORDER_XY)
        return ctx_fail(ctx, CLNZ_ERROR_INVALID_ARGUMENT, "unknown order %d", (int)o->order);
    if (o->order == CLNZ_ORDER_XY && o->layout == CLNZ_LAYOUT_FLAT)
        return ctx_fail(ctx, CLNZ_ERROR_INVALID_ARGUMENT,
                        "order xy reverses coordinates: it needs the rows or columns layout");
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
                         size_t value_bytes, nz_plan *plan)
{
    clnz_status st = tensor_check(ctx, in, &plan->t);
    if (!st)
        st = pred_to_keys(ctx, plan->t.dtype, pred, &plan->keys);
    if (st)
        return st;
    char opts[96];
    size_t items = plan_items(ctx, CLNZ_KERNEL_NONZERO);
    element_options(opts, sizeof opts, plan->t.dtype, items, plan->keys.nonzero);
    st = program_kernel(ctx, "nonzero", "nz_count", opts, &plan->count_k);
    if (!st && value_bytes == 0) {
        st = program_kernel(ctx, "nonzero", "nz_write", opts, &plan->write_k);
    } else if (!st) { /* select: the same count, a writing pass that moves values */
        char sel_opts[sizeof opts + 24];
        snprintf(sel_opts, sizeof sel_opts, "%s -DVALUE_BYTES=%zu", opts, value_bytes);
        st = program_kernel(ctx, "select", "sel_write", sel_opts, &plan->write_k);
    }
    if (st)
        return st;
    cl_kernel ks[2] = {plan->count_k, plan->write_k};
    st = plan_launch(ctx, CLNZ_KERNEL_NONZERO, ks, 2, items, sizeof(cl_ulong), &plan->cfg);
    if (!st)
        st = scan_kit_make(ctx, 1, &plan->scan);
    if (st)
        return st;
    plan->tiles = plan_tiles(plan->t.n, &plan->cfg);
    /* scratch: one count (then offset) per tile, the scan's levels, then one
     * 32-bit count per work-item */
    uint64_t elems = plan->tiles + scan_scratch_elems(&plan->scan, plan->tiles);
    plan->items_off = elems * 2;
    return plan_scratch(ctx, (size_t)(elems * sizeof(cl_ulong) +
                                      plan->tiles * plan->cfg.wg * sizeof(cl_uint)));
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
    cl_ulong items_off = p->items_off;
    karg args[] = {INPUT_KARGS(a),    KARG(ctx->scratch), KARG(zero),
                   KARG(ctx->scratch), KARG(items_off),  KARG(p2),
                   KLOCAL(p2 * sizeof(cl_ulong))};
    clnz_status st = set_args(ctx, p->count_k, "nz_count", args, 15);
    if (!st)
        st = chain_launch(ch, p->count_k, "nz_count", (size_t)p->tiles * p->cfg.wg, p->cfg.wg);
    if (!st)
        st = scan_run(ch, &p->scan, ctx->scratch, 0, ctx->scratch, 0, p->tiles, count_buf,
                      count_off, p->tiles);
    return st;
}

/* The write pass's arguments; `single` makes it count too (nz_write). */
static clnz_status write_launch(chain *ch, nz_plan *p, cl_mem in, int64_t base, cl_mem meta,
                                const clnz_nonzero_options *o, int width, cl_mem out,
                                uint64_t out_off, uint64_t capacity, cl_mem offsets,
                                uint64_t offsets_off, int single)
{
    clnz_context *ctx = ch->ctx;
    input_args a = input_args_of(p, in, base, meta);
    cl_ulong a_offsets_off = offsets_off, a_out_off = out_off, a_cap = capacity;
    cl_int layout = (cl_int)o->layout, a_width = width, a_single = single;
    cl_int reverse = o->order == CLNZ_ORDER_XY;
    cl_int idx = (cl_int)index_bytes(o->index_type);
    cl_uint p2 = p->cfg.p2;
    cl_ulong items_off = p->items_off;
    karg args[] = {INPUT_KARGS(a), KARG(offsets),  KARG(a_offsets_off), KARG(ctx->scratch),
                   KARG(items_off), KARG(out),     KARG(a_out_off),     KARG(a_cap),
                   KARG(layout),   KARG(a_width),  KARG(reverse),       KARG(idx),
                   KARG(a_single), KARG(p2),       KLOCAL(p2 * sizeof(cl_ulong))};
    clnz_status st = set_args(ctx, p->write_k, "nz_write", args, 23);
    if (!st)
        st = chain_launch(ch, p->write_k, "nz_write", (size_t)p->tiles * p->cfg.wg, p->cfg.wg);
    return st;
}

clnz_status nz_enqueue_write(chain *ch, nz_plan *p, cl_mem in, int64_t base, cl_mem meta,
                             const clnz_nonzero_options *o, int width, cl_mem out,
                             uint64_t out_off, uint64_t capacity)
{
    if (p->t.n == 0 || capacity == 0 || width == 0)
        return CLNZ_SUCCESS;
    return write_launch(ch, p, in, base, meta, o, width, out, out_off, capacity, ch->ctx->scratch,
                        0, 0);
}

clnz_status nz_enqueue_single(chain *ch, nz_plan *p, cl_mem in, int64_t base, cl_mem meta,
                              const clnz_nonzero_options *o, int width, cl_mem out,
                              uint64_t out_off, uint64_t capacity, cl_mem count_buf,
                              uint64_t count_off)
{
    /* the kernel needs a valid output even when it writes none */
    return write_launch(ch, p, in, base, meta, o, width, out ? out : ch->ctx->scratch, out_off,
                        out ? capacity : 0, count_buf, count_off, 1);
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
    char opts[80];
    element_options(opts, sizeof opts, CLNZ_U8, 1, 0);
    clnz_status st = program_kernel(ctx, "nonzero", "nz_fill", opts, &k);
    if (st)
        return st;
    size_t local;
    st = small_local(ctx, k, &local);
    if (st)
        return st;
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


clnz_status sel_enqueue_write(chain *ch, nz_plan *p, cl_mem in, int64_t base, cl_mem meta,
                              const sel_values *v, cl_mem out, uint64_t out_off,
                              uint64_t capacity, cl_mem offsets, uint64_t offsets_off, int single)
{
    clnz_context *ctx = ch->ctx;
    if (p->t.n == 0 || (capacity == 0 && !single))
        return CLNZ_SUCCESS;
    input_args a = input_args_of(p, in, base, meta);
    cl_long x_base = v->base;
    cl_int x_contiguous = v->contiguous, a_single = single;
    cl_ulong a_offsets_off = offsets_off, a_out_off = out_off, a_cap = capacity;
    cl_uint p2 = p->cfg.p2;
    cl_ulong items_off = p->items_off;
    karg args[] = {INPUT_KARGS(a),   KARG(v->buf),       KARG(x_base),      KARG(v->meta),
                   KARG(x_contiguous), KARG(offsets),    KARG(a_offsets_off), KARG(ctx->scratch),
                   KARG(items_off),  KARG(out),          KARG(a_out_off),   KARG(a_cap),
                   KARG(a_single),   KARG(p2),           KLOCAL(p2 * sizeof(cl_ulong))};
    clnz_status st = set_args(ctx, p->write_k, "sel_write", args, 23);
    if (!st)
        st = chain_launch(ch, p->write_k, "sel_write", (size_t)p->tiles * p->cfg.wg, p->cfg.wg);
    return st;
}

clnz_status nz_enqueue_batch_offsets(chain *ch, nz_plan *p, cl_mem in, int64_t base, cl_mem meta,
                                     uint64_t batches, cl_mem offsets, uint64_t offsets_off)
{
    clnz_context *ctx = ch->ctx;
    if (batches == 0)
        return CLNZ_SUCCESS;
    char opts[96];
    element_options(opts, sizeof opts, p->t.dtype, plan_items(ctx, CLNZ_KERNEL_NONZERO),
                    p->keys.nonzero);
    cl_kernel k;
    clnz_status st = program_kernel(ctx, "nonzero", "nz_batch_offsets", opts, &k);
    if (st)
        return st;
    input_args a = input_args_of(p, in, base, meta);
    cl_ulong items_off = p->items_off, item_elems = p->t.n / batches, a_batches = batches;
    cl_ulong a_off = offsets_off;
    cl_uint wg = (cl_uint)p->cfg.wg;
    karg args[] = {INPUT_KARGS(a),     KARG(ctx->scratch), KARG(ctx->scratch), KARG(items_off),
                   KARG(wg),           KARG(item_elems),   KARG(a_batches),    KARG(offsets),
                   KARG(a_off)};
    size_t local;
    st = set_args(ctx, k, "nz_batch_offsets", args, 17);
    if (!st)
        st = small_local(ctx, k, &local);
    if (!st)
        st = chain_launch(ch, k, "nz_batch_offsets", (size_t)((batches + local - 1) / local * local),
                          local);
    return st;
}
