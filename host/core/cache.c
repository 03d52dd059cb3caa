/* cache.c: the cache folder clnz keeps tuning results and compiled programs
 * in, and the file primitives both use: checksums, whole-file reads and
 * atomic writes (temporary file, then rename). */

#include "core/cache.h"
#include "clnz.h"
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

void cache_dir_resolve(char *out, size_t n)
{
    const char *dir = getenv("CLNZ_CACHE_DIR");
    const char *xdg = getenv("XDG_CACHE_HOME");
    const char *home = getenv("HOME");
    if (dir && *dir)
        snprintf(out, n, "%s", dir);
    else if (xdg && *xdg)
        snprintf(out, n, "%s/clnz", xdg);
    else if (home && *home)
        snprintf(out, n, "%s/.cache/clnz", home);
    else
        out[0] = '\0';
}

int cache_mkdirs(const char *dir)
{
    char path[1024];
    if (snprintf(path, sizeof path, "%s", dir) >= (int)sizeof path)
        return ENAMETOOLONG;
    for (char *p = path + 1; *p; ++p) {
        if (*p != '/')
            continue;
        *p = '\0';
        if (mkdir(path, 0755) != 0 && errno != EEXIST)
            return errno;
        *p = '/';
    }
    if (mkdir(path, 0755) != 0 && errno != EEXIST)
        return errno;
    struct stat sb;
    if (stat(path, &sb) != 0)
        return errno;
    return S_ISDIR(sb.st_mode) ? 0 : ENOTDIR;
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
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    char *buf = NULL;
    long n = -1;
    if (fseek(f, 0, SEEK_END) == 0 && (n = ftell(f)) >= 0 && (size_t)n <= max &&
        fseek(f, 0, SEEK_SET) == 0)
        buf = malloc((size_t)n + 1);
    if (buf && fread(buf, 1, (size_t)n, f) == (size_t)n) {
        buf[n] = '\0';
        *size = (size_t)n;
    } else {
        free(buf);
        buf = NULL;
    }
    fclose(f);
    return buf;
}

int cache_write_atomic(const char *path, const void *data, size_t n)
{
    char tmp[1100];
    if (snprintf(tmp, sizeof tmp, "%s.tmp-XXXXXX", path) >= (int)sizeof tmp)
        return ENAMETOOLONG;
    int fd = mkstemp(tmp);
    if (fd < 0)
        return errno;
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
    cache_dir_resolve(buf, size);
    return buf;
}

/* Removes the files clnz writes in one subfolder: names ending in `suffix`,
 * and temporary files left by a process that died mid-write. */
static int clear_folder(const char *dir, const char *suffix)
{
    DIR *d = opendir(dir);
    if (!d)
        return 0;
    int n = 0;
    size_t sl = strlen(suffix);
    for (struct dirent *e; (e = readdir(d));) {
        size_t len = strlen(e->d_name);
        int ours = (len > sl && strcmp(e->d_name + len - sl, suffix) == 0) ||
                   strstr(e->d_name, ".tmp-") != NULL;
        char path[2300];
        if (ours && snprintf(path, sizeof path, "%s/%s", dir, e->d_name) < (int)sizeof path &&
            unlink(path) == 0)
            ++n;
    }
    closedir(d);
    return n;
}

clnz_status clnz_cache_clear(int *removed)
{
    char dir[1024], sub[1100];
    cache_dir_resolve(dir, sizeof dir);
    int n = 0;
    if (dir[0]) {
        snprintf(sub, sizeof sub, "%s/tuning", dir);
        n += clear_folder(sub, ".txt");
        snprintf(sub, sizeof sub, "%s/programs", dir);
        n += clear_folder(sub, ".bin");
    }
    if (removed)
        *removed = n;
    return CLNZ_SUCCESS;
}
