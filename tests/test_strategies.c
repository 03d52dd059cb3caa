/* test_strategies.c: every compacting operation under every strategy that
 * serves it (forced per context with clnz_context_set_strategy), against
 * the sequential reference of testutil.c: nonzero in every layout, index
 * type, order, width and static size, count, select with and without a
 * mask, batched nonzero (CSR) and the channel rule, through the blocking
 * and the device-resident calls, on contiguous, reversed and transposed
 * views, at several launch shapes. The look-back strategy also runs with
 * no waiting (a tile that finds its predecessor unpublished counts it
 * itself: CLNZ_LOOKBACK_SPIN=0; where tiles run in order, as on PoCL, only
 * with silent tiles, CLNZ_LOOKBACK_TEST_SPARSE, is a predecessor ever
 * unpublished), with 32-bit tile states (CLNZ_LOOKBACK_ATOMICS=32), and
 * with look-back windows of 1 and 3 states (CLNZ_LOOKBACK_WINDOW) over
 * tiles that publish sparsely. A forced strategy that cannot serve a call
 * fails with CLNZ_ERROR_UNSUPPORTED_STRATEGY and says why; auto takes one
 * launch for an input of one tile. */
#include "testutil.h"
#include "core/devices.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif

/* A clnz context of its own (its forced strategy and launch, and the
 * environment it reads when made) over the test context's OpenCL context
 * and queue, where tu_buffer makes buffers. */
static clnz_context *new_context(clnz_strategy s, size_t wg, size_t items)
{
    clnz_context *ctx = NULL, *shared = tu_context();
    char msg[300];
    if (clnz_context_wrap(clnz_context_cl_context(shared), clnz_context_queue(shared), &ctx, msg,
                          sizeof msg))
        fail_msg("context: %s", msg);
    TU_CHECK(ctx, clnz_context_set_strategy(ctx, s));
    TU_CHECK(ctx, clnz_context_set_launch(ctx, wg, items));
    return ctx;
}

/* A test input: a C-order, reversed or transposed view of random data. */
typedef struct {
    clnz_dtype dt;
    int rank;
    int64_t shape[3], strides[3];
    void *buf;   /* the allocation */
    char *first; /* logical element 0 */
    size_t span; /* elements in buf */
    int64_t base; /* element offset of logical element 0 in buf */
    int in_place; /* device-resident calls: a CL_MEM_USE_HOST_PTR buffer from `first` */
    clnz_tensor t;
} input;

/* The input's buffer for a device-resident call, and the byte offset of
 * its element 0: a copy of the whole allocation, or (in_place, C-order
 * inputs) a buffer over the caller's memory from element 0 on, which the
 * device may read where it lies (as PoCL does): the pointer's own
 * alignment then reaches the kernel. */
static cl_mem input_buffer(const input *in, size_t *offset)
{
    size_t es = clnz_dtype_size(in->dt);
    *offset = in->in_place ? 0 : (size_t)in->base * es;
    if (!in->in_place)
        return tu_buffer(in->span * es, in->buf);
    cl_int e;
    cl_mem m = clCreateBuffer(clnz_context_cl_context(tu_context()),
                              CL_MEM_READ_ONLY | CL_MEM_USE_HOST_PTR,
                              (in->span - (size_t)in->base) * es, in->first, &e);
    if (e)
        fail_msg("clCreateBuffer(USE_HOST_PTR): %d", e);
    return m;
}

static void input_make(input *in, clnz_dtype dt, int rank, const int64_t *shape, int view,
                       double density)
{
    memset(in, 0, sizeof *in);
    in->dt = dt, in->rank = rank;
    int64_t n = 1;
    for (int d = 0; d < rank; ++d)
        n *= (in->shape[d] = shape[d]);
    size_t es = clnz_dtype_size(dt);
    in->span = (size_t)(n ? n : 1);
    in->buf = malloc(in->span * es);
    tu_fill(dt, in->buf, in->span, density);
    /* view 0: C order; 1: every dimension reversed; 2: transposed (Fortran) */
    int64_t s = 1;
    for (int k = 0; k < rank; ++k) {
        int d = view == 2 ? k : rank - 1 - k;
        in->strides[d] = view == 1 ? -s : s;
        s *= shape[d] ? shape[d] : 1;
    }
    for (int d = 0; d < rank; ++d)
        if (in->strides[d] < 0 && shape[d] > 0)
            in->base += -in->strides[d] * (shape[d] - 1);
    in->first = (char *)in->buf + in->base * (int64_t)es;
    in->t = (clnz_tensor){dt, rank, in->shape, view ? in->strides : NULL};
}

/* Element offset of C-order logical element i from logical element 0. */
static int64_t view_offset(const input *in, int64_t i)
{
    if (!in->t.strides)
        return i;
    int64_t off = 0;
    for (int d = in->rank - 1; d >= 0; --d) {
        off += (i % in->shape[d]) * in->strides[d];
        i /= in->shape[d];
    }
    return off;
}

/* What a strategy must give: the reference in the caller's options. */
static void expect_nonzero(clnz_context *ctx, const input *in, const clnz_predicate *pred,
                           const clnz_nonzero_options *o, const char *what)
{
    int64_t z, entries;
    int per;
    int64_t *want = tu_ref_nonzero(&in->t, in->first, pred, o, &z, &entries, &per);
    clnz_result r;
    TU_CHECK(ctx, clnz_nonzero(ctx, &in->t, in->first, pred, o, &r));
    assert_int_equal(r.count, z);
    size_t n = (size_t)(entries * per);
    int64_t *got = tu_widen(r.indices, r.index_type, n);
    if (n && memcmp(got, want, n * 8))
        fail_msg("%s: blocking nonzero differs (layout %d index %d order %d size %d)", what,
                 o->layout, o->index_type, o->order, o->has_size ? (int)o->size : -1);
    free(got);
    clnz_result_free(&r);

    /* device-resident, one entry short of the count: nothing past it */
    size_t ib = o->index_type == CLNZ_INDEX_INT64 ? 8 : 4;
    uint64_t cap = z > 0 ? (uint64_t)z - 1 : 0;
    if (o->has_size)
        cap = (uint64_t)o->size;
    size_t slots = (size_t)cap * (size_t)per, guard = 64;
    unsigned char *host = malloc((slots + guard) * ib);
    memset(host, 0xa5, (slots + guard) * ib);
    size_t in_off;
    cl_mem ib_ = input_buffer(in, &in_off), out = tu_buffer((slots + guard) * ib, host),
           cnt = tu_buffer(8, NULL);
    TU_CHECK(ctx, clnz_nonzero_enqueue(ctx, &in->t, ib_, in_off, pred, o, out, 0, cap, cnt, 0, 0,
                                       NULL, NULL));
    uint64_t dz = 0;
    tu_read(cnt, 0, 8, &dz);
    assert_int_equal(dz, (uint64_t)z);
    tu_read(out, 0, (slots + guard) * ib, host);
    for (size_t i = slots * ib; i < (slots + guard) * ib; ++i)
        if (host[i] != 0xa5)
            fail_msg("%s: enqueue wrote past its capacity (layout %d width %d size %d: byte %zu "
                     "of %zu)",
                     what, o->layout, o->width, o->has_size ? (int)o->size : -1, i, slots * ib);
    /* rows and flat: the first entries are the reference's (columns are
     * `cap` apart, the reference's `entries`) */
    if (o->layout != CLNZ_LAYOUT_COLUMNS && slots) {
        int64_t *g = tu_widen(host, o->index_type, slots);
        if (memcmp(g, want, slots * 8))
            fail_msg("%s: device-resident nonzero differs", what);
        free(g);
    }
    clReleaseMemObject(ib_);
    clReleaseMemObject(out);
    clReleaseMemObject(cnt);
    free(host);
    free(want);
}

