/*
 * fuzz_snapshot_text.c - the line-level work on snapshot text (snapdiff.c,
 * snaplean.c) on arbitrary bytes. Snapshot text carries what pages put in
 * names and values, so every line shape must be survived: the diff of two
 * texts and the lean view of each, with a budget from the input. The input
 * is split at its first NUL byte into the previous and the current text;
 * its first byte picks the budget. A lean view without a budget never holds
 * more lines than its text plus one note per line. Each line of the current
 * text also goes through browser_find's cut around a match (anywhere, from
 * the budget byte), which never adds a line break or more than two "…".
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "worker.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1 || size > 65536)
        return 0;
    size_t budget = (size_t)data[0] * 16;
    char *buf = malloc(size + 1);
    if (!buf)
        return 0;
    memcpy(buf, data + 1, size - 1);
    buf[size - 1] = 0;
    const char *prev = buf;
    size_t plen = strlen(buf);
    const char *cur = plen + 1 < size ? buf + plen + 1 : "";

    size_t changed, removed, elided;
    char *gone;
    char *d = snapshot_diff(prev, cur, &gone, &changed, &removed);
    char *lean_d = snapshot_lean(d, budget, &elided);
    char *lean_g = snapshot_lean(gone, budget / 2, NULL);
    char *whole = snapshot_lean(cur, 0, NULL);
    if (count_lines(whole) > 2 * count_lines(cur) + 1)
        abort();
    char *folded = snapshot_lean(cur, budget, NULL);
    for (const char *p = cur; *p;) {
        size_t n = strcspn(p, "\n");
        struct sb b = {0};
        long at = n ? (long)(data[0] % (n + 1)) : -1;
        lean_line_around(p, n, at == (long)n ? -1 : at, (size_t)data[0] % 7, &b);
        if (b.p && (strchr(b.p, '\n') || b.len > n + 2 * strlen("…")))
            abort();
        free(b.p);
        p += n + (p[n] == '\n');
    }
    free(d);
    free(gone);
    free(lean_d);
    free(lean_g);
    free(whole);
    free(folded);
    free(buf);
    return 0;
}
