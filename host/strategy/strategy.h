/* strategy.h: how a compacting operation runs on the device.
 *
 * Every compacting operation (count, nonzero, select, their batched and
 * channel forms) is described once, as a job: which elements are selected
 * (a predicate on an input tensor), what a selected element writes (nothing,
 * its coordinates, or a value of x), where the entries go (up to a
 * capacity), where the true count goes, and optionally the CSR offsets of
 * `batches` equal items. A strategy says how the stages run: one
 * work-group in one launch (single_tile.c), a counting pass + scan + a
 * writing pass (two_pass.c), one pass with decoupled look-back
 * (lookback.c), one work-item streaming in order (stream.c). The one place
 * that picks one is choose.c. A new strategy is a file here, its kernel,
 * a line in choose.c and its tests. */
#ifndef CLNZ_STRATEGY_H
#define CLNZ_STRATEGY_H

#include "core/chain.h"
#include "core/context.h"
#include "core/predicate.h"
#include "core/program.h"
#include "core/tensor.h"
#include "tune/tune.h"

#include "abi.h"

/* What the job writes per selected element: ABI_EMIT_COUNT (nothing),
 * ABI_EMIT_COORDS or ABI_EMIT_VALUES (kernels/abi.h). */
typedef struct {
    /* the tensor the predicate reads, placed in its buffer */
    tensor_info t;
    pred_keys keys;
    cl_mem in;
    const char *in_what; /* its name in messages: "input", or select's "mask" or "x" */
    int64_t base; /* element offset of logical element 0 in `in` */
    cl_mem meta;  /* shape and strides for the kernels (job_bind makes it) */

    int emit;
    /* coordinates (ABI_EMIT_COORDS) */
    int layout, width, reverse;
    size_t idx_bytes;
    /* values (ABI_EMIT_VALUES): x over the same shape, its own strides */
    size_t value_bytes;
    cl_mem x;
    int64_t x_base;
    cl_mem x_meta;
    int x_contiguous;
    uint64_t x_lo, x_hi; /* the bytes of x's buffer it reaches (job_apart) */

    /* entries: `capacity` of them from element out_off (index or value
     * units) of `out`; the first min(z, capacity) are written */
    cl_mem out;
    uint64_t out_off, capacity;
    /* out's pages are new to the process (a blocking call's result on a
     * CPU): the system zeroes each on its first touch, which leaves its
     * lines in the cache, so stores that bypass it only cost (tiles.c) */
    int out_fresh;
    /* the true count z, a u64 at element count_off of `count` */
    cl_mem count;
    uint64_t count_off;
    /* batches > 0: offsets[offsets_off + b] (i64) gets the number of
     * selected elements before flat index b * (n / batches), for b in
     * 0..batches; offsets[offsets_off + batches] is z, and `count` is
     * then that same slot */
    uint64_t batches;
    cl_mem offsets;
    uint64_t offsets_off;
} nz_job;

/* A job (zeroed) on a checked input: the predicate as keys. */
clnz_status job_init(clnz_context *ctx, nz_job *job, const tensor_info *t,
                     const clnz_predicate *pred);
/* Places the input (and x, for values) in their buffers and makes the
 * shape buffers the kernels read. */
clnz_status job_bind(clnz_context *ctx, nz_job *job, cl_mem in, size_t in_byte_off);
clnz_status job_bind_values(clnz_context *ctx, nz_job *job, const tensor_info *x, cl_mem buf,
                            int64_t base);
/* A caller's buffers the job writes (entries, count, offsets) share no
 * byte with each other nor with what it reads (the input, x): else a
 * clear error before anything runs, not a race (core/tensor.h). */
clnz_status job_apart(clnz_context *ctx, const nz_job *job);
/* Releases what job_bind made (the kernels using it keep it alive). */
void job_release(nz_job *job);

