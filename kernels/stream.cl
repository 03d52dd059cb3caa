/* stream.cl: count, nonzero and select by one work-item that streams the
 * input in order (a 1 x 1 NDRange, the shape of clEnqueueTask): the running
 * output position lives in a register, each selected element is written
 * where it lands, and the count is the position at the end. No scan tree,
 * no barriers, no atomics, no cooperation between work-groups.
 *
 * Written for FPGA compilers (Intel FPGA SDK / oneAPI, AMD Vitis), whose
 * single work-item kernels pipeline a loop to one iteration per clock when
 * nothing in it waits on memory from an earlier iteration:
 *   - the loop-carried state is registers only: the output position o, the
 *     coordinates (an odometer stepped per element, no division), and the
 *     countdown to the next item boundary (no modulo);
 *   - stores are predicated (`if (s) out[o] = ...`), never read back, and
 *     go to another buffer than the loads: no memory dependence between
 *     iterations;
 *   - a contiguous input is read VEC elements per iteration with one vector
 *     load, and its VEC selections are tested with vector operations;
 *   - loop trip counts are the element count and, inside, fixed (VEC, and
 *     the width of an entry, at most 32).
 * On a CPU or a GPU this strategy is one thread: correct, and slow; tests
 * force it there (CLNZ_STRATEGY=stream). */
#include "kname.h"
#include "element.cl"
#include "value.cl"
#include "index.cl"

#define VEC 16

/* Entry o: flat index i, or the coordinates of w (column j of a width-W
 * entry is dimension rank - W + j, zero before dimension 0; reverse: the
 * columns in the opposite order). */
void st_put_entry(__global uchar *out, ulong out_off, ulong capacity, int layout, int width,
                  int reverse, int idx_bytes, ulong o, ulong i, int rank, const long *coord)
{
    if (layout == ABI_LAYOUT_FLAT) {
        put_index(out, out_off + o, (long)i, idx_bytes);
        return;
    }
    for (int j = 0; j < width; ++j) {
        int d = rank - width + (reverse ? width - 1 - j : j);
        long v = d < 0 ? 0 : coord[d];
        ulong pos = layout == ABI_LAYOUT_ROWS ? o * (ulong)width + (ulong)j
                                              : (ulong)j * capacity + o;
        put_index(out, out_off + pos, v, idx_bytes);
    }
}

/* One step of the C-order odometer: coordinates and memory offsets of the
 * input (strides) and of x (x_strides). */
void st_next(long *coord, long *off, long *x_off, int rank, __global const long *meta,
             __global const long *x_meta)
{
    for (int d = rank - 1; d >= 0; --d) {
        *off += META_STRIDE(meta, rank, d);
        *x_off += META_STRIDE(x_meta, rank, d);
        if (++coord[d] < META_SHAPE(meta, d))
            return;
        *off -= META_SHAPE(meta, d) * META_STRIDE(meta, rank, d);
        *x_off -= META_SHAPE(meta, d) * META_STRIDE(x_meta, rank, d);
        coord[d] = 0;
    }
}

/* The coordinates and memory offsets of flat element i (once, after the
 * vector loop: no division inside the loops). */
void st_unravel(ulong i, long *coord, long *off, long *x_off, int rank, __global const long *meta,
                __global const long *x_meta)
{
    *off = 0, *x_off = 0;
    for (int d = rank - 1; d >= 0; --d) {
        ulong e = (ulong)META_SHAPE(meta, d);
        coord[d] = (long)(i % e);
        i /= e;
        *off += coord[d] * META_STRIDE(meta, rank, d);
        *x_off += coord[d] * META_STRIDE(x_meta, rank, d);
    }
}

/* emit, out, x, count, offsets: as lookback.cl's lb_run. */
__kernel void KERNEL(st_run)(__global const bits_t *in, long in_off, ulong n, int rank,
                     __global const long *meta, int contiguous, ekey_t lo, ekey_t hi,
                     uint invert, int emit, __global uchar *out, ulong out_off, ulong capacity,
                     int layout, int width, int reverse, int idx_bytes,
                     __global const value_t *x, long x_off, __global const long *x_meta,
                     int x_contiguous, __global ulong *count, ulong count_off,
                     __global long *offsets, ulong offsets_off, ulong batches, ulong item_elems)
{
    long coord[CLNZ_MAX_RANK];
    for (int d = 0; d < rank; ++d)
        coord[d] = 0;
    ulong o = 0, item = 0, to_boundary = 0;
    long off = 0, xo = 0;
    int values = emit == ABI_EMIT_VALUES, coords = emit == ABI_EMIT_COORDS;
    __global value_t *vout = (__global value_t *)out + out_off;
    /* a contiguous input with nothing to track goes VEC elements at a time */
    int fast = contiguous && (!values || x_contiguous) && !batches &&
               (!coords || layout == ABI_LAYOUT_FLAT || (rank == 1 && width == 1));
    ulong i = 0;
    if (fast) {
        for (; i + VEC <= n; i += VEC) {
            uint m = elem_mask16(vload16(0, in + in_off + i), lo, hi, invert);
            for (uint j = 0; j < VEC; ++j) {
                uint s = (m >> j) & 1;
                if (s && o < capacity) {
                    if (values)
                        vout[o] = x[x_off + i + j];
                    else if (coords) /* flat, or one coordinate: the index itself */
                        put_index(out, out_off + o, (long)(i + j), idx_bytes);
                }
                o += s;
            }
        }
        if (i < n)
            st_unravel(i, coord, &off, &xo, rank, meta, x_meta);
    }
    for (; i < n; ++i) {
        if (batches && to_boundary == 0) { /* item `item` begins here */
            offsets[offsets_off + item++] = (long)o;
            to_boundary = item_elems;
        }
        --to_boundary;
        uint s = elem_selected(in[in_off + off], lo, hi, invert);
        if (s && o < capacity) {
            if (values)
                vout[o] = x[x_off + xo];
            else if (coords)
                st_put_entry(out, out_off, capacity, layout, width, reverse, idx_bytes, o, i,
                             rank, coord);
        }
        o += s;
        st_next(coord, &off, &xo, rank, meta, x_meta);
    }
    count[count_off] = o;
}
