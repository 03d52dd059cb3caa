/* variants.c: the one enumeration of the programs a declared set of uses
 * needs (warm-up and bundles read it), and its reverse for the error of a
 * device that cannot compile: which use needs a missing program and which
 * bundle option would include it.
 *
 * No list of programs is kept here: each operation is mapped to the jobs
 * it runs (a compacting job's kind, or the element-wise kernel it
 * launches), and the programs come from the functions that build them
 * when a call runs: the strategies' programs() (their files and options
 * from the same helpers as their launches) and ops.h's *_program(). The
 * strategies covered are those strategy_choose may ask on the context.
 * test_programs.c checks that calls of a declared use then build nothing
 * else. */
#include "uses/uses.h"
#include "uses/manifest.h"
#include "core/quote.h"
#include "ops/ops.h"
#include "strategy/strategy.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    clnz_context *ctx;
    program_set *out;
    use_point *points; /* one per program of out */
    int cap_points;
    use_point at;      /* the point being enumerated */
    uint32_t strategies, value_sizes;
} walk;

/* The programs added since `from` are needed by w->at. */
static clnz_status label(walk *w, int from)
{
    if (w->out->n > w->cap_points) {
        int cap = w->out->cap;
        use_point *p = realloc(w->points, (size_t)cap * sizeof *p);
        if (!p)
            return CLNZ_ERROR_OUT_OF_HOST_MEMORY;
        w->points = p;
        w->cap_points = cap;
    }
    for (int i = from; i < w->out->n; ++i)
        w->points[i] = w->at;
    return CLNZ_SUCCESS;
}

static clnz_status add(walk *w, const program_ref *r)
{
    int from = w->out->n;
    return program_set_add(w->out, r) ? CLNZ_ERROR_OUT_OF_HOST_MEMORY : label(w, from);
}

/* A compacting job of this kind, under every strategy covered. */
static clnz_status compacting(walk *w, const job_kind *k)
{
    clnz_status st = CLNZ_SUCCESS;
    for (int s = 1; s < CLNZ_STRATEGY_COUNT && !st; ++s) {
        if (!(w->strategies & (1u << s)))
            continue;
        int from = w->out->n;
        w->at.strategy = (clnz_strategy)s;
        st = strategy_programs(w->ctx, (clnz_strategy)s, k, w->out);
        if (!st)
            st = label(w, from);
    }
    w->at.strategy = CLNZ_STRATEGY_AUTO;
    return st;
}

/* A static size's fill (nonzero with has_size, and the calls built on it). */
static clnz_status fill(walk *w)
{
    program_ref r;
    fill_program(&r);
    return add(w, &r);
}

/* nonzero over a pixel mask (u8, the nonzero predicate): channels, image2d */
static clnz_status pixel_nonzero(walk *w)
{
    job_kind k = {CLNZ_U8, 1, ABI_EMIT_COORDS, 0, 0};
    clnz_status st = compacting(w, &k);
    return st ? st : fill(w);
}

/* The programs of one operation on one dtype and predicate class. */
static clnz_status point_programs(walk *w)
{
    clnz_dtype d = w->at.dtype;
    int nz = w->at.pred == CLNZ_PREDS_NONZERO;
    job_kind k = {d, nz, ABI_EMIT_COUNT, 0, 0};
    program_ref r, rs[8];
    clnz_status st = CLNZ_SUCCESS;
    switch (w->at.op) {
    case CLNZ_USE_COUNT:
        return compacting(w, &k);
    case CLNZ_USE_NONZERO:
        k.emit = ABI_EMIT_COORDS;
        st = compacting(w, &k);
        return st ? st : fill(w);
    case CLNZ_USE_BATCHED: /* nonzero_batched, and count_batched's kernels */
        k.emit = ABI_EMIT_COORDS;
        k.batched = 1;
        count_axes_program(w->ctx, d, nz, &r);
        st = add(w, &r);
        return st ? st : compacting(w, &k);
    case CLNZ_USE_SELECT: /* x's dtype is any of those declared */
        k.emit = ABI_EMIT_VALUES;
        for (size_t vb = 1; vb <= 8 && !st; vb *= 2)
            if (w->value_sizes & vb) {
                k.value_bytes = w->at.value_bytes = vb;
                st = compacting(w, &k);
            }
        w->at.value_bytes = 0;
        return st;
    case CLNZ_USE_WHERE:
        for (size_t vb = 1; vb <= 8 && !st; vb *= 2)
            if (w->value_sizes & vb) {
                where_program(d, nz, vb, &r);
                w->at.value_bytes = vb;
                st = add(w, &r);
            }
        w->at.value_bytes = 0;
        return st;
    case CLNZ_USE_MASK:
        mask_program(d, nz, &r);
        return add(w, &r);
    case CLNZ_USE_SCAN:
        for (int u64 = 0; u64 < 2 && !st; ++u64) {
            scan_program(u64, &r);
            st = add(w, &r);
        }
        return st;
    case CLNZ_USE_CHANNELS:
        mask_program(d, nz, &r);
        st = add(w, &r);
        return st ? st : pixel_nonzero(w);
    case CLNZ_USE_IMAGE2D: {
        int n = image_programs(nz, rs, (int)(sizeof rs / sizeof rs[0]));
        for (int i = 0; i < n && !st; ++i)
            st = add(w, &rs[i]);
        return st ? st : pixel_nonzero(w);
    }
    default:
        return CLNZ_SUCCESS;
    }
}