static void expect_count(clnz_context *ctx, const input *in, const clnz_predicate *pred)
{
    clnz_nonzero_options o;
    clnz_nonzero_options_init(&o);
    int64_t z, entries;
    int per;
    free(tu_ref_nonzero(&in->t, in->first, pred, &o, &z, &entries, &per));
    int64_t got = -1;
    TU_CHECK(ctx, clnz_count(ctx, &in->t, in->first, pred, &got));
    assert_int_equal(got, z);
    size_t in_off;
    cl_mem b = input_buffer(in, &in_off), cnt = tu_buffer(16, NULL);
    TU_CHECK(ctx, clnz_count_enqueue(ctx, &in->t, b, in_off, pred, cnt, 8, 0, NULL, NULL));
    uint64_t dz = 0;
    tu_read(cnt, 8, 8, &dz);
    assert_int_equal(dz, (uint64_t)z);
    /* a count buffer kernels may only write: lookback's lb_count adds up
     * elsewhere and copies (its atomics read what they add to) */
    cl_int e;
    cl_mem wo =
        clCreateBuffer(clnz_context_cl_context(tu_context()), CL_MEM_WRITE_ONLY, 24, NULL, &e);
    assert_int_equal(e, CL_SUCCESS);
    TU_CHECK(ctx, clnz_count_enqueue(ctx, &in->t, b, in_off, pred, wo, 16, 0, NULL, NULL));
    dz = 0;
    tu_read(wo, 16, 8, &dz);
    assert_int_equal(dz, (uint64_t)z);
    clReleaseMemObject(wo);
    clReleaseMemObject(b);
    clReleaseMemObject(cnt);
}

/* select: x's values where pred holds on the mask (or on x). */
static void expect_select(clnz_context *ctx, const input *x, const input *mask,
                          const clnz_predicate *pred)
{
    const input *m = mask ? mask : x;
    clnz_nonzero_options o;
    clnz_nonzero_options_init(&o);
    o.layout = CLNZ_LAYOUT_FLAT;
    int64_t z, entries;
    int per;
    int64_t *at = tu_ref_nonzero(&m->t, m->first, pred, &o, &z, &entries, &per);
    size_t es = clnz_dtype_size(x->dt);
    char *want = malloc((size_t)z * es + 1);
    for (int64_t k = 0; k < z; ++k)
        memcpy(want + k * (int64_t)es, x->first + view_offset(x, at[k]) * (int64_t)es, es);
    clnz_array a;
    TU_CHECK(ctx, clnz_select(ctx, &x->t, x->first, mask ? &mask->t : NULL,
                              mask ? mask->first : NULL, pred, &a));
    assert_int_equal(a.shape[0], z);
    if (z && memcmp(a.data, want, (size_t)z * es))
        fail_msg("select differs from the reference");
    clnz_array_free(&a);
    /* device-resident, full capacity */
    size_t x_off, m_off;
    cl_mem xb = input_buffer(x, &x_off), mb = input_buffer(m, &m_off),
           out = tu_buffer((size_t)z * es + 8, NULL), cnt = tu_buffer(8, NULL);
    TU_CHECK(ctx, clnz_select_enqueue(ctx, &x->t, xb, x_off, mask ? &mask->t : NULL, mb, m_off,
                                      pred, out, 0, (uint64_t)z, cnt, 0, 0, NULL, NULL));
    uint64_t dz = 0;
    tu_read(cnt, 0, 8, &dz);
    assert_int_equal(dz, (uint64_t)z);
    if (z) {
        char *got = malloc((size_t)z * es);
        tu_read(out, 0, (size_t)z * es, got);
        if (memcmp(got, want, (size_t)z * es))
            fail_msg("device-resident select differs from the reference");
        free(got);
    }
    clReleaseMemObject(xb);
    clReleaseMemObject(mb);
    clReleaseMemObject(out);
    clReleaseMemObject(cnt);
    free(want);
    free(at);
}

/* Batched: offsets and each item's entries against the reference of the
 * item (C-order inputs only: an item is then a contiguous block). */
static void expect_batched(clnz_context *ctx, const input *in, const clnz_predicate *pred)
{
    clnz_nonzero_options o;
    clnz_nonzero_options_init(&o);
    clnz_result r;
    clnz_array offs;
    TU_CHECK(ctx, clnz_nonzero_batched(ctx, &in->t, in->first, pred, &o, &r, &offs));
    int64_t batches = in->shape[0], item_n = 1;
    for (int d = 1; d < in->rank; ++d)
        item_n *= in->shape[d];
    const int64_t *off = offs.data;
    int w = in->rank - 1;
    assert_int_equal(off[0], 0);
    clnz_tensor item = {in->dt, w, in->shape + 1, NULL};
    for (int64_t b = 0; b < batches; ++b) {
        int64_t z, entries;
        int per;
        int64_t *want = tu_ref_nonzero(&item, in->first + b * item_n * (int64_t)clnz_dtype_size(in->dt),
                                       pred, &o, &z, &entries, &per);
        assert_int_equal(off[b + 1] - off[b], z);
        int64_t *got = tu_widen((char *)r.indices + off[b] * w * 8, r.index_type, (size_t)(z * w));
        if (z > 0 && w > 0 && memcmp(got, want, (size_t)(z * w) * 8))
            fail_msg("batched item %lld differs", (long long)b);
        free(got);
        free(want);
    }
    assert_int_equal(off[batches], r.count);
    clnz_result_free(&r);
    clnz_array_free(&offs);
}

