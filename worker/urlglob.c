#include "urlglob.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Match p[pi..n) (no braces) against s[si..slen); memo marks the (pattern
 * position after a star, URL position) pairs already tried. */
static bool match_plain(const char *p, size_t n, const char *s, unsigned char *memo, size_t slen,
                        size_t pi, size_t si)
{
    while (pi < n) {
        if (p[pi] == '*') {
            bool any = pi + 1 < n && p[pi + 1] == '*';
            size_t next = pi + (any ? 2 : 1);
            for (size_t k = si;; k++) {
                size_t slot = next * (slen + 1) + k;
                if (!memo[slot]) {
                    memo[slot] = 1;
                    if (match_plain(p, n, s, memo, slen, next, k))
                        return true;
                }
                if (k == slen || (!any && s[k] == '/'))
                    return false;
            }
        }
        if (si == slen || p[pi] != s[si])
            return false;
        pi++;
        si++;
    }
    return si == slen;
}

static bool match_expanded(const char *p, const char *url, int depth)
{
    const char *open = strchr(p, '{');
    const char *close = open ? strchr(open, '}') : NULL;
    if (!open || !close) {
        size_t n = strlen(p), slen = strlen(url);
        /* One memo cell per (pattern, URL) position: a failed star attempt
         * is never retried, so hostile patterns stay linear in the cells. */
        if ((n + 1) * (slen + 1) > URLGLOB_MAX_CELLS)
            return false;
        unsigned char *memo = calloc((n + 1) * (slen + 1), 1);
        if (!memo)
            return false;
        bool ok = match_plain(p, n, url, memo, slen, 0, 0);
        free(memo);
        return ok;
    }
    if (depth > 8)
        return false;
    char buf[URLGLOB_MAX + 1];
    for (const char *alt = open + 1;;) {
        const char *end = alt;
        while (end < close && *end != ',')
            end++;
        int len = snprintf(buf, sizeof buf, "%.*s%.*s%s", (int)(open - p), p, (int)(end - alt), alt,
                           close + 1);
        if (len > 0 && (size_t)len < sizeof buf && match_expanded(buf, url, depth + 1))
            return true;
        if (end == close)
            return false;
        alt = end + 1;
    }
}

bool url_glob_match(const char *pattern, const char *url)
{
    if (!pattern || !url || strlen(pattern) > URLGLOB_MAX)
        return false;
    return match_expanded(pattern, url, 0);
}
