/* nonzero.c: the coordinates (or flat indices) of the selected elements,
 * device-resident (clnz_nonzero_enqueue) and blocking (clnz_nonzero). Both
 * describe the operation once, as a job (strategy/strategy.h), and the
 * chosen strategy runs it. */
#include "ops/ops.h"
#include "slices/slices.h"

#include <stdlib.h>

/* A device-resident nonzero's input checked: its tensor and the options
 * (*width: coordinates per entry). */
static clnz_status device_input(clnz_context *ctx, const clnz_tensor *in,
                                const clnz_nonzero_options *o, tensor_info *t, int *width)
{
    clnz_status st = tensor_check(ctx, in, t);
    return st ? st : nz_check_options(ctx, t, o, width);
}

clnz_status clnz_nonzero_enqueue(clnz_context *ctx, const clnz_tensor *in, cl_mem in_buf,
                                 size_t in_offset, const clnz_predicate *pred,
                                 const clnz_nonzero_options *opts, cl_mem out_buf,
                                 size_t out_offset, uint64_t capacity, cl_mem count_buf,
                                 size_t count_offset, cl_uint num_events,
                                 const cl_event *wait_list, cl_event *out_event)
{
    CTX_ENTER(ctx);
    clnz_nonzero_options defaults;
    const clnz_nonzero_options *o = nz_options_or_defaults(opts, &defaults);
    tensor_info t;
    nz_job job = {0};
    int width;
    clnz_status st = events_check(ctx, num_events, wait_list);
    if (!st)
        st = device_input(ctx, in, o, &t, &width);
    size_t ib = index_bytes(o->index_type);
    if (!st)
        st = output_check(ctx, out_buf, out_offset, capacity, nz_per_entry(o, width), ib);
    if (!st)
        st = buffer_check(ctx, count_buf, "count", count_offset, 1, sizeof(cl_ulong));
    if (!st)
        st = job_on_buffer(ctx, &job, &t, pred, in_buf, in_offset);
    if (st) {
        job_release(&job);
        return st;
    }
    job_coords(&job, o, width);
    job.out = out_buf;
    job.out_off = out_offset / ib;
    job.capacity = capacity;
    job.count = count_buf;
    job.count_off = count_offset / sizeof(cl_ulong);
    chain ch;
    chain_begin(&ch, ctx, num_events, wait_list);
    st = job_run(&ch, &job);
    if (!st && o->has_size)
        st = job_fill(&ch, &job, o->fill);
    st = chain_end(&ch, st, out_event);
    job_release(&job); /* freed once the kernels using it are done */
    return st;
}

clnz_status clnz_nonzero_alloc(clnz_context *ctx, const clnz_tensor *in, cl_mem in_buf,
                               size_t in_offset, const clnz_predicate *pred,
                               const clnz_nonzero_options *opts, cl_mem *out_buf,
                               uint64_t *count, cl_mem count_buf, size_t count_offset,
                               cl_uint num_events, const cl_event *wait_list,
                               cl_event *out_event)
{
    EXACT_ENTER(ctx, out_buf, count);
    clnz_nonzero_options defaults;
    const clnz_nonzero_options *o = nz_options_or_defaults(opts, &defaults);
    tensor_info t;
    nz_job job = {0};
    cl_mem own_count = NULL;
    int width;
    clnz_status st = exact_outputs(ctx, out_buf, count);
    if (!st)
        st = events_check(ctx, num_events, wait_list);
    if (!st)
        st = device_input(ctx, in, o, &t, &width);
    if (!st)
        st = job_on_buffer(ctx, &job, &t, pred, in_buf, in_offset);
    if (!st)
        st = exact_count_buffer(ctx, &job, count_buf, count_offset, &own_count);
    if (!st) {
        job_coords(&job, o, width);
        exact_entries e = {o->has_size ? (uint64_t)o->size : UINT64_MAX,
                           nz_per_entry(o, width) * index_bytes(o->index_type), o->has_size,
                           o->fill};
        st = job_run_exact(ctx, &job, &e, num_events, wait_list, out_buf, count, out_event);
    }
    if (own_count) /* released by OpenCL once the commands using it are done */
        clReleaseMemObject(own_count);
    job_release(&job);
    return st;
}

clnz_status nonzero_direct(clnz_context *ctx, const tensor_info *t, const void *data,
                           const clnz_predicate *pred, const clnz_nonzero_options *o,
                           clnz_result *res)
{
    host_job h;
    int width;
    void *host = NULL;
    uint64_t entries = 0;
    clnz_status st = nz_check_options(ctx, t, o, &width);
    if (!st)
        st = job_init(ctx, &h.job, t, pred);
    if (st)
        return st;
    job_coords(&h.job, o, width);
    st = host_job_begin(ctx, &h, data);
    if (!st)
        st = host_job_entries(&h, o->has_size ? (uint64_t)o->size : UINT64_MAX,
                              nz_per_entry(o, width) * index_bytes(o->index_type), o->has_size,
                              o->fill, &host, &entries);
    if (!st) {
        nz_result_fill(res, host, o, width, entries, h.z);
        host = NULL;
    }
    st = host_job_end(&h, st); /* waits for the device before host memory goes */
    free(host);
    return st;
}

clnz_status clnz_nonzero(clnz_context *ctx, const clnz_tensor *in, const void *data,
                         const clnz_predicate *pred, const clnz_nonzero_options *opts,
                         clnz_result *res)
{
    CTX_ENTER(ctx);
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
        st = nonzero_direct(ctx, &t, data, pred, o, res);
        if (st != CLNZ_ERROR_TOO_LARGE) /* else the result did not fit: cut finer */
            return st;
        ctx_clear_message(ctx);
        budget /= 2;
    }
    key_runs keys;
    /* a static size needs only its first entries' keys */
    st = sliced_keys(ctx, &v, pred, budget, o->has_size ? (uint64_t)o->size : UINT64_MAX, &keys);
    if (!st)
        st = keys_to_result(ctx, &t, &keys, o, width, res);
    key_runs_free(&keys);
    return st;
}
