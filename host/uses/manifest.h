/* manifest.h: a bundle's manifest.txt (manifest.c), text a person can read:
 *
 *   clnz program bundle 2              the format and its version
 *   clnz 0.2.0                         the library that wrote it
 *   platform NAME / device NAME / vendor NAME / driver VERSION / type CPU
 *   build-options -cl-std=CL1.2 -w     what every program was built with
 *   dtypes u8,f32 / ops count,nonzero / predicates nonzero
 *   strategies single-tile,two-pass    the uses it covers (clnz_uses_parse)
 *   programs N
 *   I KIND FILE SIZE CHECKSUM SOURCE [OPTIONS]     N lines, I = 0..N-1
 *   checksum HEX                       of every byte before this line
 *
 * NAMEs are the device's, escaped as messages quote them (manifest_clean).
 * KIND is binary or source; FILE a kernel file (kernels/FILE.cl); SIZE and
 * CHECKSUM (FNV-1a 64, 16 hex digits) those of the program's file in the
 * bundle, named "I-FILE.bin" or "I-FILE.cl"; SOURCE the hash of the
 * OpenCL C it was built from; OPTIONS its -D options. The parser takes
 * exactly this, in this order, or says which line is wrong. */
#ifndef CLNZ_USES_MANIFEST_H
#define CLNZ_USES_MANIFEST_H

#include "core/program.h"
#include "uses/uses.h"

#include <stddef.h>
#include <stdint.h>

#define MANIFEST_NAME "manifest.txt"
#define MANIFEST_MAGIC "clnz program bundle"
/* 2: every program's kernels are named with its identity (kernels/kname.h):
 * a version-1 bundle's binaries lack it, and would all be refused one by
 * one as another program's */
#define MANIFEST_VERSION 2
enum {
    MANIFEST_MAX_BYTES = 1 << 20,
    MANIFEST_MAX_PROGRAMS = 4096,
    MANIFEST_FILE_NAME = 48, /* room for "I-FILE.bin" */
};
/* A binary built offline for an FPGA can be large; a source is not. */
#define MANIFEST_MAX_BINARY ((uint64_t)1 << 30)
#define MANIFEST_MAX_SOURCE ((uint64_t)16 << 20)

typedef struct {
    char file[24];                     /* kernels/<file>.cl */
    char options[PROGRAM_OPTIONS_MAX]; /* -D options */
    int is_source;
    uint64_t size, checksum, source_hash;
} manifest_entry;

struct manifest {
    char clnz[32];
    char platform[128], device[128], vendor[128], driver[64], type[16];
    char build_options[PROGRAM_COMMON_MAX];
    char uses[AXIS_COUNT][300]; /* the lists as written, in uses_axis order */
    int n;
    manifest_entry *entries; /* malloc'd, n of them */
};

/* The text (malloc'd, *len bytes, NUL-terminated), or NULL when out of
 * memory. Fields are written as they are; manifest_clean makes one fit. */
char *manifest_format(const manifest *m, size_t *len);
/* Parses text (len bytes; text[len] must be readable and is ignored) into
 * *m: 0, or -1 with one line saying where and why in err. */
int manifest_parse(const char *text, size_t len, manifest *m, char *err, size_t err_size);
void manifest_free(manifest *m);
/* The name of entry i's file in the bundle folder. */
void manifest_file_name(const manifest *m, int i, char *buf, size_t n);
/* A device's name as a manifest holds it: escaped as messages quote names
 * (core/quote.h), so that a line stays one line and two names that differ
 * stay different; cut at a whole escape to fit n. A bundle is checked by
 * comparing its manifest's field with the device's name cleaned so. */
void manifest_clean(const char *in, char *out, size_t n);

#endif
