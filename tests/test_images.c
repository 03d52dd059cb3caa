/* test_images.c: nonzero over images against references written here: a
 * region of interest in pitched memory (clnz_image_view), channel rules on
 * multi-channel pixels (every launch shape, predicates, strided channels,
 * the device-resident call), OpenCL image2d objects of several formats with
 * a region, order xy, and the errors. */
#include "testutil.h"

#include <stdlib.h>
#include <string.h>

/* Compares res (rows, int64) with the (row, col) pairs of the selected
 * pixels of a height x width grid sel[] (xy: (col, row)). */
static void expect_pixels(const clnz_result *res, const uint8_t *sel, int64_t height,
                          int64_t width, int xy)
{
    int64_t z = 0;
    const int64_t *got = res->indices;
    for (int64_t r = 0; r < height; ++r)
        for (int64_t c = 0; c < width; ++c) {
            if (!sel[r * width + c])
                continue;
            if (z >= res->count)
                fail_msg("fewer entries than selected pixels (%lld)", (long long)res->count);
            int64_t a = xy ? c : r, b = xy ? r : c;
            if (got[2 * z] != a || got[2 * z + 1] != b)
                fail_msg("entry %lld: got (%lld, %lld) want (%lld, %lld)", (long long)z,
                         (long long)got[2 * z], (long long)got[2 * z + 1], (long long)a,
                         (long long)b);
            ++z;
        }
    assert_int_equal(res->count, z);
}

/* A u16 image of 1 channel, rows padded to a pitch, and a region inside. */
static void test_region_of_interest_in_pitched_rows(void **state)
{
    (void)state;
    clnz_context *ctx = tu_context();
    const size_t full_w = 301, full_h = 67, pitch = 640; /* bytes; 602 used */
    uint16_t *img = malloc(pitch * full_h);
    tu_fill(CLNZ_U16, img, pitch * full_h / 2, 0.3);
    clnz_image_desc d = {CLNZ_U16, 1, pitch, 17, 5, 250, 51};
    clnz_tensor t;
    int64_t shape[3], strides[3];
    size_t off;
    TU_CHECK(ctx, clnz_image_view(ctx, &d, &t, shape, strides, &off));
    assert_int_equal(t.rank, 2);
    uint8_t *sel = malloc(d.width * d.height);
    for (size_t r = 0; r < d.height; ++r)
        for (size_t c = 0; c < d.width; ++c)
            sel[r * d.width + c] = img[(d.y + r) * (pitch / 2) + d.x + c] != 0;
    for (int xy = 0; xy < 2; ++xy) {
        clnz_nonzero_options o;
        clnz_nonzero_options_init(&o);
        o.order = xy ? CLNZ_ORDER_XY : CLNZ_ORDER_ROW_MAJOR;
        clnz_result res;
        TU_CHECK(ctx, clnz_nonzero(ctx, &t, (const char *)img + off, NULL, &o, &res));
        expect_pixels(&res, sel, (int64_t)d.height, (int64_t)d.width, xy);
        clnz_result_free(&res);
        /* the same through a device buffer holding the whole image */
        cl_mem in = tu_buffer(pitch * full_h, img);
        cl_mem out = tu_buffer(d.width * d.height * 16, NULL), cnt = tu_buffer(8, NULL);
        TU_CHECK(ctx, clnz_nonzero_enqueue(ctx, &t, in, off, NULL, &o, out, 0, d.width * d.height, cnt,
                                           0, 0, NULL, NULL));
        uint64_t z;
        tu_read(cnt, 0, 8, &z);
        res.count = (int64_t)z;
        res.indices = malloc(z * 16 + 1);
        tu_read(out, 0, z * 16, res.indices);
        expect_pixels(&res, sel, (int64_t)d.height, (int64_t)d.width, xy);
        clnz_result_free(&res);
        clReleaseMemObject(in);
        clReleaseMemObject(out);
        clReleaseMemObject(cnt);
    }
    (void)full_w;
    /* rows shorter than the region, a pitch that splits an element */
    d.row_pitch = 100;
    assert_int_equal(clnz_image_view(ctx, &d, &t, shape, strides, &off),
                     CLNZ_ERROR_INVALID_ARGUMENT);
    assert_non_null(strstr(clnz_context_message(ctx), "shorter"));
    d.row_pitch = 641;
    assert_int_equal(clnz_image_view(ctx, &d, &t, shape, strides, &off),
                     CLNZ_ERROR_INVALID_ARGUMENT);
    d.row_pitch = 640, d.channels = 0;
    assert_int_equal(clnz_image_view(ctx, &d, &t, shape, strides, &off),
                     CLNZ_ERROR_INVALID_ARGUMENT);
    d.channels = 1, d.dtype = (clnz_dtype)CLNZ_DTYPE_COUNT; /* outside the enum */
    assert_int_equal(clnz_image_view(ctx, &d, &t, shape, strides, &off),
                     CLNZ_ERROR_INVALID_ARGUMENT);
    assert_non_null(strstr(clnz_context_message(ctx), "unknown dtype 12"));
    /* pitches whose rows would reach past 2^63 bytes: near 2^64 they made a
     * negative row stride (at y = 0 too) and an offset that wrapped to 0 */
    clnz_image_desc far[] = {{CLNZ_U8, 1, SIZE_MAX, 0, 0, 1, 2},
                             {CLNZ_U8, 1, SIZE_MAX - 7, 8, 1, 1, 2},
                             {CLNZ_U8, 1, (size_t)INT64_MAX / 3 + 1, 0, 1, 1, 2},
                             {CLNZ_U8, 1, (size_t)1 << 63, 0, 0, 1, 0}};
    for (size_t i = 0; i < sizeof far / sizeof far[0]; ++i) {
        assert_int_equal(clnz_image_view(ctx, &far[i], &t, shape, strides, &off),
                         CLNZ_ERROR_INVALID_ARGUMENT);
        assert_non_null(strstr(clnz_context_message(ctx), "spans more than 2^63 bytes"));
    }
    far[2].row_pitch -= 1; /* 3 rows of it fit */
    TU_CHECK(ctx, clnz_image_view(ctx, &far[2], &t, shape, strides, &off));
    assert_true(strides[0] > 0 && off == far[2].row_pitch);
    free(sel);
    free(img);
}

