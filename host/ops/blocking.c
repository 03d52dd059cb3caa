/* blocking.c: a compacting job run through the chosen strategy, on the
 * caller's buffers (job_run: the device-resident calls) or on a host array
 * (host_job_*: the blocking calls). A blocking call uploads its input (a
 * CPU device uses the host memory where it lies), then either runs the
 * whole job into a buffer that holds the count and the worst case of
 * entries and reads both back at once (small results: one host round
 * trip), or writes it into a result allocated before the count is known
 * (ahead.c: a static size, or a guess from the context's last calls) and
 * reads the count with it, or counts, reads the count, allocates exactly
 * that many entries and writes them (the strategy may reuse what its
 * counting left). */
#include "ops/ops.h"
#include "core/program.h"
#include "core/relayout.h"
#include "core/result_mem.h"
#include "core/transfer.h"

#include <stdlib.h>
#include <string.h>

/* Results up to this size come home in one read with their count. */
#define ONE_SHOT_BYTES ((uint64_t)256 << 10)

void fill_program(program_ref *r)
{
    program_start(r, "fill");
}

clnz_status count_staged(chain *ch, cl_mem count, size_t byte_off, cl_mem_flags refused,
                         cl_mem *staged)
{
    *staged = NULL;
    if (!(mem_flags_or(count, refused) & refused)) /* unknown flags: copied, always right */
        return CLNZ_SUCCESS;
    clnz_status st = rw_buffer(ch->ctx, sizeof(cl_ulong), staged, "clCreateBuffer(count copy)");
    if (!st)
        st = chain_copy(ch, count, byte_off, *staged, 0, sizeof(cl_ulong));
    if (st && *staged) {
        clReleaseMemObject(*staged);
        *staged = NULL;
    }
    return st;
}

clnz_status job_fill(chain *ch, const nz_job *job, int64_t fill)
{
    clnz_context *ctx = ch->ctx;
    uint64_t per_entry = job->layout == ABI_LAYOUT_FLAT ? 1 : (uint64_t)job->width;
    uint64_t slots = job->capacity * per_entry;
    if (slots == 0)
        return CLNZ_SUCCESS;
    cl_kernel k;
    program_ref prog;
    fill_program(&prog);
    clnz_status st = program_kernel(ctx, &prog, "nz_fill", &k);
    size_t local = 0;
    if (!st)
        st = small_local(ctx, k, &local);
    cl_mem staged = NULL; /* a caller's write-only count, copied for the kernel */
    if (!st)
        st = count_staged(ch, job->count, (size_t)job->count_off * sizeof(cl_ulong),
                          CL_MEM_WRITE_ONLY, &staged);
    if (st)
        return st;
    cl_mem count = staged ? staged : job->count;
    cl_ulong out_off = job->out_off, cap = job->capacity, count_off = staged ? 0 : job->count_off;
    cl_int layout = job->layout, width = job->width, idx = (cl_int)job->idx_bytes;
    cl_long a_fill = fill;
    karg args[] = {KARG(job->out), KARG(out_off), KARG(cap),       KARG(layout), KARG(width),
                   KARG(idx),      KARG(count),   KARG(count_off), KARG(a_fill)};
    st = set_args(ctx, k, "nz_fill", args, 9);
    if (!st)
        st = chain_launch(ch, k, "nz_fill", (size_t)((slots + local - 1) / local * local), local);
    if (staged)
        clReleaseMemObject(staged);
    return st;
}

clnz_status job_run(chain *ch, nz_job *job)
{
    const strategy *s;
    clnz_status st = job_apart(ch->ctx, job);
    if (!st)
        st = strategy_choose(ch->ctx, job, &s);
    if (st)
        return st;
    /* nothing to write (a count, or no room for entries): the counting
     * pass alone leaves the same count and offsets, without the write pass */
    return job->emit == ABI_EMIT_COUNT || job->capacity == 0 ? s->count(ch, job)
                                                             : s->write(ch, job, 0);
}

static clnz_status chosen(host_job *h)
{
    return h->s ? CLNZ_SUCCESS : strategy_choose(h->ch.ctx, &h->job, &h->s);
}

clnz_status rw_buffer(clnz_context *ctx, size_t bytes, cl_mem *buf, const char *what)
{
    cl_int e = CL_SUCCESS;
    *buf = clCreateBuffer(ctx->cl, CL_MEM_READ_WRITE, bytes, NULL, &e);
    return CL_CHECK(ctx, e, what);
}

clnz_status result_fits(clnz_context *ctx, uint64_t entries, size_t entry_bytes)
{
    if (!entry_bytes || entries <= ctx->max_alloc / entry_bytes)
        return CLNZ_SUCCESS;
    return ctx_fail(ctx, CLNZ_ERROR_TOO_LARGE,
                    "the result (%llu entries of %zu bytes) exceeds the device's largest "
                    "allocation (%llu bytes)",
                    (unsigned long long)entries, entry_bytes, (unsigned long long)ctx->max_alloc);
}

