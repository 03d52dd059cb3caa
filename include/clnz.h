/* clnz.h: the public API of clnz, nonzero and friends on any OpenCL device.
 *
 * Two ways in:
 *   - device-resident calls (clnz_*_enqueue): input and output are cl_mem
 *     buffers, the count goes to a device buffer, nothing is read back and the
 *     host does not wait for the device (it does compile a program at its
 *     first use: clnz_warmup does that up front; and a call that fails after
 *     enqueueing waits for what it enqueued); the OpenCL event triple
 *     (num_events, wait_list, out_event) chains them into a pipeline:
 *     up to 63 events, none NULL; an event that has already failed is the
 *     call's error CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST.
 *     *out_event, when asked for, is a new reference the caller releases
 *     (clReleaseEvent); a call that fails leaves it unwritten. A buffer
 *     must be of the context's cl_context, a buffer (not an image), and
 *     not CL_MEM_READ_ONLY where clnz writes it nor CL_MEM_WRITE_ONLY
 *     where it reads it (else CLNZ_ERROR_INVALID_ARGUMENT, by name; a
 *     count or offsets buffer may be CL_MEM_WRITE_ONLY and may forbid the
 *     host access: where a size's fill or an _alloc call reads the count,
 *     it reads a copy); what a call writes (entries, count, offsets, a
 *     mask, where's output, a scan's output and total) may share no byte
 *     with what it reads (an input's whole byte extent, a strided view's
 *     gaps too) or its other writes, sub-buffers seen in their parent (else
 *     the same error, naming both ranges; clnz_scan_enqueue exactly in
 *     place is fine);
 *   - blocking calls on host arrays (clnz_nonzero, clnz_count): they upload,
 *     run, read back and return a malloc'd result.
 * Between the two, the *_alloc calls take device buffers and return a
 * device buffer of exactly the result's size: they read the count (8
 * bytes) back, allocate, and enqueue the rest. No call ever finishes a
 * queue: blocking waits on clnz's own events (see clnz_context_wrap).
 *
 * Status codes: OpenCL's own error codes (CL_*, 0 and below -1..-72) pass
 * through unchanged; clnz's own codes are in -2000..-2099. Every call that
 * takes a context leaves a detailed message in it (clnz_context_message);
 * a kernel build failure leaves the build log there. The library never
 * prints (but for the clnz-debug: log on stderr CLNZ_DEBUG asks for), never
 * aborts and frees what it allocated whatever fails. */
#ifndef CLNZ_H
#define CLNZ_H

/* OpenCL 1.2 is what clnz needs; a caller who chose another version first
 * keeps it. */
#ifndef CL_TARGET_OPENCL_VERSION
#define CL_TARGET_OPENCL_VERSION 120
#endif
#include <CL/cl.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* libclnz.so is built with -fvisibility=hidden: it exports what this header
 * declares and nothing else. */
#if defined(__GNUC__)
#pragma GCC visibility push(default)
#endif

#define CLNZ_VERSION_MAJOR 0
#define CLNZ_VERSION_MINOR 2
#define CLNZ_VERSION_PATCH 0
#define CLNZ_VERSION_STRING "0.2.0"
/* MAJOR * 10000 + MINOR * 100 + PATCH, as returned by clnz_version_number() */
#define CLNZ_VERSION_NUMBER \
    (CLNZ_VERSION_MAJOR * 10000 + CLNZ_VERSION_MINOR * 100 + CLNZ_VERSION_PATCH)

const char *clnz_version_string(void);
int clnz_version_number(void);

#define CLNZ_MAX_RANK 32

/* ---- status codes ---------------------------------------------------- */
typedef int clnz_status;
#define CLNZ_SUCCESS 0
#define CLNZ_ERROR_INVALID_ARGUMENT (-2000) /* a NULL, a bad enum (dtype 99), a bad shape */
/* A real dtype the call does not take (a mask of f32, a scan of i8, an image
 * channel type outside the list) */
#define CLNZ_ERROR_UNSUPPORTED_DTYPE (-2001)
#define CLNZ_ERROR_INDEX_OVERFLOW (-2002) /* an index would not fit the index type */
/* width not 0..32 or below the effective rank; any width but 0 with the
 * flat layout; a batched width other than 0 or rank - 1 */
#define CLNZ_ERROR_INVALID_WIDTH (-2003)
/* also a result larger than the host's physical memory, which a system that
 * overcommits would grant */
#define CLNZ_ERROR_OUT_OF_HOST_MEMORY (-2004)
#define CLNZ_ERROR_NO_DEVICE (-2005)      /* no OpenCL platform or device found */
#define CLNZ_ERROR_INVALID_DEVICE (-2006) /* a device selector that names no device */
#define CLNZ_ERROR_TOO_LARGE (-2007)      /* a buffer larger than the device allows */
/* CLNZ_KERNEL_DIR set but a kernel file unreadable, or its path one that
 * build options cannot carry (a blank, a quote, a backslash, too long) */
#define CLNZ_ERROR_KERNEL_SOURCE (-2008)
/* A fill or scalar value its type cannot hold, a CLNZ_* environment
 * variable's value that clnz does not take (the message names it), a uses
 * list clnz_uses_parse cannot read, a bundle of more than 4096 programs, a
 * cache folder path of PATH_MAX bytes or more or that is no folder
 * (clnz_cache_clear). */
#define CLNZ_ERROR_INVALID_VALUE (-2009)
#define CLNZ_ERROR_SHAPE_MISMATCH (-2010) /* a mask of another shape, shapes that do not broadcast */
#define CLNZ_ERROR_DTYPE_MISMATCH (-2011) /* where's x and y arrays of different dtypes */
#define CLNZ_ERROR_UNSUPPORTED_STRATEGY (-2012) /* a forced strategy that cannot serve the call */
/* A program the call needs is in no bundle (nor the program cache) and the
 * device cannot compile (no compiler, or CLNZ_NO_COMPILE=1); the message
 * names the program and the bundle option that would include it. */
#define CLNZ_ERROR_PROGRAM_UNAVAILABLE (-2013)
/* A program bundle that is malformed, fails a checksum, or was built for
 * another device, driver or clnz version; the message says which. */
#define CLNZ_ERROR_BUNDLE_REFUSED (-2014)
/* This process is a child forked after clnz first used OpenCL in its
 * parent: the driver's threads did not come along, so OpenCL calls would
 * hang. (OpenCL the parent used only on its own, before any clnz call that
 * reaches the driver, clnz cannot see: there the child's calls reach the
 * driver as any other OpenCL call would.)
 * Every call that would reach the driver fails at once with this status
 * (clnz_context_release of a context from before the fork does nothing),
 * and so do clnz_context_stats and clnz_context_launch; the queries that
 * return no status (clnz_context_strategy, ...) still answer, without
 * waiting on a lock a thread of the parent may have held at the fork. */
