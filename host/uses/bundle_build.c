/* bundle_build.c: clnz_bundle_build, a bundle of the programs a declared
 * set of uses needs on a context's device: each compiled (or loaded from
 * the program cache) and its binary taken, or with CLNZ_BUNDLE_SOURCES its
 * OpenCL C source for an offline compiler (the FPGA flow). */
#include "uses/bundle.h"
#include "core/cache.h"
#include "core/error.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The header: who the programs are for, and the uses they cover. */
static clnz_status header(clnz_context *ctx, const clnz_uses *uses, manifest *m)
{
    memset(m, 0, sizeof *m);
    manifest_clean(CLNZ_VERSION_STRING, m->clnz, sizeof m->clnz);
    manifest_clean(ctx->id.platform, m->platform, sizeof m->platform);
    manifest_clean(ctx->id.device, m->device, sizeof m->device);
    manifest_clean(ctx->id.vendor, m->vendor, sizeof m->vendor);
    manifest_clean(ctx->id.driver, m->driver, sizeof m->driver);
    manifest_clean(ctx->id.type, m->type, sizeof m->type);
    clnz_status st = program_common_options(ctx, m->build_options, sizeof m->build_options);
    clnz_uses r = uses_resolve(ctx, uses);
    for (int a = 0; a < AXIS_COUNT; ++a)
        uses_format(*uses_field(&r, (uses_axis)a), (uses_axis)a, m->uses[a], sizeof m->uses[a]);
    return st;
}

/* Program p's file: its binary on this device, or its source. */
static clnz_status program_file(clnz_context *ctx, const program_ref *p, int sources,
                                manifest_entry *e, unsigned char **data, size_t *size)
{
    const char *src;
    char *owned;
    clnz_status st = program_whole(ctx, p);
    if (!st)
        st = program_source(ctx, p->file, &src, &owned);
    if (st)
        return st;
    snprintf(e->file, sizeof e->file, "%s", p->file);
    snprintf(e->options, sizeof e->options, "%s", p->options);
    e->is_source = sources;
    e->source_hash = program_source_hash(src);
    if (sources) { /* as a build gets it: the program's identity first (kernels/kname.h) */
        char kid[PROGRAM_KID_DEFINE_MAX];
        program_kid_define(p, kid, sizeof kid);
        size_t k = strlen(kid), n = strlen(src);
        *size = k + n;
        if ((*data = malloc(k + n + 1)) != NULL) {
            memcpy(*data, kid, k);
            memcpy(*data + k, src, n + 1);
        }
    } else {
        cl_program prog;
        st = program_get(ctx, p, &prog);
        if (!st && !program_is(prog, p)) { /* a loading context would refuse it (bundle_use.c) */
            st = ctx_fail(ctx, CLNZ_ERROR_KERNEL_SOURCE,
                          "kernels/%s.cl declares its kernels without KERNEL(name) "
                          "(kernels/kname.h): a bundle's binaries need names that say which "
                          "program they are",
                          p->file);
            clReleaseProgram(prog);
        }
        *data = st ? NULL : program_binary(prog, size);
        if (!st)
            clReleaseProgram(prog);
        if (!st && !*data)
            st = ctx_fail(ctx, CL_INVALID_PROGRAM,
                          "the driver gives no binary of kernels/%s.cl %s to put in a bundle",
                          p->file, p->options);
    }
    free(owned);
    if (!st && !*data)
        st = ctx_fail(ctx, CLNZ_ERROR_OUT_OF_HOST_MEMORY, "out of host memory");
    return st;
}

clnz_status clnz_bundle_build(clnz_context *ctx, const clnz_uses *uses, unsigned flags,
                              clnz_bundle **out)
{
    if (fork_guard_tripped())
        return CLNZ_ERROR_FORKED;
    CTX_HOLD(ctx);
    if (!ctx || !out)
        return CLNZ_ERROR_INVALID_ARGUMENT;
    ctx_clear_message(ctx);
    *out = NULL;
    if (flags & ~CLNZ_BUNDLE_SOURCES)
        return ctx_fail(ctx, CLNZ_ERROR_INVALID_ARGUMENT, "unknown bundle flags 0x%x", flags);
    program_set set = {0};
    manifest m;
    clnz_status st = uses_check(ctx, uses);
    if (!st)
        st = header(ctx, uses, &m);
    if (!st)
        st = variants_of(ctx, uses, &set, NULL);
    if (!st && set.n > MANIFEST_MAX_PROGRAMS)
        st = ctx_fail(ctx, CLNZ_ERROR_INVALID_VALUE, "%d programs: a bundle holds at most %d",
                      set.n, MANIFEST_MAX_PROGRAMS);
    m.n = st ? 0 : set.n;
    m.entries = calloc((size_t)(m.n ? m.n : 1), sizeof *m.entries);
    clnz_bundle *b = m.entries && !st ? bundle_new(&m) : NULL;
    if (!st && !b)
        st = ctx_fail(ctx, CLNZ_ERROR_OUT_OF_HOST_MEMORY, "out of host memory");
    for (int i = 0; i < m.n && !st; ++i) {
        unsigned char *data = NULL;
        size_t size = 0;
        st = program_file(ctx, &set.refs[i], (flags & CLNZ_BUNDLE_SOURCES) != 0,
                          &b->m.entries[i], &data, &size);
        if (!st)
            bundle_set_file(b, i, data, size);
    }
    if (!st && bundle_finish(b))
        st = ctx_fail(ctx, CLNZ_ERROR_OUT_OF_HOST_MEMORY, "out of host memory");
    free(m.entries);
    program_set_free(&set);
    if (st)
        clnz_bundle_release(b);
    else
        *out = b;
    return st;
}
