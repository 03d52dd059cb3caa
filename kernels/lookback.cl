/* lookback.cl: count, nonzero and select in one pass over the input, with
 * tile offsets found by decoupled look-back (Merrill and Garland, "Single-pass
 * Parallel Prefix Scan with Decoupled Look-back", 2016), in OpenCL C 1.2.
 *
 * A work-group takes the next tile id from an atomic counter and handles
 * tile t, TILE = local size x items consecutive elements:
 *   1. load: work-item l reads elements t*TILE + j*WG + l (j < items):
 *      consecutive work-items read consecutive elements (coalesced); the
 *      predicate's result goes to local memory, one byte per element. When
 *      the host found 16-byte loads aligned (vec16B), a whole tile is read
 *      16 bytes per work-item and step instead: vector j*WG + l of the
 *      tile, so the loads stay coalesced and a 1-byte element no longer
 *      costs a load of its own;
 *   2. count: work-item l counts the bytes of its run l*items..+items, a
 *      work-group scan of those counts gives each run's place in the tile
 *      and the tile's aggregate;
 *   3. look-back: the tile publishes its aggregate, then reads the state of
 *      tiles t-1, t-2, ... adding aggregates until it finds an inclusive
 *      prefix, and publishes its own inclusive prefix. The states are read
 *      LB_WINDOW at a time, as independent reads (default 1: on the H200,
 *      windows of 8 and 32 atomic reads took 1.4x and 4.4x as long, each
 *      tile then issuing that many more atomics; what held the kernel to a
 *      tenth of the copy's bandwidth was a cost per tile, which larger
 *      tiles cut: 256 x 32 elements ran in half the time of 256 x 8);
 *   4. write: each run stages the tile-local index of its selected elements
 *      in local memory (16 bits: tiles of up to 65536), in order; then
 *      consecutive work-items write consecutive entries (coordinates, flat
 *      indices or x's values) at the tile's offset, so the stores are
 *      contiguous too.
 * The input is read once (twice only by a tile that had to fall back, see
 * below); only the last tile writes the count. A count alone, without
 * batches, needs no look-back: lb_count, at the end of this file.
 *
 * Memory ordering with OpenCL 1.2 alone. The only data that crosses
 * work-groups while the kernel runs are the tiles' states, and every access
 * to them is an atomic function on global memory (atomic_xchg to publish,
 * atomic_add(p, 0) to read, atomic_cmpxchg for lb_offer's counts), which
 * the 1.2 specification makes atomic with
 * respect to all work-items of the device. A state carries its own value,
 * so a reader never needs ordering between two locations: with 64-bit
 * atomics (cl_khr_int64_base_atomics, LB_ATOM64) a state is one word, the
 * flag in the top two bits and the value below; without them it is two
 * 32-bit words, each holding the flag and 30 bits of the value, and a
 * reader accepts a pair only when both words carry the same flag (a pair
 * read while the owner moves from aggregate to prefix shows two flags and
 * is read again). Values below 2^60 fit: more than any device holds.
 *
 * Forward progress. OpenCL 1.2 promises none between work-groups. Tile ids
 * come from the counter, so a tile only ever waits on tiles that began
 * before it; on devices that run begun work-groups to completion this
 * always ends. Elsewhere a waiting tile gives up after LB_SPIN reads of a
 * predecessor still in its invalid state and counts that predecessor's
 * elements itself from the input (read-only, so always possible), leaves
 * the count in the predecessor's state for the tiles that wait on it too
 * (lb_offer: only while that state is still invalid), then goes on to the
 * tile before it: the pass cannot deadlock on any device.
 * LB_SPIN counts window reads that found the nearest unread predecessor
 * still invalid. The look-back is work-item 0's alone, so no barrier sits
 * in a loop. */
#ifndef LB_SPIN
#define LB_SPIN 4096
#endif
#ifndef LB_WINDOW
#define LB_WINDOW 1 /* host/core/context.h: LOOKBACK_WINDOW */
#endif
/* LB_TEST_SPARSE=k (tests alone, k >= 2): tile t publishes its inclusive
 * prefix only when t % k == 0, and nothing at all when t % k == 1, so that
 * look-backs add up aggregates over several windows and fall back on a
 * silent predecessor wherever the device runs tiles in order (PoCL,
 * Oclgrind), where those paths would otherwise never run. */
