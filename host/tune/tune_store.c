/* tune_store.c: tuning results on disk, one human-readable file per device.
 *
 * <cache>/tuning/<platform>--<device>--<driver>--clnz-<version>.txt holds the
 * winners for one device, driver and clnz version;
 * <cache>/tuning/vendor--<vendor>--<type>--clnz-<version>.txt the last
 * winners on any device of that vendor and type. Lookup: the exact
 * file, then the vendor's, then the defaults (launch_plan.c). A file that fails its
 * checksum or does not parse is deleted; one whose key names another
 * device, driver or clnz version is ignored, never trusted. */
#include "core/context.h"
#include "core/cache.h"
#include "tune/tune.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The launch of every kernel and the preferred strategy; format 2 added the
 * lookback kernel and the strategy line (a format 1 file is another key:
 * ignored, then replaced by the next tuning). */
#define FORMAT "2"

/* The device's file and its vendor's (malloc'd); 0, or -1 out of memory. */
static int store_paths(const char *dir, const device_ident *id, char **exact, char **vendor)
{
    char p[128], d[128], v[128], dr[64];
    cache_sanitize(id->platform, p, sizeof p);
    cache_sanitize(id->device, d, sizeof d);
    cache_sanitize(id->driver, dr, sizeof dr);
    cache_sanitize(id->vendor, v, sizeof v);
    /* the version in the names too: two versions sharing a cache keep a file
     * each (the key inside refuses the other's, which then overwrote it) */
    *exact =
        cache_path(dir, "tuning/%.100s--%.100s--%.60s--clnz-" CLNZ_VERSION_STRING ".txt", p, d, dr);
    *vendor =
        cache_path(dir, "tuning/vendor--%.100s--%s--clnz-" CLNZ_VERSION_STRING ".txt", v, id->type);
    if (*exact && *vendor)
        return 0;
    free(*exact);
    free(*vendor);
    return -1;
}

/* "key value\n" lines in this order, then "checksum HEX\n" over them. */
static int format_file(const device_ident *id, const tune_result *r, char *out, size_t n)
{
    int k = snprintf(out, n,
                     CACHE_MAGIC_TUNING " written by clnz tune; the checksum covers the lines "
                     "above it\n"
                     "format " FORMAT "\nclnz %s\nplatform %s\ndevice %s\nvendor %s\ntype %s\n"
                     "driver %s\nstrategy %s\n",
                     CLNZ_VERSION_STRING, id->platform, id->device, id->vendor, id->type,
                     id->driver, clnz_strategy_name(r->strategy));
    for (int f = 0; f < TUNE_KERNELS && k > 0 && (size_t)k < n; ++f)
        k += snprintf(out + k, n - (size_t)k, "%s %zu %zu\n", tune_kernel_names[f],
                      r->launch[f].work_group_size, r->launch[f].items_per_work_item);
    if (k <= 0 || (size_t)k >= n)
        return -1;
    k += snprintf(out + k, n - (size_t)k, "checksum %016" PRIx64 "\n",
                  cache_hash(out, (size_t)k, CACHE_HASH_SEED));
    return (size_t)k < n ? k : -1;
}

typedef enum { FILE_OK, FILE_MISSING, FILE_CORRUPT, FILE_OTHER_KEY } file_state;

/* The value of "key " on its own line, copied to out. */
static int field(const char *text, const char *key, char *out, size_t n)
{
    size_t klen = strlen(key);
    for (const char *line = text; line && *line; line = strchr(line, '\n'), line = line ? line + 1 : NULL) {
        if (strncmp(line, key, klen) == 0 && line[klen] == ' ') {
            const char *v = line + klen + 1;
            size_t len = strcspn(v, "\n");
            if (len >= n)
                return 0;
            memcpy(out, v, len);
            out[len] = '\0';
            return 1;
        }
    }
    return 0;
}

int tune_store_parse(const char *text, size_t size, const device_ident *id, int vendor_only,
                     size_t max_wg, tune_result *r)
{
    file_state st = FILE_CORRUPT;
    char *sum = strstr(text, "\nchecksum ");
    char hex[17];
    if (sum && size > 0 && memchr(text, '\0', size) == NULL) {
        size_t body = (size_t)(sum - text) + 1;
        snprintf(hex, sizeof hex, "%016" PRIx64, cache_hash(text, body, CACHE_HASH_SEED));
        if (strncmp(sum + 10, hex, 16) == 0 && sum[26] == '\n' && sum[27] == '\0')
            st = FILE_OK;
    }
    char v[160];
    clnz_launch *l = r->launch;
    for (int f = 0; f < TUNE_KERNELS && st == FILE_OK; ++f) {
        unsigned long long wg = 0, items = 0;
        char extra;
        if (!field(text, tune_kernel_names[f], v, sizeof v) ||
            sscanf(v, "%llu %llu %c", &wg, &items, &extra) != 2 || wg == 0 || items == 0 ||
            items > CLNZ_MAX_ITEMS)
            st = FILE_CORRUPT;
        l[f].work_group_size = (size_t)wg;
        l[f].items_per_work_item = (size_t)items;
    }
    if (st == FILE_OK && (!field(text, "strategy", v, sizeof v) ||
                          clnz_strategy_parse(v, &r->strategy) != CLNZ_SUCCESS))
        st = FILE_CORRUPT;
    if (st == FILE_OK) {
        /* the key: anything else names another device, driver or version */
        struct {
            const char *key, *want;
            int vendor_key;
        } keys[] = {{"format", FORMAT, 1},         {"clnz", CLNZ_VERSION_STRING, 1},
                    {"vendor", id->vendor, 1},  {"type", id->type, 1},
                    {"platform", id->platform, 0}, {"device", id->device, 0},
                    {"driver", id->driver, 0}};
        for (size_t k = 0; k < sizeof keys / sizeof keys[0]; ++k) {
            if (vendor_only && !keys[k].vendor_key)
                continue;
            if (!field(text, keys[k].key, v, sizeof v))
                st = FILE_CORRUPT;
            else if (strcmp(v, keys[k].want) != 0 && st == FILE_OK)
                st = FILE_OTHER_KEY;
        }
        for (int f = 0; f < TUNE_KERNELS && st == FILE_OK; ++f)
            if (l[f].work_group_size > max_wg)
                st = FILE_OTHER_KEY; /* another device's limits */
    }
    return st;
}

