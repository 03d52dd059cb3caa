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
 * j), from 16-lane vector tests: no branch per element. One-byte elements
 * under x != 0 go eight to a 64-bit word instead (bytes8_nonzero): a few
 * integer operations per eight elements, where the vector test widens each
 * byte to 32 bits (on PoCL the counting pass of u8 ran at half the read
 * bandwidth). */
#define BLOCK 32
#if PRED_NONZERO && (CLNZ_DTYPE == CLNZ_DT_BOOL || CLNZ_DTYPE == CLNZ_DT_U8 || \
                     CLNZ_DTYPE == CLNZ_DT_I8)
#define BLOCK_MASK_SWAR 1
/* Bit j: byte j of x is not 0. A byte's high bit after the add is set iff
 * one of its low seven bits was (no carry crosses bytes: 0x7f + 0x7f <
 * 0x100); or-ing x adds its own high bit. The multiply gathers the eight
 * high bits, bit 8j + 7 to bit 56 + j, with no two partial products
 * overlapping. */
inline uint bytes8_nonzero(ulong x)
{
    ulong h = (((x & 0x7f7f7f7f7f7f7f7fUL) + 0x7f7f7f7f7f7f7f7fUL) | x) & 0x8080808080808080UL;
    return (uint)((h * 0x0002040810204081UL) >> 56);
}
inline uint block_mask(__global const bits_t *p, ekey_t lo, ekey_t hi, uint invert)
{
    ulong2 a = as_ulong2(vload16(0, p)), b = as_ulong2(vload16(1, p));
    return bytes8_nonzero(a.x) | bytes8_nonzero(a.y) << 8 | bytes8_nonzero(b.x) << 16 |
           bytes8_nonzero(b.y) << 24;
}
#else
#define BLOCK_MASK_SWAR 0
inline uint block_mask(__global const bits_t *p, ekey_t lo, ekey_t hi, uint invert)
{
    return elem_mask16(vload16(0, p), lo, hi, invert) |
           elem_mask16(vload16(1, p), lo, hi, invert) << 16;
}
#endif

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
#if !PRED_NONZERO || BLOCK_MASK_SWAR /* the compiler vectorizes x != 0 by itself */
            for (; j + BLOCK <= items; j += BLOCK)
                cu += popcount(block_mask(p + j, lo, hi, invert));
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
inline ulong chunk_count_keep(__global const bits_t *in, long in_off, ulong first, ulong n,
                              ekey_t lo, ekey_t hi, uint invert, __global uint *sel_bits,
                              uint items)
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
inline uint kept_mask(__global const uint *sel_bits, ulong i)
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
