/* cache.c: the cache folder clnz keeps tuning results and compiled programs
 * in, and the file primitives both use: checksums, whole-file reads and
 * atomic writes (temporary file, then rename), and their cleaning: a
 * damaged file removed only if it is still the one read, and temporaries
 * removed only once their writer is gone. Paths are built to their
 * length: a long CLNZ_CACHE_DIR is used whole or not at all.
 *
 * A temporary is "<target>.tmp-XXXXXX" (mkostemp's six letters or digits).
 * Its writer holds an flock on it from creation to rename, so a cleaner
 * (the next write in the folder, or `cache --clear`) tells one whose
 * writer was killed (no lock: removed, whatever its size) from one being
 * written (locked: left alone). */
#define _GNU_SOURCE
#include "core/cache.h"
#include "clnz.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#define TMP_SUFFIX ".tmp-XXXXXX"
enum { TMP_RANDOM = 6 };

/* The folder the environment names, however long (malloc'd), or NULL. */
static char *dir_named(void)
{
    const char *dir = getenv("CLNZ_CACHE_DIR");
    const char *xdg = getenv("XDG_CACHE_HOME");
    const char *home = getenv("HOME");
    if (dir && *dir)
        return strdup(dir);
    if (xdg && *xdg == '/') /* the XDG spec: a relative path is to be ignored */
        return cache_path(xdg, "clnz");
    if (home && *home)
        return cache_path(home, ".cache/clnz");
    return NULL;
}

char *cache_dir_resolve(int *too_long)
{
    char *out = dir_named();
    *too_long = 0;
    if (out && strlen(out) >= PATH_MAX) {
        free(out);
        out = NULL;
        *too_long = 1;
    }
    return out;
}

char *cache_path(const char *dir, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    size_t dl = strlen(dir);
    char *p = n < 0 ? NULL : malloc(dl + 1 + (size_t)n + 1);
    if (!p)
        return NULL;
    memcpy(p, dir, dl);
    p[dl] = '/';
    va_start(ap, fmt);
    vsnprintf(p + dl + 1, (size_t)n + 1, fmt, ap);
    va_end(ap);
    return p;
}

int cache_mkdirs(const char *dir)
{
    char *path = strdup(dir);
    if (!path)
        return ENOMEM;
    int err = 0;
    for (char *p = path + 1; *p && !err; ++p) {
        if (*p != '/')
            continue;
        *p = '\0';
        if (mkdir(path, 0755) != 0 && errno != EEXIST)
            err = errno;
        *p = '/';
    }
    struct stat sb;
    if (!err && mkdir(path, 0755) != 0 && errno != EEXIST)
        err = errno;
    if (!err && stat(path, &sb) != 0)
        err = errno;
    if (!err && !S_ISDIR(sb.st_mode))
        err = ENOTDIR;
    free(path);
    return err;
}

uint64_t cache_hash(const void *data, size_t n, uint64_t h)
{
    const unsigned char *p = data;
    for (size_t i = 0; i < n; ++i) {
        h ^= p[i];
        h *= 0x100000001b3ULL;
    }
    return h;
}

char *cache_read_file(const char *path, size_t max, size_t *size)
{
    return cache_read_file_at(AT_FDCWD, path, max, size);
}

char *cache_read_file_at(int dirfd, const char *path, size_t max, size_t *size)
{
    int fd = -1;
    char *buf = cache_read_file_fd(dirfd, path, max, size, &fd);
    if (fd >= 0)
        close(fd);
    return buf;
}

char *cache_read_file_fd(int dirfd, const char *path, size_t max, size_t *size, int *fd_out)
{
    *fd_out = -1;
    /* without blocking: a FIFO put in the cache's place must not hang every run */
    int fd = openat(dirfd, path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
    if (fd < 0)
        return NULL;
    struct stat sb;
    char *buf = NULL;
    if (fstat(fd, &sb) == 0 && S_ISREG(sb.st_mode) && (uint64_t)sb.st_size <= max)
        buf = malloc((size_t)sb.st_size + 1);
    size_t n = 0;
    while (buf && n < (size_t)sb.st_size) {
        ssize_t r = read(fd, buf + n, (size_t)sb.st_size - n);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0) { /* an error, or the file shrank: not the file it claimed to be */
            free(buf);
            buf = NULL;
            break;
        }
        n += (size_t)r;
    }
    if (buf) {
        buf[n] = '\0';
        *size = n;
        *fd_out = fd;
    } else {
        close(fd);
    }
    return buf;
}

/* A new temporary beside path (its name left in tmp), locked; -1 and errno
 * if none can be made. A cleaner may take one in the moment between
 * mkostemp and flock, when it is not locked yet: it then has no name left
 * (st_nlink 0) and we make another. */
