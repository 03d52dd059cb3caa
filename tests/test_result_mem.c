/* test_result_mem.c: the host memory of the blocking calls' results
 * (host/core/result_mem.c). A result above 32 MiB (less two pages, where
 * glibc's reuse of freed heap ends) given back through
 * clnz_result_free or clnz_array_free is kept while a context lives and
 * handed to the next result that needs between half its size and its size,
 * so that a pipeline does not pay the kernel's zeroing of fresh pages on
 * every call. Each result is checked against the sequential reference, so
 * no entry of the earlier result may show through. A kept block is still
 * mapped, so no fresh allocation can take its address: the same pointer
 * means the block was reused, another one that it was not. Between the two
 * calls the test holds a decoy of the same size, which would take the
 * address of a block that had been unmapped instead of kept. */
#include "testutil.h"

#include "core/result_mem.h"

#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

/* The library's madvise calls, counted: this definition in the test
 * program takes the place of libc's for libclnz.a's objects linked in. */
static int madv_free_calls;
int madvise(void *addr, size_t len, int advice)
{
    madv_free_calls += advice == MADV_FREE;
    return (int)syscall(SYS_madvise, addr, len, advice);
}

enum { ROWS = 1152, COLS = 4096 }; /* rows of 2 int64: 4.5 Mi entries are 72 MiB */

/* ROWS x COLS floats, nonzero where i % 8 < eighths: eighths/8 of them. */
static float *input(int eighths)
{
    float *x = malloc((size_t)ROWS * COLS * sizeof *x);
    assert_non_null(x);
    for (size_t i = 0; i < (size_t)ROWS * COLS; ++i)
        x[i] = (int)(i % 8) < eighths ? (float)(i % 1000) + 0.5f : 0.0f;
    return x;
}

/* clnz_nonzero on x, each entry checked against a sequential walk of x
 * (the generic reference in testutil.c would allocate 10 int64 per element
 * here); the caller gives the result back. */
static clnz_result nonzero_checked(const float *x)
{
    clnz_context *ctx = tu_context();
    int64_t shape[] = {ROWS, COLS};
    clnz_tensor t = {CLNZ_F32, 2, shape, NULL};
    clnz_result r;
    TU_CHECK(ctx, clnz_nonzero(ctx, &t, x, NULL, NULL, &r));
    assert_int_equal(r.ndim, 2);
    assert_int_equal(r.shape[1], 2);
    const int64_t *e = r.indices;
    int64_t z = 0;
    for (int64_t i = 0; i < (int64_t)ROWS * COLS; ++i) {
        if (x[i] == 0.0f)
            continue;
        if (z >= r.shape[0] || e[2 * z] != i / COLS || e[2 * z + 1] != i % COLS)
            fail_msg("entry %lld is not (%lld, %lld)", (long long)z, (long long)(i / COLS),
                     (long long)(i % COLS));
        ++z;
    }
    assert_int_equal(r.shape[0], z);
    assert_int_equal(r.count, z);
    return r;
}

/* A result of 63 MiB takes the 72 MiB block the one before left; one of
 * 35 MiB does not take it (it would hold more than twice what it needs),
 * and gets fresh memory. */
static void test_large_results_take_the_block_the_last_one_left(void **state)
{
    (void)state;
    float *all = input(8), *most = input(7), *half = input(4);
    for (size_t i = 0; i < (size_t)ROWS * COLS; i += 64)
        half[i] = 0.0f; /* 31/64 of it: just under half of the first result */
    clnz_result a = nonzero_checked(all);
    void *a_block = a.indices;
    clnz_result_free(&a);
    assert_null(a.indices);
    void *decoy = malloc((size_t)ROWS * COLS * 2 * sizeof(int64_t));
    assert_non_null(decoy);
    clnz_result b = nonzero_checked(most);
    assert_ptr_equal(b.indices, a_block);
    void *b_block = b.indices;
    clnz_result_free(&b);
    clnz_result c = nonzero_checked(half);
    assert_ptr_not_equal(c.indices, b_block);
    clnz_result_free(&c);
    /* and the 72 MiB block is still there for a result that needs it */
    clnz_result d = nonzero_checked(most);
    assert_ptr_equal(d.indices, b_block);
    clnz_result_free(&d);
    free(decoy);
    free(all);
    free(most);
    free(half);
}

