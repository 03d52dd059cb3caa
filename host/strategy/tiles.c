/* tiles.c: the tiles of the single-tile and two-pass strategies: the input
 * cut into tiles of (work-group size x items) elements, work-item l of a
 * tile owning `items` consecutive elements (kernels/chunk.cl), their
 * writing pass, nz_write for coordinates or sel_write for values
 * (kernels/nonzero.cl, kernels/select.cl), and a batched job's offsets
 * (nz_batch_offsets), found over the same tiles. */
#include "strategy/strategy.h"
#include "core/error.h"
#include "core/program.h"

#include <stdio.h>

void tile_programs(const job_kind *k, program_ref *count, program_ref *write)
{
    program_element(count, "nonzero", k->dtype, k->pred_nonzero);
    if (k->emit != ABI_EMIT_VALUES) {
        *write = *count;
        return;
    }
    /* select: the same count, a writing pass that moves values */
    program_element(write, "select", k->dtype, k->pred_nonzero);
    program_append(write, " -DVALUE_BYTES=%zu", k->value_bytes);
}

clnz_status tile_kit_make(clnz_context *ctx, const nz_job *job, tile_kit *kit)
{
    size_t items = plan_items(ctx, TUNE_TWO_PASS);
    job_kind kind = job_kind_of(job);
    program_ref count, write;
    tile_programs(&kind, &count, &write);
    clnz_status st = program_kernel(ctx, &count, "nz_count", &kit->count_k);
    if (!st)
        st = program_kernel(ctx, &write, job->emit == ABI_EMIT_VALUES ? "sel_write" : "nz_write",
                            &kit->write_k);
    /* a batched job's offsets are launched over the same tiles, so the
     * work-group size must suit that kernel too */
    kit->batch_k = NULL;
    if (!st && job->batches)
        st = program_kernel(ctx, &count, "nz_batch_offsets", &kit->batch_k);
    if (st)
        return st;
    cl_kernel ks[3] = {kit->count_k, kit->write_k, kit->batch_k};
    st = plan_launch(ctx, TUNE_TWO_PASS, ks, kit->batch_k ? 3 : 2, items, sizeof(cl_ulong),
                     &kit->cfg);
    kit->tiles = st ? 0 : plan_tiles(job->t.n, &kit->cfg); /* no shape after a failure */
    return st;
}

int tile_keeps_sel_bits(const nz_job *job, const tile_kit *kit)
{
    /* nz_write's runs (kernels/nonzero.cl) are the readers: coordinates of a
     * contiguous input, flat, 1-D, or at most one column per dimension (a
     * batch's items: all but the first); chunks start on a word when items
     * is a multiple of the word's 32 elements */
    const tensor_info *t = &job->t;
    int runs = job->layout == ABI_LAYOUT_FLAT || (t->krank == 1 && job->width == 1) ||
               (t->krank >= 2 && job->width >= 1 && job->width <= t->krank);
    return job->emit == ABI_EMIT_COORDS && t->contiguous && runs && kit->cfg.items % 32 == 0;
}

