/* select.c: x[mask], the values of x where a predicate holds on a mask of
 * x's shape (or on x itself), in C order: device-resident and blocking.
 * The job is nonzero's with values for entries (strategy/strategy.h). */
#include "ops/ops.h"
#include "core/relayout.h"
#include "core/result_mem.h"
#include "core/transfer.h"
#include "slices/slices.h"

#include <stdlib.h>
#include <string.h>

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

/* x and the mask (x itself when there is none) checked; *m is what the
 * predicate reads. */
static clnz_status select_inputs(clnz_context *ctx, const clnz_tensor *x, const clnz_tensor *mask,
                                 tensor_info *xi, tensor_info *mi)
{
    clnz_status st = tensor_check(ctx, x, xi);
    if (st || !mask) {
        *mi = *xi;
        return st;
    }
    st = tensor_check(ctx, mask, mi);
    return st ? st : select_same_shape(ctx, xi, mi);
}

/* A device-resident select's job: the predicate on the mask (x itself
 * when there is none), x's values for entries; *xi gets x. */
static clnz_status device_job(clnz_context *ctx, const clnz_tensor *x, cl_mem x_buf,
                              size_t x_offset, const clnz_tensor *mask, cl_mem mask_buf,
                              size_t mask_offset, const clnz_predicate *pred, tensor_info *xi,
                              nz_job *job)
{
    if (!mask)
        mask_buf = x_buf, mask_offset = x_offset;
    tensor_info mi;
    int64_t x_base;
    clnz_status st = select_inputs(ctx, x, mask, xi, &mi);
    if (!st)
        st = job_init(ctx, job, &mi, pred);
    if (!st) {
        job->in_what = mask ? "mask" : "x"; /* what the predicate reads, named so */
        st = job_bind(ctx, job, mask_buf, mask_offset);
    }
    if (!st)
        st = tensor_base(ctx, xi, x_buf, x_offset, "x", &x_base);
    return st ? st : job_bind_values(ctx, job, xi, x_buf, x_base);
}

clnz_status clnz_select_enqueue(clnz_context *ctx, const clnz_tensor *x, cl_mem x_buf,
                                size_t x_offset, const clnz_tensor *mask, cl_mem mask_buf,
                                size_t mask_offset, const clnz_predicate *pred, cl_mem out_buf,
                                size_t out_offset, uint64_t capacity, cl_mem count_buf,
                                size_t count_offset, cl_uint num_events,
                                const cl_event *wait_list, cl_event *out_event)
{
    CTX_ENTER(ctx);
    tensor_info xi;
    nz_job job = {0};
    clnz_status st = events_check(ctx, num_events, wait_list);
    if (!st)
        st = device_job(ctx, x, x_buf, x_offset, mask, mask_buf, mask_offset, pred, &xi, &job);
    if (!st)
        st = output_check(ctx, out_buf, out_offset, capacity, 1, xi.elem);
    if (!st)
        st = buffer_check(ctx, count_buf, "count", count_offset, 1, sizeof(cl_ulong));
    if (!st) {
        job.out = out_buf;
        job.out_off = out_offset / xi.elem;
        job.capacity = capacity;
        job.count = count_buf;
        job.count_off = count_offset / sizeof(cl_ulong);
        chain ch;
        chain_begin(&ch, ctx, num_events, wait_list);
        st = job_run(&ch, &job);
        st = chain_end(&ch, st, out_event);
    }
    job_release(&job);
    return st;
}