#define CLNZ_ERROR_FORKED (-2015)
/* A file clnz wrote in the cache folder could not be removed
 * (clnz_cache_clear on a read-only folder, say): the others were. */
#define CLNZ_ERROR_CACHE_FILE (-2016)

/* A short constant name and meaning for any status, OpenCL's included. */
const char *clnz_status_string(clnz_status status);

/* ---- element types and tensors ------------------------------------- */
typedef enum {
    CLNZ_BOOL = 0, /* one byte, any value but 0 is true */
    CLNZ_U8,
    CLNZ_I8,
    CLNZ_U16,
    CLNZ_I16,
    CLNZ_U32,
    CLNZ_I32,
    CLNZ_U64,
    CLNZ_I64,
    CLNZ_F16, /* IEEE binary16, read as bit patterns: no fp16 support needed */
    CLNZ_F32,
    CLNZ_F64, /* nonzero and comparisons need no fp64 support */
    CLNZ_DTYPE_COUNT
} clnz_dtype;

size_t clnz_dtype_size(clnz_dtype dtype); /* 0 for an unknown dtype */
const char *clnz_dtype_name(clnz_dtype dtype); /* "f32", ...; NULL if unknown */
/* numpy's name of the dtype in native (little-endian) order, as
 * numpy.dtype(...).str writes it: "|b1", "|u1", "<i2", "<f4", ...; NULL if
 * unknown. */
const char *clnz_dtype_numpy(clnz_dtype dtype);

/* The logical array. rank 0..CLNZ_MAX_RANK; a rank-0 array has one element.
 * strides are in elements (may be negative or zero); NULL means C order. The
 * pointers are read during the call only. */
typedef struct {
    clnz_dtype dtype;
    int rank;
    const int64_t *shape;
    const int64_t *strides;
} clnz_tensor;

/* ---- scalars and predicates ---------------------------------------- */
typedef enum {
    CLNZ_VALUE_INT = 0, /* i: a Python int that fits int64 */
    CLNZ_VALUE_UINT,    /* u: a Python int in [2^63, 2^64) (or any uint64) */
    CLNZ_VALUE_FLOAT    /* f: a Python float (inf and nan allowed) */
} clnz_value_kind;

/* A number as a Python script writes it: an int or a float. Predicates
 * compare with one, where() takes one as an operand. */
typedef struct {
    clnz_value_kind kind;
    union {
        int64_t i;
        uint64_t u;
        double f;
    };
} clnz_scalar;

clnz_scalar clnz_scalar_int(int64_t v);
clnz_scalar clnz_scalar_uint(uint64_t v);
clnz_scalar clnz_scalar_float(double v);

typedef enum {
    CLNZ_OP_NONZERO = 0, /* x != 0, with -0.0 zero and NaN nonzero */
    CLNZ_OP_EQ,
    CLNZ_OP_NE,
    CLNZ_OP_LT,
    CLNZ_OP_LE,
    CLNZ_OP_GT,
    CLNZ_OP_GE
} clnz_op;

/* x OP value, compared the way numpy 1.24 compares an array with a Python
 * scalar: integers against an int exactly (int64 against an int above
 * 2^63 as float64); integers against a float as float64; floats against a
 * float rounded to the wider of the array's type and the smallest float
 * type numpy deems to hold the value (np.min_scalar_type: f16 below 65000,
 * f32 below 3.4e38, else f64); floats against an int as float64. Every operation
 * takes one as `const clnz_predicate *pred`, right after its input; NULL
 * means nonzero. */
typedef struct {
    clnz_op op;
    clnz_scalar value; /* ignored for CLNZ_OP_NONZERO */
} clnz_predicate;

clnz_predicate clnz_pred_nonzero(void);
clnz_predicate clnz_pred_int(clnz_op op, int64_t value);
clnz_predicate clnz_pred_uint(clnz_op op, uint64_t value);
clnz_predicate clnz_pred_float(clnz_op op, double value);

/* ---- contexts ------------------------------------------------------ */
/* Threads: every call on a context holds its lock, so several threads may
 * share one (their calls then run one at a time; a context each runs them in
 * parallel). A blocking call holds it while it waits, also for an earlier
 * call held by a caller's event not yet set: the other threads' calls on
 * that context wait with it (but for clnz_context_message and the accessors
 * of its OpenCL objects, which take no call's lock). clnz_context_release
 * must be a context's last call. */
typedef struct clnz_context clnz_context;

/* A context on a device chosen by `selector`: "P:D" (platform and device
 * index, as `clnz devices` lists them), a kind ("gpu", "cpu",
 * "accelerator"), or a case-insensitive part of the platform and device
 * names ("nvidia", "pocl"); real devices before simulators (Oclgrind). NULL
 * (or "", as the Python module's Context("")) means the environment
 * variable CLNZ_DEVICE (the same forms) if set and not empty, else the
 * default: the first GPU that is not a simulator, else the first real
 * device, else the first device. On failure *out is NULL and, if msg is not
 * NULL, msg gets a one-line reason. */
clnz_status clnz_context_create(const char *selector, clnz_context **out, char *msg,
                                size_t msg_size);

/* Wraps a caller's context and in-order or out-of-order queue. clnz retains
 * both and releases only its own references.
 *
 * The queue stays the caller's: no clnz call ever calls clFinish on it (the
 * tuner finishes only a profiling queue of its own). A call that blocks (the
 * blocking calls on host arrays, the *_alloc calls) waits only on the events
 * of the commands it enqueued itself, with clWaitForEvents or a blocking
 * read that waits on them. Those commands wait for the previous clnz call
 * on the same context (its scratch buffers are reused), and that call's
 * for its wait_list: so once a call was given an event that is not
 * complete yet (a user event), every later call on that context waits for
 * it too, and a blocking call blocks until it completes (or fails: the
 * calls after one whose commands failed no longer wait on them). A call
 * that blocks waits for the previous call before it enqueues anything, so
 * that event failing even while it waits fails only the previous call; a
 * device-resident call enqueued behind it fails with it, as OpenCL fails
 * every command whose wait list holds a failed event: its event ends with
 * CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST. Keep work that must not
 * wait on such an event on another context. On an out-of-order
 * queue, a command of the caller's own (not given to clnz) never holds a
 * clnz call up. On an in-order queue OpenCL's ordering applies as to any
 * command: clnz's commands start after every command enqueued before them,
 * so a blocking call waits for those too (there, enqueue the blocked work
 * after the clnz call, or use the device-resident calls). */
