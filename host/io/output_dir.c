/* output_dir.c: a folder output (a program bundle), all or nothing.
 *
 * The files are written into a temporary folder (output_tmp.h's name)
 * beside the target, locked (flock) by this process for its life, so that
 * a later run can tell one whose writer was killed and remove it. The
 * commit swaps it in with one rename (renameat2: RENAME_NOREPLACE for a new
 * target, RENAME_EXCHANGE for one it replaces, whose old folder is then
 * checked again and removed: settle_old), under output.c's registry lock:
 * SIGINT and the like wait for it, then find either the temporary
 * (removed) or the finished folder.
 *
 * Other processes may write into the target at any time (a user adds a
 * file while a build compiles). Two rules make that safe in every order of
 * events: clnz deletes only names a bundle's files have (out_dir_own_name),
 * and removes a folder only with rmdir, which fails while it holds
 * anything; so nothing else is ever deleted, whatever a race brings into a
 * folder clnz removes. The rest of the care (settle_old) is that such
 * things end up where the user can see them, not in a hidden temporary. */
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
    char *path;        /* as given, for messages */
    int parent;        /* the folder that holds the target */
    char *dir;         /* its path, for messages */
    char *base;        /* the target's name in it */
    int exists;        /* the target is there (empty, or the caller's) */
    mode_t mode;       /* its mode, which the new folder keeps */
    out_dir_ours ours; /* the caller's test of a folder it may replace */
    char tmp[TMP_NAME + 1];
    int tmpfd; /* the temporary folder, open and locked */
    int named; /* tmp names our folder in parent (changed under the registry lock) */
};

static out_dir *live; /* the folder the signal thread removes */

#define FAIL(...)                             \
    do {                                      \
        snprintf(err, err_size, __VA_ARGS__); \
        return -1;                            \
    } while (0)

int out_dir_own_name(const char *name)
{
    size_t digits = strspn(name, "0123456789");
    const char *dot = strrchr(name, '.');
    return strcmp(name, "manifest.txt") == 0 ||
           (digits > 0 && name[digits] == '-' && dot &&
            (strcmp(dot, ".bin") == 0 || strcmp(dot, ".cl") == 0));
}

/* The folder open as fd, read from its first entry (a copy of fd shares
 * its position, which an earlier reading left at the end), or NULL. */
static DIR *read_folder(int fd)
{
    int copy = dup(fd);
    DIR *d = copy >= 0 ? fdopendir(copy) : NULL;
    if (!d && copy >= 0)
        close(copy);
    if (d)
        rewinddir(d);
    return d;
}

/* Deletes the files of ours in the folder open as fd: only those names
 * (a folder of that name stays: unlinkat without AT_REMOVEDIR fails). */
static void remove_own(int fd)
{
    DIR *d = read_folder(fd);
    for (struct dirent *e; d && (e = readdir(d));)
        if (out_dir_own_name(e->d_name))
            unlinkat(fd, e->d_name, 0);
    if (d)
        closedir(d);
}

/* A rename that never replaces what holds the new name (EEXIST). */
static int rename_noreplace(int fromdir, const char *from, int todir, const char *to)
{
    if (renameat2(fromdir, from, todir, to, RENAME_NOREPLACE) == 0)
        return 0;
    if (errno != EINVAL && errno != ENOSYS)
        return -1;
    struct stat sb; /* a file system without the flag: check, then rename */
    if (fstatat(todir, to, &sb, AT_SYMLINK_NOFOLLOW) == 0)
        return errno = EEXIST, -1;
    return renameat(fromdir, from, todir, to);
}

/* Moves what the folder open as `from` holds into `to`, under the same
 * names (one taken there stays): how many moved. */
static int move_all(int from, int to)
{
    int moved = 0;
    DIR *d = read_folder(from);
    for (struct dirent *e; d && (e = readdir(d));)
        if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0)
            moved += rename_noreplace(from, e->d_name, to, e->d_name) == 0;
    if (d)
        closedir(d);
    return moved;
}

