/* program.c: kernel sources, builds and the per-context kernel cache.
 *
 * Sources are embedded in the library (generated from kernels/ at build
 * time); CLNZ_KERNEL_DIR points at a source folder instead, for kernel
 * development without a rebuild. A program comes from, in this order: the
 * context (built before), its bundle (clnz_context_use_bundle, CLNZ_BUNDLE),
 * the on-disk cache, the compiler. A device without a compiler (FPGAs; any
 * device with CLNZ_NO_COMPILE=1) stops before the last. */
#include "core/program.h"
#include "core/context.h"
#include "core/error.h"
#include "core/cache.h"
#include "core/driver_lock.h"
#include "core/quote.h"

#include <dirent.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Writes "<text><v>" at p (v >= 0) and returns the end. */
static char *put_define(char *p, const char *text, unsigned v)
{
    char digits[12];
    int n = 0;
    do
        digits[n++] = (char)('0' + v % 10);
    while ((v /= 10) && n < (int)sizeof digits);
    size_t len = strlen(text);
    memcpy(p, text, len);
    p += len;
    while (n)
        *p++ = digits[--n];
    return p;
}

void program_start(program_ref *r, const char *file)
{
    r->file = file;
    r->options[0] = '\0';
    r->cut = 0;
}

void program_element(program_ref *r, const char *file, clnz_dtype dtype, int pred_nonzero)
{
    /* "-DCLNZ_DTYPE=%d -DPRED_NONZERO=%d", written without snprintf: every
     * launch names its program, and formatting was a third of a small
     * call's host code on PoCL */
    program_start(r, file);
    char *p = put_define(r->options, "-DCLNZ_DTYPE=", (unsigned)dtype);
    p = put_define(p, " -DPRED_NONZERO=", (unsigned)pred_nonzero);
    *p = '\0';
}

void program_append(program_ref *r, const char *fmt, ...)
{
    size_t len = strlen(r->options), room = sizeof r->options - len;
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(r->options + len, room, fmt, ap);
    va_end(ap);
    if (n < 0) /* an encoding error: nothing to count, still not whole */
        n = (int)room;
    if (r->cut || (size_t)n >= room) /* what they needed, for the message */
        r->cut = (r->cut ? r->cut : len) + (size_t)n;
}

clnz_status program_source(clnz_context *ctx, const char *file, const char **src, char **owned)
{
    const char *dir = getenv("CLNZ_KERNEL_DIR");
    *owned = NULL;
    if (dir && *dir) {
        char path[1024], shown[QUOTE_MAX];
        /* a cut path would read another folder's files */
        if (snprintf(path, sizeof path, "%s/%s.cl", dir, file) >= (int)sizeof path)
            return ctx_fail(ctx, CLNZ_ERROR_KERNEL_SOURCE, "CLNZ_KERNEL_DIR is too long (%zu bytes)",
                            strlen(dir));
        size_t size = 0;
        *src = *owned = cache_read_file(path, (size_t)16 << 20, &size);
        if (!*src)
            return ctx_fail(ctx, CLNZ_ERROR_KERNEL_SOURCE, "cannot read kernel source %s",
                            quote_name(path, shown, sizeof shown));
        return CLNZ_SUCCESS;
    }
    *src = kernel_source_embedded(file);
    if (!*src)
        return ctx_fail(ctx, CLNZ_ERROR_KERNEL_SOURCE, "no embedded kernel '%s'", file);
    return CLNZ_SUCCESS;
}

