#include "origins.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* One part of an IPv4 host as the URL standard reads it: "0x" hex, a
 * leading "0" octal, else decimal. 0, or -1 when not a number. */
static int ipv4_part(const char *s, size_t n, uint64_t *v)
{
    int base = 10;
    if (n >= 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
        base = 16;
        s += 2;
        n -= 2;
    } else if (n >= 2 && s[0] == '0') {
        base = 8;
        s++;
        n--;
    }
    *v = 0;
    for (size_t i = 0; i < n; i++) {
        int d;
        char c = (char)tolower((unsigned char)s[i]);
        if (c >= '0' && c <= '9')
            d = c - '0';
        else if (base == 16 && c >= 'a' && c <= 'f')
            d = c - 'a' + 10;
        else
            return -1;
        if (d >= base)
            return -1;
        *v = *v * (uint64_t)base + (uint64_t)d;
        if (*v > 0xffffffffu)
            return -1;
    }
    return 0;
}

/* The URL standard's IPv4 parser: 1 with *addr when host (n bytes) is an
 * IPv4 address in any form, 0 when it is a name (its last label is not a
 * number), -1 when it ends in a number but is no address. */
static int ipv4_parse(const char *host, size_t n, uint32_t *addr)
{
    if (n && host[n - 1] == '.')
        n--;
    const char *last = host + n;
    while (last > host && last[-1] != '.')
        last--;
    uint64_t v;
    size_t lastlen = (size_t)(host + n - last);
    bool hexprefix = lastlen >= 2 && last[0] == '0' && (last[1] == 'x' || last[1] == 'X');
    if (lastlen == 0 || (!hexprefix && strspn(last, "0123456789") < lastlen) ||
        (hexprefix && ipv4_part(last, lastlen, &v) < 0))
        return 0;
    uint64_t parts[4];
    int np = 0;
    for (const char *p = host; p <= host + n;) {
        const char *dot = memchr(p, '.', (size_t)(host + n - p));
        size_t len = dot ? (size_t)(dot - p) : (size_t)(host + n - p);
        if (np == 4 || len == 0 || ipv4_part(p, len, &parts[np]) < 0)
            return -1;
        np++;
        if (!dot)
            break;
        p = dot + 1;
    }
    uint64_t a = 0;
    for (int i = 0; i < np - 1; i++) {
        if (parts[i] > 255)
            return -1;
        a = a << 8 | parts[i];
    }
    unsigned rest = 8u * (unsigned)(5 - np);
    if (parts[np - 1] >= (1ull << rest))
        return -1;
    *addr = (uint32_t)(a << rest | parts[np - 1]);
    return 1;
}

void origin_host_canon(char *host)
{
    size_t n = strlen(host);
    if (n > 2 && host[0] == '[' && host[n - 1] == ']') {
        char lit[ORIGIN_MAX_HOST];
        struct in6_addr a6;
        snprintf(lit, sizeof lit, "%.*s", (int)(n - 2), host + 1);
        if (inet_pton(AF_INET6, lit, &a6) != 1)
            return;
        static const unsigned char zero[12];
        bool mapped = IN6_IS_ADDR_V4MAPPED(&a6);
        /* ::a.b.c.d, but not :: and ::1, which are IPv6's own. */
        bool compat = !memcmp(a6.s6_addr, zero, 12) &&
                      (a6.s6_addr[12] | a6.s6_addr[13] | a6.s6_addr[14] | (a6.s6_addr[15] > 1));
        if (mapped || compat) {
            snprintf(host, ORIGIN_MAX_HOST, "%u.%u.%u.%u", a6.s6_addr[12], a6.s6_addr[13],
                     a6.s6_addr[14], a6.s6_addr[15]);
        } else if (inet_ntop(AF_INET6, &a6, lit, sizeof lit)) {
            snprintf(host, ORIGIN_MAX_HOST, "[%s]", lit);
        }
        return;
    }
    uint32_t a4;
    if (ipv4_parse(host, n, &a4) == 1) {
        snprintf(host, ORIGIN_MAX_HOST, "%u.%u.%u.%u", a4 >> 24, (a4 >> 16) & 255, (a4 >> 8) & 255,
                 a4 & 255);
        return;
    }
    /* One trailing dot, so that canonical stays canonical ("a.." is
     * another, invalid, name). */
    if (n > 2 && host[n - 1] == '.' && host[n - 2] != '.')
        host[n - 1] = '\0';
}