clnz_status clnz_select_alloc(clnz_context *ctx, const clnz_tensor *x, cl_mem x_buf,
                              size_t x_offset, const clnz_tensor *mask, cl_mem mask_buf,
                              size_t mask_offset, const clnz_predicate *pred, cl_mem *out_buf,
                              uint64_t *count, cl_mem count_buf, size_t count_offset,
                              cl_uint num_events, const cl_event *wait_list,
                              cl_event *out_event)
{
    EXACT_ENTER(ctx, out_buf, count);
    tensor_info xi;
    nz_job job = {0};
    cl_mem own_count = NULL;
    clnz_status st = exact_outputs(ctx, out_buf, count);
    if (!st)
        st = events_check(ctx, num_events, wait_list);
    if (!st)
        st = device_job(ctx, x, x_buf, x_offset, mask, mask_buf, mask_offset, pred, &xi, &job);
    if (!st)
        st = exact_count_buffer(ctx, &job, count_buf, count_offset, &own_count);
    if (!st) {
        exact_entries e = {UINT64_MAX, xi.elem, 0, 0};
        st = job_run_exact(ctx, &job, &e, num_events, wait_list, out_buf, count, out_event);
    }
    if (own_count) /* released by OpenCL once the commands using it are done */
        clReleaseMemObject(own_count);
    job_release(&job);
    return st;
}

/* A blocking select's result: n values of dtype at data (the caller's now). */
static clnz_status values_out(clnz_array *out, void *data, clnz_dtype dtype, uint64_t n)
{
    out->data = data;
    out->dtype = dtype;
    out->rank = 1;
    out->shape[0] = (int64_t)n;
    return CLNZ_SUCCESS;
}

/* has_mask 0: the predicate reads x itself. */
static clnz_status select_direct(clnz_context *ctx, const tensor_info *xi, const void *x_data,
                                 const tensor_info *mi, const void *mask_data, int has_mask,
                                 const clnz_predicate *pred, clnz_array *out)
{
    host_job h;
    void *host = NULL;
    uint64_t z = 0;
    clnz_status st = job_init(ctx, &h.job, mi, pred);
    if (st)
        return st;
    st = host_job_begin(ctx, &h, has_mask ? mask_data : x_data);
    if (!st && has_mask)
        st = host_job_values(&h, xi, x_data);
    else if (!st) /* the values are the input itself (as uploaded: maybe a C-order copy) */
        st = job_bind_values(ctx, &h.job, &h.job.t, h.inb, h.job.base);
    if (!st)
        st = host_job_entries(&h, UINT64_MAX, xi->elem, 0, 0, &host, &z);
    if (!st) {
        values_out(out, host, xi->dtype, z);
        host = NULL;
    }
    st = host_job_end(&h, st); /* waits for the device before host memory goes */
    free(host);
    return st;
}

/* ---- past one allocation ---- */

typedef struct {
    const clnz_predicate *pred;
    int has_mask; /* the slicing's views: the mask, then x; x alone without one */
    accum values;
} select_collect;

/* One slice selected on the device, its values appended: slices come in
 * C order here (select_sliced). */
static clnz_status select_slice(clnz_context *ctx, void *user, const view *s, const box *at)
{
    (void)at;
    select_collect *c = user;
    const view *x = &s[c->has_mask];
    clnz_tensor mt = view_tensor(&s[0]), xt = view_tensor(x);
    tensor_info mi, xi;
    clnz_array a;
    clnz_status st = tensor_check(ctx, &mt, &mi);
    if (!st)
        st = tensor_check(ctx, &xt, &xi);
    if (!st)
        st = select_direct(ctx, &xi, x->data, &mi, s[0].data, c->has_mask, c->pred, &a);
    if (st)
        return st;
    st = accum_add(ctx, &c->values, a.data, (size_t)a.shape[0] * xi.elem);
    clnz_array_free(&a);
    return st;
}

/* The selected positions' keys (sliced_keys, on the mask), then x's values
 * there read from host memory, over the keys' own memory where they are in
 * order (keys_result_begin): at most one key an entry beside the values,
 * whatever the rank. */