#ifndef LB_TEST_SPARSE
#define LB_TEST_SPARSE 0
#endif
/* LB_PLAIN_READ=1 reads tile states with volatile loads instead of atomic
 * ones (an experiment for GPUs, where loads are single-copy atomic; not
 * OpenCL 1.2's promise, so never on by default; on the H200 at 256 x 8,
 * window 8 with plain reads took 0.70 ms for f32 2^26 at 10 %, window 1
 * with atomic ones 0.78, both with one-word states: plain reads now take
 * two-word ones, see below, so a sweep's plain-read figure changes both). */
#ifndef LB_PLAIN_READ
#define LB_PLAIN_READ 0
#endif
/* LB_PROFILE=k (scripts/bench --gpu-sweep alone: the entries it writes are
 * wrong) leaves a part of lb_run out, to see what each part costs beside
 * the whole kernel: 1, the look-back (tile t takes t times the average
 * tile's count as its offset, so its stores land about where they would);
 * 2, everything after the look-back; 3, the entries' stores (the staging
 * stays). Why: on the H200 at 256 x 48, lb_run's nonzero of f32 2^28
 * took 0.25 ms at 0 % (no tile stages or writes: the capacity is 0) and
 * 0.63 at 1 %, whose entries are 1 % of the bytes; local buffers padded
 * against bank conflicts, read a word of flags at a time, were slower
 * (1.03 ms at 50 % against 0.95). */
#ifndef LB_PROFILE
#define LB_PROFILE 0
#endif
/* LB_SCATTER (abi.h's ABI_LB_SCATTER_*): how a tile's entries reach the
 * output. Staged (the default): step 4. Direct: each work-item stores its
 * own run's entries from its flags, in order: no staging, no second
 * barrier, and no local memory for staged indices (the host gives a tile
 * 1 byte an element, not 3), but a warp's stores lie a run apart. Hybrid:
 * direct in a tile of at most a work-group of entries, whose stores are
 * few and scattered either way, staged otherwise (CUB's select chooses
 * so). Candidates for GPUs, measured by scripts/bench --gpu-sweep. */
#ifndef LB_SCATTER
#define LB_SCATTER ABI_LB_SCATTER_STAGED /* host/core/context.h: LOOKBACK_SCATTER */
#endif
#ifndef LB_ATOM64
#define LB_ATOM64 0
#endif
#if LB_PLAIN_READ && LB_ATOM64
/* A plain 64-bit load may be made of two 32-bit ones (OpenCL promises no
 * more), and a one-word state has nothing to tell a torn read by: the high
 * half of a prefix with the low half of an aggregate would pass as a
 * prefix, and every later offset would be wrong. The two-word states do
 * (each word carries the flag), so plain reads take them. The buffer is
 * the same either way: 8 bytes a tile, then the counter. */
#undef LB_ATOM64
#define LB_ATOM64 0
#endif
#include "kname.h"
#include "element.cl"
#include "value.cl"
#include "index.cl"
#define BLELLOCH_T uint
#include "blelloch.cl"

#if LB_ATOM64
#pragma OPENCL EXTENSION cl_khr_int64_base_atomics : enable
typedef volatile __global ulong lb_state_t;
#define LB_WORDS 1
#else
typedef volatile __global uint lb_state_t;
#define LB_WORDS 2
#endif

#define LB_VALUE30 0x3fffffffu
/* The first word of tile t's state. (States 128 bytes apart, in different
 * cache lines, made no difference on the H200: 0.75 ms for f32 2^26 either
 * way.) */
#define LB_SLOT(t) ((t) * LB_WORDS)

/* ---- tile states ---- */
/* Word k of a state (flag, value): the one word, or one of the two, each
 * with the flag and 30 bits of the value (lb_publish and lb_offer). */
