/* output.c: the command's outputs, written all or nothing.
 *
 * A regular target is written to a temporary file in its own folder and
 * renamed over it once every output of the run is complete. The temporary
 * is nameless (O_TMPFILE) while it is written, so a process killed then
 * leaves nothing; it gets a short name (TMP_PREFIX and TMP_RANDOM letters,
 * whatever the target's length) only for the rename. Where O_TMPFILE is
 * missing it is named from the start. A named temporary is locked (flock)
 * by its writer for its whole life, so the next run in that folder can tell
 * one whose writer is gone (killed with SIGKILL) and remove it; SIGINT,
 * SIGTERM, SIGHUP and the like remove them before the process dies.
 *
 * Targets keep what they were: a symlink is followed and its target
 * replaced; an existing file keeps its mode (and owner, where that can be
 * set); a new one gets 0666 less the umask; a FIFO or character device is
 * opened and written, never replaced. */
#define _GNU_SOURCE
#include "io/output.h"
#include "io/output_tmp.h"
#include "io/io.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <linux/magic.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

enum { MAX_SYMLINKS = 40 };

struct out_file {
    char *path; /* as given, for messages */
    int through; /* written at commit by opening path itself */
    int to_stdout; /* "-": through standard output (never opened, never truncated) */
    int trunc;   /* through a /proc/self/fd link (/dev/stdout) to a regular file */
    int exists;
    struct stat st; /* the target's, when it exists */
    /* regular targets: the folder, the name in it, the temporary */
    int dirfd;
    dev_t dir_dev;
    ino_t dir_ino;
    char *base;
    int fd;
    int anonymous;              /* O_TMPFILE: no name until commit */
    int named;                  /* tmp names a file in dirfd (under the registry lock) */
    char tmp[TMP_NAME + 1];
    /* through targets: the bytes, written at commit */
    unsigned char *head;
    size_t head_len;
    const void *data;
    size_t bytes;
};

#define FAIL(...)                                \
    do {                                         \
        snprintf(err, err_size, __VA_ARGS__);    \
        return -1;                               \
    } while (0)

/* ---- signals: no named temporary outlives the process ----
 *
 * A signal handler would run in whichever thread the kernel picks, and the
 * OpenCL driver has threads of its own: blocking a signal in the main
 * thread around a rename would not hold it off. So the fatal signals are
 * blocked in every thread (the mask is set before the driver starts any)
 * and one thread of ours waits for them. It takes the registry's lock,
 * which the main thread holds while it names, renames or removes a
 * temporary, removes what is named, and lets the process die of the
 * signal. SIGPIPE is not among them: a write to a reader that went away is
 * an error (EPIPE) for an output, and the usual quiet death for stdout. */

static pthread_mutex_t registry = PTHREAD_MUTEX_INITIALIZER;
static out_set *live; /* the set whose named temporaries go on a signal */
/* Every signal whose default action ends the process and that only comes
 * from outside (kill, a terminal, a timer), real-time ones included; not
 * those of a fault in the process itself (SIGSEGV, SIGBUS, SIGFPE, SIGILL,
 * SIGABRT, SIGSYS, SIGTRAP: blocked, a fault's is undefined), nor SIGKILL
 * and SIGSTOP, which cannot be caught. */
static const int fatal_signals[] = {
    SIGHUP,    SIGINT,    SIGQUIT, SIGTERM, SIGALRM, SIGUSR1,
    SIGUSR2,   SIGVTALRM, SIGPROF, SIGXCPU, SIGPOLL,
#ifdef SIGPWR
    SIGPWR,
#endif
#ifdef SIGSTKFLT
    SIGSTKFLT,
#endif
};
enum { N_FATAL = sizeof fatal_signals / sizeof fatal_signals[0] };
static sigset_t fatal_set;              /* those at their default when clnz started (fatal_add) */
static void (*signal_hook)(void);       /* output_dir.c's temporary folder */
static volatile sig_atomic_t signalled; /* the waiter has taken a signal */

/* Whether a disposition is SIG_DFL or SIG_IGN (which) rather than a handler. */
static int disposition_is(const struct sigaction *a, void (*which)(int))
{
    return !(a->sa_flags & SA_SIGINFO) && a->sa_handler == which;
}

