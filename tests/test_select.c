/* test_select.c: select (x[mask]) and where(cond, x, y) against sequential
 * references written here: random dtypes, ranks 0..5, strided and reversed
 * views, masks of another dtype, broadcasting, scalars, every launch shape,
 * the blocking and the device-resident calls, and the errors. */
#include "testutil.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define MAXR CLNZ_MAX_RANK

/* Element offset of C-order logical element i of a view. */
static int64_t offset_of(int rank, const int64_t *shape, const int64_t *strides, uint64_t i)
{
    int64_t off = 0;
    for (int d = rank - 1; d >= 0; --d) {
        off += (int64_t)(i % (uint64_t)shape[d]) * strides[d];
        i /= (uint64_t)shape[d];
    }
    return off;
}

static uint64_t count_of(int rank, const int64_t *shape)
{
    uint64_t n = 1;
    for (int d = 0; d < rank; ++d)
        n *= (uint64_t)shape[d];
    return n;
}

/* A random view: a buffer `span` elements long, element 0 at *base, with
 * C-order (kind 0), Fortran-order (1) or first-axis-reversed (2) strides
 * over `shape`. */
static int view_kind = -1; /* a test's choice of the kind below, or -1: random */
static void *random_view(clnz_dtype dt, int rank, const int64_t *shape, int64_t *strides,
                         int64_t *base, size_t *span, double density)
{
    int kind = view_kind >= 0 ? view_kind : (int)(tu_rand() % 3);
    int64_t s = 1;
    for (int k = 0; k < rank; ++k) {
        int d = kind == 1 ? k : rank - 1 - k; /* Fortran: first dimension fastest */
        strides[d] = s;
        s *= shape[d] ? shape[d] : 1;
    }
    *span = (size_t)s;
    *base = 0;
    if (kind == 2 && rank > 0 && shape[0] > 0) { /* first dimension reversed */
        *base = (shape[0] - 1) * strides[0];
        strides[0] = -strides[0];
    }
    void *buf = calloc(*span * clnz_dtype_size(dt) + 8, 1); /* + 8: the tests upload 8 more */
    tu_fill(dt, buf, *span, density);
    return buf;
}

static void random_shape(int rank, int64_t *shape)
{
    for (int d = 0; d < rank; ++d)
        shape[d] = (int64_t)(tu_rand() % (rank > 3 ? 7 : 40));
    if (tu_rand() % 4 && rank > 0) /* mostly no empty dimension */
        for (int d = 0; d < rank; ++d)
            shape[d] += shape[d] == 0;
}

