/* manifest.c: a bundle's manifest written and parsed (the format is in
 * manifest.h). The parser is strict: a manifest comes from a file anyone
 * may have edited, and a bundle loads code onto a device, so anything but
 * exactly the format (a line out of order, a stray byte, a number with a
 * sign, a checksum that does not match) is refused with the line it is
 * on. libFuzzer runs it (tests/fuzz/fuzz_cache.c). */
#include "uses/manifest.h"
#include "core/cache.h"
#include "core/quote.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const header_keys[] = {"clnz", "platform", "device", "vendor", "driver",
                                          "type", "build-options"};
enum { N_HEADER = sizeof header_keys / sizeof header_keys[0] };

static char *header_field(manifest *m, int i, size_t *size)
{
    char *fields[N_HEADER] = {m->clnz,   m->platform, m->device,       m->vendor,
                              m->driver, m->type,     m->build_options};
    size_t sizes[N_HEADER] = {sizeof m->clnz,   sizeof m->platform, sizeof m->device,
                              sizeof m->vendor, sizeof m->driver,   sizeof m->type,
                              sizeof m->build_options};
    *size = sizes[i];
    return fields[i];
}

void manifest_clean(const char *in, char *out, size_t n)
{
    size_t k = 0;
    for (; *in; ++in) {
        char e[4];
        size_t len = quote_byte((unsigned char)*in, e);
        if (k + len >= n) /* whole escapes only: a cut one would read as another name */
            break;
        memcpy(out + k, e, len);
        k += len;
    }
    out[k] = '\0';
}

void manifest_file_name(const manifest *m, int i, char *buf, size_t n)
{
    snprintf(buf, n, "%d-%s.%s", i, m->entries[i].file, m->entries[i].is_source ? "cl" : "bin");
}

/* ---- writing ---- */

char *manifest_format(const manifest *m, size_t *len)
{
    size_t cap = 4096 + (size_t)m->n * (PROGRAM_OPTIONS_MAX + 128);
    char *t = malloc(cap);
    if (!t)
        return NULL;
    size_t o = (size_t)snprintf(t, cap, "%s %d\n", MANIFEST_MAGIC, MANIFEST_VERSION);
    for (int i = 0; i < N_HEADER; ++i) {
        size_t size;
        const char *v = header_field((manifest *)m, i, &size);
        o += (size_t)snprintf(t + o, cap - o, "%s %s\n", header_keys[i], v);
    }
    for (int a = 0; a < AXIS_COUNT; ++a)
        o += (size_t)snprintf(t + o, cap - o, "%s %s\n", uses_axis_names[a], m->uses[a]);
    o += (size_t)snprintf(t + o, cap - o, "programs %d\n", m->n);
    for (int i = 0; i < m->n; ++i) {
        const manifest_entry *e = &m->entries[i];
        o += (size_t)snprintf(t + o, cap - o, "%d %s %s %" PRIu64 " %016" PRIx64 " %016" PRIx64
                              "%s%s\n",
                              i, e->is_source ? "source" : "binary", e->file, e->size,
                              e->checksum, e->source_hash, e->options[0] ? " " : "", e->options);
    }
    o += (size_t)snprintf(t + o, cap - o, "checksum %016" PRIx64 "\n",
                          cache_hash(t, o, CACHE_HASH_SEED));
    *len = o;
    return t;
}

/* ---- parsing ---- */

typedef struct {
    const char *p, *end;
    int line;
    char *err;
    size_t err_size;
} reader;

#define CLNZ_STR2(x) #x
#define CLNZ_STR(x)  CLNZ_STR2(x)

static int bad(reader *r, const char *fmt, const char *what)
{
    snprintf(r->err, r->err_size, "%s line %d: ", MANIFEST_NAME, r->line);
    size_t len = strlen(r->err);
    snprintf(r->err + len, r->err_size - len, fmt, what);
    return -1;
}

