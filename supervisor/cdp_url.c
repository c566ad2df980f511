/*
 * cdp_url.c - parse and check a --cdp-endpoint URL (cdp_url.h).
 */
#include "cdp_url.h"

#include <stdio.h>
#include <string.h>
#include <strings.h>

static int fail(char *why, size_t len, const char *msg, const char *url)
{
    snprintf(why, len, "%s (in '%.120s')", msg, url);
    return -1;
}

static bool host_char(char ch)
{
    return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
           ch == '.' || ch == '-' || ch == '_';
}

int cdp_url_parse(const char *url, struct cdp_url *u, char *why, size_t whylen)
{
    memset(u, 0, sizeof *u);
    const char *p;
    if (strncasecmp(url, "ws://", 5) == 0) {
        p = url + 5;
    } else if (strncasecmp(url, "http://", 7) == 0) {
        p = url + 7;
        u->http = true;
    } else if (strncasecmp(url, "wss://", 6) == 0 || strncasecmp(url, "https://", 8) == 0) {
        return fail(why, whylen, "TLS is not supported: DevTools serves plain ws:// and http://",
                    url);
    } else {
        return fail(why, whylen, "wants ws://HOST:PORT/devtools/browser/ID or http://HOST:PORT",
                    url);
    }
    size_t alen = strcspn(p, "/?#");
    if (memchr(p, '@', alen))
        return fail(why, whylen, "user info in the URL is not supported", url);
    const char *host = p, *hend, *rest;
    if (*p == '[') {
        host = p + 1;
        hend = memchr(host, ']', alen ? alen - 1 : 0);
        if (!hend)
            return fail(why, whylen, "unterminated [ in the host", url);
        rest = hend + 1;
        u->bracketed = true;
        for (const char *q = host; q < hend; q++)
            if (!(host_char(*q) || *q == ':'))
                return fail(why, whylen, "bad IPv6 host", url);
    } else {
        hend = memchr(p, ':', alen);
        if (!hend)
            hend = p + alen;
        rest = hend;
        for (const char *q = host; q < hend; q++)
            if (!host_char(*q))
                return fail(why, whylen, "bad character in the host", url);
    }
    size_t hlen = (size_t)(hend - host);
    if (hlen == 0)
        return fail(why, whylen, "a host is required", url);
    if (hlen >= sizeof u->host)
        return fail(why, whylen, "the host is too long", url);
    memcpy(u->host, host, hlen);
    u->port = 80;
    if (rest < p + alen) {
        if (*rest != ':' || rest + 1 == p + alen)
            return fail(why, whylen, "bad port", url);
        long port = 0;
        for (const char *q = rest + 1; q < p + alen; q++) {
            if (*q < '0' || *q > '9' || port > 65535)
                return fail(why, whylen, "bad port", url);
            port = port * 10 + (*q - '0');
        }
        if (port < 1 || port > 65535)
            return fail(why, whylen, "port out of range (1-65535)", url);
        u->port = (int)port;
    }
    const char *path = p + alen;
    if (*path && *path != '/')
        return fail(why, whylen, "query or fragment without a path", url);
    if (strlen(path) >= sizeof u->path)
        return fail(why, whylen, "the path is too long", url);
    /* The path goes verbatim into a request line. */
    for (const char *q = path; *q; q++)
        if ((unsigned char)*q <= 0x20 || (unsigned char)*q >= 0x7f)
            return fail(why, whylen, "bad character in the path", url);
    if (u->http && *path && strcmp(path, "/") != 0)
        return fail(why, whylen,
                    "an http:// endpoint is HOST:PORT only (its /json/version is read)", url);
    snprintf(u->path, sizeof u->path, "%s", *path ? path : "/");
    return 0;
}
