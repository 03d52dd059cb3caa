/* main.c: the clnz command, a thin client of include/clnz.h: the
 * dispatch to its subcommands (cmd_*.c) and what they share.
 *
 * Exit status: 0 success, 2 usage error, 1 any other failure. Every error is
 * one line on stderr starting with "clnz: " (a warning after a success too:
 * cli_release). Outputs are written to temporary files and renamed only once
 * everything has succeeded. */
#include "cli/cli.h"
#include "io/io.h"
#include "clnz.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char usage_main[] =
    "usage: clnz COMMAND [ARGS]\n"
    "\n"
    "Find nonzero elements of arrays and images on an OpenCL device. Inputs are .npy\n"
    "files, or PNG, PGM (P5) and PPM (P6) images: (H, W) for gray, (H, W, C) for colour,\n"
    "u8 or u16 (16-bit samples); '-' reads a .npy from standard input. Outputs are .npy,\n"
    "or csv and txt with --format as np.savetxt writes them; '-o -' writes to standard\n"
    "output.\n"
    "\n"
    "commands:\n"
    "  nonzero INPUT -o OUTPUT.npy [options]   write the coordinates of the selected elements\n"
    "  count INPUT [--pred OP:VALUE]           print the number of selected elements\n"
    "  select X -o OUT.npy [--mask M] [--pred OP:VALUE]\n"
    "                                          write the values at the selected positions\n"
    "  where COND X Y -o OUT.npy               X where COND is nonzero, else Y (X, Y: .npy\n"
    "                                          files or numbers), with broadcasting\n"
    "  devices                                 list OpenCL platforms and devices\n"
    "  tune [--quick] [--device SEL]           find fast launch parameters and store them\n"
    "  cache [--clear]                         show (or empty) the tuning and program cache\n"
    "  warmup [--dtypes L] [--ops L] ...       compile the programs a set of uses needs\n"
    "  bundle build|list|add                   compiled programs for devices without a\n"
    "                                          compiler (FPGAs): see clnz bundle --help\n"
    "\n"
    "Run 'clnz COMMAND --help' for a command's options; 'clnz --version' for the version.\n"
    "An option with a value may be given once; '--' ends the options of nonzero,\n"
    "count, select and where (an input named '-x.npy').\n"
    "CLNZ_DEVICE=SEL (or --device SEL) picks the device: P:D as 'clnz devices' lists\n"
    "them, a kind (gpu, cpu, accelerator) or part of a device's name; the default is\n"
    "the first GPU that is not a simulator, else the first device that is not one.\n";

int cli_start(int argc, char **argv, int is_nonzero, cli_args *a, npy_array *arr,
              clnz_context **ctx, out_set *outs)
{
    *ctx = NULL;
    int rc = cli_parse_args(argc, argv, is_nonzero, a);
    if (rc)
        return rc;
    const char *paths[3] = {a->output, a->count_out, a->offsets_out};
    for (int i = 0; i < 3; ++i) {
        a->out_index[i] = paths[i] ? cli_add_output(outs, paths[i]) : -1;
        if (paths[i] && a->out_index[i] < 0) {
            out_discard(outs);
            return EXIT_FAIL;
        }
    }
    char err[CLI_ERR_MAX];
    if (array_read(a->input, arr, err, sizeof err)) {
        out_discard(outs);
        return fail(EXIT_FAIL, "%s", err);
    }
    rc = open_context(a->device, ctx);
    if (rc) {
        npy_free(arr);
        out_discard(outs);
    }
    return rc;
}

int cli_add_output(out_set *outs, const char *path)
{
    char err[CLI_ERR_MAX];
    int i = out_add(outs, path, err, sizeof err);
    if (i < 0)
        fail(EXIT_FAIL, "%s", err);
    return i;
}

/* A .npy of descr's order, or text (--format) */
static int put(out_set *outs, int i, out_format format, clnz_dtype dtype, int big, int ndim,
               const int64_t *shape, const void *data)
{
    char err[CLI_ERR_MAX];
    size_t bytes = clnz_dtype_size(dtype);
    for (int d = 0; d < ndim; ++d)
        bytes *= (size_t)shape[d];
    int bad;
    if (format == OUT_NPY) {
        unsigned char head[NPY_HEADER_MAX];
        char descr[16];
        snprintf(descr, sizeof descr, "%s", npy_descr(dtype));
        if (big && descr[0] == '<')
            descr[0] = '>';
        size_t head_len = npy_header(descr, ndim, shape, head);
        bad = out_write(outs, i, head, head_len, data, bytes, err, sizeof err);
    } else {
        /* the text goes as the head, which out_write copies (or writes at
         * once): the data it would keep until the commit is ours to free */
        size_t len;
        char *text = text_format(format, dtype, ndim, shape, data, &len, err, sizeof err);
        bad = !text || out_write(outs, i, text, len, NULL, 0, err, sizeof err);
        free(text);
    }
    return bad ? fail(EXIT_FAIL, "%s", err) : EXIT_OK;
}

