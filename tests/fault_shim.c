/* fault_shim.c: an LD_PRELOAD library for the command-line fault tests
 * (tests/test_cli_faults.py). It stands in front of the OpenCL calls that
 * allocate, build, enqueue, map, read, wait or finish; with CLNZ_FAULT_AT=k
 * the k-th of them fails with a realistic error, and its name is written
 * to the file CLNZ_FAULT_REPORT, so the test knows the point was reached.
 * The calls and their errors are fault_calls.h's list, shared with the
 * library's own test of the kind, test_faults.c (linked with --wrap). */
#define _GNU_SOURCE
#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>
#include "fault_calls.h"
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>

static long calls;

static int should_fail(const char *name)
{
    static long at = -1;
    if (at < 0) {
        const char *v = getenv("CLNZ_FAULT_AT");
        at = v ? atol(v) : 0;
    }
    if (++calls != at)
        return 0;
    const char *report = getenv("CLNZ_FAULT_REPORT");
    FILE *f = report ? fopen(report, "w") : NULL;
    if (f) {
        fprintf(f, "%s\n", name);
        fclose(f);
    }
    return 1;
}

#define REAL(name) ((__typeof__(&name))dlsym(RTLD_NEXT, #name))

#define SHIM_OBJECT(ret, name, code, params, args) \
    ret name params                                \
    {                                              \
        if (should_fail(#name)) {                  \
            if (e)                                 \
                *e = code;                         \
            return NULL;                           \
        }                                          \
        return REAL(name) args;                    \
    }
#define SHIM_STATUS(name, code, params, args) \
    cl_int name params                        \
    {                                         \
        if (should_fail(#name))               \
            return code;                      \
        return REAL(name) args;               \
    }
#define SHIM_AFTER(name, code, params, args)  \
    cl_int name params                        \
    {                                         \
        cl_int e = REAL(name) args;           \
        return should_fail(#name) ? code : e; \
    }
FAULT_CALLS(SHIM_OBJECT, SHIM_STATUS, SHIM_AFTER)
