/* program.c: kernel sources, builds and the per-context kernel cache.
 *
 * Sources are embedded in the library (generated from kernels/ at build
 * time); CLNZ_KERNEL_DIR points at a source folder instead, for kernel
 * development without a rebuild. */
#include "core/program.h"
#include "core/context.h"
#include "core/error.h"
#include "core/cache.h"
#include "core/driver_lock.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Under the driver lock: PoCL's compiler is not safe to run from several
 * threads at once, and a thread that waited finds the program the first
 * one stored in the cache instead of compiling it again. */
static clnz_status build(clnz_context *ctx, const char *file, const char *options,
                         cl_program *out)
{
    DRIVER_HOLD();
    const char *dir = getenv("CLNZ_KERNEL_DIR");
    /* CLNZ_BUILD_OPTIONS: more build options for every program (they are in
     * the cache key): the quick test tier builds with -cl-opt-disable,
     * which PoCL compiles three times faster */
    char extra[160] = "";
    const char *more = getenv("CLNZ_BUILD_OPTIONS");
    if (more && *more) {
        if (strlen(more) >= sizeof extra - 1 || strpbrk(more, "\n\r"))
            return ctx_fail(ctx, CLNZ_ERROR_INVALID_VALUE,
                            "CLNZ_BUILD_OPTIONS is longer than %zu characters or has a line "
                            "break",
                            sizeof extra - 2);
        snprintf(extra, sizeof extra, " %s", more);
    }
    char *owned = NULL;
    const char *src;
    /* -w (a standard build option): the library never prints, and PoCL
     * prints its compiler's warnings (AVX ABI notes on our vector code) on
     * stderr, "N warnings generated.", when it compiles for the CPU. */
    char opts[512];
    if (dir && *dir) {
        char path[1024];
        /* a cut path would read, or include, another folder's files */
        if (snprintf(path, sizeof path, "%s/%s.cl", dir, file) >= (int)sizeof path ||
            snprintf(opts, sizeof opts, "-cl-std=CL1.2 -w -I %s %s", dir, options) >= (int)sizeof opts)
            return ctx_fail(ctx, CLNZ_ERROR_KERNEL_SOURCE, "CLNZ_KERNEL_DIR is too long (%zu bytes)",
                            strlen(dir));
        size_t size = 0;
        src = owned = cache_read_file(path, (size_t)16 << 20, &size);
        if (!src)
            return ctx_fail(ctx, CLNZ_ERROR_KERNEL_SOURCE, "cannot read kernel source %s", path);
    } else {
        src = kernel_source_embedded(file);
        if (!src)
            return ctx_fail(ctx, CLNZ_ERROR_KERNEL_SOURCE, "no embedded kernel '%s'", file);
        snprintf(opts, sizeof opts, "-cl-std=CL1.2 -w %s%s", options, extra);
    }
    /* a warm process loads the compiled program instead of compiling it */
    char key[1024];
    snprintf(key, sizeof key, "clnz %s|%s|%s|%s|%s|%016llx", CLNZ_VERSION_STRING,
             ctx->id.platform, ctx->id.device, ctx->id.driver, opts,
             (unsigned long long)cache_hash(src, strlen(src), CACHE_HASH_SEED));
    cl_program prog = program_cache_load(ctx, key);
    if (ctx->debug) /* CLNZ_DEBUG: the user asked for a log on stderr */
        fprintf(stderr, "clnz-debug: program %s %s: %s\n", file, options,
                prog ? "loaded from the cache" : "built from source");
    if (prog) {
        free(owned);
        *out = prog;
        return CLNZ_SUCCESS;
    }
    cl_int e = CL_SUCCESS;
    prog = clCreateProgramWithSource(ctx->cl, 1, &src, NULL, &e);
    free(owned);
    if (e)
        return CL_CHECK(ctx, e, "clCreateProgramWithSource");
    ctx->stats.programs_from_source++;
    e = clBuildProgram(prog, 1, &ctx->device, opts, NULL, NULL);
    if (e) {
        size_t n = 0;
        clGetProgramBuildInfo(prog, ctx->device, CL_PROGRAM_BUILD_LOG, 0, NULL, &n);
        char *log = malloc(n + 1);
        if (log) {
            log[0] = '\0';
            clGetProgramBuildInfo(prog, ctx->device, CL_PROGRAM_BUILD_LOG, n, log, NULL);
            log[n] = '\0';
        }
        char head[700];
        snprintf(head, sizeof head, "building kernels/%s.cl with '%s' failed: %s", file, opts,
                 clnz_status_string(e));
        ctx_set_long_message(ctx, head, log ? log : "(no build log)");
        free(log);
        clReleaseProgram(prog);
        return e;
    }
    program_cache_store(ctx, key, prog);
    *out = prog;
    return CLNZ_SUCCESS;
}

