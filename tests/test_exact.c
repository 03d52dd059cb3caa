/* test_exact.c: the results of exactly the count's size on the device
 * (clnz_nonzero_alloc, clnz_select_alloc, clnz_nonzero_batched_alloc,
 * clnz_nonzero_channels_alloc), against the sequential reference and
 * against their capacity forms, under every strategy, at one tile and at
 * many; a buffer exactly the result's size, none for a result of no
 * bytes; the count on the host and in a device buffer; the errors, which
 * leave no buffer behind. */
#include "testutil.h"

#include <stdlib.h>
#include <string.h>

/* The size of a buffer clnz allocated. */
static size_t size_of(cl_mem m)
{
    size_t size = 0;
    assert_int_equal(clGetMemObjectInfo(m, CL_MEM_SIZE, sizeof size, &size, NULL), CL_SUCCESS);
    return size;
}

/* Waits for the call's last command and releases its event. */
static void wait_done(cl_event ev)
{
    assert_non_null(ev);
    assert_int_equal(clWaitForEvents(1, &ev), CL_SUCCESS);
    clReleaseEvent(ev);
}

/* n f32 values, about `density` of them nonzero. */
static float *random_f32(size_t n, double density)
{
    float *x = malloc(n * sizeof *x + 4);
    for (size_t i = 0; i < n; ++i)
        x[i] = tu_uniform() < density ? (float)(tu_rand() % 1000) - 499.5f : 0.0f;
    return x;
}

/* nonzero_alloc of t (in `in`) against the reference and the capacity
 * form, in the options o. */
static void check_nonzero(clnz_context *ctx, const clnz_tensor *t, const void *host, cl_mem in,
                          const clnz_nonzero_options *o)
{
    int64_t z, entries;
    int per_entry;
    int64_t *want = tu_ref_nonzero(t, host, NULL, o, &z, &entries, &per_entry);
    size_t ib = o->index_type == CLNZ_INDEX_INT64 ? 8 : 4;
    size_t bytes = (size_t)entries * (size_t)per_entry * ib;
    cl_mem got = NULL, cnt = tu_buffer(16, NULL);
    uint64_t hz = 0, dz = 0;
    cl_event ev = NULL;
    TU_CHECK(ctx, clnz_nonzero_alloc(ctx, t, in, 0, NULL, o, &got, &hz, cnt, 8, 0, NULL, &ev));
    wait_done(ev);
    assert_int_equal(hz, (uint64_t)z);
    tu_read(cnt, 8, 8, &dz);
    assert_int_equal(dz, (uint64_t)z);
    if (bytes == 0) { /* no entries, or entries of no coordinates: no buffer */
        assert_null(got);
        free(want);
        clReleaseMemObject(cnt);
        return;
    }
    assert_non_null(got);
    assert_int_equal(size_of(got), bytes);
    void *dev = malloc(bytes);
    tu_read(got, 0, bytes, dev);
    int64_t *wide = tu_widen(dev, o->index_type, bytes / ib);
    if (memcmp(wide, want, bytes / ib * 8) != 0)
        fail_msg("nonzero_alloc differs from the reference (n %lld, z %lld, layout %d)",
                 (long long)t->shape[0], (long long)z, (int)o->layout);
    /* the capacity form, into a buffer of the same size, gives the same bytes */
    cl_mem cap = tu_buffer(bytes, NULL);
    void *capped = malloc(bytes);
    TU_CHECK(ctx, clnz_nonzero_enqueue(ctx, t, in, 0, NULL, o, cap, 0, (uint64_t)entries, cnt, 0,
                                       0, NULL, NULL));
    tu_read(cap, 0, bytes, capped);
    assert_memory_equal(capped, dev, bytes);
    free(capped);
    free(wide);
    free(dev);
    free(want);
    clReleaseMemObject(cap);
    clReleaseMemObject(got);
    clReleaseMemObject(cnt);
}

/* Sizes from empty to many tiles of the launch the strategies run at
 * (4 x 8 = 32 elements a tile), at several densities, in every layout. */
