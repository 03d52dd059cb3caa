/* channels.c: nonzero over images: a region of interest in pitched memory
 * as a tensor view, multi-channel pixels under a channel rule, and OpenCL
 * image objects. A rule over channels is a first pass that writes one byte
 * per pixel (mask.cl's channel_mask, image.cl's image_mask); the nonzero
 * pipeline then runs on those bytes unchanged. */
#include "ops/ops.h"
#include "core/context.h"
#include "core/error.h"
#include "core/program.h"
#include "core/predicate.h"
#include "core/transfer.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

clnz_status clnz_image_view(clnz_context *ctx, const clnz_image_desc *img, clnz_tensor *t,
                            int64_t *shape, int64_t *strides, size_t *offset)
{
    CTX_HOLD(ctx);
    if (!ctx)
        return CLNZ_ERROR_INVALID_ARGUMENT;
    ctx_clear_message(ctx);
    if (!img || !t || !shape || !strides || !offset)
        return ctx_fail(ctx, CLNZ_ERROR_INVALID_ARGUMENT, "a NULL argument");
    size_t es = clnz_dtype_size(img->dtype);
    if (!es)
        return ctx_fail(ctx, CLNZ_ERROR_UNSUPPORTED_DTYPE, "unknown dtype %d", (int)img->dtype);
    if (img->channels < 1)
        return ctx_fail(ctx, CLNZ_ERROR_INVALID_ARGUMENT, "an image has 1 or more channels");
    size_t px = (size_t)img->channels * es;
    if (img->x > SIZE_MAX / 4 / px || img->width > SIZE_MAX / 4 / px ||
        img->y > INT64_MAX / 4 || img->height > INT64_MAX / 4)
        return ctx_fail(ctx, CLNZ_ERROR_INVALID_ARGUMENT, "the region is absurd");
    size_t row = (img->x + img->width) * px; /* the bytes a row must hold */
    size_t pitch = img->row_pitch ? img->row_pitch : row;
    if (pitch % es)
        return ctx_fail(ctx, CLNZ_ERROR_INVALID_ARGUMENT,
                        "row pitch %zu is not a multiple of the element size %zu", pitch, es);
    if (pitch < row)
        return ctx_fail(ctx, CLNZ_ERROR_INVALID_ARGUMENT,
                        "row pitch %zu is shorter than the region's right edge (%zu bytes)",
                        pitch, row);
    if (img->y && pitch > SIZE_MAX / img->y)
        return ctx_fail(ctx, CLNZ_ERROR_INVALID_ARGUMENT, "the region is absurd");
    shape[0] = (int64_t)img->height, shape[1] = (int64_t)img->width;
    shape[2] = img->channels;
    strides[0] = (int64_t)(pitch / es), strides[1] = img->channels, strides[2] = 1;
    t->dtype = img->dtype;
    t->rank = img->channels == 1 ? 2 : 3;
    t->shape = shape;
    t->strides = strides;
    *offset = img->y * pitch + img->x * px;
    return CLNZ_SUCCESS;
}

/* The pixels (leading dimensions) of a tensor whose last dimension holds
 * channels: as a C-order u8 mask tensor, and as the walker's view of the
 * input (rank and meta of the leading dimensions). */
typedef struct {
    tensor_info t;       /* the input */
    tensor_info pixels;  /* its leading dimensions, input strides */
    int64_t mask_shape[CLNZ_MAX_RANK];
    clnz_tensor mask;    /* u8, C order, mask_shape */
    pred_keys keys;
} channel_plan;

