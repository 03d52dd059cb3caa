/* where.c: where(cond, x, y), element-wise with numpy/torch broadcasting,
 * device-resident and blocking (kernels/where.cl). Shapes and dtypes are
 * settled here, before any work; a scalar travels as a one-value buffer. */
#include "ops/ops.h"
#include "core/dtype.h"
#include "core/program.h"
#include "core/result_mem.h"
#include "core/transfer.h"
#include "slices/slices.h"

#include <math.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

#define MODE_STRIDED ABI_MODE_STRIDED
#define MODE_CONTIGUOUS ABI_MODE_CONTIGUOUS
#define MODE_SCALAR ABI_MODE_SCALAR

clnz_operand clnz_operand_array(const clnz_tensor *t)
{
    clnz_operand o;
    memset(&o, 0, sizeof o);
    o.array = t;
    return o;
}

static clnz_operand operand_scalar(clnz_scalar v)
{
    clnz_operand o;
    memset(&o, 0, sizeof o);
    o.value = v;
    return o;
}

clnz_operand clnz_operand_int(int64_t v) { return operand_scalar(clnz_scalar_int(v)); }
clnz_operand clnz_operand_uint(uint64_t v) { return operand_scalar(clnz_scalar_uint(v)); }
clnz_operand clnz_operand_float(double v) { return operand_scalar(clnz_scalar_float(v)); }

/* Everything the kernel needs, settled before any work. */
typedef struct {
    tensor_info cond, x, y; /* x, y: unused for scalars */
    pred_keys keys;
    clnz_dtype dtype;
    int rank; /* of the result (0: one element) */
    int64_t shape[CLNZ_MAX_RANK];
    uint64_t n;
    int mode[3]; /* cond, x, y */
    cl_long meta[4 * CLNZ_MAX_RANK]; /* shape, then the strides of cond, x, y */
    uint64_t scalar_bits[2];         /* x's and y's, when scalars */
} where_plan;

static const char *const operand_names[3] = {"cond", "x", "y"};

/* Broadcasts `shape` (the result so far, rank *rank) with an operand's. */
static clnz_status broadcast(clnz_context *ctx, int *rank, int64_t *shape, const tensor_info *t,
                             const char *name, const char *so_far)
{
    int r = *rank > t->rank ? *rank : t->rank;
    int64_t out[CLNZ_MAX_RANK];
    for (int k = 1; k <= r; ++k) { /* k-th dimension from the right */
        int64_t a = k <= *rank ? shape[*rank - k] : 1, b = k <= t->rank ? t->shape[t->rank - k] : 1;
        if (a != b && a != 1 && b != 1) {
            char as[200], bs[200];
            shape_text(*rank, shape, as, sizeof as);
            shape_text(t->rank, t->shape, bs, sizeof bs);
            return ctx_fail(ctx, CLNZ_ERROR_SHAPE_MISMATCH,
                            "shapes do not broadcast: %s %s against %s %s (dimension -%d is %lld "
                            "and %lld)",
                            name, bs, so_far, as, k, (long long)b, (long long)a);
        }
        out[r - k] = a == 1 ? b : a;
    }
    *rank = r;
    memcpy(shape, out, (size_t)r * sizeof *out);
    return CLNZ_SUCCESS;
}

/* A scalar as the bits of one `dtype` element: a float dtype takes any
 * number, rounded to nearest once (as numpy casts an int64 or a Python
 * float); an integer dtype only one it holds exactly. */
