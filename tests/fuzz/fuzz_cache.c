/* fuzz_cache.c: libFuzzer target for the readers of clnz's own cache files,
 * which another process, a full disk or a user may have left in any state:
 * the tuning file (tune_store_parse, exact and vendor keys) and the
 * program-binary file (program_cache_parse), and a program bundle's
 * manifest (manifest_parse), which anyone may have edited. They must accept
 * only what they wrote and never read outside the bytes. */
#include "core/context.h"
#include "tune/tune.h"
#include "core/program.h"
#include "uses/manifest.h"

#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size)
{
    char *text = malloc(size + 1); /* the readers get NUL-terminated files */
    if (!text)
        return 0;
    memcpy(text, data, size);
    text[size] = '\0';
    device_ident id = {"Portable Computing Language", "cpu-x86", "AuthenticAMD", "5.0", "CPU"};
    tune_result r;
    int st = tune_store_parse(text, size, &id, 0, 4096, &r);
    if (st == 0)
        for (int f = 0; f < TUNE_KERNELS; ++f)
            if (!r.launch[f].work_group_size || r.launch[f].work_group_size > 4096 ||
                !r.launch[f].items_per_work_item || r.launch[f].items_per_work_item > CLNZ_MAX_ITEMS)
                abort(); /* accepted launch parameters outside the checks */
    tune_store_parse(text, size, &id, 1, 4096, &r);
    size_t len = 0;
    const unsigned char *bin = program_cache_parse(text, size, "nonzero -DX=1", &len);
    if (bin && (bin < (const unsigned char *)text || bin + len > (const unsigned char *)text + size))
        abort();
    manifest m;
    char err[300];
    if (manifest_parse(text, size, &m, err, sizeof err) == 0) {
        for (int i = 0; i < m.n; ++i)
            if (!m.entries[i].size || !kernel_source_embedded(m.entries[i].file))
                abort(); /* accepted an entry the checks refuse */
        manifest_free(&m);
    }
    free(text);
    return 0;
}
