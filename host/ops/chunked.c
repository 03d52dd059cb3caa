/* chunked.c: the public blocking calls (nonzero, count, select, where) and
 * what they do with inputs larger than one device allocation
 * (CL_DEVICE_MAX_MEM_ALLOC_SIZE, or CLNZ_MAX_ALLOC), or results that are:
 * the logical array is cut into slices along one dimension, each slice a
 * view that the direct calls (host_api.c, select.c, where.c) take as it is,
 * and the slices' results are put together on the host in C order, with
 * global coordinates. What fits in one allocation goes to the direct call
 * unchanged. */
#include "ops/ops.h"
#include "core/context.h"
#include "core/error.h"
#include "core/transfer.h"
#include "slices/slices.h"

#include <stdlib.h>
#include <string.h>

/* ---- nonzero ---- */

/* Appends the C-order coordinates (int64 rows of rank values, global: the
 * slice's origin added) of the selected elements of v. A slice whose
 * result does not fit one allocation is cut again, finer. */
static clnz_status nonzero_cut(clnz_context *ctx, const view *v, const int64_t *origin,
                               const clnz_predicate *pred, uint64_t budget, accum *rows)
{
    cut c = {v, 1, budget, 0, 0, 0};
    clnz_status st = cut_plan(ctx, &c);
    if (st)
        return st;
    clnz_nonzero_options o;
    clnz_nonzero_options_init(&o);
    o.pred = *pred;
    cut_pos p;
    cut_first(&c, &p);
    do {
        view s;
        view_slice(v, c.d, p.lead, p.a, p.k, &s);
        int64_t at[CLNZ_MAX_RANK];
        memcpy(at, origin, sizeof at);
        for (int e = 0; e < c.d; ++e)
            at[e] += p.lead[e];
        at[c.d] += p.a;
        clnz_tensor t = view_tensor(&s);
        clnz_result r;
        st = nonzero_direct(ctx, &t, s.data, &o, &r);
        if (st == CLNZ_ERROR_TOO_LARGE && budget / 2 >= MIN_BUDGET) {
            ctx_clear_message(ctx);
            st = nonzero_cut(ctx, &s, at, pred, budget / 2, rows);
        } else if (!st) {
            int64_t *e = r.indices;
            for (int64_t i = 0; i < r.count * v->rank; ++i)
                e[i] += at[i % v->rank];
            st = accum_add(ctx, rows, e, (size_t)r.count * (size_t)v->rank * sizeof *e);
            clnz_result_free(&r);
        }
        if (st)
            return st;
    } while (cut_next(&c, &p));
    return CLNZ_SUCCESS;
}

/* The rows of global coordinates in the layout, order, width, index type
 * and static size the caller asked for. */
