/* threshold_example.c: an imaging pipeline on one OpenCL queue, as a client
 * of include/clnz.h would write it (build: make example).
 *
 *   build/threshold_example IN.png THRESHOLD POINTS.csv MARKED.png
 *
 * Reads a PNG as 8-bit gray (libpng converts colour, palette and 16-bit
 * images), then on the device: uploads it, thresholds it into a binary
 * image (clnz_mask_enqueue, pixel > THRESHOLD) and finds the coordinates of
 * the foreground (clnz_nonzero_enqueue on that binary image), each step
 * waiting on the previous one's event: nothing comes back to the host until
 * the coordinates do. Writes them as "row,column" lines and a copy of the
 * picture with every found pixel in red. (clnz_nonzero_enqueue with the
 * predicate would fuse both steps; the binary image is kept here because a
 * pipeline usually has more stages that read it.)
 *
 * Outputs are written to a temporary name and renamed: a failure leaves
 * none, never a half-written one. */
#include "clnz.h"

#include <errno.h>
#include <png.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static void fail(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fputs("threshold_example: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    exit(1);
}

/* a failed clnz call: its status and the context's detailed message */
static void check(clnz_context *ctx, clnz_status st, const char *what)
{
    if (st)
        fail("%s: %s: %s", what, clnz_status_string(st), clnz_context_message(ctx));
}

static void check_cl(cl_int e, const char *what)
{
    if (e != CL_SUCCESS)
        fail("%s: %s", what, clnz_status_string(e));
}

static double now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e3 + t.tv_nsec * 1e-6;
}

/* Any PNG as 8-bit gray, with libpng's simplified API. */
static unsigned char *read_gray(const char *path, size_t *w, size_t *h)
{
    png_image img;
    memset(&img, 0, sizeof img);
    img.version = PNG_IMAGE_VERSION;
    if (!png_image_begin_read_from_file(&img, path))
        fail("%s: %s", path, img.message);
    img.format = PNG_FORMAT_GRAY;
    unsigned char *px = malloc(PNG_IMAGE_SIZE(img));
    if (!px)
        fail("%s: out of memory for %u x %u pixels", path, img.width, img.height);
    if (!png_image_finish_read(&img, NULL, px, 0, NULL))
        fail("%s: %s", path, img.message);
    *w = img.width, *h = img.height;
    return px;
}

static FILE *open_tmp(const char *path, char *tmp, size_t n)
{
    snprintf(tmp, n, "%s.tmp", path);
    FILE *f = fopen(tmp, "wb");
    if (!f)
        fail("%s: cannot write: %s", tmp, strerror(errno));
    return f;
}

static void commit(FILE *f, const char *tmp, const char *path)
{
    if (fflush(f) || ferror(f) || fclose(f)) {
        remove(tmp);
        fail("%s: write failed", path);
    }
    if (rename(tmp, path)) {
        remove(tmp);
        fail("%s: cannot rename %s: %s", path, tmp, strerror(errno));
    }
}

static void write_points(const char *path, const cl_int *xy, uint64_t z)
{
    char tmp[4096];
    FILE *f = open_tmp(path, tmp, sizeof tmp);
    fputs("row,column\n", f);
    for (uint64_t i = 0; i < z; ++i)
        fprintf(f, "%d,%d\n", xy[2 * i], xy[2 * i + 1]);
    commit(f, tmp, path);
}

/* The picture in gray, the found pixels in red: drawn from the coordinates. */
static void write_marked(const char *path, const unsigned char *gray, size_t w, size_t h,
                         const cl_int *xy, uint64_t z)
{
    unsigned char *rgb = malloc(w * h * 3);
    if (!rgb)
        fail("%s: out of memory", path);
    for (size_t i = 0; i < w * h; ++i)
        rgb[3 * i] = rgb[3 * i + 1] = rgb[3 * i + 2] = gray[i] / 2; /* dimmed */
    for (uint64_t i = 0; i < z; ++i) {
        unsigned char *p = rgb + 3 * ((size_t)xy[2 * i] * w + (size_t)xy[2 * i + 1]);
        p[0] = 255, p[1] = 0, p[2] = 0;
    }
    png_image img;
    memset(&img, 0, sizeof img);
    img.version = PNG_IMAGE_VERSION;
    img.width = (png_uint_32)w, img.height = (png_uint_32)h;
    img.format = PNG_FORMAT_RGB;
    char tmp[4096];
    FILE *f = open_tmp(path, tmp, sizeof tmp);
    int ok = png_image_write_to_stdio(&img, f, 0, rgb, 0, NULL);
    free(rgb);
    if (!ok) {
        fclose(f);
        remove(tmp);
        fail("%s: %s", path, img.message);
    }
    commit(f, tmp, path);
}

