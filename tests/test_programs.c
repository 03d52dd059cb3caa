/* test_programs.c: declared uses, warm-up and program bundles.
 *
 * The enumeration of "the programs a set of uses needs" is checked against
 * real calls, two ways: after clnz_warmup the calls of those uses build or
 * load no other program (the context's counters stay still), and a context
 * that may not compile (CLNZ_NO_COMPILE=1), with an empty program cache and
 * only a bundle of those uses, runs every call of them, under each strategy,
 * with results checked against the sequential references. A call outside
 * the bundle fails with CLNZ_ERROR_PROGRAM_UNAVAILABLE naming the option
 * that would include it; a bundle that is damaged, edited, for another
 * device or clnz version, is refused; a bundle of sources takes binaries
 * built elsewhere (the FPGA flow). */
#include "testutil.h"

#include <dirent.h>
#include <dlfcn.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

enum { N = 40000 }; /* elements: several tiles of every strategy on PoCL */

/* ---- bundles on disk ---- */

static void write_file(const char *dir, const char *name, const void *data, size_t size)
{
    char path[600];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(data, 1, size, f), size);
    assert_int_equal(fclose(f), 0);
}

static char *read_whole(const char *path, size_t *size)
{
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    fseek(f, 0, SEEK_END);
    *size = (size_t)ftell(f);
    fseek(f, 0, SEEK_SET);
    char *data = malloc(*size + 1);
    assert_int_equal(fread(data, 1, *size, f), *size);
    data[*size] = '\0';
    fclose(f);
    return data;
}

/* A fresh folder under /tmp (removed by rm_rf). */
static char *fresh_dir(const char *what)
{
    char *dir = malloc(128);
    snprintf(dir, 128, "/tmp/clnz-test-%s-XXXXXX", what);
    assert_non_null(mkdtemp(dir));
    return dir;
}

static void rm_rf(char *dir)
{
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    assert_int_equal(system(cmd), 0);
    free(dir);
}

static void write_bundle(const clnz_bundle *b, const char *dir)
{
    for (int i = 0; i < clnz_bundle_file_count(b); ++i) {
        const char *name;
        const void *data;
        size_t size;
        assert_int_equal(clnz_bundle_file(b, i, &name, &data, &size), CLNZ_SUCCESS);
        write_file(dir, name, data, size);
    }
}

static clnz_uses uses_of(const char *dtypes, const char *ops, const char *preds,
                         const char *strategies)
{
    clnz_uses u = {0};
    char msg[300];
    const char *lists[] = {dtypes, ops, preds, strategies};
    const char *axes[] = {"dtypes", "ops", "predicates", "strategies"};
    for (int a = 0; a < 4; ++a)
        if (lists[a] && clnz_uses_parse(&u, axes[a], lists[a], msg, sizeof msg))
            fail_msg("%s %s: %s", axes[a], lists[a], msg);
    return u;
}

/* A bundle of the uses, built on the test device (through the shared
 * program cache: nothing compiles twice across runs), in a fresh folder. */
static char *bundle_of(const clnz_uses *u, unsigned flags)
{
    clnz_context *ctx = tu_context();
    clnz_bundle *b = NULL;
    TU_CHECK(ctx, clnz_bundle_build(ctx, u, flags, &b));
    char *dir = fresh_dir("bundle");
    write_bundle(b, dir);
    clnz_bundle_release(b);
    return dir;
}

/* A context that may only load programs: CLNZ_NO_COMPILE=1, an empty
 * program cache of its own, and the bundle (NULL: none). */
static clnz_context *loading_context(const char *bundle, clnz_strategy s, char **cache)
{
    const char *shared = getenv("CLNZ_CACHE_DIR");
    char *keep = shared ? strdup(shared) : NULL;
    *cache = fresh_dir("empty-cache");
    setenv("CLNZ_CACHE_DIR", *cache, 1);
    setenv("CLNZ_NO_COMPILE", "1", 1);
    clnz_context *ctx = NULL;
    char msg[600];
    clnz_status st = clnz_context_create(NULL, &ctx, msg, sizeof msg);
    unsetenv("CLNZ_NO_COMPILE");
    if (keep)
        setenv("CLNZ_CACHE_DIR", keep, 1);
    free(keep);
    if (st)
        fail_msg("context: %s", msg);
    TU_CHECK(ctx, clnz_context_set_strategy(ctx, s));
    if (bundle)
        TU_CHECK(ctx, clnz_context_use_bundle(ctx, bundle));
    return ctx;
}

/* ---- calls, against the references ---- */

typedef struct {
    clnz_dtype dt;
    int64_t shape[2];
    unsigned char *data;
    clnz_tensor t;
} array2;

