/* count_axes.cl: the count of each item of a batch (count_nonzero along
 * axes), for the layouts where neighbouring items lie nearer in memory
 * than an item's own elements (counting along an outer axis): a
 * work-item counts a few neighbouring items together, walking their
 * elements in step, so that each step reads neighbouring addresses. The
 * other layouts run the batched counting pass (strategy.h: batches), and
 * item_counts turns its offsets into counts. */
#include "element.cl"

/* The items a work-item counts: neighbours share its loads. */
#define ITEMS_PER_WI 16

/* Items [16 g, 16 g + 16) (g the work-item's place in its block of
 * work-items) of the kept dimensions (krank, kmeta: the input's extents
 * and strides); an item's elements are those of the counted dimensions
 * (crank, cmeta), item_n of them, from there.
 *
 * Row blocks: the global range is `blocks` copies of the items' wis
 * work-items (blocks-major, then padded to whole work-groups), copy k
 * counting elements [k steps, (k + 1) steps) of its items. Short walks
 * keep what a work-group reads within a few pages of each row (a walk of
 * every row strides through the whole input, one TLB miss per step on a
 * CPU) and give a device blocks-fold more work-items. With one block the counts go straight to
 * counts; with more, block k's go to partial[k items + item] (the host
 * keeps steps at most 2^31) and item_block_sums adds them up.
 *
 * vec16: the host found the kept dimensions' innermost stride 1 and its
 * extent a multiple of 16, so a work-item's items are 16 neighbouring
 * elements at every step (never two rows' ends): one vector load and one
 * vector test a step. */
__kernel void count_items(__global const bits_t *in, long in_off, ulong items, int krank,
                          __global const long *kmeta, ulong item_n, int crank,
                          __global const long *cmeta, ekey_t lo, ekey_t hi, uint invert,
                          uint vec16, ulong wis, ulong steps, ulong blocks,
                          __global long *counts, ulong counts_off, __global uint *partial)
{
    ulong gid = get_global_id(0), block = gid / wis;
    ulong first = (gid % wis) * ITEMS_PER_WI, from = block * steps;
    if (block >= blocks) /* the padding to whole work-groups */
        return;
    ulong n = min(steps, item_n - from);
    uint nb = (uint)min((ulong)ITEMS_PER_WI, items - first);
    walker item, e;
    walker_init(&item, first, krank, kmeta, 1);
    walker_init(&e, from, crank, cmeta, 1);
    if (vec16 && nb == ITEMS_PER_WI) {
        __global const bits_t *at = in + in_off + item.off;
        const uint16 bit = (uint16)(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
        ulong16 total = (ulong16)0;
        /* 32-bit lanes for at most 2^31 steps at a time, then 64-bit sums */
        for (ulong done = 0; done < n;) {
            ulong chunk = min(n - done, (ulong)1 << 31);
            uint16 c = (uint16)0;
            for (ulong i = 0; i < chunk; ++i) {
                uint m = elem_mask16(vload16(0, at + e.off), lo, hi, invert);
                c += ((uint16)m >> bit) & (uint16)1;
                if (done + i + 1 < n)
                    walker_next(&e, crank, cmeta, 1);
            }
            total += convert_ulong16(c);
            done += chunk;
        }
        if (blocks == 1)
            vstore16(as_long16(total), 0, counts + counts_off + first);
        else
            vstore16(convert_uint16(total), 0, partial + block * items + first);
        return;
    }
    long off[ITEMS_PER_WI], c[ITEMS_PER_WI];
    for (uint j = 0; j < nb; ++j) {
        off[j] = in_off + item.off;
        c[j] = 0;
        if (j + 1 < nb)
            walker_next(&item, krank, kmeta, 1);
    }
    for (ulong i = 0; i < n; ++i) {
        for (uint j = 0; j < nb; ++j)
            c[j] += elem_selected(in[off[j] + e.off], lo, hi, invert);
        if (i + 1 < n)
            walker_next(&e, crank, cmeta, 1);
    }
    for (uint j = 0; j < nb; ++j) {
        if (blocks == 1)
            counts[counts_off + first + j] = c[j];
        else
            partial[block * items + first + j] = (uint)c[j];
    }
}

/* counts[b] = the sum of count_items' block counts of item b, b < items. */
__kernel void item_block_sums(__global const uint *partial, ulong blocks, ulong items,
                              __global long *counts, ulong counts_off)
{
    ulong b = get_global_id(0);
    if (b >= items)
        return;
    long sum = 0;
    for (ulong k = 0; k < blocks; ++k)
        sum += partial[k * items + b];
    counts[counts_off + b] = sum;
}

/* counts[b] = the sum over k < blocks of offsets[k items + b + 1] -
 * offsets[k items + b], for b < items: the batched counting pass's CSR
 * offsets as counts. blocks > 1 when the pass counted (outer block, item)
 * pairs, counting along inner and outer axes at once (count_batched.c's
 * split). */
__kernel void item_counts(__global const long *offsets, ulong offsets_off, ulong items,
                          ulong blocks, __global long *counts, ulong counts_off)
{
    ulong b = get_global_id(0);
    if (b >= items)
        return;
    long sum = 0;
    for (ulong k = 0; k < blocks; ++k) {
        __global const long *o = offsets + offsets_off + k * items + b;
        sum += o[1] - o[0];
    }
    counts[counts_off + b] = sum;
}
