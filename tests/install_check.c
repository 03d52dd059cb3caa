/* install_check.c: a program that knows clnz only through pkg-config; the
 * install test copies it out of the tree and builds it with nothing but
 * `pkg-config --cflags --libs clnz`. It counts and finds the nonzeros of a
 * small array whose answer it knows, and prints the library's version. */
#include <clnz.h>
#include <stdio.h>
#include <string.h>

int main(void)
{
    static const float x[2][5] = {{0, 1.5f, 0, -2, 0}, {0, 0, 3, 0, 0.25f}};
    static const int64_t want[4][2] = {{0, 1}, {0, 3}, {1, 2}, {1, 4}};
    int64_t shape[2] = {2, 5};
    clnz_tensor t = {CLNZ_F32, 2, shape, NULL};
    clnz_context *ctx;
    char msg[256];
    if (clnz_context_create(NULL, &ctx, msg, sizeof msg) != CLNZ_SUCCESS) {
        fprintf(stderr, "install_check: %s\n", msg);
        return 1;
    }
    clnz_result r;
    clnz_status st = clnz_nonzero(ctx, &t, x, NULL, NULL, &r);
    int ok = st == CLNZ_SUCCESS && r.count == 4 && memcmp(r.indices, want, sizeof want) == 0;
    if (!ok)
        fprintf(stderr, "install_check: %s %s\n", clnz_status_string(st),
                clnz_context_message(ctx));
    clnz_result_free(&r);
    clnz_context_release(ctx);
    printf("%s %s\n", ok ? "ok" : "wrong", clnz_version_string());
    return ok ? 0 : 1;
}
