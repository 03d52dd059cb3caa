/* fork_guard.c: a child of fork() holds only the forking thread. OpenCL
 * drivers keep worker threads (PoCL's device threads, a GPU driver's
 * event threads) and locks they may have held at the fork, so the child's
 * first call that waits on the driver hangs for ever, on a context from
 * before the fork and on a new one alike (PoCL 3.1: clnz_count in the child
 * never returns). clnz cannot make the driver work there; it refuses
 * instead, at once and with a reason. A process that forks before any
 * OpenCL use is unaffected: its children start the driver themselves. */
#include "core/fork_guard.h"

#include <pthread.h>

static pthread_once_t once = PTHREAD_ONCE_INIT;
/* Written by the atfork handler in the child only, while it is the one
 * thread; read without a lock afterwards. */
static volatile int tripped;

static void in_child(void) { tripped = 1; }

static void register_handler(void) { pthread_atfork(NULL, NULL, in_child); }

void fork_guard_arm(void) { pthread_once(&once, register_handler); }

int fork_guard_tripped(void) { return tripped; }
