/* nonzero.cl: the fused nonzero pipeline (reduce, then scan, then write).
 *
 * The mask is never stored: nz_count evaluates the predicate and writes one
 * count per tile, the host scans those counts (scan.cl) into tile offsets and
 * the total, and nz_write evaluates the predicate again, scans the per-work-item
 * counts of its tile in local memory (Blelloch) and writes each selected
 * element's coordinates at its offset. Both passes partition the input the same
 * way: tile g is work-group g, and work-item l owns `items` consecutive elements
 * of it, so offsets come out in C order. */
#include "chunk.cl"
#include "bitpos.cl"
#include "index.cl"

#define LAYOUT_ROWS ABI_LAYOUT_ROWS
#define LAYOUT_COLUMNS ABI_LAYOUT_COLUMNS
#define LAYOUT_FLAT ABI_LAYOUT_FLAT

/* Writes each tile's count, and each work-item's (at most `items`, so 32 bits)
 * for nz_write, which then need not read its chunk twice. */
__kernel void nz_count(__global const bits_t *in, long in_off, ulong n, int rank,
                       __global const long *meta, int contiguous, ekey_t lo, ekey_t hi,
                       uint invert, __global ulong *tile_counts, ulong counts_off,
                       __global uint *item_counts, ulong items_off, uint p2,
                       __local ulong *scratch, uint items)
{
    ulong tile = (ulong)get_local_size(0) * items;
    ulong first = get_group_id(0) * tile + get_local_id(0) * items;
    ulong c = chunk_count(in, in_off, first, n, rank, meta, contiguous, lo, hi, invert, items);
    item_counts[items_off + get_global_id(0)] = (uint)c;
    ulong total;
    wg_exclusive_scan(c, scratch, p2, &total);
    if (get_local_id(0) == 0)
        tile_counts[counts_off + get_group_id(0)] = total;
}

/* Writes entry o (the o-th selected element, flat index i) in the chosen
 * layout. Column j of a width-W entry is dimension rank - W + j; the columns
 * before dimension 0 are zeros (DirectML's coordinate width). reverse (order
 * xy): the entry's columns in the opposite order, (x, y) = (column, row). */
inline void put_entry(__global uchar *out, ulong out_off, ulong capacity, int layout, int width,
                      int reverse, int idx_bytes, ulong o, ulong i, int rank, const walker *w)
{
    if (layout == LAYOUT_FLAT) {
        put_index(out, out_off + o, (long)i, idx_bytes);
        return;
    }
    for (int j = 0; j < width; ++j) {
        int d = rank - width + (reverse ? width - 1 - j : j);
        long v = d < 0 ? 0 : (rank == 1 ? (long)i : w->coord[d]);
        ulong pos = layout == LAYOUT_ROWS ? o * (ulong)width + j : (ulong)j * capacity + o;
        put_index(out, out_off + pos, v, idx_bytes);
    }
}

/* A block's entries are written by bytes: for each byte of the mask, its 8
 * slots (bitpos.cl) are stored at o and o moves on by the byte's popcount;
 * the slots past the byte's own entries are overwritten by the next byte. No
 * branch depends on the data, so random positions cost no mispredictions and
 * the cost hardly moves with density (measured on PoCL from 1 to 50 %: never
 * slower than one store per set bit, 1.6x faster at 10 %). The block needs
 * BLOCK free slots before o_end, so the last blocks of a chunk go by bits,
 * one store per set bit, stopping at o_end: no write lands past this
 * work-item's own slots. */
/* Contiguous input whose entry is its flat index i (flat layout, or a 1-D
 * input with one coordinate). */
#define INDEX_RUN(T, CONVERT8)                                                                 \
    {                                                                                          \
        __global T *dst = (__global T *)out + out_off;                                         \
        ulong i = first;                                                                       \
        for (; i + BLOCK <= last && o < o_end; i += BLOCK) {                                   \
            uint m = block_mask(in + i, lo, hi, invert);                                       \
            if (o + BLOCK <= o_end) {                                                          \
                for (uint q = 0; q < BLOCK; q += 8, m >>= 8) {                                 \
                    vstore8(CONVERT8(byte_slots(m & 255u)) + (T)(i + q), 0, dst + o);          \
                    o += popcount(m & 255u);                                                   \
                }                                                                              \
            } else {                                                                           \
                for (; m && o < o_end; m &= m - 1)                                             \
                    dst[o++] = (T)(i + low_bit(m));                                            \
            }                                                                                  \
        }                                                                                      \
        for (; i < last && o < o_end; ++i) {                                                   \
            dst[o] = (T)i;                                                                     \
            o += elem_selected(in[i], lo, hi, invert);                                         \
        }                                                                                      \
    }

