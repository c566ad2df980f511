/*
 * transport.h - how a worker's CDP client reaches a browser.
 *
 * A transport moves whole CDP messages (JSON text) and nothing else; framing
 * (WebSocket frames, NUL-terminated pipe messages, relay envelopes) is its
 * own business. Implementations: pipe.c (shared mode, through the
 * supervisor's CDP bridge; dedicated mode later), ws.c (a browser's DevTools
 * WebSocket: the cdp mode to come, and tests); relay.c (extension mode).
 *
 * Ownership: send() borrows msg. recv() hands the caller a malloc'd,
 * NUL-terminated buffer in *msg which the caller frees.
 *
 * A transport that works in the worker's own process on trees (bidi.c, the
 * map to Firefox's BiDi) also takes and gives JSON trees (send_json,
 * recv_json), so no message is turned into text only to be parsed back in
 * the same process.
 */
#ifndef TABVISOR_CDP_TRANSPORT_H
#define TABVISOR_CDP_TRANSPORT_H

#include <stdbool.h>
#include <stddef.h>

#include <jansson.h>

/* Larger commands are refused here rather than by the transport, where a
 * failed send means a dead connection. Matches ws.c's message cap. */
#define CDP_MAX_COMMAND (256u * 1024 * 1024)

#define TRANSPORT_AGAIN 1     /* recv: no whole message buffered yet */
#define TRANSPORT_TOO_BIG (-2) /* send_json: the command is over CDP_MAX_COMMAND (error() says) */

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
    /* Optional, both or neither: send() and recv() on trees. send_json
     * borrows msg (a command: id, method, sessionId, params); 0, -1 or
     * TRANSPORT_TOO_BIG. recv_json gives a new reference in *msg: 0,
     * TRANSPORT_AGAIN or -1, as recv(). */
    int (*send_json)(struct cdp_transport *t, const json_t *msg, long long deadline_ms);
    int (*recv_json)(struct cdp_transport *t, json_t **msg);
};

struct cdp_transport {
    const struct cdp_transport_ops *ops;
};

/* ws.c: connect to ws://127.0.0.1:PORT/devtools/browser/ID (no Origin header).
 * Blocks until the upgrade completes or deadline_ms passes. NULL + err on failure. */
struct cdp_transport *ws_transport_connect(const char *url, long long deadline_ms, char *err,
                                           size_t errlen);

/* ws.c: the same over fd, a TCP connection already made (taken, closed on
 * failure too): a browser's WebSocket reached from where the caller is not
 * (Firefox in its own network namespace, supervisor/firefox.c). url gives
 * the Host and path of the upgrade. */
struct cdp_transport *ws_transport_adopt(int fd, const char *url, long long deadline_ms, char *err,
                                         size_t errlen);

/* pipe.c: NUL-framed CDP over already-connected fds (rfd == wfd for a
 * socket). Takes ownership of both fds (closed by destroy). NULL when out of memory. */
struct cdp_transport *pipe_transport_new(int rfd, int wfd);

/* relay.c (extension mode): CDP over tabvisor-relay's nng pair1 socket at
 * url, as session session_id (docs/extension-mode.md). Dials in the
 * background and never fails for the relay's absence: commands wait up to
 * 5 s for it, then fail with CDP_ERR_EXTENSION_NOT_CONNECTED. NULL + err
 * only when the socket cannot be made. */
struct cdp_transport *relay_transport_new(const char *url, const char *session_id,
                                          const char *proof, char *err, size_t errlen);
/* How many times the link to the user's browser broke (relay connection
 * lost, or the relay said the extension went away). */
unsigned relay_transport_breaks(struct cdp_transport *t);
/* Connected and relay-hello answered. */
bool relay_transport_ready(struct cdp_transport *t);
/* True once after a reconnect to a relay that did not know our session (it
 * was restarted): our tabs are gone. */
bool relay_transport_take_reset(struct cdp_transport *t);
/* relay-bye (the relay closes our tabs now, not after its grace period);
 * waits up to 1 s for the answer. */
void relay_transport_bye(struct cdp_transport *t);

/* bidi.c (Firefox): CDP to the worker's client, WebDriver BiDi over inner
 * (the pipe to the supervisor's BiDi bridge), mapped by bidi_map.h;
 * url_check (may be NULL) judges navigations (bidi_map_set_url_check).
 * Takes inner (destroyed with it, or at once on failure). NULL when out of
 * memory. */
struct cdp_transport *bidi_transport_new(struct cdp_transport *inner,
                                         const char *(*url_check)(const char *url));

/* The first argument of the console.debug entry with which a page on
 * Firefox reports a file chooser (worker/firefox_page.c); the BiDi map turns
 * it into Page.fileChooserOpened. */
#define FIREFOX_CHOOSER_MARK "__tabvisor:file-chooser"

/* CDP error codes the relay transport answers with (never Chromium's). */
#define CDP_ERR_EXTENSION_NOT_CONNECTED (-32090)
#define CDP_ERR_NOT_SUPPORTED (-32091)
#define CDP_ERR_TAB_NOT_FOUND (-32092)
#define CDP_ERR_RELAY (-32093) /* any other refusal of the relay or the extension */
/* A WebDriver BiDi error (Firefox): its error code ("no such frame") leads
 * cdp_last_error()'s text. */
#define CDP_ERR_BIDI (-32094)

#endif
