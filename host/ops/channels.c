/* channels.c: nonzero over pixels: a region of interest in pitched memory
 * as a tensor view (clnz_image_view), and multi-channel pixels under a
 * channel rule. A rule over channels is a first pass that writes one byte
 * per pixel (kernels/mask.cl's channel_mask); nonzero then runs on those
 * bytes unchanged. OpenCL image objects are image2d.c's. */
#include "ops/ops.h"
#include "core/program.h"
#include "core/transfer.h"
#include "slices/slices.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

clnz_status clnz_image_view(clnz_context *ctx, const clnz_image_desc *img, clnz_tensor *t,
                            int64_t *shape, int64_t *strides, size_t *offset)
{
    CTX_ENTER(ctx);
    if (!img || !t || !shape || !strides || !offset)
        return ctx_fail(ctx, CLNZ_ERROR_INVALID_ARGUMENT, "a NULL argument");
    clnz_status st = dtype_check(ctx, img->dtype);
    if (st)
        return st;
    size_t es = clnz_dtype_size(img->dtype);
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
    /* every byte up to the region's last row must have an int64 address:
     * the row stride is one (a pitch near 2^64 made it negative, and the
     * view read before the image) */
    uint64_t rows = (uint64_t)img->y + img->height;
    if (pitch > (uint64_t)INT64_MAX || (rows && pitch > (uint64_t)INT64_MAX / rows))
        return ctx_fail(ctx, CLNZ_ERROR_INVALID_ARGUMENT,
                        "row pitch %zu over y + height = %llu rows spans more than 2^63 bytes",
                        pitch, (unsigned long long)rows);
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
    int width; /* coordinates per entry of the pixels' nonzero (0: no options) */
} channel_plan;

/* o NULL: no nonzero options to check (the blocking call's slices). */
static clnz_status channel_plan_make(clnz_context *ctx, const tensor_info *t,
                                     const clnz_predicate *pred, const clnz_nonzero_options *o,
                                     clnz_channel_rule rule, channel_plan *c)
{
    clnz_status st;
    c->t = *t;
    if (c->t.rank < 1)
        return ctx_fail(ctx, CLNZ_ERROR_INVALID_ARGUMENT,
                        "a channel rule needs rank >= 1: the last dimension holds the channels");
    if ((unsigned)rule > CLNZ_CHANNELS_ALL)
        return ctx_fail(ctx, CLNZ_ERROR_INVALID_ARGUMENT, "unknown channel rule %d", (int)rule);
    st = pred_to_keys(ctx, c->t.dtype, pred, &c->keys);
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
    int no_channels = c->t.shape[c->t.rank - 1] == 0;
    if (no_channels && rule == CLNZ_CHANNELS_ANY && c->pixels.rank > 0) {
        /* no pixel is selected, however many there are (an empty input's
         * other extents are free, so they may pass 2^62 and n may have
         * wrapped): the pixel mask is an empty one of the same rank, its
         * last extent 0, so that leading 1s stay leading (the effective
         * rank --width checks) and the other extents reach the index
         * type's check */
        c->mask_shape[c->pixels.rank - 1] = 0;
        c->pixels.n = 0;
    }
    c->mask = (clnz_tensor){CLNZ_U8, c->pixels.rank, c->mask_shape, NULL};
    /* the options must suit the pixels before any work */
    tensor_info mi;
    c->width = 0;
    st = tensor_check(ctx, &c->mask, &mi);
    if (st == CLNZ_ERROR_TOO_LARGE && no_channels)
        return ctx_fail(ctx, st,
                        "the pixels (the leading dimensions) number more than 2^62, and "
                        "CLNZ_CHANNELS_ALL selects every pixel of no channels");
    return st || !o ? st : nz_check_options(ctx, &mi, o, &c->width);
}

