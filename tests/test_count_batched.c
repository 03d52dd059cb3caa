/* test_count_batched.c: counts of every item of a batch (count_nonzero
 * along axes) against a sequential reference over the logical array:
 * layouts that take each of the call's two ways (one work-item per item,
 * with and without 16-item vector loads; the batched counting pass),
 * permuted, reversed and merged strides, every launch shape and every
 * strategy that serves a batch, predicates, the device-resident call at
 * an offset, inputs past one allocation (slices) and the errors. */
#include "testutil.h"

#include <stdlib.h>
#include <string.h>

/* The reference: each element of the view in C order adds to item
 * flat / item_n. */
static int64_t *ref_counts(const clnz_tensor *t, const void *data, const clnz_predicate *pred,
                           int batch_rank, int64_t *batches)
{
    int64_t n = 1, b = 1;
    for (int d = 0; d < t->rank; ++d) {
        n *= t->shape[d];
        if (d < batch_rank)
            b *= t->shape[d];
    }
    int64_t *c = calloc((size_t)(b ? b : 1), sizeof *c);
    clnz_predicate nonzero = clnz_pred_nonzero();
    if (!pred)
        pred = &nonzero;
    size_t elem = clnz_dtype_size(t->dtype);
    int64_t idx[CLNZ_MAX_RANK] = {0};
    for (int64_t i = 0; i < n; ++i) {
        int64_t off = 0;
        for (int d = 0; d < t->rank; ++d)
            off += idx[d] * t->strides[d];
        c[i / (n / b)] += tu_ref_selected(t->dtype, (const char *)data + off * (int64_t)elem, pred);
        for (int d = t->rank - 1; d >= 0 && ++idx[d] == t->shape[d]; --d)
            idx[d] = 0;
    }
    *batches = b;
    return c;
}

static void expect_counts(clnz_context *ctx, const clnz_tensor *t, const void *data,
                          const clnz_predicate *pred, int batch_rank)
{
    int64_t batches;
    int64_t *want = ref_counts(t, data, pred, batch_rank, &batches);
    clnz_array got;
    TU_CHECK(ctx, clnz_count_batched(ctx, t, data, pred, batch_rank, &got));
    assert_int_equal(got.dtype, CLNZ_I64);
    assert_int_equal(got.rank, batch_rank);
    for (int d = 0; d < batch_rank; ++d)
        assert_int_equal(got.shape[d], t->shape[d]);
    const int64_t *g = got.data;
    for (int64_t b = 0; b < batches; ++b)
        if (g[b] != want[b])
            fail_msg("item %lld of %lld: %lld, want %lld (rank %d, batch_rank %d, dtype %d)",
                     (long long)b, (long long)batches, (long long)g[b], (long long)want[b],
                     t->rank, batch_rank, (int)t->dtype);
    clnz_array_free(&got);
    free(want);
}

/* A C-order base array of `n` elements and views of it. */
typedef struct {
    int rank, batch_rank;
    int64_t shape[4], strides[4]; /* strides in elements, from logical element 0 */
    int64_t start;                /* element of the base array that is logical element 0 */
    int64_t base_n;
} layout;

/* The layouts, with the way each takes (count_batched.c's items_plan):
 * per-item needs the innermost kept stride below the innermost counted
 * one (or items of one element); vec16 a kept innermost stride of 1, and
 * then a work-item loads its 16 items at once where they lie in one row
 * (all of them where 16 divides the extent; "16 does not divide": the
 * row's last items go one by one). */
