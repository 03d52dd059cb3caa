/* host_api.c: the blocking convenience calls on host arrays. They upload the
 * span of memory the view covers, run the device-resident stages, and read
 * the result back. */
#include "ops/ops.h"
#include "core/context.h"
#include "core/error.h"
#include "core/transfer.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void clnz_result_free(clnz_result *res)
{
    if (!res)
        return;
    free(res->indices);
    res->indices = NULL;
}


/* Plans, uploads and makes the count buffer. */
clnz_status host_run_begin(clnz_context *ctx, const clnz_tensor *in, const void *data,
                           const clnz_predicate *pred, size_t value_bytes, host_run *r)
{
    memset(r, 0, sizeof *r);
    chain_begin(&r->ch, ctx, 0, NULL);
    clnz_status st = nz_plan_make(ctx, in, pred, value_bytes, &r->p);
    if (!st)
        st = upload(ctx, &r->p.t, data, &r->inb, &r->base);
    if (!st)
        st = tensor_meta_buffer(ctx, &r->p.t, &r->meta);
    if (st)
        return st;
    cl_int e = CL_SUCCESS;
    r->countb = clCreateBuffer(ctx->cl, CL_MEM_READ_WRITE, sizeof(cl_ulong), NULL, &e);
    return CL_CHECK(ctx, e, "clCreateBuffer(count)");
}

/* The counting pass and the count read back. */
clnz_status host_run_counted(host_run *r)
{
    clnz_status st = nz_enqueue_count(&r->ch, &r->p, r->inb, r->base, r->meta, r->countb, 0);
    cl_ulong z = 0;
    if (!st)
        st = read_back(&r->ch, r->countb, sizeof z, &z);
    r->z = z;
    return st;
}

/* An input of one tile: one launch writes the count and up to `capacity`
 * entries into one buffer, [count | entries], and one read brings both back.
 * *host gets the result's indices (entries x per_entry, compacted). */
static clnz_status host_run_single(clnz_context *ctx, host_run *r, const clnz_nonzero_options *o,
                                   int width, uint64_t capacity, uint64_t per_entry,
                                   void **host, uint64_t *entries)
{
    size_t ib = index_bytes(o->index_type);
    size_t bytes = sizeof(cl_ulong) + (size_t)(capacity * per_entry) * ib;
    unsigned char *stage = malloc(bytes);
    if (!stage)
        return ctx_fail(ctx, CLNZ_ERROR_OUT_OF_HOST_MEMORY, "cannot allocate %zu bytes", bytes);
    cl_int e = CL_SUCCESS;
    cl_mem buf = clCreateBuffer(ctx->cl, CL_MEM_READ_WRITE, bytes, NULL, &e);
    clnz_status st = CL_CHECK(ctx, e, "clCreateBuffer(result)");
    uint64_t off = sizeof(cl_ulong) / ib; /* the entries start after the count */
    if (!st)
        st = nz_enqueue_single(&r->ch, &r->p, r->inb, r->base, r->meta, o, width, buf, off,
                               capacity, buf, 0);
    if (!st && o->has_size)
        st = nz_enqueue_fill(&r->ch, o, width, buf, off, capacity, buf, 0);
    if (!st)
        st = read_back(&r->ch, buf, bytes, stage);
    if (buf)
        clReleaseMemObject(buf);
    if (!st) {
        memcpy(&r->z, stage, sizeof r->z);
        *entries = o->has_size ? capacity : r->z;
        size_t row = (size_t)*entries * ib;
        *host = malloc(row * per_entry > 0 ? row * per_entry : 1);
        if (!*host)
            st = ctx_fail(ctx, CLNZ_ERROR_OUT_OF_HOST_MEMORY, "cannot allocate the result");
        else if (o->layout == CLNZ_LAYOUT_COLUMNS) /* columns are `capacity` apart */
            for (uint64_t j = 0; j < per_entry; ++j)
                memcpy((char *)*host + j * row, stage + 8 + j * capacity * ib, row);
        else
            memcpy(*host, stage + 8, row * per_entry);
    }
    free(stage);
    return st;
}

clnz_status host_run_end(host_run *r, clnz_status st)
{
    st = chain_end(&r->ch, st, NULL);
    if (r->countb)
        clReleaseMemObject(r->countb);
    if (r->meta)
        clReleaseMemObject(r->meta);
    if (r->inb)
        clReleaseMemObject(r->inb);
    return st;
}

clnz_status nonzero_direct(clnz_context *ctx, const clnz_tensor *in, const void *data,
                           const clnz_nonzero_options *o, clnz_result *res)
{
    tensor_info t;
    int width;
    clnz_status st = tensor_check(ctx, in, &t);
    if (!st)
        st = nz_check_options(ctx, &t, o, &width);
    if (st)
        return st;
    host_run r;
    cl_mem outb = NULL;
    void *host = NULL;
    uint64_t per_entry = o->layout == CLNZ_LAYOUT_FLAT ? 1 : (uint64_t)width;
    uint64_t entries = 0;
    TRY(host_run_begin(ctx, in, data, &o->pred, 0, &r));
    uint64_t single_cap = o->has_size ? (uint64_t)o->size : t.n;
    if (r.p.tiles == 1 && single_cap <= UINT64_C(1) << 24) { /* one launch, one read */
        TRY(host_run_single(ctx, &r, o, width, single_cap, per_entry, &host, &entries));
        goto result;
    }
    TRY(host_run_counted(&r));

    entries = o->has_size ? (uint64_t)o->size : r.z;
    size_t ib = index_bytes(o->index_type);
    if (per_entry && entries > ctx->max_alloc / ib / per_entry)
        TRY(ctx_fail(ctx, CLNZ_ERROR_TOO_LARGE,
                     "the output (%llu entries of %llu indices) exceeds the device's largest "
                     "allocation (%llu bytes)",
                     (unsigned long long)entries, (unsigned long long)per_entry,
                     (unsigned long long)ctx->max_alloc));
    size_t bytes = (size_t)(entries * per_entry * ib);
    TRY(result_alloc(ctx, bytes, &host, &outb));
    if (bytes) {
        TRY(nz_enqueue_write(&r.ch, &r.p, r.inb, r.base, r.meta, o, width, outb, 0, entries));
        if (o->has_size)
            TRY(nz_enqueue_fill(&r.ch, o, width, outb, 0, entries, r.countb, 0));
        TRY(fetch_result(&r.ch, outb, bytes, host, ctx->is_cpu));
    }
result:
    res->indices = host;
    host = NULL;
    res->count = (int64_t)r.z;
    res->index_type = o->index_type;
    if (o->layout == CLNZ_LAYOUT_FLAT) {
        res->ndim = 1;
        res->shape[0] = (int64_t)entries;
    } else {
        res->ndim = 2;
        res->shape[0] = o->layout == CLNZ_LAYOUT_ROWS ? (int64_t)entries : width;
        res->shape[1] = o->layout == CLNZ_LAYOUT_ROWS ? width : (int64_t)entries;
    }
done:
    st = host_run_end(&r, st);
    free(host);
    if (outb)
        clReleaseMemObject(outb);
    return st;
}

clnz_status count_direct(clnz_context *ctx, const clnz_tensor *in, const void *data,
                         const clnz_predicate *pred, int64_t *count)
{
    host_run r;
    clnz_status st = host_run_begin(ctx, in, data, pred, 0, &r);
    if (!st)
        st = host_run_counted(&r);
    if (!st)
        *count = (int64_t)r.z;
    return host_run_end(&r, st);
}