uint64_t program_source_hash(const char *src)
{
    uint64_t h = cache_hash(src, strlen(src), CACHE_HASH_SEED);
    const char *dir = getenv("CLNZ_KERNEL_DIR");
    DIR *d = dir && *dir ? opendir(dir) : NULL;
    if (!d)
        return h;
    for (struct dirent *e; (e = readdir(d));) {
        size_t n = strlen(e->d_name);
        if (!(n > 3 && strcmp(e->d_name + n - 3, ".cl") == 0) &&
            !(n > 2 && strcmp(e->d_name + n - 2, ".h") == 0))
            continue;
        char path[1024];
        size_t size = 0;
        char *text = snprintf(path, sizeof path, "%s/%s", dir, e->d_name) < (int)sizeof path
                         ? cache_read_file(path, (size_t)16 << 20, &size)
                         : NULL;
        if (text) /* combined in no order: readdir's is the file system's */
            h ^= cache_hash(text, size, cache_hash(e->d_name, n, CACHE_HASH_SEED));
        free(text);
    }
    closedir(d);
    return h;
}

static void program_kid(const program_ref *p, char kid[17])
{
    uint64_t h = cache_hash(p->file, strlen(p->file), CACHE_HASH_SEED);
    h = cache_hash(p->options, strlen(p->options), h ^ 0x20); /* the space between them */
    snprintf(kid, 17, "%016llx", (unsigned long long)h);
}

/* "#define CLNZ_KID <kid>\n#line 1\n": the first of a build's two source
 * strings, so that the file's own lines keep their numbers in a build log. */
void program_kid_define(const program_ref *p, char *buf, size_t n)
{
    char kid[17];
    program_kid(p, kid);
    snprintf(buf, n, "#define CLNZ_KID %s\n#line 1\n", kid);
}

int program_is(cl_program prog, const program_ref *p)
{
    char kid[17], names[4096];
    program_kid(p, kid);
    size_t n = 0;
    if (clGetProgramInfo(prog, CL_PROGRAM_KERNEL_NAMES, sizeof names, names, &n) != CL_SUCCESS ||
        n == 0 || names[0] == '\0')
        return 0; /* no kernels, or more names than a program of clnz has */
    /* "a_<kid>;b_<kid>": every name ends with this program's identity */
    size_t k = strlen(kid);
    for (char *name = names, *end; *name; name = *end ? end + 1 : end) {
        end = name + strcspn(name, ";");
        size_t len = (size_t)(end - name);
        if (len < k + 2 || name[len - k - 1] != '_' || memcmp(name + len - k, kid, k) != 0)
            return 0;
    }
    return 1;
}

/* -w (a standard build option): the library never prints, and PoCL prints
 * its compiler's warnings (AVX ABI notes on our vector code) on stderr, "N
 * warnings generated.", when it compiles for the CPU. CLNZ_KERNEL_DIR's
 * files include their neighbours (-I). CLNZ_BUILD_OPTIONS: more build
 * options for every program, from either source (they are in the cache
 * key): the quick test tier builds with -cl-opt-disable, which PoCL
 * compiles three times faster. */
clnz_status program_common_options(clnz_context *ctx, char *buf, size_t n)
{
    const char *more = getenv("CLNZ_BUILD_OPTIONS");
    if (more && *more && (strlen(more) >= 158 || strpbrk(more, "\n\r")))
        return ctx_fail(ctx, CLNZ_ERROR_INVALID_VALUE,
                        "CLNZ_BUILD_OPTIONS is longer than 157 characters or has a line break");
    const char *dir = getenv("CLNZ_KERNEL_DIR");
    int has_dir = dir && *dir, has_more = more && *more;
    if (has_dir && strpbrk(dir, " \t\n\r\v\f\"'\\")) {
        /* -I DIR: PoCL splits options at blanks and keeps quotes in a path;
         * a bundle's manifest holds the options on one line */
        char shown[QUOTE_MAX];
        return ctx_fail(ctx, CLNZ_ERROR_KERNEL_SOURCE,
                        "CLNZ_KERNEL_DIR %s holds a blank, a line break, a quote or a backslash, "
                        "which build options (-I DIR) cannot carry: use a folder, or a link to "
                        "one, whose path has none",
                        quote_name(dir, shown, sizeof shown));
    }
    int len = snprintf(buf, n, "-cl-std=CL1.2 -w%s%s%s%s", has_dir ? " -I " : "",
                       has_dir ? dir : "", has_more ? " " : "", has_more ? more : "");
    if (len >= (int)n)
        return ctx_fail(ctx, CLNZ_ERROR_KERNEL_SOURCE,
                        "CLNZ_KERNEL_DIR is too long: %zu bytes, with %zu of CLNZ_BUILD_OPTIONS, "
                        "make build options of %d bytes, over %zu",
                        has_dir ? strlen(dir) : 0, has_more ? strlen(more) : 0, len, n - 1);
    return CLNZ_SUCCESS;
}