inline void write_index_run(__global const bits_t *in, ulong first, ulong last,
                            __global uchar *out, ulong out_off, ulong o, ulong o_end, ekey_t lo,
                            ekey_t hi, uint invert, int idx_bytes)
{
    if (idx_bytes == 8)
        INDEX_RUN(long, convert_long8)
    else
        INDEX_RUN(uint, convert_uint8)
}

/* Contiguous input of rank >= 2 with one column per dimension (rows or
 * columns layout). The input is walked a row (of the last dimension) at a
 * time, so that inside a row only the last coordinate moves; the leading
 * coordinates change, odometer-style, between rows. By bytes where the
 * layout allows vector stores: columns layout (each column is contiguous) and
 * rows layout of rank 2 ((row, column) pairs, 8 of them in one 16-vector).
 * Otherwise by bits, or, for dense blocks, every slot written branch-free
 * up to the block's last selected element. */
#define SPARSE_BELOW 8

/* Where dimension d's coordinate goes in an entry: column d, or with
 * reverse (order xy) column rank - 1 - d. */
#define ND_COL(d) ((ulong)(reverse ? rank - 1 - (d) : (d)))

#define ND_EMIT(T, slot, last_coord)                                                           \
    {                                                                                          \
        ulong base_ = layout == LAYOUT_ROWS ? (slot) * (ulong)rank : (slot);                   \
        ulong step_ = layout == LAYOUT_ROWS ? 1 : capacity;                                    \
        for (int d_ = 0; d_ < rank - 1; ++d_)                                                  \
            dst[base_ + ND_COL(d_) * step_] = (T)lead[d_];                                     \
        dst[base_ + ND_COL(rank - 1) * step_] = (T)(last_coord);                               \
    }

#define ND_EMIT_BYTE(T, T8, T16, CONVERT8, b, first_col)                                       \
    {                                                                                          \
        T8 col_ = CONVERT8(byte_slots(b)) + (T)(first_col);                                    \
        if (layout == LAYOUT_COLUMNS) {                                                        \
            for (int d_ = 0; d_ < rank - 1; ++d_)                                              \
                vstore8((T8)((T)lead[d_]), 0, dst + ND_COL(d_) * capacity + o);                \
            vstore8(col_, 0, dst + ND_COL(rank - 1) * capacity + o);                           \
        } else {                                                                               \
            T16 pair_ = (T16)((T)lead[0]);                                                     \
            if (reverse)                                                                       \
                pair_.even = col_;                                                             \
            else                                                                               \
                pair_.odd = col_;                                                              \
            vstore16(pair_, 0, dst + 2 * o);                                                   \
        }                                                                                      \
        o += popcount(b);                                                                      \
    }

#define ND_RUN(T, T8, T16, CONVERT8)                                                           \
    {                                                                                          \
        __global T *dst = (__global T *)out + out_off;                                         \
        long lead[CLNZ_MAX_RANK];                                                              \
        ulong cols = (ulong)META_SHAPE(meta, rank - 1);                                        \
        ulong rem = first / cols, c = first % cols;                                            \
        for (int d = rank - 2; d >= 0; --d) {                                                  \
            ulong e = (ulong)META_SHAPE(meta, d);                                              \
            lead[d] = (long)(rem % e);                                                         \
            rem /= e;                                                                          \
        }                                                                                      \
        int bytes = layout == LAYOUT_COLUMNS || rank == 2;                                     \
        ulong i = first;                                                                       \
        while (i < last && o < o_end) {                                                        \
            ulong seg_end = min(last, i + (cols - c));                                         \
            for (; i + BLOCK <= seg_end && o < o_end; i += BLOCK, c += BLOCK) {                \
                uint m = block_mask(in + i, lo, hi, invert);                                   \
                uint pc = popcount(m);                                                         \
                if (bytes && o + BLOCK <= o_end) {                                             \
                    for (uint q = 0; q < BLOCK; q += 8, m >>= 8)                               \
                        ND_EMIT_BYTE(T, T8, T16, CONVERT8, m & 255u, c + q)                    \
                } else if (pc < SPARSE_BELOW || o + pc > o_end) {                              \
                    for (; m && o < o_end; m &= m - 1, ++o)                                    \
                        ND_EMIT(T, o, c + low_bit(m))                                          \
                } else {                                                                       \
                    uint end = 32 - clz(m);                                                    \
                    for (uint j = 0; j < end; ++j) {                                           \
                        ND_EMIT(T, o, c + j)                                                   \
                        o += (m >> j) & 1;                                                     \
                    }                                                                          \
                }                                                                              \
            }                                                                                  \
            for (; i < seg_end && o < o_end; ++i, ++c) {                                       \
                ND_EMIT(T, o, c)                                                               \
                o += elem_selected(in[i], lo, hi, invert);                                     \
            }                                                                                  \
            if (c == cols) { /* next row: carry into the leading coordinates */                \
                c = 0;                                                                         \
                for (int d = rank - 2; d >= 0; --d) {                                          \
                    if (++lead[d] < META_SHAPE(meta, d))                                       \
                        break;                                                                 \
                    lead[d] = 0;                                                               \
                }                                                                              \
            }                                                                                  \
        }                                                                                      \
    }

