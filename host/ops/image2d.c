/* image2d.c: nonzero over a region of an OpenCL image object (image2d_t):
 * a first pass writes one byte per pixel from the channels the image's
 * format holds (kernels/image.cl's image_mask), then nonzero runs on the
 * bytes. Only devices with image support build image.cl.
 *
 * HALF_FLOAT images are not read through read_imagef: PoCL 3.1 returns
 * garbage for one-channel ones (R HALF_FLOAT reads 234.0 whatever is
 * stored). Their region is copied to a buffer as the halves it stores, and
 * mask.cl's channel_mask tests those as an f16 tensor (as
 * clnz_nonzero_channels would). */
#include "ops/ops.h"
#include "core/predicate.h"
#include "core/program.h"

#include <stdio.h>
#include <stdlib.h>

/* An image's pixel mask brought home, and nonzero over it on the host's copy
 * (clnz_image2d_nonzero's second half). */
static clnz_status mask_to_result(clnz_context *ctx, const clnz_tensor *mask_t, cl_mem mask,
                                  uint64_t pixels, cl_event done,
                                  const clnz_nonzero_options *o, clnz_result *res)
{
    unsigned char *host = malloc(pixels ? (size_t)pixels : 1);
    if (!host)
        return ctx_fail(ctx, CLNZ_ERROR_OUT_OF_HOST_MEMORY, "cannot allocate the pixel mask");
    clnz_status st = pixel_mask_read(ctx, mask, pixels, done, host);
    if (!st)
        st = clnz_nonzero(ctx, mask_t, host, NULL, o, res);
    free(host);
    return st;
}


/* How image_mask reads a channel type: the one table of supported types,
 * for the plan of a call and for image_programs. */
typedef struct {
    cl_channel_type type;
    int read;         /* READ_COPY, or image.cl's IMAGE_READ: 0 read_imageui, 1 read_imagei,
                         2 read_imagef */
    clnz_dtype dtype; /* what the kernel tests: u32, i32, f32, or f16 (copied) */
    int unorm_scale;  /* UNORM types: the largest stored integer */
} image_read;

enum { READ_COPY = -1 }; /* copied as stored, tested by channel_mask */

static const image_read reads[] = {
    {CL_UNSIGNED_INT8, 0, CLNZ_U32, 0}, {CL_UNSIGNED_INT16, 0, CLNZ_U32, 0},
    {CL_UNSIGNED_INT32, 0, CLNZ_U32, 0}, {CL_SIGNED_INT8, 1, CLNZ_I32, 0},
    {CL_SIGNED_INT16, 1, CLNZ_I32, 0},   {CL_SIGNED_INT32, 1, CLNZ_I32, 0},
    {CL_UNORM_INT8, 2, CLNZ_U32, 255},   {CL_UNORM_INT16, 2, CLNZ_U32, 65535},
    {CL_HALF_FLOAT, READ_COPY, CLNZ_F16, 0},     {CL_FLOAT, 2, CLNZ_F32, 0},
};
enum { N_READS = sizeof reads / sizeof reads[0] };

static void image_program(const image_read *r, int pred_nonzero, program_ref *p)
{
    if (r->read == READ_COPY) {
        mask_program(r->dtype, pred_nonzero, p);
        return;
    }
    program_element(p, "image", r->dtype, pred_nonzero);
    program_append(p, " -DIMAGE_READ=%d -DUNORM_SCALE=%d", r->read, r->unorm_scale);
}

int image_programs(int pred_nonzero, program_ref *out, int max)
{
    program_set s = {0};
    int n = 0;
    for (int i = 0; i < N_READS; ++i) {
        program_ref p;
        image_program(&reads[i], pred_nonzero, &p);
        if (program_set_find(&s, &p) < 0 && program_set_add(&s, &p) == 0 && n < max)
            out[n++] = p;
    }
    program_set_free(&s);
    return n;
}

