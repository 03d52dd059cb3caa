/* element.cl: how clnz kernels read one element of the input.
 *
 * Included by every kernel that reads user data. It holds the one typedef block
 * (CLNZ_DTYPE selects the element's bit type), the predicate key that makes
 * every comparison an integer range test, and the odometer that walks a
 * strided tensor in C order. */
#ifndef CLNZ_ELEMENT_CL
#define CLNZ_ELEMENT_CL

#include "abi.h"

#define CLNZ_MAX_RANK ABI_MAX_RANK

#ifndef CLNZ_DTYPE
#define CLNZ_DTYPE CLNZ_DT_F32
#endif

/* Elements are read as raw bit patterns: floats are never loaded as floats, so
 * a device that flushes denormals or lacks fp16/fp64 still sees every value.
 * bits16_t: 16 elements, for the vector tests; bits16B_t: 16 bytes of
 * elements (BITS16B_LANES of them), one vector load for coalescing kernels. */
#if CLNZ_DTYPE == CLNZ_DT_BOOL || CLNZ_DTYPE == CLNZ_DT_U8 || CLNZ_DTYPE == CLNZ_DT_I8
typedef uchar bits_t;
typedef uchar16 bits16_t;
typedef uchar16 bits16B_t;
#define BITS16B_LANES 16
#define ELEM_BYTES 1
#elif CLNZ_DTYPE == CLNZ_DT_U16 || CLNZ_DTYPE == CLNZ_DT_I16 || CLNZ_DTYPE == CLNZ_DT_F16
typedef ushort bits_t;
typedef ushort16 bits16_t;
typedef ushort8 bits16B_t;
#define BITS16B_LANES 8
#define ELEM_BYTES 2
#elif CLNZ_DTYPE == CLNZ_DT_U32 || CLNZ_DTYPE == CLNZ_DT_I32 || CLNZ_DTYPE == CLNZ_DT_F32
typedef uint bits_t;
typedef uint16 bits16_t;
typedef uint4 bits16B_t;
#define BITS16B_LANES 4
#define ELEM_BYTES 4
#elif CLNZ_DTYPE == CLNZ_DT_U64 || CLNZ_DTYPE == CLNZ_DT_I64 || CLNZ_DTYPE == CLNZ_DT_F64
typedef ulong bits_t;
typedef ulong16 bits16_t;
typedef ulong2 bits16B_t;
#define BITS16B_LANES 2
#define ELEM_BYTES 8
#else
#error "unknown CLNZ_DTYPE"
#endif

/* The key orders elements the way their values are ordered. Only u64 needs an
 * unsigned key; everything else fits a signed 64-bit key. */
#if CLNZ_DTYPE == CLNZ_DT_U64
typedef ulong ekey_t;
#else
typedef long ekey_t;
#endif

#if CLNZ_DTYPE == CLNZ_DT_F16
#define ELEM_MAG_MASK 0x7fffUL
#elif CLNZ_DTYPE == CLNZ_DT_F32
#define ELEM_MAG_MASK 0x7fffffffUL
#elif CLNZ_DTYPE == CLNZ_DT_F64
#define ELEM_MAG_MASK 0x7fffffffffffffffUL
#endif

ekey_t elem_key(bits_t b)
{
#if CLNZ_DTYPE == CLNZ_DT_BOOL
    return b != 0; /* any byte but 0 is true */
#elif CLNZ_DTYPE == CLNZ_DT_I8
    return (char)b;
#elif CLNZ_DTYPE == CLNZ_DT_I16
    return (short)b;
#elif CLNZ_DTYPE == CLNZ_DT_I32
    return (int)b;
#elif CLNZ_DTYPE == CLNZ_DT_I64
    return (long)b;
#elif defined(ELEM_MAG_MASK)
    /* sign-magnitude to two's complement: -0.0 and +0.0 both map to 0 */
    long mag = (long)(b & ELEM_MAG_MASK);
    return (b & ~ELEM_MAG_MASK) ? -mag : mag;
#else
    return b;
#endif
}