/* Removes folder `name` of parent, open as fd: our files deleted, then
 * rmdir. What else it holds (there already, or arriving meanwhile) is
 * moved into the folder open as `into`, and rmdir tried again, a few
 * times; into -1 keeps it where it is. 0 once the folder is gone. */
static int empty_and_remove(int parent, const char *name, int fd, int into)
{
    for (int tries = 0; tries < 4; ++tries) {
        remove_own(fd);
        if (unlinkat(parent, name, AT_REMOVEDIR) == 0 || errno == ENOENT)
            return 0;
        if (into < 0 || (errno != ENOTEMPTY && errno != EEXIST) || move_all(fd, into) == 0)
            return -1;
    }
    return -1;
}

/* Removes a folder of ours: 0, or -1 (and the folder stays, with whatever
 * it holds that is not ours). */
static int remove_folder(int parent, const char *name)
{
    int fd = openat(parent, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0)
        return -1;
    int rc = empty_and_remove(parent, name, fd, -1);
    close(fd);
    return rc;
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
    DIR *d = read_folder(fd);
    int n = 0;
    for (struct dirent *e; d && (e = readdir(d));)
        n += strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0;
    if (d)
        closedir(d);
    return d && n == 0;
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
    d->dir = dir;
    if (!dir || !d->base)
        FAIL("out of memory");
    d->parent = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (d->parent < 0)
        FAIL("cannot write %s: folder %s: %s", name, io_quote(dir, q, sizeof q), strerror(errno));
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
    d->ours = ours;
    char q[IO_QUOTE_MAX], qd[IO_QUOTE_MAX];
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
                     io_quote(path, q, sizeof q), io_quote(d->dir, qd, sizeof qd),
                     strerror(errno));
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
    if (!out_dir_own_name(name) || strchr(name, '/')) /* only what a removal deletes again */
        FAIL("not a name of a bundle's file: %s", io_quote(name, q, sizeof q));
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

/* The rename into the target's name failed (errno): -1 and why. */
static int put_failed(const out_dir *d, char *err, size_t err_size)
{
    char q[IO_QUOTE_MAX];
    FAIL("cannot put %s in place: %s", io_quote(d->path, q, sizeof q),
         errno == EEXIST || errno == ENOTEMPTY ? "something else took its name meanwhile"
                                               : strerror(errno));
}

/* A new target: the folder renamed in, never over what took the name. */
static int put_new(out_dir *d, char *err, size_t err_size)
{
    if (rename_noreplace(d->parent, d->tmp, d->parent, d->base) != 0)
        return put_failed(d, err, err_size);
    d->named = 0;
    return 0;
}

/* The new folder at the target's name, the target's folder at `old`: one
 * RENAME_EXCHANGE (old is tmp then), or on a file system without it, the
 * old folder renamed aside, then the new one in. */
static int exchange(out_dir *d, char old[TMP_NAME + 1])
{
    memcpy(old, d->tmp, sizeof d->tmp);
    if (renameat2(d->parent, d->tmp, d->parent, d->base, RENAME_EXCHANGE) == 0)
        return 0;
    if (errno != EINVAL && errno != ENOSYS)
        return -1;
    out_tmp_name(old);
    if (rename_noreplace(d->parent, d->base, d->parent, old) != 0)
        return -1;
    if (rename_noreplace(d->parent, d->tmp, d->parent, d->base) == 0)
        return 0;
    int e = errno;
    rename_noreplace(d->parent, old, d->parent, d->base);
    return errno = e, -1;
}

/* Undoes exchange: the old folder at the target's name, the new at tmp. */
static int exchange_back(out_dir *d, const char *old)
{
    if (strcmp(old, d->tmp) == 0)
        return renameat2(d->parent, d->tmp, d->parent, d->base, RENAME_EXCHANGE);
    if (rename_noreplace(d->parent, d->base, d->parent, d->tmp) != 0)
        return -1;
    return rename_noreplace(d->parent, old, d->parent, d->base);
}

/* The path of `name` in the target's folder, for messages. */
static void in_parent(const out_dir *d, const char *name, char *buf, size_t n)
{
    size_t len = strlen(d->dir);
    snprintf(buf, n, "%s%s%s", d->dir, len && d->dir[len - 1] == '/' ? "" : "/", name);
}

