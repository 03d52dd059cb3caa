/* cache.h: the cache folder and its files (cache.c): where it is, reading
 * a file whole, writing one atomically, and the hash that names and checks
 * them. Tuning results (tune/tune_store.c) and compiled programs
 * (program_cache.c) live there. */
#ifndef CLNZ_CORE_CACHE_H
#define CLNZ_CORE_CACHE_H

#include <stddef.h>
#include <stdint.h>

/* $CLNZ_CACHE_DIR, else $XDG_CACHE_HOME/clnz, else ~/.cache/clnz, into out
 * (empty if none can be named). */
void cache_dir_resolve(char *out, size_t n);
/* Creates the folder and its parents; 0 or an errno. */
int cache_mkdirs(const char *dir);
/* FNV-1a 64: checksums and key hashes, not security. */
uint64_t cache_hash(const void *data, size_t n, uint64_t seed);
#define CACHE_HASH_SEED 0xcbf29ce484222325ULL
/* Whole file in a malloc'd buffer (NUL-terminated); NULL if unreadable or
 * over max bytes. */
char *cache_read_file(const char *path, size_t max, size_t *size);
/* Writes a temporary file beside path and renames it into place, so that a
 * reader never sees half a file; 0 or an errno. */
int cache_write_atomic(const char *path, const void *data, size_t n);
/* File name part from free text: letters, digits, '-', '.', the rest '_'. */
void cache_sanitize(const char *in, char *out, size_t n);

#endif