clnz_status clnz_context_wrap(cl_context cl_ctx, cl_command_queue queue, clnz_context **out,
                              char *msg, size_t msg_size);

void clnz_context_release(clnz_context *ctx); /* NULL is fine */

/* The last detailed message of the calling thread's calls on this context.
 * After a success it is empty, or this thread's warnings on this context,
 * which did not fail their calls (a cache folder that cannot be written),
 * one per line, the latest last (the latest alone where they would not
 * fit together): they stay (an error in between does not clear them), so
 * they may come from earlier calls. Valid until this thread's next call on
 * this context. It never waits for another thread's call on the context
 * (one blocked on a caller's event, say). */
const char *clnz_context_message(const clnz_context *ctx);

/* The context's OpenCL objects (the caller's, for a wrapped context), the
 * same for its whole life: they never wait for a call, and the queue is
 * never the tuner's own profiling queue, even while clnz_tune runs. */
cl_context clnz_context_cl_context(const clnz_context *ctx);
cl_command_queue clnz_context_queue(const clnz_context *ctx);
cl_device_id clnz_context_device(const clnz_context *ctx);

/* ---- strategies ----------------------------------------------------- */
/* How a compacting operation (count, nonzero, select and their batched and
 * channel forms) runs on the device. Every strategy gives bit-identical
 * results; they differ in speed, and in what they need of the device. */
typedef enum {
    CLNZ_STRATEGY_AUTO = 0,    /* chosen per call from the device, the tuning data and the size */
    CLNZ_STRATEGY_SINGLE_TILE, /* one work-group counts and writes in one launch: small inputs */
    CLNZ_STRATEGY_TWO_PASS,    /* a counting pass, a multi-level scan, a writing pass */
    CLNZ_STRATEGY_LOOKBACK,    /* one pass: tiles find their offsets by decoupled look-back */
    CLNZ_STRATEGY_STREAM,      /* one work-item streams the input in order (FPGAs) */
    CLNZ_STRATEGY_COUNT
} clnz_strategy;

/* "auto", "single-tile", "two-pass", "lookback", "stream"; NULL if unknown. */
const char *clnz_strategy_name(clnz_strategy strategy);
/* The strategy a name (as above) stands for; CLNZ_ERROR_INVALID_ARGUMENT
 * for an unknown name or a NULL. */
clnz_status clnz_strategy_parse(const char *name, clnz_strategy *strategy);

/* Forces every compacting call on this context to one strategy
 * (CLNZ_STRATEGY_AUTO: chosen per call again); a value outside the enum is
 * CLNZ_ERROR_INVALID_ARGUMENT and changes nothing. A call the forced strategy
 * cannot serve (single-tile on an input of many tiles, a strategy the
 * device lacks what it needs for) fails with
 * CLNZ_ERROR_UNSUPPORTED_STRATEGY and says why: never a silent fallback.
 * The environment variable CLNZ_STRATEGY (the names above) sets it when a
 * context is created; an unknown name there fails the creation with
 * CLNZ_ERROR_INVALID_VALUE. */
clnz_status clnz_context_set_strategy(clnz_context *ctx, clnz_strategy strategy);
/* The forced strategy, or CLNZ_STRATEGY_AUTO. */
clnz_strategy clnz_context_strategy(const clnz_context *ctx);
/* What auto runs on this context for an input of many tiles: stream on an
 * accelerator (an FPGA, whatever the size), else the strategy the tuning
 * data found fastest on this device, else the device type's (lookback on
 * GPUs that do not also call themselves CPUs, two-pass elsewhere). Inputs of one tile take single-tile, except on
 * an accelerator. */
clnz_strategy clnz_context_auto_strategy(const clnz_context *ctx);

/* ---- launch parameters and tuning ------------------------------------ */
/* Forces the launch parameters of every kernel: work-items per work-group
 * and elements per work-item, each on its own: 0 for either keeps the tuned
 * or default one (0, 0 forces nothing; clnz_context_launch says FORCED when
 * either is). A size above the device's CL_DEVICE_MAX_WORK_GROUP_SIZE, or
 * more than 65536 elements per work-item, is CLNZ_ERROR_INVALID_ARGUMENT; a
 * kernel that takes less (its CL_KERNEL_WORK_GROUP_SIZE or local memory: on
 * NVIDIA's driver most take 256 of the device's 1024) runs with its own
 * limit instead. Any work-group size gives the same results; tests use this
 * to force each in turn. */
clnz_status clnz_context_set_launch(clnz_context *ctx, size_t work_group_size,
                                    size_t items_per_work_item);

typedef enum {
    CLNZ_LAUNCH_DEFAULT = 0, /* derived from device queries */
    CLNZ_LAUNCH_VENDOR,      /* tuned on another device of the same vendor and type */
    CLNZ_LAUNCH_TUNED,       /* tuned on this device, driver and clnz version */
    CLNZ_LAUNCH_FORCED       /* clnz_context_set_launch */
} clnz_launch_source;

typedef struct {
    size_t work_group_size;
    size_t items_per_work_item;
} clnz_launch;

/* What a kernel launches with on this context, and why. The kernels are
 * named as the tuner names them: "two-pass" (the two-pass and single-tile
 * strategies), "lookback", "scan" and "mask" (mask and where); an unknown
 * name is CLNZ_ERROR_INVALID_ARGUMENT. */
clnz_status clnz_context_launch(const clnz_context *ctx, const char *kernel,
                                clnz_launch *launch, clnz_launch_source *source);

/* The candidates the tuner tries for a kernel (named as above) on this
 * device, from its work-group, local-memory and preferred-multiple limits.
 * Returns how many there are (0 for an unknown name, and in a child forked
 * after OpenCL use, as CLNZ_ERROR_FORKED says); fills up to max.
 * quick: the shorter list. */
int clnz_tune_candidates(clnz_context *ctx, const char *kernel, int quick, clnz_launch *out,
                         int max);

/* A clnz_tune_row's ms for a size it did not time: */
#define CLNZ_TUNE_WRONG  (-1.0) /* the results did not match the reference */
#define CLNZ_TUNE_FAILED (-2.0) /* the call failed (a launch or a buffer refused) */

