/* npy.c: the .npy format (versions 1.0, 2.0 and 3.0) for the clnz command.
 *
 * Input is mapped read-only and checked before anything is allocated from it:
 * the header must parse, the dtype must be one clnz knows, and the shape must
 * describe exactly the bytes that follow the header. */
#define _GNU_SOURCE
#include "io/io.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#define FAIL(...)                                \
    do {                                         \
        snprintf(err, err_size, __VA_ARGS__);    \
        return -1;                               \
    } while (0)

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
        if (k + 1 >= n)
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
        uint64_t v = 0;
        while (c->p < c->end && *c->p >= '0' && *c->p <= '9') {
            if (v > (UINT64_C(1) << 62) / 10)
                FAIL("a dimension in the header's shape is absurdly large");
            v = v * 10 + (uint64_t)(*c->p++ - '0');
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

static int parse_descr(const char *d, clnz_dtype *dt, int *big, char *err, size_t err_size)
{
    static const struct {
        const char *code;
        clnz_dtype dtype;
    } known[] = {{"b1", CLNZ_BOOL}, {"u1", CLNZ_U8},  {"i1", CLNZ_I8},  {"u2", CLNZ_U16},
                 {"i2", CLNZ_I16},  {"u4", CLNZ_U32}, {"i4", CLNZ_I32}, {"u8", CLNZ_U64},
                 {"i8", CLNZ_I64},  {"f2", CLNZ_F16}, {"f4", CLNZ_F32}, {"f8", CLNZ_F64}};
    char order = d[0];
    if (order != '<' && order != '>' && order != '|' && order != '=')
        FAIL("unsupported dtype '%s'", d);
    for (size_t i = 0; i < sizeof known / sizeof known[0]; ++i) {
        if (strcmp(d + 1, known[i].code) == 0) {
            *dt = known[i].dtype;
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

int npy_read(const char *path, npy_array *a, char *err, size_t err_size)
{
    memset(a, 0, sizeof *a);
    int fd = open(path, O_RDONLY);
    if (fd < 0)
        FAIL("cannot open %s: %s", path, strerror(errno));
    struct stat sb;
    if (fstat(fd, &sb) != 0 || !S_ISREG(sb.st_mode)) {
        close(fd);
        FAIL("%s is not a regular file", path);
    }
    size_t size = (size_t)sb.st_size;
    if (size < 10) {
        close(fd);
        FAIL("%s is not a .npy file (too short)", path);
    }
    void *map = mmap(NULL, size, PROT_READ, MAP_PRIVATE, fd, 0);
    close(fd);
    if (map == MAP_FAILED)
        FAIL("cannot map %s: %s", path, strerror(errno));
    a->map = map;
    a->map_size = size;
    const unsigned char *b = map;
    size_t hlen, hstart;
    if (memcmp(b, "\x93NUMPY", 6) != 0) {
        npy_free(a);
        FAIL("%s is not a .npy file (bad magic)", path);
    }
    if (b[6] == 1) {
        hlen = (size_t)b[8] | (size_t)b[9] << 8;
        hstart = 10;
    } else if (b[6] == 2 || b[6] == 3) {
        if (size < 12) {
            npy_free(a);
            FAIL("%s: truncated header", path);
        }
        hlen = (size_t)b[8] | (size_t)b[9] << 8 | (size_t)b[10] << 16 | (size_t)b[11] << 24;
        hstart = 12;
    } else {
        int major = b[6], minor = b[7];
        npy_free(a);
        FAIL("%s: unsupported .npy format version %d.%d", path, major, minor);
    }
    if (hlen > size - hstart) {
        npy_free(a);
        FAIL("%s: truncated header", path);
    }
    int big = 0;
    char perr[200];
    if (parse_header((const char *)b + hstart, hlen, a, &big, perr, sizeof perr)) {
        npy_free(a);
        FAIL("%s: %s", path, perr);
    }
    size_t elem = clnz_dtype_size(a->dtype);
    uint64_t n = 1;
    for (int d = 0; d < a->rank; ++d) {
        uint64_t e = (uint64_t)a->shape[d];
        if (e && n > ((UINT64_C(1) << 62) / elem) / e) {
            npy_free(a);
            FAIL("%s: the shape is absurdly large", path);
        }
        n *= e;
    }
    size_t data_off = hstart + hlen;
    uint64_t have = size - data_off, want = n * elem;
    if (have != want) {
        npy_free(a);
        FAIL("%s: the shape needs %llu data bytes but the file has %llu", path,
             (unsigned long long)want, (unsigned long long)have);
    }
    int64_t s = 1;
    for (int i = 0; i < a->rank; ++i) {
        int d = a->fortran_order ? i : a->rank - 1 - i;
        a->strides[d] = s;
        s *= a->shape[d] ? a->shape[d] : 1;
    }
    a->data = b + data_off;
    if (big && n) {
        a->swapped = malloc((size_t)want);
        if (!a->swapped) {
            npy_free(a);
            FAIL("%s: out of memory", path);
        }
        memcpy(a->swapped, a->data, (size_t)want);
        byteswap(a->swapped, n, elem);
        a->data = a->swapped;
    }
    return 0;
}

void npy_free(npy_array *a)
{
    if (a->map)
        munmap(a->map, a->map_size);
    free(a->swapped);
    a->map = a->swapped = NULL;
}

/* ---- writing ---- */
static int write_all(int fd, const void *p, size_t n)
{
    const char *c = p;
    while (n) {
        ssize_t w = write(fd, c, n);
        if (w < 0) {
            if (errno == EINTR)
                continue;
            return -1;
        }
        c += w;
        n -= (size_t)w;
    }
    return 0;
}

int npy_write_tmp(const char *path, const char *descr, int ndim, const int64_t *shape,
                  const void *data, size_t bytes, npy_pending *out, char *err, size_t err_size)
{
    out->path = out->tmp_path = NULL;
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
    unsigned char head[1152];
    memcpy(head, "\x93NUMPY\x01\x00", 8);
    size_t hlen = padded - 10;
    head[8] = (unsigned char)(hlen & 0xff);
    head[9] = (unsigned char)(hlen >> 8);
    memcpy(head + 10, dict, (size_t)k);
    memset(head + 10 + k, ' ', padded - 10 - (size_t)k - 1);
    head[padded - 1] = '\n';

    size_t plen = strlen(path);
    char *tmp = malloc(plen + 32);
    char *final = strdup(path);
    if (!tmp || !final) {
        free(tmp);
        free(final);
        FAIL("out of memory");
    }
    snprintf(tmp, plen + 32, "%s.clnz-tmp-XXXXXX", path);
    int fd = mkstemp(tmp);
    if (fd < 0) {
        int e = errno;
        free(tmp);
        free(final);
        FAIL("cannot create %s: %s", path, strerror(e));
    }
    if (fchmod(fd, 0644) != 0 || write_all(fd, head, padded) != 0 ||
        write_all(fd, data, bytes) != 0 || fsync(fd) != 0) {
        int e = errno;
        close(fd);
        unlink(tmp);
        free(tmp);
        free(final);
        FAIL("cannot write %s: %s", path, strerror(e));
    }
    if (close(fd) != 0) {
        int e = errno;
        unlink(tmp);
        free(tmp);
        free(final);
        FAIL("cannot write %s: %s", path, strerror(e));
    }
    out->path = final;
    out->tmp_path = tmp;
    return 0;
}

int npy_commit(npy_pending *p, char *err, size_t err_size)
{
    if (!p->tmp_path)
        return 0;
    if (rename(p->tmp_path, p->path) != 0) {
        int e = errno;
        npy_discard(p);
        FAIL("cannot rename into %s: %s", p->path ? p->path : "?", strerror(e));
    }
    free(p->tmp_path);
    free(p->path);
    p->tmp_path = p->path = NULL;
    return 0;
}

void npy_discard(npy_pending *p)
{
    if (p->tmp_path)
        unlink(p->tmp_path);
    free(p->tmp_path);
    free(p->path);
    p->tmp_path = p->path = NULL;
}

const char *npy_descr(clnz_dtype dtype)
{
    static const char *const d[] = {"|b1", "|u1", "|i1", "<u2", "<i2", "<u4",
                                    "<i4", "<u8", "<i8", "<f2", "<f4", "<f8"};
    return (unsigned)dtype < CLNZ_DTYPE_COUNT ? d[dtype] : NULL;
}

clnz_tensor npy_tensor(const npy_array *arr)
{
    clnz_tensor t = {arr->dtype, arr->rank, arr->shape, arr->strides};
    return t;
}