/* The channel rule: the last dimension is a pixel's channels. */
static void expect_channels(clnz_context *ctx, const input *in, const clnz_predicate *pred,
                            clnz_channel_rule rule, uint64_t tile)
{
    int64_t pixels = 1, ch = in->shape[in->rank - 1];
    for (int d = 0; d < in->rank - 1; ++d)
        pixels *= in->shape[d];
    if (tile && (uint64_t)pixels > tile && !(ch == 0 && rule == CLNZ_CHANNELS_ANY)) {
        /* no channels: no elements, but every pixel is an answer (all of
         * none is true), more pixels than single-tile's one tile holds;
         * under any, no pixel is, and the mask is empty: one tile serves */
        clnz_result r;
        assert_int_equal(clnz_nonzero_channels(ctx, &in->t, in->first, pred, rule, NULL, &r),
                         CLNZ_ERROR_UNSUPPORTED_STRATEGY);
        assert_non_null(strstr(clnz_context_message(ctx), "single-tile"));
        return;
    }
    uint8_t *sel = malloc((size_t)pixels + 1);
    size_t es = clnz_dtype_size(in->dt);
    for (int64_t p = 0; p < pixels; ++p) {
        int any = 0, all = 1;
        for (int64_t k = 0; k < ch; ++k) {
            const char *e = in->first + view_offset(in, p * ch + k) * (int64_t)es;
            int s = pred ? tu_ref_selected(in->dt, e, pred)
                         : tu_ref_selected(in->dt, e, &(clnz_predicate){CLNZ_OP_NONZERO});
            any |= s, all &= s;
        }
        sel[p] = (uint8_t)(rule == CLNZ_CHANNELS_ALL ? all : any);
    }
    clnz_tensor mt = {CLNZ_U8, in->rank - 1, in->shape, NULL};
    clnz_nonzero_options o;
    clnz_nonzero_options_init(&o);
    int64_t z, entries;
    int per;
    int64_t *want = tu_ref_nonzero(&mt, sel, NULL, &o, &z, &entries, &per);
    clnz_result r;
    TU_CHECK(ctx, clnz_nonzero_channels(ctx, &in->t, in->first, pred, rule, &o, &r));
    assert_int_equal(r.count, z);
    size_t n = (size_t)(entries * per);
    if (n && memcmp(r.indices, want, n * 8))
        fail_msg("channel rule %d differs", (int)rule);
    clnz_result_free(&r);
    free(want);
    free(sel);
}

/* Everything on one input: layouts, index types, orders, widths, sizes.
 * `tile`: the elements single-tile's one tile holds, 0 for the others. */
static void run_input(clnz_context *ctx, const input *in, const input *mask, const char *what,
                      uint64_t tile)
{
    clnz_predicate nonzero = clnz_pred_nonzero(), gt = clnz_pred_float(CLNZ_OP_GT, 0.25);
    for (int layout = 0; layout < 3; ++layout) {
        clnz_nonzero_options o;
        clnz_nonzero_options_init(&o);
        o.layout = (clnz_layout)layout;
        o.index_type = (clnz_index_type)((layout + in->rank) % 3);
        if (layout != CLNZ_LAYOUT_FLAT && in->rank % 2)
            o.order = CLNZ_ORDER_XY;
        expect_nonzero(ctx, in, layout == 1 ? &gt : NULL, &o, what);
    }
    clnz_nonzero_options o;
    clnz_nonzero_options_init(&o);
    o.width = in->rank + 2; /* DirectML's wider entries */
    expect_nonzero(ctx, in, NULL, &o, what);
    clnz_nonzero_options_init(&o);
    o.has_size = 1, o.size = 7, o.fill = -3; /* nonzero_static, short or long */
    expect_nonzero(ctx, in, &nonzero, &o, what);
    expect_count(ctx, in, &gt);
    expect_select(ctx, in, NULL, &gt);
    expect_select(ctx, in, mask, NULL);
    if (in->rank >= 2) {
        expect_channels(ctx, in, &gt, CLNZ_CHANNELS_ANY, tile);
        expect_channels(ctx, in, NULL, CLNZ_CHANNELS_ALL, tile);
    }
    if (in->rank >= 2 && !in->t.strides) {
        if (clnz_context_strategy(ctx) != CLNZ_STRATEGY_SINGLE_TILE) {
            expect_batched(ctx, in, &gt);
        } else { /* it writes no per-item offsets: refused, with the reason */
            clnz_result r;
            clnz_array offs;
            assert_int_equal(clnz_nonzero_batched(ctx, &in->t, in->first, &gt, NULL, &r, &offs),
                             CLNZ_ERROR_UNSUPPORTED_STRATEGY);
            assert_non_null(strstr(clnz_context_message(ctx), "serves no batch"));
        }
    }
}

/* The shapes every strategy runs: tiny to many tiles, ranks 1 to 3. */
static const struct {
    int rank;
    int64_t shape[3];
} shapes[] = {{1, {1}}, {1, {33}}, {2, {7, 9}}, {3, {3, 5, 20}}, {1, {5000}}, {2, {61, 183}},
              {3, {9, 40, 33}}, {1, {0}}, {2, {4, 0}}, {1, {4001}}};

/* The inputs' dtypes, taken in turn: the first `ndt` of tu_dtypes (each
 * dtype and predicate is a program PoCL compiles cold for seconds). */
static void run_strategy(clnz_strategy s, size_t wg, size_t items, int ndt)
{
    clnz_context *ctx = new_context(s, wg, items);
    char what[96];
    if (ndt > tu_n_dtypes)
        ndt = tu_n_dtypes;
    for (size_t k = 0; k < sizeof shapes / sizeof shapes[0]; ++k) {
        clnz_dtype dt = tu_dtypes[k % (size_t)ndt];
        input in, mask;
        int view = (int)(k % 3);
        input_make(&in, dt, shapes[k].rank, shapes[k].shape, view, k % 2 ? 0.6 : 0.1);
        input_make(&mask, tu_dtypes[(k + 1) % (size_t)ndt], shapes[k].rank, shapes[k].shape,
                   2 - view, 0.5);
        snprintf(what, sizeof what, "%s wg %zu items %zu shape %zu view %d",
                 clnz_strategy_name(s), wg, items, k, view);
        uint64_t n = 1;
        for (int d = 0; d < in.rank; ++d)
            n *= (uint64_t)in.shape[d];
        if (s == CLNZ_STRATEGY_SINGLE_TILE && n > (uint64_t)(wg * items)) {
            /* more than one tile: refused with the reason, never run another way */
            int64_t c;
            assert_int_equal(clnz_count(ctx, &in.t, in.first, NULL, &c),
                             CLNZ_ERROR_UNSUPPORTED_STRATEGY);
            assert_non_null(strstr(clnz_context_message(ctx), "single-tile"));
        } else {
            run_input(ctx, &in, &mask, what,
                      s == CLNZ_STRATEGY_SINGLE_TILE ? (uint64_t)(wg * items) : 0);
        }
        free(in.buf);
        free(mask.buf);
    }
    clnz_stats st;
    TU_CHECK(ctx, clnz_context_stats(ctx, &st));
    for (int k = 1; k < CLNZ_STRATEGY_COUNT; ++k) /* every call ran the forced one */
        if (k != (int)s && st.strategy_runs[k])
            fail_msg("%s forced, but %s ran %llu calls", clnz_strategy_name(s),
                     clnz_strategy_name((clnz_strategy)k),
                     (unsigned long long)st.strategy_runs[k]);
    assert_true(st.strategy_runs[s] > 0);
    clnz_context_release(ctx);
}

