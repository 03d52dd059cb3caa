/* count_batched.c: the count of every item of a batch (numpy.count_nonzero
 * and torch.count_nonzero along axes), without writing a coordinate. The
 * batch is the leading batch_rank dimensions of a strided tensor, so a
 * caller counting along any axes permutes the strides instead of copying
 * the input.
 *
 * Two ways to run it, picked by the layout (items_plan):
 * - a work-item per 16 neighbouring items and block of their elements
 *   (kernels/count_axes.cl's count_items), when neighbouring items lie
 *   nearer in memory than an item's own elements (counting along an outer
 *   axis): each step of the work-items reads neighbouring addresses, and
 *   the row blocks give few items many work-items;
 * - else the batched nonzero's counting pass with nothing to write
 *   (strategy.h: batches), whose CSR offsets item_counts differences:
 *   items that are runs of memory.
 * Both give the same counts; the tests reach each through the shapes. */
#include "core/result_mem.h"
#include "core/transfer.h"
#include "ops/ops.h"
#include "slices/slices.h"

#include <stdlib.h>
#include <string.h>

/* The shortest run of inner counted elements worth a split (items_plan):
 * below it the split's (outer block, item) counts cost more than walking
 * the items. */
#define SPLIT_MIN_RUN 64
#define ITEMS_PER_WI  ABI_COUNT_ITEMS_PER_WI /* count_items' (kernels/abi.h) */
/* Elements of each item a count_items work-item walks (its row block):
 * short enough that a work-group's reads stay within a few pages per row
 * and cache lines are used while they are in the cache (f32 4096^2 along
 * axis 0 on PoCL: 10.8 ms walking whole columns, 3.0-3.4 ms in blocks of
 * 64; 32 and 128 measured 4.0 and 5.1), long enough that the block counts
 * (4 bytes per item and block: 1/16 of a dense u8 input) stay small. */
#define ITEM_BLOCK_STEPS 64

/* count_items' barriers between runs of steps (kernels/count_axes.cl):
 * on a CPU device, or as CLNZ_COUNT_LOCKSTEP forces. */
static int count_lockstep(const clnz_context *ctx)
{
    return ctx->count_lockstep >= 0 ? ctx->count_lockstep : ctx->is_cpu;
}

void count_axes_program(const clnz_context *ctx, clnz_dtype d, int pred_nonzero, program_ref *r)
{
    program_element(r, "count_axes", d, pred_nonzero);
    program_append(r, " -DCOUNT_LOCKSTEP=%d", count_lockstep(ctx));
}

/* The input with the kept dimensions merged where one stride walks them,
 * and the counted ones alike (fewer odometer steps; same C order). */
typedef struct {
    tensor_info t;     /* merged: kept dimensions [0, krank), counted [krank, rank) */
    tensor_info kept;  /* the kept dimensions alone (count_items' kmeta) */
    tensor_info items; /* the counted ones alone (its cmeta) */
    uint64_t batches, item_n;
    int per_item;
    uint64_t steps, blocks; /* per item: count_items' row blocks (item_blocks) */
    cl_uint vec16; /* count_items may load 16 items at once (kernels/count_axes.cl) */
    /* Counting along inner and outer axes at once (NCHW's per-channel
     * counts, axis (0, 2, 3)): with outer > 1 the counting pass runs over
     * `split`, the counted dimensions outer to a kept one first, then the
     * kept ones, then the inner counted ones (a run of memory per item:
     * the pass's fast way when it is C order), and item_counts adds the
     * outer blocks' counts of each item. */
    tensor_info split;
    uint64_t outer;
} items_plan;

/* Merges dims [from, to) of shape/strides into out_shape/out_strides:
 * extents of 1 dropped, and d, d + 1 joined when strides[d] walks on from
 * d + 1's end. Returns the merged rank (at least 1). */
static int merge_dims(const tensor_info *t, int from, int to, int64_t *shape, int64_t *strides)
{
    int r = 0;
    for (int d = from; d < to; ++d) {
        if (t->shape[d] == 1)
            continue;
        if (r && strides[r - 1] == t->strides[d] * t->shape[d]) {
            shape[r - 1] *= t->shape[d];
            strides[r - 1] = t->strides[d];
            continue;
        }
        shape[r] = t->shape[d];
        strides[r++] = t->strides[d];
    }
    if (r == 0) { /* every extent 1, or none: one element */
        shape[0] = 1;
        strides[0] = 0;
        r = 1;
    }
    return r;
}