static int open_locked_temp(const char *path, char *tmp)
{
    for (int tries = 0; tries < 100; ++tries) {
        sprintf(tmp, "%s" TMP_SUFFIX, path);
        int fd = mkostemp(tmp, O_CLOEXEC);
        if (fd < 0)
            return -1;
        /* a file system without flock fails it for the cleaners as well,
         * which then leave every temporary: so go on unlocked */
        while (flock(fd, LOCK_EX) != 0 && errno == EINTR) {
        }
        struct stat sb;
        if (fstat(fd, &sb) == 0 && sb.st_nlink > 0)
            return fd;
        close(fd);
    }
    errno = EEXIST;
    return -1;
}

/* The umask, as a file the process creates gets it (mkstemp's are 0600
 * whatever it is): read from /proc, since umask() itself would set it, a
 * race with other threads creating files. 022 where /proc says nothing. */
static mode_t process_umask(void)
{
    mode_t mask = 022;
    FILE *f = fopen("/proc/self/status", "re");
    char line[128];
    unsigned m;
    while (f && fgets(line, sizeof line, f))
        if (sscanf(line, "Umask: %o", &m) == 1) {
            mask = (mode_t)(m & 0777);
            break;
        }
    if (f)
        fclose(f);
    return mask;
}

int cache_write_atomic(const char *path, const void *data, size_t n)
{
    struct stat sb;
    if (lstat(path, &sb) == 0 && !S_ISREG(sb.st_mode))
        return EEXIST; /* a FIFO, a folder, a link: not ours to replace */
    char *tmp = malloc(strlen(path) + sizeof TMP_SUFFIX);
    if (!tmp)
        return ENOMEM;
    int fd = open_locked_temp(path, tmp);
    if (fd < 0) {
        int e = errno;
        free(tmp);
        return e;
    }
    const char *p = data;
    size_t left = n;
    int err = 0;
    while (left && !err) {
        ssize_t w = write(fd, p, left);
        if (w < 0 && errno != EINTR)
            err = errno;
        else if (w > 0)
            p += w, left -= (size_t)w;
    }
    if (!err && fchmod(fd, 0666 & ~process_umask()) != 0)
        err = errno;
    /* The lock lives while any descriptor of this open file does: `held`
     * keeps it to the rename, while closing fd still reports a deferred
     * write error (NFS) before anything is renamed. */
    int held = err ? -1 : fcntl(fd, F_DUPFD_CLOEXEC, 0);
    if (!err && held < 0)
        err = errno;
    if (close(fd) != 0 && !err)
        err = errno;
    if (!err && rename(tmp, path) != 0)
        err = errno;
    if (err)
        unlink(tmp);
    if (held >= 0)
        close(held);
    free(tmp);
    return err;
}

void cache_remove_read(const char *path, int fd)
{
    /* Unlinking path after a check that it names fd's file would leave a
     * writer's rename room to land between the two, and a good file would
     * go. So whatever path names is first moved to a name of our own
     * (rename is atomic) and looked at there, where nobody else renames:
     * the file that was read is removed, anything else put back unless a
     * newer file has come meanwhile (link never replaces). fd stays open
     * until then, so its inode cannot be freed and reused by a new file. */
    struct stat was, moved;
    char *aside = malloc(strlen(path) + sizeof TMP_SUFFIX);
    if (!aside || fstat(fd, &was) != 0) {
        free(aside);
        return;
    }
    /* a temporary's name: if we die before the end, the cleaners take it */
    sprintf(aside, "%s" TMP_SUFFIX, path);
    int placeholder = mkostemp(aside, O_CLOEXEC);
    if (placeholder >= 0)
        close(placeholder);
    if (placeholder < 0 || rename(path, aside) != 0) {
        if (placeholder >= 0)
            unlink(aside); /* path is gone already */
        free(aside);
        return;
    }
    if (lstat(aside, &moved) == 0 && (moved.st_dev != was.st_dev || moved.st_ino != was.st_ino) &&
        link(aside, path) != 0 && errno != EEXIST)
        rename(aside, path); /* no hard links here: put back even over a newer one */
    unlink(aside);
    free(aside);
}

void cache_sanitize(const char *in, char *out, size_t n)
{
    size_t k = 0;
    for (; *in && k + 1 < n; ++in) {
        char c = *in;
        int ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                 c == '-' || c == '.';
        out[k++] = ok ? c : '_';
    }
    out[k] = '\0';
}

const char *clnz_cache_dir(char *buf, size_t size)
{
    if (!buf || !size)
        return "";
    char *dir = dir_named();
    /* a path that does not fit is no path: never a cut one */
    snprintf(buf, size, "%s", dir && strlen(dir) < size ? dir : "");
    free(dir);
    return buf;
}

