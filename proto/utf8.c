/* utf8.c - see utf8.h. */
#include "utf8.h"

#include <stdlib.h>
#include <string.h>

size_t utf8_seq_len(const char *str, size_t len)
{
    const unsigned char *s = (const unsigned char *)str;
    if (len == 0)
        return 0;
    if (s[0] < 0x80)
        return 1;
    size_t n;
    unsigned cp, min;
    if ((s[0] & 0xE0) == 0xC0) {
        n = 2, cp = s[0] & 0x1Fu, min = 0x80;
    } else if ((s[0] & 0xF0) == 0xE0) {
        n = 3, cp = s[0] & 0x0Fu, min = 0x800;
    } else if ((s[0] & 0xF8) == 0xF0) {
        n = 4, cp = s[0] & 0x07u, min = 0x10000;
    } else {
        return 0;
    }
    if (len < n)
        return 0;
    for (size_t i = 1; i < n; i++) {
        if ((s[i] & 0xC0) != 0x80)
            return 0;
        cp = cp << 6 | (s[i] & 0x3Fu);
    }
    if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF))
        return 0;
    return n;
}

bool utf8_valid(const char *s, size_t len)
{
    for (size_t i = 0; i < len;) {
        size_t n = utf8_seq_len(s + i, len - i);
        if (!n)
            return false;
        i += n;
    }
    return true;
}

size_t utf8_cut(const char *s, size_t len, size_t max)
{
    if (len <= max)
        return len;
    /* Back off the continuation bytes of the character max falls in. */
    size_t keep = max;
    while (keep > 0 && ((unsigned char)s[keep] & 0xC0) == 0x80 && max - keep < 3)
        keep--;
    return keep;
}

void utf8_drop_partial_tail(char *s)
{
    size_t len = strlen(s);
    /* The last lead byte, at most three bytes back. */
    size_t i = len;
    while (i > 0 && len - i < 4 && ((unsigned char)s[i - 1] & 0xC0) == 0x80)
        i--;
    if (i == 0 || ((unsigned char)s[i - 1] & 0x80) == 0)
        return;
    if (utf8_seq_len(s + i - 1, len - (i - 1)) != len - (i - 1))
        s[i - 1] = '\0';
}

char *utf8_repaired(const char *s, size_t len, const char *replacement, size_t *outlen)
{
    size_t rl = strlen(replacement);
    size_t cap = len * (rl > 1 ? rl : 1) + 1;
    char *out = malloc(cap);
    if (!out)
        return NULL;
    size_t o = 0;
    for (size_t i = 0; i < len;) {
        size_t n = utf8_seq_len(s + i, len - i);
        if (n) {
            memcpy(out + o, s + i, n);
            o += n;
            i += n;
        } else {
            memcpy(out + o, replacement, rl);
            o += rl;
            i++;
        }
    }
    out[o] = '\0';
    *outlen = o;
    return out;
}