static void array_make(array2 *a, clnz_dtype dt, int64_t rows, int64_t cols, double density)
{
    a->dt = dt;
    a->shape[0] = rows, a->shape[1] = cols;
    a->data = malloc((size_t)(rows * cols) * clnz_dtype_size(dt) + 1);
    tu_fill(dt, a->data, (size_t)(rows * cols), density);
    a->t = (clnz_tensor){dt, 2, a->shape, NULL};
}

static int selected(const array2 *a, int64_t i, const clnz_predicate *p)
{
    return tu_ref_selected(a->dt, a->data + i * (int64_t)clnz_dtype_size(a->dt), p);
}

static void check_nonzero(clnz_context *ctx, const array2 *a, const clnz_predicate *p,
                          const clnz_nonzero_options *o)
{
    int64_t want_count, entries;
    int per;
    int64_t *want = tu_ref_nonzero(&a->t, a->data, p, o, &want_count, &entries, &per);
    clnz_result r;
    TU_CHECK(ctx, clnz_nonzero(ctx, &a->t, a->data, p, o, &r));
    assert_int_equal(r.count, want_count);
    int64_t *got = tu_widen(r.indices, r.index_type, (size_t)(entries * per));
    assert_memory_equal(got, want, (size_t)(entries * per) * sizeof *got);
    free(got);
    free(want);
    clnz_result_free(&r);
}

static void check_count_and_batched(clnz_context *ctx, const array2 *a, const clnz_predicate *p)
{
    int64_t want = 0, row = 0, got;
    for (int64_t i = 0; i < a->shape[0] * a->shape[1]; ++i)
        want += selected(a, i, p);
    TU_CHECK(ctx, clnz_count(ctx, &a->t, a->data, p, &got));
    assert_int_equal(got, want);
    clnz_result r;
    clnz_array off;
    TU_CHECK(ctx, clnz_nonzero_batched(ctx, &a->t, a->data, p, NULL, &r, &off));
    const int64_t *o = off.data;
    for (int64_t b = 0; b < a->shape[0]; ++b) {
        assert_int_equal(o[b], row);
        for (int64_t c = 0; c < a->shape[1]; ++c)
            row += selected(a, b * a->shape[1] + c, p);
    }
    assert_int_equal(o[a->shape[0]], want);
    clnz_result_free(&r);
    clnz_array_free(&off);
}

/* count_batched (a batched use): the rows of a (the counting pass), and
 * the columns of a 2 x 1024 array (one work-item per item:
 * kernels/count_axes.cl). */
static void check_count_batched(clnz_context *ctx, const array2 *a, const clnz_predicate *p)
{
    clnz_array counts;
    TU_CHECK(ctx, clnz_count_batched(ctx, &a->t, a->data, p, 1, &counts));
    const int64_t *c = counts.data;
    for (int64_t b = 0; b < a->shape[0]; ++b) {
        int64_t want = 0;
        for (int64_t j = 0; j < a->shape[1]; ++j)
            want += selected(a, b * a->shape[1] + j, p);
        assert_int_equal(c[b], want);
    }
    clnz_array_free(&counts);
    array2 w;
    array_make(&w, a->dt, 2, 1024, 0.3);
    int64_t cols[2] = {1024, 2}, strides[2] = {1, 1024};
    clnz_tensor t = {a->dt, 2, cols, strides};
    TU_CHECK(ctx, clnz_count_batched(ctx, &t, w.data, p, 1, &counts));
    c = counts.data;
    for (int64_t j = 0; j < 1024; ++j)
        assert_int_equal(c[j], selected(&w, j, p) + selected(&w, 1024 + j, p));
    clnz_array_free(&counts);
    free(w.data);
}

/* select(x, mask) and where(mask, x, y), x and y of dtype xd. */
static void check_select_where(clnz_context *ctx, const array2 *m, clnz_dtype xd,
                               const clnz_predicate *p)
{
    array2 x, y;
    array_make(&x, xd, m->shape[0], m->shape[1], 0.5);
    array_make(&y, xd, m->shape[0], m->shape[1], 0.5);
    size_t es = clnz_dtype_size(xd), n = (size_t)(m->shape[0] * m->shape[1]), z = 0;
    clnz_array sel, wh;
    TU_CHECK(ctx, clnz_select(ctx, &x.t, x.data, &m->t, m->data, p, &sel));
    clnz_operand xo = {&x.t, {0}}, yo = {&y.t, {0}};
    TU_CHECK(ctx, clnz_where(ctx, &m->t, m->data, p, &xo, x.data, &yo, y.data, &wh));
    for (size_t i = 0; i < n; ++i) {
        int s = selected(m, (int64_t)i, p);
        assert_memory_equal((char *)wh.data + i * es, (s ? x.data : y.data) + i * es, es);
        if (s)
            assert_memory_equal((char *)sel.data + z++ * es, x.data + i * es, es);
    }
    assert_int_equal(sel.shape[0], (int64_t)z);
    clnz_array_free(&sel);
    clnz_array_free(&wh);
    free(x.data);
    free(y.data);
}

