/*
 * url_policy.h - which URLs a page of ours may be sent to, judged as the
 * browser parses them.
 *
 * A CDP command that loads a URL (Page.navigate, Target.createTarget,
 * Fetch.continueRequest) is checked against an allowlist of schemes. The
 * check must see the URL the browser will load, not the raw string: the
 * URL standard strips leading and trailing C0 controls and spaces, removes
 * every tab and newline, and lowercases the scheme, so " file:///x",
 * "fi\tle:///x" and "FILE:///x" all load the file. A prefix test on the raw
 * string (what the bridge had) is beaten by each of them.
 *
 * Ownership: nothing is kept; the caller's text is only read.
 */
#ifndef TABVISOR_URL_POLICY_H
#define TABVISOR_URL_POLICY_H

#include <stdbool.h>
#include <stddef.h>

/* What may be loaded: a set of these bits. */
enum url_allow {
    URL_ALLOW_HTTP = 1u << 0,        /* http: and https: */
    URL_ALLOW_ABOUT_BLANK = 1u << 1, /* about:blank (with a query or fragment) only */
    URL_ALLOW_DATA = 1u << 2,        /* data: (an opaque origin of its own) */
    URL_ALLOW_EMPTY = 1u << 3,       /* "" (Target.createTarget: about:blank) */
};

/* The longest scheme we look at; longer ones are refused (no allowed scheme is). */
#define URL_POLICY_MAX_SCHEME 32

/* NULL when the URL (len bytes, NULs included) may be loaded under allow,
 * else a static sentence saying why not. */
const char *url_policy_check(const char *url, size_t len, unsigned allow);

/* The scheme of url as the browser reads it, lowercased, into out (at least
 * URL_POLICY_MAX_SCHEME + 1 bytes). False when url has no scheme. */
bool url_policy_scheme(const char *url, size_t len, char *out);

#endif
