/* args.c: the command line's parsers: numbers, predicates, and the
 * options of nonzero, count, select and where. They return a status (and
 * print a usage error) but never exit or touch a file, so that the fuzzer
 * (tests/fuzz/fuzz_args.c) can drive them. */
#include "cli/cli.h"
#include "core/quote.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Every error of the command goes through here: one line, "clnz: " first.
 * Paths come quoted (io_quote); a control character that reaches a message
 * any other way (a library message naming CLNZ_CACHE_DIR) becomes '?'. */
int fail(int code, const char *fmt, ...)
{
    char line[4096];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    for (char *c = line; *c; ++c)
        if ((unsigned char)*c < 0x20 || *c == 0x7f)
            *c = '?';
    fprintf(stderr, "clnz: %s\n", line);
    return code;
}

/* ---- option values ---- */
/* Whether s starts an integer written plainly: a digit, or '-' and a
 * digit. strtol alone would also take leading blanks and a '+'. */
static int plain_integer_start(const char *s)
{
    return (*s >= '0' && *s <= '9') || (*s == '-' && s[1] >= '0' && s[1] <= '9');
}

static int parse_i64(const char *s, int64_t *out)
{
    char *end;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    if (!plain_integer_start(s) || *end || errno)
        return 0;
    *out = v;
    return 1;
}

static int is_integer_text(const char *s)
{
    if (*s == '+' || *s == '-')
        ++s;
    if (!*s)
        return 0;
    for (; *s; ++s)
        if (*s < '0' || *s > '9')
            return 0;
    return 1;
}

int cli_parse_number(const char *v, clnz_scalar *num)
{
    if (is_integer_text(v)) {
        char *end;
        errno = 0;
        long long i = strtoll(v, &end, 10);
        if (!errno) {
            *num = clnz_scalar_int(i);
            return 1;
        }
        errno = 0;
        unsigned long long u = strtoull(v, &end, 10);
        if (*v != '-' && !errno) {
            *num = clnz_scalar_uint(u);
            return 1;
        }
        return -1;
    }
    /* what Python's float() takes: strtod also takes hex ("0x1p3"),
     * leading blanks and NaN payloads ("nan(123)"), which Python refuses */
    if (!*v || strpbrk(v, "xX(") || *v == ' ' || (*v >= '\t' && *v <= '\r'))
        return 0;
    char *end;
    double f = strtod(v, &end);
    if (*end)
        return 0;
    *num = clnz_scalar_float(f);
    return 1;
}

/* OP:VALUE, VALUE a Python int or float literal. */
static int parse_pred(const char *s, clnz_predicate *p, char *why, size_t n)
{
    static const struct {
        const char *name;
        clnz_op op;
    } ops[] = {{"eq", CLNZ_OP_EQ}, {"ne", CLNZ_OP_NE}, {"lt", CLNZ_OP_LT},
               {"le", CLNZ_OP_LE}, {"gt", CLNZ_OP_GT}, {"ge", CLNZ_OP_GE}};
    const char *colon = strchr(s, ':');
    if (!colon) {
        snprintf(why, n, "--pred '%s' is not OP:VALUE", s);
        return 0;
    }
    int found = -1;
    for (int i = 0; i < 6; ++i)
        if ((size_t)(colon - s) == 2 && strncmp(s, ops[i].name, 2) == 0)
            found = i;
    if (found < 0) {
        snprintf(why, n, "--pred '%s': OP must be eq, ne, lt, le, gt or ge", s);
        return 0;
    }
    clnz_op op = ops[found].op;
    clnz_scalar num;
    int r = cli_parse_number(colon + 1, &num);
    if (r == 0) {
        snprintf(why, n, "--pred '%s': VALUE is not a number", s);
        return 0;
    }
    if (r < 0) {
        snprintf(why, n, "--pred '%s': the integer is outside -2^63..2^64-1", s);
        return 0;
    }
    p->op = op;
    p->value = num;
    return 1;
}

/* --format's value: no output is touched when it is wrong (options are
 * parsed before any output is added). */
