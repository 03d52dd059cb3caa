/* ahead.c: a blocking call's result made before its count is known.
 *
 * Counting first costs a host round trip between the passes: the host
 * waits for the count, then enqueues the writing pass and waits again.
 * On a CPU device that wait is most of what the blocking call costs over
 * the device-resident one, which waits once (issue 19): on the 2-core VMs
 * an idle vCPU halts, and the wake-up after a wait is the hypervisor's,
 * 4-108 us. A result whose size is known before the count (a static
 * size) or can be guessed is therefore allocated first: the whole job
 * writes into it and the count is read with it, one wait in all.
 *
 * The guess is the largest density of the context's last AHEAD_CALLS
 * calls (ahead_learn): it follows a rise at once and a fall only once the
 * denser calls have left the window, so that a density that wavers, or
 * alternates between two inputs, stays under it. Only a CPU device
 * guesses: its result is written where it is returned, so the room past
 * the count costs address space, not a copy (a GPU would read it back
 * over the bus). A count past the guess has the entries written again
 * into an exact result (two-pass reuses its counting); a count under half
 * of it moves them to a block of their size. A guess that cannot be
 * allocated counts first instead. */
#include "ops/ops.h"
#include "core/result_mem.h"
#include "core/transfer.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Densities in units of 2^-32 of the input's elements. */
#define DENSITY_ONE 4294967296.0
/* The room over the density's share: an eighth, and this many entries. */
#define SLACK_SHIFT 3
#define SLACK_ENTRIES 64
/* A guess rounds up to a sixteenth of its leading power of two, so that
 * a count that wavers asks for blocks of the same few sizes: glibc then
 * serves each from the block the previous result gave back (a block
 * larger than any freed before is mapped afresh, its pages zeroed on
 * first touch: result_mem.c). */
#define ROUND_SHIFT 4

void ahead_learn(clnz_context *ctx, uint64_t n, uint64_t z)
{
    if (!ctx->is_cpu || !n || z > n) /* only a CPU device guesses (ahead_entries) */
        return;
    ctx->ahead_density[ctx->ahead_next] = (uint64_t)((double)z / (double)n * DENSITY_ONE);
    ctx->ahead_next = (ctx->ahead_next + 1) % AHEAD_CALLS;
    if (ctx->ahead_calls < AHEAD_CALLS)
        ++ctx->ahead_calls;
}

/* The entries to allocate for an input of n elements from the densities,
 * or 0 without one; at most n. After a call that found nothing the next
 * counts first: a count of 0 needs no writing pass, which a job run into
 * a result made ahead cannot skip (f32 2^20 at 0 %, blocking / device by
 * mins 1.61 with a guess, 0.86 without, PoCL). */
static uint64_t guess(const clnz_context *ctx, uint64_t n)
{
    unsigned last = (ctx->ahead_next + AHEAD_CALLS - 1) % AHEAD_CALLS;
    if (!ctx->ahead_calls || ctx->ahead_density[last] == 0)
        return 0;
    uint64_t most = 0;
    for (unsigned i = 0; i < ctx->ahead_calls; ++i)
        if (ctx->ahead_density[i] > most)
            most = ctx->ahead_density[i];
    double share = (double)n * ((double)most / DENSITY_ONE);
    double g = share + share / (1 << SLACK_SHIFT) + SLACK_ENTRIES;
    if (g >= (double)n)
        return n;
    uint64_t e = (uint64_t)g;
    int top = 63 - __builtin_clzll(e);
    uint64_t step = top > ROUND_SHIFT ? (uint64_t)1 << (top - ROUND_SHIFT) : 1;
    e = (e + step - 1) / step * step;
    return e < n ? e : n;
}

uint64_t ahead_entries(const host_job *h, uint64_t fixed, size_t entry_bytes)
{
    clnz_context *ctx = h->ch.ctx;
    uint64_t e = fixed != UINT64_MAX ? fixed : ctx->is_cpu ? guess(ctx, h->job.t.n) : 0;
    /* past one allocation (or half the host's memory, for a guess) the
     * counted path says what is too large */
    if (!e || !entry_bytes || e > ctx->max_alloc / entry_bytes)
        return 0;
    return fixed != UINT64_MAX || host_holds(e, 2 * entry_bytes) ? e : 0;
}

/* The entries written `cap` apart per column (columns layout) brought to z
 * apart, and a result of under half its block moved to a block of its
 * size (which may itself be a kept block of up to twice that size:
 * result_mem.c). Where none can be had the larger one stays: nothing lost. */
static void settle(const nz_job *job, uint64_t cap, uint64_t z, size_t entry_bytes, void **host)
{
    if (job->emit == ABI_EMIT_COORDS && job->layout == ABI_LAYOUT_COLUMNS && z < cap)
        columns_together(job, *host, *host, z, cap);
    if (z >= cap / 2)
        return;
    size_t got = (size_t)z * entry_bytes;
    void *fit = alloc_result(got);
    if (!fit)
        return;
    memcpy(fit, *host, got);
    free_result(*host);
    *host = fit;
}

clnz_status host_job_ahead(host_job *h, uint64_t cap, uint64_t fixed, size_t entry_bytes,
                           int has_fill, int64_t fill, void **host, uint64_t *entries)
{
    clnz_context *ctx = h->ch.ctx;
    nz_job *job = &h->job;
    size_t bytes = (size_t)cap * entry_bytes;
    cl_mem outb = NULL;
    clnz_status st = host_job_count_buffer(h);
    if (st)
        return st;
    st = result_alloc(ctx, bytes, host, &outb, &job->out_fresh);
    if (st && fixed == UINT64_MAX) {
        /* a guess that cannot be allocated (it may be far above the
         * count): the call counts first, as it would without one */
        if (outb)
            clReleaseMemObject(outb);
        free_result(*host);
        *host = NULL;
        ctx_clear_message(ctx);
        return CLNZ_SUCCESS;
    }
    if (!st && ctx->debug) /* CLNZ_DEBUG: the user asked for a log on stderr */
        fprintf(stderr, "clnz-debug: result of %llu entries made before the count (%s)\n",
                (unsigned long long)cap,
                fixed != UINT64_MAX ? "its static size" : "the last calls' densities");
    if (!st)
        st = host_job_write(h, outb, 0, cap, 0, has_fill, fill);
    if (!st)
        st = fetch_result_counted(&h->ch, outb, bytes, *host, ctx->is_cpu, job->count,
                                  (size_t)job->count_off * sizeof(cl_ulong), &h->z);
    if (outb)
        clReleaseMemObject(outb);
    if (st) /* *host, if any, is the caller's to free */
        return st;
    h->counted = 1;
    if (fixed != UINT64_MAX) {
        *entries = fixed;
    } else if (h->z > cap) {
        if (ctx->debug)
            fprintf(stderr, "clnz-debug: the count (%llu) passed them: written again\n",
                    (unsigned long long)h->z);
        free_result(*host);
        *host = NULL; /* host_job_entries writes them into an exact result */
    } else {
        *entries = h->z;
        settle(job, cap, h->z, entry_bytes, host);
    }
    return CLNZ_SUCCESS;
}