/* ---- select ---- */
static void check_select(clnz_dtype xd, clnz_dtype md, int with_mask, const clnz_predicate *p,
                         int rank, const int64_t *shape)
{
    clnz_context *ctx = tu_context();
    int64_t xs[MAXR], ms[MAXR], xb, mb;
    size_t xspan, mspan, es = clnz_dtype_size(xd);
    unsigned char *x = random_view(xd, rank, shape, xs, &xb, &xspan, 0.5);
    unsigned char *m = with_mask ? random_view(md, rank, shape, ms, &mb, &mspan, 0.3) : NULL;
    clnz_tensor xt = {xd, rank, shape, xs}, mt = {md, rank, shape, ms};

    /* reference */
    uint64_t n = count_of(rank, shape), z = 0;
    unsigned char *want = malloc(n * es + 1);
    for (uint64_t i = 0; i < n; ++i) {
        const unsigned char *xe = x + (xb + offset_of(rank, shape, xs, i)) * (int64_t)es;
        const unsigned char *me =
            with_mask ? m + (mb + offset_of(rank, shape, ms, i)) * (int64_t)clnz_dtype_size(md)
                      : xe;
        if (tu_ref_selected(with_mask ? md : xd, me, p))
            memcpy(want + z++ * es, xe, es);
    }

    /* blocking */
    clnz_array got;
    TU_CHECK(ctx, clnz_select(ctx, &xt, x + xb * (int64_t)es, with_mask ? &mt : NULL,
                              with_mask ? m + mb * (int64_t)clnz_dtype_size(md) : NULL, p, &got));
    assert_int_equal(got.rank, 1);
    assert_int_equal(got.dtype, xd);
    assert_int_equal(got.shape[0], (int64_t)z);
    if (z && memcmp(got.data, want, z * es) != 0)
        fail_msg("blocking select differs (x %s, mask %s, rank %d, z %llu)", clnz_dtype_name(xd),
                 with_mask ? clnz_dtype_name(md) : "none", rank, (unsigned long long)z);
    clnz_array_free(&got);

    /* device-resident, with a capacity one short (the rest must stay untouched) */
    uint64_t cap = z ? z - 1 : 0;
    cl_mem xbuf = tu_buffer(xspan * es + 8, x);
    cl_mem mbuf = with_mask ? tu_buffer(mspan * clnz_dtype_size(md) + 8, m) : NULL;
    unsigned char *sentinel = malloc(z * es + 8);
    memset(sentinel, 0xa5, z * es + 8);
    cl_mem out = tu_buffer(z * es + 8, sentinel);
    cl_mem cnt = tu_buffer(8, NULL);
    cl_event ev = NULL;
    TU_CHECK(ctx, clnz_select_enqueue(ctx, &xt, xbuf, (size_t)xb * es, with_mask ? &mt : NULL,
                                      mbuf, with_mask ? (size_t)mb * clnz_dtype_size(md) : 0, p,
                                      out, 0, cap, cnt, 0, 0, NULL, &ev));
    assert_int_equal(clWaitForEvents(1, &ev), CL_SUCCESS);
    clReleaseEvent(ev);
    uint64_t dz = 0;
    tu_read(cnt, 0, 8, &dz);
    assert_int_equal(dz, z);
    unsigned char *dev = malloc(z * es + 8);
    tu_read(out, 0, z * es + 8, dev);
    if (cap && memcmp(dev, want, cap * es) != 0)
        fail_msg("device select differs (x %s, rank %d)", clnz_dtype_name(xd), rank);
    for (size_t b = cap * es; b < z * es + 8; ++b)
        if (dev[b] != 0xa5)
            fail_msg("device select wrote byte %zu past its capacity of %llu values", b,
                     (unsigned long long)cap);
    free(dev);
    free(sentinel);
    clReleaseMemObject(xbuf);
    if (mbuf)
        clReleaseMemObject(mbuf);
    clReleaseMemObject(out);
    clReleaseMemObject(cnt);
    free(want);
    free(x);
    free(m);
}

static void test_select_random(void **state)
{
    (void)state;
    clnz_predicate nz = clnz_pred_nonzero(), gt = clnz_pred_int(CLNZ_OP_GT, 0);
    for (int k = 0; k < 16; ++k) {
        int rank = (int)(tu_rand() % 6);
        int64_t shape[MAXR];
        random_shape(rank, shape);
        clnz_dtype xd = tu_random_dtype();
        clnz_dtype md = tu_random_dtype();
        check_select(xd, md, (int)(k % 3 != 0), k % 2 ? &gt : &nz, rank, shape);
    }
}

/* Fortran-order x and masks of 6300 elements, above RELAYOUT_MIN_ELEMS:
 * the blocking call reads them from C-order copies on a CPU device
 * (core/relayout.c), x alone too (its copy is then both the mask and the
 * values); each dtype family, both ways and against the reference. */
static void test_select_fortran_order(void **state)
{
    (void)state;
    int64_t shape[2] = {70, 90};
    clnz_predicate nz = clnz_pred_nonzero();
    view_kind = 1;
    for (int k = 0; k < tu_n_dtypes; ++k)
        for (int with_mask = 0; with_mask < 2; ++with_mask)
            check_select(tu_dtypes[k], tu_dtypes[(k + 1) % tu_n_dtypes], with_mask, &nz, 2,
                         shape);
    view_kind = -1;
}