static int parse_format(const char *v, out_format *format)
{
    if (!out_format_parse(v, format))
        return fail(EXIT_USAGE, "--format '%s': use npy, csv or txt", v);
    return EXIT_OK;
}

int cli_stop(int rc, const char *usage)
{
    if (rc == CLI_HELP)
        fputs(usage, stdout);
    return rc == CLI_HELP ? EXIT_OK : rc;
}

/* ---- options with a value: "--name VALUE" or "--name=VALUE" ---- */
enum { NOT_AN_OPTION = -1, NO_VALUE = -2 };

/* Which of names[0..n) argv[*i] is, with its value in *value (taking the
 * next argument when it is not inline); NOT_AN_OPTION or NO_VALUE else,
 * NO_VALUE also for an empty value ("-o=", "--device ''"): none of them
 * means anything empty. */
static int take_option(int argc, char **argv, int *i, const char *const *names, int n,
                       const char **value)
{
    const char *arg = argv[*i];
    for (int k = 0; k < n; ++k) {
        size_t len = strlen(names[k]);
        if (strncmp(arg, names[k], len) != 0 || (arg[len] != '\0' && arg[len] != '='))
            continue;
        if (arg[len] == '=')
            *value = arg + len + 1;
        else if (*i + 1 < argc)
            *value = argv[++*i];
        else
            return NO_VALUE;
        return **value ? k : NO_VALUE;
    }
    return NOT_AN_OPTION;
}

/* An option given a second time (-o and --output are one): a usage error,
 * as neither the first value nor the last would be what the user meant of
 * both (two -o, two --pred read as one of them: a silent wrong answer).
 * seen holds a bit per option of names. */
static int given_twice(unsigned *seen, const char *const *names, int k)
{
    int o = k;
    if (strcmp(names[k], "--output") == 0) /* -o's long form: the same option */
        for (o = 0; strcmp(names[o], "-o") != 0; ++o)
            ;
    if (*seen & (1u << o))
        return fail(EXIT_USAGE, "%s given twice: give each option once", names[k]);
    *seen |= 1u << o;
    return EXIT_OK;
}

/* --help (or -h) anywhere before a "--", whatever else is wrong: the
 * commands that take "--" (nonzero, count, select, where) print their help. */
static int help_asked(int argc, char **argv)
{
    for (int i = 2; i < argc && strcmp(argv[i], "--") != 0; ++i)
        if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0)
            return 1;
    return 0;
}

/* take_option's failures as usage errors. */
static int option_error(int k, const char *arg, const char *cmd)
{
    return k == NO_VALUE ? fail(EXIT_USAGE, "%.*s needs a value", (int)strcspn(arg, "="), arg)
                         : fail(EXIT_USAGE, "unknown option '%s' (see clnz %s --help)", arg, cmd);
}

/* ---- nonzero and count ---- */

/* Their options that take a value: nonzero's, then count's (by name, as
 * set_option takes them). */
static const char *const nonzero_options[] = {"--pred", "--device", "--channels", "-o",
                                              "--output", "--count-out", "--layout", "--index",
                                              "--width", "--size", "--fill", "--order",
                                              "--offsets-out", "--format"};
static const char *const count_options[] = {"--pred", "--device", "--channels", "-o",
                                            "--output", "--format", "--axis"};

/* --axis A[,B...]: integers, negative from the end (checked against the
 * input's rank once it is read: cmd_count.c's counted_axes), given once. */
static int parse_axes(const char *v, cli_args *a)
{
    if (a->n_axes >= 0)
        return fail(EXIT_USAGE, "--axis given twice: list every axis in one (--axis 0,2)");
    a->n_axes = 0;
    for (const char *s = v;; ++s) {
        char *end;
        errno = 0;
        long ax = strtol(s, &end, 10);
        if (!plain_integer_start(s) || end == s || (*end && *end != ',') || errno ||
            ax < -CLNZ_MAX_RANK || ax >= CLNZ_MAX_RANK)
            return fail(EXIT_USAGE,
                        "--axis '%s': use integers in %d..%d joined by ',' (0,2 or -1)", v,
                        -CLNZ_MAX_RANK, CLNZ_MAX_RANK - 1);
        if (a->n_axes == CLNZ_MAX_RANK)
            return fail(EXIT_USAGE, "--axis '%s': more than %d axes", v, CLNZ_MAX_RANK);
        a->axes[a->n_axes++] = (int)ax;
        s = end;
        if (!*s)
            return EXIT_OK;
    }
}

