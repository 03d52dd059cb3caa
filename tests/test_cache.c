/* test_cache.c: the on-disk program cache: a warm context loads programs
 * instead of compiling them, a corrupt or truncated file is deleted and
 * rebuilt, and a cache folder that cannot be written is only a warning. */
#include "testutil.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Runs one small nonzero in a new context and returns its counters. */
static clnz_stats run_once(const char **message)
{
    clnz_context *c = NULL;
    char msg[256];
    if (clnz_context_create(NULL, &c, msg, sizeof msg))
        fail_msg("context: %s", msg);
    uint8_t data[100];
    for (int i = 0; i < 100; ++i)
        data[i] = (uint8_t)(i % 3);
    int64_t shape[] = {10, 10};
    clnz_tensor t = {CLNZ_U8, 2, shape, NULL};
    clnz_result r;
    /* two-pass: two programs (its passes and the scan), so that two cache
     * files can be spoiled below */
    TU_CHECK(c, clnz_context_set_strategy(c, CLNZ_STRATEGY_TWO_PASS));
    TU_CHECK(c, clnz_nonzero(c, &t, data, NULL, NULL, &r));
    assert_int_equal(r.count, 66);
    clnz_result_free(&r);
    clnz_stats s;
    assert_int_equal(clnz_context_stats(c, &s), CLNZ_SUCCESS);
    static char last[512];
    snprintf(last, sizeof last, "%s", clnz_context_message(c));
    if (message)
        *message = last;
    clnz_context_release(c);
    return s;
}

static int list_bins(char names[][300], int max)
{
    char dir[100];
    snprintf(dir, sizeof dir, "%s/programs", tu_cache_dir());
    DIR *d = opendir(dir);
    int n = 0;
    if (!d)
        return 0;
    for (struct dirent *e; (e = readdir(d)) && n < max;)
        if (strstr(e->d_name, ".bin"))
            snprintf(names[n++], 300, "%.100s/%.180s", dir, e->d_name);
    closedir(d);
    return n;
}

static void test_warm_context_skips_the_compiler(void **state)
{
    (void)state;
    clnz_stats cold = run_once(NULL);
    assert_true(cold.programs_from_source > 0);
    assert_int_equal(cold.programs_from_cache, 0);
    char names[16][300];
    assert_int_equal(list_bins(names, 16), (int)cold.programs_from_source);
    clnz_stats warm = run_once(NULL);
    assert_int_equal(warm.programs_from_source, 0);
    assert_int_equal(warm.programs_from_cache, cold.programs_from_source);
}

static void corrupt(const char *path, int truncate_it)
{
    FILE *f = fopen(path, "r+b");
    assert_non_null(f);
    if (truncate_it) {
        fclose(f);
        assert_int_equal(truncate(path, 100), 0);
        return;
    }
    fseek(f, 400, SEEK_SET); /* inside the binary */
    int c = fgetc(f);
    fseek(f, 400, SEEK_SET);
    fputc(c ^ 0x5a, f);
    fclose(f);
}

static void test_corrupt_and_truncated_files_are_rebuilt(void **state)
{
    (void)state;
    run_once(NULL);
    char names[16][300];
    int n = list_bins(names, 16);
    assert_true(n >= 2);
    corrupt(names[0], 0);
    corrupt(names[1], 1);
    clnz_stats s = run_once(NULL);
    assert_int_equal(s.cache_files_rejected, 2);
    assert_int_equal(s.programs_from_source, 2);
    /* replaced by good files: the next context loads everything */
    s = run_once(NULL);
    assert_int_equal(s.programs_from_source, 0);
    assert_int_equal(s.cache_files_rejected, 0);
}

static uint64_t fnv(const char *s, size_t n)
{
    uint64_t h = 0xcbf29ce484222325ULL;
    for (size_t i = 0; i < n; ++i)
        h = (h ^ (unsigned char)s[i]) * 0x100000001b3ULL;
    return h;
}

/* A well-formed cache file (right key, size and checksum) whose binary the
 * driver rejects: the program is built from source and the file replaced. */
static void test_binary_the_driver_rejects_falls_back(void **state)
{
    (void)state;
    run_once(NULL);
    char names[16][300];
    int n = list_bins(names, 16);
    assert_true(n >= 1);
    FILE *f = fopen(names[0], "rb");
    char buf[4096];
    size_t len = fread(buf, 1, sizeof buf - 200, f);
    fclose(f);
    /* keep "CLNZBIN1\n" and the key line, then a garbage binary */
    char *key_end = memchr(buf + 9, '\n', len - 9);
    assert_non_null(key_end);
    size_t head = (size_t)(key_end - buf) + 1;
    const char garbage[] = "this is not a program binary";
    int k = snprintf(buf + head, sizeof buf - head, "%zu\n%s", sizeof garbage - 1, garbage);
    size_t body = head + (size_t)k;
    snprintf(buf + body, sizeof buf - body, "%016llx\n", (unsigned long long)fnv(buf, body));
    f = fopen(names[0], "wb");
    fwrite(buf, 1, body + 17, f);
    fclose(f);
    clnz_stats s = run_once(NULL);
    assert_int_equal(s.cache_files_rejected, 1);
    assert_int_equal(s.programs_from_source, 1);
    s = run_once(NULL);
    assert_int_equal(s.programs_from_source, 0);
}

static void test_unwritable_cache_is_a_warning(void **state)
{
    (void)state;
    char file[128], dir[160];
    snprintf(file, sizeof file, "%s/a-file", tu_cache_dir());
    FILE *f = fopen(file, "w");
    fclose(f);
    snprintf(dir, sizeof dir, "%s/sub", file); /* a folder below a file: cannot exist */
    setenv("CLNZ_CACHE_DIR", dir, 1);
    const char *msg;
    clnz_stats s = run_once(&msg);
    setenv("CLNZ_CACHE_DIR", tu_cache_dir(), 1);
    assert_true(s.programs_from_source > 0);
    assert_non_null(strstr(msg, "warning: cannot write the program cache"));
}

int main(void)
{
    tu_seed("test_cache");
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_warm_context_skips_the_compiler, tu_cache_setup,
                                        tu_cache_teardown),
        cmocka_unit_test_setup_teardown(test_corrupt_and_truncated_files_are_rebuilt,
                                        tu_cache_setup, tu_cache_teardown),
        cmocka_unit_test_setup_teardown(test_binary_the_driver_rejects_falls_back,
                                        tu_cache_setup, tu_cache_teardown),
        cmocka_unit_test_setup_teardown(test_unwritable_cache_is_a_warning, tu_cache_setup,
                                        tu_cache_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
