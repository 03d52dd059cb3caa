/* image.c: the clnz command's image inputs. PGM (P5) and PPM (P6) are
 * read here, PNG through libpng; each becomes an array as a .npy would:
 * (H, W) for grayscale, (H, W, C) for colour (C = 2 gray + alpha, 3 RGB,
 * 4 RGBA), u8 for 8-bit samples and u16 for 16-bit ones (stored big-endian
 * on disk, native in memory). Palettes become RGB (RGBA with transparency),
 * 1-, 2- and 4-bit gray becomes 8-bit (scaled to 0..255, as libpng does).
 * Images are read whole into memory first (input.c: from a file or a
 * stream alike), and sizes are checked against those bytes before anything
 * is allocated from them: PNM's exactly, PNG's against what deflate can
 * expand them to. */
#include "io/io.h"

#include <errno.h>
#include <math.h>
#include <png.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The array over a C-order buffer that free() takes (npy_free). */
static void image_array(npy_array *a, void *pixels, clnz_dtype dt, int64_t h, int64_t w, int c)
{
    memset(a, 0, sizeof *a);
    a->dtype = dt;
    a->rank = c == 1 ? 2 : 3;
    a->shape[0] = h, a->shape[1] = w, a->shape[2] = c;
    a->strides[2] = 1;
    a->strides[1] = c;
    a->strides[0] = w * c;
    if (c == 1)
        a->strides[1] = 1;
    a->data = pixels;
    a->buffer = pixels;
}

/* ---- PGM / PPM ---- */

/* The file's bytes with a read position. */
typedef struct {
    const unsigned char *p, *end;
} mem_reader;

static int mem_getc(mem_reader *m) { return m->p < m->end ? *m->p++ : EOF; }

/* The next header number, after whitespace and # comments. */
static int pnm_number(mem_reader *m, long *out)
{
    int ch = mem_getc(m);
    for (;;) {
        while (ch == ' ' || ch == '\t' || ch == '\n' || ch == '\r')
            ch = mem_getc(m);
        if (ch != '#')
            break;
        while (ch != '\n' && ch != '\r' && ch != EOF)
            ch = mem_getc(m);
    }
    if (ch < '0' || ch > '9')
        return 0;
    long v = 0;
    for (; ch >= '0' && ch <= '9'; ch = mem_getc(m)) {
        if (v > 1L << 40)
            return 0;
        v = v * 10 + (ch - '0');
    }
    /* A comment may follow a number at once ("7#c"): as Netpbm's pm_getc,
     * it reads as the line break that ends it. */
    if (ch == '#')
        while (ch != '\n' && ch != '\r' && ch != EOF)
            ch = mem_getc(m);
    /* exactly one whitespace byte ends the number (and, after maxval, the header) */
    if (ch != ' ' && ch != '\t' && ch != '\n' && ch != '\r')
        return 0;
    *out = v;
    return 1;
}

