/* cache.h: the cache folder and its files (cache.c): where it is, reading
 * a file whole, writing one atomically, and the hash that names and checks
 * them. Tuning results (tune/tune_store.c) and compiled programs
 * (program_cache.c) live there. */
#ifndef CLNZ_CORE_CACHE_H
#define CLNZ_CORE_CACHE_H

#include <stddef.h>
#include <stdint.h>

/* What every file clnz writes in the cache starts with: `cache --clear`
 * removes the files that do, and the temporaries of writers that are gone
 * (cache_remove_stale), and nothing else. */
#define CACHE_MAGIC_TUNING "# clnz tuning result:"
#define CACHE_MAGIC_PROGRAM "CLNZBIN1\n"

/* $CLNZ_CACHE_DIR, else $XDG_CACHE_HOME/clnz (if absolute), else
 * ~/.cache/clnz, in a malloc'd string; NULL if none can be named, or
 * (*too_long set) if the path is PATH_MAX bytes or more, which no file
 * call takes: a path is never cut to fit. */
char *cache_dir_resolve(int *too_long);
/* dir + "/" + the formatted rest, malloc'd (NULL: out of memory). */
char *cache_path(const char *dir, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Creates the folder and its parents; 0 or an errno. */
int cache_mkdirs(const char *dir);
/* FNV-1a 64: checksums and key hashes, not security. */
uint64_t cache_hash(const void *data, size_t n, uint64_t seed);
#define CACHE_HASH_SEED 0xcbf29ce484222325ULL
/* Whole regular file in a malloc'd buffer (NUL-terminated); NULL if it is
 * missing, unreadable, not a regular file (a FIFO would block) or over max
 * bytes. */
char *cache_read_file(const char *path, size_t max, size_t *size);
/* The same for a path relative to the folder open as dirfd (AT_FDCWD: as
 * cache_read_file): a bundle reads all its files from one folder. */
char *cache_read_file_at(int dirfd, const char *path, size_t max, size_t *size);
/* cache_read_file_at that also hands back the file it read, still open
 * (*fd; -1 when it returns NULL), for cache_remove_read. The caller closes
 * it. */
char *cache_read_file_fd(int dirfd, const char *path, size_t max, size_t *size, int *fd);
/* Deletes the file read as fd (found damaged) if path still names it, and
 * never a file a writer has renamed into its place since. */
void cache_remove_read(const char *path, int fd);
/* Writes a temporary file beside path and renames it into place, so that a
 * reader never sees half a file; 0 or an errno (EEXIST when the name is
 * taken by something other than a regular file, which stays as it is).
 * The temporary is locked until the rename: see cache_remove_stale. */
int cache_write_atomic(const char *path, const void *data, size_t n);
/* Removes the temporaries in folder whose writer is gone (killed before
 * its rename): of any size, but only those holding the start of magic or
 * nothing, and never one a live writer holds locked. Writers call it after
 * writing there, so a killed run's leftovers go with the next write; the
 * number removed. */
int cache_remove_stale(const char *folder, const char *magic);
/* File name part from free text: letters, digits, '-', '.', the rest '_'. */
void cache_sanitize(const char *in, char *out, size_t n);

#endif
