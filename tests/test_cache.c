/* test_cache.c: the on-disk program cache: a warm context loads programs
 * instead of compiling them, a corrupt or truncated file is deleted and
 * rebuilt, and a cache folder that cannot be written is only a warning.
 * The cache's temporaries and removals are tested through the library's
 * internal calls (core/cache.h), with two calls of the library stood in
 * for below (rename, clCreateProgramWithBinary) so that another process's
 * step lands at one chosen moment. */
#define _GNU_SOURCE
#include "testutil.h"
#include "core/cache.h"
#include "core/program.h"

#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>
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

/* ---- issue 16 ---- */

static void write_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

static int is_fifo(const char *path)
{
    struct stat sb;
    return lstat(path, &sb) == 0 && S_ISFIFO(sb.st_mode);
}

/* Item 5: clnz_cache_clear removes the files clnz wrote (by their first
 * bytes), not the ones that only look like them by name. */
static void test_issue16_item5_clear_removes_only_clnz_files(void **state)
{
    (void)state;
    clnz_stats s = run_once(NULL);
    char names[16][300], path[400];
    assert_int_equal(list_bins(names, 16), (int)s.programs_from_source);
    const char *dir = tu_cache_dir();
    snprintf(path, sizeof path, "%s/tuning", dir);
    assert_int_equal(mkdir(path, 0755), 0);
    const char *foreign[][2] = {{"programs/0000000000000000.bin", "not a program of clnz's\n"},
                                {"programs/empty.bin", ""},
                                {"tuning/notes.txt", "# my notes\n"},
                                {"tuning/x.txt.tmp-abcdef", "# a temporary of somebody's\n"}};
    for (int i = 0; i < 4; ++i) {
        snprintf(path, sizeof path, "%s/%s", dir, foreign[i][0]);
        write_file(path, foreign[i][1]);
    }
    snprintf(path, sizeof path, "%s/tuning/dev--x--y.txt", dir);
    write_file(path, "# clnz tuning result: written by clnz tune\nformat 1\n");
    snprintf(path, sizeof path, "%s/programs/fifo.bin", dir);
    assert_int_equal(mkfifo(path, 0644), 0);
    int removed = -1;
    assert_int_equal(clnz_cache_clear(&removed), CLNZ_SUCCESS);
    assert_int_equal(removed, (int)s.programs_from_source + 1);
    assert_int_equal(list_bins(names, 16), 3); /* the two foreign .bin files and the FIFO */
    for (int i = 0; i < 4; ++i) {
        snprintf(path, sizeof path, "%s/%s", dir, foreign[i][0]);
        assert_int_equal(access(path, F_OK), 0);
    }
    snprintf(path, sizeof path, "%s/programs/fifo.bin", dir);
    assert_true(is_fifo(path));
}

/* A cache folder that is a file, or a path through one: refused
 * (CLNZ_ERROR_INVALID_VALUE), nothing removed, the file left alone. Its
 * subfolders' ENOTDIR was counted as files it could not remove
 * (CLNZ_ERROR_CACHE_FILE), and under a path through the file as nothing to
 * do (success, 0 removed). */
static void test_clear_refuses_a_file_as_the_folder(void **state)
{
    (void)state;
    char file[400], below[420];
    snprintf(file, sizeof file, "%s/file", tu_cache_dir());
    snprintf(below, sizeof below, "%s/programs", file);
    write_file(file, "# clnz tuning result: not a folder\n");
    const char *paths[] = {file, below};
    for (int i = 0; i < 2; ++i) {
        setenv("CLNZ_CACHE_DIR", paths[i], 1);
        int removed = -1;
        assert_int_equal(clnz_cache_clear(&removed), CLNZ_ERROR_INVALID_VALUE);
        assert_int_equal(removed, 0);
        assert_int_equal(access(file, F_OK), 0);
    }
    setenv("CLNZ_CACHE_DIR", tu_cache_dir(), 1); /* for the teardown's removal */
}

/* Item 7: a FIFO where a program binary should be: the context neither
 * blocks on it nor replaces it; it builds from source. */
