/* relayout.h: C-order host copies of inputs whose C order walks memory
 * badly (relayout.c), for the blocking calls on a CPU device. */
#ifndef CLNZ_CORE_RELAYOUT_H
#define CLNZ_CORE_RELAYOUT_H

#include "core/context.h"
#include "core/tensor.h"

/* Below this many elements a strided read costs less than a copy. */
#define RELAYOUT_MIN_ELEMS 4096

/* 1 when a C-order copy of t pays before a compacting pass on ctx's
 * device: a CPU device, at least RELAYOUT_MIN_ELEMS elements, C order
 * jumping a cache line or more from one element to the next while another
 * dimension steps within one (a transposed or Fortran-order array), no
 * more elements than the memory they lie in (no broadcast or overlapping
 * strides: the copy would be larger than the array), and a copy within
 * one device allocation. */
int relayout_pays(const clnz_context *ctx, const tensor_info *t);

/* A C-order copy of t's elements (t's strides over data, logical element
 * 0), copied in tiles so that reads and writes both stay in cache; *c
 * describes it (t in C order). NULL when out of memory; give it back with
 * free_result (core/result_mem.h). */
void *relayout_copy(const tensor_info *t, const void *data, tensor_info *c);

#endif
