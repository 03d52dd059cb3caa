/* index.cl: how an index lands in an output buffer, shared by every kernel
 * that writes indices (nonzero.cl, lookback.cl, stream.cl, fill.cl).
 *
 * Index outputs are int64, or 32-bit (int32 and uint32 share the bit pattern
 * once the host has checked that every index fits). */
#ifndef CLNZ_INDEX_CL
#define CLNZ_INDEX_CL

void put_index(__global uchar *out, ulong pos, long value, int idx_bytes)
{
    if (idx_bytes == 8)
        ((__global long *)out)[pos] = value;
    else
        ((__global uint *)out)[pos] = (uint)value;
}

#endif