static void nonzero_sizes(clnz_context *ctx)
{
    static const int64_t sizes[] = {0, 1, 31, 32, 33, 1000};
    static const double dens[] = {0.0, 0.1, 1.0};
    for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; ++s) {
        for (size_t d = 0; d < sizeof dens / sizeof dens[0]; ++d) {
            int64_t shape[2] = {sizes[s] / 8, 8};
            int rank = sizes[s] % 8 ? 1 : 2; /* 1-D, or 2-D where 8 divides */
            if (rank == 1)
                shape[0] = sizes[s];
            float *x = random_f32((size_t)sizes[s], dens[d]);
            clnz_tensor t = {CLNZ_F32, rank, shape, NULL};
            cl_mem in = tu_buffer((size_t)sizes[s] * 4, x);
            for (int layout = 0; layout < 3; ++layout) {
                clnz_nonzero_options o;
                clnz_nonzero_options_init(&o);
                o.layout = (clnz_layout)layout;
                o.index_type = layout == 1 ? CLNZ_INDEX_INT32 : CLNZ_INDEX_INT64;
                check_nonzero(ctx, &t, x, in, &o);
            }
            clReleaseMemObject(in);
            free(x);
        }
    }
}

static void test_nonzero_alloc_every_strategy(void **state)
{
    (void)state;
    clnz_context *ctx = tu_context();
    TU_CHECK(ctx, clnz_context_set_launch(ctx, 4, 8));
    for (int s = 0; s < CLNZ_STRATEGY_COUNT; ++s) {
        if (s == CLNZ_STRATEGY_SINGLE_TILE)
            continue; /* serves one tile only: below */
        TU_CHECK(ctx, clnz_context_set_strategy(ctx, (clnz_strategy)s));
        nonzero_sizes(ctx);
    }
    /* single-tile on an input of one tile: a launch of 4096 elements (the
     * tuned one may hold fewer: 1024 on an H200) */
    TU_CHECK(ctx, clnz_context_set_launch(ctx, 64, 64));
    TU_CHECK(ctx, clnz_context_set_strategy(ctx, CLNZ_STRATEGY_SINGLE_TILE));
    float *x = random_f32(4096, 0.2);
    int64_t shape[1] = {4096};
    clnz_tensor t = {CLNZ_F32, 1, shape, NULL};
    cl_mem in = tu_buffer(sizeof(float) * 4096, x);
    clnz_nonzero_options o;
    clnz_nonzero_options_init(&o);
    check_nonzero(ctx, &t, x, in, &o);
    clReleaseMemObject(in);
    free(x);
}

/* With a static size the buffer holds exactly `size` entries, the ones
 * past z filled, whatever z is. */
static void test_nonzero_alloc_static_size(void **state)
{
    (void)state;
    clnz_context *ctx = tu_context();
    float *x = random_f32(300, 0.1);
    int64_t shape[2] = {30, 10};
    clnz_tensor t = {CLNZ_F32, 2, shape, NULL};
    cl_mem in = tu_buffer(sizeof(float) * 300, x);
    static const int64_t sizes[] = {0, 5, 500};
    for (size_t i = 0; i < 3; ++i) {
        clnz_nonzero_options o;
        clnz_nonzero_options_init(&o);
        o.has_size = 1;
        o.size = sizes[i];
        o.fill = -7;
        check_nonzero(ctx, &t, x, in, &o);
    }
    clReleaseMemObject(in);
    free(x);
}

/* No selected element, an empty input, and a 0-d input (whose rows have no
 * coordinates): no buffer; the count is still right. */
static void test_nonzero_alloc_no_bytes(void **state)
{
    (void)state;
    clnz_context *ctx = tu_context();
    float zeros[64] = {0}, one = 2.5f;
    int64_t shape[1] = {64}, empty[2] = {0, 3};
    clnz_tensor t = {CLNZ_F32, 1, shape, NULL}, te = {CLNZ_F32, 2, empty, NULL},
                t0 = {CLNZ_F32, 0, NULL, NULL};
    cl_mem in = tu_buffer(sizeof zeros, zeros), in0 = tu_buffer(sizeof one, &one);
    const clnz_tensor *ts[] = {&t, &te, &t0};
    const uint64_t want[] = {0, 0, 1};
    for (int i = 0; i < 3; ++i) {
        cl_mem got = (cl_mem)(uintptr_t)1; /* must be overwritten */
        uint64_t z = 99;
        TU_CHECK(ctx, clnz_nonzero_alloc(ctx, ts[i], i == 2 ? in0 : in, 0, NULL, NULL, &got, &z,
                                         NULL, 0, 0, NULL, NULL));
        assert_null(got);
        assert_int_equal(z, want[i]);
    }
    clReleaseMemObject(in);
    clReleaseMemObject(in0);
}

