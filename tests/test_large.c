/* test_large.c: the blocking calls on inputs larger than one device
 * allocation, cut into slices (host/slices): against the sequential
 * reference on random views with the allocation limit lowered
 * (CLNZ_MAX_ALLOC), the channel rule and batches too; slices cut in the
 * input's own memory order (a transposed input as few as a C-order one);
 * and, in the long tier, a real 5 * 2^30-element u8 array with nonzeros at
 * both ends and around 2^31 and 2^32, past what 32-bit offsets can name,
 * whole and in slices of 1 GiB with a C-order stride past 2^31. */
#include "testutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void expect_nonzero(clnz_context *ctx, const clnz_tensor *t, const void *data,
                           const clnz_nonzero_options *o)
{
    int64_t z, entries;
    int per_entry;
    int64_t *want = tu_ref_nonzero(t, data, NULL, o, &z, &entries, &per_entry);
    clnz_result res;
    TU_CHECK(ctx, clnz_nonzero(ctx, t, data, NULL, o, &res));
    assert_int_equal(res.count, z);
    size_t n = (size_t)(entries * per_entry);
    int64_t *got = tu_widen(res.indices, res.index_type, n);
    for (size_t i = 0; i < n; ++i)
        if (got[i] != want[i])
            fail_msg("index %zu of %zu: got %lld want %lld (rank %d layout %d order %d)", i, n,
                     (long long)got[i], (long long)want[i], t->rank, o->layout, o->order);
    free(got);
    free(want);
    clnz_result_free(&res);
}

/* Compacting calls a context ran (each slice is one). */
static uint64_t runs(clnz_context *ctx)
{
    clnz_stats st;
    TU_CHECK(ctx, clnz_context_stats(ctx, &st));
    uint64_t n = 0;
    for (int k = 0; k < CLNZ_STRATEGY_COUNT; ++k)
        n += st.strategy_runs[k];
    return n;
}

/* Regression (issue 16, item 6): a Fortran-order input above the limit was
 * cut along its C-order dimensions, each slice then spanning almost all of
 * it: thousands of tiny slices (60 s instead of 0.12 s). Slices follow the
 * input's memory order now: a transposed input takes about as many as the
 * same bytes in C order, with results in C order all the same. */
static void test_issue16_item6_fortran_order_slices_like_c_order(void **state)
{
    (void)state;
    clnz_context *ctx = tu_context_limited("16K");
    int64_t shape[2] = {300, 400}, fortran[2] = {1, 300};
    uint8_t *data = malloc(300 * 400);
    tu_fill(CLNZ_U8, data, 300 * 400, 0.3);
    clnz_tensor c_order = {CLNZ_U8, 2, shape, NULL}, f_order = {CLNZ_U8, 2, shape, fortran};
    clnz_nonzero_options o;
    clnz_nonzero_options_init(&o);
    uint64_t before = runs(ctx);
    expect_nonzero(ctx, &c_order, data, &o);
    uint64_t c_slices = runs(ctx) - before;
    before = runs(ctx);
    expect_nonzero(ctx, &f_order, data, &o);
    uint64_t f_slices = runs(ctx) - before;
    printf("slices: C order %llu, Fortran order %llu\n", (unsigned long long)c_slices,
           (unsigned long long)f_slices);
    if (c_slices < 2 || f_slices > 2 * c_slices) /* the old cut: about 2400 */
        fail_msg("%llu slices for the Fortran view, %llu for C order",
                 (unsigned long long)f_slices, (unsigned long long)c_slices);
    int64_t count = -1, want = 0;
    for (int i = 0; i < 300 * 400; ++i)
        want += data[i] != 0;
    before = runs(ctx);
    TU_CHECK(ctx, clnz_count(ctx, &f_order, data, NULL, &count));
    assert_int_equal(count, want);
    assert_true(runs(ctx) - before <= 2 * c_slices);
    free(data);
    clnz_context_release(ctx);
}

