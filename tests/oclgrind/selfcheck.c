/* selfcheck.c: the Oclgrind tier's proof that it can fail. It runs, through
 * the same ICD set-up, a kernel with a deliberate write-write race on local
 * memory; make test-oclgrind requires Oclgrind to report it. (Oclgrind's
 * reports never change an OpenCL return code, so a tier that only looked at
 * exit statuses would pass whatever the kernels did.) */
#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>
#include <stdio.h>

static const char *src =
    "__kernel void seeded_race(__global int *out)\n"
    "{\n"
    "    __local int shared;\n"
    "    shared = (int)get_local_id(0); /* every work-item writes it: a race */\n"
    "    barrier(CLK_LOCAL_MEM_FENCE);\n"
    "    out[get_global_id(0)] = shared;\n"
    "}\n";

int main(void)
{
    cl_platform_id p;
    cl_device_id d;
    cl_int e = clGetPlatformIDs(1, &p, NULL);
    if (!e)
        e = clGetDeviceIDs(p, CL_DEVICE_TYPE_ALL, 1, &d, NULL);
    cl_context c = e ? NULL : clCreateContext(NULL, 1, &d, NULL, NULL, &e);
    cl_command_queue q = e ? NULL : clCreateCommandQueue(c, d, 0, &e);
    cl_program prog = e ? NULL : clCreateProgramWithSource(c, 1, &src, NULL, &e);
    if (!e)
        e = clBuildProgram(prog, 1, &d, "", NULL, NULL);
    cl_kernel k = e ? NULL : clCreateKernel(prog, "seeded_race", &e);
    cl_mem out = e ? NULL : clCreateBuffer(c, CL_MEM_WRITE_ONLY, 4 * sizeof(int), NULL, &e);
    if (!e)
        e = clSetKernelArg(k, 0, sizeof out, &out);
    size_t global = 4, local = 4;
    if (!e)
        e = clEnqueueNDRangeKernel(q, k, 1, NULL, &global, &local, 0, NULL, NULL);
    if (!e)
        e = clFinish(q);
    if (e) {
        fprintf(stderr, "selfcheck: OpenCL error %d\n", e);
        return 1;
    }
    printf("selfcheck: the racy kernel ran\n");
    return 0;
}