/* One byte per pixel into mask_buf, after the caller's events. */
static clnz_status channel_mask_enqueue(clnz_context *ctx, channel_plan *c, cl_mem in_buf,
                                        int64_t base, clnz_channel_rule rule, cl_mem mask_buf,
                                        cl_uint n_wait, const cl_event *wait, cl_event *done)
{
    program_ref prog;
    mask_program(c->t.dtype, c->keys.nonzero, &prog);
    cl_kernel k;
    cl_mem meta = NULL;
    size_t local;
    clnz_status st = program_kernel(ctx, &prog, "channel_mask", &k);
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

/* The pixel mask of t into mask_buf. A last dimension of 0 under
 * CLNZ_CHANNELS_ANY writes nothing: its mask is empty (channel_plan_make). */
clnz_status channels_mask_enqueue(clnz_context *ctx, const clnz_tensor *t, cl_mem buf,
                                  const clnz_predicate *pred, clnz_channel_rule rule,
                                  cl_mem mask_buf, cl_uint n_wait, const cl_event *wait,
                                  cl_event *done)
{
    tensor_info ti;
    channel_plan c;
    *done = NULL;
    clnz_status st = tensor_check(ctx, t, &ti);
    if (!st)
        st = channel_plan_make(ctx, &ti, pred, NULL, rule, &c);
    return st ? st : channel_mask_enqueue(ctx, &c, buf, 0, rule, mask_buf, n_wait, wait, done);
}

clnz_status pixel_mask_buffer(clnz_context *ctx, uint64_t pixels, cl_mem *buf)
{
    if (pixels > ctx->max_alloc)
        return ctx_fail(ctx, CLNZ_ERROR_TOO_LARGE,
                        "the pixel mask (%llu bytes) exceeds the device's largest allocation",
                        (unsigned long long)pixels);
    cl_int e = CL_SUCCESS;
    *buf = clCreateBuffer(ctx->cl, CL_MEM_READ_WRITE, pixels ? (size_t)pixels : 1, NULL, &e);
    return CL_CHECK(ctx, e, "clCreateBuffer(pixel mask)");
}

/* The caller's outputs, against the input the mask pass reads: the pixels'
 * nonzero after it sees only clnz's own mask. out NULL: none (_alloc). */
typedef struct {
    cl_mem out;
    size_t out_offset;
    uint64_t capacity;
    cl_mem count; /* may be NULL (_alloc) */
    size_t count_offset;
} channel_writes;

static clnz_status channel_writes_apart(clnz_context *ctx, const channel_plan *c,
                                        const clnz_nonzero_options *o, cl_mem in_buf, int64_t base,
                                        const channel_writes *w)
{
    size_t ib = index_bytes(o->index_type);
    uint64_t per_entry = nz_per_entry(o, c->width);
    /* checked first, so that the output's span is in range (the nested call
     * checks them again: a few queries), in nonzero_enqueue's order (a NULL
     * output with a capacity is the output's error) */
    clnz_status st = output_check(ctx, w->out, w->out_offset, w->capacity, per_entry, ib);
    if (!st && w->count)
        st = buffer_check(ctx, w->count, "count", w->count_offset, 1, sizeof(cl_ulong));
    if (st)
        return st;
    mem_span read = tensor_span(in_buf, &c->t, base, "input");
    mem_span writes[2] = {
        {w->out, w->out_offset, w->out_offset + w->capacity * per_entry * ib, "output"},
        {w->count, w->count_offset, w->count_offset + sizeof(cl_ulong), "count"}};
    return spans_apart(ctx, writes, 2, &read, 1);
}

/* What both device-resident forms do first: the pixel mask of `in` into
 * a new buffer (*mask, the caller's to release), enqueued after the
 * caller's events; *done is its event (NULL when there was nothing to do). */
static clnz_status device_mask(clnz_context *ctx, const clnz_tensor *in, cl_mem in_buf,
                               size_t in_offset, const clnz_predicate *pred, clnz_channel_rule rule,
                               const clnz_nonzero_options *o, const channel_writes *w,
                               channel_plan *c, cl_uint num_events, const cl_event *wait_list,
                               cl_mem *mask, cl_event *done)
{
    tensor_info t;
    int64_t base;
    *mask = NULL;
    *done = NULL;
    clnz_status st = events_check(ctx, num_events, wait_list);
    if (!st)
        st = tensor_check(ctx, in, &t);
    if (!st)
        st = channel_plan_make(ctx, &t, pred, o, rule, c);
    if (!st)
        st = tensor_base(ctx, &c->t, in_buf, in_offset, "input", &base);
    if (!st)
        st = channel_writes_apart(ctx, c, o, in_buf, base, w);
    if (!st)
        st = pixel_mask_buffer(ctx, c->pixels.n, mask);
    if (!st)
        st = channel_mask_enqueue(ctx, c, in_buf, base, rule, *mask, num_events, wait_list,
                                  done);
    return st;
}

/* Releases what device_mask made: OpenCL frees the mask once the commands
 * using it are done. */
static clnz_status device_mask_end(cl_mem mask, cl_event done, clnz_status st)
{
    if (done)
        clReleaseEvent(done);
    if (mask)
        clReleaseMemObject(mask);
    return st;
}

clnz_status clnz_nonzero_channels_enqueue(clnz_context *ctx, const clnz_tensor *in,
                                          cl_mem in_buf, size_t in_offset,
                                          const clnz_predicate *pred, clnz_channel_rule rule,
                                          const clnz_nonzero_options *opts, cl_mem out_buf,
                                          size_t out_offset, uint64_t capacity,
                                          cl_mem count_buf, size_t count_offset,
                                          cl_uint num_events, const cl_event *wait_list,
                                          cl_event *out_event)
{
    CTX_ENTER(ctx);
    clnz_nonzero_options defaults;
    const clnz_nonzero_options *o = nz_options_or_defaults(opts, &defaults);
    channel_plan c;
    cl_mem mask;
    cl_event done;
    channel_writes w = {out_buf, out_offset, capacity, count_buf, count_offset};
    clnz_status st = device_mask(ctx, in, in_buf, in_offset, pred, rule, o, &w, &c, num_events,
                                 wait_list, &mask, &done);
    if (!st) /* the predicate is applied: nonzero over the pixel bytes */
        st = clnz_nonzero_enqueue(ctx, &c.mask, mask, 0, NULL, o, out_buf, out_offset, capacity,
                                  count_buf, count_offset, done ? 1 : 0, done ? &done : NULL,
                                  out_event);
    return device_mask_end(mask, done, st);
}

clnz_status clnz_nonzero_channels_alloc(clnz_context *ctx, const clnz_tensor *in,
                                        cl_mem in_buf, size_t in_offset,
                                        const clnz_predicate *pred, clnz_channel_rule rule,
                                        const clnz_nonzero_options *opts, cl_mem *out_buf,
                                        uint64_t *count, cl_mem count_buf, size_t count_offset,
                                        cl_uint num_events, const cl_event *wait_list,
                                        cl_event *out_event)
{
    EXACT_ENTER(ctx, out_buf, count);
    clnz_nonzero_options defaults;
    const clnz_nonzero_options *o = nz_options_or_defaults(opts, &defaults);
    channel_plan c;
    cl_mem mask = NULL;
    cl_event done = NULL;
    clnz_status st = exact_outputs(ctx, out_buf, count);
    if (!st) /* before the mask pass, which the nested _alloc call's count waits on */
        chain_settle(ctx);
    channel_writes w = {NULL, 0, 0, count_buf, count_offset};
    if (!st)
        st = device_mask(ctx, in, in_buf, in_offset, pred, rule, o, &w, &c, num_events, wait_list,
                         &mask, &done);
    if (!st)
        st = clnz_nonzero_alloc(ctx, &c.mask, mask, 0, NULL, o, out_buf, count, count_buf,
                                count_offset, done ? 1 : 0, done ? &done : NULL, out_event);
    return device_mask_end(mask, done, st);
}

clnz_status pixel_mask_read(clnz_context *ctx, cl_mem mask, uint64_t pixels, cl_event done,
                            unsigned char *dst)
{
    if (!pixels)
        return CLNZ_SUCCESS;
    return read_after(ctx, mask, 0, (size_t)pixels, dst, done ? 1 : 0, done ? &done : NULL);
}

clnz_status channels_mask_direct(clnz_context *ctx, const tensor_info *t, const void *data,
                                 const clnz_predicate *pred, clnz_channel_rule rule,
                                 unsigned char *dst)
{
    channel_plan c;
    cl_mem inb = NULL, mask = NULL;
    cl_event done = NULL;
    int64_t base;
    clnz_status st = channel_plan_make(ctx, t, pred, NULL, rule, &c);
    if (!st)
        st = upload(ctx, &c.t, data, &inb, &base);
    if (!st)
        st = pixel_mask_buffer(ctx, c.pixels.n, &mask);
    if (!st) {
        chain_settle(ctx); /* the call waits for its own commands */
        st = channel_mask_enqueue(ctx, &c, inb, base, rule, mask, 0, NULL, &done);
    }
    if (!st)
        st = pixel_mask_read(ctx, mask, c.pixels.n, done, dst);
    if (done)
        clReleaseEvent(done);
    if (mask)
        clReleaseMemObject(mask);
    if (inb)
        clReleaseMemObject(inb);
    return st;
}

typedef struct {
    const clnz_predicate *pred;
    clnz_channel_rule rule;
    unsigned char *mask; /* the whole pixel mask, C order */
    int rank;            /* of the pixels: the input's rank - 1 */
    const int64_t *shape;
    unsigned char *part; /* one slice's pixel bytes */
} channel_slices;

/* A slice keeps its pixels' channels whole (keep_last): its pixel bytes
 * land at their place in the whole mask. */
static clnz_status channel_slice(clnz_context *ctx, void *user, const view *s, const box *at)
{
    channel_slices *c = user;
    clnz_tensor t = view_tensor(&s[0]);
    tensor_info ti;
    clnz_status st = tensor_check(ctx, &t, &ti);
    if (!st)
        st = channels_mask_direct(ctx, &ti, s[0].data, c->pred, c->rule, c->part);
    if (!st)
        scatter_block((char *)c->mask, c->rank, c->shape, at, (const char *)c->part, 1);
    return st;
}

/* The slicing's bytes of result per element: a broadcast or overlapping
 * view's slices must also keep their pixel masks (a byte a pixel, so a byte
 * an element will do) within the limit, which halving their span need not
 * do; elsewhere the span bounds them. */
static uint64_t pixel_bytes(const view *v) { return view_overlaps(v) ? 1 : 0; }

/* 1 when one pixel's channels fit an allocation together: the slices can
 * then keep every pixel whole. */
static int pixel_fits(const view *v, uint64_t budget)
{
    view px = *v;
    for (int d = 0; d < px.rank - 1; ++d)
        px.shape[d] = 1;
    return view_span(&px) <= budget;
}

/* The mask a channel at a time, for pixels whose channels lie further apart
 * than one allocation holds (a planar image, its channels whole planes
 * apart, viewed as interleaved: "no slice of the input fits" until
 * 2026-11-27): each channel's plane is sliced like any view (one channel:
 * the rule is the predicate), and the planes are combined by the rule.
 * Every extent is at least 1 here (an empty view fits). */
static clnz_status channel_planes(clnz_context *ctx, const view *v, channel_slices *cs,
                                  uint64_t pixels)
{
    int last = v->rank - 1;
    unsigned char *plane_mask = malloc((size_t)pixels);
    if (!plane_mask)
        return ctx_fail(ctx, CLNZ_ERROR_OUT_OF_HOST_MEMORY, "cannot allocate the pixel mask");
    view plane = *v;
    plane.shape[last] = 1;
    channel_slices one = *cs;
    one.rule = CLNZ_CHANNELS_ANY;
    slicing s = {&plane, 1, ctx->max_alloc, pixel_bytes(&plane), 1};
    box whole;
    memset(&whole, 0, sizeof whole);
    memcpy(whole.shape, plane.shape, sizeof whole.shape);
    /* a plane that fits is one slice (a single pixel has nothing to cut);
     * every plane spans the same */
    int fits = view_span(&plane) <= ctx->max_alloc && pixels <= ctx->max_alloc;
    clnz_status st = CLNZ_SUCCESS;
    for (int64_t ch = 0; !st && ch < v->shape[last]; ++ch) {
        plane.data = v->data + ch * v->strides[last] * (int64_t)v->elem;
        one.mask = ch ? plane_mask : cs->mask;
        st = fits ? channel_slice(ctx, &one, &plane, &whole)
                  : slices_each(ctx, &s, channel_slice, &one);
        if (st || !ch)
            continue;
        for (uint64_t p = 0; p < pixels; ++p)
            cs->mask[p] = cs->rule == CLNZ_CHANNELS_ALL ? cs->mask[p] & plane_mask[p]
                                                        : cs->mask[p] | plane_mask[p];
    }
    free(plane_mask);
    return st;
}

/* The pixel mask on the host (from one upload, or slice by slice when the
 * input exceeds one allocation), then nonzero over it, which slices its
 * own way if need be. */
clnz_status clnz_nonzero_channels(clnz_context *ctx, const clnz_tensor *in, const void *data,
                                  const clnz_predicate *pred, clnz_channel_rule rule,
                                  const clnz_nonzero_options *opts, clnz_result *res)
{
    CTX_ENTER(ctx);
    clnz_status st = nz_result_start(ctx, res);
    if (st)
        return st;
    clnz_nonzero_options defaults;
    const clnz_nonzero_options *o = nz_options_or_defaults(opts, &defaults);
    tensor_info t;
    view v;
    int fits;
    channel_plan c;
    st = host_view(ctx, in, data, &t, &v, &fits);
    if (!st)
        st = channel_plan_make(ctx, &t, pred, o, rule, &c);
    if (st)
        return st;
    if (c.pixels.n > SIZE_MAX)
        return ctx_fail(ctx, CLNZ_ERROR_TOO_LARGE, "the pixel mask does not fit the address space");
    /* the device's pixel mask must fit too: a broadcast view spans less
     * memory than its pixels take */
    fits = fits && c.pixels.n <= ctx->max_alloc;
    unsigned char *host = malloc(c.pixels.n ? (size_t)c.pixels.n : 1);
    unsigned char *part = fits ? NULL : malloc(c.pixels.n ? (size_t)c.pixels.n : 1);
    if (!host || (!fits && !part)) {
        st = ctx_fail(ctx, CLNZ_ERROR_OUT_OF_HOST_MEMORY, "cannot allocate the pixel mask");
    } else if (t.n == 0) { /* no channels, or no pixels: the rule alone */
        memset(host, rule == CLNZ_CHANNELS_ALL, (size_t)c.pixels.n);
    } else if (fits) {
        st = channels_mask_direct(ctx, &t, data, pred, rule, host);
    } else {
        channel_slices cs = {pred, rule, host, t.rank - 1, t.shape, part};
        slicing s = {&v, 1, ctx->max_alloc, pixel_bytes(&v), 1};
        st = pixel_fits(&v, ctx->max_alloc) ? slices_each(ctx, &s, channel_slice, &cs)
                                             : channel_planes(ctx, &v, &cs, c.pixels.n);
    }
    if (!st) /* the predicate is applied: nonzero over the pixel bytes */
        st = clnz_nonzero(ctx, &c.mask, host, NULL, o, res);
    free(host);
    free(part);
    return st;
}
