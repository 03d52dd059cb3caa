/* relayout.c: C-order copies of badly strided inputs (see relayout.h).
 *
 * Why: the kernels read their input in C order of the logical array. For a
 * transposed or Fortran-order array that is one cache line, and soon one
 * page, an element: argwhere of a (4096, 4096) f32 transpose took 241 ms
 * on PoCL against 9.5 ms in C order, and select 158 ms (numpy's own
 * x[x != 0] 172). A tiled copy reads and writes whole cache lines, and the
 * compacting pass then runs at its C-order speed: 31 and 35 ms in all.
 * Only on a CPU device: a GPU reads the strided input on its own
 * bandwidth, faster than the host could copy it. */
#include "core/relayout.h"
#include "core/result_mem.h"

#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Tile edge in elements: a tile of 8-byte elements is 32 KiB, an L1 cache. */
#define TILE 64
/* A cache line's bytes, or more: steps of this size read a line an element. */
#define LINE 64
/* Copies this large are split between threads, at most this many. */
#define THREAD_MIN_BYTES ((uint64_t)4 << 20)
#define COPY_THREADS 4

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

/* One (q, p) tile at src/dst: rows along q (memory-inner in the input),
 * elements along p (contiguous in the copy). Elements move by memcpy of
 * their size, which compiles to one load and one store: numpy arrays need
 * not be aligned to their element (frombuffer at an offset), and a typed
 * access there is undefined (UBSan reported it, review 39). */
#define TILE_COPY(S)                                                                           \
    for (int64_t i = 0; i < nq; ++i)                                                           \
        for (int64_t j = 0; j < np; ++j)                                                       \
            memcpy(dst + (i * dq + j) * S, src + (i * sq + j * sp) * S, S);

static void copy_tile(const char *src, char *dst, size_t elem, int64_t nq, int64_t np,
                      int64_t sq, int64_t sp, int64_t dq)
{
    switch (elem) {
    case 1:
        TILE_COPY(1)
        break;
    case 2:
        TILE_COPY(2)
        break;
    case 4:
        TILE_COPY(4)
        break;
    default:
        TILE_COPY(8)
        break;
    }
}

/* The copy's work: the other dimensions (an odometer around the tiles),
 * then rows of tiles along q, each a unit; threads take runs of units. */
typedef struct {
    int rank; /* of the odometer */
    int64_t shape[CLNZ_MAX_RANK], src[CLNZ_MAX_RANK], dst[CLNZ_MAX_RANK];
    const char *in;
    char *out;
    size_t elem;
    int64_t nq, sq, dq, np, sp;
    uint64_t rows; /* rows of tiles per odometer step */
} copy_plan;

typedef struct {
    const copy_plan *p;
    uint64_t from, to; /* units */
} copy_part;

static void copy_units(const copy_plan *p, uint64_t from, uint64_t to)
{
    int64_t e = (int64_t)p->elem;
    for (uint64_t u = from; u < to;) {
        uint64_t step = u / p->rows, rest = step;
        int64_t so = 0, dof = 0;
        for (int d = p->rank - 1; d >= 0; --d) { /* the step's place: a division a step */
            int64_t k = (int64_t)(rest % (uint64_t)p->shape[d]);
            rest /= (uint64_t)p->shape[d];
            so += k * p->src[d], dof += k * p->dst[d];
        }
        for (; u < to && u / p->rows == step; ++u) {
            int64_t i = (int64_t)(u % p->rows) * TILE, ni = p->nq - i < TILE ? p->nq - i : TILE;
            for (int64_t j = 0; j < p->np; j += TILE)
                copy_tile(p->in + (so + i * p->sq + j * p->sp) * e,
                          p->out + (dof + i * p->dq + j) * e, p->elem, ni,
                          p->np - j < TILE ? p->np - j : TILE, p->sq, p->sp, p->dq);
        }
    }
}

static void *copy_thread(void *arg)
{
    copy_part *c = arg;
    copy_units(c->p, c->from, c->to);
    return NULL;
}

/* The units split between this thread and up to COPY_THREADS - 1 more, one
 * a core: the device's own threads wait for the copy anyway, and one core
 * copies at 2-3 GB/s here. A thread that cannot start leaves its part to
 * this one. */
static void copy_all(const copy_plan *p, uint64_t units, uint64_t bytes)
{
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    uint64_t n = bytes < THREAD_MIN_BYTES || cores < 2 ? 1 : (uint64_t)cores;
    n = n > COPY_THREADS ? COPY_THREADS : n > units ? units : n;
    pthread_t th[COPY_THREADS];
    copy_part part[COPY_THREADS];
    int started[COPY_THREADS] = {0};
    for (uint64_t k = 1; k < n; ++k) {
        part[k] = (copy_part){p, units * k / n, units * (k + 1) / n};
        started[k] = pthread_create(&th[k], NULL, copy_thread, &part[k]) == 0;
    }
    copy_units(p, 0, units / n);
    for (uint64_t k = 1; k < n; ++k) {
        if (started[k])
            pthread_join(th[k], NULL);
        else
            copy_units(p, part[k].from, part[k].to);
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
    c_order_strides(t->rank, t->shape, c->strides);
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
    copy_plan w = {0};
    uint64_t steps = 1;
    for (int d = 0; d < t->rank; ++d)
        if (d != p && d != q && t->shape[d] > 1) {
            w.shape[w.rank] = t->shape[d];
            w.src[w.rank] = t->strides[d];
            w.dst[w.rank++] = c->strides[d];
            steps *= (uint64_t)t->shape[d];
        }
    w.in = data, w.out = out, w.elem = t->elem;
    w.nq = q < 0 ? 1 : t->shape[q], w.sq = q < 0 ? 0 : t->strides[q];
    w.dq = q < 0 ? 0 : c->strides[q], w.np = t->shape[p], w.sp = t->strides[p];
    w.rows = ((uint64_t)w.nq + TILE - 1) / TILE;
    copy_all(&w, steps * w.rows, t->n * t->elem);
    return out;
}
