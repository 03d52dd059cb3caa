/* cmd_bundle.c: `clnz bundle build|list|add`, over the bundle API: a
 * bundle made on a device (or its sources, for an offline compiler),
 * shown, or given a binary built offline; the folder is written all or
 * nothing (io/output_dir.c) and replaces only a bundle clnz made. */
#include "cli/cli.h"
#include "io/output_dir.h"

#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static const char usage_bundle[] =
    "usage: clnz bundle build -o DIR [--device SEL] [--dtypes LIST] [--ops LIST]\n"
    "                         [--predicates LIST] [--strategies LIST] [--sources]\n"
    "       clnz bundle list DIR\n"
    "       clnz bundle add DIR PROGRAM BINARY\n"
    "\n"
    "A bundle is a folder of compiled programs and their manifest.txt (the device,\n"
    "driver and clnz version they are for, the uses they cover, a checksum per file).\n"
    "CLNZ_BUNDLE=DIR (or clnz_context_use_bundle) makes clnz load its programs from\n"
    "one before it would compile: what a device without a run-time compiler (an FPGA)\n"
    "needs, and CLNZ_NO_COMPILE=1 makes any device behave so.\n"
    "  build    compiles the programs the named uses need on the device (the lists as\n"
    "           for clnz warmup; default: every dtype, count and nonzero, the nonzero\n"
    "           predicate, the device's strategies) into DIR\n"
    "  --sources  writes each program's OpenCL C source instead, for an offline\n"
    "           compiler (aoc, v++); the manifest lists its build options\n"
    "  list     checks DIR (every checksum) and prints its manifest\n"
    "  add      puts BINARY (built offline from program PROGRAM's source) in DIR\n"
    "DIR is replaced whole or not at all, and only if it is empty or a bundle.\n";

/* A bundle folder clnz made: a manifest that starts as clnz writes one, and
 * nothing but files with names a bundle's files have (output_dir.h keeps
 * that rule: they are also the only names a removal deletes; a folder of
 * such a name would not be deleted, so it makes the folder not ours). */