static clnz_status channel_plan_make(clnz_context *ctx, const clnz_tensor *in,
                                     const clnz_nonzero_options *o, clnz_channel_rule rule,
                                     channel_plan *c)
{
    clnz_status st = tensor_check(ctx, in, &c->t);
    if (st)
        return st;
    if (c->t.rank < 1)
        return ctx_fail(ctx, CLNZ_ERROR_INVALID_ARGUMENT,
                        "a channel rule needs rank >= 1: the last dimension holds the channels");
    if ((unsigned)rule > CLNZ_CHANNELS_ALL)
        return ctx_fail(ctx, CLNZ_ERROR_INVALID_ARGUMENT, "unknown channel rule %d", (int)rule);
    st = pred_to_keys(ctx, c->t.dtype, &o->pred, &c->keys);
    if (st)
        return st;
    c->pixels = c->t;
    c->pixels.rank = c->t.rank - 1;
    c->pixels.krank = c->pixels.rank ? c->pixels.rank : 1;
    uint64_t n = 1; /* not t.n / channels: there may be no channels */
    for (int d = 0; d < c->pixels.rank; ++d)
        n *= (uint64_t)c->t.shape[d];
    c->pixels.n = n;
    if (c->pixels.rank == 0) { /* one pixel: the walker sees shape (1,) */
        c->pixels.shape[0] = 1;
        c->pixels.strides[0] = 0;
    }
    memcpy(c->mask_shape, c->t.shape, sizeof c->mask_shape);
    c->mask = (clnz_tensor){CLNZ_U8, c->pixels.rank, c->mask_shape, NULL};
    /* the options must suit the pixels before any work */
    tensor_info mi;
    int width;
    st = tensor_check(ctx, &c->mask, &mi);
    return st ? st : nz_check_options(ctx, &mi, o, &width);
}

/* One byte per pixel into mask_buf, after the caller's events. */
static clnz_status channel_mask_enqueue(clnz_context *ctx, channel_plan *c, cl_mem in_buf,
                                        int64_t base, clnz_channel_rule rule, cl_mem mask_buf,
                                        cl_uint n_wait, const cl_event *wait, cl_event *done)
{
    char opts[80];
    element_options(opts, sizeof opts, c->t.dtype, 1, c->keys.nonzero);
    cl_kernel k;
    cl_mem meta = NULL;
    size_t local;
    clnz_status st = program_kernel(ctx, "mask", "channel_mask", opts, &k);
    if (!st)
        st = small_local(ctx, k, &local);
    if (!st)
        st = tensor_meta_buffer(ctx, &c->pixels, &meta);
    if (st)
        return st;
    chain ch;
    chain_begin(&ch, ctx, n_wait, wait);
    cl_long a_base = base, channels = c->t.shape[c->t.rank - 1];
    cl_long cstride = c->t.strides[c->t.rank - 1];
    cl_ulong pixels = c->pixels.n;
    cl_int rank = c->pixels.krank, all = rule == CLNZ_CHANNELS_ALL;
    karg args[] = {KARG(in_buf),  KARG(a_base),  KARG(pixels),      KARG(rank),
                   KARG(meta),    KARG(channels), KARG(cstride),    KARG(c->keys.lo),
                   KARG(c->keys.hi), KARG(c->keys.invert), KARG(all), KARG(mask_buf)};
    st = set_args(ctx, k, "channel_mask", args, 12);
    if (!st && pixels)
        st = chain_launch(&ch, k, "channel_mask", (size_t)((pixels + local - 1) / local * local),
                          local);
    *done = NULL;
    st = chain_end(&ch, st, done);
    clReleaseMemObject(meta);
    return st;
}

/* A byte per pixel on the device (at least one byte: OpenCL has no empty
 * buffers). */
static clnz_status mask_buffer(clnz_context *ctx, uint64_t pixels, cl_mem *buf)
{
    if (pixels > ctx->max_alloc)
        return ctx_fail(ctx, CLNZ_ERROR_TOO_LARGE,
                        "the pixel mask (%llu bytes) exceeds the device's largest allocation",
                        (unsigned long long)pixels);
    cl_int e = CL_SUCCESS;
    *buf = clCreateBuffer(ctx->cl, CL_MEM_READ_WRITE, pixels ? (size_t)pixels : 1, NULL, &e);
    return CL_CHECK(ctx, e, "clCreateBuffer(pixel mask)");
}

/* The options the nonzero pass over the mask runs with: the caller's, with
 * the predicate (already applied per channel) replaced by nonzero. */
static clnz_nonzero_options mask_options(const clnz_nonzero_options *o)
{
    clnz_nonzero_options m = *o;
    m.pred = clnz_pred_nonzero();
    return m;
}

