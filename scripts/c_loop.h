/* c_loop.h: the single-threaded C loop of the benchmark (see c_loop.c). */
#ifndef CLNZ_C_LOOP_H
#define CLNZ_C_LOOP_H
#include "clnz.h"

#include <stdint.h>

/* 1 for the dtypes and ranks the loop is written for (f32 and u8). */
int c_loop_serves(clnz_dtype dt, int rank);

/* Writes the coordinates (rows, or flat indexes when flat) of x's nonzero
 * elements to out, which holds one entry more than the count; returns it. */
int64_t c_loop_nonzero(const void *x, int rank, const int64_t *shape, clnz_dtype dt, int flat,
                       int64_t *out);
#endif
