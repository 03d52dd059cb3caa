/* test_tune.c: tuning. Every candidate the tuner can choose gives the
 * reference result; a stored result is used; corrupt, truncated and
 * mismatched files are ignored (corrupt ones deleted) and replaced by the
 * next tuning; the vendor file is the fallback; an unwritable cache folder
 * still works. The tuning file format is written here by hand, from its
 * description in host/tune_store.c, so the reader is checked independently. */
#include "testutil.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* ---- every candidate is correct ---- */
static void check_nonzero_now(clnz_context *ctx)
{
    int64_t shape[] = {13, 7, 301};
    int64_t n = 13 * 7 * 301;
    float *data = malloc((size_t)n * 4);
    tu_fill(CLNZ_F32, data, (size_t)n, 0.3);
    clnz_tensor t = {CLNZ_F32, 3, shape, NULL};
    clnz_nonzero_options o;
    clnz_nonzero_options_init(&o);
    int64_t count, entries;
    int per;
    int64_t *want = tu_ref_nonzero(&t, data, NULL, &o, &count, &entries, &per);
    clnz_result r;
    TU_CHECK(ctx, clnz_nonzero(ctx, &t, data, NULL, &o, &r));
    assert_int_equal(r.count, count);
    assert_memory_equal(r.indices, want, (size_t)(entries * per) * 8);
    clnz_result_free(&r);
    free(want);
    free(data);
}

static void check_scan_now(clnz_context *ctx)
{
    size_t n = 77777;
    uint64_t *h = malloc(n * 8), *got = malloc(n * 8), total = 0;
    for (size_t i = 0; i < n; ++i)
        h[i] = tu_rand() % 5;
    cl_mem b = tu_buffer(n * 8, h), tot = tu_buffer(8, NULL);
    TU_CHECK(ctx, clnz_scan_enqueue(ctx, CLNZ_U64, b, 0, b, 0, n, tot, 0, 0, NULL, NULL));
    tu_read(b, 0, n * 8, got);
    tu_read(tot, 0, 8, &total);
    uint64_t run = 0;
    for (size_t i = 0; i < n; ++i) {
        assert_int_equal(got[i], run);
        run += h[i];
    }
    assert_int_equal(total, run);
    clReleaseMemObject(b);
    clReleaseMemObject(tot);
    free(h);
    free(got);
}

static void check_mask_now(clnz_context *ctx)
{
    size_t n = 50001;
    int16_t *h = malloc(n * 2);
    unsigned char *got = malloc(n);
    tu_fill(CLNZ_I16, h, n, 0.5);
    int64_t shape[] = {(int64_t)n};
    clnz_tensor t = {CLNZ_I16, 1, shape, NULL};
    cl_mem in = tu_buffer(n * 2, h), m = tu_buffer(n, NULL);
    clnz_predicate p = clnz_pred_int(CLNZ_OP_GT, 2);
    TU_CHECK(ctx, clnz_mask_enqueue(ctx, &t, in, 0, &p, CLNZ_U8, m, 0, 0, NULL, NULL));
    tu_read(m, 0, n, got);
    for (size_t i = 0; i < n; ++i)
        assert_int_equal(got[i], h[i] > 2);
    clReleaseMemObject(in);
    clReleaseMemObject(m);
    free(h);
    free(got);
}

/* The kernels the tuner tunes, by the names the API uses, and the check
 * and strategy each candidate runs with. */
static const struct {
    const char *name;
    void (*check)(clnz_context *);
    clnz_strategy strategy;
} kernels[] = {{"two-pass", check_nonzero_now, CLNZ_STRATEGY_TWO_PASS},
               {"scan", check_scan_now, CLNZ_STRATEGY_AUTO},
               {"mask", check_mask_now, CLNZ_STRATEGY_AUTO},
               {"lookback", check_nonzero_now, CLNZ_STRATEGY_LOOKBACK}};
#define N_KERNELS (int)(sizeof kernels / sizeof kernels[0])

