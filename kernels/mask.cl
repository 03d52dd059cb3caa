/* mask.cl: the predicate of every element, stored as 0/1 in C order of the
 * logical array (one u8 or u32 per element), for callers who want the mask
 * itself. The nonzero pipeline does not use it: it evaluates the predicate
 * inside its own passes (nonzero.cl). */
#include "kname.h"
#include "element.cl"

__kernel void KERNEL(mask_write)(__global const bits_t *in, long in_off, ulong n, int rank,
                         __global const long *meta, int contiguous, ekey_t lo, ekey_t hi,
                         uint invert, __global uchar *out, ulong out_off, int out_bytes, uint items)
{
    ulong first = get_global_id(0) * items;
    if (first >= n)
        return;
    walker w;
    walker_init(&w, first, rank, meta, !contiguous);
    ulong last = min(first + items, n);
    for (ulong i = first; i < last; ++i) {
        uint s = elem_selected(in[in_off + w.off], lo, hi, invert);
        if (out_bytes == 4)
            ((__global uint *)out)[out_off + i] = s;
        else
            out[out_off + i] = (uchar)s;
        if (i + 1 < last)
            walker_next(&w, rank, meta, !contiguous);
    }
}

/* One byte per pixel: the predicate on each channel of the pixel (the last
 * dimension: `channels` values `cstride` elements apart), combined by the
 * rule (all != 0: every channel; else any channel). The pixels are the
 * elements of the leading dimensions (rank and meta describe them), in C
 * order. One work-item per pixel: the channels are few. */
__kernel void KERNEL(channel_mask)(__global const bits_t *in, long in_off, ulong pixels, int rank,
                           __global const long *meta, long channels, long cstride, ekey_t lo,
                           ekey_t hi, uint invert, int all, __global uchar *mask)
{
    ulong p = get_global_id(0);
    if (p >= pixels)
        return;
    walker w;
    walker_init(&w, p, rank, meta, 1);
    uint any = 0, every = 1;
    for (long k = 0; k < channels; ++k) {
        uint s = elem_selected(in[in_off + w.off + k * cstride], lo, hi, invert);
        any |= s;
        every &= s;
    }
    mask[p] = (uchar)(all ? every : any);
}