static void test_select_every_launch_and_length(void **state)
{
    (void)state;
    clnz_context *ctx = tu_context();
    clnz_predicate nz = clnz_pred_nonzero();
    static const int64_t lengths[] = {1, 33, 70001};
    for (int l = 0; l < tu_n_launches; ++l) {
        TU_CHECK(ctx, clnz_context_set_launch(ctx, tu_launches[l].wg, tu_launches[l].items));
        for (int k = 0; k < 3; ++k) {
            int64_t shape[1] = {lengths[k]};
            check_select(CLNZ_F32, CLNZ_U8, 1, &nz, 1, shape);
        }
        int64_t shape2[2] = {123, 77};
        check_select(CLNZ_U8, CLNZ_U8, 0, &nz, 2, shape2);
    }
    TU_CHECK(ctx, clnz_context_set_launch(ctx, 0, 0));
}

static void test_select_errors(void **state)
{
    (void)state;
    clnz_context *ctx = tu_context();
    int64_t s1[2] = {2, 3}, s2[2] = {3, 2};
    float x[6] = {0};
    unsigned char m[6] = {0};
    clnz_tensor xt = {CLNZ_F32, 2, s1, NULL}, mt = {CLNZ_U8, 2, s2, NULL};
    clnz_array out;
    assert_int_equal(clnz_select(ctx, &xt, x, &mt, m, NULL, &out), CLNZ_ERROR_SHAPE_MISMATCH);
    assert_non_null(strstr(clnz_context_message(ctx), "(3, 2)"));
    assert_non_null(strstr(clnz_context_message(ctx), "(2, 3)"));
    assert_null(out.data);
    assert_int_equal(clnz_select(ctx, &xt, x, NULL, NULL, NULL, NULL),
                     CLNZ_ERROR_INVALID_ARGUMENT);
}

/* ---- where ---- */
typedef struct {
    int is_array;
    clnz_dtype dt;
    int rank;
    int64_t shape[MAXR], strides[MAXR], base;
    size_t span;
    unsigned char *data;
    clnz_tensor t;
    clnz_operand op;
} operand;

/* An operand of the output shape with leading dimensions dropped and some
 * dimensions set to 1 (so that it broadcasts). */
static void make_operand(operand *o, clnz_dtype dt, int out_rank, const int64_t *out_shape,
                         double density)
{
    memset(o, 0, sizeof *o);
    o->is_array = 1;
    o->dt = dt;
    o->rank = out_rank - (int)(tu_rand() % (out_rank + 1));
    for (int d = 0; d < o->rank; ++d) {
        int64_t e = out_shape[out_rank - o->rank + d];
        o->shape[d] = tu_rand() % 3 == 0 ? 1 : e;
    }
    o->data = random_view(dt, o->rank, o->shape, o->strides, &o->base, &o->span, density);
    o->t = (clnz_tensor){dt, o->rank, o->shape, o->strides};
    o->op = clnz_operand_array(&o->t);
}

/* Offset of output element i in a broadcast operand. */
static int64_t bcast_offset(const operand *o, int out_rank, const int64_t *out_shape, uint64_t i)
{
    int64_t off = o->base;
    for (int d = out_rank - 1; d >= 0; --d) {
        int64_t c = (int64_t)(i % (uint64_t)out_shape[d]);
        i /= (uint64_t)out_shape[d];
        int k = d - (out_rank - o->rank);
        if (k >= 0 && o->shape[k] != 1)
            off += c * o->strides[k];
    }
    return off;
}