/* Random shapes and views (C order, reversed, every other element,
 * transposed) of up to 40000 f32 elements through a 16 KiB limit: tens of
 * slices, cut along the outer dimensions or inside the last one, with
 * every option. A transposed view's slices interleave in C order: their
 * keys are merged (slices/keys.c). */
static void test_slices_match_the_reference(void **state)
{
    (void)state;
    clnz_context *ctx = tu_context_limited("16K");
    for (int it = 0; it < 32; ++it) {
        int rank = 1 + it % 4;
        int64_t shape[4], full[4], strides[4], n = 1;
        for (int d = 0; d < rank; ++d) {
            shape[d] = 1 + (int64_t)(tu_rand() % (rank == 1 ? 40000 : rank == 2 ? 300 : 30));
            n *= shape[d];
        }
        /* 0: C order, 1: every axis reversed, 2: every other element, 3: transposed */
        int kind = it % 4;
        int64_t span = 1;
        for (int d = rank - 1; d >= 0; --d) {
            full[d] = kind == 2 ? 2 * shape[d] : shape[d];
            strides[d] = (kind == 1 ? -1 : kind == 2 ? 2 : 1) * span;
            span *= full[d];
        }
        int64_t f = 1; /* transposed: Fortran order */
        for (int d = 0; kind == 3 && d < rank; ++d)
            strides[d] = f, f *= shape[d];
        float *buf = malloc((size_t)span * 4);
        tu_fill(CLNZ_F32, buf, (size_t)span, it % 2 ? 0.6 : 0.05);
        int64_t origin = 0; /* element 0 of a reversed view is the buffer's last */
        for (int d = 0; d < rank && kind == 1; ++d)
            origin += (shape[d] - 1) * -strides[d];
        clnz_tensor t = {CLNZ_F32, rank, shape, kind ? strides : NULL};
        const float *data = buf + origin;
        for (int layout = 0; layout < 3; ++layout) {
            clnz_nonzero_options o;
            clnz_nonzero_options_init(&o);
            o.layout = (clnz_layout)layout;
            o.index_type = (clnz_index_type)(it % 3);
            if (layout != CLNZ_LAYOUT_FLAT && it % 2)
                o.order = CLNZ_ORDER_XY;
            if (layout != CLNZ_LAYOUT_FLAT && it % 4 == 3)
                o.width = rank + 1;
            expect_nonzero(ctx, &t, data, &o);
            o.has_size = 1, o.size = (int64_t)(tu_rand() % 300), o.fill = 7;
            expect_nonzero(ctx, &t, data, &o);
        }
        int64_t count;
        clnz_predicate gt = clnz_pred_float(CLNZ_OP_GT, 0.5);
        TU_CHECK(ctx, clnz_count(ctx, &t, data, &gt, &count));
        clnz_nonzero_options o;
        clnz_nonzero_options_init(&o);
        int64_t z, entries;
        int per_entry;
        free(tu_ref_nonzero(&t, data, &gt, &o, &z, &entries, &per_entry));
        assert_int_equal(count, z);
        free(buf);
    }
    clnz_context_release(ctx);
}

/* select and where through the limit: x[mask] of a reversed x with a C-order
 * mask, and where with a broadcast row and a scalar. */
