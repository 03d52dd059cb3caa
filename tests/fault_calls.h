/* fault_calls.h: the OpenCL calls the fault tests make fail, each with an
 * error a driver really returns for it. One list for both injectors:
 * test_faults.c (the library, linked with --wrap) and fault_shim.c (the
 * clnz command, through LD_PRELOAD). A user defines three macros and
 * expands FAULT_CALLS(OBJECT, STATUS, AFTER):
 *   OBJECT(ret, name, code, params, args): returns an object, NULL and
 *     *e = code on failure (e is always the last parameter);
 *   STATUS(name, code, params, args): returns code instead of calling;
 *   AFTER(name, code, params, args): calls, then returns code (a wait or
 *     finish whose commands ended abnormally; skipping the wait itself would
 *     free memory that kernels still use, which no driver does). */
#ifndef CLNZ_FAULT_CALLS_H
#define CLNZ_FAULT_CALLS_H

#define FAULT_CALLS(OBJECT, STATUS, AFTER)                                                     \
    OBJECT(cl_context, clCreateContext, CL_OUT_OF_HOST_MEMORY,                                 \
           (const cl_context_properties *p, cl_uint n, const cl_device_id *d,                  \
            void(CL_CALLBACK * cb)(const char *, const void *, size_t, void *), void *u,       \
            cl_int *e),                                                                        \
           (p, n, d, cb, u, e))                                                                \
    OBJECT(cl_command_queue, clCreateCommandQueue, CL_OUT_OF_RESOURCES,                        \
           (cl_context c, cl_device_id d, cl_command_queue_properties p, cl_int *e),           \
           (c, d, p, e))                                                                       \
    OBJECT(cl_program, clCreateProgramWithSource, CL_OUT_OF_HOST_MEMORY,                       \
           (cl_context c, cl_uint n, const char **s, const size_t *l, cl_int *e),              \
           (c, n, s, l, e))                                                                    \
    OBJECT(cl_program, clCreateProgramWithBinary, CL_OUT_OF_HOST_MEMORY,                       \
           (cl_context c, cl_uint n, const cl_device_id *d, const size_t *l,                   \
            const unsigned char **b, cl_int *bs, cl_int *e),                                   \
           (c, n, d, l, b, bs, e))                                                             \
    OBJECT(cl_mem, clCreateBuffer, CL_MEM_OBJECT_ALLOCATION_FAILURE,                           \
           (cl_context c, cl_mem_flags f, size_t s, void *h, cl_int *e), (c, f, s, h, e))      \
    OBJECT(cl_kernel, clCreateKernel, CL_OUT_OF_HOST_MEMORY,                                   \
           (cl_program p, const char *n, cl_int *e), (p, n, e))                                \
    OBJECT(cl_event, clCreateUserEvent, CL_OUT_OF_HOST_MEMORY, (cl_context c, cl_int *e),      \
           (c, e))                                                                             \
    OBJECT(void *, clEnqueueMapBuffer, CL_MAP_FAILURE,                                         \
           (cl_command_queue q, cl_mem b, cl_bool bl, cl_map_flags f, size_t o, size_t s,      \
            cl_uint n, const cl_event *w, cl_event *ev, cl_int *e),                            \
           (q, b, bl, f, o, s, n, w, ev, e))                                                   \
    STATUS(clBuildProgram, CL_BUILD_PROGRAM_FAILURE,                                           \
           (cl_program p, cl_uint n, const cl_device_id *d, const char *o,                     \
            void(CL_CALLBACK * cb)(cl_program, void *), void *u),                              \
           (p, n, d, o, cb, u))                                                                \
    STATUS(clEnqueueNDRangeKernel, CL_OUT_OF_RESOURCES,                                        \
           (cl_command_queue q, cl_kernel k, cl_uint d, const size_t *o, const size_t *g,      \
            const size_t *l, cl_uint n, const cl_event *w, cl_event *e),                       \
           (q, k, d, o, g, l, n, w, e))                                                        \
    STATUS(clEnqueueReadBuffer, CL_OUT_OF_RESOURCES,                                           \
           (cl_command_queue q, cl_mem b, cl_bool bl, size_t o, size_t s, void *p, cl_uint n,  \
            const cl_event *w, cl_event *e),                                                   \
           (q, b, bl, o, s, p, n, w, e))                                                       \
    STATUS(clEnqueueFillBuffer, CL_OUT_OF_RESOURCES,                                           \
           (cl_command_queue q, cl_mem b, const void *p, size_t ps, size_t o, size_t s,        \
            cl_uint n, const cl_event *w, cl_event *e),                                        \
           (q, b, p, ps, o, s, n, w, e))                                                       \
    STATUS(clSetUserEventStatus, CL_OUT_OF_RESOURCES, (cl_event ev, cl_int s), (ev, s))       \
    STATUS(clEnqueueUnmapMemObject, CL_OUT_OF_RESOURCES,                                       \
           (cl_command_queue q, cl_mem m, void *p, cl_uint n, const cl_event *w, cl_event *e), \
           (q, m, p, n, w, e))                                                                 \
    AFTER(clFinish, CL_OUT_OF_RESOURCES, (cl_command_queue q), (q))                            \
    AFTER(clWaitForEvents, CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST,                       \
          (cl_uint n, const cl_event *l), (n, l))

#endif