/* One candidate the tuner measured. */
typedef struct {
    const char *kernel; /* a name as above (the library's own string) */
    clnz_launch launch;
    int correct;      /* its results matched the reference on every size */
    int is_default;   /* the launch the library would use untuned */
    int is_winner;
    double gbps[2];   /* effective GB/s on the small and the large problem */
    /* median kernel time (profiling events), ms; CLNZ_TUNE_WRONG or
     * CLNZ_TUNE_FAILED for a size it did not time, 0 for one after it */
    double ms[2];
} clnz_tune_row;

typedef void (*clnz_tune_progress)(void *user, int done, int total, const clnz_tune_row *row);

/* Tunes every kernel on this context's device: for each candidate, checks
 * its results against a host reference on a cache-sized and a large
 * problem, then times it with OpenCL profiling events (median after a
 * warm-up). The winners, and the strategy that was fastest on the large
 * problem, are stored in the cache folder for this device (and for its
 * vendor and type) and used by this context from now on. rows (may be
 * NULL) gets up to max_rows rows; *n_rows the number measured. */
clnz_status clnz_tune(clnz_context *ctx, int quick, clnz_tune_progress progress, void *user,
                      clnz_tune_row *rows, int max_rows, int *n_rows);

/* The cache folder (tuning results, compiled programs): $CLNZ_CACHE_DIR,
 * else $XDG_CACHE_HOME/clnz (if absolute), else $HOME/.cache/clnz. Writes it into buf
 * (size bytes) and returns buf; the string is empty when no folder can be
 * named (none of the three set) or the path does not fit size (never a cut
 * path). A NULL buf or a size of 0 returns "" (a static string). */
const char *clnz_cache_dir(char *buf, size_t size);
/* Deletes the files clnz wrote (they start with its magic) in the cache
 * folder's tuning and programs folders, nothing else; *removed (may be
 * NULL) gets how many. CLNZ_ERROR_INVALID_VALUE if the folder's path is
 * PATH_MAX bytes or more (no cache is used then) or names a file or a path
 * through one (nothing is removed); CLNZ_ERROR_CACHE_FILE if one of them
 * could not be removed (*removed still counts the rest). */
clnz_status clnz_cache_clear(int *removed);

/* Counters of what a context did, for tests and for curious callers. */
typedef struct {
    uint64_t programs_from_source; /* programs compiled from OpenCL C */
    uint64_t programs_from_cache;  /* programs loaded from the on-disk binary cache */
    uint64_t cache_files_rejected; /* cache files that did not match or parse (deleted) */
    uint64_t strategy_runs[CLNZ_STRATEGY_COUNT]; /* compacting calls run by each strategy */
} clnz_stats;

clnz_status clnz_context_stats(const clnz_context *ctx, clnz_stats *stats);

/* ---- devices ------------------------------------------------------- */
typedef struct {
    int platform;
    int device;
    int is_default;
    char platform_name[128];
    char device_name[128];
    char device_type[16]; /* "GPU", "CPU", "ACCELERATOR", "OTHER" */
    char version[128];
    uint64_t global_mem_size;
    uint64_t max_alloc_size;
    clnz_launch_source tuning; /* TUNED, VENDOR or DEFAULT: what is stored for it */
    char why_default[160];     /* the default device's: why it is ("the first GPU", ...) */
} clnz_device_info;

/* Fills up to max entries; *count gets the number of devices there are. */
clnz_status clnz_list_devices(clnz_device_info *infos, int max, int *count);
/* The entry of that listing for the device ctx runs on (a wrapped
 * context's too). A device the listing does not hold (a sub-device) is
 * described with platform and device -1. */
clnz_status clnz_context_device_info(const clnz_context *ctx, clnz_device_info *info);

/* ---- nonzero ------------------------------------------------------- */
typedef enum {
    CLNZ_LAYOUT_ROWS = 0, /* z x width: torch.nonzero, numpy.argwhere, DirectML */
    CLNZ_LAYOUT_COLUMNS,  /* width x capacity: numpy.nonzero stacked, ONNX NonZero */
    CLNZ_LAYOUT_FLAT      /* z flat C-order indices: numpy.flatnonzero */
} clnz_layout;

typedef enum {
    CLNZ_INDEX_INT64 = 0,
    CLNZ_INDEX_INT32,
    CLNZ_INDEX_UINT32
} clnz_index_type;

typedef enum {
    CLNZ_ORDER_ROW_MAJOR = 0, /* (row, column): dimension 0 first, as torch and numpy */
    CLNZ_ORDER_XY             /* (x, y) = (column, row): each entry reversed, cv::findNonZero */
} clnz_order;

typedef struct {
    clnz_layout layout;         /* default: rows */
    /* The order of the coordinates inside an entry (rows and columns layouts;
     * the entries themselves stay in C order of the elements). With a width
     * above the rank, XY puts the zero columns last. */
    clnz_order order;
    clnz_index_type index_type; /* default: int64 */
    /* Coordinate width N (rows and columns): column j holds dimension
     * rank - N + j, columns before dimension 0 are 0. 0 means the rank
     * (rows) or max(rank, 1) (columns). N below the effective rank (rank
     * without leading 1s), or any N but 0 with the flat layout, is
     * CLNZ_ERROR_INVALID_WIDTH. */
    int width;
    /* Static capacity (nonzero_static): with has_size, the result has exactly
     * `size` entries, the first min(z, size) real and the rest `fill`. */
    int has_size;
    int64_t size;
    int64_t fill; /* -1 after clnz_nonzero_options_init (4294967295 as uint32); a
                   * zeroed struct pads with 0, a real coordinate: always init */
} clnz_nonzero_options;

void clnz_nonzero_options_init(clnz_nonzero_options *opts);
/* Checks the options alone, before any input is at hand: an unknown
 * layout, order or index type, flat with a width or order xy (they would
 * change nothing), a width outside 0..32, a negative size, a fill the index
 * type cannot hold. The status is the one a call with these options would
 * return, the reason goes to msg (may be NULL). Every call makes these
 * checks too, and those its input needs (a width below its rank, indices
 * that overflow the index type). */
clnz_status clnz_nonzero_options_check(const clnz_nonzero_options *opts, char *msg,
                                       size_t msg_size);

/* Width the options give for a tensor of this rank (resolving 0). */
int clnz_nonzero_width(const clnz_nonzero_options *opts, int rank);

