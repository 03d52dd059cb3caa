/* devices.c: finding OpenCL devices, listing them and parsing "P:D". */
#include "core/devices.h"
#include "core/error.h"
#include "core/driver_lock.h"
#include "core/quote.h"
#include "tune/tune.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
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

/* The names and vendors of the platform and the device, lower case: what
 * a name selector matches ("pocl" is only in PoCL's platform vendor). */
static void search_name(cl_platform_id p, cl_device_id d, char *out, size_t n)
{
    char dev[128] = "", plat[128] = "", pv[128] = "", dv[128] = "";
    clGetDeviceInfo(d, CL_DEVICE_NAME, sizeof dev - 1, dev, NULL);
    clGetDeviceInfo(d, CL_DEVICE_VENDOR, sizeof dv - 1, dv, NULL);
    clGetPlatformInfo(p, CL_PLATFORM_NAME, sizeof plat - 1, plat, NULL);
    clGetPlatformInfo(p, CL_PLATFORM_VENDOR, sizeof pv - 1, pv, NULL);
    snprintf(out, n, "%s|%s|%s|%s", plat, pv, dev, dv);
    for (char *c = out; *c; ++c)
        *c = (char)tolower((unsigned char)*c);
}

/* A simulator (Oclgrind) or a device that calls itself a GPU and a CPU at
 * once: never chosen while a real device is there. */
static int is_simulator(cl_platform_id p, cl_device_id d, cl_device_type t)
{
    char name[520];
    search_name(p, d, name, sizeof name);
    return ((t & CL_DEVICE_TYPE_GPU) && (t & CL_DEVICE_TYPE_CPU)) || strstr(name, "simulator") ||
           strstr(name, "oclgrind");
}

static cl_device_type kind_of(const char *s)
{
    return strcasecmp(s, "gpu") == 0           ? CL_DEVICE_TYPE_GPU
           : strcasecmp(s, "cpu") == 0         ? CL_DEVICE_TYPE_CPU
           : strcasecmp(s, "accelerator") == 0 ? CL_DEVICE_TYPE_ACCELERATOR
                                               : 0;
}

/* How well a device fits a selector: -1 not at all; among matches a real
 * device (2) before a simulator (1); for the default (selector NULL) a real
 * GPU (3), then another real device (2), then a simulator (1). */
static int fit(const char *selector, cl_platform_id p, cl_device_id d)
{
    cl_device_type t = 0;
    clGetDeviceInfo(d, CL_DEVICE_TYPE, sizeof t, &t, NULL);
    int real = !is_simulator(p, d, t);
    if (!selector)
        return real ? 2 + ((t & CL_DEVICE_TYPE_GPU) != 0) : 1;
    cl_device_type kind = kind_of(selector);
    if (kind)
        return (t & kind) ? 1 + real : -1;
    char name[520], want[128];
    search_name(p, d, name, sizeof name);
    snprintf(want, sizeof want, "%s", selector);
    for (char *c = want; *c; ++c)
        *c = (char)tolower((unsigned char)*c);
    return strstr(name, want) ? 1 + real : -1;
}

/* The best fitting device for a selector that is not "P:D" (NULL: the
 * default), the first in platform order among equals; 0 if none fits
 * (dv, if not NULL, gets what the driver said). *why says why. */
static int pick(const char *selector, int *pi, int *di, char *why, size_t why_size,
                discovery *dv)
{
    cl_platform_id ps[MAX_PLATFORMS];
    cl_uint np = platforms(ps, dv);
    int best = -1, simulators = 0;
    for (cl_uint p = 0; p < np; ++p) {
        cl_device_id ds[MAX_DEVICES];
        cl_uint nd = devices_of(ps[p], ds, dv);
        for (cl_uint d = 0; d < nd; ++d) {
            int f = fit(selector, ps[p], ds[d]);
            simulators += f == 1;
            if (f > best)
                best = f, *pi = (int)p, *di = (int)d;
        }
    }
    if (best < 0)
        return 0;
    const char *skip = simulators && best > 1 ? ", not a simulator" : "";
    char q[72];
    if (!selector)
        snprintf(why, why_size, "%s%s",
                 best == 3   ? "the first GPU"
                 : best == 2 ? "the first device (no GPU)"
                             : "the first device (only simulators)",
                 skip);
    else if (kind_of(selector))
        snprintf(why, why_size, "the first %s device%s", selector,
                 best == 1 ? " (a simulator: no other)" : skip);
    else
        snprintf(why, why_size, "the first device whose name has %s%s",
                 quote_name(selector, q, sizeof q), best == 1 ? " (a simulator: no other)" : skip);
    return 1;
}