/* PRED_NONZERO: the host built this kernel for "x != 0", so the test is one
 * mask and one compare instead of the key range (same results). */
#ifndef PRED_NONZERO
#define PRED_NONZERO 0
#endif

/* Is x OP v, for a predicate that the host reduced to "key in [lo, hi]",
 * inverted for "ne"? NaN compares false, except for "ne": its key lies
 * beyond +-inf's, so outside every range the host gives (within the
 * type's keys, host/core/predicate.c), and only the inversion selects it,
 * as numpy does. No branches: the result feeds a count, not a jump. */
uint elem_selected(bits_t b, ekey_t lo, ekey_t hi, uint invert)
{
#if PRED_NONZERO
#ifdef ELEM_MAG_MASK
    return (b & ELEM_MAG_MASK) != 0; /* -0.0 is zero, NaN is not */
#else
    return b != 0;
#endif
#endif
    ekey_t k = elem_key(b);
    return ((uint)(k >= lo) & (uint)(k <= hi)) ^ invert;
}

/* elem_selected on 16 elements at once, in lanes of the element's own
 * width (sel16_t: -1 where selected, else 0; key16_t: the keys). Vector
 * operations throughout: PoCL does not vectorize the scalar test inside the
 * write pass's loops, and this is where a pass spends its time. The host's
 * key range lies within the type's keys, or is the empty [1, 0]
 * (host/core/predicate.c), so its bounds fit a lane: f32's keys, sign and
 * magnitude, are 32-bit integers. Widening every element to a 64-bit key
 * first, as this did, cost (PoCL, device-resident nonzero, medians) u8
 * 4096 x 4096, x > 230: flat 4.85 vs 3.51 ms, rows 6.05 vs 4.38; f32
 * (4096, 4096), x > 0.9: flat 5.78 vs 4.47, rows 7.05 vs 5.84, counting
 * 3.33 vs 2.45 (chunk.cl counts these lanes now). */
#if CLNZ_DTYPE == CLNZ_DT_BOOL || CLNZ_DTYPE == CLNZ_DT_U8
typedef char16 sel16_t;
typedef uchar16 key16_t;
typedef uchar lkey_t;
#define AS_KEY16(v) (v)
#elif CLNZ_DTYPE == CLNZ_DT_I8
typedef char16 sel16_t;
typedef char16 key16_t;
typedef char lkey_t;
#define AS_KEY16(v) as_char16(v)
#elif CLNZ_DTYPE == CLNZ_DT_U16
typedef short16 sel16_t;
typedef ushort16 key16_t;
typedef ushort lkey_t;
#define AS_KEY16(v) (v)
#elif CLNZ_DTYPE == CLNZ_DT_I16 || CLNZ_DTYPE == CLNZ_DT_F16
typedef short16 sel16_t;
typedef short16 key16_t;
typedef short lkey_t;
#define AS_KEY16(v) as_short16(v)
#elif CLNZ_DTYPE == CLNZ_DT_U32
typedef int16 sel16_t;
typedef uint16 key16_t;
typedef uint lkey_t;
#define AS_KEY16(v) (v)
#elif CLNZ_DTYPE == CLNZ_DT_I32 || CLNZ_DTYPE == CLNZ_DT_F32
typedef int16 sel16_t;
typedef int16 key16_t;
typedef int lkey_t;
#define AS_KEY16(v) as_int16(v)
#elif CLNZ_DTYPE == CLNZ_DT_U64
typedef long16 sel16_t;
typedef ulong16 key16_t;
typedef ulong lkey_t;
#define AS_KEY16(v) (v)
#else
typedef long16 sel16_t;
typedef long16 key16_t;
typedef long lkey_t;
#define AS_KEY16(v) as_long16(v)
#endif

