/* result_mem.c: where the blocking calls' results live on the host.
 *
 * Fresh pages cost a fault and a zeroing on first touch (about 10 us per
 * 4 KiB page on some VMs), which would dominate a large result, so large
 * ones ask for huge pages where the system has them (as numpy does). Up to
 * glibc's largest dynamic mmap threshold (32 MiB on 64-bit, less
 * HEAP_MARGIN) they come from plain malloc: once a result of that size has
 * been freed, glibc serves the next one from the heap without touching the
 * kernel (measured: a 13 MiB result 0.35 ms to fill from the third call
 * on, against 1.3 ms from fresh huge pages every call); above it glibc maps
 * every allocation afresh, and huge-page aligned memory faults least
 * (128 MiB: 18 ms against 95 ms by 4 KiB).
 *
 * Above that threshold even huge pages are zeroed by the kernel on every
 * call, which is what kept the blocking call at 1.5x the device-resident
 * one on a CPU device (issue 19: a 64 MiB result filled in 7.4 ms fresh,
 * 3.5 ms reused). So a large result that comes back through
 * clnz_result_free or clnz_array_free is kept, up to KEPT_SLOTS blocks
 * (a pipeline holds one result while the next is made) and KEPT_MAX_BYTES
 * in all, for a later result of between half its size and its size. A kept
 * block is handed to the kernel with MADV_FREE: its pages stay mapped and
 * cost nothing to refill unless the system ran short of memory and took
 * them, so keeping it never holds memory the system needs; where MADV_FREE
 * is refused (or absent) nothing is kept. The blocks go when the process's
 * last context is released. A block given back with free() instead is
 * simply freed: every block is a malloc'd one, as the header promises. */
#include "core/fork_guard.h"
#include "core/result_mem.h"

#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>
#if defined(__GLIBC__) && defined(MADV_FREE)
#include <malloc.h>
#define CAN_KEEP 1 /* malloc_usable_size gives a block's size, MADV_FREE lends it back */
#else
#define CAN_KEEP 0
#endif

#define HUGE_PAGE ((size_t)2 << 20)
#define HEAP_REUSE_MAX ((size_t)32 << 20)
#define KEPT_SLOTS 2
#define KEPT_MAX_BYTES ((size_t)1 << 30)
/* What a large block holds beyond the result it was asked for: the limits
 * see its usable size, which posix_memalign rounds up by at most HUGE_PAGE
 * (glibc: 0.7 MiB for 1 GiB, 1.7 MiB for 33 MiB, depending on where the
 * block was mapped), so they allow this much per block. Without it a 1 GiB
 * result (f32 (8192, 8192) as pairs) was never kept, nor two of 512 MiB
 * together. */
#define KEPT_SLACK HUGE_PAGE
#define PAGE ((uintptr_t)4096)
/* glibc maps a request of its own as the request, a header and the rest of
 * the last page: only a request this far below HEAP_REUSE_MAX is a chunk
 * its threshold follows (and a usable size free_result does not keep).
 * Without it a result of exactly 32 MiB (f32 2^22 at 100 %, flat) was
 * mapped afresh every call, and kept by free_result where no call took
 * it: the blocking call 6.2 ms against 1.3 device-resident (PoCL). */
#define HEAP_MARGIN (2 * PAGE)

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
/* Kept blocks, oldest first; their count; the live contexts. */
static struct {
    void *p;
    size_t bytes;
} kept[KEPT_SLOTS];
static int n_kept;
static size_t live_contexts;

int result_mem_hold(void)
{
    if (fork_guard_tripped())
        return 0;
    pthread_mutex_lock(&lock);
    return 1;
}

void result_mem_hold_end(void)
{
    if (!fork_guard_tripped()) /* as result_mem_hold: a process is forked or not for good */
        pthread_mutex_unlock(&lock);
}

/* madvise takes whole pages: the ones inside [p, p + bytes). */
static int advise_inside(void *p, size_t bytes, int advice)
{
    uintptr_t a = ((uintptr_t)p + PAGE - 1) & ~(PAGE - 1);
    uintptr_t end = ((uintptr_t)p + bytes) & ~(PAGE - 1);
    return end > a ? madvise((void *)a, end - a, advice) : 0;
}

/* Takes kept block i out of the list (the lock held), keeping the order. */
static void *drop_kept(int i)
{
    void *p = kept[i].p;
    for (; i + 1 < n_kept; ++i)
        kept[i] = kept[i + 1];
    --n_kept;
    return p;
}

/* The smallest kept block that holds `bytes` and is at most twice that. */
static void *take_kept(size_t bytes)
{
    if (!result_mem_hold())
        return NULL;
    int best = -1;
    for (int i = 0; i < n_kept; ++i)
        if (kept[i].bytes >= bytes && kept[i].bytes / 2 <= bytes &&
            (best < 0 || kept[i].bytes < kept[best].bytes))
            best = i;
    void *p = best >= 0 ? drop_kept(best) : NULL;
    result_mem_hold_end();
    return p;
}

