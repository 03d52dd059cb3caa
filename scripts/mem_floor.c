/* mem_floor.c: the floor under any nonzero on this machine, for
 * scripts/bench. Every implementation must read the input and write the
 * entries; this moves exactly those bytes on two threads (the CI machine's
 * cores) and nothing else: no predicate, no scan, no positions. The C loop
 * (c_loop.c, one thread) over this time is then the most that any code on
 * two cores can gain over that loop, measured in the same run: where it is
 * below issue 19's 1.9x, the goal is out of reach of any program there,
 * not just of clnz (the AMD VM's dense f32 cases, whose two threads read
 * DRAM at about 1.6-1.8x one thread's rate).
 *
 * Each thread takes half of the input and half of the entries and moves
 * them in steps of STEP input bytes with the matching share of the
 * entries, reads and writes interleaved as a nonzero's are. The entries go
 * out with plain stores (which read each line for ownership first: the
 * faster way while they fit in the caches) or streaming ones (no read;
 * the faster way beyond the caches); scripts/bench takes the faster of
 * the two. The second thread starts for each call (about 10 us, which
 * only calls of under a millisecond feel: the floor is then a little
 * high, the ceiling a little low). Built -O3 -march=native like the C
 * loop. */
#include "mem_floor.h"
#include "read_loop.h"

#include <pthread.h>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

/* Input bytes a step: a few pages, so each stream stays long. */
#define STEP ((size_t)64 << 10)

typedef struct {
    const unsigned char *in;
    size_t in_bytes;
    int64_t *out;
    size_t out_words;
    int streaming;
    uint64_t sum;
} share;

/* The words through read_loop.h's loop (membw's: the same rate), the
 * bytes before the first whole word and after the last one alone. */
static uint64_t read_bytes(const unsigned char *p, size_t n)
{
    uint64_t s = 0;
    size_t head = (size_t)(-(uintptr_t)p & 7);
    head = head < n ? head : n;
    for (size_t i = 0; i < head; ++i)
        s += p[i];
    size_t words = (n - head) / 8;
    s += read_words((const uint64_t *)(const void *)(p + head), words);
    for (size_t i = head + words * 8; i < n; ++i)
        s += p[i];
    return s;
}

/* Streaming stores of 16 bytes (SSE2, on every x86-64): in step, they fill
 * whole lines as the AVX and AVX-512 ones do (measured the same, 31-32 GB/s
 * for 512 MiB of entries on the Intel VM). Elsewhere plain stores only. */
static void write_words(int64_t *out, size_t n, int streaming)
{
    size_t i = 0;
#if defined(__SSE2__)
    if (streaming) {
        for (; i < n && ((uintptr_t)(out + i) & 15); ++i)
            out[i] = (int64_t)i;
        __m128i v = _mm_set1_epi64x((long long)n);
        for (; i + 2 <= n; i += 2)
            _mm_stream_si128((__m128i *)(out + i), v);
        _mm_sfence();
    }
#else
    (void)streaming;
#endif
    for (; i < n; ++i)
        out[i] = (int64_t)i;
}

static void *move_share(void *arg)
{
    share *s = arg;
    uint64_t sum = 0;
    size_t steps = s->in_bytes ? (s->in_bytes + STEP - 1) / STEP : 1, done = 0;
    for (size_t k = 0; k < steps; ++k) {
        size_t a = k * STEP, b = a + STEP < s->in_bytes ? a + STEP : s->in_bytes;
        sum += read_bytes(s->in + a, b - a);
        /* the entries in step with the input: this step's share of them */
        size_t upto = (size_t)((unsigned __int128)s->out_words * (k + 1) / steps);
        write_words(s->out + done, upto - done, s->streaming);
        done = upto;
    }
    s->sum = sum;
    return NULL;
}

uint64_t mem_floor_move(const void *in, size_t in_bytes, int64_t *out, size_t out_words,
                        int streaming)
{
    size_t in_half = in_bytes / 2, out_half = out_words / 2;
    share s[2] = {
        {in, in_half, out, out_half, streaming, 0},
        {(const unsigned char *)in + in_half, in_bytes - in_half, out + out_half,
         out_words - out_half, streaming, 0},
    };
    pthread_t other;
    if (pthread_create(&other, NULL, move_share, &s[1]) != 0)
        return UINT64_MAX;
    move_share(&s[0]);
    pthread_join(other, NULL);
    return (s[0].sum + s[1].sum) & (UINT64_MAX >> 1);
}
