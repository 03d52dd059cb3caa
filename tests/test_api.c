/* test_api.c: the API's contract around the pipeline: status codes and
 * messages, checks before any work, contexts (default, selector, wrapped),
 * the version, and kernel build failures reported with their log. Run a
 * second time by `make test` with CLNZ_KERNEL_DIR=kernels, so every kernel
 * file is also built from its own source file. */
#include "testutil.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static void test_version(void **state)
{
    (void)state;
    char want[32];
    snprintf(want, sizeof want, "%d.%d.%d", CLNZ_VERSION_MAJOR, CLNZ_VERSION_MINOR,
             CLNZ_VERSION_PATCH);
    assert_string_equal(clnz_version_string(), want);
    assert_int_equal(clnz_version_number(), CLNZ_VERSION_NUMBER);
}

static void test_status_strings(void **state)
{
    (void)state;
    assert_non_null(strstr(clnz_status_string(CLNZ_ERROR_INDEX_OVERFLOW), "INDEX_OVERFLOW"));
    assert_non_null(strstr(clnz_status_string(CL_OUT_OF_RESOURCES), "CL_OUT_OF_RESOURCES"));
    assert_string_equal(clnz_status_string(-1999), "unknown status");
    /* every OpenCL code up to 2.2's, as a caller's status passes through:
     * -9, -10, -15..-19, -37, -39..-41 and others were "unknown status" */
    for (int code = -1; code >= -72; --code) {
        if (code <= -20 && code >= -29) /* unassigned */
            continue;
        const char *name = clnz_status_string(code);
        assert_true(strncmp(name, "CL_", 3) == 0);
    }
    /* and every code of clnz.h's */
    for (int code = CLNZ_ERROR_INVALID_ARGUMENT; code >= CLNZ_ERROR_CACHE_FILE; --code)
        assert_true(strncmp(clnz_status_string(code), "CLNZ_ERROR_", 11) == 0);
}

/* A small pipeline through the blocking call, to run against kernels/ too. */
static void test_smoke_pipeline(void **state)
{
    (void)state;
    clnz_context *ctx = tu_context();
    float a[2][4] = {{1.0f, 0.0f, 0.0f, 2.0f}, {-0.0f, 3.5f, 0.0f, -5.2f}};
    int64_t shape[] = {2, 4};
    clnz_tensor t = {CLNZ_F32, 2, shape, NULL};
    clnz_result res;
    TU_CHECK(ctx, clnz_nonzero(ctx, &t, a, NULL, NULL, &res));
    int64_t want[] = {0, 0, 0, 3, 1, 1, 1, 3}; /* DirectML's example */
    assert_int_equal(res.count, 4);
    assert_memory_equal(res.indices, want, sizeof want);
    clnz_result_free(&res);
    /* and a mask and a scan, so that every kernel file is built */
    cl_mem in = tu_buffer(sizeof a, a), m = tu_buffer(32, NULL), tot = tu_buffer(8, NULL);
    TU_CHECK(ctx, clnz_mask_enqueue(ctx, &t, in, 0, NULL, CLNZ_U32, m, 0, 0, NULL, NULL));
    TU_CHECK(ctx, clnz_scan_enqueue(ctx, CLNZ_U32, m, 0, m, 0, 8, tot, 0, 0, NULL, NULL));
    uint32_t scanned[8], total = 0;
    tu_read(m, 0, sizeof scanned, scanned);
    tu_read(tot, 0, 4, &total);
    uint32_t want_scan[] = {0, 1, 1, 1, 2, 2, 3, 3};
    assert_memory_equal(scanned, want_scan, sizeof want_scan);
    assert_int_equal(total, 4);
    clReleaseMemObject(in);
    clReleaseMemObject(m);
    clReleaseMemObject(tot);
}

static void test_index_overflow_before_any_work(void **state)
{
    (void)state;
    clnz_context *ctx = tu_context();
    /* no buffers at all: the check must come first */
    int64_t big[] = {(int64_t)1 << 31 | 1};
    clnz_tensor t = {CLNZ_U8, 1, big, NULL};
    clnz_nonzero_options o;
    clnz_nonzero_options_init(&o);
    o.index_type = CLNZ_INDEX_INT32;
    assert_int_equal(clnz_nonzero_enqueue(ctx, &t, NULL, 0, NULL, &o, NULL, 0, 0, NULL, 0, 0, NULL, NULL),
                     CLNZ_ERROR_INDEX_OVERFLOW);
    assert_non_null(strstr(clnz_context_message(ctx), "int32"));
    o.index_type = CLNZ_INDEX_UINT32; /* 2^31 + 1 fits uint32 rows */
    assert_int_not_equal(clnz_nonzero_enqueue(ctx, &t, NULL, 0, NULL, &o, NULL, 0, 0, NULL, 0, 0, NULL,
                                              NULL),
                         CLNZ_ERROR_INDEX_OVERFLOW);
    int64_t flat[] = {65537, 65536}; /* 2^32 + 65536 elements: flat indices overflow uint32 */
    clnz_tensor f = {CLNZ_U8, 2, flat, NULL};
    o.layout = CLNZ_LAYOUT_FLAT;
    assert_int_equal(clnz_nonzero_enqueue(ctx, &f, NULL, 0, NULL, &o, NULL, 0, 0, NULL, 0, 0, NULL, NULL),
                     CLNZ_ERROR_INDEX_OVERFLOW);
    o.layout = CLNZ_LAYOUT_ROWS; /* but rows fit */
    assert_int_not_equal(clnz_nonzero_enqueue(ctx, &f, NULL, 0, NULL, &o, NULL, 0, 0, NULL, 0, 0, NULL,
                                              NULL),
                         CLNZ_ERROR_INDEX_OVERFLOW);
    o.index_type = CLNZ_INDEX_INT32;
    o.fill = (int64_t)1 << 40;
    assert_int_equal(clnz_nonzero_enqueue(ctx, &t, NULL, 0, NULL, &o, NULL, 0, 0, NULL, 0, 0, NULL, NULL),
                     CLNZ_ERROR_INDEX_OVERFLOW); /* the shape is checked first */
}

static void test_bad_arguments(void **state)
{
    (void)state;
    clnz_context *ctx = tu_context();
    int64_t shape[] = {4}, neg[] = {-1};
    uint8_t data[4] = {1, 0, 1, 0};
    clnz_result res;
    clnz_tensor t = {CLNZ_U8, 1, shape, NULL};
    clnz_tensor bad_dtype = {(clnz_dtype)99, 1, shape, NULL};
    clnz_tensor bad_rank = {CLNZ_U8, 33, shape, NULL};
    clnz_tensor bad_shape = {CLNZ_U8, 1, neg, NULL};
    /* a value outside the enum is a bad argument, as every bad enum;
     * UNSUPPORTED_DTYPE is for a real dtype a call does not take */
    assert_int_equal(clnz_nonzero(ctx, &bad_dtype, data, NULL, NULL, &res), CLNZ_ERROR_INVALID_ARGUMENT);
    assert_string_equal(clnz_context_message(ctx), "unknown dtype 99 (the dtypes are 0..11)");
    bad_dtype.dtype = (clnz_dtype)-1;
    assert_int_equal(clnz_count(ctx, &bad_dtype, data, NULL, &(int64_t){0}),
                     CLNZ_ERROR_INVALID_ARGUMENT);
    assert_string_equal(clnz_context_message(ctx), "unknown dtype -1 (the dtypes are 0..11)");
    cl_mem mbuf = tu_buffer(16, NULL), dbuf = tu_buffer(4, data);
    assert_int_equal(clnz_mask_enqueue(ctx, &t, dbuf, 0, NULL, (clnz_dtype)99, mbuf, 0, 0, NULL, NULL),
                     CLNZ_ERROR_INVALID_ARGUMENT);
    assert_int_equal(clnz_mask_enqueue(ctx, &t, dbuf, 0, NULL, CLNZ_F32, mbuf, 0, 0, NULL, NULL),
                     CLNZ_ERROR_UNSUPPORTED_DTYPE);
    clReleaseMemObject(mbuf);
    clReleaseMemObject(dbuf);
    assert_int_equal(clnz_nonzero(ctx, &bad_rank, data, NULL, NULL, &res), CLNZ_ERROR_INVALID_ARGUMENT);
    assert_int_equal(clnz_nonzero(ctx, &bad_shape, data, NULL, NULL, &res), CLNZ_ERROR_INVALID_ARGUMENT);
    assert_int_equal(clnz_nonzero(ctx, &t, NULL, NULL, NULL, &res), CLNZ_ERROR_INVALID_ARGUMENT);
    assert_int_equal(clnz_nonzero(NULL, &t, data, NULL, NULL, &res), CLNZ_ERROR_INVALID_ARGUMENT);
    { /* NULL data in Fortran order, large enough for a C-order copy (core/relayout.c): the
       * copy was made before the check and read NULL (a crash, review 38) */
        int64_t fshape[2] = {70, 90}, fstrides[2] = {1, 70};
        clnz_tensor ft = {CLNZ_F32, 2, fshape, fstrides};
        float *fd = calloc(70 * 90, sizeof *fd);
        clnz_array arr;
        clnz_array offs;
        assert_int_equal(clnz_nonzero(ctx, &ft, NULL, NULL, NULL, &res), CLNZ_ERROR_INVALID_ARGUMENT);
        assert_string_equal(clnz_context_message(ctx), "data is NULL");
        assert_int_equal(clnz_nonzero_batched(ctx, &ft, NULL, NULL, NULL, &res, &offs),
                         CLNZ_ERROR_INVALID_ARGUMENT);
        assert_int_equal(clnz_select(ctx, &ft, NULL, &ft, fd, NULL, &arr), CLNZ_ERROR_INVALID_ARGUMENT);
        assert_int_equal(clnz_select(ctx, &ft, fd, &ft, NULL, NULL, &arr), CLNZ_ERROR_INVALID_ARGUMENT);
        free(fd);
    }
    clnz_nonzero_options o;
    clnz_nonzero_options_init(&o);
    o.layout = (clnz_layout)7;
    assert_int_equal(clnz_nonzero(ctx, &t, data, NULL, &o, &res), CLNZ_ERROR_INVALID_ARGUMENT);
    clnz_nonzero_options_init(&o);
    clnz_predicate bad_op = clnz_pred_nonzero();
    bad_op.op = (clnz_op)42;
    assert_int_equal(clnz_nonzero(ctx, &t, data, &bad_op, &o, &res), CLNZ_ERROR_INVALID_ARGUMENT);
    /* device call: a buffer too small for the view, and a misaligned offset */
    cl_mem in = tu_buffer(4, data), out = tu_buffer(64, NULL), cnt = tu_buffer(8, NULL);
    int64_t five[] = {5};
    clnz_tensor t5 = {CLNZ_U8, 1, five, NULL};
    assert_int_equal(clnz_nonzero_enqueue(ctx, &t5, in, 0, NULL, NULL, out, 0, 4, cnt, 0, 0, NULL, NULL),
                     CLNZ_ERROR_INVALID_ARGUMENT);
    assert_int_equal(clnz_nonzero_enqueue(ctx, &t, in, 0, NULL, NULL, out, 0, 9, cnt, 0, 0, NULL, NULL),
                     CLNZ_ERROR_INVALID_ARGUMENT); /* 9 entries of 8 bytes > 64 */
    assert_int_equal(clnz_nonzero_enqueue(ctx, &t, in, 0, NULL, NULL, out, 0, 4, cnt, 4, 0, NULL, NULL),
                     CLNZ_ERROR_INVALID_ARGUMENT);
    /* a wait list: a count with no list, and a NULL event in it */
    assert_int_equal(clnz_nonzero_enqueue(ctx, &t, in, 0, NULL, NULL, out, 0, 4, cnt, 0, 1, NULL, NULL),
                     CLNZ_ERROR_INVALID_ARGUMENT);
    cl_event holes[2] = {NULL, NULL};
    assert_int_equal(clnz_count_enqueue(ctx, &t, in, 0, NULL, cnt, 0, 2, holes, NULL),
                     CLNZ_ERROR_INVALID_ARGUMENT);
    assert_string_equal(clnz_context_message(ctx), "wait_list[0] is NULL");
    /* capacity smaller than the count: truncated, true count reported */
    TU_CHECK(ctx, clnz_nonzero_enqueue(ctx, &t, in, 0, NULL, NULL, out, 0, 1, cnt, 0, 0, NULL, NULL));
    uint64_t z = 0;
    int64_t first[2] = {-5, -5};
    tu_read(cnt, 0, 8, &z);
    tu_read(out, 0, 16, first);
    assert_int_equal(z, 2);
    assert_int_equal(first[0], 0);
    clReleaseMemObject(in);
    clReleaseMemObject(out);
    clReleaseMemObject(cnt);
}

