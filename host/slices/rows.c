/* rows.c: the results of an ordered operation on a sliced input: the
 * selected elements' global coordinates, slice by slice, merged into C
 * order of the whole array (slices cut in memory order interleave), then
 * shaped as the caller asked. */
#include "slices/slices.h"
#include "core/result_mem.h"
#include "core/transfer.h"
#include "ops/ops.h"

#include <stdlib.h>
#include <string.h>

clnz_status accum_add(clnz_context *ctx, accum *acc, const void *src, size_t bytes)
{
    if (bytes == 0)
        return CLNZ_SUCCESS;
    if (bytes > acc->cap - acc->used) {
        size_t cap = acc->cap ? acc->cap : 4096;
        while (cap - acc->used < bytes)
            cap *= 2;
        char *p = realloc(acc->data, cap);
        if (!p)
            return ctx_fail(ctx, CLNZ_ERROR_OUT_OF_HOST_MEMORY,
                            "cannot grow the result to %zu bytes", cap);
        acc->data = p, acc->cap = cap;
    }
    memcpy(acc->data + acc->used, src, bytes);
    acc->used += bytes;
    return CLNZ_SUCCESS;
}

/* ---- collecting the slices' rows ---- */
typedef struct {
    const clnz_predicate *pred;
    accum *rows;
    size_t *runs; /* where each slice's rows start in rows, in entries */
    size_t n_runs, cap_runs;
} collect;

static clnz_status collect_slice(clnz_context *ctx, void *user, const view *s, const box *at)
{
    collect *c = user;
    clnz_tensor t = view_tensor(&s[0]);
    tensor_info ti;
    clnz_nonzero_options o;
    clnz_nonzero_options_init(&o);
    clnz_result r;
    clnz_status st = tensor_check(ctx, &t, &ti);
    if (!st)
        st = nonzero_direct(ctx, &ti, s[0].data, c->pred, &o, &r);
    if (st)
        return st;
    int rank = s[0].rank;
    int64_t *e = r.indices;
    for (int64_t i = 0; i < r.count * rank; ++i)
        e[i] += at->origin[i % rank];
    if (c->n_runs == c->cap_runs) {
        size_t cap = c->cap_runs ? 2 * c->cap_runs : 64;
        size_t *p = realloc(c->runs, cap * sizeof *p);
        if (!p) {
            clnz_result_free(&r);
            return ctx_fail(ctx, CLNZ_ERROR_OUT_OF_HOST_MEMORY, "out of host memory");
        }
        c->runs = p, c->cap_runs = cap;
    }
    c->runs[c->n_runs++] = c->rows->used / sizeof(int64_t) / (size_t)rank;
    st = accum_add(ctx, c->rows, e, (size_t)r.count * (size_t)rank * sizeof *e);
    clnz_result_free(&r);
    return st;
}

/* ---- merging them ---- */
typedef struct {
    uint64_t key; /* the flat C-order index of the run's current row */
    size_t at, end;
} run_head;

/* The C-order strides of shape, in elements, in 64 bits: an int here
 * wrapped once a stride reached 2^31 ((2, 2^31) u8 sliced: flat indices
 * negative, runs merged out of order). */
static void c_strides(const int64_t *shape, int rank, int64_t *cstr)
{
    int64_t s = 1;
    for (int d = rank - 1; d >= 0; --d) {
        cstr[d] = s;
        s *= shape[d];
    }
}

static uint64_t flat_key(const int64_t *row, int rank, const int64_t *cstr)
{
    uint64_t k = 0;
    for (int d = 0; d < rank; ++d)
        k += (uint64_t)row[d] * (uint64_t)cstr[d];
    return k;
}

static void sift_down(run_head *h, size_t n, size_t i)
{
    for (;;) {
        size_t l = 2 * i + 1, m = i;
        if (l < n && h[l].key < h[m].key)
            m = l;
        if (l + 1 < n && h[l + 1].key < h[m].key)
            m = l + 1;
        if (m == i)
            return;
        run_head t = h[i];
        h[i] = h[m], h[m] = t;
        i = m;
    }
}

/* The runs (each in C order) merged by flat index, a heap of run heads:
 * O(z log runs). Skipped when the runs already follow each other. */