static void test_every_candidate_is_correct(void **state)
{
    TU_FULL_ONLY(); /* every candidate of every kernel compiled: the long tier */
    (void)state;
    clnz_context *ctx = tu_context();
    assert_int_equal(clnz_tune_candidates(ctx, "no-such-kernel", 0, NULL, 0), 0);
    for (int f = 0; f < N_KERNELS; ++f) {
        clnz_launch c[64];
        int n = clnz_tune_candidates(ctx, kernels[f].name, 0, c, 64);
        assert_true(n >= 4 && n <= 64);
        int quick = clnz_tune_candidates(ctx, kernels[f].name, 1, NULL, 0);
        assert_true(quick >= 2 && quick < n);
        TU_CHECK(ctx, clnz_context_set_strategy(ctx, kernels[f].strategy));
        for (int i = 0; i < n; ++i) {
            TU_CHECK(ctx,
                     clnz_context_set_launch(ctx, c[i].work_group_size, c[i].items_per_work_item));
            clnz_launch now;
            clnz_launch_source src;
            TU_CHECK(ctx, clnz_context_launch(ctx, kernels[f].name, &now, &src));
            assert_int_equal(src, CLNZ_LAUNCH_FORCED);
            kernels[f].check(ctx);
        }
    }
    TU_CHECK(ctx, clnz_context_set_strategy(ctx, CLNZ_STRATEGY_AUTO));
    TU_CHECK(ctx, clnz_context_set_launch(ctx, 0, 0));
}

/* ---- stored results ---- */
static uint64_t fnv(const char *s, size_t n)
{
    uint64_t h = 0xcbf29ce484222325ULL;
    for (size_t i = 0; i < n; ++i)
        h = (h ^ (unsigned char)s[i]) * 0x100000001b3ULL;
    return h;
}

static void sanitize(const char *in, char *out)
{
    for (; *in; ++in)
        *out++ = (strchr("-.", *in) || (*in >= '0' && *in <= '9') || (*in >= 'a' && *in <= 'z') ||
                  (*in >= 'A' && *in <= 'Z'))
                     ? *in
                     : '_';
    *out = '\0';
}

typedef struct {
    char platform[128], device[128], vendor[128], driver[64];
    const char *type;
} ident;

static ident device_ident(void)
{
    ident id;
    memset(&id, 0, sizeof id);
    cl_device_id d = clnz_context_device(tu_context());
    cl_platform_id p;
    cl_device_type t;
    clGetDeviceInfo(d, CL_DEVICE_PLATFORM, sizeof p, &p, NULL);
    clGetPlatformInfo(p, CL_PLATFORM_NAME, sizeof id.platform, id.platform, NULL);
    clGetDeviceInfo(d, CL_DEVICE_NAME, sizeof id.device, id.device, NULL);
    clGetDeviceInfo(d, CL_DEVICE_VENDOR, sizeof id.vendor, id.vendor, NULL);
    clGetDeviceInfo(d, CL_DRIVER_VERSION, sizeof id.driver, id.driver, NULL);
    clGetDeviceInfo(d, CL_DEVICE_TYPE, sizeof t, &t, NULL);
    id.type = (t & CL_DEVICE_TYPE_GPU) ? "GPU" : (t & CL_DEVICE_TYPE_CPU) ? "CPU" : "ACCELERATOR";
    return id;
}

static void tuning_path(int vendor_file, char *out, size_t n)
{
    ident id = device_ident();
    char p[128], d[128], v[128], dr[64];
    sanitize(id.platform, p);
    sanitize(id.device, d);
    sanitize(id.vendor, v);
    sanitize(id.driver, dr);
    if (vendor_file)
        snprintf(out, n, "%s/tuning/vendor--%s--%s--clnz-%s.txt", tu_cache_dir(), v, id.type,
                 CLNZ_VERSION_STRING);
    else
        snprintf(out, n, "%s/tuning/%s--%s--%s--clnz-%s.txt", tu_cache_dir(), p, d, dr,
                 CLNZ_VERSION_STRING);
}

