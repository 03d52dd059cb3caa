/* view.c: views of host arrays, and the one loop that cuts them into slices
 * that fit one device allocation (see slices.h). */
#include "slices/slices.h"

#include <stdlib.h>
#include <string.h>

void view_make(const tensor_info *t, const void *data, view *v)
{
    v->rank = t->rank;
    memcpy(v->shape, t->shape, sizeof v->shape);
    memcpy(v->strides, t->strides, sizeof v->strides);
    v->data = data;
    v->elem = t->elem;
    v->dtype = t->dtype;
}

clnz_tensor view_tensor(const view *v)
{
    clnz_tensor t = {v->dtype, v->rank, v->shape, v->strides};
    return t;
}

uint64_t view_span(const view *v)
{
    uint64_t reach = 0;
    for (int d = 0; d < v->rank; ++d) {
        if (v->shape[d] == 0)
            return 0;
        reach += (uint64_t)(v->shape[d] - 1) * (uint64_t)llabs(v->strides[d]);
    }
    return (reach + 1) * v->elem;
}

clnz_status host_view(clnz_context *ctx, const clnz_tensor *in, const void *data,
                      tensor_info *t, view *v, int *fits)
{
    clnz_status st = tensor_check(ctx, in, t);
    if (st)
        return st;
    view_make(t, data, v);
    *fits = view_span(v) <= ctx->max_alloc;
    if (!*fits && !data)
        return ctx_fail(ctx, CLNZ_ERROR_INVALID_ARGUMENT, "data is NULL");
    return CLNZ_SUCCESS;
}

/* The view restricted to a box. */
static void view_box(const view *v, const box *b, view *s)
{
    *s = *v;
    int64_t off = 0;
    for (int d = 0; d < v->rank; ++d) {
        off += b->origin[d] * v->strides[d];
        s->shape[d] = b->shape[d];
    }
    s->data = v->data + off * (int64_t)v->elem;
}

/* ---- where to cut ---- */

/* The dimensions in memory order of the first view: largest |stride|
 * first (ties in logical order); with keep_last the last dimension stays
 * last, never cut. */
static void memory_order(const slicing *s, int *perm)
{
    const view *v = &s->views[0];
    dims_by_stride(v->rank - s->keep_last, v->strides, perm);
    if (s->keep_last)
        perm[v->rank - 1] = v->rank - 1;
}

int view_overlaps(const view *v)
{
    uint64_t n = 1, span = view_span(v) / v->elem;
    for (int d = 0; d < v->rank; ++d) {
        if (v->shape[d] == 0)
            return 0;
        if ((uint64_t)v->shape[d] > span / n) /* n would pass span (and may overflow) */
            return 1;
        n *= (uint64_t)v->shape[d];
    }
    return 0;
}

int view_in_c_order(const view *v)
{
    int64_t last = -1; /* |stride| of the last dimension of extent above 1 */
    for (int d = 0; d < v->rank; ++d) {
        if (v->shape[d] <= 1)
            continue;
        if (last >= 0 && llabs(v->strides[d]) > last)
            return 0;
        last = llabs(v->strides[d]);
    }
    return 1;
}

/* A slice shape: perm[0..j) of extent 1, perm[j] of extent k, the rest whole. */
static void slice_shape(const view *v, const int *perm, int j, int64_t k, int64_t *shape)
{
    memcpy(shape, v->shape, sizeof(int64_t) * (size_t)v->rank);
    for (int i = 0; i < j; ++i)
        shape[perm[i]] = 1;
    shape[perm[j]] = k;
}

static int slice_fits(const slicing *s, const int *perm, int j, int64_t k)
{
    box b;
    memset(&b, 0, sizeof b);
    slice_shape(&s->views[0], perm, j, k, b.shape);
    uint64_t elems = 1;
    for (int d = 0; d < s->views[0].rank; ++d)
        elems *= (uint64_t)b.shape[d];
    if (s->out_per_elem && elems > s->budget / s->out_per_elem)
        return 0;
    for (int i = 0; i < s->n_views; ++i) {
        view sv;
        view_box(&s->views[i], &b, &sv);
        if (view_span(&sv) > s->budget)
            return 0;
    }
    return 1;
}

typedef struct {
    int perm[CLNZ_MAX_RANK];
    int j;     /* perm[0..j) are fixed per slice, perm[j] is cut */
    int64_t k; /* elements of perm[j] per slice */
} cut_plan;

