/* predicate.h: "x OP value" as the key range the kernels test
 * (predicate.c). */
#ifndef CLNZ_CORE_PREDICATE_H
#define CLNZ_CORE_PREDICATE_H

#include "clnz.h"

typedef struct {
    uint64_t lo, hi; /* key bounds, as the kernel's key type (long or ulong) */
    cl_uint invert;
    int nonzero;     /* the predicate is x != 0: kernels built with PRED_NONZERO */
} pred_keys;

clnz_status pred_to_keys(clnz_context *ctx, clnz_dtype dtype, const clnz_predicate *pred,
                         pred_keys *out);
/* IEEE binary16 from and to double, rounding to nearest even. */
double clnz_half_to_double(uint16_t h);
uint16_t clnz_double_to_half(double v);

#endif
