/* output.h: the clnz command's output files, written all or nothing
 * (output.c).
 *
 * A run adds each of its outputs to one set first (out_add: the checks that
 * can fail early), gives each its bytes (out_write), and out_commit puts
 * them all in place or, on any failure, none: every existing output stays
 * as it was and no temporary file is left, also when the run is stopped by
 * SIGINT, SIGTERM, SIGHUP and the like (a thread of this module waits for
 * them: the first out_add must come before any other thread is started). */
#ifndef CLNZ_IO_OUTPUT_H
#define CLNZ_IO_OUTPUT_H

#include <stddef.h>

enum { OUT_MAX = 4 }; /* nonzero's three outputs, and room */

typedef struct out_file out_file;
typedef struct {
    out_file *files[OUT_MAX];
    int n;
} out_set;

/* Adds path to the set; its index, or -1 with a one-line reason in err.
 * Refused: a directory, a block device or socket, a file that cannot be
 * written, a path that names the same file as another output of the set.
 * A regular file (or a new one) gets a temporary file beside it (symlinks
 * followed); a FIFO or character device (/dev/null, a pipe as /dev/stdout)
 * is written through at commit time, and so is "-", standard output. */
int out_add(out_set *s, const char *path, char *err, size_t err_size);
/* Output i's bytes: head (copied) then data (used until out_commit or
 * out_discard). */
int out_write(out_set *s, int i, const void *head, size_t head_len, const void *data,
              size_t bytes, char *err, size_t err_size);
/* Puts every output in place: 0, or -1 with nothing replaced. */
int out_commit(out_set *s, char *err, size_t err_size);
/* Removes the temporaries and frees the set (after a commit too). */
void out_discard(out_set *s);

#endif