/* Memory objects a device-resident call cannot use are refused up front,
 * by name (the driver would fail late with a status naming no argument, or
 * not at all: a kernel writing a read-only buffer is undefined). */
static void test_memory_objects_clnz_cannot_use(void **state)
{
    (void)state;
    clnz_context *ctx = tu_context();
    cl_context cl = clnz_context_cl_context(ctx);
    cl_device_id dev = clnz_context_device(ctx);
    uint8_t data[4] = {1, 0, 1, 0};
    int64_t shape[] = {4};
    clnz_tensor t = {CLNZ_U8, 1, shape, NULL};
    cl_int e = CL_SUCCESS;
    cl_mem in = tu_buffer(4, data), out = tu_buffer(64, NULL), cnt = tu_buffer(8, NULL);
    cl_mem ro = clCreateBuffer(cl, CL_MEM_READ_ONLY, 64, NULL, &e);
    assert_int_equal(e, CL_SUCCESS);
    cl_mem wo = clCreateBuffer(cl, CL_MEM_WRITE_ONLY, 64, NULL, &e);
    assert_int_equal(e, CL_SUCCESS);
    static const struct {
        int which; /* 0 out, 1 count, 2 in */
        int ro;
        const char *msg;
    } cases[] = {{0, 1, "the output buffer is CL_MEM_READ_ONLY, and clnz writes it"},
                 {1, 1, "the count buffer is CL_MEM_READ_ONLY, and clnz writes it"},
                 {2, 0, "the input buffer is CL_MEM_WRITE_ONLY, and clnz reads it"}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; ++i) {
        cl_mem b = cases[i].ro ? ro : wo;
        assert_int_equal(clnz_nonzero_enqueue(ctx, &t, cases[i].which == 2 ? b : in, 0, NULL, NULL,
                                              cases[i].which == 0 ? b : out, 0, 4,
                                              cases[i].which == 1 ? b : cnt, 0, 0, NULL, NULL),
                         CLNZ_ERROR_INVALID_ARGUMENT);
        assert_string_equal(clnz_context_message(ctx), cases[i].msg);
    }
    /* a write-only count buffer is fine (the look-back's count takes one),
     * for a size's fill too, which reads a copy of it */
    TU_CHECK(ctx, clnz_count_enqueue(ctx, &t, in, 0, NULL, wo, 0, 0, NULL, NULL));
    TU_CHECK(ctx,
             clnz_nonzero_enqueue(ctx, &t, in, 0, NULL, NULL, out, 0, 4, wo, 0, 0, NULL, NULL));
    clnz_nonzero_options sized;
    clnz_nonzero_options_init(&sized);
    sized.has_size = 1, sized.size = 4, sized.fill = -1;
    const int64_t want_sized[4] = {0, 2, -1, -1}; /* data's nonzeros, then the fill */
    int64_t got_sized[4] = {0};
    uint64_t wz = 0;
    TU_CHECK(ctx,
             clnz_nonzero_enqueue(ctx, &t, in, 0, NULL, &sized, out, 0, 4, wo, 0, 0, NULL, NULL));
    tu_read(out, 0, sizeof got_sized, got_sized);
    tu_read(wo, 0, 8, &wz);
    assert_memory_equal(got_sized, want_sized, sizeof want_sized);
    assert_int_equal(wz, 2);
    cl_mem got = in;
    uint64_t gz = 9;
    memset(got_sized, 0, sizeof got_sized);
    TU_CHECK(ctx,
             clnz_nonzero_alloc(ctx, &t, in, 0, NULL, &sized, &got, &gz, wo, 0, 0, NULL, NULL));
    assert_int_equal(gz, 2);
    tu_read(got, 0, sizeof got_sized, got_sized);
    assert_memory_equal(got_sized, want_sized, sizeof want_sized);
    clReleaseMemObject(got);
    /* a count the host may not read: the _alloc calls read it through a copy */
    static const cl_mem_flags host_cannot_read[] = {CL_MEM_HOST_NO_ACCESS, CL_MEM_HOST_WRITE_ONLY};
    for (size_t i = 0; i < 2; ++i) {
        cl_mem hidden = clCreateBuffer(cl, CL_MEM_READ_WRITE | host_cannot_read[i], 64, NULL, &e);
        assert_int_equal(e, CL_SUCCESS);
        int64_t idx[2] = {0};
        TU_CHECK(ctx, clnz_nonzero_alloc(ctx, &t, in, 0, NULL, NULL, &got, &gz, hidden, 8, 0, NULL,
                                         NULL));
        assert_int_equal(gz, 2);
        tu_read(got, 0, sizeof idx, idx);
        assert_int_equal(idx[0], 0);
        assert_int_equal(idx[1], 2);
        clReleaseMemObject(got);
        uint8_t vals[2] = {0};
        TU_CHECK(ctx, clnz_select_alloc(ctx, &t, in, 0, NULL, 0, 0, NULL, &got, &gz, hidden, 0, 0,
                                        NULL, NULL));
        assert_int_equal(gz, 2);
        tu_read(got, 0, sizeof vals, vals);
        assert_int_equal(vals[0], 1);
        assert_int_equal(vals[1], 1);
        clReleaseMemObject(got);
        int64_t two[] = {2, 2}; /* a batch of 2 items: {1, 0} and {1, 0} */
        clnz_tensor bt = {CLNZ_U8, 2, two, NULL};
        int64_t bidx[2] = {-1, -1};
        TU_CHECK(ctx, clnz_nonzero_batched_alloc(ctx, &bt, in, 0, NULL, NULL, &got, &gz, hidden, 0,
                                                 0, NULL, NULL));
        assert_int_equal(gz, 2);
        tu_read(got, 0, sizeof bidx, bidx);
        assert_int_equal(bidx[0], 0);
        assert_int_equal(bidx[1], 0);
        clReleaseMemObject(got);
        clReleaseMemObject(hidden);
    }
    /* each operand by its name: select's x, where's x */
    assert_int_equal(
        clnz_select_enqueue(ctx, &t, wo, 0, &t, in, 0, NULL, out, 0, 4, cnt, 0, 0, NULL, NULL),
        CLNZ_ERROR_INVALID_ARGUMENT);
    assert_string_equal(clnz_context_message(ctx),
                        "the x buffer is CL_MEM_WRITE_ONLY, and clnz reads it");
    clnz_operand xo = clnz_operand_array(&t), yo = clnz_operand_int(0);
    assert_int_equal(
        clnz_where_enqueue(ctx, &t, in, 0, NULL, &xo, wo, 0, &yo, NULL, 0, out, 0, 0, NULL, NULL),
        CLNZ_ERROR_INVALID_ARGUMENT);
    assert_string_equal(clnz_context_message(ctx),
                        "the x buffer is CL_MEM_WRITE_ONLY, and clnz reads it");
    assert_int_equal(clnz_scan_enqueue(ctx, CLNZ_U32, wo, 0, out, 0, 4, NULL, 0, 0, NULL, NULL),
                     CLNZ_ERROR_INVALID_ARGUMENT);
    assert_string_equal(clnz_context_message(ctx),
                        "the input buffer is CL_MEM_WRITE_ONLY, and clnz reads it");
    /* an image where a buffer goes */
    cl_image_format fmt = {CL_R, CL_UNSIGNED_INT8};
    cl_image_desc desc = {0};
    desc.image_type = CL_MEM_OBJECT_IMAGE2D;
    desc.image_width = 4;
    desc.image_height = 1;
    cl_mem img = clCreateImage(cl, CL_MEM_READ_WRITE, &fmt, &desc, NULL, &e);
    if (e == CL_SUCCESS) { /* a device without images has nothing to show */
        assert_int_equal(clnz_count_enqueue(ctx, &t, img, 0, NULL, cnt, 0, 0, NULL, NULL),
                         CLNZ_ERROR_INVALID_ARGUMENT);
        assert_string_equal(clnz_context_message(ctx),
                            "the input is an image, not a buffer (images: clnz_image2d_nonzero)");
        clReleaseMemObject(img);
    }
    /* a buffer of another OpenCL context, on the same device */
    cl_context other = clCreateContext(NULL, 1, &dev, NULL, NULL, &e);
    assert_int_equal(e, CL_SUCCESS);
    cl_mem foreign = clCreateBuffer(other, CL_MEM_READ_WRITE, 64, NULL, &e);
    assert_int_equal(e, CL_SUCCESS);
    assert_int_equal(clnz_count_enqueue(ctx, &t, in, 0, NULL, foreign, 0, 0, NULL, NULL),
                     CLNZ_ERROR_INVALID_ARGUMENT);
    assert_string_equal(clnz_context_message(ctx), "the count buffer belongs to another OpenCL "
                                                   "context than the clnz context's");
    assert_int_equal(clnz_count_enqueue(ctx, &t, foreign, 0, NULL, cnt, 0, 0, NULL, NULL),
                     CLNZ_ERROR_INVALID_ARGUMENT);
    assert_non_null(strstr(clnz_context_message(ctx), "the input buffer belongs to another"));
    /* and the context still works */
    uint64_t z = 0;
    TU_CHECK(ctx, clnz_count_enqueue(ctx, &t, in, 0, NULL, cnt, 0, 0, NULL, NULL));
    tu_read(cnt, 0, 8, &z);
    assert_int_equal(z, 2);
    clReleaseMemObject(foreign);
    clReleaseContext(other);
    clReleaseMemObject(ro);
    clReleaseMemObject(wo);
    clReleaseMemObject(in);
    clReleaseMemObject(out);
    clReleaseMemObject(cnt);
}

