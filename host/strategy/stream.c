/* stream.c: the stream strategy: one work-item walks the whole input in
 * order (kernels/stream.cl), for devices where a single work-item's loop
 * pipelines and work-groups cannot be counted on to cooperate: FPGAs. One
 * launch, no scratch. Elsewhere it is one thread: tests force it on PoCL. */
#include "strategy/strategy.h"
#include "core/program.h"

#include <stdio.h>

static int stream_serves(clnz_context *ctx, const nz_job *job, char *why, size_t n)
{
    (void)ctx, (void)job, (void)why, (void)n;
    return 1; /* any job, any size: it only takes longer */
}

/* The value size is a placeholder (4) for jobs that move no values. */
static void stream_program(const job_kind *k, program_ref *r)
{
    program_element(r, "stream", k->dtype, k->pred_nonzero);
    program_append(r, " -DVALUE_BYTES=%zu", k->value_bytes ? k->value_bytes : 4);
}

static clnz_status run(chain *ch, nz_job *job)
{
    clnz_context *ctx = ch->ctx;
    if (job->t.n == 0)
        return job_empty(ch, job);
    job_kind kind = job_kind_of(job);
    program_ref prog;
    stream_program(&kind, &prog);
    cl_kernel k;
    clnz_status st = program_kernel(ctx, &prog, "st_run", &k);
    if (st)
        return st;
    job_args a;
    job_args_of(job, job->count, &a);
    karg args[] = {JOB_KARGS_IN(a), JOB_KARGS_OUT(a)};
    st = set_args(ctx, k, "st_run", args, (int)(sizeof args / sizeof args[0]));
    return st ? st : chain_launch(ch, k, "st_run", 1, 1);
}

static clnz_status stream_count(chain *ch, nz_job *job)
{
    nz_job counting = *job;
    counting.emit = ABI_EMIT_COUNT;
    return run(ch, &counting);
}

static clnz_status stream_write(chain *ch, nz_job *job, int counted)
{
    (void)counted; /* the walk counts as it goes */
    return run(ch, job);
}

static clnz_status stream_programs(clnz_context *ctx, const job_kind *k, program_set *out)
{
    (void)ctx;
    program_ref prog;
    stream_program(k, &prog);
    return program_set_add(out, &prog) ? CLNZ_ERROR_OUT_OF_HOST_MEMORY : CLNZ_SUCCESS;
}

const strategy strategy_stream = {CLNZ_STRATEGY_STREAM, stream_serves, stream_count,
                                  stream_write, stream_programs};