static void check_where(operand *c, operand *x, operand *y, clnz_dtype want_dt, int out_rank,
                        const int64_t *out_shape, const unsigned char *xs, const unsigned char *ys)
{
    clnz_context *ctx = tu_context();
    size_t es = clnz_dtype_size(want_dt), cs = clnz_dtype_size(c->dt);
    uint64_t n = count_of(out_rank, out_shape);
    unsigned char *want = malloc(n * es + 1);
    clnz_predicate nz = clnz_pred_nonzero();
    for (uint64_t i = 0; i < n; ++i) {
        const unsigned char *ce = c->data + bcast_offset(c, out_rank, out_shape, i) * (int64_t)cs;
        const unsigned char *src =
            tu_ref_selected(c->dt, ce, &nz)
                ? (x->is_array ? x->data + bcast_offset(x, out_rank, out_shape, i) * (int64_t)es
                               : xs)
                : (y->is_array ? y->data + bcast_offset(y, out_rank, out_shape, i) * (int64_t)es
                               : ys);
        memcpy(want + i * es, src, es);
    }
    clnz_dtype rdt;
    int rrank;
    int64_t rshape[MAXR];
    TU_CHECK(ctx, clnz_where_result(ctx, &c->t, &x->op, &y->op, &rdt, &rrank, rshape));
    assert_int_equal(rdt, want_dt);
    assert_int_equal(rrank, out_rank);
    for (int d = 0; d < out_rank; ++d)
        assert_int_equal(rshape[d], out_shape[d]);

    clnz_array got;
    TU_CHECK(ctx, clnz_where(ctx, &c->t, c->data + c->base * (int64_t)cs, NULL, &x->op,
                             x->is_array ? x->data + x->base * (int64_t)es : NULL, &y->op,
                             y->is_array ? y->data + y->base * (int64_t)es : NULL, &got));
    assert_int_equal(got.dtype, want_dt);
    assert_int_equal(got.rank, out_rank);
    if (n && memcmp(got.data, want, n * es) != 0)
        fail_msg("blocking where differs (rank %d, n %llu, dtype %s)", out_rank,
                 (unsigned long long)n, clnz_dtype_name(want_dt));
    clnz_array_free(&got);

    cl_mem cb = tu_buffer(c->span * cs + 8, c->data);
    cl_mem xb = x->is_array ? tu_buffer(x->span * es + 8, x->data) : NULL;
    cl_mem yb = y->is_array ? tu_buffer(y->span * es + 8, y->data) : NULL;
    cl_mem out = tu_buffer(n * es + 2 * es, NULL);
    cl_event ev = NULL;
    TU_CHECK(ctx, clnz_where_enqueue(ctx, &c->t, cb, (size_t)c->base * cs, NULL, &x->op, xb,
                                     x->is_array ? (size_t)x->base * es : 0, &y->op, yb,
                                     y->is_array ? (size_t)y->base * es : 0, out, es, 0, NULL,
                                     &ev));
    assert_int_equal(clWaitForEvents(1, &ev), CL_SUCCESS);
    clReleaseEvent(ev);
    unsigned char *dev = malloc(n * es + 1);
    if (n)
        tu_read(out, es, n * es, dev);
    if (n && memcmp(dev, want, n * es) != 0)
        fail_msg("device where differs (rank %d)", out_rank);
    free(dev);
    clReleaseMemObject(cb);
    if (xb)
        clReleaseMemObject(xb);
    if (yb)
        clReleaseMemObject(yb);
    clReleaseMemObject(out);
    free(want);
}

static void free_operand(operand *o) { free(o->data); }

static void test_where_broadcast_random(void **state)
{
    (void)state;
    for (int k = 0; k < 16; ++k) {
        int rank = (int)(tu_rand() % 6);
        int64_t shape[MAXR];
        random_shape(rank, shape);
        clnz_dtype dt = tu_random_dtype();
        operand c, x, y;
        make_operand(&c, tu_random_dtype(), rank, shape, 0.5);
        make_operand(&x, dt, rank, shape, 0.9);
        make_operand(&y, dt, rank, shape, 0.9);
        /* the output's shape is the broadcast of the three: the test's own rule */
        int r = c.rank > x.rank ? c.rank : x.rank;
        r = r > y.rank ? r : y.rank;
        int64_t out[MAXR];
        const operand *ops[3] = {&c, &x, &y};
        for (int d = 0; d < r; ++d) {
            out[d] = 1;
            for (int j = 0; j < 3; ++j) {
                int kk = d - (r - ops[j]->rank);
                if (kk >= 0 && ops[j]->shape[kk] != 1)
                    out[d] = ops[j]->shape[kk];
            }
        }
        check_where(&c, &x, &y, dt, r, out, NULL, NULL);
        free_operand(&c);
        free_operand(&x);
        free_operand(&y);
    }
}