/* What of a job decides the programs it runs: its element type and
 * predicate class, what it writes (and the size of a value), and whether
 * it is batched. Warm-up and bundles (uses/variants.c) describe jobs by it
 * without running them; job_kind_of is how a running job is described. */
typedef struct {
    clnz_dtype dtype;
    int pred_nonzero;
    int emit;
    size_t value_bytes; /* a select job's x element size (also while it counts), else 0 */
    int batched;
} job_kind;
job_kind job_kind_of(const nz_job *job);

/* ---- strategies ---- */
typedef struct strategy strategy;
struct strategy {
    clnz_strategy id;
    /* 1 if it can run this job on this context; else 0 and a reason in why
     * (for the forced case's message). */
    int (*serves)(clnz_context *ctx, const nz_job *job, char *why, size_t n);
    /* Enqueues the count (and offsets) only: z lands in job->count. */
    clnz_status (*count)(chain *ch, nz_job *job);
    /* Enqueues the whole job: z, offsets and entries. counted: count() (or
     * write(), which counts too) ran on this job just before in this chain,
     * and what it left may be used; only the output and capacity changed. */
    clnz_status (*write)(chain *ch, nz_job *job, int counted);
    /* Adds to out the programs count() and write() build for a job of this
     * kind, from the same functions they build them with; none for a kind
     * it never serves. */
    clnz_status (*programs)(clnz_context *ctx, const job_kind *k, program_set *out);
};

extern const strategy strategy_single_tile, strategy_two_pass, strategy_lookback,
    strategy_stream;

/* The largest look-back tile (work-group size x items): its staged
 * indices are 16-bit (kernels/lookback.cl: lb_run_stage). */
#define LOOKBACK_MAX_TILE 65536
/* The look-back kernel built for the tuner's candidate limits (lookback.c);
 * *local_elem: its local memory per work-item. */
clnz_status lookback_kernel_for_tuning(clnz_context *ctx, size_t items, cl_kernel *k,
                                       size_t *local_elem);

/* The one place a strategy is chosen: the forced one if any (an error with
 * the reason if it cannot serve the job), else from the device, the tuning
 * data and the size. Counts the choice in the context's stats. */
clnz_status strategy_choose(clnz_context *ctx, const nz_job *job, const strategy **out);
/* The strategies whose programs strategy_choose may build for a job on
 * this context: the forced one, or what auto tries (the single-tile probe,
 * the device's or the tuning data's choice, two-pass as the fallback).
 * Fills out, returns how many. */
int strategy_candidates(const clnz_context *ctx, clnz_strategy out[CLNZ_STRATEGY_COUNT]);
const strategy *strategy_impl(clnz_strategy s); /* NULL for auto or an unknown one */
/* The programs of strategy s for kind k, into out (a failure only when out
 * of memory). */
clnz_status strategy_programs(clnz_context *ctx, clnz_strategy s, const job_kind *k,
                              program_set *out);

/* ---- what several strategies share ---- */
/* The launch of the two-pass kernels (nz_count, nz_write / sel_write) for
 * this job: single_tile.c and two_pass.c partition the input alike. */
typedef struct {
    cl_kernel count_k, write_k;
    cl_kernel batch_k; /* nz_batch_offsets, for a batched job; else NULL */
    launch_cfg cfg;
    uint64_t tiles;
} tile_kit;
clnz_status tile_kit_make(clnz_context *ctx, const nz_job *job, tile_kit *kit);
/* The programs of the tile kernels: nz_count (and nz_batch_offsets) in
 * *count, the writing pass (nz_write, or sel_write for values) in *write. */
void tile_programs(const job_kind *k, program_ref *count, program_ref *write);
/* The write pass (nz_write or sel_write) over the kit's tiles. single: one
 * tile that counts for itself, its total to offsets[offsets_off]; else the
 * tile offsets are in ctx->scratch and the work-item counts at items_off,
 * and, bits_off not 0, the selection bits tile_count kept from u32 element
 * bits_off on. */
