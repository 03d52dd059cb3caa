/* npy_header.c: a .npy header's dictionary, read as np.load reads it
 * (Python's literal syntax, numpy's descr strings), for npy.c. Everything
 * here is text: no file, no allocation. */
#define _GNU_SOURCE
#include "io/io.h"

#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- the descr: a dtype as np.dtype reads a string ----
 *
 * np.load hands the header's descr to np.dtype, which reads a string in
 * several ways (numpy's _convert_from_str and _commastring): a byte order
 * ('<', '>', '=', '|'), then a type code ('i', '?', 'd', or a type number
 * below 24 written as a character) or a kind and a size ('i4', 'b1'; the
 * size as C's strtol reads it, so 'i 4' and 'i+04' too); else a name
 * ('int32', 'float', 'bool'). A string that starts with a digit or with
 * '()' (after a byte order), or holds a comma, is a "comma string" of
 * repeat counts and fields: '()i4' is 'i4'. A tuple (descr, ()) is its
 * descr. clnz reads each of these that numpy 1.x reads as one of clnz's
 * dtypes (the aliases numpy 2 dropped, 'bool8', 'int0', 'float_', too)
 * but for the forms numpy 2 reads as another dtype, refused saying why: a
 * comma (a structured dtype in numpy 2), a repeat count of 1 (a subarray
 * of shape (1,)), a size above 2^31-1 (numpy 1.x wraps it to 32 bits,
 * numpy 2 refuses it). 'l', 'p', 'int', 'uint', 'long' and the like are C's
 * long and pointer, as numpy on this machine reads them. */
typedef enum {
    DESCR_OK,
    DESCR_UNKNOWN,  /* no dtype, or one clnz does not read */
    DESCR_SUBARRAY, /* a repeat count or shape: a subarray dtype */
    DESCR_REPEAT_1, /* a repeat count of 1: plain in numpy 1.x, shape (1,) in 2 */
    DESCR_COMMA,    /* a comma: structured in numpy 2 (with two fields, in 1.x too) */
    DESCR_NESTED,   /* nested deeper than clnz follows */
} descr_verdict;

enum { DESCR_DEPTH_MAX = 16 };

static int is_digit(char ch) { return ch >= '0' && ch <= '9'; }
static int is_alnum(char ch)
{
    return is_digit(ch) || (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z');
}
static int is_order(char ch) { return ch == '<' || ch == '>' || ch == '|' || ch == '='; }
/* C's isspace, which strtol skips */
static int is_c_space(char ch) { return ch == ' ' || (ch >= '\t' && ch <= '\r'); }
/* Python's \s in ASCII, which _commastring's patterns match */
static int is_re_space(char ch) { return is_c_space(ch) || (ch >= 0x1c && ch <= 0x1f); }

/* C's long and pointer, as numpy on this machine reads 'l', 'p', 'int', ... */
#define C_LONG (sizeof(long) == 8 ? CLNZ_I64 : CLNZ_I32)
#define C_ULONG (sizeof(long) == 8 ? CLNZ_U64 : CLNZ_U32)
#define C_INTP (sizeof(void *) == 8 ? CLNZ_I64 : CLNZ_I32)
#define C_UINTP (sizeof(void *) == 8 ? CLNZ_U64 : CLNZ_U32)

/* numpy's one-character type codes, and the type numbers (NPY_BYTE = 1,
 * ...) below 24 that PyArray_DescrFromType takes as a character's code
 * too: '\x07' is 'l'. 0: none (a NUL never reaches here). */
static const struct {
    char code;
    unsigned char number;
    clnz_dtype dtype;
} type_codes[] = {
    {'?', 0, CLNZ_BOOL},  {'b', 1, CLNZ_I8},   {'B', 2, CLNZ_U8},   {'h', 3, CLNZ_I16},
    {'H', 4, CLNZ_U16},   {'i', 5, CLNZ_I32},  {'I', 6, CLNZ_U32},  {'l', 7, C_LONG},
    {'L', 8, C_ULONG},    {'q', 9, CLNZ_I64},  {'Q', 10, CLNZ_U64}, {'f', 11, CLNZ_F32},
    {'d', 12, CLNZ_F64},  {'e', 23, CLNZ_F16}, {'p', 0, C_INTP},    {'P', 0, C_UINTP},
};

/* A type code or number as a character; -1 for none of clnz's. */
static int dtype_of_code(unsigned char ch)
{
    for (size_t i = 0; i < sizeof type_codes / sizeof type_codes[0]; ++i)
        if (ch == (unsigned char)type_codes[i].code || (ch && ch == type_codes[i].number))
            return type_codes[i].dtype;
    return -1;
}

/* numpy's names of clnz's dtypes (np.sctypeDict), as type codes */
static const struct {
    const char *name;
    char code;
} dtype_names[] = {
    {"bool", '?'},    {"bool_", '?'},      {"bool8", '?'},   {"byte", 'b'},    {"int8", 'b'},
    {"ubyte", 'B'},   {"uint8", 'B'},      {"short", 'h'},   {"int16", 'h'},   {"ushort", 'H'},
    {"uint16", 'H'},  {"intc", 'i'},       {"int32", 'i'},   {"uintc", 'I'},   {"uint32", 'I'},
    {"long", 'l'},    {"int", 'l'},        {"int_", 'l'},    {"ulong", 'L'},   {"uint", 'L'},
    {"longlong", 'q'}, {"int64", 'q'},     {"ulonglong", 'Q'}, {"uint64", 'Q'}, {"intp", 'p'},
    {"int0", 'p'},    {"uintp", 'P'},      {"uint0", 'P'},   {"half", 'e'},    {"float16", 'e'},
    {"single", 'f'},  {"float32", 'f'},    {"double", 'd'},  {"float", 'd'},   {"float_", 'd'},
    {"float64", 'd'},
};

/* A kind and a size ('i', 4) as numpy's PyArray_TypestrConvert; -1: none of clnz's */
static int dtype_of_kind(char kind, uint64_t size)
{
    for (int k = 0; k < CLNZ_DTYPE_COUNT; ++k)
        if (clnz_dtype_numpy((clnz_dtype)k)[1] == kind && clnz_dtype_size((clnz_dtype)k) == size)
            return k;
    return -1;
}

/* numpy's _check_for_commastring */
static int is_commastring(const char *s, size_t len)
{
    if (is_digit(s[0]) || (len > 1 && is_order(s[0]) && is_digit(s[1])))
        return 1;
    if ((len > 1 && s[0] == '(' && s[1] == ')') ||
        (len > 3 && is_order(s[0]) && s[1] == '(' && s[2] == ')'))
        return 1;
    int brackets = 0;
    for (size_t i = 0; i < len; ++i) {
        if (s[i] == ',' && brackets == 0)
            return 1;
        brackets += (s[i] == '[') - (s[i] == ']');
    }
    return 0;
}

/* A descr that is no comma string: [order] code, [order] kind size, or a name. */
static descr_verdict descr_plain(const char *s, size_t len, clnz_dtype *dt, int *big)
{
    const char *t = s;
    size_t n = len;
    char order = '=';
    if (is_order(t[0])) {
        order = t[0];
        ++t, --n;
    }
    if (n == 0)
        return DESCR_UNKNOWN;
    int k = -1;
    if (n == 1) {
        k = dtype_of_code((unsigned char)t[0]);
    } else { /* the size as strtol reads it, and nothing after it */
        size_t i = 1;
        while (i < n && is_c_space(t[i]))
            ++i;
        int minus = i < n && t[i] == '-';
        if (i < n && (t[i] == '+' || t[i] == '-'))
            ++i;
        size_t first = i;
        uint64_t size = 0;
        for (; i < n && is_digit(t[i]); ++i)
            size = size > INT_MAX ? size : size * 10 + (uint64_t)(t[i] - '0');
        if (i == n && i > first && !minus && size <= INT_MAX)
            k = dtype_of_kind(t[0], size);
    }
    for (size_t j = 0; k < 0 && j < sizeof dtype_names / sizeof dtype_names[0]; ++j)
        if (strlen(dtype_names[j].name) == len && memcmp(dtype_names[j].name, s, len) == 0)
            k = dtype_of_code((unsigned char)dtype_names[j].code);
    if (k < 0)
        return DESCR_UNKNOWN;
    *dt = (clnz_dtype)k;
    *big = order == '>' && clnz_dtype_size(*dt) > 1;
    return DESCR_OK;
}

/* The repeats of a comma string as Python's value of them: () keeps the
 * dtype plain; an int or a tuple makes a subarray (1: see DESCR_REPEAT_1). */
static descr_verdict repeats_verdict(const char *r, size_t n)
{
    size_t i = 0;
    while (i < n && r[i] == ' ')
        ++i;
    while (n > i && r[n - 1] == ' ')
        --n;
    int paren = n - i >= 2 && r[i] == '(' && r[n - 1] == ')';
    if (paren) {
        ++i, --n;
        while (i < n && r[i] == ' ')
            ++i;
        while (n > i && r[n - 1] == ' ')
            --n;
    }
    if (i == n) /* (): the dtype itself; nothing at all: not Python */
        return paren ? DESCR_OK : DESCR_UNKNOWN;
    size_t digits = 0, zeros = 0;
    while (i + digits < n && is_digit(r[i + digits]))
        zeros += r[i + digits++] == '0';
    if (i + digits < n) /* a tuple */
        return DESCR_SUBARRAY;
    if (digits > 1 && r[i] == '0' && zeros < digits) /* 01: not Python 3 */
        return DESCR_UNKNOWN;
    return digits == 1 && r[i] == '1' ? DESCR_REPEAT_1 : DESCR_SUBARRAY;
}

static descr_verdict descr_string(const char *s, size_t len, int depth, clnz_dtype *dt, int *big);

/* A comma string of one field (numpy's format_re): [order] repeats
 * [order] dtype, then only spaces. */
static descr_verdict descr_comma(const char *s, size_t len, int depth, clnz_dtype *dt, int *big)
{
    size_t i = 0;
    char o1 = is_order(s[0]) ? s[i++] : 0;
    size_t r0 = i; /* ' *[(]?[ ,0-9]*[)]? *' */
    while (i < len && s[i] == ' ')
        ++i;
    i += i < len && s[i] == '(';
    while (i < len && (s[i] == ' ' || s[i] == ',' || is_digit(s[i])))
        ++i;
    i += i < len && s[i] == ')';
    while (i < len && s[i] == ' ')
        ++i;
    size_t r1 = i;
    char o2 = i < len && is_order(s[i]) ? s[i++] : 0;
    size_t d0 = i; /* '[A-Za-z0-9.?]*' */
    while (i < len && (is_alnum(s[i]) || s[i] == '.' || s[i] == '?'))
        ++i;
    size_t d1 = i;
    if (i < len && s[i] == '[') /* a datetime's unit: none of clnz's dtypes */
        return DESCR_UNKNOWN;
    while (i < len && is_re_space(s[i]))
        ++i;
    if (i < len) /* a comma: more fields (a list), else not numpy's syntax */
        return s[i] == ',' ? DESCR_COMMA : DESCR_UNKNOWN;
    /* one order, '=' being the native '<'; '|', '=' and '<' say nothing */
    if (o1 && o2 && (o1 == '=' ? '<' : o1) != (o2 == '=' ? '<' : o2))
        return DESCR_UNKNOWN;
    int swapped = (o1 ? o1 : o2) == '>';
    char *inner = malloc(d1 - d0 + 2);
    if (!inner)
        return DESCR_UNKNOWN;
    inner[0] = '>';
    memcpy(inner + 1, s + d0, d1 - d0);
    descr_verdict v = descr_string(inner + !swapped, d1 - d0 + (size_t)swapped, depth + 1, dt, big);
    free(inner);
    if (v == DESCR_OK && r1 > r0)
        v = repeats_verdict(s + r0, r1 - r0);
    return v;
}

static descr_verdict descr_string(const char *s, size_t len, int depth, clnz_dtype *dt, int *big)
{
    if (len == 0)
        return DESCR_UNKNOWN;
    if (depth > DESCR_DEPTH_MAX)
        return DESCR_NESTED;
    return is_commastring(s, len) ? descr_comma(s, len, depth, dt, big)
                                  : descr_plain(s, len, dt, big);
}

/* ---- the header: a Python dict literal ----
 *
 * np.load reads it with ast.literal_eval. clnz reads the dictionary numpy
 * writes and the spellings of it that numpy reads too: whitespace (spaces,
 * tabs, form feeds, line breaks, a backslash before a line break) between
 * tokens, either quote, keys in any order (of a repeated key the last
 * counts, as in Python), a trailing comma or none, Python 2's L after a
 * dimension in formats 1.0 and 2.0 (numpy drops it there, not in 3.0).
 * Other Python syntax (comments, escapes, string prefixes, parentheses
 * around a value, +3, 0x3, 3_0) is refused, saying what it is. */
typedef struct {
    const char *p, *end;
    const char *start; /* the header's first byte */
    int version;       /* the format's major version */
} cursor;

static const char *quote_part(const char *s, size_t n, char *buf, size_t size);

/* A syntax error, and where: "... at byte 17: '# c\n'..." */
static int fail_at(const cursor *c, char *err, size_t err_size, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static int fail_at(const cursor *c, char *err, size_t err_size, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, err_size, fmt, ap);
    va_end(ap);
    char q[200];
    size_t used = strlen(err);
    if (c->p < c->end)
        snprintf(err + used, err_size - used, " at byte %td: %s", c->p - c->start,
                 quote_part(c->p, (size_t)(c->end - c->p), q, sizeof q));
    else
        snprintf(err + used, err_size - used, " at its end");
    return -1;
}
#define FAIL_AT(c, ...) return fail_at(c, err, err_size, __VA_ARGS__)

static void skip_ws(cursor *c)
{
    for (;;) {
        char ch = c->p < c->end ? *c->p : '\0';
        if (ch == ' ' || ch == '\t' || ch == '\f' || ch == '\n' || ch == '\r')
            c->p++;
        else if (ch == '\\' && c->end - c->p > 1 && (c->p[1] == '\n' || c->p[1] == '\r'))
            c->p += 2; /* a line joined to the next */
        else
            return;
    }
}

static int eat(cursor *c, char ch)
{
    skip_ws(c);
    if (c->p < c->end && *c->p == ch) {
        c->p++;
        return 1;
    }
    return 0;
}

/* Part of the header for a message: quoted as paths are (io_quote), and
 * bytes above 0x7f as \xNN too (a header is no text in any encoding), cut
 * after 40 bytes ("..." after the quote says so). */
static const char *quote_part(const char *s, size_t n, char *buf, size_t size)
{
    size_t cut = n < 40 ? n : 40, used;
    buf[0] = '\'';
    size_t k = io_escape(s, cut, 1, buf, 1, size, &used);
    buf[k++] = '\'';
    buf[k] = '\0';
    if (cut < n && k + 4 <= size)
        memcpy(buf + k, "...", 4);
    return buf;
}

/* A string literal without prefix or escapes ('...' or "..."): its text
 * in *s, *n. 1: one; 0: no string here; -1: one clnz does not read (*why). */
static int parse_str(cursor *c, const char **s, size_t *n, const char **why)
{
    skip_ws(c);
    if (c->p >= c->end || (*c->p != '\'' && *c->p != '"'))
        return 0;
    char q = *c->p++;
    *s = c->p;
    while (c->p < c->end && *c->p != q) {
        if (*c->p == '\\')
            return *why = "a backslash escape", -1;
        if (*c->p == '\n' || *c->p == '\r') /* Python's syntax error too */
            return *why = "a line break inside a string", -1;
        c->p++;
    }
    if (c->p >= c->end)
        return *why = "a string without its closing quote", -1;
    *n = (size_t)(c->p++ - *s);
    if (*n == 0 && c->p < c->end && *c->p == q)
        return *why = "a triple-quoted string", -1;
    return 1;
}

static int key_is(const char *k, size_t n, const char *word)
{
    return strlen(word) == n && memcmp(k, word, n) == 0;
}

static int parse_word(cursor *c, const char *w)
{
    skip_ws(c);
    size_t n = strlen(w);
    if ((size_t)(c->end - c->p) >= n && memcmp(c->p, w, n) == 0) {
        c->p += n;
        return 1;
    }
    return 0;
}

static int is_ident(char ch) { return is_alnum(ch) || ch == '_'; }

/* A Python 3 int: [-] digits, no leading zero but in 0, 00, ...; in
 * formats 1.0 and 2.0 Python 2's L after it. 0, or -1 if none here. */
static int parse_int(cursor *c, int64_t *v, int *negative, int *huge)
{
    skip_ws(c);
    int minus = c->p < c->end && *c->p == '-';
    if (minus) {
        c->p++;
        skip_ws(c);
    }
    const char *d = c->p;
    uint64_t x = 0;
    int zeros = 0, over = 0;
    for (; c->p < c->end && is_digit(*c->p); c->p++) {
        uint64_t digit = (uint64_t)(*c->p - '0');
        zeros += digit == 0;
        if (x > ((uint64_t)INT64_MAX - digit) / 10)
            over = 1;
        else
            x = x * 10 + digit;
    }
    long digits = c->p - d;
    if (digits == 0 || (digits > 1 && *d == '0' && zeros < digits))
        return -1;
    if (c->version < 3) { /* numpy's _filter_header drops an L token after a number */
        cursor after = *c;
        skip_ws(&after);
        if (after.p < after.end && *after.p == 'L' &&
            !(after.end - after.p > 1 && is_ident(after.p[1])))
            c->p = after.p + 1;
    }
    if (c->p < c->end && (is_ident(*c->p) || *c->p == '.')) /* 3x, 0x3, 3_0, 3.0, 3e2 */
        return -1;
    *v = minus ? -(int64_t)x : (int64_t)x;
    *negative = minus && (x > 0 || over);
    *huge = over;
    return 0;
}

/* A tuple of ints, as the shape (or a subarray's): (), (3,), (3, 4), and
 * (3), which is an int to Python. The checks on them come after the whole
 * dictionary, whose last value for a key counts. */
typedef struct {
    int rank;
    int64_t dims[CLNZ_MAX_RANK];
    int one_int;  /* (3): no tuple */
    int more;     /* more than CLNZ_MAX_RANK dimensions */
    int negative; /* a dimension below 0 */
    int huge;     /* a dimension above 2^63-1 */
    const char *text;
    size_t len;
} int_tuple;

static int parse_int_tuple(cursor *c, int_tuple *t)
{
    memset(t, 0, sizeof *t);
    skip_ws(c);
    t->text = c->p;
    if (!eat(c, '('))
        return -1;
    long n = 0, commas = 0;
    while (!eat(c, ')')) {
        int64_t v;
        int neg, huge;
        if (parse_int(c, &v, &neg, &huge))
            return -1;
        if (n < CLNZ_MAX_RANK)
            t->dims[n] = v;
        t->more |= n == CLNZ_MAX_RANK;
        t->negative |= neg;
        t->huge |= huge;
        ++n;
        if (eat(c, ','))
            ++commas;
        else if (eat(c, ')'))
            break;
        else
            return -1;
    }
    t->rank = n < CLNZ_MAX_RANK ? (int)n : CLNZ_MAX_RANK;
    t->one_int = n == 1 && commas == 0;
    t->len = (size_t)(c->p - t->text);
    return 0;
}

/* The descr's value: a string, or a tuple (descr, shape) of which numpy
 * makes descr for the shape (), and a subarray dtype for any other. */
typedef struct {
    descr_verdict verdict;
    clnz_dtype dtype;
    int big;
    const char *text; /* as written, for messages */
    size_t len;
} descr_value;

static int parse_descr_value(cursor *c, int depth, descr_value *v, char *err, size_t err_size)
{
    skip_ws(c);
    const char *start = c->p;
    if (c->p < c->end && *c->p == '[')
        FAIL_AT(c, "the header's descr is a list: structured dtypes are not supported");
    if (c->p < c->end && *c->p == '(') {
        if (depth == DESCR_DEPTH_MAX)
            FAIL("the header's descr is nested more than %d tuples deep", DESCR_DEPTH_MAX);
        c->p++;
        if (parse_descr_value(c, depth + 1, v, err, err_size))
            return -1;
        int_tuple shape;
        int64_t count;
        int neg, huge;
        int bad = !eat(c, ',');
        skip_ws(c);
        if (!bad && c->p < c->end && *c->p == '(') {
            bad = parse_int_tuple(c, &shape);
            if (!bad && v->verdict == DESCR_OK && (shape.rank > 0 || shape.more))
                v->verdict = shape.one_int && shape.dims[0] == 1 ? DESCR_REPEAT_1 : DESCR_SUBARRAY;
        } else if (!bad) {
            bad = parse_int(c, &count, &neg, &huge);
            if (!bad && v->verdict == DESCR_OK)
                v->verdict = count == 1 && !huge ? DESCR_REPEAT_1 : DESCR_SUBARRAY;
        }
        eat(c, ',');
        if (bad || !eat(c, ')'))
            FAIL_AT(c, "the header's descr is a tuple but not (dtype, shape)");
        v->text = start;
        v->len = (size_t)(c->p - start);
        return 0;
    }
    const char *why = NULL;
    int r = parse_str(c, &v->text, &v->len, &why);
    if (r < 0)
        FAIL_AT(c, "the header's descr is a string clnz does not read (%s)", why);
    if (r == 0)
        FAIL_AT(c, "the header's descr is not a string");
    v->verdict = descr_string(v->text, v->len, 0, &v->dtype, &v->big);
    return 0;
}

static int descr_fail(const descr_value *v, char *err, size_t err_size)
{
    static const char *const why[] = {
        [DESCR_UNKNOWN] = "",
        [DESCR_SUBARRAY] = ": a subarray dtype",
        [DESCR_REPEAT_1] = ": a repeat count of 1 is a plain dtype to numpy 1.x but a subarray "
                           "of shape (1,) to numpy 2; leave it out",
        [DESCR_COMMA] = ": a comma makes a structured dtype (in numpy 2 even with one field); "
                        "leave it out",
        [DESCR_NESTED] = ": nested too deeply",
    };
    char q[200], size[48] = "";
    if (v->len > 40)
        snprintf(size, sizeof size, "a descr of %zu bytes; ", v->len);
    FAIL("unsupported dtype %s%s (%sclnz reads bool, u8..u64, i8..i64, f16, f32, f64)",
         quote_part(v->text, v->len, q, sizeof q), why[v->verdict], size);
}

/* A line break at p (\n, \r\n; in format 3.0 a lone \r too): its length, or 0. */
static size_t line_break(const char *p, const char *end, int version)
{
    if (p < end && *p == '\n')
        return 1;
    if (p < end && *p == '\r')
        return end - p > 1 && p[1] == '\n' ? 2 : version >= 3;
    return 0;
}

/* The blanks around the dictionary, outside its brackets, where Python
 * minds indentation. Before '{': spaces and tabs (literal_eval strips
 * them), then form feeds, or blank lines with nothing after the last line
 * break. After '}': spaces, tabs, form feeds and line breaks, and after
 * the last line break form feeds only. Stricter than Python, never laxer. */
static int blanks_ok(const char *p, const char *end, int before, int version)
{
    if (before)
        while (p < end && (*p == ' ' || *p == '\t'))
            ++p;
    int lines = 0, tail = 0; /* line breaks seen; blanks after the last one */
    while (p < end) {
        size_t n = line_break(p, end, version);
        if (n) {
            p += n, ++lines, tail = 0;
            continue;
        }
        if (*p != ' ' && *p != '\t' && *p != '\f')
            return 0; /* a backslash (a line joined), or so */
        if (before && !lines && *p != '\f') /* an indent on the first line */
            return 0;
        tail |= before || *p != '\f';
        ++p;
    }
    return !(lines && tail);
}

int npy_parse_header(const char *h, size_t len, int version, npy_array *a, int *big, char *err,
                     size_t err_size)
{
    if (memchr(h, '\0', len)) /* Python reads no source with one */
        FAIL("the header holds a NUL byte");
    /* numpy runs Python's tokenize over a 1.0 or 2.0 header (_filter_header),
     * which splits lines at '\n' only: a lone '\r' can make it fail */
    for (const char *r = h; version < 3 && (r = memchr(r, '\r', len - (size_t)(r - h))); ++r)
        if (r + 1 == h + len || r[1] != '\n')
            FAIL("the header has a carriage return without a line feed (numpy reads that "
                 "only in format 3.0)");
    cursor c = {h, h + len, h, version};
    int have_descr = 0, have_order = 0, have_shape = 0, fortran = 0;
    descr_value descr;
    int_tuple shape;
    char q[200];
    if (!eat(&c, '{'))
        FAIL_AT(&c, "the header is not a dictionary");
    if (!blanks_ok(h, c.p - 1, 1, version))
        FAIL("the header has blanks before its dictionary that Python does not take (an "
             "indent, or a line joined to it)");
    while (!eat(&c, '}')) {
        const char *key, *why = NULL;
        size_t n;
        int r = parse_str(&c, &key, &n, &why);
        if (r < 0)
            FAIL_AT(&c, "the header has a key clnz does not read (%s)", why);
        if (r == 0 || !eat(&c, ':'))
            FAIL_AT(&c, "the header dictionary is malformed");
        if (key_is(key, n, "descr")) {
            if (parse_descr_value(&c, 0, &descr, err, err_size))
                return -1;
            have_descr = 1;
        } else if (key_is(key, n, "fortran_order")) {
            if (parse_word(&c, "True"))
                fortran = 1;
            else if (parse_word(&c, "False"))
                fortran = 0;
            else
                FAIL_AT(&c, "the header's fortran_order is not True or False");
            have_order = 1;
        } else if (key_is(key, n, "shape")) {
            if (parse_int_tuple(&c, &shape))
                FAIL_AT(&c, "the header's shape is not a tuple of integers");
            have_shape = 1;
        } else {
            FAIL("unexpected key %s in the header", quote_part(key, n, q, sizeof q));
        }
        if (!eat(&c, ',')) {
            if (eat(&c, '}'))
                break;
            FAIL_AT(&c, "the header dictionary is malformed");
        }
    }
    if (!have_descr || !have_order || !have_shape)
        FAIL("the header lacks %s", !have_descr ? "descr" : !have_order ? "fortran_order" : "shape");
    /* numpy pads with spaces and ends with a newline: nothing else */
    const char *closed = c.p;
    skip_ws(&c);
    if (c.p != c.end)
        FAIL_AT(&c, "the header has bytes after its dictionary");
    if (!blanks_ok(closed, c.end, 0, version))
        FAIL("the header ends in blanks that Python reads as an indent (or a line joined "
             "to nothing)");
    if (shape.one_int)
        FAIL("the header's shape %s is an int, not a tuple (a 1-d shape is written (N,))",
             quote_part(shape.text, shape.len, q, sizeof q));
    if (shape.negative)
        FAIL("the header's shape %s has a negative dimension",
             quote_part(shape.text, shape.len, q, sizeof q));
    if (shape.huge)
        FAIL("a dimension in the header's shape is larger than 2^63-1");
    if (shape.more)
        FAIL("the shape has more than %d dimensions", CLNZ_MAX_RANK);
    if (descr.verdict != DESCR_OK)
        return descr_fail(&descr, err, err_size);
    a->dtype = descr.dtype;
    *big = descr.big;
    a->fortran_order = fortran;
    a->rank = shape.rank;
    memcpy(a->shape, shape.dims, sizeof shape.dims);
    return 0;
}
