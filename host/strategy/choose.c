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

static const strategy *impl_of(clnz_strategy s)
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

clnz_status clnz_strategy_parse(const char *name, clnz_strategy *out)
{
    for (int s = 0; name && out && s < CLNZ_STRATEGY_COUNT; ++s) {
        if (strcmp(name, names[s]) == 0) {
            *out = (clnz_strategy)s;
            return CLNZ_SUCCESS;
        }
    }
    return CLNZ_ERROR_UNSUPPORTED_STRATEGY;
}

clnz_status clnz_context_set_strategy(clnz_context *ctx, clnz_strategy s)
{
    CTX_HOLD(ctx);
    if (!ctx)
        return CLNZ_ERROR_INVALID_ARGUMENT;
    ctx_clear_message(ctx);
    if ((unsigned)s >= CLNZ_STRATEGY_COUNT)
        return ctx_fail(ctx, CLNZ_ERROR_UNSUPPORTED_STRATEGY, "unknown strategy %d", (int)s);
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
    if (!impl_of(s)->serves(ctx, job, why, sizeof why))
        s = CLNZ_STRATEGY_TWO_PASS; /* serves every job */
    return s;
}

clnz_status strategy_choose(clnz_context *ctx, const nz_job *job, const strategy **out)
{
    clnz_strategy s = ctx->forced_strategy;
    if (s != CLNZ_STRATEGY_AUTO) {
        char why[200] = "";
        if (!impl_of(s)->serves(ctx, job, why, sizeof why))
            return ctx_fail(ctx, CLNZ_ERROR_UNSUPPORTED_STRATEGY,
                            "the forced strategy %s cannot serve this call: %s", names[s], why);
    } else {
        s = auto_choice(ctx, job);
    }
    ctx->stats.strategy_runs[s]++;
    *out = impl_of(s);
    return CLNZ_SUCCESS;
}
