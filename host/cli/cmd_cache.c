/* cmd_cache.c: `clnz cache`, the cache folder shown or emptied. */
#include "cli/cli.h"

#include <stdio.h>
#include <string.h>

static const char usage_cache[] =
    "usage: clnz cache [--clear]\n"
    "\n"
    "Prints the cache folder (tuning results and compiled programs); --clear deletes\n"
    "clnz's files in it. CLNZ_CACHE_DIR moves it (default $XDG_CACHE_HOME/clnz, else\n"
    "~/.cache/clnz).\n";

int cmd_cache(int argc, char **argv)
{
    int clear = 0;
    for (int i = 2; i < argc; ++i) {
        if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            fputs(usage_cache, stdout);
            return EXIT_OK;
        } else if (strcmp(argv[i], "--clear") == 0) {
            clear = 1;
        } else {
            return fail(EXIT_USAGE, "unknown argument '%s' for cache (see clnz cache --help)",
                        argv[i]);
        }
    }
    char dir[1024];
    clnz_cache_dir(dir, sizeof dir);
    if (!dir[0])
        return fail(EXIT_FAIL, "no cache folder: set CLNZ_CACHE_DIR or HOME");
    if (clear) {
        int removed = 0;
        clnz_cache_clear(&removed);
        printf("removed %d files from %s\n", removed, dir);
    } else {
        printf("%s\n", dir);
    }
    return EXIT_OK;
}
