/* uses.c: the names of declared uses (clnz_uses), the one table the
 * command line, the Python module and bundle manifests all read, and the
 * defaults of a field left 0. */
#include "uses/uses.h"
#include "core/error.h"
#include "strategy/strategy.h"

#include <stdio.h>
#include <string.h>

const char *const uses_axis_names[AXIS_COUNT] = {"dtypes", "ops", "predicates", "strategies"};

/* In the order of the CLNZ_USE_* bits. */
static const char *const op_names[] = {"count", "nonzero", "batched",  "select",  "where",
                                       "mask",  "scan",    "channels", "image2d"};
enum { N_OPS = sizeof op_names / sizeof op_names[0] };
static const char *const pred_names[] = {"nonzero", "compare"};
/* Predicate ops that name the compare class. */
static const char *const compare_ops[] = {"eq", "ne", "lt", "le", "gt", "ge"};

static int axis_size(uses_axis axis)
{
    switch (axis) {
    case AXIS_DTYPES: return CLNZ_DTYPE_COUNT;
    case AXIS_OPS: return N_OPS;
    case AXIS_PREDICATES: return 2;
    default: return CLNZ_STRATEGY_COUNT;
    }
}

const char *uses_bit_name(uses_axis axis, int i)
{
    if (i < 0 || i >= axis_size(axis))
        return NULL;
    switch (axis) {
    case AXIS_DTYPES: return clnz_dtype_name((clnz_dtype)i);
    case AXIS_OPS: return op_names[i];
    case AXIS_PREDICATES: return pred_names[i];
    default: return clnz_strategy_name((clnz_strategy)i); /* bit 0, auto: the context's own */
    }
}

uint32_t *uses_field(clnz_uses *u, uses_axis axis)
{
    switch (axis) {
    case AXIS_DTYPES: return &u->dtypes;
    case AXIS_OPS: return &u->ops;
    case AXIS_PREDICATES: return &u->predicates;
    default: return &u->strategies;
    }
}

/* Every bit of the axis that "all" names (strategies: every real one). */
static uint32_t all_bits(uses_axis axis)
{
    uint32_t bits = (uint32_t)((1ull << axis_size(axis)) - 1);
    return axis == AXIS_STRATEGIES ? bits & ~1u : bits;
}

static int name_bit(uses_axis axis, const char *name, size_t len, uint32_t *bit)
{
    if (len == 3 && memcmp(name, "all", 3) == 0)
        return *bit = all_bits(axis), 1;
    for (int i = 0; i < axis_size(axis); ++i) {
        const char *n = uses_bit_name(axis, i);
        if (n && strlen(n) == len && memcmp(n, name, len) == 0)
            return *bit = 1u << i, 1;
    }
    for (size_t i = 0; axis == AXIS_PREDICATES && i < sizeof compare_ops / sizeof *compare_ops; ++i)
        if (strlen(compare_ops[i]) == len && memcmp(compare_ops[i], name, len) == 0)
            return *bit = CLNZ_PREDS_COMPARE, 1;
    return 0;
}

static clnz_status refuse(char *msg, size_t n, const char *fmt, const char *a, const char *b)
{
    if (msg && n)
        snprintf(msg, n, fmt, a, b);
    return CLNZ_ERROR_INVALID_VALUE;
}

