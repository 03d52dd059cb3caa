/* lookback.c: the look-back strategy: one launch of kernels/lookback.cl,
 * where each tile finds its output offset by decoupled look-back over the
 * tiles before it, reads the input once and writes its entries with
 * contiguous stores (or each work-item its own run's: LB_SCATTER). Shaped
 * for GPUs (the kernel file explains the memory ordering and why it cannot
 * deadlock). Its scratch: the tiles' states and the tile counter, zeroed by
 * one fill before the launch. A count without batches is the file's other
 * kernel, lb_count: tiles alike, no states. */
#include "strategy/strategy.h"
#include "core/error.h"
#include "core/program.h"

#include <stdio.h>
#include <string.h>

/* A local buffer of `bytes`, in the kernel's uints. */
static size_t local_words(size_t bytes)
{
    return (bytes + 3) / 4 * 4;
}

/* Local memory an element takes: a flag byte, and a 16-bit staged index
 * (tiles of at most LOOKBACK_MAX_TILE elements) unless every tile writes
 * its entries directly (LB_SCATTER). */
static size_t local_per_elem(const clnz_context *ctx)
{
    return ctx->lookback_scatter == ABI_LB_SCATTER_DIRECT ? 1 : 1 + sizeof(cl_ushort);
}

/* Local memory a work-item takes: its elements', and 8 bytes for its 4 of
 * the scan (the rest covers the buffers' rounding to words and the
 * kernel's own 16 bytes). */
static size_t local_per_work_item(const clnz_context *ctx, size_t items)
{
    return items * local_per_elem(ctx) + 2 * sizeof(cl_uint);
}

typedef struct {
    cl_kernel k;
    launch_cfg cfg;
    uint64_t tiles;
} lb_plan;

/* The largest items whose one-work-item tile fits local memory (at
 * local_per_elem bytes an element) and LOOKBACK_MAX_TILE. */
static size_t items_that_fit(const clnz_context *ctx, size_t items)
{
    size_t most = ctx->local_mem > 256 ? (size_t)(ctx->local_mem - 256) / local_per_elem(ctx) : 1;
    if (most > LOOKBACK_MAX_TILE)
        most = LOOKBACK_MAX_TILE;
    return items < most ? items : most;
}

/* The value size is a placeholder (4) for jobs that move no values. */
static void lookback_program(const clnz_context *ctx, const job_kind *k, program_ref *r)
{
    program_element(r, "lookback", k->dtype, k->pred_nonzero);
    program_append(r, " -DVALUE_BYTES=%zu -DLB_ATOM64=%d -DLB_SPIN=%u -DLB_WINDOW=%u",
                   k->value_bytes ? k->value_bytes : 4, ctx->lookback_atom64, ctx->lookback_spin,
                   ctx->lookback_window);
    if (ctx->lookback_scatter != LOOKBACK_SCATTER) /* the default's programs keep their name */
        program_append(r, " -DLB_SCATTER=%u", ctx->lookback_scatter);
    if (ctx->lookback_test_sparse)
        program_append(r, " -DLB_TEST_SPARSE=%u", ctx->lookback_test_sparse);
}

/* name: lb_run, or lb_count (a count without batches) from the same program */
static clnz_status build(clnz_context *ctx, const job_kind *kind, const char *name, cl_kernel *k)
{
    program_ref prog;
    lookback_program(ctx, kind, &prog);
    return program_kernel(ctx, &prog, name, k);
}

/* lb_count takes lb_run's tuned launch and its local memory limit, though
 * it needs only the scan's (its own kernel's work-group limit may still
 * differ). */
static clnz_status plan_make(clnz_context *ctx, const nz_job *job, const char *name, lb_plan *p)
{
    size_t items = items_that_fit(ctx, plan_items(ctx, TUNE_LOOKBACK));
    job_kind kind = job_kind_of(job);
    clnz_status st = build(ctx, &kind, name, &p->k);
    if (!st)
        st = plan_launch(ctx, TUNE_LOOKBACK, &p->k, 1, items, local_per_work_item(ctx, items),
                         &p->cfg);
    if (!st)
        plan_cap_tile(ctx, LOOKBACK_MAX_TILE, &p->cfg);
    /* no launch shape after a failure: dividing by it crashed (SIGFPE on
     * NVIDIA, where a kernel failed to build) */
    p->tiles = st ? 0 : plan_tiles(job->t.n, &p->cfg);
    return st;
}

clnz_status lookback_kernel_for_tuning(clnz_context *ctx, size_t items, cl_kernel *k,
                                       size_t *local_elem)
{
    items = items_that_fit(ctx, items);
    *local_elem = local_per_work_item(ctx, items);
    job_kind kind = {CLNZ_F32, 1, ABI_EMIT_COORDS, 0, 0};
    return build(ctx, &kind, "lb_run", k);
}

static int lb_serves(clnz_context *ctx, const nz_job *job, char *why, size_t n)
{
    lb_plan p = {0}; /* a failed plan leaves no shape to divide by */
    if (plan_make(ctx, job, "lb_run", &p) != CLNZ_SUCCESS) {
        snprintf(why, n, "its kernel did not build: %s", clnz_context_message(ctx));
        ctx_clear_message(ctx);
        return 0;
    }
    if (p.tiles >= UINT32_MAX) { /* the tile counter is a 32-bit atomic */
        snprintf(why, n, "the input has %llu tiles, lookback takes fewer than 2^32",
                 (unsigned long long)p.tiles);
        return 0;
    }
    return 1;
}

/* Whether the kernel may read whole tiles as 16-byte vectors (its vec16B):
 * a contiguous input whose element 0 lies on a 16-byte boundary, and tiles
 * of whole vectors. A buffer the device allocated is aligned far beyond 16
 * bytes (CL_DEVICE_MEM_BASE_ADDR_ALIGN, sub-buffer origins too); one over
 * host memory starts where the caller's pointer does. */
