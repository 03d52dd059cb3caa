/* bundle.c: a program bundle in memory: its manifest and the bytes of each
 * program's file. Read from a folder (every file checked against the
 * manifest's size and checksum before anything uses it, all of them from
 * one folder even while it is rebuilt in place) or made by
 * bundle_build.c; writing one to a folder is the caller's (the command
 * line writes it all or nothing, host/io/output_dir.c). */
#define _GNU_SOURCE /* O_PATH */
#include "uses/bundle.h"
#include "core/cache.h"
#include "core/quote.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* How often a bundle is read when its folder is replaced while it is read
 * (clnz_bundle_open): a read fails again only if another rebuild swapped
 * the folder meanwhile, and each rebuild writes every file (or compiles):
 * a few tries are plenty, and a bound keeps a loop from being endless. */
enum { BUNDLE_OPEN_TRIES = 5 };

/* A failure with its reason in msg: a bundle's fault is BUNDLE_REFUSED
 * (refuse), a caller's bad argument INVALID_ARGUMENT. */
static clnz_status fail_with(clnz_status st, char *msg, size_t n, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static clnz_status fail_with(clnz_status st, char *msg, size_t n, const char *fmt, ...)
{
    if (msg && n) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(msg, n, fmt, ap);
        va_end(ap);
    }
    return st;
}
#define refuse(...) fail_with(CLNZ_ERROR_BUNDLE_REFUSED, __VA_ARGS__)

clnz_bundle *bundle_new(const manifest *m)
{
    clnz_bundle *b = calloc(1, sizeof *b);
    if (!b)
        return NULL;
    b->m = *m;
    b->m.entries = calloc((size_t)(m->n ? m->n : 1), sizeof *b->m.entries);
    b->data = calloc((size_t)(m->n ? m->n : 1), sizeof *b->data);
    /* a name per file, so that every name clnz_bundle_file gave stays valid
     * (and threads may read one bundle at once): one buffer was rewritten by
     * each call */
    b->names = calloc((size_t)m->n + 1, sizeof *b->names);
    if (!b->m.entries || !b->data || !b->names) {
        b->m.n = 0;
        clnz_bundle_release(b);
        return NULL;
    }
    memcpy(b->m.entries, m->entries, (size_t)m->n * sizeof *m->entries);
    snprintf(b->names[0], sizeof b->names[0], "%s", MANIFEST_NAME);
    for (int i = 0; i < m->n; ++i)
        manifest_file_name(&b->m, i, b->names[i + 1], sizeof b->names[i + 1]);
    return b;
}

void bundle_set_file(clnz_bundle *b, int i, unsigned char *data, size_t size)
{
    free(b->data[i]);
    b->data[i] = data;
    b->m.entries[i].size = size;
    b->m.entries[i].checksum = cache_hash(data, size, CACHE_HASH_SEED);
    manifest_file_name(&b->m, i, b->names[i + 1], sizeof b->names[i + 1]); /* .cl or .bin */
}

int bundle_finish(clnz_bundle *b)
{
    free(b->text);
    b->text = manifest_format(&b->m, &b->text_len);
    return b->text ? 0 : -1;
}

/* Program i's file from the folder open as dirfd, checked. */
static clnz_status read_entry(clnz_bundle *b, int dirfd, int i, char *msg, size_t n)
{
    const manifest_entry *e = &b->m.entries[i];
    char name[MANIFEST_FILE_NAME];
    manifest_file_name(&b->m, i, name, sizeof name);
    size_t size = 0;
    unsigned char *data = (unsigned char *)cache_read_file_at(dirfd, name, e->size, &size);
    char q[QUOTE_MAX];
    if (!data)
        return refuse(msg, n, "bundle %s: %s is missing, unreadable or larger than the manifest "
                      "says (%" PRIu64 " bytes)", quote_name(b->dir, q, sizeof q), name, e->size);
    if (size != e->size || cache_hash(data, size, CACHE_HASH_SEED) != e->checksum) {
        free(data);
        return refuse(msg, n, "bundle %s: %s does not match its checksum in %s: it was "
                      "changed or damaged", quote_name(b->dir, q, sizeof q), name, MANIFEST_NAME);
    }
    b->data[i] = data;
    return CLNZ_SUCCESS;
}

/* Why the folder could not be opened (errno e): missing, or a file. */
static clnz_status refuse_folder(const char *dir, int e, char *msg, size_t n)
{
    struct stat sb;
    char q[QUOTE_MAX];
    quote_name(dir, q, sizeof q);
    if (stat(dir, &sb) != 0)
        return refuse(msg, n, "bundle %s: %s", q, strerror(errno));
    if (!S_ISDIR(sb.st_mode))
        return refuse(msg, n, "bundle %s is not a folder (a bundle is a folder with %s)", q,
                      MANIFEST_NAME);
    return refuse(msg, n, "bundle %s: %s", q, strerror(e));
}

/* Why the manifest of the folder open as dirfd could not be read: missing,
 * too large or unreadable (the user then knows what to fix). */
static clnz_status refuse_manifest(const char *dir, int dirfd, char *msg, size_t n)
{
    struct stat sb;
    char q[QUOTE_MAX];
    quote_name(dir, q, sizeof q);
    if (fstatat(dirfd, MANIFEST_NAME, &sb, 0) != 0)
        return refuse(msg, n, "bundle %s has no %s: not a bundle (clnz bundle build makes one)",
                      q, MANIFEST_NAME);
    if (S_ISREG(sb.st_mode) && (uint64_t)sb.st_size > MANIFEST_MAX_BYTES)
        return refuse(msg, n, "bundle %s: %s is larger than %d MiB", q, MANIFEST_NAME,
                      MANIFEST_MAX_BYTES >> 20);
    return refuse(msg, n, "bundle %s: cannot read its %s (%s)", q, MANIFEST_NAME,
                  S_ISREG(sb.st_mode) ? "not readable" : "not a regular file");
}