/* vendor_only: the vendor file matches on vendor, type and version alone. */
static file_state read_file(const char *path, const device_ident *id, int vendor_only,
                            size_t max_wg, tune_result *r, int may_delete)
{
    size_t size = 0;
    int fd = -1;
    char *text = cache_read_file_fd(AT_FDCWD, path, 64 * 1024, &size, &fd);
    if (!text)
        return FILE_MISSING;
    file_state st = (file_state)tune_store_parse(text, size, id, vendor_only, max_wg, r);
    free(text);
    if (st == FILE_CORRUPT && may_delete)
        cache_remove_read(path, fd); /* not a good file a tuner renamed over it since */
    close(fd);
    return st;
}

clnz_launch_source tune_store_load(clnz_context *ctx, const device_ident *id, tune_result *r)
{
    char *exact, *vendor;
    if (!ctx->cache_dir || store_paths(ctx->cache_dir, id, &exact, &vendor))
        return CLNZ_LAUNCH_DEFAULT;
    clnz_launch_source src = CLNZ_LAUNCH_DEFAULT;
    tune_result l;
    file_state s = read_file(exact, id, 0, ctx->max_work_group, &l, 1);
    if (s == FILE_CORRUPT || s == FILE_OTHER_KEY)
        ctx->stats.cache_files_rejected++;
    if (s == FILE_OK) {
        src = CLNZ_LAUNCH_TUNED;
    } else {
        s = read_file(vendor, id, 1, ctx->max_work_group, &l, 1);
        if (s == FILE_CORRUPT || s == FILE_OTHER_KEY)
            ctx->stats.cache_files_rejected++;
        if (s == FILE_OK)
            src = CLNZ_LAUNCH_VENDOR;
    }
    if (src != CLNZ_LAUNCH_DEFAULT)
        *r = l;
    free(exact);
    free(vendor);
    return src;
}

clnz_launch_source tune_store_probe(const device_ident *id, size_t max_wg)
{
    int too_long;
    char *dir = cache_dir_resolve(&too_long), *exact, *vendor;
    int named = dir && store_paths(dir, id, &exact, &vendor) == 0;
    free(dir);
    if (!named)
        return CLNZ_LAUNCH_DEFAULT;
    tune_result l;
    /* a listing only looks: it deletes nothing */
    clnz_launch_source src = read_file(exact, id, 0, max_wg, &l, 0) == FILE_OK ? CLNZ_LAUNCH_TUNED
                             : read_file(vendor, id, 1, max_wg, &l, 0) == FILE_OK
                                 ? CLNZ_LAUNCH_VENDOR
                                 : CLNZ_LAUNCH_DEFAULT;
    free(exact);
    free(vendor);
    return src;
}

int tune_store_writable(const clnz_context *ctx, char **dir)
{
    *dir = ctx->cache_dir ? cache_path(ctx->cache_dir, "tuning") : NULL;
    if (!ctx->cache_dir)
        return ENOENT;
    if (!*dir)
        return ENOMEM;
    int err = cache_mkdirs(*dir);
    if (!err && access(*dir, W_OK | X_OK) != 0)
        err = errno;
    return err;
}

int tune_store_save(clnz_context *ctx, const tune_result *r)
{
    if (!ctx->cache_dir)
        return ENOENT;
    char text[4096], *exact, *vendor;
    int len = format_file(&ctx->id, r, text, sizeof text);
    if (len < 0)
        return ENAMETOOLONG;
    if (store_paths(ctx->cache_dir, &ctx->id, &exact, &vendor))
        return ENOMEM;
    char *dir = cache_path(ctx->cache_dir, "tuning");
    int err = dir ? cache_mkdirs(dir) : ENOMEM;
    if (!err)
        err = cache_write_atomic(exact, text, (size_t)len);
    if (!err)
        err = cache_write_atomic(vendor, text, (size_t)len);
    if (!err)
        cache_remove_stale(dir, CACHE_MAGIC_TUNING); /* what killed tuners left */
    free(dir);
    free(exact);
    free(vendor);
    return err;
}