/* 3-channel u8 pixels of a pitched region, any and all, with a predicate,
 * through every launch shape; then 4 f32 channels of a transposed view. */
static void test_channel_rules(void **state)
{
    (void)state;
    clnz_context *ctx = tu_context();
    const size_t pitch = 3 * 130 + 7;
    uint8_t *img = malloc(pitch * 90);
    for (size_t i = 0; i < pitch * 90; ++i)
        img[i] = tu_rand() % 4 ? 0 : (uint8_t)(tu_rand() % 256);
    clnz_image_desc d = {CLNZ_U8, 3, pitch, 3, 2, 120, 80};
    clnz_tensor t;
    int64_t shape[3], strides[3];
    size_t off;
    TU_CHECK(ctx, clnz_image_view(ctx, &d, &t, shape, strides, &off));
    assert_int_equal(t.rank, 3);
    clnz_predicate preds[2] = {clnz_pred_nonzero(), clnz_pred_int(CLNZ_OP_GT, 40)};
    uint8_t *sel = malloc(120 * 80);
    for (int l = 0; l < tu_n_launches; ++l) {
        TU_CHECK(ctx, clnz_context_set_launch(ctx, tu_launches[l].wg, tu_launches[l].items));
        for (int rule = 0; rule < 2; ++rule) {
            clnz_nonzero_options o;
            clnz_nonzero_options_init(&o);
            for (size_t r = 0; r < 80; ++r)
                for (size_t c = 0; c < 120; ++c) {
                    const uint8_t *px = img + (2 + r) * pitch + (3 + c) * 3;
                    int any = 0, all = 1;
                    for (int k = 0; k < 3; ++k) {
                        int s = l % 2 ? px[k] > 40 : px[k] != 0;
                        any |= s, all &= s;
                    }
                    sel[r * 120 + c] = (uint8_t)(rule ? all : any);
                }
            clnz_result res;
            TU_CHECK(ctx, clnz_nonzero_channels(ctx, &t, img + off, &preds[l % 2],
                                                (clnz_channel_rule)rule, &o, &res));
            expect_pixels(&res, sel, 80, 120, 0);
            clnz_result_free(&res);
        }
    }
    TU_CHECK(ctx, clnz_context_set_launch(ctx, 0, 0));

    /* (H, W, C) = (40, 30, 4) f32 as a transposed (Fortran-order) view */
    int64_t fshape[3] = {40, 30, 4}, fstrides[3] = {1, 40, 40 * 30};
    float *f = malloc(40 * 30 * 4 * 4);
    tu_fill(CLNZ_F32, f, 40 * 30 * 4, 0.6);
    clnz_tensor ft = {CLNZ_F32, 3, fshape, fstrides};
    clnz_predicate nonzero = clnz_pred_nonzero();
    uint8_t fsel[40 * 30];
    for (int r = 0; r < 40; ++r)
        for (int c = 0; c < 30; ++c) {
            int all = 1;
            for (int k = 0; k < 4; ++k)
                all &= tu_ref_selected(CLNZ_F32, f + r + 40 * c + 1200 * k, &nonzero);
            fsel[r * 30 + c] = (uint8_t)all;
        }
    clnz_nonzero_options o;
    clnz_nonzero_options_init(&o);
    cl_mem in = tu_buffer(40 * 30 * 16, f);
    cl_mem out = tu_buffer(40 * 30 * 16, NULL), cnt = tu_buffer(8, NULL);
    TU_CHECK(ctx, clnz_nonzero_channels_enqueue(ctx, &ft, in, 0, NULL, CLNZ_CHANNELS_ALL, &o, out, 0,
                                                1200, cnt, 0, 0, NULL, NULL));
    uint64_t z;
    tu_read(cnt, 0, 8, &z);
    clnz_result res = {0};
    res.count = (int64_t)z;
    res.indices = malloc(z * 16 + 1);
    tu_read(out, 0, z * 16, res.indices);
    expect_pixels(&res, fsel, 40, 30, 0);
    clnz_result_free(&res);
    /* no channels, 2^63 pixels (an empty input's other extents are free):
     * any selects none, on the device too; all would list them all */
    int64_t eshape[3] = {(int64_t)1 << 62, 2, 0};
    clnz_tensor empty = {CLNZ_U8, 3, eshape, NULL};
    z = 99;
    cl_mem cnt0 = tu_buffer(8, &z);
    TU_CHECK(ctx, clnz_nonzero_channels_enqueue(ctx, &empty, in, 0, NULL, CLNZ_CHANNELS_ANY, &o,
                                                out, 0, 1200, cnt0, 0, 0, NULL, NULL));
    tu_read(cnt0, 0, 8, &z);
    assert_int_equal(z, 0);
    clReleaseMemObject(cnt0);
    TU_CHECK(ctx, clnz_nonzero_channels(ctx, &empty, f, NULL, CLNZ_CHANNELS_ANY, &o, &res));
    assert_int_equal(res.count, 0);
    assert_int_equal(res.shape[0], 0);
    assert_int_equal(res.shape[1], 2);
    clnz_result_free(&res);
    assert_int_equal(clnz_nonzero_channels(ctx, &empty, f, NULL, CLNZ_CHANNELS_ALL, &o, &res),
                     CLNZ_ERROR_TOO_LARGE);
    assert_non_null(strstr(clnz_context_message(ctx), "CLNZ_CHANNELS_ALL selects every"));
    clReleaseMemObject(in);
    clReleaseMemObject(out);
    clReleaseMemObject(cnt);
    /* a rank-0 input has no channel dimension */
    clnz_tensor scalar = {CLNZ_F32, 0, NULL, NULL};
    assert_int_equal(clnz_nonzero_channels(ctx, &scalar, f, NULL, CLNZ_CHANNELS_ANY, &o, &res),
                     CLNZ_ERROR_INVALID_ARGUMENT);
    free(f);
    free(sel);
    free(img);
}

