/* dtype.c: the one table of element types (see dtype.h), the public
 * queries on it, and the static checks that tie the public enums to the
 * numbers the kernels use (kernels/abi.h). */
#include "core/dtype.h"

#include "abi.h"

static const dtype_info table[CLNZ_DTYPE_COUNT] = {
    [CLNZ_BOOL] = {"bool", "|b1", 1, 'b', 0, 1, 0, 0},
    [CLNZ_U8] = {"u8", "|u1", 1, 'u', 0, UINT8_MAX, 0, 0},
    [CLNZ_I8] = {"i8", "|i1", 1, 'i', INT8_MIN, INT8_MAX, 0, 0},
    [CLNZ_U16] = {"u16", "<u2", 2, 'u', 0, UINT16_MAX, 0, 0},
    [CLNZ_I16] = {"i16", "<i2", 2, 'i', INT16_MIN, INT16_MAX, 0, 0},
    [CLNZ_U32] = {"u32", "<u4", 4, 'u', 0, UINT32_MAX, 0, 0},
    [CLNZ_I32] = {"i32", "<i4", 4, 'i', INT32_MIN, INT32_MAX, 0, 0},
    [CLNZ_U64] = {"u64", "<u8", 8, 'u', 0, UINT64_MAX, 0, 0},
    [CLNZ_I64] = {"i64", "<i8", 8, 'i', INT64_MIN, INT64_MAX, 0, 0},
    [CLNZ_F16] = {"f16", "<f2", 2, 'f', 0, 0, 0x7c00, 0x7fff},
    [CLNZ_F32] = {"f32", "<f4", 4, 'f', 0, 0, 0x7f800000, 0x7fffffff},
    [CLNZ_F64] = {"f64", "<f8", 8, 'f', 0, 0, 0x7ff0000000000000ULL, 0x7fffffffffffffffULL},
};

const dtype_info *dtype_of(clnz_dtype d)
{
    return (unsigned)d < CLNZ_DTYPE_COUNT ? &table[d] : NULL;
}

size_t clnz_dtype_size(clnz_dtype d) { return dtype_of(d) ? table[d].size : 0; }
const char *clnz_dtype_name(clnz_dtype d) { return dtype_of(d) ? table[d].name : NULL; }
const char *clnz_dtype_numpy(clnz_dtype d) { return dtype_of(d) ? table[d].numpy : NULL; }

/* The public enums are the kernels' numbers: a change on either side stops
 * the build here. */
_Static_assert(CLNZ_BOOL == CLNZ_DT_BOOL && CLNZ_U8 == CLNZ_DT_U8 && CLNZ_I8 == CLNZ_DT_I8 &&
                   CLNZ_U16 == CLNZ_DT_U16 && CLNZ_I16 == CLNZ_DT_I16 &&
                   CLNZ_U32 == CLNZ_DT_U32 && CLNZ_I32 == CLNZ_DT_I32 &&
                   CLNZ_U64 == CLNZ_DT_U64 && CLNZ_I64 == CLNZ_DT_I64 &&
                   CLNZ_F16 == CLNZ_DT_F16 && CLNZ_F32 == CLNZ_DT_F32 && CLNZ_F64 == CLNZ_DT_F64,
               "clnz_dtype and kernels/abi.h disagree");
_Static_assert(CLNZ_LAYOUT_ROWS == ABI_LAYOUT_ROWS && CLNZ_LAYOUT_COLUMNS == ABI_LAYOUT_COLUMNS &&
                   CLNZ_LAYOUT_FLAT == ABI_LAYOUT_FLAT,
               "clnz_layout and kernels/abi.h disagree");
_Static_assert(CLNZ_MAX_RANK == ABI_MAX_RANK, "CLNZ_MAX_RANK and kernels/abi.h disagree");
