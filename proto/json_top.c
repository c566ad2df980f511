#include "json_top.h"

#include <string.h>

static size_t skip_ws(const char *s, size_t n, size_t i)
{
    while (i < n && (s[i] == ' ' || s[i] == '\t' || s[i] == '\n' || s[i] == '\r'))
        i++;
    return i;
}

/* s[i] is '"': the index just past the closing quote, or 0 when unterminated. */
static size_t skip_string(const char *s, size_t n, size_t i)
{
    for (i++; i < n; i++) {
        if (s[i] == '\\')
            i++;
        else if (s[i] == '"')
            return i + 1;
        else if ((unsigned char)s[i] < 0x20)
            return 0;
    }
    return 0;
}

/* Skip one value starting at s[i]: the index past it, or 0 when malformed. */
static size_t skip_value(const char *s, size_t n, size_t i)
{
    if (i >= n)
        return 0;
    if (s[i] == '"')
        return skip_string(s, n, i);
    if (s[i] == '{' || s[i] == '[') {
        int depth = 0;
        while (i < n) {
            char c = s[i];
            if (c == '"') {
                i = skip_string(s, n, i);
                if (!i)
                    return 0;
                continue;
            }
            if (c == '{' || c == '[') {
                if (++depth > JSON_TOP_MAX_DEPTH)
                    return 0;
            } else if (c == '}' || c == ']') {
                if (--depth == 0)
                    return i + 1;
            }
            i++;
        }
        return 0;
    }
    /* Number or literal: up to the next separator. */
    size_t start = i;
    while (i < n && s[i] != ',' && s[i] != '}' && s[i] != ']' && s[i] != ' ' && s[i] != '\n' &&
           s[i] != '\t' && s[i] != '\r' && s[i] != '"' && s[i] != '{' && s[i] != '[' && s[i] != ':')
        i++;
    return i > start ? i : 0;
}

static int parse_id(const char *s, size_t a, size_t b, long long *out)
{
    size_t i = a;
    int neg = 0;
    if (i < b && s[i] == '-') {
        neg = 1;
        i++;
    }
    if (i == b || b - i > 16)
        return -1;
    long long v = 0;
    for (; i < b; i++) {
        if (s[i] < '0' || s[i] > '9')
            return -1;
        v = v * 10 + (s[i] - '0');
    }
    *out = neg ? -v : v;
    return 0;
}

static int key_is(const char *s, size_t ka, size_t kb, const char *name)
{
    size_t len = strlen(name);
    return kb - ka == len && memcmp(s + ka, name, len) == 0;
}

int json_top_scan(const char *s, size_t n, struct json_top *t)
{
    memset(t, 0, sizeof *t);
    int seen_id = 0, seen_method = 0, seen_session = 0;
    size_t i = skip_ws(s, n, 0);
    if (i >= n || s[i] != '{')
        return -1;
    i = skip_ws(s, n, i + 1);
    if (i < n && s[i] == '}')
        return skip_ws(s, n, i + 1) == n ? 0 : -1;
    for (;;) {
        if (i >= n || s[i] != '"')
            return -1;
        size_t kend = skip_string(s, n, i);
        if (!kend)
            return -1;
        size_t ka = i + 1, kb = kend - 1; /* key text without quotes */
        /* An escaped top-level key ("i\u0064") would be "id" to the browser
         * and not to us; nothing we route needs one. */
        if (memchr(s + ka, '\\', kb - ka))
            return -1;
        i = skip_ws(s, n, kend);
        if (i >= n || s[i] != ':')
            return -1;
        i = skip_ws(s, n, i + 1);
        size_t va = i, vb = skip_value(s, n, i);
        if (!vb)
            return -1;
        if (key_is(s, ka, kb, "id")) {
            if (seen_id++ || parse_id(s, va, vb, &t->id) < 0)
                return -1;
            t->id_start = va;
            t->id_end = vb;
        } else if (key_is(s, ka, kb, "method")) {
            if (seen_method++)
                return -1;
            if (s[va] == '"') {
                t->method = s + va + 1;
                t->method_len = vb - va - 2;
                if (memchr(t->method, '\\', t->method_len))
                    return -1;
            }
        } else if (key_is(s, ka, kb, "sessionId")) {
            if (seen_session++)
                return -1;
            if (s[va] == '"') {
                t->session = s + va + 1;
                t->session_len = vb - va - 2;
                if (memchr(t->session, '\\', t->session_len))
                    return -1;
            }
        }
        i = skip_ws(s, n, vb);
        if (i < n && s[i] == ',') {
            i = skip_ws(s, n, i + 1);
            continue;
        }
        if (i < n && s[i] == '}')
            return skip_ws(s, n, i + 1) == n ? 0 : -1;
        return -1;
    }
}
