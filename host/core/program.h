/* program.h: kernels built from the kernels/ folder (program.c), kept per
 * context, their compiled binaries on disk (program_cache.c), and the
 * programs a context may load from a bundle (bundle.c). */
#ifndef CLNZ_CORE_PROGRAM_H
#define CLNZ_CORE_PROGRAM_H

#include "clnz.h"

#include <stdint.h>

/* A program: a kernel file built with its -D options. It is what is
 * compiled, cached on disk, warmed up and put in a bundle; a context keeps
 * each one it built, with the kernels made from it. */
enum { PROGRAM_OPTIONS_MAX = 128 };
/* The options every program shares (program_common_options): the standard,
 * CLNZ_KERNEL_DIR's -I and CLNZ_BUILD_OPTIONS; a bundle's manifest keeps them. */
enum { PROGRAM_COMMON_MAX = 256 };
typedef struct {
    const char *file;                  /* kernels/<file>.cl (a static string) */
    char options[PROGRAM_OPTIONS_MAX]; /* its -D options */
    size_t cut; /* 0, or the bytes the options needed: program_append ran out of room */
} program_ref;

/* Program refs, one place for each -D axis: the axes that change the code
 * (the element's type, the nonzero predicate's cheaper test, the scan's
 * type, the size of a moved value). What is cheap to pass at run time
 * (items per work-item, layout, index size, width, order) is a kernel
 * argument, so that a program serves every launch shape. Each kernel file's
 * own ref is made next to the code that launches it (strategy/, ops/), from
 * these. program_start: a file's ref with no options yet; program_element:
 * the files that read elements through element.cl; program_append adds
 * " -DNAME=VALUE" style options, and marks the ref cut when they do not fit
 * (building a cut ref fails: it would be another variant than the one
 * asked for). */
void program_start(program_ref *r, const char *file);
void program_element(program_ref *r, const char *file, clnz_dtype dtype, int pred_nonzero);
void program_append(program_ref *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* CLNZ_ERROR_INVALID_VALUE (with the message) for a cut ref, else success:
 * what builds and bundles check before using a ref's options. */
clnz_status program_whole(clnz_context *ctx, const program_ref *p);

/* A set of programs, no two alike (program_set.c): what a declared use
 * needs, for warm-up and bundles. */
typedef struct {
    program_ref *refs;
    int n, cap;
} program_set;
/* Adds r unless the set has it: 0, or -1 when out of memory. */
int program_set_add(program_set *s, const program_ref *r);
/* r's index in the set, or -1. */
int program_set_find(const program_set *s, const program_ref *r);
void program_set_free(program_set *s);

/* The kernel `name` of program p, built on first use and kept for the
 * context's life. */
clnz_status program_kernel(clnz_context *ctx, const program_ref *p, const char *name,
                           cl_kernel *out);
/* CL_KERNEL_WORK_GROUP_SIZE of kernel k on the context's device, asked once
 * for a kernel program_kernel made (each launch plans with it). */
clnz_status program_kernel_wg_limit(clnz_context *ctx, cl_kernel k, size_t *limit);
/* Builds (or loads) program p and keeps every kernel in it, as a first call
 * would: what clnz_warmup does for each program. */
clnz_status program_warm(clnz_context *ctx, const program_ref *p);
/* Program p as a cl_program (retained: the caller releases it), from the
 * context, a bundle, the cache or the compiler, in that order. */
clnz_status program_get(clnz_context *ctx, const program_ref *p, cl_program *out);
void program_release_all(clnz_context *ctx);

/* The OpenCL C text program p is built from (embedded, or from
 * CLNZ_KERNEL_DIR): *owned is what to free afterwards (may be NULL). */
clnz_status program_source(clnz_context *ctx, const char *file, const char **src, char **owned);
/* The hash that keys a program's source in the cache and in bundles: its
 * text's; under CLNZ_KERNEL_DIR every .cl and .h file's there too, since
 * the text holds #include lines (embedded sources have them inlined), and
 * an edit to an included file must not find the program built before it. */
uint64_t program_source_hash(const char *src);
/* A program's identity, for its kernels' names (kernels/kname.h): a hash
 * of its file and -D options, "kid" 16 hex digits. Every build defines
 * CLNZ_KID to it (the source is prefixed with the define:
 * program_kid_define), so that its kernels are named <name>_<kid>;
 * program_is says whether a loaded binary is that program. */
enum { PROGRAM_KID_DEFINE_MAX = 48 };
void program_kid_define(const program_ref *p, char *buf, size_t n);
int program_is(cl_program prog, const program_ref *p);
/* The build options every program gets before its -D options. */
clnz_status program_common_options(clnz_context *ctx, char *buf, size_t n);
/* Embedded kernel sources, generated from kernels/ by scripts/embed-kernels. */
const char *kernel_source_embedded(const char *file);

/* A program built from its cached binary, or NULL (and a reason counted)
 * when there is none or the driver rejects it. */
cl_program program_cache_load(clnz_context *ctx, const char *key);
void program_cache_store(clnz_context *ctx, const char *key, cl_program prog);
/* The binary inside a cache file's bytes (NUL-terminated at data[size]),
 * or NULL if they are not what they claim; for the fuzzer too. */
const unsigned char *program_cache_parse(const char *data, size_t size, const char *key,
                                         size_t *len);
/* The compiled binary of a built program (malloc'd), or NULL. */
unsigned char *program_binary(cl_program prog, size_t *len);

/* A program from the context's bundle (bundle.c), or NULL when the bundle
 * has no binary of it for this source and these common build options
 * (program_common_options, which may change after the bundle was taken);
 * a binary the driver rejects is a failure with the reason (st set), not a
 * silent fallback. */
cl_program bundle_load(clnz_context *ctx, const program_ref *p, uint64_t source_hash,
                       const char *common_options, clnz_status *st);
/* Why the context has no program p: the declared use that needs it and the
 * bundle option that would include it (uses/variants.c, the one place that
 * knows which uses need which programs), as text for the error message. */
void uses_explain_missing(clnz_context *ctx, const program_ref *p, char *buf, size_t n);

#endif
