/* cmd_select.c: `clnz select`, the values at the selected positions. */
#include "cli/cli.h"
#include "io/io.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char usage_select[] =
    "usage: clnz select X -o OUTPUT.npy [--mask M] [--pred OP:VALUE] [--device SEL]\n"
    "                   [--format npy|csv|txt]\n"
    "\n"
    "Writes the values of X (.npy or image) at the selected positions, in C order, as a 1-D\n"
    "array of X's dtype and byte order (X[M != 0], np.extract, torch.masked_select).\n"
    "\n"
    "  --mask M           a .npy of X's shape, any dtype: the positions where M is\n"
    "                     nonzero (or satisfies --pred)\n"
    "  --pred OP:VALUE    OP is eq, ne, lt, le, gt or ge: the positions where X (or M)\n"
    "                     satisfies it; without --mask and --pred, where X is nonzero\n"
    "  --device SEL       the device: P:D as 'clnz devices' lists them, a kind (gpu,\n"
    "                     cpu, accelerator) or part of its platform's or its name\n"
    CLI_USAGE_PIPES;

int cmd_select(int argc, char **argv)
{
    sel_args a;
    int rc = cli_parse_sel_args(argc, argv, "select", 1, 1, &a);
    if (rc)
        return cli_stop(rc, usage_select);
    char err[CLI_ERR_MAX];
    out_set outs = {0};
    int out = cli_add_output(&outs, a.output);
    npy_array x = {0}, m = {0};
    if (out < 0) {
        out_discard(&outs);
        return EXIT_FAIL;
    }
    if (array_read(a.positional[0], &x, err, sizeof err) ||
        (a.mask && array_read(a.mask, &m, err, sizeof err))) {
        npy_free(&x);
        out_discard(&outs);
        return fail(EXIT_FAIL, "%s", err);
    }
    clnz_context *ctx = NULL;
    clnz_array res = {0};
    rc = open_context(a.device, &ctx);
    if (!rc) {
        clnz_tensor xt = npy_tensor(&x), mt = npy_tensor(&m);
        clnz_status st = clnz_select(ctx, &xt, x.data, a.mask ? &mt : NULL,
                                     a.mask ? m.data : NULL, &a.pred, &res);
        char q[IO_QUOTE_MAX];
        /* numpy keeps x's byte order in x[m]: a big-endian .npy in, one out */
        int big = !st && x.big_endian && a.format == OUT_NPY;
        if (big)
            npy_byteswap(res.data, (uint64_t)res.shape[0], clnz_dtype_size(res.dtype));
        rc = st    ? lib_fail(ctx, st, io_quote(a.positional[0], q, sizeof q))
             : big ? cli_put_big(&outs, out, res.dtype, res.rank, res.shape, res.data)
                   : cli_put_array(&outs, out, a.format, &res);
    }
    if (!rc)
        rc = cli_commit(&outs);
    out_discard(&outs);
    clnz_array_free(&res);
    cli_release(ctx, rc);
    npy_free(&x);
    npy_free(&m);
    return rc;
}