static void test_issue16_item7_fifo_in_the_cache_does_not_block(void **state)
{
    (void)state;
    run_once(NULL);
    char names[16][300];
    int n = list_bins(names, 16);
    assert_true(n >= 1);
    for (int i = 0; i < n; ++i) {
        assert_int_equal(unlink(names[i]), 0);
        assert_int_equal(mkfifo(names[i], 0644), 0);
    }
    alarm(120); /* a blocked open would hang here: SIGALRM fails the test instead */
    const char *msg;
    clnz_stats s = run_once(&msg);
    alarm(0);
    assert_int_equal((int)s.programs_from_source, n);
    assert_int_equal((int)s.programs_from_cache, 0);
    for (int i = 0; i < n; ++i)
        assert_true(is_fifo(names[i]));
    /* the warning names the file and why (it said "...programs': File exists") */
    assert_non_null(strstr(msg, "warning: cannot write the program cache file "));
    assert_non_null(strstr(msg, ".bin': something that is not a regular file has its name"));
}

/* ---- temporaries and removals (the probe's items 4, 5 and 6) ---- */

/* Armed by a test: the library's next rename first lets another process
 * run `cache --clear` (its count kept), as if it came at that moment. */
static int clear_at_rename = -1;

int rename(const char *from, const char *to)
{
    if (clear_at_rename == -2) {
        pid_t pid = fork();
        if (pid == 0) {
            int removed = -1;
            clnz_cache_clear(&removed);
            _exit(removed < 0 ? 255 : removed);
        }
        int status = 0;
        waitpid(pid, &status, 0);
        clear_at_rename = WIFEXITED(status) ? WEXITSTATUS(status) : 254;
    }
    return ((int (*)(const char *, const char *))dlsym(RTLD_NEXT, "rename"))(from, to);
}

/* Armed by a test: while the library hands a cached binary to the driver,
 * another process renames a good file over the one being read. */
static const char *swap_from, *swap_to;

CL_API_ENTRY cl_program CL_API_CALL clCreateProgramWithBinary(cl_context c, cl_uint n,
                                                              const cl_device_id *devices,
                                                              const size_t *lengths,
                                                              const unsigned char **binaries,
                                                              cl_int *status, cl_int *err)
{
    if (swap_from) {
        assert_int_equal(rename(swap_from, swap_to), 0);
        swap_from = NULL;
        if (status)
            *status = CL_INVALID_BINARY;
        if (err)
            *err = CL_INVALID_BINARY;
        return NULL; /* and this binary is refused: the reader deletes "it" */
    }
    __typeof__(&clCreateProgramWithBinary) real =
        (__typeof__(&clCreateProgramWithBinary))dlsym(RTLD_NEXT, "clCreateProgramWithBinary");
    return real(c, n, devices, lengths, binaries, status, err);
}

static void cache_file(const char *sub, const char *name, char *path, size_t n)
{
    snprintf(path, n, "%s/%s", tu_cache_dir(), sub);
    mkdir(path, 0755);
    snprintf(path, n, "%s/%s/%s", tu_cache_dir(), sub, name);
}

static int exists(const char *sub, const char *name)
{
    char path[400];
    cache_file(sub, name, path, sizeof path);
    return access(path, F_OK) == 0;
}

/* A file with text, held locked (flock) as its writer would if lock: the
 * descriptor to close, or -1. */
static int put(const char *sub, const char *name, const char *text, int lock)
{
    char path[400];
    cache_file(sub, name, path, sizeof path);
    write_file(path, text);
    if (!lock)
        return -1;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    assert_true(fd >= 0);
    assert_int_equal(flock(fd, LOCK_EX), 0);
    /* flock belongs to an open file: another open of it, even in this
     * process (as the library's), cannot take it */
    int other = open(path, O_RDONLY | O_CLOEXEC);
    assert_int_equal(flock(other, LOCK_EX | LOCK_NB), -1);
    assert_int_equal(errno, EWOULDBLOCK);
    close(other);
    return fd;
}

/* Probe items 4 and 5: `cache --clear` removed a dead writer's temporary
 * only when it had the whole magic (one killed before its first write
 * stayed forever), and removed a live writer's, which then could not
 * rename it. Now: the dead ones of any size, never a locked one, counted. */