/* The device CLNZ_DEVICE (or the default) picks, and why, for listings. */
static void chosen(int *pi, int *di, char *why, size_t n)
{
    const char *env = getenv("CLNZ_DEVICE");
    char how[120] = "", q[52];
    *pi = *di = -1;
    if (env && *env && strchr(env, ':')) {
        if (devices_parse_selector(env, pi, di))
            snprintf(why, n, "CLNZ_DEVICE=%s", quote_name(env, q, sizeof q));
    } else if (pick(env && *env ? env : NULL, pi, di, how, sizeof how, NULL)) {
        if (env && *env)
            snprintf(why, n, "CLNZ_DEVICE=%s: %s", quote_name(env, q, sizeof q), how);
        else
            snprintf(why, n, "%s", how);
    }
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
    if (selector && !*selector) /* "" as NULL, as an empty CLNZ_DEVICE (the Python module too) */
        selector = NULL;
    if (!selector) {
        selector = getenv("CLNZ_DEVICE");
        origin = "CLNZ_DEVICE";
        if (selector && !*selector)
            selector = NULL;
    }
    int pi = 0, di = 0;
    char why[160], q[112]; /* the selector quoted: it may hold anything */
    quote_name(selector ? selector : "", q, sizeof q);
    if (selector && strchr(selector, ':')) { /* P:D */
        if (!devices_parse_selector(selector, &pi, &di)) {
            snprintf(msg, msg_size,
                     "%s %s is not of the form PLATFORM:DEVICE (e.g. 0:0); a kind (gpu, "
                     "cpu, accelerator) or part of a device's name also select one",
                     origin, q);
            return CLNZ_ERROR_INVALID_DEVICE;
        }
    } else {
        discovery dv = {CL_SUCCESS, 0, NULL};
        if (!pick(selector, &pi, &di, why, sizeof why, &dv)) {
            if (!selector || dv.err != CL_SUCCESS) { /* no device at all: the driver's reason */
                no_device_message(&dv, msg, msg_size);
                return CLNZ_ERROR_NO_DEVICE;
            }
            snprintf(msg, msg_size, "%s %s: no device matches (see clnz devices)", origin, q);
            return CLNZ_ERROR_INVALID_DEVICE;
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
        snprintf(msg, msg_size, "%s %s: no platform %d (%u found)", origin, q, pi, np);
        return CLNZ_ERROR_INVALID_DEVICE;
    }
    cl_device_id ds[MAX_DEVICES];
    cl_uint nd = devices_of(ps[pi], ds, NULL);
    if ((cl_uint)di >= nd) {
        snprintf(msg, msg_size, "%s %s: platform %d has no device %d (%u found)", origin, q, pi,
                 di, nd);
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

/* What a listing says of one device, but for its place and default mark. */
static void describe(cl_platform_id p, cl_device_id d, clnz_device_info *i)
{
    memset(i, 0, sizeof *i);
    clGetPlatformInfo(p, CL_PLATFORM_NAME, sizeof i->platform_name - 1, i->platform_name, NULL);
    clGetDeviceInfo(d, CL_DEVICE_NAME, sizeof i->device_name - 1, i->device_name, NULL);
    clGetDeviceInfo(d, CL_DEVICE_VERSION, sizeof i->version - 1, i->version, NULL);
    cl_device_type t = 0;
    clGetDeviceInfo(d, CL_DEVICE_TYPE, sizeof t, &t, NULL);
    type_name(t, i->device_type, sizeof i->device_type);
    cl_ulong v = 0;
    clGetDeviceInfo(d, CL_DEVICE_GLOBAL_MEM_SIZE, sizeof v, &v, NULL);
    i->global_mem_size = v;
    clGetDeviceInfo(d, CL_DEVICE_MAX_MEM_ALLOC_SIZE, sizeof v, &v, NULL);
    i->max_alloc_size = v;
    size_t max_wg = 0; /* a stored size above it is another device's: a context skips it */
    if (clGetDeviceInfo(d, CL_DEVICE_MAX_WORK_GROUP_SIZE, sizeof max_wg, &max_wg, NULL))
        max_wg = SIZE_MAX;
    device_ident id;
    ident_of_device(d, &id);
    i->tuning = tune_store_probe(&id, max_wg);
}

/* Where a device sits in the listing (P:D) and whether it is the default.
 * want NULL lists every device into infos; otherwise only want's entry is
 * filled, and the return says whether it was found. */
static int walk(cl_device_id want, clnz_device_info *infos, int max, int *count)
{
    cl_platform_id ps[MAX_PLATFORMS];
    cl_uint np = platforms(ps, NULL);
    int dp = -1, dd = -1, k = 0;
    char why[sizeof infos[0].why_default] = "";
    chosen(&dp, &dd, why, sizeof why);
    for (cl_uint p = 0; p < np; ++p) {
        cl_device_id ds[MAX_DEVICES];
        cl_uint nd = devices_of(ps[p], ds, NULL);
        for (cl_uint d = 0; d < nd; ++d, ++k) {
            if (want ? ds[d] != want : k >= max)
                continue;
            clnz_device_info *i = want ? infos : &infos[k];
            describe(ps[p], ds[d], i);
            i->platform = (int)p;
            i->device = (int)d;
            i->is_default = (int)p == dp && (int)d == dd;
            if (i->is_default)
                snprintf(i->why_default, sizeof i->why_default, "%s", why);
            if (want)
                return 1;
        }
    }
    if (count)
        *count = k;
    return 0;
}

clnz_status clnz_list_devices(clnz_device_info *infos, int max, int *count)
{
    if (count) /* whatever fails: no device listed */
        *count = 0;
    if (!count || max < 0 || (max > 0 && !infos))
        return CLNZ_ERROR_INVALID_ARGUMENT;
    if (fork_guard_tripped())
        return CLNZ_ERROR_FORKED;
    DRIVER_HOLD();
    walk(NULL, infos, max, count);
    return CLNZ_SUCCESS;
}

clnz_status clnz_context_device_info(const clnz_context *ctx, clnz_device_info *info)
{
    if (!ctx)
        return CLNZ_ERROR_INVALID_ARGUMENT;
    if (fork_guard_tripped())
        return CLNZ_ERROR_FORKED;
    ctx_clear_message((clnz_context *)ctx); /* as every call: a message left is this call's */
    if (!info) /* the context's message says so, as for every call that takes one */
        return ctx_fail((clnz_context *)ctx, CLNZ_ERROR_INVALID_ARGUMENT, "info is NULL");
    cl_device_id dev = clnz_context_device(ctx);
    DRIVER_HOLD();
    if (walk(dev, info, 1, NULL))
        return CLNZ_SUCCESS;
    /* Not in the listing (a sub-device, or a wrapped context's device that
     * enumeration does not return): described, with no place. */
    cl_platform_id p = NULL;
    clGetDeviceInfo(dev, CL_DEVICE_PLATFORM, sizeof p, &p, NULL);
    describe(p, dev, info);
    info->platform = info->device = -1;
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

int devices_list_has(const char *list, const char *name)
{
    size_t n = strlen(name);
    for (const char *p = list; n && (p = strstr(p, name)) != NULL; p += n)
        if ((p == list || p[-1] == ' ') && (p[n] == ' ' || p[n] == '\0'))
            return 1;
    return 0;
}

/* The list is read at its own length: a fixed buffer that a long list
 * overflowed made the query fail and the extension look absent (the lists
 * only grow; a GPU driver's runs to kilobytes). */
int devices_have_extension(cl_device_id dev, const char *name)
{
    size_t len = 0;
    if (clGetDeviceInfo(dev, CL_DEVICE_EXTENSIONS, 0, NULL, &len) != CL_SUCCESS || len == 0)
        return 0;
    char *list = malloc(len + 1);
    if (!list)
        return 0; /* absent: the portable path */
    int has = clGetDeviceInfo(dev, CL_DEVICE_EXTENSIONS, len, list, NULL) == CL_SUCCESS;
    if (has) {
        list[len] = '\0';
        has = devices_list_has(list, name);
    }
    free(list);
    return has;
}