clnz_status clnz_nonzero_channels_enqueue(clnz_context *ctx, const clnz_tensor *in,
                                          cl_mem in_buf, size_t in_offset,
                                          clnz_channel_rule rule,
                                          const clnz_nonzero_options *opts, cl_mem out_buf,
                                          size_t out_offset, uint64_t capacity,
                                          cl_mem count_buf, size_t count_offset,
                                          cl_uint num_events, const cl_event *wait_list,
                                          cl_event *out_event)
{
    CTX_HOLD(ctx);
    if (!ctx)
        return CLNZ_ERROR_INVALID_ARGUMENT;
    ctx_clear_message(ctx);
    clnz_nonzero_options defaults;
    const clnz_nonzero_options *o = nz_options_or_defaults(opts, &defaults);
    channel_plan c;
    int64_t base;
    cl_mem mask = NULL;
    cl_event done = NULL;
    clnz_status st = events_check(ctx, num_events, wait_list);
    if (!st)
        st = channel_plan_make(ctx, in, o, rule, &c);
    if (!st)
        st = tensor_base(ctx, &c.t, in_buf, in_offset, &base);
    if (!st)
        st = mask_buffer(ctx, c.pixels.n, &mask);
    if (!st)
        st = channel_mask_enqueue(ctx, &c, in_buf, base, rule, mask, num_events, wait_list,
                                  &done);
    if (!st) {
        clnz_nonzero_options m = mask_options(o);
        st = clnz_nonzero_enqueue(ctx, &c.mask, mask, 0, &m, out_buf, out_offset, capacity,
                                  count_buf, count_offset, done ? 1 : 0, done ? &done : NULL,
                                  out_event);
    }
    if (done)
        clReleaseEvent(done);
    if (mask) /* freed by OpenCL once the commands using it are done */
        clReleaseMemObject(mask);
    return st;
}

/* The pixel mask into host memory, after `done`. */
static clnz_status read_mask(clnz_context *ctx, cl_mem mask, uint64_t pixels, cl_event done,
                             unsigned char *dst)
{
    if (!pixels)
        return CLNZ_SUCCESS;
    cl_int e = clEnqueueReadBuffer(ctx->queue, mask, CL_TRUE, 0, (size_t)pixels, dst,
                                   done ? 1 : 0, done ? &done : NULL, NULL);
    return CL_CHECK(ctx, e, "clEnqueueReadBuffer(pixel mask)");
}

clnz_status channels_mask_host(clnz_context *ctx, const clnz_tensor *in, const void *data,
                               clnz_channel_rule rule, const clnz_nonzero_options *o,
                               unsigned char *dst)
{
    channel_plan c;
    cl_mem inb = NULL, mask = NULL;
    cl_event done = NULL;
    int64_t base;
    clnz_status st = channel_plan_make(ctx, in, o, rule, &c);
    if (!st)
        st = upload(ctx, &c.t, data, &inb, &base);
    if (!st)
        st = mask_buffer(ctx, c.pixels.n, &mask);
    if (!st)
        st = channel_mask_enqueue(ctx, &c, inb, base, rule, mask, 0, NULL, &done);
    if (!st)
        st = read_mask(ctx, mask, c.pixels.n, done, dst);
    if (done)
        clReleaseEvent(done);
    if (mask)
        clReleaseMemObject(mask);
    if (inb)
        clReleaseMemObject(inb);
    return st;
}

/* The pixel mask on the host (from one upload, or slice by slice when the
 * input exceeds one allocation: chunked_items.c), then nonzero over it,
 * which slices its own way if need be. */
