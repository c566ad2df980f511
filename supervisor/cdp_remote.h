/*
 * cdp_remote.h - --browser-mode cdp: one WebSocket connection to a browser
 * tabvisor did not launch, presented to the CDP bridge as the NUL-framed
 * pipe it already speaks.
 *
 * The bridge (cdp_bridge.h) is unchanged: it gets one end of a socketpair
 * as its "browser pipe", and this module, given the other end, turns each
 * NUL-terminated message into a WebSocket text frame to the browser and
 * each message from the browser back into a NUL-terminated one. So every
 * guarantee of the bridge (a browser context per worker, ownership
 * filtering, clean-up when a worker goes) holds for a remote browser too.
 *
 * Connecting blocks (name lookup, TCP, GET /json/version for an http://
 * endpoint, the upgrade), so it runs on a short-lived thread of its own and
 * the loop never waits on the network; the thread touches nothing but its
 * job. Messages written to the socketpair before the connection is up wait
 * in it. A ws:// endpoint whose browser id is stale (the browser restarted)
 * is found again through /json/version on the same host and port; the host
 * is never taken from the browser's answer, only the path.
 *
 * The browser is never closed by us: contexts are created with
 * disposeOnDetach, so closing this connection (our exit, even a SIGKILL)
 * makes the browser dispose of every context we made.
 */
#ifndef TABVISOR_CDP_REMOTE_H
#define TABVISOR_CDP_REMOTE_H

struct loop;
struct cdp_remote;

struct cdp_remote_events {
    /* The WebSocket is up (messages now flow). */
    void (*connected)(void *ud);
    /* Connecting failed, or the connection dropped; why is a sentence.
     * Called once; free the remote afterwards, but not from inside this
     * callback (defer it). */
    void (*closed)(void *ud, const char *why);
};

/* Start connecting to url (a --cdp-endpoint, already checked) and relay
 * between it and bridge_fd, our end of the bridge's socketpair (taken over:
 * closed by cdp_remote_free, or on failure here). NULL when out of memory
 * or no thread could be started. */
struct cdp_remote *cdp_remote_new(struct loop *l, const char *url, int bridge_fd,
                                  const struct cdp_remote_events *ev, void *ud);
/* The same with a connect function of the caller's instead of a URL, run
 * on the thread: it fills out (fd -1 and err on failure; see
 * cdp_connect.h) and may leave what it started in arg. arg is the remote's
 * until cdp_remote_take_arg(); arg_free frees one never taken (with the
 * remote, or at once on failure here). Firefox (browser_firefox.c) is
 * started this way: the launch takes seconds. */
struct cdp_conn_result;
typedef void (*cdp_remote_connect_fn)(void *arg, struct cdp_conn_result *out);
struct cdp_remote *cdp_remote_new_with(struct loop *l, cdp_remote_connect_fn connect, void *arg,
                                       void (*arg_free)(void *arg), int bridge_fd,
                                       const struct cdp_remote_events *ev, void *ud);
/* After the connected event: the connect function's arg, now the
 * caller's (NULL when already taken). */
void *cdp_remote_take_arg(struct cdp_remote *r);
/* Close the connection (a close frame, best effort) and free. Safe with NULL. */
void cdp_remote_free(struct cdp_remote *r);

#endif