/* Bytes the writing pass moves (its input and the entries it can write,
 * min(capacity, elements) of them) from which nz_write may store
 * non-temporally on a CPU device (kernels/nt_store.cl; each work-item then
 * asks its own density): the stores that skip the caches cost the next
 * reader, and a benchmark's next run, the hits of entries that would have
 * stayed there, and they stay only if the pass's whole traffic fits the
 * share of the cache it gets. Measured on PoCL on the 2-core Intel VM,
 * f32, plain -> streamed, device-resident (the VM's 300 MiB L3 is shared
 * with other machines, so the share moves with the day; PoCL reports that
 * 300 MiB, no guide, so not used), by bytes moved:
 *   48-72 MiB (1-D 100 %, 32-48 MiB of entries): lost in two runs of
 *     three (1.17 -> 1.47 ms, 1.2-1.9 -> 1.6-2.8 ms), won in the third
 *     (flat 1.8-3.1 -> 1.5-1.6 ms);
 *   96-120 MiB (1-D 100 %, 64-80 MiB of entries): lost or even in one run
 *     (64 MiB 2.4 -> 3.1 and 2.9 -> 2.6 ms, 80 MiB 3.3 -> 3.8 ms), won in
 *     two (64 MiB 3.2 -> 2.6 and 6.5 -> 3.6 ms, 80 MiB 6.6 -> 3.2 ms);
 *   128 MiB and more: won in every run, 2^24 at 50 % (64 MiB in, 64 MiB
 *     of entries) 5.8-8.4 -> 4.6-5.9 ms and 8.3-9.0 -> 6.5-7.7 ms,
 *     144 MiB (1-D 100 %) 6.3 -> 4.6 ms, 2^24 100 % rows (192 MiB)
 *     9.8 -> 6.0 ms, 1.5 GiB 81 -> 49 ms.
 * Until 2026-11-27 the rule counted the entries alone, from 96 MiB: 2^24
 * at 50 % then wrote plain and missed issue 19's 1.9x on slow days.
 * GPUs: not measured, so never by default. */
#define STREAM_MIN_BYTES ((uint64_t)128 << 20)

/* a * b, or cap where that is more (a capacity of 2^62 entries, or a
 * broadcast view's 2^62 elements, would pass 2^64 in bytes) */
static uint64_t bytes_up_to(uint64_t a, uint64_t b, uint64_t cap)
{
    return b && a > cap / b ? cap : a * b;
}

static cl_int tile_streams(const clnz_context *ctx, const nz_job *job)
{
    if (ctx->stream_stores >= 0)
        return ctx->stream_stores;
    if (job->out_fresh) /* f32 2^26 100 %, a fresh 1 GiB result: 127 -> 175 ms streamed */
        return 0;
    uint64_t columns = job->layout == ABI_LAYOUT_FLAT ? 1 : (uint64_t)job->width;
    uint64_t entries = job->capacity < job->t.n ? job->capacity : job->t.n;
    uint64_t out = bytes_up_to(entries, job->idx_bytes * columns, STREAM_MIN_BYTES);
    uint64_t in = bytes_up_to(job->t.n, job->t.elem, STREAM_MIN_BYTES);
    return ctx->is_cpu && in + out >= STREAM_MIN_BYTES;
}

uint64_t tile_sel_bits_words(const nz_job *job) { return (job->t.n + 31) / 32; }

clnz_status tile_count(chain *ch, nz_job *job, const tile_kit *kit, cl_mem tile_counts,
                       uint64_t items_off, uint64_t bits_off)
{
    clnz_context *ctx = ch->ctx;
    job_args a;
    job_args_of(job, ch->ctx->scratch, &a);
    cl_ulong zero = 0, a_items_off = items_off, a_bits_off = bits_off;
    cl_int keep = bits_off != 0;
    cl_uint p2 = kit->cfg.p2, items = (cl_uint)kit->cfg.items;
    karg args[] = {JOB_KARGS_IN(a),      KARG(tile_counts), KARG(zero),
                   KARG(ctx->scratch),  KARG(a_items_off), KARG(a_bits_off),
                   KARG(keep),          KARG(p2),          KLOCAL(p2 * sizeof(cl_ulong)),
                   KARG(items)};
    clnz_status st = set_args(ctx, kit->count_k, "nz_count", args, (int)(sizeof args / sizeof args[0]));
    if (!st)
        st = chain_launch(ch, kit->count_k, "nz_count", (size_t)kit->tiles * kit->cfg.wg,
                          kit->cfg.wg);
    return st;
}