static void test_select_alloc(void **state)
{
    (void)state;
    clnz_context *ctx = tu_context();
    const size_t n = 40000; /* several tiles of the default launch too */
    float *x = random_f32(n, 0.5);
    unsigned char *m = malloc(n);
    for (size_t i = 0; i < n; ++i)
        m[i] = tu_rand() % 3 == 0 ? (unsigned char)(1 + tu_rand() % 255) : 0;
    int64_t shape[1] = {(int64_t)n};
    clnz_tensor xt = {CLNZ_F32, 1, shape, NULL}, mt = {CLNZ_U8, 1, shape, NULL};
    cl_mem xb = tu_buffer(n * 4, x), mb = tu_buffer(n, m);
    for (int with_mask = 0; with_mask < 2; ++with_mask) {
        float *want = malloc(n * 4);
        size_t z = 0;
        for (size_t i = 0; i < n; ++i)
            if (with_mask ? m[i] != 0 : x[i] != 0.0f)
                want[z++] = x[i];
        cl_mem got = NULL;
        uint64_t hz = 0;
        cl_event ev = NULL;
        TU_CHECK(ctx, clnz_select_alloc(ctx, &xt, xb, 0, with_mask ? &mt : NULL, mb, 0, NULL,
                                        &got, &hz, NULL, 0, 0, NULL, &ev));
        wait_done(ev);
        assert_int_equal(hz, z);
        assert_int_equal(size_of(got), z * 4);
        float *dev = malloc(z * 4);
        tu_read(got, 0, z * 4, dev);
        assert_memory_equal(dev, want, z * 4);
        free(dev);
        free(want);
        clReleaseMemObject(got);
    }
    /* a mask that selects nothing: no buffer */
    memset(m, 0, n);
    cl_mem none = tu_buffer(n, m), got = NULL;
    uint64_t hz = 1;
    TU_CHECK(ctx, clnz_select_alloc(ctx, &xt, xb, 0, &mt, none, 0, NULL, &got, &hz, NULL, 0, 0,
                                    NULL, NULL));
    assert_null(got);
    assert_int_equal(hz, 0);
    clReleaseMemObject(none);
    clReleaseMemObject(xb);
    clReleaseMemObject(mb);
    free(x);
    free(m);
}