static clnz_status merge_runs(clnz_context *ctx, const view *v, collect *c)
{
    int rank = v->rank;
    size_t z = c->rows->used / sizeof(int64_t) / (size_t)rank;
    const int64_t *rows = (const int64_t *)c->rows->data;
    int64_t cstr[CLNZ_MAX_RANK];
    c_strides(v->shape, rank, cstr);
    run_head *heap = malloc((c->n_runs ? c->n_runs : 1) * sizeof *heap);
    if (!heap)
        return ctx_fail(ctx, CLNZ_ERROR_OUT_OF_HOST_MEMORY, "out of host memory");
    size_t n = 0;
    int sorted = 1;
    uint64_t last_key = 0;
    for (size_t r = 0; r < c->n_runs; ++r) {
        size_t end = r + 1 < c->n_runs ? c->runs[r + 1] : z;
        if (c->runs[r] == end)
            continue;
        run_head h = {flat_key(rows + c->runs[r] * (size_t)rank, rank, cstr), c->runs[r], end};
        if (n && h.key < last_key)
            sorted = 0;
        last_key = flat_key(rows + (end - 1) * (size_t)rank, rank, cstr);
        heap[n++] = h;
    }
    if (sorted) {
        free(heap);
        return CLNZ_SUCCESS;
    }
    int64_t *out = alloc_result(c->rows->used ? c->rows->used : 1);
    if (!out) {
        free(heap);
        return ctx_fail(ctx, CLNZ_ERROR_OUT_OF_HOST_MEMORY, "cannot allocate the result");
    }
    for (size_t i = n / 2; i-- > 0;)
        sift_down(heap, n, i);
    for (size_t k = 0; n; ++k) {
        memcpy(out + k * (size_t)rank, rows + heap[0].at * (size_t)rank,
               (size_t)rank * sizeof *out);
        if (++heap[0].at == heap[0].end)
            heap[0] = heap[--n];
        else
            heap[0].key = flat_key(rows + heap[0].at * (size_t)rank, rank, cstr);
        sift_down(heap, n, 0);
    }
    free(heap);
    free(c->rows->data);
    c->rows->data = (char *)out;
    c->rows->cap = c->rows->used;
    return CLNZ_SUCCESS;
}

clnz_status sliced_rows(clnz_context *ctx, const view *v, const clnz_predicate *pred,
                        uint64_t budget, accum *rows)
{
    collect c = {pred, rows, NULL, 0, 0};
    slicing s = {v, 1, budget, 0, 0};
    clnz_status st = slices_each(ctx, &s, collect_slice, &c);
    if (!st)
        st = merge_runs(ctx, v, &c);
    free(c.runs);
    return st;
}

/* The rows of global coordinates in the layout, order, width, index type
 * and static size the caller asked for. */
clnz_status rows_to_result(clnz_context *ctx, const tensor_info *t, const accum *rows,
                                  const clnz_nonzero_options *o, int width, clnz_result *res)
{
    int rank = t->rank;
    uint64_t z = rows->used / sizeof(int64_t) / (uint64_t)rank;
    uint64_t entries = o->has_size ? (uint64_t)o->size : z;
    int per_entry = o->layout == CLNZ_LAYOUT_FLAT ? 1 : width;
    size_t ib = index_bytes(o->index_type);
    if (per_entry && entries > SIZE_MAX / ib / (uint64_t)per_entry)
        return ctx_fail(ctx, CLNZ_ERROR_TOO_LARGE, "the result does not fit the address space");
    char *out = alloc_result((size_t)(entries * (uint64_t)per_entry * ib));
    if (!out)
        return ctx_fail(ctx, CLNZ_ERROR_OUT_OF_HOST_MEMORY, "cannot allocate the result");
    int64_t cstr[CLNZ_MAX_RANK];
    c_strides(t->shape, rank, cstr);
    for (uint64_t k = 0; k < entries; ++k) {
        const int64_t *row = k < z ? (const int64_t *)rows->data + k * (uint64_t)rank : NULL;
        for (int j = 0; j < per_entry; ++j) {
            int64_t v = o->fill;
            if (k < z && o->layout == CLNZ_LAYOUT_FLAT) {
                v = 0;
                for (int d = 0; d < rank; ++d)
                    v += row[d] * cstr[d];
            } else if (k < z) {
                int d = rank - width + (o->order == CLNZ_ORDER_XY ? width - 1 - j : j);
                v = d < 0 ? 0 : row[d];
            }
            uint64_t pos = o->layout == CLNZ_LAYOUT_COLUMNS ? (uint64_t)j * entries + k
                                                            : k * (uint64_t)per_entry + j;
            if (ib == 8)
                ((int64_t *)out)[pos] = v;
            else
                ((uint32_t *)out)[pos] = (uint32_t)v;
        }
    }
    res->indices = out;
    res->count = (int64_t)z;
    res->index_type = o->index_type;
    res->ndim = o->layout == CLNZ_LAYOUT_FLAT ? 1 : 2;
    res->shape[0] = o->layout == CLNZ_LAYOUT_COLUMNS ? width : (int64_t)entries;
    res->shape[1] = o->layout == CLNZ_LAYOUT_ROWS ? width : (int64_t)entries;
    return CLNZ_SUCCESS;
}
