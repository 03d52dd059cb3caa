/* test_scan.c: the multi-level Blelloch scan against a sequential scan, at
 * every size that matters for each launch shape: 0, 1, WG-1, WG, WG+1, the
 * tile, every recursion boundary (tile^k and its neighbours), and random
 * large sizes; u32 (wrapping) and u64; separate and in-place buffers. */
#include "testutil.h"

#include <stdlib.h>
#include <string.h>

static void check_scan(clnz_dtype dt, uint64_t n, int in_place, size_t offset_elems)
{
    clnz_context *ctx = tu_context();
    size_t es = dt == CLNZ_U64 ? 8 : 4;
    size_t total_n = n + offset_elems;
    unsigned char *host = malloc(total_n * es + 8), *got = malloc(total_n * es + 8);
    for (size_t i = 0; i < total_n; ++i) {
        uint64_t v = tu_rand();
        /* u32: values near 2^32 so that the wrap is exercised */
        if (dt == CLNZ_U32) {
            uint32_t w = (uint32_t)(tu_rand() % 4 ? v % 1000 : v);
            memcpy(host + i * es, &w, 4);
        } else {
            uint64_t w = tu_rand() % 4 ? v % 1000 : v >> 8;
            memcpy(host + i * es, &w, 8);
        }
    }
    cl_mem in = tu_buffer(total_n * es, host);
    cl_mem out = in_place ? in : tu_buffer(total_n * es, NULL);
    cl_mem total = tu_buffer(16, NULL);
    cl_event ev = NULL;
    TU_CHECK(ctx, clnz_scan_enqueue(ctx, dt, in, offset_elems * es, out, offset_elems * es, n,
                                    total, 8, 0, NULL, &ev));
    assert_non_null(ev);
    assert_int_equal(clWaitForEvents(1, &ev), CL_SUCCESS);
    clReleaseEvent(ev);
    tu_read(out, 0, total_n * es, got);
    uint64_t run = 0, tot = 0;
    tu_read(total, 8, es, &tot);
    for (size_t i = 0; i < n; ++i) {
        uint64_t x = 0, y = 0;
        memcpy(&x, host + (offset_elems + i) * es, es);
        memcpy(&y, got + (offset_elems + i) * es, es);
        if (dt == CLNZ_U32)
            run = (uint32_t)run;
        if (y != run)
            fail_msg("n=%llu i=%zu: got %llu want %llu", (unsigned long long)n, i,
                     (unsigned long long)y, (unsigned long long)run);
        run += x;
    }
    if (dt == CLNZ_U32)
        run = (uint32_t)run;
    assert_int_equal(tot, run);
    if (!in_place) /* elements before the offset are untouched */
        assert_int_equal(clnz_scan_enqueue(ctx, dt, in, 0, out, 0, 0, NULL, 0, 0, NULL, NULL),
                         CLNZ_SUCCESS);
    if (out != in)
        clReleaseMemObject(out);
    clReleaseMemObject(in);
    clReleaseMemObject(total);
    free(host);
    free(got);
}

static void sizes_for_launch(clnz_dtype dt, size_t wg, size_t items)
{
    clnz_context *ctx = tu_context();
    TU_CHECK(ctx, clnz_context_set_launch(ctx, wg, items));
    uint64_t tile = wg * items;
    uint64_t sizes[64];
    int k = 0;
    uint64_t base[] = {0, 1, 2, wg - 1, wg, wg + 1, tile - 1, tile, tile + 1, 2 * tile + 3};
    for (size_t i = 0; i < sizeof base / sizeof base[0]; ++i)
        sizes[k++] = base[i];
    /* recursion boundaries: tile^2 and tile^3 (while small enough) */
    for (uint64_t b = tile * tile; b <= (1u << 21) && tile > 1; b *= tile) {
        sizes[k++] = b - 1;
        sizes[k++] = b;
        sizes[k++] = b + 1;
    }
    for (int r = 0; r < 3; ++r)
        sizes[k++] = 1 + tu_rand() % 300000;
    for (int i = 0; i < k; ++i)
        check_scan(dt, sizes[i], (int)(i % 3 == 1), (size_t)(i % 2));
    TU_CHECK(ctx, clnz_context_set_launch(ctx, 0, 0));
}

static void test_scan_u32(void **state)
{
    (void)state;
    for (int i = 0; i < tu_n_launches; ++i)
        sizes_for_launch(CLNZ_U32, tu_launches[i].wg, tu_launches[i].items);
}

static void test_scan_u64(void **state)
{
    (void)state;
    for (int i = 0; i < tu_n_launches; ++i)
        sizes_for_launch(CLNZ_U64, tu_launches[i].wg, tu_launches[i].items);
}

static void test_scan_default_launch_large(void **state)
{
    (void)state;
    check_scan(CLNZ_U64, 3000001, 0, 3);
    check_scan(CLNZ_U32, 2999999, 1, 0);
}

static void test_scan_rejects_bad_arguments(void **state)
{
    (void)state;
    clnz_context *ctx = tu_context();
    cl_mem b = tu_buffer(64, NULL);
    assert_int_equal(clnz_scan_enqueue(ctx, CLNZ_F32, b, 0, b, 0, 4, NULL, 0, 0, NULL, NULL),
                     CLNZ_ERROR_UNSUPPORTED_DTYPE);
    assert_int_equal(clnz_scan_enqueue(ctx, (clnz_dtype)99, b, 0, b, 0, 4, NULL, 0, 0, NULL, NULL),
                     CLNZ_ERROR_INVALID_ARGUMENT); /* not a dtype at all */
    assert_int_equal(clnz_scan_enqueue(ctx, CLNZ_U32, b, 0, b, 0, 17, NULL, 0, 0, NULL, NULL),
                     CLNZ_ERROR_INVALID_ARGUMENT); /* 68 bytes > 64 */
    assert_int_equal(clnz_scan_enqueue(ctx, CLNZ_U64, b, 4, b, 0, 2, NULL, 0, 0, NULL, NULL),
                     CLNZ_ERROR_INVALID_ARGUMENT); /* misaligned */
    assert_int_equal(clnz_scan_enqueue(ctx, CLNZ_U64, NULL, 0, b, 0, 2, NULL, 0, 0, NULL, NULL),
                     CLNZ_ERROR_INVALID_ARGUMENT);
    assert_true(strlen(clnz_context_message(ctx)) > 0);
    clReleaseMemObject(b);
}

int main(void)
{
    tu_seed("test_scan");
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_scan_u32),
        cmocka_unit_test(test_scan_u64),
        cmocka_unit_test(test_scan_default_launch_large),
        cmocka_unit_test(test_scan_rejects_bad_arguments),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    tu_context_done();
    return rc;
}