inline void write_nd_run(__global const bits_t *in, ulong first, ulong last, int rank,
                         __global const long *meta, __global uchar *out, ulong out_off, ulong o,
                         ulong o_end, ulong capacity, int layout, int reverse, ekey_t lo,
                         ekey_t hi, uint invert, int idx_bytes)
{
    if (idx_bytes == 8)
        ND_RUN(long, long8, long16, convert_long8)
    else
        ND_RUN(uint, uint8, uint16, convert_uint8)
}

/* single: the whole input is one tile (one work-group), so nothing was
 * counted before: the group counts its own chunks, and its total goes to
 * tile_offsets[offsets_off], which is then the caller's count. One launch. */
__kernel void nz_write(__global const bits_t *in, long in_off, ulong n, int rank,
                       __global const long *meta, int contiguous, ekey_t lo, ekey_t hi,
                       uint invert, __global ulong *tile_offsets, ulong offsets_off,
                       __global const uint *item_counts, ulong items_off, __global uchar *out,
                       ulong out_off, ulong capacity, int layout, int width, int reverse,
                       int idx_bytes, int single, uint p2, __local ulong *scratch, uint items)
{
    ulong tile = (ulong)get_local_size(0) * items;
    ulong first = get_group_id(0) * tile + get_local_id(0) * items;
    ulong c;
    ulong o = chunk_slot(in, in_off, first, n, rank, meta, contiguous, lo, hi, invert,
                         tile_offsets, offsets_off, item_counts, items_off, single, p2, scratch,
                         &c, items);
    if (c == 0 || o >= capacity || (width == 0 && layout != LAYOUT_FLAT))
        return;

    ulong last = min(first + items, n);
    /* Branch-free compaction: every element writes its entry at slot o and
     * only a selected one moves o on, so the next element overwrites a slot
     * that was not taken. Random data then costs no mispredicted branches.
     * o_end keeps the writes inside this work-item's own slots. */
    ulong o_end = min(o + c, capacity);
    /* The common shapes get loops of their own (chosen once per work-item,
     * so the loops carry no layout or rank tests); the odometer does the rest. */
    if (contiguous && (layout == LAYOUT_FLAT || (rank == 1 && width == 1))) {
        write_index_run(in + in_off, first, last, out, out_off, o, o_end, lo, hi, invert,
                        idx_bytes);
        return;
    }
    if (contiguous && rank >= 2 && width == rank && layout != LAYOUT_FLAT) {
        write_nd_run(in + in_off, first, last, rank, meta, out, out_off, o, o_end, capacity,
                     layout, reverse, lo, hi, invert, idx_bytes);
        return;
    }
    int need_coords = rank > 1 && layout != LAYOUT_FLAT;
    int track = !contiguous || need_coords;
    walker w;
    walker_init(&w, first, rank, meta, track);
    for (ulong i = first; i < last && o < o_end; ++i) {
        uint s = elem_selected(in[in_off + w.off], lo, hi, invert);
        put_entry(out, out_off, capacity, layout, width, reverse, idx_bytes, o, i, rank, &w);
        o += s;
        if (i + 1 < last)
            walker_next(&w, rank, meta, track);
    }
}

/* Batched nonzero (CSR): offsets[b] is the number of selected elements
 * before item b's first one (flat index b * item_elems), put together from
 * what nz_count and the scan left: the offset of that element's tile, the
 * counts of the work-items before its own in the tile, and a part of one
 * chunk, counted again. No pass over the input beyond that chunk. The total,
 * offsets[batches], was written by the scan. One work-item per item. */
__kernel void nz_batch_offsets(__global const bits_t *in, long in_off, ulong n, int rank,
                               __global const long *meta, int contiguous, ekey_t lo, ekey_t hi,
                               uint invert, __global const ulong *tile_offsets,
                               __global const uint *item_counts, ulong items_off, uint wg,
                               ulong item_elems, ulong batches, __global long *offsets,
                               ulong offsets_off, uint items)
{
    ulong b = get_global_id(0);
    if (b >= batches)
        return;
    ulong p = b * item_elems;
    ulong tile = (ulong)wg * items;
    ulong g = p / tile, l = (p % tile) / items;
    ulong first = g * tile + l * items;
    ulong o = 0;
    if (p < n) { /* items of no elements all start at the total, written already */
        o = tile_offsets[g];
        for (ulong k = 0; k < l; ++k)
            o += item_counts[items_off + g * wg + k];
        o += chunk_count(in, in_off, first, p, rank, meta, contiguous, lo, hi, invert, items);
    } else {
        o = (ulong)offsets[offsets_off + batches];
    }
    offsets[offsets_off + b] = (long)o;
}
