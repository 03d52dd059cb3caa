/* nonzero.cl: the fused nonzero pipeline (reduce, then scan, then write).
 *
 * The mask is never stored: nz_count evaluates the predicate and writes one
 * count per tile, the host scans those counts (scan.cl) into tile offsets and
 * the total, and nz_write evaluates the predicate again, scans the per-work-item
 * counts of its tile in local memory (Blelloch) and writes each selected
 * element's coordinates at its offset. Both passes partition the input the same
 * way: tile g is work-group g, and work-item l owns `items` consecutive elements
 * of it, so offsets come out in C order. */
#include "kname.h"
#include "chunk.cl"
#include "bitpos.cl"
#include "index.cl"
#include "nt_store.cl"

#define LAYOUT_ROWS ABI_LAYOUT_ROWS
#define LAYOUT_COLUMNS ABI_LAYOUT_COLUMNS
#define LAYOUT_FLAT ABI_LAYOUT_FLAT

/* Writes each tile's count, and each work-item's (at most `items`, so 32 bits)
 * for nz_write, which then need not count its chunk again. keep: also the
 * selection bits, from item_counts[bits_off] on (chunk_count_keep); the
 * host asks for them only where nz_write reads them (keep_sel_bits). */
__kernel void KERNEL(nz_count)(__global const bits_t *in, long in_off, ulong n, int rank,
                       __global const long *meta, int contiguous, ekey_t lo, ekey_t hi,
                       uint invert, __global ulong *tile_counts, ulong counts_off,
                       __global uint *item_counts, ulong items_off, ulong bits_off, int keep,
                       uint p2, __local ulong *scratch, uint items)
{
    ulong tile = (ulong)get_local_size(0) * items;
    ulong first = get_group_id(0) * tile + get_local_id(0) * items;
    ulong c = keep ? chunk_count_keep(in, in_off, first, n, lo, hi, invert,
                                      item_counts + bits_off, items)
                   : chunk_count(in, in_off, first, n, rank, meta, contiguous, lo, hi, invert,
                                 items);
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
void put_entry(__global uchar *out, ulong out_off, ulong capacity, int layout, int width,
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

/* The loop over a block's four bytes (INDEX_RUN, ND_GATHER), unrolled:
 * PoCL's compiler kept it a loop, its counter and each byte's base beside
 * the byte's few operations. Unrolled, with bitpos.cl's byte slots (PoCL,
 * device-resident nonzero at 10 %, medians of 11, both in one process):
 * u8 4096 x 4096 flat 3.76 -> 3.41 ms, rows 4.76 -> 4.12; f32 (16, 32,
 * 64, 64) rows 1.45 -> 1.30, 2^26 rows 32.5 -> 30.1; dense cases even. A
 * compiler that knows no such pragma ignores it. */
#define BLOCK_BYTES _Pragma("unroll")

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
            uint m = keep ? sel_bits[i / BLOCK] : block_mask(in + i, lo, hi, invert);          \
            if (o + BLOCK <= o_end) {                                                          \
                BLOCK_BYTES for (uint q = 0; q < BLOCK; q += 8, m >>= 8) {                     \
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

/* Contiguous input with one column per dimension (rows or
 * columns layout). The input is walked a row (of the last dimension) at a
 * time, so that inside a row only the last coordinate moves; the leading
 * coordinates change, odometer-style, between rows.
 *
 * Within a row, up to STAGE elements at a time are staged: the positions of
 * their selected elements are gathered, by bytes of the mask (bitpos.cl),
 * into a private list, then the entries are written from the list, four at
 * a time where the layout allows vector stores. Per eight elements that is
 * one 32-byte store, and per entry a share of a vector store: writing the
 * whole (row, column) pairs of each byte, as the bytes path of the index
 * run does, took four 32-byte stores and twenty-odd operations per byte
 * whatever the density (measured on PoCL: u8 4096 x 4096 at 10 %, rows
 * layout, the writing pass 2x faster staged). The list is never read past
 * what staging wrote; the entries past the staged ones that a vector store
 * writes are within this work-item's slots (checked against o_end), and the
 * next entries overwrite them. (The index run above stays by bytes: its
 * entries are one coordinate, and staging them measured no faster, except
 * for non-temporal stores: INDEX_STREAM below.) */
#define STAGE 256

/* A staging list of n uints in private memory that lies within one 4 KiB
 * page: the list is declared twice its size and starts at the page
 * boundary its first n would cross, if any. The staging stores 32 bytes
 * at each byte's slot (ND_GATHER), and a store split across two pages
 * costs tens of cycles. Where the list lies is the compiler's choice: one
 * build of nz_write (PoCL 3.1's haswell code on an AMD EPYC VM) put it 32
 * bytes short of a page, so that nearly every store of a sparse span (its
 * slots stay near the list's start) split, and rows took 3x the time of
 * the flat indices. Kept within a page, device-resident, medians of four
 * processes' mins, on that VM: u8 4096 x 4096 rows at 1 % 7.3 -> 2.5 ms,
 * at 10 % 5.0 -> 3.2, u8 1080 x 1920 at 5 % 0.89 -> 0.47, f32 (16, 32, 64,
 * 64) at 10 % 1.5-1.8 -> 0.74-0.83, f32 4096 x 4096 at 50 % 15.4 -> 10.7; flat
 * and 1-D entries even. */
#define PAGE_BYTES 4096
#define STAGE_LIST(name, n)                                                                    \
    uint name##_room_[2 * (n)];                                                                \
    uint *name = page_whole(name##_room_, (n))

uint *page_whole(uint *room, uint n)
{
    size_t first = (size_t)room;
    size_t page = (first + n * sizeof(uint) - 1) & ~(size_t)(PAGE_BYTES - 1);
    return page > first ? room + (page - first) / sizeof(uint) : room;
}

/* Where dimension d's coordinate goes in an entry: column d, or with
 * reverse (order xy) column rank - 1 - d. */
#define ND_COL(d) ((ulong)(reverse ? rank - 1 - (d) : (d)))

#define ND_EMIT_BY(STORE, T, slot, last_coord)                                                 \
    {                                                                                          \
        ulong base_ = layout == LAYOUT_ROWS ? (slot) * (ulong)rank : (slot);                   \
        ulong step_ = layout == LAYOUT_ROWS ? 1 : capacity;                                    \
        for (int d_ = 0; d_ < rank - 1; ++d_)                                                  \
            STORE((T)lead[d_], dst + base_ + ND_COL(d_) * step_);                              \
        STORE((T)(last_coord), dst + base_ + ND_COL(rank - 1) * step_);                        \
    }
#define ND_EMIT(T, slot, last_coord) ND_EMIT_BY(PLAIN_STORE, T, slot, last_coord)

/* A row's entry of rank 3 or 4 as a vector, for ND_EMIT_STAGED: tmpl_
 * holds the row's leading coordinates in their columns (and 0 in the last
 * coordinate's), colsel_ all ones in the last coordinate's column, so that
 * select(tmpl_, col, colsel_) is the whole entry: one store for rank 4
 * where one store per coordinate, each placed by ND_COL, took 3x the time
 * of the flat indices (PoCL, f32 (16, 32, 64, 64) at 10 %). */
#define ND_ENTRY_TEMPLATE(T, T4)                                                               \
    T tm_[4] = {0, 0, 0, 0}, cs_[4] = {0, 0, 0, 0};                                            \
    for (int d_ = 0; d_ < rank - 1; ++d_)                                                      \
        tm_[ND_COL(d_)] = (T)lead[d_];                                                         \
    cs_[ND_COL(rank - 1)] = (T)-1;                                                             \
    T4 tmpl_ = vload4(0, tm_), colsel_ = vload4(0, cs_);

/* The k staged entries (columns c + pos[e]) from slot o on, at most up to
 * o_end; four at a time in the columns layout and in rows of rank 1 (one
 * column either way: a batch's 1-D items) or 2; whole entries from a
 * template (ND_ENTRY_TEMPLATE) in rows of rank 3 and 4 when ENTRY_VEC.
 * STORE, STORE4, STORE8: the stores of one, four and eight indices, plain
 * or non-temporal (nt_store.cl; chosen outside this macro, ND_ROWS, as a
 * test inside its loops measured no gain on PoCL: 22 against 12 ms, f32
 * 2^24 rows). Non-temporal stores take ENTRY_VEC 0: PoCL's compiler merged
 * a template's lanes into plain stores beside one non-temporal store, so
 * that each line was cached and then flushed (f32 (16, 32, 64, 64) at 50 %:
 * 2.4 -> 300 ms). */
#define ND_EMIT_STAGED(T, T4, T8, CONVERT4, STORE, STORE4, STORE8, ENTRY_VEC)                  \
    {                                                                                          \
        uint kk = (uint)min((ulong)k, o_end - o);                                              \
        int one_column = layout == LAYOUT_COLUMNS || rank == 1;                                \
        int vec = (one_column || rank == 2) && o + ((kk + 3) & ~3u) <= o_end;                  \
        if (vec && one_column) {                                                               \
            for (uint e = 0; e < kk; e += 4) {                                                 \
                for (int d_ = 0; d_ < rank - 1; ++d_) {                                        \
                    T4 lead_ = (T4)((T)lead[d_]);                                              \
                    STORE4(lead_, dst + ND_COL(d_) * capacity + o + e)                         \
                }                                                                              \
                T4 col_ = CONVERT4(vload4(0, pos + e)) + (T)c;                                 \
                STORE4(col_, dst + ND_COL(rank - 1) * capacity + o + e)                        \
            }                                                                                  \
        } else if (vec) {                                                                      \
            for (uint e = 0; e < kk; e += 4) {                                                 \
                T8 pair_ = (T8)((T)lead[0]);                                                   \
                T4 col_ = CONVERT4(vload4(0, pos + e)) + (T)c;                                 \
                if (reverse)                                                                   \
                    pair_.even = col_;                                                         \
                else                                                                           \
                    pair_.odd = col_;                                                          \
                STORE8(pair_, dst + 2 * (o + e))                                               \
            }                                                                                  \
        } else if (ENTRY_VEC && layout == LAYOUT_ROWS && (rank == 3 || rank == 4)) {           \
            ND_ENTRY_TEMPLATE(T, T4)                                                           \
            for (uint e = 0; e < kk; ++e) {                                                    \
                T4 ent_ = select(tmpl_, (T4)((T)(c + pos[e])), colsel_);                       \
                __global T *p_ = dst + (o + e) * (ulong)rank;                                  \
                if (rank == 4) {                                                               \
                    STORE4(ent_, p_)                                                           \
                } else {                                                                       \
                    STORE(ent_.s0, p_);                                                        \
                    STORE(ent_.s1, p_ + 1);                                                    \
                    STORE(ent_.s2, p_ + 2);                                                    \
                }                                                                              \
            }                                                                                  \
        } else {                                                                               \
            for (uint e = 0; e < kk; ++e)                                                      \
                ND_EMIT_BY(STORE, T, o + e, c + pos[e])                                        \
        }                                                                                      \
        o += kk;                                                                               \
    }

/* What an entry staged across rows costs beyond its stores, in stores: its
 * row's carries and their mispredicted branches. A work-item stages across
 * rows when its c entries over its n elements give c * (rank + this)
 * below n * rank, the stores of a whole entry per element. (PoCL, f32
 * (349525, 3): staged 1.0 against 1.6 ms at 10 %; at 50 % the whole
 * entries win.) */
#define ACROSS_ENTRY_COST 6
/* Where spans of several whole rows apply (ND_MULTI_ROWS), rows shorter
 * than a block stage across rows only below one entry in this many
 * elements: a span of a few short rows pays its gather and its carries
 * for next to no entries (PoCL, f32, device-resident, medians of 4
 * processes' mins, across rows against spans: (65536, 4, 16) at 1 %
 * 1.89 / 2.39 ms, at 3 % 2.63 / 2.55, at 10 % 3.18 / 2.63; (32768, 8, 8)
 * 1.02 / 1.08, 1.28 / 1.16, 2.42 / 1.36; (16, 32, 256, 16) at 1 % 0.85 /
 * 0.74, at 3 % 1.23 / 0.79). */
#define ACROSS_BEFORE_SPANS 48

/* Entry bytes per input element from which a streaming work-item stores
 * non-temporally (nz_write): staged rows and columns, and the index run
 * (flat and 1-D entries), whose whole-line stores (INDEX_STREAM) pay from
 * fewer. */
#define STREAM_ENTRY_BYTES 6
#define STREAM_INDEX_BYTES 2

/* The positions of the selected elements among the span elements from i on
 * into pos[k0..k), ascending (ND_GATHER: from pos[0]). The blocks are read
 * whole, so a span that is not whole blocks needs its last block's elements
 * in the input (below n); the bits past the span are dropped. */
#define ND_GATHER ND_GATHER_AT(0)
#define ND_GATHER_AT(k0)                                                                       \
    uint k = (k0);                                                                             \
    for (uint b = 0; b < span; b += BLOCK) {                                                   \
        uint m = keep ? kept_mask(sel_bits, i + b) : block_mask(in + i + b, lo, hi, invert);   \
        if (span - b < BLOCK)                                                                  \
            m &= (1u << (span - b)) - 1;                                                       \
        BLOCK_BYTES for (uint q = 0; q < BLOCK; q += 8, m >>= 8) {                             \
            vstore8(convert_uint8(byte_slots(m & 255u)) + (uint8)(b + q), 0, pos + k);         \
            k += popcount(m & 255u);                                                           \
        }                                                                                      \
    }                                                                                          \
    vstore8((uint8)0, 0, pos + k); /* what a vector emit reads past k */

/* The index run with non-temporal stores (nt_store.cl), for outputs far
 * larger than the caches: the positions of each span's selected elements
 * are gathered, then stored as whole 64-byte lines, eight entries to a
 * vector store through an aligned pointer. The entries past the stretch's
 * last whole line are held (pos[0..held), as offsets from the next span's
 * start, so negative) and go first with the next span's, so every line is
 * written whole by one store: only the work-item's first and last lines
 * go an entry at a time (and every entry, if the output is not on 8
 * bytes). INDEX_RUN's bytes overwrite each slot they do not take; with
 * non-temporal stores those partial lines each went to memory (f32 2^24 at
 * 10 %: 4 -> 18 ms on PoCL); stretches stored an entry at a time left
 * partial lines at every span's ends, and streaming paid only from 75 %
 * selected. Whole lines: f32 2^26 (1-D) at 30 % 28.8 -> 24.6 ms, 50 %
 * 32.6 -> 25.3, 75 % 41.9 -> 29.4, 100 % 34.9 -> 29.1 (PoCL, medians of 5
 * processes, against the stretches an entry at a time, which streamed
 * from 75 % only). Nothing is stored past a work-item's own slots. For
 * 8-byte T: T8 is then a whole line. */
#define INDEX_STREAM(T, T8, CONVERT8)                                                          \
    {                                                                                          \
        __global T *dst = (__global T *)out + out_off;                                         \
        STAGE_LIST(pos, STAGE + 16);                                                           \
        uint held = 0;                                                                         \
        ulong i = first;                                                                       \
        for (uint span; (span = (uint)(min(last - i, (ulong)STAGE) / BLOCK * BLOCK)) &&        \
                        o + held < o_end;                                                      \
             i += span) {                                                                      \
            ND_GATHER_AT(held)                                                                 \
            uint kk = (uint)min((ulong)k, o_end - o), e = 0;                                   \
            for (; e < kk && (size_t)(dst + o + e) % 64; ++e) /* to a line's start */          \
                NT_STORE((T)(i + (int)pos[e]), dst + o + e);                                   \
            for (; e + 8 <= kk; e += 8) {                                                      \
                T8 v_ = CONVERT8(as_int8(vload8(0, pos + e))) + (T)i;                          \
                NT_STORE(v_, (__global T8 *)(dst + o + e));                                    \
            }                                                                                  \
            o += e;                                                                            \
            held = kk - e;                                                                     \
            for (uint h = 0; h < held; ++h)                                                    \
                pos[h] = pos[e + h] - span;                                                    \
        }                                                                                      \
        for (uint h = 0; h < held; ++h)                                                        \
            NT_STORE((T)(i + (int)pos[h]), dst + o + h);                                       \
        o += held;                                                                             \
        for (; i < last && o < o_end; ++i) {                                                   \
            dst[o] = (T)i;                                                                     \
            o += elem_selected(in[i], lo, hi, invert);                                         \
        }                                                                                      \
    }

void write_index_run(__global const bits_t *in, ulong first, ulong last, __global uchar *out,
                     ulong out_off, ulong o, ulong o_end, ekey_t lo, ekey_t hi, uint invert,
                     int idx_bytes, __global const uint *sel_bits, int keep, int nt)
{
    if (nt) /* 8-byte indices only (nz_write): a long8 is a whole line */
        INDEX_STREAM(long, long8, convert_long8)
    else if (idx_bytes == 8)
        INDEX_RUN(long, convert_long8)
    else
        INDEX_RUN(uint, convert_uint8)
}

/* The next row: carry into the leading coordinates, odometer-style. */
#define ND_CARRY                                                                               \
    for (int d_ = rank - 2; d_ >= 0; --d_) {                                                   \
        if (++lead[d_] < META_SHAPE(meta, d_))                                                 \
            break;                                                                             \
        lead[d_] = 0;                                                                          \
    }

/* The k staged entries of a span that crosses rows (columns c + pos[e] from
 * the span's start, pos ascending): each entry's row is reached by carries,
 * one per row passed, so a span costs its entries plus its rows. Then c and
 * lead are those of the element past the span. */
#define ND_EMIT_ACROSS(T)                                                                      \
    {                                                                                          \
        uint kk = (uint)min((ulong)k, o_end - o);                                              \
        ulong passed = 0; /* elements of the rows carried past, from the row of c */           \
        for (uint e = 0; e < kk; ++e) {                                                        \
            ulong col = c + pos[e] - passed;                                                   \
            for (; col >= cols; col -= cols, passed += cols)                                   \
                ND_CARRY                                                                       \
            ND_EMIT(T, o + e, col)                                                             \
        }                                                                                      \
        o += kk;                                                                               \
        for (c = c + span - passed; c >= cols; c -= cols) /* modulo 2^64: c + span >= passed */ \
            ND_CARRY                                                                           \
    }

/* How many of the `left` elements from i on (of a row) ND_RUN stages next:
 * up to STAGE, whole blocks, and in rows of a block or more the part of a
 * block at the row's end too, where that whole block can be read (below
 * n). That part went element by element, a whole entry per element,
 * selected or not: rows of 56 took 6x the time of the flat indices (f32
 * (32, 64, 56, 56) at 10 % on PoCL). Rows shorter than a block keep that
 * (see below). */
#define ND_ROW_SPAN(left)                                                                      \
    (uint)((left) >= STAGE ? STAGE                                                             \
           : cols >= BLOCK && i + ((left) + BLOCK - 1) / BLOCK * BLOCK <= n                    \
               ? (left)                                                                        \
               : (left) / BLOCK * BLOCK)

/* Rows of at most STAGE / 2 elements, of rank 3 or 4 in the rows layout
 * with plain stores (multi, ND_RUN), are staged several whole rows at a
 * time (ND_MULTI_ROWS): up to STAGE elements, never past the end of
 * dimension rank - 2. A row at a time, each row paid its span, its
 * gather's tail and its entry template, whose lanes stored and then loaded
 * as a vector stall store-to-load forwarding: about 60 cycles a row (PoCL,
 * f32 (16, 32, 64, 64) at 10 %: rows of 64 took 1.4x the time of the same
 * bytes as rows of 256). Now one gather and one pass of the row loop serve
 * several rows, and the template (mt_) stays in a register from span to
 * span, its lane of dimension rank - 2 moved on by the span's rows; it is
 * stored and loaded again only after a carry past that dimension. An
 * entry's row within the span is pos / cols, by a multiply and a shift
 * (exact: pos < 2^8 and the reciprocal's rounding error below cols <= 2^7
 * keep the error of the product below 2^15 < 2^ND_RECIP_SHIFT), four
 * entries at a time as vectors, interleaved into (row, column) pairs in
 * the order of their columns (pair_swap: the column first): an entry is
 * the template plus its pair in both halves of a vector, masked to the two
 * columns (msel_). Four entries of the vector path read pos up to 3 past k:
 * ND_GATHER's trailing zeros. Measured against a row at a time (PoCL on a
 * 2-core EPYC VM, f32 at 10 %, device-resident nonzero, both kernels in
 * one process in turns, medians of the per-turn mins' ratios): (16, 32,
 * 64, 64) 0.79-0.85x, (16, 32, 32, 128) 0.96x, (16, 32, 64, 40) 0.58x;
 * rows shorter than a block, which now take these spans instead of staging
 * across rows (but where very sparse: ACROSS_BEFORE_SPANS) or going element
 * by element: (16, 32, 256, 16) 0.49-0.55x (at 50 % 0.46x), (2048, 1024,
 * 3) 0.50x (at 50 % 0.38x). */
#define ND_RECIP_SHIFT 20
#define ND_PUT_PAIR(T4, STORE, STORE4, pair, d)                                                \
    {                                                                                          \
        T4 ent_ = mt_ + ((T4)(pair, pair) & msel_);                                            \
        if (rank == 4) {                                                                       \
            STORE4(ent_, (d))                                                                  \
        } else {                                                                               \
            STORE(ent_.s0, (d));                                                               \
            STORE(ent_.s1, (d) + 1);                                                           \
            STORE(ent_.s2, (d) + 2);                                                           \
        }                                                                                      \
    }

/* The k staged entries of a span of whole rows (pos[e] from the start of
 * the first, whose leading coordinates mt_ holds) from slot o on, at most
 * up to o_end: four at a time where the slots of the last four are this
 * work-item's (as ND_EMIT_STAGED's vector stores), else one at a time. */
#define ND_EMIT_ROWS(T, T4, T8, CONVERT4, STORE, STORE4)                                       \
    {                                                                                          \
        uint kk = (uint)min((ulong)k, o_end - o);                                              \
        if (o + ((kk + 3) & ~3u) <= o_end) {                                                   \
            for (uint e = 0; e < kk; e += 4) {                                                 \
                uint4 p4_ = vload4(0, pos + e), q4_ = (p4_ * recip) >> ND_RECIP_SHIFT;         \
                T4 q_ = CONVERT4(q4_), c_ = CONVERT4(p4_ - q4_ * (uint)cols);                  \
                T8 pr_;                                                                        \
                pr_.even = pair_swap ? c_ : q_;                                                \
                pr_.odd = pair_swap ? q_ : c_;                                                 \
                __global T *d_ = dst + (o + e) * (ulong)rank;                                  \
                ND_PUT_PAIR(T4, STORE, STORE4, pr_.s01, d_)                                    \
                ND_PUT_PAIR(T4, STORE, STORE4, pr_.s23, d_ + rank)                             \
                ND_PUT_PAIR(T4, STORE, STORE4, pr_.s45, d_ + 2 * rank)                         \
                ND_PUT_PAIR(T4, STORE, STORE4, pr_.s67, d_ + 3 * rank)                         \
            }                                                                                  \
        } else {                                                                               \
            for (uint e = 0; e < kk; ++e) {                                                    \
                uint p_ = pos[e], q_ = (p_ * recip) >> ND_RECIP_SHIFT;                         \
                T8 pr_ = (T8)((T)q_);                                                          \
                T c1_ = (T)(p_ - q_ * (uint)cols);                                             \
                if (pair_swap)                                                                 \
                    pr_.s0 = c1_;                                                              \
                else                                                                           \
                    pr_.s1 = c1_;                                                              \
                ND_PUT_PAIR(T4, STORE, STORE4, pr_.s01, dst + (o + e) * (ulong)rank)           \
            }                                                                                  \
        }                                                                                      \
        o += kk;                                                                               \
    }

/* In ND_ROWS's loop: at a row's start, a span of the rows that fit (two or
 * more, up to multi, within the run and dimension rank - 2, its last block
 * readable), staged and written, and the loop's next pass (continue); c is
 * then 0 again and lead the next row's. Otherwise fresh_ = 0 (the row at a
 * time below moves lead) and the loop goes on to that. */
#define ND_MULTI_ROWS(T, T4, T8, CONVERT4, STORE, STORE4)                                      \
    if (c == 0) {                                                                              \
        ulong rows_ = min(min((ulong)multi, (last - i) / cols),                                \
                          (ulong)META_SHAPE(meta, rank - 2) - (ulong)lead[rank - 2]);          \
        if (rows_ >= 2 && i + (rows_ * cols + BLOCK - 1) / BLOCK * BLOCK <= n) {               \
            uint span = (uint)(rows_ * cols);                                                  \
            if (!fresh_) {                                                                     \
                ND_ENTRY_TEMPLATE(T, T4)                                                       \
                mt_ = tmpl_;                                                                   \
                (void)colsel_; /* ND_PUT_PAIR's msel_ instead */                               \
                fresh_ = 1;                                                                    \
            }                                                                                  \
            ND_GATHER                                                                          \
            ND_EMIT_ROWS(T, T4, T8, CONVERT4, STORE, STORE4)                                   \
            i += span;                                                                         \
            lead[rank - 2] += (long)rows_ - 1;                                                 \
            ND_CARRY                                                                           \
            if (lead[rank - 2] != 0) /* no carry past dimension rank - 2 */                    \
                mt_ += (T4)((T)rows_) & mrow_;                                                 \
            else                                                                               \
                fresh_ = 0;                                                                    \
            continue;                                                                          \
        }                                                                                      \
    }                                                                                          \
    fresh_ = 0;

/* ND_RUN's rows, a row at a time, each span staged (ND_ROW_SPAN) and written
 * with STORE, STORE4 and STORE8 (ND_EMIT_STAGED). ND_RUN instantiates it
 * per kind of store: with the choice inside the loop, the non-temporal
 * rows of rank 3 ran 10 % slower once the plain ones had their entry
 * templates (PoCL, f32 (256, 256, 256) at 100 %: 25 -> 28 ms). MULTI: the
 * spans of several rows first where they apply (ND_MULTI_ROWS), in an
 * instance of its own: with its vectors beside the other shapes' loops,
 * rows of rank 2 ran 8-13 % slower (f32 (349525, 3) at 10 and 50 %). */
#define ND_ROWS(T, T4, T8, CONVERT4, STORE, STORE4, STORE8, ENTRY_VEC, MULTI)                  \
    {                                                                                          \
        T4 mt_ = 0, mrow_ = 0, msel_ = 0; /* template; masks: the row's lane, both lanes */    \
        int fresh_ = 0, pair_swap = reverse || rank == 3;                                      \
        if (MULTI) {                                                                           \
            T ms_[4] = {0, 0, 0, 0};                                                           \
            ms_[ND_COL(rank - 2)] = (T)-1;                                                     \
            mrow_ = vload4(0, ms_);                                                            \
            ms_[ND_COL(rank - 1)] = (T)-1;                                                     \
            msel_ = vload4(0, ms_);                                                            \
        }                                                                                      \
        while (i < last && o < o_end) {                                                        \
            if (MULTI) {                                                                       \
                ND_MULTI_ROWS(T, T4, T8, CONVERT4, STORE, STORE4)                              \
            }                                                                                  \
            ulong seg_end = min(last, i + (cols - c));                                         \
            for (uint span; (span = ND_ROW_SPAN(seg_end - i)) && o < o_end;                    \
                 i += span, c += span) {                                                       \
                ND_GATHER                                                                      \
                ND_EMIT_STAGED(T, T4, T8, CONVERT4, STORE, STORE4, STORE8, ENTRY_VEC)          \
            }                                                                                  \
            for (; i < seg_end && o < o_end; ++i, ++c) {                                       \
                ND_EMIT(T, o, c)                                                               \
                o += elem_selected(in[i], lo, hi, invert);                                     \
            }                                                                                  \
            if (c == cols) {                                                                   \
                c = 0;                                                                         \
                ND_CARRY                                                                       \
            }                                                                                  \
        }                                                                                      \
    }

/* Rows shorter than a block (the 16 elements of a (2, 4, ..., 16) tensor's,
 * the 3 of a point cloud's) leave no whole block inside a row to stage:
 * each element wrote a whole entry, selected or not (a rank 8 tensor's rows
 * took 8x the time of its flat indices). A sparse enough work-item stages
 * across rows first; the rest goes a row at a time as above, a row short
 * of a block (and the input's last elements) element by element. Where
 * spans of several rows apply (multi: rank 3 or 4, rows layout, plain
 * stores, spans of two blocks or more), they take those rows instead, but
 * for a very sparse work-item's rows shorter than a block (across rows). */
#define ND_RUN(T, T4, T8, CONVERT4)                                                            \
    {                                                                                          \
        __global T *dst = (__global T *)out + out_off;                                         \
        long lead[CLNZ_MAX_RANK];                                                              \
        STAGE_LIST(pos, STAGE + 8);                                                            \
        ulong cols = (ulong)META_SHAPE(meta, rank - 1);                                        \
        ulong rem = first / cols, c = first % cols;                                            \
        for (int d = rank - 2; d >= 0; --d) {                                                  \
            ulong e = (ulong)META_SHAPE(meta, d);                                              \
            lead[d] = (long)(rem % e);                                                         \
            rem /= e;                                                                          \
        }                                                                                      \
        ulong i = first;                                                                       \
        /* multi: the rows a span of whole rows may take, or 0; spans shorter than             \
         * two blocks (rows of 1 in a dimension of 4, say) stay as they were */                \
        uint multi = !nt && layout == LAYOUT_ROWS && (rank == 3 || rank == 4) &&               \
                             cols <= STAGE / 2                                                 \
                         ? (uint)min((ulong)STAGE / cols, (ulong)META_SHAPE(meta, rank - 2))   \
                         : 0;                                                                  \
        if (multi < 2 || multi * cols < 2 * BLOCK)                                             \
            multi = 0;                                                                         \
        uint recip = multi ? ((1u << ND_RECIP_SHIFT) + (uint)cols - 1) / (uint)cols : 0;       \
        if (cols < BLOCK &&                                                                    \
            (multi ? (o_end - o) * ACROSS_BEFORE_SPANS < last - first                          \
                   : (o_end - o) * (ulong)(rank + ACROSS_ENTRY_COST) <                         \
                         (last - first) * (ulong)rank))                                        \
            for (uint span; (span = (uint)(min(last - i, (ulong)STAGE) / BLOCK * BLOCK)) &&    \
                            o < o_end;                                                         \
                 i += span) {                                                                  \
                ND_GATHER                                                                      \
                ND_EMIT_ACROSS(T)                                                              \
            }                                                                                  \
        if (nt)                                                                                \
            ND_ROWS(T, T4, T8, CONVERT4, NT_STORE, NT_STORE4, NT_STORE8, 0, 0)                 \
        else if (multi)                                                                        \
            ND_ROWS(T, T4, T8, CONVERT4, PLAIN_STORE, PLAIN_STORE4, PLAIN_STORE8, 1, 1)        \
        else                                                                                   \
            ND_ROWS(T, T4, T8, CONVERT4, PLAIN_STORE, PLAIN_STORE4, PLAIN_STORE8, 1, 0)        \
    }

void write_nd_run(__global const bits_t *in, ulong n, ulong first, ulong last, int rank,
                  __global const long *meta, __global uchar *out, ulong out_off, ulong o,
                  ulong o_end, ulong capacity, int layout, int reverse, ekey_t lo, ekey_t hi,
                  uint invert, int idx_bytes, __global const uint *sel_bits, int keep, int nt)
{
    if (idx_bytes == 8)
        ND_RUN(long, long4, long8, convert_long4)
    else
        ND_RUN(uint, uint4, uint8, convert_uint4)
}

/* single: the whole input is one tile (one work-group), so nothing was
 * counted before: the group counts its own chunks, and its total goes to
 * tile_offsets[offsets_off], which is then the caller's count. One launch.
 * keep: nz_count kept the selection bits from item_counts[bits_off] on, and
 * the runs below read them instead of the input. */
__kernel void KERNEL(nz_write)(__global const bits_t *in, long in_off, ulong n, int rank,
                       __global const long *meta, int contiguous, ekey_t lo, ekey_t hi,
                       uint invert, __global ulong *tile_offsets, ulong offsets_off,
                       __global const uint *item_counts, ulong items_off, ulong bits_off,
                       int keep, __global uchar *out,
                       ulong out_off, ulong capacity, int layout, int width, int reverse,
                       int idx_bytes, int stream, int single, uint p2, __local ulong *scratch,
                       uint items)
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
    /* stream: the output is far larger than the caches (the host's call,
     * strategy/tiles.c). Non-temporal stores then save the read of each
     * line, but only where the entries outweigh the input: from
     * STREAM_ENTRY_BYTES per element on in staged rows (PoCL, f32 (8192,
     * 8192): rows at 50 % 56 -> 42 ms; every work-item streaming, flat at
     * 10 % 23 -> 30 ms before INDEX_STREAM wrote whole lines), from
     * STREAM_INDEX_BYTES in the index run (f32 2^26 at 20 % about even, at
     * 30 % 28.8 -> 24.6 ms). */
    int index_run = contiguous && (layout == LAYOUT_FLAT || (rank == 1 && width == 1));
    int entry_bytes = idx_bytes * (layout == LAYOUT_FLAT ? 1 : width);
    int per_elem = index_run ? STREAM_INDEX_BYTES : STREAM_ENTRY_BYTES;
    int nt = stream && (!index_run || idx_bytes == 8) && /* 4-byte indices: not measured */
             (o_end - o) * (ulong)entry_bytes >= (last - first) * per_elem;
    /* The common shapes get loops of their own (chosen once per work-item,
     * so the loops carry no layout or rank tests); the odometer does the rest. */
    if (index_run) {
        write_index_run(in + in_off, first, last, out, out_off, o, o_end, lo, hi, invert,
                        idx_bytes, item_counts + bits_off, keep, nt);
        if (nt)
            NT_STORES_DONE();
        return;
    }
    /* Entries of width <= rank hold the last width dimensions: a batch's
     * items' (all but the first), else the dimensions dropped are 1s. In
     * C order those coordinates are the ones of a tensor of the last width
     * dimensions, wrapping from one item to the next: the runs take its
     * rank and shapes, the same code as for whole entries. */
    if (contiguous && rank >= 2 && width <= rank && layout != LAYOUT_FLAT) {
        write_nd_run(in + in_off, n, first, last, width, meta + (rank - width), out, out_off,
                     o, o_end, capacity, layout, reverse, lo, hi, invert, idx_bytes,
                     item_counts + bits_off, keep, nt);
        if (nt)
            NT_STORES_DONE();
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
 * before item b's first one (flat index b * item_elems; item_elems > 0, as
 * an input of no elements never gets here). Launched over nz_count's tiles
 * and chunks: a work-item's selected elements before its chunk are its
 * tile's offset plus the local scan of the counts nz_count left, and it
 * walks its chunk once, up to the first element of the last item that
 * begins in it, writing each such item's offset on the way. An offset then
 * costs O(1) plus its share of one walk of at most `items` elements, for
 * items of any size. (One work-item per item, each summing the counts
 * before its own in the tile, cost batches x (wg + items): 7.4 s for 2^22
 * items of two elements on PoCL.) The total, offsets[batches], was written
 * by the scan. */
ulong items_before(ulong i, ulong item_elems) /* those beginning before element i */
{
    return (i + item_elems - 1) / item_elems;
}

__kernel void KERNEL(nz_batch_offsets)(__global const bits_t *in, long in_off, ulong n, int rank,
                               __global const long *meta, int contiguous, ekey_t lo, ekey_t hi,
                               uint invert, __global const ulong *tile_offsets,
                               __global const uint *item_counts, ulong items_off,
                               ulong item_elems, ulong batches, __global long *offsets,
                               ulong offsets_off, uint p2, __local ulong *scratch, uint items)
{
    ulong tile = (ulong)get_local_size(0) * items;
    ulong g0 = get_group_id(0) * tile;
    /* A tile where no item begins (most of them when items are large) has
     * nothing to do: the whole group leaves, before the scan's barriers. */
    if (items_before(g0, item_elems) >= min(batches, items_before(min(g0 + tile, n), item_elems)))
        return;
    ulong total;
    ulong o = tile_offsets[get_group_id(0)] +
              wg_exclusive_scan((ulong)item_counts[items_off + get_global_id(0)], scratch, p2,
                                &total);
    ulong first = g0 + get_local_id(0) * items;
    ulong last = min(first + items, n);
    ulong b = items_before(first, item_elems);
    ulong b_end = first < n ? min(batches, items_before(last, item_elems)) : b;
    if (b >= b_end)
        return;
    int track = !contiguous;
    walker w;
    walker_init(&w, first, rank, meta, track);
    ulong i = first;
    for (; b < b_end; ++b) {
        for (ulong p = b * item_elems; i < p; ++i) { /* p < last: w stays in the input */
            o += elem_selected(in[in_off + w.off], lo, hi, invert);
            walker_next(&w, rank, meta, track);
        }
        offsets[offsets_off + b] = (long)o;
    }
}