static int set_option(const char *name, const char *v, cli_args *a)
{
    char why[300];
    int64_t w;
    if (strcmp(name, "--pred") == 0) {
        if (!parse_pred(v, &a->pred, why, sizeof why))
            return fail(EXIT_USAGE, "%s", why);
    } else if (strcmp(name, "--device") == 0) {
        a->device = v;
    } else if (strcmp(name, "--channels") == 0) {
        if (strcmp(v, "any") == 0)
            a->channels = 1 + CLNZ_CHANNELS_ANY;
        else if (strcmp(v, "all") == 0)
            a->channels = 1 + CLNZ_CHANNELS_ALL;
        else
            return fail(EXIT_USAGE, "--channels '%s': use any or all", v);
    } else if (strcmp(name, "-o") == 0 || strcmp(name, "--output") == 0) {
        a->output = v;
    } else if (strcmp(name, "--count-out") == 0) {
        a->count_out = v;
    } else if (strcmp(name, "--offsets-out") == 0) {
        a->offsets_out = v;
    } else if (strcmp(name, "--layout") == 0) {
        if (strcmp(v, "rows") == 0)
            a->opts.layout = CLNZ_LAYOUT_ROWS;
        else if (strcmp(v, "columns") == 0)
            a->opts.layout = CLNZ_LAYOUT_COLUMNS;
        else if (strcmp(v, "flat") == 0)
            a->opts.layout = CLNZ_LAYOUT_FLAT;
        else
            return fail(EXIT_USAGE, "--layout '%s': use rows, columns or flat", v);
    } else if (strcmp(name, "--index") == 0) {
        if (strcmp(v, "int64") == 0)
            a->opts.index_type = CLNZ_INDEX_INT64;
        else if (strcmp(v, "int32") == 0)
            a->opts.index_type = CLNZ_INDEX_INT32;
        else if (strcmp(v, "uint32") == 0)
            a->opts.index_type = CLNZ_INDEX_UINT32;
        else
            return fail(EXIT_USAGE, "--index '%s': use int64, int32 or uint32", v);
    } else if (strcmp(name, "--width") == 0) {
        /* 1 up: the API's width 0 means "the rank", which a --width 0 would
         * silently be (leaving --width out says that) */
        if (!parse_i64(v, &w) || w < 1 || w > CLNZ_MAX_RANK)
            return fail(EXIT_USAGE,
                        "--width '%s': use an integer in 1..%d (without --width: the rank)", v,
                        CLNZ_MAX_RANK);
        a->opts.width = (int)w;
    } else if (strcmp(name, "--size") == 0) {
        if (!parse_i64(v, &a->opts.size) || a->opts.size < 0)
            return fail(EXIT_USAGE, "--size '%s': use a non-negative integer", v);
        a->opts.has_size = 1;
    } else if (strcmp(name, "--order") == 0) {
        if (strcmp(v, "xy") == 0)
            a->opts.order = CLNZ_ORDER_XY;
        else if (strcmp(v, "rc") == 0)
            a->opts.order = CLNZ_ORDER_ROW_MAJOR;
        else
            return fail(EXIT_USAGE, "--order '%s': use rc (row, column) or xy", v);
    } else if (strcmp(name, "--format") == 0) {
        a->format_given = 1;
        return parse_format(v, &a->format);
    } else if (strcmp(name, "--axis") == 0) {
        return parse_axes(v, a);
    } else if (strcmp(name, "--fill") == 0) {
        if (!parse_i64(v, &a->opts.fill))
            return fail(EXIT_USAGE, "--fill '%s': use an integer", v);
        a->fill_given = 1;
    }
    return EXIT_OK;
}

