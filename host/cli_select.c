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

static int wants_help(int argc, char **argv, const char *usage)
{
    for (int i = 2; i < argc; ++i)
        if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            fputs(usage, stdout);
            return 1;
        }
    return 0;
}

/* "--name VALUE" or "--name=VALUE" at argv[*i]; NULL if not that option. */
static const char *option_value(int argc, char **argv, int *i, const char *name, int *missing)
{
    size_t len = strlen(name);
    const char *arg = argv[*i];
    if (strncmp(arg, name, len) != 0 || (arg[len] != '\0' && arg[len] != '='))
        return NULL;
    if (arg[len] == '=')
        return arg + len + 1;
    if (*i + 1 >= argc) {
        *missing = 1;
        return NULL;
    }
    return argv[++*i];
}

typedef struct {
    const char *positional[3];
    int n_positional;
    const char *output, *mask, *pred, *device;
} sel_args;

/* Options of both commands; positionals may be negative numbers (where). */
static int parse(int argc, char **argv, const char *cmd, int max_positional, int with_mask,
                 sel_args *a)
{
    memset(a, 0, sizeof *a);
    for (int i = 2; i < argc; ++i) {
        const char *arg = argv[i], *v;
        cli_number num;
        int missing = 0;
        if (arg[0] != '-' || strcmp(arg, "-") == 0 || cli_parse_number(arg, &num) != 0) {
            if (a->n_positional == max_positional)
                return fail(EXIT_USAGE, "unexpected argument '%s' (see clnz %s --help)", arg, cmd);
            a->positional[a->n_positional++] = arg;
        } else if ((v = option_value(argc, argv, &i, "-o", &missing)) ||
                   (v = option_value(argc, argv, &i, "--output", &missing))) {
            a->output = v;
        } else if ((v = option_value(argc, argv, &i, "--device", &missing))) {
            a->device = v;
        } else if (with_mask && (v = option_value(argc, argv, &i, "--mask", &missing))) {
            a->mask = v;
        } else if (with_mask && (v = option_value(argc, argv, &i, "--pred", &missing))) {
            a->pred = v;
        } else if (missing) {
            return fail(EXIT_USAGE, "%s needs a value", arg);
        } else {
            return fail(EXIT_USAGE, "unknown option '%s' (see clnz %s --help)", arg, cmd);
        }
        if (missing)
            return fail(EXIT_USAGE, "%s needs a value", arg);
    }
    static const char *const names[2][3] = {{"X"}, {"COND", "X", "Y"}};
    if (a->n_positional < max_positional)
        return fail(EXIT_USAGE, "missing %s (see clnz %s --help)",
                    names[max_positional == 3][a->n_positional], cmd);
    if (!a->output)
        return fail(EXIT_USAGE, "missing -o OUTPUT.npy (see clnz %s --help)", cmd);
    return EXIT_OK;
}

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
    if (wants_help(argc, argv, usage_select))
        return EXIT_OK;
    sel_args a;
    int rc = parse(argc, argv, "select", 1, 1, &a);
    if (rc)
        return rc;
    clnz_predicate pred = clnz_pred_nonzero();
    if (a.pred) {
        if (cli_parse_pred(a.pred, &pred)) /* nonzero's OP:VALUE */
            return EXIT_USAGE;
    }
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
                                     a.mask ? m.data : NULL, &pred, &res);
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
    if (wants_help(argc, argv, usage_where))
        return EXIT_OK;
    sel_args a;
    int rc = parse(argc, argv, "where", 3, 0, &a);
    if (rc)
        return rc;
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