static void test_select_and_where_slices(void **state)
{
    (void)state;
    clnz_context *ctx = tu_context_limited("8K");
    int64_t shape[2] = {97, 301}, rstrides[2] = {-301, -1}, n = 97 * 301;
    int32_t *x = malloc((size_t)n * 4);
    uint8_t *m = malloc((size_t)n);
    for (int64_t i = 0; i < n; ++i) {
        x[i] = (int32_t)tu_rand();
        m[i] = tu_rand() % 3 == 0 ? (uint8_t)(1 + tu_rand() % 200) : 0;
    }
    clnz_tensor xt = {CLNZ_I32, 2, shape, rstrides}, mt = {CLNZ_U8, 2, shape, NULL};
    clnz_array out;
    TU_CHECK(ctx, clnz_select(ctx, &xt, x + n - 1, &mt, m, NULL, &out));
    int64_t z = 0;
    for (int64_t i = 0; i < n; ++i)
        if (m[i]) {
            if (z >= out.shape[0] || ((int32_t *)out.data)[z] != x[n - 1 - i])
                fail_msg("select: value %lld differs", (long long)z);
            ++z;
        }
    assert_int_equal(out.shape[0], z);
    clnz_array_free(&out);

    int64_t row_shape[1] = {301};
    clnz_tensor row = {CLNZ_I32, 1, row_shape, NULL};
    clnz_operand xo = clnz_operand_array(&row), yo = clnz_operand_int(-5);
    TU_CHECK(ctx, clnz_where(ctx, &mt, m, NULL, &xo, x, &yo, NULL, &out));
    assert_int_equal(out.rank, 2);
    assert_int_equal(out.shape[0], 97);
    for (int64_t i = 0; i < n; ++i) {
        int32_t want = m[i] ? x[i % 301] : -5;
        if (((int32_t *)out.data)[i] != want)
            fail_msg("where: element %lld: got %d want %d", (long long)i,
                     ((int32_t *)out.data)[i], want);
    }
    clnz_array_free(&out);
    free(x);
    free(m);
    clnz_context_release(ctx);
}

/* Strides (elements) of a (13, 29, 31) view in a buffer of its elements:
 * 0 C order, 1 every axis reversed, 2 transposed (Fortran order); the
 * offset of its logical element 0 in *origin. */
static const int64_t layout_shape[3] = {13, 29, 31};
static void layout_strides(int layout, int64_t *strides, int64_t *origin)
{
    int64_t c = 1, f = 1;
    *origin = 0;
    for (int d = 2; d >= 0; --d)
        strides[d] = layout == 1 ? -c : c, c *= layout_shape[d];
    for (int d = 0; layout == 2 && d < 3; ++d)
        strides[d] = f, f *= layout_shape[d];
    for (int d = 0; layout == 1 && d < 3; ++d)
        *origin += (layout_shape[d] - 1) * -strides[d];
}

/* select through an 8 KiB limit with x and the mask each in C order,
 * reversed or transposed, and x alone (no mask), for each dtype family:
 * where both lie in C order each slice is an ordinary select, otherwise the
 * values are gathered by key over the keys' memory (slices/keys.c). Against
 * the reference nonzero of the mask and x's values read by coordinates. */
static void test_select_slices_every_layout(void **state)
{
    (void)state;
    clnz_context *ctx = tu_context_limited("8K");
    const int64_t n = 13 * 29 * 31;
    uint8_t *m = malloc((size_t)n);
    for (int k = 0; k < tu_n_dtypes; ++k) {
        clnz_dtype dt = tu_dtypes[k];
        size_t elem = clnz_dtype_size(dt);
        char *x = malloc((size_t)n * elem);
        tu_fill(dt, x, (size_t)n, 0.6);
        tu_fill(CLNZ_U8, m, (size_t)n, 0.3);
        for (int xl = 0; xl < 3; ++xl)
            for (int ml = 0; ml < 4; ++ml) { /* ml 3: no mask */
                int64_t xs[3], ms[3], xo, mo;
                layout_strides(xl, xs, &xo);
                layout_strides(ml % 3, ms, &mo);
                clnz_tensor xt = {dt, 3, layout_shape, xs}, mt = {CLNZ_U8, 3, layout_shape, ms};
                const clnz_tensor *sel = ml == 3 ? &xt : &mt;
                const void *sel_data = ml == 3 ? (const void *)(x + xo * (int64_t)elem) : m + mo;
                clnz_nonzero_options o;
                clnz_nonzero_options_init(&o);
                int64_t z, entries;
                int per_entry;
                int64_t *at = tu_ref_nonzero(sel, sel_data, NULL, &o, &z, &entries, &per_entry);
                clnz_array out;
                TU_CHECK(ctx, clnz_select(ctx, &xt, x + xo * (int64_t)elem, ml == 3 ? NULL : &mt,
                                          m + mo, NULL, &out));
                assert_int_equal(out.shape[0], z);
                for (int64_t e = 0; e < z; ++e) {
                    int64_t off = xo;
                    for (int d = 0; d < 3; ++d)
                        off += at[3 * e + d] * xs[d];
                    if (memcmp((char *)out.data + e * (int64_t)elem, x + off * (int64_t)elem,
                               elem))
                        fail_msg("%s x layout %d mask layout %d: value %lld of %lld differs",
                                 clnz_dtype_name(dt), xl, ml, (long long)e, (long long)z);
                }
                clnz_array_free(&out);
                free(at);
            }
        free(x);
    }
    free(m);
    clnz_context_release(ctx);
}