/* select's values come back through clnz_array_free, and are kept too. */
static void test_select_results_are_kept(void **state)
{
    (void)state;
    clnz_context *ctx = tu_context();
    int64_t shape[] = {(int64_t)11 << 19}; /* 44 MiB of int64 (a dtype the quick tier builds) */
    int64_t *x = malloc((size_t)shape[0] * sizeof *x);
    assert_non_null(x);
    clnz_tensor t = {CLNZ_I64, 1, shape, NULL};
    void *block = NULL;
    for (int round = 0; round < 2; ++round) { /* all of it (44 MiB), then 7/8 (38.5 MiB) */
        for (int64_t i = 0; i < shape[0]; ++i)
            x[i] = round && i % 8 == 0 ? 0 : i + 1;
        clnz_array a;
        TU_CHECK(ctx, clnz_select(ctx, &t, x, NULL, NULL, NULL, &a));
        int64_t z = 0;
        for (int64_t i = 0; i < shape[0]; ++i)
            if (x[i] != 0 && ((int64_t *)a.data)[z++] != x[i])
                fail_msg("value %lld differs", (long long)z - 1);
        assert_int_equal(a.shape[0], z);
        if (block)
            assert_ptr_equal(a.data, block);
        block = a.data;
        clnz_array_free(&a);
    }
    free(x);
}

/* A block of size `bytes` laid out as the library lays out a large
 * result's, never touched: it takes the address of an unmapped block, not
 * memory. */
static void *decoy_of(size_t bytes)
{
    void *p = NULL;
    assert_int_equal(posix_memalign(&p, (size_t)2 << 20, bytes), 0);
    return p;
}

/* The limits (1 GiB in all, two blocks) hold for the results' sizes, not
 * for the larger blocks the allocator rounds them up to: a 1 GiB result is
 * kept, and two of 512 MiB together; a block beyond 1 GiB is not kept.
 * Through result_mem's own calls, pages untouched, so the test costs
 * address space, not memory or time. */
static void test_results_up_to_the_limit_are_kept(void **state)
{
    (void)state;
    tu_context(); /* blocks are kept while a context lives */
    const size_t gib = (size_t)1 << 30, half = gib / 2;
    int fresh;
    void *one = alloc_result_fresh(gib, &fresh);
    assert_non_null(one);
    assert_true(fresh);
    free_result(one);
    void *decoy = decoy_of(gib);
    void *again = alloc_result_fresh(gib, &fresh);
    assert_ptr_equal(again, one);
    assert_false(fresh);
    free(decoy);

    void *a = alloc_result_fresh(half, &fresh), *b = alloc_result_fresh(half, &fresh);
    assert_non_null(a);
    assert_non_null(b);
    free_result(again); /* kept, then given up for the two below (1.5 GiB) */
    free_result(a);
    free_result(b);
    void *decoys[2] = {decoy_of(half), decoy_of(half)};
    int fresh_c;
    void *c = alloc_result_fresh(half, &fresh_c), *d = alloc_result_fresh(half, &fresh);
    assert_false(fresh_c || fresh);
    assert_true((c == a && d == b) || (c == b && d == a));
    free_result(c);
    free_result(d);
    free(decoys[0]);
    free(decoys[1]);

    void *over = alloc_result_fresh(gib + ((size_t)4 << 20), &fresh);
    assert_non_null(over);
    free_result(over);
    decoy = decoy_of(gib + ((size_t)4 << 20));
    void *next = alloc_result_fresh(gib + ((size_t)4 << 20), &fresh);
    assert_ptr_not_equal(next, over);
    assert_true(fresh);
    free_result(next);
    free(decoy);
}