/* Device-resident nonzero. in_offset is in bytes and must be a multiple of
 * the element size; strides may reach below it (negative strides), as long as
 * every element lies inside `in`. The output has room for `capacity` entries
 * (rows: capacity x width, columns: width x capacity with column stride
 * `capacity`, flat: capacity) starting at out_offset bytes; the first
 * min(z, capacity) entries are written, and with opts->has_size the rest up
 * to capacity get the fill value (opts->size is ignored here). The true
 * count z goes to `count` at count_offset bytes, as a uint64. Enqueues and
 * returns; *out_event (if not NULL) is the last kernel's event. */
clnz_status clnz_nonzero_enqueue(clnz_context *ctx, const clnz_tensor *in, cl_mem in_buf,
                                 size_t in_offset, const clnz_predicate *pred,
                                 const clnz_nonzero_options *opts,
                                 cl_mem out_buf, size_t out_offset, uint64_t capacity,
                                 cl_mem count_buf, size_t count_offset, cl_uint num_events,
                                 const cl_event *wait_list, cl_event *out_event);

/* Device-resident nonzero into a buffer of exactly the result's size, which
 * the library allocates once the count is known (the capacity form above
 * needs the worst case up front). The count is enqueued after wait_list,
 * its 8 bytes are read back (the call's one host read: it blocks until the
 * count is known, waiting on its own commands only), a buffer of `entries`
 * entries is created in the context's cl_context (CL_MEM_READ_WRITE) and
 * the entries are enqueued into it; the call returns without waiting for
 * them: *out_event (if not NULL) is the last command's event.
 *
 * entries is z, or opts->size with opts->has_size (then the entries past z
 * get the fill value). The buffer holds rows (entries x width), columns
 * (width x entries, column stride `entries`) or flat (entries) indices of
 * opts->index_type from byte 0, width as clnz_nonzero_width gives it; it
 * is the caller's to release (clReleaseMemObject). A result of no bytes
 * (no entries, or entries of width 0: the rows of a 0-d input) has no
 * buffer: *out_buf is NULL (OpenCL has no empty buffers); *count still
 * says z. *count gets z; count_buf (NULL: none) also gets it, as a uint64
 * at count_offset bytes, for later commands on the device. On failure
 * *out_buf is NULL and nothing is left allocated; count_buf is untouched
 * by a call refused before it counts (its arguments, a static size too
 * large for one allocation), and may hold z after a failure past the count
 * (z entries too many for one allocation, a failed allocation). */
clnz_status clnz_nonzero_alloc(clnz_context *ctx, const clnz_tensor *in, cl_mem in_buf,
                               size_t in_offset, const clnz_predicate *pred,
                               const clnz_nonzero_options *opts, cl_mem *out_buf,
                               uint64_t *count, cl_mem count_buf, size_t count_offset,
                               cl_uint num_events, const cl_event *wait_list,
                               cl_event *out_event);

/* A result of the blocking call, owned by the caller (clnz_result_free). */
typedef struct {
    void *indices;      /* ndim-D C-order array of index_type, malloc'd */
    int ndim;           /* 2 for rows and columns, 1 for flat */
    int64_t shape[2];   /* rows: (entries, width), columns: (width, entries), flat: (entries) */
    int64_t count;      /* the true count z, also when the output was truncated */
    clnz_index_type index_type;
} clnz_result;

/* Frees indices; NULL is fine. A result above 32 MiB is kept instead, while
 * a context lives, for a later result of between half its size and its
 * size: fresh pages would cost a zeroing by the kernel on every call. Two
 * blocks at most, about 1 GiB in all, are kept: a larger one is freed at
 * once, and a new one takes the place of the older. The
 * kept pages are lent back to the system (MADV_FREE), which takes them if
 * it runs short; the last clnz_context_release frees them. free() on
 * indices is also fine (nothing is kept then). */
void clnz_result_free(clnz_result *res);

/* Blocking nonzero on a host array. data points at logical element 0
 * (strides may be negative). A result larger than 256 KiB at its worst
 * case is made before its count where it can be: of its static size, or
 * on a CPU device of a size guessed from the context's last calls (an
 * eighth over the densest of the last four), so that the count is read
 * with the entries (one host round trip, not two). Its block may then be
 * up to twice its bytes; a count past the guess costs a second writing
 * pass. clnz_select does the same. */
clnz_status clnz_nonzero(clnz_context *ctx, const clnz_tensor *in, const void *data,
                         const clnz_predicate *pred, const clnz_nonzero_options *opts,
                         clnz_result *res);

/* ---- images ------------------------------------------------------ */
typedef enum {
    CLNZ_CHANNELS_ANY = 0, /* a pixel is selected when the predicate holds on any channel */
    CLNZ_CHANNELS_ALL      /* ... on every channel (a pixel of no channels: always) */
} clnz_channel_rule;

/* An image in memory: rows row_pitch bytes apart (a multiple of the dtype's
 * size; 0: packed rows of x + width pixels), pixels of `channels`
 * interleaved values, and the region of interest, in pixels. */
typedef struct {
    clnz_dtype dtype;
    int channels;
    size_t row_pitch;
    size_t x, y, width, height;
} clnz_image_desc;

/* The region of interest as a tensor every call takes: (height, width) for
 * one channel, (height, width, channels) for more, rows row_pitch apart.
 * *offset gets the byte offset of the region's first pixel from the
 * image's first byte: pass it as in_offset, or add it to a host pointer.
 * shape and strides need room for 3 values; *t points into them.
 * Coordinates then count from the region's corner. */
clnz_status clnz_image_view(clnz_context *ctx, const clnz_image_desc *img, clnz_tensor *t,
                            int64_t *shape, int64_t *strides, size_t *offset);

/* nonzero over pixels: the last dimension of `in` holds each pixel's
 * channels (any strides), and a pixel is selected when pred holds on
 * any or all of them. The result has the coordinates of the other rank - 1
 * dimensions, as clnz_nonzero writes them. The enqueue call keeps a
 * pixel-sized byte mask on the device between its two stages. */
clnz_status clnz_nonzero_channels_enqueue(clnz_context *ctx, const clnz_tensor *in,
                                          cl_mem in_buf, size_t in_offset,
                                          const clnz_predicate *pred, clnz_channel_rule rule,
                                          const clnz_nonzero_options *opts, cl_mem out_buf,
                                          size_t out_offset, uint64_t capacity,
                                          cl_mem count_buf, size_t count_offset,
                                          cl_uint num_events, const cl_event *wait_list,
                                          cl_event *out_event);
/* The same into a buffer of exactly the result's size, as clnz_nonzero_alloc
 * (the pixel mask stays on the device). */
