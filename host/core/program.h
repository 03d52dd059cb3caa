/* program.h: kernels built from the kernels/ folder (program.c), kept per context,
 * and their compiled binaries on disk (program_cache.c). */
#ifndef CLNZ_CORE_PROGRAM_H
#define CLNZ_CORE_PROGRAM_H

#include "clnz.h"

/* The kernel `name` from kernels/<file>.cl built with `options` (the -D
 * defines), built on first use and kept for the context's life. */
clnz_status program_kernel(clnz_context *ctx, const char *file, const char *name,
                           const char *options, cl_kernel *out);
void program_release_all(clnz_context *ctx);
/* Build options, one place for each kernel file's -D set: the axes that
 * change the code (the element's type, the nonzero predicate's cheaper
 * test, the scan's type). What is cheap to pass at run time (items per
 * work-item, layout, index size, width, order) is a kernel argument, so
 * that a program serves every launch shape. element_options: the files
 * that read elements through element.cl; scan_options: scan.cl. */
void element_options(char *buf, size_t n, clnz_dtype dtype, int pred_nonzero);
void scan_options(char *buf, size_t n, int is_u64);
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

#endif
