/* tensor.c: checking a caller's tensor description and buffers, and placing
 * the tensor in its buffer. */
#include "core/tensor.h"
#include "core/context.h"
#include "core/error.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Element counts stay below 2^62 so that byte sizes and signed offsets
 * never overflow. */
#define MAX_ELEMENTS (UINT64_C(1) << 62)

clnz_status dtype_check(clnz_context *ctx, clnz_dtype dtype)
{
    if ((unsigned)dtype < CLNZ_DTYPE_COUNT)
        return CLNZ_SUCCESS;
    return ctx_fail(ctx, CLNZ_ERROR_INVALID_ARGUMENT, "unknown dtype %d (the dtypes are 0..%d)",
                    (int)dtype, CLNZ_DTYPE_COUNT - 1);
}

void c_order_strides(int rank, const int64_t *shape, int64_t *strides)
{
    int64_t c = 1;
    for (int d = rank - 1; d >= 0; --d) {
        strides[d] = c;
        c *= shape[d];
    }
}

void dims_by_stride(int n, const int64_t *strides, int *perm)
{
    for (int d = 0; d < n; ++d) { /* an insertion sort: ties keep their order */
        int at = d;
        for (; at > 0 && llabs(strides[perm[at - 1]]) < llabs(strides[d]); --at)
            perm[at] = perm[at - 1];
        perm[at] = d;
    }
}

/* Whether a non-empty tensor lies in C order, one stretch from element 0
 * (the strides of extents of 1 do not matter). */
static int in_c_order(const tensor_info *t)
{
    int64_t c[CLNZ_MAX_RANK];
    c_order_strides(t->rank, t->shape, c);
    for (int d = 0; d < t->rank; ++d)
        if (t->shape[d] > 1 && t->strides[d] != c[d])
            return 0;
    return 1;
}

clnz_status tensor_check(clnz_context *ctx, const clnz_tensor *t, tensor_info *info)
{
    if (!t)
        return ctx_fail(ctx, CLNZ_ERROR_INVALID_ARGUMENT, "tensor is NULL");
    clnz_status st = dtype_check(ctx, t->dtype);
    if (st)
        return st;
    if (t->rank < 0 || t->rank > CLNZ_MAX_RANK)
        return ctx_fail(ctx, CLNZ_ERROR_INVALID_ARGUMENT, "rank %d is outside 0..%d", t->rank,
                        CLNZ_MAX_RANK);
    if (t->rank > 0 && !t->shape)
        return ctx_fail(ctx, CLNZ_ERROR_INVALID_ARGUMENT, "shape is NULL");
    memset(info, 0, sizeof *info);
    info->dtype = t->dtype;
    info->elem = clnz_dtype_size(t->dtype);
    info->rank = t->rank;
    info->krank = t->rank ? t->rank : 1;
    info->n = 1;
    if (t->rank == 0) { /* one element, seen as shape (1,) */
        info->shape[0] = 1;
        info->strides[0] = 1;
    }
    for (int d = 0; d < t->rank; ++d) {
        if (t->shape[d] < 0)
            return ctx_fail(ctx, CLNZ_ERROR_INVALID_ARGUMENT, "shape[%d] = %lld is negative", d,
                            (long long)t->shape[d]);
        info->shape[d] = t->shape[d];
    }
    for (int d = 0; d < t->rank; ++d)
        if (t->shape[d] == 0)
            info->n = 0;
    if (info->n == 0) {
        /* Empty: valid whatever the other extents (numpy makes (0, 2**62)).
         * No element is read, so strides do not matter, and the extents'
         * product may not even fit. */
        for (int d = 0; d < t->rank; ++d)
            info->strides[d] = 1;
        info->contiguous = 1;
        return CLNZ_SUCCESS;
    }
    for (int d = 0; d < t->rank; ++d) {
        uint64_t e = (uint64_t)t->shape[d];
        if (info->n > MAX_ELEMENTS / e)
            return ctx_fail(ctx, CLNZ_ERROR_TOO_LARGE, "the shape holds more than 2^62 elements");
        info->n *= e;
    }
    /* C-order strides, then the caller's if any */
    c_order_strides(t->rank, info->shape, info->strides);
    if (t->rank > 0 && t->strides) {
        for (int d = 0; d < t->rank; ++d) {
            int64_t s = t->strides[d];
            if (s > INT64_MAX / 4 || s < -(INT64_MAX / 4))
                return ctx_fail(ctx, CLNZ_ERROR_INVALID_ARGUMENT, "stride[%d] is absurd", d);
            info->strides[d] = s;
        }
    }
    info->contiguous = in_c_order(info);
    /* the span of element offsets the view reaches */
    info->min_off = info->max_off = 0;
    if (info->n > 0) {
        for (int d = 0; d < t->rank; ++d) {
            __int128 reach = (__int128)(t->shape[d] - 1) * info->strides[d];
            __int128 lo = info->min_off + (reach < 0 ? reach : 0);
            __int128 hi = info->max_off + (reach > 0 ? reach : 0);
            if (lo < -(__int128)MAX_ELEMENTS || hi > (__int128)MAX_ELEMENTS)
                return ctx_fail(ctx, CLNZ_ERROR_TOO_LARGE, "the strides reach beyond 2^62 elements");
            info->min_off = (int64_t)lo;
            info->max_off = (int64_t)hi;
        }
    }
    return CLNZ_SUCCESS;
}

