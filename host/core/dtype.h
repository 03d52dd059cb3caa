/* dtype.h: everything clnz knows about an element type, in one table
 * (dtype.c): its names, size, kind and value range. The kernels' side of it
 * is kernels/element.cl (how bits are read) and kernels/abi.h (the codes). */
#ifndef CLNZ_CORE_DTYPE_H
#define CLNZ_CORE_DTYPE_H

#include "clnz.h"

typedef struct {
    const char *name;  /* clnz's short name: "f32" */
    const char *numpy; /* numpy's dtype.str in native order: "<f4" */
    size_t size;       /* bytes */
    char kind;         /* 'b' bool, 'u' unsigned, 'i' signed, 'f' IEEE float */
    /* Integers (bool: 0..1): the values the dtype holds. Floats: the largest
     * finite value in min/max's place is not needed; inf_bits is the bit
     * pattern of +inf and mag_mask the magnitude bits. */
    int64_t min;
    uint64_t max;
    uint64_t inf_bits, mag_mask;
} dtype_info;

/* The dtype's entry, or NULL for a value outside the enum. */
const dtype_info *dtype_of(clnz_dtype dtype);
static inline int dtype_is_float(clnz_dtype dtype)
{
    const dtype_info *d = dtype_of(dtype);
    return d && d->kind == 'f';
}

#endif
