/* output_dir.c: a folder output (a program bundle), all or nothing.
 *
 * The files are written into a temporary folder (output_tmp.h's name)
 * beside the target, locked (flock) by this process for its life, so that
 * a later run can tell one whose writer was killed and remove it. The
 * commit swaps it in with one rename (renameat2: RENAME_NOREPLACE for a new
 * target, RENAME_EXCHANGE for one it replaces, whose old files are then
 * removed), under output.c's registry lock: SIGINT and the like wait for
 * it, then find either the temporary (removed) or the finished folder. */
#define _GNU_SOURCE
#include "io/output_dir.h"
#include "io/output_tmp.h"
#include "io/io.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

struct out_dir {
    char *path;   /* as given, for messages */
    int parent;   /* the folder that holds the target */
    char *base;   /* the target's name in it */
    char *parent_name; /* the parent, quoted for messages */
    int exists;   /* the target is there (empty, or the caller's) */
    mode_t mode;  /* its mode, which the new folder keeps */
    char tmp[TMP_NAME + 1];
    int tmpfd;    /* the temporary folder, open and locked */
    int named;    /* tmp names our folder in parent (changed under the registry lock) */
};

static out_dir *live; /* the folder the signal thread removes */

#define FAIL(...)                             \
    do {                                      \
        snprintf(err, err_size, __VA_ARGS__); \
        return -1;                            \
    } while (0)

/* Removes a folder of regular files: 0, or -1 (and the folder stays) when
 * it holds anything else. */
