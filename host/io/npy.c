/* npy.c: the .npy format (versions 1.0, 2.0 and 3.0) for the clnz command.
 *
 * Input is read (input.c) and checked before anything is allocated from
 * it: the header must parse (npy_header.c), the dtype must be one clnz
 * knows, and the shape must describe exactly the bytes that follow the
 * header (for a stream: the bytes up to its end). */
#define _GNU_SOURCE
#include "io/io.h"

#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* numpy writes headers of a few hundred bytes (and reads at most 10000 by
 * default); a longer one is not worth allocating for. */
#define NPY_HEADER_LEN_MAX (1u << 20)

void npy_byteswap(void *data, uint64_t n, size_t elem)
{
    unsigned char *p = data;
    for (uint64_t i = 0; i < n; ++i, p += elem)
        for (size_t a = 0, b = elem - 1; a < b; ++a, --b) {
            unsigned char t = p[a];
            p[a] = p[b];
            p[b] = t;
        }
}

/* The element count of a shape, or -1 above 2^62 bytes. Any extent goes
 * when another is 0: the array is empty whatever the rest (numpy makes
 * (0, 2**62)). */
static int64_t element_count(const npy_array *a, size_t elem)
{
    for (int d = 0; d < a->rank; ++d)
        if (a->shape[d] == 0)
            return 0;
    uint64_t n = 1;
    for (int d = 0; d < a->rank; ++d) {
        uint64_t e = (uint64_t)a->shape[d];
        if (n > ((UINT64_C(1) << 62) / elem) / e)
            return -1;
        n *= e;
    }
    return (int64_t)n;
}

/* Strides in elements, C or Fortran order; an empty array's are all 1
 * (nothing is read through them, and its extents' product may not fit). */
static void set_strides(npy_array *a, int64_t n)
{
    int64_t s = 1;
    for (int i = 0; i < a->rank; ++i) {
        int d = a->fortran_order ? i : a->rank - 1 - i;
        a->strides[d] = n ? s : 1;
        if (n)
            s *= a->shape[d];
    }
}

/* The magic, the version and the header's length: where the header starts.
 * numpy reads versions 1.0, 2.0 and 3.0 and no other (1.1 neither). */
static int read_preamble(in_file *in, const char *name, int *version, size_t *hlen,
                         size_t *hstart, char *err, size_t err_size)
{
    unsigned char b[12];
    int64_t got = in_read(in, b, 10);
    if (got < 0)
        FAIL("cannot read %s: %s", name, strerror(errno));
    if (got >= 6 && memcmp(b, "\x93NUMPY", 6) != 0)
        FAIL("%s is not a .npy file (bad magic)", name);
    if (got < 10)
        FAIL("%s is not a .npy file (too short)", name);
    *version = b[6];
    if (b[6] == 1 && b[7] == 0) {
        *hlen = (size_t)b[8] | (size_t)b[9] << 8;
        *hstart = 10;
    } else if ((b[6] == 2 || b[6] == 3) && b[7] == 0) {
        if (in_read(in, b + 10, 2) != 2)
            FAIL("%s: truncated header", name);
        *hlen = (size_t)b[8] | (size_t)b[9] << 8 | (size_t)b[10] << 16 | (size_t)b[11] << 24;
        *hstart = 12;
    } else {
        FAIL("%s: unsupported .npy format version %d.%d (numpy writes 1.0, 2.0 and 3.0)", name,
             b[6], b[7]);
    }
    if (*hlen > NPY_HEADER_LEN_MAX)
        FAIL("%s: a header of %zu bytes is absurdly long", name, *hlen);
    /* the size is the one at open: a file that grew since is read as it was */
    if (!in->stream && (in->size < *hstart || *hlen > in->size - *hstart))
        FAIL("%s: truncated header", name);
    return 0;
}

static int read_header(in_file *in, const char *name, npy_array *a, int *big, size_t *data_off,
                       char *err, size_t err_size)
{
    size_t hlen, hstart;
    int version;
    if (read_preamble(in, name, &version, &hlen, &hstart, err, err_size))
        return -1;
    char *h = malloc(hlen ? hlen : 1);
    if (!h)
        FAIL("%s: out of memory", name);
    int64_t got = in_read(in, h, hlen);
    char perr[512];
    int bad = got != (int64_t)hlen || npy_parse_header(h, hlen, version, a, big, perr, sizeof perr);
    free(h);
    if (got < 0)
        FAIL("cannot read %s: %s", name, strerror(errno));
    if (got != (int64_t)hlen)
        FAIL("%s: truncated header", name);
    if (bad)
        FAIL("%s: %s", name, perr);
    *data_off = hstart + hlen;
    return 0;
}

/* The data of a stream: read in growing steps, so that a header that lies
 * about its shape costs only the bytes that really come; then the stream
 * must end. */