clnz_status clnz_nonzero_channels_alloc(clnz_context *ctx, const clnz_tensor *in,
                                        cl_mem in_buf, size_t in_offset,
                                        const clnz_predicate *pred, clnz_channel_rule rule,
                                        const clnz_nonzero_options *opts, cl_mem *out_buf,
                                        uint64_t *count, cl_mem count_buf, size_t count_offset,
                                        cl_uint num_events, const cl_event *wait_list,
                                        cl_event *out_event);
clnz_status clnz_nonzero_channels(clnz_context *ctx, const clnz_tensor *in, const void *data,
                                  const clnz_predicate *pred, clnz_channel_rule rule,
                                  const clnz_nonzero_options *opts, clnz_result *res);

/* nonzero over a region of an OpenCL image (image2d_t; a device without
 * image support gives OpenCL's CL_INVALID_OPERATION): origin and region in
 * pixels, two elements each, (x, y) and (width, height), not OpenCL's three
 * (origin NULL: the corner; region NULL: from origin to the edge),
 * coordinates (row, column) from the region's corner, or (x, y) with
 * CLNZ_ORDER_XY. Channel orders R, RG, RGBA, BGRA, ARGB, INTENSITY and
 * LUMINANCE; channel types (UN)SIGNED_INT8/16/32, UNORM_INT8/16 (compared
 * as the integers they store), FLOAT (compared as float) and HALF_FLOAT
 * (compared as half, as clnz_nonzero_channels compares f16: the region is
 * copied to a buffer as stored, not read through read_imagef). */
clnz_status clnz_image2d_nonzero_enqueue(clnz_context *ctx, cl_mem image, const size_t *origin,
                                         const size_t *region, const clnz_predicate *pred,
                                         clnz_channel_rule rule,
                                         const clnz_nonzero_options *opts, cl_mem out_buf,
                                         size_t out_offset, uint64_t capacity, cl_mem count_buf,
                                         size_t count_offset, cl_uint num_events,
                                         const cl_event *wait_list, cl_event *out_event);
clnz_status clnz_image2d_nonzero(clnz_context *ctx, cl_mem image, const size_t *origin,
                                 const size_t *region, const clnz_predicate *pred,
                                 clnz_channel_rule rule,
                                 const clnz_nonzero_options *opts, clnz_result *res);

/* ---- count, mask, scan ------------------------------------------- */
clnz_status clnz_count_enqueue(clnz_context *ctx, const clnz_tensor *in, cl_mem in_buf,
                               size_t in_offset, const clnz_predicate *pred, cl_mem count_buf,
                               size_t count_offset, cl_uint num_events, const cl_event *wait_list,
                               cl_event *out_event);

clnz_status clnz_count(clnz_context *ctx, const clnz_tensor *in, const void *data,
                       const clnz_predicate *pred, int64_t *count);

/* The predicate of every element as 0/1 in C order of the logical array:
 * mask_dtype is CLNZ_U8 (or CLNZ_BOOL) for one byte, CLNZ_U32 for four. */
clnz_status clnz_mask_enqueue(clnz_context *ctx, const clnz_tensor *in, cl_mem in_buf,
                              size_t in_offset, const clnz_predicate *pred, clnz_dtype mask_dtype,
                              cl_mem mask_buf, size_t mask_offset, cl_uint num_events,
                              const cl_event *wait_list, cl_event *out_event);

/* Exclusive prefix sum of n elements (dtype CLNZ_U32 or CLNZ_U64) from in to
 * out (they may be the same buffer at the same offset). u32 wraps modulo
 * 2^32. If total_buf is not NULL, the sum of all n goes there, as one
 * element of dtype (4 bytes for u32, wrapped too). Offsets in bytes; in_buf
 * and out_buf are needed even for n == 0. */
clnz_status clnz_scan_enqueue(clnz_context *ctx, clnz_dtype dtype, cl_mem in_buf,
                              size_t in_offset, cl_mem out_buf, size_t out_offset, uint64_t n,
                              cl_mem total_buf, size_t total_offset, cl_uint num_events,
                              const cl_event *wait_list, cl_event *out_event);

/* ---- results on the host ------------------------------------------ */
/* An array the blocking select and where return, owned by the caller. */
typedef struct {
    void *data; /* C order, malloc'd */
    clnz_dtype dtype;
    int rank;
    int64_t shape[CLNZ_MAX_RANK];
} clnz_array;

void clnz_array_free(clnz_array *a); /* frees data, as clnz_result_free; NULL is fine */

/* ---- batched nonzero (CSR) ----------------------------------------- */
/* For a batch of B = shape[0] items (rank >= 1), the selected elements of
 * every item in one call, as CSR: item b's entries are entries offsets[b] to
 * offsets[b + 1] - 1, offsets[B] is the total count z (B + 1 int64, offsets[0]
 * = 0), and an entry holds the coordinates of the remaining rank - 1
 * dimensions: np.argwhere of each item, concatenated. The entries are rows
 * (z x (rank - 1)) of opts->index_type in opts->order; opts->layout must be
 * rows, opts->width 0 or rank - 1, opts->has_size 0. */
clnz_status clnz_nonzero_batched_enqueue(clnz_context *ctx, const clnz_tensor *in, cl_mem in_buf,
                                         size_t in_offset, const clnz_predicate *pred,
                                         const clnz_nonzero_options *opts,
                                         cl_mem out_buf, size_t out_offset, uint64_t capacity,
                                         cl_mem offsets_buf, size_t offsets_offset,
                                         cl_uint num_events, const cl_event *wait_list,
                                         cl_event *out_event);

/* The same with the entries in a buffer of exactly z x (rank - 1) indices,
 * allocated once the count is known, as clnz_nonzero_alloc: the offsets go
 * to offsets_buf (B + 1 int64, as above), offsets[B] is read back into
 * *count, and *out_buf is NULL when the entries hold no bytes. */
clnz_status clnz_nonzero_batched_alloc(clnz_context *ctx, const clnz_tensor *in, cl_mem in_buf,
                                       size_t in_offset, const clnz_predicate *pred,
                                       const clnz_nonzero_options *opts, cl_mem *out_buf,
                                       uint64_t *count, cl_mem offsets_buf,
                                       size_t offsets_offset, cl_uint num_events,
                                       const cl_event *wait_list, cl_event *out_event);

/* Blocking: *res gets the entries (res->count = z), *offsets the B + 1
 * offsets as a 1-D int64 array (clnz_array_free). Offsets larger than the
 * host's physical memory are CLNZ_ERROR_TOO_LARGE, whatever malloc would
 * grant. */
clnz_status clnz_nonzero_batched(clnz_context *ctx, const clnz_tensor *in, const void *data,
                                 const clnz_predicate *pred, const clnz_nonzero_options *opts,
                                 clnz_result *res, clnz_array *offsets);