/* Regression: each slice's result came back as full-rank int64 rows, so
 * under a small limit a rank-12 input failed with "the result (4096 entries
 * of 96 bytes) exceeds the device's largest allocation" however finely it
 * was cut. Slices now return 8-byte flat indices: (2,)*11 + (64,) u8, all
 * nonzero, through 64 KiB, in nonzero (rows and flat), batched and select. */
static void test_rank_12_through_a_64k_limit(void **state)
{
    (void)state;
    clnz_context *ctx = tu_context_limited("64K");
    int64_t shape[12], n = 64 << 11;
    for (int d = 0; d < 11; ++d)
        shape[d] = 2;
    shape[11] = 64;
    uint8_t *a = malloc((size_t)n);
    for (int64_t i = 0; i < n; ++i)
        a[i] = (uint8_t)(1 + i % 251);
    clnz_tensor t = {CLNZ_U8, 12, shape, NULL};
    clnz_nonzero_options o;
    clnz_nonzero_options_init(&o);
    expect_nonzero(ctx, &t, a, &o);
    o.layout = CLNZ_LAYOUT_FLAT;
    expect_nonzero(ctx, &t, a, &o);
    clnz_nonzero_options_init(&o);
    clnz_result res;
    clnz_array offs, out;
    TU_CHECK(ctx, clnz_nonzero_batched(ctx, &t, a, NULL, &o, &res, &offs));
    assert_int_equal(res.count, n);
    assert_int_equal(((int64_t *)offs.data)[1], n / 2);
    clnz_result_free(&res);
    clnz_array_free(&offs);
    TU_CHECK(ctx, clnz_select(ctx, &t, a, NULL, NULL, NULL, &out));
    assert_int_equal(out.shape[0], n);
    assert_memory_equal(out.data, a, (size_t)n);
    clnz_array_free(&out);
    free(a);
    clnz_context_release(ctx);
}

/* Regression (helper 37): a broadcast view (stride 0) whose result exceeds
 * the limit failed with TOO_LARGE however finely it was cut: slices were
 * sized by the memory they span, which a broadcast dimension does not add
 * to, so halving never cut it. Slices now hold no more elements than their
 * results can (8 bytes a key, a value's size for select). Through 64 KiB:
 * 200000 copies of one byte, and (3, 50000) broadcast from a column. */
static void test_broadcast_views_through_the_limit(void **state)
{
    (void)state;
    clnz_context *ctx = tu_context_limited("64K");
    const uint8_t one = 1, column[3] = {1, 0, 2};
    int64_t n1[1] = {200000}, s1[1] = {0}, n2[2] = {3, 50000}, s2[2] = {1, 0};
    clnz_tensor flat = {CLNZ_U8, 1, n1, s1}, wide = {CLNZ_U8, 2, n2, s2};
    clnz_nonzero_options o;
    clnz_nonzero_options_init(&o);
    expect_nonzero(ctx, &wide, column, &o);
    o.layout = CLNZ_LAYOUT_FLAT;
    expect_nonzero(ctx, &flat, &one, &o);
    expect_nonzero(ctx, &wide, column, &o);
    clnz_array out;
    TU_CHECK(ctx, clnz_select(ctx, &wide, column, NULL, NULL, NULL, &out));
    assert_int_equal(out.shape[0], 100000);
    for (int64_t i = 0; i < 100000; ++i)
        if (((uint8_t *)out.data)[i] != (i < 50000 ? 1 : 2))
            fail_msg("select: value %lld is %d", (long long)i, ((uint8_t *)out.data)[i]);
    clnz_array_free(&out);
    clnz_result res;
    clnz_array offs;
    TU_CHECK(ctx, clnz_nonzero_batched(ctx, &wide, column, NULL, NULL, &res, &offs));
    assert_int_equal(res.count, 100000);
    assert_int_equal(((int64_t *)offs.data)[1], 50000);
    assert_int_equal(((int64_t *)offs.data)[2], 50000);
    clnz_result_free(&res);
    clnz_array_free(&offs);
    clnz_context_release(ctx);
}

