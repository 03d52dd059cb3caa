/* cmd_count.c: `clnz count`, the number of selected elements (or pixels). */
#include "cli/cli.h"
#include "io/io.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char usage_count[] =
    "usage: clnz count INPUT [--pred OP:VALUE] [--channels any|all] [--device SEL]\n"
    "\n"
    "Prints the number of elements of INPUT that are nonzero, or that satisfy --pred,\n"
    "as one decimal line; with --channels, the number of such pixels (see nonzero).\n";

int cmd_count(int argc, char **argv)
{
    cli_args a;
    npy_array arr;
    clnz_context *ctx;
    out_set none = {0};
    int rc = cli_start(argc, argv, 0, &a, &arr, &ctx, &none);
    if (rc)
        return cli_stop(rc, usage_count);
    clnz_tensor t = npy_tensor(&arr);
    int64_t count = 0;
    clnz_status st;
    if (a.channels) { /* pixels: the count of their flat nonzero */
        clnz_result res;
        a.opts.layout = CLNZ_LAYOUT_FLAT;
        st = clnz_nonzero_channels(ctx, &t, arr.data, &a.pred,
                                   (clnz_channel_rule)(a.channels - 1), &a.opts, &res);
        count = res.count;
        clnz_result_free(&res);
    } else {
        st = clnz_count(ctx, &t, arr.data, &a.pred, &count);
    }
    char q[IO_QUOTE_MAX];
    if (st)
        rc = lib_fail(ctx, st, io_quote(a.input, q, sizeof q));
    else
        printf("%" PRId64 "\n", count);
    cli_release(ctx, rc);
    npy_free(&arr);
    return rc;
}

