/* test_nonzero.c: the whole pipeline (count, scan, write, fill) against the
 * sequential reference: every layout, index type, width and capacity, ranks
 * 0..8 with empty dimensions, strided views, and every launch shape. */
#include "testutil.h"
#include "core/context.h"
#include "core/relayout.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Runs the blocking call and the device-resident call and compares both
 * with the reference. */
static void check(const clnz_tensor *t, const void *data, size_t span_elems, int64_t base,
                  const clnz_predicate *pred, const clnz_nonzero_options *o)
{
    clnz_context *ctx = tu_context();
    int64_t count, entries;
    int per;
    int64_t *want = tu_ref_nonzero(t, (const char *)data + base * (int64_t)clnz_dtype_size(t->dtype),
                                   pred, o, &count, &entries, &per);
    size_t nidx = (size_t)(entries * per);

    clnz_result res;
    TU_CHECK(ctx, clnz_nonzero(ctx, t, (const char *)data + base * (int64_t)clnz_dtype_size(t->dtype), pred, o, &res));
    assert_int_equal(res.count, count);
    size_t got_n = (size_t)res.shape[0] * (size_t)(res.ndim == 2 ? res.shape[1] : 1);
    assert_int_equal(got_n, nidx);
    int64_t *got = tu_widen(res.indices, res.index_type, got_n);
    for (size_t i = 0; i < nidx; ++i)
        if (got[i] != want[i])
            fail_msg("blocking: index %zu of %zu: got %lld want %lld (rank %d layout %d)", i,
                     nidx, (long long)got[i], (long long)want[i], t->rank, o->layout);
    free(got);
    clnz_result_free(&res);

    /* device-resident: input at an offset, output after 3 entries of slack */
    size_t es = clnz_dtype_size(t->dtype), ib = o->index_type == CLNZ_INDEX_INT64 ? 8 : 4;
    size_t pad = 3 * (size_t)per;
    cl_mem in = tu_buffer(span_elems * es, data);
    uint64_t cap = (uint64_t)entries;
    cl_mem out = tu_buffer((nidx + pad) * ib + 8, NULL);
    cl_mem cnt = tu_buffer(16, NULL);
    cl_event ev = NULL;
    TU_CHECK(ctx, clnz_nonzero_enqueue(ctx, t, in, (size_t)base * es, pred, o, out, pad * ib, cap, cnt,
                                       8, 0, NULL, &ev));
    assert_int_equal(clWaitForEvents(1, &ev), CL_SUCCESS);
    clReleaseEvent(ev);
    uint64_t dcount = 0;
    tu_read(cnt, 8, 8, &dcount);
    assert_int_equal(dcount, count);
    if (nidx) {
        unsigned char *raw = malloc(nidx * ib);
        tu_read(out, pad * ib, nidx * ib, raw);
        got = tu_widen(raw, o->index_type, nidx);
        for (size_t i = 0; i < nidx; ++i)
            if (got[i] != want[i])
                fail_msg("enqueue: index %zu: got %lld want %lld", i, (long long)got[i],
                         (long long)want[i]);
        free(got);
        free(raw);
    }
    clReleaseMemObject(in);
    clReleaseMemObject(out);
    clReleaseMemObject(cnt);
    free(want);
}

static void random_shape(int rank, int64_t *shape, int64_t max_elems)
{
    int64_t n = 1;
    for (int d = 0; d < rank; ++d) {
        int64_t lim = max_elems / n;
        shape[d] = lim < 1 ? 1 : 1 + (int64_t)(tu_rand() % (uint64_t)(lim < 9 ? lim : 9));
        n *= shape[d];
    }
}

static void test_ranks_layouts_index_types(void **state)
{
    (void)state;
    for (int rank = 0; rank <= 8; ++rank) {
        for (int k = rank % 2; k < tu_n_dtypes; k += (rank % 3) + 1) {
            clnz_dtype dt = tu_dtypes[k];
            int64_t shape[8];
            random_shape(rank, shape, 20000);
            clnz_tensor t = {dt, rank, shape, NULL};
            int64_t n = 1;
            for (int d = 0; d < rank; ++d)
                n *= shape[d];
            void *data = malloc((size_t)n * 8 + 8);
            tu_fill(dt, data, (size_t)n, tu_uniform());
            for (int layout = 0; layout < 3; ++layout)
                for (int it = 0; it < 3; ++it) {
                    clnz_nonzero_options o;
                    clnz_nonzero_options_init(&o);
                    o.layout = (clnz_layout)layout;
                    o.index_type = (clnz_index_type)it;
                    check(&t, data, (size_t)n, 0, NULL, &o);
                }
            free(data);
        }
    }
}