static void check_mask_and_scan(clnz_context *ctx, const array2 *a, const clnz_predicate *p)
{
    size_t n = (size_t)(a->shape[0] * a->shape[1]), es = clnz_dtype_size(a->dt);
    cl_mem in = clCreateBuffer(clnz_context_cl_context(ctx), CL_MEM_READ_WRITE |
                               CL_MEM_COPY_HOST_PTR, n * es, a->data, NULL);
    cl_mem mask = clCreateBuffer(clnz_context_cl_context(ctx), CL_MEM_READ_WRITE, n * 4, NULL,
                                 NULL);
    cl_mem scan = clCreateBuffer(clnz_context_cl_context(ctx), CL_MEM_READ_WRITE, n * 8, NULL,
                                 NULL);
    TU_CHECK(ctx, clnz_mask_enqueue(ctx, &a->t, in, 0, p, CLNZ_U32, mask, 0, 0, NULL, NULL));
    TU_CHECK(ctx, clnz_scan_enqueue(ctx, CLNZ_U32, mask, 0, scan, 0, n, NULL, 0, 0, NULL, NULL));
    uint32_t *m = malloc(n * 4), *s = malloc(n * 4);
    clEnqueueReadBuffer(clnz_context_queue(ctx), mask, CL_TRUE, 0, n * 4, m, 0, NULL, NULL);
    clEnqueueReadBuffer(clnz_context_queue(ctx), scan, CL_TRUE, 0, n * 4, s, 0, NULL, NULL);
    uint32_t sum = 0;
    for (size_t i = 0; i < n; ++i) {
        assert_int_equal(m[i], (uint32_t)selected(a, (int64_t)i, p));
        assert_int_equal(s[i], sum);
        sum += m[i];
    }
    free(m);
    free(s);
    clReleaseMemObject(in);
    clReleaseMemObject(mask);
    clReleaseMemObject(scan);
}

/* One pixel per row of `a`'s columns: the channel rule over them. */
static void check_channels(clnz_context *ctx, const array2 *a, const clnz_predicate *p)
{
    clnz_result r;
    TU_CHECK(ctx, clnz_nonzero_channels(ctx, &a->t, a->data, p, CLNZ_CHANNELS_ANY, NULL, &r));
    int64_t z = 0;
    for (int64_t px = 0; px < a->shape[0]; ++px) {
        int any = 0;
        for (int64_t c = 0; c < a->shape[1]; ++c)
            any |= selected(a, px * a->shape[1] + c, p);
        if (any)
            assert_int_equal(((int64_t *)r.indices)[z++], px);
    }
    assert_int_equal(r.count, z);
    clnz_result_free(&r);
}

/* An RGBA image of every channel type clnz reads (OpenCL 1.2 requires them
 * all), each channel 0 or 2 as that type stores it: both predicates of
 * run_calls select the 2s, so the pixels with one are the answer. */
static void check_image2d(clnz_context *ctx, const clnz_predicate *p)
{
    cl_bool support = CL_FALSE;
    clGetDeviceInfo(clnz_context_device(ctx), CL_DEVICE_IMAGE_SUPPORT, sizeof support, &support,
                    NULL);
    if (!support)
        return;
    static const struct {
        cl_channel_type type;
        size_t size;
        uint32_t two; /* 2 as stored, little-endian */
    } types[] = {{CL_UNSIGNED_INT8, 1, 2},  {CL_UNSIGNED_INT16, 2, 2},   {CL_UNSIGNED_INT32, 4, 2},
                 {CL_SIGNED_INT8, 1, 2},    {CL_SIGNED_INT16, 2, 2},     {CL_SIGNED_INT32, 4, 2},
                 {CL_UNORM_INT8, 1, 2},     {CL_UNORM_INT16, 2, 2},      {CL_HALF_FLOAT, 2, 0x4000},
                 {CL_FLOAT, 4, 0x40000000}};
    enum { W = 9, H = 5 };
    for (size_t t = 0; t < sizeof types / sizeof types[0]; ++t) {
        unsigned char px[W * H * 4 * 4] = {0};
        int want[W * H] = {0};
        for (int i = 0; i < W * H * 4; ++i)
            if (tu_rand() % 5 == 0) {
                memcpy(px + (size_t)i * types[t].size, &types[t].two, types[t].size);
                want[i / 4] = 1;
            }
        cl_image_format fmt = {CL_RGBA, types[t].type};
        cl_image_desc desc;
        memset(&desc, 0, sizeof desc);
        desc.image_type = CL_MEM_OBJECT_IMAGE2D;
        desc.image_width = W, desc.image_height = H;
        cl_int e;
        cl_mem img = clCreateImage(clnz_context_cl_context(ctx),
                                   CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, &fmt, &desc, px, &e);
        assert_int_equal(e, CL_SUCCESS);
        clnz_result r;
        TU_CHECK(ctx, clnz_image2d_nonzero(ctx, img, NULL, NULL, p, CLNZ_CHANNELS_ANY, NULL, &r));
        const int64_t *got = r.indices;
        int64_t z = 0;
        for (int i = 0; i < W * H; ++i)
            if (want[i]) {
                assert_true(z < r.count);
                assert_int_equal(got[2 * z], i / W);
                assert_int_equal(got[2 * z + 1], i % W);
                ++z;
            }
        assert_int_equal(r.count, z);
        clnz_result_free(&r);
        clReleaseMemObject(img);
    }
}