clnz_status batch_fits_host(clnz_context *ctx, uint64_t items, uint64_t n, const char *what)
{
    if (host_holds(n, sizeof(int64_t)))
        return CLNZ_SUCCESS;
    return ctx_fail(ctx, CLNZ_ERROR_TOO_LARGE,
                    "a batch of %llu items is too large: its %s do not fit in memory "
                    "(%llu bytes on this host)",
                    (unsigned long long)items, what, (unsigned long long)host_memory_bytes());
}

clnz_status job_on_buffer(clnz_context *ctx, nz_job *job, const tensor_info *t,
                          const clnz_predicate *pred, cl_mem buf, size_t byte_off)
{
    clnz_status st = job_init(ctx, job, t, pred);
    return st ? st : job_bind(ctx, job, buf, byte_off);
}

clnz_status host_job_begin(clnz_context *ctx, host_job *h, const void *data)
{
    h->s = NULL;
    h->inb = h->xb = h->countb = h->offsetsb = NULL;
    h->in_copy = h->x_copy = NULL;
    h->z = 0;
    h->counted = 0;
    chain_begin_own(&h->ch, ctx); /* the call waits for its own commands */
    tensor_info c;
    if (data && relayout_pays(ctx, &h->job.t) && (h->in_copy = relayout_copy(&h->job.t, data, &c)))
        h->job.t = c, data = h->in_copy; /* else the strided input as it is */
    clnz_status st = upload(ctx, &h->job.t, data, &h->inb, &h->job.base);
    if (st)
        return st;
    h->job.in = h->inb;
    return tensor_meta_buffer(ctx, &h->job.t, &h->job.meta);
}

clnz_status host_job_values(host_job *h, const tensor_info *x, const void *x_data)
{
    int64_t base;
    tensor_info c;
    if (x_data && relayout_pays(h->ch.ctx, x) && (h->x_copy = relayout_copy(x, x_data, &c)))
        x = &c, x_data = h->x_copy;
    clnz_status st = upload(h->ch.ctx, x, x_data, &h->xb, &base);
    return st ? st : job_bind_values(h->ch.ctx, &h->job, x, h->xb, base);
}

clnz_status host_job_count_buffer(host_job *h)
{
    clnz_context *ctx = h->ch.ctx;
    nz_job *job = &h->job;
    clnz_status st = chosen(h);
    if (!st && job->batches && !h->offsetsb) {
        /* TOO_LARGE, not the driver's CL_INVALID_BUFFER_SIZE: the batched
         * call then cuts the batch in slices (batched.c) */
        st = job->batches >= ctx->max_alloc / sizeof(cl_long)
                 ? ctx_fail(ctx, CLNZ_ERROR_TOO_LARGE,
                            "the offsets of %llu items exceed the device's largest allocation "
                            "(%llu bytes)",
                            (unsigned long long)job->batches, (unsigned long long)ctx->max_alloc)
                 : rw_buffer(ctx, (size_t)(job->batches + 1) * sizeof(cl_long), &h->offsetsb,
                             "clCreateBuffer(offsets)");
        job->offsets = job->count = h->offsetsb;
        job->offsets_off = 0;
        job->count_off = job->batches;
    } else if (!st && !job->batches && !h->countb) {
        st = rw_buffer(ctx, sizeof(cl_ulong), &h->countb, "clCreateBuffer(count)");
        job->count = h->countb;
        job->count_off = 0;
    }
    return st;
}

clnz_status host_job_count(host_job *h, int64_t *offsets)
{
    nz_job *job = &h->job;
    clnz_status st = host_job_count_buffer(h);
    if (!st)
        st = h->s->count(&h->ch, job);
    if (st)
        return st;
    if (job->batches) {
        st = read_back(&h->ch, h->offsetsb, (size_t)(job->batches + 1) * sizeof *offsets,
                       offsets);
        h->z = st ? 0 : (uint64_t)offsets[job->batches];
        h->counted = !st;
        return st;
    }
    cl_ulong z = 0;
    st = read_back(&h->ch, h->countb, sizeof z, &z);
    h->z = z;
    h->counted = !st;
    return st;
}

/* Bytes per entry, and the unit the output offset counts in. */
static size_t entry_unit(const nz_job *job) { return job->emit == ABI_EMIT_VALUES ? job->value_bytes : job->idx_bytes; }

clnz_status host_job_write(host_job *h, cl_mem out, uint64_t out_off, uint64_t cap, int counted,
                           int has_fill, int64_t fill)
{
    nz_job *job = &h->job;
    job->out = out;
    job->out_off = out_off;
    job->capacity = cap;
    clnz_status st = h->s->write(&h->ch, job, counted);
    return !st && has_fill ? job_fill(&h->ch, job, fill) : st;
}

void columns_together(const nz_job *job, void *dst, const void *src, uint64_t z, uint64_t apart)
{
    size_t col = (size_t)z * job->idx_bytes, from = (size_t)apart * job->idx_bytes;
    for (int j = 0; j < job->width; ++j) /* each moves down (or to another block): memmove */
        memmove((char *)dst + j * col, (const char *)src + j * from, col);
}

