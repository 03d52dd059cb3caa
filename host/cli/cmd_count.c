/* cmd_count.c: `clnz count`, the number of selected elements (or pixels),
 * or with --axis their counts along axes (np.count_nonzero(x, axis)). */
#include "cli/cli.h"
#include "io/io.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char usage_count[] =
    "usage: clnz count INPUT [--pred OP:VALUE] [--channels any|all] [--device SEL]\n"
    "                  [--axis A[,B...]] [--keepdims] [-o COUNTS.npy] [--format npy|csv|txt]\n"
    "\n"
    "Prints the number of elements of INPUT that are nonzero, or that satisfy --pred,\n"
    "as one decimal line; with --channels, the number of such pixels (see nonzero).\n"
    "\n"
    "  --axis A[,B...]    count along these axes only (negative from the end), as\n"
    "                     np.count_nonzero(x, axis): int64 counts of INPUT's shape\n"
    "                     without them, printed one line per row (up to 2 dimensions)\n"
    "  --keepdims         keep the counted axes as 1s\n"
    "  -o COUNTS.npy      write the count (a 0-d int64 array) or the counts to a file\n"
    "                     instead of printing them\n"
    CLI_USAGE_PIPES;

/* counted[d] = 1 for each dimension --axis names (all without --axis), by
 * numpy's rules: negative from the end, each once; a lone 0 or -1 counts
 * a 0-d input whole, as numpy's (and torch's) reductions take it. EXIT_OK
 * or a usage error. */
static int counted_axes(const cli_args *a, int rank, int counted[CLNZ_MAX_RANK])
{
    for (int d = 0; d < CLNZ_MAX_RANK; ++d)
        counted[d] = a->n_axes < 0;
    if (rank == 0 && a->n_axes == 1 && (a->axes[0] == 0 || a->axes[0] == -1))
        return EXIT_OK;
    for (int k = 0; k < a->n_axes; ++k) {
        int d = a->axes[k] < 0 ? a->axes[k] + rank : a->axes[k];
        if (d < 0 || d >= rank)
            return fail(EXIT_USAGE, "--axis %d is out of bounds for an input of %d dimension%s",
                        a->axes[k], rank, rank == 1 ? "" : "s");
        if (counted[d])
            return fail(EXIT_USAGE, "--axis names dimension %d twice", d);
        counted[d] = 1;
    }
    return EXIT_OK;
}

/* The counts of t along the counted axes into *counts (int64): a view
 * with the kept axes first is a batch of items, counted without a copy. */
static clnz_status count_along(clnz_context *ctx, const npy_array *arr, const clnz_predicate *pred,
                               const int counted[CLNZ_MAX_RANK], clnz_array *counts)
{
    int64_t shape[CLNZ_MAX_RANK], strides[CLNZ_MAX_RANK];
    int n = 0, kept = 0;
    for (int pass = 0; pass < 2; ++pass) /* kept axes, then counted ones */
        for (int d = 0; d < arr->rank; ++d)
            if (counted[d] == pass) {
                shape[n] = arr->shape[d];
                strides[n++] = arr->strides[d];
                kept += !pass;
            }
    clnz_tensor t = {arr->dtype, arr->rank, shape, strides};
    return clnz_count_batched(ctx, &t, arr->data, pred, kept, counts);
}

int cmd_count(int argc, char **argv)
{
    cli_args a;
    npy_array arr;
    clnz_context *ctx;
    out_set outs = {0};
    int rc = cli_start(argc, argv, 0, &a, &arr, &ctx, &outs);
    if (rc)
        return cli_stop(rc, usage_count);
    int counted[CLNZ_MAX_RANK], n_kept = 0;
    rc = counted_axes(&a, arr.rank, counted);
    /* the output's shape: the kept extents (counts' shape), or with
     * --keepdims every dimension, the counted ones as 1s */
    int64_t shape[CLNZ_MAX_RANK];
    int ndim = 0;
    for (int d = 0; d < arr.rank && !a.channels; ++d) {
        n_kept += !counted[d];
        if (a.keepdims || !counted[d])
            shape[ndim++] = counted[d] ? 1 : arr.shape[d];
    }
    /* printed as text (the count as one line, as np.savetxt writes it)
     * unless -o or --format asks otherwise */
    int out = a.output ? a.out_index[0] : rc ? -1 : cli_add_output(&outs, "-");
    if (!rc && out < 0)
        rc = EXIT_FAIL;
    out_format format = a.format_given || a.output ? a.format : OUT_TXT;
    char deep[CLI_ERR_MAX];
    if (!rc && text_too_deep(format, ndim, deep, sizeof deep)) /* before any counting */
        rc = a.format_given ? fail(EXIT_USAGE, "%s", deep)
                            : fail(EXIT_USAGE,
                                   "the counts have %d dimensions, more than text holds: write "
                                   "them with -o COUNTS.npy",
                                   ndim);
    clnz_tensor t = npy_tensor(&arr);
    int64_t count = 0;
    clnz_array counts = {0};
    clnz_status st = CLNZ_SUCCESS;
    if (rc) {
        /* a usage error, printed */
    } else if (a.channels) { /* pixels: the true count of a nonzero_static
                              * of size 0, which runs the counting pass alone */
        clnz_result res;
        a.opts.layout = CLNZ_LAYOUT_FLAT;
        a.opts.has_size = 1;
        a.opts.size = 0;
        st = clnz_nonzero_channels(ctx, &t, arr.data, &a.pred,
                                   (clnz_channel_rule)(a.channels - 1), &a.opts, &res);
        count = res.count;
        clnz_result_free(&res);
    } else if (n_kept) {
        st = count_along(ctx, &arr, &a.pred, counted, &counts);
    } else {
        st = clnz_count(ctx, &t, arr.data, &a.pred, &count);
    }
    char q[IO_QUOTE_MAX];
    if (st)
        rc = lib_fail(ctx, st, io_quote(a.input, q, sizeof q));
    if (!rc)
        rc = cli_put(&outs, out, format, CLNZ_I64, ndim, shape, n_kept ? counts.data : &count);
    if (!rc)
        rc = cli_commit(&outs);
    out_discard(&outs);
    clnz_array_free(&counts);
    cli_release(ctx, rc);
    npy_free(&arr);
    return rc;
}
