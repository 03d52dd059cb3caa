/* io.h: the clnz command's file formats: .npy in and out (npy.c, its
 * header's text npy_header.c), PNG, PGM
 * and PPM images in (image.c), over the input files of input.c; csv and
 * txt out (text_out.c). Outputs are written through output.h. */
#ifndef CLNZ_CLI_NPY_H
#define CLNZ_CLI_NPY_H

#include "clnz.h"

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* The readers' way out: the reason into err (err_size bytes), then -1. */
#define FAIL(...)                                \
    do {                                         \
        snprintf(err, err_size, __VA_ARGS__);    \
        return -1;                               \
    } while (0)

typedef struct {
    clnz_dtype dtype;
    int rank;
    int64_t shape[CLNZ_MAX_RANK];
    int64_t strides[CLNZ_MAX_RANK]; /* elements: C or Fortran order */
    int fortran_order;
    int big_endian;   /* the file's elements were big-endian: swapped to native when read */
    const void *data; /* logical element 0 */
    void *buffer;     /* what to free: the bytes data points into */
} npy_array;

/* ---- input files (input.c) ---- */

/* How long a FIFO may wait for its other end (a writer for an input, a
 * reader for an output) before clnz gives up, rather than hang. */
#define IO_FIFO_WAIT_MS 5000

/* An input opened once and read front to back: a regular file (its size
 * known at open), or a stream (a FIFO or pipe, /dev/stdin). Anything else
 * is refused at open. Bytes peeked at to tell the format come back first. */
typedef struct {
    int fd;
    const char *path;
    int stream;
    uint64_t size; /* regular files: the size at open */
    unsigned char ahead[16];
    size_t ahead_len, ahead_pos;
} in_file;

/* path "-" is standard input, named IN_STDIN_NAME in messages. */
int in_open(in_file *f, const char *path, char *err, size_t err_size);
#define IN_STDIN_NAME "<stdin>"
/* The standard descriptors (bit fd) that were closed when the process
 * started: the command reopens them on /dev/null or /dev/full, so that no
 * file takes their numbers, and '-' then names nothing to read or write. */
extern unsigned io_std_closed;
void in_close(in_file *f);
/* Up to n bytes without consuming them (for telling formats apart). */
size_t in_peek(in_file *f, void *buf, size_t n);
/* Reads up to n bytes, fewer only at the end of the file; -1 on an error
 * (errno set). */
int64_t in_read(in_file *f, void *buf, uint64_t n);
/* Room for an array's data (at least 1 byte), freed with free(); NULL when
 * there is none: what .npy files and PNG pixels are read into (a streamed
 * .npy and PNM pixels keep the block they were read in). Page-aligned (a
 * CPU device uses it in place), and from IO_HUGE_MIN_BYTES on hinted to
 * huge pages, as numpy hints its arrays of 4 MiB and more, and aligned to
 * IO_HUGE_PAGE so that every whole huge page of it can be one: the kernels
 * then read it through a TLB entry per 2 MiB rather than per 4 KiB (f32
 * 2^26 at 10 %, PoCL, the same kernels: 18.8 ms over read()-filled 4 KiB
 * pages, 16.2 ms over huge ones). */
void *io_data_alloc(size_t bytes);
#define IO_HUGE_MIN_BYTES ((size_t)4 << 20)
#define IO_HUGE_PAGE ((size_t)2 << 20)
/* The rest of the input in a malloc'd buffer (NUL-terminated); NULL with
 * the reason in err. */
unsigned char *in_slurp(in_file *f, size_t *len, char *err, size_t err_size);
/* path as messages show it: in single quotes, with quotes, backslashes and
 * control characters escaped (\n, \x1b), so that an error stays one line. */
const char *io_quote(const char *path, char *buf, size_t n);
/* Their escaping, shared: s[0..n) appended to buf from byte k while an
 * escape and "...'" still fit in size; escape_high also writes bytes above
 * 0x7f as \xNN (text in no known encoding). Returns the new end, and in
 * *used how many bytes of s went in. */
size_t io_escape(const char *s, size_t n, int escape_high, char *buf, size_t k, size_t size,
                 size_t *used);
#define IO_QUOTE_MAX 1100 /* a buffer for io_quote: longer paths are cut with "..." */
/* path as a command prints it for its own sake (clnz cache's folder), by
 * the same rule: as is when it is plain (printable ASCII but for space, '
 * and \), else quoted as io_quote does, however long; malloc'd (NULL: out
 * of memory). A printed line that starts with ' is thus always quoted. */
char *io_show(const char *path);

/* ---- arrays ---- */

/* Reads path into arr. On failure returns -1 with a one-line reason in err. */
/* The header's dictionary (len bytes, the format's version 1..3): dtype,
 * order and shape into a, *big for a big-endian descr; -1 and the reason
 * in err if np.load would refuse it or clnz cannot read it (npy_header.c). */
int npy_parse_header(const char *h, size_t len, int version, npy_array *a, int *big, char *err,
                     size_t err_size);
int npy_read(const char *path, npy_array *arr, char *err, size_t err_size);
/* The same from an input already open (array_read's, after its peek). */
int npy_read_from(in_file *in, npy_array *arr, char *err, size_t err_size);
void npy_free(npy_array *arr);
/* Any input of the clnz command: a PNG, PGM or PPM image (image.c) by
 * its first bytes, else a .npy. */
int array_read(const char *path, npy_array *arr, char *err, size_t err_size);
/* The array as the library sees it (pointers into arr: valid while it is). */
clnz_tensor npy_tensor(const npy_array *arr);

/* The .npy header (version 1.0) of a C-order array of ndim
 * (0..CLNZ_MAX_RANK) dims, descr like "<i8", into out; its length. */
enum { NPY_HEADER_MAX = 1152 };
size_t npy_header(const char *descr, int ndim, const int64_t *shape,
                  unsigned char out[NPY_HEADER_MAX]);
/* The .npy descr of a dtype in native (little-endian) order, "<f4". */
const char *npy_descr(clnz_dtype dtype);
/* Reverses the bytes of each of n elements of elem bytes, in place. */
void npy_byteswap(void *data, uint64_t n, size_t elem);

/* ---- text outputs (text_out.c) ---- */

/* What the command writes (--format): .npy, or text as np.savetxt. */
typedef enum { OUT_NPY, OUT_CSV, OUT_TXT } out_format;
/* "npy", "csv" or "txt" into *format: 1, else 0. */
int out_format_parse(const char *name, out_format *format);
/* 1 with a one-line reason in err where format is text and an output of
 * ndim dimensions cannot be (np.savetxt writes up to 2), else 0: the
 * commands refuse such an output before any work. */
int text_too_deep(out_format format, int ndim, char *err, size_t err_size);
/* A C-order array of ndim 0..2 as text (csv: ',' between the entries of
 * a row, txt: ' '), malloc'd, its length in *len; NULL with a one-line
 * reason in err (ndim > 2, out of memory). */
char *text_format(out_format format, clnz_dtype dtype, int ndim, const int64_t *shape,
                  const void *data, size_t *len, char *err, size_t err_size);

#endif