/* Compares a result's entries (widened) with a reference's. */
static void expect_entries(const clnz_result *res, const int64_t *want, int64_t n,
                           const char *what)
{
    int64_t *got = tu_widen(res->indices, res->index_type, (size_t)n);
    for (int64_t i = 0; i < n; ++i)
        if (got[i] != want[i])
            fail_msg("%s: index %lld of %lld: got %lld want %lld", what, (long long)i,
                     (long long)n, (long long)got[i], (long long)want[i]);
    free(got);
}

/* nonzero_channels of the f32 view (rank 1 to 3, the last dimension the
 * channels) at `first`, through ctx, against the nonzero of a pixel mask
 * made here with plain loops over the strides: any and all, each layout. */
static void expect_channel_rule(clnz_context *ctx, int rank, const int64_t *shape,
                                const int64_t *strides, const float *first)
{
    int64_t pixels = 1, channels = shape[rank - 1];
    for (int d = 0; d < rank - 1; ++d)
        pixels *= shape[d];
    clnz_tensor t = {CLNZ_F32, rank, shape, strides};
    clnz_tensor mt = {CLNZ_U8, rank - 1, shape, NULL}; /* the pixels' shape */
    uint8_t *mask = malloc((size_t)pixels);
    for (int rule = 0; rule < 2; ++rule) {
        for (int64_t p = 0; p < pixels; ++p) {
            int64_t off = 0, rest = p;
            for (int d = rank - 2; d >= 0; --d) {
                off += rest % shape[d] * strides[d];
                rest /= shape[d];
            }
            int any = 0, all = 1;
            for (int64_t c = 0; c < channels; ++c) {
                int on = first[off + c * strides[rank - 1]] > 0.5f;
                any |= on, all &= on;
            }
            mask[p] = (uint8_t)(rule == CLNZ_CHANNELS_ALL ? all : any);
        }
        for (int layout = 0; layout < 3; ++layout) {
            clnz_nonzero_options o;
            clnz_nonzero_options_init(&o);
            o.layout = (clnz_layout)layout;
            o.index_type = (clnz_index_type)((layout + rule) % 3);
            if (layout != CLNZ_LAYOUT_FLAT && rule)
                o.order = CLNZ_ORDER_XY;
            int64_t z, entries;
            int per_entry;
            int64_t *want = tu_ref_nonzero(&mt, mask, NULL, &o, &z, &entries, &per_entry);
            clnz_predicate gt = clnz_pred_float(CLNZ_OP_GT, 0.5);
            clnz_result res;
            TU_CHECK(ctx, clnz_nonzero_channels(ctx, &t, first, &gt, (clnz_channel_rule)rule,
                                                &o, &res));
            assert_int_equal(res.count, z);
            expect_entries(&res, want, entries * per_entry, rule ? "all" : "any");
            clnz_result_free(&res);
            free(want);
        }
    }
    free(mask);
}

