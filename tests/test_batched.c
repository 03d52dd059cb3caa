/* test_batched.c: batched nonzero (CSR) against the sequential reference
 * run item by item: every launch shape (the offsets are read out of the
 * count pass's per-work-item counts, so item boundaries inside chunks,
 * work-groups and tiles all matter), strided views, both orders, the
 * device-resident call with a short capacity, many tiny items, and the
 * errors. */
#include "testutil.h"

#include <stdlib.h>
#include <string.h>

static void test_every_launch_shape(void **state)
{
    (void)state;
    clnz_context *ctx = tu_context();
    /* items smaller than a chunk, of a chunk or so, and spanning tiles */
    int64_t shapes[][3] = {{0, 5, 1}, {7, 0, 3}, {1, 1, 1}, {50, 1, 3}, {13, 5, 7},
                           {3, 4099, 1}, {9, 3, 1000}, {40000, 1, 1}};
    int ranks[] = {3, 3, 1, 2, 3, 2, 3, 1};
    for (int l = 0; l < tu_n_launches; ++l) {
        TU_CHECK(ctx, clnz_context_set_launch(ctx, tu_launches[l].wg, tu_launches[l].items));
        for (size_t s = 0; s < sizeof ranks / sizeof ranks[0]; ++s) {
            clnz_tensor t = {CLNZ_F16, ranks[s], shapes[s], NULL}; /* a quick-tier dtype */
            int64_t n = 1;
            for (int d = 0; d < t.rank; ++d)
                n *= shapes[s][d];
            uint16_t *data = malloc((size_t)n * 2 + 2);
            tu_fill(CLNZ_F16, data, (size_t)n, (s + (size_t)l) % 2 ? 0.5 : 0.05);
            clnz_nonzero_options o;
            clnz_nonzero_options_init(&o);
            o.index_type = (clnz_index_type)(s % 3);
            o.order = l % 2 ? CLNZ_ORDER_XY : CLNZ_ORDER_ROW_MAJOR;
            tu_expect_batched(ctx, &t, data, NULL, &o);
            free(data);
        }
    }
    TU_CHECK(ctx, clnz_context_set_launch(ctx, 0, 0));
}

/* The writing pass's staged runs (kernels/nonzero.cl: ND_RUN, entries of
 * an item's rank - 1 columns) need chunks of whole 32-element blocks, which
 * the quick tier's launch shapes (1 to 8 items) never give: the default
 * launch and chunks of 64 (selection bits kept) and 100 (not kept). An
 * item's rows of 64 (pairs written four at a time), of one dimension
 * (single columns), of rank 3 items (three columns), and of 3 elements
 * (staged across rows when sparse), both orders. */
static void test_staged_runs(void **state)
{
    (void)state;
    clnz_context *ctx = tu_context();
    int64_t shapes[][4] = {{3, 50, 64}, {2, 3000}, {4, 6, 5, 40}, {64, 100, 3}};
    int ranks[] = {3, 2, 4, 3};
    tu_launch launches[] = {{0, 0}, {4, 64}, {3, 100}};
    for (size_t l = 0; l < sizeof launches / sizeof *launches; ++l) {
        TU_CHECK(ctx, clnz_context_set_launch(ctx, launches[l].wg, launches[l].items));
        for (size_t s = 0; s < sizeof ranks / sizeof ranks[0]; ++s)
            for (int dense = 0; dense < 2; ++dense) {
                clnz_tensor t = {CLNZ_F32, ranks[s], shapes[s], NULL};
                int64_t n = 1;
                for (int d = 0; d < t.rank; ++d)
                    n *= shapes[s][d];
                float *data = malloc((size_t)n * 4);
                tu_fill(CLNZ_F32, data, (size_t)n, dense ? 0.6 : 0.1);
                clnz_nonzero_options o;
                clnz_nonzero_options_init(&o);
                o.index_type = (clnz_index_type)((s + l) % 3);
                o.order = (s + (size_t)dense) % 2 ? CLNZ_ORDER_XY : CLNZ_ORDER_ROW_MAJOR;
                tu_expect_batched(ctx, &t, data, NULL, &o);
                free(data);
            }
    }
    TU_CHECK(ctx, clnz_context_set_launch(ctx, 0, 0));
}