/* The job into one buffer, [count | worst entries], read back at once. */
static clnz_status one_shot(host_job *h, uint64_t worst, size_t entry_bytes, uint64_t fixed,
                            int has_fill, int64_t fill, void **host, uint64_t *entries)
{
    clnz_context *ctx = h->ch.ctx;
    nz_job *job = &h->job;
    size_t unit = entry_unit(job), bytes = sizeof(cl_ulong) + (size_t)worst * entry_bytes;
    unsigned char *stage = malloc(bytes);
    if (!stage)
        return ctx_fail(ctx, CLNZ_ERROR_OUT_OF_HOST_MEMORY, "cannot allocate %zu bytes", bytes);
    cl_mem buf = NULL;
    clnz_status st = rw_buffer(ctx, bytes, &buf, "clCreateBuffer(result)");
    if (!st) {
        job->count = buf;
        job->count_off = 0;
        /* the entries start after the count */
        st = host_job_write(h, buf, sizeof(cl_ulong) / unit, worst, 0, has_fill, fill);
    }
    if (!st)
        st = read_back(&h->ch, buf, bytes, stage);
    if (buf)
        clReleaseMemObject(buf);
    if (!st) {
        memcpy(&h->z, stage, sizeof h->z);
        *entries = fixed != UINT64_MAX ? fixed : h->z;
        size_t got = (size_t)*entries * entry_bytes;
        *host = alloc_result(got);
        if (!*host) {
            st = ctx_fail(ctx, CLNZ_ERROR_OUT_OF_HOST_MEMORY, "cannot allocate the result");
        } else if (job->emit == ABI_EMIT_COORDS && job->layout == ABI_LAYOUT_COLUMNS) {
            columns_together(job, *host, stage + 8, *entries, worst);
        } else {
            memcpy(*host, stage + 8, got);
        }
    }
    free(stage);
    return st;
}

/* The entries after the count: counts first unless the job was counted,
 * then writes exactly that many (or `fixed`). */
static clnz_status counted_entries(host_job *h, uint64_t fixed, size_t entry_bytes,
                                   int has_fill, int64_t fill, void **host, uint64_t *entries)
{
    clnz_context *ctx = h->ch.ctx;
    nz_job *job = &h->job;
    clnz_status st = h->counted ? CLNZ_SUCCESS : host_job_count(h, NULL);
    if (st)
        return st;
    *entries = fixed != UINT64_MAX ? fixed : h->z;
    st = result_fits(ctx, *entries, entry_bytes);
    if (st)
        return st;
    size_t bytes = (size_t)*entries * entry_bytes;
    cl_mem outb = NULL;
    st = result_alloc(ctx, bytes, host, &outb, &job->out_fresh);
    if (!st && bytes) {
        st = host_job_write(h, outb, 0, *entries, 1, has_fill, fill);
        if (!st)
            st = fetch_result(&h->ch, outb, bytes, *host, ctx->is_cpu);
    }
    if (outb)
        clReleaseMemObject(outb);
    return st;
}

clnz_status host_job_entries(host_job *h, uint64_t fixed, size_t entry_bytes, int has_fill,
                             int64_t fill, void **host, uint64_t *entries)
{
    nz_job *job = &h->job;
    int counted = h->counted;
    clnz_status st = chosen(h);
    if (st)
        return st;
    uint64_t worst = fixed != UINT64_MAX ? fixed : job->t.n;
    *host = NULL;
    int small = entry_bytes && worst <= ONE_SHOT_BYTES / entry_bytes;
    if (!counted && !job->batches && small) {
        st = one_shot(h, worst, entry_bytes, fixed, has_fill, fill, host, entries);
    } else {
        uint64_t ahead = counted || job->batches ? 0 : ahead_entries(h, fixed, entry_bytes);
        if (ahead)
            st = host_job_ahead(h, ahead, fixed, entry_bytes, has_fill, fill, host, entries);
        if (!st && !*host) /* no result made ahead, or the count passed it */
            st = counted_entries(h, fixed, entry_bytes, has_fill, fill, host, entries);
    }
    /* the guesses come from calls that could use one: a few dense
     * elements before a large sparse input would make its guess all of it */
    if (!st && !job->batches && !small)
        ahead_learn(h->ch.ctx, job->t.n, h->z);
    return st;
}

clnz_status host_job_end(host_job *h, clnz_status st)
{
    st = chain_end(&h->ch, st, NULL);
    job_release(&h->job);
    cl_mem *owned[] = {&h->inb, &h->xb, &h->countb, &h->offsetsb};
    for (size_t i = 0; i < sizeof owned / sizeof owned[0]; ++i)
        if (*owned[i])
            clReleaseMemObject(*owned[i]);
    free_result(h->in_copy); /* the device is done with them */
    free_result(h->x_copy);
    return st;
}
