/* cmd_select.c: `clnz select`, the values at the selected positions. */
#include "cli/cli.h"
#include "io/io.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char usage_select[] =
    "usage: clnz select X -o OUTPUT.npy [--mask M] [--pred OP:VALUE] [--device SEL]\n"
    "\n"
    "Writes the values of X (.npy or image) at the selected positions, in C order, as a 1-D\n"
    "array of X's dtype (numpy: X[M != 0], np.extract; torch.masked_select).\n"
    "\n"
    "  --mask M          a .npy of X's shape, any dtype: the positions where M is\n"
    "                    nonzero (or satisfies --pred)\n"
    "  --pred OP:VALUE   OP is eq, ne, lt, le, gt or ge: the positions where X (or M)\n"
    "                    satisfies it; without --mask and --pred, where X is nonzero\n"
    "  --device SEL      the device: P:D as 'clnz devices' lists them, a kind (gpu,\n"
    "                    cpu, accelerator) or part of its platform's or its name\n";

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
        rc = st ? lib_fail(ctx, st, a.positional[0]) : cli_write_array(a.output, &res);
    }
    clnz_array_free(&res);
    clnz_context_release(ctx);
    npy_free(&x);
    if (a.mask)
        npy_free(&m);
    return rc;
}

/* An operand: a number, else a .npy file read into *arr. */
