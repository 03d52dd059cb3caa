/* testutil.c: shared test helpers and the sequential references. */
#include "testutil.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static clnz_context *g_ctx;

clnz_context *tu_context(void)
{
    if (!g_ctx) {
        char msg[300];
        if (clnz_context_create(NULL, &g_ctx, msg, sizeof msg) != CLNZ_SUCCESS) {
            fprintf(stderr, "cannot create a context: %s\n", msg);
            exit(1);
        }
    }
    return g_ctx;
}

clnz_context *tu_context_limited(const char *max_alloc)
{
    setenv("CLNZ_MAX_ALLOC", max_alloc, 1);
    clnz_context *ctx = NULL;
    char msg[300];
    clnz_status st = clnz_context_create(NULL, &ctx, msg, sizeof msg);
    unsetenv("CLNZ_MAX_ALLOC");
    if (st)
        fail_msg("context: %s", msg);
    return ctx;
}

void tu_context_done(void)
{
    clnz_context_release(g_ctx);
    g_ctx = NULL;
}

/* The quick tier's shapes first: one work-item, an odd group, a wide one. */
const tu_launch tu_launches[] = {{1, 1}, {37, 3}, {256, 8}, {3, 5}, {8, 2}, {64, 64}, {1024, 1}};
#define TU_QUICK_LAUNCHES 3
int tu_n_launches = TU_QUICK_LAUNCHES;

static const clnz_dtype all_dtypes[] = {CLNZ_BOOL, CLNZ_U8,  CLNZ_I8,  CLNZ_U16,
                                         CLNZ_I16,  CLNZ_U32, CLNZ_I32, CLNZ_U64,
                                         CLNZ_I64,  CLNZ_F16, CLNZ_F32, CLNZ_F64},
                        quick_dtypes[] = {CLNZ_F32, CLNZ_U8, CLNZ_I64, CLNZ_F16};
const clnz_dtype *tu_dtypes = quick_dtypes;
int tu_n_dtypes = 4;

clnz_dtype tu_random_dtype(void) { return tu_dtypes[tu_rand() % (uint64_t)tu_n_dtypes]; }

int tu_full(void)
{
    const char *f = getenv("CLNZ_TEST_FULL");
    return f && strcmp(f, "1") == 0;
}

char *tu_env_keep(const char *name)
{
    const char *v = getenv(name);
    return v ? strdup(v) : NULL;
}

void tu_env_put_back(const char *name, char *kept)
{
    if (kept)
        setenv(name, kept, 1);
    else
        unsetenv(name);
    free(kept);
}

static uint64_t g_state;

void tu_seed(const char *suite)
{
    const char *s = getenv("CLNZ_TEST_SEED");
    uint64_t seed = s ? strtoull(s, NULL, 10) : (uint64_t)time(NULL);
    g_state = seed;
    tu_n_launches = tu_full() ? (int)(sizeof tu_launches / sizeof tu_launches[0])
                              : TU_QUICK_LAUNCHES;
    tu_dtypes = tu_full() ? all_dtypes : quick_dtypes;
    tu_n_dtypes = tu_full() ? CLNZ_DTYPE_COUNT : (int)(sizeof quick_dtypes / sizeof quick_dtypes[0]);
    printf("%s: seed %llu (replay with CLNZ_TEST_SEED=%llu)\n", suite, (unsigned long long)seed,
           (unsigned long long)seed);
    const char *only = getenv("CLNZ_TEST_ONLY"), *skip = getenv("CLNZ_TEST_SKIP");
    if (only && *only) {
        cmocka_set_test_filter(only);
        printf("%s: only the tests named %s (CLNZ_TEST_ONLY)\n", suite, only);
    }
    if (skip && *skip) {
        cmocka_set_skip_filter(skip);
        printf("%s: not the tests named %s (CLNZ_TEST_SKIP)\n", suite, skip);
    }
}