int cli_parse_args(int argc, char **argv, int is_nonzero, cli_args *a)
{
    const char *cmd = is_nonzero ? "nonzero" : "count";
    memset(a, 0, sizeof *a);
    clnz_nonzero_options_init(&a->opts);
    a->pred = clnz_pred_nonzero();
    a->n_axes = -1;
    const char *const *names = is_nonzero ? nonzero_options : count_options;
    int n_names = is_nonzero ? (int)(sizeof nonzero_options / sizeof nonzero_options[0])
                             : (int)(sizeof count_options / sizeof count_options[0]);
    if (help_asked(argc, argv))
        return CLI_HELP;
    unsigned seen = 0;
    int options_end = 0; /* after "--", every argument is INPUT (a file named "-x.npy") */
    for (int i = 2; i < argc; ++i) {
        const char *arg = argv[i];
        if (!options_end && strcmp(arg, "--") == 0) {
            options_end = 1;
            continue;
        }
        if (options_end) {
            if (a->input)
                return fail(EXIT_USAGE, "unexpected argument '%s' (one INPUT only)", arg);
            a->input = arg;
            continue;
        }
        if (is_nonzero && strcmp(arg, "--batch") == 0) {
            a->batch = 1;
            continue;
        }
        if (!is_nonzero && strcmp(arg, "--keepdims") == 0) {
            a->keepdims = 1;
            continue;
        }
        if (arg[0] != '-' || strcmp(arg, "-") == 0) {
            if (a->input)
                return fail(EXIT_USAGE, "unexpected argument '%s' (one INPUT only)", arg);
            a->input = arg;
            continue;
        }
        const char *v;
        int k = take_option(argc, argv, &i, names, n_names, &v);
        if (k < 0)
            return option_error(k, arg, cmd);
        int rc = strcmp(names[k], "--axis") == 0 ? EXIT_OK : given_twice(&seen, names, k);
        if (!rc)
            rc = set_option(names[k], v, a);
        if (rc)
            return rc;
    }
    if (!a->input)
        return fail(EXIT_USAGE, "missing INPUT (see clnz %s --help)", cmd);
    if (is_nonzero && !a->output)
        return fail(EXIT_USAGE, "missing -o OUTPUT.npy (see clnz nonzero --help)");
    if (a->batch && a->channels)
        return fail(EXIT_USAGE, "--batch and --channels do not go together");
    if ((a->n_axes >= 0 || a->keepdims) && a->channels)
        return fail(EXIT_USAGE, "--%s and --channels do not go together (--channels counts "
                                "the pixels of the whole image)",
                    a->n_axes >= 0 ? "axis" : "keepdims");
    if (a->batch != (a->offsets_out != NULL))
        return fail(EXIT_USAGE, a->batch ? "--batch needs --offsets-out OFFSETS.npy"
                                         : "--offsets-out needs --batch");
    /* what a batch cannot be, whatever the input (a width depends on its rank) */
    if (a->batch && a->opts.has_size)
        return fail(EXIT_USAGE, "--batch has no --size: each item has its own count");
    if (a->batch && a->opts.layout != CLNZ_LAYOUT_ROWS)
        return fail(EXIT_USAGE, "--batch writes rows only: no --layout columns or flat");
    if (is_nonzero) {
        if (a->fill_given && !a->opts.has_size)
            return fail(EXIT_USAGE, "--fill pads a --size S result: it needs --size");
        /* the library's checks of the options alone (flat with --width or
         * --order xy, a fill the index type cannot hold), before any input */
        char why[CLI_ERR_MAX];
        if (clnz_nonzero_options_check(&a->opts, why, sizeof why) != CLNZ_SUCCESS)
            return fail(EXIT_USAGE, "%s", why);
    }
    return EXIT_OK;
}

/* ---- select and where ---- */
/* Their options that take a value; where takes the first four only. */
static const char *const sel_option_names[] = {"-o", "--output", "--device", "--format",
                                               "--mask", "--pred"};