/* Operations whose programs do not depend on the dtype (scan: u32 and
 * u64; image2d: the image's channel type) are walked once. */
static int dtype_free(uint32_t op) { return op == CLNZ_USE_SCAN || op == CLNZ_USE_IMAGE2D; }

clnz_status variants_of(clnz_context *ctx, const clnz_uses *u, program_set *out,
                        use_point **points)
{
    clnz_uses r = uses_resolve(ctx, u);
    walk w = {ctx, out, NULL, 0, {0}, r.strategies, 0};
    for (int d = 0; d < CLNZ_DTYPE_COUNT; ++d)
        if (r.dtypes & (1u << d))
            w.value_sizes |= (uint32_t)clnz_dtype_size((clnz_dtype)d);
    clnz_status st = CLNZ_SUCCESS;
    for (int o = 0; o < 32 && !st; ++o) {
        for (int d = 0; d < CLNZ_DTYPE_COUNT && !st; ++d) {
            for (int p = 0; p < 2 && !st; ++p) {
                uint32_t op = 1u << o, pred = 1u << p;
                if (!(r.ops & op) || !(r.dtypes & (1u << d)) || !(r.predicates & pred))
                    continue;
                if (dtype_free(op) && (r.dtypes & ((1u << d) - 1)))
                    continue; /* walked at the first declared dtype */
                if (op == CLNZ_USE_SCAN && (r.predicates & (pred - 1)))
                    continue; /* no predicate either */
                w.at = (use_point){op, pred, (clnz_dtype)d, CLNZ_STRATEGY_AUTO, 0};
                st = point_programs(&w);
            }
        }
    }
    if (st || !points)
        free(w.points);
    else
        *points = w.points;
    return st;
}

void use_point_describe(const use_point *p, char *buf, size_t n)
{
    int op = __builtin_ctz(p->op), pred = __builtin_ctz(p->pred);
    int len = snprintf(buf, n, "%s", uses_bit_name(AXIS_OPS, op));
    if (!dtype_free(p->op))
        len += snprintf(buf + len, n - (size_t)len, " of %s", clnz_dtype_name(p->dtype));
    if (p->op != CLNZ_USE_SCAN)
        len += snprintf(buf + len, n - (size_t)len, ", predicate %s",
                        uses_bit_name(AXIS_PREDICATES, pred));
    if (p->value_bytes)
        len += snprintf(buf + len, n - (size_t)len, ", values of %zu byte%s", p->value_bytes,
                        p->value_bytes > 1 ? "s" : "");
    if (p->strategy != CLNZ_STRATEGY_AUTO)
        snprintf(buf + len, n - (size_t)len, ", strategy %s", clnz_strategy_name(p->strategy));
}

/* ---- the reverse: why a program is missing ---- */

/* Whether the context's calls may run strategy s (AUTO: outside them). */
static int is_candidate(const clnz_context *ctx, clnz_strategy s)
{
    clnz_strategy c[CLNZ_STRATEGY_COUNT];
    int n = strategy_candidates(ctx, c);
    for (int i = 0; i < n; ++i)
        if (c[i] == s)
            return 1;
    return s == CLNZ_STRATEGY_AUTO;
}

/* A use point that needs p: of the context's own strategies if one does,
 * else of any; 0 if none. */
static int point_of(clnz_context *ctx, const program_ref *p, use_point *at)
{
    int found = 0;
    for (int any = 0; any < 2 && !found; ++any) {
        clnz_uses all = {0};
        for (int a = 0; a < AXIS_COUNT - !any; ++a)
            clnz_uses_parse(&all, uses_axis_names[a], "all", NULL, 0);
        program_set s = {0};
        use_point *points = NULL;
        if (variants_of(ctx, &all, &s, &points) == CLNZ_SUCCESS) {
            int i = program_set_find(&s, p);
            if (i >= 0)
                *at = points[i], found = 1;
        }
        free(points);
        program_set_free(&s);
    }
    return found;
}

/* The dtypes a point needs declared, given those declared already (had):
 * its own, and for select's and where's values one of value_bytes (their
 * programs are per value size; the unsigned integer of that size where
 * none of had has it). A where of u8 on f64 values needs u8 and a dtype of
 * 8 bytes: the hint named u8 alone, whose bundle then still lacked it. */