static clnz_status rows_to_result(clnz_context *ctx, const tensor_info *t, const accum *rows,
                                  const clnz_nonzero_options *o, int width, clnz_result *res)
{
    int rank = t->rank;
    uint64_t z = rows->used / sizeof(int64_t) / (uint64_t)rank;
    uint64_t entries = o->has_size ? (uint64_t)o->size : z;
    int per_entry = o->layout == CLNZ_LAYOUT_FLAT ? 1 : width;
    size_t ib = index_bytes(o->index_type);
    if (per_entry && entries > SIZE_MAX / ib / (uint64_t)per_entry)
        return ctx_fail(ctx, CLNZ_ERROR_TOO_LARGE, "the result does not fit the address space");
    char *out = alloc_result((size_t)(entries * (uint64_t)per_entry * ib));
    if (!out)
        return ctx_fail(ctx, CLNZ_ERROR_OUT_OF_HOST_MEMORY, "cannot allocate the result");
    int64_t cstr[CLNZ_MAX_RANK];
    for (int d = rank - 1, s = 1; d >= 0; --d) {
        cstr[d] = s;
        s *= t->shape[d];
    }
    for (uint64_t k = 0; k < entries; ++k) {
        const int64_t *row = k < z ? (const int64_t *)rows->data + k * (uint64_t)rank : NULL;
        for (int j = 0; j < per_entry; ++j) {
            int64_t v = o->fill;
            if (k < z && o->layout == CLNZ_LAYOUT_FLAT) {
                v = 0;
                for (int d = 0; d < rank; ++d)
                    v += row[d] * cstr[d];
            } else if (k < z) {
                int d = rank - width + (o->order == CLNZ_ORDER_XY ? width - 1 - j : j);
                v = d < 0 ? 0 : row[d];
            }
            uint64_t pos = o->layout == CLNZ_LAYOUT_COLUMNS ? (uint64_t)j * entries + k
                                                            : k * (uint64_t)per_entry + j;
            if (ib == 8)
                ((int64_t *)out)[pos] = v;
            else
                ((uint32_t *)out)[pos] = (uint32_t)v;
        }
    }
    res->indices = out;
    res->count = (int64_t)z;
    res->index_type = o->index_type;
    res->ndim = o->layout == CLNZ_LAYOUT_FLAT ? 1 : 2;
    res->shape[0] = o->layout == CLNZ_LAYOUT_COLUMNS ? width : (int64_t)entries;
    res->shape[1] = o->layout == CLNZ_LAYOUT_ROWS ? width : (int64_t)entries;
    return CLNZ_SUCCESS;
}

clnz_status clnz_nonzero(clnz_context *ctx, const clnz_tensor *in, const void *data,
                         const clnz_nonzero_options *opts, clnz_result *res)
{
    CTX_HOLD(ctx);
    if (!ctx)
        return CLNZ_ERROR_INVALID_ARGUMENT;
    clnz_status st = nz_result_start(ctx, res);
    if (st)
        return st;
    clnz_nonzero_options defaults;
    const clnz_nonzero_options *o = nz_options_or_defaults(opts, &defaults);
    tensor_info t;
    view v;
    int fits, width;
    st = host_view(ctx, in, data, &t, &v, &fits);
    if (!st)
        st = nz_check_options(ctx, &t, o, &width);
    if (st)
        return st;
    uint64_t budget = ctx->max_alloc;
    if (fits) {
        st = nonzero_direct(ctx, in, data, o, res);
        if (st != CLNZ_ERROR_TOO_LARGE) /* the result did not fit: cut finer */
            return st;
        ctx_clear_message(ctx);
        budget /= 2;
    }
    accum rows = {0};
    int64_t origin[CLNZ_MAX_RANK] = {0};
    st = nonzero_cut(ctx, &v, origin, &o->pred, budget, &rows);
    if (!st)
        st = rows_to_result(ctx, &t, &rows, o, width, res);
    free(rows.data);
    return st;
}

/* ---- count ---- */

static clnz_status count_cut(clnz_context *ctx, const view *v, const clnz_predicate *pred,
                             int64_t *count)
{
    cut c = {v, 1, ctx->max_alloc, 0, 0, 0};
    clnz_status st = cut_plan(ctx, &c);
    cut_pos p;
    cut_first(&c, &p);
    *count = 0;
    while (!st) {
        view s;
        view_slice(v, c.d, p.lead, p.a, p.k, &s);
        clnz_tensor t = view_tensor(&s);
        int64_t z;
        st = count_direct(ctx, &t, s.data, pred, &z);
        *count += z;
        if (!cut_next(&c, &p))
            break;
    }
    return st;
}

clnz_status clnz_count(clnz_context *ctx, const clnz_tensor *in, const void *data,
                       const clnz_predicate *pred, int64_t *count)
{
    CTX_HOLD(ctx);
    if (!ctx)
        return CLNZ_ERROR_INVALID_ARGUMENT;
    ctx_clear_message(ctx);
    if (!count)
        return ctx_fail(ctx, CLNZ_ERROR_INVALID_ARGUMENT, "count is NULL");
    tensor_info t;
    view v;
    int fits;
    clnz_status st = host_view(ctx, in, data, &t, &v, &fits);
    if (st)
        return st;
    return fits ? count_direct(ctx, in, data, pred, count) : count_cut(ctx, &v, pred, count);
}