static int is_bundle(int dirfd)
{
    int fd = openat(dirfd, "manifest.txt", O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
    char head[20] = "";
    int ok = fd >= 0 && read(fd, head, sizeof head) == (ssize_t)sizeof head &&
             memcmp(head, "clnz program bundle ", sizeof head) == 0;
    if (fd >= 0)
        close(fd);
    int copy = ok ? dup(dirfd) : -1;
    DIR *d = copy >= 0 ? fdopendir(copy) : NULL;
    if (!d) {
        if (copy >= 0)
            close(copy);
        return 0;
    }
    /* the copy shares its position with dirfd, which a caller may have read
     * (the emptiness check): from the first entry, or a folder read to its
     * end would pass for a bundle with nothing else in it */
    rewinddir(d);
    struct stat sb;
    for (struct dirent *e; ok && (e = readdir(d));)
        ok = strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0 ||
             (out_dir_own_name(e->d_name) &&
              fstatat(dirfd, e->d_name, &sb, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(sb.st_mode));
    closedir(d);
    return ok;
}

/* The target folder, checked and its temporary made: before the OpenCL
 * context, so that a bad DIR fails before minutes of compiling, and so
 * that the signal thread (out_dir_begin installs it) is in place before
 * the driver starts threads of its own, which would otherwise take a
 * SIGINT's default action at any point, halfway through the swap too. */
static int open_target(const char *dir, out_dir **d)
{
    char err[CLI_ERR_MAX];
    *d = out_dir_begin(dir, is_bundle, err, sizeof err);
    return *d ? EXIT_OK : fail(EXIT_FAIL, "%s", err);
}

/* Every file of the bundle into the target, all or nothing; d is discarded. */
static int write_bundle(const clnz_bundle *b, out_dir *d)
{
    char err[CLI_ERR_MAX];
    int rc = 0;
    for (int i = 0; i < clnz_bundle_file_count(b) && !rc; ++i) {
        const char *name;
        const void *data;
        size_t size;
        clnz_bundle_file(b, i, &name, &data, &size);
        rc = out_dir_file(d, name, data, size, err, sizeof err);
    }
    if (!rc)
        rc = out_dir_commit(d, err, sizeof err);
    out_dir_discard(d);
    return rc ? fail(EXIT_FAIL, "%s", err) : EXIT_OK;
}

static size_t bundle_bytes(const clnz_bundle *b)
{
    size_t total = 0;
    for (int i = 0; i < clnz_bundle_file_count(b); ++i) {
        const char *name;
        const void *data;
        size_t size = 0;
        clnz_bundle_file(b, i, &name, &data, &size);
        total += size;
    }
    return total;
}

static int bundle_build(int argc, char **argv)
{
    const char *device = NULL, *out = NULL;
    clnz_uses uses = {0};
    unsigned flags = 0;
    for (int i = 3; i < argc; ++i) {
        int r = cli_uses_option(argc, argv, &i, &device, &uses);
        if (r < 0)
            return EXIT_USAGE;
        if (r)
            continue;
        if (strcmp(argv[i], "--sources") == 0)
            flags |= CLNZ_BUNDLE_SOURCES;
        else if (strcmp(argv[i], "-o") == 0 && out)
            return fail(EXIT_USAGE, "-o given twice: give each option once");
        else if (strcmp(argv[i], "-o") == 0 && i + 1 < argc && argv[i + 1][0])
            out = argv[++i];
        else if (strcmp(argv[i], "-o") == 0) /* also -o '': as other commands' empty values */
            return fail(EXIT_USAGE, "-o needs a folder (see clnz bundle --help)");
        else
            return fail(EXIT_USAGE, "unknown argument '%s' for bundle build (see clnz bundle "
                        "--help)", argv[i]);
    }
    if (!out)
        return fail(EXIT_USAGE, "bundle build needs -o DIR (see clnz bundle --help)");
    out_dir *d;
    int rc = open_target(out, &d);
    if (rc)
        return rc;
    clnz_context *ctx;
    rc = open_context(device, &ctx);
    if (rc) {
        out_dir_discard(d);
        return rc;
    }
    clnz_bundle *b = NULL;
    clnz_status st = clnz_bundle_build(ctx, &uses, flags, &b);
    if (st)
        out_dir_discard(d);
    rc = st ? lib_fail(ctx, st, "bundle build") : write_bundle(b, d);
    if (!rc)
        printf("%d programs, %zu bytes\n", clnz_bundle_file_count(b) - 1, bundle_bytes(b));
    clnz_bundle_release(b);
    cli_release(ctx, rc);
    return rc;
}

/* A library message that names the bundle folder as it was given
 * ('%s', raw): the folder quoted as clnz's messages quote every path
 * (io_quote), so that a name with a line break or a quote in it stays one
 * line and reads back exactly (fail() would make control characters '?'). */
static int bundle_fail(const char *dir, const char *msg)
{
    size_t n = strlen(dir);
    const char *at = strchr(msg, '\'');
    while (at && !(strncmp(at + 1, dir, n) == 0 && at[1 + n] == '\''))
        at = strchr(at + 1, '\'');
    if (!at)
        return fail(EXIT_FAIL, "%s", msg);
    char q[IO_QUOTE_MAX];
    return fail(EXIT_FAIL, "%.*s%s%s", (int)(at - msg), msg, io_quote(dir, q, sizeof q),
                at + n + 2);
}

static int bundle_open(const char *dir, clnz_bundle **b)
{
    size_t size = strlen(dir) + CLI_ERR_MAX; /* the folder whole, so that it can be found */
    char *msg = malloc(size);
    if (!msg)
        return fail(EXIT_FAIL, "out of memory");
    clnz_status st = clnz_bundle_open(dir, b, msg, size);
    int rc = !st ? EXIT_OK
             : st == CLNZ_ERROR_BUNDLE_REFUSED ? bundle_fail(dir, msg)
                                               : fail(EXIT_FAIL, "%s", clnz_status_string(st));
    free(msg);
    return rc;
}

static int bundle_list(int argc, char **argv)
{
    if (argc != 4)
        return fail(EXIT_USAGE, "bundle list takes one DIR (see clnz bundle --help)");
    clnz_bundle *b;
    int rc = bundle_open(argv[3], &b);
    if (rc)
        return rc;
    const char *name;
    const void *data;
    size_t size;
    clnz_bundle_file(b, 0, &name, &data, &size);
    fwrite(data, 1, size, stdout);
    clnz_bundle_release(b);
    return EXIT_OK;
}

static int bundle_add(int argc, char **argv)
{
    if (argc != 6)
        return fail(EXIT_USAGE, "bundle add takes DIR PROGRAM BINARY (see clnz bundle --help)");
    char *end;
    long program = strtol(argv[4], &end, 10);
    if (!*argv[4] || *end || program < 0 || program > 1000000)
        return fail(EXIT_USAGE, "PROGRAM '%s' is not a program number", argv[4]);
    char err[CLI_ERR_MAX];
    size_t size = 0;
    in_file in;
    unsigned char *data = NULL;
    if (in_open(&in, argv[5], err, sizeof err) == 0) {
        data = in_slurp(&in, &size, err, sizeof err);
        in_close(&in);
    }
    if (!data)
        return fail(EXIT_FAIL, "%s", err);
    clnz_bundle *b;
    int rc = bundle_open(argv[3], &b);
    if (!rc) {
        err[0] = '\0';
        clnz_status st = clnz_bundle_add_binary(b, (int)program, data, size, err, sizeof err);
        out_dir *d = NULL;
        rc = st ? fail(EXIT_FAIL, "bundle add: %s", *err ? err : clnz_status_string(st))
                : open_target(argv[3], &d);
        if (!rc)
            rc = write_bundle(b, d);
        clnz_bundle_release(b);
    }
    free(data);
    return rc;
}

int cmd_bundle(int argc, char **argv)
{
    const char *sub = argc > 2 ? argv[2] : "";
    if (strcmp(sub, "--help") == 0 || strcmp(sub, "-h") == 0) {
        fputs(usage_bundle, stdout);
        return EXIT_OK;
    }
    for (int i = 3; i < argc; ++i)
        if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            fputs(usage_bundle, stdout);
            return EXIT_OK;
        }
    if (strcmp(sub, "build") == 0)
        return bundle_build(argc, argv);
    if (strcmp(sub, "list") == 0)
        return bundle_list(argc, argv);
    if (strcmp(sub, "add") == 0)
        return bundle_add(argc, argv);
    return fail(EXIT_USAGE, "bundle needs build, list or add (see clnz bundle --help)");
}