static uint32_t point_dtypes(const use_point *at, uint32_t had)
{
    static const clnz_dtype of_size[9] = {[1] = CLNZ_U8, [2] = CLNZ_U16, [4] = CLNZ_U32,
                                          [8] = CLNZ_U64};
    uint32_t bits = 1u << at->dtype;
    if (!at->value_bytes || at->value_bytes > 8)
        return bits;
    for (int d = 0; d < CLNZ_DTYPE_COUNT; ++d)
        if (((had | bits) & (1u << d)) && clnz_dtype_size((clnz_dtype)d) == at->value_bytes)
            return bits;
    return bits | 1u << of_size[at->value_bytes];
}

/* The bundle's declared list of an axis into *bits; nonzero (and *bits 0)
 * where its manifest's list cannot be read. */
static int bundle_axis(const manifest *m, uses_axis axis, uint32_t *bits)
{
    clnz_uses had = {0};
    int bad = clnz_uses_parse(&had, uses_axis_names[axis], m->uses[axis], NULL, 0);
    *bits = bad ? 0 : *uses_field(&had, axis);
    return bad;
}

/* " --dtypes u8,f64": the bundle's list of an axis with the point's values
 * added, when it lacks one of them. */
static int widen(const manifest *m, uses_axis axis, uint32_t bits, char *buf, size_t n)
{
    uint32_t had;
    if (bundle_axis(m, axis, &had) || (had & bits) == bits)
        return 0;
    char list[300];
    uses_format(had | bits, axis, list, sizeof list);
    return snprintf(buf, n, " --%s %s", uses_axis_names[axis], list);
}

/* What the bundle has of p when it is not a binary this context can load. */
static const char *bundle_has(const manifest *m, const program_ref *p)
{
    for (int i = 0; i < m->n; ++i) {
        const manifest_entry *e = &m->entries[i];
        if (strcmp(e->file, p->file) == 0 && strcmp(e->options, p->options) == 0)
            return e->is_source ? "it holds only its source: compile that offline and put the "
                                  "binary in with `clnz bundle add`"
                                : "its binary was built from another kernel source "
                                  "(CLNZ_KERNEL_DIR?): build the bundle again";
    }
    return NULL;
}

void uses_explain_missing(clnz_context *ctx, const program_ref *p, char *buf, size_t n)
{
    use_point at;
    char what[160] = "no declared use needs it", options[400] = "";
    int known = point_of(ctx, p, &at);
    if (known)
        use_point_describe(&at, what, sizeof what);
    int len = snprintf(buf, n, "(%s): the device cannot compile (%s)", what, ctx->no_compile_reason);
    if (len < 0 || (size_t)len >= n)
        return;
    buf += len, n -= (size_t)len;
    if (!ctx->bundle) {
        if (known) {
            int k = snprintf(options, sizeof options, " --ops %s",
                             uses_bit_name(AXIS_OPS, __builtin_ctz(at.op)));
            if (!dtype_free(at.op)) {
                char list[300];
                uses_format(point_dtypes(&at, 0), AXIS_DTYPES, list, sizeof list);
                k += snprintf(options + k, sizeof options - (size_t)k, " --dtypes %s", list);
            }
            if (at.op != CLNZ_USE_SCAN)
                k += snprintf(options + k, sizeof options - (size_t)k, " --predicates %s",
                              uses_bit_name(AXIS_PREDICATES, __builtin_ctz(at.pred)));
            if (!is_candidate(ctx, at.strategy)) /* else the default has it */
                snprintf(options + k, sizeof options - (size_t)k, " --strategies auto,%s",
                         clnz_strategy_name(at.strategy));
        }
        snprintf(buf, n, " and no bundle is in use: build one with `clnz bundle build%s` and "
                 "set CLNZ_BUNDLE", options);
        return;
    }
    const manifest *m = bundle_manifest(ctx->bundle);
    const char *has = bundle_has(m, p);
    size_t o = 0;
    if (known && !has) {
        if (!dtype_free(at.op)) {
            uint32_t declared;
            bundle_axis(m, AXIS_DTYPES, &declared); /* unreadable: widen adds nothing */
            o += (size_t)widen(m, AXIS_DTYPES, point_dtypes(&at, declared), options,
                               sizeof options);
        }
        o += (size_t)widen(m, AXIS_OPS, at.op, options + o, sizeof options - o);
        if (at.op != CLNZ_USE_SCAN)
            o += (size_t)widen(m, AXIS_PREDICATES, at.pred, options + o, sizeof options - o);
        if (at.strategy != CLNZ_STRATEGY_AUTO)
            widen(m, AXIS_STRATEGIES, 1u << at.strategy, options + o, sizeof options - o);
    }
    char q[QUOTE_MAX];
    quote_name(bundle_dir(ctx->bundle), q, sizeof q);
    if (has)
        snprintf(buf, n, " and the bundle %s cannot give it: %s", q, has);
    else if (options[0])
        snprintf(buf, n, " and the bundle %s does not have it: `clnz bundle build` with%s "
                 "includes it", q, options);
    else
        snprintf(buf, n, " and the bundle %s does not have it: it was built for other uses or "
                 "strategies on this device; build it again", q);
}
