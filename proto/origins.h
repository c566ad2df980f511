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
 *
 * Hosts are compared in one canonical spelling, the one browsers connect
 * to (issue 36, finding 3): an IPv4 address in any of the URL standard's
 * forms ("0x7f.1", "2130706433", "127.0.0.1.") as a dotted quad; an
 * IPv4-mapped or IPv4-compatible IPv6 literal ("[::ffff:127.0.0.1]",
 * "[::ffff:7f00:1]") as that IPv4 address; other IPv6 literals compressed
 * ("[0:0::1]" is "[::1]"); one trailing dot of a name dropped ("fast.test."
 * is "fast.test"). A blocked rule naming the loopback address 127.0.0.1 or
 * [::1] also blocks "localhost" and its subdomains, which both browsers
 * send there without asking DNS (origin_rule_blocks); an allowed one
 * allows its own origin only.
 *
 * What a host rule cannot stop: another name of the same server (a DNS
 * name that resolves to a blocked address). Firefox's proxy matches rules
 * naming an address against the address it connects to; Chromium resolves
 * names itself, after the rules were applied. The allowlist is the safe
 * tool (README, Security).
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
/* For --blocked-origins: matches, or o is another name of the server r
 * names (localhost for a loopback rule). */
bool origin_rule_blocks(const struct origin_rule *r, const struct url_origin *o);

/* host (lower-case, NUL-terminated, in a buffer of ORIGIN_MAX_HOST) in the
 * canonical spelling above, in place. url_origin_parse and
 * origin_rule_parse already call it; for hosts from elsewhere (a SOCKS
 * request, an address connected to). */
void origin_host_canon(char *host);

/* Whether a canonical host is an address where a cloud's metadata service
 * hands out credentials: link-local (169.254.0.0/16, fe80::/10), GCE's
 * metadata name, AWS's IPv6 endpoint fd00:ec2::254, Alibaba's
 * 100.100.100.200 and Azure's 168.63.129.16. Refused unless
 * --allow-link-local. */
bool origin_host_is_metadata(const char *host);

#endif
