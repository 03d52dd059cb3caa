/* internal.h: what the layers of libclnz share and the public header hides:
 * the context's fields, the error-recording helpers and the launch plan. */
#ifndef CLNZ_INTERNAL_H
#define CLNZ_INTERNAL_H

#include "clnz.h"

#include <pthread.h>
#include <stdarg.h>

#define CLNZ_MESSAGE_MAX 512
/* Items per work-item above this only serialize the work: a sanity bound. */
#define CLNZ_MAX_ITEMS 65536

typedef struct {
    char key[160];      /* file, kernel name and build options */
    size_t program_len; /* key[0..program_len) names the program: file and options */
    cl_program program;
    cl_kernel kernel;
} kernel_entry;

typedef struct {
    char platform[128], device[128], vendor[128], driver[64], type[16];
} device_ident;

/* The last call's message, kept per thread: threads that share a context
 * each read what their own call left (see error.c). */
typedef struct thread_message {
    struct thread_message *next;
    pthread_t thread;
    int claimed; /* the embedded first slot only: whether a thread owns it yet */
    char *long_text; /* malloc'd; a build log can be long */
    char text[CLNZ_MESSAGE_MAX];
    char warning[CLNZ_MESSAGE_MAX]; /* the reader's copy of the context's warning */
} thread_message;

struct clnz_context {
    /* Held by every public call for its whole body (CTX_HOLD); recursive
     * because public calls call each other (channels -> nonzero). */
    pthread_mutex_t lock;
    cl_context cl;
    cl_command_queue queue;
    cl_device_id device;
    int is_cpu;
    size_t max_work_group;
    cl_ulong local_mem;
    cl_ulong max_alloc;
    size_t forced_wg, forced_items;
    int debug; /* CLNZ_DEBUG: finish and log after every launch */

    kernel_entry *kernels; /* built kernels, grown on demand */
    int n_kernels, cap_kernels;

    cl_mem scratch; /* tile counts and scan levels, grown on demand */
    size_t scratch_bytes;
    cl_event last_event; /* the last launch of the previous call: scratch reuse waits on it */

    /* The first thread to record a message uses the embedded slot, so a
     * single-threaded caller never allocates for one; it is also every
     * thread's fallback when a slot cannot be allocated. */
    thread_message first_thread;
    thread_message *other_threads;
    char warning[CLNZ_MESSAGE_MAX]; /* shown by clnz_context_message when no error */

    device_ident id;      /* who the device is: the key of its cache files */
    char cache_dir[1024]; /* empty: no cache */
    clnz_launch launch[CLNZ_KERNEL_FAMILIES];
    clnz_launch_source launch_source[CLNZ_KERNEL_FAMILIES];
    int profiling;        /* the tuner times calls: keep their first event */
    cl_event first_event;
    clnz_stats stats;
};

/* ---- the context's lock (context.c) ---- */
clnz_context *ctx_hold(const clnz_context *ctx); /* locks; NULL passes */
void ctx_hold_end(clnz_context **held);
/* The first line of every public call that takes a context: locks it and
 * unlocks on every return (the cleanup attribute of GCC and Clang), so no
 * early return can leave it held. */
#define CTX_HOLD(ctx) \
    clnz_context *ctx_held_ __attribute__((cleanup(ctx_hold_end), unused)) = ctx_hold(ctx)

/* ---- errors (error.c) ---- */
/* Records a message in ctx and returns status, so a failure reads
 * `return ctx_fail(ctx, CLNZ_ERROR_..., "what: %s", why);` */