/* The channel rule through an 8 KiB limit:
 * - a reversed (H, W, 3) f32 view, cut into pixel slices (never inside a
 *   pixel);
 * - a planar one (3, H, W in memory, viewed as (H, W, 3)), whose pixels
 *   span 22 KiB: made a channel plane at a time, each plane sliced;
 * - one pixel of 3 channels 12 KiB apart (rank 1: nothing to cut);
 * - broadcast views (stride 0) whose pixel masks pass the limit though
 *   their memory does not: interleaved, planar, and every stride 0; an
 *   overlapping planar one; and no channels at all (the rule alone).
 * Any and all, each layout; against plain loops. */
static void test_channel_rule_slices(void **state)
{
    (void)state;
    clnz_context *ctx = tu_context_limited("8K");
    int64_t shape[3] = {61, 47, 3}, n = 61 * 47 * 3;
    float *x = malloc((size_t)n * 4);
    tu_fill(CLNZ_F32, x, (size_t)n, 0.4);
    int64_t reversed[3] = {-47 * 3, -3, -1}, planar[3] = {47, 1, 61 * 47};
    expect_channel_rule(ctx, 3, shape, reversed, x + n - 1);
    expect_channel_rule(ctx, 3, shape, planar, x);
    int64_t one[1] = {3}, apart[1] = {3000};
    expect_channel_rule(ctx, 1, one, apart, x);
    int64_t wide[3] = {300, 47, 3}, bcast[3] = {0, 3, 1}, bplanar[3] = {0, 1, 61 * 47};
    int64_t still[3] = {100, 100, 7}, zero[3] = {0, 0, 0};
    int64_t lapped[3] = {100, 50, 3}, lap[3] = {3, 1, 2000};
    int64_t none[3] = {3000, 10, 0}, none_strides[3] = {10, 1, 1};
    expect_channel_rule(ctx, 3, wide, bcast, x);
    expect_channel_rule(ctx, 3, wide, bplanar, x);
    expect_channel_rule(ctx, 3, still, zero, x);
    expect_channel_rule(ctx, 3, lapped, lap, x);
    expect_channel_rule(ctx, 3, none, none_strides, x);
    free(x);
    clnz_context_release(ctx);
}

/* Batched nonzero through a 4 KiB limit: many small items per slice,
 * items larger than the limit (each cut on its own), and an input that fits
 * with entries that do not; every index type, both orders, C order and
 * transposed; against the reference run item by item. */
static void test_batched_slices(void **state)
{
    (void)state;
    clnz_context *ctx = tu_context_limited("4K");
    /* the last two: the input fits, its entries do not (the whole-batch call fails, then
     * halves), and 600 items whose offsets do not (TOO_LARGE, not the driver's refusal:
     * then slices) */
    int64_t shapes[5][3] = {{200, 3, 5}, {5, 40, 61}, {3, 1, 9000}, {4, 30, 8}, {600, 1, 1}};
    for (int s = 0; s < 5; ++s) {
        int64_t *shape = shapes[s], n = shape[0] * shape[1] * shape[2];
        float *x = malloc((size_t)n * 4);
        tu_fill(CLNZ_F32, x, (size_t)n, s % 2 ? 0.7 : 0.2);
        /* v 3: the same data transposed (Fortran order), its slices' keys merged */
        int64_t fstrides[3] = {1, shape[0], shape[0] * shape[1]};
        for (int v = 0; v < 4; ++v) {
            clnz_tensor t = {CLNZ_F32, 3, shape, v == 3 ? fstrides : NULL};
            clnz_nonzero_options o;
            clnz_nonzero_options_init(&o);
            o.index_type = (clnz_index_type)(v % 3);
            o.order = v % 2 ? CLNZ_ORDER_XY : CLNZ_ORDER_ROW_MAJOR;
            tu_expect_batched(ctx, &t, x, NULL, &o);
        }
        free(x);
    }
    clnz_context_release(ctx);
}

/* 5 * 2^30 u8 elements (calloc: the zero pages cost no memory until read),
 * more than the device's largest allocation on some machines and than
 * 2^32, nonzero (1, 2, ...) at both ends and around 2^31 and 2^32. */