/* Blocks or unblocks (how) sig in the calling thread. */
static void mask_one(int how, int sig)
{
    sigset_t one;
    sigemptyset(&one);
    sigaddset(&one, sig);
    pthread_sigmask(how, &one, NULL);
}

/* Into fatal_set if it still ends the process when clnz starts: not one
 * ignored (nohup) nor one that a library loaded before main handles (a
 * profiler's timer signal, SIGPROF or a real-time one). */
static void fatal_add(int sig)
{
    struct sigaction old;
    if (sigaction(sig, NULL, &old) == 0 && disposition_is(&old, SIG_DFL))
        sigaddset(&fatal_set, sig);
}

/* A real-time signal of fatal_set, taken (sigwaitinfo, sigtimedwait) in
 * this thread, whose disposition is no longer the default: ignored now, or
 * handled by a library that set its handler after clnz started (a
 * profiler's timer). Then it is not fatal: the handler runs here, at once,
 * with the signal's own siginfo (1). The others stay fatal whatever
 * handler came later: LLVM's (PoCL loads it to compile) removes its own
 * files and ends the process, and clnz's temporaries must go first. */
static int run_if_handled(const siginfo_t *info)
{
    int sig = info->si_signo;
    struct sigaction now;
#ifdef SIGRTMIN
    if (sig < SIGRTMIN || sig > SIGRTMAX)
        return 0;
#else
    return 0;
#endif
    if (sigaction(sig, NULL, &now) != 0 || disposition_is(&now, SIG_DFL))
        return 0;
    if (disposition_is(&now, SIG_IGN))
        return 1;
    mask_one(SIG_UNBLOCK, sig);
    siginfo_t again = *info; /* to this very thread: allowed with any si_code */
    if (syscall(SYS_rt_tgsigqueueinfo, getpid(), (pid_t)syscall(SYS_gettid), sig, &again) != 0)
        raise(sig); /* the handler runs all the same, with a siginfo of raise's */
    mask_one(SIG_BLOCK, sig);
    return 1;
}

/* Called with the registry's lock held: the named temporaries go, and the
 * process dies of sig. */
_Noreturn static void die_of(int sig)
{
    for (int i = 0; live && i < live->n; ++i)
        if (live->files[i]->named)
            unlinkat(live->files[i]->dirfd, live->files[i]->tmp, 0);
    if (signal_hook)
        signal_hook();
    signal(sig, SIG_DFL);
    mask_one(SIG_UNBLOCK, sig);
    raise(sig);
    _exit(128 + sig); /* not reached: each of them terminates by default */
}

void out_registry_lock(void) { pthread_mutex_lock(&registry); }

/* Called with the registry's lock held, before a commit and after it. A
 * signal that came before (still pending, or taken by the waiter, which
 * then waits for this lock) cancels the commit: every output stays as it
 * was, and the process dies of that signal. One that came during the
 * commit is acted on after its last rename: every output is new, and the
 * process still dies of it. Without the second call the main thread could
 * return from main before the waiter, which was waiting for the lock, got
 * to run (seen under load: a SIGTERM sent during the renames, exit status
 * 0, the test that sends it failing 1 run in 4). */
void out_registry_stop_if_signalled(void)
{
    /* one pending that the waiter has not taken yet, or one sent to this
     * thread alone (a per-thread timer's), which the waiter never takes:
     * taken here, and if it is fatal this thread acts on it, the lock held */
    int any = signalled != 0;
    const struct timespec now = {0, 0};
    siginfo_t info;
    while (!any && sigtimedwait(&fatal_set, &info, &now) > 0)
        if (!run_if_handled(&info))
            die_of(info.si_signo);
    if (!any)
        return;
    pthread_mutex_unlock(&registry); /* the waiter removes the temporaries and kills us */
    for (;;)
        pause();
}
void out_registry_unlock(void) { pthread_mutex_unlock(&registry); }
void out_set_signal_hook(void (*hook)(void)) { signal_hook = hook; }

static void *signal_waiter(void *unused)
{
    (void)unused;
    siginfo_t info;
    do {
        while (sigwaitinfo(&fatal_set, &info) < 0) {
        }
    } while (run_if_handled(&info));
    signalled = info.si_signo;
    pthread_mutex_lock(&registry); /* waits out a commit: all outputs or none */
    die_of(info.si_signo);
}

