/* bundle.c: a program bundle in memory: its manifest and the bytes of each
 * program's file. Read from a folder (every file checked against the
 * manifest's size and checksum before anything uses it) or made by
 * bundle_build.c; writing one to a folder is the caller's (the command
 * line writes it all or nothing, host/io/output_dir.c). */
#include "uses/bundle.h"
#include "core/cache.h"
#include "core/quote.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

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
    if (!b->m.entries || !b->data) {
        b->m.n = 0;
        clnz_bundle_release(b);
        return NULL;
    }
    memcpy(b->m.entries, m->entries, (size_t)m->n * sizeof *m->entries);
    return b;
}

void bundle_set_file(clnz_bundle *b, int i, unsigned char *data, size_t size)
{
    free(b->data[i]);
    b->data[i] = data;
    b->m.entries[i].size = size;
    b->m.entries[i].checksum = cache_hash(data, size, CACHE_HASH_SEED);
}

int bundle_finish(clnz_bundle *b)
{
    free(b->text);
    b->text = manifest_format(&b->m, &b->text_len);
    return b->text ? 0 : -1;
}

/* Program i's file from the folder, checked. */
static clnz_status read_entry(clnz_bundle *b, int i, char *msg, size_t n)
{
    const manifest_entry *e = &b->m.entries[i];
    char name[MANIFEST_FILE_NAME];
    manifest_file_name(&b->m, i, name, sizeof name);
    char *path = cache_path(b->dir, "%s", name);
    size_t size = 0;
    unsigned char *data = path ? (unsigned char *)cache_read_file(path, e->size, &size) : NULL;
    free(path);
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

/* Why a bundle's manifest could not be read: the folder or the manifest
 * missing, a file where the folder should be, a manifest too large or
 * unreadable (the user then knows what to fix). */
static clnz_status refuse_manifest(const char *dir, const char *path, char *msg, size_t n)
{
    struct stat sb;
    char q[QUOTE_MAX];
    quote_name(dir, q, sizeof q);
    if (stat(dir, &sb) != 0)
        return refuse(msg, n, "bundle %s: %s", q, strerror(errno));
    if (!S_ISDIR(sb.st_mode))
        return refuse(msg, n, "bundle %s is not a folder (a bundle is a folder with %s)", q,
                      MANIFEST_NAME);
    if (stat(path, &sb) != 0)
        return refuse(msg, n, "bundle %s has no %s: not a bundle (clnz bundle build makes one)",
                      q, MANIFEST_NAME);
    if (S_ISREG(sb.st_mode) && (uint64_t)sb.st_size > MANIFEST_MAX_BYTES)
        return refuse(msg, n, "bundle %s: %s is larger than %d MiB", q, MANIFEST_NAME,
                      MANIFEST_MAX_BYTES >> 20);
    return refuse(msg, n, "bundle %s: cannot read its %s (%s)", q, MANIFEST_NAME,
                  S_ISREG(sb.st_mode) ? "not readable" : "not a regular file");
}

clnz_status clnz_bundle_open(const char *dir, clnz_bundle **out, char *msg, size_t msg_size)
{
    if (!dir || !out)
        return CLNZ_ERROR_INVALID_ARGUMENT;
    *out = NULL;
    char *path = cache_path(dir, MANIFEST_NAME);
    if (!path)
        return CLNZ_ERROR_OUT_OF_HOST_MEMORY;
    size_t size = 0;
    char *text = cache_read_file(path, MANIFEST_MAX_BYTES, &size);
    if (!text) {
        clnz_status st = refuse_manifest(dir, path, msg, msg_size);
        free(path);
        return st;
    }
    free(path);
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
        st = read_entry(b, i, msg, msg_size);
    if (st)
        clnz_bundle_release(b);
    else
        *out = b;
    return st;
}

int clnz_bundle_file_count(const clnz_bundle *b) { return b ? 1 + b->m.n : 0; }

clnz_status clnz_bundle_file(const clnz_bundle *b, int index, const char **name,
                             const void **data, size_t *size)
{
    if (!b || index < 0 || index > b->m.n || !name || !data || !size)
        return CLNZ_ERROR_INVALID_ARGUMENT;
    clnz_bundle *w = (clnz_bundle *)b; /* the names live in the bundle */
    if (index == 0) {
        snprintf(w->name, sizeof w->name, "%s", MANIFEST_NAME);
        *data = b->text;
        *size = b->text_len;
    } else {
        manifest_file_name(&b->m, index - 1, w->name, sizeof w->name);
        *data = b->data[index - 1];
        *size = (size_t)b->m.entries[index - 1].size;
    }
    *name = w->name;
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
    manifest_free(&b->m);
    free(b->text);
    free(b->dir);
    free(b);
}

const manifest *bundle_manifest(const clnz_bundle *b) { return &b->m; }
const char *bundle_dir(const clnz_bundle *b) { return b->dir ? b->dir : "(in memory)"; }
