/* chain.h: a call's commands enqueued as one chain of events (chain.c),
 * and kernel arguments. */
#ifndef CLNZ_CORE_CHAIN_H
#define CLNZ_CORE_CHAIN_H

#include "clnz.h"

typedef struct {
    clnz_context *ctx;
    cl_uint n_wait;
    const cl_event *wait;
    cl_event last; /* event of the last command enqueued in this call */
    int debug_wait; /* CLNZ_DEBUG may wait for this call's launches (chain_begin) */
    cl_event gate;  /* a user event the first command waits on (chain_gate), or NULL */
    size_t held_from; /* ctx->held.n at chain_begin: this call's held events come after */
} chain;

void chain_begin(chain *ch, clnz_context *ctx, cl_uint n_wait, const cl_event *wait);
/* Before a call that waits for its own commands (a blocking call, an
 * *_alloc call, the tuner): waits for the previous call's, or for those of
 * the newest call below it that did not fail, so that their failure (a
 * caller's event failing late) fails none of this call's (chain.c). After
 * it no earlier call is pending. */
void chain_settle(clnz_context *ctx);
/* Releases the context's events of earlier calls (last_event, its
 * fallbacks and the held ones: core/held.c), for a context released, or a
 * queue that has been finished. */
void chain_forget(clnz_context *ctx);
/* chain_settle, chain_begin with no wait list and chain_gate: a blocking
 * call's start. */
void chain_begin_own(chain *ch, clnz_context *ctx);
/* For a call that waits for its own commands (a blocking call), on a CPU
 * device: its commands are held until chain_open, which every wait of the
 * call comes after (transfer.c, chain_end). Without a gate (another device,
 * CLNZ_DEBUG, a caller's wait list, no user event to be had) nothing
 * changes. */
void chain_gate(chain *ch);
/* Lets the held commands run; idempotent. A gate that cannot be opened
 * fails with the driver's status (and the message), and leaves the context
 * failing every later call (ctx->queue_lost): its commands, and all behind
 * them on the queue, never run, so nothing may wait for them. */
cl_int chain_open(chain *ch);
clnz_status chain_launch(chain *ch, cl_kernel k, const char *name, size_t global, size_t local);
/* Writes `count` copies of a value of `size` bytes (4 or 8) from byte_off on. */
clnz_status chain_fill(chain *ch, cl_mem buf, size_t byte_off, uint64_t value, size_t size,
                       uint64_t count);
/* Copies `bytes` bytes from src at src_off to dst at dst_off. */
clnz_status chain_copy(chain *ch, cl_mem src, size_t src_off, cl_mem dst, size_t dst_off,
                       size_t bytes);
/* Copies a 2-D region of an image (origin and region in pixels) into buf
 * from its start, as the bytes the image stores. */
clnz_status chain_copy_image(chain *ch, cl_mem image, const size_t *origin, const size_t *region,
                             cl_mem buf);
/* Hands the last event to the caller (or releases it) and remembers it. */
clnz_status chain_end(chain *ch, clnz_status st, cl_event *out_event);
/* The number of events to wait on for the next command, and where they are. */
cl_uint chain_wait_list(chain *ch, cl_event *buf, cl_uint buf_max, const cl_event **list);
/* A caller's wait list: a count needs a list, and not too long a one. */
clnz_status events_check(clnz_context *ctx, cl_uint n, const cl_event *list);

/* Kernel arguments as (size, pointer) pairs; a NULL pointer is local memory. */
typedef struct {
    size_t size;
    const void *ptr;
} karg;
#define KARG(v) {sizeof(v), &(v)}
#define KLOCAL(bytes) {(bytes), NULL}
clnz_status set_args(clnz_context *ctx, cl_kernel k, const char *name, const karg *args,
                     int n);
/* A work-group size for kernels of one work-item per output: 64 (or the
 * forced launch shape's), or what the kernel allows. */
clnz_status small_local(clnz_context *ctx, cl_kernel k, size_t *local);

#endif