/* A call's writes may not land on what it reads or on its other writes
 * (the kernels would race): refused by name, a sub-buffer seen in its
 * parent; apart, one buffer serves all, and the answer is right. */
static void test_overlapping_buffers_are_refused(void **state)
{
    (void)state;
    clnz_context *ctx = tu_context();
    float x[16] = {0, 1, 0, 2, 0, 0, 3, 0, 0, 0, 0, 4, 0, 0, 5, 0}; /* 5 nonzero */
    int64_t shape[] = {16};
    clnz_tensor t = {CLNZ_F32, 1, shape, NULL};
    enum { IN_AT = 0, OUT_AT = 64, COUNT_AT = 64 + 16 * 8 }; /* bytes, apart */
    cl_mem b = tu_buffer(COUNT_AT + 64, NULL);
    cl_int e = clEnqueueWriteBuffer(clnz_context_queue(ctx), b, CL_TRUE, IN_AT, sizeof x, x, 0,
                                    NULL, NULL);
    assert_int_equal(e, CL_SUCCESS);
    /* apart in one buffer: fine */
    TU_CHECK(ctx, clnz_nonzero_enqueue(ctx, &t, b, IN_AT, NULL, NULL, b, OUT_AT, 16, b, COUNT_AT, 0,
                                       NULL, NULL));
    int64_t got[5];
    uint64_t z = 0;
    tu_read(b, COUNT_AT, 8, &z);
    tu_read(b, OUT_AT, sizeof got, got);
    assert_int_equal(z, 5);
    int64_t want[5] = {1, 3, 6, 11, 14};
    assert_memory_equal(got, want, sizeof want);
    /* the output over the input, the count inside the output, the count
     * over the input */
    assert_int_equal(
        clnz_nonzero_enqueue(ctx, &t, b, IN_AT, NULL, NULL, b, 32, 16, b, COUNT_AT, 0, NULL, NULL),
        CLNZ_ERROR_INVALID_ARGUMENT);
    assert_string_equal(clnz_context_message(ctx),
                        "the output (bytes 32..159 of its buffer) and the input (bytes 0..63) "
                        "overlap: clnz would write what it reads");
    assert_int_equal(clnz_nonzero_enqueue(ctx, &t, b, IN_AT, NULL, NULL, b, OUT_AT, 16, b,
                                          OUT_AT + 8, 0, NULL, NULL),
                     CLNZ_ERROR_INVALID_ARGUMENT);
    assert_non_null(strstr(clnz_context_message(ctx), "clnz would write both at once"));
    assert_int_equal(clnz_count_enqueue(ctx, &t, b, IN_AT, NULL, b, 56, 0, NULL, NULL),
                     CLNZ_ERROR_INVALID_ARGUMENT);
    assert_non_null(strstr(clnz_context_message(ctx), "the count (bytes 56..63"));
    /* no room for entries: nothing written there, nothing to overlap */
    TU_CHECK(ctx, clnz_nonzero_enqueue(ctx, &t, b, IN_AT, NULL, NULL, b, 0, 0, b, COUNT_AT, 0, NULL,
                                       NULL));
    /* a sub-buffer as the output, over the parent's bytes that the count
     * takes (its origin as aligned as the device asks) */
    cl_uint align_bits = 0;
    clGetDeviceInfo(clnz_context_device(ctx), CL_DEVICE_MEM_BASE_ADDR_ALIGN, sizeof align_bits,
                    &align_bits, NULL);
    size_t origin = align_bits / 8 > 0 ? align_bits / 8 : 128;
    cl_mem parent = tu_buffer(origin + 256, NULL);
    cl_buffer_region r = {origin, 256};
    cl_mem sub = clCreateSubBuffer(parent, CL_MEM_READ_WRITE, CL_BUFFER_CREATE_TYPE_REGION, &r, &e);
    assert_int_equal(e, CL_SUCCESS);
    char expect[160];
    snprintf(expect, sizeof expect,
             "the output (bytes %zu..%zu of the parent of its sub-buffer) and the count "
             "(bytes %zu..%zu) overlap",
             origin, origin + 16 * 8 - 1, origin + 8, origin + 15);
    assert_int_equal(clnz_nonzero_enqueue(ctx, &t, b, IN_AT, NULL, NULL, sub, 0, 16, parent,
                                          origin + 8, 0, NULL, NULL),
                     CLNZ_ERROR_INVALID_ARGUMENT);
    assert_non_null(strstr(clnz_context_message(ctx), expect));
    TU_CHECK(ctx, clnz_nonzero_enqueue(ctx, &t, b, IN_AT, NULL, NULL, sub, 0, 16, parent, 0, 0,
                                       NULL, NULL)); /* the count before the sub-buffer: apart */
    tu_read(parent, 0, 8, &z);
    assert_int_equal(z, 5);
    /* a scan "in place" through the sub-buffer over the parent's same
     * bytes: refused, saying what in place takes */
    assert_int_equal(
        clnz_scan_enqueue(ctx, CLNZ_U32, parent, origin, sub, 0, 8, NULL, 0, 0, NULL, NULL),
        CLNZ_ERROR_INVALID_ARGUMENT);
    assert_non_null(strstr(clnz_context_message(ctx), "takes the same cl_mem at the same offset"));
    clReleaseMemObject(sub);
    clReleaseMemObject(parent);
    /* select: x under the output; batched: offsets over the input */
    assert_int_equal(clnz_select_enqueue(ctx, &t, b, IN_AT, NULL, NULL, 0, NULL, b, 4, 16, b,
                                         COUNT_AT, 0, NULL, NULL),
                     CLNZ_ERROR_INVALID_ARGUMENT);
    assert_non_null(strstr(clnz_context_message(ctx), "the output (bytes 4..67"));
    assert_int_equal(clnz_select_enqueue(ctx, &t, b, IN_AT, &t, b, IN_AT, NULL, b, OUT_AT, 16, b, 8,
                                         0, NULL, NULL),
                     CLNZ_ERROR_INVALID_ARGUMENT); /* the count over the mask, named so */
    assert_non_null(strstr(clnz_context_message(ctx), "and the mask (bytes 0..63)"));
    int64_t bshape[] = {4, 4};
    clnz_tensor bt = {CLNZ_F32, 2, bshape, NULL};
    assert_int_equal(clnz_nonzero_batched_enqueue(ctx, &bt, b, IN_AT, NULL, NULL, b, OUT_AT, 16, b,
                                                  16, 0, NULL, NULL),
                     CLNZ_ERROR_INVALID_ARGUMENT);
    assert_non_null(strstr(clnz_context_message(ctx), "the offsets (bytes 16..55"));
    /* the other device-resident calls: mask, where, count_batched, scan
     * (their output over their input, by a byte: a race, wrong bytes and
     * success, review) */
    assert_int_equal(clnz_mask_enqueue(ctx, &t, b, IN_AT, NULL, CLNZ_U8, b, 1, 0, NULL, NULL),
                     CLNZ_ERROR_INVALID_ARGUMENT);
    assert_string_equal(clnz_context_message(ctx),
                        "the mask (bytes 1..16 of its buffer) and the input (bytes 0..63) "
                        "overlap: clnz would write what it reads");
    TU_CHECK(ctx, clnz_mask_enqueue(ctx, &t, b, IN_AT, NULL, CLNZ_U8, b, OUT_AT, 0, NULL, NULL));
    clnz_operand xo = clnz_operand_array(&t), yo = clnz_operand_float(0);
    assert_int_equal(clnz_where_enqueue(ctx, &t, b, IN_AT, NULL, &xo, b, IN_AT, &yo, NULL, 0, b, 4,
                                        0, NULL, NULL),
                     CLNZ_ERROR_INVALID_ARGUMENT);
    assert_non_null(strstr(clnz_context_message(ctx), "the output (bytes 4..67"));
    TU_CHECK(ctx, clnz_where_enqueue(ctx, &t, b, IN_AT, NULL, &xo, b, IN_AT, &yo, NULL, 0, b,
                                     OUT_AT, 0, NULL, NULL));
    assert_int_equal(clnz_count_batched_enqueue(ctx, &bt, b, IN_AT, NULL, 1, b, 8, 0, NULL, NULL),
                     CLNZ_ERROR_INVALID_ARGUMENT);
    assert_non_null(strstr(clnz_context_message(ctx), "the counts (bytes 8..39"));
    /* scan: in place is fine; shifted, or the total inside, is not */
    TU_CHECK(ctx,
             clnz_scan_enqueue(ctx, CLNZ_U32, b, OUT_AT, b, OUT_AT, 8, b, COUNT_AT, 0, NULL, NULL));
    assert_int_equal(
        clnz_scan_enqueue(ctx, CLNZ_U32, b, OUT_AT, b, OUT_AT + 4, 8, NULL, 0, 0, NULL, NULL),
        CLNZ_ERROR_INVALID_ARGUMENT);
    assert_non_null(strstr(clnz_context_message(ctx), "and the input"));
    assert_int_equal(
        clnz_scan_enqueue(ctx, CLNZ_U32, b, OUT_AT, b, OUT_AT, 8, b, OUT_AT + 4, 0, NULL, NULL),
        CLNZ_ERROR_INVALID_ARGUMENT);
    assert_non_null(strstr(clnz_context_message(ctx), "and the total"));
    /* an _alloc call's count over its input */
    cl_mem res = NULL;
    assert_int_equal(
        clnz_nonzero_alloc(ctx, &t, b, IN_AT, NULL, NULL, &res, &z, b, 8, 0, NULL, NULL),
        CLNZ_ERROR_INVALID_ARGUMENT);
    assert_null(res);
    /* channels: the pixels' nonzero reads a mask of clnz's own, but the
     * caller's input is checked against the outputs all the same (16
     * pixels of one channel here) */
    int64_t cshape[] = {16, 1};
    clnz_tensor ct = {CLNZ_F32, 2, cshape, NULL};
    clnz_nonzero_options flat;
    clnz_nonzero_options_init(&flat);
    flat.layout = CLNZ_LAYOUT_FLAT;
    assert_int_equal(clnz_nonzero_channels_enqueue(ctx, &ct, b, IN_AT, NULL, CLNZ_CHANNELS_ANY,
                                                   &flat, b, 8, 4, b, COUNT_AT, 0, NULL, NULL),
                     CLNZ_ERROR_INVALID_ARGUMENT);
    assert_string_equal(clnz_context_message(ctx),
                        "the output (bytes 8..39 of its buffer) and the input (bytes 0..63) "
                        "overlap: clnz would write what it reads");
    assert_int_equal(clnz_nonzero_channels_alloc(ctx, &ct, b, IN_AT, NULL, CLNZ_CHANNELS_ANY, &flat,
                                                 &res, &z, b, 16, 0, NULL, NULL),
                     CLNZ_ERROR_INVALID_ARGUMENT);
    assert_non_null(strstr(clnz_context_message(ctx), "the count (bytes 16..23"));
    assert_null(res);
    /* a NULL output with a capacity is named before a count that does not
     * fit, as nonzero_enqueue names it */
    assert_int_equal(clnz_nonzero_channels_enqueue(ctx, &ct, b, IN_AT, NULL, CLNZ_CHANNELS_ANY,
                                                   &flat, NULL, 0, 4, b, 1 << 20, 0, NULL, NULL),
                     CLNZ_ERROR_INVALID_ARGUMENT);
    assert_string_equal(clnz_context_message(ctx), "output buffer is NULL");
    TU_CHECK(ctx, clnz_nonzero_channels_enqueue(ctx, &ct, b, IN_AT, NULL, CLNZ_CHANNELS_ANY, &flat,
                                                b, OUT_AT, 16, b, COUNT_AT, 0, NULL, NULL));
    tu_read(b, COUNT_AT, 8, &z);
    tu_read(b, OUT_AT, sizeof got, got);
    assert_int_equal(z, 5); /* the pixels of x's 5 nonzeros, flat over (16,) */
    assert_memory_equal(got, want, sizeof want);
    clReleaseMemObject(b);
}

