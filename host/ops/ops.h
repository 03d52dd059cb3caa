/* ops.h: what the operations (one file each: nonzero.c, count.c,
 * select.c, where.c, mask.c, scan.c, batched.c, channels.c, image2d.c)
 * share: nonzero's options (options.c), running a compacting job on the
 * device through the chosen strategy, and the blocking calls' way of
 * running one on a host array (blocking.c, ahead.c). */
#ifndef CLNZ_OPS_H
#define CLNZ_OPS_H

#include "core/chain.h"
#include "core/context.h"
#include "core/error.h"
#include "core/tensor.h"
#include "strategy/strategy.h"

/* ---- nonzero's options (options.c) ---- */
size_t index_bytes(clnz_index_type t);
/* opts, or the defaults (written to *defaults) when opts is NULL. */
const clnz_nonzero_options *nz_options_or_defaults(const clnz_nonzero_options *opts,
                                                   clnz_nonzero_options *defaults);
/* Checks layout, order, width, index range, size and fill against the
 * input before any work; *width gets the coordinates per entry. */
clnz_status nz_check_options(clnz_context *ctx, const tensor_info *t,
                             const clnz_nonzero_options *opts, int *width);
/* Indices per entry: 1 for flat, else the width. */
uint64_t nz_per_entry(const clnz_nonzero_options *o, int width);
/* The job's coordinate half from checked options. */
void job_coords(nz_job *job, const clnz_nonzero_options *o, int width);
/* How a blocking nonzero-family call starts, after CTX_ENTER: res checked
 * and zeroed. */
clnz_status nz_result_start(clnz_context *ctx, clnz_result *res);
/* A caller's output buffer: room for capacity * per_entry elements of elem
 * bytes at byte off (off aligned even when nothing is written). */
clnz_status output_check(clnz_context *ctx, cl_mem buf, size_t off, uint64_t capacity,
                         uint64_t per_entry, size_t elem);
/* The result struct for entries of checked options. */
void nz_result_fill(clnz_result *res, void *indices, const clnz_nonzero_options *o, int width,
                    uint64_t entries, uint64_t z);

/* ---- the programs of the kernels the operations launch themselves ----
 * (the compacting ones come from the strategies): made here for the
 * operation that builds them and for the enumeration of declared uses
 * (uses/variants.c), so the two cannot differ. */
/* mask.cl (mask_write, channel_mask), for elements of dtype d */
void mask_program(clnz_dtype d, int pred_nonzero, program_ref *r);
/* where.cl: a condition of dtype cond, values of value_bytes */
void where_program(clnz_dtype cond, int pred_nonzero, size_t value_bytes, program_ref *r);
/* count_axes.cl (count_items, item_block_sums, item_counts), for elements of dtype d,
 * with the context's COUNT_LOCKSTEP */
void count_axes_program(const clnz_context *ctx, clnz_dtype d, int pred_nonzero, program_ref *r);
/* fill.cl (nz_fill): no axis */
void fill_program(program_ref *r);
/* image.cl: one program per way image_mask reads a channel type (every
 * supported type maps to one); fills up to max, returns how many. */
int image_programs(int pred_nonzero, program_ref *out, int max);

/* ---- on the device (blocking.c) ---- */
/* A read-write device buffer of `bytes` (what names it in a message). */
clnz_status rw_buffer(clnz_context *ctx, size_t bytes, cl_mem *buf, const char *what);
/* CLNZ_ERROR_TOO_LARGE unless `entries` of entry_bytes fit one allocation. */
clnz_status result_fits(clnz_context *ctx, uint64_t entries, size_t entry_bytes);
/* CLNZ_ERROR_TOO_LARGE unless a batch's `n` 8-byte `what` (offsets, counts),
 * held on the host, fit in its memory (host_holds): a host that overcommits
 * would grant them and then run out while filling them. The message names
 * the batch's `items`. */
clnz_status batch_fits_host(clnz_context *ctx, uint64_t items, uint64_t n, const char *what);
/* job_init and job_bind: a job on a checked input in a caller's buffer. */
clnz_status job_on_buffer(clnz_context *ctx, nz_job *job, const tensor_info *t,
                          const clnz_predicate *pred, cl_mem buf, size_t byte_off);