static void test_every_launch_shape(void **state)
{
    (void)state;
    clnz_context *ctx = tu_context();
    int64_t sizes[] = {0, 1, 7, 64, 65, 4095, 4096, 4097, 70001};
    size_t max_wg = 0;
    clGetDeviceInfo(clnz_context_device(ctx), CL_DEVICE_MAX_WORK_GROUP_SIZE, sizeof max_wg,
                    &max_wg, NULL);
    for (int l = 0; l <= tu_n_launches; ++l) {
        /* the listed shapes, then the largest work-group the device allows */
        tu_launch launch = l < tu_n_launches ? tu_launches[l] : (tu_launch){max_wg, 2};
        TU_CHECK(ctx, clnz_context_set_launch(ctx, launch.wg, launch.items));
        for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; ++s) {
            /* 1-D, 2-D and 3-D views of the same count: each has its own write loop */
            int64_t shapes[4][3] = {{sizes[s]}, {sizes[s], 1}, {1, sizes[s]}, {sizes[s], 1, 1}};
            int ranks[4] = {1, 2, 2, 3};
            if (sizes[s] == 70001) { /* and real 2-D and 3-D ones */
                shapes[1][0] = 7, shapes[1][1] = 10001;
                shapes[3][0] = 11, shapes[3][1] = 91, shapes[3][2] = 70;
            }
            for (int v = 0; v < 4; ++v) {
                clnz_tensor t = {CLNZ_F32, ranks[v], shapes[v], NULL};
                int64_t n = 1;
                for (int d = 0; d < ranks[v]; ++d)
                    n *= shapes[v][d];
                float *data = malloc((size_t)n * 4 + 4);
                tu_fill(CLNZ_F32, data, (size_t)n, s % 2 ? 0.5 : 0.03);
                clnz_nonzero_options o;
                clnz_nonzero_options_init(&o);
                o.layout = (clnz_layout)((s + (size_t)v) % 3);
                o.index_type = (clnz_index_type)(v % 2);
                check(&t, data, (size_t)n, 0, NULL, &o);
                if (o.layout != CLNZ_LAYOUT_FLAT) { /* each write loop, reversed */
                    o.order = CLNZ_ORDER_XY;
                    check(&t, data, (size_t)n, 0, NULL, &o);
                }
                free(data);
            }
        }
    }
    TU_CHECK(ctx, clnz_context_set_launch(ctx, 0, 0));
}

static void test_empty_all_and_none_selected(void **state)
{
    (void)state;
    int64_t n = 10007;
    uint8_t *all = malloc((size_t)n), *none = calloc((size_t)n, 1);
    memset(all, 3, (size_t)n);
    int64_t shape[] = {n}, empty_shape[] = {5, 0, 3};
    clnz_nonzero_options o;
    clnz_nonzero_options_init(&o);
    clnz_tensor t = {CLNZ_U8, 1, shape, NULL};
    check(&t, all, (size_t)n, 0, NULL, &o);
    check(&t, none, (size_t)n, 0, NULL, &o);
    clnz_tensor e = {CLNZ_U8, 3, empty_shape, NULL};
    check(&e, all, 1, 0, NULL, &o);
    o.has_size = 1, o.size = 4; /* static capacity of an empty input: all fill */
    check(&e, all, 1, 0, NULL, &o);
    free(all);
    free(none);
}