static clnz_status part(clnz_context *ctx, const tensor_info *t, int rank, const int64_t *shape,
                        const int64_t *strides, tensor_info *out)
{
    clnz_tensor ct = {t->dtype, rank, (int64_t *)shape, (int64_t *)strides};
    return tensor_check(ctx, &ct, out);
}

/* count_items' row blocks: p->steps elements of each item per work-item,
 * p->blocks of them. A dense input's block counts take n / 16 bytes, which
 * its allocation bounds; a broadcast view (zero strides) may have many
 * more elements than bytes: longer blocks then (at most 2^31 steps, as
 * the block counts are uint). 0 when even those do not fit: the counting
 * pass then, which slices by elements. */
static int item_blocks(const clnz_context *ctx, items_plan *p)
{
    const uint64_t limit = ctx->max_alloc / 8 / sizeof(cl_uint); /* block counts */
    uint64_t s = ITEM_BLOCK_STEPS, b = (p->item_n + s - 1) / s;
    while (b > 1 && b > limit / p->batches && s < ((uint64_t)1 << 31)) {
        s *= 2;
        b = (p->item_n + s - 1) / s;
    }
    if (b <= 1) { /* one block: counted straight into counts */
        s = p->item_n;
        b = 1;
    }
    p->steps = s;
    p->blocks = b;
    return b == 1 || b <= limit / p->batches;
}

/* The split of a counting pass (items_plan's outer and split): the merged
 * counted dimensions [kr, kr + cr) that some kept one lies inside of
 * (outer), then the kept ones, then the other counted ones (inner), when
 * both kinds exist, the inner run has SPLIT_MIN_RUN elements or more, and
 * the (outer block, item) offsets stay a small allocation. */
static clnz_status plan_split(clnz_context *ctx, const tensor_info *t, items_plan *p, int kr,
                              int cr, const int64_t *shape, const int64_t *strides)
{
    int64_t kmin = INT64_MAX, s_shape[CLNZ_MAX_RANK], s_strides[CLNZ_MAX_RANK];
    for (int d = 0; d < kr; ++d)
        kmin = llabs(strides[d]) < kmin ? llabs(strides[d]) : kmin;
    uint64_t outer = 1, run = 1;
    int n = 0;
    for (int pass = 0; pass < 3; ++pass) /* outer counted, kept, inner counted */
        for (int d = pass == 1 ? 0 : kr; d < (pass == 1 ? kr : kr + cr); ++d) {
            int is_outer = llabs(strides[d]) >= kmin;
            if (pass != 1 && is_outer != (pass == 0))
                continue;
            s_shape[n] = shape[d];
            s_strides[n++] = strides[d];
            outer *= pass == 0 ? (uint64_t)shape[d] : 1;
            run *= pass == 2 ? (uint64_t)shape[d] : 1;
        }
    if (outer == 1 || run < SPLIT_MIN_RUN ||
        outer > ctx->max_alloc / 4 / sizeof(cl_long) / p->batches)
        return CLNZ_SUCCESS;
    p->outer = outer;
    return part(ctx, t, n, s_shape, s_strides, &p->split);
}

