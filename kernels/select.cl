/* select.cl: x[mask], the values of x at the selected positions in C order
 * (numpy.extract, torch.masked_select).
 *
 * The selection is a predicate on a tensor of x's shape: the mask (any dtype)
 * or x itself. It is counted and scanned exactly as for nonzero (nz_count,
 * scan.cl), with the same partition into tiles and chunks, so this writing
 * pass only differs from nz_write in what an entry is: x's value, moved as a
 * bit pattern (value.cl). */
#include "kname.h"
#include "chunk.cl"
#include "value.cl"

/* mask/in: the tensor the predicate reads; x: the values, with its own
 * offset and strides (x_meta) over the same shape. single: one tile, count
 * here too (see nz_write). */
__kernel void KERNEL(sel_write)(__global const bits_t *in, long in_off, ulong n, int rank,
                        __global const long *meta, int contiguous, ekey_t lo, ekey_t hi,
                        uint invert, __global const value_t *x, long x_off,
                        __global const long *x_meta, int x_contiguous,
                        __global ulong *tile_offsets, ulong offsets_off,
                        __global const uint *item_counts, ulong items_off, __global value_t *out,
                        ulong out_off, ulong capacity, int single, uint p2,
                        __local ulong *scratch, uint items)
{
    ulong tile = (ulong)get_local_size(0) * items;
    ulong first = get_group_id(0) * tile + get_local_id(0) * items;
    ulong c;
    ulong o = chunk_slot(in, in_off, first, n, rank, meta, contiguous, lo, hi, invert,
                         tile_offsets, offsets_off, item_counts, items_off, single, p2, scratch,
                         &c, items);
    if (c == 0 || o >= capacity)
        return;
    ulong last = min(first + items, n);
    ulong o_end = min(o + c, capacity); /* this work-item's own slots */
    __global value_t *dst = out + out_off;
    if (contiguous && x_contiguous) {
        __global const bits_t *m_in = in + in_off;
        __global const value_t *v = x + x_off;
        ulong i = first;
        for (; i + BLOCK <= last && o < o_end; i += BLOCK) {
            uint m = block_mask(m_in + i, lo, hi, invert);
            if (m == 0)
                continue;
            if (o + BLOCK <= o_end) {
                /* every element writes slot o, only a selected one moves o
                 * on: no branch that random data mispredicts */
                for (uint j = 0; j < BLOCK; ++j) {
                    dst[o] = v[i + j];
                    o += (m >> j) & 1;
                }
            } else {
                for (; m && o < o_end; m &= m - 1)
                    dst[o++] = v[i + low_bit(m)];
            }
        }
        for (; i < last && o < o_end; ++i) {
            dst[o] = v[i];
            o += elem_selected(m_in[i], lo, hi, invert);
        }
        return;
    }
    walker wm, wx;
    walker_init(&wm, first, rank, meta, !contiguous);
    walker_init(&wx, first, rank, x_meta, !x_contiguous);
    for (ulong i = first; i < last && o < o_end; ++i) {
        uint s = elem_selected(in[in_off + wm.off], lo, hi, invert);
        dst[o] = x[x_off + wx.off];
        o += s;
        if (i + 1 < last) {
            walker_next(&wm, rank, meta, !contiguous);
            walker_next(&wx, rank, x_meta, !x_contiguous);
        }
    }
}