static void test_where_scalars(void **state)
{
    (void)state;
    clnz_context *ctx = tu_context();
    int64_t shape[2] = {37, 41};
    operand c, x, y;
    make_operand(&c, CLNZ_F32, 2, shape, 0.5);
    int out_rank = c.rank;
    int64_t out[MAXR];
    memcpy(out, c.shape, sizeof out);

    /* array x (i16) and an int scalar y */
    make_operand(&x, CLNZ_I16, out_rank, out, 0.9);
    for (int d = 0; d < x.rank; ++d) /* x may not stretch the output */
        out[out_rank - x.rank + d] =
            x.shape[d] != 1 ? x.shape[d] : out[out_rank - x.rank + d];
    memset(&y, 0, sizeof y);
    y.op = clnz_operand_int(-7);
    int16_t ys = -7;
    check_where(&c, &x, &y, CLNZ_I16, out_rank, out, NULL, (unsigned char *)&ys);
    /* a float scalar that is an integer is fine; 0.5 and 40000 are not */
    y.op = clnz_operand_float(-7.0);
    check_where(&c, &x, &y, CLNZ_I16, out_rank, out, NULL, (unsigned char *)&ys);
    clnz_dtype dt;
    int rk;
    int64_t sh[MAXR];
    y.op = clnz_operand_float(0.5);
    assert_int_equal(clnz_where_result(ctx, &c.t, &x.op, &y.op, &dt, &rk, sh),
                     CLNZ_ERROR_INVALID_VALUE);
    y.op = clnz_operand_int(40000);
    assert_int_equal(clnz_where_result(ctx, &c.t, &x.op, &y.op, &dt, &rk, sh),
                     CLNZ_ERROR_INVALID_VALUE);
    y.op = clnz_operand_float(NAN);
    assert_int_equal(clnz_where_result(ctx, &c.t, &x.op, &y.op, &dt, &rk, sh),
                     CLNZ_ERROR_INVALID_VALUE);
    free_operand(&x);

    /* two scalars: int64, or float64 if either is a float */
    operand xs_, ys_;
    memset(&xs_, 0, sizeof xs_);
    memset(&ys_, 0, sizeof ys_);
    xs_.op = clnz_operand_int(3);
    ys_.op = clnz_operand_int(-4);
    int64_t a = 3, b = -4;
    check_where(&c, &xs_, &ys_, CLNZ_I64, c.rank, c.shape, (unsigned char *)&a,
                (unsigned char *)&b);
    ys_.op = clnz_operand_float(2.5);
    double fa = 3.0, fb = 2.5;
    check_where(&c, &xs_, &ys_, CLNZ_F64, c.rank, c.shape, (unsigned char *)&fa,
                (unsigned char *)&fb);
    /* a float32 array and a float scalar: the scalar rounded to float32 */
    make_operand(&x, CLNZ_F32, 0, NULL, 0.9); /* rank 0 */
    ys_.op = clnz_operand_float(0.1);
    float f01 = 0.1f;
    check_where(&c, &x, &ys_, CLNZ_F32, c.rank, c.shape, NULL, (unsigned char *)&f01);
    /* integers into a float array: rounded to nearest even once, not
     * refused (2^24 + 1 is 2^24; 2^60 + 2^36 + 1 is past the tie, so it
     * rounds up, where a detour through double would tie to 2^60) */
    ys_.op = clnz_operand_int((1 << 24) + 1);
    float f24 = 16777216.0f;
    check_where(&c, &x, &ys_, CLNZ_F32, c.rank, c.shape, NULL, (unsigned char *)&f24);
    ys_.op = clnz_operand_int(((int64_t)1 << 60) + ((int64_t)1 << 36) + 1);
    float f60 = ldexpf(1.0f, 60) + ldexpf(1.0f, 37);
    check_where(&c, &x, &ys_, CLNZ_F32, c.rank, c.shape, NULL, (unsigned char *)&f60);
    ys_.op = clnz_operand_uint(UINT64_MAX);
    float f64max = ldexpf(1.0f, 64);
    check_where(&c, &x, &ys_, CLNZ_F32, c.rank, c.shape, NULL, (unsigned char *)&f64max);
    free_operand(&x);
    make_operand(&x, CLNZ_F16, 0, NULL, 0.9); /* 65519 is f16's largest; 65520 and up inf */
    const struct {
        int64_t v;
        uint16_t bits;
    } halves[] = {{65519, 0x7bff}, {65520, 0x7c00}, {70000, 0x7c00}, {-70000, 0xfc00},
                  {2049, 0x6800}, {2051, 0x6802}};
    for (size_t i = 0; i < sizeof halves / sizeof halves[0]; ++i) {
        ys_.op = clnz_operand_int(halves[i].v);
        check_where(&c, &x, &ys_, CLNZ_F16, c.rank, c.shape, NULL,
                    (const unsigned char *)&halves[i].bits);
    }
    free_operand(&x);
    free_operand(&c);
}