bool origin_host_is_metadata(const char *h)
{
    static const char *const named[] = {
        "metadata.google.internal", /* GCE's name for 169.254.169.254 */
        "[fd00:ec2::254]",          /* AWS over IPv6 */
        "100.100.100.200",          /* Alibaba Cloud */
        "168.63.129.16",            /* Azure's wire server */
    };
    for (size_t i = 0; i < sizeof named / sizeof named[0]; i++)
        if (!strcmp(h, named[i]))
            return true;
    unsigned a, b;
    char end;
    if (sscanf(h, "%u.%u.%*u.%*u%c", &a, &b, &end) == 2 && a == 169 && b == 254)
        return true;
    /* fe80::/10: the first group is fe80 to febf. */
    return !strncmp(h, "[fe8", 4) || !strncmp(h, "[fe9", 4) || !strncmp(h, "[fea", 4) ||
           !strncmp(h, "[feb", 4);
}

static int default_port(const char *scheme)
{
    if (!strcmp(scheme, "http") || !strcmp(scheme, "ws"))
        return 80;
    if (!strcmp(scheme, "https") || !strcmp(scheme, "wss"))
        return 443;
    return -1;
}

int url_origin_parse(const char *s, struct url_origin *o)
{
    memset(o, 0, sizeof *o);
    const char *sep = strstr(s, "://");
    if (!sep || sep == s || (size_t)(sep - s) >= sizeof o->scheme)
        return -1;
    for (size_t i = 0; s + i < sep; i++)
        o->scheme[i] = (char)tolower((unsigned char)s[i]);
    const char *auth = sep + 3;
    size_t alen = strcspn(auth, "/?#");
    /* userinfo ends at the last '@' of the authority */
    for (size_t i = alen; i > 0; i--) {
        if (auth[i - 1] == '@') {
            auth += i;
            alen -= i;
            break;
        }
    }
    size_t hlen;
    if (alen && auth[0] == '[') {
        const char *close = memchr(auth, ']', alen);
        if (!close)
            return -1;
        hlen = (size_t)(close - auth) + 1;
    } else {
        const char *colon = memchr(auth, ':', alen);
        hlen = colon ? (size_t)(colon - auth) : alen;
    }
    if (hlen == 0 || hlen >= sizeof o->host)
        return -1;
    for (size_t i = 0; i < hlen; i++)
        o->host[i] = (char)tolower((unsigned char)auth[i]);
    origin_host_canon(o->host);
    o->port = default_port(o->scheme);
    if (hlen < alen) {
        if (auth[hlen] != ':')
            return -1;
        char *end;
        long p = strtol(auth + hlen + 1, &end, 10);
        if (end == auth + hlen + 1) {
            /* "host:" is the default port */
        } else if (end != auth + alen || p < 0 || p > 65535) {
            return -1;
        } else {
            o->port = (int)p;
        }
    }
    return 0;
}

int origin_rule_parse(const char *s, struct origin_rule *r)
{
    memset(r, 0, sizeof *r);
    if (strstr(s, "://")) {
        struct url_origin o;
        if (url_origin_parse(s, &o) < 0)
            return -1;
        memcpy(r->scheme, o.scheme, sizeof r->scheme);
        memcpy(r->host, o.host, sizeof r->host);
        r->port = o.port;
        return 0;
    }
    if (!strncmp(s, "*.", 2)) {
        r->subdomains = true;
        s += 2;
    }
    size_t n = strlen(s);
    while (n && s[n - 1] == '/')
        n--;
    if (n == 0 || n >= sizeof r->host || memchr(s, '/', n) || memchr(s, '*', n))
        return -1;
    for (size_t i = 0; i < n; i++)
        r->host[i] = (char)tolower((unsigned char)s[i]);
    origin_host_canon(r->host);
    return 0;
}

/* "localhost" and its subdomains: loopback in both browsers, never DNS. */
static bool is_localhost(const char *h)
{
    size_t n = strlen(h);
    return !strcmp(h, "localhost") || (n > 10 && !strcmp(h + n - 10, ".localhost"));
}

bool origin_rule_matches(const struct origin_rule *r, const struct url_origin *o)
{
    if (r->scheme[0] && (strcmp(r->scheme, o->scheme) != 0 || r->port != o->port))
        return false;
    if (!strcmp(r->host, o->host))
        return true;
    size_t hl = strlen(o->host), rl = strlen(r->host);
    return r->subdomains && hl > rl && o->host[hl - rl - 1] == '.' &&
           !strcmp(o->host + hl - rl, r->host);
}

bool origin_rule_blocks(const struct origin_rule *r, const struct url_origin *o)
{
    if (origin_rule_matches(r, o))
        return true;
    if (r->scheme[0] && (strcmp(r->scheme, o->scheme) != 0 || r->port != o->port))
        return false;
    return (!strcmp(r->host, "127.0.0.1") || !strcmp(r->host, "[::1]")) && is_localhost(o->host);
}
