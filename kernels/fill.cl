/* fill.cl: static capacity (torch.nonzero_static, --size): the entries from
 * the true count up to the capacity get the fill value. A file of its own,
 * with no -D axis: it reads no input, so one small program serves every
 * dtype and predicate, and a bundle needs it once (it was a kernel of
 * nonzero.cl, whose every build is a large program). */
#include "kname.h"
#include "abi.h"
#include "index.cl"

/* One work-item per index slot. */
__kernel void KERNEL(nz_fill)(__global uchar *out, ulong out_off, ulong capacity, int layout, int width,
                      int idx_bytes, __global const ulong *count, ulong count_off, long fill)
{
    ulong e = get_global_id(0);
    ulong per_entry = layout == ABI_LAYOUT_FLAT ? 1 : (ulong)width;
    if (e >= capacity * per_entry)
        return;
    ulong entry = layout == ABI_LAYOUT_COLUMNS ? e % capacity : e / per_entry;
    if (entry >= count[count_off])
        put_index(out, out_off + e, fill, idx_bytes);
}
