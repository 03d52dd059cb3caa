/* output_dir.h: an output that is a folder of files (a program bundle),
 * written all or nothing like output.h's files (output_dir.c).
 *
 * The files go into a temporary folder beside the target; the commit puts
 * it in the target's place in one rename (an existing target is swapped
 * out and removed after). A failure, SIGINT, SIGTERM and the like leave
 * the target as it was and no temporary; one left by kill -9 is removed
 * by the next run that writes into that folder. An existing target is
 * replaced only when it is empty or the caller recognises it as its own,
 * checked when writing begins and again after the swap (a file added in
 * between puts the old folder back): a folder clnz did not make is never
 * clobbered. Only names a bundle's files have are ever deleted, anything
 * else in a folder clnz removes is kept (moved to the target, or named in
 * the error). */
#ifndef CLNZ_IO_OUTPUT_DIR_H
#define CLNZ_IO_OUTPUT_DIR_H

#include <stddef.h>

typedef struct out_dir out_dir;

/* 1 if the folder open as dirfd is one the caller made (may be replaced). */
typedef int (*out_dir_ours)(int dirfd);

/* 1 if `name` is one a bundle's file has: manifest.txt, or a program's
 * NUMBER-NAME.bin or NUMBER-NAME.cl. The only names out_dir_file writes
 * and the only ones a removal deletes. */
int out_dir_own_name(const char *name);

/* Starts writing folder `path`: NULL with a one-line reason in err when the
 * target is a file, a folder that is neither empty nor `ours`, or cannot
 * be written. */
out_dir *out_dir_begin(const char *path, out_dir_ours ours, char *err, size_t err_size);
/* A file of the folder (a name out_dir_own_name accepts). */
int out_dir_file(out_dir *d, const char *name, const void *data, size_t size, char *err,
                 size_t err_size);
/* Puts the folder in place: 0, or -1 with the target unchanged (also when
 * it gained other files meanwhile), or, rarely, -1 with the folder in place
 * but things that appeared in the old one left in a folder err names. */
int out_dir_commit(out_dir *d, char *err, size_t err_size);
/* Removes the temporary (if any) and frees d (after a commit too). */
void out_dir_discard(out_dir *d);

#endif