void tensor_memory_order(tensor_info *t)
{
    if (t->n == 0) /* strides of an empty tensor are placeholders */
        return;
    int perm[CLNZ_MAX_RANK];
    int64_t shape[CLNZ_MAX_RANK], strides[CLNZ_MAX_RANK];
    dims_by_stride(t->rank, t->strides, perm);
    for (int d = 0; d < t->rank; ++d)
        shape[d] = t->shape[perm[d]], strides[d] = t->strides[perm[d]];
    memcpy(t->shape, shape, sizeof(int64_t) * (size_t)t->rank);
    memcpy(t->strides, strides, sizeof(int64_t) * (size_t)t->rank);
    t->contiguous = in_c_order(t);
}

/* A sub-buffer's parent and its origin there; NULL for a buffer of its own
 * (OpenCL 1.2 has no sub-buffers of sub-buffers). */
static cl_mem mem_parent(cl_mem buf, size_t *origin)
{
    cl_mem parent = NULL;
    if (clGetMemObjectInfo(buf, CL_MEM_ASSOCIATED_MEMOBJECT, sizeof parent, &parent, NULL) !=
            CL_SUCCESS ||
        !parent ||
        (origin &&
         clGetMemObjectInfo(buf, CL_MEM_OFFSET, sizeof *origin, origin, NULL) != CL_SUCCESS))
        return NULL;
    return parent;
}

/* A memory object's flags. A sub-buffer inherits its parent's access and
 * host-access flags where it names none, but OpenCL 1.2 does not say that
 * its query reports them: the parent's restrictions are added (they bind
 * it). */
static cl_int mem_flags(cl_mem buf, cl_mem_flags *flags)
{
    cl_mem_flags up = 0;
    cl_int e = clGetMemObjectInfo(buf, CL_MEM_FLAGS, sizeof *flags, flags, NULL);
    cl_mem parent = e ? NULL : mem_parent(buf, NULL);
    if (parent && clGetMemObjectInfo(parent, CL_MEM_FLAGS, sizeof up, &up, NULL) == CL_SUCCESS)
        *flags |= up & (CL_MEM_WRITE_ONLY | CL_MEM_READ_ONLY | CL_MEM_HOST_WRITE_ONLY |
                        CL_MEM_HOST_READ_ONLY | CL_MEM_HOST_NO_ACCESS);
    return e;
}

/* What the driver would refuse late, with a status that names no argument,
 * or not at all (a kernel that writes a read-only buffer is undefined in
 * OpenCL 1.2): a caller's memory object that is not a buffer, belongs to
 * another context, or may not be accessed the way clnz will (`refused`:
 * CL_MEM_WRITE_ONLY for what kernels read, CL_MEM_READ_ONLY for what they
 * write). Three queries of the object, a few nanoseconds each. */
static clnz_status mem_usable(clnz_context *ctx, cl_mem buf, const char *what, cl_mem_flags refused)
{
    cl_mem_object_type type = 0;
    cl_context owner = NULL;
    cl_mem_flags flags = 0;
    cl_int e = clGetMemObjectInfo(buf, CL_MEM_TYPE, sizeof type, &type, NULL);
    if (!e)
        e = clGetMemObjectInfo(buf, CL_MEM_CONTEXT, sizeof owner, &owner, NULL);
    if (!e)
        e = mem_flags(buf, &flags);
    if (e) {
        char call[64];
        snprintf(call, sizeof call, "clGetMemObjectInfo(%s)", what);
        return CL_CHECK(ctx, e, call);
    }
    if (type != CL_MEM_OBJECT_BUFFER)
        return ctx_fail(ctx, CLNZ_ERROR_INVALID_ARGUMENT,
                        "the %s is an image, not a buffer (images: clnz_image2d_nonzero)", what);
    if (owner != ctx->cl)
        return ctx_fail(ctx, CLNZ_ERROR_INVALID_ARGUMENT,
                        "the %s buffer belongs to another OpenCL context than the clnz "
                        "context's",
                        what);
    if (flags & refused)
        return ctx_fail(ctx, CLNZ_ERROR_INVALID_ARGUMENT,
                        refused & CL_MEM_READ_ONLY
                            ? "the %s buffer is CL_MEM_READ_ONLY, and clnz writes it"
                            : "the %s buffer is CL_MEM_WRITE_ONLY, and clnz reads it",
                        what);
    return CLNZ_SUCCESS;
}