sel16_t elem_sel16(bits16_t v, ekey_t lo, ekey_t hi, uint invert)
{
#if PRED_NONZERO
#ifdef ELEM_MAG_MASK
    v &= (bits16_t)(ELEM_MAG_MASK); /* -0.0 is zero, NaN is not */
#endif
    return v != (bits16_t)0;
#else
#if CLNZ_DTYPE == CLNZ_DT_BOOL
    key16_t k = min(v, (uchar16)1); /* any byte but 0 is 1 (as_uchar16 of a compare, masked
                                      * with 1, gave 0xff under Oclgrind) */
#elif defined(ELEM_MAG_MASK)
    key16_t mag = AS_KEY16(v & (bits16_t)(ELEM_MAG_MASK)); /* sign-magnitude to two's complement */
    key16_t k = select(mag, -mag, (v & (bits16_t)(~ELEM_MAG_MASK)) != (bits16_t)0);
#else
    key16_t k = AS_KEY16(v);
#endif
    /* NaN as in elem_selected: no test of its own */
    return ((k >= (key16_t)(lkey_t)lo) & (k <= (key16_t)(lkey_t)hi)) ^
           (sel16_t)(invert ? -1 : 0);
#endif
}

/* The 16 lanes of elem_sel16 as a bit mask (bit j: element j). One-byte
 * lanes on a little-endian device: eight lanes are a 64-bit word whose
 * high bits, bit 8j + 7, a multiply moves to bit 56 + j (no two partial
 * products overlap); other lanes are masked with their bit and or-ed. */
#if ELEM_BYTES == 1 && defined(__ENDIAN_LITTLE__)
uint bytes8_bits(ulong sel)
{
    return (uint)(((sel & 0x8080808080808080UL) * 0x0002040810204081UL) >> 56);
}

uint elem_mask16(bits16_t v, ekey_t lo, ekey_t hi, uint invert)
{
    ulong2 sel = as_ulong2(elem_sel16(v, lo, hi, invert));
    return bytes8_bits(sel.x) | bytes8_bits(sel.y) << 8;
}
#else
uint elem_mask16(bits16_t v, ekey_t lo, ekey_t hi, uint invert)
{
    uint16 b = convert_uint16(elem_sel16(v, lo, hi, invert)) &
               (uint16)(1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096, 8192, 16384,
                        32768);
    uint8 a = b.lo | b.hi;
    uint4 c = a.lo | a.hi;
    uint2 d = c.lo | c.hi;
    return d.x | d.y;
}
#endif

/* meta holds shape[0..rank) then strides[0..rank), strides in elements. */
#define META_SHAPE(meta, d) ((meta)[(d)])
#define META_STRIDE(meta, rank, d) ((meta)[(rank) + (d)])

/* Walks the logical array in C order from a given flat index, keeping the
 * memory offset and, when asked, the coordinates. One div/mod per dimension
 * at the start, then an odometer step per element. */
typedef struct {
    long off;
    long coord[CLNZ_MAX_RANK];
} walker;

void walker_init(walker *w, ulong first, int rank, __global const long *meta, int track)
{
    if (!track) {
        w->off = (long)first;
        return;
    }
    ulong rem = first;
    long off = 0;
    for (int d = rank - 1; d >= 0; --d) {
        ulong extent = (ulong)META_SHAPE(meta, d);
        ulong c = rem % extent;
        rem /= extent;
        w->coord[d] = (long)c;
        off += (long)c * META_STRIDE(meta, rank, d);
    }
    w->off = off;
}

void walker_next(walker *w, int rank, __global const long *meta, int track)
{
    if (!track) {
        w->off += 1;
        return;
    }
    int d = rank - 1;
    w->coord[d] += 1;
    w->off += META_STRIDE(meta, rank, d);
    while (d > 0 && w->coord[d] == META_SHAPE(meta, d)) {
        w->off -= META_SHAPE(meta, d) * META_STRIDE(meta, rank, d);
        w->coord[d] = 0;
        --d;
        w->coord[d] += 1;
        w->off += META_STRIDE(meta, rank, d);
    }
}

#endif /* CLNZ_ELEMENT_CL */