static void test_width_and_static_capacity(void **state)
{
    (void)state;
    int64_t shape[] = {1, 1, 13, 17};
    int64_t n = 13 * 17;
    int16_t *data = malloc((size_t)n * 2);
    tu_fill(CLNZ_I16, data, (size_t)n, 0.4);
    clnz_tensor t = {CLNZ_I16, 4, shape, NULL};
    for (int layout = 0; layout < 4; ++layout)
        for (int w = 2; w <= 7; ++w)
            for (int it = 0; it < 3; ++it) {
                clnz_nonzero_options o;
                clnz_nonzero_options_init(&o);
                o.layout = (clnz_layout)(layout % 2);
                o.order = layout >= 2 ? CLNZ_ORDER_XY : CLNZ_ORDER_ROW_MAJOR;
                o.width = w;
                o.index_type = (clnz_index_type)it;
                check(&t, data, (size_t)n, 0, NULL, &o);
                o.has_size = 1;
                int64_t sizes[] = {0, 1, 5, 200, 221};
                for (int s = 0; s < 5; ++s) {
                    o.size = sizes[s];
                    o.fill = it == 2 ? -1 : s - 3;
                    check(&t, data, (size_t)n, 0, NULL, &o);
                }
            }
    /* width below the effective rank (2) is an error */
    clnz_context *ctx = tu_context();
    clnz_nonzero_options o;
    clnz_nonzero_options_init(&o);
    o.width = 1;
    clnz_result res;
    assert_int_equal(clnz_nonzero(ctx, &t, data, NULL, &o, &res), CLNZ_ERROR_INVALID_WIDTH);
    assert_non_null(strstr(clnz_context_message(ctx), "effective rank 2"));
    /* order xy has no coordinates to reverse in the flat layout */
    clnz_nonzero_options_init(&o);
    o.layout = CLNZ_LAYOUT_FLAT, o.order = CLNZ_ORDER_XY;
    assert_int_equal(clnz_nonzero(ctx, &t, data, NULL, &o, &res), CLNZ_ERROR_INVALID_ARGUMENT);
    assert_non_null(strstr(clnz_context_message(ctx), "order xy"));
    /* nor a width: refused, never ignored */
    clnz_nonzero_options_init(&o);
    o.layout = CLNZ_LAYOUT_FLAT, o.width = 4;
    assert_int_equal(clnz_nonzero(ctx, &t, data, NULL, &o, &res), CLNZ_ERROR_INVALID_WIDTH);
    assert_non_null(strstr(clnz_context_message(ctx), "flat has one index per entry"));
    free(data);
}

static void test_rank0(void **state)
{
    (void)state;
    for (int v = 0; v < 2; ++v) {
        double x = v ? 2.5 : -0.0;
        clnz_tensor t = {CLNZ_F64, 0, NULL, NULL};
        for (int layout = 0; layout < 3; ++layout) {
            clnz_nonzero_options o;
            clnz_nonzero_options_init(&o);
            o.layout = (clnz_layout)layout;
            check(&t, &x, 1, 0, NULL, &o);
            clnz_result res;
            TU_CHECK(tu_context(), clnz_nonzero(tu_context(), &t, &x, NULL, &o, &res));
            /* rows (z, 0), columns (1, z), flat (z,) */
            int64_t want0 = layout == 0 ? v : layout == 1 ? 1 : v;
            assert_int_equal(res.shape[0], want0);
            if (layout < 2)
                assert_int_equal(res.shape[1], layout == 0 ? 0 : v);
            clnz_result_free(&res);
        }
    }
}

/* The largest rank: 32 dimensions, a few of them longer than 1. */
static void test_rank32(void **state)
{
    (void)state;
    int64_t shape[32];
    for (int d = 0; d < 32; ++d)
        shape[d] = d % 7 == 3 ? 3 : d == 31 ? 5 : 1;
    int64_t n = 3 * 3 * 3 * 3 * 3 * 5;
    int8_t *data = malloc((size_t)n);
    tu_fill(CLNZ_I8, data, (size_t)n, 0.5);
    clnz_tensor t = {CLNZ_I8, 32, shape, NULL};
    for (int layout = 0; layout < 3; ++layout) {
        clnz_nonzero_options o;
        clnz_nonzero_options_init(&o);
        o.layout = (clnz_layout)layout;
        check(&t, data, (size_t)n, 0, NULL, &o);
    }
    int64_t rank33[33] = {0};
    clnz_tensor too_many = {CLNZ_I8, 33, rank33, NULL};
    clnz_result res;
    assert_int_equal(clnz_nonzero(tu_context(), &too_many, data, NULL, NULL, &res),
                     CLNZ_ERROR_INVALID_ARGUMENT);
    free(data);
}