static clnz_status items_plan_make(clnz_context *ctx, const tensor_info *t, int batch_rank,
                                   items_plan *p)
{
    if (t->rank == 0)
        return ctx_fail(ctx, CLNZ_ERROR_INVALID_ARGUMENT,
                        "a rank-0 input has no batch dimension (batch_rank %d): count it "
                        "with clnz_count",
                        batch_rank);
    if (batch_rank < 1 || batch_rank > t->rank)
        return ctx_fail(ctx, CLNZ_ERROR_INVALID_ARGUMENT,
                        "batch_rank %d is outside 1..%d (the input's rank)", batch_rank,
                        t->rank);
    memset(p, 0, sizeof *p);
    uint64_t b = 1;
    for (int d = 0; d < batch_rank; ++d) {
        uint64_t e = (uint64_t)t->shape[d];
        /* an empty input's leading extents may multiply past 2^63 ((2^40,
         * 2^40, 0)): its counts would not fit anywhere */
        if (e && b > (uint64_t)INT64_MAX / e)
            return ctx_fail(ctx, CLNZ_ERROR_TOO_LARGE,
                            "a batch of more than 2^63 items is too large for its counts");
        b *= e;
    }
    p->batches = b;
    p->item_n = b ? t->n / b : 0;
    if (t->n == 0) { /* nothing read: every count 0, no kernel */
        p->t = *t;
        return CLNZ_SUCCESS;
    }
    int64_t shape[2 * CLNZ_MAX_RANK], strides[2 * CLNZ_MAX_RANK];
    int kr = merge_dims(t, 0, batch_rank, shape, strides);
    int cr = merge_dims(t, batch_rank, t->rank, shape + kr, strides + kr);
    if (kr + cr > CLNZ_MAX_RANK) /* batch_rank == rank == 32: merge_dims gave the empty */
        cr = 0;                  /* counted part a (1, 0) of its own; it counts nothing */
    clnz_status st = part(ctx, t, kr + cr, shape, strides, &p->t);
    if (!st)
        st = part(ctx, t, kr, shape, strides, &p->kept);
    if (!st)
        st = part(ctx, t, cr ? cr : 1, shape + kr, strides + kr, &p->items);
    /* neighbouring items nearer than an item's neighbouring elements: the
     * innermost kept stride against the innermost counted one */
    int64_t ks = llabs(strides[kr - 1]), cs = cr ? llabs(strides[kr + cr - 1]) : INT64_MAX;
    /* whatever the number of items (the counting pass would walk each
     * item's elements a stride apart: 6x numpy's time for 1000 columns of
     * 4096 f32, 4x for 16 columns of 2^22), but not for a single item or
     * for kept items at one address (stride 0) */
    p->per_item = p->item_n == 1 || (p->batches > 1 && ks > 0 && ks < cs);
    if (p->per_item && !item_blocks(ctx, p))
        p->per_item = 0;
    p->vec16 = strides[kr - 1] == 1; /* for the work-items whose items share a row */
    p->outer = 1;
    if (!st && !p->per_item)
        st = plan_split(ctx, t, p, kr, cr, shape, strides);
    return st;
}

/* One work-item per 16 items and row block: count_items writes the counts,
 * or block counts that item_block_sums adds up. */
static clnz_status run_per_item(chain *ch, const items_plan *p, const pred_keys *keys,
                                cl_mem in, int64_t base, cl_mem counts, uint64_t counts_off)
{
    clnz_context *ctx = ch->ctx;
    program_ref prog;
    count_axes_program(ctx, p->t.dtype, keys->nonzero, &prog);
    cl_kernel k, sums = NULL;
    cl_mem kmeta = NULL, cmeta = NULL, partial = NULL;
    size_t local = 1, sums_local = 1;
    uint64_t blocks = p->blocks;
    clnz_status st = program_kernel(ctx, &prog, "count_items", &k);
    if (!st && blocks > 1)
        st = program_kernel(ctx, &prog, "item_block_sums", &sums);
    if (!st)
        st = small_local(ctx, k, &local);
    uint64_t wis = (p->batches + ITEMS_PER_WI - 1) / ITEMS_PER_WI, block_wis = wis;
    size_t global = (size_t)((wis * blocks + local - 1) / local * local);
    if (count_lockstep(ctx)) {
        /* each block's wis padded to whole work-groups (count_items: a
         * work-group's work-items take the same steps, to each barrier); a
         * work-group no larger than wis pads them by less than half */
        while (local > 1 && local > wis)
            local /= 2;
        block_wis = (wis + local - 1) / local * local;
        global = (size_t)(block_wis * blocks);
    }
    if (!st && sums)
        st = small_local(ctx, sums, &sums_local);
    if (!st)
        st = tensor_meta_buffer(ctx, &p->kept, &kmeta);
    if (!st)
        st = tensor_meta_buffer(ctx, &p->items, &cmeta);
    if (!st && blocks > 1)
        st = rw_buffer(ctx, (size_t)(blocks * p->batches * sizeof(cl_uint)), &partial,
                       "clCreateBuffer(block counts)");
    cl_long a_base = base;
    cl_ulong items = p->batches, item_n = p->item_n, c_off = counts_off;
    cl_ulong a_wis = wis, a_block_wis = block_wis, a_steps = p->steps, a_blocks = blocks;
    cl_int krank = p->kept.krank, crank = p->items.krank;
    cl_mem to_partial = partial ? partial : counts; /* unused with one block */
    karg args[] = {KARG(in),       KARG(a_base),      KARG(items),        KARG(krank),
                   KARG(kmeta),    KARG(item_n),      KARG(crank),        KARG(cmeta),
                   KARG(keys->lo), KARG(keys->hi),    KARG(keys->invert), KARG(p->vec16),
                   KARG(a_wis),    KARG(a_block_wis), KARG(a_steps),      KARG(a_blocks),
                   KARG(counts),   KARG(c_off),       KARG(to_partial)};
    if (!st)
        st = set_args(ctx, k, "count_items", args, (int)(sizeof args / sizeof args[0]));
    if (!st)
        st = chain_launch(ch, k, "count_items", global, local);
    if (!st && blocks > 1) {
        karg sum_args[] = {KARG(partial), KARG(a_blocks), KARG(items), KARG(counts),
                           KARG(c_off)};
        st = set_args(ctx, sums, "item_block_sums", sum_args, 5);
        if (!st)
            st = chain_launch(ch, sums, "item_block_sums",
                              (size_t)((items + sums_local - 1) / sums_local * sums_local),
                              sums_local);
    }
    if (kmeta)
        clReleaseMemObject(kmeta);
    if (cmeta)
        clReleaseMemObject(cmeta);
    if (partial) /* OpenCL keeps it until the commands using it are done */
        clReleaseMemObject(partial);
    return st;
}

