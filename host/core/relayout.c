/* relayout.c: C-order copies of badly strided inputs (see relayout.h).
 *
 * Why: the kernels read their input in C order of the logical array. For a
 * transposed or Fortran-order array that is one cache line, and soon one
 * page, an element: nonzero of a (4096, 4096) f32 transpose took 215 ms on
 * PoCL against 7.2 ms in C order, and select 164 ms (numpy's own x[x != 0]
 * took 140-172 ms in the same runs). A tiled copy reads and writes whole cache lines, so the
 * compacting pass then runs at its C-order speed. Only on a CPU device: a
 * GPU reads the strided input on its own bandwidth, faster than the host
 * could copy it. */
#include "core/relayout.h"
#include "core/result_mem.h"

#include <stdint.h>
#include <stdlib.h>

/* Tile edge in elements: a tile of 8-byte elements is 32 KiB, an L1 cache. */
#define TILE 64
/* A cache line's bytes, or more: steps of this size read a line an element. */
#define LINE 64

int relayout_pays(const clnz_context *ctx, const tensor_info *t)
{
    if (!ctx->is_cpu || t->contiguous || t->n < RELAYOUT_MIN_ELEMS)
        return 0;
    /* no more elements than the memory they lie in (broadcast or
     * overlapping strides: a sliding window's copy was 90 times its array),
     * and a copy that fits one allocation */
    if (t->n > (uint64_t)(t->max_off - t->min_off) + 1 || t->n > ctx->max_alloc / t->elem)
        return 0;
    int inner = -1; /* the last dimension that is not 1 */
    for (int d = 0; d < t->rank; ++d)
        if (t->shape[d] > 1)
            inner = d;
    if (inner < 0 || (uint64_t)llabs(t->strides[inner]) * t->elem < LINE)
        return 0;
    /* and another dimension runs along cache lines, for the tiles to reuse
     * (a 1-D array read every 16th element gains nothing from a copy) */
    for (int d = 0; d < inner; ++d)
        if (t->shape[d] > 1 && (uint64_t)llabs(t->strides[d]) * t->elem < LINE)
            return 1;
    return 0;
}

typedef struct {
    int rank;
    int64_t shape[CLNZ_MAX_RANK], src[CLNZ_MAX_RANK], dst[CLNZ_MAX_RANK];
} plan;

/* One (q, p) tile at src/dst: rows along q (memory-inner in the input),
 * elements along p (contiguous in the copy). */
#define TILE_COPY(T)                                                                           \
    for (int64_t i = 0; i < nq; ++i)                                                           \
        for (int64_t j = 0; j < np; ++j)                                                       \
            ((T *)dst)[i * dq + j] = ((const T *)src)[i * sq + j * sp];

static void copy_tile(const char *src, char *dst, size_t elem, int64_t nq, int64_t np,
                      int64_t sq, int64_t sp, int64_t dq)
{
    switch (elem) {
    case 1:
        TILE_COPY(uint8_t)
        break;
    case 2:
        TILE_COPY(uint16_t)
        break;
    case 4:
        TILE_COPY(uint32_t)
        break;
    default:
        TILE_COPY(uint64_t)
        break;
    }
}

void *relayout_copy(const tensor_info *t, const void *data, tensor_info *c)
{
    /* result memory: huge pages where the system has them (fewer TLB misses
     * on the tiles' writes), and large blocks kept for the next call */
    char *out = t->n <= SIZE_MAX / t->elem ? alloc_result(t->n * t->elem) : NULL;
    if (!out)
        return NULL;
    *c = *t;
    int64_t cstr = 1;
    for (int d = t->rank - 1; d >= 0; --d) {
        c->strides[d] = cstr;
        cstr *= t->shape[d];
    }
    c->contiguous = 1;
    c->min_off = 0;
    c->max_off = (int64_t)t->n - 1;
    /* p: the copy's inner dimension (C order's last that is not 1); q: the
     * input's (the smallest |stride| of the others) */
    int p = t->rank - 1, q = -1;
    while (p > 0 && t->shape[p] == 1)
        --p;
    for (int d = 0; d < t->rank; ++d)
        if (d != p && t->shape[d] > 1 && (q < 0 || llabs(t->strides[d]) < llabs(t->strides[q])))
            q = d;
    /* the other dimensions, walked by an odometer around the tiles */
    plan o = {0};
    for (int d = 0; d < t->rank; ++d)
        if (d != p && d != q && t->shape[d] > 1) {
            o.shape[o.rank] = t->shape[d];
            o.src[o.rank] = t->strides[d];
            o.dst[o.rank++] = c->strides[d];
        }
    int64_t nq = q < 0 ? 1 : t->shape[q], sq = q < 0 ? 0 : t->strides[q];
    int64_t dq = q < 0 ? 0 : c->strides[q], np = t->shape[p], sp = t->strides[p];
    int64_t idx[CLNZ_MAX_RANK] = {0}, so = 0, dof = 0;
    const char *base = data;
    size_t e = t->elem;
    for (;;) {
        for (int64_t i = 0; i < nq; i += TILE)
            for (int64_t j = 0; j < np; j += TILE)
                copy_tile(base + (so + i * sq + j * sp) * (int64_t)e,
                          out + (dof + i * dq + j) * (int64_t)e, e,
                          nq - i < TILE ? nq - i : TILE, np - j < TILE ? np - j : TILE, sq, sp,
                          dq);
        int d = o.rank - 1;
        for (; d >= 0; --d) {
            so += o.src[d], dof += o.dst[d];
            if (++idx[d] < o.shape[d])
                break;
            so -= o.src[d] * o.shape[d], dof -= o.dst[d] * o.shape[d];
            idx[d] = 0;
        }
        if (d < 0)
            return out;
    }
}