static clnz_status scalar_bits(clnz_context *ctx, const clnz_operand *o, clnz_dtype dtype,
                               const char *name, uint64_t *bits)
{
    double f = o->value.kind == CLNZ_VALUE_FLOAT ? o->value.f
               : o->value.kind == CLNZ_VALUE_UINT ? (double)o->value.u
                                            : (double)o->value.i;
    if (dtype_is_float(dtype)) {
        if (dtype == CLNZ_F16) {
            *bits = clnz_double_to_half(f);
        } else if (dtype == CLNZ_F32) {
            /* an integer straight to float: through double it could round
             * twice (2^60 + 2^36 + 1 would give 2^60, not 2^60 + 2^37) */
            float g = o->value.kind == CLNZ_VALUE_FLOAT ? (float)f
                      : o->value.kind == CLNZ_VALUE_UINT ? (float)o->value.u
                                                   : (float)o->value.i;
            uint32_t b;
            memcpy(&b, &g, sizeof b);
            *bits = b;
        } else {
            memcpy(bits, &f, sizeof f);
        }
        return CLNZ_SUCCESS;
    }
    /* integers and bool: the exact value must be in the dtype's range */
    const dtype_info *range = dtype_of(dtype);
    int neg;
    uint64_t mag;
    if (o->value.kind == CLNZ_VALUE_FLOAT) {
        if (!isfinite(f) || f != floor(f) || f < -0x1p63 || f >= 0x1p64)
            goto no_fit;
        neg = f < 0;
        mag = neg ? (uint64_t)(-f) : (uint64_t)f;
    } else if (o->value.kind == CLNZ_VALUE_UINT) {
        neg = 0, mag = o->value.u;
    } else {
        neg = o->value.i < 0;
        mag = neg ? (uint64_t)0 - (uint64_t)o->value.i : (uint64_t)o->value.i;
    }
    if (neg ? mag > (uint64_t)0 - (uint64_t)range->min : mag > range->max)
        goto no_fit;
    *bits = neg ? (uint64_t)0 - mag : mag;
    return CLNZ_SUCCESS;
no_fit:
    if (o->value.kind == CLNZ_VALUE_FLOAT)
        return ctx_fail(ctx, CLNZ_ERROR_INVALID_VALUE,
                        "%s = %.17g does not fit %s, the result's dtype", name, f,
                        clnz_dtype_name(dtype));
    return ctx_fail(ctx, CLNZ_ERROR_INVALID_VALUE,
                    "%s = %s%llu does not fit %s, the result's dtype", name,
                    o->value.kind == CLNZ_VALUE_INT && o->value.i < 0 ? "-" : "",
                    (unsigned long long)(o->value.kind == CLNZ_VALUE_UINT ? o->value.u
                                         : o->value.i < 0 ? (uint64_t)0 - (uint64_t)o->value.i
                                                          : (uint64_t)o->value.i),
                    clnz_dtype_name(dtype));
}

/* An operand's mode and its strides over the result's dimensions (0 where
 * it is broadcast). */
static int operand_layout(const where_plan *w, const tensor_info *t, cl_long *strides)
{
    int same = t->rank <= w->rank, any = 0;
    for (int d = 0; d < w->rank; ++d) {
        int k = d - (w->rank - t->rank); /* the operand's dimension, if any */
        int64_t e = k >= 0 ? t->shape[k] : 1;
        strides[d] = (k >= 0 && e != 1) ? t->strides[k] : 0;
        any |= strides[d] != 0;
        same &= e == w->shape[d];
    }
    if (!any)
        return MODE_SCALAR;
    return same && t->contiguous ? MODE_CONTIGUOUS : MODE_STRIDED;
}

