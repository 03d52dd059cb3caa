/* keys.c: the results of an ordered operation on a sliced input. Each
 * slice's selected elements come back from the device as flat indices of
 * the slice and are kept as keys: flat C-order indices of the whole array,
 * 8 bytes an entry whatever the rank. The slices' runs are merged into C
 * order where the cut interleaves them, and only then does the result take
 * the caller's shape (layout, order, width, index type, static size), in
 * the keys' own memory where it is no larger. Gathering full-rank int64
 * rows instead cost 8 x rank bytes an entry, doubled while growing: a
 * sliced select of a (512, 512, 256) u8 array peaked 1.7 GiB above its
 * unsliced 141 MiB. */
#include "slices/slices.h"
#include "core/result_mem.h"
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

void unravel_init(unravel *u, int rank, const int64_t *shape)
{
    u->rank = rank;
    memcpy(u->shape, shape, sizeof(int64_t) * (size_t)rank);
    memset(u->idx, 0, sizeof u->idx);
    u->at = 0;
}

/* The step from the last key is added to the last coordinate and carried
 * outwards: a division only where a dimension is crossed, so ascending keys
 * cost about an addition each. */
const int64_t *unravel_to(unravel *u, uint64_t key)
{
    int d = u->rank - 1;
    if (d < 0)
        return u->idx;
    uint64_t i = (uint64_t)u->idx[d] + (key - u->at);
    u->at = key;
    for (; d > 0 && i >= (uint64_t)u->shape[d]; --d) {
        uint64_t n = (uint64_t)u->shape[d];
        u->idx[d] = (int64_t)(i % n);
        i = (uint64_t)u->idx[d - 1] + i / n;
    }
    u->idx[d] = (int64_t)i;
    return u->idx;
}

/* ---- collecting the slices' keys ---- */

/* 1 when the box is one stretch of the whole array's C order: outer
 * dimensions of extent 1, then one cut, then whole ones. A slice's own
 * flat indices are then the whole array's, less the box's first. */
static int box_is_contiguous(const box *b, int rank, const int64_t *shape)
{
    int d = rank - 1;
    while (d >= 0 && b->shape[d] == shape[d])
        --d;
    for (--d; d >= 0; --d)
        if (b->shape[d] != 1)
            return 0;
    return 1;
}

/* A slice's flat indices, in place, as keys of the whole array. */
static void slice_keys(const key_collect *c, int rank, const box *at, int64_t *flat, int64_t n)
{
    uint64_t base = 0;
    for (int d = 0; d < rank; ++d)
        base += (uint64_t)at->origin[d] * (uint64_t)c->cstr[d];
    if (box_is_contiguous(at, rank, c->shape)) {
        for (int64_t i = 0; i < n; ++i)
            flat[i] = (int64_t)(base + (uint64_t)flat[i]);
        return;
    }
    unravel u;
    unravel_init(&u, rank, at->shape);
    for (int64_t i = 0; i < n; ++i) {
        const int64_t *idx = unravel_to(&u, (uint64_t)flat[i]);
        uint64_t k = base;
        for (int d = 0; d < rank; ++d)
            k += (uint64_t)idx[d] * (uint64_t)c->cstr[d];
        flat[i] = (int64_t)k;
    }
}

void key_collect_init(key_collect *c, const view *v, const clnz_predicate *pred,
                      uint64_t limit, key_runs *kr)
{
    memset(kr, 0, sizeof *kr);
    memset(c, 0, sizeof *c);
    c->pred = pred, c->shape = v->shape, c->kr = kr, c->limit = limit;
    c->in_order = view_in_c_order(v);
    c_order_strides(v->rank, v->shape, c->cstr);
}

clnz_status key_collect_slice(clnz_context *ctx, key_collect *c, const view *s, const box *at)
{
    clnz_tensor t = view_tensor(&s[0]);
    tensor_info ti;
    clnz_nonzero_options o;
    clnz_nonzero_options_init(&o);
    o.layout = CLNZ_LAYOUT_FLAT; /* 8 bytes an entry on the device too */
    clnz_result r;
    clnz_status st = tensor_check(ctx, &t, &ti);
    if (!st)
        st = nonzero_direct(ctx, &ti, s[0].data, c->pred, &o, &r);
    if (st)
        return st;
    int64_t *k = r.indices;
    key_runs *kr = c->kr;
    size_t before = kr->keys.used / sizeof *k;
    uint64_t room = c->in_order ? (before < c->limit ? c->limit - before : 0) : c->limit;
    uint64_t keep = (uint64_t)r.count < room ? (uint64_t)r.count : room;
    kr->count += (uint64_t)r.count;
    slice_keys(c, s[0].rank, at, k, (int64_t)keep);
    if (keep && before && (uint64_t)k[0] < ((const uint64_t *)kr->keys.data)[before - 1])
        kr->interleaved = 1;
    if (kr->n_runs == c->cap_runs) {
        size_t cap = c->cap_runs ? 2 * c->cap_runs : 64;
        size_t *p = realloc(kr->runs, cap * sizeof *p);
        if (!p) {
            clnz_result_free(&r);
            return ctx_fail(ctx, CLNZ_ERROR_OUT_OF_HOST_MEMORY, "out of host memory");
        }
        kr->runs = p, c->cap_runs = cap;
    }
    kr->runs[kr->n_runs++] = before;
    st = accum_add(ctx, &kr->keys, k, (size_t)keep * sizeof *k);
    clnz_result_free(&r);
    return st;
}