static clnz_status select_by_keys(clnz_context *ctx, const view *xv, const view *mv,
                                  const clnz_predicate *pred, clnz_array *out)
{
    key_runs kr;
    key_reader r = {0};
    char *values = NULL;
    clnz_status st = sliced_keys(ctx, mv, pred, ctx->max_alloc, UINT64_MAX, &kr);
    size_t z = st ? 0 : kr.keys.used / sizeof(uint64_t);
    if (!st)
        st = key_reader_start(ctx, &kr, &r);
    if (!st && !(values = keys_result_begin(&kr, z, xv->elem)))
        st = ctx_fail(ctx, CLNZ_ERROR_OUT_OF_HOST_MEMORY, "cannot allocate the result");
    unravel u;
    unravel_init(&u, xv->rank, xv->shape);
    for (size_t k = 0; !st && k < z; ++k) {
        const int64_t *idx = unravel_to(&u, key_reader_next(&r));
        int64_t off = 0;
        for (int d = 0; d < xv->rank; ++d)
            off += idx[d] * xv->strides[d];
        memcpy(values + k * xv->elem, xv->data + off * (int64_t)xv->elem, xv->elem);
    }
    key_reader_end(&r);
    char *done = st ? NULL : keys_result_end(&kr, values, z * xv->elem);
    if (!st && !done)
        st = ctx_fail(ctx, CLNZ_ERROR_OUT_OF_HOST_MEMORY, "cannot allocate the result");
    if (st && values != kr.keys.data)
        free_result(values);
    key_runs_free(&kr);
    if (st)
        return st;
    return values_out(out, done, xv->dtype, z);
}

/* Slices that interleave, x and the mask lying in one memory order that
 * is not C order (a Fortran-order or transposed input): each slice's keys
 * and its values (an ordinary select: the device reads the slice's x in
 * its memory order) are kept side by side, then the values are read in C
 * order of their keys. Gathering each value by key from host memory
 * instead (select_by_keys) costs a cache miss an element here. */
typedef struct {
    select_collect sel; /* the values, in the order of the keys */
    key_collect keys;
} select_pairs;

/* A slice's keys, then its values. Both calls read the mask: a slice that
 * the blocking calls would copy to C order (core/relayout.c) is copied
 * here once for the two (x and the mask each), not once a call. */
static clnz_status select_pair_slice(clnz_context *ctx, void *user, const view *s, const box *at)
{
    select_pairs *c = user;
    int n = 1 + c->sel.has_mask;
    view v[2];
    void *copy[2] = {NULL, NULL};
    for (int i = 0; i < n; ++i) {
        v[i] = s[i];
        clnz_tensor t = view_tensor(&s[i]);
        tensor_info ti, ci;
        if (tensor_check(ctx, &t, &ti) == CLNZ_SUCCESS && relayout_pays(ctx, &ti) &&
            (copy[i] = relayout_copy(&ti, s[i].data, &ci)) != NULL) {
            v[i].data = copy[i]; /* else read where it lies */
            memcpy(v[i].strides, ci.strides, sizeof v[i].strides);
        }
    }
    ctx_clear_message(ctx); /* a failed check above is the calls' to report */
    clnz_status st = key_collect_slice(ctx, &c->keys, v, at);
    if (!st)
        st = select_slice(ctx, &c->sel, v, at);
    free_result(copy[0]);
    free_result(copy[1]);
    return st;
}

static clnz_status select_pairs_sliced(clnz_context *ctx, const slicing *s, const view *xv,
                                       int has_mask, const clnz_predicate *pred, clnz_array *out)
{
    key_runs kr;
    select_pairs c = {{pred, has_mask, {0}}, {0}};
    key_collect_init(&c.keys, &s->views[0], pred, UINT64_MAX, &kr);
    key_reader r = {0};
    char *values = NULL;
    clnz_status st = slices_each(ctx, s, select_pair_slice, &c);
    size_t z = kr.keys.used / sizeof(uint64_t), elem = xv->elem;
    if (!st && c.sel.values.used != z * elem) /* the same mask and predicate: never */
        st = ctx_fail(ctx, CLNZ_ERROR_INVALID_VALUE, "the device gave %zu keys and %zu values",
                      z, c.sel.values.used / elem);
    if (!st)
        st = key_reader_start(ctx, &kr, &r);
    if (!st && !(values = alloc_result(z * elem)))
        st = ctx_fail(ctx, CLNZ_ERROR_OUT_OF_HOST_MEMORY, "cannot allocate the result");
    for (size_t k = 0; !st && k < z;) {
        size_t at, n = key_reader_stretch(&r, &at);
        memcpy(values + k * elem, c.sel.values.data + at * elem, n * elem);
        k += n;
    }
    key_reader_end(&r);
    free(c.sel.values.data);
    key_runs_free(&kr);
    if (st) {
        free_result(values);
        return st;
    }
    return values_out(out, values, xv->dtype, z);
}