/* After the exchange, `old` names the folder that was the target. It was
 * checked when writing began, but minutes of compiling may lie between,
 * and what a user put in it since must not go with it. Checked again now
 * that the target's name leads to the new folder (a writer that looks it
 * up from now on writes there):
 * - anything not ours (or it cannot be read): exchanged back, so the
 *   target is again the folder as its user left it, and the commit fails;
 *   what was written into the new folder in the instant it was the target
 *   is moved over with it;
 * - ours (a bundle, or empty): our files deleted and the folder removed.
 *   Something that arrives after the check (from a writer that looked up
 *   the path before the exchange, or holds the folder open) is never
 *   deleted: remove_own passes it by and rmdir fails; it is then moved into
 *   the new folder, where it would have gone a moment later, and rmdir
 *   tried again. What still cannot go (its name taken, or it keeps coming)
 *   stays in `old`, which the error names: never hidden without a word.
 * A sweep of stale temporaries by another run (old has a temporary's name)
 * may delete our files first, never anything else: the lock taken here
 * mostly keeps it off; without it (a run that made the folder, still
 * holding it) the check may see a half-removed bundle as not ours, and
 * puts it back: a failure, nothing lost. */
static int settle_old(out_dir *d, const char *old, char *err, size_t err_size)
{
    char q[IO_QUOTE_MAX], qo[IO_QUOTE_MAX], where[PATH_MAX];
    const char *name = io_quote(d->path, q, sizeof q);
    in_parent(d, old, where, sizeof where);
    int fd = openat(d->parent, old, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    int e = errno;
    if (fd < 0 && e == ENOENT) /* removed by a sweep: it was empty then */
        return d->named = 0, 0;
    if (fd >= 0)
        flock(fd, LOCK_EX | LOCK_NB);
    if (fd >= 0 && (is_empty(fd) || d->ours(fd))) {
        int rc = empty_and_remove(d->parent, old, fd, d->tmpfd);
        close(fd);
        d->named = 0;
        if (rc)
            FAIL("%s is in place, but things clnz did not make were put in the folder it "
                 "replaced while that was being removed: they are in %s", name,
                 io_quote(where, qo, sizeof qo));
        return 0;
    }
    if (exchange_back(d, old) != 0) {
        if (fd >= 0)
            close(fd);
        d->named = 0;
        FAIL("%s changed while the bundle was made (it holds files clnz did not make), and "
             "could not be put back: it is %s now (%s)", name, io_quote(where, qo, sizeof qo),
             strerror(errno));
    }
    d->named = empty_and_remove(d->parent, d->tmp, d->tmpfd, fd) != 0;
    if (fd >= 0)
        close(fd);
    in_parent(d, d->tmp, where, sizeof where);
    FAIL("%s changed while the bundle was made (%s): it is left as it was, and a bundle "
         "replaces only an empty folder or a bundle of its own%s%s", name,
         fd >= 0 ? "it holds files clnz did not make now" : strerror(e),
         d->named ? "; what was written into it meanwhile is in " : "",
         d->named ? io_quote(where, qo, sizeof qo) : "");
}

/* An existing target replaced: exchanged, then its old folder settled. */
static int replace(out_dir *d, char *err, size_t err_size)
{
    char old[TMP_NAME + 1];
    if (exchange(d, old) != 0)
        return put_failed(d, err, err_size);
    return settle_old(d, old, err, err_size);
}

int out_dir_commit(out_dir *d, char *err, size_t err_size)
{
    char q[IO_QUOTE_MAX];
    if (fsync(d->tmpfd) != 0 && errno != EINVAL)
        FAIL("cannot write %s: %s", io_quote(d->path, q, sizeof q), strerror(errno));
    out_registry_lock();
    out_registry_stop_if_signalled();
    int rc = d->exists ? replace(d, err, err_size) : put_new(d, err, err_size);
    out_registry_stop_if_signalled();
    out_registry_unlock();
    fsync(d->parent);
    return rc;
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
    free(d->dir);
    free(d);
}