static int remove_folder(int parent, const char *name)
{
    int fd = openat(parent, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
    if (!d) {
        if (fd >= 0)
            close(fd);
        return -1;
    }
    int other = 0;
    for (struct dirent *e; (e = readdir(d));) {
        struct stat sb;
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
            continue;
        if (fstatat(fd, e->d_name, &sb, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(sb.st_mode))
            unlinkat(fd, e->d_name, 0);
        else
            other = 1;
    }
    closedir(d);
    return other ? -1 : unlinkat(parent, name, AT_REMOVEDIR);
}

static void on_signal(void)
{
    if (live && live->named)
        remove_folder(live->parent, live->tmp);
}

void out_dir_remove_if_stale(int dirfd, const char *name, int fd)
{
    struct stat sb, now;
    if (fstat(fd, &sb) == 0 && sb.st_uid == geteuid() && flock(fd, LOCK_EX | LOCK_NB) == 0 &&
        fstatat(dirfd, name, &now, AT_SYMLINK_NOFOLLOW) == 0 && now.st_dev == sb.st_dev &&
        now.st_ino == sb.st_ino)
        remove_folder(dirfd, name);
}

/* 1 if the folder is empty. */
static int is_empty(int fd)
{
    int copy = dup(fd);
    DIR *d = copy >= 0 ? fdopendir(copy) : NULL;
    if (!d) {
        if (copy >= 0)
            close(copy);
        return 0;
    }
    int n = 0;
    for (struct dirent *e; (e = readdir(d));)
        n += strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0;
    closedir(d);
    return n == 0;
}

/* The target, symlinks followed (a new one: the path as given, without
 * trailing slashes), and whether it exists. */
static char *resolve(const char *path, struct stat *sb, int *exists)
{
    char *p = strdup(path);
    if (!p)
        return NULL;
    for (size_t n = strlen(p); n > 1 && p[n - 1] == '/'; --n)
        p[n - 1] = '\0';
    *exists = stat(p, sb) == 0;
    if (!*exists || !S_ISDIR(sb->st_mode))
        return p;
    char *real = realpath(p, NULL); /* a symlink's folder is the one replaced */
    free(p);
    return real;
}

/* The checks on an existing target, and the folder it lives in. */
static int check_target(out_dir *d, const char *target, const struct stat *sb, out_dir_ours ours,
                        char *err, size_t err_size)
{
    char q[IO_QUOTE_MAX], qp[IO_QUOTE_MAX];
    const char *name = io_quote(d->path, qp, sizeof qp);
    if (d->exists && !S_ISDIR(sb->st_mode))
        FAIL("%s exists and is not a folder: a bundle is written as a folder", name);
    if (d->exists) {
        int fd = open(target, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        int mine = fd >= 0 && (is_empty(fd) || ours(fd));
        if (fd >= 0)
            close(fd);
        if (!mine)
            FAIL("%s is a folder clnz did not make: it replaces only an empty folder or a bundle "
                 "of its own (pick another name, or empty it)", name);
        if (access(target, W_OK) != 0)
            FAIL("cannot replace %s: %s", name, strerror(errno));
        d->mode = sb->st_mode & 07777;
    }
    const char *slash = strrchr(target, '/');
    const char *base = slash ? slash + 1 : target;
    if (!*base || strcmp(base, ".") == 0 || strcmp(base, "..") == 0)
        FAIL("%s is no folder name", name);
    char *dir = slash ? strndup(target, slash == target ? 1 : (size_t)(slash - target))
                      : strdup(".");
    d->base = strdup(base);
    if (!dir || !d->base) {
        free(dir);
        FAIL("out of memory");
    }
    d->parent = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    int e = errno;
    d->parent_name = strdup(io_quote(dir, q, sizeof q));
    free(dir);
    if (!d->parent_name)
        FAIL("out of memory");
    if (d->parent < 0)
        FAIL("cannot write %s: folder %s: %s", name, d->parent_name, strerror(e));
    return 0;
}

/* The temporary folder, made and locked; a cleaner that removed it between
 * the two (it was empty and unlocked) makes us try another name. */
static int make_temp(out_dir *d)
{
    for (int tries = 0; tries < 100; ++tries) {
        out_registry_lock();
        out_tmp_name(d->tmp);
        int made = mkdirat(d->parent, d->tmp, 0777) == 0; /* less the umask */
        d->named = made;
        int e = errno;
        out_registry_unlock();
        if (!made && e == EEXIST)
            continue;
        if (!made)
            return errno = e, -1;
        d->tmpfd = openat(d->parent, d->tmp, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        struct stat sb;
        if (d->tmpfd >= 0 && flock(d->tmpfd, LOCK_EX) == 0 && fstat(d->tmpfd, &sb) == 0 &&
            sb.st_nlink > 0)
            return d->exists && fchmod(d->tmpfd, d->mode) != 0 ? -1 : 0;
        if (d->tmpfd >= 0)
            close(d->tmpfd);
        d->tmpfd = -1;
        out_registry_lock();
        d->named = 0;
        out_registry_unlock();
    }
    errno = EEXIST;
    return -1;
}

out_dir *out_dir_begin(const char *path, out_dir_ours ours, char *err, size_t err_size)
{
    out_signals_install();
    out_dir *d = calloc(1, sizeof *d);
    if (!d || !(d->path = strdup(path))) {
        free(d);
        snprintf(err, err_size, "out of memory");
        return NULL;
    }
    d->parent = d->tmpfd = -1;
    char q[IO_QUOTE_MAX];
    struct stat sb;
    char *target = resolve(path, &sb, &d->exists);
    int rc = target ? check_target(d, target, &sb, ours, err, err_size) : -1;
    if (!target)
        snprintf(err, err_size, "cannot write %s: %s", io_quote(path, q, sizeof q),
                 strerror(errno));
    free(target);
    if (!rc) {
        out_remove_stale(d->parent);
        out_registry_lock();
        live = d;
        out_set_signal_hook(on_signal);
        out_registry_unlock();
        if (make_temp(d) != 0) {
            snprintf(err, err_size, "cannot write %s: no folder can be created in folder %s "
                     "(the bundle is written there first, then renamed into place): %s",
                     io_quote(path, q, sizeof q), d->parent_name, strerror(errno));
            rc = -1;
        }
    }
    if (rc) {
        out_dir_discard(d);
        return NULL;
    }
    return d;
}

int out_dir_file(out_dir *d, const char *name, const void *data, size_t size, char *err,
                 size_t err_size)
{
    char q[IO_QUOTE_MAX];
    if (!*name || strchr(name, '/') || strcmp(name, ".") == 0 || strcmp(name, "..") == 0)
        FAIL("no file name: '%s'", name);
    /* under the registry lock: the signal thread, which empties and removes
     * the temporary folder, must not run while a file is being made in it
     * (the folder, not empty again, would stay: seen 1 SIGINT in 40) */
    out_registry_lock();
    out_registry_stop_if_signalled();
    int fd = openat(d->tmpfd, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0666);
    int bad = fd < 0 || out_write_all(fd, data, size) != 0 || (fsync(fd) != 0 && errno != EINVAL);
    int e = errno;
    if (fd >= 0 && close(fd) != 0 && !bad)
        bad = 1, e = errno;
    out_registry_unlock();
    if (bad)
        FAIL("cannot write %s in %s: %s", name, io_quote(d->path, q, sizeof q), strerror(e));
    return 0;
}

/* The swap itself, under the registry lock. */
static int swap_in(out_dir *d)
{
    if (!d->exists) {
        if (renameat2(d->parent, d->tmp, d->parent, d->base, RENAME_NOREPLACE) == 0)
            return 0;
        if (errno != EINVAL && errno != ENOSYS)
            return -1;
        struct stat sb; /* a file system without the flag: check, then rename */
        if (fstatat(d->parent, d->base, &sb, AT_SYMLINK_NOFOLLOW) == 0)
            return errno = EEXIST, -1;
        return renameat(d->parent, d->tmp, d->parent, d->base);
    }
    if (renameat2(d->parent, d->tmp, d->parent, d->base, RENAME_EXCHANGE) == 0)
        return remove_folder(d->parent, d->tmp), 0; /* tmp names the old folder now */
    if (errno != EINVAL && errno != ENOSYS)
        return -1;
    char old[TMP_NAME + 1]; /* without the flag: the old one aside, the new one in */
    out_tmp_name(old);
    if (renameat(d->parent, d->base, d->parent, old) != 0)
        return -1;
    if (renameat(d->parent, d->tmp, d->parent, d->base) != 0) {
        int e = errno;
        renameat(d->parent, old, d->parent, d->base);
        return errno = e, -1;
    }
    remove_folder(d->parent, old);
    return 0;
}

int out_dir_commit(out_dir *d, char *err, size_t err_size)
{
    char q[IO_QUOTE_MAX];
    if (fsync(d->tmpfd) != 0 && errno != EINVAL)
        FAIL("cannot write %s: %s", io_quote(d->path, q, sizeof q), strerror(errno));
    out_registry_lock();
    out_registry_stop_if_signalled();
    int rc = swap_in(d);
    int e = errno;
    if (!rc)
        d->named = 0;
    out_registry_stop_if_signalled();
    out_registry_unlock();
    if (rc)
        FAIL("cannot put %s in place: %s", io_quote(d->path, q, sizeof q),
             e == EEXIST || e == ENOTEMPTY ? "something else took its name meanwhile" : strerror(e));
    fsync(d->parent);
    return 0;
}

void out_dir_discard(out_dir *d)
{
    if (!d)
        return;
    out_registry_lock();
    if (d->named)
        remove_folder(d->parent, d->tmp);
    d->named = 0;
    if (live == d)
        live = NULL;
    out_registry_unlock();
    if (d->tmpfd >= 0)
        close(d->tmpfd);
    if (d->parent >= 0)
        close(d->parent);
    free(d->path);
    free(d->base);
    free(d->parent_name);
    free(d);
}