/* The next line (without its '\n'), or -1 when there is none. */
static int next_line(reader *r, const char **line, size_t *len)
{
    ++r->line;
    const char *nl = r->p < r->end ? memchr(r->p, '\n', (size_t)(r->end - r->p)) : NULL;
    if (!nl)
        return bad(r, "%s", r->p < r->end ? "no line break at the end" : "missing");
    *line = r->p;
    *len = (size_t)(nl - r->p);
    r->p = nl + 1;
    return 0;
}

/* "key value": the value copied into out (size n), printable bytes only. */
static int keyed(reader *r, const char *key, char *out, size_t n)
{
    const char *line;
    size_t len, klen = strlen(key);
    if (next_line(r, &line, &len))
        return -1;
    if (len < klen + 1 || memcmp(line, key, klen) != 0 || line[klen] != ' ')
        return bad(r, "expected '%s VALUE'", key);
    size_t vlen = len - klen - 1;
    if (vlen >= n)
        return bad(r, "the %s is too long", key);
    for (size_t i = 0; i < vlen; ++i) {
        unsigned char c = (unsigned char)line[klen + 1 + i];
        if (c < 0x20 || c == 0x7f)
            return bad(r, "a control character in the %s", key);
    }
    memcpy(out, line + klen + 1, vlen);
    out[vlen] = '\0';
    return 0;
}

/* A decimal without sign or leading zero, at most max. */
static int number(const char *s, uint64_t max, uint64_t *out)
{
    if (!*s || (s[0] == '0' && s[1]) || strlen(s) > 20)
        return 0;
    uint64_t v = 0;
    for (; *s; ++s) {
        if (*s < '0' || *s > '9' || v > (UINT64_MAX - 9) / 10)
            return 0;
        v = v * 10 + (uint64_t)(*s - '0');
    }
    *out = v;
    return v <= max;
}

static int hex16(const char *s, uint64_t *out)
{
    if (strlen(s) != 16)
        return 0;
    uint64_t v = 0;
    for (int i = 0; i < 16; ++i) {
        char c = s[i];
        int d = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
        if (d < 0)
            return 0;
        v = v << 4 | (uint64_t)d;
    }
    *out = v;
    return 1;
}

/* -D options as clnz writes them: words of [A-Za-z0-9_=.-] one space apart. */
static int options_ok(const char *s)
{
    if (*s == ' ' || (*s && s[strlen(s) - 1] == ' ') || strstr(s, "  "))
        return 0;
    for (; *s; ++s)
        if (!((*s >= 'A' && *s <= 'Z') || (*s >= 'a' && *s <= 'z') || (*s >= '0' && *s <= '9') ||
              strchr("_=.- ", *s)))
            return 0;
    return 1;
}

/* Entry i: "I KIND FILE SIZE CHECKSUM SOURCE[ OPTIONS]". */
static int entry(reader *r, int i, manifest_entry *e)
{
    const char *line;
    size_t len;
    if (next_line(r, &line, &len))
        return -1;
    char buf[PROGRAM_OPTIONS_MAX + 160], *f[6];
    if (len >= sizeof buf)
        return bad(r, "%s", "a program line that is too long");
    memcpy(buf, line, len);
    buf[len] = '\0';
    char *p = buf;
    for (int k = 0; k < 6; ++k) { /* six fields, then the options (may be none) */
        f[k] = p;
        p = strchr(p, ' ');
        if (!p && k < 5)
            return bad(r, "%s", "expected 'INDEX KIND FILE SIZE CHECKSUM SOURCE [OPTIONS]'");
        if (p)
            *p++ = '\0';
    }
    const char *options = p ? p : "";
    uint64_t index;
    if (!number(f[0], MANIFEST_MAX_PROGRAMS, &index) || index != (uint64_t)i)
        return bad(r, "%s", "the programs are not numbered 0, 1, 2, ... in order");
    e->is_source = strcmp(f[1], "source") == 0;
    if (!e->is_source && strcmp(f[1], "binary") != 0)
        return bad(r, "%s", "the kind is neither 'binary' nor 'source'");
    if (strlen(f[2]) >= sizeof e->file || !kernel_source_embedded(f[2]))
        return bad(r, "%s", "no such kernel file in this clnz");
    strcpy(e->file, f[2]);
    if (!number(f[3], e->is_source ? MANIFEST_MAX_SOURCE : MANIFEST_MAX_BINARY, &e->size) ||
        e->size == 0)
        return bad(r, "%s", "the size is not a number from 1 to the limit");
    if (!hex16(f[4], &e->checksum) || !hex16(f[5], &e->source_hash))
        return bad(r, "%s", "a checksum or source hash that is not 16 lowercase hex digits");
    if (strlen(options) >= sizeof e->options || (p && !*options) || !options_ok(options))
        return bad(r, "%s", "options that clnz does not write");
    strcpy(e->options, options);
    return 0;
}