/* Launch shapes each strategy runs at: odd and tiny groups, and one group
 * of a few work-items with long runs (the CPU shape); the quick tier takes
 * an odd group of short runs (many tiles for every input above 111). */
static const tu_launch shapes_quick[] = {{37, 3}};
static const tu_launch shapes_full[] = {{1, 1}, {2, 3}, {3, 5}, {8, 2}, {37, 3}, {64, 64},
                                        {256, 8}, {4, 256}, {1024, 1}};

static void each_strategy_at_each_shape(clnz_strategy s)
{
    int full = tu_full();
    const tu_launch *l = full ? shapes_full : shapes_quick;
    int n = full ? (int)(sizeof shapes_full / sizeof shapes_full[0])
                 : (int)(sizeof shapes_quick / sizeof shapes_quick[0]);
    for (int i = 0; i < n; ++i)
        run_strategy(s, l[i].wg, l[i].items, full ? 4 : 2);
}

static void test_single_tile(void **state)
{
    (void)state;
    each_strategy_at_each_shape(CLNZ_STRATEGY_SINGLE_TILE);
}

static void test_two_pass(void **state)
{
    (void)state;
    each_strategy_at_each_shape(CLNZ_STRATEGY_TWO_PASS);
    /* items a multiple of 32: the counting pass keeps the selection bits and
     * the writing pass reads them instead of the input (tile_keeps_sel_bits):
     * C-order inputs of (9, 40, 33) (rows that start inside a word) and 4001
     * (a last, partial word) */
    run_strategy(CLNZ_STRATEGY_TWO_PASS, 3, 64, 2);
}

static void test_lookback(void **state)
{
    (void)state;
    each_strategy_at_each_shape(CLNZ_STRATEGY_LOOKBACK);
    /* regression: PoCL ran this kernel's look-back loop wrong at a local
     * size of 2 (barriers in a loop), now out of any loop */
    run_strategy(CLNZ_STRATEGY_LOOKBACK, 2, 3, 1);
    /* items a multiple of 4: runs of flags read a word at a time */
    run_strategy(CLNZ_STRATEGY_LOOKBACK, 16, 8, 1);
    /* 16-bit staged indices in a tile of 65536 elements, the most they
     * serve (LOOKBACK_MAX_TILE), and a forced 32 x 4096 lowered to it
     * (16 x 4096), over the shapes (indices up to 11879: the launches
     * above stage none past 255) and over dense 1-D inputs of 3.x such
     * tiles, C-order and reversed, where they reach 65535 */
    const tu_launch big[] = {{16, 4096}, {32, 4096}};
    for (int k = 0; k < 2; ++k) {
        run_strategy(CLNZ_STRATEGY_LOOKBACK, big[k].wg, big[k].items, 1);
        clnz_context *ctx = new_context(CLNZ_STRATEGY_LOOKBACK, big[k].wg, big[k].items);
        int64_t n = 3 * 65552 + 5;
        for (int view = 0; view < 2; ++view) {
            input in;
            input_make(&in, CLNZ_U8, 1, &n, view, 0.7);
            clnz_nonzero_options o;
            clnz_nonzero_options_init(&o);
            expect_nonzero(ctx, &in, NULL, &o, "lookback, dense tiles of 2^16 and more");
            o.layout = CLNZ_LAYOUT_FLAT;
            expect_nonzero(ctx, &in, NULL, &o, "lookback, dense tiles of 2^16 and more");
            free(in.buf);
        }
        clnz_context_release(ctx);
    }
}

/* The look-back's 16-byte loads (lookback.c's loads_16B): a C-order input
 * read as vectors when element 0 lies on a 16-byte boundary and a tile
 * holds whole vectors (16 x 4 elements: for every dtype), elementwise when
 * it starts 1 or 3 elements further into its allocation: through the
 * blocking call's host pointer, the device-resident call's buffer offset,
 * and (in_place) the host pointer of the caller's own CL_MEM_USE_HOST_PTR
 * buffer at offset 0; elementwise in the last, partial tile too. (Which
 * path ran shows in CLNZ_DEBUG's log: test_cli's look-back test reads it.) */
static void test_lookback_vector_loads(void **state)
{
    (void)state;
    clnz_context *ctx = new_context(CLNZ_STRATEGY_LOOKBACK, 16, 4);
    int ndt = tu_full() ? tu_n_dtypes : 4; /* every lane count: 16, 8, 4, 2 in full */
    int64_t n = 64 * 9 + 13;
    for (int k = 0; k < ndt; ++k) {
        for (int v = 0; v < 6; ++v) {
            int off = (1 << (v / 2)) - 1, in_place = v % 2; /* offsets 0, 1, 3 */
            clnz_dtype dt = tu_dtypes[k];
            size_t es = clnz_dtype_size(dt);
            input in, mask;
            input_make(&in, dt, 1, &n, 0, 0.4);
            input_make(&mask, dt, 1, &n, 0, 0.5);
            /* the same input, `off` elements into a larger allocation */
            char *buf = malloc((size_t)(n + off) * es);
            memcpy(buf + off * es, in.buf, (size_t)n * es);
            free(in.buf);
            in.buf = buf, in.first = buf + off * es;
            in.base = off, in.span = (size_t)(n + off);
            in.in_place = in_place;
            char what[80];
            snprintf(what, sizeof what, "lookback vectors dtype %d offset %d in place %d",
                     (int)dt, off, in_place);
            run_input(ctx, &in, &mask, what, 0);
            free(in.buf);
            free(mask.buf);
        }
    }
    clnz_context_release(ctx);
}

/* The look-back's other paths: a tile that finds its predecessor
 * unpublished counts it at once (no waiting; on a device that runs tiles in
 * order, only the sparse run below has such a predecessor), tile states in
 * two 32-bit words, and states read one and three at a time. Tiles that publish
 * sparsely (CLNZ_LOOKBACK_TEST_SPARSE: a prefix every 5th tile, nothing
 * from the one after it) make look-backs add aggregates over several
 * windows and count silent tiles themselves, which tiles run in order (as
 * here) never do; the tile after the next takes the count its predecessor
 * left in the silent one's state (lb_offer), so a wrong offer shows too.
 * All give the same results. */