/* ---- batched count -------------------------------------------------- */
/* The count of every item of a batch, without a single coordinate: the
 * batch is the leading batch_rank dimensions of in (1 <= batch_rank <=
 * rank; B items, the product of their extents) and an item is the rest.
 * numpy.count_nonzero(x, axis) and torch.count_nonzero(x, dim) are this
 * call on a view whose strides put the kept axes first: no copy, whatever
 * the axes. The counts are those clnz_nonzero_batched's offsets
 * difference to (offsets[b + 1] - offsets[b]).
 * The device-resident call writes B int64 counts to counts_buf at
 * counts_offset bytes, after the events; the blocking call reads a host
 * array of any size and fills *counts (int64, shape = in's first
 * batch_rank extents: clnz_array_free); counts larger than the host's
 * physical memory are CLNZ_ERROR_TOO_LARGE. */
clnz_status clnz_count_batched_enqueue(clnz_context *ctx, const clnz_tensor *in, cl_mem in_buf,
                                       size_t in_offset, const clnz_predicate *pred,
                                       int batch_rank, cl_mem counts_buf, size_t counts_offset,
                                       cl_uint num_events, const cl_event *wait_list,
                                       cl_event *out_event);
clnz_status clnz_count_batched(clnz_context *ctx, const clnz_tensor *in, const void *data,
                               const clnz_predicate *pred, int batch_rank, clnz_array *counts);

/* ---- select: x[mask] --------------------------------------------- */
/* The values of x at the positions where `pred` holds on `mask` (a tensor of
 * x's shape, any dtype), or on x itself when mask is NULL, in C order of the
 * logical array: numpy.extract, x[mask != 0], torch.masked_select. pred NULL
 * means nonzero. The output holds `capacity` values of x's dtype from
 * out_offset bytes on; the first min(z, capacity) are written, and the true
 * count z goes to count_buf at count_offset bytes, as a uint64. mask_buf is
 * ignored when mask is NULL. Enqueues and returns. */
clnz_status clnz_select_enqueue(clnz_context *ctx, const clnz_tensor *x, cl_mem x_buf,
                                size_t x_offset, const clnz_tensor *mask, cl_mem mask_buf,
                                size_t mask_offset, const clnz_predicate *pred, cl_mem out_buf,
                                size_t out_offset, uint64_t capacity, cl_mem count_buf,
                                size_t count_offset, cl_uint num_events,
                                const cl_event *wait_list, cl_event *out_event);

/* The same into a buffer of exactly z values of x's dtype, allocated once
 * the count is known, as clnz_nonzero_alloc: *count gets z (count_buf, if
 * not NULL, too), *out_buf is NULL when z is 0. */
clnz_status clnz_select_alloc(clnz_context *ctx, const clnz_tensor *x, cl_mem x_buf,
                              size_t x_offset, const clnz_tensor *mask, cl_mem mask_buf,
                              size_t mask_offset, const clnz_predicate *pred, cl_mem *out_buf,
                              uint64_t *count, cl_mem count_buf, size_t count_offset,
                              cl_uint num_events, const cl_event *wait_list,
                              cl_event *out_event);

/* Blocking select on host arrays: *out gets the z values as a 1-D array
 * (made before the count as clnz_nonzero's result is). */
clnz_status clnz_select(clnz_context *ctx, const clnz_tensor *x, const void *x_data,
                        const clnz_tensor *mask, const void *mask_data,
                        const clnz_predicate *pred, clnz_array *out);

/* ---- where(cond, x, y) ------------------------------------------- */
/* An operand of where: an array, or a scalar written as a Python int or
 * float. */
typedef struct {
    const clnz_tensor *array; /* NULL for a scalar */
    clnz_scalar value;        /* the scalar, when array is NULL */
} clnz_operand;

clnz_operand clnz_operand_array(const clnz_tensor *t);
clnz_operand clnz_operand_int(int64_t v);
clnz_operand clnz_operand_uint(uint64_t v);
clnz_operand clnz_operand_float(double v);

/* where's result: x where `pred` (NULL: nonzero) holds on cond, else y,
 * element-wise over the broadcast of the three shapes (numpy and torch rules:
 * aligned from the right, a dimension of 1 stretches, anything else is
 * CLNZ_ERROR_SHAPE_MISMATCH). Its dtype: x's and y's when both are arrays
 * (they must agree: CLNZ_ERROR_DTYPE_MISMATCH); the array's when the other
 * is a scalar: an integer (or bool) dtype takes only a number it holds
 * exactly (0.5 into an integer array, 300 into u8: CLNZ_ERROR_INVALID_VALUE);
 * a float dtype takes any number, rounded to nearest even as numpy casts
 * (70000 into f16 is inf, 2^24 + 1 into f32 is 2^24); with two scalars f64
 * if either is a float, else i64. shape must have room for CLNZ_MAX_RANK
 * extents. */
clnz_status clnz_where_result(clnz_context *ctx, const clnz_tensor *cond, const clnz_operand *x,
                              const clnz_operand *y, clnz_dtype *dtype, int *rank,
                              int64_t *shape);

/* Device-resident where: the output is C-order of clnz_where_result's shape
 * and dtype, from out_offset bytes on. x_buf and y_buf are ignored for
 * scalars. where needs no *_alloc form: its result's size is known before
 * any work (clnz_where_result), so the caller allocates it exactly. */
clnz_status clnz_where_enqueue(clnz_context *ctx, const clnz_tensor *cond, cl_mem cond_buf,
                               size_t cond_offset, const clnz_predicate *pred,
                               const clnz_operand *x, cl_mem x_buf, size_t x_offset,
                               const clnz_operand *y, cl_mem y_buf, size_t y_offset,
                               cl_mem out_buf, size_t out_offset, cl_uint num_events,
                               const cl_event *wait_list, cl_event *out_event);

/* Blocking where on host arrays (x_data, y_data ignored for scalars). */
clnz_status clnz_where(clnz_context *ctx, const clnz_tensor *cond, const void *cond_data,
                       const clnz_predicate *pred, const clnz_operand *x, const void *x_data,
                       const clnz_operand *y, const void *y_data, clnz_array *out);

/* ---- declared uses: warm-up and program bundles ---------------------
 * clnz compiles each program (a kernel file and its -D options: element
 * type, predicate class, value size) on its first use. A declared set of
 * uses names the programs ahead of time: clnz_warmup builds them at start
 * (a service's first request then pays no compile) and a bundle carries
 * their binaries to a device that cannot compile (FPGAs). Layout, index
 * type, width, order, size and launch shape are kernel arguments: no use
 * needs to name them. */