/* Every call of every op the uses name (the quick tier's: count, nonzero,
 * batched, select, where; the long tier adds mask, scan, channels, image2d)
 * for each dtype and predicate, on an input of one tile and of many. */
static void run_calls(clnz_context *ctx, const clnz_dtype *dts, int n_dts, int all_ops)
{
    clnz_predicate preds[2] = {clnz_pred_nonzero(), clnz_pred_int(CLNZ_OP_GT, 1)};
    int64_t sizes[2][2] = {{3, 7}, {N / 100, 100}};
    for (int d = 0; d < n_dts; ++d) {
        for (int p = 0; p < 2; ++p) {
            for (int s = 0; s < 2; ++s) {
                array2 a;
                array_make(&a, dts[d], sizes[s][0], sizes[s][1], 0.3);
                clnz_nonzero_options o;
                clnz_nonzero_options_init(&o);
                check_nonzero(ctx, &a, &preds[p], &o);
                o.layout = CLNZ_LAYOUT_FLAT;
                o.has_size = 1, o.size = 50, o.fill = -7; /* fill.cl */
                check_nonzero(ctx, &a, &preds[p], &o);
                check_count_and_batched(ctx, &a, &preds[p]);
                check_count_batched(ctx, &a, &preds[p]);
                for (int x = 0; x < n_dts && s == 0; ++x)
                    check_select_where(ctx, &a, dts[x], &preds[p]);
                if (all_ops) {
                    check_mask_and_scan(ctx, &a, &preds[p]);
                    check_channels(ctx, &a, &preds[p]);
                }
                free(a.data);
            }
        }
    }
    for (int p = 0; p < 2 && all_ops; ++p) /* image2d: the image's type, not the dtypes */
        check_image2d(ctx, &preds[p]);
}

static const clnz_dtype quick_dtypes[] = {CLNZ_U8, CLNZ_F32};
static const char *const quick_ops = "count,nonzero,batched,select,where";
static const clnz_dtype full_dtypes[] = {CLNZ_BOOL, CLNZ_I16, CLNZ_F64};
static const char *const full_ops =
    "count,nonzero,batched,select,where,mask,scan,channels,image2d";

/* ---- the enumeration against the calls ---- */

/* Kernels the library creates one by one (clnz_warmup makes its with
 * clCreateKernelsInProgram): counted, to see that a warmed call makes
 * none (review: the warm-up kept them under their names with the program's
 * identity, and every first call made them again). */
static int kernels_created;
cl_kernel clCreateKernel(cl_program program, const char *name, cl_int *err)
{
    ++kernels_created;
    static cl_kernel (*real)(cl_program, const char *, cl_int *);
    if (!real)
        real = (cl_kernel(*)(cl_program, const char *, cl_int *))dlsym(RTLD_NEXT, "clCreateKernel");
    return real(program, name, err);
}

/* After the warm-up, the calls of its uses neither compile nor load, nor
 * make a kernel. */
static void test_warmup_covers_every_call(void **state)
{
    (void)state;
    clnz_context *ctx = NULL;
    char msg[300];
    if (clnz_context_create(NULL, &ctx, msg, sizeof msg))
        fail_msg("context: %s", msg);
    clnz_uses u = uses_of("u8,f32", quick_ops, "nonzero,compare", NULL);
    int programs = 0;
    TU_CHECK(ctx, clnz_warmup(ctx, &u, &programs));
    clnz_stats before, after;
    clnz_context_stats(ctx, &before);
    /* every program came from the compiler or the cache, none twice */
    assert_int_equal(before.programs_from_source + before.programs_from_cache,
                     (uint64_t)programs);
    kernels_created = 0;
    run_calls(ctx, quick_dtypes, 2, 0);
    assert_int_equal(kernels_created, 0);
    clnz_context_stats(ctx, &after);
    assert_int_equal(after.programs_from_source, before.programs_from_source);
    assert_int_equal(after.programs_from_cache, before.programs_from_cache);
    /* and a warm-up of the same uses finds them all ready */
    int again = 0;
    TU_CHECK(ctx, clnz_warmup(ctx, &u, &again));
    assert_int_equal(again, programs);
    clnz_context_stats(ctx, &after);
    assert_int_equal(after.programs_from_source + after.programs_from_cache, (uint64_t)programs);
    clnz_context_release(ctx);
}