#if LB_ATOM64
#define LB_STATE_WORD(flag, value, k) (((ulong)(flag) << 62) | (value))
#else
#define LB_STATE_WORD(flag, value, k) \
    (((uint)(flag) << 30) | (uint)(((value) >> (30 * (k))) & LB_VALUE30))
#endif

void lb_publish(lb_state_t *st, ulong t, uint flag, ulong value)
{
#if LB_ATOM64
    atom_xchg(&st[LB_SLOT(t)], LB_STATE_WORD(flag, value, 0));
#else
    atomic_xchg(&st[LB_SLOT(t)], LB_STATE_WORD(flag, value, 0));
    atomic_xchg(&st[LB_SLOT(t) + 1], LB_STATE_WORD(flag, value, 1));
#endif
}

/* Tile t's aggregate, counted by a successor that waited too long for it
 * (lb_tile_count), offered to the tiles that wait on t after it: stored
 * only where t's state is still invalid (compare and swap), so that they
 * take it instead of each counting t again, one work-item alone, while t
 * is held up (preempted, say). Safe whatever the order: the count is t's
 * own aggregate, which t's own publishes, later, write again or replace
 * with its prefix. In two words, each word offered is word for word the
 * one the owner's aggregate writes, so any pair of words with the same
 * flag holds the right value. */
void lb_offer(lb_state_t *st, ulong t, ulong value)
{
#if LB_ATOM64
    atom_cmpxchg(&st[LB_SLOT(t)], 0UL, LB_STATE_WORD(ABI_TILE_AGGREGATE, value, 0));
#else
    atomic_cmpxchg(&st[LB_SLOT(t)], 0u, LB_STATE_WORD(ABI_TILE_AGGREGATE, value, 0));
    atomic_cmpxchg(&st[LB_SLOT(t) + 1], 0u, LB_STATE_WORD(ABI_TILE_AGGREGATE, value, 1));
#endif
}

/* The flag (ABI_TILE_INVALID while none is whole) and value of tile t. */
uint lb_read(lb_state_t *st, ulong t, ulong *value)
{
#if LB_ATOM64
#if LB_PLAIN_READ
    ulong w = st[LB_SLOT(t)];
#else
    ulong w = atom_add(&st[LB_SLOT(t)], 0UL); /* atom_or is an extended atomic: add 0 reads */
#endif
    *value = w & ((1UL << 62) - 1);
    return (uint)(w >> 62);
#else
#if LB_PLAIN_READ
    uint a = st[LB_SLOT(t)], b = st[LB_SLOT(t) + 1];
#else
    uint a = atomic_add(&st[LB_SLOT(t)], 0u), b = atomic_add(&st[LB_SLOT(t) + 1], 0u);
#endif
    if ((a >> 30) != (b >> 30))
        return ABI_TILE_INVALID;
    *value = (ulong)(a & LB_VALUE30) | ((ulong)(b & LB_VALUE30) << 30);
    return a >> 30;
#endif
}

/* ---- elements ---- */
/* a / e, its remainder in *rem: in 32 bits where a fits (a GPU builds a
 * 64-bit division from dozens of instructions, and an entry of a dense tile
 * took two of them a dimension), none at all where a < e. */
ulong lb_div(ulong a, ulong e, ulong *rem)
{
    ulong q = a < e ? 0 : (a >> 32) == 0 ? (ulong)((uint)a / (uint)e) : a / e;
    *rem = a - q * e;
    return q;
}

/* Where flat element g lies in memory (element units, from in_off). What
 * is left of g at dimension 0 is its coordinate there (g < n). */
long lb_offset(ulong g, int rank, __global const long *meta, int contiguous)
{
    if (contiguous)
        return (long)g;
    long off = 0;
    for (int d = rank - 1; d > 0; --d) {
        ulong c;
        g = lb_div(g, (ulong)META_SHAPE(meta, d), &c);
        off += (long)c * META_STRIDE(meta, rank, d);
    }
    return rank > 0 ? off + (long)g * META_STRIDE(meta, rank, 0) : off;
}