uint64_t tu_rand(void) /* splitmix64 */
{
    uint64_t z = (g_state += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

double tu_uniform(void) { return (double)(tu_rand() >> 11) / 9007199254740992.0; }



static size_t dsize(clnz_dtype dt)
{
    static const size_t s[] = {1, 1, 1, 2, 2, 4, 4, 8, 8, 2, 4, 8};
    return s[dt];
}

/* Special bit patterns per float width: +-0, +-inf, NaNs, smallest and
 * largest denormals, largest finite. */
static const uint16_t sp16[] = {0x0000, 0x8000, 0x7c00, 0xfc00, 0x7e00, 0x7c01, 0xfe00,
                                0x0001, 0x8001, 0x03ff, 0x7bff, 0xfbff, 0x3c00};
static const uint32_t sp32[] = {0x00000000, 0x80000000, 0x7f800000, 0xff800000, 0x7fc00000,
                                0x7f800001, 0xffc00000, 0x00000001, 0x80000001, 0x007fffff,
                                0x7f7fffff, 0xff7fffff, 0x3f800000};
static const uint64_t sp64[] = {0, 0x8000000000000000ULL, 0x7ff0000000000000ULL,
                                0xfff0000000000000ULL, 0x7ff8000000000000ULL,
                                0x7ff0000000000001ULL, 0x0000000000000001ULL,
                                0x8000000000000001ULL, 0x7fefffffffffffffULL,
                                0x3ff0000000000000ULL};

void tu_fill(clnz_dtype dt, void *data, size_t n, double density)
{
    size_t es = dsize(dt);
    unsigned char *p = data;
    for (size_t i = 0; i < n; ++i, p += es) {
        uint64_t r = tu_rand();
        memset(p, 0, es);
        if (tu_uniform() >= density)
            continue; /* zero */
        if (dt == CLNZ_BOOL) {
            p[0] = (unsigned char)(1 + r % 255); /* any nonzero byte is true */
        } else if (dt == CLNZ_F16 && r % 8 == 0) {
            memcpy(p, &sp16[(r >> 8) % (sizeof sp16 / 2)], 2);
        } else if (dt == CLNZ_F32 && r % 8 == 0) {
            memcpy(p, &sp32[(r >> 8) % (sizeof sp32 / 4)], 4);
        } else if (dt == CLNZ_F64 && r % 8 == 0) {
            memcpy(p, &sp64[(r >> 8) % (sizeof sp64 / 8)], 8);
        } else if (dt == CLNZ_F32) {
            float f = (float)((int)(r % 21) - 10) / 2.0f; /* small values near the thresholds */
            memcpy(p, &f, 4);
        } else if (dt == CLNZ_F64) {
            double f = (double)((int)(r % 21) - 10) / 2.0;
            memcpy(p, &f, 8);
        } else if (dt == CLNZ_F16) {
            uint16_t h = (uint16_t)(r >> 16); /* any pattern */
            memcpy(p, &h, 2);
        } else if (r % 2) {
            int64_t v = (int64_t)(r % 21) - 10; /* small values, negatives too */
            memcpy(p, &v, es);                  /* little-endian: low bytes */
        } else {
            memcpy(p, &r, es);
        }
    }
}

/* ---- reference predicate: plain C comparisons on decoded values ---- */
static double half_value(uint16_t h)
{
    int e = (h >> 10) & 31, m = h & 1023;
    double v;
    if (e == 31)
        v = m ? NAN : INFINITY;
    else if (e == 0)
        v = m * pow(2, -24);
    else
        v = (1 + m / 1024.0) * pow(2, e - 15);
    return (h >> 15) ? -v : v;
}

/* Rounds v to the nearest half (ties to even) by trying every half. */
static double round_half(double v)
{
    static double memo_in = NAN, memo_out;
    if (v == memo_in)
        return memo_out;
    memo_in = v;
    if (isnan(v) || isinf(v))
        return memo_out = v;
    if (fabs(v) >= 65520.0)
        return memo_out = v > 0 ? INFINITY : -INFINITY;
    double best = 0;
    int best_even = 1;
    double best_err = INFINITY;
    for (uint32_t h = 0; h < 0x7c00; ++h) { /* brute force: independent of the library */
        double c = half_value((uint16_t)h) * (v < 0 ? -1 : 1);
        double err = fabs(c - v);
        if (err < best_err || (err == best_err && !best_even && (h & 1) == 0)) {
            best = c, best_err = err, best_even = (h & 1) == 0;
        }
    }
    return memo_out = best;
}

static int cmp_d(clnz_op op, double x, double v)
{
    switch (op) {
    case CLNZ_OP_EQ: return x == v;
    case CLNZ_OP_NE: return x != v;
    case CLNZ_OP_LT: return x < v;
    case CLNZ_OP_LE: return x <= v;
    case CLNZ_OP_GT: return x > v;
    default: return x >= v;
    }
}

static int cmp_i(clnz_op op, __int128 x, __int128 v)
{
    switch (op) {
    case CLNZ_OP_EQ: return x == v;
    case CLNZ_OP_NE: return x != v;
    case CLNZ_OP_LT: return x < v;
    case CLNZ_OP_LE: return x <= v;
    case CLNZ_OP_GT: return x > v;
    default: return x >= v;
    }
}

int tu_ref_selected(clnz_dtype dt, const void *e, const clnz_predicate *p)
{
    __int128 xi = 0;
    double xf = 0;
    int is_float = dt == CLNZ_F16 || dt == CLNZ_F32 || dt == CLNZ_F64;
    switch (dt) {
    case CLNZ_BOOL: xi = *(const uint8_t *)e != 0; break;
    case CLNZ_U8: xi = *(const uint8_t *)e; break;
    case CLNZ_I8: xi = *(const int8_t *)e; break;
    case CLNZ_U16: xi = *(const uint16_t *)e; break;
    case CLNZ_I16: xi = *(const int16_t *)e; break;
    case CLNZ_U32: xi = *(const uint32_t *)e; break;
    case CLNZ_I32: xi = *(const int32_t *)e; break;
    case CLNZ_U64: xi = *(const uint64_t *)e; break;
    case CLNZ_I64: xi = *(const int64_t *)e; break;
    case CLNZ_F16: xf = half_value(*(const uint16_t *)e); break;
    case CLNZ_F32: xf = *(const float *)e; break;
    default: xf = *(const double *)e; break;
    }
    if (p->op == CLNZ_OP_NONZERO)
        return is_float ? xf != 0.0 : xi != 0; /* NaN != 0 is true */
    if (!is_float) {
        if (p->value.kind == CLNZ_VALUE_FLOAT)
            return cmp_d(p->op, (double)xi, p->value.f);
        if (dt == CLNZ_I64 && p->value.kind == CLNZ_VALUE_UINT && p->value.u > INT64_MAX)
            return cmp_d(p->op, (double)(int64_t)xi, (double)p->value.u);
        __int128 v = p->value.kind == CLNZ_VALUE_UINT ? (__int128)p->value.u : p->value.i;
        return cmp_i(p->op, xi, v);
    }
    if (p->value.kind != CLNZ_VALUE_FLOAT)
        return cmp_d(p->op, xf,
                     p->value.kind == CLNZ_VALUE_UINT ? (double)p->value.u : (double)p->value.i);
    /* numpy 1.x's value-based casting: v's smallest float type by numpy's
     * bounds (65000 for f16, 3.4e38 for f32), widened to the array's */
    double v = p->value.f, a = fabs(v);
    int bits = isnan(v) || isinf(v) || a < 65000.0 ? 16 : a < 3.4e38 ? 32 : 64;
    int dt_bits = dt == CLNZ_F16 ? 16 : dt == CLNZ_F32 ? 32 : 64;
    bits = bits > dt_bits ? bits : dt_bits;
    v = bits == 16 ? round_half(v) : bits == 32 ? (double)(float)v : v;
    return cmp_d(p->op, xf, v);
}

/* ---- reference nonzero ---- */
int64_t *tu_ref_nonzero(const clnz_tensor *t, const void *data, const clnz_predicate *pred,
                        const clnz_nonzero_options *o, int64_t *count, int64_t *entries,
                        int *per_entry)
{
    clnz_predicate nonzero = clnz_pred_nonzero();
    if (!pred)
        pred = &nonzero;
    int rank = t->rank;
    size_t es = dsize(t->dtype);
    int64_t n = 1, cstr[CLNZ_MAX_RANK];
    for (int d = rank - 1; d >= 0; --d) {
        cstr[d] = n;
        n *= t->shape[d];
    }
    int width = o->layout == CLNZ_LAYOUT_FLAT ? 1
                : o->width                    ? o->width
                : (o->layout == CLNZ_LAYOUT_COLUMNS && rank == 0) ? 1
                                                                   : rank;
    int64_t z = 0;
    int64_t *coords = malloc(sizeof(int64_t) * (size_t)(n ? n : 1) * (CLNZ_MAX_RANK + 1));
    for (int64_t i = 0; i < n; ++i) {
        int64_t off = 0, c[CLNZ_MAX_RANK];
        for (int d = 0; d < rank; ++d) {
            c[d] = (i / cstr[d]) % t->shape[d];
            off += c[d] * (t->strides ? t->strides[d] : cstr[d]);
        }
        if (!tu_ref_selected(t->dtype, (const char *)data + off * (int64_t)es, pred))
            continue;
        int64_t *row = coords + z * (CLNZ_MAX_RANK + 1);
        row[0] = i;
        for (int d = 0; d < rank; ++d)
            row[1 + d] = c[d];
        ++z;
    }
    int64_t ent = o->has_size ? o->size : z;
    int64_t *out = malloc(sizeof(int64_t) * (size_t)(ent * width + 1));
    for (int64_t k = 0; k < ent; ++k) {
        for (int j = 0; j < width; ++j) {
            /* order xy: the entry's columns reversed */
            int d = rank - width + (o->order == CLNZ_ORDER_XY ? width - 1 - j : j);
            int64_t v;
            if (k >= z)
                v = o->fill;
            else if (o->layout == CLNZ_LAYOUT_FLAT)
                v = coords[k * (CLNZ_MAX_RANK + 1)];
            else
                v = d < 0 ? 0 : coords[k * (CLNZ_MAX_RANK + 1) + 1 + d];
            if (o->index_type == CLNZ_INDEX_UINT32)
                v = (int64_t)(uint32_t)v;
            size_t pos = o->layout == CLNZ_LAYOUT_COLUMNS ? (size_t)(j * ent + k)
                                                          : (size_t)(k * width + j);
            out[pos] = v;
        }
    }
    free(coords);
    *count = z;
    *entries = ent;
    *per_entry = width;
    return out;
}

void tu_expect_batched(clnz_context *ctx, const clnz_tensor *t, const void *data,
                       const clnz_predicate *pred, const clnz_nonzero_options *o)
{
    clnz_result res;
    clnz_array offs;
    TU_CHECK(ctx, clnz_nonzero_batched(ctx, t, data, pred, o, &res, &offs));
    int64_t batches = t->shape[0];
    assert_int_equal(offs.shape[0], batches + 1);
    const int64_t *off = offs.data;
    int width = t->rank - 1;
    int64_t *got = tu_widen(res.indices, res.index_type, (size_t)(res.count * width));
    int64_t item_strides[CLNZ_MAX_RANK], cstr = 1;
    for (int d = t->rank - 1; d >= 0; --d) {
        item_strides[d] = t->strides ? t->strides[d] : cstr;
        cstr *= t->shape[d];
    }
    assert_int_equal(off[0], 0);
    for (int64_t b = 0; b < batches; ++b) {
        clnz_tensor item = {t->dtype, width, t->shape + 1, item_strides + 1};
        const char *p = (const char *)data + b * item_strides[0] * (int64_t)clnz_dtype_size(t->dtype);
        clnz_nonzero_options io = *o;
        int64_t z, entries;
        int per_entry;
        int64_t *want = tu_ref_nonzero(&item, p, pred, &io, &z, &entries, &per_entry);
        if (off[b + 1] - off[b] != z)
            fail_msg("item %lld: %lld entries, want %lld", (long long)b,
                     (long long)(off[b + 1] - off[b]), (long long)z);
        if (width && memcmp(got + off[b] * width, want, (size_t)(z * width) * 8))
            fail_msg("item %lld: coordinates differ", (long long)b);
        free(want);
    }
    assert_int_equal(off[batches], res.count);
    assert_int_equal(res.shape[0], res.count);
    assert_int_equal(res.shape[1], width);
    free(got);
    clnz_result_free(&res);
    clnz_array_free(&offs);
}

int64_t *tu_widen(const void *idx, clnz_index_type type, size_t n)
{
    int64_t *w = malloc(sizeof(int64_t) * (n ? n : 1));
    for (size_t i = 0; i < n; ++i) {
        if (type == CLNZ_INDEX_INT64)
            w[i] = ((const int64_t *)idx)[i];
        else if (type == CLNZ_INDEX_INT32)
            w[i] = ((const int32_t *)idx)[i];
        else
            w[i] = ((const uint32_t *)idx)[i];
    }
    return w;
}

cl_mem tu_buffer(size_t bytes, const void *init)
{
    return tu_buffer_on(tu_context(), bytes, init);
}

cl_mem tu_buffer_on(clnz_context *ctx, size_t bytes, const void *init)
{
    cl_int e;
    if (bytes == 0) /* OpenCL has no empty buffers: a small one, nothing copied */
        init = NULL;
    cl_mem m = clCreateBuffer(clnz_context_cl_context(ctx),
                              CL_MEM_READ_WRITE | (init ? CL_MEM_COPY_HOST_PTR : 0),
                              bytes ? bytes : 8, (void *)init, &e);
    if (e)
        fail_msg("clCreateBuffer(%zu): %d", bytes, e);
    return m;
}

void tu_read_on(cl_command_queue q, cl_mem buf, size_t off, size_t bytes, void *dst)
{
    cl_int e = clEnqueueReadBuffer(q, buf, CL_TRUE, off, bytes, dst, 0, NULL, NULL);
    if (e)
        fail_msg("clEnqueueReadBuffer: %d", e);
}

void tu_read(cl_mem buf, size_t off, size_t bytes, void *dst)
{
    tu_read_on(clnz_context_queue(tu_context()), buf, off, bytes, dst);
}

static char g_cache[64];

int tu_cache_setup(void **state)
{
    (void)state;
    snprintf(g_cache, sizeof g_cache, "/tmp/clnz-test-cache-XXXXXX");
    if (!mkdtemp(g_cache))
        return -1;
    return setenv("CLNZ_CACHE_DIR", g_cache, 1);
}

int tu_cache_teardown(void **state)
{
    (void)state;
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", g_cache);
    return system(cmd) == 0 ? 0 : -1;
}

const char *tu_cache_dir(void) { return g_cache; }