/* Batched and channel forms: the same bytes as their capacity forms. */
static void test_batched_and_channels_alloc(void **state)
{
    (void)state;
    clnz_context *ctx = tu_context();
    int64_t shape[3] = {7, 30, 3};
    size_t n = 7 * 30 * 3;
    float *x = random_f32(n, 0.2);
    clnz_tensor t = {CLNZ_F32, 3, shape, NULL};
    cl_mem in = tu_buffer(n * 4, x), offs = tu_buffer(8 * 8, NULL), offs2 = tu_buffer(8 * 8, NULL);
    cl_mem cap = tu_buffer(n * 3 * 8, NULL), got = NULL, cnt = tu_buffer(8, NULL);
    uint64_t z = 0, cz = 0;
    TU_CHECK(ctx, clnz_nonzero_batched_alloc(ctx, &t, in, 0, NULL, NULL, &got, &z, offs, 0, 0,
                                             NULL, NULL));
    TU_CHECK(ctx, clnz_nonzero_batched_enqueue(ctx, &t, in, 0, NULL, NULL, cap, 0, n, offs2, 0, 0,
                                               NULL, NULL));
    int64_t o1[8], o2[8];
    tu_read(offs, 0, sizeof o1, o1);
    tu_read(offs2, 0, sizeof o2, o2);
    assert_memory_equal(o1, o2, sizeof o1);
    assert_int_equal(z, (uint64_t)o2[7]);
    assert_int_equal(size_of(got), z * 2 * 8);
    int64_t *a = malloc(z * 16 + 8), *b = malloc(z * 16 + 8);
    tu_read(got, 0, z * 16, a);
    tu_read(cap, 0, z * 16, b);
    assert_memory_equal(a, b, z * 16);
    clReleaseMemObject(got);

    for (int rule = 0; rule < 2; ++rule) {
        TU_CHECK(ctx, clnz_nonzero_channels_alloc(ctx, &t, in, 0, NULL, (clnz_channel_rule)rule,
                                                  NULL, &got, &z, NULL, 0, 0, NULL, NULL));
        TU_CHECK(ctx, clnz_nonzero_channels_enqueue(ctx, &t, in, 0, NULL, (clnz_channel_rule)rule,
                                                    NULL, cap, 0, n, cnt, 0, 0, NULL, NULL));
        tu_read(cnt, 0, 8, &cz);
        assert_int_equal(z, cz);
        if (z == 0) {
            assert_null(got);
            continue;
        }
        assert_int_equal(size_of(got), z * 16);
        tu_read(got, 0, z * 16, a);
        tu_read(cap, 0, z * 16, b);
        assert_memory_equal(a, b, z * 16);
        clReleaseMemObject(got);
    }
    free(a);
    free(b);
    free(x);
    clReleaseMemObject(in);
    clReleaseMemObject(offs);
    clReleaseMemObject(offs2);
    clReleaseMemObject(cap);
    clReleaseMemObject(cnt);
}