/* A caller's count where the next step may read it: a kernel may not read
 * a CL_MEM_WRITE_ONLY buffer, nor the host one made CL_MEM_HOST_NO_ACCESS
 * or CL_MEM_HOST_WRITE_ONLY (`refused`: the flags in the way). Such a count
 * is copied (a copy command is neither) into a buffer of 8 bytes of its own,
 * *staged, which the caller releases once its reader is enqueued (OpenCL
 * keeps it until that command ends); NULL where the count serves as it is. */
clnz_status count_staged(chain *ch, cl_mem count, size_t byte_off, cl_mem_flags refused,
                         cl_mem *staged);
/* Static capacity: the entries from the count up to the capacity get the
 * fill value (kernels/fill.cl's nz_fill), which reads the count. */
clnz_status job_fill(chain *ch, const nz_job *job, int64_t fill);
/* A whole job through the chosen strategy: what the device-resident calls do. */
clnz_status job_run(chain *ch, nz_job *job);

/* ---- results of exactly the count's size on the device (exact.c) ---- */
/* *out_buf NULL and *count 0 (those not NULL), before anything else: so
 * that every failure, a NULL context's and a forked process's too, leaves
 * them as clnz.h says. Then CTX_ENTER. */
void exact_clear(cl_mem *out_buf, uint64_t *count);
#define EXACT_ENTER(ctx, out_buf, count)                                                           \
    exact_clear((out_buf), (count));                                                               \
    CTX_ENTER(ctx)
/* The *_alloc calls' result pointers: not NULL (the message names which). */
clnz_status exact_outputs(clnz_context *ctx, cl_mem *out_buf, uint64_t *count);
/* Where an *_alloc call's job puts its count: the caller's count_buf
 * (checked), or without one a temporary 8-byte buffer (*owned, for the
 * caller to release whatever happens). */
clnz_status exact_count_buffer(clnz_context *ctx, nz_job *job, cl_mem count_buf,
                               size_t count_offset, cl_mem *owned);
/* How many entries of what size an *_alloc result holds: `fixed` if not
 * UINT64_MAX (a static size), else the count; has_fill: the entries past
 * the count get `fill`. */
typedef struct {
    uint64_t fixed;
    size_t entry_bytes;
    int has_fill;
    int64_t fill;
} exact_entries;
/* Runs a bound job after the caller's events: its count, one 8-byte read
 * of it into *count, a buffer of exactly the entries (*out_buf; NULL for
 * no bytes) and the entries written into it, enqueued. On failure
 * *out_buf is NULL. */
clnz_status job_run_exact(clnz_context *ctx, nz_job *job, const exact_entries *e,
                          cl_uint n_wait, const cl_event *wait, cl_mem *out_buf,
                          uint64_t *count, cl_event *out_event);

/* ---- a job on a host array (blocking.c) ---- */
typedef struct {
    nz_job job;
    chain ch;
    const strategy *s;
    cl_mem inb, xb, countb, offsetsb; /* made here, released by host_job_end */
    void *in_copy, *x_copy; /* C-order copies (core/relayout.h), freed by host_job_end */
    uint64_t z;
    int counted; /* z (and the offsets) read back: the job ran its count */
} host_job;

/* Uploads the predicate's input (job->t checked by job_input) and makes the
 * count buffer (and, with batches, the offsets buffer). A badly strided
 * input (and x) goes up as a C-order copy where that pays (relayout_pays):
 * job->t then describes the copy. */
clnz_status host_job_begin(clnz_context *ctx, host_job *h, const void *data);
/* Uploads x for a select job whose mask is another array. */
clnz_status host_job_values(host_job *h, const tensor_info *x, const void *x_data);
/* Where the count goes: the count buffer (with batches the offsets
 * buffer), made on the first call; the strategy is chosen first. */
clnz_status host_job_count_buffer(host_job *h);
/* The count only: h->z, and with batches the offsets into offsets (B + 1). */
clnz_status host_job_count(host_job *h, int64_t *offsets);
/* The whole job into `cap` entries from element out_off (index or value
 * units) of out, then the static fill where has_fill; counted as for
 * strategy.write. */