static int read_stream_data(in_file *in, const char *name, npy_array *a, uint64_t want,
                            char *err, size_t err_size)
{
    uint64_t have = 0, cap = want < (1u << 20) ? want : (1u << 20);
    unsigned char *buf = malloc(cap ? (size_t)cap : 1);
    while (buf && have < want) {
        int64_t r = in_read(in, buf + have, cap - have);
        if (r < 0) {
            free(buf);
            FAIL("cannot read %s: %s", name, strerror(errno));
        }
        have += (uint64_t)r;
        if (have < cap)
            break;
        if (have < want) {
            cap = cap > want / 2 ? want : 2 * cap;
            unsigned char *more = realloc(buf, (size_t)cap);
            if (!more)
                free(buf);
            buf = more;
        }
    }
    if (!buf)
        FAIL("%s: out of memory for %llu data bytes", name, (unsigned long long)want);
    a->buffer = buf;
    unsigned char extra;
    if (have < want)
        FAIL("%s: the stream ended after %llu of the %llu data bytes its shape needs", name,
             (unsigned long long)have, (unsigned long long)want);
    if (in_read(in, &extra, 1) != 0)
        FAIL("%s: the stream has more bytes than its shape needs", name);
    return 0;
}

/* The data of a regular file: its size was checked against the shape; a
 * read that comes up short means the file shrank meanwhile. */
static int read_file_data(in_file *in, const char *name, npy_array *a, uint64_t want,
                          char *err, size_t err_size)
{
    a->buffer = want > SIZE_MAX ? NULL : io_data_alloc((size_t)want);
    if (!a->buffer)
        FAIL("%s: out of memory for %llu data bytes", name, (unsigned long long)want);
    int64_t got = in_read(in, a->buffer, want);
    if (got < 0)
        FAIL("cannot read %s: %s", name, strerror(errno));
    if ((uint64_t)got != want)
        FAIL("%s was cut short while being read (%llu of %llu data bytes)", name,
             (unsigned long long)got, (unsigned long long)want);
    return 0;
}

int npy_read_from(in_file *in, npy_array *a, char *err, size_t err_size)
{
    memset(a, 0, sizeof *a);
    char q[IO_QUOTE_MAX];
    const char *name = io_quote(in->path, q, sizeof q);
    int big = 0;
    size_t data_off;
    if (read_header(in, name, a, &big, &data_off, err, err_size))
        return -1;
    size_t elem = clnz_dtype_size(a->dtype);
    int64_t n = element_count(a, elem);
    if (n < 0)
        FAIL("%s: the shape is absurdly large", name);
    uint64_t want = (uint64_t)n * elem;
    if (!in->stream && in->size - data_off != want)
        FAIL("%s: the shape needs %llu data bytes but the file has %llu", name,
             (unsigned long long)want, (unsigned long long)(in->size - data_off));
    int rc = in->stream ? read_stream_data(in, name, a, want, err, err_size)
                        : read_file_data(in, name, a, want, err, err_size);
    if (rc) {
        npy_free(a);
        return -1;
    }
    if (big)
        npy_byteswap(a->buffer, (uint64_t)n, elem);
    a->big_endian = big;
    set_strides(a, n);
    a->data = a->buffer;
    return 0;
}

int npy_read(const char *path, npy_array *a, char *err, size_t err_size)
{
    in_file in;
    memset(a, 0, sizeof *a);
    if (in_open(&in, path, err, err_size))
        return -1;
    int rc = npy_read_from(&in, a, err, err_size);
    in_close(&in);
    return rc;
}

void npy_free(npy_array *a)
{
    free(a->buffer);
    a->buffer = NULL;
    a->data = NULL;
}

/* ---- writing ---- */
size_t npy_header(const char *descr, int ndim, const int64_t *shape,
                  unsigned char head[NPY_HEADER_MAX])
{
    char dict[1024]; /* up to CLNZ_MAX_RANK extents of 20 digits */
    int k = snprintf(dict, sizeof dict, "{'descr': '%s', 'fortran_order': False, 'shape': (",
                     descr);
    for (int d = 0; d < ndim; ++d)
        k += snprintf(dict + k, sizeof dict - (size_t)k, "%lld,%s", (long long)shape[d],
                      d + 1 < ndim ? " " : "");
    k += snprintf(dict + k, sizeof dict - (size_t)k, "), }");
    /* version 1.0: the whole header padded with spaces to a multiple of 64 */
    size_t total = 10 + (size_t)k + 1;
    size_t padded = (total + 63) / 64 * 64;
    memcpy(head, "\x93NUMPY\x01\x00", 8);
    size_t hlen = padded - 10;
    head[8] = (unsigned char)(hlen & 0xff);
    head[9] = (unsigned char)(hlen >> 8);
    memcpy(head + 10, dict, (size_t)k);
    memset(head + 10 + k, ' ', padded - 10 - (size_t)k - 1);
    head[padded - 1] = '\n';
    return padded;
}

const char *npy_descr(clnz_dtype dtype) { return clnz_dtype_numpy(dtype); }

clnz_tensor npy_tensor(const npy_array *arr)
{
    clnz_tensor t = {arr->dtype, arr->rank, arr->shape, arr->strides};
    return t;
}
