/* text_out.c: the clnz command's text outputs (--format csv|txt): an
 * array as np.savetxt writes it, so that np.loadtxt reads it back.
 *
 * One line per entry of a 1-D array (and for the one value of a 0-d
 * array), one line per row of a 2-D array with the entries joined by ','
 * (csv) or ' ' (txt). Numbers are written the way savetxt writes them with
 * the format that loses nothing for the dtype: integers and bool (0, 1)
 * as '%d', f16 as '%.5g', f32 as '%.9g', f64 as '%.17g' (the shortest
 * precision that reads back to the same value), nan as "nan" (also for a
 * negative nan, as Python prints it), inf as "inf" and "-inf". */
#include "io/io.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const format_names[] = {[OUT_NPY] = "npy", [OUT_CSV] = "csv", [OUT_TXT] = "txt"};

int out_format_parse(const char *name, out_format *format)
{
    for (int f = 0; f < (int)(sizeof format_names / sizeof format_names[0]); ++f)
        if (strcmp(name, format_names[f]) == 0) {
            *format = (out_format)f;
            return 1;
        }
    return 0;
}

/* IEEE binary16 bits as a double (exact). */
static double half_to_double(uint16_t h)
{
    int exp = (h >> 10) & 0x1f, frac = h & 0x3ff;
    double mag = exp == 0    ? ldexp(frac, -24)
                 : exp == 31 ? (frac ? NAN : INFINITY)
                             : ldexp(frac | 0x400, exp - 25);
    return (h & 0x8000) ? -mag : mag;
}

/* Element i of data as text into out (room for TEXT_ENTRY_MAX); its length. */
enum { TEXT_ENTRY_MAX = 32 }; /* "-1.2345678901234567e-308" and a delimiter */
static int entry(clnz_dtype dtype, const void *data, size_t i, char *out)
{
    double f;
    switch (dtype) {
    case CLNZ_BOOL: out[0] = ((const uint8_t *)data)[i] ? '1' : '0'; return 1;
    case CLNZ_U8: return sprintf(out, "%u", ((const uint8_t *)data)[i]);
    case CLNZ_I8: return sprintf(out, "%d", ((const int8_t *)data)[i]);
    case CLNZ_U16: return sprintf(out, "%u", ((const uint16_t *)data)[i]);
    case CLNZ_I16: return sprintf(out, "%d", ((const int16_t *)data)[i]);
    case CLNZ_U32: return sprintf(out, "%u", ((const uint32_t *)data)[i]);
    case CLNZ_I32: return sprintf(out, "%d", ((const int32_t *)data)[i]);
    case CLNZ_U64: return sprintf(out, "%llu", (unsigned long long)((const uint64_t *)data)[i]);
    case CLNZ_I64: return sprintf(out, "%lld", (long long)((const int64_t *)data)[i]);
    case CLNZ_F16: f = half_to_double(((const uint16_t *)data)[i]); break;
    case CLNZ_F32: f = ((const float *)data)[i]; break;
    default: f = ((const double *)data)[i]; break;
    }
    if (isnan(f))
        return sprintf(out, "nan");
    int digits = dtype == CLNZ_F16 ? 5 : dtype == CLNZ_F32 ? 9 : 17;
    return sprintf(out, "%.*g", digits, f);
}

/* Room for one more entry (and its delimiter and a newline) at text[n]. */
static int reserve(char **text, size_t *cap, size_t n)
{
    if (*cap - n >= TEXT_ENTRY_MAX + 2)
        return 1;
    char *more = realloc(*text, *cap * 2);
    if (!more)
        return 0;
    *text = more;
    *cap *= 2;
    return 1;
}

int text_too_deep(out_format format, int ndim, char *err, size_t err_size)
{
    if (format == OUT_NPY || ndim <= 2)
        return 0;
    snprintf(err, err_size,
             "--format %s writes up to 2 dimensions, as np.savetxt (the output has %d): use "
             "--format npy",
             format_names[format], ndim);
    return 1;
}

char *text_format(out_format format, clnz_dtype dtype, int ndim, const int64_t *shape,
                  const void *data, size_t *len, char *err, size_t err_size)
{
    if (text_too_deep(format, ndim, err, err_size))
        return NULL;
    const char *name = format_names[format];
    size_t rows = ndim == 0 ? 1 : (size_t)shape[0];
    size_t cols = ndim == 2 ? (size_t)shape[1] : 1;
    char delim = format == OUT_CSV ? ',' : ' ';
    /* grown as it fills: a bound from the widest entry would be 32 bytes
     * per entry, several times what integers need */
    size_t cap = 4096, n = 0;
    char *text = malloc(cap);
    int ok = text != NULL;
    for (size_t r = 0; ok && r < rows; ++r) {
        for (size_t c = 0; ok && c < cols; ++c) {
            ok = reserve(&text, &cap, n);
            if (ok && c)
                text[n++] = delim;
            if (ok)
                n += (size_t)entry(dtype, data, r * cols + c, text + n);
        }
        ok = ok && reserve(&text, &cap, n);
        if (ok)
            text[n++] = '\n';
    }
    if (!ok) {
        free(text);
        snprintf(err, err_size, "out of memory for the %s text", name);
        return NULL;
    }
    *len = n;
    return text;
}
