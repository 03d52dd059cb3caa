/* where.cl: where(cond, x, y), element-wise: out[i] = x[i] where the
 * predicate holds on cond[i], else y[i], over the broadcast shape.
 *
 * The output is C-order and contiguous. Each operand reaches element i of
 * the output one of three ways (its mode): 1, it is C-contiguous with the
 * output's shape (offset i); 2, it is one value (a scalar, or an array whose
 * every dimension is broadcast: offset 0); 0, anything else, through its
 * strides, where a broadcast dimension has stride 0. Only mode 0 needs the
 * odometer. Values move as bit patterns (value.cl); cond is read through
 * element.cl, so any dtype and predicate work. */
#include "kname.h"
#include "element.cl"
#include "value.cl"

#define MODE_STRIDED ABI_MODE_STRIDED
#define MODE_CONTIGUOUS ABI_MODE_CONTIGUOUS
#define MODE_SCALAR ABI_MODE_SCALAR

long mode_offset(int mode, ulong i, long strided)
{
    return mode == MODE_CONTIGUOUS ? (long)i : mode == MODE_SCALAR ? 0 : strided;
}

/* meta: the output's shape, then the strides (elements) of cond, x and y. */
__kernel void KERNEL(where_write)(__global const bits_t *cond, long cond_off, int cond_mode, ekey_t lo,
                          ekey_t hi, uint invert, __global const value_t *x, long x_off,
                          int x_mode, __global const value_t *y, long y_off, int y_mode,
                          ulong n, int rank, __global const long *meta, __global value_t *out,
                          ulong out_off, uint items)
{
    ulong first = get_global_id(0) * (ulong)items;
    if (first >= n)
        return;
    ulong last = min(first + (ulong)items, n);
    __global value_t *dst = out + out_off;
    if (cond_mode && x_mode && y_mode) { /* no strides to follow */
        for (ulong i = first; i < last; ++i) {
            uint s = elem_selected(cond[cond_off + mode_offset(cond_mode, i, 0)], lo, hi, invert);
            value_t a = x[x_off + mode_offset(x_mode, i, 0)];
            value_t b = y[y_off + mode_offset(y_mode, i, 0)];
            dst[i] = s ? a : b;
        }
        return;
    }
    /* the odometer: one div/mod per dimension here, then a step per element */
    long coord[CLNZ_MAX_RANK];
    long oc = 0, ox = 0, oy = 0;
    ulong rem = first;
    for (int d = rank - 1; d >= 0; --d) {
        long e = META_SHAPE(meta, d);
        coord[d] = (long)(rem % (ulong)e);
        rem /= (ulong)e;
        oc += coord[d] * meta[rank + d];
        ox += coord[d] * meta[2 * rank + d];
        oy += coord[d] * meta[3 * rank + d];
    }
    for (ulong i = first; i < last; ++i) {
        uint s = elem_selected(cond[cond_off + mode_offset(cond_mode, i, oc)], lo, hi, invert);
        value_t a = x[x_off + mode_offset(x_mode, i, ox)];
        value_t b = y[y_off + mode_offset(y_mode, i, oy)];
        dst[i] = s ? a : b;
        for (int d = rank - 1; d >= 0; --d) {
            oc += meta[rank + d];
            ox += meta[2 * rank + d];
            oy += meta[3 * rank + d];
            if (++coord[d] < META_SHAPE(meta, d))
                break;
            oc -= META_SHAPE(meta, d) * meta[rank + d];
            ox -= META_SHAPE(meta, d) * meta[2 * rank + d];
            oy -= META_SHAPE(meta, d) * meta[3 * rank + d];
            coord[d] = 0;
        }
    }
}