/* Writes a tuning file; `driver` NULL means this device's driver. */
static void write_tuning(const char *path, const char *driver, size_t wg, size_t items,
                         int break_checksum)
{
    char dir[128];
    snprintf(dir, sizeof dir, "%s/tuning", tu_cache_dir());
    mkdir(dir, 0755);
    ident id = device_ident();
    char text[2048];
    int k = snprintf(text, sizeof text,
                     "# hand-written\nformat 2\nclnz %s\nplatform %s\ndevice %s\nvendor %s\n"
                     "type %s\ndriver %s\nstrategy two-pass\ntwo-pass %zu %zu\nscan %zu %zu\n"
                     "mask %zu %zu\nlookback %zu %zu\n",
                     CLNZ_VERSION_STRING, id.platform, id.device, id.vendor, id.type,
                     driver ? driver : id.driver, wg, items, wg, items + 1, wg, items, wg, items);
    uint64_t sum = fnv(text, (size_t)k) ^ (uint64_t)break_checksum;
    snprintf(text + k, sizeof text - (size_t)k, "checksum %016" PRIx64 "\n", sum);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

static clnz_launch_source launch_of_new_context(const char *f, clnz_launch *l,
                                                clnz_stats *stats)
{
    clnz_context *c = NULL;
    char msg[256];
    if (clnz_context_create(NULL, &c, msg, sizeof msg))
        fail_msg("%s", msg);
    clnz_launch_source src;
    assert_int_equal(clnz_context_launch(c, f, l, &src), CLNZ_SUCCESS);
    if (stats)
        clnz_context_stats(c, stats);
    check_nonzero_now(c); /* and whatever is stored still gives right results */
    clnz_context_release(c);
    return src;
}

static void test_a_tuned_file_is_used(void **state)
{
    (void)state;
    char path[600];
    tuning_path(0, path, sizeof path);
    write_tuning(path, NULL, 16, 32, 0);
    clnz_launch l;
    assert_int_equal(launch_of_new_context("two-pass", &l, NULL), CLNZ_LAUNCH_TUNED);
    assert_int_equal(l.work_group_size, 16);
    assert_int_equal(l.items_per_work_item, 32);
    assert_int_equal(launch_of_new_context("scan", &l, NULL), CLNZ_LAUNCH_TUNED);
    assert_int_equal(l.items_per_work_item, 33);
}

static void test_vendor_file_is_the_fallback(void **state)
{
    (void)state;
    char path[600];
    tuning_path(1, path, sizeof path);
    write_tuning(path, "some other driver", 8, 128, 0);
    clnz_launch l;
    assert_int_equal(launch_of_new_context("mask", &l, NULL), CLNZ_LAUNCH_VENDOR);
    assert_int_equal(l.work_group_size, 8);
    assert_int_equal(l.items_per_work_item, 128);
}

/* A stored work-group size above the device's limit is another device's:
 * the context takes the vendor file instead, and so does the listing of
 * `clnz devices` (it said "tuned"). */
static void test_listing_skips_what_a_context_skips(void **state)
{
    (void)state;
    size_t max_wg = 0;
    assert_int_equal(clGetDeviceInfo(clnz_context_device(tu_context()),
                                     CL_DEVICE_MAX_WORK_GROUP_SIZE, sizeof max_wg, &max_wg, NULL),
                     CL_SUCCESS);
    char path[600];
    tuning_path(0, path, sizeof path);
    write_tuning(path, NULL, 2 * max_wg, 4, 0);
    tuning_path(1, path, sizeof path);
    write_tuning(path, "some other driver", 8, 128, 0);
    clnz_launch l;
    assert_int_equal(launch_of_new_context("mask", &l, NULL), CLNZ_LAUNCH_VENDOR);
    clnz_device_info infos[8];
    int n = 0, seen = 0;
    assert_int_equal(clnz_list_devices(infos, 8, &n), CLNZ_SUCCESS);
    for (int i = 0; i < n && i < 8; ++i)
        if (infos[i].is_default) {
            assert_int_equal(infos[i].tuning, CLNZ_LAUNCH_VENDOR);
            seen = 1;
        }
    assert_true(seen);
}

static void test_bad_files_are_ignored(void **state)
{
    (void)state;
    char path[600];
    tuning_path(0, path, sizeof path);
    clnz_launch l;
    clnz_stats s;
    struct stat sb;
    /* corrupt (checksum) and truncated: ignored and deleted */
    write_tuning(path, NULL, 16, 32, 1);
    assert_int_equal(launch_of_new_context("two-pass", &l, &s), CLNZ_LAUNCH_DEFAULT);
    assert_int_equal(s.cache_files_rejected, 1);
    assert_int_not_equal(stat(path, &sb), 0);
    write_tuning(path, NULL, 16, 32, 0);
    assert_int_equal(truncate(path, 120), 0);
    assert_int_equal(launch_of_new_context("two-pass", &l, &s), CLNZ_LAUNCH_DEFAULT);
    assert_int_not_equal(stat(path, &sb), 0);
    /* another driver's result under this name: ignored, never trusted */
    write_tuning(path, "9.9-other", 16, 32, 0);
    assert_int_equal(launch_of_new_context("two-pass", &l, &s), CLNZ_LAUNCH_DEFAULT);
    assert_int_equal(s.cache_files_rejected, 1);
    /* absurd values are corrupt too */
    write_tuning(path, NULL, 16, 999999, 0);
    assert_int_equal(launch_of_new_context("two-pass", &l, &s), CLNZ_LAUNCH_DEFAULT);
}

/* Under an allocation limit below the tuning problem's buffers every call
 * fails: the run fails with that call's status and reason (it said that no
 * candidate gave correct results, blaming the kernels), each row measured
 * says it failed (CLNZ_TUNE_FAILED), and nothing is stored. */
typedef struct {
    clnz_context *ctx;
    cl_command_queue queue; /* the context's, before the run */
    int calls, other_queue;
} queue_watch;

/* The context's queue stays the caller's while it tunes (on a profiling
 * queue of its own): it was the tuner's queue then. */
static void watch_queue(void *user, int done, int total, const clnz_tune_row *row)
{
    (void)done, (void)total, (void)row;
    queue_watch *w = user;
    ++w->calls;
    w->other_queue += clnz_context_queue(w->ctx) != w->queue;
}

static void test_a_run_whose_calls_fail_says_why(void **state)
{
    (void)state;
    clnz_context *ctx = tu_context_limited("8K");
    clnz_tune_row rows[128];
    int n = 0;
    queue_watch w = {ctx, clnz_context_queue(ctx), 0, 0};
    assert_int_equal(clnz_tune(ctx, 1, watch_queue, &w, rows, 128, &n), CLNZ_ERROR_TOO_LARGE);
    assert_true(w.calls > 0);
    assert_int_equal(w.other_queue, 0);
    const char *msg = clnz_context_message(ctx);
    assert_non_null(strstr(msg, "ran on the tuning problem"));
    assert_non_null(strstr(msg, "CLNZ_MAX_ALLOC"));
    assert_true(n > 0);
    for (int i = 0; i < n && i < 128; ++i) {
        assert_false(rows[i].correct);
        assert_true(rows[i].ms[0] == CLNZ_TUNE_FAILED);
    }
    for (int vendor = 0; vendor < 2; ++vendor) {
        char path[600];
        tuning_path(vendor, path, sizeof path);
        assert_int_equal(access(path, F_OK), -1);
    }
    clnz_context_release(ctx);
}

/* A tuning run replaces another driver's file with a good one that the
 * next context uses, and every winner is a row it measured. */
static void test_a_tuning_run_replaces_them(void **state)
{
    (void)state;
    TU_FULL_ONLY(); /* every candidate compiled and timed: the long tier */
    char path[600];
    tuning_path(0, path, sizeof path);
    write_tuning(path, "9.9-other", 16, 32, 0);
    clnz_context *ctx = NULL; /* a context of this test's cache folder */
    assert_int_equal(clnz_context_create(NULL, &ctx, NULL, 0), CLNZ_SUCCESS);
    clnz_tune_row rows[128];
    int n = 0;
    TU_CHECK(ctx, clnz_tune(ctx, 1, NULL, NULL, rows, 128, &n));
    assert_true(n > 6);
    int winners = 0;
    for (int i = 0; i < n && i < 128; ++i) {
        assert_true(rows[i].correct);
        assert_true(rows[i].gbps[0] > 0 && rows[i].gbps[1] > 0);
    }
    for (int f = 0; f < N_KERNELS; ++f) {
        clnz_launch won, stored;
        clnz_launch_source src;
        TU_CHECK(ctx, clnz_context_launch(ctx, kernels[f].name, &won, &src));
        assert_int_equal(src, CLNZ_LAUNCH_TUNED);
        /* the winner: the least sum of its two times, each over the family's
         * fastest at that size (recomputed from the rows) */
        double fastest[2] = {-1, -1}, best = -1;
        int best_row = -1;
        for (int i = 0; i < n && i < 128; ++i)
            for (int z = 0; z < 2 && strcmp(rows[i].kernel, kernels[f].name) == 0; ++z)
                if (fastest[z] < 0 || rows[i].ms[z] < fastest[z])
                    fastest[z] = rows[i].ms[z];
        for (int i = 0; i < n && i < 128; ++i) {
            double score = rows[i].ms[0] / fastest[0] + rows[i].ms[1] / fastest[1];
            if (strcmp(rows[i].kernel, kernels[f].name) == 0 && (best < 0 || score < best))
                best = score, best_row = i;
        }
        assert_true(best_row >= 0);
        assert_int_equal(rows[best_row].launch.work_group_size, won.work_group_size);
        assert_int_equal(rows[best_row].launch.items_per_work_item, won.items_per_work_item);
        for (int i = 0; i < n && i < 128; ++i)
            winners += strcmp(rows[i].kernel, kernels[f].name) == 0 &&
                       rows[i].launch.work_group_size == won.work_group_size &&
                       rows[i].launch.items_per_work_item == won.items_per_work_item;
        assert_int_equal(launch_of_new_context(kernels[f].name, &stored, NULL),
                         CLNZ_LAUNCH_TUNED);
        assert_int_equal(stored.work_group_size, won.work_group_size);
        assert_int_equal(stored.items_per_work_item, won.items_per_work_item);
    }
    assert_int_equal(winners, N_KERNELS); /* each winner is a measured row */
    clnz_context_release(ctx);
}

static void test_unwritable_cache_still_works(void **state)
{
    (void)state;
    char file[128], dir[160];
    snprintf(file, sizeof file, "%s/plain-file", tu_cache_dir());
    FILE *f = fopen(file, "w");
    fclose(f);
    snprintf(dir, sizeof dir, "%s/below", file);
    setenv("CLNZ_CACHE_DIR", dir, 1);
    clnz_launch l;
    assert_int_equal(launch_of_new_context("two-pass", &l, NULL), CLNZ_LAUNCH_DEFAULT);
    setenv("CLNZ_CACHE_DIR", tu_cache_dir(), 1);
}

int main(void)
{
    tu_seed("test_tune");
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_candidate_is_correct),
        cmocka_unit_test_setup_teardown(test_a_tuned_file_is_used, tu_cache_setup,
                                        tu_cache_teardown),
        cmocka_unit_test_setup_teardown(test_vendor_file_is_the_fallback, tu_cache_setup,
                                        tu_cache_teardown),
        cmocka_unit_test_setup_teardown(test_listing_skips_what_a_context_skips, tu_cache_setup,
                                        tu_cache_teardown),
        cmocka_unit_test_setup_teardown(test_bad_files_are_ignored, tu_cache_setup,
                                        tu_cache_teardown),
        cmocka_unit_test_setup_teardown(test_a_run_whose_calls_fail_says_why, tu_cache_setup,
                                        tu_cache_teardown),
        cmocka_unit_test_setup_teardown(test_a_tuning_run_replaces_them, tu_cache_setup,
                                        tu_cache_teardown),
        cmocka_unit_test_setup_teardown(test_unwritable_cache_still_works, tu_cache_setup,
                                        tu_cache_teardown),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    tu_context_done();
    return rc;
}
