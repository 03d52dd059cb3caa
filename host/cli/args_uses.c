/* args_uses.c: the options `clnz warmup` and `clnz bundle build` share: a
 * device (`clnz tune`'s too) and a declared set of uses (--dtypes, --ops, --predicates,
 * --strategies, each a comma-separated list), parsed by the library's own
 * clnz_uses_parse so that the names are the library's. */
#include "cli/cli.h"

#include <stdio.h>
#include <string.h>

/* "--NAME VALUE" or "--NAME=VALUE" at argv[*i]: its value, or NULL. */
static const char *option_value(int argc, char **argv, int *i, const char *name)
{
    size_t n = strlen(name);
    if (strncmp(argv[*i], name, n) != 0)
        return NULL;
    if (argv[*i][n] == '=')
        return argv[*i] + n + 1;
    if (argv[*i][n] == '\0' && *i + 1 < argc)
        return argv[++*i];
    return NULL;
}

int cli_device_option(int argc, char **argv, int *i, const char **device)
{
    if (strcmp(argv[*i], "--device") == 0 && *i + 1 >= argc)
        return fail(EXIT_USAGE, "--device needs a value"), -1;
    const char *v = option_value(argc, argv, i, "--device");
    if (!v)
        return 0;
    if (!*v)
        return fail(EXIT_USAGE, "--device needs a value"), -1;
    if (*device)
        return fail(EXIT_USAGE, "--device given twice: give each option once"), -1;
    *device = v;
    return 1;
}

int cli_uses_option(int argc, char **argv, int *i, const char **device, clnz_uses *uses)
{
    static const char *const axes[] = {"dtypes", "ops", "predicates", "strategies"};
    int got = cli_device_option(argc, argv, i, device);
    if (got)
        return got;
    for (size_t a = 0; a < sizeof axes / sizeof axes[0]; ++a) {
        char name[24];
        snprintf(name, sizeof name, "--%s", axes[a]);
        if (strcmp(argv[*i], name) == 0 && *i + 1 >= argc)
            return fail(EXIT_USAGE, "%s needs a value", name), -1;
        const char *v = option_value(argc, argv, i, name);
        if (!v)
            continue;
        const uint32_t *field[] = {&uses->dtypes, &uses->ops, &uses->predicates,
                                   &uses->strategies};
        if (*field[a]) /* a second list would replace the first: list them all in one */
            return fail(EXIT_USAGE, "%s given twice: list every name in one (%s a,b)", name,
                        name), -1;
        char msg[600];
        if (clnz_uses_parse(uses, axes[a], v, msg, sizeof msg) != CLNZ_SUCCESS)
            return fail(EXIT_USAGE, "%s: %s", name, msg), -1;
        return 1;
    }
    return 0;
}
