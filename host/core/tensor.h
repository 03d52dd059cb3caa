/* tensor.h: a caller's tensor description, checked once (tensor.c), and
 * the checks of caller buffers. */
#ifndef CLNZ_CORE_TENSOR_H
#define CLNZ_CORE_TENSOR_H

#include "clnz.h"

typedef struct {
    clnz_dtype dtype;
    size_t elem;
    int rank;          /* as given (0 allowed) */
    int krank;         /* as the kernels see it: max(rank, 1) */
    int64_t shape[CLNZ_MAX_RANK];
    int64_t strides[CLNZ_MAX_RANK];
    uint64_t n;        /* element count */
    int contiguous;    /* C order: the kernels skip the odometer */
    int64_t min_off, max_off; /* element offsets reached, relative to element 0 */
} tensor_info;

clnz_status tensor_check(clnz_context *ctx, const clnz_tensor *t, tensor_info *info);
/* The C-order strides of shape, in elements, into strides[0..rank): in 64
 * bits (an int wrapped once a stride reached 2^31: (2, 2^31) u8 sliced gave
 * negative flat indices). */
void c_order_strides(int rank, const int64_t *shape, int64_t *strides);
/* The first n dimensions by |strides| into perm[0..n), largest first, a
 * stable sort (ties keep their logical order): the order of memory. */
void dims_by_stride(int n, const int64_t *strides, int *perm);
/* The same elements with the dimensions in memory order (largest |stride|
 * first; ties keep their order), for what does not depend on the order it
 * reads in (a count): a Fortran-order or transposed array becomes a C-order
 * one, read as one stretch of memory instead of a cache miss an element
 * (count of a (4096, 4096) f32 transpose on PoCL: 51.6 ms, then 1.5 ms in
 * memory order). Offsets, span and element count stay as they are. */
void tensor_memory_order(tensor_info *t);
/* A dtype value outside the enum is a bad argument (INVALID_ARGUMENT, as
 * every bad enum); UNSUPPORTED_DTYPE is kept for a real dtype that the call
 * does not take. */
clnz_status dtype_check(clnz_context *ctx, clnz_dtype dtype);
/* Element offset of logical element 0 inside a buffer, from a byte offset. */
clnz_status tensor_base(clnz_context *ctx, const tensor_info *info, cl_mem buf, size_t byte_off,
                        const char *what, int64_t *base);
/* A memory object a kernel of the call reads that is not a checked input
 * (an image: the image pass) must not be CL_MEM_WRITE_ONLY; `what` names
 * it ("image"), `why` ends the message. A count the call reads is copied
 * instead (ops.h: count_staged). */
clnz_status buffer_readable(clnz_context *ctx, cl_mem buf, const char *what, const char *why);
/* A memory object's flags (a sub-buffer's with its parent's restrictions),
 * or `unknown` where OpenCL cannot say. */
cl_mem_flags mem_flags_or(cl_mem buf, cl_mem_flags unknown);
/* A caller's buffer must hold `count` elements of `elem` bytes at byte `off`. */
clnz_status buffer_check(clnz_context *ctx, cl_mem buf, const char *what, size_t off,
                         uint64_t count, size_t elem);
/* The buffer whose bytes buf holds (a sub-buffer's parent, else buf),
 * with byte *off of buf moved to that buffer's. */
cl_mem mem_root(cl_mem buf, size_t *off);
/* Bytes [lo, hi) of a caller's buffer that a call reads or writes. */
typedef struct {
    cl_mem buf;
    uint64_t lo, hi;
    const char *what;
} mem_span;
/* What a tensor at element `base` of buf reaches: its whole byte extent,
 * the gaps of a strided view too (the check below is conservative). */
mem_span tensor_span(cl_mem buf, const tensor_info *t, int64_t base, const char *what);
/* Each span written must share no byte with another written or with one
 * read, a sub-buffer seen in its parent (kernels that read what others
 * write race): else CLNZ_ERROR_INVALID_ARGUMENT naming both. Empty spans
 * and NULL buffers are skipped. */
clnz_status spans_apart(clnz_context *ctx, const mem_span *writes, int n_writes,
                        const mem_span *reads, int n_reads);
/* A shape as Python writes it: "(2, 3)", "(4,)", "()". */
void shape_text(int rank, const int64_t *shape, char *buf, size_t n);
/* A small read-only buffer with shape then strides, for the kernels; the
 * context keeps recent ones and hands them out again (never write one). */
clnz_status tensor_meta_buffer(clnz_context *ctx, const tensor_info *info, cl_mem *out);
/* Releases the shape buffers tensor_meta_buffer keeps for reuse. */
void tensor_meta_release_all(clnz_context *ctx);

#endif