/* Without a compiler, with only the bundle: every call of its uses runs,
 * under auto (single-tile and two-pass here) and the stream strategy. */
static void covered_without_compiler(const clnz_dtype *dts, int n_dts, const char *dtypes,
                                     const char *ops, int all_ops, clnz_strategy s)
{
    const char *name = s == CLNZ_STRATEGY_AUTO ? NULL : clnz_strategy_name(s);
    clnz_uses u = uses_of(dtypes, ops, "nonzero,compare", name);
    char *dir = bundle_of(&u, 0), *cache;
    clnz_context *ctx = loading_context(dir, s, &cache);
    run_calls(ctx, dts, n_dts, all_ops);
    clnz_stats st;
    clnz_context_stats(ctx, &st);
    assert_int_equal(st.programs_from_source, 0);
    assert_int_equal(st.programs_from_cache, 0);
    clnz_context_release(ctx);
    rm_rf(cache);
    rm_rf(dir);
}

static void test_bundle_covers_every_call_auto(void **state)
{
    (void)state;
    covered_without_compiler(quick_dtypes, 2, "u8,f32", quick_ops, 0, CLNZ_STRATEGY_AUTO);
}

static void test_bundle_covers_every_call_stream(void **state)
{
    (void)state;
    covered_without_compiler(quick_dtypes, 2, "u8,f32", quick_ops, 0, CLNZ_STRATEGY_STREAM);
}

static void test_bundle_covers_every_call_long(void **state)
{
    (void)state;
    TU_FULL_ONLY();
    for (int s = CLNZ_STRATEGY_AUTO; s < CLNZ_STRATEGY_COUNT; ++s)
        if (s != CLNZ_STRATEGY_SINGLE_TILE) /* it serves one tile only */
            covered_without_compiler(full_dtypes, 3, "bool,i16,f64", full_ops, 1,
                                     (clnz_strategy)s);
}

/* ---- what a device that cannot compile says ---- */

static void expect_unavailable(clnz_context *ctx, clnz_dtype dt, const char *says)
{
    array2 a;
    array_make(&a, dt, 4, 5, 0.5);
    int64_t z;
    assert_int_equal(clnz_count(ctx, &a.t, a.data, NULL, &z), CLNZ_ERROR_PROGRAM_UNAVAILABLE);
    const char *m = clnz_context_message(ctx);
    if (!strstr(m, says))
        fail_msg("'%s' not in: %s", says, m);
    free(a.data);
}

static void test_missing_program_names_the_option(void **state)
{
    (void)state;
    clnz_uses u = uses_of("u8,f32", "count", "nonzero", NULL);
    char *dir = bundle_of(&u, 0), *cache;
    clnz_context *ctx = loading_context(dir, CLNZ_STRATEGY_AUTO, &cache);
    expect_unavailable(ctx, CLNZ_F64, "with --dtypes u8,f32,f64 includes it");
    expect_unavailable(ctx, CLNZ_F64, "CLNZ_NO_COMPILE=1");
    TU_CHECK(ctx, clnz_context_use_bundle(ctx, NULL));
    expect_unavailable(ctx, CLNZ_U8, "no bundle is in use: build one with `clnz bundle build "
                                     "--ops count --dtypes u8 --predicates nonzero`");
    clnz_context_release(ctx);
    rm_rf(cache);
    rm_rf(dir);
}

/* where's programs are per condition dtype and value size: a condition of
 * u8 choosing f64 values needs a dtype of 8 bytes declared beside u8. The
 * hint named u8 alone, and the bundle it built still lacked the program.
 * Here the bundle the hint names serves the call. */
static clnz_status where_u8_on_f64(clnz_context *ctx, double *out)
{
    uint8_t cond[4] = {0, 2, 0, 1};
    double x[4] = {1.5, 2.5, 3.5, 4.5};
    int64_t shape[1] = {4};
    clnz_tensor ct = {CLNZ_U8, 1, shape, NULL}, xt = {CLNZ_F64, 1, shape, NULL};
    clnz_operand xo = clnz_operand_array(&xt), yo = clnz_operand_float(-1);
    clnz_array a = {0};
    clnz_status st = clnz_where(ctx, &ct, cond, NULL, &xo, x, &yo, NULL, &a);
    if (!st)
        memcpy(out, a.data, sizeof x);
    clnz_array_free(&a);
    return st;
}

