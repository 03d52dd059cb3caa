/* cmd_devices.c: `clnz devices`, the platforms and devices clnz sees. */
#include "cli/cli.h"
#include "io/io.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A name the driver gives, as it is; quoted (io_quote) only where it holds
 * a control character, so that a device stays one line of the listing. */
static const char *driver_text(const char *s, char buf[IO_QUOTE_MAX])
{
    for (const unsigned char *p = (const unsigned char *)s; *p; ++p)
        if (*p < 0x20 || *p == 0x7f)
            return io_quote(s, buf, IO_QUOTE_MAX);
    return s;
}

static const char usage_devices[] =
    "usage: clnz devices\n"
    "\n"
    "Lists OpenCL platforms and devices as P:D; '*' marks the one clnz uses by default,\n"
    "and the last line says why (CLNZ_DEVICE, else the first GPU that is not a\n"
    "simulator, else the first device that is not one). A CLNZ_DEVICE that names\n"
    "none of them is an error (exit 1), after the list.\n"
    "The last column says whether launch parameters are stored for the device: tuned\n"
    "(this device, driver and clnz version), vendor-tuned (another device of the same\n"
    "vendor and type) or defaults.\n";

/* Why no device can be used: the listing has no message, context creation
 * says why (CLNZ_DEVICE matching nothing, the driver's error, a resource
 * limit); `fallback` if it succeeds after all. */
static int no_default(const char *fallback)
{
    clnz_context *ctx = NULL;
    char msg[400];
    snprintf(msg, sizeof msg, "%s", fallback);
    if (clnz_context_create(NULL, &ctx, msg, sizeof msg) == CLNZ_SUCCESS)
        snprintf(msg, sizeof msg, "%s", fallback);
    clnz_context_release(ctx);
    return fail(EXIT_FAIL, "%s", msg);
}

int cmd_devices(int argc, char **argv)
{
    for (int i = 2; i < argc; ++i) {
        if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            fputs(usage_devices, stdout);
            return EXIT_OK;
        }
        return fail(EXIT_USAGE, "unexpected argument '%s' for devices", argv[i]);
    }
    clnz_device_info infos[64];
    int n = 0;
    clnz_status st = clnz_list_devices(infos, 64, &n);
    if (st)
        return fail(EXIT_FAIL, "cannot list devices: %s", clnz_status_string(st));
    if (n == 0)
        return no_default("no OpenCL device found");
    static const char *const tuning[] = {"defaults", "vendor-tuned", "tuned", "forced"};
    for (int i = 0; i < n && i < 64; ++i) {
        const clnz_device_info *d = &infos[i];
        char name[IO_QUOTE_MAX], platform[IO_QUOTE_MAX], version[IO_QUOTE_MAX];
        printf("%c %d:%d  %-4s %s  [%s]  %s, %.1f GiB, max alloc %.1f GiB, %s\n",
               d->is_default ? '*' : ' ', d->platform, d->device, d->device_type,
               driver_text(d->device_name, name), driver_text(d->platform_name, platform),
               driver_text(d->version, version), (double)d->global_mem_size / (1 << 30),
               (double)d->max_alloc_size / (1 << 30), tuning[d->tuning]);
    }
    for (int i = 0; i < n && i < 64; ++i)
        if (infos[i].is_default) {
            printf("default %d:%d: %s\n", infos[i].platform, infos[i].device,
                   infos[i].why_default);
            return EXIT_OK;
        }
    /* listed, but none is the default: CLNZ_DEVICE names none of them */
    return no_default("no device is the default");
}

