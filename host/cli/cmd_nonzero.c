/* cmd_nonzero.c: `clnz nonzero`, coordinates of the selected elements
 * (plain, per channel rule, or batched as CSR). */
#include "cli/cli.h"
#include "io/io.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char usage_nonzero[] =
    "usage: clnz nonzero INPUT -o OUTPUT.npy [--layout rows|columns|flat]\n"
    "                    [--index int64|int32|uint32] [--pred OP:VALUE] [--width N]\n"
    "                    [--order rc|xy] [--batch --offsets-out OFFSETS.npy]\n"
    "                    [--channels any|all]\n"
    "                    [--size S] [--fill V] [--count-out COUNT.npy] [--device SEL]\n"
    "                    [--format npy|csv|txt]\n"
    "\n"
    "Writes the C-order coordinates of the elements of INPUT (.npy or image) that are\n"
    "nonzero, or that satisfy --pred, to OUTPUT.npy.\n"
    "\n"
    "  --layout rows      (z, N) array, one row per element (torch.nonzero, np.argwhere)\n"
    "  --layout columns   (N, z) array, one row per dimension (np.nonzero stacked)\n"
    "  --layout flat      (z,) flat C-order indices (np.flatnonzero)\n"
    "  --index TYPE       index type of OUTPUT (default int64); an input whose indices\n"
    "                     do not fit is an error, never a wrap-around\n"
    "  --pred OP:VALUE    OP is eq, ne, lt, le, gt or ge; VALUE an integer in\n"
    "                     -2^63..2^64-1 or a float (inf and nan too), compared as\n"
    "                     numpy compares with a scalar\n"
    "  --order xy         each entry's coordinates reversed: (x, y) = (column, row),\n"
    "                     as cv::findNonZero; default rc, (row, column)\n"
    "  --width N          coordinates per entry (1..32): column j holds dimension\n"
    "                     rank-N+j, columns before dimension 0 are zeros (default:\n"
    "                     the rank)\n"
    "  --size S           exactly S entries: the first min(z, S) real, the rest --fill\n"
    "  --fill V           the padding value for --size (default -1)\n"
    "  --channels any|all the last dimension holds channels (an H x W x C image): a\n"
    "                     pixel is selected when --pred holds on any / all of them,\n"
    "                     and OUTPUT has the coordinates of the other dimensions\n"
    "  --count-out FILE   also write the true count z as a 0-d int64 .npy\n"
    "  --batch            dimension 0 is a batch: OUTPUT gets each item's coordinates\n"
    "                     (rank-1 of them), item after item, and --offsets-out FILE the\n"
    "                     (B+1,) int64 offsets: item b is OUTPUT[off[b]:off[b+1]]\n"
    "  --device SEL       the device: P:D as 'clnz devices' lists them, a kind (gpu,\n"
    "                     cpu, accelerator) or part of its platform's or its name\n"
    CLI_USAGE_PIPES
    "  (--format applies to every output: --count-out and --offsets-out too)\n";

int cmd_nonzero(int argc, char **argv)
{
    cli_args a;
    npy_array arr;
    clnz_context *ctx;
    out_set outs = {0};
    int rc = cli_start(argc, argv, 1, &a, &arr, &ctx, &outs);
    if (rc)
        return cli_stop(rc, usage_nonzero);
    clnz_result res = {0};
    clnz_array offsets = {0};
    clnz_tensor t = npy_tensor(&arr);
    clnz_status st =
        a.batch      ? clnz_nonzero_batched(ctx, &t, arr.data, &a.pred, &a.opts, &res, &offsets)
        : a.channels ? clnz_nonzero_channels(ctx, &t, arr.data, &a.pred,
                                             (clnz_channel_rule)(a.channels - 1), &a.opts, &res)
                     : clnz_nonzero(ctx, &t, arr.data, &a.pred, &a.opts, &res);
    if (st) {
        char q[IO_QUOTE_MAX];
        rc = lib_fail(ctx, st, io_quote(a.input, q, sizeof q));
        out_discard(&outs);
        goto done;
    }
    static const clnz_dtype index_dtype[] = {CLNZ_I64, CLNZ_I32, CLNZ_U32};
    rc = cli_put(&outs, a.out_index[0], a.format, index_dtype[res.index_type], res.ndim,
                 res.shape, res.indices);
    if (!rc && a.count_out)
        rc = cli_put(&outs, a.out_index[1], a.format, CLNZ_I64, 0, NULL, &res.count);
    if (!rc && a.batch)
        rc = cli_put(&outs, a.out_index[2], a.format, CLNZ_I64, 1, offsets.shape, offsets.data);
    if (!rc)
        rc = cli_commit(&outs);
    out_discard(&outs);
done:
    clnz_array_free(&offsets);
    clnz_result_free(&res);
    cli_release(ctx, rc);
    npy_free(&arr);
    return rc;
}
