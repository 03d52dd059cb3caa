/* program_cache.c: compiled program binaries on disk, so that a warm
 * process skips the OpenCL C compiler.
 *
 * One file per program under <cache>/programs/, named by a hash of its key
 * (clnz version, platform, device, driver, build options, source hash):
 *   "CLNZBIN1\n" KEY "\n" SIZE "\n" BINARY CHECKSUM(16 hex) "\n"
 * A file whose key, size or checksum does not match, or whose binary the
 * driver rejects, is deleted and the program is built from source again. */
#include "core/context.h"
#include "core/error.h"
#include "core/cache.h"
#include "core/program.h"
#include "core/quote.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MAGIC CACHE_MAGIC_PROGRAM
#define MAX_BINARY (256u << 20)

/* The file of a program (malloc'd), or NULL without a cache. */
static char *program_path(const clnz_context *ctx, const char *key)
{
    if (!ctx->cache_dir)
        return NULL;
    uint64_t h = cache_hash(key, strlen(key), CACHE_HASH_SEED);
    return cache_path(ctx->cache_dir, "programs/%016" PRIx64 ".bin", h);
}

/* The binary inside a cache file, or NULL if the file is not what it claims. */
const unsigned char *program_cache_parse(const char *data, size_t size, const char *key,
                                        size_t *len)
{
    size_t klen = strlen(key), m = strlen(MAGIC);
    if (size < m + klen + 1 + 17 || memcmp(data, MAGIC, m) != 0)
        return NULL;
    if (memcmp(data + m, key, klen) != 0 || data[m + klen] != '\n')
        return NULL;
    const char *p = data + m + klen + 1;
    char *end;
    unsigned long long n = strtoull(p, &end, 10);
    if (end == p || *end != '\n' || n == 0 || n > MAX_BINARY)
        return NULL;
    const char *bin = end + 1;
    size_t head = (size_t)(bin - data);
    if (size != head + n + 17)
        return NULL;
    char want[17];
    snprintf(want, sizeof want, "%016" PRIx64, cache_hash(data, head + n, CACHE_HASH_SEED));
    if (memcmp(data + head + n, want, 16) != 0 || data[size - 1] != '\n')
        return NULL;
    *len = (size_t)n;
    return (const unsigned char *)bin;
}

cl_program program_cache_load(clnz_context *ctx, const char *key)
{
    char *path = program_path(ctx, key);
    size_t size = 0;
    int fd = -1;
    char *data = path ? cache_read_file_fd(AT_FDCWD, path, MAX_BINARY + 4096, &size, &fd) : NULL;
    if (!data) {
        free(path);
        return NULL;
    }
    size_t len = 0;
    const unsigned char *bin = program_cache_parse(data, size, key, &len);
    cl_program prog = NULL;
    if (bin) {
        cl_int e = CL_SUCCESS, bs = CL_SUCCESS;
        prog = clCreateProgramWithBinary(ctx->cl, 1, &ctx->device, &len, &bin, &bs, &e);
        if (e || bs) {
            prog = NULL;
        } else if (clBuildProgram(prog, 1, &ctx->device, "", NULL, NULL) != CL_SUCCESS) {
            clReleaseProgram(prog);
            prog = NULL;
        }
    }
    free(data);
    if (!prog) {
        /* stale or corrupt: rebuilt from source and stored again; only this
         * file, not one another process stored while the driver looked */
        cache_remove_read(path, fd);
        ctx->stats.cache_files_rejected++;
    } else {
        ctx->stats.programs_from_cache++;
    }
    close(fd);
    free(path);
    return prog;
}

unsigned char *program_binary(cl_program prog, size_t *len)
{
    /* one device per program: its binary is the first */
    cl_uint devices = 0;
    *len = 0;
    if (clGetProgramInfo(prog, CL_PROGRAM_NUM_DEVICES, sizeof devices, &devices, NULL) ||
        devices != 1 ||
        clGetProgramInfo(prog, CL_PROGRAM_BINARY_SIZES, sizeof *len, len, NULL) != CL_SUCCESS ||
        *len == 0 || *len > MAX_BINARY)
        return NULL; /* a driver without binaries */
    unsigned char *bin = malloc(*len);
    if (bin && clGetProgramInfo(prog, CL_PROGRAM_BINARIES, sizeof bin, &bin, NULL) != CL_SUCCESS) {
        free(bin);
        bin = NULL;
    }
    return bin;
}

void program_cache_store(clnz_context *ctx, const char *key, cl_program prog)
{
    if (!ctx->cache_dir)
        return;
    size_t len = 0;
    unsigned char *bin = program_binary(prog, &len);
    if (!bin)
        return; /* a driver without binaries: nothing to cache */
    size_t klen = strlen(key);
    size_t head_max = strlen(MAGIC) + klen + 1 + 24;
    char *buf = malloc(head_max + len + 17);
    char *path = program_path(ctx, key), *dir = cache_path(ctx->cache_dir, "programs");
    if (buf && path && dir) {
        int head = snprintf(buf, head_max, "%s%s\n%zu\n", MAGIC, key, len);
        memcpy(buf + head, bin, len);
        size_t body = (size_t)head + len;
        snprintf(buf + body, 18, "%016" PRIx64 "\n", cache_hash(buf, body, CACHE_HASH_SEED));
        int err = cache_mkdirs(dir);
        if (!err)
            err = cache_write_atomic(path, buf, body + 17);
        if (!err) /* and what writers that were killed left there */
            cache_remove_stale(dir, MAGIC);
        char q[400]; /* quoted: CLNZ_CACHE_DIR may hold a line break */
        if (err == EEXIST) /* cache_write_atomic: its name is taken by a folder, a link, a FIFO */
            ctx_warn(ctx,
                     "warning: cannot write the program cache file %s: something that is not "
                     "a regular file has its name",
                     quote_name(path, q, sizeof q));
        else if (err)
            ctx_warn(ctx, "warning: cannot write the program cache in %s: %s",
                     quote_name(dir, q, sizeof q), strerror(err));
    }
    free(bin);
    free(buf);
    free(path);
    free(dir);
}
