/* slices.h: cutting a host array into slices that each fit one device
 * allocation (the blocking calls' way past CL_DEVICE_MAX_MEM_ALLOC_SIZE):
 * views of host memory, where to cut them, the slices in C order, and a
 * growing host buffer for the results. Used by chunked.c (nonzero, count,
 * select, where) and chunked_items.c (channel rules, batches). */
#ifndef CLNZ_SLICES_H
#define CLNZ_SLICES_H

#include "core/context.h"
#include "core/error.h"
#include "core/tensor.h"

/* Below this many bytes a slice is not cut further: a result that still
 * does not fit is an error, not an endless recursion. */
#define MIN_BUDGET 4096

/* A logical array in host memory, strides resolved (elements). */
typedef struct {
    int rank;
    int64_t shape[CLNZ_MAX_RANK], strides[CLNZ_MAX_RANK];
    const char *data; /* logical element 0 */
    size_t elem;
    clnz_dtype dtype;
} view;

/* Where to cut: along dimension d, k at a time, so that every view's slice
 * spans at most `budget` bytes, and out_per_elem bytes of result per
 * element of a slice (0: the result is handled otherwise) fit it too. */
typedef struct {
    const view *views;
    int n_views;
    uint64_t budget, out_per_elem;
    int d;
    int64_t k;
    int keep_last; /* 1: never cut the last dimension (a pixel's channels) */
} cut;

/* The slices in C order: lead[] over the dimensions before d, odometer-style,
 * and a along d. */
typedef struct {
    int64_t lead[CLNZ_MAX_RANK];
    int64_t a, k;
} cut_pos;

/* A growing host buffer of results. */
typedef struct {
    char *data;
    size_t used, cap;
} accum;

void view_make(const tensor_info *t, const void *data, view *v);

clnz_tensor view_tensor(const view *v);

/* Bytes from the lowest to the highest element the view reaches: what an
 * upload of it allocates. */
uint64_t view_span(const view *v);

/* The slice with the coordinates of dimensions < d fixed at lead[], and
 * [a, a + k) along d. */
void view_slice(const view *v, int d, const int64_t *lead, int64_t a, int64_t k, view *s);

/* The outermost dimension (before the last with keep_last) whose single slices fit, and the most of them
 * that fit together (spans grow with k: a binary search). */
clnz_status cut_plan(clnz_context *ctx, cut *c);

void cut_first(const cut *c, cut_pos *p);

/* 0 when every slice has been visited. */
int cut_next(const cut *c, cut_pos *p);

clnz_status accum_add(clnz_context *ctx, accum *acc, const void *src, size_t bytes);

/* Checks a host array and views it; 1 in *fits when it fits one allocation. */
clnz_status host_view(clnz_context *ctx, const clnz_tensor *in, const void *data,
                      tensor_info *t, view *v, int *fits);

#endif
