/* quote.c: names escaped for the library's messages and manifests (the
 * rule is in quote.h). */
#include "core/quote.h"

#include <string.h>

size_t quote_byte(unsigned char c, char out[4])
{
    static const char hex[] = "0123456789abcdef";
    if (c == '\n' || c == '\t' || c == '\r') {
        out[0] = '\\';
        out[1] = c == '\n' ? 'n' : c == '\t' ? 't' : 'r';
        return 2;
    }
    if (c < 0x20 || c == 0x7f) {
        out[0] = '\\', out[1] = 'x', out[2] = hex[c >> 4], out[3] = hex[c & 15];
        return 4;
    }
    if (c == '\'' || c == '\\') {
        out[0] = '\\', out[1] = (char)c;
        return 2;
    }
    out[0] = (char)c;
    return 1;
}

const char *quote_name(const char *s, char *buf, size_t n)
{
    size_t k = 0;
    buf[k++] = '\'';
    /* as io_quote: each escape only while it, "...'" and the NUL still fit */
    for (; *s && k + 8 < n; ++s)
        k += quote_byte((unsigned char)*s, buf + k);
    if (*s) {
        memcpy(buf + k, "...", 3);
        k += 3;
    }
    buf[k++] = '\'';
    buf[k] = '\0';
    return buf;
}