/* Fortran order, negative strides, padded rows and a broadcast (zero) stride. */
static void test_strided_views(void **state)
{
    (void)state;
    clnz_context *ctx = tu_context();
    size_t span = 40 * 50;
    uint64_t *data = malloc(span * 8);
    tu_fill(CLNZ_I64, data, span, 0.3);
    struct {
        int rank;
        int64_t shape[3], strides[3], base;
    } views[] = {
        {2, {40, 50}, {1, 40}, 0},          /* Fortran order */
        {2, {40, 50}, {-50, -1}, span - 1}, /* both axes reversed */
        {2, {39, 45}, {50, 1}, 3},          /* padded rows */
        {3, {4, 7, 5}, {0, 50, 2}, 1},      /* broadcast first axis, stepped */
        {1, {1000}, {-2}, span - 1},        /* every second element backwards */
    };
    for (int l = 0; l < 3; ++l) {
        TU_CHECK(ctx, clnz_context_set_launch(ctx, tu_launches[l * 2].wg, tu_launches[l * 2].items));
        for (size_t v = 0; v < sizeof views / sizeof views[0]; ++v) {
            clnz_tensor t = {CLNZ_I64, views[v].rank, views[v].shape, views[v].strides};
            for (int layout = 0; layout < 3; ++layout) {
                clnz_nonzero_options o;
                clnz_nonzero_options_init(&o);
                o.layout = (clnz_layout)layout;
                clnz_predicate gt3 = clnz_pred_int(CLNZ_OP_GT, 3);
                check(&t, data, span, views[v].base, &gt3, &o);
            }
        }
    }
    TU_CHECK(ctx, clnz_context_set_launch(ctx, 0, 0));
    free(data);
}

/* Inputs whose C order jumps a cache line an element (transposed, axes
 * permuted, Fortran order with a reversed axis) of at least
 * RELAYOUT_MIN_ELEMS (4096) elements: the blocking calls read them from a
 * C-order copy on a CPU device (core/relayout.c), the device-resident ones
 * as they lie, and count in memory order (tensor_memory_order). Every
 * layout, both orders, each dtype family, a static size; batched and count
 * too; against the reference on the strided view. */
static void test_transposed_inputs(void **state)
{
    (void)state;
    clnz_context *ctx = tu_context();
    struct {
        int rank;
        int64_t shape[3], strides[3], base;
    } views[] = {
        {2, {70, 90}, {1, 70}, 0},                   /* Fortran order */
        {3, {40, 3, 50}, {3, 1, 120}, 0},             /* a (50, 40, 3) array's axes (1, 2, 0) */
        {2, {64, 65}, {-1, 64}, 63},                  /* Fortran order, first axis reversed */
        {3, {5, 40, 41}, {40 * 41, 1, 40}, 0},        /* batches of transposed items */
    };
    for (int k = 0; k < tu_n_dtypes; ++k) {
        clnz_dtype dt = tu_dtypes[k];
        size_t es = clnz_dtype_size(dt), span = 8400;
        char *data = malloc(span * es);
        tu_fill(dt, data, span, 0.4);
        for (size_t v = 0; v < sizeof views / sizeof views[0]; ++v) {
            clnz_tensor t = {dt, views[v].rank, views[v].shape, views[v].strides};
            for (int layout = 0; layout < 3; ++layout) {
                clnz_nonzero_options o;
                clnz_nonzero_options_init(&o);
                o.layout = (clnz_layout)layout;
                o.index_type = (clnz_index_type)((layout + k) % 3);
                if (layout != CLNZ_LAYOUT_FLAT && v % 2)
                    o.order = CLNZ_ORDER_XY;
                check(&t, data, span, views[v].base, NULL, &o);
                o.has_size = 1, o.size = 1000, o.fill = 7;
                check(&t, data, span, views[v].base, NULL, &o);
            }
            const char *first = data + views[v].base * (int64_t)es;
            clnz_nonzero_options o;
            clnz_nonzero_options_init(&o);
            int64_t z, entries, count = -1;
            int per;
            free(tu_ref_nonzero(&t, first, NULL, &o, &z, &entries, &per));
            TU_CHECK(ctx, clnz_count(ctx, &t, first, NULL, &count));
            assert_int_equal(count, z);
            tu_expect_batched(ctx, &t, first, NULL, &o);
        }
        free(data);
    }
}

/* Copies of 4 MiB or more are split between threads (one a core, up to
 * 4) by rows of tiles, across the odometer's steps: a (1200, 1000) f32
 * Fortran-order view (19 rows of tiles) and a (700, 700, 3) array's
 * transpose (2, 1, 0) (700 steps of one row each), in rows and flat
 * layouts and through select, against the reference. */
