/* batched.c: nonzero over a batch of items in one call, as CSR (offsets per
 * item, then the items' coordinates). One job over the whole batch: the
 * strategy writes the offsets of the items (strategy.h: batches) and the
 * entries with the width of an item, so that the batch coordinate is not
 * written. */
#include "ops/ops.h"
#include "slices/slices.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Checks the options against one item (shape[1:]); *item_opts is what the
 * writing pass runs with, *width the coordinates per entry. */
static clnz_status batch_check(clnz_context *ctx, const tensor_info *t,
                               const clnz_nonzero_options *o, clnz_nonzero_options *item_opts,
                               int *width)
{
    if (t->rank < 1)
        return ctx_fail(ctx, CLNZ_ERROR_INVALID_ARGUMENT,
                        "batched nonzero needs rank >= 1: dimension 0 is the batch");
    if (o->layout != CLNZ_LAYOUT_ROWS)
        return ctx_fail(ctx, CLNZ_ERROR_INVALID_ARGUMENT, "batched nonzero writes rows only");
    if (o->has_size)
        return ctx_fail(ctx, CLNZ_ERROR_INVALID_ARGUMENT,
                        "batched nonzero has no static size (each item has its own count)");
    if (o->width != 0 && o->width != t->rank - 1)
        return ctx_fail(ctx, CLNZ_ERROR_INVALID_WIDTH,
                        "batched nonzero writes the %d coordinates of an item (width %d asked)",
                        t->rank - 1, o->width);
    tensor_info item = *t; /* what the option checks read: rank, shape, n */
    item.rank = t->rank - 1;
    memmove(item.shape, t->shape + 1, sizeof(int64_t) * (size_t)item.rank);
    item.n = t->shape[0] ? t->n / (uint64_t)t->shape[0] : 0;
    *item_opts = *o;
    item_opts->width = item.rank;
    /* *width is then item.rank: dimensions 1 .. rank-1 of the input */
    clnz_status st = nz_check_options(ctx, &item, item_opts, width);
    if (st) { /* its message counts an item's dimensions: say so */
        char why[400];
        snprintf(why, sizeof why, "%s", clnz_context_message(ctx));
        return ctx_fail(ctx, st, "an item (the input without dimension 0): %s", why);
    }
    return CLNZ_SUCCESS;
}

/* A device-resident batched nonzero's job: input and options checked, the
 * offsets' buffer checked and bound (the count is its last slot). */
static clnz_status device_job(clnz_context *ctx, const clnz_tensor *in, cl_mem in_buf,
                              size_t in_offset, const clnz_predicate *pred,
                              const clnz_nonzero_options *opts, cl_mem offsets_buf,
                              size_t offsets_offset, nz_job *job, clnz_nonzero_options *o,
                              int *width)
{
    clnz_nonzero_options defaults;
    tensor_info t;
    clnz_status st = tensor_check(ctx, in, &t);
    if (!st)
        st = batch_check(ctx, &t, nz_options_or_defaults(opts, &defaults), o, width);
    if (st)
        return st;
    uint64_t batches = (uint64_t)t.shape[0];
    st = buffer_check(ctx, offsets_buf, "offsets", offsets_offset, batches + 1, sizeof(cl_long));
    if (!st)
        st = job_on_buffer(ctx, job, &t, pred, in_buf, in_offset);
    if (st)
        return st;
    job_coords(job, o, *width);
    job->batches = batches;
    job->offsets = job->count = offsets_buf;
    job->offsets_off = offsets_offset / sizeof(cl_long);
    job->count_off = job->offsets_off + batches;
    return CLNZ_SUCCESS;
}

