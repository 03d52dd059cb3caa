/* fault_shim.c: an LD_PRELOAD library for the command-line fault tests
 * (tests/test_cli_faults.py). It stands in front of the OpenCL calls that
 * allocate, build, enqueue, map, read, wait or finish; with CLNZ_FAULT_AT=k
 * the k-th of them fails with a realistic error, and its name is written
 * to the file CLNZ_FAULT_REPORT, so the test knows the point was reached.
 * The calls and their errors are fault_calls.h's list, shared with the
 * library's own test of the kind, test_faults.c (linked with --wrap).
 *
 * For tests/test_cli_reliability.py it also stands in front of a few file
 * calls: CLNZ_SHIM_STOP=fsync|renameat|open|unlinkat makes the process stop
 * itself (SIGSTOP) at its first call of that function (open: open or
 * openat), so that a test can kill it right there or change the files it
 * is working on; FUNC:NAME stops at the first call on a file of that name
 * (the path's last part), which test_cli_bundle.py uses to stop between
 * two files of a bundle; CLNZ_SHIM_NO_TMPFILE=1 makes O_TMPFILE fail as it
 * does on a file system without it (EOPNOTSUPP), CLNZ_SHIM_READ_ONLY=1
 * makes unlinkat fail as on a read-only one (EROFS: root ignores modes).
 *
 * For tests/test_cli_bundle.py, CLNZ_SHIM_DEVICE_NAME=NAME makes every
 * device answer CL_DEVICE_NAME with NAME: a name with control characters,
 * which no real device here has.
 *
 * CLNZ_SHIM_PROFILER=process|thread|late|late-thread|prof plays a sampling profiler
 * loaded into the process: a handler for SIGRTMIN+2 and a timer that sends
 * it every millisecond, to the process or to the main thread alone, the
 * handler set before main or (late) 20 ms into it, with the timer's
 * sigval checked (SA_SIGINFO); or (prof) SIGPROF from setitimer, as
 * gperftools does. At exit it says on stderr how many ticks its handler
 * took, and how many came with a siginfo not the timer's. */
#define _GNU_SOURCE
#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>
#include "fault_calls.h"
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

/* ---- file calls ---- */
static void maybe_stop(const char *func, const char *path)
{
    static int stopped;
    const char *v = getenv("CLNZ_SHIM_STOP");
    size_t n = strlen(func);
    if (!v || stopped || strncmp(v, func, n) != 0 || (v[n] && v[n] != ':'))
        return;
    const char *base = path && strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
    if (v[n] == ':' && (!base || strcmp(base, v + n + 1) != 0))
        return;
    stopped = 1;
    raise(SIGSTOP);
}

int fsync(int fd)
{
    maybe_stop("fsync", NULL);
    return REAL(fsync)(fd);
}

int renameat(int olddir, const char *old, int newdir, const char *new_name)
{
    maybe_stop("renameat", new_name);
    return REAL(renameat)(olddir, old, newdir, new_name);
}

int unlinkat(int dir, const char *path, int flags)
{
    maybe_stop("unlinkat", path);
    const char *ro = getenv("CLNZ_SHIM_READ_ONLY");
    if (ro && *ro == '1') {
        errno = EROFS;
        return -1;
    }
    return REAL(unlinkat)(dir, path, flags);
}

static int no_tmpfile(int flags)
{
    const char *v = getenv("CLNZ_SHIM_NO_TMPFILE");
    if ((flags & O_TMPFILE) == O_TMPFILE && v && *v == '1') {
        errno = EOPNOTSUPP;
        return 1;
    }
    return 0;
}

#define SHIM_OPENAT(name)                                         \
    int name(int dir, const char *path, int flags, ...)           \
    {                                                             \
        va_list ap;                                               \
        va_start(ap, flags);                                      \
        mode_t mode = (mode_t)va_arg(ap, unsigned);               \
        va_end(ap);                                               \
        if (no_tmpfile(flags))                                    \
            return -1;                                            \
        maybe_stop("open", path);                                 \
        return REAL(name)(dir, path, flags, mode);                \
    }