static clnz_status where_plan_make(clnz_context *ctx, const clnz_tensor *cond,
                                   const clnz_predicate *pred, const clnz_operand *x,
                                   const clnz_operand *y, where_plan *w)
{
    memset(w, 0, sizeof *w);
    if (!x || !y)
        return ctx_fail(ctx, CLNZ_ERROR_INVALID_ARGUMENT, "x or y is NULL");
    clnz_predicate nonzero = clnz_pred_nonzero();
    clnz_status st = tensor_check(ctx, cond, &w->cond);
    if (!st)
        st = pred_to_keys(ctx, w->cond.dtype, pred ? pred : &nonzero, &w->keys);
    if (!st && x->array)
        st = tensor_check(ctx, x->array, &w->x);
    if (!st && y->array)
        st = tensor_check(ctx, y->array, &w->y);
    const clnz_operand *ops[2] = {x, y};
    for (int k = 0; k < 2 && !st; ++k)
        if (!ops[k]->array && (unsigned)ops[k]->value.kind > CLNZ_VALUE_FLOAT)
            st = ctx_fail(ctx, CLNZ_ERROR_INVALID_ARGUMENT, "%s: unknown scalar value kind %d",
                          operand_names[k + 1], (int)ops[k]->value.kind);
    if (st)
        return st;
    /* the result's shape */
    w->rank = w->cond.rank;
    memcpy(w->shape, w->cond.shape, sizeof w->shape);
    if (x->array)
        st = broadcast(ctx, &w->rank, w->shape, &w->x, "x", "cond");
    if (!st && y->array)
        st = broadcast(ctx, &w->rank, w->shape, &w->y, "y", x->array ? "cond and x" : "cond");
    if (st)
        return st;
    /* the broadcast shape can hold more than any operand: every product
     * checked (three 4 MiB operands reach (2^22)^3) */
    w->n = 1;
    for (int d = 0; d < w->rank; ++d) {
        uint64_t e = (uint64_t)w->shape[d];
        if (e && w->n > (UINT64_C(1) << 62) / e) {
            for (int k = d + 1; k < w->rank; ++k)
                if (w->shape[k] == 0) /* an empty result is fine whatever the rest */
                    e = 0;
            if (e) {
                char rs[300];
                shape_text(w->rank, w->shape, rs, sizeof rs);
                return ctx_fail(ctx, CLNZ_ERROR_TOO_LARGE,
                                "the broadcast shape %s holds more than 2^62 elements", rs);
            }
        }
        w->n *= e;
    }
    /* the result's dtype */
    if (x->array && y->array && w->x.dtype != w->y.dtype)
        return ctx_fail(ctx, CLNZ_ERROR_DTYPE_MISMATCH,
                        "x is %s and y is %s: where needs one dtype (convert one of them)",
                        clnz_dtype_name(w->x.dtype), clnz_dtype_name(w->y.dtype));
    if (x->array)
        w->dtype = w->x.dtype;
    else if (y->array)
        w->dtype = w->y.dtype;
    else
        w->dtype = (x->value.kind == CLNZ_VALUE_FLOAT || y->value.kind == CLNZ_VALUE_FLOAT) ? CLNZ_F64
                                                                                : CLNZ_I64;
    for (int k = 0; k < 2; ++k)
        if (!ops[k]->array) {
            st = scalar_bits(ctx, ops[k], w->dtype, operand_names[k + 1], &w->scalar_bits[k]);
            if (st)
                return st;
        }
    /* how each operand reaches element i, and the kernel's meta */
    const tensor_info *infos[3] = {&w->cond, &w->x, &w->y};
    int r = w->rank ? w->rank : 1;
    for (int d = 0; d < r; ++d)
        w->meta[d] = w->rank ? w->shape[d] : 1;
    for (int k = 0; k < 3; ++k) {
        if (k > 0 && !ops[k - 1]->array) {
            w->mode[k] = MODE_SCALAR;
            continue;
        }
        w->mode[k] = operand_layout(w, infos[k], &w->meta[(k + 1) * r]);
    }
    return CLNZ_SUCCESS;
}

clnz_status clnz_where_result(clnz_context *ctx, const clnz_tensor *cond, const clnz_operand *x,
                              const clnz_operand *y, clnz_dtype *dtype, int *rank,
                              int64_t *shape)
{
    CTX_ENTER(ctx);
    if (!dtype || !rank || !shape)
        return ctx_fail(ctx, CLNZ_ERROR_INVALID_ARGUMENT, "dtype, rank or shape is NULL");
    where_plan *w = malloc(sizeof *w);
    if (!w)
        return ctx_fail(ctx, CLNZ_ERROR_OUT_OF_HOST_MEMORY, "out of host memory");
    clnz_status st = where_plan_make(ctx, cond, NULL, x, y, w);
    if (!st) {
        *dtype = w->dtype;
        *rank = w->rank;
        memcpy(shape, w->shape, (size_t)w->rank * sizeof *shape);
    }
    free(w);
    return st;
}