/* The bundle in the folder open as dirfd (dir names it in messages). */
static clnz_status read_bundle(const char *dir, int dirfd, clnz_bundle **out, char *msg,
                               size_t msg_size)
{
    size_t size = 0;
    char *text = cache_read_file_at(dirfd, MANIFEST_NAME, MANIFEST_MAX_BYTES, &size);
    if (!text)
        return refuse_manifest(dir, dirfd, msg, msg_size);
    manifest m;
    char err[300];
    if (manifest_parse(text, size, &m, err, sizeof err)) {
        free(text);
        char q[QUOTE_MAX];
        return refuse(msg, msg_size, "bundle %s: %s", quote_name(dir, q, sizeof q), err);
    }
    clnz_bundle *b = bundle_new(&m);
    manifest_free(&m);
    if (!b || !(b->dir = strdup(dir))) {
        free(text);
        clnz_bundle_release(b);
        return CLNZ_ERROR_OUT_OF_HOST_MEMORY;
    }
    b->text = text;
    b->text_len = size;
    clnz_status st = CLNZ_SUCCESS;
    for (int i = 0; i < b->m.n && !st; ++i)
        st = read_entry(b, dirfd, i, msg, msg_size);
    if (st)
        clnz_bundle_release(b);
    else
        *out = b;
    return st;
}

/* 1 if dir names another folder now than the one open as fd. */
static int replaced(const char *dir, int fd)
{
    struct stat was, now;
    return fstat(fd, &was) == 0 &&
           (stat(dir, &now) != 0 || now.st_dev != was.st_dev || now.st_ino != was.st_ino);
}

/* A bundle may be rebuilt in place while processes load it: `clnz bundle
 * build -o DIR` swaps a new folder in with one rename, then deletes the
 * old folder's files. Paths would pair one folder's manifest with the
 * other's files; so the folder is opened once and the manifest and every
 * file read from it: all from the old folder, or all from the new. A read
 * that finds a file gone (deleted after the swap) is told from a damaged
 * bundle by DIR naming another folder now: then the bundle is read again
 * from the start, from the new folder. A bundle refused with DIR
 * unchanged is refused as it is, with the reason. */
clnz_status clnz_bundle_open(const char *dir, clnz_bundle **out, char *msg, size_t msg_size)
{
    if (!dir || !out)
        return fail_with(CLNZ_ERROR_INVALID_ARGUMENT, msg, msg_size, "%s is NULL",
                         dir ? "out" : "the folder");
    *out = NULL;
    for (int tries = 1;; ++tries) {
        /* O_PATH: a folder that may be searched but not listed is read as by paths */
        int fd = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
        if (fd < 0)
            return refuse_folder(dir, errno, msg, msg_size);
        clnz_status st = read_bundle(dir, fd, out, msg, msg_size);
        int again =
            st == CLNZ_ERROR_BUNDLE_REFUSED && tries < BUNDLE_OPEN_TRIES && replaced(dir, fd);
        close(fd);
        if (!again)
            return st;
    }
}

int clnz_bundle_file_count(const clnz_bundle *b) { return b ? 1 + b->m.n : 0; }

clnz_status clnz_bundle_file(const clnz_bundle *b, int index, const char **name,
                             const void **data, size_t *size)
{
    if (!b || index < 0 || index > b->m.n || !name || !data || !size)
        return CLNZ_ERROR_INVALID_ARGUMENT;
    if (index == 0) {
        *data = b->text;
        *size = b->text_len;
    } else {
        *data = b->data[index - 1];
        *size = (size_t)b->m.entries[index - 1].size;
    }
    *name = b->names[index];
    return CLNZ_SUCCESS;
}

clnz_status clnz_bundle_add_binary(clnz_bundle *b, int program, const void *data, size_t size,
                                   char *msg, size_t msg_size)
{
    if (!b || !data)
        return fail_with(CLNZ_ERROR_INVALID_ARGUMENT, msg, msg_size, "%s is NULL",
                         b ? "data" : "the bundle");
    if (program < 0 || program >= b->m.n)
        return fail_with(CLNZ_ERROR_INVALID_ARGUMENT, msg, msg_size,
                         "the bundle has programs 0 to %d, not %d", b->m.n - 1, program);
    if (size == 0 || size > MANIFEST_MAX_BINARY)
        return fail_with(CLNZ_ERROR_INVALID_ARGUMENT, msg, msg_size,
                         "a binary of %zu bytes (1 byte to 1 GiB)", size);
    unsigned char *copy = malloc(size);
    if (!copy)
        return CLNZ_ERROR_OUT_OF_HOST_MEMORY;
    memcpy(copy, data, size);
    b->m.entries[program].is_source = 0;
    bundle_set_file(b, program, copy, size);
    return bundle_finish(b) ? CLNZ_ERROR_OUT_OF_HOST_MEMORY : CLNZ_SUCCESS;
}

void clnz_bundle_release(clnz_bundle *b)
{
    if (!b)
        return;
    for (int i = 0; b->data && i < b->m.n; ++i)
        free(b->data[i]);
    free(b->data);
    free(b->names);
    manifest_free(&b->m);
    free(b->text);
    free(b->dir);
    free(b);
}

const manifest *bundle_manifest(const clnz_bundle *b) { return &b->m; }
const char *bundle_dir(const clnz_bundle *b) { return b->dir ? b->dir : "(in memory)"; }