/* Whether the device can hold images of this format (OpenCL 1.2 requires
 * RGBA of every type used here; R and A are optional). */
static int format_supported(cl_channel_order order, cl_channel_type type)
{
    cl_image_format fmts[256];
    cl_uint n = 0;
    clGetSupportedImageFormats(clnz_context_cl_context(tu_context()), CL_MEM_READ_ONLY,
                               CL_MEM_OBJECT_IMAGE2D, 256, fmts, &n);
    for (cl_uint i = 0; i < n && i < 256; ++i)
        if (fmts[i].image_channel_order == order && fmts[i].image_channel_data_type == type)
            return 1;
    return 0;
}

/* An image object of the given format, filled with `bytes`. */
static cl_mem make_image(cl_channel_order order, cl_channel_type type, size_t w, size_t h,
                         const void *bytes)
{
    cl_image_format fmt = {order, type};
    cl_image_desc desc;
    memset(&desc, 0, sizeof desc);
    desc.image_type = CL_MEM_OBJECT_IMAGE2D;
    desc.image_width = w, desc.image_height = h;
    cl_int e;
    cl_mem m = clCreateImage(clnz_context_cl_context(tu_context()),
                             CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, &fmt, &desc,
                             (void *)bytes, &e);
    if (e)
        fail_msg("clCreateImage(order 0x%x, type 0x%x): %d", order, type, e);
    return m;
}

