/* cmd_warmup.c: `clnz warmup`, over clnz_warmup: the programs a declared
 * set of uses needs, compiled once into the program cache (or checked
 * there), so that the processes that follow start without compiling. */
#include "cli/cli.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static const char usage_warmup[] =
    "usage: clnz warmup [--device SEL] [--dtypes LIST] [--ops LIST] [--predicates LIST]\n"
    "                   [--strategies LIST]\n"
    "\n"
    "Compiles (or loads from CLNZ_BUNDLE or the program cache) every program the named\n"
    "uses need on the device, and leaves those it compiled in the program cache: the\n"
    "first call of every later process then compiles nothing (those CLNZ_BUNDLE gave\n"
    "stay in the bundle, for processes that name it). A service calls clnz_warmup()\n"
    "(Python: clnz.warmup()) at start for the same within one process. LISTs are\n"
    "comma-separated names, or all:\n"
    "  --dtypes      bool,u8,i8,u16,i16,u32,i32,u64,i64,f16,f32,f64 (default: all)\n"
    "  --ops         count,nonzero,batched,select,where,mask,scan,channels,image2d\n"
    "                (default: count,nonzero)\n"
    "  --predicates  nonzero, compare (any of eq,ne,lt,le,gt,ge) (default: nonzero)\n"
    "  --strategies  auto,single-tile,two-pass,lookback,stream (default: auto, the ones\n"
    "                the device's calls pick)\n";

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

int cmd_warmup(int argc, char **argv)
{
    const char *device = NULL;
    clnz_uses uses = {0};
    for (int i = 2; i < argc; ++i) {
        if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            fputs(usage_warmup, stdout);
            return EXIT_OK;
        }
        int r = cli_uses_option(argc, argv, &i, &device, &uses);
        if (r < 0)
            return EXIT_USAGE;
        if (r == 0)
            return fail(EXIT_USAGE, "unknown argument '%s' for warmup (see clnz warmup --help)",
                        argv[i]);
    }
    clnz_context *ctx;
    int rc = open_context(device, &ctx);
    if (rc)
        return rc;
    double t0 = now();
    int programs = 0;
    clnz_status st = clnz_warmup(ctx, &uses, &programs);
    clnz_stats s;
    if (st) {
        rc = lib_fail(ctx, st, "warmup");
    } else if (clnz_context_stats(ctx, &s) == CLNZ_SUCCESS) {
        printf("%d programs ready: %llu compiled, %llu from the program cache, %llu from a "
               "bundle (%.1f s)\n",
               programs, (unsigned long long)s.programs_from_source,
               (unsigned long long)s.programs_from_cache,
               (unsigned long long)((uint64_t)programs - s.programs_from_source -
                                    s.programs_from_cache),
               now() - t0);
        /* the command's point is what later processes find there */
        char *dir = malloc(CACHE_PATH_ROOM);
        if (dir && !*clnz_cache_dir(dir, CACHE_PATH_ROOM))
            fprintf(stderr, "clnz: warning: no cache folder (CLNZ_CACHE_DIR, an absolute "
                            "XDG_CACHE_HOME, HOME: none set): the programs are not kept for "
                            "later processes\n");
        free(dir);
    }
    cli_release(ctx, rc);
    return rc;
}
