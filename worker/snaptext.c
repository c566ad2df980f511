/*
 * snaptext.c - snapshot text as lines: split into lines linked to their
 * parents, counted, cut to a number of characters, hashed. The primitives
 * the diff (snapdiff.c), the lean view (snaplean.c, snapquiet.c) and the
 * responses (respond.c) share; see snaptext.h.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "snaptext.h"
#include "xalloc.h"

size_t cut_text(const char *text, size_t len, size_t max)
{
    size_t p = 0, chars = 0;
    while (p < len) {
        /* p is at the start of a character: stop before the (max+1)th. */
        if (chars == max)
            break;
        chars++;
        p++;
        while (p < len && ((unsigned char)text[p] & 0xC0) == 0x80)
            p++;
    }
    if (p >= len)
        return len;
    size_t keep = p;
    while (keep > 0 && text[keep - 1] != '\n')
        keep--;
    return keep ? keep : p;
}

size_t count_lines(const char *text)
{
    if (!*text)
        return 0;
    size_t n = 1;
    for (const char *p = text; *p; p++)
        if (*p == '\n' && p[1])
            n++;
    return n;
}

static size_t indent_of(const char *s, size_t len)
{
    size_t i = 0;
    while (i < len && s[i] == ' ')
        i++;
    return i;
}

/* Split text into lines and link each to its parent with a stack of the
 * open ancestors (indentation strictly increases along the stack). */
void lines_split(const char *text, struct lines *l)
{
    l->n = count_lines(text);
    l->start = xcalloc(l->n, sizeof *l->start);
    l->len = xcalloc(l->n, sizeof *l->len);
    l->parent = xcalloc(l->n, sizeof *l->parent);
    l->indent = xcalloc(l->n, sizeof *l->indent);
    long *stack = xcalloc(l->n, sizeof *stack);
    size_t depth = 0;
    const char *p = text;
    for (size_t i = 0; i < l->n; i++) {
        const char *nl = strchr(p, '\n');
        l->start[i] = p;
        l->len[i] = nl ? (size_t)(nl - p) : strlen(p);
        p += l->len[i] + (nl ? 1 : 0);
        size_t ind = l->indent[i] = indent_of(l->start[i], l->len[i]);
        while (depth > 0 && l->indent[stack[depth - 1]] >= ind)
            depth--;
        l->parent[i] = depth ? stack[depth - 1] : -1;
        stack[depth++] = (long)i;
    }
    free(stack);
}

void lines_free(struct lines *l)
{
    free(l->start);
    free(l->len);
    free(l->parent);
    free(l->indent);
}

uint64_t fnv1a(uint64_t h, const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++)
        h = (h ^ (unsigned char)s[i]) * 1099511628211ULL;
    return h;
}

/* See snaptext.h. */
const char *line_role_of(const char *s, size_t len, size_t *n)
{
    size_t i = 0;
    while (i < len && s[i] == ' ')
        i++;
    if (i + 2 > len || s[i] != '-' || s[i + 1] != ' ')
        return NULL;
    i += 2;
    size_t j = i;
    while (j < len && s[j] != ' ' && s[j] != ':')
        j++;
    *n = j - i;
    return j > i ? s + i : NULL;
}

/* Offset of the inline text after the line's head (`...: text`), or len when
 * there is none. The quoted name is skipped: a colon inside it is not the
 * head's end. */
size_t line_value_at(const char *s, size_t len)
{
    size_t i = 0;
    bool quoted = false;
    for (; i < len; i++) {
        if (quoted) {
            if (s[i] == '\\')
                i++;
            else if (s[i] == '"')
                quoted = false;
        } else if (s[i] == '"') {
            quoted = true;
        } else if (s[i] == ':' && i + 1 < len && s[i + 1] == ' ') {
            return i + 2;
        }
    }
    return len;
}

bool line_role_in(const struct lines *l, size_t i, const char *const *set)
{
    size_t n;
    const char *r = line_role_of(l->start[i], l->len[i], &n);
    if (!r)
        return false;
    for (const char *const *x = set; *x; x++)
        if (strlen(*x) == n && memcmp(*x, r, n) == 0)
            return true;
    return false;
}
