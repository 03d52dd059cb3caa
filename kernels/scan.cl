/* scan.cl: multi-level exclusive prefix sum of a u32 or u64 device buffer.
 *
 * scan_tiles scans each tile of TILE = local size * items elements and writes
 * the tile's total to sums[]; the host scans sums[] the same way (recursing
 * until one tile is left) and scan_add adds each tile's prefix back. u32 sums
 * wrap modulo 2^32, as unsigned arithmetic does. */
#ifndef SCAN_T
#define SCAN_T ulong
#endif
#define BLELLOCH_T SCAN_T
#include "kname.h"
#include "blelloch.cl"

/* Each work-item owns items consecutive elements (a blocked arrangement), so
 * the work-group scan of per-work-item sums orders them correctly. */
__kernel void KERNEL(scan_tiles)(__global const SCAN_T *in, ulong in_off, __global SCAN_T *out,
                         ulong out_off, ulong n, __global SCAN_T *sums, ulong sums_off,
                         uint p2, __local SCAN_T *scratch, uint items)
{
    ulong tile = (ulong)get_local_size(0) * items;
    ulong first = get_group_id(0) * tile + get_local_id(0) * items;
    SCAN_T sum = 0;
    for (uint j = 0; j < items; ++j)
        if (first + j < n)
            sum += in[in_off + first + j];

    SCAN_T total;
    SCAN_T run = wg_exclusive_scan(sum, scratch, p2, &total);
    /* in and out may be the same buffer: each element is read before it is
     * overwritten, by the same work-item */
    for (uint j = 0; j < items; ++j) {
        if (first + j < n) {
            SCAN_T x = in[in_off + first + j];
            out[out_off + first + j] = run;
            run += x;
        }
    }
    if (get_local_id(0) == 0)
        sums[sums_off + get_group_id(0)] = total;
}

__kernel void KERNEL(scan_add)(__global SCAN_T *data, ulong off, ulong n, __global const SCAN_T *prefix,
                       ulong prefix_off, uint items)
{
    ulong tile = (ulong)get_local_size(0) * items;
    ulong first = get_group_id(0) * tile + get_local_id(0) * items;
    SCAN_T add = prefix[prefix_off + get_group_id(0)];
    for (uint j = 0; j < items; ++j)
        if (first + j < n)
            data[off + first + j] += add;
}
