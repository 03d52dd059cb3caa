/* cache.c: the cache folder clnz keeps tuning results and compiled programs
 * in, and the file primitives both use: checksums, whole-file reads and
 * atomic writes (temporary file, then rename). Paths are built to their
 * length: a long CLNZ_CACHE_DIR is used whole or not at all. */
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
#include <sys/stat.h>
#include <unistd.h>

/* The folder the environment names, however long (malloc'd), or NULL. */
static char *dir_named(void)
{
    const char *dir = getenv("CLNZ_CACHE_DIR");
    const char *xdg = getenv("XDG_CACHE_HOME");
    const char *home = getenv("HOME");
    if (dir && *dir)
        return strdup(dir);
    if (xdg && *xdg)
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
    close(fd);
    if (buf) {
        buf[n] = '\0';
        *size = n;
    }
    return buf;
}

int cache_write_atomic(const char *path, const void *data, size_t n)
{
    struct stat sb;
    if (lstat(path, &sb) == 0 && !S_ISREG(sb.st_mode))
        return EEXIST; /* a FIFO, a folder, a link: not ours to replace */
    char *tmp = malloc(strlen(path) + sizeof ".tmp-XXXXXX");
    if (!tmp)
        return ENOMEM;
    sprintf(tmp, "%s.tmp-XXXXXX", path);
    int fd = mkstemp(tmp);
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
    if (!err && fchmod(fd, 0644) != 0)
        err = errno;
    if (close(fd) != 0 && !err)
        err = errno;
    if (!err && rename(tmp, path) != 0)
        err = errno;
    if (err)
        unlink(tmp);
    free(tmp);
    return err;
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

/* A regular file (not followed through a symlink) that starts with magic:
 * one clnz wrote, whatever its name (a finished file, or the temporary of
 * a writer that died). */
static int written_by_clnz(int dirfd, const char *name, const char *magic)
{
    int fd = openat(dirfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
    if (fd < 0)
        return 0;
    size_t n = strlen(magic);
    char head[32];
    struct stat sb;
    int ours = fstat(fd, &sb) == 0 && S_ISREG(sb.st_mode) && n <= sizeof head &&
               pread(fd, head, n, 0) == (ssize_t)n && memcmp(head, magic, n) == 0;
    close(fd);
    return ours;
}

/* Removes the files clnz wrote in one subfolder, recognised by content. */
static int clear_folder(const char *dir, const char *sub, const char *magic)
{
    char *path = cache_path(dir, "%s", sub);
    int dfd = path ? open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC) : -1;
    free(path);
    DIR *d = dfd >= 0 ? fdopendir(dfd) : NULL;
    if (!d) {
        if (dfd >= 0)
            close(dfd);
        return 0;
    }
    int n = 0;
    for (struct dirent *e; (e = readdir(d));)
        if (e->d_name[0] != '.' || (strcmp(e->d_name, ".") && strcmp(e->d_name, "..")))
            if (written_by_clnz(dfd, e->d_name, magic) && unlinkat(dfd, e->d_name, 0) == 0)
                ++n;
    closedir(d);
    return n;
}

clnz_status clnz_cache_clear(int *removed)
{
    int too_long, n = 0;
    char *dir = cache_dir_resolve(&too_long);
    if (dir) {
        n += clear_folder(dir, "tuning", CACHE_MAGIC_TUNING);
        n += clear_folder(dir, "programs", CACHE_MAGIC_PROGRAM);
    }
    free(dir);
    if (removed)
        *removed = n;
    return too_long ? CLNZ_ERROR_INVALID_VALUE : CLNZ_SUCCESS;
}
