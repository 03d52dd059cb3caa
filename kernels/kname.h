/* kname.h: a kernel's name carries its program's identity.
 *
 * The host builds every program with CLNZ_KID defined to a hash of its
 * file and -D options (core/program.c: program_kid), so KERNEL(nz_count)
 * is nz_count_<hash> there: a binary that is not the program it is taken
 * for (a bundle's file added under another entry's number) then lacks the
 * names the host asks for, and is refused instead of running another
 * dtype's or predicate's code. Built alone (check-kernels, an offline
 * compiler given no CLNZ_KID), the names stay plain. */
#ifndef CLNZ_KNAME_H
#define CLNZ_KNAME_H

#define KNAME_JOIN2(name, kid) name##_##kid
#define KNAME_JOIN(name, kid) KNAME_JOIN2(name, kid)
#ifdef CLNZ_KID
#define KERNEL(name) KNAME_JOIN(name, CLNZ_KID)
#else
#define KERNEL(name) name
#endif

#endif
