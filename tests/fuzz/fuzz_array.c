/* fuzz_array.c: libFuzzer target for every reader of the clnz command's
 * input files: .npy, PNG (libpng), PGM and PPM, through array_read. The
 * bytes become a file (the readers take paths); whatever they hold, the
 * reader must return an array or a one-line error, never crash, leak or
 * read out of bounds (the target is built with ASan and UBSan). */
#include "io/io.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size)
{
    static char path[64];
    if (!*path)
        snprintf(path, sizeof path, "/tmp/clnz-fuzz-array-%d", (int)getpid());
    FILE *f = fopen(path, "wb");
    if (!f)
        return 0;
    fwrite(data, 1, size, f);
    fclose(f);
    npy_array a;
    char err[512];
    if (array_read(path, &a, err, sizeof err) == 0) {
        /* touch every byte the array claims, so a wrong size shows up */
        clnz_tensor t = npy_tensor(&a);
        size_t n = clnz_dtype_size(t.dtype);
        for (int d = 0; d < t.rank; ++d)
            n *= (size_t)t.shape[d];
        volatile unsigned char sink = 0;
        if (a.strides[0] >= 0 && !a.fortran_order)
            for (size_t i = 0; i < n; ++i)
                sink ^= ((const unsigned char *)a.data)[i];
        (void)sink;
        npy_free(&a);
    } else if (!*err || strchr(err, '\n')) {
        abort(); /* an error is one line */
    }
    return 0;
}