/* Operand buffers as the kernel reads them: the caller's, or a one-value
 * buffer for a scalar (owned[k] set). */
typedef struct {
    cl_mem buf[3];
    int64_t base[3];
    int owned[3];
} where_inputs;

void where_program(clnz_dtype cond, int pred_nonzero, size_t value_bytes, program_ref *r)
{
    program_element(r, "where", cond, pred_nonzero);
    program_append(r, " -DVALUE_BYTES=%zu", value_bytes);
}

static clnz_status where_launch(chain *ch, const where_plan *w, where_inputs *in, cl_mem out,
                                uint64_t out_off)
{
    clnz_context *ctx = ch->ctx;
    if (w->n == 0)
        return CLNZ_SUCCESS;
    size_t vb = clnz_dtype_size(w->dtype);
    for (int k = 1; k < 3; ++k) {
        if (in->buf[k])
            continue;
        cl_int e = CL_SUCCESS;
        in->buf[k] = clCreateBuffer(ctx->cl, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, vb,
                                    (void *)&w->scalar_bits[k - 1], &e);
        in->owned[k] = 1;
        in->base[k] = 0;
        if (e)
            return CL_CHECK(ctx, e, "clCreateBuffer(scalar)");
    }
    int r = w->rank ? w->rank : 1;
    cl_int e = CL_SUCCESS;
    cl_mem meta = clCreateBuffer(ctx->cl, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR,
                                 4 * (size_t)r * sizeof(cl_long), (void *)w->meta, &e);
    clnz_status st = CL_CHECK(ctx, e, "clCreateBuffer(shape)");
    if (st)
        return st;
    size_t items = plan_items(ctx, TUNE_MASK);
    program_ref prog;
    where_program(w->cond.dtype, w->keys.nonzero, vb, &prog);
    cl_kernel k;
    launch_cfg cfg;
    st = program_kernel(ctx, &prog, "where_write", &k);
    if (!st)
        st = plan_launch(ctx, TUNE_MASK, &k, 1, items, 0, &cfg);
    if (!st) {
        cl_long cb = in->base[0], xb = in->base[1], yb = in->base[2];
        cl_int cm = w->mode[0], xm = w->mode[1], ym = w->mode[2], rank = r;
        cl_ulong n = w->n, a_out_off = out_off;
        cl_uint a_items = (cl_uint)items;
        karg args[] = {KARG(in->buf[0]), KARG(cb),     KARG(cm),          KARG(w->keys.lo),
                       KARG(w->keys.hi), KARG(w->keys.invert), KARG(in->buf[1]), KARG(xb),
                       KARG(xm),         KARG(in->buf[2]), KARG(yb),      KARG(ym),
                       KARG(n),          KARG(rank),   KARG(meta),        KARG(out),
                       KARG(a_out_off),  KARG(a_items)};
        uint64_t groups = (w->n + (uint64_t)cfg.wg * items - 1) / ((uint64_t)cfg.wg * items);
        st = set_args(ctx, k, "where_write", args, (int)(sizeof args / sizeof args[0]));
        if (!st)
            st = chain_launch(ch, k, "where_write", (size_t)groups * cfg.wg, cfg.wg);
    }
    clReleaseMemObject(meta);
    return st;
}

static void inputs_release(where_inputs *in)
{
    for (int k = 0; k < 3; ++k)
        if (in->owned[k] && in->buf[k])
            clReleaseMemObject(in->buf[k]);
}