clnz_status clnz_nonzero_channels(clnz_context *ctx, const clnz_tensor *in, const void *data,
                                  clnz_channel_rule rule, const clnz_nonzero_options *opts,
                                  clnz_result *res)
{
    CTX_HOLD(ctx);
    if (!ctx)
        return CLNZ_ERROR_INVALID_ARGUMENT;
    clnz_status st = nz_result_start(ctx, res);
    if (st)
        return st;
    clnz_nonzero_options defaults;
    const clnz_nonzero_options *o = nz_options_or_defaults(opts, &defaults);
    channel_plan c;
    st = channel_plan_make(ctx, in, o, rule, &c);
    if (st)
        return st;
    if (c.pixels.n > SIZE_MAX)
        return ctx_fail(ctx, CLNZ_ERROR_TOO_LARGE, "the pixel mask does not fit the address space");
    unsigned char *host = malloc(c.pixels.n ? (size_t)c.pixels.n : 1);
    if (!host)
        return ctx_fail(ctx, CLNZ_ERROR_OUT_OF_HOST_MEMORY, "cannot allocate the pixel mask");
    st = channels_mask_sliced(ctx, in, data, rule, o, host);
    if (!st) {
        clnz_nonzero_options m = mask_options(o);
        st = clnz_nonzero(ctx, &c.mask, host, &m, res);
    }
    free(host);
    return st;
}

/* ---- OpenCL images ---- */

/* An image's pixel mask brought home, and nonzero over it on the host's copy
 * (clnz_image2d_nonzero's second half). */
static clnz_status mask_to_result(clnz_context *ctx, const clnz_tensor *mask_t, cl_mem mask,
                                  uint64_t pixels, cl_event done,
                                  const clnz_nonzero_options *o, clnz_result *res)
{
    unsigned char *host = malloc(pixels ? (size_t)pixels : 1);
    if (!host)
        return ctx_fail(ctx, CLNZ_ERROR_OUT_OF_HOST_MEMORY, "cannot allocate the pixel mask");
    clnz_status st = read_mask(ctx, mask, pixels, done, host);
    if (!st) {
        clnz_nonzero_options m = mask_options(o);
        st = clnz_nonzero(ctx, mask_t, host, &m, res);
    }
    free(host);
    return st;
}


typedef struct {
    int channels, read; /* read: 0 read_imageui, 1 read_imagei, 2 read_imagef */
    clnz_dtype dtype;   /* what the kernel tests: u32, i32 or f32 */
    int unorm_scale;    /* UNORM types: the largest stored integer */
    size_t origin[2], region[2];
} image_plan;

