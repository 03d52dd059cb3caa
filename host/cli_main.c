/* cli_main.c: the clnz command, a thin client of include/clnz.h.
 *
 * Exit status: 0 success, 2 usage error, 1 any other failure. Every error is
 * one line on stderr starting with "clnz: ". Outputs are written to
 * temporary files and renamed only once everything has succeeded. */
#include "cli.h"
#include "cli_npy.h"
#include "clnz.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char usage_main[] =
    "usage: clnz COMMAND [ARGS]\n"
    "\n"
    "Find nonzero elements of arrays and images on an OpenCL device. Inputs are .npy\n"
    "files, or PNG, PGM (P5) and PPM (P6) images: (H, W) for gray, (H, W, C) for colour,\n"
    "u8 or u16 (16-bit samples); outputs are .npy.\n"
    "\n"
    "commands:\n"
    "  nonzero INPUT -o OUTPUT.npy [options]   write the coordinates of the selected elements\n"
    "  count INPUT [--pred OP:VALUE]           print the number of selected elements\n"
    "  select X -o OUT.npy [--mask M] [--pred OP:VALUE]\n"
    "                                          write the values at the selected positions\n"
    "  where COND X Y -o OUT.npy               X where COND is nonzero, else Y (X, Y: .npy\n"
    "                                          files or numbers), with broadcasting\n"
    "  devices                                 list OpenCL platforms and devices\n"
    "  tune [--quick] [--device P:D]           find fast launch parameters and store them\n"
    "  cache [--clear]                         show (or empty) the tuning and program cache\n"
    "\n"
    "Run 'clnz COMMAND --help' for a command's options; 'clnz --version' for the version.\n"
    "CLNZ_DEVICE=P:D (or --device P:D) picks the device; the default is the first GPU,\n"
    "else the first device.\n";

static const char usage_nonzero[] =
    "usage: clnz nonzero INPUT -o OUTPUT.npy [--layout rows|columns|flat]\n"
    "                    [--index int64|int32|uint32] [--pred OP:VALUE] [--width N]\n"
    "                    [--order rc|xy] [--batch --offsets-out OFFSETS.npy]\n"
    "                    [--channels any|all]\n"
    "                    [--size S] [--fill V] [--count-out COUNT.npy] [--device P:D]\n"
    "\n"
    "Writes the C-order coordinates of the elements of INPUT (.npy or image) that are\n"
    "nonzero, or that satisfy --pred, to OUTPUT.npy.\n"
    "\n"
    "  --layout rows      (z, N) array, one row per element (torch.nonzero, np.argwhere)\n"
    "  --layout columns   (N, z) array, one row per dimension (np.nonzero stacked)\n"
    "  --layout flat      (z,) flat C-order indices (np.flatnonzero)\n"
    "  --index TYPE       index type of OUTPUT (default int64); an input whose indices\n"
    "                     do not fit is an error, never a wrap-around\n"
    "  --pred OP:VALUE    OP is eq, ne, lt, le, gt or ge; VALUE an integer or a float\n"
    "                     (inf and nan too), compared as numpy compares with a scalar\n"
    "  --order xy         each entry's coordinates reversed: (x, y) = (column, row),\n"
    "                     as cv::findNonZero; default rc, (row, column)\n"
    "  --width N          coordinates per entry: column j holds dimension rank-N+j,\n"
    "                     columns before dimension 0 are zeros (default: the rank)\n"
    "  --size S           exactly S entries: the first min(z, S) real, the rest --fill\n"
    "  --fill V           the padding value for --size (default -1)\n"
    "  --channels any|all the last dimension holds channels (an H x W x C image): a\n"
    "                     pixel is selected when --pred holds on any / all of them,\n"
    "                     and OUTPUT has the coordinates of the other dimensions\n"
    "  --count-out FILE   also write the true count z as a 0-d int64 .npy\n"
    "  --batch            dimension 0 is a batch: OUTPUT gets each item's coordinates\n"
    "                     (rank-1 of them), item after item, and --offsets-out FILE the\n"
    "                     (B+1,) int64 offsets: item b is OUTPUT[off[b]:off[b+1]]\n"
    "  --device P:D       use platform P, device D (see 'clnz devices')\n";

