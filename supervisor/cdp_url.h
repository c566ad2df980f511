/*
 * cdp_url.h - the --cdp-endpoint URL of --browser-mode cdp.
 *
 * Two forms: ws://HOST[:PORT]/devtools/browser/ID (the browser's own
 * WebSocket), or http://HOST[:PORT][/] (its DevTools HTTP server, whose
 * GET /json/version names the WebSocket). No TLS, no user info: DevTools
 * speaks neither. The host is used exactly as the operator wrote it; the
 * supervisor connects nowhere else (a webSocketDebuggerUrl that names
 * another host keeps only its path).
 */
#ifndef TABVISOR_CDP_URL_H
#define TABVISOR_CDP_URL_H

#include <stdbool.h>
#include <stddef.h>

struct cdp_url {
    bool http;       /* http:// (discover the WebSocket), else ws:// */
    char host[256];  /* without brackets */
    bool bracketed;  /* an IPv6 literal: [host] in the Host header */
    int port;        /* 80 when not given */
    char path[2048]; /* ws://: the request path ("/" at least); http://: "/" */
};

/* Parse url into u. 0, or -1 with why (a sentence, no "tabvisor:"). */
int cdp_url_parse(const char *url, struct cdp_url *u, char *why, size_t whylen);

#endif