static clnz_status image_plan_make(clnz_context *ctx, cl_mem image, const size_t *origin,
                                   const size_t *region, image_plan *p)
{
    if (!image)
        return ctx_fail(ctx, CLNZ_ERROR_INVALID_ARGUMENT, "image is NULL");
    cl_bool support = CL_FALSE;
    clGetDeviceInfo(ctx->device, CL_DEVICE_IMAGE_SUPPORT, sizeof support, &support, NULL);
    if (!support)
        return ctx_fail(ctx, CL_INVALID_OPERATION, "the device has no image support");
    cl_mem_object_type type = 0;
    cl_image_format fmt;
    size_t w = 0, h = 0;
    cl_int e = clGetMemObjectInfo(image, CL_MEM_TYPE, sizeof type, &type, NULL);
    if (!e && type != CL_MEM_OBJECT_IMAGE2D)
        return ctx_fail(ctx, CLNZ_ERROR_INVALID_ARGUMENT, "the image is not an image2d");
    if (!e)
        e = clGetImageInfo(image, CL_IMAGE_FORMAT, sizeof fmt, &fmt, NULL);
    if (!e)
        e = clGetImageInfo(image, CL_IMAGE_WIDTH, sizeof w, &w, NULL);
    if (!e)
        e = clGetImageInfo(image, CL_IMAGE_HEIGHT, sizeof h, &h, NULL);
    if (e)
        return CL_CHECK(ctx, e, "clGetImageInfo");
    switch (fmt.image_channel_order) {
    case CL_R: case CL_INTENSITY: case CL_LUMINANCE: p->channels = 1; break;
    case CL_RG: p->channels = 2; break;
    case CL_RGBA: case CL_BGRA: case CL_ARGB: p->channels = 4; break;
    default:
        return ctx_fail(ctx, CLNZ_ERROR_UNSUPPORTED_DTYPE,
                        "image channel order 0x%x is not supported (R, RG, RGBA, BGRA, ARGB, "
                        "INTENSITY, LUMINANCE are)",
                        (unsigned)fmt.image_channel_order);
    }
    p->unorm_scale = 0;
    switch (fmt.image_channel_data_type) {
    case CL_UNSIGNED_INT8: case CL_UNSIGNED_INT16: case CL_UNSIGNED_INT32:
        p->read = 0, p->dtype = CLNZ_U32; break;
    case CL_SIGNED_INT8: case CL_SIGNED_INT16: case CL_SIGNED_INT32:
        p->read = 1, p->dtype = CLNZ_I32; break;
    case CL_UNORM_INT8: p->read = 2, p->dtype = CLNZ_U32, p->unorm_scale = 255; break;
    case CL_UNORM_INT16: p->read = 2, p->dtype = CLNZ_U32, p->unorm_scale = 65535; break;
    case CL_HALF_FLOAT: case CL_FLOAT: p->read = 2, p->dtype = CLNZ_F32; break;
    default:
        return ctx_fail(ctx, CLNZ_ERROR_UNSUPPORTED_DTYPE,
                        "image channel type 0x%x is not supported ((UN)SIGNED_INT8/16/32, "
                        "UNORM_INT8/16, HALF_FLOAT, FLOAT are)",
                        (unsigned)fmt.image_channel_data_type);
    }
    p->origin[0] = origin ? origin[0] : 0, p->origin[1] = origin ? origin[1] : 0;
    p->region[0] = region ? region[0] : w - p->origin[0];
    p->region[1] = region ? region[1] : h - p->origin[1];
    if (p->origin[0] > w || p->origin[1] > h || p->region[0] > w - p->origin[0] ||
        p->region[1] > h - p->origin[1])
        return ctx_fail(ctx, CLNZ_ERROR_INVALID_ARGUMENT,
                        "the region (%zu, %zu) + (%zu, %zu) is outside the %zu x %zu image",
                        p->origin[0], p->origin[1], p->region[0], p->region[1], w, h);
    return CLNZ_SUCCESS;
}

static clnz_status image_mask_enqueue(clnz_context *ctx, const image_plan *p, cl_mem image,
                                      const clnz_predicate *pred, clnz_channel_rule rule,
                                      cl_mem mask, cl_uint n_wait, const cl_event *wait,
                                      cl_event *done)
{
    pred_keys keys;
    clnz_status st = pred_to_keys(ctx, p->dtype, pred, &keys);
    if (st)
        return st;
    char opts[160], base_opts[80];
    element_options(base_opts, sizeof base_opts, p->dtype, 1, keys.nonzero);
    snprintf(opts, sizeof opts, "%s -DIMAGE_READ=%d -DUNORM_SCALE=%d", base_opts, p->read,
             p->unorm_scale);
    cl_kernel k;
    size_t local;
    st = program_kernel(ctx, "image", "image_mask", opts, &k);
    if (!st)
        st = small_local(ctx, k, &local);
    if (st)
        return st;
    chain ch;
    chain_begin(&ch, ctx, n_wait, wait);
    cl_int x0 = (cl_int)p->origin[0], y0 = (cl_int)p->origin[1];
    cl_int w = (cl_int)p->region[0], h = (cl_int)p->region[1], channels = p->channels;
    cl_int all = rule == CLNZ_CHANNELS_ALL;
    karg args[] = {KARG(image),   KARG(x0),     KARG(y0),         KARG(w),
                   KARG(h),       KARG(channels), KARG(keys.lo),  KARG(keys.hi),
                   KARG(keys.invert), KARG(all), KARG(mask)};
    st = set_args(ctx, k, "image_mask", args, 11);
    uint64_t pixels = (uint64_t)w * (uint64_t)h;
    if (!st && pixels)
        st = chain_launch(&ch, k, "image_mask", (size_t)((pixels + local - 1) / local * local),
                          local);
    *done = NULL;
    return chain_end(&ch, st, done);
}

/* Checks everything before any work: the image, the rule, and the options
 * against the region's (height, width) mask. */
