/* image.c: the clnz command's image inputs. PGM (P5) and PPM (P6) are
 * read here, PNG through libpng; each becomes an array as a .npy would:
 * (H, W) for grayscale, (H, W, C) for colour (C = 2 gray + alpha, 3 RGB,
 * 4 RGBA), u8 for 8-bit samples and u16 for 16-bit ones (stored big-endian
 * on disk, native in memory). Palettes become RGB (RGBA with transparency),
 * 1-, 2- and 4-bit gray becomes 8-bit (scaled to 0..255, as libpng does).
 * Sizes are checked against the file before anything is allocated: PNM's
 * exactly, PNG's against what deflate can expand the file's bytes to. */
#include "io/io.h"

#include <errno.h>
#include <math.h>
#include <png.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FAIL(...)                               \
    do {                                        \
        snprintf(err, err_size, __VA_ARGS__);   \
        return -1;                              \
    } while (0)

/* The array over a malloc'd C-order buffer (freed by npy_free). */
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
    a->swapped = pixels;
}

/* ---- PGM / PPM ---- */

/* The next header number, after whitespace and # comments. */
static int pnm_number(FILE *f, long *out)
{
    int ch = fgetc(f);
    for (;;) {
        while (ch == ' ' || ch == '\t' || ch == '\n' || ch == '\r')
            ch = fgetc(f);
        if (ch != '#')
            break;
        while (ch != '\n' && ch != EOF)
            ch = fgetc(f);
    }
    if (ch < '0' || ch > '9')
        return 0;
    long v = 0;
    for (; ch >= '0' && ch <= '9'; ch = fgetc(f)) {
        if (v > 1L << 40)
            return 0;
        v = v * 10 + (ch - '0');
    }
    /* exactly one whitespace byte ends the number (and, after maxval, the header) */
    if (ch != ' ' && ch != '\t' && ch != '\n' && ch != '\r')
        return 0;
    *out = v;
    return 1;
}

static int pnm_read(const char *path, FILE *f, long file_size, npy_array *a, char *err,
                    size_t err_size)
{
    char magic[2];
    if (fread(magic, 1, 2, f) != 2)
        FAIL("%s: truncated PNM header", path);
    int channels = magic[1] == '5' ? 1 : 3;
    long w, h, maxval;
    if (!pnm_number(f, &w) || !pnm_number(f, &h) || !pnm_number(f, &maxval))
        FAIL("%s: malformed PNM header (want P%c WIDTH HEIGHT MAXVAL)", path, magic[1]);
    if (w < 1 || h < 1 || maxval < 1 || maxval > 65535)
        FAIL("%s: PNM width %ld, height %ld or maxval %ld out of range", path, w, h, maxval);
    int bytes = maxval > 255 ? 2 : 1;
    long at = ftell(f);
    unsigned long long need = (unsigned long long)w * (unsigned long long)h * channels * bytes;
    if (at < 0 || need > (unsigned long long)(file_size - at))
        FAIL("%s: truncated: %llu bytes of pixels expected, %ld found", path, need,
             at < 0 ? 0L : file_size - at);
    unsigned char *px = malloc(need ? (size_t)need : 1);
    if (!px)
        FAIL("%s: cannot allocate %llu bytes", path, need);
    if (fread(px, 1, (size_t)need, f) != need) {
        free(px);
        FAIL("%s: read error", path);
    }
    if (bytes == 2) /* big-endian samples on disk */
        for (size_t i = 0; i < need; i += 2) {
            uint16_t v = (uint16_t)(px[i] << 8 | px[i + 1]);
            memcpy(px + i, &v, 2);
        }
    image_array(a, px, bytes == 2 ? CLNZ_U16 : CLNZ_U8, h, w, channels);
    return 0;
}

/* ---- PNG ---- */

typedef struct {
    char *err;
    size_t err_size;
    const char *path;
} png_ctx;

