/* fuzz_args.c: libFuzzer target for the command line's parsers
 * (host/cli/args.c), which take whatever a script or a user types. The
 * input is a command line: its first byte picks nonzero, count, select or
 * where, and the rest is split into arguments at newlines. A parser must
 * return OK, help or a usage error, and what it accepts must be within the
 * checks the commands rely on. Run with -close_fd_mask=2: usage errors go to
 * stderr. */
#include "cli/cli.h"

#include <stdlib.h>
#include <string.h>

enum { MAX_ARGS = 64 };

static void check_nonzero_args(const cli_args *a, int is_nonzero)
{
    if (!a->input || (is_nonzero && !a->output))
        abort(); /* accepted without INPUT or -o */
    if (a->opts.width < 0 || a->opts.width > CLNZ_MAX_RANK || a->opts.size < 0)
        abort();
    if ((a->batch != 0) != (a->offsets_out != NULL) || (a->batch && a->channels))
        abort();
    if (a->channels < 0 || a->channels > 2 || (unsigned)a->opts.layout > CLNZ_LAYOUT_FLAT ||
        (unsigned)a->opts.index_type > CLNZ_INDEX_UINT32)
        abort();
    if (a->n_axes < -1 || a->n_axes > CLNZ_MAX_RANK || (is_nonzero && a->n_axes != -1) ||
        ((a->n_axes >= 0 || a->keepdims) && a->channels))
        abort(); /* --axis: count's, never beside --channels */
    for (int k = 0; k < a->n_axes; ++k)
        if (a->axes[k] < -CLNZ_MAX_RANK || a->axes[k] >= CLNZ_MAX_RANK)
            abort();
    if (is_nonzero && a->opts.index_type == CLNZ_INDEX_INT32 &&
        (a->opts.fill < INT32_MIN || a->opts.fill > INT32_MAX))
        abort(); /* a fill the index type cannot hold */
}

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size)
{
    if (size == 0)
        return 0;
    static const char *const cmds[] = {"nonzero", "count", "select", "where"};
    int cmd = data[0] % 4;
    char *text = malloc(size); /* the arguments, NUL-terminated in place */
    if (!text)
        return 0;
    memcpy(text, data + 1, size - 1);
    text[size - 1] = '\0';
    char *argv[MAX_ARGS + 1] = {"clnz", (char *)cmds[cmd]};
    int argc = 2;
    for (char *p = text; argc < MAX_ARGS && size > 1;) {
        argv[argc++] = p;
        char *nl = strchr(p, '\n');
        if (!nl)
            break;
        *nl = '\0';
        p = nl + 1;
    }
    argv[argc] = NULL;
    int rc;
    if (cmd < 2) {
        cli_args a;
        rc = cli_parse_args(argc, argv, cmd == 0, &a);
        if (rc == EXIT_OK)
            check_nonzero_args(&a, cmd == 0);
    } else {
        sel_args a;
        int n = cmd == 2 ? 1 : 3;
        rc = cli_parse_sel_args(argc, argv, cmds[cmd], n, cmd == 2, &a);
        if (rc == EXIT_OK && (a.n_positional != n || !a.output))
            abort();
        if (rc == EXIT_OK && (unsigned)a.pred.op > CLNZ_OP_GE)
            abort();
    }
    if (rc != EXIT_OK && rc != CLI_HELP && rc != EXIT_USAGE)
        abort(); /* a parser returned something the commands do not expect */
    for (int i = 2; i < argc; ++i) { /* every argument as a number, as where reads X and Y */
        clnz_scalar num;
        int r = cli_parse_number(argv[i], &num);
        if (r < -1 || r > 1)
            abort();
    }
    free(text);
    return 0;
}
