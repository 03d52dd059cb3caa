/* ops.h: what the operations share (interim: the stages of the fused
 * pipeline and the blocking calls' helpers, until the strategy seam). */
#ifndef CLNZ_OPS_H
#define CLNZ_OPS_H

#include "core/chain.h"
#include "core/context.h"
#include "core/error.h"
#include "core/predicate.h"
#include "core/tensor.h"
#include "tune/tune.h"

/* ---- stages (scan.c, nz_stages.c) ---- */
typedef struct {
    int is_u64;
    size_t elem;
    cl_kernel tiles_k, add_k;
    launch_cfg cfg;
} scan_kit;

clnz_status scan_kit_make(clnz_context *ctx, int is_u64, scan_kit *kit);
/* Scratch elements (of the scan's type) a scan of n values uses. */
uint64_t scan_scratch_elems(const scan_kit *kit, uint64_t n);
/* Exclusive scan; offsets in elements. total may be NULL. Sums go to
 * ctx->scratch from element scratch_off on, which the caller has sized. */
clnz_status scan_run(chain *ch, const scan_kit *kit, cl_mem in, uint64_t in_off, cl_mem out,
                     uint64_t out_off, uint64_t n, cl_mem total, uint64_t total_off,
                     uint64_t scratch_off);

typedef struct {
    tensor_info t;
    pred_keys keys;
    launch_cfg cfg;
    uint64_t tiles;
    uint64_t items_off; /* where the per-work-item counts start in scratch, in u32s */
    cl_kernel count_k, write_k;
    scan_kit scan;
} nz_plan;

/* value_bytes 0: the writing pass writes coordinates (nz_write); 1, 2, 4
 * or 8: it writes values of that size (select.cl's sel_write). */
clnz_status nz_plan_make(clnz_context *ctx, const clnz_tensor *in, const clnz_predicate *pred,
                         size_t value_bytes, nz_plan *plan);
/* Counts into the scratch tile offsets and the total into count_buf. */
clnz_status nz_enqueue_count(chain *ch, nz_plan *plan, cl_mem in, int64_t base, cl_mem meta,
                             cl_mem count_buf, uint64_t count_off);
/* Needs nz_enqueue_count's tile offsets in scratch. */
clnz_status nz_enqueue_write(chain *ch, nz_plan *plan, cl_mem in, int64_t base, cl_mem meta,
                             const clnz_nonzero_options *opts, int width, cl_mem out,
                             uint64_t out_off, uint64_t capacity);
/* An input of one tile: count and write in one launch; the count goes to
 * count_buf. Only when p->tiles == 1. */
clnz_status nz_enqueue_single(chain *ch, nz_plan *p, cl_mem in, int64_t base, cl_mem meta,
                              const clnz_nonzero_options *o, int width, cl_mem out,
                              uint64_t out_off, uint64_t capacity, cl_mem count_buf,
                              uint64_t count_off);
clnz_status nz_enqueue_fill(chain *ch, const clnz_nonzero_options *opts, int width, cl_mem out,
                            uint64_t out_off, uint64_t capacity, cl_mem count_buf,
                            uint64_t count_off);
/* Batched nonzero's CSR offsets: batches + 1 int64 at offsets_off
 * (elements), after nz_enqueue_count wrote the total to element
 * offsets_off + batches; items are p->t.n / batches elements each. */
clnz_status nz_enqueue_batch_offsets(chain *ch, nz_plan *p, cl_mem in, int64_t base, cl_mem meta,
                                     uint64_t batches, cl_mem offsets, uint64_t offsets_off);
/* select's values: x's buffer, element offset of its element 0, its shape
 * and strides for the kernels (tensor_meta_buffer) and whether C-order. */
typedef struct {
    cl_mem buf;
    int64_t base;
    cl_mem meta;
    int contiguous;
} sel_values;

/* select's writing pass (a plan made with value_bytes): after
 * nz_enqueue_count with offsets = ctx->scratch at 0, or alone with single
 * (one tile) and offsets = the count buffer. */