static void test_device_selection(void **state)
{
    (void)state;
    clnz_context *c = NULL;
    char msg[256];
    assert_int_equal(clnz_context_create("0:99", &c, msg, sizeof msg), CLNZ_ERROR_INVALID_DEVICE);
    assert_null(c);
    assert_non_null(strstr(msg, "no device 99"));
    assert_int_equal(clnz_context_create("zero", &c, msg, sizeof msg), CLNZ_ERROR_INVALID_DEVICE);
    assert_non_null(strstr(msg, "no device matches"));
    assert_int_equal(clnz_context_create("1:x", &c, msg, sizeof msg), CLNZ_ERROR_INVALID_DEVICE);
    assert_int_equal(clnz_context_create("0:0", &c, msg, sizeof msg), CLNZ_SUCCESS);
    clnz_context_release(c);
    setenv("CLNZ_DEVICE", "7:0", 1);
    assert_int_equal(clnz_context_create(NULL, &c, msg, sizeof msg), CLNZ_ERROR_INVALID_DEVICE);
    assert_non_null(strstr(msg, "CLNZ_DEVICE"));
    unsetenv("CLNZ_DEVICE");
    clnz_device_info infos[8];
    int n = 0, defaults = 0;
    assert_int_equal(clnz_list_devices(infos, 8, &n), CLNZ_SUCCESS);
    assert_true(n >= 1);
    for (int i = 0; i < n && i < 8; ++i) {
        defaults += infos[i].is_default;
        if (infos[i].is_default) /* and it says why */
            assert_true(strstr(infos[i].why_default, "the first") != NULL);
    }
    assert_int_equal(defaults, 1);
    /* a kind picks a device of that kind, and a part of a name one whose
     * names have it, case aside; a kind no device has is an error */
    const char *kinds[] = {"gpu", "cpu", "accelerator"}, *types[] = {"GPU", "CPU", "ACCELERATOR"};
    for (int k = 0; k < 3; ++k) {
        int have = 0;
        for (int i = 0; i < n && i < 8; ++i)
            have |= strcmp(infos[i].device_type, types[k]) == 0;
        clnz_status st = clnz_context_create(kinds[k], &c, msg, sizeof msg);
        if (!have) {
            assert_int_equal(st, CLNZ_ERROR_INVALID_DEVICE);
            continue;
        }
        assert_int_equal(st, CLNZ_SUCCESS);
        cl_device_type t = 0;
        clGetDeviceInfo(clnz_context_device(c), CL_DEVICE_TYPE, sizeof t, &t, NULL);
        assert_true(t & (k == 0 ? CL_DEVICE_TYPE_GPU : k == 1 ? CL_DEVICE_TYPE_CPU
                                                               : CL_DEVICE_TYPE_ACCELERATOR));
        clnz_context_release(c);
    }
    char part[8];
    snprintf(part, sizeof part, "%.4s", infos[0].device_name);
    for (char *q = part; *q; ++q) /* another case than the device's */
        *q = (char)(*q >= 'a' && *q <= 'z' ? *q - 32 : *q >= 'A' && *q <= 'Z' ? *q + 32 : *q);
    assert_int_equal(clnz_context_create(part, &c, msg, sizeof msg), CLNZ_SUCCESS);
    clnz_context_release(c);
    /* "" is NULL: CLNZ_DEVICE, then the default (it was a part of every name,
     * so the first real device, whatever CLNZ_DEVICE said) */
    char last[32];
    int li = (n < 8 ? n : 8) - 1;
    snprintf(last, sizeof last, "%d:%d", infos[li].platform, infos[li].device);
    setenv("CLNZ_DEVICE", last, 1);
    clnz_context *from_env = NULL;
    assert_int_equal(clnz_context_create(NULL, &from_env, msg, sizeof msg), CLNZ_SUCCESS);
    assert_int_equal(clnz_context_create("", &c, msg, sizeof msg), CLNZ_SUCCESS);
    unsetenv("CLNZ_DEVICE");
    assert_ptr_equal(clnz_context_device(c), clnz_context_device(from_env));
    clnz_context_release(c);
    clnz_context_release(from_env);
    setenv("CLNZ_DEVICE", "no-such-device", 1); /* "" reads it too: the same refusal */
    assert_int_equal(clnz_context_create("", &c, msg, sizeof msg), CLNZ_ERROR_INVALID_DEVICE);
    assert_non_null(strstr(msg, "CLNZ_DEVICE"));
    unsetenv("CLNZ_DEVICE");
    clnz_context_release(NULL); /* NULL is fine */
}