static cl_uint loads_16B(const nz_job *job, size_t tile)
{
    size_t elem = job->t.elem;
    void *host = NULL;
    if (!job->t.contiguous || (tile * elem) % 16 || ((uint64_t)job->base * elem) % 16)
        return 0;
    if (clGetMemObjectInfo(job->in, CL_MEM_HOST_PTR, sizeof host, &host, NULL) != CL_SUCCESS)
        return 0;
    return (uintptr_t)host % 16 == 0;
}

/* One pass of the kernel writing what `job` asks (emit). */
static clnz_status run(chain *ch, nz_job *job)
{
    clnz_context *ctx = ch->ctx;
    if (job->t.n == 0)
        return job_empty(ch, job);
    lb_plan p = {0}; /* a failed plan leaves no shape to divide by */
    clnz_status st = plan_make(ctx, job, "lb_run", &p);
    /* 8 bytes a tile (one 64-bit word or two 32-bit ones), then the counter */
    uint64_t state_bytes = p.tiles * 8 + sizeof(cl_uint);
    if (!st)
        st = plan_scratch(ctx, (size_t)state_bytes);
    if (!st)
        st = chain_fill(ch, ctx->scratch, 0, 0, sizeof(cl_uint), state_bytes / sizeof(cl_uint));
    if (st)
        return st;
    job_args a;
    job_args_of(job, ctx->scratch, &a);
    cl_ulong tiles = p.tiles;
    cl_uint p2 = p.cfg.p2, items = (cl_uint)p.cfg.items;
    size_t tile = p.cfg.wg * p.cfg.items;
    cl_uint vec16B = loads_16B(job, tile);
    karg args[] = {JOB_KARGS_IN(a), KARG(ctx->scratch), KARG(tiles), JOB_KARGS_OUT(a), KARG(p2),
                   KLOCAL(local_words(tile)),
                   /* staged indices: none to hold where every tile writes directly */
                   KLOCAL(local_words(local_per_elem(ctx) > 1 ? tile * sizeof(cl_ushort) : 4)),
                   KLOCAL(p2 * sizeof(cl_uint)), KARG(items), KARG(vec16B)};
    st = set_args(ctx, p.k, "lb_run", args, (int)(sizeof args / sizeof args[0]));
    if (!st) /* the name is what CLNZ_DEBUG logs: which load path ran shows there */
        st = chain_launch(ch, p.k, vec16B ? "lb_run (16-byte loads)" : "lb_run",
                          (size_t)p.tiles * p.cfg.wg, p.cfg.wg);
    return st;
}

/* A count without batches: lb_count adds each tile's count to the zeroed
 * count, with no tile states to fill and no look-back. Its atomics read the
 * count they add to: a caller's count buffer that kernels may only write
 * (CL_MEM_WRITE_ONLY) gets the sum from the scratch, copied. */
static clnz_status run_count(chain *ch, nz_job *job)
{
    clnz_context *ctx = ch->ctx;
    if (job->t.n == 0)
        return job_empty(ch, job);
    lb_plan p = {0}; /* a failed plan leaves no shape to divide by */
    clnz_status st = plan_make(ctx, job, "lb_count", &p);
    /* flags unknown: the scratch is always right */
    int direct = !(mem_flags_or(job->count, CL_MEM_WRITE_ONLY) & CL_MEM_WRITE_ONLY);
    if (!st && !direct)
        st = plan_scratch(ctx, sizeof(cl_ulong));
    cl_mem sum = direct ? job->count : ctx->scratch;
    cl_ulong sum_off = direct ? job->count_off : 0;
    if (!st)
        st = chain_fill(ch, sum, sum_off * sizeof(cl_ulong), 0, sizeof(cl_ulong), 1);
    if (st)
        return st;
    job_args a;
    job_args_of(job, sum, &a);
    cl_uint p2 = p.cfg.p2, items = (cl_uint)p.cfg.items;
    cl_uint vec16B = loads_16B(job, p.cfg.wg * p.cfg.items);
    karg args[] = {
        JOB_KARGS_IN(a), KARG(sum),   KARG(sum_off), KARG(p2), KLOCAL(p2 * sizeof(cl_uint)),
        KARG(items),     KARG(vec16B)};
    st = set_args(ctx, p.k, "lb_count", args, (int)(sizeof args / sizeof args[0]));
    if (!st)
        st = chain_launch(ch, p.k, vec16B ? "lb_count (16-byte loads)" : "lb_count",
                          (size_t)p.tiles * p.cfg.wg, p.cfg.wg);
    if (!st && !direct)
        st =
            chain_copy(ch, sum, 0, job->count, job->count_off * sizeof(cl_ulong), sizeof(cl_ulong));
    return st;
}

static clnz_status lb_count(chain *ch, nz_job *job)
{
    if (!job->batches)
        return run_count(ch, job);
    nz_job counting = *job; /* the offsets need each tile's place: lb_run */
    counting.emit = ABI_EMIT_COUNT;
    return run(ch, &counting);
}

static clnz_status lb_write(chain *ch, nz_job *job, int counted)
{
    (void)counted; /* one pass counts again: the count alone leaves nothing to reuse */
    return run(ch, job);
}

static clnz_status lb_programs(clnz_context *ctx, const job_kind *k, program_set *out)
{
    program_ref prog;
    lookback_program(ctx, k, &prog);
    return program_set_add(out, &prog) ? CLNZ_ERROR_OUT_OF_HOST_MEMORY : CLNZ_SUCCESS;
}

const strategy strategy_lookback = {CLNZ_STRATEGY_LOOKBACK, lb_serves, lb_count, lb_write,
                                    lb_programs};