static void test_missing_where_program_names_its_values(void **state)
{
    (void)state;
    clnz_uses u = uses_of("u8", "where", "nonzero", NULL);
    char *dir = bundle_of(&u, 0), *cache;
    clnz_context *ctx = loading_context(dir, CLNZ_STRATEGY_AUTO, &cache);
    double got[4];
    assert_int_equal(where_u8_on_f64(ctx, got), CLNZ_ERROR_PROGRAM_UNAVAILABLE);
    const char *m = clnz_context_message(ctx);
    if (!strstr(m, "values of 8 bytes") || !strstr(m, "with --dtypes u8,u64 includes it"))
        fail_msg("the hint: %s", m);
    TU_CHECK(ctx, clnz_context_use_bundle(ctx, NULL));
    assert_int_equal(where_u8_on_f64(ctx, got), CLNZ_ERROR_PROGRAM_UNAVAILABLE);
    if (!strstr(clnz_context_message(ctx), "`clnz bundle build --ops where --dtypes u8,u64 "
                                           "--predicates nonzero`"))
        fail_msg("the hint: %s", clnz_context_message(ctx));
    clnz_context_release(ctx);
    rm_rf(cache);
    rm_rf(dir);
    /* what it names serves the call */
    u = uses_of("u8,u64", "where", "nonzero", NULL);
    dir = bundle_of(&u, 0);
    ctx = loading_context(dir, CLNZ_STRATEGY_AUTO, &cache);
    TU_CHECK(ctx, where_u8_on_f64(ctx, got));
    const double want[4] = {-1, 2.5, -1, 4.5};
    assert_memory_equal(got, want, sizeof want);
    clnz_context_release(ctx);
    rm_rf(cache);
    rm_rf(dir);
}

/* ---- bundles refused ---- */

static uint64_t fnv1a(const char *p, size_t n)
{
    uint64_t h = 0xcbf29ce484222325ULL;
    for (size_t i = 0; i < n; ++i)
        h = (h ^ (unsigned char)p[i]) * 0x100000001b3ULL;
    return h;
}

/* The manifest with line `key ...` replaced by `key value`; resigned: its
 * checksum line made to match again (an edit by someone who knows the
 * format), else left as it was. */
static void edit_manifest(const char *dir, const char *key, const char *value, int resigned)
{
    char path[300];
    snprintf(path, sizeof path, "%s/manifest.txt", dir);
    size_t size;
    char *text = read_whole(path, &size), *out = malloc(size + 300);
    size_t o = 0;
    for (char *line = text; *line;) {
        char *nl = strchr(line, '\n');
        size_t len = (size_t)(nl - line) + 1;
        /* the first line is the magic "clnz program bundle 2": only that key edits it */
        int magic = line == text, is_magic_key = strcmp(key, "clnz program bundle") == 0;
        if (magic == is_magic_key && strncmp(line, key, strlen(key)) == 0 &&
            line[strlen(key)] == ' ')
            o += (size_t)sprintf(out + o, "%s %s\n", key, value);
        else if (strncmp(line, "checksum ", 9) == 0 && resigned)
            o += (size_t)sprintf(out + o, "checksum %016" PRIx64 "\n", fnv1a(out, o));
        else
            memcpy(out + o, line, len), o += len;
        line = nl + 1;
    }
    write_file(dir, "manifest.txt", out, o);
    free(text);
    free(out);
}

static void expect_refused(const char *dir, const char *says)
{
    clnz_context *ctx = tu_context();
    assert_int_equal(clnz_context_use_bundle(ctx, dir), CLNZ_ERROR_BUNDLE_REFUSED);
    if (!strstr(clnz_context_message(ctx), says))
        fail_msg("'%s' not in: %s", says, clnz_context_message(ctx));
}

