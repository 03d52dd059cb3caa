/* single_tile.c: the single-tile strategy: an input of one tile (one
 * work-group of the two-pass kernels' launch) is counted and written by one
 * launch of the writing pass, which counts its own tile first and writes
 * the total to the count: no counting pass, no scan, one command. */
#include "strategy/strategy.h"

#include <stdio.h>

static int single_serves(clnz_context *ctx, const nz_job *job, char *why, size_t n)
{
    tile_kit kit = {0};
    if (job->batches) {
        snprintf(why, n, "single-tile serves no batch: batched nonzero and counts along inner "
                         "axes need the batch offsets that two-pass, lookback and stream write");
        return 0;
    }
    if (tile_kit_make(ctx, job, &kit) != CLNZ_SUCCESS) {
        snprintf(why, n, "its kernels did not build");
        return 0;
    }
    if (kit.tiles > 1) {
        snprintf(why, n,
                 "single-tile takes inputs of one tile (%llu elements with this launch), not "
                 "%llu",
                 (unsigned long long)(kit.cfg.wg * kit.cfg.items), (unsigned long long)job->t.n);
        return 0;
    }
    return 1;
}

static clnz_status single_write(chain *ch, nz_job *job, int counted)
{
    (void)counted; /* one launch counts again: cheaper than reading a count back */
    if (job->t.n == 0)
        return job_empty(ch, job);
    tile_kit kit = {0};
    clnz_status st = tile_kit_make(ch->ctx, job, &kit);
    return st ? st : tile_write(ch, job, &kit, job->count, job->count_off, 0, 0, 1);
}

static clnz_status single_count(chain *ch, nz_job *job)
{
    nz_job counting = *job;
    counting.emit = ABI_EMIT_COUNT;
    return single_write(ch, &counting, 0);
}

static clnz_status single_programs(clnz_context *ctx, const job_kind *k, program_set *out)
{
    (void)ctx;
    if (k->batched) /* never served (single_serves) */
        return CLNZ_SUCCESS;
    program_ref count, write;
    tile_programs(k, &count, &write);
    return program_set_add(out, &count) || program_set_add(out, &write)
               ? CLNZ_ERROR_OUT_OF_HOST_MEMORY
               : CLNZ_SUCCESS;
}

const strategy strategy_single_tile = {CLNZ_STRATEGY_SINGLE_TILE, single_serves, single_count,
                                       single_write, single_programs};
