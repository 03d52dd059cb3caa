/* slices.h: host arrays larger than one device allocation
 * (CL_DEVICE_MAX_MEM_ALLOC_SIZE, or CLNZ_MAX_ALLOC): views of host memory
 * (view.c), the one loop that cuts them into slices that fit and hands
 * each to an operation (view.c: slices_each), and what the ordered
 * operations do with the slices' results (keys.c: flat C-order indices of
 * the whole array merged into C order, then shaped as the caller asked).
 * Every blocking call whose input does not fit goes through slices_each. */
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
 * results are ordered merges them (keys.c). */
clnz_status slices_each(clnz_context *ctx, const slicing *s, slice_fn fn, void *user);
/* 1 when v has more elements than the memory it spans (broadcast or
 * overlapping strides): halving a slice's span then need not halve its
 * elements, so its results must bound the cut too (out_per_elem). */
int view_overlaps(const view *v);
/* 1 when v's memory order is its logical order (dimensions of extent 1
 * aside, |strides| never grow from one dimension to the next): its slices
 * then come in C order, each one stretch of the array's C order. */
int view_in_c_order(const view *v);

/* Copies a C-order block of elem-byte values (a slice's result) to its
 * place `at` in a C-order array of the given shape. */
void scatter_block(char *dst, int rank, const int64_t *shape, const box *at, const char *src,
                   size_t elem);

/* ---- ordered results (keys.c) ---- */
/* A growing host buffer (malloc'd: it may become a result). */
typedef struct {
    char *data;
    size_t used, cap;
} accum;
clnz_status accum_add(clnz_context *ctx, accum *acc, const void *src, size_t bytes);

/* The keys of v's selected elements (their flat C-order indices in v's
 * shape), slice by slice: runs, each ascending, interleaved where the cut
 * does not follow C order. Read them in C order with a key_reader.
 * Only the first `limit` in C order are sure to be kept (a static size;
 * UINT64_MAX: all): a slice keeps at most its first `limit` (the whole
 * array's first `limit` are among them, each run being ascending), and the
 * slices of a view in C order, which come in C order, none once `limit`
 * are kept. count counts every selected element, kept or not. */
typedef struct {
    accum keys;   /* uint64 */
    size_t *runs; /* where each slice's keys start, in keys */
    size_t n_runs;
    int interleaved; /* a run starts below where the one before ends */
    uint64_t count;  /* the selected elements */
} key_runs;
clnz_status sliced_keys(clnz_context *ctx, const view *v, const clnz_predicate *pred,
                        uint64_t budget, uint64_t limit, key_runs *kr);
void key_runs_free(key_runs *kr);
/* sliced_keys' steps, for a caller that cuts its own slices (with other
 * views beside v): init, then each slice's keys as a run. */
typedef struct {
    const clnz_predicate *pred;
    int64_t cstr[CLNZ_MAX_RANK]; /* the whole array's C-order strides */
    const int64_t *shape;        /* the whole array's shape */
    key_runs *kr;
    size_t cap_runs;
    uint64_t limit; /* keys kept a slice (see key_runs) */
    int in_order;   /* the slices come in C order */
} key_collect;
void key_collect_init(key_collect *c, const view *v, const clnz_predicate *pred,
                      uint64_t limit, key_runs *kr);
clnz_status key_collect_slice(clnz_context *ctx, key_collect *c, const view *slice,
                              const box *at);

/* The keys in C order, one at a time (z calls at most). */
typedef struct run_head run_head;
typedef struct {
    const uint64_t *keys;
    run_head *heap;
    size_t n;
} key_reader;
clnz_status key_reader_start(clnz_context *ctx, const key_runs *kr, key_reader *r);
uint64_t key_reader_next(key_reader *r);
/* The next keys in C order that lie together in one run: how many (1 or
 * more), from r->keys + *at on (where a value kept beside each key, in the
 * same order, is found too), one heap step for them all (a Fortran-order
 * array cut along its last dimension: a row's stretch of each slice). */
size_t key_reader_stretch(key_reader *r, size_t *at);
void key_reader_end(key_reader *r);

/* Memory for a result of `entries` entries of entry_bytes made from the
 * keys in C order: the keys' own when they are in order and an entry takes
 * no more than a key (entry k lies at or below key k, which the reader has
 * read by the time entry k is written), else a new block of `entries`
 * entries (NULL when out of memory). keys_result_end hands it over: the
 * keys' own block resized to `bytes` (NULL when that fails; the memory then
 * stays kr's), a new block as it is. */
char *keys_result_begin(key_runs *kr, uint64_t entries, size_t entry_bytes);
char *keys_result_end(key_runs *kr, char *out, size_t bytes);

/* The keys, in C order, as the caller's options shape them (layout, order,
 * width, index type, static size). */
clnz_status keys_to_result(clnz_context *ctx, const tensor_info *t, key_runs *kr,
                           const clnz_nonzero_options *o, int width, clnz_result *res);

/* Coordinates of ascending flat C-order indices in a shape. */
typedef struct {
    int rank;
    int64_t shape[CLNZ_MAX_RANK], idx[CLNZ_MAX_RANK];
    uint64_t at; /* the last key */
} unravel;
void unravel_init(unravel *u, int rank, const int64_t *shape);
/* The coordinates of key, which must not be below the last one asked
 * (u->idx, valid until the next call). */
const int64_t *unravel_to(unravel *u, uint64_t key);

#endif
