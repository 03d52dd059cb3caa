/* chunk.cl: what one work-item reads of its chunk of `items` consecutive
 * elements: how many are selected (the counting passes) and, 32 at a time,
 * which (a bit mask for the writing passes), and where a writing pass starts
 * writing (chunk_slot). Shared by nonzero.cl and
 * select.cl, whose passes must partition the input the same way. */
#ifndef CLNZ_CHUNK_CL
#define CLNZ_CHUNK_CL

#include "element.cl"
#include "blelloch.cl"

/* The selection of BLOCK consecutive elements as a bit mask (bit j: element
 * j), from 16-lane vector tests: no branch per element. */
#define BLOCK 32
inline uint block_mask(__global const bits_t *p, ekey_t lo, ekey_t hi, uint invert)
{
    return elem_mask16(vload16(0, p), lo, hi, invert) |
           elem_mask16(vload16(1, p), lo, hi, invert) << 16;
}

/* Lowest set bit's index (ctz is OpenCL 2.0; clz is 1.2). */
inline uint low_bit(uint m) { return 31 - clz(m & (0u - m)); }

/* Counts the selected elements of this work-item's chunk. */
inline ulong chunk_count(__global const bits_t *in, long in_off, ulong first, ulong n, int rank,
                         __global const long *meta, int contiguous, ekey_t lo, ekey_t hi,
                         uint invert, uint items)
{
    ulong c = 0;
    if (first >= n)
        return 0;
    if (contiguous) {
        __global const bits_t *p = in + in_off + first;
        if (first + items <= n) { /* full chunk: no bounds checks */
            uint cu = 0, j = 0; /* at most `items`: 32-bit lanes vectorize better */
#if !PRED_NONZERO /* the compiler vectorizes x != 0 by itself, not the key range */
            for (; j + 16 <= items; j += 16)
                cu += popcount(elem_mask16(vload16(0, p + j), lo, hi, invert));
#endif
            for (; j < items; ++j)
                cu += elem_selected(p[j], lo, hi, invert);
            c = cu;
        } else {
            for (uint j = 0; j < n - first; ++j)
                c += elem_selected(p[j], lo, hi, invert);
        }
        return c;
    }
    walker w;
    walker_init(&w, first, rank, meta, 1);
    ulong last = min(first + items, n);
    for (ulong i = first; i < last; ++i) {
        c += elem_selected(in[in_off + w.off], lo, hi, invert);
        if (i + 1 < last)
            walker_next(&w, rank, meta, 1);
    }
    return c;
}

/* Where a writing pass's work-item starts: its count *c (nz_count's, or,
 * with single, counted here: the whole input is one tile, nothing was
 * counted before, and the group's total goes to tile_offsets[offsets_off],
 * the caller's count) and its first output slot, returned. Every work-item
 * of the group must call it (the local scan has barriers). */
inline ulong chunk_slot(__global const bits_t *in, long in_off, ulong first, ulong n, int rank,
                        __global const long *meta, int contiguous, ekey_t lo, ekey_t hi,
                        uint invert, __global ulong *tile_offsets, ulong offsets_off,
                        __global const uint *item_counts, ulong items_off, int single, uint p2,
                        __local ulong *scratch, ulong *c,
                        uint items)
{
    *c = single ? chunk_count(in, in_off, first, n, rank, meta, contiguous, lo, hi, invert, items)
                : item_counts[items_off + get_global_id(0)];
    ulong total;
    ulong o = wg_exclusive_scan(*c, scratch, p2, &total);
    if (single) {
        if (get_local_id(0) == 0)
            tile_offsets[offsets_off] = total;
        return o;
    }
    return o + tile_offsets[offsets_off + get_group_id(0)];
}

#endif /* CLNZ_CHUNK_CL */