/* An image the call refuses, with this message. */
static void image_refused(clnz_context *ctx, cl_mem img, const char *msg)
{
    clnz_result res;
    assert_int_equal(
        clnz_image2d_nonzero(ctx, img, NULL, NULL, NULL, CLNZ_CHANNELS_ANY, NULL, &res),
        CLNZ_ERROR_INVALID_ARGUMENT);
    assert_string_equal(clnz_context_message(ctx), msg);
}

static void test_image2d_objects(void **state)
{
    (void)state;
    clnz_context *ctx = tu_context();
    cl_bool support = CL_FALSE;
    clGetDeviceInfo(clnz_context_device(ctx), CL_DEVICE_IMAGE_SUPPORT, sizeof support, &support,
                    NULL);
    if (!support)
        skip();
    const size_t w = 77, h = 45, origin[2] = {5, 3}, region[2] = {60, 40};
    /* RGBA UNORM_INT8 with a predicate on the stored integers */
    uint8_t *rgba = malloc(w * h * 4);
    for (size_t i = 0; i < w * h * 4; ++i)
        rgba[i] = tu_rand() % 3 ? 0 : (uint8_t)(tu_rand() % 256);
    /* R FLOAT */
    float *r32 = malloc(w * h * 4);
    tu_fill(CLNZ_F32, r32, w * h, 0.4);
    /* RGBA SIGNED_INT16 */
    int16_t *rg = malloc(w * h * 8);
    tu_fill(CLNZ_I16, rg, w * h * 4, 0.3);
    /* RGBA and R HALF_FLOAT (any bit pattern), with the halves around 0.1
     * planted in the region: copied as stored and compared as an f16
     * tensor, by numpy's rules (0.1 rounds to 0x2e66 first) */
    uint16_t *h16 = malloc(w * h * 8);
    tu_fill(CLNZ_F16, h16, w * h * 4, 0.4);
    const uint16_t near_tenth[] = {0x2e65, 0x2e66, 0x2e67, 0xae66};
    for (size_t i = 0; i < 64; ++i)
        h16[((origin[1] + i % region[1]) * w + origin[0] + i * 7 % region[0]) * 4 + i % 4] =
            near_tenth[i % 4];
    const int n_fmts = 5;
    const int supported[] = {1, format_supported(CL_R, CL_FLOAT), 1, 1,
                             format_supported(CL_R, CL_HALF_FLOAT)};
    uint8_t *sel = malloc(region[0] * region[1]);
    for (int fmt = 0; fmt < n_fmts; ++fmt)
        for (int rule = 0; rule < 2 && supported[fmt]; ++rule) {
            clnz_nonzero_options o;
            clnz_nonzero_options_init(&o);
            o.order = rule ? CLNZ_ORDER_XY : CLNZ_ORDER_ROW_MAJOR;
            clnz_predicate ge100 = clnz_pred_int(CLNZ_OP_GE, 100);
            clnz_predicate ge_tenth = clnz_pred_float(CLNZ_OP_GE, 0.1);
            const clnz_predicate *pred = fmt == 0 ? &ge100 : fmt == 3 ? &ge_tenth : NULL;
            cl_mem img = fmt == 0   ? make_image(CL_RGBA, CL_UNORM_INT8, w, h, rgba)
                         : fmt == 1 ? make_image(CL_R, CL_FLOAT, w, h, r32)
                         : fmt == 2 ? make_image(CL_RGBA, CL_SIGNED_INT16, w, h, rg)
                         : fmt == 3 ? make_image(CL_RGBA, CL_HALF_FLOAT, w, h, h16)
                                    : make_image(CL_R, CL_HALF_FLOAT, w, h, h16);
            clnz_predicate nonzero = clnz_pred_nonzero();
            for (size_t y = 0; y < region[1]; ++y)
                for (size_t x = 0; x < region[0]; ++x) {
                    size_t px = (origin[1] + y) * w + origin[0] + x;
                    int any = 0, all = 1, n = fmt == 1 || fmt == 4 ? 1 : 4;
                    for (int k = 0; k < n; ++k) {
                        int s = fmt == 0   ? rgba[px * 4 + k] >= 100
                                : fmt == 1 ? tu_ref_selected(CLNZ_F32, r32 + px, &nonzero)
                                : fmt == 2 ? rg[px * 4 + k] != 0
                                : fmt == 3 ? tu_ref_selected(CLNZ_F16, h16 + px * 4 + k, pred)
                                           : tu_ref_selected(CLNZ_F16, h16 + px, &nonzero);
                        any |= s, all &= s;
                    }
                    sel[y * region[0] + x] = (uint8_t)(rule ? all : any);
                }
            clnz_result res;
            TU_CHECK(ctx, clnz_image2d_nonzero(ctx, img, origin, region, pred,
                                               (clnz_channel_rule)rule, &o, &res));
            expect_pixels(&res, sel, (int64_t)region[1], (int64_t)region[0], rule);
            int64_t z = res.count;
            clnz_result_free(&res);
            /* device-resident, into a buffer */
            cl_mem out = tu_buffer(region[0] * region[1] * 16, NULL), cnt = tu_buffer(8, NULL);
            TU_CHECK(ctx, clnz_image2d_nonzero_enqueue(ctx, img, origin, region, pred,
                                                       (clnz_channel_rule)rule, &o, out, 0,
                                                       region[0] * region[1], cnt, 0, 0, NULL,
                                                       NULL));
            uint64_t dz;
            tu_read(cnt, 0, 8, &dz);
            assert_int_equal(dz, z);
            res.count = z;
            res.indices = malloc(dz * 16 + 1);
            tu_read(out, 0, dz * 16, res.indices);
            expect_pixels(&res, sel, (int64_t)region[1], (int64_t)region[0], rule);
            clnz_result_free(&res);
            clReleaseMemObject(out);
            clReleaseMemObject(cnt);
            clReleaseMemObject(img);
        }
    /* errors: a region outside the image, an order clnz does not read */
    cl_mem img = make_image(CL_RGBA, CL_UNORM_INT8, w, h, rgba);
    size_t too_far[2] = {73, 40}; /* 5 + 73 > 77 */
    clnz_result res;
    assert_int_equal(clnz_image2d_nonzero(ctx, img, origin, too_far, NULL, CLNZ_CHANNELS_ANY, NULL,
                                          &res),
                     CLNZ_ERROR_INVALID_ARGUMENT);
    assert_non_null(strstr(clnz_context_message(ctx), "outside"));
    /* an origin past the edge, with the whole rest of the image: the origin
     * is named (the region w - x would underflow) */
    size_t past[2] = {78, 0};
    assert_int_equal(clnz_image2d_nonzero(ctx, img, past, NULL, NULL, CLNZ_CHANNELS_ANY, NULL,
                                          &res),
                     CLNZ_ERROR_INVALID_ARGUMENT);
    assert_string_equal(clnz_context_message(ctx), "the origin (78, 0) is outside the 77 x 45 image");
    clReleaseMemObject(img);
    { /* an image of another OpenCL context, on the same device */
        cl_device_id dev = clnz_context_device(ctx);
        cl_int e = CL_SUCCESS;
        cl_context other = clCreateContext(NULL, 1, &dev, NULL, NULL, &e);
        assert_int_equal(e, CL_SUCCESS);
        cl_image_format fmt = {CL_RGBA, CL_UNORM_INT8};
        cl_image_desc desc = {0};
        desc.image_type = CL_MEM_OBJECT_IMAGE2D;
        desc.image_width = w, desc.image_height = h;
        cl_mem foreign = clCreateImage(other, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, &fmt, &desc,
                                       (void *)rgba, &e);
        assert_int_equal(e, CL_SUCCESS);
        image_refused(ctx, foreign,
                      "the image belongs to another OpenCL context than the clnz context's");
        clReleaseMemObject(foreign);
        clReleaseContext(other);
        /* one the kernels may only write */
        cl_mem wo =
            clCreateImage(clnz_context_cl_context(ctx), CL_MEM_WRITE_ONLY, &fmt, &desc, NULL, &e);
        assert_int_equal(e, CL_SUCCESS);
        image_refused(ctx, wo, "the image is CL_MEM_WRITE_ONLY, and clnz reads it (its mask pass)");
        clReleaseMemObject(wo);
    }
    if (format_supported(CL_A, CL_UNORM_INT8)) {
        img = make_image(CL_A, CL_UNORM_INT8, w, h, rgba);
        assert_int_equal(clnz_image2d_nonzero(ctx, img, NULL, NULL, NULL, CLNZ_CHANNELS_ANY, NULL,
                                              &res),
                         CLNZ_ERROR_UNSUPPORTED_DTYPE);
        clReleaseMemObject(img);
    }
    if (format_supported(CL_RGBA, CL_SNORM_INT8)) { /* a type clnz does not read */
        img = make_image(CL_RGBA, CL_SNORM_INT8, w, h, rgba);
        assert_int_equal(clnz_image2d_nonzero(ctx, img, NULL, NULL, NULL, CLNZ_CHANNELS_ANY, NULL,
                                              &res),
                         CLNZ_ERROR_UNSUPPORTED_DTYPE);
        assert_non_null(strstr(clnz_context_message(ctx), "channel type"));
        clReleaseMemObject(img);
    }
    assert_int_equal(clnz_image2d_nonzero(ctx, NULL, NULL, NULL, NULL, CLNZ_CHANNELS_ANY, NULL, &res),
                     CLNZ_ERROR_INVALID_ARGUMENT);
    free(sel);
    free(rgba);
    free(r32);
    free(rg);
    free(h16);
}

int main(void)
{
    tu_seed("test_images");
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_region_of_interest_in_pitched_rows),
        cmocka_unit_test(test_channel_rules),
        cmocka_unit_test(test_image2d_objects),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    tu_context_done();
    return rc;
}