static void test_lookback_fallback_and_32bit_states(void **state)
{
    (void)state;
    /* a spin of 3 where tiles are silent: each successor of one waits 4
     * reads, not 4097 (5 minutes of this test under Oclgrind). Each set of
     * values builds its own programs (most of this test's time on PoCL), so
     * a spin of 0 and 32-bit states share one: alone, a spin of 0 changes
     * nothing where tiles run in order. */
    const char *env[][8] = {
        {"CLNZ_LOOKBACK_ATOMICS", "32", "CLNZ_LOOKBACK_SPIN", "0", "CLNZ_LOOKBACK_TEST_SPARSE",
         "7"},
        {"CLNZ_LOOKBACK_WINDOW", "1", "CLNZ_LOOKBACK_TEST_SPARSE", "5", "CLNZ_LOOKBACK_SPIN", "3"},
        {"CLNZ_LOOKBACK_WINDOW", "3", "CLNZ_LOOKBACK_TEST_SPARSE", "5", "CLNZ_LOOKBACK_SPIN", "3"},
        /* the GPU sweep's plain (volatile) reads of the states, full tier
         * only: its own programs, every kernel's (two-word states then,
         * whatever the device's atomics) */
        {"CLNZ_BUILD_OPTIONS", "-DLB_PLAIN_READ=1", "CLNZ_LOOKBACK_TEST_SPARSE", "5",
         "CLNZ_LOOKBACK_SPIN", "3"}};
    size_t sets = sizeof env / sizeof *env - (tu_full() ? 0 : 1);
    for (size_t e = 0; e < sets; ++e) {
        char *kept[4] = {NULL};
        for (int v = 0; v < 8 && env[e][v]; v += 2) {
            kept[v / 2] = tu_env_keep(env[e][v]);
            /* build options after the caller's own (-cl-opt-disable, say) */
            char joined[160];
            int add = kept[v / 2] && strcmp(env[e][v], "CLNZ_BUILD_OPTIONS") == 0;
            snprintf(joined, sizeof joined, "%s%s%s", add ? kept[v / 2] : "", add ? " " : "",
                     env[e][v + 1]);
            setenv(env[e][v], joined, 1);
        }
        run_strategy(CLNZ_STRATEGY_LOOKBACK, 37, 3, tu_full() ? 4 : 1);
        for (int v = 0; v < 8 && env[e][v]; v += 2)
            tu_env_put_back(env[e][v], kept[v / 2]);
    }
}

/* 64-bit tile states where the device lists cl_khr_int64_base_atomics.
 * The library's reading of a list (devices_list_has; it once used a fixed
 * buffer of 8 KiB that a longer list overflowed): whole names only,
 * first, last and past 8 KiB. Then CLNZ_LOOKBACK_ATOMICS=64 is taken
 * exactly where this device's list, read here name by name, holds it. */
static void test_lookback_64bit_states_where_listed(void **state)
{
    (void)state;
    const char *x = "cl_khr_int64_base_atomics";
    assert_true(devices_list_has("cl_khr_int64_base_atomics cl_khr_fp64", x));
    assert_true(devices_list_has("cl_khr_fp64 cl_khr_int64_base_atomics", x));
    assert_true(devices_list_has("cl_khr_fp64 cl_khr_int64_base_atomics ", x));
    assert_false(devices_list_has("xcl_khr_int64_base_atomics cl_khr_fp64", x));
    assert_false(devices_list_has("cl_khr_int64_base_atomics_ext cl_khr_fp64", x));
    assert_false(devices_list_has("cl_khr_int64_base_atomics_ext cl_khr_int64", x));
    assert_false(devices_list_has("", x));
    size_t pad = 9000;
    char *longer = malloc(pad + strlen(x) + 1);
    assert_non_null(longer);
    memset(longer, 'a', pad);
    for (size_t i = 40; i < pad; i += 41)
        longer[i] = ' ';
    longer[pad - 1] = ' ';
    strcpy(longer + pad, x);
    assert_true(devices_list_has(longer, x));
    free(longer);

    clnz_context *shared = tu_context();
    cl_device_id d = clnz_context_device(shared);
    size_t len = 0;
    assert_int_equal(clGetDeviceInfo(d, CL_DEVICE_EXTENSIONS, 0, NULL, &len), CL_SUCCESS);
    char *ext = calloc(len + 1, 1);
    assert_non_null(ext);
    assert_int_equal(clGetDeviceInfo(d, CL_DEVICE_EXTENSIONS, len, ext, NULL), CL_SUCCESS);
    int listed = 0;
    for (char *w = strtok(ext, " "); w; w = strtok(NULL, " "))
        listed |= strcmp(w, "cl_khr_int64_base_atomics") == 0;
    free(ext);
    char *kept = tu_env_keep("CLNZ_LOOKBACK_ATOMICS");
    setenv("CLNZ_LOOKBACK_ATOMICS", "64", 1);
    clnz_context *ctx = NULL;
    char msg[300] = "";
    clnz_status st = clnz_context_wrap(clnz_context_cl_context(shared), clnz_context_queue(shared),
                                       &ctx, msg, sizeof msg);
    tu_env_put_back("CLNZ_LOOKBACK_ATOMICS", kept);
    if (listed && st)
        fail_msg("the device lists cl_khr_int64_base_atomics, yet: %s", msg);
    if (!listed)
        assert_true(st && strstr(msg, "CLNZ_LOOKBACK_ATOMICS"));
    clnz_context_release(ctx);
}

/* The look-back's other ways to write a tile's entries
 * (CLNZ_LOOKBACK_SCATTER): each work-item its own run's (direct), and
 * directly only in a tile of at most a work-group of entries (hybrid: at
 * 37 x 3 the inputs' densities of 0.1 and 0.6 give tiles on either side;
 * 16 x 8 reads aligned inputs as 16-byte vectors and its flags 4 at a
 * time). The same results as the staged default, capacities short of the
 * count (run_input's static size) too. */
static void test_lookback_scatter(void **state)
{
    (void)state;
    const char *modes[] = {"direct", "hybrid"};
    for (int m = 0; m < 2; ++m) {
        setenv("CLNZ_LOOKBACK_SCATTER", modes[m], 1);
        run_strategy(CLNZ_STRATEGY_LOOKBACK, 37, 3, tu_full() ? 4 : 1);
        /* runs of whole words (direct reads 4 flags a load) and tiles of
         * 16-byte loads (aligned C-order inputs) */
        run_strategy(CLNZ_STRATEGY_LOOKBACK, 16, 8, tu_full() ? 2 : 1);
        if (tu_full()) /* a one-work-item tile */
            run_strategy(CLNZ_STRATEGY_LOOKBACK, 1, 5, 1);
    }
}

static int unset_lookback_scatter(void **state)
{
    (void)state;
    unsetenv("CLNZ_LOOKBACK_SCATTER"); /* after a failure too: later tests run staged */
    return 0;
}

/* Non-temporal stores (kernels/nt_store.cl), forced on (CLNZ_STREAM_STORES=1;
 * by default a CPU takes them where the input and the entries come to
 * 128 MiB, which test_python's debug-log test checks). A work-item of the
 * writing pass stores so from 2 entry bytes per element in flat and 1-D
 * int64 entries (from 25 % selected), from 6 in staged ones: pairs and 2-D
 * columns from 37.5 % in int64 and 75 % in 32 bits, rank 3 rows from 25 %
 * in int64; the rest of its writes (rows shorter than a block, whole
 * entries, the input's last elements) stay plain. Dense inputs through everything
 * run_input does, and int64 rows and columns in both orders, at launches
 * that keep the selection bits (items a multiple of 32) with one and with
 * several 256-element spans per work-item, one that does not keep them,
 * and one tile. */