static clnz_status image_start(clnz_context *ctx, cl_mem image, const size_t *origin,
                               const size_t *region, clnz_channel_rule rule,
                               const clnz_nonzero_options *o, image_plan *p, int64_t *shape,
                               clnz_tensor *mask_t)
{
    clnz_status st = image_plan_make(ctx, image, origin, region, p);
    if (st)
        return st;
    if ((unsigned)rule > CLNZ_CHANNELS_ALL)
        return ctx_fail(ctx, CLNZ_ERROR_INVALID_ARGUMENT, "unknown channel rule %d", (int)rule);
    shape[0] = (int64_t)p->region[1], shape[1] = (int64_t)p->region[0];
    *mask_t = (clnz_tensor){CLNZ_U8, 2, shape, NULL};
    tensor_info mi;
    int width;
    pred_keys keys;
    st = tensor_check(ctx, mask_t, &mi);
    if (!st)
        st = nz_check_options(ctx, &mi, o, &width);
    return st ? st : pred_to_keys(ctx, p->dtype, &o->pred, &keys);
}

clnz_status clnz_image2d_nonzero_enqueue(clnz_context *ctx, cl_mem image, const size_t *origin,
                                         const size_t *region, clnz_channel_rule rule,
                                         const clnz_nonzero_options *opts, cl_mem out_buf,
                                         size_t out_offset, uint64_t capacity, cl_mem count_buf,
                                         size_t count_offset, cl_uint num_events,
                                         const cl_event *wait_list, cl_event *out_event)
{
    CTX_HOLD(ctx);
    if (!ctx)
        return CLNZ_ERROR_INVALID_ARGUMENT;
    ctx_clear_message(ctx);
    clnz_nonzero_options defaults;
    const clnz_nonzero_options *o = nz_options_or_defaults(opts, &defaults);
    image_plan p;
    int64_t shape[2];
    clnz_tensor mask_t;
    cl_mem mask = NULL;
    cl_event done = NULL;
    clnz_status st = events_check(ctx, num_events, wait_list);
    if (!st)
        st = image_start(ctx, image, origin, region, rule, o, &p, shape, &mask_t);
    if (!st)
        st = mask_buffer(ctx, (uint64_t)shape[0] * (uint64_t)shape[1], &mask);
    if (!st)
        st = image_mask_enqueue(ctx, &p, image, &o->pred, rule, mask, num_events, wait_list,
                                &done);
    if (!st) {
        clnz_nonzero_options m = mask_options(o);
        st = clnz_nonzero_enqueue(ctx, &mask_t, mask, 0, &m, out_buf, out_offset, capacity,
                                  count_buf, count_offset, done ? 1 : 0, done ? &done : NULL,
                                  out_event);
    }
    if (done)
        clReleaseEvent(done);
    if (mask)
        clReleaseMemObject(mask);
    return st;
}

clnz_status clnz_image2d_nonzero(clnz_context *ctx, cl_mem image, const size_t *origin,
                                 const size_t *region, clnz_channel_rule rule,
                                 const clnz_nonzero_options *opts, clnz_result *res)
{
    CTX_HOLD(ctx);
    if (!ctx)
        return CLNZ_ERROR_INVALID_ARGUMENT;
    clnz_status st = nz_result_start(ctx, res);
    if (st)
        return st;
    clnz_nonzero_options defaults;
    const clnz_nonzero_options *o = nz_options_or_defaults(opts, &defaults);
    image_plan p;
    int64_t shape[2];
    clnz_tensor mask_t;
    cl_mem mask = NULL;
    cl_event done = NULL;
    st = image_start(ctx, image, origin, region, rule, o, &p, shape, &mask_t);
    uint64_t pixels = st ? 0 : (uint64_t)shape[0] * (uint64_t)shape[1];
    if (!st)
        st = mask_buffer(ctx, pixels, &mask);
    if (!st)
        st = image_mask_enqueue(ctx, &p, image, &o->pred, rule, mask, 0, NULL, &done);
    if (!st)
        st = mask_to_result(ctx, &mask_t, mask, pixels, done, o, res);
    if (done)
        clReleaseEvent(done);
    if (mask)
        clReleaseMemObject(mask);
    return st;
}