/* Once per process, before any other thread exists (out_add comes before
 * the OpenCL context). Also ignores SIGXFSZ, so that a file-size limit
 * (ulimit -f) is a write error with a message, not a silent death. */
void out_signals_install(void)
{
    static int done;
    if (done)
        return;
    done = 1;
    signal(SIGXFSZ, SIG_IGN);
    sigemptyset(&fatal_set);
    for (int i = 0; i < N_FATAL; ++i)
        fatal_add(fatal_signals[i]);
#ifdef SIGRTMIN /* the C library's own real-time signals lie below SIGRTMIN */
    for (int sig = SIGRTMIN; sig <= SIGRTMAX; ++sig)
        fatal_add(sig);
#endif
    sigset_t old;
    pthread_sigmask(SIG_BLOCK, &fatal_set, &old);
    pthread_t t;
    pthread_attr_t attr;
    int ok = pthread_attr_init(&attr) == 0;
    if (ok) {
        pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
        ok = pthread_create(&t, &attr, signal_waiter, NULL) == 0;
        pthread_attr_destroy(&attr);
    }
    if (!ok) /* no waiter: the signals act as they did (kill -9's cleanup still works) */
        pthread_sigmask(SIG_SETMASK, &old, NULL);
}

/* ---- temporary names ---- */

void out_tmp_name(char out[TMP_NAME + 1])
{
    static const char letters[] = "abcdefghijklmnopqrstuvwxyz0123456789";
    unsigned char r[TMP_RANDOM];
    if (getrandom(r, sizeof r, GRND_NONBLOCK) != (ssize_t)sizeof r) {
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        uint64_t x = (uint64_t)ts.tv_nsec ^ ((uint64_t)getpid() << 32) ^ (uint64_t)(uintptr_t)r;
        for (int i = 0; i < TMP_RANDOM; ++i, x = x * 6364136223846793005ULL + 1442695040888963407ULL)
            r[i] = (unsigned char)(x >> 56);
    }
    memcpy(out, TMP_PREFIX, sizeof TMP_PREFIX - 1);
    for (int i = 0; i < TMP_RANDOM; ++i)
        out[sizeof TMP_PREFIX - 1 + i] = letters[r[i] % (sizeof letters - 1)];
    out[TMP_NAME] = '\0';
}

int out_is_tmp_name(const char *name)
{
    if (strlen(name) != TMP_NAME || strncmp(name, TMP_PREFIX, sizeof TMP_PREFIX - 1) != 0)
        return 0;
    for (const char *c = name + sizeof TMP_PREFIX - 1; *c; ++c)
        if (!((*c >= 'a' && *c <= 'z') || (*c >= '0' && *c <= '9')))
            return 0;
    return 1;
}

/* Whether head[0..n) can start an output of clnz's: a .npy, or csv/txt
 * (text_out.c: numbers as %d and %g, nan, inf, ',' or ' ' between them). */
static int starts_like_ours(const unsigned char *head, size_t n)
{
    static const char npy[] = "\x93NUMPY", text[] = "0123456789+-.e, \nnaif";
    if (memcmp(head, npy, n < sizeof npy - 1 ? n : sizeof npy - 1) == 0)
        return 1;
    for (size_t i = 0; i < n; ++i)
        if (!head[i] || !strchr(text, head[i]))
            return 0;
    return 1;
}

/* One of clnz's named temporaries whose writer is gone: our name, a
 * regular file of ours that holds the start of an output (or nothing
 * yet), and no lock on it; or a folder (output_dir.c's). Removed while we hold
 * the lock. */