/* Is element g (of n) selected? 0 past the end. */
uint lb_selected(__global const bits_t *in, long in_off, ulong g, ulong n, int rank,
                 __global const long *meta, int contiguous, ekey_t lo, ekey_t hi, uint invert)
{
    if (g >= n)
        return 0;
    return elem_selected(in[in_off + lb_offset(g, rank, meta, contiguous)], lo, hi, invert);
}

/* The selected elements of tile p, counted by one work-item (the fallback
 * of a look-back that waited too long for p to publish). */
ulong lb_tile_count(__global const bits_t *in, long in_off, ulong n, int rank,
                    __global const long *meta, int contiguous, ekey_t lo, ekey_t hi, uint invert,
                    ulong p, uint items)
{
    ulong tile = get_local_size(0) * (ulong)items, start = p * tile, c = 0;
    for (ulong i = start; i < start + tile && i < n; ++i)
        c += lb_selected(in, in_off, i, n, rank, meta, contiguous, lo, hi, invert);
    return c;
}

/* 16 bytes of elements, as a vector to load and as lanes to test: OpenCL C
 * 1.2 has no variable index into a vector. */
typedef union {
    bits16B_t v;
    bits_t lane[BITS16B_LANES];
} lb_16B;

/* ---- a work-item's run of flags: tile bytes first .. first + items ---- */
/* A run is read 4 flags a load where it is whole words (items % 4 == 0, as
 * at every GPU launch clnz tunes): the runs of a warp's work-items lie
 * items bytes apart, in a few banks of local memory, so their byte loads
 * queued behind each other, 4 times as many as word loads. The flags are a
 * uint kernel argument, so that the runtime aligns them for these loads (a
 * local argument is only promised its own type's alignment). */
uint lb_run_count(__local const uchar *flags, uint first, uint items)
{
    uint c = 0;
    if (items % 4 == 0) {
        __local const uint *w = (__local const uint *)(flags + first);
        for (uint j = 0; j < items / 4; ++j)
            c += (w[j] * 0x01010101u) >> 24; /* the sum of its 4 bytes, each 0 or 1 */
    } else {
        for (uint j = 0; j < items; ++j)
            c += flags[first + j];
    }
    return c;
}

/* ---- the staged tile-local indices of selected elements ---- */
/* The tile-local index of each selected element of the run, in order, to
 * slots o, o + 1, ... of sel: 16 bits, since the host keeps tiles within
 * 65536 elements (host/strategy/lookback.c: LOOKBACK_MAX_TILE), so that
 * they take 3 bytes of local memory an element instead of 5: more
 * work-groups fit a compute unit, and larger tiles fit at all. */
void lb_run_stage(__local const uchar *flags, uint first, uint items, __local ushort *sel, uint o)
{
    for (uint j = 0; j < items; ++j) /* a branch: a slot past the run is the next run's */
        if (flags[first + j])
            sel[o++] = (ushort)(first + j);
}

/* ---- a tile's loads ---- */
/* Step 1: work-item l's elements of the tile from `start`, coalesced, as
 * lb_run's header says; their flags to the tile's bytes where `keep`, and
 * how many of them are selected. vec16B: 16-byte loads where the whole
 * tile is in the input; the branch is the same for the whole work-group. */
uint lb_load_tile(__global const bits_t *in, long in_off, ulong start, ulong n, int rank,
                  __global const long *meta, int contiguous, ekey_t lo, ekey_t hi, uint invert,
                  uint items, uint vec16B, __local uchar *flags, int keep)
{
    uint l = (uint)get_local_id(0), wg = (uint)get_local_size(0), c = 0;
    if (vec16B && contiguous && start + (ulong)wg * items <= n) {
        __global const bits16B_t *v = (__global const bits16B_t *)(in + in_off + start);
        uint vectors = wg * items / BITS16B_LANES;
        for (uint k = 0; k < (vectors + wg - 1) / wg; ++k) { /* see lb_run's write */
            uint i = k * wg + l;
            if (i >= vectors)
                continue;
            lb_16B u;
            u.v = v[i];
            for (uint q = 0; q < BITS16B_LANES; ++q) {
                uint f = elem_selected(u.lane[q], lo, hi, invert);
                c += f;
                if (keep)
                    flags[i * BITS16B_LANES + q] = (uchar)f;
            }
        }
    } else {
        for (uint j = 0; j < items; ++j) {
            uint f = lb_selected(in, in_off, start + j * wg + l, n, rank, meta, contiguous, lo, hi,
                                 invert);
            c += f;
            if (keep)
                flags[j * wg + l] = (uchar)f;
        }
    }
    return c;
}