static const char usage_count[] =
    "usage: clnz count INPUT [--pred OP:VALUE] [--channels any|all] [--device P:D]\n"
    "\n"
    "Prints the number of elements of INPUT that are nonzero, or that satisfy --pred,\n"
    "as one decimal line; with --channels, the number of such pixels (see nonzero).\n";

static const char usage_devices[] =
    "usage: clnz devices\n"
    "\n"
    "Lists OpenCL platforms and devices as P:D; '*' marks the one clnz uses by default.\n"
    "The last column says whether launch parameters are stored for the device: tuned\n"
    "(this device, driver and clnz version), vendor-tuned (another device of the same\n"
    "vendor and type) or defaults.\n";

/* The first line of a library message: errors stay one line. */
static const char *first_line(const char *m, char *buf, size_t n)
{
    size_t len = strcspn(m, "\n");
    snprintf(buf, n, "%.*s", (int)(len < n ? len : n - 1), m);
    return buf;
}

int lib_fail(clnz_context *ctx, clnz_status st, const char *what)
{
    char buf[600];
    const char *m = ctx ? clnz_context_message(ctx) : "";
    if (!*m)
        m = clnz_status_string(st);
    return fail(EXIT_FAIL, "%s: %s", what, first_line(m, buf, sizeof buf));
}

int open_context(const char *device, clnz_context **ctx)
{
    char msg[300];
    clnz_status st = clnz_context_create(device, ctx, msg, sizeof msg);
    if (st)
        return fail(st == CLNZ_ERROR_INVALID_DEVICE && device ? EXIT_USAGE : EXIT_FAIL, "%s",
                    msg);
    return EXIT_OK;
}

/* Parses the arguments, reads INPUT and opens the device: what both
 * commands do first. On failure returns the exit status (or CLI_HELP, for
 * cli_stop) and holds nothing. */
static int start(int argc, char **argv, int is_nonzero, cli_args *a, npy_array *arr,
                 clnz_context **ctx)
{
    *ctx = NULL;
    int rc = cli_parse_args(argc, argv, is_nonzero, a);
    if (rc)
        return rc;
    char err[512];
    if (array_read(a->input, arr, err, sizeof err))
        return fail(EXIT_FAIL, "%s", err);
    rc = open_context(a->device, ctx);
    if (rc)
        npy_free(arr);
    return rc;
}

static int cmd_nonzero(int argc, char **argv)
{
    cli_args a;
    npy_array arr;
    clnz_context *ctx;
    int rc = start(argc, argv, 1, &a, &arr, &ctx);
    if (rc)
        return cli_stop(rc, usage_nonzero);
    char err[512];
    clnz_result res = {0};
    npy_pending out = {0}, cnt = {0};
    clnz_array offsets = {0};
    npy_pending off = {0};
    clnz_tensor t = npy_tensor(&arr);
    clnz_status st =
        a.batch      ? clnz_nonzero_batched(ctx, &t, arr.data, &a.opts, &res, &offsets)
        : a.channels ? clnz_nonzero_channels(ctx, &t, arr.data,
                                             (clnz_channel_rule)(a.channels - 1), &a.opts, &res)
                     : clnz_nonzero(ctx, &t, arr.data, &a.opts, &res);
    if (st) {
        rc = lib_fail(ctx, st, a.input);
        goto done;
    }
    static const char *const descr[] = {"<i8", "<i4", "<u4"};
    size_t ib = res.index_type == CLNZ_INDEX_INT64 ? 8 : 4;
    size_t bytes = ib * (size_t)res.shape[0] * (size_t)(res.ndim == 2 ? res.shape[1] : 1);
    if (npy_write_tmp(a.output, descr[res.index_type], res.ndim, res.shape, res.indices, bytes,
                      &out, err, sizeof err) ||
        (a.count_out && npy_write_tmp(a.count_out, "<i8", 0, NULL, &res.count, sizeof res.count,
                                      &cnt, err, sizeof err)) ||
        (a.batch && npy_write_tmp(a.offsets_out, "<i8", 1, offsets.shape, offsets.data,
                                  (size_t)offsets.shape[0] * 8, &off, err, sizeof err)) ||
        npy_commit(&out, err, sizeof err) || npy_commit(&cnt, err, sizeof err) ||
        npy_commit(&off, err, sizeof err))
        rc = fail(EXIT_FAIL, "%s", err);
done:
    npy_discard(&out);
    npy_discard(&cnt);
    npy_discard(&off);
    clnz_array_free(&offsets);
    clnz_result_free(&res);
    clnz_context_release(ctx);
    npy_free(&arr);
    return rc;
}