static void test_transposed_copies_split_between_threads(void **state)
{
    (void)state;
    clnz_context *ctx = tu_context();
    size_t span = 1470000;
    float *data = malloc(span * sizeof *data);
    tu_fill(CLNZ_F32, data, span, 0.3);
    int64_t fs[2] = {1200, 1000}, ff[2] = {1, 1200}, ts[3] = {3, 700, 700}, tf[3] = {1, 3, 2100};
    clnz_tensor views[2] = {{CLNZ_F32, 2, fs, ff}, {CLNZ_F32, 3, ts, tf}};
    for (int v = 0; v < 2; ++v) {
        for (int layout = 0; layout < 3; layout += 2) {
            clnz_nonzero_options o;
            clnz_nonzero_options_init(&o);
            o.layout = (clnz_layout)layout;
            check(&views[v], data, span, 0, NULL, &o);
        }
        clnz_nonzero_options o;
        clnz_nonzero_options_init(&o);
        o.layout = CLNZ_LAYOUT_ROWS;
        int64_t z, entries;
        int per;
        int64_t *at = tu_ref_nonzero(&views[v], data, NULL, &o, &z, &entries, &per);
        clnz_array out;
        TU_CHECK(ctx, clnz_select(ctx, &views[v], data, NULL, NULL, NULL, &out));
        assert_int_equal(out.shape[0], z);
        for (int64_t e = 0; e < z; ++e) {
            int64_t off = 0;
            for (int d = 0; d < views[v].rank; ++d)
                off += at[e * per + d] * views[v].strides[d];
            if (memcmp((float *)out.data + e, data + off, sizeof(float)))
                fail_msg("select, view %d: value %lld of %lld differs", v, (long long)e,
                         (long long)z);
        }
        clnz_array_free(&out);
        free(at);
    }
    free(data);
}

/* When the blocking calls copy an input into C order first
 * (relayout_pays): a transposed array of 4096 elements or more on a CPU
 * device, and never a small, C-order, 1-D stepped, broadcast or
 * overlapping one (review 38: a sliding window's copy was 90 times its
 * array, and shape (2, 64, ..., 64) f64 with strides (1, ..., 1, 8), 2^61
 * elements over a few KiB, overflowed the copy's size), nor one whose copy
 * exceeds the allocation limit. */
static void check_pays(clnz_context *ctx, clnz_dtype dt, int rank, const int64_t *shape,
                       const int64_t *strides, int want, const char *what)
{
    clnz_tensor t = {dt, rank, shape, strides};
    tensor_info ti;
    TU_CHECK(ctx, tensor_check(ctx, &t, &ti));
    if (relayout_pays(ctx, &ti) != want)
        fail_msg("%s: relayout_pays %d, want %d", what, !want, want);
}

static void test_which_inputs_are_copied_in_c_order(void **state)
{
    (void)state;
    clnz_context *ctx = tu_context(), *small = tu_context_limited("64K");
    int cpu = ctx->is_cpu;
    int64_t fs[2] = {70, 90}, ff[2] = {1, 70}, cs[2] = {90, 1}, tiny[2] = {60, 50}, tf[2] = {1, 60};
    check_pays(ctx, CLNZ_F32, 2, fs, ff, cpu, "Fortran order");
    check_pays(ctx, CLNZ_F32, 2, fs, cs, 0, "C order");
    check_pays(ctx, CLNZ_F32, 2, tiny, tf, 0, "3000 elements");
    int64_t one[1] = {100000}, step[1] = {16}, zero[1] = {0};
    check_pays(ctx, CLNZ_F32, 1, one, step, 0, "1-D, every 16th");
    int64_t bs[2] = {300, 100}, bf[2] = {1, 0};
    check_pays(ctx, CLNZ_F32, 2, bs, bf, 0, "broadcast");
    check_pays(ctx, CLNZ_F32, 1, one, zero, 0, "1-D broadcast");
    int64_t ws[3] = {901, 1000, 100}, wf[3] = {1000, 1, 1000};
    check_pays(ctx, CLNZ_F32, 3, ws, wf, 0, "sliding window");
    int64_t hs[11], hf[11];
    for (int d = 0; d < 11; ++d)
        hs[d] = d ? 64 : 2, hf[d] = d < 10 ? 1 : 8;
    check_pays(ctx, CLNZ_F64, 11, hs, hf, 0, "2^61 overlapping elements");
    int64_t ls[2] = {200, 100}, lf[2] = {1, 200};
    check_pays(small, CLNZ_F32, 2, ls, lf, 0, "a copy above a 64 KiB limit");
    check_pays(small, CLNZ_U8, 2, ls, lf, cpu, "a copy within a 64 KiB limit");
    clnz_context_release(small);
}

/* The device-resident call (int64 entries) with a capacity of a third of
 * the count, into a buffer of exactly that much and a guard: nothing past
 * the capacity is written, and in rows and flat the entries are the
 * reference's first. */