static uint64_t host_memory;
static pthread_once_t host_memory_once = PTHREAD_ONCE_INIT;

static void host_memory_read(void)
{
    long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
    host_memory = pages <= 0 || page <= 0 || (uint64_t)pages > UINT64_MAX / (uint64_t)page
                      ? UINT64_MAX
                      : (uint64_t)pages * (uint64_t)page;
}

uint64_t host_memory_bytes(void)
{
    pthread_once(&host_memory_once, host_memory_read); /* a system call: once */
    return host_memory;
}

int host_holds(uint64_t n, size_t elem)
{
    return elem && n <= SIZE_MAX / elem && n * elem <= host_memory_bytes();
}

void *alloc_result(size_t bytes)
{
    int fresh;
    return alloc_result_fresh(bytes, &fresh);
}

void *alloc_result_fresh(size_t bytes, int *fresh)
{
    *fresh = 0; /* the heap's: small blocks are mostly reused */
    if (bytes < 2 * HUGE_PAGE)
        return malloc(bytes ? bytes : 1);
    if (!host_holds(bytes, 1))
        return NULL;
    void *p = NULL;
    if (bytes <= HEAP_REUSE_MAX - HEAP_MARGIN) {
        p = malloc(bytes);
#ifdef MADV_HUGEPAGE
        if (p)
            advise_inside(p, bytes, MADV_HUGEPAGE);
#endif
        return p;
    }
    if (CAN_KEEP && (p = take_kept(bytes)) != NULL)
        return p;
    /* at least HEAP_REUSE_MAX and a page, so that free_result keeps it */
    size_t block = bytes > HEAP_REUSE_MAX ? bytes : HEAP_REUSE_MAX + PAGE;
    if (posix_memalign(&p, HUGE_PAGE, block) != 0)
        return NULL;
    *fresh = 1; /* a block this large is mapped anew */
#ifdef MADV_HUGEPAGE
    madvise(p, block, MADV_HUGEPAGE); /* a hint: failure changes nothing */
#endif
    return p;
}

#if CAN_KEEP
/* Keeps p (`bytes` usable) if a context lives; returns what to free. */
static void keep(void *p, size_t bytes, void **evicted, int *n_evicted)
{
    if (!result_mem_hold()) {
        evicted[(*n_evicted)++] = p;
        return;
    }
    if (!live_contexts) {
        evicted[(*n_evicted)++] = p;
    } else {
        size_t total = bytes;
        for (int i = 0; i < n_kept; ++i)
            total += kept[i].bytes;
        while (n_kept &&
               (n_kept == KEPT_SLOTS || total > KEPT_MAX_BYTES + (n_kept + 1) * KEPT_SLACK)) {
            total -= kept[0].bytes;
            evicted[(*n_evicted)++] = drop_kept(0); /* the oldest goes */
        }
        kept[n_kept].p = p;
        kept[n_kept].bytes = bytes;
        ++n_kept;
    }
    result_mem_hold_end();
}
#endif

#if CAN_KEEP
/* Whether a block given back now may be kept: a hint read before the
 * madvise (after the last context's release it would be wasted on a block
 * freed at once); keep() decides under the lock. */
static int keeping(void)
{
    if (!result_mem_hold())
        return 0;
    int any = live_contexts > 0;
    result_mem_hold_end();
    return any;
}
#endif

void free_result(void *p)
{
#if CAN_KEEP
    size_t bytes = p ? malloc_usable_size(p) : 0;
    if (bytes > HEAP_REUSE_MAX && bytes <= KEPT_MAX_BYTES + KEPT_SLACK && keeping() &&
        advise_inside(p, bytes, MADV_FREE) == 0) { /* outside the lock: a system call */
        void *evicted[KEPT_SLOTS + 1];
        int n_evicted = 0;
        keep(p, bytes, evicted, &n_evicted);
        for (int i = 0; i < n_evicted; ++i)
            free(evicted[i]);
        return;
    }
#endif
    free(p);
}

void result_mem_context_made(void)
{
    if (!result_mem_hold())
        return;
    ++live_contexts;
    result_mem_hold_end();
}

void result_mem_context_released(void)
{
    void *evicted[KEPT_SLOTS];
    int n_evicted = 0;
    if (!result_mem_hold())
        return;
    if (live_contexts && --live_contexts == 0) {
        for (int i = 0; i < n_kept; ++i)
            evicted[n_evicted++] = kept[i].p;
        n_kept = 0;
    }
    result_mem_hold_end();
    for (int i = 0; i < n_evicted; ++i)
        free(evicted[i]);
}