static const layout layouts[] = {
    {2, 1, {64, 33}, {33, 1}, 0, 64 * 33},                  /* rows: counting pass */
    {2, 1, {2048, 37}, {1, 2048}, 0, 2048 * 37},            /* axis 0: per item, vec16 */
    {2, 1, {1030, 5}, {1, 1030}, 0, 1030 * 5},              /* per item, 16 does not divide */
    {2, 1, {500, 70}, {2, 1000}, 0, 1000 * 70},             /* x[:, ::2]: items one by one */
    {3, 2, {4, 6, 300}, {1800, 1, 6}, 0, 4 * 300 * 6},      /* kept dims that do not merge */
    {3, 2, {4, 6, 300}, {3600, 300, 1}, 0, 4 * 3600},       /* the same: counting pass */
    {2, 1, {16, 500}, {1, 16}, 0, 16 * 500},                /* 16 items: per item, blocks */
    {2, 1, {3, 700}, {1, 3}, 0, 3 * 700},                   /* 3 items, scalar blocks */
    {3, 1, {4096, 3, 2}, {1, 8192, 4096}, 0, 3 * 2 * 4096}, /* counted dims that merge */
    {3, 2, {2, 2048, 3}, {2048, 1, 4096}, 0, 3 * 2 * 2048}, /* kept merge: 4096 items */
    {3, 2, {3, 1030, 5}, {5150, 1, 1030}, 0, 3 * 5 * 1030}, /* per item, blocks over 2 rows */
    {2, 2, {40, 40}, {40, 1}, 0, 1600},                     /* batch_rank = rank: per element */
    {2, 1, {1100, 7}, {-1, -1100}, 1100 * 7 - 1, 1100 * 7}, /* reversed: per item */
    {2, 1, {30, 70}, {-70, 1}, 29 * 70, 30 * 70},           /* reversed rows: counting pass */
    {3, 1, {1, 1, 1}, {1, 1, 1}, 0, 1},                     /* one element */
    /* items of more than 64 elements: row blocks (count_batched.c's
     * ITEM_BLOCK_STEPS), the last one short, summed by item_block_sums */
    {2, 1, {1040, 200}, {1, 1040}, 0, 1040 * 200},                 /* vec16, 4 blocks */
    {2, 1, {1030, 129}, {1, 1030}, 0, 1030 * 129},                 /* scalar, last block 1 */
    {3, 1, {1024, 5, 30}, {1, 1024 * 31, 1024}, 0, 1024 * 31 * 5}, /* blocks inside rows */
    {2, 1, {1100, 70}, {-1, -1100}, 1100 * 70 - 1, 1100 * 70},     /* reversed, 2 blocks */
    /* counting along inner and outer axes at once (count_batched.c's
     * split): (outer block, item) counts added up by item_counts */
    {4, 1, {5, 3, 8, 10}, {80, 400, 10, 1}, 0, 3 * 5 * 80}, /* NCHW axis (0,2,3): split */
    {4, 1, {5, 3, 4, 10}, {40, 200, 10, 1}, 0, 3 * 5 * 40}, /* inner run 40: no split */
    {3, 1, {6, 4, 100}, {-100, 600, 1}, 500, 4 * 600},      /* reversed kept: split */
    {4, 2, {3, 2, 4, 70}, {560, 70, 140, 1}, 0, 3 * 560},   /* kept dims that do not merge */
    /* one item, or items at one address: the counting pass */
    {2, 1, {1, 5000}, {5000, 1}, 0, 5000}, /* a single item */
    {2, 1, {1030, 70}, {0, 1}, 0, 70},     /* broadcast items */
};

/* Layout l of dtype dt, filled to `density`, against the reference. */
static void expect_layout(clnz_context *ctx, const layout *l, clnz_dtype dt, double density)
{
    size_t elem = clnz_dtype_size(dt);
    char *base = malloc((size_t)l->base_n * elem);
    tu_fill(dt, base, (size_t)l->base_n, density);
    clnz_tensor t = {dt, l->rank, (int64_t *)l->shape, (int64_t *)l->strides};
    expect_counts(ctx, &t, base + l->start * (int64_t)elem, NULL, l->batch_rank);
    free(base);
}

static void test_layouts(void **state)
{
    (void)state;
    clnz_context *ctx = tu_context();
    for (int di = 0; di < tu_n_dtypes; ++di)
        for (size_t i = 0; i < sizeof layouts / sizeof layouts[0]; ++i)
            expect_layout(ctx, &layouts[i], tu_dtypes[di], i % 2 ? 0.3 : 0.7);
}

