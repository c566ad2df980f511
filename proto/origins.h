/*
 * origins.h - origin rules of --allowed-origins / --blocked-origins, and the
 * origin of a URL. Parsed by the supervisor when it reads its flags (so a
 * bad entry stops it at start) and by each worker, which applies them
 * (worker/netpolicy.c).
 *
 * An entry with a scheme ("https://example.com", "http://a:8080") is one
 * origin: scheme, host and port must all match (default ports filled in).
 * An entry without ("example.com") is a host on any scheme and port;
 * "*.example.com" also takes every subdomain.
 */
#ifndef TABVISOR_ORIGINS_H
#define TABVISOR_ORIGINS_H

#include <stdbool.h>

#define ORIGIN_MAX_HOST 256

struct origin_rule {
    char scheme[16]; /* "": a host rule, any scheme and port */
    char host[ORIGIN_MAX_HOST];
    int port;
    bool subdomains; /* "*.example.com" */
};

/* The parts of a URL a rule looks at. */
struct url_origin {
    char scheme[16];
    char host[ORIGIN_MAX_HOST]; /* lower-cased; IPv6 keeps its brackets */
    int port;                   /* the scheme's default when the URL names none; -1 unknown */
};

/* Split scheme://[user@]host[:port][/...]. 0, or -1 when s has no authority
 * (data:, blob:, about:) or is malformed. */
int url_origin_parse(const char *s, struct url_origin *o);
/* 0, or -1 when s is not a valid entry. */
int origin_rule_parse(const char *s, struct origin_rule *r);
bool origin_rule_matches(const struct origin_rule *r, const struct url_origin *o);

#endif
