/*
 * cdp_connect.h - open a WebSocket to a --cdp-endpoint, blocking (run it
 * off the loop: cdp_remote.c does, on a thread).
 *
 * http://HOST:PORT: GET /json/version there, take the path of its
 * webSocketDebuggerUrl, and upgrade on HOST:PORT. ws://HOST:PORT/PATH:
 * upgrade on PATH; if the browser refuses it (a stale browser id after a
 * restart), discover the path as for http://. The host and port are always
 * the operator's: the browser's answer never sends us elsewhere.
 */
#ifndef TABVISOR_CDP_CONNECT_H
#define TABVISOR_CDP_CONNECT_H

#include <stddef.h>

#include "cdp_url.h"

struct cdp_conn_result {
    int fd;      /* the upgraded socket (non-blocking, close-on-exec), or -1 */
    char *extra; /* malloc'd bytes read past the upgrade response (frames), or NULL */
    size_t extra_len;
    char err[256]; /* why fd is -1 */
};

/* Connect to u before deadline_ms (CLOCK_MONOTONIC ms). Fills out; the
 * caller owns out->fd and out->extra. */
void cdp_connect(const struct cdp_url *u, long long deadline_ms, struct cdp_conn_result *out);

/* The WebSocket upgrade on path over fd, a connection to u's host already
 * made (taken: closed on failure). 0 with out->fd, 1 when the server
 * refused the upgrade, -1 on other errors (out->err). */
int cdp_upgrade_on(int fd, const struct cdp_url *u, const char *path, long long deadline_ms,
                   struct cdp_conn_result *out);

#endif