SHIM_OPENAT(openat)
SHIM_OPENAT(openat64)

#define SHIM_OPEN(name)                                           \
    int name(const char *path, int flags, ...)                    \
    {                                                             \
        va_list ap;                                               \
        va_start(ap, flags);                                      \
        mode_t mode = (mode_t)va_arg(ap, unsigned);               \
        va_end(ap);                                               \
        maybe_stop("open", path);                                 \
        return REAL(name)(path, flags, mode);                     \
    }
SHIM_OPEN(open)
SHIM_OPEN(open64)

/* ---- a device's name ---- */
cl_int clGetDeviceInfo(cl_device_id d, cl_device_info what, size_t n, void *value, size_t *ret)
{
    const char *name = getenv("CLNZ_SHIM_DEVICE_NAME");
    if (what != CL_DEVICE_NAME || !name)
        return REAL(clGetDeviceInfo)(d, what, n, value, ret);
    size_t len = strlen(name) + 1;
    if (value && n < len)
        return CL_INVALID_VALUE;
    if (value)
        memcpy(value, name, len);
    if (ret)
        *ret = len;
    return CL_SUCCESS;
}

/* ---- a profiler's timer signal ---- */
#include <pthread.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

static volatile sig_atomic_t ticks, bad_info;
static pid_t main_tid;
static int timer_mark;

static void on_tick(int sig, siginfo_t *info, void *uc)
{
    (void)uc;
    ++ticks;
    if (sig == SIGRTMIN + 2 && info->si_value.sival_ptr != &timer_mark)
        ++bad_info;
}

static void profile(int to_main_thread)
{
    struct sigaction sa = {0};
    sa.sa_sigaction = on_tick;
    sa.sa_flags = SA_RESTART | SA_SIGINFO;
    sigaction(SIGRTMIN + 2, &sa, NULL);
    struct sigevent ev = {0};
    ev.sigev_notify = to_main_thread ? SIGEV_THREAD_ID : SIGEV_SIGNAL;
    ev.sigev_signo = SIGRTMIN + 2;
    ev.sigev_value.sival_ptr = &timer_mark;
    ev._sigev_un._tid = main_tid;
    timer_t t;
    if (timer_create(CLOCK_MONOTONIC, &ev, &t) == 0) {
        struct itimerspec every = {{0, 1000000}, {0, 1000000}};
        timer_settime(t, 0, &every, NULL);
    }
}

static void *profile_later(void *to_main_thread)
{
    nanosleep(&(struct timespec){0, 20000000}, NULL);
    profile(to_main_thread != NULL);
    return NULL;
}

__attribute__((constructor)) static void profiler_start(void)
{
    const char *v = getenv("CLNZ_SHIM_PROFILER");
    main_tid = (pid_t)syscall(SYS_gettid);
    pthread_t t;
    if (!v)
        return;
    if (strcmp(v, "prof") == 0) {
        struct sigaction sa = {0};
        sa.sa_sigaction = on_tick;
        sa.sa_flags = SA_RESTART | SA_SIGINFO;
        sigaction(SIGPROF, &sa, NULL);
        struct itimerval every = {{0, 1000}, {0, 1000}};
        setitimer(ITIMER_PROF, &every, NULL);
    } else if (strncmp(v, "late", 4) == 0) {
        pthread_create(&t, NULL, profile_later, strcmp(v, "late-thread") == 0 ? &t : NULL);
    } else {
        profile(strcmp(v, "thread") == 0);
    }
}

__attribute__((destructor)) static void profiler_stop(void)
{
    if (getenv("CLNZ_SHIM_PROFILER"))
        fprintf(stderr, "shim: %d ticks handled, %d with another siginfo\n", (int)ticks,
                (int)bad_info);
}
