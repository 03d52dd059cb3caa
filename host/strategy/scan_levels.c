/* scan_levels.c: the multi-level exclusive scan (kernels/scan.cl): each
 * tile scanned, the tile sums scanned the same way (the recursion, until
 * one tile is left), each tile's prefix added back. The two-pass strategy
 * scans its tile counts with it; clnz_scan_enqueue (ops/scan.c) is the
 * public entry. */
#include "strategy/strategy.h"
#include "core/context.h"
#include "core/error.h"
#include "core/program.h"
#include "core/tensor.h"
#include "core/chain.h"
#include "tune/tune.h"

void scan_program(int is_u64, program_ref *r)
{
    program_start(r, "scan");
    program_append(r, "-DSCAN_T=%s", is_u64 ? "ulong" : "uint");
}

clnz_status scan_kit_make(clnz_context *ctx, int is_u64, scan_kit *kit)
{
    program_ref prog;
    scan_program(is_u64, &prog);
    size_t items = plan_items(ctx, TUNE_SCAN);
    if (items < 2) /* a tile of one item never shrinks the recursion */
        items = 2;
    kit->is_u64 = is_u64;
    kit->elem = is_u64 ? 8 : 4;
    clnz_status st = program_kernel(ctx, &prog, "scan_tiles", &kit->tiles_k);
    if (!st)
        st = program_kernel(ctx, &prog, "scan_add", &kit->add_k);
    if (st)
        return st;
    cl_kernel ks[2] = {kit->tiles_k, kit->add_k};
    return plan_launch(ctx, TUNE_SCAN, ks, 2, items, kit->elem, &kit->cfg);
}

uint64_t scan_scratch_elems(const scan_kit *kit, uint64_t n)
{
    return plan_scan_scratch(n, &kit->cfg) + 1; /* +1: a slot for an unwanted total */
}

clnz_status scan_run(chain *ch, const scan_kit *kit, cl_mem in, uint64_t in_off, cl_mem out,
                     uint64_t out_off, uint64_t n, cl_mem total, uint64_t total_off,
                     uint64_t scratch_off)
{
    clnz_context *ctx = ch->ctx;
    clnz_status st;
    if (n == 0)
        return total ? chain_fill(ch, total, total_off * kit->elem, 0, kit->elem, 1) : CLNZ_SUCCESS;
    const launch_cfg *cfg = &kit->cfg;
    uint64_t tiles = plan_tiles(n, cfg);
    /* one tile: its sum is the total; else the sums are scanned in place */
    cl_mem sums = ctx->scratch;
    cl_ulong sums_off = scratch_off;
    if (tiles == 1 && total) {
        sums = total;
        sums_off = total_off;
    }
    cl_ulong a_in_off = in_off, a_out_off = out_off, a_n = n;
    cl_uint p2 = cfg->p2, items = (cl_uint)cfg->items;
    karg a[] = {KARG(in), KARG(a_in_off), KARG(out), KARG(a_out_off), KARG(a_n), KARG(sums),
                KARG(sums_off), KARG(p2), KLOCAL(cfg->p2 * kit->elem), KARG(items)};
    st = set_args(ctx, kit->tiles_k, "scan_tiles", a, (int)(sizeof a / sizeof a[0]));
    if (!st)
        st = chain_launch(ch, kit->tiles_k, "scan_tiles", (size_t)tiles * cfg->wg, cfg->wg);
    if (st || tiles == 1)
        return st;

    st = scan_run(ch, kit, ctx->scratch, scratch_off, ctx->scratch, scratch_off, tiles, total,
                  total_off, scratch_off + tiles);
    if (st)
        return st;
    karg b[] = {KARG(out), KARG(a_out_off), KARG(a_n), KARG(ctx->scratch), KARG(sums_off),
                KARG(items)};
    st = set_args(ctx, kit->add_k, "scan_add", b, (int)(sizeof b / sizeof b[0]));
    if (!st)
        st = chain_launch(ch, kit->add_k, "scan_add", (size_t)tiles * cfg->wg, cfg->wg);
    return st;
}