/* ---- select ---- */

/* views[0] is x, views[1] the mask (if any): cut alike. */
static clnz_status select_cut(clnz_context *ctx, const view *views, int n_views,
                              const clnz_predicate *pred, uint64_t budget, accum *values)
{
    cut c = {views, n_views, budget, 0, 0, 0};
    clnz_status st = cut_plan(ctx, &c);
    if (st)
        return st;
    cut_pos p;
    cut_first(&c, &p);
    do {
        view s[2];
        for (int i = 0; i < n_views; ++i)
            view_slice(&views[i], c.d, p.lead, p.a, p.k, &s[i]);
        clnz_tensor xt = view_tensor(&s[0]), mt = view_tensor(&s[n_views - 1]);
        clnz_array a;
        st = select_direct(ctx, &xt, s[0].data, n_views > 1 ? &mt : NULL, s[n_views - 1].data,
                           pred, &a);
        if (st == CLNZ_ERROR_TOO_LARGE && budget / 2 >= MIN_BUDGET) {
            ctx_clear_message(ctx);
            st = select_cut(ctx, s, n_views, pred, budget / 2, values);
        } else if (!st) {
            st = accum_add(ctx, values, a.data, (size_t)a.shape[0] * views[0].elem);
            clnz_array_free(&a);
        }
        if (st)
            return st;
    } while (cut_next(&c, &p));
    return CLNZ_SUCCESS;
}

clnz_status clnz_select(clnz_context *ctx, const clnz_tensor *x, const void *x_data,
                        const clnz_tensor *mask, const void *mask_data,
                        const clnz_predicate *pred, clnz_array *out)
{
    CTX_HOLD(ctx);
    if (!ctx)
        return CLNZ_ERROR_INVALID_ARGUMENT;
    ctx_clear_message(ctx);
    if (!out)
        return ctx_fail(ctx, CLNZ_ERROR_INVALID_ARGUMENT, "out is NULL");
    memset(out, 0, sizeof *out);
    tensor_info xi, mi;
    view views[2];
    int fits, mask_fits = 1;
    clnz_status st = host_view(ctx, x, x_data, &xi, &views[0], &fits);
    if (!st && mask)
        st = host_view(ctx, mask, mask_data, &mi, &views[1], &mask_fits);
    if (!st && mask)
        st = select_same_shape(ctx, &xi, &mi);
    if (st)
        return st;
    uint64_t budget = ctx->max_alloc;
    if (fits && mask_fits) {
        st = select_direct(ctx, x, x_data, mask, mask_data, pred, out);
        if (st != CLNZ_ERROR_TOO_LARGE)
            return st;
        ctx_clear_message(ctx);
        budget /= 2;
    }
    clnz_predicate nonzero = clnz_pred_nonzero();
    accum values = {0};
    st = select_cut(ctx, views, mask ? 2 : 1, pred ? pred : &nonzero, budget, &values);
    if (!st) {
        out->data = values.data ? values.data : malloc(1);
        if (!out->data)
            st = ctx_fail(ctx, CLNZ_ERROR_OUT_OF_HOST_MEMORY, "out of host memory");
        out->dtype = xi.dtype;
        out->rank = 1;
        out->shape[0] = (int64_t)(values.used / xi.elem);
    } else {
        free(values.data);
    }
    return st;
}

/* ---- where ---- */

/* An operand seen with the result's shape: its dimensions aligned from the
 * right, stretched ones with stride 0. */
static void view_broadcast(const tensor_info *t, const void *data, int rank, const int64_t *shape,
                           view *v)
{
    view_make(t, data, v);
    v->rank = rank;
    for (int e = 0; e < rank; ++e) {
        int j = e - (rank - t->rank);
        v->shape[e] = shape[e];
        v->strides[e] = j < 0 || t->shape[j] != shape[e] ? 0 : t->strides[j];
    }
}

