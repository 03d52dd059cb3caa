/* predicate.c: turning "x OP value" into a key range the kernels test.
 *
 * Every element maps to an integer key that orders elements like their values
 * (element.cl: elem_key). Any comparison with a scalar then selects one range
 * of keys, or all but one range for "ne", with NaN elements false except for
 * "ne". The range is found here by binary search over the keys, with a host
 * comparison that follows numpy's promotion rules, so the kernels need no
 * floating point at all and every dtype behaves the same on every device. */
#include "core/predicate.h"
#include "core/context.h"
#include "core/dtype.h"
#include "core/error.h"

#include <math.h>
#include <string.h>

typedef __int128 i128;

clnz_scalar clnz_scalar_int(int64_t v)
{
    clnz_scalar s;
    memset(&s, 0, sizeof s);
    s.kind = CLNZ_VALUE_INT;
    s.i = v;
    return s;
}

clnz_scalar clnz_scalar_uint(uint64_t v)
{
    clnz_scalar s = clnz_scalar_int(0);
    s.kind = CLNZ_VALUE_UINT;
    s.u = v;
    return s;
}

clnz_scalar clnz_scalar_float(double v)
{
    clnz_scalar s = clnz_scalar_int(0);
    s.kind = CLNZ_VALUE_FLOAT;
    s.f = v;
    return s;
}

static clnz_predicate pred_of(clnz_op op, clnz_scalar v)
{
    clnz_predicate p;
    memset(&p, 0, sizeof p);
    p.op = op;
    p.value = v;
    return p;
}

clnz_predicate clnz_pred_nonzero(void) { return pred_of(CLNZ_OP_NONZERO, clnz_scalar_int(0)); }
clnz_predicate clnz_pred_int(clnz_op op, int64_t v) { return pred_of(op, clnz_scalar_int(v)); }
clnz_predicate clnz_pred_uint(clnz_op op, uint64_t v) { return pred_of(op, clnz_scalar_uint(v)); }
clnz_predicate clnz_pred_float(clnz_op op, double v) { return pred_of(op, clnz_scalar_float(v)); }

/* The keys of each dtype span [key_min, key_max]: integers their values,
 * floats their sign-magnitude bit patterns made signed, -inf to +inf. */
static void key_range(clnz_dtype d, i128 *lo, i128 *hi)
{
    const dtype_info *t = dtype_of(d);
    if (t->kind == 'f') {
        *lo = -(i128)t->inf_bits;
        *hi = t->inf_bits;
    } else {
        *lo = t->min;
        *hi = t->max;
    }
}

double clnz_half_to_double(uint16_t h)
{
    int e = (h >> 10) & 0x1f, m = h & 0x3ff;
    double v = e == 0 ? ldexp(m, -24) : e == 31 ? (m ? NAN : INFINITY) : ldexp(1024 + m, e - 25);
    return (h & 0x8000) ? -v : v;
}

/* Rounds to the nearest binary16, ties to even, straight from double (going
 * through float would round twice). */
uint16_t clnz_double_to_half(double v)
{
    uint16_t sign = signbit(v) ? 0x8000 : 0;
    double a = fabs(v);
    if (isnan(v)) { /* as numpy casts one: its sign and its significand's top 10 bits,
                     * kept a NaN (not quieted); every NaN was 0x7e00 before */
        uint64_t b;
        memcpy(&b, &v, sizeof b);
        uint16_t h = (uint16_t)(0x7c00u + ((b & 0x000fffffffffffffULL) >> 42));
        return sign | (h == 0x7c00u ? 0x7c01u : h);
    }
    if (a >= 65520.0) /* halfway between the largest half and 2^16 rounds up */
        return sign | 0x7c00;
    if (a < ldexp(1, -14)) /* subnormal: a multiple of 2^-24 */
        return sign | (uint16_t)nearbyint(ldexp(a, 24));
    int e;
    frexp(a, &e);          /* a = f * 2^e, f in [0.5, 1) */
    double m = nearbyint(ldexp(a, 11 - e)); /* 1024..2048 */
    if (m == 2048.0) {
        m = 1024.0;
        ++e;
    }
    return sign | (uint16_t)((e + 14) << 10) | ((uint16_t)m & 0x3ff);
}

static double key_to_double(clnz_dtype d, i128 key)
{
    uint64_t mag = (uint64_t)(key < 0 ? -key : key);
    if (d == CLNZ_F16)
        return (key < 0 ? -1 : 1) * clnz_half_to_double((uint16_t)mag);
    if (d == CLNZ_F32) {
        uint32_t b = (uint32_t)mag;
        float f;
        memcpy(&f, &b, sizeof f);
        return (key < 0 ? -1 : 1) * (double)f;
    }
    double f;
    memcpy(&f, &mag, sizeof f);
    return (key < 0 ? -1 : 1) * f;
}

static int cmp_double(clnz_op op, double x, double v)
{
    switch (op) {
    case CLNZ_OP_LT: return x < v;
    case CLNZ_OP_LE: return x <= v;
    case CLNZ_OP_GT: return x > v;
    default: return x >= v;
    }
}

static int cmp_int(clnz_op op, i128 x, i128 v)
{
    switch (op) {
    case CLNZ_OP_LT: return x < v;
    case CLNZ_OP_LE: return x <= v;
    case CLNZ_OP_GT: return x > v;
    default: return x >= v;
    }
}

static double round_to_dtype(clnz_dtype d, double v)
{
    if (d == CLNZ_F16)
        return clnz_half_to_double(clnz_double_to_half(v));
    if (d == CLNZ_F32)
        return (double)(float)v;
    return v;
}

/* The float type numpy 1.x compares an f16, f32 or f64 array with a Python
 * float in: the wider of the array's and the smallest one numpy deems to
 * hold v (np.min_scalar_type: f16 below 65000, f32 below 3.4e38, its own
 * round bounds, not the types' largest values; inf and nan in f16). */
