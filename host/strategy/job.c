/* job.c: a compacting job's input, placed in its buffers (see strategy.h). */
#include "strategy/strategy.h"

#include <string.h>

clnz_status job_init(clnz_context *ctx, nz_job *job, const tensor_info *t,
                     const clnz_predicate *pred)
{
    memset(job, 0, sizeof *job);
    job->t = *t;
    job->in_what = "input"; /* select names its own after this */
    return pred_to_keys(ctx, t->dtype, pred, &job->keys);
}

clnz_status job_bind(clnz_context *ctx, nz_job *job, cl_mem in, size_t in_byte_off)
{
    job->in = in;
    clnz_status st = tensor_base(ctx, &job->t, in, in_byte_off, job->in_what, &job->base);
    return st ? st : tensor_meta_buffer(ctx, &job->t, &job->meta);
}

clnz_status job_bind_values(clnz_context *ctx, nz_job *job, const tensor_info *x, cl_mem buf,
                            int64_t base)
{
    job->emit = ABI_EMIT_VALUES;
    job->value_bytes = x->elem;
    job->x = buf;
    job->x_base = base;
    job->x_contiguous = x->contiguous;
    job->x_lo = x->n ? (uint64_t)(base + x->min_off) * x->elem : 0;
    job->x_hi = x->n ? (uint64_t)(base + x->max_off + 1) * x->elem : 0;
    return tensor_meta_buffer(ctx, x, &job->x_meta);
}

clnz_status job_apart(clnz_context *ctx, const nz_job *job)
{
    const tensor_info *t = &job->t;
    mem_span reads[2] = {
        tensor_span(job->in, t, job->base, job->in_what),
        {job->emit == ABI_EMIT_VALUES ? job->x : NULL, job->x_lo, job->x_hi, "values (x)"}};
    int writes_entries = job->emit != ABI_EMIT_COUNT && job->capacity > 0;
    size_t unit = job->emit == ABI_EMIT_VALUES ? job->value_bytes : job->idx_bytes;
    uint64_t per_entry =
        job->emit == ABI_EMIT_COORDS && job->layout != ABI_LAYOUT_FLAT ? (uint64_t)job->width : 1;
    mem_span writes[2] = {{writes_entries ? job->out : NULL, job->out_off * unit,
                           (job->out_off + job->capacity * per_entry) * unit, "output"},
                          job->batches
                              ? (mem_span){job->offsets, job->offsets_off * sizeof(cl_long),
                                           (job->offsets_off + job->batches + 1) * sizeof(cl_long),
                                           "offsets"}
                              : (mem_span){job->count, job->count_off * sizeof(cl_ulong),
                                           (job->count_off + 1) * sizeof(cl_ulong), "count"}};
    return spans_apart(ctx, writes, 2, reads, 2);
}

job_kind job_kind_of(const nz_job *job)
{
    /* value_bytes stays when a select job only counts (emit set to count):
     * the one-pass kernels then build the program that writes it too */
    job_kind k = {job->t.dtype, job->keys.nonzero, job->emit, job->value_bytes,
                  job->batches > 0};
    return k;
}

void job_release(nz_job *job)
{
    if (job->meta)
        clReleaseMemObject(job->meta);
    if (job->x_meta)
        clReleaseMemObject(job->x_meta);
    job->meta = job->x_meta = NULL;
}

clnz_status job_empty(chain *ch, nz_job *job)
{
    if (job->batches)
        return chain_fill(ch, job->offsets, job->offsets_off * sizeof(cl_long), 0,
                          sizeof(cl_long), job->batches + 1);
    return chain_fill(ch, job->count, job->count_off * sizeof(cl_ulong), 0, sizeof(cl_ulong), 1);
}

void job_args_of(const nz_job *job, cl_mem spare, job_args *a)
{
    int writes = job->emit != ABI_EMIT_COUNT && job->capacity > 0;
    *a = (job_args){job->in, job->meta, job->base, job->t.n, job->t.krank, job->t.contiguous,
                    job->keys.lo, job->keys.hi, job->keys.invert};
    a->emit = writes ? job->emit : ABI_EMIT_COUNT;
    a->out = writes ? job->out : spare;
    a->out_off = writes ? job->out_off : 0;
    a->capacity = writes ? job->capacity : 0;
    a->layout = job->layout, a->width = job->width, a->reverse = job->reverse;
    a->idx_bytes = (cl_int)job->idx_bytes;
    /* without values of its own, x is the input (never read) */
    a->x = job->x ? job->x : job->in;
    a->x_meta = job->x_meta ? job->x_meta : job->meta;
    a->x_base = job->x_base;
    a->x_contiguous = job->x_meta ? job->x_contiguous : job->t.contiguous;
    a->count = job->count, a->count_off = job->count_off;
    a->offsets = job->batches ? job->offsets : spare;
    a->offsets_off = job->offsets_off, a->batches = job->batches;
    a->item_elems = job->batches ? job->t.n / job->batches : 0;
}