/* Regression (count_nonzero(axis=0) of 2 x 2^22 took 7 s): the offsets
 * pass cost batches x (wg + items), each item summing the counts before
 * its own in the tile; now a chunk is walked once for all the items that
 * begin in it. 2^16 items of 1 to 3 elements: items of one element, items
 * that do not divide a chunk (3 in chunks of 1, 8 or 64), and a transposed
 * view (the walk follows the strides), for every launch shape, forced to
 * two-pass, the strategy whose pass this is. */
static void test_many_tiny_items(void **state)
{
    (void)state;
    clnz_context *ctx = tu_context();
    enum { ITEMS = 1 << 16 };
    int64_t shapes[][3] = {{ITEMS, 1}, {ITEMS, 3}, {ITEMS, 1, 2}, {ITEMS, 2}};
    int64_t strided[2] = {1, ITEMS}; /* a (2, ITEMS) array's columns as the items */
    int ranks[] = {2, 2, 3, 2};
    uint8_t *data = malloc(3 * ITEMS);
    TU_CHECK(ctx, clnz_context_set_strategy(ctx, CLNZ_STRATEGY_TWO_PASS));
    for (int l = 0; l < tu_n_launches; ++l) {
        TU_CHECK(ctx, clnz_context_set_launch(ctx, tu_launches[l].wg, tu_launches[l].items));
        for (size_t s = 0; s < sizeof ranks / sizeof ranks[0]; ++s) {
            tu_fill(CLNZ_U8, data, 3 * ITEMS, (s + (size_t)l) % 2 ? 0.5 : 0.1);
            clnz_tensor t = {CLNZ_U8, ranks[s], shapes[s], s == 3 ? strided : NULL};
            clnz_nonzero_options o;
            clnz_nonzero_options_init(&o);
            tu_expect_batched(ctx, &t, data, NULL, &o);
        }
    }
    TU_CHECK(ctx, clnz_context_set_launch(ctx, 0, 0));
    TU_CHECK(ctx, clnz_context_set_strategy(ctx, CLNZ_STRATEGY_AUTO));
    free(data);
}

/* A transposed view (Fortran order) and a predicate. */
static void test_strided_and_predicates(void **state)
{
    (void)state;
    clnz_context *ctx = tu_context();
    int64_t shape[3] = {6, 33, 17}, strides[3] = {1, 6, 6 * 33};
    float *data = malloc(6 * 33 * 17 * 4);
    tu_fill(CLNZ_F32, data, 6 * 33 * 17, 0.7);
    clnz_tensor t = {CLNZ_F32, 3, shape, strides};
    clnz_nonzero_options o;
    clnz_nonzero_options_init(&o);
    tu_expect_batched(ctx, &t, data, NULL, &o);
    clnz_predicate lt = clnz_pred_float(CLNZ_OP_LT, -0.5);
    tu_expect_batched(ctx, &t, data, &lt, &o);
    free(data);
}

/* The device-resident call: offsets in place, at most `capacity` entries
 * written, nothing past them. */
