/* blelloch.cl: the work-efficient (Blelloch) exclusive scan of one value per
 * work-item, and its up-sweep alone as a work-group's sum, in local memory.
 * Included by the kernels that scan or sum across a work-group.
 *
 * BLELLOCH_T is the value type (ulong unless the includer says otherwise).
 * The tree needs a power of two leaves, but a work-group may have any size the
 * device allows, so the scan runs over p2 = next power of two >= local size
 * slots and the slots past the last work-item hold zero. */
#ifndef CLNZ_BLELLOCH_CL
#define CLNZ_BLELLOCH_CL

#ifndef BLELLOCH_T
#define BLELLOCH_T ulong
#endif

/* The up-sweep alone: every work-item of the group must call this (it has
 * barriers), and gets the group's sum of v; scratch (p2 slots) then holds
 * the tree of partial sums, read by wg_exclusive_scan and free for reuse
 * only after a barrier. */
BLELLOCH_T wg_sum(BLELLOCH_T v, __local BLELLOCH_T *scratch, uint p2)
{
    uint l = (uint)get_local_id(0);
    uint wg = (uint)get_local_size(0);
    for (uint i = l; i < p2; i += wg)
        scratch[i] = (i == l) ? v : (BLELLOCH_T)0;
    barrier(CLK_LOCAL_MEM_FENCE);

    /* up-sweep: each level adds the left child into the right one */
    for (uint d = 1; d < p2; d <<= 1) {
        for (uint k = l; k < p2 / (2 * d); k += wg)
            scratch[(2 * k + 2) * d - 1] += scratch[(2 * k + 1) * d - 1];
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    return scratch[p2 - 1];
}

/* Every work-item of the group must call this (it has barriers). scratch has
 * p2 slots. Returns the exclusive prefix of v; *total gets the group's sum. */
BLELLOCH_T wg_exclusive_scan(BLELLOCH_T v, __local BLELLOCH_T *scratch, uint p2, BLELLOCH_T *total)
{
    uint l = (uint)get_local_id(0);
    uint wg = (uint)get_local_size(0);
    *total = wg_sum(v, scratch, p2);
    barrier(CLK_LOCAL_MEM_FENCE);
    if (l == 0)
        scratch[p2 - 1] = 0;
    barrier(CLK_LOCAL_MEM_FENCE);

    /* down-sweep: the left child takes the parent's prefix, the right child
     * the parent's prefix plus the left child's old sum */
    for (uint d = p2 / 2; d >= 1; d >>= 1) {
        for (uint k = l; k < p2 / (2 * d); k += wg) {
            uint ai = (2 * k + 1) * d - 1, bi = (2 * k + 2) * d - 1;
            BLELLOCH_T t = scratch[ai];
            scratch[ai] = scratch[bi];
            scratch[bi] += t;
        }
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    BLELLOCH_T prefix = scratch[l];
    barrier(CLK_LOCAL_MEM_FENCE); /* the caller may reuse scratch at once */
    return prefix;
}

#endif /* CLNZ_BLELLOCH_CL */