clnz_status clnz_where(clnz_context *ctx, const clnz_tensor *cond, const void *cond_data,
                       const clnz_predicate *pred, const clnz_operand *x, const void *x_data,
                       const clnz_operand *y, const void *y_data, clnz_array *out)
{
    CTX_HOLD(ctx);
    if (!ctx)
        return CLNZ_ERROR_INVALID_ARGUMENT;
    ctx_clear_message(ctx);
    if (!out)
        return ctx_fail(ctx, CLNZ_ERROR_INVALID_ARGUMENT, "out is NULL");
    memset(out, 0, sizeof *out);
    clnz_dtype dt;
    int rank;
    int64_t shape[CLNZ_MAX_RANK];
    clnz_status st = clnz_where_result(ctx, cond, x, y, &dt, &rank, shape);
    if (st)
        return st;
    const clnz_tensor *arrays[3] = {cond, x->array, y->array};
    const void *datas[3] = {cond_data, x_data, y_data};
    view views[3];
    int n_views = 0, fits = 1;
    uint64_t n = 1;
    for (int d = 0; d < rank; ++d)
        n *= (uint64_t)shape[d];
    size_t vb = clnz_dtype_size(dt);
    for (int i = 0; i < 3; ++i) {
        tensor_info t;
        view v;
        int f;
        if (!arrays[i])
            continue;
        st = host_view(ctx, arrays[i], datas[i], &t, &v, &f);
        if (st)
            return st;
        fits &= f;
        view_broadcast(&t, datas[i], rank, shape, &views[n_views++]);
    }
    if (fits && n <= ctx->max_alloc / vb)
        return where_direct(ctx, cond, cond_data, pred, x, x_data, y, y_data, out);
    char *host = alloc_result((size_t)(n * vb));
    if (!host)
        return ctx_fail(ctx, CLNZ_ERROR_OUT_OF_HOST_MEMORY, "cannot allocate the result");
    if (n == 0) /* an empty result of operands too large to upload: nothing to cut */
        goto result;
    cut c = {views, n_views, ctx->max_alloc, vb, 0, 0};
    st = cut_plan(ctx, &c);
    int64_t cstr[CLNZ_MAX_RANK];
    for (int d = rank - 1, s = 1; d >= 0; --d) {
        cstr[d] = s;
        s *= shape[d];
    }
    cut_pos p;
    cut_first(&c, &p);
    while (!st) {
        /* a slice of the result is a run of it in C order */
        int64_t start = p.a * cstr[c.d];
        for (int e = 0; e < c.d; ++e)
            start += p.lead[e] * cstr[e];
        view s[3];
        clnz_tensor ts[3];
        for (int i = 0; i < n_views; ++i) {
            view_slice(&views[i], c.d, p.lead, p.a, p.k, &s[i]);
            ts[i] = view_tensor(&s[i]);
        }
        clnz_operand xo = *x, yo = *y;
        int i = 1;
        if (x->array)
            xo.array = &ts[i++];
        if (y->array)
            yo.array = &ts[i];
        clnz_array a;
        st = where_direct(ctx, &ts[0], s[0].data, pred, &xo, x->array ? s[1].data : NULL, &yo,
                          y->array ? s[i].data : NULL, &a);
        if (!st) {
            uint64_t count = 1;
            for (int d = 0; d < a.rank; ++d)
                count *= (uint64_t)a.shape[d];
            memcpy(host + (size_t)start * vb, a.data, (size_t)count * vb);
            clnz_array_free(&a);
        }
        if (!st && !cut_next(&c, &p))
            break;
    }
    if (st) {
        free(host);
        return st;
    }
result:
    out->data = host;
    out->dtype = dt;
    out->rank = rank;
    memcpy(out->shape, shape, (size_t)rank * sizeof *shape);
    return CLNZ_SUCCESS;
}