static void test_clear_removes_dead_temporaries_not_live_ones(void **state)
{
    (void)state;
    put("programs", "00000000000000aa.bin.tmp-AbC123", "", 0);
    put("programs", "00000000000000bb.bin.tmp-Xy9z00", "CLNZBIN1\nkey\n5\nhello", 0);
    put("tuning", "dev--x--y.txt.tmp-Qq1234", "# clnz tun", 0); /* cut in its magic */
    int live[2] = {put("programs", "00000000000000cc.bin.tmp-L1ve00", "CLNZBIN1\nkey\n", 1),
                   put("tuning", "vendor--x--CPU.txt.tmp-L1ve01", "", 1)};
    /* a temporary's name, not a temporary of ours: kept */
    put("programs", "00000000000000dd.bin.tmp-abcdef", "somebody's\n", 0);
    put("programs", "00000000000000ee.bin.tmp-abc", "", 0);
    int removed = -1;
    assert_int_equal(clnz_cache_clear(&removed), CLNZ_SUCCESS);
    assert_int_equal(removed, 3);
    assert_false(exists("programs", "00000000000000aa.bin.tmp-AbC123"));
    assert_false(exists("programs", "00000000000000bb.bin.tmp-Xy9z00"));
    assert_false(exists("tuning", "dev--x--y.txt.tmp-Qq1234"));
    assert_true(exists("programs", "00000000000000cc.bin.tmp-L1ve00"));
    assert_true(exists("tuning", "vendor--x--CPU.txt.tmp-L1ve01"));
    assert_true(exists("programs", "00000000000000dd.bin.tmp-abcdef"));
    assert_true(exists("programs", "00000000000000ee.bin.tmp-abc"));
    close(live[0]); /* their writers are gone now */
    close(live[1]);
    assert_int_equal(clnz_cache_clear(&removed), CLNZ_SUCCESS);
    assert_int_equal(removed, 2);
    assert_false(exists("programs", "00000000000000cc.bin.tmp-L1ve00"));
    assert_false(exists("tuning", "vendor--x--CPU.txt.tmp-L1ve01"));
}

/* Probe item 4: a run killed between mkstemp and rename left its
 * temporary, and no later run removed it. The next run that writes in the
 * folder does, and leaves a live writer's. */
static void test_a_write_removes_dead_temporaries(void **state)
{
    (void)state;
    put("programs", "00000000000000aa.bin.tmp-AbC123", "", 0);
    put("programs", "00000000000000bb.bin.tmp-Xy9z00", "CLNZBIN1\nkey\n5\nhello", 0);
    int live = put("programs", "00000000000000cc.bin.tmp-L1ve00", "CLNZBIN1\n", 1);
    put("programs", "00000000000000dd.bin.tmp-abcdef", "somebody's\n", 0);
    clnz_stats s = run_once(NULL); /* cold: stores its programs */
    assert_true(s.programs_from_source > 0);
    assert_false(exists("programs", "00000000000000aa.bin.tmp-AbC123"));
    assert_false(exists("programs", "00000000000000bb.bin.tmp-Xy9z00"));
    assert_true(exists("programs", "00000000000000cc.bin.tmp-L1ve00"));
    assert_true(exists("programs", "00000000000000dd.bin.tmp-abcdef"));
    close(live);
}

/* Probe item 5: a `cache --clear` that came while a write was between its
 * temporary and the rename deleted the temporary ("removed 1 files"), and
 * the write failed with ENOENT. The writer's lock keeps it. */
static void test_clear_during_a_write_leaves_it_alone(void **state)
{
    (void)state;
    char path[400];
    cache_file("programs", "00000000000000aa.bin", path, sizeof path);
    const char text[] = "CLNZBIN1\nkey\n5\nhello0123456789abcdef\n";
    clear_at_rename = -2;
    int err = cache_write_atomic(path, text, sizeof text - 1);
    int removed = clear_at_rename;
    clear_at_rename = -1;
    assert_int_equal(removed, 0);
    assert_int_equal(err, 0);
    size_t size = 0;
    char *got = cache_read_file(path, 4096, &size);
    assert_non_null(got);
    assert_string_equal(got, text);
    free(got);
}

/* Probe item 6: a reader that found a cache file bad deleted it by path,
 * after the driver had looked at it, so a good file another process had
 * renamed into place meanwhile went instead. Now the file read goes, or
 * nothing; and with no writer the bad one still goes. */