/* Takes the file's bytes (buf, len): the pixels are moved to its front. */
static int pnm_read(const char *name, unsigned char *buf, size_t len, npy_array *a, char *err,
                    size_t err_size)
{
    mem_reader m = {buf + 2, buf + len};
    char kind = (char)buf[1];
    int channels = kind == '5' ? 1 : 3;
    long w, h, maxval;
    if (!pnm_number(&m, &w) || !pnm_number(&m, &h) || !pnm_number(&m, &maxval))
        FAIL("%s: malformed PNM header (want P%c WIDTH HEIGHT MAXVAL)", name, kind);
    if (w < 1 || h < 1 || maxval < 1 || maxval > 65535)
        FAIL("%s: PNM width %ld, height %ld or maxval %ld out of range", name, w, h, maxval);
    int bytes = maxval > 255 ? 2 : 1;
    size_t at = (size_t)(m.p - buf), have = len - at;
    /* in 128 bits: width and height reach 2^40 each, and the message must
     * not show a product that wrapped */
    unsigned __int128 need = (unsigned __int128)w * (unsigned __int128)h * channels * bytes;
    if (need > have) {
        if (need >> 64)
            FAIL("%s: truncated: %ld x %ld pixels of %d bytes expected, %zu bytes found", name,
                 w, h, channels * bytes, have);
        FAIL("%s: truncated: %llu bytes of pixels expected, %zu found", name,
             (unsigned long long)need, have);
    }
    memmove(buf, buf + at, (size_t)need);
    /* one pass: 16-bit samples from big-endian to native, and a sample
     * above maxval refused (no PNM sample; Netpbm refuses it too). With
     * maxval 255 an 8-bit image needs neither. */
    if (bytes == 2 || maxval != 255)
        for (size_t i = 0; i < (size_t)need / (size_t)bytes; ++i) {
            uint16_t v = buf[i];
            if (bytes == 2) {
                v = (uint16_t)(buf[2 * i] << 8 | buf[2 * i + 1]);
                memcpy(buf + 2 * i, &v, 2);
            }
            if (v > maxval)
                FAIL("%s: PNM sample %u at pixel (%zu, %zu) is above maxval %ld", name, (unsigned)v,
                     i / (size_t)channels / (size_t)w, i / (size_t)channels % (size_t)w, maxval);
        }
    image_array(a, buf, bytes == 2 ? CLNZ_U16 : CLNZ_U8, h, w, channels);
    return 0;
}

/* ---- PNG ---- */

typedef struct {
    char *err;
    size_t err_size;
    const char *name;
} png_ctx;

static void png_fail(png_structp png, png_const_charp msg)
{
    png_ctx *pc = png_get_error_ptr(png);
    snprintf(pc->err, pc->err_size, "%s: PNG error: %s", pc->name, msg);
    png_longjmp(png, 1);
}

/* libpng reads from the bytes in memory; running past them is the error
 * a truncated file gives. */
static void png_from_memory(png_structp png, png_bytep out, png_size_t n)
{
    mem_reader *m = png_get_io_ptr(png);
    if ((size_t)(m->end - m->p) < n)
        png_error(png, "Read Error: truncated file");
    memcpy(out, m->p, n);
    m->p += n;
}

static void png_quiet(png_structp png, png_const_charp msg)
{
    (void)png, (void)msg; /* warnings (a bad CRC in an ancillary chunk) do not stop a read */
}

/* deflate expands at most about 1032:1 (RFC 1951's longest match, 258
 * bytes, in a code of 2 bits); PNG's scanlines are the inflated stream,
 * each a filter byte and the packed pixels. */
enum { DEFLATE_MAX_RATIO = 1032 };

static int png_read(const char *name, const unsigned char *buf, size_t len, npy_array *a,
                    char *err, size_t err_size)
{
    png_ctx pc = {err, err_size, name};
    mem_reader m = {buf, buf + len};
    png_structp png = png_create_read_struct(PNG_LIBPNG_VER_STRING, &pc, png_fail, png_quiet);
    png_infop info = png ? png_create_info_struct(png) : NULL;
    unsigned char *volatile px = NULL;
    png_bytep *volatile rows = NULL;
    if (!info) {
        png_destroy_read_struct(png ? &png : NULL, NULL, NULL);
        FAIL("%s: cannot start libpng", name);
    }
    if (setjmp(png_jmpbuf(png))) {
        free(px);
        free(rows);
        png_destroy_read_struct(&png, &info, NULL);
        return -1;
    }
    png_set_read_fn(png, &m, png_from_memory);
    png_read_info(png, info);
    int type = png_get_color_type(png, info), depth = png_get_bit_depth(png, info);
    double stream = (double)png_get_image_height(png, info) *
                    (1.0 + ceil((double)png_get_image_width(png, info) *
                                png_get_channels(png, info) * depth / 8.0));
    if (stream > (double)DEFLATE_MAX_RATIO * (double)len) {
        snprintf(err, err_size, "%s: PNG of %u x %u pixels cannot come out of %zu bytes", name,
                 (unsigned)png_get_image_width(png, info),
                 (unsigned)png_get_image_height(png, info), len);
        png_longjmp(png, 1);
    }
    if (type == PNG_COLOR_TYPE_PALETTE) {
        png_set_palette_to_rgb(png);
        if (png_get_valid(png, info, PNG_INFO_tRNS))
            png_set_tRNS_to_alpha(png);
    }
    if (type == PNG_COLOR_TYPE_GRAY && depth < 8)
        png_set_expand_gray_1_2_4_to_8(png);
    uint16_t probe = 1;
    if (depth == 16 && *(unsigned char *)&probe == 1)
        png_set_swap(png); /* big-endian in the file, native here */
    png_set_interlace_handling(png);
    png_read_update_info(png, info);
    size_t w = png_get_image_width(png, info), h = png_get_image_height(png, info);
    int channels = png_get_channels(png, info);
    size_t rowbytes = png_get_rowbytes(png, info);
    if (h && rowbytes > SIZE_MAX / h / 2)
        png_error(png, "image too large");
    px = io_data_alloc(rowbytes * h);
    rows = malloc(h * sizeof *rows);
    if (!px || !rows)
        png_error(png, "out of memory");
    for (size_t y = 0; y < h; ++y)
        rows[y] = px + y * rowbytes;
    png_read_image(png, rows);
    png_read_end(png, NULL);
    clnz_dtype dt = png_get_bit_depth(png, info) == 16 ? CLNZ_U16 : CLNZ_U8;
    png_destroy_read_struct(&png, &info, NULL);
    free(rows);
    image_array(a, px, dt, (int64_t)h, (int64_t)w, channels);
    return 0;
}