/* The failure of a device that may not compile: which program is missing,
 * why it cannot be compiled, and what would provide it. */
static clnz_status unavailable(clnz_context *ctx, const program_ref *p)
{
    char why[600];
    uses_explain_missing(ctx, p, why, sizeof why);
    return ctx_fail(ctx, CLNZ_ERROR_PROGRAM_UNAVAILABLE, "no program kernels/%s.cl %s %s", p->file,
                    p->options, why);
}

static clnz_status compile(clnz_context *ctx, const program_ref *p, const char *src,
                           const char *opts, cl_program *out)
{
    cl_int e = CL_SUCCESS;
    char kid[PROGRAM_KID_DEFINE_MAX];
    program_kid_define(p, kid, sizeof kid);
    const char *srcs[2] = {kid, src};
    cl_program prog = clCreateProgramWithSource(ctx->cl, 2, srcs, NULL, &e);
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
        snprintf(head, sizeof head, "building kernels/%s.cl with '%s' failed: %s", p->file, opts,
                 clnz_status_string(e));
        ctx_set_long_message(ctx, head, log ? log : "(no build log)");
        free(log);
        clReleaseProgram(prog);
        return e;
    }
    *out = prog;
    return CLNZ_SUCCESS;
}

clnz_status program_whole(clnz_context *ctx, const program_ref *p)
{
    /* a cut option builds another variant than the one asked for (the
     * look-back's, with every CLNZ_LOOKBACK_* value at its longest, came to
     * 135 bytes, and the last define was cut mid-name: " -DLB_TEST_SPA") */
    if (!p->cut)
        return CLNZ_SUCCESS;
    return ctx_fail(ctx, CLNZ_ERROR_INVALID_VALUE,
                    "the build options of kernels/%s.cl come to %zu bytes, more than the %d "
                    "clnz holds: shorten the environment values that set them",
                    p->file, p->cut, PROGRAM_OPTIONS_MAX - 1);
}

/* Under the driver lock: PoCL's compiler is not safe to run from several
 * threads at once, and a thread that waited finds the program the first
 * one stored in the cache instead of compiling it again. */
static clnz_status build(clnz_context *ctx, const program_ref *p, cl_program *out)
{
    DRIVER_HOLD();
    char common[PROGRAM_COMMON_MAX], opts[PROGRAM_COMMON_MAX + PROGRAM_OPTIONS_MAX + 2];
    char *owned = NULL;
    const char *src;
    clnz_status st = program_common_options(ctx, common, sizeof common);
    if (!st)
        st = program_source(ctx, p->file, &src, &owned);
    if (st)
        return st;
    snprintf(opts, sizeof opts, "%s %s", common, p->options);
    uint64_t source_hash = program_source_hash(src);
    /* a bundle first: on a device without a compiler it is the only source */
    cl_program prog = ctx->bundle ? bundle_load(ctx, p, source_hash, common, &st) : NULL;
    const char *from = "loaded from the bundle";
    /* a warm process loads the compiled program instead of compiling it */
    char key[1024];
    /* "named": its kernels carry the program's identity (kernels/kname.h),
     * so that a binary cached before they did is not taken for one */
    snprintf(key, sizeof key, "clnz %s named|%s|%s|%s|%s|%016llx", CLNZ_VERSION_STRING,
             ctx->id.platform, ctx->id.device, ctx->id.driver, opts,
             (unsigned long long)source_hash);
    if (!prog && !st) {
        prog = program_cache_load(ctx, key);
        from = prog ? "loaded from the cache" : ctx->can_compile ? "built from source"
                                                                 : "not available";
    }
    if (ctx->debug && !st) /* CLNZ_DEBUG: the user asked for a log on stderr */
        fprintf(stderr, "clnz-debug: program %s %s: %s\n", p->file, p->options, from);
    if (!prog && !st) {
        if (!ctx->can_compile)
            st = unavailable(ctx, p);
        else if (!(st = compile(ctx, p, src, opts, &prog)))
            program_cache_store(ctx, key, prog);
    }
    free(owned);
    if (!st)
        *out = prog;
    return st;
}