static void test_bundle_refused(void **state)
{
    (void)state;
    clnz_uses u = uses_of("u8", "count", "nonzero", NULL);
    char *dir = bundle_of(&u, 0);
    TU_CHECK(tu_context(), clnz_context_use_bundle(tu_context(), dir)); /* as built: taken */
    TU_CHECK(tu_context(), clnz_context_use_bundle(tu_context(), NULL));
    char path[300];
    size_t size;
    snprintf(path, sizeof path, "%s/0-nonzero.bin", dir);
    char *bin = read_whole(path, &size);
    bin[size / 2] ^= 1; /* one bit of a binary */
    write_file(dir, "0-nonzero.bin", bin, size);
    expect_refused(dir, "0-nonzero.bin does not match its checksum");
    bin[size / 2] ^= 1;
    write_file(dir, "0-nonzero.bin", bin, size);
    free(bin);
    edit_manifest(dir, "ops", "count,nonzero", 0);
    expect_refused(dir, "the checksum does not match");
    edit_manifest(dir, "device", "Some FPGA board", 1);
    expect_refused(dir, "was built for device 'Some FPGA board'");
    edit_manifest(dir, "clnz program bundle", "1", 1); /* before kernels carried their identity */
    expect_refused(dir, "format version '1' is not the one this clnz reads (2): build the bundle "
                        "again");
    rm_rf(dir);

    dir = bundle_of(&u, 0);
    edit_manifest(dir, "clnz", "0.1.0", 1);
    expect_refused(dir, "was built for clnz version '0.1.0'");
    /* through the environment: the context is not made */
    setenv("CLNZ_BUNDLE", dir, 1);
    clnz_context *ctx = NULL;
    char msg[600];
    assert_int_equal(clnz_context_create(NULL, &ctx, msg, sizeof msg), CLNZ_ERROR_BUNDLE_REFUSED);
    unsetenv("CLNZ_BUNDLE");
    assert_null(ctx);
    assert_non_null(strstr(msg, "CLNZ_BUNDLE: bundle"));
    rm_rf(dir);

    /* build options that change after the bundle was taken: its binaries
     * are not what this context builds now (as for the program cache) */
    dir = bundle_of(&u, 0);
    char *cache, *fresh_cache;
    ctx = loading_context(dir, CLNZ_STRATEGY_AUTO, &cache);
    unsigned char x[4] = {0, 3, 0, 7};
    int64_t shape[1] = {4}, z = -1;
    clnz_tensor t = {CLNZ_U8, 1, shape, NULL};
    const char *was = getenv("CLNZ_BUILD_OPTIONS");
    char *kept = was ? strdup(was) : NULL;
    setenv("CLNZ_BUILD_OPTIONS", "-DCLNZ_SOME_OTHER_OPTION=1", 1);
    clnz_context *fresh = loading_context(NULL, CLNZ_STRATEGY_AUTO, &fresh_cache);
    assert_int_equal(clnz_context_use_bundle(fresh, dir), CLNZ_ERROR_BUNDLE_REFUSED);
    clnz_context_release(fresh);
    rm_rf(fresh_cache);
    assert_int_equal(clnz_count(ctx, &t, x, NULL, &z), CLNZ_ERROR_PROGRAM_UNAVAILABLE);
    if (kept) /* and with the options it was built with, it serves the call */
        setenv("CLNZ_BUILD_OPTIONS", kept, 1);
    else
        unsetenv("CLNZ_BUILD_OPTIONS");
    free(kept);
    TU_CHECK(ctx, clnz_count(ctx, &t, x, NULL, &z));
    assert_int_equal(z, 2);
    clnz_context_release(ctx);
    rm_rf(cache);
    rm_rf(dir);
}

/* ---- sources for an offline compiler, and binaries put in ---- */

