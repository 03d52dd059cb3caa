/* cmd_cache.c: `clnz cache`, the cache folder shown or emptied. The
 * folder is shown by io_show's rule: a path with a line break, a space or
 * a quote in it is printed quoted, never raw; its errors quote it always,
 * as every error of the command quotes its paths. */
#include "cli/cli.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static const char usage_cache[] =
    "usage: clnz cache [--clear]\n"
    "\n"
    "Prints the cache folder (tuning results and compiled programs); --clear deletes\n"
    "clnz's files in it. CLNZ_CACHE_DIR moves it (default $XDG_CACHE_HOME/clnz when\n"
    "that is an absolute path, else ~/.cache/clnz). The folder is printed as is when\n"
    "it is printable ASCII without spaces, quotes or backslashes, else quoted as in\n"
    "error messages ('a\\nb'). A file there is an error: no cache is kept.\n";

/* A file there, or in the path above it, or a link to nothing: the
 * library keeps no cache (a folder that does not exist yet is made at the
 * first write). */
static int no_folder(const char *dir)
{
    struct stat st;
    if (stat(dir, &st) == 0)
        return !S_ISDIR(st.st_mode);
    return errno == ENOTDIR || (errno == ENOENT && lstat(dir, &st) == 0);
}

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
    /* room for any environment variable (Linux caps one at 128 KiB): the
     * library gives the whole path or none, so a cut one cannot happen */
    size_t size = CACHE_PATH_ROOM;
    char *dir = malloc(size);
    if (!dir)
        return fail(EXIT_FAIL, "out of memory");
    clnz_cache_dir(dir, size);
    int rc = EXIT_OK;
    char *shown = NULL;
    if (!dir[0]) {
        rc = fail(EXIT_FAIL, "no cache folder: set CLNZ_CACHE_DIR or HOME");
    } else if (strlen(dir) >= PATH_MAX) { /* the library uses no cache then */
        rc = fail(EXIT_FAIL, "the cache folder's path is too long (%zu bytes; the limit is %d)",
                  strlen(dir), PATH_MAX - 1);
    } else if (!(shown = io_show(dir))) {
        rc = fail(EXIT_FAIL, "out of memory");
    } else if (clear) {
        int removed = 0;
        clnz_status st = clnz_cache_clear(&removed);
        char quoted[IO_QUOTE_MAX];
        io_quote(dir, quoted, sizeof quoted);
        if (st == CLNZ_ERROR_CACHE_FILE)
            rc = fail(EXIT_FAIL,
                      "cannot clear the cache: %d files removed from %s, others "
                      "could not be (a read-only folder?)",
                      removed, quoted);
        else if (st == CLNZ_ERROR_INVALID_VALUE) /* its path's length was checked above */
            rc = fail(EXIT_FAIL, "cannot clear the cache: %s is no folder", quoted);
        else if (st)
            rc = fail(EXIT_FAIL, "cannot clear the cache: %s", clnz_status_string(st));
        else
            printf("removed %d files from %s\n", removed, shown);
    } else if (no_folder(dir)) {
        char quoted[IO_QUOTE_MAX];
        io_quote(dir, quoted, sizeof quoted);
        rc = fail(EXIT_FAIL,
                  "the cache folder %s is no folder: no cache is kept (set "
                  "CLNZ_CACHE_DIR to a folder)",
                  quoted);
    } else {
        printf("%s\n", shown);
    }
    free(shown);
    free(dir);
    return rc;
}