static void test_enqueue_and_capacity(void **state)
{
    (void)state;
    clnz_context *ctx = tu_context();
    int64_t shape[2] = {9, 500};
    uint8_t *data = malloc(9 * 500);
    tu_fill(CLNZ_U8, data, 9 * 500, 0.3);
    clnz_tensor t = {CLNZ_U8, 2, shape, NULL};
    clnz_nonzero_options o;
    clnz_nonzero_options_init(&o);
    clnz_result res;
    clnz_array offs;
    TU_CHECK(ctx, clnz_nonzero_batched(ctx, &t, data, NULL, &o, &res, &offs));
    uint64_t cap = (uint64_t)res.count - 3;
    cl_mem in = tu_buffer(9 * 500, data);
    cl_mem offb = tu_buffer(16 * 8, NULL);
    int64_t *fill = malloc((size_t)(res.count + 8) * 8);
    for (int64_t i = 0; i < res.count + 8; ++i)
        fill[i] = -77;
    cl_mem out = tu_buffer((size_t)(res.count + 8) * 8, fill); /* -77 everywhere */
    TU_CHECK(ctx, clnz_nonzero_batched_enqueue(ctx, &t, in, 0, NULL, &o, out, 8, cap, offb, 16, 0, NULL,
                                               NULL));
    int64_t got_off[10];
    tu_read(offb, 16, sizeof got_off, got_off);
    assert_memory_equal(got_off, offs.data, sizeof got_off);
    int64_t *got = malloc((size_t)(res.count + 8) * 8);
    tu_read(out, 0, (size_t)(res.count + 8) * 8, got);
    assert_int_equal(got[0], -77);
    assert_memory_equal(got + 1, res.indices, cap * 8);
    for (int64_t i = 1 + (int64_t)cap; i < res.count + 8; ++i)
        assert_int_equal(got[i], -77);
    free(got);
    free(fill);
    clReleaseMemObject(in);
    clReleaseMemObject(out);
    clReleaseMemObject(offb);
    clnz_result_free(&res);
    clnz_array_free(&offs);
    free(data);
}

static void test_errors(void **state)
{
    (void)state;
    clnz_context *ctx = tu_context();
    int64_t shape[2] = {3, 4};
    uint8_t data[12] = {0};
    clnz_tensor t = {CLNZ_U8, 2, shape, NULL}, scalar = {CLNZ_U8, 0, NULL, NULL};
    clnz_result res;
    clnz_array offs;
    clnz_nonzero_options o;
    clnz_nonzero_options_init(&o);
    assert_int_equal(clnz_nonzero_batched(ctx, &scalar, data, NULL, &o, &res, &offs),
                     CLNZ_ERROR_INVALID_ARGUMENT);
    assert_non_null(strstr(clnz_context_message(ctx), "batch"));
    o.layout = CLNZ_LAYOUT_FLAT;
    assert_int_equal(clnz_nonzero_batched(ctx, &t, data, NULL, &o, &res, &offs),
                     CLNZ_ERROR_INVALID_ARGUMENT);
    clnz_nonzero_options_init(&o);
    o.has_size = 1;
    assert_int_equal(clnz_nonzero_batched(ctx, &t, data, NULL, &o, &res, &offs),
                     CLNZ_ERROR_INVALID_ARGUMENT);
    clnz_nonzero_options_init(&o);
    o.width = 2;
    assert_int_equal(clnz_nonzero_batched(ctx, &t, data, NULL, &o, &res, &offs),
                     CLNZ_ERROR_INVALID_WIDTH);
    assert_int_equal(clnz_nonzero_batched(ctx, &t, data, NULL, NULL, NULL, &offs),
                     CLNZ_ERROR_INVALID_ARGUMENT);
    /* int32 coordinates of items whose one dimension (the input's second)
     * has 2^31 + 5 indices: the message says whose dimension 0 that is */
    int64_t wide[2] = {2, ((int64_t)1 << 31) + 5}, zero[2] = {0, 0};
    clnz_tensor tw = {CLNZ_U8, 2, wide, zero};
    clnz_nonzero_options_init(&o);
    o.index_type = CLNZ_INDEX_INT32;
    assert_int_equal(clnz_nonzero_batched(ctx, &tw, data, NULL, &o, &res, &offs),
                     CLNZ_ERROR_INDEX_OVERFLOW);
    assert_non_null(strstr(clnz_context_message(ctx),
                           "an item (the input without dimension 0): dimension 0 of extent "
                           "2147483653"));
}

int main(void)
{
    tu_seed("test_batched");
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_launch_shape),
        cmocka_unit_test(test_staged_runs),
        cmocka_unit_test(test_many_tiny_items),
        cmocka_unit_test(test_strided_and_predicates),
        cmocka_unit_test(test_enqueue_and_capacity),
        cmocka_unit_test(test_errors),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    tu_context_done();
    return rc;
}
