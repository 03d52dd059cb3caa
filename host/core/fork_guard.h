/* fork_guard.h: what clnz does in a child forked after OpenCL was in use
 * (fork_guard.c). */
#ifndef CLNZ_CORE_FORK_GUARD_H
#define CLNZ_CORE_FORK_GUARD_H

/* OpenCL is in use in this process from now on (driver_lock's first call,
 * clnz_context_wrap). */
void fork_guard_arm(void);
/* Nonzero in a child forked after that: its calls fail with
 * CLNZ_ERROR_FORKED (FORK_MESSAGE) before they touch OpenCL or a lock. */
int fork_guard_tripped(void);

#define FORK_MESSAGE                                                                         \
    "this process was forked after OpenCL was in use in its parent: the driver's threads "  \
    "did not come along, so OpenCL calls here would hang. Use clnz in a process started "   \
    "with exec (Python multiprocessing's 'spawn' or 'forkserver'), or only in the parent"

#endif