/* The counting pass's offsets come from the count pass's per-work-item
 * counts: item boundaries inside chunks, work-groups and tiles, under
 * every launch shape and every strategy that serves a batch. */
static void test_launch_shapes_and_strategies(void **state)
{
    (void)state;
    clnz_context *ctx = tu_context();
    int64_t shape[3] = {13, 7, 41}, axis0[2] = {3000, 3}, axis0_strides[2] = {1, 3000};
    size_t n = 13 * 7 * 41;
    uint16_t *data = malloc(n * 2);
    uint16_t *cols = malloc(3000 * 3 * 2);
    tu_fill(CLNZ_F16, data, n, 0.4);
    tu_fill(CLNZ_F16, cols, 3000 * 3, 0.4);
    clnz_tensor t = {CLNZ_F16, 3, shape, NULL}, c = {CLNZ_F16, 2, axis0, axis0_strides};
    int64_t cstrides[3] = {7 * 41, 41, 1};
    t.strides = cstrides;
    /* axes (0, 2) of (9, 11, 70) with 11 kept: a split's counting pass,
     * items of 70 in (outer block, item) order */
    int64_t sshape[3] = {11, 9, 70}, sstrides[3] = {70, 770, 1};
    uint16_t *sdata = malloc(9 * 11 * 70 * 2);
    tu_fill(CLNZ_F16, sdata, 9 * 11 * 70, 0.4);
    clnz_tensor split = {CLNZ_F16, 3, sshape, sstrides};
    clnz_strategy ss[] = {CLNZ_STRATEGY_AUTO, CLNZ_STRATEGY_TWO_PASS, CLNZ_STRATEGY_LOOKBACK,
                          CLNZ_STRATEGY_STREAM};
    for (size_t s = 0; s < sizeof ss / sizeof ss[0]; ++s) {
        TU_CHECK(ctx, clnz_context_set_strategy(ctx, ss[s]));
        for (int l = 0; l < tu_n_launches; ++l) {
            TU_CHECK(ctx, clnz_context_set_launch(ctx, tu_launches[l].wg, tu_launches[l].items));
            expect_counts(ctx, &t, data, NULL, 1);
            expect_counts(ctx, &t, data, NULL, 2);
            expect_counts(ctx, &c, cols, NULL, 1); /* per item: no strategy involved */
            expect_counts(ctx, &split, sdata, NULL, 1);
        }
    }
    /* single-tile writes no batch offsets: forced, the reason comes back */
    TU_CHECK(ctx, clnz_context_set_strategy(ctx, CLNZ_STRATEGY_SINGLE_TILE));
    clnz_array got;
    assert_int_not_equal(clnz_count_batched(ctx, &t, data, NULL, 1, &got), CLNZ_SUCCESS);
    assert_non_null(strstr(clnz_context_message(ctx), "single-tile"));
    TU_CHECK(ctx, clnz_context_set_strategy(ctx, CLNZ_STRATEGY_AUTO));
    TU_CHECK(ctx, clnz_context_set_launch(ctx, 0, 0));
    free(data);
    free(cols);
    free(sdata);
}

/* count_items built with and without its barriers between runs of steps
 * (COUNT_LOCKSTEP, kernels/count_axes.cl: on by default on a CPU device,
 * off on others), forced both ways (CLNZ_COUNT_LOCKSTEP), under every
 * launch shape (its work-group; with the barriers each block's work-items
 * padded to whole ones), on the layouts it serves: whole rows of 16 items
 * and rows that end inside a work-item's 16, strided items one by one,
 * one block and several. */
