/* choose.c: where a strategy is picked, the one place. A forced strategy
 * (clnz_context_set_strategy, CLNZ_STRATEGY) runs every call it can serve
 * and fails the others with the reason; otherwise, in this order:
 *   - an accelerator (CL_DEVICE_TYPE_ACCELERATOR alone: an FPGA, where a
 *     single work-item's loop pipelines and work-groups cannot be counted
 *     on to cooperate) streams: `stream`;
 *   - an input of one tile (not batched) takes one launch: `single-tile`;
 *   - the strategy the tuning data prefers for this device, if any
 *     (`clnz tune` measures them);
 *   - else by device type: `lookback` on GPUs (one pass, coalesced),
 *     `two-pass` elsewhere (on CPUs a work-item walks a long contiguous
 *     chunk, which the two-pass kernels are shaped for). */
#include "strategy/strategy.h"
#include "core/error.h"

#include <stdio.h>
#include <string.h>

static const char *const names[CLNZ_STRATEGY_COUNT] = {"auto", "single-tile", "two-pass",
                                                       "lookback", "stream"};

const strategy *strategy_impl(clnz_strategy s)
{
    switch (s) {
    case CLNZ_STRATEGY_SINGLE_TILE: return &strategy_single_tile;
    case CLNZ_STRATEGY_TWO_PASS: return &strategy_two_pass;
    case CLNZ_STRATEGY_LOOKBACK: return &strategy_lookback;
    case CLNZ_STRATEGY_STREAM: return &strategy_stream;
    default: return NULL;
    }
}

const char *clnz_strategy_name(clnz_strategy s)
{
    return (unsigned)s < CLNZ_STRATEGY_COUNT ? names[s] : NULL;
}

/* A name or value that is no strategy is a bad argument, as a bad enum is
 * anywhere else: CLNZ_ERROR_UNSUPPORTED_STRATEGY says a real strategy
 * cannot serve a call, which would send a caller looking at the device. */
clnz_status clnz_strategy_parse(const char *name, clnz_strategy *out)
{
    if (!name || !out)
        return CLNZ_ERROR_INVALID_ARGUMENT;
    for (int s = 0; s < CLNZ_STRATEGY_COUNT; ++s) {
        if (strcmp(name, names[s]) == 0) {
            *out = (clnz_strategy)s;
            return CLNZ_SUCCESS;
        }
    }
    return CLNZ_ERROR_INVALID_ARGUMENT;
}

clnz_status clnz_context_set_strategy(clnz_context *ctx, clnz_strategy s)
{
    CTX_ENTER(ctx);
    if ((unsigned)s >= CLNZ_STRATEGY_COUNT) {
        char known[120] = "";
        for (int i = 0, len = 0; i < CLNZ_STRATEGY_COUNT; ++i)
            len += snprintf(known + len, sizeof known - (size_t)len, "%s%d %s", i ? ", " : "", i,
                            names[i]);
        return ctx_fail(ctx, CLNZ_ERROR_INVALID_ARGUMENT, "unknown strategy %d (known: %s)", (int)s,
                        known);
    }
    ctx->forced_strategy = s;
    return CLNZ_SUCCESS;
}

clnz_strategy clnz_context_strategy(const clnz_context *ctx)
{
    CTX_HOLD(ctx);
    return ctx ? ctx->forced_strategy : CLNZ_STRATEGY_AUTO;
}

/* For inputs of many tiles: the tuning data's choice, else the device's. */
static clnz_strategy many_tiles(const clnz_context *ctx)
{
    if (ctx->type == CL_DEVICE_TYPE_ACCELERATOR)
        return CLNZ_STRATEGY_STREAM;
    if (ctx->preferred_strategy != CLNZ_STRATEGY_AUTO)
        return ctx->preferred_strategy;
    return (ctx->type & CL_DEVICE_TYPE_GPU) && !ctx->is_cpu ? CLNZ_STRATEGY_LOOKBACK
                                                             : CLNZ_STRATEGY_TWO_PASS;
}

clnz_strategy clnz_context_auto_strategy(const clnz_context *ctx)
{
    CTX_HOLD(ctx);
    return ctx ? many_tiles(ctx) : CLNZ_STRATEGY_AUTO;
}

static clnz_strategy auto_choice(clnz_context *ctx, const nz_job *job)
{
    char why[8];
    clnz_strategy s = many_tiles(ctx);
    if (s == CLNZ_STRATEGY_STREAM) /* an accelerator streams whatever the size */
        return s;
    if (strategy_single_tile.serves(ctx, job, why, sizeof why))
        return CLNZ_STRATEGY_SINGLE_TILE;
    if (!strategy_impl(s)->serves(ctx, job, why, sizeof why))
        s = CLNZ_STRATEGY_TWO_PASS; /* serves every job */
    return s;
}

int strategy_candidates(const clnz_context *ctx, clnz_strategy out[CLNZ_STRATEGY_COUNT])
{
    if (ctx->forced_strategy != CLNZ_STRATEGY_AUTO) {
        out[0] = ctx->forced_strategy;
        return 1;
    }
    clnz_strategy s = many_tiles(ctx);
    if (s == CLNZ_STRATEGY_STREAM) /* auto_choice asks nothing else */
        return out[0] = s, 1;
    /* auto_choice asks single-tile first (its programs are built by the
     * question), then the choice for many tiles, else two-pass */
    int n = 0;
    out[n++] = CLNZ_STRATEGY_SINGLE_TILE;
    if (s != CLNZ_STRATEGY_SINGLE_TILE)
        out[n++] = s;
    if (s != CLNZ_STRATEGY_TWO_PASS)
        out[n++] = CLNZ_STRATEGY_TWO_PASS;
    return n;
}

clnz_status strategy_programs(clnz_context *ctx, clnz_strategy s, const job_kind *k,
                              program_set *out)
{
    const strategy *impl = strategy_impl(s);
    return impl ? impl->programs(ctx, k, out) : CLNZ_SUCCESS;
}

clnz_status strategy_choose(clnz_context *ctx, const nz_job *job, const strategy **out)
{
    clnz_strategy s = ctx->forced_strategy;
    if (s != CLNZ_STRATEGY_AUTO) {
        char why[200] = "";
        if (!strategy_impl(s)->serves(ctx, job, why, sizeof why))
            return ctx_fail(ctx, CLNZ_ERROR_UNSUPPORTED_STRATEGY,
                            "the forced strategy %s cannot serve this call: %s", names[s], why);
    } else {
        s = auto_choice(ctx, job);
    }
    ctx->stats.strategy_runs[s]++;
    *out = strategy_impl(s);
    return CLNZ_SUCCESS;
}