clnz_status ctx_fail(clnz_context *ctx, clnz_status status, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* An OpenCL call's result: success passes, a failure records "what: CL_NAME (file:line)". */
clnz_status ctx_cl(clnz_context *ctx, cl_int err, const char *what, const char *file, int line);
void ctx_clear_message(clnz_context *ctx);
void ctx_set_long_message(clnz_context *ctx, const char *head, const char *body);
/* A problem that does not fail the call (a cache that cannot be written). */
void ctx_warn(clnz_context *ctx, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void ctx_free_messages(clnz_context *ctx); /* at release */

#define CL_CHECK(ctx, call, what) ctx_cl((ctx), (call), (what), __FILE__, __LINE__)
/* Needs `clnz_status st` and a `done:` label that frees what was taken. */
#define TRY(expr)                     \
    do {                              \
        st = (expr);                  \
        if (st != CLNZ_SUCCESS)       \
            goto done;                \
    } while (0)

/* ---- kernels (program.c) ---- */
/* The kernel `name` from kernels/<file>.cl built with `options` (the -D
 * defines), built on first use and kept for the context's life. */
clnz_status program_kernel(clnz_context *ctx, const char *file, const char *name,
                           const char *options, cl_kernel *out);
void program_release_all(clnz_context *ctx);
/* Build options, one place for each kernel file's -D set. element_options:
 * nonzero.cl and mask.cl (dtype, items, PRED_NONZERO); scan_options:
 * scan.cl, whose tiles need at least two items or the recursion never
 * shrinks. */
void element_options(char *buf, size_t n, clnz_dtype dtype, size_t items, int pred_nonzero);
/* Returns the items it used. */
size_t scan_options(char *buf, size_t n, int is_u64, size_t items);
/* Embedded kernel sources, generated from kernels/ by scripts/embed-kernels. */
const char *kernel_source_embedded(const char *file);

/* ---- the cache folder (cache.c) ---- */
/* $CLNZ_CACHE_DIR, else $XDG_CACHE_HOME/clnz, else ~/.cache/clnz. Writes
 * it to out (empty if none can be named) and returns 0. */
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

/* ---- compiled programs on disk (program_cache.c) ---- */
/* A program built from its cached binary, or NULL (and a reason counted)
 * when there is none or the driver rejects it. */
cl_program program_cache_load(clnz_context *ctx, const char *key);
void program_cache_store(clnz_context *ctx, const char *key, cl_program prog);
/* The binary inside a cache file's bytes (NUL-terminated at data[size]),
 * or NULL if they are not what they claim; for the fuzzer too. */
const unsigned char *program_cache_parse(const char *data, size_t size, const char *key,
                                         size_t *len);

/* ---- tuning results on disk (tune_store.c) ---- */
void ident_of_device(cl_device_id dev, device_ident *id);
/* Fills launch[] and source[] from the exact device's file, else its vendor
 * and type's, else leaves them; returns the source found. Rejected files are
 * deleted (corrupt) or ignored (another device, driver or version). */
clnz_launch_source tune_store_load(clnz_context *ctx, const device_ident *id,
                                   clnz_launch launch[CLNZ_KERNEL_FAMILIES]);
/* A tuning file's text (NUL-terminated at text[size]): 0 usable (l[] filled),
 * 2 corrupt, 3 another device, driver or version's. For the fuzzer too. */
int tune_store_parse(const char *text, size_t size, const device_ident *id, int vendor_only,
                     size_t max_wg, clnz_launch *l);
/* Just which source a device would get, for listings (no context). */
clnz_launch_source tune_store_probe(const device_ident *id);
/* Writes the device's file and its vendor-and-type file. */
int tune_store_save(clnz_context *ctx, const clnz_launch launch[CLNZ_KERNEL_FAMILIES],
                    char *path, size_t path_size);

/* ---- launch plan (plan.c) ---- */
/* The launches the library uses untuned, from device queries. */
void plan_defaults(clnz_context *ctx);
typedef struct {
    size_t wg;     /* work-items per work-group */
    size_t items;  /* elements per work-item */
    cl_uint p2;    /* next power of two >= wg: slots of the local scan */
} launch_cfg;

size_t plan_items(const clnz_context *ctx, clnz_kernel_family family);
/* Picks a work-group size every kernel in `kernels` can run with: the
 * family's forced, tuned or default one, within the kernels' limits. */
clnz_status plan_launch(clnz_context *ctx, clnz_kernel_family family, cl_kernel *kernels,
                        int n_kernels, size_t items, size_t local_elem_bytes, launch_cfg *cfg);
/* The largest work-group the local scan can have on this device. */
size_t plan_local_limit(const clnz_context *ctx, size_t local_elem_bytes);
uint64_t plan_tiles(uint64_t n, const launch_cfg *cfg);
/* Scratch elements the multi-level scan of n values needs for its tile sums. */
uint64_t plan_scan_scratch(uint64_t n, const launch_cfg *cfg);
clnz_status plan_scratch(clnz_context *ctx, size_t bytes);

/* ---- the logical input, checked (tensor.c) ---- */
typedef struct {
    clnz_dtype dtype;
    size_t elem;
    int rank;          /* as given (0 allowed) */
    int krank;         /* as the kernels see it: max(rank, 1) */
    int64_t shape[CLNZ_MAX_RANK];
    int64_t strides[CLNZ_MAX_RANK];
    uint64_t n;        /* element count */
    int contiguous;    /* C order: the kernels skip the odometer */
    int64_t min_off, max_off; /* element offsets reached, relative to element 0 */
} tensor_info;

clnz_status tensor_check(clnz_context *ctx, const clnz_tensor *t, tensor_info *info);
/* Element offset of logical element 0 inside a buffer, from a byte offset. */
clnz_status tensor_base(clnz_context *ctx, const tensor_info *info, cl_mem buf, size_t byte_off,
                        int64_t *base);
/* A caller's buffer must hold `count` elements of `elem` bytes at byte `off`. */
clnz_status buffer_check(clnz_context *ctx, cl_mem buf, const char *what, size_t off,
                         uint64_t count, size_t elem);
/* A shape as Python writes it: "(2, 3)", "(4,)", "()". */
void shape_text(int rank, const int64_t *shape, char *buf, size_t n);
/* A small read-only buffer with shape then strides, for the kernels. */
clnz_status tensor_meta_buffer(clnz_context *ctx, const tensor_info *info, cl_mem *out);

/* ---- predicates (predicate.c) ---- */
typedef struct {
    uint64_t lo, hi; /* key bounds, as the kernel's key type (long or ulong) */
    cl_uint invert;
    int nonzero;     /* the predicate is x != 0: kernels built with PRED_NONZERO */
} pred_keys;

clnz_status pred_to_keys(clnz_context *ctx, clnz_dtype dtype, const clnz_predicate *pred,
                         pred_keys *out);
/* IEEE binary16 from and to double, rounding to nearest even. */
double clnz_half_to_double(uint16_t h);
uint16_t clnz_double_to_half(double v);

/* ---- enqueue chain (launch.c) ---- */
typedef struct {
    clnz_context *ctx;
    cl_uint n_wait;
    const cl_event *wait;
    cl_event last; /* event of the last command enqueued in this call */
} chain;

void chain_begin(chain *ch, clnz_context *ctx, cl_uint n_wait, const cl_event *wait);
clnz_status chain_launch(chain *ch, cl_kernel k, const char *name, size_t global, size_t local);
/* Writes one value of `size` bytes (4 or 8) at byte_off. */
clnz_status chain_fill(chain *ch, cl_mem buf, size_t byte_off, uint64_t value, size_t size);

/* Kernel arguments as (size, pointer) pairs; a NULL pointer is local memory. */
typedef struct {
    size_t size;
    const void *ptr;
} karg;
#define KARG(v) {sizeof(v), &(v)}
#define KLOCAL(bytes) {(bytes), NULL}
clnz_status set_args(clnz_context *ctx, cl_kernel k, const char *name, const karg *args,
                     int n);
/* A caller's wait list: a count needs a list, and not too long a one. */
clnz_status events_check(clnz_context *ctx, cl_uint n, const cl_event *list);
/* Hands the last event to the caller (or releases it) and remembers it. */
clnz_status chain_end(chain *ch, clnz_status st, cl_event *out_event);
/* The number of events to wait on for the next command, and where they are. */
cl_uint chain_wait_list(chain *ch, cl_event *buf, cl_uint buf_max, const cl_event **list);

/* ---- stages (scan.c, nz_stages.c) ---- */
typedef struct {
    int is_u64;
    size_t elem;
    cl_kernel tiles_k, add_k;
    launch_cfg cfg;
} scan_kit;

clnz_status scan_kit_make(clnz_context *ctx, int is_u64, scan_kit *kit);
/* Scratch elements (of the scan's type) a scan of n values uses. */
uint64_t scan_scratch_elems(const scan_kit *kit, uint64_t n);
/* Exclusive scan; offsets in elements. total may be NULL. Sums go to
 * ctx->scratch from element scratch_off on, which the caller has sized. */
clnz_status scan_run(chain *ch, const scan_kit *kit, cl_mem in, uint64_t in_off, cl_mem out,
                     uint64_t out_off, uint64_t n, cl_mem total, uint64_t total_off,
                     uint64_t scratch_off);

typedef struct {
    tensor_info t;
    pred_keys keys;
    launch_cfg cfg;
    uint64_t tiles;
    uint64_t items_off; /* where the per-work-item counts start in scratch, in u32s */
    cl_kernel count_k, write_k;
    scan_kit scan;
} nz_plan;

/* value_bytes 0: the writing pass writes coordinates (nz_write); 1, 2, 4
 * or 8: it writes values of that size (select.cl's sel_write). */
clnz_status nz_plan_make(clnz_context *ctx, const clnz_tensor *in, const clnz_predicate *pred,
                         size_t value_bytes, nz_plan *plan);
/* Counts into the scratch tile offsets and the total into count_buf. */
clnz_status nz_enqueue_count(chain *ch, nz_plan *plan, cl_mem in, int64_t base, cl_mem meta,
                             cl_mem count_buf, uint64_t count_off);
/* Needs nz_enqueue_count's tile offsets in scratch. */
clnz_status nz_enqueue_write(chain *ch, nz_plan *plan, cl_mem in, int64_t base, cl_mem meta,
                             const clnz_nonzero_options *opts, int width, cl_mem out,
                             uint64_t out_off, uint64_t capacity);
/* An input of one tile: count and write in one launch; the count goes to
 * count_buf. Only when p->tiles == 1. */
clnz_status nz_enqueue_single(chain *ch, nz_plan *p, cl_mem in, int64_t base, cl_mem meta,
                              const clnz_nonzero_options *o, int width, cl_mem out,
                              uint64_t out_off, uint64_t capacity, cl_mem count_buf,
                              uint64_t count_off);
clnz_status nz_enqueue_fill(chain *ch, const clnz_nonzero_options *opts, int width, cl_mem out,
                            uint64_t out_off, uint64_t capacity, cl_mem count_buf,
                            uint64_t count_off);
/* A work-group size for kernels of one work-item per output: 64, or what
 * the kernel allows. */
clnz_status small_local(clnz_context *ctx, cl_kernel k, size_t *local);
/* Batched nonzero's CSR offsets: batches + 1 int64 at offsets_off
 * (elements), after nz_enqueue_count wrote the total to element
 * offsets_off + batches; items are p->t.n / batches elements each. */
clnz_status nz_enqueue_batch_offsets(chain *ch, nz_plan *p, cl_mem in, int64_t base, cl_mem meta,
                                     uint64_t batches, cl_mem offsets, uint64_t offsets_off);
/* select's values: x's buffer, element offset of its element 0, its shape
 * and strides for the kernels (tensor_meta_buffer) and whether C-order. */
typedef struct {
    cl_mem buf;
    int64_t base;
    cl_mem meta;
    int contiguous;
} sel_values;

/* select's writing pass (a plan made with value_bytes): after
 * nz_enqueue_count with offsets = ctx->scratch at 0, or alone with single
 * (one tile) and offsets = the count buffer. */
clnz_status sel_enqueue_write(chain *ch, nz_plan *p, cl_mem in, int64_t base, cl_mem meta,
                              const sel_values *v, cl_mem out, uint64_t out_off,
                              uint64_t capacity, cl_mem offsets, uint64_t offsets_off, int single);
/* opts, or the defaults (written to *defaults) when opts is NULL. */
const clnz_nonzero_options *nz_options_or_defaults(const clnz_nonzero_options *opts,
                                                   clnz_nonzero_options *defaults);
/* How a blocking nonzero call starts (ctx not NULL): the message cleared,
 * res checked and zeroed. */
clnz_status nz_result_start(clnz_context *ctx, clnz_result *res);

/* The channel rule's pixel mask (one byte per pixel, C order) of a host
 * array into dst: channels.c for an input that fits one allocation,
 * chunked_items.c for any (slice by slice). */
clnz_status channels_mask_host(clnz_context *ctx, const clnz_tensor *in, const void *data,
                               clnz_channel_rule rule, const clnz_nonzero_options *o,
                               unsigned char *dst);
clnz_status channels_mask_sliced(clnz_context *ctx, const clnz_tensor *in, const void *data,
                                 clnz_channel_rule rule, const clnz_nonzero_options *o,
                                 unsigned char *dst);
/* Blocking batched nonzero on checked options: batched.c for an input that
 * fits one allocation, chunked_items.c for any. */
clnz_status batched_direct(clnz_context *ctx, const clnz_tensor *in, const void *data,
                           const clnz_nonzero_options *opts, int width, clnz_result *res,
                           clnz_array *offsets);
clnz_status batched_sliced(clnz_context *ctx, const clnz_tensor *in, const void *data,
                           const clnz_nonzero_options *o, int width, clnz_result *res,
                           clnz_array *offsets);
/* Checks width, index range and fill before any work; *width gets the width. */
clnz_status nz_check_options(clnz_context *ctx, const tensor_info *t,
                             const clnz_nonzero_options *opts, int *width);
size_t index_bytes(clnz_index_type t);

/* ---- host arrays in, results out (transfer.c) ---- */
/* A read-only device buffer over the bytes the view reaches (the host memory
 * itself on a CPU device); *base: element offset of logical element 0. */
clnz_status upload(clnz_context *ctx, const tensor_info *t, const void *data, cl_mem *buf,
                   int64_t *base);
/* A blocking read of `bytes` after the chain's last command. */
clnz_status read_back(chain *ch, cl_mem buf, size_t bytes, void *dst);
/* A result buffer (huge pages when large); freed with free(). */
void *alloc_result(size_t bytes);
/* A result of `bytes` on the host (alloc_result) and the device buffer the
 * kernels write it to (none for 0 bytes); fetch_result(..., ctx->is_cpu)
 * then brings it home. The caller frees both, whatever fails. */
clnz_status result_alloc(clnz_context *ctx, size_t bytes, void **host, cl_mem *buf);
/* The result in dst: read back, or, in_place (a CPU device wrote into dst
 * through CL_MEM_USE_HOST_PTR), mapped to make the writes visible. */
clnz_status fetch_result(chain *ch, cl_mem buf, size_t bytes, void *dst, int in_place);

/* ---- the blocking calls' counting half (host_api.c) ---- */
typedef struct {
    nz_plan p;
    int64_t base;
    cl_mem inb, meta, countb;
    chain ch;
    uint64_t z;
} host_run;

/* Plans (value_bytes as for nz_plan_make), uploads and makes the count buffer. */
clnz_status host_run_begin(clnz_context *ctx, const clnz_tensor *in, const void *data,
                           const clnz_predicate *pred, size_t value_bytes, host_run *r);
/* The counting pass and the count read back into r->z. */
clnz_status host_run_counted(host_run *r);
/* Ends the chain and releases what begin made; returns st. */
clnz_status host_run_end(host_run *r, clnz_status st);

/* ---- the blocking calls on one allocation's worth (host_api.c, select.c,
 * where.c); the public ones (chunked.c) check ctx, the options (non-NULL
 * here) and the result pointer, clear the message, then cut larger inputs
 * into such calls. Each fails with CLNZ_ERROR_TOO_LARGE when an input or the
 * result exceeds ctx->max_alloc. ---- */
clnz_status nonzero_direct(clnz_context *ctx, const clnz_tensor *in, const void *data,
                           const clnz_nonzero_options *opts, clnz_result *res);
clnz_status count_direct(clnz_context *ctx, const clnz_tensor *in, const void *data,
                         const clnz_predicate *pred, int64_t *count);
clnz_status select_direct(clnz_context *ctx, const clnz_tensor *x, const void *x_data,
                          const clnz_tensor *mask, const void *mask_data,
                          const clnz_predicate *pred, clnz_array *out);
/* select does not broadcast: the mask must have x's shape. */
clnz_status select_same_shape(clnz_context *ctx, const tensor_info *x, const tensor_info *m);
clnz_status where_direct(clnz_context *ctx, const clnz_tensor *cond, const void *cond_data,
                         const clnz_predicate *pred, const clnz_operand *x, const void *x_data,
                         const clnz_operand *y, const void *y_data, clnz_array *out);

#endif /* CLNZ_INTERNAL_H */
