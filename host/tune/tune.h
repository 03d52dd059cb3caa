/* tune.h: launch parameters: where work-group sizes and items per
 * work-item are chosen (launch_plan.c), the tuner that measures them
 * (tuner.c) and its results on disk (tune_store.c). */
#ifndef CLNZ_TUNE_H
#define CLNZ_TUNE_H

#include "core/context.h"

/* ---- the launch plan (launch_plan.c) ---- */
typedef struct {
    size_t wg;     /* work-items per work-group */
    size_t items;  /* elements per work-item */
    cl_uint p2;    /* next power of two >= wg: slots of the local scan */
} launch_cfg;

/* The launches the library uses untuned, from device queries. */
void plan_defaults(clnz_context *ctx);
size_t plan_items(const clnz_context *ctx, tune_kernel kernel);
/* Picks a work-group size every kernel in `kernels` can run with: the
 * family's forced, tuned or default one, within the kernels' limits. */
clnz_status plan_launch(clnz_context *ctx, tune_kernel kernel, cl_kernel *kernels,
                        int n_kernels, size_t items, size_t local_elem_bytes, launch_cfg *cfg);
/* The largest work-group size whose tile of items a work-item is at most
 * max_tile elements (1 where even one work-item's is larger). */
size_t plan_tile_wg(size_t max_tile, size_t items);
/* Lowers cfg's work-group size until a tile (work-group size x items) is
 * at most max_tile elements (CLNZ_DEBUG logs a forced size lowered). */
void plan_cap_tile(const clnz_context *ctx, size_t max_tile, launch_cfg *cfg);
/* The largest work-group the local scan can have on this device. */
size_t plan_local_limit(const clnz_context *ctx, size_t local_elem_bytes);
uint64_t plan_tiles(uint64_t n, const launch_cfg *cfg);
/* Scratch elements the multi-level scan of n values needs for its tile sums. */
uint64_t plan_scan_scratch(uint64_t n, const launch_cfg *cfg);
clnz_status plan_scratch(clnz_context *ctx, size_t bytes);

/* ---- tuning results on disk (tune_store.c) ---- */
/* What tuning finds for a device: each kernel's launch, and the strategy
 * that was fastest on inputs of many tiles (AUTO: none measured). */
typedef struct {
    clnz_launch launch[TUNE_KERNELS];
    clnz_strategy strategy;
} tune_result;

/* Fills *r from the exact device's file, else its vendor
 * and type's, else leaves them; returns the source found. Rejected files are
 * deleted (corrupt) or ignored (another device, driver or version). */
clnz_launch_source tune_store_load(clnz_context *ctx, const device_ident *id, tune_result *r);
/* A tuning file's text (NUL-terminated at text[size]): 0 usable (*r filled),
 * 2 corrupt, 3 another device, driver or version's. For the fuzzer too. */
int tune_store_parse(const char *text, size_t size, const device_ident *id, int vendor_only,
                     size_t max_wg, tune_result *r);
/* Just which source a device would get, for listings (no context): the
 * context's rules, a stored work-group size above max_wg skipped too. */
clnz_launch_source tune_store_probe(const device_ident *id, size_t max_wg);
/* Whether a tuning result could be stored: 0, or the errno of the folder
 * (ENOENT: no cache folder); *dir gets the tuning folder's path (NULL
 * without a cache folder), the caller's to free. */
int tune_store_writable(const clnz_context *ctx, char **dir);
/* Writes the device's file and its vendor-and-type file; 0 or an errno. */
int tune_store_save(clnz_context *ctx, const tune_result *r);

#endif