/* The context's program p (retained), or NULL. */
static cl_program known(const clnz_context *ctx, const char *prefix, size_t len)
{
    for (int i = 0; i < ctx->n_kernels; ++i) {
        if (ctx->kernels[i].program_len == len && memcmp(ctx->kernels[i].key, prefix, len) == 0) {
            clRetainProgram(ctx->kernels[i].program);
            return ctx->kernels[i].program;
        }
    }
    return NULL;
}

/* "file options|": the part of a kernel's key that names its program. */
static int program_prefix(const program_ref *p, char *key, size_t n)
{
    return snprintf(key, n, "%s %s|", p->file, p->options);
}

clnz_status program_get(clnz_context *ctx, const program_ref *p, cl_program *out)
{
    *out = NULL;
    if (p->cut) /* before the lookups: a cut ref may equal another's options */
        return program_whole(ctx, p);
    char key[sizeof ctx->kernels[0].key];
    int len = program_prefix(p, key, sizeof key);
    *out = known(ctx, key, (size_t)len);
    return *out ? CLNZ_SUCCESS : build(ctx, p, out);
}

/* Keeps kernel k of prog (retained by the caller) under `name`. */
static clnz_status keep(clnz_context *ctx, const program_ref *p, const char *name,
                        cl_program prog, cl_kernel k)
{
    if (ctx->n_kernels == ctx->cap_kernels) {
        int cap = ctx->cap_kernels ? 2 * ctx->cap_kernels : 16;
        kernel_entry *e = realloc(ctx->kernels, (size_t)cap * sizeof *e);
        if (!e) {
            clReleaseKernel(k);
            clReleaseProgram(prog);
            return ctx_fail(ctx, CLNZ_ERROR_OUT_OF_HOST_MEMORY, "out of host memory");
        }
        ctx->kernels = e;
        ctx->cap_kernels = cap;
    }
    kernel_entry *ent = &ctx->kernels[ctx->n_kernels];
    int len = program_prefix(p, ent->key, sizeof ent->key);
    if (len < 0 || (size_t)len + strlen(name) >= sizeof ent->key) {
        /* find_kernel compares whole keys: a cut one would never be found */
        clReleaseKernel(k);
        clReleaseProgram(prog);
        return ctx_fail(ctx, CLNZ_ERROR_PROGRAM_UNAVAILABLE,
                        "internal: the kernel key '%s %s|%s' is too long to keep", p->file,
                        p->options, name);
    }
    ++ctx->n_kernels;
    snprintf(ent->key + len, sizeof ent->key - (size_t)len, "%s", name);
    ent->wg_limit = 0;
    ent->program_len = (size_t)len;
    ent->program = prog;
    ent->kernel = k;
    return CLNZ_SUCCESS;
}

/* Whether key is "file options|name" (keep's form), compared piece by
 * piece: every launch looks its kernel up, and formatting the key cost more
 * than the rest of the lookup. */
static int key_is(const char *key, const program_ref *p, const char *name)
{
    size_t lf = strlen(p->file), lo = strlen(p->options);
    return strncmp(key, p->file, lf) == 0 && key[lf] == ' ' &&
           strncmp(key + lf + 1, p->options, lo) == 0 && key[lf + 1 + lo] == '|' &&
           strcmp(key + lf + 2 + lo, name) == 0;
}

