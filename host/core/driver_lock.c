/* driver_lock.c: serialises the OpenCL calls that drivers are not safe to
 * race. The ICD loader's first clGetPlatformIDs initialises its vendor list
 * and PoCL its devices; threads that discovered devices at once got "no
 * platform" for the rest of the process (tests/test_threads.c, issue 16).
 * Program builds (LLVM inside PoCL) and context creation go through the same
 * lock: they are rare and slow next to the calls that run work, which need
 * only their own context's lock. */
#include "core/driver_lock.h"
#include "core/fork_guard.h"

#include <pthread.h>

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

/* Every first use of OpenCL through clnz passes here: it arms the fork
 * guard. */
void driver_lock(void)
{
    fork_guard_arm();
    pthread_mutex_lock(&lock);
}

void driver_unlock(int *unused)
{
    (void)unused;
    pthread_mutex_unlock(&lock);
}