static void test_stream_stores(void **state)
{
    (void)state;
    static const struct {
        int rank;
        int64_t shape[3];
    } dense[] = {{1, {5000}}, {2, {61, 183}}, {2, {3, 3000}}, {3, {9, 40, 33}}, {2, {700, 2}}};
    const tu_launch launches[] = {{3, 64}, {2, 1024}, {4, 1000}, {4, 1600}};
    setenv("CLNZ_STREAM_STORES", "1", 1);
    for (size_t l = 0; l < sizeof launches / sizeof *launches; ++l) {
        clnz_strategy s = l == 3 ? CLNZ_STRATEGY_SINGLE_TILE : CLNZ_STRATEGY_TWO_PASS;
        uint64_t tile = launches[l].wg * launches[l].items;
        clnz_context *ctx = new_context(s, launches[l].wg, launches[l].items);
        for (size_t k = 0; k < sizeof dense / sizeof *dense; ++k) {
            uint64_t n = 1;
            for (int d = 0; d < dense[k].rank; ++d)
                n *= (uint64_t)dense[k].shape[d];
            if (s == CLNZ_STRATEGY_SINGLE_TILE && n > tile)
                continue; /* single-tile serves one tile */
            for (int full = 0; full < 2; ++full) {
                input in, mask;
                input_make(&in, CLNZ_F32, dense[k].rank, dense[k].shape, 0, full ? 1.0 : 0.9);
                input_make(&mask, CLNZ_U8, dense[k].rank, dense[k].shape, 0, 0.95);
                char what[96];
                snprintf(what, sizeof what, "stream stores, %s wg %zu items %zu shape %zu %s",
                         clnz_strategy_name(s), launches[l].wg, launches[l].items, k,
                         full ? "all selected" : "90 %");
                run_input(ctx, &in, &mask, what, s == CLNZ_STRATEGY_SINGLE_TILE ? tile : 0);
                for (int v = 0; v < 4; ++v) { /* run_input's rotation gives these 32 bits */
                    clnz_nonzero_options o;
                    clnz_nonzero_options_init(&o);
                    o.layout = v / 2 ? CLNZ_LAYOUT_COLUMNS : CLNZ_LAYOUT_ROWS;
                    o.order = v % 2 ? CLNZ_ORDER_XY : CLNZ_ORDER_ROW_MAJOR;
                    expect_nonzero(ctx, &in, NULL, &o, what);
                }
                free(in.buf);
                free(mask.buf);
            }
        }
        /* flat and 1-D entries stream from 25 % selected: one input at 30 %, and
         * one in bands of 256 selected and 256 not, whose entries short of a
         * whole line are held across the empty spans */
        for (int banded = 0; banded < 2; ++banded) {
            int64_t shape[] = {5000};
            input in;
            input_make(&in, CLNZ_F32, 1, shape, 0, banded ? 1.0 : 0.3);
            for (int64_t i = 0; banded && i < shape[0]; ++i)
                if (i / 256 % 2)
                    ((float *)in.buf)[i] = 0.0f;
            char what[96];
            snprintf(what, sizeof what, "stream stores, %s wg %zu items %zu, 1-D %s",
                     clnz_strategy_name(s), launches[l].wg, launches[l].items,
                     banded ? "in bands" : "30 %");
            for (int flat = 0; flat < 2; ++flat) {
                clnz_nonzero_options o;
                clnz_nonzero_options_init(&o);
                o.layout = flat ? CLNZ_LAYOUT_FLAT : CLNZ_LAYOUT_ROWS;
                expect_nonzero(ctx, &in, NULL, &o, what);
            }
            free(in.buf);
        }
        clnz_context_release(ctx);
    }
    unsetenv("CLNZ_STREAM_STORES");
}

/* One-byte elements are counted in byte lanes that add up at most 255
 * blocks of 64 at a time (kernels/chunk.cl's bytes_count): a chunk of
 * CLNZ_MAX_ITEMS (65536) elements takes several such rounds. u8 and bool
 * (any byte but 0 true), all selected and at random, counted and
 * compacted under x != 0 and x > 0. */
static void test_long_chunks_of_bytes(void **state)
{
    (void)state;
    int64_t shape[] = {2 * 65536 + 77}; /* two whole chunks and a rest */
    clnz_context *ctx = new_context(CLNZ_STRATEGY_TWO_PASS, 1, 65536);
    clnz_predicate gt = clnz_pred_int(CLNZ_OP_GT, 0);
    const clnz_dtype dts[] = {CLNZ_U8, CLNZ_BOOL};
    for (size_t d = 0; d < sizeof dts / sizeof *dts; ++d)
        for (int full = 0; full < 2; ++full) {
            input in;
            input_make(&in, dts[d], 1, shape, 0, full ? 1.0 : 0.6);
            char what[64];
            snprintf(what, sizeof what, "chunks of 65536, dtype %d, %s", (int)dts[d],
                     full ? "all selected" : "60 %");
            clnz_nonzero_options o;
            clnz_nonzero_options_init(&o);
            o.layout = CLNZ_LAYOUT_FLAT;
            expect_count(ctx, &in, NULL);
            expect_count(ctx, &in, &gt);
            expect_nonzero(ctx, &in, &gt, &o, what);
            free(in.buf);
        }
    clnz_context_release(ctx);
}

/* A failed assertion leaves a test early: not with its variable set. */
static int unset_stream_stores(void **state)
{
    (void)state;
    unsetenv("CLNZ_STREAM_STORES");
    return 0;
}

static void test_stream(void **state)
{
    (void)state;
    each_strategy_at_each_shape(CLNZ_STRATEGY_STREAM);
}

/* Blocking results made before their count (ops/ahead.c): a static size,
 * and on a CPU device a guess from the context's recent densities. */

/* stderr into a temporary file while a call runs (CLNZ_DEBUG's log);
 * cmocka's own reports come after capture_end. */
typedef struct {
    FILE *tmp;
    int saved;
} capture;

static void capture_begin(capture *c)
{
    fflush(stderr);
    c->tmp = tmpfile();
    c->saved = dup(2);
    if (!c->tmp || c->saved < 0 || dup2(fileno(c->tmp), 2) < 0)
        fail_msg("cannot capture stderr");
}

/* Restores stderr; *made, *again: the log's results made ahead and
 * written again, added to; *made_entries: the entries of the last one made
 * (left as it was without one). */
static void capture_end(capture *c, int *made, int *again, long long *made_entries)
{
    fflush(stderr);
    dup2(c->saved, 2);
    close(c->saved);
    rewind(c->tmp);
    char line[512];
    while (fgets(line, sizeof line, c->tmp)) {
        long long e;
        if (strstr(line, "made before the count") && ++*made &&
            sscanf(line, "clnz-debug: result of %lld entries", &e) == 1)
            *made_entries = e;
        *again += strstr(line, "passed them: written again") != NULL;
    }
    fclose(c->tmp);
}