#define FIVE_GIB ((int64_t)5 << 30)
static const int64_t five_gib_at[] = {0,
                                      1,
                                      ((int64_t)1 << 31) - 1,
                                      (int64_t)1 << 31,
                                      ((int64_t)1 << 32) - 1,
                                      (int64_t)1 << 32,
                                      ((int64_t)1 << 32) + 1,
                                      FIVE_GIB - 2,
                                      FIVE_GIB - 1};
enum { FIVE_GIB_K = sizeof five_gib_at / sizeof five_gib_at[0] };

static uint8_t *five_gib(void)
{
    uint8_t *a = calloc((size_t)FIVE_GIB, 1);
    for (int i = 0; a && i < FIVE_GIB_K; ++i)
        a[five_gib_at[i]] = (uint8_t)(i + 1);
    return a;
}

/* nonzero of the 5 GiB as t with options o: one int64 entry per selected
 * element, its flat index (1-D, or the flat layout). */
static void expect_five_gib_indices(clnz_context *ctx, const clnz_tensor *t, const uint8_t *a,
                                    const clnz_nonzero_options *o)
{
    clnz_result res;
    TU_CHECK(ctx, clnz_nonzero(ctx, t, a, NULL, o, &res));
    assert_int_equal(res.count, FIVE_GIB_K);
    for (int i = 0; i < FIVE_GIB_K; ++i)
        assert_int_equal(((int64_t *)res.indices)[i], five_gib_at[i]);
    clnz_result_free(&res);
}

static void test_five_gib_past_2_32(void **state)
{
    TU_FULL_ONLY(); /* a huge input: the long tier */
    (void)state;
    clnz_context *ctx = tu_context();
    const int64_t n = FIVE_GIB, *at = five_gib_at;
    const int k = FIVE_GIB_K;
    uint8_t *a = five_gib();
    if (!a)
        skip();
    int64_t shape1[1] = {n}, shape2[2] = {5, (int64_t)1 << 30};
    clnz_tensor flat = {CLNZ_U8, 1, shape1, NULL}, grid = {CLNZ_U8, 2, shape2, NULL};

    int64_t count = 0;
    TU_CHECK(ctx, clnz_count(ctx, &flat, a, NULL, &count));
    assert_int_equal(count, k);
    /* under each strategy that takes one launch over 5 GiB: the zeros, a
     * count past 2^32 (lookback's lb_count adds 32-bit tile counts to the
     * count's low word and carries into its high word), and the (5, 2^30)
     * entries, whose flat indices past 2^32 take 64-bit divisions */
    clnz_predicate zero = clnz_pred_uint(CLNZ_OP_EQ, 0);
    const clnz_strategy every[] = {CLNZ_STRATEGY_TWO_PASS, CLNZ_STRATEGY_LOOKBACK,
                                   CLNZ_STRATEGY_STREAM};
    clnz_nonzero_options o;
    clnz_nonzero_options_init(&o);
    clnz_result res;
    for (size_t s = 0; s < sizeof every / sizeof every[0]; ++s) {
        TU_CHECK(ctx, clnz_context_set_strategy(ctx, every[s]));
        count = 0;
        TU_CHECK(ctx, clnz_count(ctx, &flat, a, &zero, &count));
        if (count != n - k)
            fail_msg("%s: %lld zeros, want %lld", clnz_strategy_name(every[s]),
                     (long long)count, (long long)(n - k));
        TU_CHECK(ctx, clnz_nonzero(ctx, &grid, a, NULL, &o, &res));
        assert_int_equal(res.count, k);
        for (int i = 0; i < k; ++i)
            if (((int64_t *)res.indices)[2 * i] != at[i] >> 30 ||
                ((int64_t *)res.indices)[2 * i + 1] != (at[i] & (((int64_t)1 << 30) - 1)))
                fail_msg("%s: entry %d is (%lld, %lld)", clnz_strategy_name(every[s]), i,
                         (long long)((int64_t *)res.indices)[2 * i],
                         (long long)((int64_t *)res.indices)[2 * i + 1]);
        clnz_result_free(&res);
    }
    TU_CHECK(ctx, clnz_context_set_strategy(ctx, CLNZ_STRATEGY_AUTO));

    expect_five_gib_indices(ctx, &flat, a, &o);

    TU_CHECK(ctx, clnz_nonzero(ctx, &grid, a, NULL, &o, &res));
    assert_int_equal(res.count, k);
    for (int i = 0; i < k; ++i) {
        assert_int_equal(((int64_t *)res.indices)[2 * i], at[i] >> 30);
        assert_int_equal(((int64_t *)res.indices)[2 * i + 1], at[i] & (((int64_t)1 << 30) - 1));
    }
    clnz_result_free(&res);

    clnz_array vals;
    TU_CHECK(ctx, clnz_select(ctx, &flat, a, NULL, NULL, NULL, &vals));
    assert_int_equal(vals.shape[0], k);
    for (int i = 0; i < k; ++i)
        assert_int_equal(((uint8_t *)vals.data)[i], i + 1);
    clnz_array_free(&vals);

    /* flat indices past 2^31 do not fit int32: an error before any work */
    o.layout = CLNZ_LAYOUT_FLAT, o.index_type = CLNZ_INDEX_INT32;
    assert_int_equal(clnz_nonzero(ctx, &flat, a, NULL, &o, &res), CLNZ_ERROR_INDEX_OVERFLOW);
    free(a);
}