/* The batched counting pass into a temporary of B + 1 offsets, then
 * item_counts into the counts. */
static clnz_status run_counting_pass(chain *ch, const items_plan *p, const clnz_predicate *pred,
                                     const pred_keys *keys, cl_mem in, int64_t base,
                                     cl_mem counts, uint64_t counts_off)
{
    clnz_context *ctx = ch->ctx;
    /* with a split, the pass's items are (outer block, item) pairs */
    const tensor_info *pass_view = p->outer > 1 ? &p->split : &p->t;
    uint64_t pass_items = p->batches * p->outer;
    if (pass_items >= ctx->max_alloc / sizeof(cl_long))
        return ctx_fail(ctx, CLNZ_ERROR_TOO_LARGE,
                        "the offsets of %llu items exceed the device's largest allocation (%llu "
                        "bytes)",
                        (unsigned long long)pass_items, (unsigned long long)ctx->max_alloc);
    nz_job job = {0};
    cl_mem offsets = NULL;
    cl_kernel k;
    size_t local;
    program_ref prog;
    count_axes_program(ctx, p->t.dtype, keys->nonzero, &prog);
    clnz_status st = rw_buffer(ctx, (size_t)(pass_items + 1) * sizeof(cl_long), &offsets,
                               "clCreateBuffer(offsets)");
    if (!st)
        st = job_on_buffer(ctx, &job, pass_view, pred, in, (size_t)base * pass_view->elem);
    if (!st) {
        job.emit = ABI_EMIT_COUNT;
        job.batches = pass_items;
        job.offsets = job.count = offsets;
        job.count_off = pass_items;
        st = job_run(ch, &job);
    }
    if (!st)
        st = program_kernel(ctx, &prog, "item_counts", &k);
    if (!st)
        st = small_local(ctx, k, &local);
    cl_ulong zero = 0, items = p->batches, blocks = p->outer, c_off = counts_off;
    karg args[] = {KARG(offsets), KARG(zero), KARG(items), KARG(blocks), KARG(counts),
                   KARG(c_off)};
    if (!st)
        st = set_args(ctx, k, "item_counts", args, 6);
    if (!st)
        st = chain_launch(ch, k, "item_counts", (size_t)((items + local - 1) / local * local),
                          local);
    job_release(&job);
    if (offsets) /* OpenCL keeps it until the commands using it are done */
        clReleaseMemObject(offsets);
    return st;
}

/* The counts of a planned input in `in` (logical element 0 at element
 * base) into counts from element counts_off on, enqueued on the chain. */
