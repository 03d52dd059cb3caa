/* quote.h: names in the library's messages and files (a bundle's folder,
 * the cache folder, a device's name in a bundle's manifest) escaped by the
 * rule the clnz command quotes its paths with (io_escape and io_quote in
 * host/io/input.c; the library cannot link the command's io layer, so the
 * rule is written once more here, and test_cli's io_quote pins both):
 * \n \t \r, \xNN for the other bytes below 0x20 and 0x7f, \' and \\; bytes
 * above 0x7f as they are. A message stays one line whatever a name holds,
 * and two names that differ never read the same (a '?' for every control
 * character made 'a\tb' and 'a\nb' one name). */
#ifndef CLNZ_CORE_QUOTE_H
#define CLNZ_CORE_QUOTE_H

#include <stddef.h>

/* Byte c as it stands inside quotes, into out (not NUL-terminated): 1, 2
 * or 4 bytes, its length. */
size_t quote_byte(unsigned char c, char out[4]);
/* s in single quotes, escaped, into buf (n >= 8 bytes); a name too long
 * for buf is cut at a whole escape and ends "...'". Returns buf. */
const char *quote_name(const char *s, char *buf, size_t n);
#define QUOTE_MAX 1100 /* io.h's IO_QUOTE_MAX: the command and the library cut alike */

#endif