static clnz_status plan_cut(clnz_context *ctx, const slicing *s, cut_plan *c)
{
    memory_order(s, c->perm);
    int cuttable = s->views[0].rank - s->keep_last;
    for (c->j = 0; c->j < cuttable; ++c->j) {
        if (!slice_fits(s, c->perm, c->j, 1))
            continue;
        int64_t lo = 1, hi = s->views[0].shape[c->perm[c->j]];
        while (lo < hi) { /* spans grow with k: the most that fit */
            int64_t mid = lo + (hi - lo + 1) / 2;
            if (slice_fits(s, c->perm, c->j, mid))
                lo = mid;
            else
                hi = mid - 1;
        }
        c->k = lo;
        return CLNZ_SUCCESS;
    }
    return ctx_fail(ctx, CLNZ_ERROR_TOO_LARGE,
                    "no slice of the input fits the device's largest allocation (%llu bytes)",
                    (unsigned long long)s->budget);
}

/* ---- the loop ---- */

static clnz_status each(clnz_context *ctx, const slicing *s, const box *base, slice_fn fn,
                        void *user)
{
    cut_plan c = {{0}, 0, 1};
    clnz_status st = plan_cut(ctx, s, &c);
    if (st)
        return st;
    const view *v0 = &s->views[0];
    int rank = v0->rank, cut_dim = c.perm[c.j];
    box b; /* relative to the views */
    memset(&b, 0, sizeof b);
    slice_shape(v0, c.perm, c.j, c.k, b.shape);
    for (;;) {
        int64_t left = v0->shape[cut_dim] - b.origin[cut_dim];
        b.shape[cut_dim] = left < c.k ? left : c.k;
        view sv[4];
        for (int i = 0; i < s->n_views; ++i)
            view_box(&s->views[i], &b, &sv[i]);
        box at;
        for (int d = 0; d < rank; ++d) {
            at.origin[d] = base->origin[d] + b.origin[d];
            at.shape[d] = b.shape[d];
        }
        st = fn(ctx, user, sv, &at);
        if (st == CLNZ_ERROR_TOO_LARGE && s->budget / 2 >= MIN_BUDGET) {
            ctx_clear_message(ctx); /* its result did not fit: cut it finer */
            slicing finer = *s;
            finer.views = sv;
            finer.budget = s->budget / 2;
            st = each(ctx, &finer, &at, fn, user);
        }
        if (st)
            return st;
        /* next slice: along the cut dimension, then the fixed ones, the
         * innermost in memory first */
        b.origin[cut_dim] += b.shape[cut_dim];
        if (b.origin[cut_dim] < v0->shape[cut_dim])
            continue;
        b.origin[cut_dim] = 0;
        int i = c.j - 1;
        for (; i >= 0; --i) {
            int d = c.perm[i];
            if (++b.origin[d] < v0->shape[d])
                break;
            b.origin[d] = 0;
        }
        if (i < 0)
            return CLNZ_SUCCESS;
    }
}

clnz_status slices_each(clnz_context *ctx, const slicing *s, slice_fn fn, void *user)
{
    box base;
    memset(&base, 0, sizeof base);
    if (s->n_views < 1 || s->n_views > 4)
        return ctx_fail(ctx, CLNZ_ERROR_INVALID_ARGUMENT, "slices_each: 1 to 4 views");
    return each(ctx, s, &base, fn, user);
}

void scatter_block(char *dst, int rank, const int64_t *shape, const box *at, const char *src,
                   size_t elem)
{
    if (rank == 0) {
        memcpy(dst, src, elem);
        return;
    }
    int64_t cstr[CLNZ_MAX_RANK];
    for (int d = 0; d < rank; ++d)
        if (at->shape[d] == 0)
            return;
    c_order_strides(rank, shape, cstr);
    /* rows of the block's last dimension are contiguous in both */
    size_t row = (size_t)at->shape[rank - 1] * elem;
    int64_t idx[CLNZ_MAX_RANK] = {0};
    for (;;) {
        int64_t off = 0;
        for (int d = 0; d < rank; ++d)
            off += (at->origin[d] + (d < rank - 1 ? idx[d] : 0)) * cstr[d];
        memcpy(dst + (size_t)off * elem, src, row);
        src += row;
        int d = rank - 2;
        for (; d >= 0; --d) {
            if (++idx[d] < at->shape[d])
                break;
            idx[d] = 0;
        }
        if (d < 0)
            return;
    }
}