static void test_source_bundle_takes_binaries(void **state)
{
    (void)state;
    clnz_uses u = uses_of("u8", "count", "nonzero", NULL);
    clnz_context *ctx = tu_context();
    clnz_bundle *src = NULL, *bin = NULL;
    TU_CHECK(ctx, clnz_bundle_build(ctx, &u, CLNZ_BUNDLE_SOURCES, &src));
    TU_CHECK(ctx, clnz_bundle_build(ctx, &u, 0, &bin));
    assert_int_equal(clnz_bundle_file_count(src), clnz_bundle_file_count(bin));
    char *dir = fresh_dir("sources"), *cache;
    write_bundle(src, dir);
    /* every name stays valid while the bundle is unchanged (one buffer was
     * rewritten by each call: every saved name read as the last file's) */
    const char *names[64];
    const void *fdata;
    size_t fsize;
    int files = clnz_bundle_file_count(src);
    assert_true(files > 2 && files <= 64);
    for (int i = 0; i < files; ++i)
        assert_int_equal(clnz_bundle_file(src, i, &names[i], &fdata, &fsize), CLNZ_SUCCESS);
    assert_string_equal(names[0], "manifest.txt");
    for (int i = 1; i < files; ++i) {
        char want[16];
        snprintf(want, sizeof want, "%d-", i - 1);
        assert_int_equal(strncmp(names[i], want, strlen(want)), 0);
    }
    clnz_context *loading = loading_context(dir, CLNZ_STRATEGY_AUTO, &cache);
    expect_unavailable(loading, CLNZ_U8, "it holds only its source");
    clnz_context_release(loading);
    rm_rf(cache);
    /* the "offline compiler" is this device's: its binaries, one by one */
    char msg[300];
    for (int i = 1; i < clnz_bundle_file_count(bin); ++i) {
        const char *name;
        const void *data;
        size_t size;
        clnz_bundle_file(src, i, &name, &data, &size);
        assert_non_null(strstr(name, ".cl"));
        clnz_bundle_file(bin, i, &name, &data, &size);
        assert_int_equal(clnz_bundle_add_binary(src, i - 1, data, size, msg, sizeof msg),
                         CLNZ_SUCCESS);
    }
    assert_non_null(strstr(names[1], ".bin")); /* the same name, for the binary now */
    /* the caller's mistakes, not the bundle's: INVALID_ARGUMENT, saying which */
    clnz_bundle *none = NULL;
    msg[0] = '\0';
    assert_int_equal(clnz_bundle_open(NULL, &none, msg, sizeof msg), CLNZ_ERROR_INVALID_ARGUMENT);
    assert_string_equal(msg, "the folder is NULL");
    assert_int_equal(clnz_bundle_add_binary(src, 99, "x", 1, msg, sizeof msg),
                     CLNZ_ERROR_INVALID_ARGUMENT);
    assert_non_null(strstr(msg, "not 99"));
    assert_int_equal(clnz_bundle_add_binary(src, 0, "x", 0, msg, sizeof msg),
                     CLNZ_ERROR_INVALID_ARGUMENT);
    assert_string_equal(msg, "a binary of 0 bytes (1 byte to 1 GiB)");
    assert_int_equal(clnz_bundle_add_binary(src, 0, NULL, 1, msg, sizeof msg),
                     CLNZ_ERROR_INVALID_ARGUMENT);
    assert_string_equal(msg, "data is NULL");
    rm_rf(dir);
    dir = fresh_dir("added");
    write_bundle(src, dir);
    loading = loading_context(dir, CLNZ_STRATEGY_AUTO, &cache);
    array2 a;
    array_make(&a, CLNZ_U8, 30, 30, 0.5);
    clnz_predicate nonzero = clnz_pred_nonzero();
    check_count_and_batched(loading, &a, &nonzero);
    free(a.data);
    clnz_context_release(loading);
    clnz_bundle_release(src);
    clnz_bundle_release(bin);
    rm_rf(cache);
    rm_rf(dir);
}

/* ---- names ---- */

static void test_uses_parse(void **state)
{
    (void)state;
    clnz_uses u = uses_of("u8,f64", "count,select", "gt", "stream");
    assert_int_equal(u.dtypes, (1u << CLNZ_U8) | (1u << CLNZ_F64));
    assert_int_equal(u.ops, CLNZ_USE_COUNT | CLNZ_USE_SELECT);
    assert_int_equal(u.predicates, CLNZ_PREDS_COMPARE);
    assert_int_equal(u.strategies, 1u << CLNZ_STRATEGY_STREAM);
    u = uses_of("all", "all", "all", "all");
    assert_int_equal(u.dtypes, (1u << CLNZ_DTYPE_COUNT) - 1);
    assert_int_equal(u.ops, (CLNZ_USE_IMAGE2D << 1) - 1);
    assert_int_equal(u.predicates, CLNZ_PREDS_NONZERO | CLNZ_PREDS_COMPARE);
    char msg[400];
    assert_int_equal(clnz_uses_parse(&u, "dtypes", "u8,f128", msg, sizeof msg),
                     CLNZ_ERROR_INVALID_VALUE);
    assert_non_null(strstr(msg, "unknown name 'f128'"));
    assert_int_equal(u.dtypes, (1u << CLNZ_DTYPE_COUNT) - 1); /* unchanged */
    assert_int_equal(clnz_uses_parse(&u, "layouts", "rows", msg, sizeof msg),
                     CLNZ_ERROR_INVALID_VALUE);
    assert_int_equal(clnz_uses_parse(&u, "ops", "", msg, sizeof msg), CLNZ_ERROR_INVALID_VALUE);
    assert_int_equal(clnz_uses_parse(&u, "ops", "count,", msg, sizeof msg),
                     CLNZ_ERROR_INVALID_VALUE);
}

int main(void)
{
    tu_seed("programs");
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_uses_parse),
        cmocka_unit_test(test_warmup_covers_every_call),
        cmocka_unit_test(test_bundle_covers_every_call_auto),
        cmocka_unit_test(test_bundle_covers_every_call_stream),
        cmocka_unit_test(test_bundle_covers_every_call_long),
        cmocka_unit_test(test_missing_program_names_the_option),
        cmocka_unit_test(test_missing_where_program_names_its_values),
        cmocka_unit_test(test_bundle_refused),
        cmocka_unit_test(test_source_bundle_takes_binaries),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    tu_context_done();
    return rc;
}