typedef struct {
    int select; /* else nonzero in this form */
    clnz_layout layout;
    clnz_index_type index;
    int width, size;
} ahead_form;

/* One blocking call of the form on `in`, against the reference, and what
 * the caller holds: at most twice its result (with a kept block under it
 * up to twice more: result_mem.c), plus malloc's rounding. */
static void ahead_call(clnz_context *ctx, const input *in, const ahead_form *f,
                       const char *what, int *made, int *again, long long *made_entries)
{
    clnz_nonzero_options o;
    clnz_nonzero_options_init(&o);
    o.layout = f->layout, o.index_type = f->index, o.width = f->width;
    if (f->select)
        o.layout = CLNZ_LAYOUT_FLAT;
    if (f->size)
        o.has_size = 1, o.size = f->size, o.fill = -9;
    int64_t z, entries;
    int per;
    int64_t *want = tu_ref_nonzero(&in->t, in->first, NULL, &o, &z, &entries, &per);
    clnz_result r;
    clnz_array a;
    capture c;
    capture_begin(&c);
    clnz_status st = f->select ? clnz_select(ctx, &in->t, in->first, NULL, NULL, NULL, &a)
                               : clnz_nonzero(ctx, &in->t, in->first, NULL, &o, &r);
    capture_end(&c, made, again, made_entries);
    TU_CHECK(ctx, st);
    void *held;
    size_t bytes;
    if (f->select) {
        assert_int_equal(a.shape[0], z);
        for (int64_t k = 0; k < z; ++k)
            if (memcmp((const float *)a.data + k,
                       (const float *)in->first + view_offset(in, want[k]), sizeof(float)))
                /* by the bits: NaN among them */
                fail_msg("%s: select differs at %lld", what, (long long)k);
        held = a.data, bytes = (size_t)z * sizeof(float);
    } else {
        assert_int_equal(r.count, z);
        size_t n = (size_t)(entries * per);
        int64_t *got = tu_widen(r.indices, r.index_type, n);
        if (n && memcmp(got, want, n * 8))
            fail_msg("%s: blocking nonzero differs", what);
        free(got);
        held = r.indices, bytes = n * (f->index == CLNZ_INDEX_INT32 ? 4 : 8);
    }
#ifdef __GLIBC__
    if (bytes && malloc_usable_size(held) > 4 * bytes + 4096)
        fail_msg("%s: a result of %zu bytes holds a block of %zu", what, bytes,
                 malloc_usable_size(held));
#else
    (void)held, (void)bytes;
#endif
    if (f->select)
        clnz_array_free(&a);
    else
        clnz_result_free(&r);
    free(want);
}

/* Per strategy that serves many tiles and per form (each layout, index
 * type, width, a static size short and long of the count, select), a
 * fresh context through a run of densities that meets the guess, passes
 * it (written again), falls under half of it (moved), alternates, and
 * finds nothing (the next call counts first), against the reference. On a CPU device CLNZ_DEBUG's log shows results
 * made ahead in every form and, for the guessed ones, written again.
 * Every result is past one_shot's 256 KiB. */
static void test_results_made_ahead(void **state)
{
    (void)state;
    static const double densities[] = {0.3, 0.3, 0.9, 0.9, 0.02, 0.02, 0.02, 0.02,
                                       0.02, 0.6, 0.05, 0.6, 0.05, 0.6, 0.0, 0.3};
    const clnz_strategy ss[] = {CLNZ_STRATEGY_TWO_PASS, CLNZ_STRATEGY_LOOKBACK,
                                CLNZ_STRATEGY_STREAM};
    static const ahead_form forms[] = {{0, CLNZ_LAYOUT_ROWS, CLNZ_INDEX_INT64, 0, 0},
                                       {0, CLNZ_LAYOUT_COLUMNS, CLNZ_INDEX_INT32, 0, 0},
                                       {0, CLNZ_LAYOUT_COLUMNS, CLNZ_INDEX_INT64, 4, 0},
                                       {0, CLNZ_LAYOUT_FLAT, CLNZ_INDEX_INT32, 0, 0},
                                       {0, CLNZ_LAYOUT_ROWS, CLNZ_INDEX_INT32, 5, 0},
                                       {0, CLNZ_LAYOUT_ROWS, CLNZ_INDEX_INT64, 0, 70000},
                                       {1, CLNZ_LAYOUT_FLAT, CLNZ_INDEX_INT64, 0, 0}};
    int64_t shape[] = {200, 400};
    int nd = (int)(sizeof densities / sizeof densities[0]);
    input *ins = calloc((size_t)nd, sizeof *ins);
    for (int d = 0; d < nd; ++d)
        input_make(&ins[d], CLNZ_F32, 2, shape, d % 2, densities[d]);
    setenv("CLNZ_DEBUG", "1", 1); /* read when a context is made */
    for (size_t k = 0; k < sizeof ss / sizeof ss[0]; ++k) {
        for (size_t f = 0; f < sizeof forms / sizeof forms[0]; ++f) {
            clnz_context *ctx = new_context(ss[k], 37, 3);
            clnz_device_info dev;
            TU_CHECK(ctx, clnz_context_device_info(ctx, &dev));
            int made = 0, again = 0;
            long long entries = 0;
            for (int d = 0; d < nd; ++d) {
                char what[96];
                snprintf(what, sizeof what, "%s, form %zu, density %g (call %d)",
                         clnz_strategy_name(ss[k]), f, densities[d], d);
                ahead_call(ctx, &ins[d], &forms[f], what, &made, &again, &entries);
            }
            if (forms[f].size) /* every call, on any device */
                assert_true(made == nd && again == 0);
            else if (strcmp(dev.device_type, "CPU") == 0) /* but the first and the one after
                                                            * nothing; two rises */
                assert_true(made == nd - 2 && again == 2);
            clnz_context_release(ctx);
        }
    }
    /* A call of one_shot's size leaves the guesses alone: three nonzero
     * elements between two sparse inputs made the second's guess all of
     * its 80000 elements (a 640 KiB block for 1600 entries). */
    clnz_context *ctx = new_context(CLNZ_STRATEGY_TWO_PASS, 37, 3);
    clnz_device_info dev;
    TU_CHECK(ctx, clnz_context_device_info(ctx, &dev));
    input tiny;
    int64_t three[] = {3};
    input_make(&tiny, CLNZ_F32, 1, three, 0, 1.0);
    const ahead_form rows = {0, CLNZ_LAYOUT_ROWS, CLNZ_INDEX_INT64, 0, 0};
    int made = 0, again = 0;
    long long entries = -1;
    ahead_call(ctx, &ins[4], &rows, "0.02 first", &made, &again, &entries);
    ahead_call(ctx, &tiny, &rows, "3 nonzero", &made, &again, &entries);
    ahead_call(ctx, &ins[5], &rows, "0.02 again", &made, &again, &entries);
    if (strcmp(dev.device_type, "CPU") == 0) { /* the guess from the first call's 2 % */
        assert_true(made == 1 && again == 0);
        long long n = shape[0] * shape[1];
        assert_true(entries > 0 && entries <= n / 20);
    }
    clnz_context_release(ctx);
    free(tiny.buf);
    unsetenv("CLNZ_DEBUG");
    for (int d = 0; d < nd; ++d)
        free(ins[d].buf);
    free(ins);
}

