/* tune_kernels.h: the kernels that have launch parameters of their own,
 * each tuned separately. The context keeps one launch per entry
 * (core/context.h); the public API names them ("two-pass", ...). */
#ifndef CLNZ_TUNE_KERNELS_H
#define CLNZ_TUNE_KERNELS_H

typedef enum {
    TUNE_TWO_PASS = 0, /* nz_count and nz_write / sel_write: two-pass and single-tile */
    TUNE_SCAN,         /* the multi-level scan */
    TUNE_MASK,         /* mask_write and where_write */
    TUNE_LOOKBACK,     /* the single-pass look-back kernel */
    TUNE_KERNELS
} tune_kernel;

/* "two-pass", "scan", "mask", "lookback"; the file format and the API use them. */
extern const char *const tune_kernel_names[TUNE_KERNELS];
/* The entry a name stands for, or -1. */
int tune_kernel_of(const char *name);

#endif