static void check_cut_to_a_third(const clnz_tensor *t, const void *data, size_t bytes,
                                 const clnz_nonzero_options *o, size_t guard)
{
    clnz_context *ctx = tu_context();
    int64_t count, entries;
    int per;
    int64_t *want = tu_ref_nonzero(t, data, NULL, o, &count, &entries, &per);
    uint64_t cap = (uint64_t)count / 3;
    size_t idx = (size_t)cap * (size_t)per;
    int64_t *host = malloc((idx + guard) * 8);
    for (size_t i = 0; i < idx + guard; ++i)
        host[i] = -77;
    cl_mem in = tu_buffer(bytes, data), out = tu_buffer((idx + guard) * 8, host),
           cnt = tu_buffer(8, NULL);
    TU_CHECK(ctx, clnz_nonzero_enqueue(ctx, t, in, 0, NULL, o, out, 0, cap, cnt, 0, 0, NULL, NULL));
    tu_read(out, 0, (idx + guard) * 8, host);
    for (size_t i = idx; i < idx + guard; ++i)
        if (host[i] != -77)
            fail_msg("layout %d rank %d: slot %zu past the capacity was written", o->layout,
                     t->rank, i);
    if (o->layout != CLNZ_LAYOUT_COLUMNS)
        assert_memory_equal(host, want, idx * 8);
    free(want);
    free(host);
    clReleaseMemObject(in);
    clReleaseMemObject(out);
    clReleaseMemObject(cnt);
}

/* Regression: dense blocks used to write past a capacity smaller than the
 * count. */
static void test_truncation_stays_inside_the_capacity(void **state)
{
    (void)state;
    int64_t n = 20000;
    uint8_t *data = malloc((size_t)n);
    tu_fill(CLNZ_U8, data, (size_t)n, 0.9);
    int64_t shapes[2][2] = {{n}, {100, 200}};
    for (int v = 0; v < 2; ++v) {
        clnz_tensor t = {CLNZ_U8, v + 1, shapes[v], NULL};
        for (int layout = 0; layout < 3; ++layout) {
            clnz_nonzero_options o;
            clnz_nonzero_options_init(&o);
            o.layout = (clnz_layout)layout;
            check_cut_to_a_third(&t, data, (size_t)n, &o, 4096);
        }
    }
    free(data);
}

/* One f32 input of the rows tests, at one launch (its index l in
 * row_launches) and one density (index di). */
typedef void (*rows_case)(const clnz_tensor *t, const float *data, int64_t n, size_t l, int v,
                          size_t di);

/* Launches of the rows tests: PoCL's default and 64 items (selection bits
 * kept), 100 and 1000 items (not kept; 1000: chunks of many rows that
 * start and end mid-row). */
static const tu_launch row_launches[] = {{0, 0}, {4, 64}, {3, 100}, {2, 1000}};

/* Runs each_case on f32 inputs of each shape v at each density, at each
 * of row_launches, then puts the default launch back. */
static void each_rows_case(const int64_t (*shapes)[8], const int *ranks, int nshapes,
                           const double *dens, size_t ndens, rows_case each_case)
{
    clnz_context *ctx = tu_context();
    for (size_t l = 0; l < sizeof row_launches / sizeof *row_launches; ++l) {
        TU_CHECK(ctx, clnz_context_set_launch(ctx, row_launches[l].wg, row_launches[l].items));
        for (int v = 0; v < nshapes; ++v) {
            clnz_tensor t = {CLNZ_F32, ranks[v], shapes[v], NULL};
            int64_t n = 1;
            for (int d = 0; d < ranks[v]; ++d)
                n *= shapes[v][d];
            float *data = malloc((size_t)n * 4);
            for (size_t di = 0; di < ndens; ++di) {
                tu_fill(CLNZ_F32, data, (size_t)n, dens[di]);
                each_case(&t, data, n, l, v, di);
            }
            free(data);
        }
    }
    TU_CHECK(ctx, clnz_context_set_launch(ctx, 0, 0));
}

static void short_rows_case(const clnz_tensor *t, const float *data, int64_t n, size_t l,
                            int v, size_t di)
{
    clnz_nonzero_options o;
    clnz_nonzero_options_init(&o);
    o.layout = (clnz_layout)(di % 2 ? CLNZ_LAYOUT_COLUMNS : CLNZ_LAYOUT_ROWS);
    o.index_type = (clnz_index_type)((l + di) % 2);
    o.order = v % 2 ? CLNZ_ORDER_XY : CLNZ_ORDER_ROW_MAJOR;
    check(t, data, (size_t)n, 0, NULL, &o);
    o.layout = CLNZ_LAYOUT_ROWS; /* cut short at a third of the count */
    o.index_type = CLNZ_INDEX_INT64;
    check_cut_to_a_third(t, data, (size_t)n * 4, &o, 64);
}

