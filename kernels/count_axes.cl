/* count_axes.cl: the count of each item of a batch (count_nonzero along
 * axes), for the layouts where neighbouring items lie nearer in memory
 * than an item's own elements (counting along an outer axis): a
 * work-item counts a few neighbouring items together, walking their
 * elements in step, so that each step reads neighbouring addresses. The
 * other layouts run the batched counting pass (strategy.h: batches), and
 * item_counts turns its offsets into counts. */
#include "kname.h"
#include "element.cl"

#define ITEMS_PER_WI ABI_COUNT_ITEMS_PER_WI

/* The steps a work-item takes between two barriers (COUNT_LOCKSTEP below):
 * with one step a barrier, PoCL kept each work-item's walker and counts in
 * memory across every one of them, and short walks ran slower than
 * without (f32 (16, 32, 64, 64) along axis 0: 0.60 -> 1.0 ms); 4, 16 and
 * 32 measured within the noise of 8. Without barriers, the whole walk (at
 * most 2^31 steps) is one run. */
#if COUNT_LOCKSTEP
#define RUN_STEPS 8
#define RUN_DONE() barrier(CLK_LOCAL_MEM_FENCE)
#else
#define RUN_STEPS (1u << 31)
#define RUN_DONE()
#endif

/* Items [16 g, 16 g + 16) (g the work-item's place in its block of
 * work-items) of the kept dimensions (krank, kmeta: the input's extents
 * and strides); an item's elements are those of the counted dimensions
 * (crank, cmeta), item_n of them, from there.
 *
 * Row blocks: the global range is `blocks` copies of the items' wis
 * work-items (block_wis apart: with COUNT_LOCKSTEP each copy is padded to
 * whole work-groups, so that a work-group lies in one block and its
 * work-items take the same number of steps; else the copies follow each
 * other, padded at the end), copy k counting elements [k steps, (k + 1)
 * steps) of its items. Short walks keep what a work-group reads within a
 * few pages of each row (a walk of every row strides through the whole
 * input, one TLB miss per step on a CPU) and give a device blocks-fold
 * more work-items. With one block the counts go straight to counts; with
 * more, block k's go to partial[k items + item] (the host keeps steps at
 * most 2^31) and item_block_sums adds them up.
 *
 * vec16: the host found the kept dimensions' innermost stride 1, so a
 * work-item whose 16 items lie in one row of that dimension (all of them
 * when 16 divides its extent) has 16 neighbouring elements at every step:
 * one vector load and one vector test a step. The others (a row's last
 * items, items across two rows' ends) go an item at a time. Only the
 * extents that 16 divides took vector loads before: f32 (4096, 1000)
 * along axis 0 ran 2x numpy's time.
 *
 * COUNT_LOCKSTEP (a build option, 1 for a CPU device): a barrier after every
 * RUN_STEPS steps, so that a CPU, which runs a work-group's work-items
 * one after another between barriers, takes those steps of every work-item
 * before the next ones: the work-group's 64-byte pieces of a few rows side
 * by side, then the next rows'. Without it each work-item walks its own
 * column of pieces, a row pitch apart, which the prefetchers follow badly,
 * and a power-of-two pitch worst. PoCL on an AMD EPYC VM, f32 along axis 0,
 * host arrays, mins of 41 calls, 3 processes each, against the kernel of
 * before (no barrier, vector loads only where 16 divides the row, strided
 * items each walked on its own): (4096, 4096) 6.2-6.8 -> 3.5-3.8 ms,
 * (4096, 1000) 4.7-6.0 -> 0.72-0.82, (65536, 40) 1.16-1.28 -> 0.60-0.65,
 * (4096, 512)[:, ::2] 0.60-0.63 -> 0.51-0.53, (16, 32, 64, 64) 0.47-0.51
 * -> 0.42-0.44. A GPU reads a step's pieces side by side anyway:
 * its build has no barrier, and its blocks are not padded (work-groups of
 * 64 whatever the number of items). */
