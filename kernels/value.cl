/* value.cl: the values select.cl and where.cl move. They are copied, never
 * computed with, so they travel as bit patterns of VALUE_BYTES bytes: one
 * build per element size serves every dtype of that size. */
#ifndef CLNZ_VALUE_CL
#define CLNZ_VALUE_CL

#ifndef VALUE_BYTES
#define VALUE_BYTES 4
#endif
#if VALUE_BYTES == 1
typedef uchar value_t;
#elif VALUE_BYTES == 2
typedef ushort value_t;
#elif VALUE_BYTES == 4
typedef uint value_t;
#elif VALUE_BYTES == 8
typedef ulong value_t;
#else
#error "VALUE_BYTES must be 1, 2, 4 or 8"
#endif

#endif /* CLNZ_VALUE_CL */