/* Rows shorter than a 32-element block (a point cloud's 3, a rank 8
 * tensor's 16) are staged across rows when a work-item's chunk is sparse
 * enough (kernels/nonzero.cl, ND_EMIT_ACROSS), and go element by element
 * when dense: both, at launches whose chunks start mid-row and end in a
 * partial block (items 100 and 1000: no selection bits kept; 64, and
 * PoCL's default of 4096: kept), in rows and columns, both orders and
 * index widths, with the output cut short by the capacity too. Rows of
 * rank 3 and 4 whose dimension rank - 2 holds two blocks or more take
 * spans of several rows in the rows layout instead (5 x 1000 x 2, 300 x 4
 * x 16: exactly two blocks), but for a very sparse chunk (1 %, across
 * rows: ACROSS_BEFORE_SPANS); 500 x 2 x 20 and 300 x 3 x 21 stay below
 * two blocks. */
static void test_short_rows_across(void **state)
{
    (void)state;
    static const int64_t shapes[7][8] = {
        {4099, 3},   {2, 4, 4, 4, 4, 4, 4, 16}, {700, 31}, {5, 1000, 2}, {500, 2, 20}, {300, 3, 21},
        {300, 4, 16}};
    static const int ranks[7] = {2, 8, 2, 3, 3, 3, 3};
    static const double dens[] = {0.01, 0.2, 0.7};
    each_rows_case(shapes, ranks, 7, dens, sizeof dens / sizeof *dens, short_rows_case);
}

/* Entries of the last 3 of 4 dimensions for the fifth shape of
 * test_rows_of_rank_3_and_4, whole entries for the others. */
static const int rank34_widths[11] = {0, 0, 0, 0, 3, 0, 0, 0, 0, 0, 0};

static void rank34_case(const clnz_tensor *t, const float *data, int64_t n, size_t l, int v,
                        size_t di)
{
    (void)l;
    for (int it = 0; it < 2; ++it) {
        clnz_nonzero_options o;
        clnz_nonzero_options_init(&o);
        o.layout = CLNZ_LAYOUT_ROWS;
        o.index_type = (clnz_index_type)it;
        o.order = (v + it + (int)di) % 2 ? CLNZ_ORDER_XY : CLNZ_ORDER_ROW_MAJOR;
        o.width = rank34_widths[v];
        check(t, data, (size_t)n, 0, NULL, &o);
    }
    clnz_nonzero_options o;
    clnz_nonzero_options_init(&o);
    o.layout = CLNZ_LAYOUT_ROWS;
    check_cut_to_a_third(t, data, (size_t)n * 4, &o, 64);
}

/* Rows of rank 3 and 4 are written a whole entry at a time from a
 * template of the row's coordinates, and a row's last part of a block is
 * staged with it where that block can be read (the input's last elements
 * go one by one); rows of up to 128 elements several whole rows to a span
 * where two blocks' worth fit (ND_MULTI_ROWS), the span ending at the last
 * row of dimension rank - 2 (6 rows of 20: a carry past it every span; 14
 * rows of 40: spans of 6, 6 and 2), rows of 1 and of 128 the edges, 129 past
 * them, 37 rows of 100 for chunks that start mid-dimension at every launch:
 * rows of 40, 64, 70 and 33,
 * densities from sparse to all, both orders and index widths, entries of
 * the last 3 of 4 dimensions (width 3 of a (1, 6, 5, 70) input), at
 * launches that keep the selection bits and one that does not, the output
 * cut short by the capacity too. */
static void test_rows_of_rank_3_and_4(void **state)
{
    (void)state;
    clnz_context *ctx = tu_context();
    static const int64_t shapes[11][8] = {
        {3, 5, 7, 40},  {2, 3, 4, 64}, {6, 5, 70},     {4, 9, 33},   {1, 6, 5, 70}, {5, 6, 20},
        {3, 4, 300, 1}, {2, 5, 128},   {2, 3, 3, 129}, {3, 37, 100}, {2, 3, 14, 40}};
    static const int ranks[11] = {4, 4, 3, 3, 4, 3, 4, 3, 4, 3, 4};
    static const double dens[] = {0.1, 0.5, 1.0};
    /* the writing pass these rows go through (a GPU would take look-back) */
    TU_CHECK(ctx, clnz_context_set_strategy(ctx, CLNZ_STRATEGY_TWO_PASS));
    each_rows_case(shapes, ranks, 11, dens, sizeof dens / sizeof *dens, rank34_case);
    TU_CHECK(ctx, clnz_context_set_strategy(ctx, CLNZ_STRATEGY_AUTO));
}