static clnz_status run_items(chain *ch, const items_plan *p, const clnz_predicate *pred,
                             cl_mem in, int64_t base, cl_mem counts, uint64_t counts_off)
{
    if (p->batches == 0)
        return CLNZ_SUCCESS;
    if (p->t.n == 0)
        return chain_fill(ch, counts, counts_off * sizeof(cl_long), 0, sizeof(cl_long),
                          p->batches);
    pred_keys keys;
    clnz_status st = pred_to_keys(ch->ctx, p->t.dtype, pred, &keys);
    if (st)
        return st;
    return p->per_item ? run_per_item(ch, p, &keys, in, base, counts, counts_off)
                       : run_counting_pass(ch, p, pred, &keys, in, base, counts, counts_off);
}

clnz_status clnz_count_batched_enqueue(clnz_context *ctx, const clnz_tensor *in, cl_mem in_buf,
                                       size_t in_offset, const clnz_predicate *pred,
                                       int batch_rank, cl_mem counts_buf, size_t counts_offset,
                                       cl_uint num_events, const cl_event *wait_list,
                                       cl_event *out_event)
{
    CTX_ENTER(ctx);
    tensor_info t;
    items_plan p;
    int64_t base = 0;
    pred_keys keys;
    clnz_status st = events_check(ctx, num_events, wait_list);
    if (!st)
        st = tensor_check(ctx, in, &t);
    if (!st)
        st = items_plan_make(ctx, &t, batch_rank, &p);
    if (!st)
        st = pred_to_keys(ctx, t.dtype, pred, &keys); /* a bad predicate fails every shape */
    if (!st)
        st = buffer_check(ctx, counts_buf, "counts", counts_offset, p.batches, sizeof(cl_long));
    if (!st)
        st = tensor_base(ctx, &t, in_buf, in_offset, "input", &base);
    if (!st) {
        mem_span in_span = tensor_span(in_buf, &t, base, "input"),
                 out_span = {counts_buf, counts_offset, counts_offset + p.batches * sizeof(cl_long),
                             "counts"};
        st = spans_apart(ctx, &out_span, 1, &in_span, 1);
    }
    if (st)
        return st;
    chain ch;
    chain_begin(&ch, ctx, num_events, wait_list);
    st = run_items(&ch, &p, pred, in_buf, base, counts_buf, counts_offset / sizeof(cl_long));
    return chain_end(&ch, st, out_event);
}

/* An input that fits one allocation: one upload, and the B counts written
 * where *counts (alloc_result, the caller's to free) returns them, in
 * place on a CPU device. TOO_LARGE when they or the offsets do not fit
 * one allocation. */
static clnz_status count_batched_direct(clnz_context *ctx, const tensor_info *t,
                                        const void *data, const clnz_predicate *pred,
                                        int batch_rank, int64_t **counts)
{
    items_plan p;
    *counts = NULL;
    clnz_status st = items_plan_make(ctx, t, batch_rank, &p);
    if (st)
        return st;
    if (p.batches > ctx->max_alloc / sizeof(cl_long))
        return ctx_fail(ctx, CLNZ_ERROR_TOO_LARGE,
                        "the counts of %llu items exceed the device's largest allocation (%llu "
                        "bytes)",
                        (unsigned long long)p.batches, (unsigned long long)ctx->max_alloc);
    size_t bytes = (size_t)p.batches * sizeof(cl_long);
    cl_mem inb = NULL, outb = NULL;
    void *host = NULL;
    int64_t base = 0;
    chain ch;
    chain_begin_own(&ch, ctx); /* the call waits for its own commands */
    st = result_alloc(ctx, bytes, &host, &outb, NULL);
    if (!st && bytes)
        st = upload(ctx, t, data, &inb, &base);
    if (!st && bytes)
        st = run_items(&ch, &p, pred, inb, base, outb, 0);
    if (!st && bytes)
        st = fetch_result(&ch, outb, bytes, host, ctx->is_cpu);
    st = chain_end(&ch, st, NULL); /* waits for the device before host memory goes */
    if (inb)
        clReleaseMemObject(inb);
    if (outb)
        clReleaseMemObject(outb);
    if (st)
        free_result(host);
    else
        *counts = host;
    return st;
}

/* Past one allocation: each slice (a box of the array) is a batch of its
 * own over the box's leading extents; its counts add up into the whole
 * batch's at the box's place. */
typedef struct {
    const clnz_predicate *pred;
    int batch_rank;
    const int64_t *shape; /* the whole array's */
    int64_t *counts;
} batch_sum;