static void test_where_every_launch(void **state)
{
    (void)state;
    clnz_context *ctx = tu_context();
    for (int l = 0; l < tu_n_launches; ++l) {
        TU_CHECK(ctx, clnz_context_set_launch(ctx, tu_launches[l].wg, tu_launches[l].items));
        int64_t shape[3] = {5, 77, 131};
        operand c, x, y;
        make_operand(&c, CLNZ_U8, 3, shape, 0.5);
        c.rank = 3; /* full-shape cond, then x strided and y broadcast */
        free(c.data);
        memcpy(c.shape, shape, sizeof shape);
        c.data = random_view(CLNZ_U8, 3, c.shape, c.strides, &c.base, &c.span, 0.5);
        c.t = (clnz_tensor){CLNZ_U8, 3, c.shape, c.strides};
        make_operand(&x, CLNZ_F32, 3, shape, 0.9);
        make_operand(&y, CLNZ_F32, 3, shape, 0.9);
        check_where(&c, &x, &y, CLNZ_F32, 3, shape, NULL, NULL);
        free_operand(&c);
        free_operand(&x);
        free_operand(&y);
    }
    TU_CHECK(ctx, clnz_context_set_launch(ctx, 0, 0));
}

/* Regression (issue 16, item 15): three 4 MiB operands that broadcast to
 * (2^22)^3 elements wrapped the product past 2^64 and gave a tiny result
 * claiming that shape; every product of extents is checked now. An empty
 * broadcast is fine whatever the other extents. */
static void test_issue16_item15_broadcast_overflow(void **state)
{
    (void)state;
    clnz_context *ctx = tu_context();
    int64_t a[3] = {1 << 22, 1, 1}, b[3] = {1, 1 << 22, 1}, c[3] = {1, 1, 1 << 22};
    clnz_tensor ta = {CLNZ_U8, 3, a, NULL}, tb = {CLNZ_U8, 3, b, NULL}, tc = {CLNZ_U8, 3, c, NULL};
    clnz_operand x = clnz_operand_array(&tb), y = clnz_operand_array(&tc);
    clnz_dtype dt;
    int rank;
    int64_t shape[CLNZ_MAX_RANK];
    assert_int_equal(clnz_where_result(ctx, &ta, &x, &y, &dt, &rank, shape), CLNZ_ERROR_TOO_LARGE);
    assert_non_null(strstr(clnz_context_message(ctx), "2^62"));
    clnz_array out;
    assert_int_equal(clnz_where(ctx, &ta, NULL, NULL, &x, NULL, &y, NULL, &out),
                     CLNZ_ERROR_TOO_LARGE);
    int64_t e[3] = {0, 1, 1}; /* (0, 2^22, 2^22): empty, so fine */
    clnz_tensor te = {CLNZ_U8, 3, e, NULL};
    assert_int_equal(clnz_where_result(ctx, &te, &x, &y, &dt, &rank, shape), CLNZ_SUCCESS);
    assert_int_equal(rank, 3);
    assert_int_equal(shape[0], 0);
    assert_int_equal(shape[2], 1 << 22);
}