/* Predicates on every dtype through the vector paths (full chunks, 32-element
 * blocks) of count and nonzero, not only through the mask kernel. */
static void test_predicates_every_dtype(void **state)
{
    (void)state;
    clnz_predicate ps[] = {clnz_pred_nonzero(),           clnz_pred_int(CLNZ_OP_GT, 2),
                           clnz_pred_int(CLNZ_OP_EQ, -1),  clnz_pred_float(CLNZ_OP_LE, 0.5),
                           clnz_pred_float(CLNZ_OP_NE, 0), clnz_pred_float(CLNZ_OP_LT, NAN),
                           clnz_pred_uint(CLNZ_OP_GE, 18446744073709551615ULL)};
    int64_t n = 40000;
    int64_t shape[] = {n};
    for (int kd = 0; kd < tu_n_dtypes; ++kd) {
        clnz_dtype dt = tu_dtypes[kd];
        void *data = malloc((size_t)n * 8);
        tu_fill(dt, data, (size_t)n, 0.6);
        clnz_tensor t = {dt, 1, shape, NULL};
        for (size_t k = 0; k < sizeof ps / sizeof ps[0]; ++k) {
            clnz_nonzero_options o;
            clnz_nonzero_options_init(&o);
            o.layout = (clnz_layout)(k % 2 ? CLNZ_LAYOUT_FLAT : CLNZ_LAYOUT_ROWS);
            check(&t, data, (size_t)n, 0, &ps[k], &o);
            int64_t want = 0, got = -1;
            for (int64_t i = 0; i < n; ++i)
                want += tu_ref_selected(dt,
                                        (const char *)data + i * (int64_t)clnz_dtype_size(t.dtype),
                                        &ps[k]);
            TU_CHECK(tu_context(), clnz_count(tu_context(), &t, data, &ps[k], &got));
            assert_int_equal(got, want);
        }
        free(data);
    }
}

static void test_count_matches(void **state)
{
    (void)state;
    clnz_context *ctx = tu_context();
    int64_t n = 123457;
    float *data = malloc((size_t)n * 4);
    tu_fill(CLNZ_F32, data, (size_t)n, 0.5);
    int64_t shape[] = {n};
    clnz_tensor t = {CLNZ_F32, 1, shape, NULL};
    clnz_predicate ps[] = {clnz_pred_nonzero(), clnz_pred_float(CLNZ_OP_GE, 0.5),
                           clnz_pred_int(CLNZ_OP_LT, 0)};
    for (int k = 0; k < 3; ++k) {
        int64_t want = 0, got = -1;
        for (int64_t i = 0; i < n; ++i)
            want += tu_ref_selected(CLNZ_F32, &data[i], &ps[k]);
        TU_CHECK(ctx, clnz_count(ctx, &t, data, &ps[k], &got));
        assert_int_equal(got, want);
        cl_mem in = tu_buffer((size_t)n * 4, data), c = tu_buffer(8, NULL);
        TU_CHECK(ctx, clnz_count_enqueue(ctx, &t, in, 0, &ps[k], c, 0, 0, NULL, NULL));
        uint64_t dc = 0;
        tu_read(c, 0, 8, &dc);
        assert_int_equal(dc, want);
        clReleaseMemObject(in);
        clReleaseMemObject(c);
    }
    free(data);
}

int main(void)
{
    tu_seed("test_nonzero");
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_ranks_layouts_index_types),
        cmocka_unit_test(test_every_launch_shape),
        cmocka_unit_test(test_empty_all_and_none_selected),
        cmocka_unit_test(test_width_and_static_capacity),
        cmocka_unit_test(test_rank0),
        cmocka_unit_test(test_rank32),
        cmocka_unit_test(test_strided_views),
        cmocka_unit_test(test_transposed_inputs),
        cmocka_unit_test(test_which_inputs_are_copied_in_c_order),
        cmocka_unit_test(test_transposed_copies_split_between_threads),
        cmocka_unit_test(test_truncation_stays_inside_the_capacity),
        cmocka_unit_test(test_short_rows_across),
        cmocka_unit_test(test_rows_of_rank_3_and_4),
        cmocka_unit_test(test_predicates_every_dtype),
        cmocka_unit_test(test_count_matches),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    tu_context_done();
    return rc;
}
