/* nt_store.cl: stores that bypass the caches (non-temporal), for writing
 * passes whose output is far larger than the caches (nonzero.cl).
 *
 * A plain store of an output line first reads the line (read for ownership):
 * for a dense nonzero that is as many bytes again as the entries. A
 * non-temporal store writes whole lines without reading them. OpenCL C has
 * no such store; Clang's __builtin_nontemporal_store (PoCL, and every
 * Clang-based compiler) marks a store so, and the fallback is a plain store:
 * the same bytes either way, only slower. CLNZ_NO_NT_STORE forces the
 * fallback (check-kernels compiles both).
 *
 * Stores are scalar: x86 has no unaligned non-temporal vector store, and
 * scalar ones (movnti) need no alignment beyond the element's. A vector
 * goes to NT_STORE only through a pointer to its own type, which OpenCL
 * requires to be aligned to the vector's size (nonzero.cl's INDEX_STREAM
 * stores whole 64-byte lines so). */
#ifndef CLNZ_NT_STORE_CL
#define CLNZ_NT_STORE_CL

/* A plain store: NT_STORE's fallback, and its twin in such code. */
#define PLAIN_STORE(v, p) (*(p) = (v))

#if defined(__has_builtin) && !defined(CLNZ_NO_NT_STORE)
#if __has_builtin(__builtin_nontemporal_store)
#define NT_STORE(v, p) __builtin_nontemporal_store((v), (p))
#endif
#endif
#ifndef NT_STORE
#define NT_STORE(v, p) PLAIN_STORE(v, p)
#endif

#define NT_STORE4(v, p)                                                                        \
    {                                                                                          \
        NT_STORE((v).s0, (p));                                                                 \
        NT_STORE((v).s1, (p) + 1);                                                             \
        NT_STORE((v).s2, (p) + 2);                                                             \
        NT_STORE((v).s3, (p) + 3);                                                             \
    }
#define NT_STORE8(v, p)                                                                        \
    {                                                                                          \
        NT_STORE4((v).lo, (p));                                                                \
        NT_STORE4((v).hi, (p) + 4);                                                            \
    }

/* After a work-item's last non-temporal store. They are weakly ordered: on
 * x86 they sit in write-combining buffers until a fence or a locked
 * instruction drains them. A kernel's end is one in every runtime (its
 * completion is published with locked instructions), and an OpenCL fence
 * orders nothing here (PoCL's write_mem_fence is empty), so the x86 store
 * fence is named, where the compiler has it, to depend on neither. */
#if defined(__has_builtin) && !defined(CLNZ_NO_NT_STORE)
#if __has_builtin(__builtin_ia32_sfence)
#define NT_STORES_DONE() __builtin_ia32_sfence()
#endif
#endif
#ifndef NT_STORES_DONE
#define NT_STORES_DONE() ((void)0)
#endif

/* The plain twins of NT_STORE4 and NT_STORE8, for code written once for
 * both kinds of store. */
#define PLAIN_STORE4(v, p) vstore4((v), 0, (p));
#define PLAIN_STORE8(v, p) vstore8((v), 0, (p));

#endif /* CLNZ_NT_STORE_CL */