/* ---- entries ---- */

/* Entry `slot` for flat element f: its coordinates (column j of a width-W
 * entry is dimension rank - W + j, zero before dimension 0; reverse: the
 * columns in the opposite order) or, flat, f itself. */
void lb_put_coords(__global uchar *out, ulong out_off, ulong capacity, int layout, int width,
                   int reverse, int idx_bytes, ulong slot, ulong f, int rank,
                   __global const long *meta)
{
    if (layout == ABI_LAYOUT_FLAT) {
        put_index(out, out_off + slot, (long)f, idx_bytes);
        return;
    }
    ulong rem = f; /* at dimension 0 its coordinate (f < n): no division */
    for (int d = rank - 1; d >= rank - width; --d) {
        ulong c = 0;
        if (d > 0)
            rem = lb_div(rem, (ulong)META_SHAPE(meta, d), &c);
        else if (d == 0)
            c = rem;
        int j = d - (rank - width);     /* column of dimension d */
        int col = reverse ? width - 1 - j : j;
        ulong pos = layout == ABI_LAYOUT_ROWS ? slot * (ulong)width + (ulong)col
                                              : (ulong)col * capacity + slot;
        put_index(out, out_off + pos, c, idx_bytes);
    }
}

/* Entry `slot` for flat element f: x's value there (ABI_EMIT_VALUES) or
 * its coordinates. */
void lb_put_entry(__global uchar *out, ulong out_off, ulong capacity, int emit, int layout,
                  int width, int reverse, int idx_bytes, ulong slot, ulong f, int rank,
                  __global const long *meta, __global const value_t *x, long x_off,
                  __global const long *x_meta, int x_contiguous)
{
#if LB_PROFILE == 3
    if (f == ~0UL) /* f found (the staged index read), nothing stored: all but never */
        out[out_off] = 0;
    return;
#endif
    if (emit == ABI_EMIT_VALUES)
        ((__global value_t *)out)[out_off + slot] =
            x[x_off + lb_offset(f, rank, x_meta, x_contiguous)];
    else
        lb_put_coords(out, out_off, capacity, layout, width, reverse, idx_bytes, slot, f, rank,
                      meta);
}

/* emit: ABI_EMIT_COUNT, ABI_EMIT_COORDS or ABI_EMIT_VALUES (kernels/abi.h).
 * status: a state per tile (LB_SLOT) and then the tile counter, zeroed before
 * the launch. batches > 0: offsets[offsets_off + b] gets the selected
 * elements before flat index b * item_elems, for b < batches. flag_words:
 * TILE bytes (uints, for their alignment), sel: TILE ushorts (unused for
 * counts and direct scatter), scratch: p2 uints. vec16B:
 * the host checked that the input is contiguous, that element 0 sits on a
 * 16-byte boundary and that a tile holds whole vectors (a cast to a vector
 * pointer is only defined on an aligned address, and only such a load is
 * one wide load on a GPU: vloadn promises element alignment alone). */
