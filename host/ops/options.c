/* options.c: nonzero's options (layout, order, index type, width, static
 * size) checked before any work, and what the nonzero-family calls do with
 * them: a job's coordinate half, output checks, results. */
#include "ops/ops.h"
#include "core/result_mem.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

size_t index_bytes(clnz_index_type t) { return t == CLNZ_INDEX_INT64 ? 8 : 4; }

/* Each index type's name and the values it holds: an index reaches max, a
 * fill any value from min (uint32's -1 is 4294967295). */
static const struct {
    const char *name;
    int64_t min;
    uint64_t max;
} index_range[] = {{"int64", INT64_MIN, INT64_MAX}, {"int32", INT32_MIN, INT32_MAX},
                   {"uint32", -1, UINT32_MAX}};

/* The rank without leading size-1 dimensions: the fewest coordinates that
 * tell the entries apart. */
static int effective_rank(const tensor_info *t)
{
    int effective = t->rank;
    for (int d = 0; d < t->rank && t->shape[d] == 1; ++d)
        --effective;
    return effective;
}

void clnz_nonzero_options_init(clnz_nonzero_options *o)
{
    if (!o)
        return;
    memset(o, 0, sizeof *o);
    o->layout = CLNZ_LAYOUT_ROWS;
    o->index_type = CLNZ_INDEX_INT64;
    o->fill = -1;
}

const clnz_nonzero_options *nz_options_or_defaults(const clnz_nonzero_options *opts,
                                                   clnz_nonzero_options *defaults)
{
    clnz_nonzero_options_init(defaults);
    return opts ? opts : defaults;
}

clnz_status nz_result_start(clnz_context *ctx, clnz_result *res)
{
    if (!res)
        return ctx_fail(ctx, CLNZ_ERROR_INVALID_ARGUMENT, "result is NULL");
    memset(res, 0, sizeof *res);
    return CLNZ_SUCCESS;
}

int clnz_nonzero_width(const clnz_nonzero_options *o, int rank)
{
    if (o && o->layout == CLNZ_LAYOUT_FLAT)
        return 1;
    if (o && o->width)
        return o->width;
    return (o && o->layout == CLNZ_LAYOUT_COLUMNS && rank == 0) ? 1 : rank;
}

#define SAY(st, ...) (snprintf(msg, msg_size, __VA_ARGS__), (st))

/* The checks that need no input, for clnz_nonzero_options_check and every
 * call, in two parts: the options' form here (t: the call's input, for
 * messages that name its rank; NULL for none), their values below. The
 * reason goes to msg. */
static clnz_status check_form(const clnz_nonzero_options *o, const tensor_info *t, char *msg,
                               size_t msg_size)
{
    if ((unsigned)o->layout > CLNZ_LAYOUT_FLAT)
        return SAY(CLNZ_ERROR_INVALID_ARGUMENT, "unknown layout %d", (int)o->layout);
    if ((unsigned)o->order > CLNZ_ORDER_XY)
        return SAY(CLNZ_ERROR_INVALID_ARGUMENT, "unknown order %d", (int)o->order);
    if (o->order == CLNZ_ORDER_XY && o->layout == CLNZ_LAYOUT_FLAT)
        return SAY(CLNZ_ERROR_INVALID_ARGUMENT,
                   "order xy reverses coordinates: it needs the rows or columns layout");
    if ((unsigned)o->index_type > CLNZ_INDEX_UINT32)
        return SAY(CLNZ_ERROR_INVALID_ARGUMENT, "unknown index type %d", (int)o->index_type);
    if (o->width && o->layout == CLNZ_LAYOUT_FLAT) /* as order xy: never ignored silently */
        return SAY(CLNZ_ERROR_INVALID_WIDTH,
                   "width %d counts coordinates per entry: it needs the rows or columns layout "
                   "(flat has one index per entry: width 0)",
                   o->width);
    /* Each message says which widths this input takes: a width out of any
     * range (-3, 33) is not about the input's rank at all. */
    if (o->width < 0 || o->width > CLNZ_MAX_RANK) {
        if (!t)
            return SAY(CLNZ_ERROR_INVALID_WIDTH,
                       "width %d is not a coordinate width: the widths are 0 (the input's rank) "
                       "or 1..%d coordinates per entry",
                       o->width, CLNZ_MAX_RANK);
        int lowest = effective_rank(t) > 1 ? effective_rank(t) : 1;
        return SAY(CLNZ_ERROR_INVALID_WIDTH,
                   "width %d is not a coordinate width: the widths are 0 (the input's rank, %d) "
                   "or %d..%d coordinates per entry",
                   o->width, t->rank, lowest, CLNZ_MAX_RANK);
    }
    return CLNZ_SUCCESS;
}

/* The static size and the fill: after the input's checks (an index that
 * overflows is said first). */
