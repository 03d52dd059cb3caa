/* plan.c: where launch geometry is chosen: work-group size, items per
 * work-item, tile counts, and the scratch the scan levels need. */
#include "internal.h"

/* Defaults until the tuner (issue 3) knows better. A CPU device runs a
 * work-group as a loop on one core, so it wants long contiguous chunks; a GPU
 * wants many work-items with a few items each. */
#define CPU_WG 64
#define CPU_ITEMS 64
#define GPU_WG 256
#define GPU_ITEMS 8

size_t plan_items(const clnz_context *ctx, int for_scan)
{
    (void)for_scan;
    if (ctx->forced_items)
        return ctx->forced_items;
    return ctx->is_cpu ? CPU_ITEMS : GPU_ITEMS;
}

static cl_uint next_pow2(size_t x)
{
    cl_uint p = 1;
    while (p < x)
        p <<= 1;
    return p;
}

clnz_status plan_launch(clnz_context *ctx, cl_kernel *kernels, int n_kernels, size_t items,
                        size_t local_elem_bytes, launch_cfg *cfg)
{
    size_t limit = ctx->max_work_group;
    for (int i = 0; i < n_kernels; ++i) {
        size_t k = 0;
        cl_int e = clGetKernelWorkGroupInfo(kernels[i], ctx->device, CL_KERNEL_WORK_GROUP_SIZE,
                                            sizeof k, &k, NULL);
        if (e)
            return CL_CHECK(ctx, e, "clGetKernelWorkGroupInfo");
        if (k < limit)
            limit = k;
    }
    /* the local scan needs next_pow2(wg) slots */
    while (limit > 1 && (cl_ulong)next_pow2(limit) * local_elem_bytes > ctx->local_mem)
        limit /= 2;
    size_t wg;
    if (ctx->forced_wg) {
        wg = ctx->forced_wg;
        if (wg > limit)
            return ctx_fail(ctx, CLNZ_ERROR_INVALID_ARGUMENT,
                            "work-group size %zu is above what these kernels allow on this "
                            "device (%zu)",
                            wg, limit);
    } else {
        wg = ctx->is_cpu ? CPU_WG : GPU_WG;
        if (wg > limit)
            wg = limit;
    }
    cfg->wg = wg;
    cfg->items = items;
    cfg->p2 = next_pow2(wg);
    return CLNZ_SUCCESS;
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
                        "scratch of %zu bytes exceeds the device's largest allocation (%llu)",
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
