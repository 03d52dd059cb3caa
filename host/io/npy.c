/* npy.c: the .npy format (versions 1.0, 2.0 and 3.0) for the clnz command.
 *
 * Input is read (input.c) and checked before anything is allocated from
 * it: the header must parse, the dtype must be one clnz knows, and the
 * shape must describe exactly the bytes that follow the header (for a
 * stream: the bytes up to its end). */
#define _GNU_SOURCE
#include "io/io.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FAIL(...)                                \
    do {                                         \
        snprintf(err, err_size, __VA_ARGS__);    \
        return -1;                               \
    } while (0)

/* numpy writes headers of a few hundred bytes (and reads at most 10000 by
 * default); a longer one is not worth allocating for. */
#define NPY_HEADER_LEN_MAX (1u << 20)

/* ---- the header: a Python dict literal ---- */
typedef struct {
    const char *p, *end;
} cursor;

static void skip_ws(cursor *c)
{
    while (c->p < c->end && (*c->p == ' ' || *c->p == '\t' || *c->p == '\n' || *c->p == '\r'))
        c->p++;
}

static int eat(cursor *c, char ch)
{
    skip_ws(c);
    if (c->p < c->end && *c->p == ch) {
        c->p++;
        return 1;
    }
    return 0;
}

/* A quoted string (no escapes needed for npy keys and descrs). */
static int parse_str(cursor *c, char *out, size_t n)
{
    skip_ws(c);
    if (c->p >= c->end || (*c->p != '\'' && *c->p != '"'))
        return 0;
    char q = *c->p++;
    size_t k = 0;
    while (c->p < c->end && *c->p != q) {
        /* a NUL would cut the string short for strcmp: "<f4\0junk" is no "<f4" */
        if (k + 1 >= n || *c->p == '\0')
            return 0;
        out[k++] = *c->p++;
    }
    if (c->p >= c->end)
        return 0;
    c->p++;
    out[k] = '\0';
    return 1;
}

static int parse_word(cursor *c, const char *w)
{
    skip_ws(c);
    size_t n = strlen(w);
    if ((size_t)(c->end - c->p) >= n && memcmp(c->p, w, n) == 0) {
        c->p += n;
        return 1;
    }
    return 0;
}

static int parse_shape(cursor *c, npy_array *a, char *err, size_t err_size)
{
    if (!eat(c, '('))
        FAIL("the header's shape is not a tuple");
    a->rank = 0;
    for (;;) {
        if (eat(c, ')'))
            return 0;
        skip_ws(c);
        if (c->p >= c->end || *c->p < '0' || *c->p > '9')
            FAIL("the header's shape holds something other than non-negative integers");
        /* any extent numpy can make (an int64): an empty array may have
         * huge ones, and the element count is checked later */
        uint64_t v = 0;
        while (c->p < c->end && *c->p >= '0' && *c->p <= '9') {
            uint64_t digit = (uint64_t)(*c->p++ - '0');
            if (v > ((uint64_t)INT64_MAX - digit) / 10)
                FAIL("a dimension in the header's shape is larger than 2^63-1");
            v = v * 10 + digit;
        }
        if (c->p < c->end && *c->p == 'L') /* Python 2 longs */
            c->p++;
        if (a->rank == CLNZ_MAX_RANK)
            FAIL("the shape has more than %d dimensions", CLNZ_MAX_RANK);
        a->shape[a->rank++] = (int64_t)v;
        if (!eat(c, ',')) {
            if (eat(c, ')'))
                return 0;
            FAIL("the header's shape tuple is malformed");
        }
    }
}

/* A descr: a byte order ('<', '>', '|', '=') and numpy's kind and size,
 * matched against the library's table (clnz_dtype_numpy, native order). */
static int parse_descr(const char *d, clnz_dtype *dt, int *big, char *err, size_t err_size)
{
    char order = d[0];
    if (order != '<' && order != '>' && order != '|' && order != '=')
        FAIL("unsupported dtype '%s'", d);
    for (int k = 0; k < CLNZ_DTYPE_COUNT; ++k) {
        if (strcmp(d + 1, clnz_dtype_numpy((clnz_dtype)k) + 1) == 0) {
            *dt = (clnz_dtype)k;
            *big = order == '>' && clnz_dtype_size(*dt) > 1;
            return 0;
        }
    }
    FAIL("unsupported dtype '%s' (clnz reads bool, u8..u64, i8..i64, f16, f32, f64)", d);
}