static clnz_status check_values(const clnz_nonzero_options *o, char *msg, size_t msg_size)
{
    if (o->has_size && o->size < 0)
        return SAY(CLNZ_ERROR_INVALID_ARGUMENT, "size %lld is negative", (long long)o->size);
    if (o->fill < index_range[o->index_type].min ||
        (o->fill > 0 && (uint64_t)o->fill > index_range[o->index_type].max))
        return SAY(CLNZ_ERROR_INVALID_VALUE, "fill value %lld does not fit %s",
                   (long long)o->fill, index_range[o->index_type].name);
    return CLNZ_SUCCESS;
}

clnz_status clnz_nonzero_options_check(const clnz_nonzero_options *o, char *msg, size_t msg_size)
{
    char none[1];
    if (!msg || !msg_size)
        msg = none, msg_size = sizeof none;
    if (!o)
        return SAY(CLNZ_ERROR_INVALID_ARGUMENT, "options are NULL");
    *msg = '\0';
    clnz_status st = check_form(o, NULL, msg, msg_size);
    return st ? st : check_values(o, msg, msg_size);
}

clnz_status nz_check_options(clnz_context *ctx, const tensor_info *t,
                             const clnz_nonzero_options *o, int *width)
{
    char why[300];
    clnz_status st = check_form(o, t, why, sizeof why);
    if (st)
        return ctx_fail(ctx, st, "%s", why);
    int effective = effective_rank(t);
    int lowest = effective > 1 ? effective : 1;
    *width = clnz_nonzero_width(o, t->rank);
    if (o->layout != CLNZ_LAYOUT_FLAT && *width < effective)
        return ctx_fail(ctx, CLNZ_ERROR_INVALID_WIDTH,
                        "width %d is below the effective rank %d of the input (rank %d without "
                        "its leading size-1 dimensions): the widths are 0 (the rank) or %d..%d",
                        *width, effective, t->rank, lowest, CLNZ_MAX_RANK);
    uint64_t max = index_range[o->index_type].max;
    const char *name = index_range[o->index_type].name;
    if (o->layout == CLNZ_LAYOUT_FLAT) {
        if (t->n > 0 && t->n - 1 > max)
            return ctx_fail(ctx, CLNZ_ERROR_INDEX_OVERFLOW,
                            "flat indices up to %llu do not fit %s",
                            (unsigned long long)(t->n - 1), name);
    } else {
        for (int d = 0; d < t->rank; ++d)
            if (t->shape[d] > 0 && (uint64_t)t->shape[d] - 1 > max)
                return ctx_fail(ctx, CLNZ_ERROR_INDEX_OVERFLOW,
                                "dimension %d of extent %lld has indices that do not fit %s", d,
                                (long long)t->shape[d], name);
    }
    st = check_values(o, why, sizeof why);
    return st ? ctx_fail(ctx, st, "%s", why) : CLNZ_SUCCESS;
}

uint64_t nz_per_entry(const clnz_nonzero_options *o, int width)
{
    return o->layout == CLNZ_LAYOUT_FLAT ? 1 : (uint64_t)width;
}

void job_coords(nz_job *job, const clnz_nonzero_options *o, int width)
{
    job->emit = ABI_EMIT_COORDS;
    job->layout = (int)o->layout;
    job->width = width;
    job->reverse = o->order == CLNZ_ORDER_XY;
    job->idx_bytes = index_bytes(o->index_type);
}

clnz_status output_check(clnz_context *ctx, cl_mem buf, size_t off, uint64_t capacity,
                         uint64_t per_entry, size_t elem)
{
    if (per_entry && capacity > UINT64_MAX / 8 / per_entry)
        return ctx_fail(ctx, CLNZ_ERROR_INVALID_ARGUMENT, "capacity is absurd");
    if (capacity * per_entry > 0)
        return buffer_check(ctx, buf, "output", off, capacity * per_entry, elem);
    if (off % elem)
        return ctx_fail(ctx, CLNZ_ERROR_INVALID_ARGUMENT, "output offset is misaligned");
    return CLNZ_SUCCESS;
}

void nz_result_fill(clnz_result *res, void *indices, const clnz_nonzero_options *o, int width,
                    uint64_t entries, uint64_t z)
{
    res->indices = indices;
    res->count = (int64_t)z;
    res->index_type = o->index_type;
    if (o->layout == CLNZ_LAYOUT_FLAT) {
        res->ndim = 1;
        res->shape[0] = (int64_t)entries;
    } else {
        res->ndim = 2;
        res->shape[0] = o->layout == CLNZ_LAYOUT_ROWS ? (int64_t)entries : width;
        res->shape[1] = o->layout == CLNZ_LAYOUT_ROWS ? width : (int64_t)entries;
    }
}

void clnz_result_free(clnz_result *res)
{
    if (!res)
        return;
    free_result(res->indices);
    res->indices = NULL;
}

void clnz_array_free(clnz_array *a)
{
    if (!a)
        return;
    free_result(a->data);
    a->data = NULL;
}
