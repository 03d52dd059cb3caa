/* io.h: the clnz command's file formats: .npy in and out (npy.c), PNG, PGM and
 * PPM images in (image.c). */
#ifndef CLNZ_CLI_NPY_H
#define CLNZ_CLI_NPY_H

#include "clnz.h"

#include <stddef.h>
#include <stdint.h>

typedef struct {
    clnz_dtype dtype;
    int rank;
    int64_t shape[CLNZ_MAX_RANK];
    int64_t strides[CLNZ_MAX_RANK]; /* elements: C or Fortran order */
    int fortran_order;
    const void *data;               /* logical element 0 */
    /* what to free */
    void *map;
    size_t map_size;
    void *swapped; /* big-endian input, swapped to native order */
} npy_array;

/* Reads path into arr. On failure returns -1 with a one-line reason in err. */
int npy_read(const char *path, npy_array *arr, char *err, size_t err_size);
void npy_free(npy_array *arr);
/* Any input of the clnz command: a PNG, PGM or PPM image (image.c) by
 * its first bytes, else a .npy. */
int array_read(const char *path, npy_array *arr, char *err, size_t err_size);
/* The array as the library sees it (pointers into arr: valid while it is). */
clnz_tensor npy_tensor(const npy_array *arr);

/* An output written to a temporary file beside its final path and renamed
 * into place only by npy_commit, so a failed run leaves nothing behind. */
typedef struct {
    char *path;
    char *tmp_path;
} npy_pending;

/* Writes a C-order array of ndim (0..CLNZ_MAX_RANK) dims; descr like "<i8". */
int npy_write_tmp(const char *path, const char *descr, int ndim, const int64_t *shape,
                  const void *data, size_t bytes, npy_pending *out, char *err, size_t err_size);
int npy_commit(npy_pending *p, char *err, size_t err_size);
void npy_discard(npy_pending *p); /* removes the temporary file, if any */
/* The .npy descr of a dtype in native (little-endian) order, "<f4". */
const char *npy_descr(clnz_dtype dtype);

#endif