static int parse_header(const char *h, size_t len, npy_array *a, int *big, char *err,
                        size_t err_size)
{
    cursor c = {h, h + len};
    int have_descr = 0, have_order = 0, have_shape = 0;
    if (!eat(&c, '{'))
        FAIL("the header is not a dictionary");
    while (!eat(&c, '}')) {
        char key[32];
        if (!parse_str(&c, key, sizeof key) || !eat(&c, ':'))
            FAIL("the header dictionary is malformed");
        if (strcmp(key, "descr") == 0) {
            char descr[64];
            skip_ws(&c);
            if (c.p < c.end && *c.p == '[')
                FAIL("structured dtypes are not supported");
            if (!parse_str(&c, descr, sizeof descr))
                FAIL("the header's descr is not a string");
            if (parse_descr(descr, &a->dtype, big, err, err_size))
                return -1;
            have_descr = 1;
        } else if (strcmp(key, "fortran_order") == 0) {
            if (parse_word(&c, "True"))
                a->fortran_order = 1;
            else if (parse_word(&c, "False"))
                a->fortran_order = 0;
            else
                FAIL("the header's fortran_order is not True or False");
            have_order = 1;
        } else if (strcmp(key, "shape") == 0) {
            if (parse_shape(&c, a, err, err_size))
                return -1;
            have_shape = 1;
        } else {
            FAIL("unexpected key '%s' in the header", key);
        }
        if (!eat(&c, ',')) {
            if (eat(&c, '}'))
                break;
            FAIL("the header dictionary is malformed");
        }
    }
    if (!have_descr || !have_order || !have_shape)
        FAIL("the header lacks %s", !have_descr ? "descr" : !have_order ? "fortran_order" : "shape");
    skip_ws(&c); /* numpy pads with spaces and ends with a newline: nothing else */
    if (c.p != c.end)
        FAIL("the header has bytes after its dictionary");
    return 0;
}

static void byteswap(void *data, uint64_t n, size_t elem)
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

/* The magic, the version and the header's length: where the header starts. */
static int read_preamble(in_file *in, const char *name, size_t *hlen, size_t *hstart,
                         char *err, size_t err_size)
{
    unsigned char b[12];
    int64_t got = in_read(in, b, 10);
    if (got < 0)
        FAIL("cannot read %s: %s", name, strerror(errno));
    if (got >= 6 && memcmp(b, "\x93NUMPY", 6) != 0)
        FAIL("%s is not a .npy file (bad magic)", name);
    if (got < 10)
        FAIL("%s is not a .npy file (too short)", name);
    if (b[6] == 1) {
        *hlen = (size_t)b[8] | (size_t)b[9] << 8;
        *hstart = 10;
    } else if (b[6] == 2 || b[6] == 3) {
        if (in_read(in, b + 10, 2) != 2)
            FAIL("%s: truncated header", name);
        *hlen = (size_t)b[8] | (size_t)b[9] << 8 | (size_t)b[10] << 16 | (size_t)b[11] << 24;
        *hstart = 12;
    } else {
        FAIL("%s: unsupported .npy format version %d.%d", name, b[6], b[7]);
    }
    if (*hlen > NPY_HEADER_LEN_MAX)
        FAIL("%s: a header of %zu bytes is absurdly long", name, *hlen);
    if (!in->stream && *hlen > in->size - *hstart)
        FAIL("%s: truncated header", name);
    return 0;
}

static int read_header(in_file *in, const char *name, npy_array *a, int *big, size_t *data_off,
                       char *err, size_t err_size)
{
    size_t hlen, hstart;
    if (read_preamble(in, name, &hlen, &hstart, err, err_size))
        return -1;
    char *h = malloc(hlen ? hlen : 1);
    if (!h)
        FAIL("%s: out of memory", name);
    int64_t got = in_read(in, h, hlen);
    char perr[200];
    int bad = got != (int64_t)hlen || parse_header(h, hlen, a, big, perr, sizeof perr);
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
 * read that comes up short means the file shrank meanwhile. Page-aligned,
 * as the mapping was, for devices that use host memory in place. */
static int read_file_data(in_file *in, const char *name, npy_array *a, uint64_t want,
                          char *err, size_t err_size)
{
    if (want > SIZE_MAX || posix_memalign(&a->buffer, 4096, want ? (size_t)want : 1) != 0) {
        a->buffer = NULL;
        FAIL("%s: out of memory for %llu data bytes", name, (unsigned long long)want);
    }
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
        byteswap(a->buffer, (uint64_t)n, elem);
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
