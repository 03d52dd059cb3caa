/* bundle_use.c: a context loading its programs from a bundle
 * (clnz_context_use_bundle, CLNZ_BUNDLE): the bundle is checked whole
 * when it is taken (bundle.c), and refused unless it was built for this
 * device, driver and clnz version; core/program.c then asks bundle_load
 * for each program before the program cache and the compiler. */
#include "uses/bundle.h"
#include "core/error.h"
#include "core/quote.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The first way the bundle's device differs from the context's, or NULL. */
static const char *mismatch(const clnz_context *ctx, const manifest *m, char *mine, size_t n)
{
    const char *theirs[] = {m->clnz, m->platform, m->device, m->vendor, m->driver};
    const char *ours[] = {CLNZ_VERSION_STRING, ctx->id.platform, ctx->id.device, ctx->id.vendor,
                          ctx->id.driver};
    static const char *const what[] = {"clnz version", "platform", "device", "vendor",
                                       "driver version"};
    for (int i = 0; i < 5; ++i) {
        manifest_clean(ours[i], mine, n);
        if (strcmp(theirs[i], mine) != 0)
            return what[i];
    }
    return NULL;
}

static const char *field_of(const manifest *m, const char *what)
{
    return strcmp(what, "clnz version") == 0 ? m->clnz
           : strcmp(what, "platform") == 0   ? m->platform
           : strcmp(what, "device") == 0     ? m->device
           : strcmp(what, "vendor") == 0     ? m->vendor
                                             : m->driver;
}

clnz_status clnz_context_use_bundle(clnz_context *ctx, const char *dir)
{
    CTX_ENTER(ctx);
    if (!dir) {
        clnz_bundle_release(ctx->bundle);
        ctx->bundle = NULL;
        return CLNZ_SUCCESS;
    }
    clnz_bundle *b;
    char msg[CLNZ_MESSAGE_MAX - 16];
    clnz_status st = clnz_bundle_open(dir, &b, msg, sizeof msg);
    if (st)
        return ctx_fail(ctx, st, "%s", st == CLNZ_ERROR_BUNDLE_REFUSED ? msg : "out of host memory");
    char mine[128], q[160];
    const char *what = mismatch(ctx, &b->m, mine, sizeof mine);
    if (what) {
        /* both names stand as the manifest holds them: escaped already */
        st = ctx_fail(ctx, CLNZ_ERROR_BUNDLE_REFUSED,
                      "bundle %s was built for %s '%.100s', this context's is '%.100s': "
                      "build one on this device (clnz bundle build)",
                      quote_name(dir, q, sizeof q), what, field_of(&b->m, what), mine);
        clnz_bundle_release(b);
        return st;
    }
    /* its binaries were built with the options this context builds with
     * (the program cache keys on them too): a bundle of the quick test
     * tier's -cl-opt-disable programs, or of -cl-fast-relaxed-math ones,
     * is not what a process without them would compile */
    char opts[PROGRAM_COMMON_MAX];
    st = program_common_options(ctx, opts, sizeof opts);
    if (!st && strcmp(b->m.build_options, opts) != 0)
        st = ctx_fail(ctx, CLNZ_ERROR_BUNDLE_REFUSED,
                      "bundle %s was built with the build options '%s', this context's are "
                      "'%s' (CLNZ_BUILD_OPTIONS, CLNZ_KERNEL_DIR): build it with the same ones",
                      quote_name(dir, q, sizeof q), b->m.build_options, opts);
    if (st) {
        clnz_bundle_release(b);
        return st;
    }
    clnz_bundle_release(ctx->bundle);
    ctx->bundle = b;
    return CLNZ_SUCCESS;
}

cl_program bundle_load(clnz_context *ctx, const program_ref *p, uint64_t source_hash,
                       const char *common_options, clnz_status *st)
{
    const manifest *m = &ctx->bundle->m;
    *st = CLNZ_SUCCESS;
    if (strcmp(m->build_options, common_options) != 0)
        return NULL; /* as the program cache's key, which holds them too */
    int i = 0;
    while (i < m->n && (m->entries[i].is_source || m->entries[i].source_hash != source_hash ||
                        strcmp(m->entries[i].file, p->file) != 0 ||
                        strcmp(m->entries[i].options, p->options) != 0))
        ++i;
    if (i == m->n)
        return NULL;
    size_t len = (size_t)m->entries[i].size;
    const unsigned char *bin = ctx->bundle->data[i];
    cl_int e = CL_SUCCESS, bs = CL_SUCCESS;
    cl_program prog = clCreateProgramWithBinary(ctx->cl, 1, &ctx->device, &len, &bin, &bs, &e);
    if (!e && !bs)
        e = clBuildProgram(prog, 1, &ctx->device, "", NULL, NULL);
    /* the binary of another entry (added under this one's number) builds
     * as well, and would run another dtype's or predicate's code: its
     * kernels' names say which program it is (kernels/kname.h) */
    int other = !e && !bs && !program_is(prog, p);
    if (!e && !bs && !other)
        return prog;
    if (!e)
        e = bs;
    if (prog)
        clReleaseProgram(prog);
    char name[MANIFEST_FILE_NAME], q[210], why[160];
    manifest_file_name(m, i, name, sizeof name);
    quote_name(bundle_dir(ctx->bundle), q, sizeof q);
    snprintf(why, sizeof why, "%s",
             other ? "its kernels are not named for this program: another entry's binary, or "
                     "one compiled without its source's first line (#define CLNZ_KID)"
                   : clnz_status_string(e));
    if (ctx->can_compile) /* the compiler still can: a warning, then the source */
        ctx_warn(ctx, "warning: %s %s of bundle %s (%s): built from source",
                 other ? "clnz refused" : "the driver refused", name, q, why);
    else
        *st = ctx_fail(ctx, CLNZ_ERROR_BUNDLE_REFUSED, "%s %s of bundle %s (kernels/%s.cl %s): %s",
                       other ? "clnz refused" : "the driver refused", name, q, p->file, p->options,
                       why);
    return NULL;
}