/* Operations (clnz_uses.ops bits) */
#define CLNZ_USE_COUNT (1u << 0)    /* clnz_count[_enqueue] */
#define CLNZ_USE_NONZERO (1u << 1)  /* clnz_nonzero[_enqueue], with or without a static size */
#define CLNZ_USE_BATCHED (1u << 2)  /* clnz_nonzero_batched*, clnz_count_batched* */
#define CLNZ_USE_SELECT (1u << 3)   /* clnz_select[_enqueue] */
#define CLNZ_USE_WHERE (1u << 4)    /* clnz_where[_enqueue] */
#define CLNZ_USE_MASK (1u << 5)     /* clnz_mask_enqueue */
#define CLNZ_USE_SCAN (1u << 6)     /* clnz_scan_enqueue (u32 and u64) */
#define CLNZ_USE_CHANNELS (1u << 7) /* clnz_nonzero_channels[_enqueue] */
#define CLNZ_USE_IMAGE2D (1u << 8)  /* clnz_image2d_nonzero[_enqueue] (every channel type) */
/* Predicate classes (clnz_uses.predicates bits) */
#define CLNZ_PREDS_NONZERO (1u << 0) /* nonzero (x != 0): a cheaper program of its own */
#define CLNZ_PREDS_COMPARE (1u << 1) /* eq, ne, lt, le, gt, ge with a value: one program */

/* What a set of calls needs. A field of 0 takes its default. */
typedef struct {
    /* bit (1u << dtype) for each element type the calls take: inputs,
     * masks, where's conditions, and the values select and where move
     * (select and where get a program per condition dtype and value size).
     * 0: every dtype. */
    uint32_t dtypes;
    uint32_t ops;        /* CLNZ_USE_*; 0: CLNZ_USE_COUNT | CLNZ_USE_NONZERO */
    uint32_t predicates; /* CLNZ_PREDS_*; 0: CLNZ_PREDS_NONZERO */
    /* bit (1u << strategy) for each strategy to cover; 0: those this
     * context may run (its forced one, else what auto picks on its device:
     * single-tile and two-pass on CPUs, with lookback on GPUs, stream on
     * accelerators) */
    uint32_t strategies;
} clnz_uses;

/* Sets one field of *uses from a comma-separated list of names, as the
 * command line takes them: axis "dtypes" (bool, u8, ..., f64), "ops" (count,
 * nonzero, batched, select, where, mask, scan, channels, image2d),
 * "predicates" (nonzero, compare, or an op: eq, ne, lt, le, gt, ge) or
 * "strategies" (auto, single-tile, two-pass, lookback, stream); "all" names every
 * one. An unknown axis or name is CLNZ_ERROR_INVALID_VALUE with the reason
 * in msg (if not NULL). */
clnz_status clnz_uses_parse(clnz_uses *uses, const char *axis, const char *list, char *msg,
                            size_t msg_size);

/* Builds (or loads from a bundle or the program cache) every program the
 * uses need on this context's device and keeps them in the context, so that
 * no call of those uses compiles. uses NULL: the defaults above (every
 * dtype, count and nonzero, the nonzero predicate). *programs (if not NULL)
 * gets how many programs are ready. A program that fails to build fails the
 * call, the message naming it. A bit that names nothing in any field (an
 * op, dtype, predicate class or strategy the header does not define) is
 * CLNZ_ERROR_INVALID_ARGUMENT, the message naming the field and the bits,
 * before any build. */
clnz_status clnz_warmup(clnz_context *ctx, const clnz_uses *uses, int *programs);

/* A program bundle: a manifest (the device, driver and clnz version it was
 * built for, the uses it covers, each program's kernel file, options and
 * checksum) and one file per program, compiled (a binary for
 * clCreateProgramWithBinary) or, for an offline compiler, its OpenCL C
 * source. In memory it is the bytes of those files. */
typedef struct clnz_bundle clnz_bundle;

/* Flags of clnz_bundle_build */
#define CLNZ_BUNDLE_SOURCES 1u /* write each program's source; compile nothing */

/* Builds a bundle of the programs the uses need on this context's device
 * (NULL: the defaults of clnz_warmup; unknown bits refused as there). */
clnz_status clnz_bundle_build(clnz_context *ctx, const clnz_uses *uses, unsigned flags,
                              clnz_bundle **out);
/* Reads a bundle folder: the manifest parsed strictly, every file checked
 * against its size and checksum. Any fault of the folder is
 * CLNZ_ERROR_BUNDLE_REFUSED with the reason in msg (a NULL dir or out:
 * CLNZ_ERROR_INVALID_ARGUMENT). The device it names is not checked here. */
clnz_status clnz_bundle_open(const char *dir, clnz_bundle **out, char *msg, size_t msg_size);
/* Its files: 0 is the manifest ("manifest.txt"), then one per program.
 * name, data and size stay valid until the bundle changes
 * (clnz_bundle_add_binary) or is released; threads may read one at once. */
int clnz_bundle_file_count(const clnz_bundle *bundle);
clnz_status clnz_bundle_file(const clnz_bundle *bundle, int index, const char **name,
                             const void **data, size_t *size);
/* Puts a binary built offline (aoc, v++, ...) in place of program
 * `program`'s source (or binary): the FPGA flow. A program number outside
 * the bundle, a size of 0 or above 1 GiB, or a NULL is
 * CLNZ_ERROR_INVALID_ARGUMENT with the reason in msg. */
clnz_status clnz_bundle_add_binary(clnz_bundle *bundle, int program, const void *data,
                                   size_t size, char *msg, size_t msg_size);
void clnz_bundle_release(clnz_bundle *bundle); /* NULL is fine */

/* Makes the context load programs from the bundle folder `dir` before it
 * would compile (NULL: no bundle). A bundle for another device, driver or
 * clnz version, one built with other build options (CLNZ_BUILD_OPTIONS,
 * CLNZ_KERNEL_DIR) or one that fails its checks, is refused
 * (CLNZ_ERROR_BUNDLE_REFUSED) and the context keeps what it had. The
 * environment variable CLNZ_BUNDLE=DIR does this when a context is created
 * (a refused bundle fails the creation). */
clnz_status clnz_context_use_bundle(clnz_context *ctx, const char *dir);

#if defined(__GNUC__)
#pragma GCC visibility pop
#endif

#ifdef __cplusplus
}
#endif
#endif /* CLNZ_H */
