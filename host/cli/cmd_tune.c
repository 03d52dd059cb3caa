/* cmd_tune.c: `clnz tune`, over the tuning API. */
#include "cli/cli.h"
#include "io/io.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char usage_tune[] =
    "usage: clnz tune [--quick] [--device SEL]\n"
    "\n"
    "Finds fast launch parameters (work-group size, items per work-item) for every\n"
    "kernel on the device: each candidate's result is checked against a reference,\n"
    "then timed with OpenCL profiling events on a cache-sized and a large problem\n"
    "(median after a warm-up). Prints what it tried and stores the winners in the\n"
    "cache folder, where every later process on this device finds them.\n"
    "  --quick   fewer candidates and runs, and on a CPU a smaller large problem\n"
    "            (well under a minute)\n";

static void progress(void *user, int done, int total, const clnz_tune_row *r)
{
    (void)user;
    if (!isatty(2))
        return;
    fprintf(stderr, "\r\033[Kclnz tune: [%d/%d] %s wg %zu items %zu: %.2f GB/s", done, total,
            r->kernel, r->launch.work_group_size, r->launch.items_per_work_item,
            r->gbps[1]);
    if (done == total)
        fputs("\r\033[K", stderr);
    fflush(stderr);
}

/* What a candidate that lost by failing shows: its call failed (a launch or
 * a buffer the device refused), or its results were wrong. */
static const char *verdict(const clnz_tune_row *r)
{
    if (r->correct)
        return "";
    return r->ms[0] == CLNZ_TUNE_FAILED || r->ms[1] == CLNZ_TUNE_FAILED ? "FAILED "
                                                                        : "WRONG RESULT ";
}

int cmd_tune(int argc, char **argv)
{
    int quick = 0, got;
    const char *device = NULL;
    for (int i = 2; i < argc; ++i) {
        if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            fputs(usage_tune, stdout);
            return EXIT_OK;
        } else if (strcmp(argv[i], "--quick") == 0) {
            quick = 1;
        } else if ((got = cli_device_option(argc, argv, &i, &device)) != 0) {
            if (got < 0)
                return EXIT_USAGE;
        } else {
            return fail(EXIT_USAGE, "unknown argument '%s' for tune (see clnz tune --help)",
                        argv[i]);
        }
    }
    clnz_context *ctx;
    int rc = open_context(device, &ctx);
    if (rc)
        return rc;
    clnz_tune_row rows[256];
    int n = 0;
    clnz_status st = clnz_tune(ctx, quick, progress, NULL, rows, 256, &n);
    if (st) {
        rc = lib_fail(ctx, st, "tune");
        clnz_context_release(ctx);
        return rc;
    }
    /* a call that succeeds may warn of other things too (a program cache it
     * cannot write): only its last step's own warning says not stored */
    int stored = strstr(clnz_context_message(ctx), "cannot store the tuning result") == NULL;
    printf("%-9s %6s %6s %12s %12s  %s\n", "kernel", "wg", "items", "GB/s small", "GB/s large",
           "");
    for (int i = 0; i < n && i < 256; ++i) {
        clnz_launch won;
        clnz_context_launch(ctx, rows[i].kernel, &won, NULL);
        int winner = won.work_group_size == rows[i].launch.work_group_size &&
                     won.items_per_work_item == rows[i].launch.items_per_work_item;
        printf("%-9s %6zu %6zu %12.2f %12.2f  %s%s%s\n", rows[i].kernel,
               rows[i].launch.work_group_size, rows[i].launch.items_per_work_item, rows[i].gbps[0],
               rows[i].gbps[1], verdict(&rows[i]), rows[i].is_default ? "default " : "",
               winner ? "<- winner" : "");
    }
    printf("strategy for inputs of many tiles: %s\n",
           clnz_strategy_name(clnz_context_auto_strategy(ctx)));
    char dir[PATH_MAX + 8]; /* the library uses no longer path */
    char *shown = NULL;
    if (!*clnz_cache_dir(dir, PATH_MAX))
        printf("not stored: no cache folder\n");
    else if (!stored)
        printf("not stored (see the warning)\n");
    else if ((shown = io_show(strcat(dir, "/tuning"))) != NULL) /* a line break stays one line */
        printf("stored in %s\n", shown);
    else
        rc = fail(EXIT_FAIL, "out of memory");
    free(shown);
    cli_release(ctx, rc);
    return rc;
}