clnz_status clnz_where_enqueue(clnz_context *ctx, const clnz_tensor *cond, cl_mem cond_buf,
                               size_t cond_offset, const clnz_predicate *pred,
                               const clnz_operand *x, cl_mem x_buf, size_t x_offset,
                               const clnz_operand *y, cl_mem y_buf, size_t y_offset,
                               cl_mem out_buf, size_t out_offset, cl_uint num_events,
                               const cl_event *wait_list, cl_event *out_event)
{
    CTX_ENTER(ctx);
    where_plan *w = malloc(sizeof *w);
    if (!w)
        return ctx_fail(ctx, CLNZ_ERROR_OUT_OF_HOST_MEMORY, "out of host memory");
    where_inputs in = {{cond_buf, NULL, NULL}, {0, 0, 0}, {0, 0, 0}};
    clnz_status st = events_check(ctx, num_events, wait_list);
    if (!st)
        st = where_plan_make(ctx, cond, pred, x, y, w);
    if (!st)
        st = tensor_base(ctx, &w->cond, cond_buf, cond_offset, "cond", &in.base[0]);
    if (!st && x->array) {
        in.buf[1] = x_buf;
        st = tensor_base(ctx, &w->x, x_buf, x_offset, "x", &in.base[1]);
    }
    if (!st && y->array) {
        in.buf[2] = y_buf;
        st = tensor_base(ctx, &w->y, y_buf, y_offset, "y", &in.base[2]);
    }
    if (!st && w->n)
        st = buffer_check(ctx, out_buf, "output", out_offset, w->n, clnz_dtype_size(w->dtype));
    if (!st && w->n) {
        mem_span out_span = {out_buf, out_offset, out_offset + w->n * clnz_dtype_size(w->dtype),
                             "output"};
        mem_span reads[3] = {tensor_span(in.buf[0], &w->cond, in.base[0], "cond"),
                             tensor_span(in.buf[1], &w->x, in.base[1], "x"),
                             tensor_span(in.buf[2], &w->y, in.base[2], "y")};
        st = spans_apart(ctx, &out_span, 1, reads, 3);
    }
    if (!st) {
        chain ch;
        chain_begin(&ch, ctx, num_events, wait_list);
        st = where_launch(&ch, w, &in, out_buf, out_offset / clnz_dtype_size(w->dtype));
        st = chain_end(&ch, st, out_event);
    }
    inputs_release(&in);
    free(w);
    return st;
}

clnz_status where_direct(clnz_context *ctx, const clnz_tensor *cond, const void *cond_data,
                         const clnz_predicate *pred, const clnz_operand *x, const void *x_data,
                         const clnz_operand *y, const void *y_data, clnz_array *out)
{
    where_plan *w = malloc(sizeof *w);
    if (!w)
        return ctx_fail(ctx, CLNZ_ERROR_OUT_OF_HOST_MEMORY, "out of host memory");
    where_inputs in = {{NULL, NULL, NULL}, {0, 0, 0}, {0, 0, 0}};
    cl_mem outb = NULL;
    void *host = NULL;
    chain ch;
    chain_begin_own(&ch, ctx); /* the call waits for its own commands */
    clnz_status st;
    TRY(where_plan_make(ctx, cond, pred, x, y, w));
    const tensor_info *infos[3] = {&w->cond, &w->x, &w->y};
    const void *datas[3] = {cond_data, x_data, y_data};
    for (int k = 0; k < 3; ++k) {
        if (k > 0 && !(k == 1 ? x : y)->array)
            continue;
        in.owned[k] = 1;
        TRY(upload(ctx, infos[k], datas[k], &in.buf[k], &in.base[k]));
    }
    size_t vb = clnz_dtype_size(w->dtype);
    if (w->n > ctx->max_alloc / vb)
        TRY(ctx_fail(ctx, CLNZ_ERROR_TOO_LARGE,
                     "the result's %llu elements exceed the device's largest allocation",
                     (unsigned long long)w->n));
    size_t bytes = (size_t)w->n * vb;
    TRY(result_alloc(ctx, bytes, &host, &outb, NULL));
    if (bytes) {
        TRY(where_launch(&ch, w, &in, outb, 0));
        TRY(fetch_result(&ch, outb, bytes, host, ctx->is_cpu));
    }
    out->data = host;
    host = NULL;
    out->dtype = w->dtype;
    out->rank = w->rank;
    memcpy(out->shape, w->shape, (size_t)w->rank * sizeof *out->shape);
done:
    st = chain_end(&ch, st, NULL);
    inputs_release(&in);
    if (outb)
        clReleaseMemObject(outb);
    free(host);
    free(w);
    return st;
}