clnz_status program_kernel(clnz_context *ctx, const char *file, const char *name,
                           const char *options, cl_kernel *out)
{
    char key[sizeof ctx->kernels[0].key];
    int program_len = snprintf(key, sizeof key, "%s %s|", file, options);
    snprintf(key + program_len, sizeof key - (size_t)program_len, "%s", name);
    for (int i = 0; i < ctx->n_kernels; ++i) {
        if (strcmp(ctx->kernels[i].key, key) == 0) {
            *out = ctx->kernels[i].kernel;
            return CLNZ_SUCCESS;
        }
    }
    if (ctx->n_kernels == ctx->cap_kernels) {
        int cap = ctx->cap_kernels ? 2 * ctx->cap_kernels : 16;
        kernel_entry *k = realloc(ctx->kernels, (size_t)cap * sizeof *k);
        if (!k)
            return ctx_fail(ctx, CLNZ_ERROR_OUT_OF_HOST_MEMORY, "out of host memory");
        ctx->kernels = k;
        ctx->cap_kernels = cap;
    }
    /* kernels of one file and options share one program: one build */
    cl_program prog = NULL;
    for (int i = 0; i < ctx->n_kernels && !prog; ++i) {
        if (ctx->kernels[i].program_len == (size_t)program_len &&
            memcmp(ctx->kernels[i].key, key, (size_t)program_len) == 0) {
            prog = ctx->kernels[i].program;
            clRetainProgram(prog);
        }
    }
    if (!prog) {
        clnz_status st = build(ctx, file, options, &prog);
        if (st)
            return st;
    }
    cl_int e = CL_SUCCESS;
    cl_kernel k = clCreateKernel(prog, name, &e);
    if (e) {
        clReleaseProgram(prog);
        return CL_CHECK(ctx, e, "clCreateKernel");
    }
    kernel_entry *ent = &ctx->kernels[ctx->n_kernels++];
    snprintf(ent->key, sizeof ent->key, "%s", key);
    ent->program_len = (size_t)program_len;
    ent->program = prog;
    ent->kernel = k;
    *out = k;
    return CLNZ_SUCCESS;
}

void program_release_all(clnz_context *ctx)
{
    for (int i = 0; i < ctx->n_kernels; ++i) {
        clReleaseKernel(ctx->kernels[i].kernel);
        clReleaseProgram(ctx->kernels[i].program);
    }
    free(ctx->kernels);
    ctx->kernels = NULL;
    ctx->n_kernels = ctx->cap_kernels = 0;
}

void element_options(char *buf, size_t n, clnz_dtype dtype, int pred_nonzero)
{
    snprintf(buf, n, "-DCLNZ_DTYPE=%d -DPRED_NONZERO=%d", (int)dtype, pred_nonzero);
}

void scan_options(char *buf, size_t n, int is_u64)
{
    snprintf(buf, n, "-DSCAN_T=%s", is_u64 ? "ulong" : "uint");
}