/* An image, from all of the input's bytes. */
static int image_read(in_file *in, int is_png, npy_array *a, char *err, size_t err_size)
{
    char q[IO_QUOTE_MAX];
    const char *name = io_quote(in->path, q, sizeof q);
    size_t len = 0;
    unsigned char *buf = in_slurp(in, &len, err, err_size);
    if (!buf)
        return -1;
    int rc;
    if (is_png) {
        rc = png_read(name, buf, len, a, err, err_size);
        free(buf);
    } else if (buf[1] == '5' || buf[1] == '6') {
        rc = pnm_read(name, buf, len, a, err, err_size); /* keeps buf as the pixels */
        if (rc)
            free(buf);
    } else {
        snprintf(err, err_size,
                 "%s: PNM format P%c is not supported (binary P5 gray and P6 colour are)", name,
                 buf[1]);
        free(buf);
        rc = -1;
    }
    return rc;
}

int array_read(const char *path, npy_array *a, char *err, size_t err_size)
{
    memset(a, 0, sizeof *a);
    in_file in;
    if (in_open(&in, path, err, err_size))
        return -1;
    unsigned char head[8] = {0};
    size_t got = in_peek(&in, head, 8);
    int is_png = got == 8 && png_sig_cmp(head, 0, 8) == 0;
    int is_pnm = got >= 2 && head[0] == 'P' && head[1] >= '1' && head[1] <= '7';
    /* what starts as a .npy, or nothing at all (the .npy reader says why) */
    int is_npy = memcmp(head, "\x93NUMPY", got < 6 ? got : 6) == 0;
    int rc;
    if (is_png || is_pnm) {
        rc = image_read(&in, is_png, a, err, err_size);
    } else if (is_npy) {
        rc = npy_read_from(&in, a, err, err_size);
    } else { /* any other file was "not a .npy file", as if that were all clnz reads */
        int cut = got < 8 && png_sig_cmp(head, 0, got) == 0; /* a PNG's start, or a 'P' */
        char q[IO_QUOTE_MAX];
        snprintf(err, err_size, "%s is not a .npy, PNG or PNM (PGM, PPM) file (%s)",
                 io_quote(in.path, q, sizeof q),
                 cut || (got == 1 && head[0] == 'P') ? "too short" : "bad magic");
        rc = -1;
    }
    in_close(&in);
    /* messages quote the file's own bytes (a dtype, a key): keep them one
     * printable line (found by fuzz_array) */
    for (char *c = err; rc && *c; ++c)
        if ((unsigned char)*c < 0x20 || *c == 0x7f)
            *c = '?';
    return rc;
}