static clnz_status collect_slice(clnz_context *ctx, void *user, const view *s, const box *at)
{
    return key_collect_slice(ctx, user, s, at);
}

clnz_status sliced_keys(clnz_context *ctx, const view *v, const clnz_predicate *pred,
                        uint64_t budget, uint64_t limit, key_runs *kr)
{
    key_collect c;
    key_collect_init(&c, v, pred, limit, kr);
    /* Where the view has more elements than it spans, every element's key
     * must fit too: halving the budget never cuts a broadcast (stride 0)
     * dimension, which spans nothing, so a broadcast view whose result
     * exceeded the limit failed however it was cut. Elsewhere halving works,
     * and bounding every slice by 8 bytes an element would cut sparse inputs
     * 8 times finer than they need. */
    slicing s = {v, 1, budget, view_overlaps(v) ? sizeof(int64_t) : 0, 0};
    clnz_status st = slices_each(ctx, &s, collect_slice, &c);
    if (st)
        key_runs_free(kr);
    return st;
}

void key_runs_free(key_runs *kr)
{
    free(kr->keys.data);
    free(kr->runs);
    memset(kr, 0, sizeof *kr);
}

/* ---- reading them in C order ---- */
struct run_head {
    uint64_t key; /* the run's current key */
    size_t at, end;
};

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

/* Runs that follow each other are read as one; interleaved ones through a
 * heap of their heads, O(z log runs), straight into what the caller makes
 * of them: never a merged copy of the keys beside them. */
clnz_status key_reader_start(clnz_context *ctx, const key_runs *kr, key_reader *r)
{
    size_t z = kr->keys.used / sizeof(uint64_t), n_runs = kr->interleaved ? kr->n_runs : 1;
    r->keys = (const uint64_t *)kr->keys.data;
    r->n = 0;
    r->heap = malloc(n_runs * sizeof *r->heap);
    if (!r->heap)
        return ctx_fail(ctx, CLNZ_ERROR_OUT_OF_HOST_MEMORY, "out of host memory");
    for (size_t i = 0; i < n_runs; ++i) {
        size_t at = kr->interleaved ? kr->runs[i] : 0;
        size_t end = kr->interleaved && i + 1 < n_runs ? kr->runs[i + 1] : z;
        if (at < end)
            r->heap[r->n++] = (run_head){r->keys[at], at, end};
    }
    for (size_t i = r->n / 2; i-- > 0;)
        sift_down(r->heap, r->n, i);
    return CLNZ_SUCCESS;
}

uint64_t key_reader_next(key_reader *r)
{
    run_head *h = r->heap;
    uint64_t key = h[0].key;
    if (++h[0].at == h[0].end)
        h[0] = h[--r->n];
    else
        h[0].key = r->keys[h[0].at];
    if (r->n > 1)
        sift_down(h, r->n, 0);
    return key;
}

size_t key_reader_stretch(key_reader *r, size_t *at)
{
    run_head *h = r->heap;
    /* the top run's keys up to the least head of the others (its children:
     * a heap), which no two runs share */
    uint64_t bound = r->n > 1 ? h[1].key : UINT64_MAX;
    if (r->n > 2 && h[2].key < bound)
        bound = h[2].key;
    size_t end = h[0].at + 1;
    while (end < h[0].end && r->keys[end] < bound)
        ++end;
    size_t n = end - h[0].at;
    *at = h[0].at;
    h[0].at = end;
    if (end == h[0].end)
        h[0] = h[--r->n];
    else
        h[0].key = r->keys[end];
    if (r->n > 1)
        sift_down(h, r->n, 0);
    return n;
}

void key_reader_end(key_reader *r)
{
    free(r->heap);
    r->heap = NULL;
}

char *keys_result_begin(key_runs *kr, uint64_t entries, size_t entry_bytes)
{
    if (!kr->interleaved && entry_bytes <= sizeof(uint64_t) && kr->keys.data)
        return kr->keys.data;
    return alloc_result((size_t)entries * entry_bytes);
}

