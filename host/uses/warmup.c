/* warmup.c: clnz_warmup, every program a declared set of uses needs built
 * (or loaded from a bundle or the program cache) and kept in the context
 * before the first call, so that no call of those uses waits for the
 * compiler. */
#include "uses/uses.h"
#include "core/error.h"

clnz_status clnz_warmup(clnz_context *ctx, const clnz_uses *uses, int *programs)
{
    CTX_ENTER(ctx);
    if (programs)
        *programs = 0;
    clnz_status st = uses_check(ctx, uses);
    if (st)
        return st;
    program_set set = {0};
    st = variants_of(ctx, uses, &set, NULL);
    for (int i = 0; i < set.n && !st; ++i) {
        st = program_warm(ctx, &set.refs[i]);
        if (!st && programs)
            ++*programs;
    }
    program_set_free(&set);
    return st;
}