int cli_put(out_set *outs, int i, out_format format, clnz_dtype dtype, int ndim,
            const int64_t *shape, const void *data)
{
    return put(outs, i, format, dtype, 0, ndim, shape, data);
}

int cli_put_big(out_set *outs, int i, clnz_dtype dtype, int ndim, const int64_t *shape,
                const void *data)
{
    return put(outs, i, OUT_NPY, dtype, 1, ndim, shape, data);
}

int cli_put_array(out_set *outs, int i, out_format format, const clnz_array *r)
{
    return cli_put(outs, i, format, r->dtype, r->rank, r->shape, r->data);
}

int cli_commit(out_set *outs)
{
    char err[CLI_ERR_MAX];
    int rc = out_commit(outs, err, sizeof err) ? fail(EXIT_FAIL, "%s", err) : EXIT_OK;
    out_discard(outs);
    return rc;
}

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

/* After a success the context's message is its warnings, if it has any: the
 * command went on without something the user would want to know about (a
 * cache it could not write, so every run compiles again; tuning that
 * failed; a bundle the driver refused). Each goes to stderr once. */
void cli_release(clnz_context *ctx, int rc)
{
    const char *m = ctx && rc == EXIT_OK ? clnz_context_message(ctx) : "";
    while (*m) { /* a line each: the library keeps several warnings */
        char buf[600];
        fprintf(stderr, "clnz: %s\n", first_line(m, buf, sizeof buf));
        m += strcspn(m, "\n");
        m += *m == '\n';
    }
    clnz_context_release(ctx);
}

int open_context(const char *device, clnz_context **ctx)
{
    char msg[300];
    clnz_status st = clnz_context_create(device, ctx, msg, sizeof msg);
    if (st)
        return fail(st == CLNZ_ERROR_INVALID_DEVICE ? EXIT_USAGE : EXIT_FAIL, "%s",
                    msg);
    return EXIT_OK;
}

static int dispatch(int argc, char **argv)
{
    if (argc < 2)
        return fail(EXIT_USAGE, "missing COMMAND (see clnz --help)");
    const char *cmd = argv[1];
    int is_help =
        strcmp(cmd, "--help") == 0 || strcmp(cmd, "-h") == 0 || strcmp(cmd, "help") == 0;
    if ((is_help || strcmp(cmd, "--version") == 0) && argc > 2)
        return fail(EXIT_USAGE,
                    "unexpected argument '%s' for %s (a command's options: clnz COMMAND --help)",
                    argv[2], cmd);
    if (is_help) {
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
    if (strcmp(cmd, "warmup") == 0)
        return cmd_warmup(argc, argv);
    if (strcmp(cmd, "bundle") == 0)
        return cmd_bundle(argc, argv);
    return fail(EXIT_USAGE, "unknown command '%s' (see clnz --help)", cmd);
}

/* A run started with 0, 1 or 2 closed would hand those numbers to the next
 * files opened (an input, a temporary, the driver's own), and the count
 * printed to stdout would land in one of them. They are opened on
 * /dev/null (stdin, stderr) and /dev/full (stdout: what is printed then
 * fails, as writing to a closed stdout does). Returns which were closed
 * (bit fd), for io_std_closed. */
static unsigned reserve_std_fds(void)
{
    unsigned closed = 0;
    for (int fd = 0; fd < 3; ++fd) {
        if (fcntl(fd, F_GETFD) != -1 || errno != EBADF)
            continue;
        closed |= 1u << fd;
        int got = open(fd == 1 ? "/dev/full" : "/dev/null", fd ? O_WRONLY : O_RDONLY);
        if (got >= 0 && got != fd) { /* a lower one was closed too and took it: move it */
            dup2(got, fd);
            close(got);
        }
    }
    return closed;
}

int main(int argc, char **argv)
{
    io_std_closed = reserve_std_fds();
    int rc = dispatch(argc, argv);
    errno = 0;
    /* what was printed must have arrived: `clnz count x > /dev/full` fails */
    if (fflush(stdout) != 0 || ferror(stdout)) {
        int e = io_std_closed & 1u << STDOUT_FILENO ? EBADF : errno ? errno : EIO;
        return fail(EXIT_FAIL, "cannot write to standard output: %s", strerror(e));
    }
    return rc;
}
