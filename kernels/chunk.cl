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
uint block_mask(__global const bits_t *p, ekey_t lo, ekey_t hi, uint invert)
{
    return elem_mask16(vload16(0, p), lo, hi, invert) |
           elem_mask16(vload16(1, p), lo, hi, invert) << 16;
}

/* How many of the 64 * blocks one-byte elements from p on are selected:
 * each lane of four 16-lane byte counters adds 1 for its element if it is
 * selected, up to 255 blocks before they are added up. Where a bit mask per 32
 * elements took its popcount (a multiply and shifts per 8 elements), this
 * is a compare, a mask and an add per 16 (u8 4096 x 4096 on PoCL, device-
 * resident count, medians: x != 0 at 10 % 1.10 -> 0.46 ms, numpy's
 * count_nonzero 0.9-1.0; x > 230 on random bytes 3.10 -> 0.74). */
#if ELEM_BYTES == 1
uint bytes_count(__global const uchar *p, uint blocks, ekey_t lo, ekey_t hi, uint invert)
{
    uint c = 0;
    for (uint b = 0; b < blocks;) {
        uint end = min(blocks, b + 255u);
        /* lanes of -1 or 0 made 1 or 0 by convert and mask: subtracting the
         * lanes, or masking their as_uchar16, counted wrong under Oclgrind */
        const uchar16 one = (uchar16)1;
        uchar16 a0 = 0, a1 = 0, a2 = 0, a3 = 0;
        for (; b < end; ++b) {
            __global const uchar *q = p + (size_t)b * 64;
            a0 += convert_uchar16(elem_sel16(vload16(0, q), lo, hi, invert)) & one;
            a1 += convert_uchar16(elem_sel16(vload16(1, q), lo, hi, invert)) & one;
            a2 += convert_uchar16(elem_sel16(vload16(2, q), lo, hi, invert)) & one;
            a3 += convert_uchar16(elem_sel16(vload16(3, q), lo, hi, invert)) & one;
        }
        ushort16 s = convert_ushort16(a0) + convert_ushort16(a1) + convert_ushort16(a2) +
                     convert_ushort16(a3);
        ushort8 s8 = s.lo + s.hi;
        ushort4 s4 = s8.lo + s8.hi;
        c += (uint)s4.x + s4.y + s4.z + s4.w;
    }
    return c;
}
#endif

/* Lowest set bit's index (ctz is OpenCL 2.0; clz is 1.2). */
uint low_bit(uint m)
{
    return 31 - clz(m & (0u - m));
}

/* Counts the selected elements of this work-item's chunk. */
ulong chunk_count(__global const bits_t *in, long in_off, ulong first, ulong n, int rank,
                  __global const long *meta, int contiguous, ekey_t lo, ekey_t hi, uint invert,
                  uint items)
{
    ulong c = 0;
    if (first >= n)
        return 0;
    if (contiguous) {
        __global const bits_t *p = in + in_off + first;
        if (first + items <= n) { /* full chunk: no bounds checks */
            uint cu = 0, j = 0; /* at most `items`: 32-bit lanes vectorize better */
#if ELEM_BYTES == 1
            cu = bytes_count((__global const uchar *)p, items / 64, lo, hi, invert);
            j = items / 64 * 64;
#elif !PRED_NONZERO /* the compiler vectorizes x != 0 by itself */
            /* the lanes of elem_sel16 added up, as bytes_count does: f32
             * (4096, 4096) x > 0.9 on PoCL 2.85 -> 2.55 ms (a mask's
             * popcount per 32 elements; 4.37 with 64-bit keys) */
            int16 acc = 0;
            for (; j + 16 <= items; j += 16)
                acc += convert_int16(elem_sel16(vload16(0, p + j), lo, hi, invert)) & (int16)1;
            int8 a8 = acc.lo + acc.hi;
            int4 a4 = a8.lo + a8.hi;
            cu = (uint)(a4.x + a4.y + a4.z + a4.w);
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

/* chunk_count for a contiguous chunk that starts on a BLOCK boundary, also
 * keeping its selection, BLOCK elements to a word, in sel_bits[first /
 * BLOCK ...]: nz_write then reads these n / 8 bytes instead of the input a
 * second time (on a CPU the re-read was a third of the writing pass). */
ulong chunk_count_keep(__global const bits_t *in, long in_off, ulong first, ulong n, ekey_t lo,
                       ekey_t hi, uint invert, __global uint *sel_bits, uint items)
{
    if (first >= n)
        return 0;
    __global const bits_t *p = in + in_off + first;
    __global uint *w = sel_bits + first / BLOCK;
    uint len = (uint)min((ulong)items, n - first), cu = 0, j = 0;
    for (; j + BLOCK <= len; j += BLOCK) {
        uint m = block_mask(p + j, lo, hi, invert);
        w[j / BLOCK] = m;
        cu += popcount(m);
    }
    if (j < len) { /* the input's last, partial word */
        uint m = 0;
        for (uint k = 0; j + k < len; ++k)
            m |= elem_selected(p[j + k], lo, hi, invert) << k;
        w[j / BLOCK] = m;
        cu += popcount(m);
    }
    return cu;
}

/* The selection of the BLOCK elements from i on, from the words
 * chunk_count_keep kept (i need not be on a word: ND runs restart at each
 * row). Elements i .. i + BLOCK - 1 exist, so both words were kept. */
uint kept_mask(__global const uint *sel_bits, ulong i)
{
    ulong wi = i / BLOCK;
    uint s = (uint)(i % BLOCK);
    uint m = sel_bits[wi];
    return s ? (m >> s) | (sel_bits[wi + 1] << (BLOCK - s)) : m;
}

/* Where a writing pass's work-item starts: its count *c (nz_count's, or,
 * with single, counted here: the whole input is one tile, nothing was
 * counted before, and the group's total goes to tile_offsets[offsets_off],
 * the caller's count) and its first output slot, returned. Every work-item
 * of the group must call it (the local scan has barriers). */
ulong chunk_slot(__global const bits_t *in, long in_off, ulong first, ulong n, int rank,
                 __global const long *meta, int contiguous, ekey_t lo, ekey_t hi, uint invert,
                 __global ulong *tile_offsets, ulong offsets_off, __global const uint *item_counts,
                 ulong items_off, int single, uint p2, __local ulong *scratch, ulong *c, uint items)
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
