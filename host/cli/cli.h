/* cli.h: what the clnz command's source files share. */
#ifndef CLNZ_CLI_H
#define CLNZ_CLI_H

#include "clnz.h"
#include "io/io.h"
#include "io/output.h"

enum { EXIT_OK = 0, EXIT_FAIL = 1, EXIT_USAGE = 2 };
/* What a parser returns for --help: the command prints its usage, exit 0. */
enum { CLI_HELP = -1 };
/* A command's exit status when its parser returned rc != EXIT_OK: for
 * CLI_HELP, usage printed and 0; else rc (the error is printed already). */
int cli_stop(int rc, const char *usage);

/* Room for any cache folder clnz_cache_dir can name (past PATH_MAX too,
 * which `clnz cache` reports) */
enum { CACHE_PATH_ROOM = (128 << 10) + 64 };

/* Prints "clnz: ..." as one line on stderr and returns code. */
int fail(int code, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* The first line of the context's message for a failed library call. */
int lib_fail(clnz_context *ctx, clnz_status st, const char *what);
/* A context on `device` (NULL: CLNZ_DEVICE or the default), or an exit status. */
int open_context(const char *device, clnz_context **ctx);
/* Releases a command's context, printing its warning after a success. */
void cli_release(clnz_context *ctx, int rc);

/* A number as Python writes an int or a float literal (inf and nan too).
 * 1: a number; 0: not one; -1: an integer outside -2^63..2^64-1. */
int cli_parse_number(const char *text, clnz_scalar *num);

/* ---- arguments (args.c) ---- */
/* nonzero and count: INPUT and the options after argv[1]. */
typedef struct {
    const char *input, *output, *count_out, *offsets_out, *device;
    int out_index[3]; /* output, count_out, offsets_out in the run's out_set (-1: none) */
    int batch;
    int channels; /* --channels: 1 + the rule */
    int fill_given; /* --fill: refused without --size */
    out_format format; /* --format, of every output */
    int format_given;  /* count prints text unless --format (or -o) says otherwise */
    int n_axes;        /* count --axis: how many (-1: none given, all counted) */
    int axes[CLNZ_MAX_RANK]; /* as given: negative ones count from the end */
    int keepdims;      /* count --keepdims: counted axes stay, as 1s */
    clnz_predicate pred; /* --pred, else nonzero */
    clnz_nonzero_options opts;
} cli_args;
/* EXIT_OK, CLI_HELP, or EXIT_USAGE after printing why. */
int cli_parse_args(int argc, char **argv, int is_nonzero, cli_args *a);

/* select (X, --mask, --pred) and where (COND X Y). */
typedef struct {
    const char *positional[3];
    int n_positional;
    const char *output, *mask, *device;
    out_format format; /* --format */
    clnz_predicate pred; /* --pred, else nonzero */
} sel_args;
/* EXIT_OK, CLI_HELP, or EXIT_USAGE after printing why. */
int cli_parse_sel_args(int argc, char **argv, const char *cmd, int max_positional,
                       int with_mask, sel_args *a);

/* --device SEL (or --device=SEL) at argv[*i]: 1, *device set and *i moved
 * past its value; 0: not --device; -1: no value or a second one (the usage
 * error printed). warmup, bundle build and tune (args_uses.c). */
int cli_device_option(int argc, char **argv, int *i, const char **device);
/* warmup and bundle build: --device SEL and the declared uses (--dtypes,
 * --ops, --predicates, --strategies LIST) at argv[*i] (args_uses.c). 1: it
 * was one (*i moved past its value), 0: not one of them, -1: a bad list
 * (the usage error printed). */
int cli_uses_option(int argc, char **argv, int *i, const char **device, clnz_uses *uses);

/* The lines of a command's usage on its standard streams and --format
 * (nonzero, select, where), aligned with their other options. */
#define CLI_USAGE_PIPES                                                                     \
    "  -o -               write OUTPUT to standard output (nothing else goes there); an\n" \
    "                     input named - is a .npy read from standard input\n"              \
    "  --format FMT       npy (the default), csv or txt: text as np.savetxt writes it,\n"   \
    "                     one line per entry (per row of a 2-D output), ',' or ' '\n"     \
    "                     between the entries of a row; integers as %d, f16, f32 and\n"   \
    "                     f64 as %.5g, %.9g and %.17g (they read back exactly)\n"

/* Room for a message that quotes two paths. */
enum { CLI_ERR_MAX = 2 * IO_QUOTE_MAX + 512 };

/* Parses the arguments, adds the outputs to outs, reads INPUT and opens
 * the device: what nonzero and count do first (main.c). On failure returns
 * the exit status (or CLI_HELP, for cli_stop) and holds nothing. */
int cli_start(int argc, char **argv, int is_nonzero, cli_args *a, npy_array *arr,
              clnz_context **ctx, out_set *outs);
/* Adds an output before any work, so that one that cannot be written
 * fails the run at once: its index in outs, or -1 after printing why.
 * "-" is standard output (output.c). */
int cli_add_output(out_set *outs, const char *path);
/* Output i's bytes: a C-order array as a .npy, or as text (--format). */
int cli_put(out_set *outs, int i, out_format format, clnz_dtype dtype, int ndim,
            const int64_t *shape, const void *data);
/* The same with data in big-endian order, for a .npy that says so (">f8");
 * text formats take native data: give them cli_put. */
int cli_put_big(out_set *outs, int i, clnz_dtype dtype, int ndim, const int64_t *shape,
                const void *data);
int cli_put_array(out_set *outs, int i, out_format format, const clnz_array *r);
/* Every output in place, or none; then the set is freed. An exit status. */
int cli_commit(out_set *outs);

int cmd_nonzero(int argc, char **argv);
int cmd_count(int argc, char **argv);
int cmd_devices(int argc, char **argv);
int cmd_tune(int argc, char **argv);
int cmd_select(int argc, char **argv);
int cmd_where(int argc, char **argv);
int cmd_cache(int argc, char **argv);
int cmd_warmup(int argc, char **argv);
int cmd_bundle(int argc, char **argv);

#endif
