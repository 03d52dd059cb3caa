/* devices.c: finding OpenCL devices, listing them and parsing "P:D". */
#include "core/devices.h"
#include "core/driver_lock.h"
#include "tune/tune.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#define MAX_PLATFORMS 16
#define MAX_DEVICES 64

/* What discovery met, for the message when no device turns up: the first
 * error the driver returned (with errno just after it: the ICD loader
 * leaves EMFILE there when it runs out of file descriptors) and where. */
typedef struct {
    cl_int err;
    int err_errno;
    const char *call;
} discovery;

static void discovery_note(discovery *dv, cl_int e, int err_errno, const char *call)
{
    if (e != CL_SUCCESS && dv && dv->err == CL_SUCCESS) {
        dv->err = e;
        dv->err_errno = err_errno;
        dv->call = call;
    }
}

static cl_uint platforms(cl_platform_id *ids, discovery *dv)
{
    cl_uint n = 0;
    errno = 0;
    cl_int e = clGetPlatformIDs(MAX_PLATFORMS, ids, &n);
    discovery_note(dv, e, errno, "clGetPlatformIDs");
    if (e != CL_SUCCESS)
        return 0;
    return n < MAX_PLATFORMS ? n : MAX_PLATFORMS;
}

static cl_uint devices_of(cl_platform_id p, cl_device_id *ids, discovery *dv)
{
    cl_uint n = 0;
    errno = 0;
    cl_int e = clGetDeviceIDs(p, CL_DEVICE_TYPE_ALL, MAX_DEVICES, ids, &n);
    discovery_note(dv, e, errno, "clGetDeviceIDs");
    if (e != CL_SUCCESS)
        return 0;
    return n < MAX_DEVICES ? n : MAX_DEVICES;
}

/* First GPU in platform order, else the first device of all. */
static int default_device(int *pi, int *di, discovery *dv)
{
    cl_platform_id ps[MAX_PLATFORMS];
    cl_uint np = platforms(ps, dv);
    int found = 0;
    for (cl_uint p = 0; p < np; ++p) {
        cl_device_id ds[MAX_DEVICES];
        cl_uint nd = devices_of(ps[p], ds, dv);
        for (cl_uint d = 0; d < nd; ++d) {
            cl_device_type type = 0;
            clGetDeviceInfo(ds[d], CL_DEVICE_TYPE, sizeof type, &type, NULL);
            if (type & CL_DEVICE_TYPE_GPU) {
                *pi = (int)p, *di = (int)d;
                return 1;
            }
            if (!found) {
                *pi = (int)p, *di = (int)d;
                found = 1;
            }
        }
    }
    return found;
}

/* A resource limit that can make a driver fail to load: drivers open their
 * libraries and map hundreds of MiB, and then report only "no platform". */
static void limit_hint(int err_errno, char *out, size_t n)
{
    struct rlimit files = {RLIM_INFINITY, RLIM_INFINITY}, space = files;
    getrlimit(RLIMIT_NOFILE, &files);
    getrlimit(RLIMIT_AS, &space);
    if (err_errno == EMFILE || err_errno == ENFILE || files.rlim_cur < 64)
        snprintf(out, n, "; %s (ulimit -n is %llu)",
                 err_errno == EMFILE || err_errno == ENFILE ? "too many open files"
                                                            : "the driver may need more files open",
                 (unsigned long long)files.rlim_cur);
    else if (space.rlim_cur != RLIM_INFINITY)
        snprintf(out, n, "; out of memory for the driver? (ulimit -v is %llu KiB)",
                 (unsigned long long)(space.rlim_cur >> 10));
    else if (err_errno == ENOMEM)
        snprintf(out, n, "; out of memory");
    else
        snprintf(out, n, " (is an ICD such as pocl-opencl-icd installed?)");
}

/* Why discovery found no device: the driver's own error where it gave one,
 * and the resource limit likely behind it. */
static void no_device_message(const discovery *dv, char *msg, size_t msg_size)
{
    char hint[160];
    limit_hint(dv->err_errno, hint, sizeof hint);
    if (dv->err != CL_SUCCESS)
        snprintf(msg, msg_size, "no OpenCL device found: %s returned %s%s", dv->call,
                 clnz_status_string(dv->err), hint);
    else
        snprintf(msg, msg_size, "no OpenCL device found%s", hint);
}

int devices_parse_selector(const char *s, int *p, int *d)
{
    char *end;
    if (!s || !*s || *s == '-' || *s == '+')
        return 0;
    long a = strtol(s, &end, 10);
    if (end == s || *end != ':' || a > 1000)
        return 0;
    const char *t = end + 1;
    if (!*t || *t == '-' || *t == '+')
        return 0;
    long b = strtol(t, &end, 10);
    if (end == t || *end || b > 1000)
        return 0;
    *p = (int)a, *d = (int)b;
    return 1;
}

