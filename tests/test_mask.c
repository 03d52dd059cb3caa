/* test_mask.c: the predicate of every dtype, special float value and
 * comparison, through clnz_mask_enqueue, against the reference predicate
 * (plain C comparisons on decoded values, numpy's promotion rules). */
#include "testutil.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static size_t dsize(clnz_dtype dt) { return clnz_dtype_size(dt); }

static clnz_predicate preds[64];
static int n_preds;

static void make_preds(void)
{
    static const int64_t ints[] = {0, 1, -1, 5, -10, 127, 128, 255, 256, -129, 32767, 65536,
                                   2147483647LL, -2147483648LL, 4294967296LL, INT64_MIN,
                                   INT64_MAX};
    static const uint64_t uints[] = {9223372036854775808ULL, 18446744073709551615ULL};
    static const double floats[] = {0.0,     -0.0,    0.5,    -2.5,    1e-50,  1e-8,
                                    65504.0, 65519.0, 65520.0, 70000.0, 1e39,   3.4028235e38,
                                    INFINITY, -INFINITY, NAN,  -1.0,    0.1,    2.0};
    n_preds = 0;
    preds[n_preds++] = clnz_pred_nonzero();
    for (size_t i = 0; i < sizeof ints / sizeof ints[0]; ++i)
        preds[n_preds++] = clnz_pred_int(CLNZ_OP_EQ + (clnz_op)(i % 6), ints[i]);
    for (size_t i = 0; i < sizeof uints / sizeof uints[0]; ++i)
        preds[n_preds++] = clnz_pred_uint(CLNZ_OP_LT + (clnz_op)(i % 4), uints[i]);
    for (size_t i = 0; i < sizeof floats / sizeof floats[0]; ++i)
        preds[n_preds++] = clnz_pred_float(CLNZ_OP_EQ + (clnz_op)(i % 6), floats[i]);
}

/* Every op against every value is many builds' worth of launches; cycling
 * the op per value and running all six ops on a few values covers both. */
static void check_mask(clnz_dtype dt, const clnz_predicate *p, const void *host, size_t n,
                       cl_mem in, clnz_dtype mask_dt)
{
    clnz_context *ctx = tu_context();
    size_t mb = dsize(mask_dt);
    cl_mem mask = tu_buffer(n * mb + 8, NULL);
    clnz_tensor t = {dt, 1, (int64_t[]){(int64_t)n}, NULL};
    TU_CHECK(ctx, clnz_mask_enqueue(ctx, &t, in, 0, p, mask_dt, mask, mb, 0, NULL, NULL));
    unsigned char *got = malloc(n * mb + 8);
    tu_read(mask, 0, n * mb + mb, got);
    for (size_t i = 0; i < n; ++i) {
        uint32_t g = 0;
        memcpy(&g, got + (i + 1) * mb, mb);
        int want = tu_ref_selected(dt, (const char *)host + i * dsize(dt), p);
        if ((int)g != want) {
            uint64_t bits = 0;
            memcpy(&bits, (const char *)host + i * dsize(dt), dsize(dt));
            fail_msg("%s op %d kind %d (i=%lld u=%llu f=%g) element %zu bits 0x%llx: got %u "
                     "want %d",
                     clnz_dtype_name(dt), p->op, p->value.kind, (long long)p->value.i,
                     (unsigned long long)p->value.u, p->value.f, i, (unsigned long long)bits, g,
                     want);
        }
    }
    free(got);
    clReleaseMemObject(mask);
}

static void test_every_dtype_and_predicate(void **state)
{
    (void)state;
    make_preds();
    size_t n = 5000;
    for (int dt = 0; dt < CLNZ_DTYPE_COUNT; ++dt) {
        void *host = malloc(n * 8);
        tu_fill((clnz_dtype)dt, host, n, 0.7);
        cl_mem in = tu_buffer(n * dsize((clnz_dtype)dt), host);
        for (int k = 0; k < n_preds; ++k)
            check_mask((clnz_dtype)dt, &preds[k], host, n, in, k % 2 ? CLNZ_U32 : CLNZ_U8);
        /* all six ops on a value in the middle of the data */
        for (int op = CLNZ_OP_EQ; op <= CLNZ_OP_GE; ++op) {
            clnz_predicate a = clnz_pred_int((clnz_op)op, 2);
            clnz_predicate b = clnz_pred_float((clnz_op)op, 1.5);
            check_mask((clnz_dtype)dt, &a, host, n, in, CLNZ_U8);
            check_mask((clnz_dtype)dt, &b, host, n, in, CLNZ_U8);
        }
        clReleaseMemObject(in);
        free(host);
    }
}

