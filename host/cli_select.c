/* cli_select.c: the clnz select and clnz where commands. */
#include "cli.h"
#include "cli_npy.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char usage_select[] =
    "usage: clnz select X -o OUTPUT.npy [--mask M] [--pred OP:VALUE] [--device P:D]\n"
    "\n"
    "Writes the values of X (.npy or image) at the selected positions, in C order, as a 1-D\n"
    "array of X's dtype (numpy: X[M != 0], np.extract; torch.masked_select).\n"
    "\n"
    "  --mask M          a .npy of X's shape, any dtype: the positions where M is\n"
    "                    nonzero (or satisfies --pred)\n"
    "  --pred OP:VALUE   OP is eq, ne, lt, le, gt or ge: the positions where X (or M)\n"
    "                    satisfies it; without --mask and --pred, where X is nonzero\n"
    "  --device P:D      use platform P, device D (see 'clnz devices')\n";

static const char usage_where[] =
    "usage: clnz where COND X Y -o OUTPUT.npy [--device P:D]\n"
    "\n"
    "Writes X where COND (.npy, any dtype) is nonzero and Y elsewhere, element-wise over\n"
    "the broadcast shape of the three (np.where, torch.where). X and Y are .npy files or\n"
    "numbers (1, -2, 0.5, 1e3, inf, nan; write ./0 for a file named 0).\n"
    "\n"
    "Broadcasting: shapes are aligned from the right and a dimension of 1 stretches.\n"
    "The result's dtype: X's and Y's when both are arrays (they must agree); the\n"
    "array's when the other is a number, which must fit it exactly (no 0.5 into an\n"
    "integer array; a float array rounds as numpy does); float64 for two numbers if\n"
    "either is written as a float, else int64.\n";

/* Writes a result array to path (temporary file, then rename). */
static int write_result(const char *path, const clnz_array *r)
{
    char err[512];
    npy_pending out = {0};
    size_t bytes = clnz_dtype_size(r->dtype);
    for (int d = 0; d < r->rank; ++d)
        bytes *= (size_t)r->shape[d];
    int rc = EXIT_OK;
    if (npy_write_tmp(path, npy_descr(r->dtype), r->rank, r->shape, r->data, bytes, &out, err,
                      sizeof err) ||
        npy_commit(&out, err, sizeof err))
        rc = fail(EXIT_FAIL, "%s", err);
    npy_discard(&out);
    return rc;
}

int cmd_select(int argc, char **argv)
{
    sel_args a;
    int rc = cli_parse_sel_args(argc, argv, "select", 1, 1, &a);
    if (rc)
        return cli_stop(rc, usage_select);
    char err[512];
    npy_array x, m;
    memset(&m, 0, sizeof m);
    if (array_read(a.positional[0], &x, err, sizeof err))
        return fail(EXIT_FAIL, "%s", err);
    if (a.mask && array_read(a.mask, &m, err, sizeof err)) {
        npy_free(&x);
        return fail(EXIT_FAIL, "%s", err);
    }
    clnz_context *ctx = NULL;
    clnz_array res = {0};
    rc = open_context(a.device, &ctx);
    if (!rc) {
        clnz_tensor xt = npy_tensor(&x), mt = npy_tensor(&m);
        clnz_status st = clnz_select(ctx, &xt, x.data, a.mask ? &mt : NULL,
                                     a.mask ? m.data : NULL, &a.pred, &res);
        rc = st ? lib_fail(ctx, st, a.positional[0]) : write_result(a.output, &res);
    }
    clnz_array_free(&res);
    clnz_context_release(ctx);
    npy_free(&x);
    if (a.mask)
        npy_free(&m);
    return rc;
}

/* An operand: a number, else a .npy file read into *arr. */
static int operand_of(const char *text, const char *name, npy_array *arr, clnz_tensor *t,
                      clnz_operand *op, int *is_array)
{
    cli_number num;
    int r = cli_parse_number(text, &num);
    *is_array = 0;
    if (r < 0)
        return fail(EXIT_USAGE, "%s '%s': the integer is outside -2^63..2^64-1", name, text);
    if (r > 0) {
        *op = num.kind == CLNZ_VALUE_INT    ? clnz_operand_int(num.i)
              : num.kind == CLNZ_VALUE_UINT ? clnz_operand_uint(num.u)
                                            : clnz_operand_float(num.f);
        return EXIT_OK;
    }
    char err[512];
    if (array_read(text, arr, err, sizeof err))
        return fail(EXIT_FAIL, "%s", err);
    *is_array = 1;
    *t = npy_tensor(arr);
    *op = clnz_operand_array(t);
    return EXIT_OK;
}

int cmd_where(int argc, char **argv)
{
    sel_args a;
    int rc = cli_parse_sel_args(argc, argv, "where", 3, 0, &a);
    if (rc)
        return cli_stop(rc, usage_where);
    char err[512];
    npy_array c, x, y;
    clnz_tensor ct, xt, yt;
    clnz_operand xo, yo;
    int x_arr = 0, y_arr = 0;
    if (array_read(a.positional[0], &c, err, sizeof err))
        return fail(EXIT_FAIL, "%s", err);
    ct = npy_tensor(&c);
    rc = operand_of(a.positional[1], "X", &x, &xt, &xo, &x_arr);
    if (!rc)
        rc = operand_of(a.positional[2], "Y", &y, &yt, &yo, &y_arr);
    clnz_context *ctx = NULL;
    clnz_array res = {0};
    if (!rc)
        rc = open_context(a.device, &ctx);
    if (!rc) {
        clnz_status st = clnz_where(ctx, &ct, c.data, NULL, &xo, x_arr ? x.data : NULL, &yo,
                                    y_arr ? y.data : NULL, &res);
        rc = st ? lib_fail(ctx, st, "where") : write_result(a.output, &res);
    }
    clnz_array_free(&res);
    clnz_context_release(ctx);
    npy_free(&c);
    if (x_arr)
        npy_free(&x);
    if (y_arr)
        npy_free(&y);
    return rc;
}