/* Resident pages of [p, p + bytes), in per cent: a page the system mapped
 * afresh is not resident until touched. */
static int resident_percent(void *p, size_t bytes)
{
    const uintptr_t page = 4096;
    uintptr_t a = ((uintptr_t)p + page - 1) & ~(page - 1);
    uintptr_t end = ((uintptr_t)p + bytes) & ~(page - 1);
    size_t pages = (size_t)((end - a) / page), in = 0;
    unsigned char *v = malloc(pages);
    assert_non_null(v);
    assert_int_equal(mincore((void *)a, end - a, v), 0);
    for (size_t i = 0; i < pages; ++i)
        in += v[i] & 1;
    free(v);
    return (int)(in * 100 / pages);
}

/* Results of about 32 MiB, on both sides of where glibc's reuse of freed
 * heap ends and kept blocks begin, come back in memory a call before
 * touched. A result of exactly 32 MiB (f32 2^22 at 100 %, flat) was mapped
 * afresh every call: glibc's chunk for it, header and page included, is
 * past the largest it reuses, and the block free_result kept for it was
 * never taken (the blocking call 6.2 ms against 1.3 device-resident). */
static void test_results_near_the_heap_limit_are_reused(void **state)
{
    (void)state;
    tu_context(); /* blocks are kept while a context lives */
    const size_t mib32 = (size_t)32 << 20;
    /* largest first: a heap grown by a smaller one would serve the next.
     * The last is the heap's, which AddressSanitizer's allocator holds in
     * quarantine when freed instead of reusing it as glibc does. */
    const size_t sizes[] = {mib32 + 1, mib32, mib32 - 16, mib32 - 8191, mib32 - 8192};
    size_t n_sizes = sizeof sizes / sizeof sizes[0];
#if defined(__SANITIZE_ADDRESS__)
    n_sizes -= 1;
#endif
    for (size_t k = 0; k < n_sizes; ++k) {
        for (int round = 0; round < 4; ++round) {
            int fresh;
            void *p = alloc_result_fresh(sizes[k], &fresh);
            assert_non_null(p);
            if (round == 3 && resident_percent(p, sizes[k]) < 90)
                fail_msg("a result of %zu bytes came back in fresh pages", sizes[k]);
            memset(p, 1, sizes[k]);
            free_result(p);
        }
    }
}

/* The header promises malloc'd memory: a caller may free() a result itself,
 * and the kept block is then simply not there for the next call. */
static void test_a_result_freed_with_free(void **state)
{
    (void)state;
    float *most = input(7);
    for (int round = 0; round < 3; ++round) {
        clnz_result r = nonzero_checked(most);
        free(r.indices);
    }
    free(most);
}

/* A block given back after the last context is released is freed at once,
 * without first advising its pages free (a wasted system call); one given
 * back while a context lives is advised and kept. */
static void test_no_advice_after_the_last_context(void **state)
{
    (void)state;
    float *x = input(7);
    clnz_result live = nonzero_checked(x), late = nonzero_checked(x);
    int before = madv_free_calls;
    clnz_result_free(&live);
    assert_int_equal(madv_free_calls, before + 1); /* the counter sees the library's calls */
    tu_context_done(); /* the last context */
    clnz_result_free(&late);
    assert_int_equal(madv_free_calls, before + 1);
    free(x);
}

int main(void)
{
    tu_seed("test_result_mem");
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_large_results_take_the_block_the_last_one_left),
        cmocka_unit_test(test_select_results_are_kept),
        cmocka_unit_test(test_a_result_freed_with_free),
        cmocka_unit_test(test_results_up_to_the_limit_are_kept),
        cmocka_unit_test(test_results_near_the_heap_limit_are_reused),
        cmocka_unit_test(test_no_advice_after_the_last_context), /* last: it releases */
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    tu_context_done();
    return rc;
}
