/* chunked_items.c: the channel rule and batched nonzero on host arrays larger
 * than one device allocation. Both cut the input along its outer
 * dimensions like chunked.c, but keep what an element is to them whole: a
 * pixel's channels (the last dimension) are never cut, and a batch is cut
 * into runs of whole items while one item fits, else item by item through
 * clnz_nonzero, which cuts the item itself. What fits goes to the direct
 * calls (channels.c, batched.c) unchanged. */
#include "ops/ops.h"
#include "core/context.h"
#include "core/error.h"
#include "core/tensor.h"
#include "slices/slices.h"

#include <stdlib.h>
#include <string.h>

clnz_status channels_mask_sliced(clnz_context *ctx, const clnz_tensor *in, const void *data,
                                 clnz_channel_rule rule, const clnz_nonzero_options *o,
                                 unsigned char *dst)
{
    tensor_info t;
    view v;
    int fits;
    clnz_status st = host_view(ctx, in, data, &t, &v, &fits);
    if (st)
        return st;
    if (fits)
        return channels_mask_host(ctx, in, data, rule, o, dst);
    cut c = {&v, 1, ctx->max_alloc, 0, 0, 0, 1};
    st = cut_plan(ctx, &c);
    if (st)
        return st;
    /* a slice's pixels are one run of the C-order mask: fixed leading
     * coordinates, a range along c.d, every later pixel dimension whole */
    int64_t pstride[CLNZ_MAX_RANK];
    int64_t s = 1;
    for (int d = v.rank - 2; d >= 0; --d) {
        pstride[d] = s;
        s *= v.shape[d];
    }
    cut_pos p;
    cut_first(&c, &p);
    do {
        view sv;
        view_slice(&v, c.d, p.lead, p.a, p.k, &sv);
        int64_t first = p.a * pstride[c.d];
        for (int e = 0; e < c.d; ++e)
            first += p.lead[e] * pstride[e];
        clnz_tensor ts = view_tensor(&sv);
        st = channels_mask_host(ctx, &ts, sv.data, rule, o, dst + first);
    } while (!st && cut_next(&c, &p));
    return st;
}

/* ---- batches ---- */

/* Items [b, b + k) in one direct call: their entries appended, their
 * offsets from offs[b] on. */
static clnz_status batch_run(clnz_context *ctx, const view *v, uint64_t b, int64_t k,
                             const clnz_nonzero_options *o, int width, accum *entries,
                             int64_t *offs)
{
    int64_t lead[CLNZ_MAX_RANK] = {0};
    view s;
    view_slice(v, 0, lead, (int64_t)b, k, &s);
    clnz_tensor ts = view_tensor(&s);
    clnz_result r;
    clnz_array off;
    clnz_status st = batched_direct(ctx, &ts, s.data, o, width, &r, &off);
    if (st)
        return st;
    const int64_t *rel = off.data;
    for (int64_t i = 1; i <= k; ++i)
        offs[b + (uint64_t)i] = offs[b] + rel[i];
    st = accum_add(ctx, entries, r.indices,
                   (size_t)r.count * (size_t)width * index_bytes(o->index_type));
    clnz_result_free(&r);
    clnz_array_free(&off);
    return st;
}

/* Item b alone through clnz_nonzero (rows of width, the batch's order and
 * index type), which cuts it if it does not fit. */
static clnz_status batch_item(clnz_context *ctx, const view *v, uint64_t b,
                              const clnz_nonzero_options *o, int width, accum *entries,
                              int64_t *offs)
{
    int64_t lead[CLNZ_MAX_RANK] = {0};
    view s;
    view_slice(v, 0, lead, (int64_t)b, 1, &s);
    clnz_tensor item = {s.dtype, s.rank - 1, s.shape + 1, s.strides + 1};
    clnz_nonzero_options io = *o;
    io.layout = CLNZ_LAYOUT_ROWS;
    io.width = width;
    io.has_size = 0;
    clnz_result r;
    clnz_status st = clnz_nonzero(ctx, &item, s.data, &io, &r);
    if (st)
        return st;
    offs[b + 1] = offs[b] + r.count;
    st = accum_add(ctx, entries, r.indices,
                   (size_t)r.count * (size_t)width * index_bytes(o->index_type));
    clnz_result_free(&r);
    return st;
}

clnz_status batched_sliced(clnz_context *ctx, const clnz_tensor *in, const void *data,
                           const clnz_nonzero_options *o, int width, clnz_result *res,
                           clnz_array *offsets)
{
    tensor_info t;
    view v;
    int fits;
    clnz_status st = host_view(ctx, in, data, &t, &v, &fits);
    if (st)
        return st;
    if (fits) {
        st = batched_direct(ctx, in, data, o, width, res, offsets);
        if (st != CLNZ_ERROR_TOO_LARGE) /* else the entries did not fit: cut */
            return st;
        ctx_clear_message(ctx);
    }
    uint64_t batches = (uint64_t)t.shape[0];
    int64_t *offs = malloc((size_t)(batches + 1) * sizeof *offs);
    if (!offs)
        return ctx_fail(ctx, CLNZ_ERROR_OUT_OF_HOST_MEMORY, "cannot allocate the offsets");
    offs[0] = 0;
    accum entries = {0};
    cut c = {&v, 1, ctx->max_alloc, 0, 0, 0, 0};
    st = cut_plan(ctx, &c);
    /* runs of whole items while one item fits (c.d == 0); a run whose
     * entries do not fit one allocation is halved, down to one item, which
     * then goes alone */
    int64_t run = c.d == 0 ? c.k : 0;
    if (fits) /* the whole batch was just tried: start with halves */
        run /= 2;
    for (uint64_t b = 0; !st && b < batches;) {
        int64_t k = run < (int64_t)(batches - b) ? run : (int64_t)(batches - b);
        if (k > 0) {
            st = batch_run(ctx, &v, b, k, o, width, &entries, offs);
            if (!st) {
                b += (uint64_t)k;
                continue;
            }
            if (st != CLNZ_ERROR_TOO_LARGE)
                break;
            ctx_clear_message(ctx);
            st = CLNZ_SUCCESS;
            run = k / 2;
            if (run > 0)
                continue;
        }
        st = batch_item(ctx, &v, b, o, width, &entries, offs);
        ++b;
        run = c.d == 0; /* the next items may fit a direct call again */
    }
    if (!st && !entries.data && !(entries.data = malloc(1)))
        st = ctx_fail(ctx, CLNZ_ERROR_OUT_OF_HOST_MEMORY, "out of host memory");
    if (st) {
        free(entries.data);
        free(offs);
        return st;
    }
    uint64_t z = (uint64_t)offs[batches];
    res->indices = entries.data;
    res->ndim = 2;
    res->shape[0] = (int64_t)z;
    res->shape[1] = width;
    res->count = (int64_t)z;
    res->index_type = o->index_type;
    offsets->data = offs;
    offsets->dtype = CLNZ_I64;
    offsets->rank = 1;
    offsets->shape[0] = (int64_t)(batches + 1);
    return CLNZ_SUCCESS;
}