static void test_lockstep(void **state)
{
    (void)state;
    for (int on = 0; on < 2; ++on) {
        setenv("CLNZ_COUNT_LOCKSTEP", on ? "1" : "0", 1);
        char msg[256];
        clnz_context *ctx = NULL;
        if (clnz_context_create(NULL, &ctx, msg, sizeof msg) != CLNZ_SUCCESS)
            fail_msg("context: %s", msg);
        unsetenv("CLNZ_COUNT_LOCKSTEP");
        for (int l = 0; l < tu_n_launches; ++l) {
            TU_CHECK(ctx, clnz_context_set_launch(ctx, tu_launches[l].wg, tu_launches[l].items));
            for (size_t i = 0; i < sizeof layouts / sizeof layouts[0]; ++i)
                expect_layout(ctx, &layouts[i], CLNZ_F32, 0.5);
        }
        clnz_context_release(ctx);
    }
}

/* A failed assertion leaves a test early: not with its variable set. */
static int unset_lockstep(void **state)
{
    (void)state;
    unsetenv("CLNZ_COUNT_LOCKSTEP");
    return 0;
}

static void test_predicates(void **state)
{
    (void)state;
    clnz_context *ctx = tu_context();
    float *data = malloc(2048 * 9 * sizeof *data);
    for (int i = 0; i < 2048 * 9; ++i)
        data[i] = (float)(tu_uniform() * 2.0 - 1.0);
    int64_t shape[2] = {2048, 9}, strides[2] = {1, 2048}, rows[2] = {9, 1};
    clnz_tensor per_item = {CLNZ_F32, 2, shape, strides}, counting = {CLNZ_F32, 2, shape, rows};
    clnz_predicate p = clnz_pred_float(CLNZ_OP_GT, 0.25);
    expect_counts(ctx, &per_item, data, &p, 1);
    expect_counts(ctx, &counting, data, &p, 1);
    p = clnz_pred_float(CLNZ_OP_NE, 0.5);
    expect_counts(ctx, &per_item, data, &p, 1);
    free(data);
}

/* The device-resident call writes B counts at the offset, nothing else,
 * after the events; both ways. */
static void test_enqueue(void **state)
{
    (void)state;
    clnz_context *ctx = tu_context();
    /* 70 elements an item: two row blocks on the per-item way */
    int64_t shape[2] = {1040, 70}, strides[2][2] = {{1, 1040}, {70, 1}};
    uint8_t *data = malloc(1040 * 70);
    tu_fill(CLNZ_U8, data, 1040 * 70, 0.5);
    cl_mem in = tu_buffer(16 + 1040 * 70, NULL);
    cl_command_queue q = clnz_context_queue(ctx);
    clEnqueueWriteBuffer(q, in, CL_TRUE, 16, 1040 * 70, data, 0, NULL, NULL);
    for (int w = 0; w < 2; ++w) {
        clnz_tensor t = {CLNZ_U8, 2, shape, strides[w]};
        int64_t batches;
        int64_t *want = ref_counts(&t, data, NULL, 1, &batches);
        size_t bytes = (size_t)(batches + 2) * 8;
        int64_t *got = malloc(bytes);
        for (int64_t i = 0; i < batches + 2; ++i)
            got[i] = -77;
        cl_mem out = tu_buffer(bytes, got);
        cl_event done = NULL;
        TU_CHECK(ctx, clnz_count_batched_enqueue(ctx, &t, in, 16, NULL, 1, out, 8, 0, NULL,
                                                 &done));
        assert_non_null(done);
        clWaitForEvents(1, &done);
        clReleaseEvent(done);
        tu_read(out, 0, bytes, got);
        assert_int_equal(got[0], -77);
        assert_memory_equal(got + 1, want, (size_t)batches * 8);
        assert_int_equal(got[batches + 1], -77);
        clReleaseMemObject(out);
        free(got);
        free(want);
    }
    clReleaseMemObject(in);
    free(data);
}

/* Empty inputs and batches: zeros, or nothing, with the batch's shape. */
/* Items of no element count 0, however many: also where their counts
 * exceed one allocation (CLNZ_MAX_ALLOC=4096: 2000 counts), which needs no
 * device memory at all. It was TOO_LARGE there. */
