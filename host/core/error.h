/* error.h: recording why a call failed, in the calling thread's message on
 * its context (error.c), and the two macros that keep the happy path
 * readable. */
#ifndef CLNZ_CORE_ERROR_H
#define CLNZ_CORE_ERROR_H

#include "clnz.h"

/* Records a message in ctx and returns status, so a failure reads
 * `return ctx_fail(ctx, CLNZ_ERROR_..., "what: %s", why);` */
clnz_status ctx_fail(clnz_context *ctx, clnz_status status, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* An OpenCL call's result: success passes, a failure records "what: CL_NAME (file:line)". */
clnz_status ctx_cl(clnz_context *ctx, cl_int err, const char *what, const char *file, int line);
void ctx_clear_message(clnz_context *ctx);
/* The failure of every call on a context whose queue holds commands that
 * can never run (ctx->queue_lost: chain_open). */
clnz_status ctx_queue_lost(clnz_context *ctx);
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

#endif