char *keys_result_end(key_runs *kr, char *out, size_t bytes)
{
    if (out != kr->keys.data)
        return out;
    char *p = realloc(out, bytes ? bytes : 1);
    if (p)
        kr->keys = (accum){0};
    return p;
}

/* ---- the caller's shape ---- */

static void put_index(char *out, uint64_t pos, size_t ib, int64_t v)
{
    if (ib == 8)
        ((int64_t *)out)[pos] = v;
    else
        ((uint32_t *)out)[pos] = (uint32_t)v;
}

/* Flat indices: the keys themselves (over their own memory when in order),
 * padded or cut to a static size. */
static clnz_status keys_to_flat(clnz_context *ctx, key_runs *kr, uint64_t entries, size_t ib,
                                int64_t fill, char **result)
{
    uint64_t z = kr->keys.used / sizeof(uint64_t), n = entries < z ? entries : z;
    key_reader r;
    clnz_status st = key_reader_start(ctx, kr, &r);
    char *out = st ? NULL : keys_result_begin(kr, entries, ib);
    if (!out) {
        key_reader_end(&r);
        return st ? st : ctx_fail(ctx, CLNZ_ERROR_OUT_OF_HOST_MEMORY, "cannot allocate the result");
    }
    for (uint64_t k = 0; k < n;) {
        size_t at, run = key_reader_stretch(&r, &at);
        for (size_t i = 0; i < run && k < n; ++i)
            put_index(out, k++, ib, (int64_t)r.keys[at + i]);
    }
    key_reader_end(&r);
    char *done = keys_result_end(kr, out, (size_t)entries * ib);
    if (!done) /* only the keys' own block can fail to resize: kr still holds it */
        return ctx_fail(ctx, CLNZ_ERROR_OUT_OF_HOST_MEMORY, "cannot allocate the result");
    for (uint64_t k = n; k < entries; ++k)
        put_index(done, k, ib, fill);
    *result = done;
    return CLNZ_SUCCESS;
}

/* Rows or columns of coordinates, in a result of their own. */
static clnz_status keys_to_coords(clnz_context *ctx, const tensor_info *t, const key_runs *kr,
                                  const clnz_nonzero_options *o, int width, uint64_t entries,
                                  char **result)
{
    uint64_t z = kr->keys.used / sizeof(uint64_t);
    size_t ib = index_bytes(o->index_type);
    key_reader r;
    clnz_status st = key_reader_start(ctx, kr, &r);
    if (st)
        return st;
    char *out = alloc_result((size_t)(entries * (uint64_t)width * ib));
    if (!out) {
        key_reader_end(&r);
        return ctx_fail(ctx, CLNZ_ERROR_OUT_OF_HOST_MEMORY, "cannot allocate the result");
    }
    unravel u;
    unravel_init(&u, t->rank, t->shape);
    for (uint64_t k = 0; k < entries; ++k) {
        const int64_t *idx = k < z ? unravel_to(&u, key_reader_next(&r)) : NULL;
        for (int j = 0; j < width; ++j) {
            int d = t->rank - width + (o->order == CLNZ_ORDER_XY ? width - 1 - j : j);
            uint64_t pos = o->layout == CLNZ_LAYOUT_COLUMNS ? (uint64_t)j * entries + k
                                                            : k * (uint64_t)width + j;
            put_index(out, pos, ib, !idx ? o->fill : d < 0 ? 0 : idx[d]);
        }
    }
    key_reader_end(&r);
    *result = out;
    return CLNZ_SUCCESS;
}

clnz_status keys_to_result(clnz_context *ctx, const tensor_info *t, key_runs *kr,
                           const clnz_nonzero_options *o, int width, clnz_result *res)
{
    uint64_t entries = o->has_size ? (uint64_t)o->size : kr->count;
    int per_entry = o->layout == CLNZ_LAYOUT_FLAT ? 1 : width;
    size_t ib = index_bytes(o->index_type);
    if (per_entry && entries > SIZE_MAX / ib / (uint64_t)per_entry)
        return ctx_fail(ctx, CLNZ_ERROR_TOO_LARGE, "the result does not fit the address space");
    char *out = NULL;
    clnz_status st = o->layout == CLNZ_LAYOUT_FLAT
                         ? keys_to_flat(ctx, kr, entries, ib, o->fill, &out)
                         : keys_to_coords(ctx, t, kr, o, width, entries, &out);
    if (st)
        return st;
    res->indices = out;
    res->count = (int64_t)kr->count;
    res->index_type = o->index_type;
    res->ndim = o->layout == CLNZ_LAYOUT_FLAT ? 1 : 2;
    res->shape[0] = o->layout == CLNZ_LAYOUT_COLUMNS ? width : (int64_t)entries;
    res->shape[1] = o->layout == CLNZ_LAYOUT_ROWS ? width : (int64_t)entries;
    return CLNZ_SUCCESS;
}