/* Every error returns its status, with *out_buf NULL: nothing to release. */
static void test_alloc_errors(void **state)
{
    (void)state;
    clnz_context *ctx = tu_context();
    float x[64] = {1};
    int64_t shape[1] = {64}, big[1] = {64};
    clnz_tensor t = {CLNZ_F32, 1, shape, NULL};
    cl_mem in = tu_buffer(sizeof x, x), small = tu_buffer(4, NULL), got;
    uint64_t z;
    assert_int_equal(clnz_nonzero_alloc(ctx, &t, in, 0, NULL, NULL, NULL, &z, NULL, 0, 0, NULL,
                                        NULL),
                     CLNZ_ERROR_INVALID_ARGUMENT);
    got = in; /* a NULL count: *out_buf is still cleared */
    assert_int_equal(clnz_select_alloc(ctx, &t, in, 0, NULL, NULL, 0, NULL, &got, NULL, NULL, 0,
                                       0, NULL, NULL),
                     CLNZ_ERROR_INVALID_ARGUMENT);
    assert_null(got);
    got = in;
    z = 7; /* a NULL context: both cleared */
    assert_int_equal(
        clnz_nonzero_alloc(NULL, &t, in, 0, NULL, NULL, &got, &z, NULL, 0, 0, NULL, NULL),
        CLNZ_ERROR_INVALID_ARGUMENT);
    assert_null(got);
    assert_int_equal(z, 0);
    got = in;
    assert_int_equal(
        clnz_nonzero_batched_alloc(NULL, &t, in, 0, NULL, NULL, &got, &z, small, 0, 0, NULL, NULL),
        CLNZ_ERROR_INVALID_ARGUMENT);
    assert_null(got);
    got = in;
    assert_int_equal(clnz_nonzero_channels_alloc(NULL, &t, in, 0, NULL, CLNZ_CHANNELS_ANY, NULL,
                                                 &got, &z, NULL, 0, 0, NULL, NULL),
                     CLNZ_ERROR_INVALID_ARGUMENT);
    assert_null(got);
    got = in;
    assert_int_equal(clnz_nonzero_alloc(ctx, &t, NULL, 0, NULL, NULL, &got, &z, NULL, 0, 0, NULL,
                                        NULL),
                     CLNZ_ERROR_INVALID_ARGUMENT);
    assert_null(got);
    /* a count buffer too small, an input that does not fit its buffer */
    assert_int_equal(clnz_nonzero_alloc(ctx, &t, in, 0, NULL, NULL, &got, &z, small, 0, 0, NULL,
                                        NULL),
                     CLNZ_ERROR_INVALID_ARGUMENT);
    big[0] = 65;
    clnz_tensor tb = {CLNZ_F32, 1, big, NULL};
    assert_int_equal(clnz_nonzero_alloc(ctx, &tb, in, 0, NULL, NULL, &got, &z, NULL, 0, 0, NULL,
                                        NULL),
                     CLNZ_ERROR_INVALID_ARGUMENT);
    /* a static size beyond the device's largest allocation */
    clnz_nonzero_options o;
    clnz_nonzero_options_init(&o);
    o.has_size = 1;
    o.size = (int64_t)1 << 60;
    assert_int_equal(clnz_nonzero_alloc(ctx, &t, in, 0, NULL, &o, &got, &z, NULL, 0, 0, NULL,
                                        NULL),
                     CLNZ_ERROR_TOO_LARGE);
    assert_null(got);
    /* ... refused before anything runs: a count buffer stays as it was */
    const uint64_t mark = 0xabcdef0123456789u;
    cl_mem cnt = tu_buffer(sizeof mark, &mark);
    int64_t pix_shape[2] = {32, 2};
    clnz_tensor pixels = {CLNZ_F32, 2, pix_shape, NULL};
    assert_int_equal(clnz_nonzero_alloc(ctx, &t, in, 0, NULL, &o, &got, &z, cnt, 0, 0, NULL, NULL),
                     CLNZ_ERROR_TOO_LARGE);
    assert_int_equal(clnz_nonzero_channels_alloc(ctx, &pixels, in, 0, NULL, CLNZ_CHANNELS_ANY, &o,
                                                 &got, &z, cnt, 0, 0, NULL, NULL),
                     CLNZ_ERROR_TOO_LARGE);
    uint64_t after = 0;
    assert_int_equal(clEnqueueReadBuffer(clnz_context_queue(ctx), cnt, CL_TRUE, 0, sizeof after,
                                         &after, 0, NULL, NULL),
                     CL_SUCCESS);
    assert_true(after == mark);
    clReleaseMemObject(cnt);
    /* a batched call's offsets must have room for B + 1 */
    assert_int_equal(clnz_nonzero_batched_alloc(ctx, &t, in, 0, NULL, NULL, &got, &z, small, 0, 0,
                                                NULL, NULL),
                     CLNZ_ERROR_INVALID_ARGUMENT);
    /* a forced strategy that cannot serve the call */
    int64_t many[1] = {1 << 16};
    clnz_tensor tm = {CLNZ_U8, 1, many, NULL};
    cl_mem mbuf = tu_buffer(1 << 16, NULL);
    TU_CHECK(ctx, clnz_context_set_strategy(ctx, CLNZ_STRATEGY_SINGLE_TILE));
    got = in;
    assert_int_equal(clnz_nonzero_alloc(ctx, &tm, mbuf, 0, NULL, NULL, &got, &z, NULL, 0, 0,
                                        NULL, NULL),
                     CLNZ_ERROR_UNSUPPORTED_STRATEGY);
    assert_null(got);
    clReleaseMemObject(mbuf);
    clReleaseMemObject(in);
    clReleaseMemObject(small);
}

/* Whatever a test forced, the next one starts from auto and the defaults. */
static int back_to_auto(void **state)
{
    (void)state;
    clnz_context *ctx = tu_context();
    return clnz_context_set_strategy(ctx, CLNZ_STRATEGY_AUTO) ||
           clnz_context_set_launch(ctx, 0, 0);
}

int main(void)
{
    tu_seed("test_exact");
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown(test_nonzero_alloc_every_strategy, back_to_auto),
        cmocka_unit_test(test_nonzero_alloc_static_size),
        cmocka_unit_test(test_nonzero_alloc_no_bytes),
        cmocka_unit_test(test_select_alloc),
        cmocka_unit_test(test_batched_and_channels_alloc),
        cmocka_unit_test_teardown(test_alloc_errors, back_to_auto),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    tu_context_done();
    return rc;
}