/* 1 when the two views (of one shape) lie in the same memory order, their
 * dimensions of extent 1 aside (their strides are anything: a mask made by
 * m[:, None] has a 0 there). */
static int same_memory_order(const view *a, const view *b)
{
    int pa[CLNZ_MAX_RANK], pb[CLNZ_MAX_RANK];
    dims_by_stride(a->rank, a->strides, pa);
    dims_by_stride(b->rank, b->strides, pb);
    for (int i = 0, j = 0;; ++i, ++j) {
        while (i < a->rank && a->shape[pa[i]] == 1)
            ++i;
        while (j < b->rank && b->shape[pb[j]] == 1)
            ++j;
        if (i == a->rank || j == b->rank)
            return i == a->rank && j == b->rank;
        if (pa[i] != pb[j])
            return 0;
    }
}

/* Past one allocation. Where x and the mask lie in C order, slices come in
 * C order and each is an ordinary select, its values straight after the
 * last slice's. Where x and the mask (x itself without one) share another
 * memory order, the slices' values go with their keys (select_pairs);
 * where their orders differ, slices in one's order would be scattered in
 * the other's memory, so the values are gathered by key from host memory. */
static clnz_status select_sliced(clnz_context *ctx, const view *xv, const view *mv, int has_mask,
                                 const clnz_predicate *pred, clnz_array *out)
{
    view both[2] = {*mv, *xv};
    /* each slice's results must fit too where halving a span need not
     * halve elements: its values, and its keys where they are kept */
    int overlaps = view_overlaps(xv) || view_overlaps(mv);
    int in_c = view_in_c_order(xv) && view_in_c_order(mv);
    size_t per_elem = in_c ? xv->elem : sizeof(uint64_t);
    slicing s = {both, 1 + has_mask, ctx->max_alloc, overlaps ? per_elem : 0, 0};
    if (!in_c && (!has_mask || same_memory_order(xv, mv)))
        return select_pairs_sliced(ctx, &s, xv, has_mask, pred, out);
    if (!in_c)
        return select_by_keys(ctx, xv, mv, pred, out);
    select_collect c = {pred, has_mask, {0}};
    clnz_status st = slices_each(ctx, &s, select_slice, &c);
    char *data = st ? NULL : realloc(c.values.data, c.values.used ? c.values.used : 1);
    if (!st && !data)
        st = ctx_fail(ctx, CLNZ_ERROR_OUT_OF_HOST_MEMORY, "cannot allocate the result");
    if (st) {
        free(c.values.data);
        return st;
    }
    return values_out(out, data, xv->dtype, c.values.used / xv->elem);
}

clnz_status clnz_select(clnz_context *ctx, const clnz_tensor *x, const void *x_data,
                        const clnz_tensor *mask, const void *mask_data,
                        const clnz_predicate *pred, clnz_array *out)
{
    CTX_ENTER(ctx);
    if (!out)
        return ctx_fail(ctx, CLNZ_ERROR_INVALID_ARGUMENT, "out is NULL");
    memset(out, 0, sizeof *out);
    tensor_info xi, mi;
    view xv, mv;
    int fits, mask_fits = 1;
    clnz_status st = host_view(ctx, x, x_data, &xi, &xv, &fits);
    if (!st && mask)
        st = host_view(ctx, mask, mask_data, &mi, &mv, &mask_fits);
    if (!st && mask)
        st = select_same_shape(ctx, &xi, &mi);
    if (st)
        return st;
    if (!mask)
        mi = xi, mv = xv;
    if (fits && mask_fits) {
        st = select_direct(ctx, &xi, x_data, &mi, mask_data, mask != NULL, pred, out);
        if (st != CLNZ_ERROR_TOO_LARGE) /* else the values did not fit: slices */
            return st;
        ctx_clear_message(ctx);
    }
    return select_sliced(ctx, &xv, &mv, mask != NULL, pred, out);
}