/* clnz_context_device_info names the device a context runs on, as the
 * listing does: for a P:D selector, a kind, the default and a wrapped
 * context; a sub-device (not in the listing) is described with no place. */
static void test_context_device_info(void **state)
{
    (void)state;
    clnz_device_info infos[8], got;
    int n = 0;
    char msg[256], sel[16];
    clnz_context *c = NULL;
    assert_int_equal(clnz_list_devices(infos, 8, &n), CLNZ_SUCCESS);
    for (int i = 0; i < n && i < 8; ++i) {
        snprintf(sel, sizeof sel, "%d:%d", infos[i].platform, infos[i].device);
        assert_int_equal(clnz_context_create(sel, &c, msg, sizeof msg), CLNZ_SUCCESS);
        memset(&got, 0x5a, sizeof got);
        assert_int_equal(clnz_context_device_info(c, &got), CLNZ_SUCCESS);
        assert_int_equal(got.platform, infos[i].platform);
        assert_int_equal(got.device, infos[i].device);
        assert_int_equal(got.is_default, infos[i].is_default);
        assert_string_equal(got.device_name, infos[i].device_name);
        assert_string_equal(got.platform_name, infos[i].platform_name);
        assert_string_equal(got.device_type, infos[i].device_type);
        assert_true(got.global_mem_size == infos[i].global_mem_size);
        clnz_context_release(c);
    }
    /* a kind and the default: the entry of the device the context holds */
    const char *sels[] = {"cpu", NULL};
    for (int k = 0; k < 2; ++k) {
        if (clnz_context_create(sels[k], &c, msg, sizeof msg) != CLNZ_SUCCESS)
            continue; /* no CPU device */
        assert_int_equal(clnz_context_device_info(c, &got), CLNZ_SUCCESS);
        assert_true(got.platform >= 0 && got.device >= 0);
        cl_platform_id ps[16];
        cl_device_id ds[64];
        cl_uint np = 0, nd = 0;
        assert_int_equal(clGetPlatformIDs(16, ps, &np), CL_SUCCESS);
        assert_true((cl_uint)got.platform < np);
        assert_int_equal(clGetDeviceIDs(ps[got.platform], CL_DEVICE_TYPE_ALL, 64, ds, &nd),
                         CL_SUCCESS);
        assert_true((cl_uint)got.device < nd);
        assert_ptr_equal(ds[got.device], clnz_context_device(c));
        if (k == 0)
            assert_string_equal(got.device_type, "CPU");
        else
            assert_int_equal(got.is_default, 1);
        clnz_context_release(c);
    }
    assert_int_equal(clnz_context_device_info(NULL, &got), CLNZ_ERROR_INVALID_ARGUMENT);
    clnz_context *base = tu_context();
    assert_int_equal(clnz_context_device_info(base, NULL), CLNZ_ERROR_INVALID_ARGUMENT);
    assert_string_equal(clnz_context_message(base), "info is NULL"); /* there was none */
    assert_int_equal(clnz_context_stats(base, NULL), CLNZ_ERROR_INVALID_ARGUMENT);
    assert_string_equal(clnz_context_message(base), "stats is NULL");
    /* a wrapped context: its queue's device */
    clnz_device_info own;
    assert_int_equal(clnz_context_device_info(base, &own), CLNZ_SUCCESS);
    assert_string_equal(clnz_context_message(base), ""); /* the failure before is not its */
    int listed = -1;
    assert_int_equal(clnz_list_devices(NULL, -1, &listed), CLNZ_ERROR_INVALID_ARGUMENT);
    assert_int_equal(listed, 0); /* a failure lists no device */
    cl_int e;
    cl_command_queue q =
        clCreateCommandQueue(clnz_context_cl_context(base), clnz_context_device(base), 0, &e);
    assert_int_equal(e, CL_SUCCESS);
    assert_int_equal(clnz_context_wrap(clnz_context_cl_context(base), q, &c, NULL, 0),
                     CLNZ_SUCCESS);
    clReleaseCommandQueue(q);
    assert_int_equal(clnz_context_device_info(c, &got), CLNZ_SUCCESS);
    assert_int_equal(got.platform, own.platform);
    assert_int_equal(got.device, own.device);
    assert_string_equal(got.device_name, own.device_name);
    clnz_context_release(c);
    /* a sub-device where the device can be split: described, with no place */
    cl_device_partition_property by[] = {CL_DEVICE_PARTITION_EQUALLY, 1, 0};
    cl_device_id sub[64];
    cl_uint nsub = 0;
    if (clCreateSubDevices(clnz_context_device(base), by, 64, sub, &nsub) != CL_SUCCESS)
        return; /* partitioning is optional */
    cl_context sc = clCreateContext(NULL, 1, &sub[0], NULL, NULL, &e);
    assert_int_equal(e, CL_SUCCESS);
    q = clCreateCommandQueue(sc, sub[0], 0, &e);
    assert_int_equal(e, CL_SUCCESS);
    assert_int_equal(clnz_context_wrap(sc, q, &c, NULL, 0), CLNZ_SUCCESS);
    assert_int_equal(clnz_context_device_info(c, &got), CLNZ_SUCCESS);
    assert_int_equal(got.platform, -1);
    assert_int_equal(got.device, -1);
    assert_int_equal(got.is_default, 0);
    assert_string_equal(got.platform_name, own.platform_name);
    assert_string_equal(got.device_type, own.device_type);
    clnz_context_release(c);
    clReleaseCommandQueue(q);
    clReleaseContext(sc);
    for (cl_uint i = 0; i < nsub; ++i)
        clReleaseDevice(sub[i]);
}

static void wrapped_chain(void)
{
    clnz_context *base = tu_context();
    cl_context cl = clnz_context_cl_context(base);
    cl_int e;
    cl_command_queue q = clCreateCommandQueue(cl, clnz_context_device(base),
                                              CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE, &e);
    if (e) /* out-of-order queues are optional */
        q = clCreateCommandQueue(cl, clnz_context_device(base), 0, &e);
    assert_int_equal(e, CL_SUCCESS);
    clnz_context *w = NULL;
    assert_int_equal(clnz_context_wrap(cl, q, &w, NULL, 0), CLNZ_SUCCESS);
    clReleaseCommandQueue(q); /* the wrapper holds its own reference */
    int64_t n = 50000;
    uint16_t *data = malloc((size_t)n * 2);
    tu_fill(CLNZ_U16, data, (size_t)n, 0.3);
    int64_t shape[] = {n};
    clnz_tensor t = {CLNZ_U16, 1, shape, NULL};
    int64_t want = 0;
    for (int64_t i = 0; i < n; ++i)
        want += data[i] != 0;
    /* chained calls: user event -> nonzero -> count, all waiting on each other */
    cl_mem in = tu_buffer((size_t)n * 2, data), out = tu_buffer((size_t)n * 8, NULL),
           cnt = tu_buffer(16, NULL);
    cl_event user = clCreateUserEvent(cl, &e), ev1 = NULL, ev2 = NULL;
    assert_int_equal(clnz_nonzero_enqueue(w, &t, in, 0, NULL, NULL, out, 0, (uint64_t)n, cnt, 0, 1,
                                          &user, &ev1),
                     CLNZ_SUCCESS);
    assert_int_equal(clnz_count_enqueue(w, &t, in, 0, NULL, cnt, 8, 1, &ev1, &ev2), CLNZ_SUCCESS);
    clSetUserEventStatus(user, CL_COMPLETE);
    assert_int_equal(clWaitForEvents(1, &ev2), CL_SUCCESS);
    uint64_t counts[2];
    tu_read(cnt, 0, 16, counts);
    assert_int_equal(counts[0], want);
    assert_int_equal(counts[1], want);
    clReleaseEvent(user);
    clReleaseEvent(ev1);
    clReleaseEvent(ev2);
    clReleaseMemObject(in);
    clReleaseMemObject(out);
    clReleaseMemObject(cnt);
    clnz_context_release(w);
    free(data);
}

static void test_wrapped_context(void **state)
{
    (void)state;
    wrapped_chain();
}

/* Regression: CLNZ_DEBUG waited for every launch, the first one waiting on
 * the caller's user event, set only after the call returns: a hang. Now a
 * call waiting on a caller's pending event is logged and not waited for. */
static void test_debug_with_pending_user_event(void **state)
{
    (void)state;
    setenv("CLNZ_DEBUG", "1", 1);
    wrapped_chain();
    unsetenv("CLNZ_DEBUG");
}