__kernel void KERNEL(count_items)(__global const bits_t *in, long in_off, ulong items, int krank,
                          __global const long *kmeta, ulong item_n, int crank,
                          __global const long *cmeta, ekey_t lo, ekey_t hi, uint invert,
                          uint vec16, ulong wis, ulong block_wis, ulong steps, ulong blocks,
                          __global long *counts, ulong counts_off, __global uint *partial)
{
    ulong gid = get_global_id(0), block = gid / block_wis, g = gid % block_wis;
    /* the padding to whole work-groups (none with COUNT_LOCKSTEP: the host
     * launches blocks x block_wis exactly, so no work-item leaves before a
     * barrier the others reach) */
    if (block >= blocks)
        return;
    ulong first = g * ITEMS_PER_WI, from = block * steps;
    /* at most 2^31 (item_blocks, ops/count_batched.c): 32-bit lanes hold
     * the counts; with COUNT_LOCKSTEP the same for the whole work-group */
    ulong n = min(steps, item_n - from);
    uint nb = g < wis ? (uint)min((ulong)ITEMS_PER_WI, items - first) : 0;
    ulong row = (ulong)META_SHAPE(kmeta, krank - 1);
    int vec = vec16 && nb == ITEMS_PER_WI && first % row + ITEMS_PER_WI <= row;
    walker item;
    walker_init(&item, nb ? first : 0, krank, kmeta, 1);
    __global const bits_t *at = in + in_off + item.off;
    long off[ITEMS_PER_WI]; /* !vec: item j's first element */
    for (uint j = 0; j < nb && !vec; ++j) {
        off[j] = in_off + item.off;
        if (j + 1 < nb)
            walker_next(&item, krank, kmeta, 1);
    }
    const uint16 bit = (uint16)(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
    uint16 c16 = (uint16)0; /* lane j: item j's count */
    /* runs of RUN_STEPS steps, the run's walker made anew after each
     * barrier: what lives across one is the counts, not a walker */
    for (ulong s = 0; s < n; s += RUN_STEPS) {
        uint run = (uint)min((ulong)RUN_STEPS, n - s);
        walker e;
        walker_init(&e, from + s, crank, cmeta, 1);
        if (vec) {
            for (uint k = 0; k < run; ++k) {
                uint m = elem_mask16(vload16(0, at + e.off), lo, hi, invert);
                c16 += ((uint16)m >> bit) & (uint16)1;
                if (k + 1 < run)
                    walker_next(&e, crank, cmeta, 1);
            }
        } else { /* the items one by one at each step (nb 0: padding) */
            uint cj[ITEMS_PER_WI] = {0};
            for (uint k = 0; k < run; ++k) {
                for (uint j = 0; j < nb; ++j)
                    cj[j] += elem_selected(in[off[j] + e.off], lo, hi, invert);
                if (k + 1 < run)
                    walker_next(&e, crank, cmeta, 1);
            }
            c16 += vload16(0, cj);
        }
        RUN_DONE();
    }
    if (nb == ITEMS_PER_WI) {
        if (blocks == 1)
            vstore16(as_long16(convert_ulong16(c16)), 0, counts + counts_off + first);
        else
            vstore16(c16, 0, partial + block * items + first);
        return;
    }
    uint lane[ITEMS_PER_WI];
    vstore16(c16, 0, lane);
    for (uint j = 0; j < nb; ++j) {
        if (blocks == 1)
            counts[counts_off + first + j] = (long)lane[j];
        else
            partial[block * items + first + j] = lane[j];
    }
}

/* counts[b] = the sum of count_items' block counts of item b, b < items. */
__kernel void KERNEL(item_block_sums)(__global const uint *partial, ulong blocks, ulong items,
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
__kernel void KERNEL(item_counts)(__global const long *offsets, ulong offsets_off, ulong items,
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