clnz_status sel_enqueue_write(chain *ch, nz_plan *p, cl_mem in, int64_t base, cl_mem meta,
                              const sel_values *v, cl_mem out, uint64_t out_off,
                              uint64_t capacity, cl_mem offsets, uint64_t offsets_off, int single);
/* opts, or the defaults (written to *defaults) when opts is NULL. */
const clnz_nonzero_options *nz_options_or_defaults(const clnz_nonzero_options *opts,
                                                   clnz_nonzero_options *defaults);
/* How a blocking nonzero call starts (ctx not NULL): the message cleared,
 * res checked and zeroed. */
clnz_status nz_result_start(clnz_context *ctx, clnz_result *res);

/* The channel rule's pixel mask (one byte per pixel, C order) of a host
 * array into dst: channels.c for an input that fits one allocation,
 * chunked_items.c for any (slice by slice). */
clnz_status channels_mask_host(clnz_context *ctx, const clnz_tensor *in, const void *data,
                               clnz_channel_rule rule, const clnz_nonzero_options *o,
                               unsigned char *dst);
clnz_status channels_mask_sliced(clnz_context *ctx, const clnz_tensor *in, const void *data,
                                 clnz_channel_rule rule, const clnz_nonzero_options *o,
                                 unsigned char *dst);
/* Blocking batched nonzero on checked options: batched.c for an input that
 * fits one allocation, chunked_items.c for any. */
clnz_status batched_direct(clnz_context *ctx, const clnz_tensor *in, const void *data,
                           const clnz_nonzero_options *opts, int width, clnz_result *res,
                           clnz_array *offsets);
clnz_status batched_sliced(clnz_context *ctx, const clnz_tensor *in, const void *data,
                           const clnz_nonzero_options *o, int width, clnz_result *res,
                           clnz_array *offsets);
/* Checks width, index range and fill before any work; *width gets the width. */
clnz_status nz_check_options(clnz_context *ctx, const tensor_info *t,
                             const clnz_nonzero_options *opts, int *width);
size_t index_bytes(clnz_index_type t);

/* ---- the blocking calls' counting half (host_api.c) ---- */
typedef struct {
    nz_plan p;
    int64_t base;
    cl_mem inb, meta, countb;
    chain ch;
    uint64_t z;
} host_run;

/* Plans (value_bytes as for nz_plan_make), uploads and makes the count buffer. */
clnz_status host_run_begin(clnz_context *ctx, const clnz_tensor *in, const void *data,
                           const clnz_predicate *pred, size_t value_bytes, host_run *r);
/* The counting pass and the count read back into r->z. */
clnz_status host_run_counted(host_run *r);
/* Ends the chain and releases what begin made; returns st. */
clnz_status host_run_end(host_run *r, clnz_status st);

/* ---- the blocking calls on one allocation's worth (host_api.c, select.c,
 * where.c); the public ones (chunked.c) check ctx, the options (non-NULL
 * here) and the result pointer, clear the message, then cut larger inputs
 * into such calls. Each fails with CLNZ_ERROR_TOO_LARGE when an input or the
 * result exceeds ctx->max_alloc. ---- */
clnz_status nonzero_direct(clnz_context *ctx, const clnz_tensor *in, const void *data,
                           const clnz_nonzero_options *opts, clnz_result *res);
clnz_status count_direct(clnz_context *ctx, const clnz_tensor *in, const void *data,
                         const clnz_predicate *pred, int64_t *count);
clnz_status select_direct(clnz_context *ctx, const clnz_tensor *x, const void *x_data,
                          const clnz_tensor *mask, const void *mask_data,
                          const clnz_predicate *pred, clnz_array *out);
/* select does not broadcast: the mask must have x's shape. */
clnz_status select_same_shape(clnz_context *ctx, const tensor_info *x, const tensor_info *m);
clnz_status where_direct(clnz_context *ctx, const clnz_tensor *cond, const void *cond_data,
                         const clnz_predicate *pred, const clnz_operand *x, const void *x_data,
                         const clnz_operand *y, const void *y_data, clnz_array *out);

#endif