static void test_empty(void **state)
{
    (void)state;
    clnz_context *limited = tu_context_limited("4096");
    uint8_t data[1] = {0};
    int64_t shapes[][3] = {{0, 5, 1}, {5, 0, 1}, {3, 2, 0}, {2000, 0, 1}, {513, 3, 0}};
    for (int c = 0; c < 2; ++c)
        for (int s = 0; s < 5; ++s)
            for (int k = 1; k <= 3; ++k) {
                clnz_context *ctx = c ? limited : tu_context();
                clnz_tensor t = {CLNZ_U8, 3, shapes[s], NULL};
                clnz_array got;
                TU_CHECK(ctx, clnz_count_batched(ctx, &t, data, NULL, k, &got));
                int64_t b = 1;
                for (int d = 0; d < k; ++d) {
                    assert_int_equal(got.shape[d], shapes[s][d]);
                    b *= shapes[s][d];
                }
                for (int64_t i = 0; i < b; ++i)
                    assert_int_equal(((int64_t *)got.data)[i], 0);
                assert_non_null(got.data);
                clnz_array_free(&got);
            }
    clnz_context_release(limited);
}

/* Past one allocation: the slices' counts add up at their places, for
 * both ways and a batch whose counts alone exceed the limit. */
static void test_sliced(void **state)
{
    (void)state;
    clnz_context *ctx = tu_context_limited("8192");
    size_t n = 3000 * 7;
    uint32_t *data = malloc(n * 4);
    tu_fill(CLNZ_U32, data, n, 0.5);
    int64_t shape[2] = {3000, 7}, cols[2] = {1, 3000}, rows[2] = {7, 1};
    clnz_tensor a = {CLNZ_U32, 2, shape, cols}, b = {CLNZ_U32, 2, shape, rows};
    expect_counts(ctx, &a, data, NULL, 1);
    expect_counts(ctx, &b, data, NULL, 1);
    expect_counts(ctx, &b, data, NULL, 2); /* 21000 counts: 168 000 bytes */
    clnz_context_release(ctx);
    free(data);
}

/* Slices whose counts or scratch outgrow their span: a byte per item
 * (u8), or no byte at all (a broadcast view of one row). Halving the span
 * alone reached MIN_BUDGET with a slice of 4096 items (32 KiB of counts),
 * and a broadcast view fitted every budget whole: TOO_LARGE, where numpy
 * counts. */
static void test_sliced_many_items(void **state)
{
    (void)state;
    clnz_context *ctx = tu_context_limited("8192");
    size_t n = 3000 * 7;
    uint8_t *data = malloc(n);
    tu_fill(CLNZ_U8, data, n, 0.5);
    int64_t shape[2] = {3000, 7}, rows[2] = {7, 1}, cols[2] = {1, 3000}, bcast[2] = {0, 1};
    int64_t wide[2] = {1040, 1}, flat[2] = {1, 1040}, bshape3[3] = {5, 2000, 7};
    int64_t bstr3[3] = {0, 0, 1};
    clnz_tensor r = {CLNZ_U8, 2, shape, rows}, c = {CLNZ_U8, 2, shape, cols};
    clnz_tensor b = {CLNZ_U8, 2, shape, bcast}, w = {CLNZ_U8, 2, wide, flat};
    clnz_tensor b3 = {CLNZ_U8, 3, bshape3, bstr3};
    expect_counts(ctx, &r, data, NULL, 2); /* 21000 items of one element */
    expect_counts(ctx, &c, data, NULL, 2);
    expect_counts(ctx, &b, data, NULL, 1); /* 3000 items, 7 bytes */
    expect_counts(ctx, &b, data, NULL, 2);
    expect_counts(ctx, &w, data, NULL, 1); /* 1040 bytes, 1040 items: per item */
    expect_counts(ctx, &b3, data, NULL, 2); /* 10000 items, 7 bytes */
    /* few items (their counts fit), 30 000 elements in 50 bytes, tiles of
     * 16 elements: the counting pass's tile scratch did not fit, at any
     * span (small enough for Oclgrind's tier) */
    TU_CHECK(ctx, clnz_context_set_launch(ctx, 4, 4));
    int64_t bshape[2] = {600, 50}, bstr[2] = {0, 1};
    int64_t tshape[2] = {50, 600}, tstr[2] = {1, 0};
    clnz_tensor rows_b = {CLNZ_U8, 2, bshape, bstr}, cols_b = {CLNZ_U8, 2, tshape, tstr};
    expect_counts(ctx, &rows_b, data, NULL, 1);
    expect_counts(ctx, &cols_b, data, NULL, 1);
    /* and clnz_count of it whole: the same scratch */
    int64_t items, whole = 0, got = -1;
    int64_t *per_row = ref_counts(&rows_b, data, NULL, 1, &items);
    for (int64_t i = 0; i < items; ++i)
        whole += per_row[i];
    TU_CHECK(ctx, clnz_count(ctx, &rows_b, data, NULL, &got));
    assert_int_equal(got, whole);
    free(per_row);
    clnz_context_release(ctx);
    free(data);
}

