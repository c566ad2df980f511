/*
 * transport.h - how a worker's CDP client reaches a browser.
 *
 * A transport moves whole CDP messages (JSON text) and nothing else; framing
 * (WebSocket frames, NUL-terminated pipe messages, relay envelopes) is its
 * own business. Implementations: pipe.c (shared mode, through the
 * supervisor's CDP bridge; dedicated mode later), ws.c (a browser's DevTools
 * WebSocket: the cdp mode to come, and tests); later relay (extension mode).
 *
 * Ownership: send() borrows msg. recv() hands the caller a malloc'd,
 * NUL-terminated buffer in *msg which the caller frees.
 */
#ifndef TABVISOR_CDP_TRANSPORT_H
#define TABVISOR_CDP_TRANSPORT_H

#include <stddef.h>

#define TRANSPORT_AGAIN 1 /* recv: no whole message buffered yet */

struct cdp_transport;

struct cdp_transport_ops {
    /* Queue and write one message; may block up to the deadline (ms, CLOCK_MONOTONIC,
     * 0 = no limit) while the socket is full. 0 or -1 (closed/error).
     * 0 means written, or queued behind a full socket when the deadline came
     * first: the rest goes out in order on later send()/recv() calls. */
    int (*send)(struct cdp_transport *t, const char *msg, size_t len, long long deadline_ms);
    /* Read what the fd has (non-blocking) and return one whole message if one
     * is complete: 0 with *msg and *len set, TRANSPORT_AGAIN, or -1 when closed/broken. */
    int (*recv)(struct cdp_transport *t, char **msg, size_t *len);
    /* True when recv() can return a message without reading the fd again. */
    int (*pending)(struct cdp_transport *t);
    int (*fd)(struct cdp_transport *t); /* poll for POLLIN */
    void (*destroy)(struct cdp_transport *t);
    /* Optional (NULL allowed): why the transport failed, for error messages;
     * "" while it works. The string lives as long as the transport. */
    const char *(*error)(struct cdp_transport *t);
};

struct cdp_transport {
    const struct cdp_transport_ops *ops;
};

/* ws.c: connect to ws://127.0.0.1:PORT/devtools/browser/ID (no Origin header).
 * Blocks until the upgrade completes or deadline_ms passes. NULL + err on failure. */
struct cdp_transport *ws_transport_connect(const char *url, long long deadline_ms, char *err,
                                           size_t errlen);

/* pipe.c: NUL-framed CDP over already-connected fds (rfd == wfd for a
 * socket). Takes ownership of both fds (closed by destroy). NULL when out of memory. */
struct cdp_transport *pipe_transport_new(int rfd, int wfd);

#endif