typedef struct {
    const clnz_predicate *pred;
    const clnz_operand *x, *y;
    char *out; /* the result, C order */
    int rank;
    const int64_t *shape;
    size_t vb;
} where_slices;

/* One slice of the result from the same slice of each operand array. */
static clnz_status where_slice(clnz_context *ctx, void *user, const view *s, const box *at)
{
    where_slices *w = user;
    clnz_tensor ts[3];
    int n = 1 + (w->x->array != NULL) + (w->y->array != NULL);
    for (int i = 0; i < n; ++i)
        ts[i] = view_tensor(&s[i]);
    clnz_operand xo = *w->x, yo = *w->y;
    int i = 1;
    if (w->x->array)
        xo.array = &ts[i++];
    if (w->y->array)
        yo.array = &ts[i];
    clnz_array a;
    clnz_status st = where_direct(ctx, &ts[0], s[0].data, w->pred, &xo,
                                  w->x->array ? s[1].data : NULL, &yo,
                                  w->y->array ? s[i].data : NULL, &a);
    if (st)
        return st;
    scatter_block(w->out, w->rank, w->shape, at, a.data, w->vb);
    clnz_array_free(&a);
    return CLNZ_SUCCESS;
}

/* An operand seen with the result's shape: its dimensions aligned from the
 * right, stretched ones with stride 0. */
static void view_broadcast(const tensor_info *t, const void *data, int rank, const int64_t *shape,
                           view *v)
{
    view_make(t, data, v);
    v->rank = rank;
    for (int e = 0; e < rank; ++e) {
        int j = e - (rank - t->rank);
        v->shape[e] = shape[e];
        v->strides[e] = j < 0 || t->shape[j] != shape[e] ? 0 : t->strides[j];
    }
}

clnz_status clnz_where(clnz_context *ctx, const clnz_tensor *cond, const void *cond_data,
                       const clnz_predicate *pred, const clnz_operand *x, const void *x_data,
                       const clnz_operand *y, const void *y_data, clnz_array *out)
{
    CTX_ENTER(ctx);
    if (!out)
        return ctx_fail(ctx, CLNZ_ERROR_INVALID_ARGUMENT, "out is NULL");
    memset(out, 0, sizeof *out);
    clnz_dtype dt;
    int rank;
    int64_t shape[CLNZ_MAX_RANK];
    clnz_status st = clnz_where_result(ctx, cond, x, y, &dt, &rank, shape);
    if (st)
        return st;
    const clnz_tensor *arrays[3] = {cond, x->array, y->array};
    const void *datas[3] = {cond_data, x_data, y_data};
    view views[3];
    int n_views = 0, fits = 1;
    uint64_t n = 1;
    for (int d = 0; d < rank; ++d)
        n *= (uint64_t)shape[d];
    size_t vb = clnz_dtype_size(dt);
    for (int i = 0; i < 3; ++i) {
        tensor_info t;
        view v;
        int f;
        if (!arrays[i])
            continue;
        st = host_view(ctx, arrays[i], datas[i], &t, &v, &f);
        if (st)
            return st;
        fits &= f;
        view_broadcast(&t, datas[i], rank, shape, &views[n_views++]);
    }
    if (fits && n <= ctx->max_alloc / vb)
        return where_direct(ctx, cond, cond_data, pred, x, x_data, y, y_data, out);
    char *host = alloc_result((size_t)(n * vb));
    if (!host)
        return ctx_fail(ctx, CLNZ_ERROR_OUT_OF_HOST_MEMORY, "cannot allocate the result");
    if (n) { /* (an empty result of operands too large to upload: nothing to cut) */
        where_slices w = {pred, x, y, host, rank, shape, vb};
        slicing s = {views, n_views, ctx->max_alloc, vb, 0};
        st = slices_each(ctx, &s, where_slice, &w);
    }
    if (st) {
        free(host);
        return st;
    }
    out->data = host;
    out->dtype = dt;
    out->rank = rank;
    memcpy(out->shape, shape, (size_t)rank * sizeof *shape);
    return CLNZ_SUCCESS;
}
