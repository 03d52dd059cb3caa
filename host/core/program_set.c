/* program_set.c: a set of programs (kernel file and -D options), no two
 * alike: what the enumeration of a declared use fills (uses/variants.c). */
#include "core/program.h"

#include <stdlib.h>
#include <string.h>

int program_set_find(const program_set *s, const program_ref *r)
{
    for (int i = 0; i < s->n; ++i)
        if (strcmp(s->refs[i].file, r->file) == 0 && strcmp(s->refs[i].options, r->options) == 0 &&
            s->refs[i].cut == r->cut)
            return i;
    return -1;
}

int program_set_add(program_set *s, const program_ref *r)
{
    if (program_set_find(s, r) >= 0)
        return 0;
    if (s->n == s->cap) {
        int cap = s->cap ? 2 * s->cap : 16;
        program_ref *refs = realloc(s->refs, (size_t)cap * sizeof *refs);
        if (!refs)
            return -1;
        s->refs = refs;
        s->cap = cap;
    }
    s->refs[s->n++] = *r;
    return 0;
}

void program_set_free(program_set *s)
{
    free(s->refs);
    s->refs = NULL;
    s->n = s->cap = 0;
}