__kernel void KERNEL(lb_run)(__global const bits_t *in, long in_off, ulong n, int rank,
                     __global const long *meta, int contiguous, ekey_t lo, ekey_t hi, uint invert,
                     lb_state_t *status, ulong tiles, int emit, __global uchar *out, ulong out_off,
                     ulong capacity, int layout, int width, int reverse, int idx_bytes,
                     __global const value_t *x, long x_off, __global const long *x_meta,
                     int x_contiguous, __global ulong *count, ulong count_off,
                     __global long *offsets, ulong offsets_off, ulong batches, ulong item_elems,
                     uint p2, __local uint *flag_words, __local ushort *sel, __local uint *scratch,
                     uint items, uint vec16B)
{
    __local ulong tile_id, excl_prefix;
    __local uchar *flags = (__local uchar *)flag_words;
    uint l = (uint)get_local_id(0), wg = (uint)get_local_size(0);
    if (l == 0) /* the tiles' counter follows their states */
        tile_id = atomic_inc((volatile __global uint *)(status + LB_SLOT(tiles)));
    barrier(CLK_LOCAL_MEM_FENCE);
    ulong t = tile_id, start = t * (ulong)wg * items;

    /* 1. load, coalesced */
    lb_load_tile(in, in_off, start, n, rank, meta, contiguous, lo, hi, invert, items, vec16B, flags,
                 1);
    barrier(CLK_LOCAL_MEM_FENCE);

    /* 2. count: each work-item's run, then the runs' places in the tile */
    uint run = lb_run_count(flags, l * items, items);
    uint aggregate;
    uint place = wg_exclusive_scan(run, scratch, p2, &aggregate);

    /* 3. look-back, by work-item 0 alone: no barrier inside a loop (some
     * compilers, PoCL's among them, mishandle barriers in loops even when
     * every work-item takes the same path) */
    if (l == 0) {
        ulong excl = 0;
        int silent = LB_TEST_SPARSE > 1 && t % LB_TEST_SPARSE == 1;
        int prefix = LB_TEST_SPARSE < 2 || t % LB_TEST_SPARSE == 0;
        /* tile 0's aggregate is its inclusive prefix */
        if (!silent)
            lb_publish(status, t, t ? ABI_TILE_AGGREGATE : ABI_TILE_PREFIX, aggregate);
        /* p: tiles p-1, p-2, ... are still to add; blocked: window reads in
         * a row that found tile p-1 invalid */
        for (ulong p = LB_PROFILE == 1 ? 0 : t, blocked = 0; p > 0;) {
            uint f[LB_WINDOW];
            ulong v[LB_WINDOW];
            uint w = p < LB_WINDOW ? (uint)p : LB_WINDOW;
            for (uint k = 0; k < LB_WINDOW; ++k) /* fixed trip counts: unrolled, in registers */
                f[k] = k < w ? lb_read(status, p - 1 - k, &v[k]) : ABI_TILE_INVALID;
            /* add the window's aggregates up to the first prefix or invalid */
            uint taken = 0, stop = 0, found = 0;
            ulong sum = 0;
            for (uint k = 0; k < LB_WINDOW; ++k) {
                if (stop || f[k] == ABI_TILE_INVALID) {
                    stop = 1;
                    continue;
                }
                sum += v[k];
                ++taken;
                stop = found = f[k] == ABI_TILE_PREFIX;
            }
            excl += sum;
            p -= taken;
            if (found)
                break;
            blocked = taken ? 0 : blocked + 1;
            if (blocked > LB_SPIN) { /* waited long enough: count it ourselves */
                ulong c = lb_tile_count(in, in_off, n, rank, meta, contiguous, lo, hi, invert,
                                        p - 1, items);
                lb_offer(status, p - 1, c);
                excl += c;
                --p;
                blocked = 0;
            }
        }
        if (t && prefix)
            lb_publish(status, t, ABI_TILE_PREFIX, excl + aggregate);
        excl_prefix = LB_PROFILE == 1 ? t * (capacity / tiles) : excl;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    ulong excl = excl_prefix;
    if (t == tiles - 1 && l == 0)
        count[count_off] = excl + aggregate;

    /* the items that begin in this work-item's run: where their entries start */
    if (batches) {
        ulong first = start + (ulong)l * items, last = first + items;
        ulong b = (first + item_elems - 1) / item_elems;
        uint before = 0, j = 0;
        for (; b < batches && b * item_elems < last; ++b) {
            for (; first + j < b * item_elems; ++j)
                before += flags[l * items + j];
            offsets[offsets_off + b] = (long)(excl + place + before);
        }
    }
    if (emit == ABI_EMIT_COUNT || excl >= capacity)
        return;
#if LB_PROFILE == 2
    return;
#endif
#if LB_SCATTER == ABI_LB_SCATTER_DIRECT
    uint direct = 1;
#elif LB_SCATTER == ABI_LB_SCATTER_HYBRID
    uint direct = aggregate <= wg; /* the same for the whole work-group */
#else
    uint direct = 0;
#endif
    if (direct) { /* 4'. the run's entries from its flags, in order (LB_SCATTER) */
        ulong slot = excl + place;
        uint word = 0; /* where the run is whole words: its next flags, low byte first */
        for (uint j = 0; j < items && slot < capacity; ++j) {
            uint flag;
            if (items % 4 == 0) { /* 4 flags a load (lb_run_count's reason) */
                if (j % 4 == 0) {
                    /* aligned: the flags are a uint argument, l * items + j a
                     * multiple of 4; the bytes in memory order on any device */
                    uchar4 q = *(__local const uchar4 *)(flags + l * items + j);
                    word = q.s0 | (uint)q.s1 << 8 | (uint)q.s2 << 16 | (uint)q.s3 << 24;
                    if (!word) { /* 4 unselected flags skipped at once */
                        j += 3;
                        continue;
                    }
                }
                flag = word & 0xff;
                word >>= 8;
            } else {
                flag = flags[l * items + j];
            }
            if (!flag)
                continue;
            lb_put_entry(out, out_off, capacity, emit, layout, width, reverse, idx_bytes, slot,
                         start + l * items + j, rank, meta, x, x_off, x_meta, x_contiguous);
            ++slot;
        }
        return;
    }

    /* 4. write: stage the selected elements' tile-local indices in order, then
     * consecutive work-items write consecutive entries */
    lb_run_stage(flags, l * items, items, sel, place);
    barrier(CLK_LOCAL_MEM_FENCE);
    ulong room = capacity - excl;
    uint entries = room < aggregate ? (uint)room : aggregate;
    /* a trip count the same for every work-item, the body guarded: PoCL
     * runs `for (e = l; e < entries; e += wg)` once too often here */
    for (uint k = 0; k < (entries + wg - 1) / wg; ++k) {
        uint e = k * wg + l;
        if (e >= entries)
            continue;
        lb_put_entry(out, out_off, capacity, emit, layout, width, reverse, idx_bytes, excl + e,
                     start + sel[e], rank, meta, x, x_off, x_meta, x_contiguous);
    }
}

/* A count alone (no batches: no tile needs another's count): no tile states
 * and no look-back. Each work-group counts its tile with step 1's loads,
 * in registers, sums it, and adds it to the count with one 32-bit
 * atomic_add on the u64's low word, then an atomic_inc on its high word
 * when the low word wraps: exact, since each wrap is one increment, and
 * read only once the kernel has ended. The host zeroes the count first,
 * which is the caller's where the kernel may read it (not
 * CL_MEM_WRITE_ONLY), else the host's scratch, copied out after. */
__kernel void KERNEL(lb_count)(__global const bits_t *in, long in_off, ulong n, int rank,
                       __global const long *meta, int contiguous, ekey_t lo, ekey_t hi,
                       uint invert, __global ulong *count, ulong count_off, uint p2,
                       __local uint *scratch, uint items, uint vec16B)
{
    ulong start = get_group_id(0) * (ulong)get_local_size(0) * items;
    uint c = lb_load_tile(in, in_off, start, n, rank, meta, contiguous, lo, hi, invert, items,
                          vec16B, (__local uchar *)scratch, 0); /* no flags kept */
    uint total = wg_sum(c, scratch, p2);
    if (get_local_id(0) == 0 && total) {
        volatile __global uint *word = (volatile __global uint *)(count + count_off);
#ifdef __ENDIAN_LITTLE__
        uint low = 0;
#else
        uint low = 1;
#endif
        uint before = atomic_add(&word[low], total);
        if (before + total < before)
            atomic_inc(&word[1 - low]);
    }
}
