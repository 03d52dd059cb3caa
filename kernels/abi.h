/* abi.h: the numbers the host (C) and the kernels (OpenCL C) must agree on.
 *
 * Included by the kernel files and by the host code (host/core/abi.c ties
 * each one to the public enum of include/clnz.h with a static assertion),
 * so no constant is mirrored by hand. Plain #defines only: this file is
 * both C and OpenCL C. */
#ifndef CLNZ_ABI_H
#define CLNZ_ABI_H

/* enum clnz_dtype */
#define CLNZ_DT_BOOL 0
#define CLNZ_DT_U8 1
#define CLNZ_DT_I8 2
#define CLNZ_DT_U16 3
#define CLNZ_DT_I16 4
#define CLNZ_DT_U32 5
#define CLNZ_DT_I32 6
#define CLNZ_DT_U64 7
#define CLNZ_DT_I64 8
#define CLNZ_DT_F16 9
#define CLNZ_DT_F32 10
#define CLNZ_DT_F64 11

/* CLNZ_MAX_RANK: the largest rank (the kernels' coordinate arrays) */
#define ABI_MAX_RANK 32

/* enum clnz_layout */
#define ABI_LAYOUT_ROWS 0
#define ABI_LAYOUT_COLUMNS 1
#define ABI_LAYOUT_FLAT 2

/* How where()'s operands reach output element i (where.cl): through their
 * strides, at offset i (C-contiguous with the output's shape), or always at
 * offset 0 (one value). */
#define ABI_MODE_STRIDED 0
#define ABI_MODE_CONTIGUOUS 1
#define ABI_MODE_SCALAR 2

/* What a compacting pass writes for each selected element (lookback.cl,
 * stream.cl): nothing (count only), its coordinates, or x's value there. */
#define ABI_EMIT_COUNT 0
#define ABI_EMIT_COORDS 1
#define ABI_EMIT_VALUES 2

/* A look-back tile's published state (lookback.cl): nothing yet, its own
 * count (aggregate), or the count of every element up to its end
 * (inclusive prefix). */
#define ABI_TILE_INVALID 0
#define ABI_TILE_AGGREGATE 1
#define ABI_TILE_PREFIX 2

/* How a look-back tile writes its entries (lookback.cl's LB_SCATTER):
 * staged in local memory then stored contiguously, each work-item its own
 * run's directly, or directly only in a tile of at most a work-group of
 * entries. */
#define ABI_LB_SCATTER_STAGED 0
#define ABI_LB_SCATTER_DIRECT 1
#define ABI_LB_SCATTER_HYBRID 2

/* The items a count_items work-item counts (count_axes.cl): neighbours
 * share its loads, 16 of them one vector. */
#define ABI_COUNT_ITEMS_PER_WI 16

#endif /* CLNZ_ABI_H */