static void test_errors(void **state)
{
    (void)state;
    clnz_context *ctx = tu_context();
    int64_t shape[2] = {3, 4}, huge[3] = {(int64_t)1 << 40, (int64_t)1 << 40, 0};
    uint8_t data[12] = {0};
    clnz_tensor t = {CLNZ_U8, 2, shape, NULL}, scalar = {CLNZ_U8, 0, NULL, NULL};
    clnz_tensor empty = {CLNZ_U8, 3, huge, NULL};
    clnz_array got;
    assert_int_equal(clnz_count_batched(ctx, &t, data, NULL, 0, &got),
                     CLNZ_ERROR_INVALID_ARGUMENT);
    assert_non_null(strstr(clnz_context_message(ctx), "batch_rank 0"));
    assert_int_equal(clnz_count_batched(ctx, &t, data, NULL, 3, &got),
                     CLNZ_ERROR_INVALID_ARGUMENT);
    assert_int_equal(clnz_count_batched(ctx, &scalar, data, NULL, 1, &got),
                     CLNZ_ERROR_INVALID_ARGUMENT);
    assert_non_null(strstr(clnz_context_message(ctx), "rank-0")); /* not "outside 1..0" */
    assert_int_equal(clnz_count_batched(ctx, &t, data, NULL, 1, NULL),
                     CLNZ_ERROR_INVALID_ARGUMENT);
    assert_int_equal(clnz_count_batched(ctx, &empty, data, NULL, 2, &got), CLNZ_ERROR_TOO_LARGE);
    clnz_predicate bad = clnz_pred_int((clnz_op)99, 0);
    assert_int_not_equal(clnz_count_batched(ctx, &t, data, &bad, 1, &got), CLNZ_SUCCESS);
    /* the counts buffer must hold B counts at the offset */
    cl_mem in = tu_buffer(12, data), small = tu_buffer(16, NULL);
    assert_int_equal(clnz_count_batched_enqueue(ctx, &t, in, 0, NULL, 1, small, 0, 0, NULL, NULL),
                     CLNZ_ERROR_INVALID_ARGUMENT);
    assert_non_null(strstr(clnz_context_message(ctx), "counts buffer"));
    assert_int_equal(clnz_count_batched_enqueue(ctx, &t, in, 0, NULL, 1, NULL, 0, 0, NULL, NULL),
                     CLNZ_ERROR_INVALID_ARGUMENT);
    clReleaseMemObject(in);
    clReleaseMemObject(small);
}

int main(void)
{
    tu_seed("test_count_batched");
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_layouts),
        cmocka_unit_test(test_launch_shapes_and_strategies),
        cmocka_unit_test(test_predicates),
        cmocka_unit_test(test_enqueue),
        cmocka_unit_test(test_empty),
        cmocka_unit_test(test_sliced),
        cmocka_unit_test(test_sliced_many_items),
        cmocka_unit_test_teardown(test_lockstep, unset_lockstep),
        cmocka_unit_test(test_errors),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    tu_context_done();
    return rc;
}