static int header(reader *r, manifest *m)
{
    char magic[64];
    snprintf(magic, sizeof magic, "%d", MANIFEST_VERSION);
    if (keyed(r, MANIFEST_MAGIC, magic, sizeof magic))
        return bad(r, "%s",
                   "not a clnz bundle manifest (it starts '" MANIFEST_MAGIC
                   " " CLNZ_STR(MANIFEST_VERSION) "')");
    uint64_t version;
    if (!number(magic, UINT32_MAX, &version) || version != MANIFEST_VERSION)
        return bad(r,
                   "format version '%s' is not the one this clnz reads (" CLNZ_STR(
                       MANIFEST_VERSION) "): build the bundle again with this clnz (clnz bundle "
                                         "build)",
                   magic);
    for (int i = 0; i < N_HEADER; ++i) {
        size_t size;
        char *v = header_field(m, i, &size);
        if (keyed(r, header_keys[i], v, size))
            return -1;
    }
    for (int a = 0; a < AXIS_COUNT; ++a) {
        clnz_uses u = {0};
        if (keyed(r, uses_axis_names[a], m->uses[a], sizeof m->uses[a]))
            return -1;
        if (clnz_uses_parse(&u, uses_axis_names[a], m->uses[a], NULL, 0))
            return bad(r, "a %s list clnz cannot read", uses_axis_names[a]);
    }
    return 0;
}

int manifest_parse(const char *text, size_t len, manifest *m, char *err, size_t err_size)
{
    memset(m, 0, sizeof *m);
    reader r = {text, text + len, 0, err, err_size};
    if (len > MANIFEST_MAX_BYTES)
        return bad(&r, "%s", "the manifest is larger than 1 MiB");
    if (memchr(text, '\0', len))
        return bad(&r, "%s", "a NUL byte in the manifest");
    char count[16];
    uint64_t n;
    if (header(&r, m) || keyed(&r, "programs", count, sizeof count))
        return -1;
    if (!number(count, MANIFEST_MAX_PROGRAMS, &n))
        return bad(&r, "%s", "the program count is not a number from 0 to 4096");
    m->entries = calloc(n ? n : 1, sizeof *m->entries);
    if (!m->entries)
        return bad(&r, "%s", "out of memory");
    for (m->n = 0; m->n < (int)n; ++m->n) {
        if (entry(&r, m->n, &m->entries[m->n]))
            return manifest_free(m), -1;
        for (int j = 0; j < m->n; ++j)
            if (strcmp(m->entries[j].file, m->entries[m->n].file) == 0 &&
                strcmp(m->entries[j].options, m->entries[m->n].options) == 0)
                return manifest_free(m), bad(&r, "%s", "the same program twice");
    }
    size_t body = (size_t)(r.p - text);
    char sum[24];
    uint64_t want;
    if (keyed(&r, "checksum", sum, sizeof sum) || !hex16(sum, &want))
        return manifest_free(m), bad(&r, "%s", "expected 'checksum' and 16 lowercase hex digits");
    if (want != cache_hash(text, body, CACHE_HASH_SEED))
        return manifest_free(m), bad(&r, "%s", "the checksum does not match: the manifest was "
                                               "changed or damaged");
    if (r.p != r.end)
        return manifest_free(m), bad(&r, "%s", "bytes after the checksum line");
    return 0;
}

void manifest_free(manifest *m)
{
    free(m->entries);
    m->entries = NULL;
    m->n = 0;
}