static void remove_if_stale(int dirfd, const char *name)
{
    int fd = openat(dirfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
    if (fd < 0)
        return;
    struct stat sb, now;
    if (fstat(fd, &sb) == 0 && S_ISDIR(sb.st_mode)) {
        out_dir_remove_if_stale(dirfd, name, fd);
        close(fd);
        return;
    }
    unsigned char head[64];
    ssize_t n = -1;
    if (fstat(fd, &sb) == 0 && S_ISREG(sb.st_mode) && sb.st_uid == geteuid())
        n = pread(fd, head, sizeof head, 0);
    int ours = n >= 0 && starts_like_ours(head, (size_t)n);
    if (ours && flock(fd, LOCK_EX | LOCK_NB) == 0 &&
        fstatat(dirfd, name, &now, AT_SYMLINK_NOFOLLOW) == 0 && now.st_dev == sb.st_dev &&
        now.st_ino == sb.st_ino)
        unlinkat(dirfd, name, 0);
    close(fd);
}

void out_remove_stale(int dirfd)
{
    int fd = openat(dirfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
    if (!d) {
        if (fd >= 0)
            close(fd);
        return; /* a folder we may write but not list: nothing to clean */
    }
    for (struct dirent *e; (e = readdir(d));)
        if (out_is_tmp_name(e->d_name))
            remove_if_stale(dirfd, e->d_name);
    closedir(d);
}

/* ---- resolving a target ---- */

static char *join(const char *dir, size_t dir_len, const char *name)
{
    size_t n = strlen(name);
    char *p = malloc(dir_len + 1 + n + 1);
    if (p) {
        memcpy(p, dir, dir_len);
        p[dir_len] = '/';
        memcpy(p + dir_len + 1, name, n + 1);
    }
    return p;
}

/* The folder part of a path ("." for none) and where its last name starts. */
static size_t dir_part(const char *path, const char **base)
{
    const char *slash = strrchr(path, '/');
    *base = slash ? slash + 1 : path;
    return slash ? (slash == path ? 1 : (size_t)(slash - path)) : 0;
}

static int on_procfs(const char *path)
{
    const char *base;
    size_t n = dir_part(path, &base);
    char *dir = n ? strndup(path, n) : strdup(".");
    struct statfs fs;
    int yes = dir && statfs(dir, &fs) == 0 && fs.f_type == PROC_SUPER_MAGIC;
    free(dir);
    return yes;
}

/* Follows symlinks from path to the name that is not one (a file, or a
 * name to create). NULL with errno set on failure; *fd_link when a link
 * lives in /proc (/dev/stdout, /dev/fd/N): a descriptor the caller
 * opened, whose target is no path to rename over. */
static char *follow_links(const char *path, int *fd_link)
{
    char *cur = strdup(path);
    *fd_link = 0;
    for (int hops = 0; cur; ++hops) {
        struct stat sb;
        if (lstat(cur, &sb) != 0) {
            if (errno == ENOENT)
                return cur; /* a new file */
            break;
        }
        if (!S_ISLNK(sb.st_mode))
            return cur;
        if (hops == MAX_SYMLINKS) {
            errno = ELOOP;
            break;
        }
        if (on_procfs(cur)) {
            *fd_link = 1;
            return cur;
        }
        char *text = malloc((size_t)sb.st_size + PATH_MAX + 1);
        ssize_t n = text ? readlink(cur, text, (size_t)sb.st_size + PATH_MAX) : -1;
        if (n < 0) {
            free(text);
            break;
        }
        text[n] = '\0';
        const char *base;
        size_t dn = dir_part(cur, &base);
        char *next = text[0] == '/' || dn == 0 ? strdup(text) : join(cur, dn, text);
        free(text);
        free(cur);
        cur = next;
    }
    int e = errno ? errno : ENOMEM;
    free(cur);
    errno = e;
    return NULL;
}

static const char *kind_of(mode_t m)
{
    return S_ISDIR(m) ? "a directory" : S_ISBLK(m) ? "a block device" : "a socket";
}

/* Two outputs that would land in one file: the same file, or the same
 * name in the same folder. */
static int same_target(const out_file *a, const out_file *b)
{
    if (a->exists && b->exists && a->st.st_dev == b->st.st_dev && a->st.st_ino == b->st.st_ino)
        return 1;
    return !a->through && !b->through && a->dir_dev == b->dir_dev && a->dir_ino == b->dir_ino &&
           strcmp(a->base, b->base) == 0;
}

/* The temporary: nameless where the folder's file system can, else named
 * (and then locked before anyone else can see it unlocked for long: a
 * cleaner that removed it first leaves it without links, and we retry). */
static int open_temp(out_file *f, mode_t mode)
{
    int fd = openat(f->dirfd, ".", O_TMPFILE | O_WRONLY | O_CLOEXEC, mode);
    if (fd >= 0) {
        char proc[64];
        struct stat sb;
        snprintf(proc, sizeof proc, "/proc/self/fd/%d", fd);
        if (stat(proc, &sb) == 0 && flock(fd, LOCK_EX) == 0) { /* commit links through /proc */
            f->anonymous = 1;
            return fd;
        }
        close(fd);
    } else if (errno != EOPNOTSUPP && errno != EISDIR && errno != EINVAL && errno != ENOENT) {
        return -1;
    }
    for (int tries = 0; tries < 100; ++tries) {
        pthread_mutex_lock(&registry);
        out_tmp_name(f->tmp);
        fd = openat(f->dirfd, f->tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode);
        f->named = fd >= 0;
        pthread_mutex_unlock(&registry);
        if (fd < 0 && errno == EEXIST)
            continue;
        if (fd < 0)
            return -1;
        struct stat sb;
        while (flock(fd, LOCK_EX) != 0 && errno == EINTR) {
        }
        if (fstat(fd, &sb) == 0 && sb.st_nlink > 0)
            return fd;
        close(fd);
        pthread_mutex_lock(&registry);
        f->named = 0;
        pthread_mutex_unlock(&registry);
    }
    errno = EEXIST;
    return -1;
}

/* The owner and group of the file replaced; only root may give a file
 * away, and only a member may set its group: else it becomes the caller's,
 * as with any tool that replaces a file. */
static void keep_owner(int fd, const struct stat *was)
{
    if (fchown(fd, was->st_uid, was->st_gid) != 0 && fchown(fd, (uid_t)-1, was->st_gid) != 0)
        errno = 0; /* neither: the file is the caller's */
}

/* The folder, the temporary with the target's mode and owner. A failure
 * names the output and its folder (a symlink's target's): one that cannot
 * be opened, or one where no file can be created (read-only, full), which
 * clnz needs even to replace a file it may write. */
static int prepare_regular(out_file *f, const char *target, char *err, size_t err_size)
{
    char q[IO_QUOTE_MAX], qd[IO_QUOTE_MAX];
    const char *name = io_quote(f->path, q, sizeof q);
    const char *base;
    size_t dn = dir_part(target, &base);
    char *dir = dn ? strndup(target, dn) : strdup(".");
    f->base = strdup(base);
    if (!dir || !f->base) {
        free(dir);
        FAIL("out of memory");
    }
    f->dirfd = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
    int e = errno;
    const char *folder = io_quote(dir, qd, sizeof qd);
    free(dir);
    struct stat ds;
    if (f->dirfd < 0 || fstat(f->dirfd, &ds) != 0)
        FAIL("cannot write %s: folder %s: %s", name, folder, strerror(f->dirfd < 0 ? e : errno));
    f->dir_dev = ds.st_dev;
    f->dir_ino = ds.st_ino;
    /* a long name fails here, not at the rename */
    if (!f->exists && fstatat(f->dirfd, f->base, &ds, AT_SYMLINK_NOFOLLOW) != 0 && errno != ENOENT)
        FAIL("cannot write %s: %s", name, strerror(errno));
    if (f->exists && faccessat(f->dirfd, f->base, W_OK, AT_EACCESS) != 0)
        FAIL("cannot write %s: %s", name, strerror(errno));
    out_remove_stale(f->dirfd);
    f->fd = open_temp(f, 0666); /* less the umask */
    if (f->fd < 0)
        FAIL("cannot write %s: no file can be created in folder %s (the output is written "
             "there first, then renamed into place): %s", name, folder, strerror(errno));
    if (f->exists) { /* a replaced file keeps its mode (not set-id bits: it is data now) */
        keep_owner(f->fd, &f->st);
        if (fchmod(f->fd, f->st.st_mode & 01777) != 0)
            FAIL("cannot write %s: %s", name, strerror(errno));
    }
    return 0;
}

static void file_free(out_file *f)
{
    if (f->fd >= 0)
        close(f->fd);
    if (f->dirfd >= 0)
        close(f->dirfd);
    free(f->path);
    free(f->base);
    free(f->head);
    free(f);
}

/* Checks the target and sets f up for it. */
static int prepare(out_file *f, char *err, size_t err_size)
{
    if (strcmp(f->path, "-") == 0) { /* its identity, for same_target */
        if (io_std_closed & 1u << STDOUT_FILENO)
            FAIL("standard output is closed: the output has nowhere to go");
        f->through = f->to_stdout = 1;
        f->exists = fstat(STDOUT_FILENO, &f->st) == 0;
        return 0;
    }
    char q[IO_QUOTE_MAX];
    const char *name = io_quote(f->path, q, sizeof q);
    int fd_link;
    char *target = follow_links(f->path, &fd_link);
    if (!target)
        FAIL("cannot write %s: %s", name, strerror(errno));
    f->exists = stat(target, &f->st) == 0;
    int e = errno, rc = 0;
    mode_t m = f->st.st_mode;
    const char *base;
    dir_part(target, &base);
    if (fd_link && !f->exists) {
        rc = -1;
        snprintf(err, err_size, "cannot write %s: %s", name, strerror(e));
    } else if (f->exists && (S_ISDIR(m) || S_ISBLK(m) || S_ISSOCK(m))) {
        rc = -1;
        snprintf(err, err_size, "%s is %s: clnz writes regular files, FIFOs and character devices",
                 name, kind_of(m));
    } else if (!f->exists && !*base) {
        rc = -1;
        snprintf(err, err_size, "%s is no file name%s", name,
                 *f->path ? " (it ends with '/')" : "");
    } else if (fd_link || (f->exists && !S_ISREG(m))) {
        f->through = 1;
        f->trunc = f->exists && S_ISREG(m); /* as the shell's '>' and numpy's open do */
    } else {
        rc = prepare_regular(f, target, err, err_size);
    }
    free(target);
    return rc;
}

int out_add(out_set *s, const char *path, char *err, size_t err_size)
{
    if (s->n == OUT_MAX)
        FAIL("too many outputs");
    out_signals_install();
    out_file *f = calloc(1, sizeof *f);
    if (!f || !(f->path = strdup(path))) {
        free(f);
        FAIL("out of memory");
    }
    f->fd = f->dirfd = -1;
    pthread_mutex_lock(&registry);
    s->files[s->n++] = f; /* discarded with the set, whatever happens next */
    live = s;
    pthread_mutex_unlock(&registry);
    if (prepare(f, err, err_size))
        return -1;
    for (int i = 0; i < s->n - 1; ++i) {
        if (same_target(s->files[i], f)) {
            char q1[IO_QUOTE_MAX], q2[IO_QUOTE_MAX];
            FAIL("%s and %s are the same file: give each output its own",
                 io_quote(s->files[i]->path, q1, sizeof q1), io_quote(path, q2, sizeof q2));
        }
    }
    return s->n - 1;
}

int out_write_all(int fd, const void *p, size_t n)
{
    const char *c = p;
    while (n) {
        ssize_t w = write(fd, c, n > (1u << 30) ? (1u << 30) : n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w < 0)
            return -1;
        c += w;
        n -= (size_t)w;
    }
    return 0;
}

int out_write(out_set *s, int i, const void *head, size_t head_len, const void *data,
              size_t bytes, char *err, size_t err_size)
{
    char q[IO_QUOTE_MAX];
    out_file *f = s->files[i];
    if (f->through) { /* kept for the commit: nothing reaches a FIFO before it */
        f->head = malloc(head_len ? head_len : 1);
        if (!f->head)
            FAIL("out of memory");
        memcpy(f->head, head, head_len);
        f->head_len = head_len;
        f->data = data;
        f->bytes = bytes;
        return 0;
    }
    if (out_write_all(f->fd, head, head_len) != 0 || out_write_all(f->fd, data, bytes) != 0 ||
        (fsync(f->fd) != 0 && errno != EINVAL))
        FAIL("cannot write %s: %s", io_quote(f->path, q, sizeof q), strerror(errno));
    return 0;
}

/* Opens a through target; a FIFO gets IO_FIFO_WAIT_MS for a reader (its
 * open fails with ENXIO until one comes). */
static int open_through(const out_file *f)
{
    if (f->to_stdout) /* a copy to close: `>>` keeps appending, a pipe stays open */
        return fcntl(STDOUT_FILENO, F_DUPFD_CLOEXEC, 0);
    int flags = O_WRONLY | O_NOCTTY | O_CLOEXEC | O_NONBLOCK | (f->trunc ? O_TRUNC : 0);
    for (int waited = 0;; waited += 10) {
        int fd = open(f->path, flags);
        if (fd >= 0 || errno != ENXIO || !S_ISFIFO(f->st.st_mode) || waited >= IO_FIFO_WAIT_MS)
            return fd;
        struct timespec ts = {0, 10 * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
}

static int write_through(out_file *f, char *err, size_t err_size)
{
    char q[IO_QUOTE_MAX];
    /* "-" is named as what it is: `clnz count` writes there without -o */
    const char *name = f->to_stdout ? "standard output" : io_quote(f->path, q, sizeof q);
    int fd = open_through(f);
    if (fd < 0 && errno == ENXIO && S_ISFIFO(f->st.st_mode))
        FAIL("%s: no process opened the FIFO for reading within %d s", name,
             IO_FIFO_WAIT_MS / 1000);
    if (fd < 0)
        FAIL("cannot write %s: %s", name, strerror(errno));
    int fl = fcntl(fd, F_GETFL);
    if (fl >= 0)
        fcntl(fd, F_SETFL, fl & ~O_NONBLOCK);
    /* a reader that goes away is a write error (EPIPE) with a message */
    struct sigaction ign, old;
    memset(&ign, 0, sizeof ign);
    ign.sa_handler = SIG_IGN;
    sigaction(SIGPIPE, &ign, &old);
    int bad = out_write_all(fd, f->head, f->head_len) != 0 || out_write_all(fd, f->data, f->bytes) != 0;
    int e = errno;
    sigaction(SIGPIPE, &old, NULL);
    if (close(fd) != 0 && !bad)
        bad = 1, e = errno;
    if (bad)
        FAIL("cannot write %s: %s", name, strerror(e));
    return 0;
}

/* A nameless temporary gets its name, for the rename. */
static int link_temp(out_file *f)
{
    char proc[64];
    snprintf(proc, sizeof proc, "/proc/self/fd/%d", f->fd);
    for (int tries = 0; tries < 100; ++tries) {
        out_tmp_name(f->tmp);
        if (linkat(AT_FDCWD, proc, f->dirfd, f->tmp, AT_SYMLINK_FOLLOW) == 0) {
            f->named = 1;
            return 0;
        }
        if (errno != EEXIST)
            return -1;
    }
    return -1;
}

/* Links and renames under the registry's lock: a SIGINT then waits for
 * the last rename, so the outputs are all in place or none is. */
static int commit_regular(out_set *s, char *err, size_t err_size)
{
    char q[IO_QUOTE_MAX];
    pthread_mutex_lock(&registry);
    out_registry_stop_if_signalled();
    int rc = 0;
    for (int i = 0; i < s->n && !rc; ++i) {
        out_file *f = s->files[i];
        if (!f->through && f->anonymous && link_temp(f) != 0) {
            snprintf(err, err_size, "cannot write %s: cannot name its temporary file: %s",
                     io_quote(f->path, q, sizeof q), strerror(errno));
            rc = -1;
        }
    }
    int done = 0;
    for (int i = 0; i < s->n && !rc; ++i) {
        out_file *f = s->files[i];
        if (f->through)
            continue;
        if (renameat(f->dirfd, f->tmp, f->dirfd, f->base) != 0) {
            /* only a change made to the folder since out_add gets here */
            snprintf(err, err_size, "cannot rename into %s: %s%s", io_quote(f->path, q, sizeof q),
                     strerror(errno), done ? " (the outputs before it are written)" : "");
            rc = -1;
            break;
        }
        f->named = 0;
        ++done;
    }
    out_registry_stop_if_signalled(); /* one that came during the renames: now */
    pthread_mutex_unlock(&registry);
    return rc;
}

int out_commit(out_set *s, char *err, size_t err_size)
{
    for (int i = 0; i < s->n; ++i)
        if (s->files[i]->through && write_through(s->files[i], err, err_size))
            return -1;
    return commit_regular(s, err, err_size);
}

void out_discard(out_set *s)
{
    pthread_mutex_lock(&registry);
    for (int i = 0; i < s->n; ++i) {
        out_file *f = s->files[i];
        if (f->named)
            unlinkat(f->dirfd, f->tmp, 0);
        f->named = 0;
    }
    live = NULL;
    pthread_mutex_unlock(&registry);
    for (int i = 0; i < s->n; ++i)
        file_free(s->files[i]);
    s->n = 0;
}