static void test_bad_file_replaced_meanwhile_is_kept(void **state)
{
    (void)state;
    clnz_context *c = NULL;
    char msg[256];
    if (clnz_context_create(NULL, &c, msg, sizeof msg))
        fail_msg("context: %s", msg);
    const char *key = "test_cache: a key of its own";
    char path[400], good[420], name[64];
    snprintf(name, sizeof name, "%016llx.bin",
             (unsigned long long)cache_hash(key, strlen(key), CACHE_HASH_SEED));
    cache_file("programs", name, path, sizeof path);
    snprintf(good, sizeof good, "%s.new", path);
    char bad_text[200], good_text[200];
    snprintf(bad_text, sizeof bad_text, "%s%s\n3\nbad", CACHE_MAGIC_PROGRAM, key);
    size_t n = strlen(bad_text);
    snprintf(bad_text + n, sizeof bad_text - n, "%016llx\n",
             (unsigned long long)cache_hash(bad_text, n, CACHE_HASH_SEED));
    snprintf(good_text, sizeof good_text, "the good one\n");
    write_file(path, bad_text);
    write_file(good, good_text);
    swap_from = good;
    swap_to = path;
    assert_null(program_cache_load(c, key));
    assert_null(swap_from); /* the binary was handed to the driver */
    size_t size = 0;
    char *now = cache_read_file(path, 4096, &size);
    assert_non_null(now);
    assert_string_equal(now, good_text);
    free(now);
    write_file(path, bad_text); /* no writer this time */
    assert_null(program_cache_load(c, key));
    assert_int_equal(access(path, F_OK), -1);
    char names[16][300];
    assert_int_equal(list_bins(names, 16), 0); /* nothing left aside */
    clnz_context_release(c);
}

/* A folder of 200-byte names whose path is at least `total` bytes. */
static char *long_dir(const char *base, size_t total, int create)
{
    char *path = malloc(total + 512);
    assert_non_null(path);
    snprintf(path, total + 512, "%s", base);
    for (size_t len = strlen(path); len < total; len += 200) {
        path[len++] = '/';
        memset(path + len, 'd', 200);
        path[len + 200] = '\0';
        if (create)
            assert_int_equal(mkdir(path, 0755), 0);
    }
    return path;
}

/* Item 17: a cache folder whose path passes 1023 bytes is used whole
 * (never a cut one); one of PATH_MAX bytes or more is no cache, and
 * clnz_cache_clear refuses it. */
static void test_issue16_item17_long_cache_dir(void **state)
{
    (void)state;
    char *dir = long_dir(tu_cache_dir(), 1500, 1);
    setenv("CLNZ_CACHE_DIR", dir, 1);
    clnz_stats s = run_once(NULL);
    assert_true(s.programs_from_source > 0);
    s = run_once(NULL);
    assert_int_equal(s.programs_from_source, 0); /* found where it was stored */
    char *buf = malloc(4096);
    assert_string_equal(clnz_cache_dir(buf, 4096), dir);
    assert_string_equal(clnz_cache_dir(buf, 1024), ""); /* too small: no path, not a cut one */
    int removed = 0;
    assert_int_equal(clnz_cache_clear(&removed), CLNZ_SUCCESS);
    assert_true(removed > 0);
    char *too_long = long_dir(dir, PATH_MAX + 10, 0);
    setenv("CLNZ_CACHE_DIR", too_long, 1);
    assert_int_equal(clnz_cache_clear(&removed), CLNZ_ERROR_INVALID_VALUE);
    assert_int_equal(removed, 0);
    const char *msg;
    s = run_once(&msg); /* no cache, still a result */
    assert_non_null(strstr(msg, "PATH_MAX"));
    setenv("CLNZ_CACHE_DIR", tu_cache_dir(), 1);
    free(buf);
    free(dir);
    free(too_long);
}

/* Build options up to the buffer's PROGRAM_OPTIONS_MAX - 1 characters are
 * whole; one more marks the ref cut (program_append), which every build
 * refuses with the reason and a program set keeps apart from a whole ref
 * whose options read the same. */