static clnz_status count_batched_slice(clnz_context *ctx, void *user, const view *s,
                                       const box *at)
{
    batch_sum *c = user;
    clnz_tensor t = view_tensor(&s[0]);
    tensor_info ti;
    int k = c->batch_rank;
    int64_t *counts = NULL;
    clnz_status st = tensor_check(ctx, &t, &ti);
    if (!st)
        st = count_batched_direct(ctx, &ti, s[0].data, c->pred, k, &counts);
    uint64_t batches = 1;
    for (int d = 0; d < k; ++d)
        batches *= (uint64_t)at->shape[d]; /* a box of the whole batch: no overflow */
    int64_t idx[CLNZ_MAX_RANK] = {0};
    for (uint64_t j = 0; !st && j < batches; ++j) {
        int64_t b = 0; /* item j of the box, in the whole batch: C order over shape[:k] */
        for (int d = 0; d < k; ++d)
            b = b * c->shape[d] + at->origin[d] + idx[d];
        c->counts[b] += counts[j];
        for (int d = k - 1; d >= 0 && ++idx[d] == at->shape[d]; --d)
            idx[d] = 0;
    }
    free_result(counts);
    return st;
}

clnz_status clnz_count_batched(clnz_context *ctx, const clnz_tensor *in, const void *data,
                               const clnz_predicate *pred, int batch_rank, clnz_array *counts)
{
    CTX_ENTER(ctx);
    if (!counts)
        return ctx_fail(ctx, CLNZ_ERROR_INVALID_ARGUMENT, "counts is NULL");
    memset(counts, 0, sizeof *counts);
    tensor_info t;
    view v;
    items_plan p;
    int fits;
    pred_keys keys;
    clnz_status st = host_view(ctx, in, data, &t, &v, &fits);
    if (!st)
        st = items_plan_make(ctx, &t, batch_rank, &p);
    if (!st)
        st = pred_to_keys(ctx, t.dtype, pred, &keys); /* a bad predicate fails every shape */
    if (st)
        return st;
    st = batch_fits_host(ctx, p.batches, p.batches, "counts");
    if (st)
        return st;
    int64_t *out = NULL;
    uint64_t budget = ctx->max_alloc;
    st = CLNZ_ERROR_TOO_LARGE;
    if (!p.item_n) { /* items of no element: zeros, however many, with no device memory */
        st = CLNZ_SUCCESS;
        if (!(out = calloc(p.batches ? (size_t)p.batches : 1, sizeof *out)))
            st = ctx_fail(ctx, CLNZ_ERROR_OUT_OF_HOST_MEMORY, "cannot allocate the counts");
    } else if (fits) {
        st = count_batched_direct(ctx, &t, data, pred, batch_rank, &out);
        if (st == CLNZ_ERROR_TOO_LARGE) { /* the counts or offsets did not fit: slices */
            ctx_clear_message(ctx);
            budget /= 2;
        }
    }
    if (st == CLNZ_ERROR_TOO_LARGE) {
        st = CLNZ_SUCCESS;
        if (!(out = calloc((size_t)p.batches, sizeof *out)))
            st = ctx_fail(ctx, CLNZ_ERROR_OUT_OF_HOST_MEMORY, "cannot allocate the counts");
        batch_sum c = {pred, batch_rank, t.shape, out};
        /* What a slice allocates besides its span grows with its elements
         * (its counts and offsets, a byte per item of u8; the counting
         * pass's tile scratch), and a broadcast view spans a few bytes
         * for any number of them: halving the span alone stopped at
         * MIN_BUDGET with that still too large. So a slice's elements are
         * bounded too: by the budget (no cut a dense view does not make
         * anyway), and 8 bytes each when the whole batch's counts do not
         * fit (a slice has at most one item per element). */
        uint64_t per_elem = p.batches >= budget / sizeof(cl_long) ? sizeof(cl_long) : 1;
        slicing s = {&v, 1, budget, per_elem, 0};
        if (!st)
            st = slices_each(ctx, &s, count_batched_slice, &c);
    }
    if (st) {
        free(out);
        return st;
    }
    counts->data = out;
    counts->dtype = CLNZ_I64;
    counts->rank = batch_rank;
    memcpy(counts->shape, t.shape, (size_t)batch_rank * sizeof t.shape[0]);
    return CLNZ_SUCCESS;
}