int main(int argc, char **argv)
{
    if (argc != 5)
        fail("usage: threshold_example IN.png THRESHOLD POINTS.csv MARKED.png");
    char *end;
    long threshold = strtol(argv[2], &end, 10);
    if (*end || end == argv[2] || threshold < 0 || threshold > 255)
        fail("threshold '%s' is not an integer in 0..255", argv[2]);
    size_t w, h;
    unsigned char *gray = read_gray(argv[1], &w, &h);

    char msg[256];
    clnz_context *ctx;
    clnz_status st = clnz_context_create(NULL, &ctx, msg, sizeof msg);
    if (st)
        fail("%s", msg);
    cl_context cl = clnz_context_cl_context(ctx);
    cl_command_queue q = clnz_context_queue(ctx);

    /* device buffers: the image, its binary image, the coordinates (room for
     * every pixel: z is not known before the count) and the count */
    size_t n = w * h;
    cl_int e;
    cl_mem img_buf = clCreateBuffer(cl, CL_MEM_READ_ONLY, n, NULL, &e);
    check_cl(e, "clCreateBuffer(image)");
    cl_mem bin_buf = clCreateBuffer(cl, CL_MEM_READ_WRITE, n, NULL, &e);
    check_cl(e, "clCreateBuffer(binary image)");
    cl_mem xy_buf = clCreateBuffer(cl, CL_MEM_WRITE_ONLY, n * 2 * sizeof(cl_int), NULL, &e);
    check_cl(e, "clCreateBuffer(coordinates)");
    cl_mem count_buf = clCreateBuffer(cl, CL_MEM_WRITE_ONLY, sizeof(cl_ulong), NULL, &e);
    check_cl(e, "clCreateBuffer(count)");

    double t0 = now_ms();
    int64_t shape[2] = {(int64_t)h, (int64_t)w};
    clnz_tensor image = {CLNZ_U8, 2, shape, NULL};
    cl_event uploaded, thresholded, found;
    check_cl(clEnqueueWriteBuffer(q, img_buf, CL_FALSE, 0, n, gray, 0, NULL, &uploaded),
             "upload");
    clnz_predicate above = clnz_pred_int(CLNZ_OP_GT, threshold);
    check(ctx,
          clnz_mask_enqueue(ctx, &image, img_buf, 0, &above, CLNZ_U8, bin_buf, 0, 1, &uploaded,
                            &thresholded),
          "threshold");
    clnz_nonzero_options opts;
    clnz_nonzero_options_init(&opts);
    opts.index_type = CLNZ_INDEX_INT32; /* (row, column) pairs of int32 */
    clnz_tensor binary = {CLNZ_U8, 2, shape, NULL};
    check(ctx,
          clnz_nonzero_enqueue(ctx, &binary, bin_buf, 0, NULL, &opts, xy_buf, 0, n, count_buf, 0, 1,
                               &thresholded, &found),
          "nonzero");
    /* the first time the host waits: for the count, then the coordinates */
    cl_ulong z;
    check_cl(clEnqueueReadBuffer(q, count_buf, CL_TRUE, 0, sizeof z, &z, 1, &found, NULL),
             "read count");
    cl_int *xy = malloc(z ? z * 2 * sizeof(cl_int) : 1);
    if (!xy)
        fail("out of memory for %llu points", (unsigned long long)z);
    if (z)
        check_cl(clEnqueueReadBuffer(q, xy_buf, CL_TRUE, 0, z * 2 * sizeof(cl_int), xy, 0, NULL,
                                     NULL),
                 "read coordinates");
    double t1 = now_ms();

    write_points(argv[3], xy, z);
    write_marked(argv[4], gray, w, h, xy, z);
    printf("%llu pixels above %ld in %zu x %zu (%.2f ms on the device for upload, threshold, "
           "nonzero and read-back)\n",
           (unsigned long long)z, threshold, w, h, t1 - t0);

    clReleaseEvent(uploaded);
    clReleaseEvent(thresholded);
    clReleaseEvent(found);
    clReleaseMemObject(img_buf);
    clReleaseMemObject(bin_buf);
    clReleaseMemObject(xy_buf);
    clReleaseMemObject(count_buf);
    clnz_context_release(ctx);
    free(xy);
    free(gray);
    return 0;
}
