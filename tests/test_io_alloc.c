/* test_io_alloc.c: the memory the clnz command reads arrays into
 * (io_data_alloc, host/io/input.c). Small arrays get page-aligned blocks;
 * from IO_HUGE_MIN_BYTES on, blocks aligned to 2 MiB with the whole huge
 * pages inside them hinted to MADV_HUGEPAGE (numpy hints its arrays of
 * 4 MiB and more).
 * npy_read puts a file's data there, byte for byte: checked against a file
 * whose header this test writes itself. */
#include "testutil.h"

#include "io/io.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#define HUGE ((uintptr_t)IO_HUGE_PAGE)

/* The hints asked for, counted: this definition in the test program takes
 * the place of libc's for the io objects linked in. */
static int huge_calls;
static uintptr_t huge_from, huge_bytes;
int madvise(void *addr, size_t len, int advice)
{
#ifdef MADV_HUGEPAGE
    if (advice == MADV_HUGEPAGE) {
        ++huge_calls;
        huge_from = (uintptr_t)addr;
        huge_bytes = len;
    }
#endif
    return (int)syscall(SYS_madvise, addr, len, advice);
}

static void test_small_blocks_are_pages(void **state)
{
    (void)state;
    size_t sizes[] = {0, 1, 4095, 4097, IO_HUGE_MIN_BYTES - 1};
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; ++i) {
        huge_calls = 0;
        unsigned char *p = io_data_alloc(sizes[i]);
        assert_non_null(p);
        assert_int_equal((uintptr_t)p % 4096, 0);
        assert_int_equal(huge_calls, 0);
        memset(p, 0xa5, sizes[i] ? sizes[i] : 1); /* all of it is writable */
        free(p);
    }
}

static void test_large_blocks_are_huge_pages(void **state)
{
    (void)state;
    size_t sizes[] = {IO_HUGE_MIN_BYTES, IO_HUGE_MIN_BYTES + 12345, 3 * IO_HUGE_MIN_BYTES + 1};
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; ++i) {
        huge_calls = 0;
        unsigned char *p = io_data_alloc(sizes[i]);
        assert_non_null(p);
        assert_int_equal((uintptr_t)p % HUGE, 0);
#ifdef MADV_HUGEPAGE
        /* once, over every whole huge page of the block and nothing past it */
        assert_int_equal(huge_calls, 1);
        assert_true(huge_from == (uintptr_t)p);
        assert_true(huge_bytes == sizes[i] / HUGE * HUGE);
#endif
        memset(p, 0x5a, sizes[i]);
        assert_int_equal(p[sizes[i] - 1], 0x5a);
        free(p);
    }
}

static void test_impossible_block_is_null(void **state)
{
    (void)state;
#if defined(__SANITIZE_ADDRESS__)
    skip(); /* AddressSanitizer's allocator aborts on such a size instead of failing it */
#else
    assert_null(io_data_alloc(SIZE_MAX - 4096));
#endif
}

/* A version 1.0 .npy of n little-endian f32 values (i * 0.5), its header
 * padded with spaces to a multiple of 64 bytes, as numpy writes it. */
static void write_npy(const char *path, size_t n)
{
    char dict[128];
    int len = snprintf(dict, sizeof dict,
                       "{'descr': '<f4', 'fortran_order': False, 'shape': (%zu,), }", n);
    size_t total = (10 + (size_t)len + 1 + 63) / 64 * 64, hlen = total - 10;
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    unsigned char len16[2] = {(unsigned char)(hlen & 0xff), (unsigned char)(hlen >> 8)};
    fwrite("\x93NUMPY\x01\x00", 1, 8, f); /* magic, version 1.0 */
    fwrite(len16, 1, 2, f);
    fwrite(dict, 1, (size_t)len, f);
    for (size_t i = (size_t)len; i + 1 < hlen; ++i)
        fputc(' ', f);
    fputc('\n', f);
    for (size_t i = 0; i < n; ++i) {
        float v = (float)i * 0.5f;
        fwrite(&v, sizeof v, 1, f);
    }
    assert_int_equal(fclose(f), 0);
}

static void test_npy_data_lands_in_huge_pages(void **state)
{
    (void)state;
    char path[] = "/tmp/clnz_test_io_alloc_XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    close(fd);
    size_t sizes[] = {1000, IO_HUGE_MIN_BYTES / 4 + 3}; /* a page's block, then a huge one */
    for (size_t s = 0; s < 2; ++s) {
        size_t n = sizes[s];
        write_npy(path, n);
        npy_array a;
        char err[256];
        assert_int_equal(npy_read(path, &a, err, sizeof err), 0);
        assert_int_equal(a.dtype, CLNZ_F32);
        assert_int_equal(a.rank, 1);
        assert_int_equal(a.shape[0], (int64_t)n);
        assert_int_equal((uintptr_t)a.data % (n * 4 >= IO_HUGE_MIN_BYTES ? HUGE : 4096), 0);
        const float *x = a.data;
        for (size_t i = 0; i < n; ++i)
            if (x[i] != (float)i * 0.5f)
                fail_msg("element %zu: %g, not %g", i, (double)x[i], (double)i * 0.5);
        npy_free(&a);
    }
    unlink(path);
}

int main(void)
{
    tu_seed("test_io_alloc");
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_small_blocks_are_pages),
        cmocka_unit_test(test_large_blocks_are_huge_pages),
        cmocka_unit_test(test_impossible_block_is_null),
        cmocka_unit_test(test_npy_data_lands_in_huge_pages),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
