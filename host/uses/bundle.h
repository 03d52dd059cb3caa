/* bundle.h: what a program bundle holds in memory (bundle.c), for the
 * files that make one (bundle_build.c) and use one (bundle_use.c). */
#ifndef CLNZ_USES_BUNDLE_H
#define CLNZ_USES_BUNDLE_H

#include "uses/manifest.h"

struct clnz_bundle {
    manifest m;
    char *dir;             /* the folder it was read from (NULL: built here) */
    char *text;            /* the manifest's bytes */
    size_t text_len;
    unsigned char **data;  /* each program's file, m.entries[i].size bytes */
    char (*names)[MANIFEST_FILE_NAME]; /* clnz_bundle_file's: the manifest's, then each file's */
};

/* A bundle of m's header and entries (copied) with no files yet, or NULL. */
clnz_bundle *bundle_new(const manifest *m);
/* Program i's file is data (taken over): its size and checksum follow. */
void bundle_set_file(clnz_bundle *b, int i, unsigned char *data, size_t size);
/* The manifest's text from the entries: 0, or -1 when out of memory. */
int bundle_finish(clnz_bundle *b);

#endif
