/* testutil.h: what the C test suites share: a context on the test device,
 * seeded random numbers, and sequential reference implementations that do
 * not share code with the library. */
#ifndef CLNZ_TESTUTIL_H
#define CLNZ_TESTUTIL_H

#include "clnz.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

/* The device under test: CLNZ_DEVICE or the default. Created once. */
clnz_context *tu_context(void);
void tu_context_done(void);
/* A context of its own whose largest allocation is max_alloc bytes
 * (CLNZ_MAX_ALLOC, "64K" and the like): inputs past it go in slices. */
clnz_context *tu_context_limited(const char *max_alloc);

/* Seed from CLNZ_TEST_SEED, else the clock; printed so a failure can be
 * replayed with CLNZ_TEST_SEED=<seed>. Also the suite's share of its tests:
 * CLNZ_TEST_ONLY runs the tests whose names match its cmocka pattern (*
 * and ?), CLNZ_TEST_SKIP leaves those out (make runs a long suite as
 * parts side by side). */
void tu_seed(const char *suite);
uint64_t tu_rand(void);
double tu_uniform(void);

/* 1 in the long tier (make test-full sets CLNZ_TEST_FULL=1): every launch
 * shape, larger sizes. */
int tu_full(void);

/* An environment variable's value (malloc'd; NULL when unset), and that
 * value put back (unset where it was), for tests that set one a while. */
char *tu_env_keep(const char *name);
void tu_env_put_back(const char *name, char *kept);
/* The first line of a test of the long tier only: skipped in the quick one. */
#define TU_FULL_ONLY()   \
    do {                 \
        if (!tu_full())  \
            skip();      \
    } while (0)

/* Launch shapes every suite runs through: (work-group size, items). The
 * quick tier (make test) takes the first few, the long one all of them. */
typedef struct {
    size_t wg, items;
} tu_launch;
extern const tu_launch tu_launches[];
extern int tu_n_launches; /* set by tu_seed */

/* The dtypes the pipeline tests run: all twelve in the long tier; in the
 * quick one a dtype of each family (8-bit unsigned, 16-bit float, 32-bit
 * float, 64-bit signed). Each dtype is a program PoCL compiles cold for
 * seconds; test_mask checks every dtype's predicates on the cheap mask
 * kernel in both tiers. */
extern const clnz_dtype *tu_dtypes;
extern int tu_n_dtypes; /* set by tu_seed */
clnz_dtype tu_random_dtype(void);

/* Random bit patterns for a dtype, with about `density` of them nonzero and
 * special values (signed zeros, NaNs, infinities, denormals) mixed in. */
void tu_fill(clnz_dtype dt, void *data, size_t n, double density);

/* Reference predicate on one element (by bit pattern), numpy's rules. */
int tu_ref_selected(clnz_dtype dt, const void *elem, const clnz_predicate *p);

/* Reference nonzero: returns a malloc'd C-order array of int64 entries in
 * the result's shape (*entries entries, *per_entry indices each) and the true
 * count. data points at logical element 0 with element strides; pred NULL
 * means nonzero. */
int64_t *tu_ref_nonzero(const clnz_tensor *t, const void *data, const clnz_predicate *pred,
                        const clnz_nonzero_options *o, int64_t *count, int64_t *entries,
                        int *per_entry);

/* Runs clnz_nonzero_batched on t and compares its offsets and entries
 * with the reference of each item (tu_ref_nonzero with o). */
void tu_expect_batched(clnz_context *ctx, const clnz_tensor *t, const void *data,
                       const clnz_predicate *pred, const clnz_nonzero_options *o);

/* Converts an index array of the given type to int64 (malloc'd). */
int64_t *tu_widen(const void *idx, clnz_index_type type, size_t n);

/* A fresh temporary folder as CLNZ_CACHE_DIR (for cmocka setup and
 * teardown); tu_cache_dir() names it. */
int tu_cache_setup(void **state);
int tu_cache_teardown(void **state);
const char *tu_cache_dir(void);

/* Device buffer from host bytes (read-write), of tu_context()'s OpenCL
 * context; tu_buffer_on: of another clnz context's (clnz refuses a buffer
 * of a context not its own). */
cl_mem tu_buffer(size_t bytes, const void *init);
cl_mem tu_buffer_on(clnz_context *ctx, size_t bytes, const void *init);
void tu_read(cl_mem buf, size_t off, size_t bytes, void *dst);
/* The same on another context's queue. */
void tu_read_on(cl_command_queue q, cl_mem buf, size_t off, size_t bytes, void *dst);

#define TU_CHECK(ctx, call)                                                         \
    do {                                                                            \
        clnz_status st_ = (call);                                                   \
        if (st_ != CLNZ_SUCCESS)                                                    \
            fail_msg("%s -> %s: %s", #call, clnz_status_string(st_),                \
                     clnz_context_message(ctx));                                    \
    } while (0)

#endif