cl_mem_flags mem_flags_or(cl_mem buf, cl_mem_flags unknown)
{
    cl_mem_flags flags = 0;
    return mem_flags(buf, &flags) == CL_SUCCESS ? flags : unknown;
}

clnz_status buffer_readable(clnz_context *ctx, cl_mem buf, const char *what, const char *why)
{
    cl_mem_flags flags = 0;
    cl_int e = mem_flags(buf, &flags);
    if (e)
        return CL_CHECK(ctx, e, "clGetMemObjectInfo(flags)");
    if (flags & CL_MEM_WRITE_ONLY)
        return ctx_fail(ctx, CLNZ_ERROR_INVALID_ARGUMENT,
                        "the %s is CL_MEM_WRITE_ONLY, and clnz reads it %s", what, why);
    return CLNZ_SUCCESS;
}

clnz_status tensor_base(clnz_context *ctx, const tensor_info *info, cl_mem buf, size_t byte_off,
                        const char *what, int64_t *base)
{
    if (!buf)
        return ctx_fail(ctx, CLNZ_ERROR_INVALID_ARGUMENT, "%s buffer is NULL", what);
    clnz_status st = mem_usable(ctx, buf, what, CL_MEM_WRITE_ONLY);
    if (st)
        return st;
    if (byte_off % info->elem)
        return ctx_fail(ctx, CLNZ_ERROR_INVALID_ARGUMENT,
                        "%s offset %zu is not a multiple of the element size %zu", what, byte_off,
                        info->elem);
    *base = (int64_t)(byte_off / info->elem);
    if (info->n == 0)
        return CLNZ_SUCCESS;
    size_t size = 0;
    cl_int e = clGetMemObjectInfo(buf, CL_MEM_SIZE, sizeof size, &size, NULL);
    if (e)
        return CL_CHECK(ctx, e, "clGetMemObjectInfo(size)");
    if (*base + info->min_off < 0 ||
        (uint64_t)(*base + info->max_off + 1) * info->elem > (uint64_t)size)
        return ctx_fail(ctx, CLNZ_ERROR_INVALID_ARGUMENT,
                        "the %s reaches outside its buffer (%zu bytes)", what, size);
    return CLNZ_SUCCESS;
}

clnz_status tensor_meta_buffer(clnz_context *ctx, const tensor_info *info, cl_mem *out)
{
    cl_long meta[2 * CLNZ_MAX_RANK];
    for (int d = 0; d < info->krank; ++d) {
        meta[d] = info->shape[d];
        meta[info->krank + d] = info->strides[d];
    }
    size_t bytes = 2 * (size_t)info->krank * sizeof(cl_long);
    for (int i = 0; i < META_MEMO_SLOTS; ++i) {
        meta_memo *m = &ctx->meta_memo[i];
        if (m->buf && m->krank == info->krank && memcmp(m->meta, meta, bytes) == 0) {
            if (clRetainMemObject(m->buf) != CL_SUCCESS) { /* the slot's handle is bad */
                m->buf = NULL;
                break;
            }
            *out = m->buf; /* the caller releases it, as a new one */
            return CLNZ_SUCCESS;
        }
    }
    cl_int e = CL_SUCCESS;
    *out = clCreateBuffer(ctx->cl, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, bytes, meta, &e);
    if (e)
        return CL_CHECK(ctx, e, "clCreateBuffer(shape)");
    /* the slot's old buffer lives on while a queued kernel holds it */
    meta_memo *m = &ctx->meta_memo[ctx->meta_memo_next++ % META_MEMO_SLOTS];
    if (m->buf)
        clReleaseMemObject(m->buf);
    if (clRetainMemObject(*out) != CL_SUCCESS) {
        m->buf = NULL;
        return CLNZ_SUCCESS;
    }
    m->buf = *out;
    m->krank = info->krank;
    memcpy(m->meta, meta, bytes);
    return CLNZ_SUCCESS;
}

void tensor_meta_release_all(clnz_context *ctx)
{
    for (int i = 0; i < META_MEMO_SLOTS; ++i)
        if (ctx->meta_memo[i].buf)
            clReleaseMemObject(ctx->meta_memo[i].buf);
    memset(ctx->meta_memo, 0, sizeof ctx->meta_memo);
}

