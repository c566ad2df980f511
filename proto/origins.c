#include "origins.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

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
    return 0;
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