static cl_kernel find_kernel(const clnz_context *ctx, const program_ref *p, const char *name)
{
    for (int i = 0; i < ctx->n_kernels; ++i)
        if (key_is(ctx->kernels[i].key, p, name))
            return ctx->kernels[i].kernel;
    return NULL;
}

clnz_status program_kernel_wg_limit(clnz_context *ctx, cl_kernel k, size_t *limit)
{
    kernel_entry *ent = NULL;
    for (int i = 0; i < ctx->n_kernels && !ent; ++i)
        if (ctx->kernels[i].kernel == k)
            ent = &ctx->kernels[i];
    if (ent && ent->wg_limit) {
        *limit = ent->wg_limit;
        return CLNZ_SUCCESS;
    }
    cl_int e = clGetKernelWorkGroupInfo(k, ctx->device, CL_KERNEL_WORK_GROUP_SIZE, sizeof *limit,
                                        limit, NULL);
    if (e)
        return CL_CHECK(ctx, e, "clGetKernelWorkGroupInfo");
    if (ent)
        ent->wg_limit = *limit;
    return CLNZ_SUCCESS;
}

clnz_status program_kernel(clnz_context *ctx, const program_ref *p, const char *name,
                           cl_kernel *out)
{
    *out = NULL;
    if (!p->cut && (*out = find_kernel(ctx, p, name)))
        return CLNZ_SUCCESS;
    /* kernels of one file and options share one program: one build */
    cl_program prog;
    clnz_status st = program_get(ctx, p, &prog);
    if (st)
        return st;
    cl_int e = CL_SUCCESS;
    char full[96], kid[17]; /* its name with the program's identity (kernels/kname.h) */
    program_kid(p, kid);
    snprintf(full, sizeof full, "%s_%s", name, kid);
    cl_kernel k = clCreateKernel(prog, full, &e);
    if (e == CL_INVALID_KERNEL_NAME) /* a CLNZ_KERNEL_DIR file without KERNEL() */
        k = clCreateKernel(prog, name, &e);
    if (e) {
        clReleaseProgram(prog);
        return CL_CHECK(ctx, e, "clCreateKernel");
    }
    st = keep(ctx, p, name, prog, k);
    if (!st)
        *out = k;
    return st;
}

clnz_status program_warm(clnz_context *ctx, const program_ref *p)
{
    cl_program prog;
    clnz_status st = program_get(ctx, p, &prog);
    if (st)
        return st;
    cl_uint n = 0, made = 0;
    cl_kernel ks[16];
    cl_int e = clCreateKernelsInProgram(prog, 0, NULL, &n);
    if (!e && n > sizeof ks / sizeof ks[0])
        e = CL_OUT_OF_RESOURCES; /* no kernel file has that many */
    if (!e && !(e = clCreateKernelsInProgram(prog, n, ks, NULL)))
        made = n;
    st = CL_CHECK(ctx, e, "clCreateKernelsInProgram");
    for (cl_uint i = 0; i < made; ++i) {
        char name[64] = "";
        if (!st)
            st = CL_CHECK(ctx, clGetKernelInfo(ks[i], CL_KERNEL_FUNCTION_NAME, sizeof name - 1,
                                               name, NULL),
                          "clGetKernelInfo");
        /* kept under its plain name, as program_kernel looks it up: the
         * program's identity off its end (kernels/kname.h) */
        char kid[17];
        program_kid(p, kid);
        size_t len = strlen(name), k = strlen(kid);
        if (len > k + 1 && name[len - k - 1] == '_' && strcmp(name + len - k, kid) == 0)
            name[len - k - 1] = '\0';
        if (st || find_kernel(ctx, p, name)) {
            clReleaseKernel(ks[i]);
            continue;
        }
        clRetainProgram(prog);
        st = keep(ctx, p, name, prog, ks[i]); /* takes the kernel and the reference */
    }
    clReleaseProgram(prog);
    return st;
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