clnz_status buffer_check(clnz_context *ctx, cl_mem buf, const char *what, size_t off,
                         uint64_t count, size_t elem)
{
    if (!buf)
        return ctx_fail(ctx, CLNZ_ERROR_INVALID_ARGUMENT, "%s buffer is NULL", what);
    /* every buffer checked here is written, but scan's input */
    int reads = strcmp(what, "input") == 0;
    clnz_status st = mem_usable(ctx, buf, what, reads ? CL_MEM_WRITE_ONLY : CL_MEM_READ_ONLY);
    if (st)
        return st;
    if (off % elem)
        return ctx_fail(ctx, CLNZ_ERROR_INVALID_ARGUMENT,
                        "%s offset %zu is not a multiple of %zu bytes", what, off, elem);
    size_t size = 0;
    cl_int e = clGetMemObjectInfo(buf, CL_MEM_SIZE, sizeof size, &size, NULL);
    if (e)
        return CL_CHECK(ctx, e, "clGetMemObjectInfo");
    if (off > size || count > (size - off) / elem)
        return ctx_fail(ctx, CLNZ_ERROR_INVALID_ARGUMENT,
                        "%s buffer of %zu bytes is too small for %llu elements of %zu bytes at "
                        "offset %zu",
                        what, size, (unsigned long long)count, elem, off);
    return CLNZ_SUCCESS;
}

cl_mem mem_root(cl_mem buf, size_t *off)
{
    size_t origin = 0;
    cl_mem parent = mem_parent(buf, &origin);
    if (!parent)
        return buf;
    *off += origin;
    return parent;
}

/* Where a span's bytes lie: a sub-buffer's in its parent, so that two
 * views of one buffer compare. */
static mem_span span_root(mem_span s)
{
    size_t origin = 0;
    cl_mem root = mem_root(s.buf, &origin);
    s.buf = root;
    s.lo += origin;
    s.hi += origin;
    return s;
}

/* `reads`: o is what the call reads, else another of its writes. */
static clnz_status span_clash(clnz_context *ctx, const mem_span *w, const mem_span *o, int reads)
{
    if (!w->buf || !o->buf || w->lo >= w->hi || o->lo >= o->hi)
        return CLNZ_SUCCESS;
    mem_span a = span_root(*w), b = span_root(*o);
    if (a.buf != b.buf || a.hi <= b.lo || b.hi <= a.lo)
        return CLNZ_SUCCESS;
    /* the bytes are counted in the buffer both lie in: a sub-buffer's parent */
    const char *sub = " of the parent of its sub-buffer";
    return ctx_fail(ctx, CLNZ_ERROR_INVALID_ARGUMENT,
                    "the %s (bytes %llu..%llu%s) and the %s (bytes %llu..%llu%s) overlap: %s",
                    w->what, (unsigned long long)a.lo, (unsigned long long)a.hi - 1,
                    a.buf != w->buf ? sub : " of its buffer", o->what, (unsigned long long)b.lo,
                    (unsigned long long)b.hi - 1, b.buf != o->buf ? sub : "",
                    reads ? "clnz would write what it reads" : "clnz would write both at once");
}

mem_span tensor_span(cl_mem buf, const tensor_info *t, int64_t base, const char *what)
{
    mem_span s = {buf, 0, 0, what};
    if (t->n) {
        s.lo = (uint64_t)(base + t->min_off) * t->elem;
        s.hi = (uint64_t)(base + t->max_off + 1) * t->elem;
    }
    return s;
}

clnz_status spans_apart(clnz_context *ctx, const mem_span *writes, int n_writes,
                        const mem_span *reads, int n_reads)
{
    clnz_status st = CLNZ_SUCCESS;
    for (int i = 0; i < n_writes && !st; ++i) {
        for (int j = i + 1; j < n_writes && !st; ++j)
            st = span_clash(ctx, &writes[i], &writes[j], 0);
        for (int j = 0; j < n_reads && !st; ++j)
            st = span_clash(ctx, &writes[i], &reads[j], 1);
    }
    return st;
}

void shape_text(int rank, const int64_t *shape, char *buf, size_t n)
{
    size_t len = (size_t)snprintf(buf, n, "(");
    for (int d = 0; d < rank && len < n; ++d)
        len += (size_t)snprintf(buf + len, n - len, "%s%lld", d ? ", " : "",
                                (long long)shape[d]);
    if (len < n)
        snprintf(buf + len, n - len, rank == 1 ? ",)" : ")");
}