static void png_fail(png_structp png, png_const_charp msg)
{
    png_ctx *pc = png_get_error_ptr(png);
    snprintf(pc->err, pc->err_size, "%s: PNG error: %s", pc->path, msg);
    png_longjmp(png, 1);
}

static void png_quiet(png_structp png, png_const_charp msg)
{
    (void)png, (void)msg; /* warnings (a bad CRC in an ancillary chunk) do not stop a read */
}

/* deflate expands at most about 1032:1 (RFC 1951's longest match, 258
 * bytes, in a code of 2 bits); PNG's scanlines are the inflated stream,
 * each a filter byte and the packed pixels. */
enum { DEFLATE_MAX_RATIO = 1032 };

static int png_read(const char *path, FILE *f, long file_size, npy_array *a, char *err,
                    size_t err_size)
{
    png_ctx pc = {err, err_size, path};
    png_structp png = png_create_read_struct(PNG_LIBPNG_VER_STRING, &pc, png_fail, png_quiet);
    png_infop info = png ? png_create_info_struct(png) : NULL;
    unsigned char *volatile px = NULL;
    png_bytep *volatile rows = NULL;
    if (!info) {
        png_destroy_read_struct(png ? &png : NULL, NULL, NULL);
        FAIL("%s: cannot start libpng", path);
    }
    if (setjmp(png_jmpbuf(png))) {
        free(px);
        free(rows);
        png_destroy_read_struct(&png, &info, NULL);
        return -1;
    }
    png_init_io(png, f);
    png_read_info(png, info);
    int type = png_get_color_type(png, info), depth = png_get_bit_depth(png, info);
    double stream = (double)png_get_image_height(png, info) *
                    (1.0 + ceil((double)png_get_image_width(png, info) *
                                png_get_channels(png, info) * depth / 8.0));
    if (stream > (double)DEFLATE_MAX_RATIO * (double)file_size) {
        snprintf(err, err_size, "%s: PNG of %u x %u pixels cannot come out of %ld bytes", path,
                 (unsigned)png_get_image_width(png, info),
                 (unsigned)png_get_image_height(png, info), file_size);
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
    px = malloc(rowbytes * h > 0 ? rowbytes * h : 1);
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

int array_read(const char *path, npy_array *a, char *err, size_t err_size)
{
    memset(a, 0, sizeof *a);
    FILE *f = fopen(path, "rb");
    if (!f)
        FAIL("cannot open %s: %s", path, strerror(errno));
    unsigned char head[8] = {0};
    size_t got = fread(head, 1, 8, f);
    int is_png = got == 8 && png_sig_cmp(head, 0, 8) == 0;
    int is_pnm = got >= 2 && head[0] == 'P' && head[1] >= '1' && head[1] <= '7';
    int rc = 1; /* not an image: a .npy */
    if (is_png || is_pnm) {
        long size = -1;
        if (fseek(f, 0, SEEK_END) == 0)
            size = ftell(f);
        if (size < 0 || fseek(f, 0, SEEK_SET) != 0) {
            snprintf(err, err_size, "%s: cannot seek", path);
            rc = -1;
        } else if (is_png) {
            rc = png_read(path, f, size, a, err, err_size);
        } else if (head[1] == '5' || head[1] == '6') {
            rc = pnm_read(path, f, size, a, err, err_size);
        } else {
            snprintf(err, err_size,
                     "%s: PNM format P%c is not supported (binary P5 gray and P6 colour are)",
                     path, head[1]);
            rc = -1;
        }
    }
    fclose(f);
    if (rc == 1)
        rc = npy_read(path, a, err, err_size);
    /* messages quote the file's own bytes (a dtype, a key, the path): keep
     * them one printable line (found by fuzz_array) */
    for (char *c = err; rc && *c; ++c)
        if ((unsigned char)*c < 0x20 || *c == 0x7f)
            *c = '?';
    return rc;
}
