/* install_opencl_check.c: an application with an OpenCL pipeline of its own
 * that hands its context, queue and buffers to clnz, as a device-resident
 * user does. It calls OpenCL directly, so it links only if the build system
 * gives it OpenCL too: the install test builds it out of the tree with
 * nothing but `pkg-config --cflags --libs clnz`, and with CMake's
 * find_package(clnz) + clnz::clnz, both with -Werror. It targets OpenCL 3.0
 * (clCreateCommandQueueWithProperties is not declared below 2.0): clnz.h
 * must keep the caller's CL_TARGET_OPENCL_VERSION, without a redefinition
 * warning. Prints "ok VERSION" when the count and the coordinates clnz
 * wrote into its buffers are the ones it knows. */
#define CL_TARGET_OPENCL_VERSION 300
#include <clnz.h>

#include <CL/cl.h>
#include <stdio.h>

#define N 1000

static int fail(const char *what, int code)
{
    fprintf(stderr, "install_opencl_check: %s: %d\n", what, code);
    return 1;
}

/* The application's part: its own context and queue. */
static int open_cl(cl_context *ctx, cl_command_queue *q)
{
    cl_platform_id platform;
    cl_device_id device;
    cl_int e = clGetPlatformIDs(1, &platform, NULL);
    if (!e)
        e = clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, 1, &device, NULL);
    if (!e)
        *ctx = clCreateContext(NULL, 1, &device, NULL, NULL, &e);
    if (!e)
        *q = clCreateCommandQueueWithProperties(*ctx, device, NULL, &e);
    return e;
}

int main(void)
{
    static unsigned char data[N];
    for (int i = 0; i < N; ++i)
        data[i] = i % 7 == 0 ? (unsigned char)(1 + i % 200) : 0; /* 143 nonzeros */
    cl_context cl_ctx;
    cl_command_queue q;
    cl_int e = open_cl(&cl_ctx, &q);
    if (e)
        return fail("OpenCL setup", e);
    cl_mem in = clCreateBuffer(cl_ctx, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, N, data, &e);
    cl_mem out =
        e ? NULL : clCreateBuffer(cl_ctx, CL_MEM_WRITE_ONLY, N * sizeof(int64_t), NULL, &e);
    cl_mem count = e ? NULL : clCreateBuffer(cl_ctx, CL_MEM_WRITE_ONLY, sizeof(uint64_t), NULL, &e);
    if (e)
        return fail("clCreateBuffer", e);

    clnz_context *ctx;
    char msg[256];
    clnz_status st = clnz_context_wrap(cl_ctx, q, &ctx, msg, sizeof msg);
    if (st)
        return fprintf(stderr, "install_opencl_check: %s\n", msg), 1;
    int64_t shape[1] = {N};
    clnz_tensor t = {CLNZ_U8, 1, shape, NULL};
    clnz_nonzero_options o;
    clnz_nonzero_options_init(&o);
    o.layout = CLNZ_LAYOUT_FLAT;
    cl_event done;
    st = clnz_nonzero_enqueue(ctx, &t, in, 0, NULL, &o, out, 0, N, count, 0, 0, NULL, &done);
    if (st)
        return fprintf(stderr, "install_opencl_check: %s\n", clnz_context_message(ctx)), 1;

    uint64_t z = 0;
    static int64_t idx[N];
    e = clEnqueueReadBuffer(q, count, CL_TRUE, 0, sizeof z, &z, 1, &done, NULL);
    if (!e)
        e = clEnqueueReadBuffer(q, out, CL_TRUE, 0, sizeof idx, idx, 1, &done, NULL);
    if (e)
        return fail("clEnqueueReadBuffer", e);
    int ok = z == 143;
    for (uint64_t k = 0; ok && k < z; ++k)
        ok = idx[k] == (int64_t)(7 * k);
    clReleaseEvent(done);
    clnz_context_release(ctx);
    clReleaseMemObject(in);
    clReleaseMemObject(out);
    clReleaseMemObject(count);
    clReleaseCommandQueue(q);
    clReleaseContext(cl_ctx);
    printf("%s %s\n", ok ? "ok" : "wrong", clnz_version_string());
    return ok ? 0 : 1;
}