clnz_status clnz_nonzero_batched_enqueue(clnz_context *ctx, const clnz_tensor *in, cl_mem in_buf,
                                         size_t in_offset, const clnz_predicate *pred,
                                         const clnz_nonzero_options *opts, cl_mem out_buf,
                                         size_t out_offset, uint64_t capacity,
                                         cl_mem offsets_buf, size_t offsets_offset,
                                         cl_uint num_events, const cl_event *wait_list,
                                         cl_event *out_event)
{
    CTX_ENTER(ctx);
    clnz_nonzero_options o = {0};
    nz_job job = {0};
    int width;
    clnz_status st = events_check(ctx, num_events, wait_list);
    if (!st)
        st = device_job(ctx, in, in_buf, in_offset, pred, opts, offsets_buf, offsets_offset,
                        &job, &o, &width);
    size_t ib = index_bytes(o.index_type);
    if (!st)
        st = output_check(ctx, out_buf, out_offset, capacity, (uint64_t)width, ib);
    if (!st) {
        job.out = out_buf;
        job.out_off = out_offset / ib;
        job.capacity = capacity;
        chain ch;
        chain_begin(&ch, ctx, num_events, wait_list);
        st = job_run(&ch, &job);
        st = chain_end(&ch, st, out_event);
    }
    job_release(&job);
    return st;
}

clnz_status clnz_nonzero_batched_alloc(clnz_context *ctx, const clnz_tensor *in, cl_mem in_buf,
                                       size_t in_offset, const clnz_predicate *pred,
                                       const clnz_nonzero_options *opts, cl_mem *out_buf,
                                       uint64_t *count, cl_mem offsets_buf,
                                       size_t offsets_offset, cl_uint num_events,
                                       const cl_event *wait_list, cl_event *out_event)
{
    EXACT_ENTER(ctx, out_buf, count);
    clnz_nonzero_options o = {0};
    nz_job job = {0};
    int width;
    clnz_status st = exact_outputs(ctx, out_buf, count);
    if (!st)
        st = events_check(ctx, num_events, wait_list);
    if (!st)
        st = device_job(ctx, in, in_buf, in_offset, pred, opts, offsets_buf, offsets_offset,
                        &job, &o, &width);
    if (!st) {
        exact_entries e = {UINT64_MAX, (size_t)width * index_bytes(o.index_type), 0, 0};
        st = job_run_exact(ctx, &job, &e, num_events, wait_list, out_buf, count, out_event);
    }
    job_release(&job);
    return st;
}

static void offsets_array(clnz_array *a, int64_t *offs, uint64_t batches)
{
    a->data = offs;
    a->dtype = CLNZ_I64;
    a->rank = 1;
    a->shape[0] = (int64_t)(batches + 1);
}

/* An input that fits one allocation: one upload, the count with the
 * offsets read back, then the entries. */
static clnz_status batched_direct(clnz_context *ctx, const tensor_info *t, const void *data,
                                  const clnz_predicate *pred, const clnz_nonzero_options *o,
                                  int width, clnz_result *res, clnz_array *offsets)
{
    uint64_t batches = (uint64_t)t->shape[0];
    int64_t *offs = malloc((size_t)(batches + 1) * sizeof *offs);
    if (!offs)
        return ctx_fail(ctx, CLNZ_ERROR_OUT_OF_HOST_MEMORY, "cannot allocate the offsets");
    host_job h;
    void *host = NULL;
    uint64_t z = 0;
    clnz_status st = job_init(ctx, &h.job, t, pred);
    if (!st && batches == 0) { /* no items: one offset, no entries, no work */
        offs[0] = 0;
        if (!(host = malloc(1)))
            st = ctx_fail(ctx, CLNZ_ERROR_OUT_OF_HOST_MEMORY, "out of host memory");
        if (!st) {
            nz_result_fill(res, host, o, width, 0, 0);
            offsets_array(offsets, offs, 0);
            return CLNZ_SUCCESS;
        }
    }
    if (st) {
        free(offs);
        return st;
    }
    job_coords(&h.job, o, width);
    h.job.batches = batches;
    st = host_job_begin(ctx, &h, data);
    if (!st)
        st = host_job_count(&h, offs);
    if (!st)
        st = host_job_entries(&h, UINT64_MAX, (size_t)width * index_bytes(o->index_type), 0, 0,
                              &host, &z);
    if (!st) {
        nz_result_fill(res, host, o, width, z, z);
        offsets_array(offsets, offs, batches);
        host = NULL, offs = NULL;
    }
    st = host_job_end(&h, st); /* waits for the device before host memory goes */
    free(host);
    free(offs);
    return st;
}