/* Every f16 bit pattern, so that no half is left out. */
static void test_every_half_pattern(void **state)
{
    (void)state;
    size_t n = 65536;
    uint16_t *host = malloc(n * 2);
    for (size_t i = 0; i < n; ++i)
        host[i] = (uint16_t)i;
    cl_mem in = tu_buffer(n * 2, host);
    clnz_predicate ps[] = {clnz_pred_nonzero(), clnz_pred_float(CLNZ_OP_GT, 0.1),
                           clnz_pred_float(CLNZ_OP_EQ, 65519.0), clnz_pred_int(CLNZ_OP_LE, 2049),
                           clnz_pred_float(CLNZ_OP_NE, NAN), clnz_pred_float(CLNZ_OP_LT, -1e-7)};
    for (size_t k = 0; k < sizeof ps / sizeof ps[0]; ++k)
        check_mask(CLNZ_F16, &ps[k], host, n, in, CLNZ_U8);
    clReleaseMemObject(in);
    free(host);
}

/* Denormals are nonzero even where a device flushes them in arithmetic. */
static void test_special_floats_nonzero(void **state)
{
    (void)state;
    uint32_t f32[] = {0x00000000, 0x80000000, 0x00000001, 0x80000001, 0x7fc00000, 0x7f800000,
                      0xff800000, 0x007fffff};
    int want[] = {0, 0, 1, 1, 1, 1, 1, 1};
    cl_mem in = tu_buffer(sizeof f32, f32);
    clnz_context *ctx = tu_context();
    cl_mem mask = tu_buffer(8, NULL);
    clnz_tensor t = {CLNZ_F32, 1, (int64_t[]){8}, NULL};
    clnz_predicate p = clnz_pred_nonzero();
    TU_CHECK(ctx, clnz_mask_enqueue(ctx, &t, in, 0, &p, CLNZ_U8, mask, 0, 0, NULL, NULL));
    unsigned char got[8];
    tu_read(mask, 0, 8, got);
    for (int i = 0; i < 8; ++i)
        assert_int_equal(got[i], want[i]);
    clReleaseMemObject(in);
    clReleaseMemObject(mask);
}

/* The mask is the same for every launch shape. */
static void test_mask_every_launch_shape(void **state)
{
    (void)state;
    clnz_context *ctx = tu_context();
    size_t n = 9973;
    double *host = malloc(n * 8);
    tu_fill(CLNZ_F64, host, n, 0.5);
    cl_mem in = tu_buffer(n * 8, host);
    clnz_predicate p = clnz_pred_float(CLNZ_OP_LT, 0.5);
    for (int l = 0; l < tu_n_launches; ++l) {
        TU_CHECK(ctx, clnz_context_set_launch(ctx, tu_launches[l].wg, tu_launches[l].items));
        check_mask(CLNZ_F64, &p, host, n, in, CLNZ_U8);
    }
    TU_CHECK(ctx, clnz_context_set_launch(ctx, 0, 0));
    clReleaseMemObject(in);
    free(host);
}

/* A strided (transposed, reversed) view gives the mask in C order of the view. */
static void test_mask_strided(void **state)
{
    (void)state;
    int32_t host[6 * 7];
    for (int i = 0; i < 42; ++i)
        host[i] = (i * 7) % 5 == 0 ? 0 : i;
    /* logical (7, 6) = transpose of (6, 7), second axis reversed */
    int64_t shape[] = {7, 6}, strides[] = {1, -7};
    clnz_tensor t = {CLNZ_I32, 2, shape, strides};
    cl_mem in = tu_buffer(sizeof host, host);
    cl_mem mask = tu_buffer(42, NULL);
    clnz_context *ctx = tu_context();
    clnz_predicate p = clnz_pred_nonzero();
    /* element 0 of the view is host[5*7] */
    TU_CHECK(ctx, clnz_mask_enqueue(ctx, &t, in, 35 * 4, &p, CLNZ_U8, mask, 0, 0, NULL, NULL));
    unsigned char got[42];
    tu_read(mask, 0, 42, got);
    for (int r = 0; r < 7; ++r)
        for (int c = 0; c < 6; ++c)
            assert_int_equal(got[r * 6 + c], host[35 + r - 7 * c] != 0);
    clReleaseMemObject(in);
    clReleaseMemObject(mask);
}

int main(void)
{
    tu_seed("test_mask");
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_dtype_and_predicate),
        cmocka_unit_test(test_every_half_pattern),
        cmocka_unit_test(test_special_floats_nonzero),
        cmocka_unit_test(test_mask_strided),
        cmocka_unit_test(test_mask_every_launch_shape),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    tu_context_done();
    return rc;
}