/* auto: one tile takes one launch (single-tile); many tiles on this device
 * take what the device type or the tuning data say, and never single-tile. */
static void test_auto_choice(void **state)
{
    (void)state;
    clnz_context *ctx = new_context(CLNZ_STRATEGY_AUTO, 16, 16);
    assert_int_equal(clnz_context_strategy(ctx), CLNZ_STRATEGY_AUTO);
    input small, large;
    int64_t s1[] = {100}, s2[] = {100000};
    input_make(&small, CLNZ_F32, 1, s1, 0, 0.5);
    input_make(&large, CLNZ_F32, 1, s2, 0, 0.5);
    int64_t c;
    clnz_stats before, after;
    TU_CHECK(ctx, clnz_context_stats(ctx, &before));
    TU_CHECK(ctx, clnz_count(ctx, &small.t, small.first, NULL, &c));
    TU_CHECK(ctx, clnz_context_stats(ctx, &after));
    assert_int_equal(after.strategy_runs[CLNZ_STRATEGY_SINGLE_TILE],
                     before.strategy_runs[CLNZ_STRATEGY_SINGLE_TILE] + 1);
    TU_CHECK(ctx, clnz_count(ctx, &large.t, large.first, NULL, &c));
    TU_CHECK(ctx, clnz_context_stats(ctx, &before));
    assert_int_equal(before.strategy_runs[CLNZ_STRATEGY_SINGLE_TILE],
                     after.strategy_runs[CLNZ_STRATEGY_SINGLE_TILE]);
    free(small.buf);
    free(large.buf);
    clnz_context_release(ctx);
}

/* Names, and the errors of forcing: an unknown strategy (API and
 * CLNZ_STRATEGY) is refused; a strategy that cannot serve says why. A name
 * or value that is no strategy, or a NULL, is a bad argument
 * (CLNZ_ERROR_INVALID_ARGUMENT), not CLNZ_ERROR_UNSUPPORTED_STRATEGY, which
 * is for a real strategy that cannot serve a call. */
static void test_names_and_errors(void **state)
{
    (void)state;
    const char *names[] = {"auto", "single-tile", "two-pass", "lookback", "stream"};
    for (int s = 0; s < CLNZ_STRATEGY_COUNT; ++s) {
        clnz_strategy got;
        assert_string_equal(clnz_strategy_name((clnz_strategy)s), names[s]);
        assert_int_equal(clnz_strategy_parse(names[s], &got), CLNZ_SUCCESS);
        assert_int_equal(got, s);
    }
    clnz_strategy got = CLNZ_STRATEGY_LOOKBACK;
    assert_null(clnz_strategy_name(CLNZ_STRATEGY_COUNT));
    assert_null(clnz_strategy_name((clnz_strategy)-1));
    assert_int_equal(clnz_strategy_parse("fast", &got), CLNZ_ERROR_INVALID_ARGUMENT);
    assert_int_equal(clnz_strategy_parse("", &got), CLNZ_ERROR_INVALID_ARGUMENT);
    assert_int_equal(clnz_strategy_parse("Lookback", &got), CLNZ_ERROR_INVALID_ARGUMENT);
    assert_int_equal(clnz_strategy_parse(NULL, &got), CLNZ_ERROR_INVALID_ARGUMENT);
    assert_int_equal(clnz_strategy_parse("two-pass", NULL), CLNZ_ERROR_INVALID_ARGUMENT);
    assert_int_equal(got, CLNZ_STRATEGY_LOOKBACK); /* untouched by a failure */
    clnz_context *ctx = tu_context();
    TU_CHECK(ctx, clnz_context_set_strategy(ctx, CLNZ_STRATEGY_TWO_PASS));
    const int bad[] = {99, 42, CLNZ_STRATEGY_COUNT, -1};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; ++i) {
        assert_int_equal(clnz_context_set_strategy(ctx, (clnz_strategy)bad[i]),
                         CLNZ_ERROR_INVALID_ARGUMENT);
        char want[160];
        snprintf(want, sizeof want,
                 "unknown strategy %d (known: 0 auto, 1 single-tile, 2 two-pass, 3 lookback, "
                 "4 stream)",
                 bad[i]);
        assert_string_equal(clnz_context_message(ctx), want);
        assert_int_equal(clnz_context_strategy(ctx), CLNZ_STRATEGY_TWO_PASS); /* unchanged */
    }
    TU_CHECK(ctx, clnz_context_set_strategy(ctx, CLNZ_STRATEGY_AUTO));
    assert_int_equal(clnz_context_set_strategy(NULL, CLNZ_STRATEGY_AUTO),
                     CLNZ_ERROR_INVALID_ARGUMENT);
    /* CLNZ_STRATEGY: a known name is the context's forced strategy, an
     * unknown one fails the creation with a message naming it */
    setenv("CLNZ_STRATEGY", "two-pass", 1);
    clnz_context *c = NULL;
    char msg[300];
    assert_int_equal(clnz_context_create(NULL, &c, msg, sizeof msg), CLNZ_SUCCESS);
    assert_int_equal(clnz_context_strategy(c), CLNZ_STRATEGY_TWO_PASS);
    clnz_context_release(c);
    setenv("CLNZ_STRATEGY", "warp-speed", 1); /* a bad value, as any CLNZ_* variable's */
    assert_int_equal(clnz_context_create(NULL, &c, msg, sizeof msg), CLNZ_ERROR_INVALID_VALUE);
    assert_null(c);
    assert_non_null(strstr(msg, "warp-speed"));
    unsetenv("CLNZ_STRATEGY");
}

int main(void)
{
    tu_seed("test_strategies");
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_names_and_errors),
        cmocka_unit_test(test_auto_choice),
        cmocka_unit_test(test_single_tile),
        cmocka_unit_test(test_two_pass),
        cmocka_unit_test(test_lookback),
        cmocka_unit_test(test_lookback_vector_loads),
        cmocka_unit_test(test_lookback_fallback_and_32bit_states),
        cmocka_unit_test(test_lookback_64bit_states_where_listed),
        cmocka_unit_test_teardown(test_lookback_scatter, unset_lookback_scatter),
        cmocka_unit_test_teardown(test_stream_stores, unset_stream_stores),
        cmocka_unit_test(test_stream),
        cmocka_unit_test(test_long_chunks_of_bytes),
        cmocka_unit_test(test_results_made_ahead),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    tu_context_done();
    return rc;
}