/* The same 5 GiB in slices of 1 GiB, as (2, 5 * 2^29): a C-order stride
 * of 5 * 2^29, past 2^31, which the slices' flat indices and the merge of
 * their runs took in an int (helper 36's report): flat indices came out
 * negative, and a transposed view's entries out of C order. */
static void test_five_gib_slices_past_2_31_strides(void **state)
{
    TU_FULL_ONLY(); /* a huge input: the long tier */
    (void)state;
    clnz_context *ctx = tu_context_limited("1G");
    const int64_t *at = five_gib_at, cols = (int64_t)5 << 29;
    const int k = FIVE_GIB_K;
    uint8_t *a = five_gib();
    if (!a)
        skip();
    int64_t shape[2] = {2, cols}, tstrides[2] = {1, 2};
    clnz_tensor rows = {CLNZ_U8, 2, shape, NULL};
    clnz_nonzero_options o;
    clnz_nonzero_options_init(&o);
    o.layout = CLNZ_LAYOUT_FLAT;
    expect_five_gib_indices(ctx, &rows, a, &o);

    /* the buffer as (5 * 2^29, 2) seen transposed: element (r, c) is
     * a[2c + r]; in C order the even positions' entries come first */
    clnz_tensor tr = {CLNZ_U8, 2, shape, tstrides};
    clnz_nonzero_options_init(&o);
    clnz_result res;
    TU_CHECK(ctx, clnz_nonzero(ctx, &tr, a, NULL, &o, &res));
    assert_int_equal(res.count, k);
    int e = 0;
    for (int r = 0; r < 2; ++r)
        for (int i = 0; i < k; ++i)
            if (at[i] % 2 == r) {
                assert_int_equal(((int64_t *)res.indices)[2 * e], r);
                assert_int_equal(((int64_t *)res.indices)[2 * e + 1], at[i] / 2);
                ++e;
            }
    clnz_result_free(&res);
    free(a);
    clnz_context_release(ctx);
}

int main(void)
{
    tu_seed("test_large");
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_slices_match_the_reference),
        cmocka_unit_test(test_issue16_item6_fortran_order_slices_like_c_order),
        cmocka_unit_test(test_select_and_where_slices),
        cmocka_unit_test(test_select_slices_every_layout),
        cmocka_unit_test(test_rank_12_through_a_64k_limit),
        cmocka_unit_test(test_broadcast_views_through_the_limit),
        cmocka_unit_test(test_channel_rule_slices),
        cmocka_unit_test(test_batched_slices),
        cmocka_unit_test(test_five_gib_past_2_32),
        cmocka_unit_test(test_five_gib_slices_past_2_31_strides),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    tu_context_done();
    return rc;
}