/* A kernel folder of the tests' own: dir (a mkdtemp template) made, with
 * scan.cl holding text; path names that file. */
static void scan_kernel_folder(char *dir, char *path, size_t n, const char *text)
{
    assert_non_null(mkdtemp(dir));
    snprintf(path, n, "%s/scan.cl", dir);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

/* CLNZ_KERNEL_DIR at a test's folder, with a program cache of its own (a
 * program built there lands in it, not in the suites' cache: its key holds
 * this run's folder); kernel_dir_end puts the variables back. */
typedef struct {
    char *saved[3];
    char cache[32];
} kernel_dir_env;

static const char *const kernel_dir_vars[3] = {"CLNZ_KERNEL_DIR", "CLNZ_BUILD_OPTIONS",
                                               "CLNZ_CACHE_DIR"};

static void kernel_dir_begin(kernel_dir_env *k, const char *dir)
{
    for (int i = 0; i < 3; ++i)
        k->saved[i] = tu_env_keep(kernel_dir_vars[i]);
    setenv("CLNZ_KERNEL_DIR", dir, 1);
    snprintf(k->cache, sizeof k->cache, "/tmp/clnz-dircache-XXXXXX");
    assert_non_null(mkdtemp(k->cache));
    setenv("CLNZ_CACHE_DIR", k->cache, 1);
}

static void kernel_dir_end(kernel_dir_env *k)
{
    for (int i = 0; i < 3; ++i)
        tu_env_put_back(kernel_dir_vars[i], k->saved[i]);
    char cmd[64];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", k->cache);
    assert_int_equal(system(cmd), 0);
}

/* A kernel that does not compile: the status is OpenCL's, the message
 * carries the build log, and nothing crashes or leaks into later calls. */
static void test_build_failure_reports_log(void **state)
{
    (void)state;
    char dir[] = "/tmp/clnz-badkernels-XXXXXX", path[300];
    scan_kernel_folder(dir, path, sizeof path,
                       "__kernel void scan_tiles(__global int *x) { this is not C; }\n");
    char *saved = tu_env_keep("CLNZ_KERNEL_DIR");
    setenv("CLNZ_KERNEL_DIR", dir, 1);
    clnz_context *c = NULL;
    assert_int_equal(clnz_context_create(NULL, &c, NULL, 0), CLNZ_SUCCESS);
    cl_mem b = tu_buffer_on(c, 64, NULL);
    clnz_status st = clnz_scan_enqueue(c, CLNZ_U32, b, 0, b, 0, 4, NULL, 0, 0, NULL, NULL);
    assert_int_equal(st, CL_BUILD_PROGRAM_FAILURE);
    const char *m = clnz_context_message(c);
    assert_non_null(strstr(m, "kernels/scan.cl"));
    assert_true(strchr(m, '\n') != NULL); /* the log follows the first line */
    /* a missing kernel file is its own error */
    uint8_t d[4] = {1, 0, 0, 1};
    int64_t shape[] = {4};
    clnz_tensor t = {CLNZ_U8, 1, shape, NULL};
    int64_t count = -1;
    assert_int_equal(clnz_count(c, &t, d, NULL, &count), CLNZ_ERROR_KERNEL_SOURCE);
    clnz_context_release(c);
    tu_env_put_back("CLNZ_KERNEL_DIR", saved);
    remove(path);
    rmdir(dir);
    clReleaseMemObject(b);
}

/* A forced strategy whose kernel does not build is an error that says so.
 * Its launch plan used to divide by the shape it never got: SIGFPE on
 * NVIDIA, where lookback.cl did not build with -cl-opt-disable; on PoCL
 * only with POCL_SIGFPE_HANDLER=0 (as make's suites run), since PoCL's
 * handler steps over the host's integer divisions by zero too. */
static void test_forced_strategy_that_does_not_build(void **state)
{
    (void)state;
    char dir[] = "/tmp/clnz-lbkernels-XXXXXX", path[300];
    assert_non_null(mkdtemp(dir));
    snprintf(path, sizeof path, "%s/lookback.cl", dir);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs("this is not C;\n", f);
    fclose(f);
    kernel_dir_env k;
    kernel_dir_begin(&k, dir);
    enum { N = 100000 }; /* many tiles */
    static uint8_t d[N];
    for (int i = 0; i < N; ++i)
        d[i] = (uint8_t)(i % 3 == 0);
    int64_t shape[] = {N}, count = -1;
    clnz_tensor t = {CLNZ_U8, 1, shape, NULL};
    clnz_context *c = NULL;
    assert_int_equal(clnz_context_create(NULL, &c, NULL, 0), CLNZ_SUCCESS);
    assert_int_equal(clnz_context_set_strategy(c, CLNZ_STRATEGY_LOOKBACK), CLNZ_SUCCESS);
    assert_int_equal(clnz_count(c, &t, d, NULL, &count), CLNZ_ERROR_UNSUPPORTED_STRATEGY);
    assert_non_null(strstr(clnz_context_message(c), "its kernel did not build"));
    assert_int_equal(count, -1);
    clnz_context_release(c);
    kernel_dir_end(&k);
    remove(path);
    rmdir(dir);
}

/* CLNZ_BUILD_OPTIONS reaches the kernels of CLNZ_KERNEL_DIR too (it once
 * applied to the embedded ones only): a kernel file that compiles only with
 * the option's macro builds, and then lacks the kernel that a scan asks for. */
static void test_build_options_with_kernel_dir(void **state)
{
    (void)state;
    char dir[] = "/tmp/clnz-optkernels-XXXXXX", path[300];
    scan_kernel_folder(dir, path, sizeof path, "#ifndef CLNZ_TEST_MARK\nthis is not C;\n#endif\n");
    kernel_dir_env k;
    kernel_dir_begin(&k, dir);
    const char *options[2] = {"-cl-opt-disable", "-cl-opt-disable -DCLNZ_TEST_MARK=1"};
    const cl_int want[2] = {CL_BUILD_PROGRAM_FAILURE, CL_INVALID_KERNEL_NAME};
    for (int i = 0; i < 2; ++i) {
        setenv("CLNZ_BUILD_OPTIONS", options[i], 1);
        clnz_context *c = NULL;
        assert_int_equal(clnz_context_create(NULL, &c, NULL, 0), CLNZ_SUCCESS);
        cl_mem b = tu_buffer_on(c, 64, NULL); /* a buffer of c's OpenCL context */
        clnz_status st = clnz_scan_enqueue(c, CLNZ_U32, b, 0, b, 0, 4, NULL, 0, 0, NULL, NULL);
        assert_int_equal(st, want[i]);
        clReleaseMemObject(b);
        clnz_context_release(c);
    }
    /* the folder and the options together past the build options' room:
     * a clear error from the context's creation, before anything is read
     * or built; and from a build, where the variable changed after it */
    char deep[240], msg[400];
    memset(deep, 'd', sizeof deep - 1);
    deep[0] = '/';
    deep[sizeof deep - 1] = '\0';
    clnz_context *c = NULL, *kept = NULL;
    assert_int_equal(clnz_context_create(NULL, &kept, NULL, 0), CLNZ_SUCCESS);
    cl_mem b = tu_buffer_on(kept, 64, NULL);
    setenv("CLNZ_KERNEL_DIR", deep, 1);
    assert_int_equal(clnz_context_create(NULL, &c, msg, sizeof msg), CLNZ_ERROR_KERNEL_SOURCE);
    assert_null(c);
    assert_non_null(strstr(msg, "CLNZ_KERNEL_DIR is too long: 239 bytes"));
    assert_int_equal(clnz_scan_enqueue(kept, CLNZ_U32, b, 0, b, 0, 4, NULL, 0, 0, NULL, NULL),
                     CLNZ_ERROR_KERNEL_SOURCE);
    assert_non_null(strstr(clnz_context_message(kept), "CLNZ_KERNEL_DIR is too long: 239 bytes"));
    /* a folder that build options cannot name: said so, before any build
     * (PoCL took '-I a b' as two options, CL_INVALID_BUILD_OPTIONS) */
    const char *odd[] = {"/tmp/kernels here", "/tmp/\"q\"", "/tmp/a\tb", "/tmp/a\nb"};
    for (int i = 0; i < 4; ++i) {
        setenv("CLNZ_KERNEL_DIR", odd[i], 1);
        assert_int_equal(clnz_context_create(NULL, &c, msg, sizeof msg), CLNZ_ERROR_KERNEL_SOURCE);
        assert_non_null(strstr(msg, "holds a blank, a line break, a quote"));
        assert_int_equal(clnz_scan_enqueue(kept, CLNZ_U32, b, 0, b, 0, 4, NULL, 0, 0, NULL, NULL),
                         CLNZ_ERROR_KERNEL_SOURCE);
        assert_non_null(strstr(clnz_context_message(kept), "holds a blank, a line break, a quote"));
    }
    clnz_context_release(kept);
    /* build options past their room, or with a line break: INVALID_VALUE
     * from the creation, naming the variable */
    setenv("CLNZ_KERNEL_DIR", dir, 1);
    char longer[200];
    memset(longer, 'x', sizeof longer - 1);
    longer[0] = '-', longer[1] = 'D';
    longer[sizeof longer - 1] = '\0';
    const char *bad_options[] = {longer, "-DA=1\n-DB=2"};
    for (int i = 0; i < 2; ++i) {
        setenv("CLNZ_BUILD_OPTIONS", bad_options[i], 1);
        assert_int_equal(clnz_context_create(NULL, &c, msg, sizeof msg), CLNZ_ERROR_INVALID_VALUE);
        assert_non_null(strstr(msg, "CLNZ_BUILD_OPTIONS"));
    }
    kernel_dir_end(&k);
    remove(path);
    rmdir(dir);
    clReleaseMemObject(b);
}

/* Under CLNZ_KERNEL_DIR a program's cache key covers the files its source
 * includes: an edit to one of them compiles again (the key hashed the
 * top file alone, and the cache served the program built before it). */
static void test_kernel_dir_edits_to_included_files(void **state)
{
    (void)state;
    char dir[] = "/tmp/clnz-inckernels-XXXXXX", path[300], inc[300];
    scan_kernel_folder(dir, path, sizeof path, "#include \"inc.cl\"\n");
    snprintf(inc, sizeof inc, "%s/inc.cl", dir);
    kernel_dir_env k;
    kernel_dir_begin(&k, dir);
    /* a program without the kernel (built, and cached), then one that fails */
    const char *texts[2] = {"/* no kernels yet */\n", "this is not C;\n"};
    const cl_int want[2] = {CL_INVALID_KERNEL_NAME, CL_BUILD_PROGRAM_FAILURE};
    for (int i = 0; i < 2; ++i) {
        FILE *f = fopen(inc, "w");
        assert_non_null(f);
        fputs(texts[i], f);
        fclose(f);
        clnz_context *c = NULL;
        assert_int_equal(clnz_context_create(NULL, &c, NULL, 0), CLNZ_SUCCESS);
        cl_mem b = tu_buffer_on(c, 64, NULL); /* a buffer of c's OpenCL context */
        assert_int_equal(clnz_scan_enqueue(c, CLNZ_U32, b, 0, b, 0, 4, NULL, 0, 0, NULL, NULL),
                         want[i]);
        clReleaseMemObject(b);
        clnz_context_release(c);
    }
    kernel_dir_end(&k);
    remove(inc);
    remove(path);
    rmdir(dir);
}

/* Issue 16, item 11: a tensor with no element is valid whatever its other
 * extents (numpy makes (0, 2**62)), with C-order or any strides: every
 * call gives the empty answer; none reads the data. */
static void test_issue16_item11_empty_tensor_with_huge_extents(void **state)
{
    (void)state;
    clnz_context *ctx = tu_context();
    const int64_t big = (int64_t)1 << 62;
    int64_t shapes[][4] = {{0, big}, {big, 0, big}, {3, big, 0, INT64_MAX}};
    int ranks[] = {2, 3, 4};
    int64_t absurd[4] = {INT64_MAX / 2, -(INT64_MAX / 2), 7, 1};
    uint8_t data = 1;
    for (int k = 0; k < 3; ++k) {
        for (int strided = 0; strided < 2; ++strided) {
            clnz_tensor t = {CLNZ_F32, ranks[k], shapes[k], strided ? absurd : NULL};
            clnz_result r;
            TU_CHECK(ctx, clnz_nonzero(ctx, &t, &data, NULL, NULL, &r));
            assert_int_equal(r.count, 0);
            assert_int_equal(r.ndim, 2);
            assert_int_equal(r.shape[0], 0);
            assert_int_equal(r.shape[1], ranks[k]);
            clnz_result_free(&r);
            int64_t z = -1;
            TU_CHECK(ctx, clnz_count(ctx, &t, &data, NULL, &z));
            assert_int_equal(z, 0);
            clnz_array sel;
            TU_CHECK(ctx, clnz_select(ctx, &t, &data, NULL, NULL, NULL, &sel));
            assert_int_equal(sel.rank, 1);
            assert_int_equal(sel.shape[0], 0);
            clnz_array_free(&sel);
        }
    }
    /* a batch of no items; and one of 2^62 empty items, refused cleanly */
    clnz_tensor none = {CLNZ_U8, 2, shapes[0], NULL};
    clnz_result r;
    clnz_array off;
    TU_CHECK(ctx, clnz_nonzero_batched(ctx, &none, &data, NULL, NULL, &r, &off));
    assert_int_equal(r.count, 0);
    assert_int_equal(off.shape[0], 1);
    clnz_result_free(&r);
    clnz_array_free(&off);
    int64_t many[] = {big, 0};
    clnz_tensor t = {CLNZ_U8, 2, many, NULL};
    clnz_status st = clnz_nonzero_batched(ctx, &t, &data, NULL, NULL, &r, &off);
    if (st == CLNZ_SUCCESS) {
        clnz_result_free(&r);
        clnz_array_free(&off);
    }
    assert_int_not_equal(st, CLNZ_SUCCESS); /* 2^62 + 1 offsets cannot be made */
}

/* Issue 16, item 13: a CLNZ_MAX_ALLOC that is not a byte count fails
 * context creation with a message that names it, instead of being ignored. */
static void test_issue16_item13_malformed_max_alloc(void **state)
{
    (void)state;
    const char *bad[] = {"12abc", "1.5M", "-4K", "K", "4KB", "99999999999999999999"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; ++i) {
        setenv("CLNZ_MAX_ALLOC", bad[i], 1);
        clnz_context *c = NULL;
        char msg[300] = "";
        clnz_status st = clnz_context_create(NULL, &c, msg, sizeof msg);
        clnz_context_release(c);
        assert_int_equal(st, CLNZ_ERROR_INVALID_VALUE);
        assert_null(c);
        assert_non_null(strstr(msg, "CLNZ_MAX_ALLOC"));
    }
    setenv("CLNZ_MAX_ALLOC", "64K", 1);
    clnz_context *c = NULL;
    assert_int_equal(clnz_context_create(NULL, &c, NULL, 0), CLNZ_SUCCESS);
    clnz_context_release(c);
    unsetenv("CLNZ_MAX_ALLOC");
}

/* A width outside any range (-3, 33) is refused with a message that says
 * which widths the input takes; the status string no longer says "below
 * the effective rank" for a width that is not below it (hostile-user probe
 * of the C API). */
static void test_invalid_width_names_the_valid_widths(void **state)
{
    (void)state;
    clnz_context *ctx = tu_context();
    assert_string_equal(clnz_status_string(CLNZ_ERROR_INVALID_WIDTH),
                        "CLNZ_ERROR_INVALID_WIDTH: invalid coordinate width (0, or the input's "
                        "effective rank up to 32; flat: 0)");
    uint8_t data[12] = {0, 0, 0, 0, 0, 1};
    int64_t shape[] = {1, 3, 4}; /* rank 3, effective rank 2 */
    clnz_tensor t = {CLNZ_U8, 3, shape, NULL};
    clnz_nonzero_options o;
    clnz_result res;
    char want[300];
    const int bad[] = {-3, 33, -1, INT_MIN, INT_MAX};
    const clnz_layout layouts[] = {CLNZ_LAYOUT_ROWS, CLNZ_LAYOUT_COLUMNS};
    for (int l = 0; l < 2; ++l) {
        for (size_t i = 0; i < sizeof bad / sizeof *bad; ++i) {
            clnz_nonzero_options_init(&o);
            o.layout = layouts[l];
            o.width = bad[i];
            snprintf(want, sizeof want,
                     "width %d is not a coordinate width: the widths are 0 (the input's rank, 3) "
                     "or 2..32 coordinates per entry",
                     bad[i]);
            assert_int_equal(clnz_nonzero(ctx, &t, data, NULL, &o, &res),
                             CLNZ_ERROR_INVALID_WIDTH);
            assert_string_equal(clnz_context_message(ctx), want);
            /* the device-resident call checks it before any buffer */
            assert_int_equal(clnz_nonzero_enqueue(ctx, &t, NULL, 0, NULL, &o, NULL, 0, 0, NULL, 0,
                                                  0, NULL, NULL),
                             CLNZ_ERROR_INVALID_WIDTH);
            assert_string_equal(clnz_context_message(ctx), want);
        }
    }
    /* below the effective rank: still says so, and the valid widths */
    clnz_nonzero_options_init(&o);
    o.width = 1;
    assert_int_equal(clnz_nonzero(ctx, &t, data, NULL, &o, &res), CLNZ_ERROR_INVALID_WIDTH);
    assert_string_equal(clnz_context_message(ctx),
                        "width 1 is below the effective rank 2 of the input (rank 3 without its "
                        "leading size-1 dimensions): the widths are 0 (the rank) or 2..32");
    /* flat takes width 0 only, whatever the width */
    o.layout = CLNZ_LAYOUT_FLAT;
    o.width = -3;
    assert_int_equal(clnz_nonzero(ctx, &t, data, NULL, &o, &res), CLNZ_ERROR_INVALID_WIDTH);
    assert_string_equal(clnz_context_message(ctx),
                        "width -3 counts coordinates per entry: it needs the rows or columns "
                        "layout (flat has one index per entry: width 0)");
    /* a rank-0 input: any width from 1 */
    clnz_tensor scalar = {CLNZ_U8, 0, shape, NULL};
    clnz_nonzero_options_init(&o);
    o.width = 33;
    assert_int_equal(clnz_nonzero(ctx, &scalar, data, NULL, &o, &res), CLNZ_ERROR_INVALID_WIDTH);
    assert_string_equal(clnz_context_message(ctx),
                        "width 33 is not a coordinate width: the widths are 0 (the input's rank, "
                        "0) or 1..32 coordinates per entry");
    /* the edges of the range pass: the effective rank and CLNZ_MAX_RANK */
    const int edges[] = {2, CLNZ_MAX_RANK};
    for (int i = 0; i < 2; ++i) {
        clnz_nonzero_options_init(&o);
        o.width = edges[i];
        TU_CHECK(ctx, clnz_nonzero(ctx, &t, data, NULL, &o, &res));
        assert_int_equal(res.count, 1);
        assert_int_equal(res.shape[1], edges[i]);
        const int64_t *row = res.indices;
        assert_int_equal(row[edges[i] - 2], 1); /* element 5 of (3, 4): (1, 1) */
        assert_int_equal(row[edges[i] - 1], 1);
        clnz_result_free(&res);
    }
}

/* clnz_warmup refuses a bit no name stands for, in any field, naming the
 * field and the bits, before it builds anything (it dropped them: a
 * warm-up then covered less than asked, silently). */
/* clnz_nonzero_options_check gives, before any input, the status and the
 * reason a call with the same options gives; options a call takes pass. */
static void test_options_checked_alone_as_a_call_checks_them(void **state)
{
    (void)state;
    clnz_context *ctx = tu_context();
    int64_t shape[] = {2, 3};
    uint8_t data[6] = {1, 0, 2, 0, 0, 3};
    clnz_tensor t = {CLNZ_U8, 2, shape, NULL};
    clnz_nonzero_options base;
    clnz_nonzero_options_init(&base);
    enum { N_CASES = 12 };
    clnz_nonzero_options cases[N_CASES];
    for (int i = 0; i < N_CASES; ++i)
        cases[i] = base;
    cases[0].layout = (clnz_layout)3;
    cases[1].order = (clnz_order)-1;
    cases[2].layout = CLNZ_LAYOUT_FLAT, cases[2].order = CLNZ_ORDER_XY;
    cases[3].index_type = (clnz_index_type)9;
    cases[4].layout = CLNZ_LAYOUT_FLAT, cases[4].width = 2;
    cases[5].has_size = 1, cases[5].size = -1;
    cases[6].index_type = CLNZ_INDEX_INT32, cases[6].fill = INT64_C(1) << 31;
    cases[7].index_type = CLNZ_INDEX_UINT32, cases[7].fill = -2;
    cases[8].index_type = CLNZ_INDEX_UINT32, cases[8].has_size = 1, cases[8].size = 9,
    cases[8].fill = UINT32_MAX; /* uint32 holds it: taken */
    cases[9].layout = CLNZ_LAYOUT_COLUMNS, cases[9].order = CLNZ_ORDER_XY, cases[9].width = 32;
    cases[10].index_type = CLNZ_INDEX_INT32, cases[10].fill = INT32_MIN;
    /* cases[11]: the defaults */
    for (int i = 0; i < N_CASES; ++i) {
        char msg[300] = "stale";
        clnz_status alone = clnz_nonzero_options_check(&cases[i], msg, sizeof msg);
        clnz_result res;
        clnz_status call = clnz_nonzero(ctx, &t, data, NULL, &cases[i], &res);
        if (!call)
            clnz_result_free(&res);
        if (alone != call)
            fail_msg("case %d: alone %d, a call %d", i, alone, call);
        assert_string_equal(msg, call ? clnz_context_message(ctx) : "");
        assert_int_equal(clnz_nonzero_options_check(&cases[i], NULL, 0), call); /* no msg */
    }
    /* the width's range, with no input to name */
    cases[0] = base, cases[0].width = 33;
    char msg[300];
    assert_int_equal(clnz_nonzero_options_check(&cases[0], msg, sizeof msg),
                     CLNZ_ERROR_INVALID_WIDTH);
    assert_string_equal(msg, "width 33 is not a coordinate width: the widths are 0 (the "
                             "input's rank) or 1..32 coordinates per entry");
    assert_int_equal(clnz_nonzero_options_check(NULL, msg, sizeof msg),
                     CLNZ_ERROR_INVALID_ARGUMENT);
    assert_string_equal(msg, "options are NULL");
}

static void test_unknown_bits_and_names_are_refused_with_a_reason(void **state)
{
    (void)state;
    clnz_context *ctx = tu_context();
    struct {
        clnz_uses uses;
        const char *want;
    } cases[] = {
        {{.dtypes = 1u << CLNZ_U8, .ops = CLNZ_USE_COUNT | 1u << 30},
         "uses.ops has unknown bits 0x40000000 (bit 30); the known ones are 0x1ff: "
         "count,nonzero,batched,select,where,mask,scan,channels,image2d"},
        {{.dtypes = 1u << CLNZ_DTYPE_COUNT | 1u << 31},
         "uses.dtypes has unknown bits 0x80001000 (bits 12, 31); the known ones are 0xfff: "
         "bool,u8,i8,u16,i16,u32,i32,u64,i64,f16,f32,f64"},
        {{.dtypes = 1u << CLNZ_U8, .predicates = CLNZ_PREDS_NONZERO | 1u << 2},
         "uses.predicates has unknown bits 0x4 (bit 2); the known ones are 0x3: nonzero,compare"},
        {{.dtypes = 1u << CLNZ_U8, .strategies = 1u << CLNZ_STRATEGY_COUNT},
         "uses.strategies has unknown bits 0x20 (bit 5); the known ones are 0x1f: "
         "auto,single-tile,two-pass,lookback,stream"},
    };
    clnz_stats before, after;
    TU_CHECK(ctx, clnz_context_stats(ctx, &before));
    for (size_t i = 0; i < sizeof cases / sizeof *cases; ++i) {
        int programs = -1;
        assert_int_equal(clnz_warmup(ctx, &cases[i].uses, &programs),
                         CLNZ_ERROR_INVALID_ARGUMENT);
        assert_int_equal(programs, 0);
        assert_string_equal(clnz_context_message(ctx), cases[i].want);
        /* a bundle of those uses: the same refusal, no bundle */
        clnz_bundle *b = (clnz_bundle *)&programs;
        assert_int_equal(clnz_bundle_build(ctx, &cases[i].uses, 0, &b),
                         CLNZ_ERROR_INVALID_ARGUMENT);
        assert_null(b);
        assert_string_equal(clnz_context_message(ctx), cases[i].want);
    }
    TU_CHECK(ctx, clnz_context_stats(ctx, &after));
    assert_true(after.programs_from_source == before.programs_from_source);
    assert_true(after.programs_from_cache == before.programs_from_cache);
    /* every named bit passes, auto's (bit 0 of strategies) included */
    clnz_uses ok = {.dtypes = 1u << CLNZ_U8, .ops = CLNZ_USE_COUNT, .strategies = 1u};
    int programs = 0;
    TU_CHECK(ctx, clnz_warmup(ctx, &ok, &programs));
    assert_true(programs > 0);
    assert_int_equal(clnz_warmup(NULL, &ok, &programs), CLNZ_ERROR_INVALID_ARGUMENT);
    /* a NULL uses to parse into, an unknown kernel family: said, not silent */
    char msg[200] = "";
    assert_int_equal(clnz_uses_parse(NULL, "ops", "count", msg, sizeof msg),
                     CLNZ_ERROR_INVALID_ARGUMENT);
    assert_string_equal(msg, "uses is NULL");
    clnz_launch l;
    assert_int_equal(clnz_context_launch(ctx, "nope", &l, NULL), CLNZ_ERROR_INVALID_ARGUMENT);
    assert_non_null(strstr(clnz_context_message(ctx), "unknown kernel family 'nope' (two-pass, scan, mask, lookback)"));
    assert_int_equal(clnz_context_launch(ctx, NULL, &l, NULL), CLNZ_ERROR_INVALID_ARGUMENT);
    assert_non_null(strstr(clnz_context_message(ctx), "'(null)'"));
    assert_int_equal(clnz_context_launch(ctx, "mask", NULL, NULL), CLNZ_ERROR_INVALID_ARGUMENT);
    assert_string_equal(clnz_context_message(ctx), "launch is NULL");
    TU_CHECK(ctx, clnz_context_launch(ctx, "mask", &l, NULL));
    assert_string_equal(clnz_context_message(ctx), ""); /* the query clears the last message */
}

int main(void)
{
    tu_seed("test_api");
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_version),
        cmocka_unit_test(test_status_strings),
        cmocka_unit_test(test_smoke_pipeline),
        cmocka_unit_test(test_index_overflow_before_any_work),
        cmocka_unit_test(test_bad_arguments),
        cmocka_unit_test(test_memory_objects_clnz_cannot_use),
        cmocka_unit_test(test_overlapping_buffers_are_refused),
        cmocka_unit_test(test_device_selection),
        cmocka_unit_test(test_context_device_info),
        cmocka_unit_test(test_wrapped_context),
        cmocka_unit_test(test_debug_with_pending_user_event),
        cmocka_unit_test(test_build_failure_reports_log),
        cmocka_unit_test(test_forced_strategy_that_does_not_build),
        cmocka_unit_test(test_build_options_with_kernel_dir),
        cmocka_unit_test(test_kernel_dir_edits_to_included_files),
        cmocka_unit_test(test_issue16_item11_empty_tensor_with_huge_extents),
        cmocka_unit_test(test_issue16_item13_malformed_max_alloc),
        cmocka_unit_test(test_invalid_width_names_the_valid_widths),
        cmocka_unit_test(test_unknown_bits_and_names_are_refused_with_a_reason),
        cmocka_unit_test(test_options_checked_alone_as_a_call_checks_them),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    tu_context_done();
    return rc;
}