static void test_where_errors(void **state)
{
    (void)state;
    clnz_context *ctx = tu_context();
    int64_t s1[2] = {2, 3}, s2[1] = {4};
    float x[6] = {0};
    double y[4] = {0};
    unsigned char c[6] = {0};
    clnz_tensor ct = {CLNZ_U8, 2, s1, NULL}, xt = {CLNZ_F32, 2, s1, NULL},
                yt = {CLNZ_F64, 1, s2, NULL}, xt2 = {CLNZ_F32, 1, s2, NULL};
    clnz_operand xo = clnz_operand_array(&xt), yo = clnz_operand_array(&yt),
                 x2 = clnz_operand_array(&xt2), z = clnz_operand_int(0);
    clnz_array out;
    assert_int_equal(clnz_where(ctx, &ct, c, NULL, &x2, x, &z, NULL, &out),
                     CLNZ_ERROR_SHAPE_MISMATCH);
    assert_non_null(strstr(clnz_context_message(ctx), "(4,)"));
    assert_non_null(strstr(clnz_context_message(ctx), "(2, 3)"));
    assert_null(out.data);
    yt.shape = s1;
    yt.rank = 2;
    assert_int_equal(clnz_where(ctx, &ct, c, NULL, &xo, x, &yo, y, &out),
                     CLNZ_ERROR_DTYPE_MISMATCH);
    assert_non_null(strstr(clnz_context_message(ctx), "f32"));
    assert_int_equal(clnz_where(ctx, &ct, c, NULL, NULL, x, &yo, y, &out),
                     CLNZ_ERROR_INVALID_ARGUMENT);
    /* a scalar of no known kind is refused, not read as an int */
    clnz_operand bad = clnz_operand_int(1);
    bad.value.kind = (clnz_value_kind)9;
    assert_int_equal(clnz_where(ctx, &ct, c, NULL, &xo, x, &bad, NULL, &out),
                     CLNZ_ERROR_INVALID_ARGUMENT);
    assert_non_null(strstr(clnz_context_message(ctx), "y: unknown scalar value kind 9"));
    assert_null(out.data);
    /* -2^63 as a float is exactly INT64_MIN: it fits i64; the next double below does not */
    int64_t xi[6] = {1, 2, 3, 4, 5, 6};
    unsigned char c2[6] = {1, 0, 1, 0, 1, 0};
    clnz_tensor it = {CLNZ_I64, 2, s1, NULL};
    clnz_operand io = clnz_operand_array(&it), lo = clnz_operand_float(-0x1p63);
    TU_CHECK(ctx, clnz_where(ctx, &ct, c2, NULL, &io, xi, &lo, NULL, &out));
    const int64_t *got = out.data;
    for (int i = 0; i < 6; ++i)
        assert_int_equal(got[i], c2[i] ? xi[i] : INT64_MIN);
    clnz_array_free(&out);
    lo = clnz_operand_float(nextafter(-0x1p63, -INFINITY));
    assert_int_equal(clnz_where(ctx, &ct, c2, NULL, &io, xi, &lo, NULL, &out),
                     CLNZ_ERROR_INVALID_VALUE);
}

int main(void)
{
    tu_seed("test_select");
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_select_random),
        cmocka_unit_test(test_select_fortran_order),
        cmocka_unit_test(test_select_every_launch_and_length),
        cmocka_unit_test(test_select_errors),
        cmocka_unit_test(test_where_broadcast_random),
        cmocka_unit_test(test_where_scalars),
        cmocka_unit_test(test_where_every_launch),
        cmocka_unit_test(test_where_errors),
        cmocka_unit_test(test_issue16_item15_broadcast_overflow),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    tu_context_done();
    return rc;
}