clnz_status devices_find(const char *selector, cl_platform_id *platform, cl_device_id *device,
                         char *msg, size_t msg_size)
{
    DRIVER_HOLD();
    const char *origin = "device";
    if (!selector) {
        selector = getenv("CLNZ_DEVICE");
        origin = "CLNZ_DEVICE";
        if (selector && !*selector)
            selector = NULL;
    }
    int pi = 0, di = 0;
    if (selector) {
        if (!devices_parse_selector(selector, &pi, &di)) {
            snprintf(msg, msg_size, "%s '%s' is not of the form PLATFORM:DEVICE (e.g. 0:0)",
                     origin, selector);
            return CLNZ_ERROR_INVALID_DEVICE;
        }
    } else {
        discovery dv = {CL_SUCCESS, 0, NULL};
        if (!default_device(&pi, &di, &dv)) {
            no_device_message(&dv, msg, msg_size);
            return CLNZ_ERROR_NO_DEVICE;
        }
    }
    discovery dv = {CL_SUCCESS, 0, NULL};
    cl_platform_id ps[MAX_PLATFORMS];
    cl_uint np = platforms(ps, &dv);
    if (np == 0) { /* the driver's reason beats "no platform 0" */
        no_device_message(&dv, msg, msg_size);
        return CLNZ_ERROR_NO_DEVICE;
    }
    if ((cl_uint)pi >= np) {
        snprintf(msg, msg_size, "%s '%s': no platform %d (%u found)", origin,
                 selector ? selector : "", pi, np);
        return CLNZ_ERROR_INVALID_DEVICE;
    }
    cl_device_id ds[MAX_DEVICES];
    cl_uint nd = devices_of(ps[pi], ds, NULL);
    if ((cl_uint)di >= nd) {
        snprintf(msg, msg_size, "%s '%s': platform %d has no device %d (%u found)", origin,
                 selector ? selector : "", pi, di, nd);
        return CLNZ_ERROR_INVALID_DEVICE;
    }
    *platform = ps[pi];
    *device = ds[di];
    return CLNZ_SUCCESS;
}

static void type_name(cl_device_type t, char *out, size_t n)
{
    const char *s = (t & CL_DEVICE_TYPE_GPU)           ? "GPU"
                    : (t & CL_DEVICE_TYPE_CPU)         ? "CPU"
                    : (t & CL_DEVICE_TYPE_ACCELERATOR) ? "ACCELERATOR"
                                                       : "OTHER";
    snprintf(out, n, "%s", s);
}

clnz_status clnz_list_devices(clnz_device_info *infos, int max, int *count)
{
    if (!count || max < 0 || (max > 0 && !infos))
        return CLNZ_ERROR_INVALID_ARGUMENT;
    DRIVER_HOLD();
    cl_platform_id ps[MAX_PLATFORMS];
    cl_uint np = platforms(ps, NULL);
    int dp = -1, dd = -1, k = 0;
    default_device(&dp, &dd, NULL);
    const char *env = getenv("CLNZ_DEVICE");
    if (env && *env)
        devices_parse_selector(env, &dp, &dd);
    for (cl_uint p = 0; p < np; ++p) {
        cl_device_id ds[MAX_DEVICES];
        cl_uint nd = devices_of(ps[p], ds, NULL);
        for (cl_uint d = 0; d < nd; ++d, ++k) {
            if (k >= max)
                continue;
            clnz_device_info *i = &infos[k];
            memset(i, 0, sizeof *i);
            i->platform = (int)p;
            i->device = (int)d;
            i->is_default = (int)p == dp && (int)d == dd;
            clGetPlatformInfo(ps[p], CL_PLATFORM_NAME, sizeof i->platform_name - 1,
                              i->platform_name, NULL);
            clGetDeviceInfo(ds[d], CL_DEVICE_NAME, sizeof i->device_name - 1, i->device_name,
                            NULL);
            clGetDeviceInfo(ds[d], CL_DEVICE_VERSION, sizeof i->version - 1, i->version, NULL);
            cl_device_type t = 0;
            clGetDeviceInfo(ds[d], CL_DEVICE_TYPE, sizeof t, &t, NULL);
            type_name(t, i->device_type, sizeof i->device_type);
            cl_ulong v = 0;
            clGetDeviceInfo(ds[d], CL_DEVICE_GLOBAL_MEM_SIZE, sizeof v, &v, NULL);
            i->global_mem_size = v;
            clGetDeviceInfo(ds[d], CL_DEVICE_MAX_MEM_ALLOC_SIZE, sizeof v, &v, NULL);
            i->max_alloc_size = v;
            device_ident id;
            ident_of_device(ds[d], &id);
            i->tuning = tune_store_probe(&id);
        }
    }
    *count = k;
    return CLNZ_SUCCESS;
}

void ident_of_device(cl_device_id dev, device_ident *id)
{
    memset(id, 0, sizeof *id);
    cl_platform_id p = NULL;
    cl_device_type type = 0;
    clGetDeviceInfo(dev, CL_DEVICE_PLATFORM, sizeof p, &p, NULL);
    clGetPlatformInfo(p, CL_PLATFORM_NAME, sizeof id->platform - 1, id->platform, NULL);
    clGetDeviceInfo(dev, CL_DEVICE_NAME, sizeof id->device - 1, id->device, NULL);
    clGetDeviceInfo(dev, CL_DEVICE_VENDOR, sizeof id->vendor - 1, id->vendor, NULL);
    clGetDeviceInfo(dev, CL_DRIVER_VERSION, sizeof id->driver - 1, id->driver, NULL);
    clGetDeviceInfo(dev, CL_DEVICE_TYPE, sizeof type, &type, NULL);
    snprintf(id->type, sizeof id->type, "%s",
             (type & CL_DEVICE_TYPE_GPU)           ? "GPU"
             : (type & CL_DEVICE_TYPE_CPU)         ? "CPU"
             : (type & CL_DEVICE_TYPE_ACCELERATOR) ? "ACCELERATOR"
                                                   : "OTHER");
}