enum { SEL_OUTPUT_SHORT, SEL_OUTPUT, SEL_DEVICE, SEL_FORMAT, SEL_MASK, SEL_PRED, N_SEL_OPTIONS };

/* Whether path opens the stream on standard input (/dev/stdin,
 * /proc/self/fd/0 over a pipe, a FIFO, a socket or a terminal), which a
 * '-' input also reads: the second reader would find it drained. A regular
 * file on standard input is not one: opening it by a path reads it anew. */
static int names_stdin_stream(const char *path)
{
    struct stat in, p;
    if (fstat(STDIN_FILENO, &in) != 0 || S_ISREG(in.st_mode) || stat(path, &p) != 0)
        return 0;
    return in.st_dev == p.st_dev && in.st_ino == p.st_ino;
}

/* Options of both commands; positionals may be negative numbers (where).
 * --help before a "--" wins, as for nonzero and count (help_asked). */
int cli_parse_sel_args(int argc, char **argv, const char *cmd, int max_positional,
                       int with_mask, sel_args *a)
{
    memset(a, 0, sizeof *a);
    a->pred = clnz_pred_nonzero();
    if (help_asked(argc, argv))
        return CLI_HELP;
    unsigned seen = 0;
    int options_end = 0; /* after "--", every argument is positional */
    for (int i = 2; i < argc; ++i) {
        const char *arg = argv[i], *v;
        clnz_scalar num;
        if (!options_end && strcmp(arg, "--") == 0) {
            options_end = 1;
            continue;
        }
        if (options_end || arg[0] != '-' || strcmp(arg, "-") == 0 ||
            cli_parse_number(arg, &num) != 0) {
            if (a->n_positional == max_positional)
                return fail(EXIT_USAGE, "unexpected argument '%s' (see clnz %s --help)", arg, cmd);
            a->positional[a->n_positional++] = arg;
            continue;
        }
        int k = take_option(argc, argv, &i, sel_option_names,
                            with_mask ? N_SEL_OPTIONS : SEL_MASK, &v);
        char why[300];
        if (k < 0)
            return option_error(k, arg, cmd);
        if (given_twice(&seen, sel_option_names, k))
            return EXIT_USAGE;
        if (k == SEL_OUTPUT_SHORT || k == SEL_OUTPUT)
            a->output = v;
        else if (k == SEL_DEVICE)
            a->device = v;
        else if (k == SEL_FORMAT && parse_format(v, &a->format))
            return EXIT_USAGE;
        else if (k == SEL_MASK)
            a->mask = v;
        else if (k == SEL_PRED && !parse_pred(v, &a->pred, why, sizeof why))
            return fail(EXIT_USAGE, "%s", why);
    }
    static const char *const names[2][3] = {{"X"}, {"COND", "X", "Y"}};
    if (a->n_positional < max_positional)
        return fail(EXIT_USAGE, "missing %s (see clnz %s --help)",
                    names[max_positional == 3][a->n_positional], cmd);
    if (!a->output)
        return fail(EXIT_USAGE, "missing -o OUTPUT.npy (see clnz %s --help)", cmd);
    /* standard input can be read once */
    int from_stdin = a->mask && strcmp(a->mask, "-") == 0;
    for (int i = 0; i < a->n_positional; ++i)
        from_stdin += strcmp(a->positional[i], "-") == 0;
    if (from_stdin > 1)
        return fail(EXIT_USAGE, "only one input can be '-' (standard input)");
    for (int i = -1; from_stdin && i < a->n_positional; ++i) {
        const char *p = i < 0 ? a->mask : a->positional[i];
        char q[QUOTE_MAX]; /* io_quote's rule, from the library: the fuzzer links no io */
        if (p && strcmp(p, "-") != 0 && names_stdin_stream(p))
            return fail(EXIT_USAGE, "%s is standard input, which '-' reads already",
                        quote_name(p, q, sizeof q));
    }
    return EXIT_OK;
}