clnz_status clnz_uses_parse(clnz_uses *u, const char *axis_name, const char *list, char *msg,
                            size_t msg_size)
{
    int axis = 0;
    while (axis < AXIS_COUNT && !(axis_name && strcmp(axis_name, uses_axis_names[axis]) == 0))
        ++axis;
    if (!u) {
        if (msg && msg_size)
            snprintf(msg, msg_size, "uses is NULL");
        return CLNZ_ERROR_INVALID_ARGUMENT;
    }
    if (axis == AXIS_COUNT)
        return refuse(msg, msg_size, "unknown axis '%.40s%s' (dtypes, ops, predicates, strategies)",
                      axis_name ? axis_name : "(null)", "");
    if (!list || !*list)
        return refuse(msg, msg_size, "an empty list of %s%s", uses_axis_names[axis], "");
    uint32_t bits = 0;
    for (const char *p = list;;) {
        size_t len = strcspn(p, ",");
        uint32_t bit;
        char name[48];
        snprintf(name, sizeof name, "%.*s", (int)(len < 40 ? len : 40), p);
        if (!name_bit((uses_axis)axis, p, len, &bit)) {
            char known[400];
            uses_format(all_bits((uses_axis)axis) | (axis == AXIS_STRATEGIES), (uses_axis)axis,
                        known, sizeof known);
            if (axis == AXIS_PREDICATES)
                strncat(known, ",eq,ne,lt,le,gt,ge", sizeof known - strlen(known) - 1);
            return refuse(msg, msg_size, "unknown name '%s' (known: %s,all)", name, known);
        }
        bits |= bit;
        if (!p[len])
            break;
        p += len + 1;
    }
    *uses_field(u, (uses_axis)axis) = bits;
    return CLNZ_SUCCESS;
}

void uses_format(uint32_t bits, uses_axis axis, char *buf, size_t n)
{
    size_t len = 0;
    buf[0] = '\0';
    for (int i = 0; i < axis_size(axis) && len < n; ++i)
        if (bits & (1u << i))
            len += (size_t)snprintf(buf + len, n - len, "%s%s", len ? "," : "",
                                    uses_bit_name(axis, i));
}

clnz_uses uses_resolve(const clnz_context *ctx, const clnz_uses *u)
{
    clnz_uses r = u ? *u : (clnz_uses){0};
    r.dtypes &= all_bits(AXIS_DTYPES);
    r.ops &= all_bits(AXIS_OPS);
    r.predicates &= all_bits(AXIS_PREDICATES);
    if (!r.dtypes)
        r.dtypes = all_bits(AXIS_DTYPES);
    if (!r.ops)
        r.ops = CLNZ_USE_COUNT | CLNZ_USE_NONZERO;
    if (!r.predicates)
        r.predicates = CLNZ_PREDS_NONZERO;
    if (!r.strategies || (r.strategies & 1u)) { /* auto: the context's own */
        clnz_strategy s[CLNZ_STRATEGY_COUNT];
        int n = strategy_candidates(ctx, s);
        for (int i = 0; i < n; ++i)
            r.strategies |= 1u << s[i];
    }
    r.strategies &= all_bits(AXIS_STRATEGIES);
    return r;
}

/* A bit that names nothing is refused, never dropped: a caller who set one
 * (a stray flag, a bit from a newer header) would otherwise get a warm-up
 * that covers less than it asked for, and learn it from a compile later. */
clnz_status uses_check(clnz_context *ctx, const clnz_uses *u)
{
    clnz_uses c = u ? *u : (clnz_uses){0};
    for (int a = 0; a < AXIS_COUNT; ++a) {
        uint32_t known = 0, unknown;
        for (int i = 0; i < 32; ++i)
            if (uses_bit_name((uses_axis)a, i))
                known |= 1u << i;
        unknown = *uses_field(&c, (uses_axis)a) & ~known;
        if (!unknown)
            continue;
        char bits[160] = "", names[300];
        for (int i = 0, len = 0; i < 32 && len < (int)sizeof bits; ++i)
            if (unknown & (1u << i))
                len += snprintf(bits + len, sizeof bits - (size_t)len, "%s%d", len ? ", " : "", i);
        uses_format(known, (uses_axis)a, names, sizeof names);
        return ctx_fail(ctx, CLNZ_ERROR_INVALID_ARGUMENT,
                        "uses.%s has unknown bits 0x%x (bit%s %s); the known ones are 0x%x: %s",
                        uses_axis_names[a], unknown, __builtin_popcount(unknown) > 1 ? "s" : "",
                        bits, known, names);
    }
    return CLNZ_SUCCESS;
}