static int cmd_count(int argc, char **argv)
{
    cli_args a;
    npy_array arr;
    clnz_context *ctx;
    int rc = start(argc, argv, 0, &a, &arr, &ctx);
    if (rc)
        return cli_stop(rc, usage_count);
    clnz_tensor t = npy_tensor(&arr);
    int64_t count = 0;
    clnz_status st;
    if (a.channels) { /* pixels: the count of their flat nonzero */
        clnz_result res;
        a.opts.layout = CLNZ_LAYOUT_FLAT;
        st = clnz_nonzero_channels(ctx, &t, arr.data, (clnz_channel_rule)(a.channels - 1),
                                   &a.opts, &res);
        count = res.count;
        clnz_result_free(&res);
    } else {
        st = clnz_count(ctx, &t, arr.data, &a.opts.pred, &count);
    }
    if (st)
        rc = lib_fail(ctx, st, a.input);
    else
        printf("%" PRId64 "\n", count);
    clnz_context_release(ctx);
    npy_free(&arr);
    return rc;
}

static int cmd_devices(int argc, char **argv)
{
    for (int i = 2; i < argc; ++i) {
        if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            fputs(usage_devices, stdout);
            return EXIT_OK;
        }
        return fail(EXIT_USAGE, "unexpected argument '%s' for devices", argv[i]);
    }
    clnz_device_info infos[64];
    int n = 0;
    clnz_status st = clnz_list_devices(infos, 64, &n);
    if (st)
        return fail(EXIT_FAIL, "cannot list devices: %s", clnz_status_string(st));
    if (n == 0)
        return fail(EXIT_FAIL, "no OpenCL device found (is pocl-opencl-icd installed?)");
    static const char *const tuning[] = {"defaults", "vendor-tuned", "tuned", "forced"};
    for (int i = 0; i < n && i < 64; ++i) {
        const clnz_device_info *d = &infos[i];
        printf("%c %d:%d  %-4s %s  [%s]  %s, %.1f GiB, max alloc %.1f GiB, %s\n",
               d->is_default ? '*' : ' ', d->platform, d->device, d->device_type,
               d->device_name, d->platform_name, d->version,
               (double)d->global_mem_size / (1 << 30), (double)d->max_alloc_size / (1 << 30),
               tuning[d->tuning]);
    }
    return EXIT_OK;
}

int main(int argc, char **argv)
{
    if (argc < 2)
        return fail(EXIT_USAGE, "missing COMMAND (see clnz --help)");
    const char *cmd = argv[1];
    if (strcmp(cmd, "--help") == 0 || strcmp(cmd, "-h") == 0 || strcmp(cmd, "help") == 0) {
        fputs(usage_main, stdout);
        return EXIT_OK;
    }
    if (strcmp(cmd, "--version") == 0) {
        printf("clnz %s\n", clnz_version_string());
        return EXIT_OK;
    }
    if (strcmp(cmd, "nonzero") == 0)
        return cmd_nonzero(argc, argv);
    if (strcmp(cmd, "count") == 0)
        return cmd_count(argc, argv);
    if (strcmp(cmd, "select") == 0)
        return cmd_select(argc, argv);
    if (strcmp(cmd, "where") == 0)
        return cmd_where(argc, argv);
    if (strcmp(cmd, "devices") == 0)
        return cmd_devices(argc, argv);
    if (strcmp(cmd, "tune") == 0)
        return cmd_tune(argc, argv);
    if (strcmp(cmd, "cache") == 0)
        return cmd_cache(argc, argv);
    return fail(EXIT_USAGE, "unknown command '%s' (see clnz --help)", cmd);
}
