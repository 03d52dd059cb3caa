/* transfer.h: host arrays in, results out, for the blocking calls
 * (transfer.c). On a CPU device nothing is copied: buffers use the host
 * memory where it lies. */
#ifndef CLNZ_CORE_TRANSFER_H
#define CLNZ_CORE_TRANSFER_H

#include "core/chain.h"
#include "core/tensor.h"

/* A read-only device buffer over the bytes the view reaches (the host memory
 * itself on a CPU device); *base: element offset of logical element 0. */
clnz_status upload(clnz_context *ctx, const tensor_info *t, const void *data, cl_mem *buf,
                   int64_t *base);
/* A read of `bytes` from byte `offset` of buf after the wait list, waited
 * for through its own event (a queue may be the caller's: transfer.c). */
clnz_status read_after(clnz_context *ctx, cl_mem buf, size_t offset, size_t bytes, void *dst,
                       cl_uint n_wait, const cl_event *wait);
/* The same after the chain's last command. */
clnz_status read_back(chain *ch, cl_mem buf, size_t bytes, void *dst);
clnz_status read_back_at(chain *ch, cl_mem buf, size_t offset, size_t bytes, void *dst);
/* A result of `bytes` on the host (alloc_result, core/result_mem.h) and
 * the device buffer the kernels write it to (none for 0 bytes);
 * fetch_result(..., ctx->is_cpu) then brings it home. The caller frees
 * both (the host one with free_result), whatever fails. fresh (or NULL):
 * 1 where a CPU device writes into pages new to the process. */
clnz_status result_alloc(clnz_context *ctx, size_t bytes, void **host, cl_mem *buf, int *fresh);
/* The result in dst: read back, or, in_place (a CPU device wrote into dst
 * through CL_MEM_USE_HOST_PTR), mapped to make the writes visible. */
clnz_status fetch_result(chain *ch, cl_mem buf, size_t bytes, void *dst, int in_place);
/* fetch_result, and the u64 at byte count_off of count_buf into *count:
 * its read is enqueued first and waited for last, so that where the result
 * is mapped in place one wait brings both. */
clnz_status fetch_result_counted(chain *ch, cl_mem buf, size_t bytes, void *dst, int in_place,
                                 cl_mem count_buf, size_t count_off, uint64_t *count);

#endif
