/* launch_plan.c: where launch geometry is chosen: work-group size and items per
 * work-item for each kernel family (forced, else tuned, else defaults from
 * device queries), tile counts, and the scratch the scan levels need. */
#include "core/context.h"
#include "core/error.h"
#include "core/program.h"
#include "tune/tune.h"

#include <stdio.h>
#include <string.h>

/* Defaults from the device type. A CPU device runs a work-group as a loop on
 * one core, so it wants a few work-items each walking a long contiguous
 * chunk (measured on PoCL: 4 x 4096 is 3x faster than 64 x 64 for nonzero);
 * a GPU wants many work-items with a few items each, except the look-back,
 * whose cost per tile wants large tiles (H100, 2026-11-28, f32 2^28 at
 * 50 %: 256 x 16 1.79 ms, 256 x 32 1.21, 128 x 64 1.15, 256 x 48 0.98; at
 * 2^26 it was within 5 % of the fastest at 10, 50 and 100 %, 256 x 56 the
 * same). At 3 bytes of local memory an element (16-bit staged indices)
 * that is 36 KiB a group. A device with less local memory gets fewer
 * work-items (plan_launch). */
void plan_defaults(clnz_context *ctx)
{
    for (int f = 0; f < TUNE_KERNELS; ++f) {
        clnz_launch l;
        if (ctx->is_cpu) {
            l.work_group_size = 4;
            l.items_per_work_item = 4096;
        } else {
            l.work_group_size = 256;
            l.items_per_work_item = f == TUNE_LOOKBACK ? 48 : f == TUNE_SCAN ? 8 : 4;
        }
        if (l.work_group_size > ctx->max_work_group)
            l.work_group_size = ctx->max_work_group;
        ctx->launch[f] = l;
        ctx->launch_source[f] = CLNZ_LAUNCH_DEFAULT;
    }
}

size_t plan_items(const clnz_context *ctx, tune_kernel family)
{
    if (ctx->forced_items)
        return ctx->forced_items;
    return ctx->launch[family].items_per_work_item;
}

static cl_uint next_pow2(size_t x)
{
    cl_uint p = 1;
    while (p < x)
        p <<= 1;
    return p;
}

size_t plan_local_limit(const clnz_context *ctx, size_t local_elem_bytes)
{
    size_t limit = ctx->max_work_group;
    while (limit > 1 && (cl_ulong)next_pow2(limit) * local_elem_bytes > ctx->local_mem)
        limit /= 2;
    return limit;
}

clnz_status plan_launch(clnz_context *ctx, tune_kernel family, cl_kernel *kernels,
                        int n_kernels, size_t items, size_t local_elem_bytes, launch_cfg *cfg)
{
    size_t limit = plan_local_limit(ctx, local_elem_bytes);
    for (int i = 0; i < n_kernels; ++i) {
        size_t k = 0;
        clnz_status st = program_kernel_wg_limit(ctx, kernels[i], &k);
        if (st)
            return st;
        if (k < limit)
            limit = k;
    }
    /* A forced or tuned size above what this kernel takes is clamped to its
     * limit rather than refused: the limit (registers, local memory) differs
     * per compiled variant (dtype, predicate, items), e.g. 256 for most of
     * them on NVIDIA's driver where the device says 1024, so no caller can
     * know it beforehand. */
    size_t wg = ctx->forced_wg ? ctx->forced_wg : ctx->launch[family].work_group_size;
    if (wg > limit) {
        if (ctx->debug && ctx->forced_wg) /* CLNZ_DEBUG: the user asked for a log */
            fprintf(stderr, "clnz: forced work-group size %zu clamped to %zu for this kernel\n",
                    wg, limit);
        wg = limit;
    }
    cfg->wg = wg;
    cfg->items = items;
    cfg->p2 = next_pow2(wg);
    return CLNZ_SUCCESS;
}

size_t plan_tile_wg(size_t max_tile, size_t items)
{
    return max_tile / items ? max_tile / items : 1;
}

void plan_cap_tile(const clnz_context *ctx, size_t max_tile, launch_cfg *cfg)
{
    size_t most = plan_tile_wg(max_tile, cfg->items);
    if (cfg->wg <= most)
        return;
    if (ctx->debug && ctx->forced_wg)
        fprintf(stderr, "clnz: forced work-group size %zu clamped to %zu for tiles of %zu\n",
                cfg->wg, most, max_tile);
    cfg->wg = most;
    cfg->p2 = next_pow2(most);
}

uint64_t plan_tiles(uint64_t n, const launch_cfg *cfg)
{
    uint64_t tile = (uint64_t)cfg->wg * cfg->items;
    return n == 0 ? 0 : (n - 1) / tile + 1;
}

uint64_t plan_scan_scratch(uint64_t n, const launch_cfg *cfg)
{
    uint64_t t = plan_tiles(n, cfg);
    return t <= 1 ? 0 : t + plan_scan_scratch(t, cfg);
}

clnz_status plan_scratch(clnz_context *ctx, size_t bytes)
{
    if (bytes < 64)
        bytes = 64;
    if (ctx->scratch && ctx->scratch_bytes >= bytes)
        return CLNZ_SUCCESS;
    if (bytes > ctx->max_alloc)
        return ctx_fail(ctx, CLNZ_ERROR_TOO_LARGE,
                        "scratch of %zu bytes exceeds the largest allocation clnz makes on the "
                        "device (%llu bytes: its own limit or CLNZ_MAX_ALLOC)",
                        bytes, (unsigned long long)ctx->max_alloc);
    cl_int e = CL_SUCCESS;
    cl_mem m = clCreateBuffer(ctx->cl, CL_MEM_READ_WRITE, bytes, NULL, &e);
    if (e)
        return CL_CHECK(ctx, e, "clCreateBuffer(scratch)");
    /* OpenCL keeps the old buffer alive until commands using it finish */
    if (ctx->scratch)
        clReleaseMemObject(ctx->scratch);
    ctx->scratch = m;
    ctx->scratch_bytes = bytes;
    return CLNZ_SUCCESS;
}

const char *const tune_kernel_names[TUNE_KERNELS] = {"two-pass", "scan", "mask", "lookback"};

int tune_kernel_of(const char *name)
{
    for (int k = 0; name && k < TUNE_KERNELS; ++k)
        if (strcmp(name, tune_kernel_names[k]) == 0)
            return k;
    return -1;
}
