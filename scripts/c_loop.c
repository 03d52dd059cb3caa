/* c_loop.c: the plain single-threaded C loop scripts/bench holds clnz to
 * (issue 19: two cores must be twice this). Branch-free, as a careful C
 * programmer writes it: every element writes its entry at the current end
 * and the end moves by one when it is selected, so the loop never
 * mispredicts at any density. Built with the benchmark, same compiler and
 * flags, in the same run.
 *
 * Same output as the clnz call beside it: int64 entries, C order, reused
 * (like the device-resident call's output; it holds one entry more than
 * the count, for the branch-free store past the last), rows layout (rank coordinates
 * per entry) or flat (one index per entry). */
#include "c_loop.h"

#include <stddef.h>

/* x != 0 as clnz's nonzero predicate reads it (-0.0 is zero, NaN is not) */
static inline int selected(const void *x, size_t i, clnz_dtype dt)
{
    return dt == CLNZ_F32 ? ((const float *)x)[i] != 0.0f : ((const uint8_t *)x)[i] != 0;
}

/* The loops here are written out (two flat ones, the 2-D pairs beside
 * rows_of_rank's R = 2) on purpose: folding them into one inlined loop gave
 * the same code by eye but, in the linked benchmark, a u8 4096x4096 flat
 * loop of 10.6 ms against 7.9 ms (code placement), and the loop clnz is
 * held to must be the fastest plain one. Measure before merging them. */
static int64_t flat_loop(const void *x, size_t n, clnz_dtype dt, int64_t *out)
{
    int64_t k = 0;
    if (dt == CLNZ_F32) { /* each dtype its own loop: the compare is hoisted */
        for (size_t i = 0; i < n; ++i) {
            out[k] = (int64_t)i;
            k += selected(x, i, CLNZ_F32);
        }
    } else {
        for (size_t i = 0; i < n; ++i) {
            out[k] = (int64_t)i;
            k += selected(x, i, CLNZ_U8);
        }
    }
    return k;
}

/* Rows of a 2-D input, (r, c) pairs: the image case, written out. */
static int64_t pairs_loop(const void *x, size_t rows, size_t cols, clnz_dtype dt, int64_t *out)
{
    int64_t k = 0;
    size_t i = 0;
    for (size_t r = 0; r < rows; ++r)
        for (size_t c = 0; c < cols; ++c, ++i) {
            out[2 * k] = (int64_t)r;
            out[2 * k + 1] = (int64_t)c;
            k += selected(x, i, dt);
        }
    return k;
}

/* Rows of rank R: the leading coordinates are kept in `lead` (an odometer
 * moved once per row) and copied in front of the last one. Inlined for
 * each R the benchmark has, so that the copy is R - 1 plain stores. */
static inline __attribute__((always_inline)) int64_t
rows_of_rank(const void *x, const int R, const int64_t *shape, size_t rows, size_t cols,
             clnz_dtype dt, int64_t *restrict out)
{
    int64_t lead[CLNZ_MAX_RANK] = {0}, k = 0;
    size_t i = 0;
    for (size_t r = 0; r < rows; ++r) {
        for (size_t c = 0; c < cols; ++c, ++i) {
            int64_t *e = out + k * R;
            for (int d = 0; d < R - 1; ++d)
                e[d] = lead[d];
            e[R - 1] = (int64_t)c;
            k += selected(x, i, dt);
        }
        for (int d = R - 2; d >= 0 && ++lead[d] == shape[d]; --d)
            lead[d] = 0;
    }
    return k;
}

static int64_t rows_loop(const void *x, int rank, const int64_t *shape, clnz_dtype dt,
                         int64_t *out)
{
    size_t cols = (size_t)shape[rank - 1], rows = 1;
    for (int d = 0; d < rank - 1; ++d)
        rows *= (size_t)shape[d];
    switch (rank) {
    case 2: return pairs_loop(x, rows, cols, dt, out);
    case 3: return rows_of_rank(x, 3, shape, rows, cols, dt, out);
    case 4: return rows_of_rank(x, 4, shape, rows, cols, dt, out);
    default: return rows_of_rank(x, rank, shape, rows, cols, dt, out);
    }
}

int c_loop_serves(clnz_dtype dt, int rank)
{
    return (dt == CLNZ_F32 || dt == CLNZ_U8) && rank >= 1 && rank <= CLNZ_MAX_RANK;
}

int64_t c_loop_nonzero(const void *x, int rank, const int64_t *shape, clnz_dtype dt, int flat,
                       int64_t *out)
{
    size_t n = 1;
    for (int d = 0; d < rank; ++d)
        n *= (size_t)shape[d];
    if (!n)
        return 0;
    return flat || rank == 1 ? flat_loop(x, n, dt, out) : rows_loop(x, rank, shape, dt, out);
}