clnz_status tile_write(chain *ch, nz_job *job, const tile_kit *kit, cl_mem offsets,
                       uint64_t offsets_off, uint64_t items_off, uint64_t bits_off,
                       int single);
/* The counting pass: each tile's count to tile_counts[tile], each
 * work-item's (32 bits) to ctx->scratch from u32 element items_off on, and
 * with bits_off not 0 the selection bits (tile_sel_bits_words of them) from
 * u32 element bits_off on, which the writing pass then reads instead of
 * the input: only where tile_keeps_sel_bits says it would read them. */
clnz_status tile_count(chain *ch, nz_job *job, const tile_kit *kit, cl_mem tile_counts,
                       uint64_t items_off, uint64_t bits_off);
int tile_keeps_sel_bits(const nz_job *job, const tile_kit *kit);
uint64_t tile_sel_bits_words(const nz_job *job);
/* The CSR offsets of a batched job, from what tile_count and the scan of its
 * tile counts left in ctx->scratch (tile offsets from element 0), launched
 * over the same tiles. */
clnz_status tile_batch_offsets(chain *ch, nz_job *job, const tile_kit *kit, uint64_t items_off);

/* An input of no elements: the count (and every offset) is 0. */
clnz_status job_empty(chain *ch, nz_job *job);

/* The arguments of the one-pass kernels (lookback.cl's lb_run, stream.cl's
 * st_run): the input's, then the job's outputs, as values that live as long
 * as the struct; job_kargs_in/out list them in the kernels' order. Outputs
 * a job does not write get a valid stand-in buffer (`spare`). */
typedef struct {
    cl_mem in, meta;
    cl_long base;
    cl_ulong n;
    cl_int rank, contiguous;
    cl_ulong lo, hi;
    cl_uint invert;
    cl_int emit;
    cl_mem out;
    cl_ulong out_off, capacity;
    cl_int layout, width, reverse, idx_bytes;
    cl_mem x, x_meta;
    cl_long x_base;
    cl_int x_contiguous;
    cl_mem count;
    cl_ulong count_off;
    cl_mem offsets;
    cl_ulong offsets_off, batches, item_elems;
} job_args;
void job_args_of(const nz_job *job, cl_mem spare, job_args *a);
#define JOB_KARGS_IN(a)                                                                      \
    KARG((a).in), KARG((a).base), KARG((a).n), KARG((a).rank), KARG((a).meta),              \
        KARG((a).contiguous), KARG((a).lo), KARG((a).hi), KARG((a).invert)
#define JOB_KARGS_OUT(a)                                                                     \
    KARG((a).emit), KARG((a).out), KARG((a).out_off), KARG((a).capacity), KARG((a).layout), \
        KARG((a).width), KARG((a).reverse), KARG((a).idx_bytes), KARG((a).x),               \
        KARG((a).x_base), KARG((a).x_meta), KARG((a).x_contiguous), KARG((a).count),        \
        KARG((a).count_off), KARG((a).offsets), KARG((a).offsets_off), KARG((a).batches),   \
        KARG((a).item_elems)

/* The multi-level scan (scan_levels.c): where the scan recursion is. */
typedef struct {
    int is_u64;
    size_t elem;
    cl_kernel tiles_k, add_k;
    launch_cfg cfg;
} scan_kit;
clnz_status scan_kit_make(clnz_context *ctx, int is_u64, scan_kit *kit);
void scan_program(int is_u64, program_ref *r);
/* Scratch elements (of the scan's type) a scan of n values uses. */
uint64_t scan_scratch_elems(const scan_kit *kit, uint64_t n);
/* Exclusive scan; offsets in elements. total may be NULL. Sums go to
 * ctx->scratch from element scratch_off on, which the caller has sized. */
clnz_status scan_run(chain *ch, const scan_kit *kit, cl_mem in, uint64_t in_off, cl_mem out,
                     uint64_t out_off, uint64_t n, cl_mem total, uint64_t total_off,
                     uint64_t scratch_off);

#endif
