/* slices.h: host arrays larger than one device allocation
 * (CL_DEVICE_MAX_MEM_ALLOC_SIZE, or CLNZ_MAX_ALLOC): views of host memory
 * (view.c), the one loop that cuts them into slices that fit and hands
 * each to an operation (view.c: slices_each), and what the ordered
 * operations do with the slices' results (rows.c: coordinates merged into
 * C order, then shaped as the caller asked). Every blocking call whose
 * input does not fit goes through slices_each. */
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

void view_make(const tensor_info *t, const void *data, view *v);
clnz_tensor view_tensor(const view *v);
/* Bytes from the lowest to the highest element the view reaches: what an
 * upload of it allocates. */
uint64_t view_span(const view *v);
/* Checks a host array and views it; 1 in *fits when it fits one allocation. */
clnz_status host_view(clnz_context *ctx, const clnz_tensor *in, const void *data,
                      tensor_info *t, view *v, int *fits);

/* A box of the logical array: extents shape[d] from origin[d] on. */
typedef struct {
    int64_t origin[CLNZ_MAX_RANK], shape[CLNZ_MAX_RANK];
} box;

/* Called for each slice with the views restricted to it (in the order of
 * the slicing's views) and where it lies in the whole array. Returning
 * CLNZ_ERROR_TOO_LARGE (its result did not fit) has the slice cut finer. */
typedef clnz_status (*slice_fn)(clnz_context *ctx, void *user, const view *slices,
                                const box *at);

typedef struct {
    const view *views; /* one logical shape; views[0] is the input whose memory order rules */
    int n_views;
    uint64_t budget;       /* the most bytes a slice of any view may span, */
    uint64_t out_per_elem; /* and bytes of result per element that must fit it too (0: none) */
    int keep_last;         /* never cut the last dimension (a pixel's channels) */
} slicing;

/* Cuts the views into slices and calls fn on each. The cut follows
 * views[0]'s memory order (its largest stride first), so a slice is one
 * compact stretch of memory whatever the layout: a Fortran-order or
 * transposed input costs what a C-order one does. The slices then come in
 * C order of the logical array only for C-order inputs; an operation whose
 * results are ordered merges them (rows.c). */
clnz_status slices_each(clnz_context *ctx, const slicing *s, slice_fn fn, void *user);

/* Copies a C-order block of elem-byte values (a slice's result) to its
 * place `at` in a C-order array of the given shape. */
void scatter_block(char *dst, int rank, const int64_t *shape, const box *at, const char *src,
                   size_t elem);

/* ---- ordered results (rows.c) ---- */
/* A growing host buffer. */
typedef struct {
    char *data;
    size_t used, cap;
} accum;
clnz_status accum_add(clnz_context *ctx, accum *acc, const void *src, size_t bytes);

/* The int64 global coordinates (rows of v->rank) of v's selected elements,
 * in C order, however v was cut. */
clnz_status sliced_rows(clnz_context *ctx, const view *v, const clnz_predicate *pred,
                        uint64_t budget, accum *rows);
/* Rows of global coordinates as the caller's options shape them (layout,
 * order, width, index type, static size). */
clnz_status rows_to_result(clnz_context *ctx, const tensor_info *t, const accum *rows,
                           const clnz_nonzero_options *o, int width, clnz_result *res);

#endif