clnz_status host_job_write(host_job *h, cl_mem out, uint64_t out_off, uint64_t cap, int counted,
                           int has_fill, int64_t fill);
/* A columns-layout result's z entries per column, written `apart` apart at
 * src, brought to z apart at dst (dst may be src: each column moves down). */
void columns_together(const nz_job *job, void *dst, const void *src, uint64_t z, uint64_t apart);
/* Runs the job and brings its entries home: *host (alloc_result) gets
 * `entries` entries of entry_bytes (per column, for the columns layout),
 * where entries is fixed_capacity if not UINT64_MAX, else z; the static
 * fill applies when has_fill. *host is the caller's to free. */
clnz_status host_job_entries(host_job *h, uint64_t fixed_capacity, size_t entry_bytes,
                             int has_fill, int64_t fill, void **host, uint64_t *entries);
clnz_status host_job_end(host_job *h, clnz_status st);

/* ---- a blocking call's result made before its count (ahead.c) ---- */
/* How many entries of entry_bytes to make before the count: `fixed` if
 * not UINT64_MAX, else on a CPU device a guess from the context's recent
 * densities; 0 for none (no guess yet, or past what fits). */
uint64_t ahead_entries(const host_job *h, uint64_t fixed, size_t entry_bytes);
/* Runs the whole job into `cap` entries made first and reads the count
 * with them (one host round trip): *host and *entries as host_job_entries
 * gives them, or *host NULL where the count passed cap (then counted:
 * host_job_entries writes an exact result). On failure *host, if not
 * NULL, is the caller's to free. */
clnz_status host_job_ahead(host_job *h, uint64_t cap, uint64_t fixed, size_t entry_bytes,
                           int has_fill, int64_t fill, void **host, uint64_t *entries);
/* A finished blocking call's count z of n elements, for the next guess. */
void ahead_learn(clnz_context *ctx, uint64_t n, uint64_t z);

/* ---- operations other files call ---- */
/* The blocking calls on an input that fits one allocation (the public ones
 * check ctx and arguments first, then cut larger inputs into such calls
 * through slices/). They fail with CLNZ_ERROR_TOO_LARGE when an input or
 * the result exceeds ctx->max_alloc. */
clnz_status nonzero_direct(clnz_context *ctx, const tensor_info *t, const void *data,
                           const clnz_predicate *pred, const clnz_nonzero_options *opts,
                           clnz_result *res);
clnz_status count_direct(clnz_context *ctx, const tensor_info *t, const void *data,
                         const clnz_predicate *pred, int64_t *count);
clnz_status where_direct(clnz_context *ctx, const clnz_tensor *cond, const void *cond_data,
                         const clnz_predicate *pred, const clnz_operand *x, const void *x_data,
                         const clnz_operand *y, const void *y_data, clnz_array *out);
/* The channel rule's pixel mask (one byte per pixel, C order) of an input
 * that fits one allocation, into dst (channels.c). */
clnz_status channels_mask_direct(clnz_context *ctx, const tensor_info *t, const void *data,
                                 const clnz_predicate *pred, clnz_channel_rule rule,
                                 unsigned char *dst);
/* The same pixel mask of a C-order tensor in a device buffer, into
 * mask_buf after the events (image2d.c's copied images). */
clnz_status channels_mask_enqueue(clnz_context *ctx, const clnz_tensor *t, cl_mem buf,
                                  const clnz_predicate *pred, clnz_channel_rule rule,
                                  cl_mem mask_buf, cl_uint n_wait, const cl_event *wait,
                                  cl_event *done);
/* A byte per pixel on the device (at least one byte: OpenCL has no empty
 * buffers), and the pixel bytes brought home after `done` (channels.c). */
clnz_status pixel_mask_buffer(clnz_context *ctx, uint64_t pixels, cl_mem *buf);
clnz_status pixel_mask_read(clnz_context *ctx, cl_mem mask, uint64_t pixels, cl_event done,
                            unsigned char *dst);
/* select does not broadcast: the mask must have x's shape (select.c). */
clnz_status select_same_shape(clnz_context *ctx, const tensor_info *x, const tensor_info *m);

#endif