clnz_status tile_batch_offsets(chain *ch, nz_job *job, const tile_kit *kit, uint64_t items_off)
{
    clnz_context *ctx = ch->ctx;
    if (job->batches == 0)
        return CLNZ_SUCCESS;
    job_args a;
    job_args_of(job, ch->ctx->scratch, &a);
    /* every item has elements: an input of none never gets here (job_empty) */
    cl_ulong a_items_off = items_off, item_elems = job->t.n / job->batches;
    cl_ulong batches = job->batches, off = job->offsets_off;
    cl_uint p2 = kit->cfg.p2, items = (cl_uint)kit->cfg.items;
    karg args[] = {JOB_KARGS_IN(a),      KARG(ctx->scratch), KARG(ctx->scratch),
                   KARG(a_items_off),   KARG(item_elems),   KARG(batches),
                   KARG(job->offsets),  KARG(off),          KARG(p2),
                   KLOCAL(p2 * sizeof(cl_ulong)),           KARG(items)};
    clnz_status st =
        set_args(ctx, kit->batch_k, "nz_batch_offsets", args, (int)(sizeof args / sizeof args[0]));
    if (!st)
        st = chain_launch(ch, kit->batch_k, "nz_batch_offsets",
                          (size_t)kit->tiles * kit->cfg.wg, kit->cfg.wg);
    return st;
}

clnz_status tile_write(chain *ch, nz_job *job, const tile_kit *kit, cl_mem offsets,
                       uint64_t offsets_off, uint64_t items_off, uint64_t bits_off, int single)
{
    clnz_context *ctx = ch->ctx;
    job_args a;
    job_args_of(job, ch->ctx->scratch, &a);
    int writes = job->emit != ABI_EMIT_COUNT && job->capacity > 0 &&
                 !(job->emit == ABI_EMIT_COORDS && job->width == 0 &&
                   job->layout != ABI_LAYOUT_FLAT);
    if (!single && !writes)
        return CLNZ_SUCCESS;
    /* the kernel needs a valid output even when it writes none */
    cl_mem out = writes ? job->out : ctx->scratch;
    cl_ulong a_out_off = writes ? job->out_off : 0, cap = writes ? job->capacity : 0;
    cl_ulong a_offsets_off = offsets_off, a_items_off = items_off, a_bits_off = bits_off;
    cl_int a_single = single, keep = bits_off != 0;
    cl_uint p2 = kit->cfg.p2, items = (cl_uint)kit->cfg.items;
    clnz_status st;
    const char *name;
    if (job->emit == ABI_EMIT_VALUES) {
        name = "sel_write";
        cl_long x_base = job->x_base;
        cl_int x_contiguous = job->x_contiguous;
        karg args[] = {JOB_KARGS_IN(a),     KARG(job->x),      KARG(x_base),
                       KARG(job->x_meta),  KARG(x_contiguous), KARG(offsets),
                       KARG(a_offsets_off), KARG(ctx->scratch), KARG(a_items_off),
                       KARG(out),          KARG(a_out_off),   KARG(cap),
                       KARG(a_single),     KARG(p2),          KLOCAL(p2 * sizeof(cl_ulong)),
                       KARG(items)};
        st = set_args(ctx, kit->write_k, name, args, (int)(sizeof args / sizeof args[0]));
    } else {
        name = "nz_write";
        cl_int layout = job->layout, width = job->width, reverse = job->reverse;
        cl_int idx = (cl_int)job->idx_bytes, stream = writes && tile_streams(ctx, job);
        if (ctx->debug && stream)
            fprintf(stderr, "clnz-debug: nz_write: non-temporal stores where dense\n");
        karg args[] = {JOB_KARGS_IN(a),     KARG(offsets),   KARG(a_offsets_off),
                       KARG(ctx->scratch), KARG(a_items_off), KARG(a_bits_off),
                       KARG(keep),         KARG(out),         KARG(a_out_off),
                       KARG(cap),          KARG(layout),      KARG(width),
                       KARG(reverse),      KARG(idx),         KARG(stream),
                       KARG(a_single),     KARG(p2),          KLOCAL(p2 * sizeof(cl_ulong)),
                       KARG(items)};
        st = set_args(ctx, kit->write_k, name, args, (int)(sizeof args / sizeof args[0]));
    }
    if (!st)
        st = chain_launch(ch, kit->write_k, name, (size_t)kit->tiles * kit->cfg.wg, kit->cfg.wg);
    return st;
}