static clnz_dtype numpy_compare_type(clnz_dtype d, double v)
{
    double a = fabs(v);
    clnz_dtype t = isnan(v) || isinf(v) || a < 65000.0 ? CLNZ_F16 : a < 3.4e38 ? CLNZ_F32 : CLNZ_F64;
    return d == CLNZ_F64 || t == CLNZ_F64 ? CLNZ_F64 : d == CLNZ_F32 || t == CLNZ_F32 ? CLNZ_F32
                                                                                   : CLNZ_F16;
}

/* x OP v for the element with this key, as numpy 1.24 compares an array with
 * a Python scalar (op is one of lt, le, gt, ge). */
static int host_compare(clnz_dtype d, i128 key, clnz_op op, const clnz_predicate *p)
{
    i128 v = p->value.kind == CLNZ_VALUE_UINT ? (i128)p->value.u : (i128)p->value.i;
    if (!dtype_is_float(d)) {
        if (p->value.kind == CLNZ_VALUE_FLOAT)
            return cmp_double(op, (double)key, p->value.f);
        /* int64 against an int beyond int64 is promoted to float64 by numpy */
        if (d == CLNZ_I64 && p->value.kind == CLNZ_VALUE_UINT && p->value.u > INT64_MAX)
            return cmp_double(op, (double)(int64_t)key, (double)p->value.u);
        return cmp_int(op, key, v);
    }
    double x = key_to_double(d, key);
    if (p->value.kind != CLNZ_VALUE_FLOAT)
        return cmp_double(op, x, p->value.kind == CLNZ_VALUE_UINT ? (double)p->value.u
                                                            : (double)p->value.i);
    /* v rounded to the type the comparison happens in (x is exact in it) */
    return cmp_double(op, x, round_to_dtype(numpy_compare_type(d, p->value.f), p->value.f));
}

/* Keys where the comparison holds lie at one end of the key range (it is
 * monotone in the key): find where the run of true results ends or starts. */
static int last_true(clnz_dtype d, clnz_op op, const clnz_predicate *p, i128 *out)
{
    i128 lo, hi;
    key_range(d, &lo, &hi);
    if (!host_compare(d, lo, op, p))
        return 0;
    while (lo < hi) { /* invariant: true at lo */
        i128 mid = lo + (hi - lo + 1) / 2;
        if (host_compare(d, mid, op, p))
            lo = mid;
        else
            hi = mid - 1;
    }
    *out = lo;
    return 1;
}

static int first_true(clnz_dtype d, clnz_op op, const clnz_predicate *p, i128 *out)
{
    i128 lo, hi;
    key_range(d, &lo, &hi);
    if (!host_compare(d, hi, op, p))
        return 0;
    while (lo < hi) { /* invariant: true at hi */
        i128 mid = lo + (hi - lo) / 2;
        if (host_compare(d, mid, op, p))
            hi = mid;
        else
            lo = mid + 1;
    }
    *out = lo;
    return 1;
}

clnz_status pred_to_keys(clnz_context *ctx, clnz_dtype d, const clnz_predicate *pred,
                         pred_keys *out)
{
    clnz_predicate p = pred ? *pred : clnz_pred_nonzero();
    if ((unsigned)p.op > CLNZ_OP_GE)
        return ctx_fail(ctx, CLNZ_ERROR_INVALID_ARGUMENT, "unknown predicate op %d", (int)p.op);
    if ((unsigned)p.value.kind > CLNZ_VALUE_FLOAT)
        return ctx_fail(ctx, CLNZ_ERROR_INVALID_ARGUMENT, "unknown predicate value kind %d",
                        (int)p.value.kind);
    if (p.op == CLNZ_OP_NONZERO)
        p = clnz_pred_int(CLNZ_OP_NE, 0);
    /* the value's 8 bytes, whatever its kind, tell predicates apart */
    for (int i = 0; i < PRED_MEMO_SLOTS; ++i) {
        const pred_memo *m = &ctx->pred_memo[i];
        if (m->used && m->dtype == d && m->pred.op == p.op && m->pred.value.kind == p.value.kind &&
            m->pred.value.u == p.value.u) {
            *out = m->keys;
            return CLNZ_SUCCESS;
        }
    }
    out->nonzero = p.op == CLNZ_OP_NE &&
                   (p.value.kind == CLNZ_VALUE_FLOAT ? p.value.f == 0.0
                                               : (p.value.kind == CLNZ_VALUE_UINT ? p.value.u == 0
                                                                            : p.value.i == 0));
    i128 kmin, kmax, lo = 1, hi = 0; /* empty unless found */
    key_range(d, &kmin, &kmax);
    int found = 1;
    switch (p.op) {
    case CLNZ_OP_LT:
    case CLNZ_OP_LE:
        lo = kmin;
        found = last_true(d, p.op, &p, &hi);
        break;
    case CLNZ_OP_GT:
    case CLNZ_OP_GE:
        hi = kmax;
        found = first_true(d, p.op, &p, &lo);
        break;
    default: /* eq and ne: the keys both <= and >= the value */
        found = first_true(d, CLNZ_OP_GE, &p, &lo) && last_true(d, CLNZ_OP_LE, &p, &hi);
        break;
    }
    if (!found || lo > hi)
        lo = 1, hi = 0;
    out->lo = (uint64_t)lo; /* two's complement for signed keys */
    out->hi = (uint64_t)hi;
    out->invert = p.op == CLNZ_OP_NE;
    ctx->pred_memo[ctx->pred_memo_next++ % PRED_MEMO_SLOTS] = (pred_memo){1, d, p, *out};
    return CLNZ_SUCCESS;
}
