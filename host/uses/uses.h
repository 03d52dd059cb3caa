/* uses.h: declared uses (what a set of calls needs, include/clnz.h's
 * clnz_uses) and the programs they need, for warm-up and bundles:
 *   uses.c      the names of each axis, parsing and formatting lists;
 *   variants.c  the one enumeration: declared uses -> programs, built from
 *               the functions the operations and strategies build their
 *               programs with, and the reverse (which use needs a program);
 *   warmup.c    clnz_warmup;
 *   bundle*.c   bundles: in memory and on disk (bundle.c), built
 *               (bundle_build.c), used by a context (bundle_use.c); their
 *               manifest's text is manifest.c's. */
#ifndef CLNZ_USES_H
#define CLNZ_USES_H

#include "core/context.h"
#include "core/program.h"

/* ---- names (uses.c) ---- */
typedef enum { AXIS_DTYPES = 0, AXIS_OPS, AXIS_PREDICATES, AXIS_STRATEGIES, AXIS_COUNT } uses_axis;
extern const char *const uses_axis_names[AXIS_COUNT]; /* "dtypes", ... as clnz_uses_parse */
uint32_t *uses_field(clnz_uses *u, uses_axis axis);
/* The bit's name on an axis (bit = 1u << i), or NULL. */
const char *uses_bit_name(uses_axis axis, int i);
/* "u8,f32": the names of the bits set, in the axis's order. */
void uses_format(uint32_t bits, uses_axis axis, char *buf, size_t n);
/* The uses with every default filled in, the strategies as the ones this
 * context may run. */
clnz_uses uses_resolve(const clnz_context *ctx, const clnz_uses *u);
/* CLNZ_ERROR_INVALID_ARGUMENT, naming them, if u (NULL: none) sets a bit
 * that names nothing (clnz_warmup and clnz_bundle_build). */
clnz_status uses_check(clnz_context *ctx, const clnz_uses *u);

/* ---- the enumeration (variants.c) ---- */
/* One point of a use: an operation (one CLNZ_USE_* bit) on one dtype with
 * one predicate class (one CLNZ_PREDS_* bit), run by one strategy (AUTO
 * for the programs that run outside the strategies). */
typedef struct {
    uint32_t op, pred;
    clnz_dtype dtype;
    clnz_strategy strategy;
    size_t value_bytes; /* select's and where's values (any dtype of this size); 0: none */
} use_point;

/* Every program the uses need on ctx, into out (empty on entry); *points
 * (malloc'd, if not NULL) gets for each program the first use point that
 * needs it. */
clnz_status variants_of(clnz_context *ctx, const clnz_uses *u, program_set *out,
                        use_point **points);
/* "count of f64, predicate nonzero, strategy stream" */
void use_point_describe(const use_point *p, char *buf, size_t n);

/* ---- bundles (bundle.c, bundle_use.c) ---- */
typedef struct manifest manifest;
const manifest *bundle_manifest(const clnz_bundle *b);
const char *bundle_dir(const clnz_bundle *b); /* where it was read from */

#endif
