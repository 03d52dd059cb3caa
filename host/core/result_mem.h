/* result_mem.h: the host memory of the blocking calls' results
 * (result_mem.c): allocated so that filling it is cheap, and kept for the
 * next result when a large one comes back through clnz_result_free or
 * clnz_array_free while a context lives. Every block is malloc'd memory:
 * a caller may also give it back with free(). */
#ifndef CLNZ_CORE_RESULT_MEM_H
#define CLNZ_CORE_RESULT_MEM_H

#include <stddef.h>
#include <stdint.h>

/* The host's physical memory in bytes, as sysconf reports it (UINT64_MAX
 * where it does not; a container's own limit is not read). A result larger
 * than it is refused, whatever malloc would say: a system that overcommits
 * (vm.overcommit_memory=1) grants any request, and filling it then runs
 * until the kernel kills the process. */
uint64_t host_memory_bytes(void);
/* Whether n blocks of elem bytes fit in host_memory_bytes (and in a
 * size_t): what a call checks before it holds a count sized by its input
 * (a batch's offsets or counts) on the host. */
int host_holds(uint64_t n, size_t elem);
/* At least `bytes` (1 for 0) of malloc'd memory, or NULL (also above
 * host_memory_bytes). */
void *alloc_result(size_t bytes);
/* The same, and in *fresh whether the block's pages are new to the process
 * (the system zeroes each on its first touch) rather than reused. */
void *alloc_result_fresh(size_t bytes, int *fresh);
/* A result's memory back from the caller (NULL is fine). */
void free_result(void *p);
/* A context is made / released: the kept blocks go when the last one does. */
void result_mem_context_made(void);
void result_mem_context_released(void);
/* The kept blocks' lock. In a child forked after OpenCL was in use it is
 * not taken (a thread of the parent may have held it at the fork): there
 * nothing is kept or taken, and a result freed goes to free(). */
int result_mem_hold(void); /* 1 if the blocks may be kept and taken */
void result_mem_hold_end(void);

#endif
