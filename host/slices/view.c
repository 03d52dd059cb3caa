/* view.c: views of host arrays and where to cut them (see slices.h). */
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

void view_slice(const view *v, int d, const int64_t *lead, int64_t a, int64_t k, view *s)
{
    *s = *v;
    int64_t off = a * v->strides[d];
    for (int e = 0; e < d; ++e) {
        off += lead[e] * v->strides[e];
        s->shape[e] = 1;
    }
    s->shape[d] = k;
    s->data = v->data + off * (int64_t)v->elem;
}

static int cut_fits(const cut *c, int d, int64_t k)
{
    const view *v0 = &c->views[0];
    int64_t lead[CLNZ_MAX_RANK] = {0};
    uint64_t elems = (uint64_t)k;
    for (int e = d + 1; e < v0->rank; ++e)
        elems *= (uint64_t)v0->shape[e];
    if (c->out_per_elem && elems > c->budget / c->out_per_elem)
        return 0;
    for (int i = 0; i < c->n_views; ++i) {
        view s;
        view_slice(&c->views[i], d, lead, 0, k, &s);
        if (view_span(&s) > c->budget)
            return 0;
    }
    return 1;
}

clnz_status cut_plan(clnz_context *ctx, cut *c)
{
    const view *v0 = &c->views[0];
    for (int d = 0; d < v0->rank - c->keep_last; ++d) {
        if (!cut_fits(c, d, 1))
            continue;
        int64_t lo = 1, hi = v0->shape[d];
        while (lo < hi) {
            int64_t mid = lo + (hi - lo + 1) / 2;
            if (cut_fits(c, d, mid))
                lo = mid;
            else
                hi = mid - 1;
        }
        c->d = d, c->k = lo;
        return CLNZ_SUCCESS;
    }
    return ctx_fail(ctx, CLNZ_ERROR_TOO_LARGE,
                    "no slice of the input fits the device's largest allocation (%llu bytes)",
                    (unsigned long long)ctx->max_alloc);
}

void cut_first(const cut *c, cut_pos *p)
{
    memset(p, 0, sizeof *p);
    p->k = c->k < c->views[0].shape[c->d] ? c->k : c->views[0].shape[c->d];
}

int cut_next(const cut *c, cut_pos *p)
{
    const int64_t *shape = c->views[0].shape;
    p->a += p->k;
    if (p->a >= shape[c->d]) {
        p->a = 0;
        int e = c->d - 1;
        for (; e >= 0; --e) {
            if (++p->lead[e] < shape[e])
                break;
            p->lead[e] = 0;
        }
        if (e < 0)
            return 0;
    }
    p->k = shape[c->d] - p->a < c->k ? shape[c->d] - p->a : c->k;
    return 1;
}

clnz_status accum_add(clnz_context *ctx, accum *acc, const void *src, size_t bytes)
{
    if (bytes == 0)
        return CLNZ_SUCCESS;
    if (bytes > acc->cap - acc->used) {
        size_t cap = acc->cap ? acc->cap : 4096;
        while (cap - acc->used < bytes)
            cap *= 2;
        char *p = realloc(acc->data, cap);
        if (!p)
            return ctx_fail(ctx, CLNZ_ERROR_OUT_OF_HOST_MEMORY,
                            "cannot grow the result to %zu bytes", cap);
        acc->data = p, acc->cap = cap;
    }
    memcpy(acc->data + acc->used, src, bytes);
    acc->used += bytes;
    return CLNZ_SUCCESS;
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
