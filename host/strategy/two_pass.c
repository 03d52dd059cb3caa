/* two_pass.c: the two-pass strategy (reduce, then scan, then write): a
 * counting pass writes one count per tile and one per work-item, the
 * multi-level scan (scan_levels.c) turns the tile counts into tile offsets
 * and the total, and the writing pass scans its tile's work-item counts in
 * local memory and writes each selected element at its place. Reads the
 * input twice; needs nothing of the device but OpenCL 1.2, and no
 * cooperation between work-groups. The choice on CPU devices. */
#include "strategy/strategy.h"
#include "core/error.h"

/* ctx->scratch while a job runs: the tile counts (then offsets, u64), the
 * scan's levels, then one u32 count per work-item from u32 element
 * items_off on, then, where the writing pass reads them, the selection bits
 * the counting pass keeps, from u32 element bits_off on (0: none kept). */
typedef struct {
    tile_kit kit;
    scan_kit scan;
    uint64_t items_off, bits_off;
} two_pass_plan;

static clnz_status plan_make(clnz_context *ctx, const nz_job *job, two_pass_plan *p)
{
    clnz_status st = tile_kit_make(ctx, job, &p->kit);
    if (!st)
        st = scan_kit_make(ctx, 1, &p->scan);
    if (st)
        return st;
    uint64_t elems = p->kit.tiles + scan_scratch_elems(&p->scan, p->kit.tiles);
    p->items_off = elems * 2;
    uint64_t u32s = p->items_off + p->kit.tiles * p->kit.cfg.wg;
    p->bits_off = 0;
    if (tile_keeps_sel_bits(job, &p->kit)) {
        p->bits_off = u32s;
        u32s += tile_sel_bits_words(job);
    }
    return plan_scratch(ctx, (size_t)(u32s * sizeof(cl_uint)));
}

static int two_pass_serves(clnz_context *ctx, const nz_job *job, char *why, size_t n)
{
    (void)ctx, (void)job, (void)why, (void)n;
    return 1; /* any size: the scratch it needs is checked when it is planned */
}

static clnz_status counted(chain *ch, nz_job *job, const two_pass_plan *p)
{
    clnz_context *ctx = ch->ctx;
    clnz_status st = tile_count(ch, job, &p->kit, ctx->scratch, p->items_off, p->bits_off);
    if (!st)
        st = scan_run(ch, &p->scan, ctx->scratch, 0, ctx->scratch, 0, p->kit.tiles, job->count,
                      job->count_off, p->kit.tiles);
    if (!st)
        st = tile_batch_offsets(ch, job, &p->kit, p->items_off);
    return st;
}

static clnz_status two_pass_count(chain *ch, nz_job *job)
{
    if (job->t.n == 0)
        return job_empty(ch, job);
    two_pass_plan p = {0};
    clnz_status st = plan_make(ch->ctx, job, &p);
    return st ? st : counted(ch, job, &p);
}

static clnz_status two_pass_write(chain *ch, nz_job *job, int already_counted)
{
    if (job->t.n == 0)
        return job_empty(ch, job);
    two_pass_plan p = {0};
    clnz_status st = plan_make(ch->ctx, job, &p);
    if (!st && !already_counted)
        st = counted(ch, job, &p);
    if (!st)
        st = tile_write(ch, job, &p.kit, ch->ctx->scratch, 0, p.items_off, p.bits_off, 0);
    return st;
}

static clnz_status two_pass_programs(clnz_context *ctx, const job_kind *k, program_set *out)
{
    (void)ctx;
    program_ref count, write, scan;
    tile_programs(k, &count, &write);
    scan_program(1, &scan); /* plan_make's scan of the tile counts */
    return program_set_add(out, &count) || program_set_add(out, &write) ||
                   program_set_add(out, &scan)
               ? CLNZ_ERROR_OUT_OF_HOST_MEMORY
               : CLNZ_SUCCESS;
}

const strategy strategy_two_pass = {CLNZ_STRATEGY_TWO_PASS, two_pass_serves, two_pass_count,
                                    two_pass_write, two_pass_programs};
