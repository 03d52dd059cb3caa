/* cmd_where.c: `clnz where COND X Y`, element-wise choice with broadcasting. */
#include "cli/cli.h"
#include "io/io.h"

#include <inttypes.h>
#include <stdio.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

static const char usage_where[] =
    "usage: clnz where COND X Y -o OUTPUT.npy [--device SEL] [--format npy|csv|txt]\n"
    "\n"
    "Writes X where COND (.npy, any dtype) is nonzero and Y elsewhere, element-wise over\n"
    "the broadcast shape of the three (np.where, torch.where). X and Y are .npy files or\n"
    "numbers (1, -2, 0.5, 1e3, inf, nan; write ./0 for a file named 0).\n"
    "\n"
    "Broadcasting: shapes are aligned from the right and a dimension of 1 stretches.\n"
    "The result's dtype: X's and Y's when both are arrays (they must agree); the\n"
    "array's when the other is a number, which must fit it exactly (no 0.5 into an\n"
    "integer array; a float array rounds as numpy does); float64 for two numbers if\n"
    "either is written as a float, else int64.\n"
    "\n"
    CLI_USAGE_PIPES;

/* An operand (name X or Y): a number, or an array read from its file.
 * *big: an integer beyond 64 bits, taken as the nearest double (where the
 * result is a float only: big_integer_stands, once the other operand is
 * known); one past the doubles' range too is refused, as Python's float()
 * refuses it. */
static int operand_of(const char *text, const char *name, npy_array *arr, clnz_tensor *t,
                      clnz_operand *op, int *is_array, int *big)
{
    clnz_scalar num;
    int r = cli_parse_number(text, &num);
    *is_array = 0;
    *big = r < 0;
    if (r < 0) {
        errno = 0;
        num = clnz_scalar_float(strtod(text, NULL));
        if (errno == ERANGE)
            return fail(EXIT_USAGE, "%s '%s': the integer is too large for a float", name,
                        text);
    }
    if (r != 0) {
        op->array = NULL;
        op->value = num;
        return EXIT_OK;
    }
    char err[CLI_ERR_MAX];
    if (array_read(text, arr, err, sizeof err))
        return fail(EXIT_FAIL, "%s", err);
    *is_array = 1;
    *t = npy_tensor(arr);
    *op = clnz_operand_array(t);
    return EXIT_OK;
}

/* An integer beyond 64 bits stands where the result is a float: beside a
 * float array, or a number written as a float (rounded, as any number); an
 * integer array cannot hold it, nor the int64 of two integers. */
static int big_integer_stands(const char *name, const char *text, const npy_array *other,
                              int other_is_array, const clnz_operand *other_op, int other_big)
{
    int float_result = other_is_array ? other->dtype == CLNZ_F16 || other->dtype == CLNZ_F32 ||
                                            other->dtype == CLNZ_F64
                                      : other_op->value.kind == CLNZ_VALUE_FLOAT && !other_big;
    return float_result ? EXIT_OK
                        : fail(EXIT_USAGE, "%s '%s': the integer is outside -2^63..2^64-1, "
                                           "which only a float result takes", name, text);
}

int cmd_where(int argc, char **argv)
{
    sel_args a;
    int rc = cli_parse_sel_args(argc, argv, "where", 3, 0, &a);
    if (rc)
        return cli_stop(rc, usage_where);
    char err[CLI_ERR_MAX];
    out_set outs = {0};
    int out = cli_add_output(&outs, a.output);
    if (out < 0) {
        out_discard(&outs);
        return EXIT_FAIL;
    }
    npy_array c = {0}, x = {0}, y = {0};
    clnz_tensor ct, xt, yt;
    clnz_operand xo, yo;
    int x_arr = 0, y_arr = 0;
    if (array_read(a.positional[0], &c, err, sizeof err)) {
        out_discard(&outs);
        return fail(EXIT_FAIL, "%s", err);
    }
    ct = npy_tensor(&c);
    int x_big = 0, y_big = 0;
    rc = operand_of(a.positional[1], "X", &x, &xt, &xo, &x_arr, &x_big);
    if (!rc)
        rc = operand_of(a.positional[2], "Y", &y, &yt, &yo, &y_arr, &y_big);
    if (!rc && x_big)
        rc = big_integer_stands("X", a.positional[1], &y, y_arr, &yo, y_big);
    if (!rc && y_big)
        rc = big_integer_stands("Y", a.positional[2], &x, x_arr, &xo, x_big);
    if (!rc) {
        /* text holds up to 2 dimensions: refused before any work, a usage
         * error as count's counts are (the output has the rank of the
         * highest operand's, or broadcasting refuses it anyway) */
        int ndim = ct.rank;
        if (x_arr && xt.rank > ndim)
            ndim = xt.rank;
        if (y_arr && yt.rank > ndim)
            ndim = yt.rank;
        if (text_too_deep(a.format, ndim, err, sizeof err))
            rc = fail(EXIT_USAGE, "%s", err);
    }
    clnz_context *ctx = NULL;
    clnz_array res = {0};
    if (!rc)
        rc = open_context(a.device, &ctx);
    if (!rc) {
        clnz_status st = clnz_where(ctx, &ct, c.data, NULL, &xo, x_arr ? x.data : NULL, &yo,
                                    y_arr ? y.data : NULL, &res);
        rc = st ? lib_fail(ctx, st, "where") : cli_put_array(&outs, out, a.format, &res);
    }
    if (!rc)
        rc = cli_commit(&outs);
    out_discard(&outs);
    clnz_array_free(&res);
    cli_release(ctx, rc);
    npy_free(&c);
    npy_free(&x);
    npy_free(&y);
    return rc;
}