typedef struct {
    int channels;
    const image_read *read;
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
    cl_context owner = NULL;
    if (!e)
        e = clGetMemObjectInfo(image, CL_MEM_CONTEXT, sizeof owner, &owner, NULL);
    if (!e && owner != ctx->cl) /* as a buffer's (core/tensor.c) */
        return ctx_fail(ctx, CLNZ_ERROR_INVALID_ARGUMENT,
                        "the image belongs to another OpenCL context than the clnz context's");
    if (!e)
        e = buffer_readable(ctx, image, "image", "(its mask pass)");
    if (e)
        return e; /* the message is set */
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
    p->read = NULL;
    for (int i = 0; i < N_READS && !p->read; ++i)
        if (reads[i].type == fmt.image_channel_data_type)
            p->read = &reads[i];
    if (!p->read)
        return ctx_fail(ctx, CLNZ_ERROR_UNSUPPORTED_DTYPE,
                        "image channel type 0x%x is not supported ((UN)SIGNED_INT8/16/32, "
                        "UNORM_INT8/16, HALF_FLOAT, FLOAT are)",
                        (unsigned)fmt.image_channel_data_type);
    p->origin[0] = origin ? origin[0] : 0, p->origin[1] = origin ? origin[1] : 0;
    if (p->origin[0] > w || p->origin[1] > h) /* before a whole-image region is w - x */
        return ctx_fail(ctx, CLNZ_ERROR_INVALID_ARGUMENT,
                        "the origin (%zu, %zu) is outside the %zu x %zu image", p->origin[0],
                        p->origin[1], w, h);
    p->region[0] = region ? region[0] : w - p->origin[0];
    p->region[1] = region ? region[1] : h - p->origin[1];
    if (p->region[0] > w - p->origin[0] || p->region[1] > h - p->origin[1])
        return ctx_fail(ctx, CLNZ_ERROR_INVALID_ARGUMENT,
                        "the region (%zu, %zu) + (%zu, %zu) is outside the %zu x %zu image",
                        p->origin[0], p->origin[1], p->region[0], p->region[1], w, h);
    return CLNZ_SUCCESS;
}

/* A copied type's mask: the region's channels into a buffer, C order
 * (height, width, channels), then channel_mask on it. */
static clnz_status copied_mask_enqueue(clnz_context *ctx, const image_plan *p, cl_mem image,
                                       const clnz_predicate *pred, clnz_channel_rule rule,
                                       cl_mem mask, cl_uint n_wait, const cl_event *wait,
                                       cl_event *done)
{
    int64_t shape[3] = {(int64_t)p->region[1], (int64_t)p->region[0], p->channels};
    clnz_tensor t = {p->read->dtype, 3, shape, NULL};
    uint64_t bytes = (uint64_t)shape[0] * (uint64_t)shape[1] * (uint64_t)p->channels *
                     clnz_dtype_size(p->read->dtype);
    *done = NULL;
    if (!bytes) /* no pixels: the mask pass has nothing to do either */
        return channels_mask_enqueue(ctx, &t, NULL, pred, rule, mask, n_wait, wait, done);
    if (bytes > ctx->max_alloc)
        return ctx_fail(ctx, CLNZ_ERROR_TOO_LARGE,
                        "the region's copy (%llu bytes) exceeds the device's largest allocation",
                        (unsigned long long)bytes);
    cl_int e = CL_SUCCESS;
    cl_mem buf = clCreateBuffer(ctx->cl, CL_MEM_READ_WRITE, (size_t)bytes, NULL, &e);
    if (e)
        return CL_CHECK(ctx, e, "clCreateBuffer(image copy)");
    chain ch;
    cl_event copied = NULL;
    chain_begin(&ch, ctx, n_wait, wait);
    clnz_status st = chain_end(&ch, chain_copy_image(&ch, image, p->origin, p->region, buf),
                               &copied);
    if (!st)
        st = channels_mask_enqueue(ctx, &t, buf, pred, rule, mask, 1, &copied, done);
    if (copied)
        clReleaseEvent(copied);
    clReleaseMemObject(buf); /* OpenCL keeps it until the mask pass is done */
    return st;
}