/* Past one allocation: every selected element's key (its flat C-order
 * index, slices/keys.c); the offsets count them by batch item, an item
 * being a stretch of item_elems keys, and the entries drop the batch
 * coordinate. */
static clnz_status batched_sliced(clnz_context *ctx, const tensor_info *t, const view *v,
                                  const clnz_predicate *pred, const clnz_nonzero_options *o,
                                  int width, uint64_t budget, clnz_result *res,
                                  clnz_array *offsets)
{
    uint64_t batches = (uint64_t)t->shape[0], item_elems = 1;
    for (int d = 1; d < t->rank; ++d)
        item_elems *= (uint64_t)t->shape[d];
    int64_t *offs = calloc((size_t)(batches + 1), sizeof *offs);
    if (!offs)
        return ctx_fail(ctx, CLNZ_ERROR_OUT_OF_HOST_MEMORY, "cannot allocate the offsets");
    key_runs keys;
    clnz_status st = sliced_keys(ctx, v, pred, budget, UINT64_MAX, &keys);
    /* the counts do not depend on the keys' order: read as they lie, a
     * division only where a key leaves the item of the one before */
    const uint64_t *k = (const uint64_t *)keys.keys.data;
    uint64_t b = 0, item_lo = 1, item_hi = 0;
    for (size_t i = 0, z = st ? 0 : keys.keys.used / sizeof *k; i < z; ++i) {
        if (k[i] < item_lo || k[i] >= item_hi) {
            b = k[i] / item_elems;
            item_lo = b * item_elems, item_hi = item_lo + item_elems;
        }
        offs[b + 1]++;
    }
    for (b = 0; b < batches; ++b)
        offs[b + 1] += offs[b];
    if (!st)
        st = keys_to_result(ctx, t, &keys, o, width, res);
    key_runs_free(&keys);
    if (st) {
        free(offs);
        return st;
    }
    offsets_array(offsets, offs, batches);
    return CLNZ_SUCCESS;
}

clnz_status clnz_nonzero_batched(clnz_context *ctx, const clnz_tensor *in, const void *data,
                                 const clnz_predicate *pred, const clnz_nonzero_options *opts,
                                 clnz_result *res, clnz_array *offsets)
{
    CTX_ENTER(ctx);
    clnz_status st = nz_result_start(ctx, res);
    if (st)
        return st;
    if (!offsets)
        return ctx_fail(ctx, CLNZ_ERROR_INVALID_ARGUMENT, "offsets is NULL");
    memset(offsets, 0, sizeof *offsets);
    clnz_nonzero_options defaults, o;
    tensor_info t;
    view v;
    int fits, width;
    st = host_view(ctx, in, data, &t, &v, &fits);
    if (!st)
        st = batch_check(ctx, &t, nz_options_or_defaults(opts, &defaults), &o, &width);
    if (st)
        return st;
    /* B + 1 offsets of 8 bytes, held on the host: for an empty batch of
     * 2^62 items the byte count wrapped to 8, and a launch over 2^62 items
     * followed; one of 2^40 items on a host that overcommits (the H200's)
     * was granted its 8 TiB and ran past 120 s summing them */
    uint64_t items = (uint64_t)t.shape[0]; /* >= 0 (tensor_check): items + 1 cannot wrap */
    st = batch_fits_host(ctx, items, items + 1, "offsets");
    if (st)
        return st;
    uint64_t budget = ctx->max_alloc;
    if (fits) {
        st = batched_direct(ctx, &t, data, pred, &o, width, res, offsets);
        if (st != CLNZ_ERROR_TOO_LARGE) /* else the entries did not fit: slices */
            return st;
        ctx_clear_message(ctx);
        budget /= 2;
    }
    return batched_sliced(ctx, &t, &v, pred, &o, width, budget, res, offsets);
}
