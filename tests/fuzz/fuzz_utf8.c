/*
 * fuzz_utf8.c - cutting and repairing page text (proto/utf8.c) on
 * arbitrary bytes: a repaired text is valid UTF-8 and as long as the valid
 * input it came from; a cut never splits a character of valid text; a
 * dropped partial tail leaves valid text valid.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "utf8.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > 65536)
        return 0;
    const char *s = (const char *)data;
    size_t n;
    char *r = utf8_repaired(s, size, UTF8_REPLACEMENT, &n);
    if (!r || !utf8_valid(r, n) || strlen(r) != n || memchr(s, 0, size))
        goto done;
    if (utf8_valid(s, size) && (n != size || memcmp(r, s, n) != 0))
        abort();
    for (size_t max = 0; max <= n && max < 64; max++) {
        size_t k = utf8_cut(r, n, max);
        if (k > max || !utf8_valid(r, k) || (max < n && max - k > 3))
            abort();
    }
    char *t = malloc(n + 1);
    if (t) {
        memcpy(t, r, n + 1);
        t[n / 2] = '\0'; /* a cut anywhere, as snprintf makes one */
        utf8_drop_partial_tail(t);
        if (!utf8_valid(t, strlen(t)))
            abort();
        free(t);
    }
done:
    free(r);
    return 0;
}
