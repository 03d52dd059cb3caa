/* mem_floor.h: the memory traffic a nonzero call cannot avoid, moved by two
 * threads (see mem_floor.c). */
#ifndef CLNZ_MEM_FLOOR_H
#define CLNZ_MEM_FLOOR_H

#include <stddef.h>
#include <stdint.h>

/* Reads in_bytes of in and writes out_words int64 words of out, the work
 * split between the calling thread and one more, with plain stores or
 * with streaming (non-temporal) ones; returns a sum of what it read (to
 * keep the loads), or UINT64_MAX where the second thread could not start. */
uint64_t mem_floor_move(const void *in, size_t in_bytes, int64_t *out, size_t out_words,
                        int streaming);
#endif