static void test_program_options_cut_at_the_buffer(void **state)
{
    (void)state;
    char text[PROGRAM_OPTIONS_MAX + 1];
    memset(text, 'x', sizeof text - 1);
    text[PROGRAM_OPTIONS_MAX - 1] = '\0';
    program_ref whole, cut;
    program_start(&whole, "lookback");
    program_append(&whole, "%s", text);
    assert_int_equal(whole.cut, 0);
    assert_int_equal(strlen(whole.options), PROGRAM_OPTIONS_MAX - 1);
    program_start(&cut, "lookback");
    program_append(&cut, "%sy", text);
    assert_int_equal(cut.cut, PROGRAM_OPTIONS_MAX); /* the bytes it needed */
    assert_string_equal(cut.options, whole.options);
    program_start(&cut, "lookback");
    program_append(&cut, "%s", text + 1);
    assert_int_equal(cut.cut, 0);
    program_append(&cut, "ab"); /* one fits, the other does not */
    assert_int_equal(cut.cut, PROGRAM_OPTIONS_MAX);
    program_append(&cut, " -DX=1"); /* counted on */
    assert_int_equal(cut.cut, PROGRAM_OPTIONS_MAX + 6);
    program_set set = {0};
    assert_int_equal(program_set_add(&set, &whole), 0);
    assert_int_equal(program_set_find(&set, &cut), -1);
    program_set_free(&set);

    clnz_context *c = NULL;
    char msg[256];
    if (clnz_context_create(NULL, &c, msg, sizeof msg))
        fail_msg("context: %s", msg);
    cl_kernel k = (cl_kernel)&k;
    assert_int_equal(program_kernel(c, &cut, "lb_run", &k), CLNZ_ERROR_INVALID_VALUE);
    assert_null(k);
    char want[96];
    snprintf(want, sizeof want, "build options of kernels/lookback.cl come to %d bytes, more than "
             "the %d", PROGRAM_OPTIONS_MAX + 6, PROGRAM_OPTIONS_MAX - 1);
    assert_non_null(strstr(clnz_context_message(c), want));
    clnz_context_release(c);
}

/* A cache file gets the permissions the process's umask allows (review:
 * 0644 always, so world-readable under umask 077). */
static void test_cache_files_follow_the_umask(void **state)
{
    (void)state;
    static const mode_t masks[] = {077, 022, 027};
    for (size_t i = 0; i < sizeof masks / sizeof masks[0]; ++i) {
        char path[PATH_MAX];
        snprintf(path, sizeof path, "%s/umask-%zu.bin", tu_cache_dir(), i);
        mode_t old = umask(masks[i]);
        int err = cache_write_atomic(path, "x", 1);
        umask(old);
        assert_int_equal(err, 0);
        struct stat sb;
        assert_int_equal(stat(path, &sb), 0);
        assert_int_equal(sb.st_mode & 0777, 0666 & ~masks[i]);
        remove(path);
    }
}

int main(void)
{
    tu_seed("test_cache");
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_program_options_cut_at_the_buffer),
        cmocka_unit_test_setup_teardown(test_cache_files_follow_the_umask, tu_cache_setup,
                                        tu_cache_teardown),
        cmocka_unit_test_setup_teardown(test_warm_context_skips_the_compiler, tu_cache_setup,
                                        tu_cache_teardown),
        cmocka_unit_test_setup_teardown(test_corrupt_and_truncated_files_are_rebuilt,
                                        tu_cache_setup, tu_cache_teardown),
        cmocka_unit_test_setup_teardown(test_binary_the_driver_rejects_falls_back, tu_cache_setup,
                                        tu_cache_teardown),
        cmocka_unit_test_setup_teardown(test_unwritable_cache_is_a_warning, tu_cache_setup,
                                        tu_cache_teardown),
        cmocka_unit_test_setup_teardown(test_issue16_item5_clear_removes_only_clnz_files,
                                        tu_cache_setup, tu_cache_teardown),
        cmocka_unit_test_setup_teardown(test_clear_refuses_a_file_as_the_folder, tu_cache_setup,
                                        tu_cache_teardown),
        cmocka_unit_test_setup_teardown(test_issue16_item7_fifo_in_the_cache_does_not_block,
                                        tu_cache_setup, tu_cache_teardown),
        cmocka_unit_test_setup_teardown(test_issue16_item17_long_cache_dir, tu_cache_setup,
                                        tu_cache_teardown),
        cmocka_unit_test_setup_teardown(test_clear_removes_dead_temporaries_not_live_ones,
                                        tu_cache_setup, tu_cache_teardown),
        cmocka_unit_test_setup_teardown(test_a_write_removes_dead_temporaries, tu_cache_setup,
                                        tu_cache_teardown),
        cmocka_unit_test_setup_teardown(test_clear_during_a_write_leaves_it_alone, tu_cache_setup,
                                        tu_cache_teardown),
        cmocka_unit_test_setup_teardown(test_bad_file_replaced_meanwhile_is_kept, tu_cache_setup,
                                        tu_cache_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