static clnz_status image_mask_enqueue(clnz_context *ctx, const image_plan *p, cl_mem image,
                                      const clnz_predicate *pred, clnz_channel_rule rule,
                                      cl_mem mask, cl_uint n_wait, const cl_event *wait,
                                      cl_event *done)
{
    if (p->read->read == READ_COPY)
        return copied_mask_enqueue(ctx, p, image, pred, rule, mask, n_wait, wait, done);
    pred_keys keys;
    clnz_status st = pred_to_keys(ctx, p->read->dtype, pred, &keys);
    if (st)
        return st;
    program_ref prog;
    image_program(p->read, keys.nonzero, &prog);
    cl_kernel k;
    size_t local;
    st = program_kernel(ctx, &prog, "image_mask", &k);
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
                               const size_t *region, const clnz_predicate *pred,
                               clnz_channel_rule rule, const clnz_nonzero_options *o,
                               image_plan *p, int64_t *shape, clnz_tensor *mask_t)
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
    return st ? st : pred_to_keys(ctx, p->read->dtype, pred, &keys);
}

clnz_status clnz_image2d_nonzero_enqueue(clnz_context *ctx, cl_mem image, const size_t *origin,
                                         const size_t *region, const clnz_predicate *pred,
                                         clnz_channel_rule rule,
                                         const clnz_nonzero_options *opts, cl_mem out_buf,
                                         size_t out_offset, uint64_t capacity, cl_mem count_buf,
                                         size_t count_offset, cl_uint num_events,
                                         const cl_event *wait_list, cl_event *out_event)
{
    CTX_ENTER(ctx);
    clnz_nonzero_options defaults;
    const clnz_nonzero_options *o = nz_options_or_defaults(opts, &defaults);
    image_plan p;
    int64_t shape[2];
    clnz_tensor mask_t;
    cl_mem mask = NULL;
    cl_event done = NULL;
    clnz_status st = events_check(ctx, num_events, wait_list);
    if (!st)
        st = image_start(ctx, image, origin, region, pred, rule, o, &p, shape, &mask_t);
    if (!st)
        st = pixel_mask_buffer(ctx, (uint64_t)shape[0] * (uint64_t)shape[1], &mask);
    if (!st)
        st = image_mask_enqueue(ctx, &p, image, pred, rule, mask, num_events, wait_list,
                                &done);
    if (!st) /* the predicate is applied: nonzero over the pixel bytes */
        st = clnz_nonzero_enqueue(ctx, &mask_t, mask, 0, NULL, o, out_buf, out_offset, capacity,
                                  count_buf, count_offset, done ? 1 : 0, done ? &done : NULL,
                                  out_event);
    if (done)
        clReleaseEvent(done);
    if (mask)
        clReleaseMemObject(mask);
    return st;
}

clnz_status clnz_image2d_nonzero(clnz_context *ctx, cl_mem image, const size_t *origin,
                                 const size_t *region, const clnz_predicate *pred,
                                 clnz_channel_rule rule,
                                 const clnz_nonzero_options *opts, clnz_result *res)
{
    CTX_ENTER(ctx);
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
    st = image_start(ctx, image, origin, region, pred, rule, o, &p, shape, &mask_t);
    uint64_t pixels = st ? 0 : (uint64_t)shape[0] * (uint64_t)shape[1];
    if (!st)
        st = pixel_mask_buffer(ctx, pixels, &mask);
    if (!st) {
        chain_settle(ctx); /* the call waits for its own commands */
        st = image_mask_enqueue(ctx, &p, image, pred, rule, mask, 0, NULL, &done);
    }
    if (!st)
        st = mask_to_result(ctx, &mask_t, mask, pixels, done, o, res);
    if (done)
        clReleaseEvent(done);
    if (mask)
        clReleaseMemObject(mask);
    return st;
}
