/*
 * fuzz_origins.c - the origin parsers (proto/origins.c) on arbitrary text:
 * URLs come from pages (every request a page makes is checked against the
 * rules) and rules from the command line. The first line of the input is a
 * rule, the rest a URL; parsed parts must be NUL-terminated, lower-case
 * hosts, ports in range, and a rule made from a URL's own origin must match
 * that URL.
 */
#include <ctype.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "origins.h"

static void check_host(const char *h)
{
    if (memchr(h, 0, ORIGIN_MAX_HOST) == NULL)
        abort();
    for (; *h; h++)
        if (isupper((unsigned char)*h))
            abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > 4096)
        return 0;
    char buf[4097];
    memcpy(buf, data, size);
    buf[size] = 0;
    char *nl = strchr(buf, '\n');
    const char *url = nl ? nl + 1 : buf;
    if (nl)
        *nl = 0;
    struct origin_rule r;
    if (origin_rule_parse(buf, &r) == 0) {
        check_host(r.host);
        if (r.scheme[0] && (r.port < -1 || r.port > 65535))
            abort();
    }
    struct url_origin o;
    if (url_origin_parse(url, &o) < 0)
        return 0;
    check_host(o.host);
    /* The canonical spelling is a fixed point (issue 36, finding 3). */
    char again[ORIGIN_MAX_HOST];
    memcpy(again, o.host, sizeof again);
    origin_host_canon(again);
    if (strcmp(again, o.host) != 0)
        abort();
    if (o.port < -1 || o.port > 65535 || !o.scheme[0])
        abort();
    /* The URL's own origin, as a rule, matches it. */
    char origin[64 + ORIGIN_MAX_HOST];
    if (o.port >= 0 && strchr(o.host, '@') == NULL && strchr(o.host, '/') == NULL) {
        snprintf(origin, sizeof origin, "%s://%s:%d", o.scheme, o.host, o.port);
        if (origin_rule_parse(origin, &r) == 0 && !origin_rule_matches(&r, &o))
            abort();
    }
    return 0;
}