/* Whether name is one cache_write_atomic gives its temporaries. */
static int is_temp_name(const char *name)
{
    size_t n = strlen(name), k = sizeof TMP_SUFFIX - 1;
    if (n <= k || memcmp(name + n - k, TMP_SUFFIX, k - TMP_RANDOM) != 0)
        return 0;
    for (const char *c = name + n - TMP_RANDOM; *c; ++c)
        if (!((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9')))
            return 0;
    return 1;
}

/* Removes name from the folder open as dirfd if it is clnz's: a regular
 * file (not followed through a symlink) that starts with magic, or, for a
 * temporary, holds the start of magic or nothing yet (killed before its
 * first write) and is locked by no writer. Finished files only with
 * `finished` (clear; a sweep leaves them). 1 if it was removed, -1 if it
 * was clnz's and could not be, 0 if it was not clnz's (or is gone). */
static int remove_if_ours(int dirfd, const char *name, const char *magic, int finished)
{
    int temp = is_temp_name(name);
    if (!temp && !finished)
        return 0;
    int fd = openat(dirfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
    if (fd < 0)
        return 0;
    size_t n = strlen(magic);
    char head[32];
    struct stat sb, now;
    ssize_t got = -1;
    if (fstat(fd, &sb) == 0 && S_ISREG(sb.st_mode) && n <= sizeof head)
        got = pread(fd, head, n, 0);
    int ours = temp ? got >= 0 && memcmp(head, magic, (size_t)got) == 0 &&
                          flock(fd, LOCK_EX | LOCK_NB) == 0
                    : got == (ssize_t)n && memcmp(head, magic, n) == 0;
    /* unlinkat goes by name: only while it still names the file judged
     * (and, for a temporary, locked) here */
    int same = ours && fstatat(dirfd, name, &now, AT_SYMLINK_NOFOLLOW) == 0 &&
               now.st_dev == sb.st_dev && now.st_ino == sb.st_ino;
    int gone = same && unlinkat(dirfd, name, 0) == 0;
    int kept = same && !gone && errno != ENOENT; /* a read-only folder, say */
    close(fd);
    return gone ? 1 : kept ? -1 : 0;
}

/* remove_if_ours over every entry of folder; the number removed, and in
 * *kept (may be NULL) how many of its own files it could not remove. */
static int clean_folder(const char *folder, const char *magic, int finished, int *kept)
{
    int dfd = open(folder, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    DIR *d = dfd >= 0 ? fdopendir(dfd) : NULL;
    if (!d) {
        /* one it may not list: its files stay (ENOTDIR: a file where a
         * folder of the path should be holds no files of clnz's) */
        if (dfd < 0 && errno != ENOENT && errno != ENOTDIR && kept)
            ++*kept;
        if (dfd >= 0)
            close(dfd);
        return 0;
    }
    int n = 0;
    for (struct dirent *e; (e = readdir(d));) {
        int r = strcmp(e->d_name, ".") && strcmp(e->d_name, "..")
                    ? remove_if_ours(dfd, e->d_name, magic, finished)
                    : 0;
        n += r > 0;
        if (r < 0 && kept)
            ++*kept;
    }
    closedir(d);
    return n;
}

int cache_remove_stale(const char *folder, const char *magic)
{
    return clean_folder(folder, magic, 0, NULL);
}

/* Removes the files clnz wrote in one subfolder, and its dead temporaries. */
static int clear_folder(const char *dir, const char *sub, const char *magic, int *kept)
{
    char *path = cache_path(dir, "%s", sub);
    int n = path ? clean_folder(path, magic, 1, kept) : 0;
    free(path);
    return n;
}

clnz_status clnz_cache_clear(int *removed)
{
    int too_long, n = 0, kept = 0;
    char *dir = cache_dir_resolve(&too_long);
    struct stat sb;
    /* a file, or a path through one: nothing of clnz's can be there (its
     * subfolders failed with ENOTDIR, counted as files it could not
     * remove, and then not at all: "removed 0 files") */
    int no_folder = dir && (stat(dir, &sb) == 0 ? !S_ISDIR(sb.st_mode) : errno == ENOTDIR);
    if (dir && !no_folder) {
        n += clear_folder(dir, "tuning", CACHE_MAGIC_TUNING, &kept);
        n += clear_folder(dir, "programs", CACHE_MAGIC_PROGRAM, &kept);
    }
    free(dir);
    if (removed)
        *removed = n;
    return too_long || no_folder ? CLNZ_ERROR_INVALID_VALUE
           : kept                ? CLNZ_ERROR_CACHE_FILE
                                 : CLNZ_SUCCESS;
}
