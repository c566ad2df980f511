/*
 * bidi_bridge.h - the shared Firefox's only WebDriver BiDi session, shared
 * by every worker (issue 23; the CDP bridge's counterpart, cdp_bridge.h).
 *
 * Firefox allows one BiDi session per browser, so the bridge holds it:
 * session.new (prompts left to the worker: unhandledPromptBehavior ignore),
 * then one browser-wide session.subscribe for the events workers follow.
 * Each worker gets one end of a socketpair and speaks NUL-framed BiDi over
 * it (worker/cdp/bidi.c maps its CDP to that):
 *
 *   - ids: the bridge renumbers each command and puts the worker's id back
 *     on the answer;
 *   - ownership: a worker may create one user context (its own cookies and
 *     storage) and remove it; the browsing contexts it creates in it, the
 *     frames inside them and the pages its pages open are its own, as are
 *     the preload scripts it adds. Every other command is judged by the BiDi
 *     policy table (proto/bidi_policy.h) against what the worker owns, and a
 *     refusal is answered here without reaching the browser;
 *   - events go only to the owner of the browsing context they name
 *     (params.context, or params.source.context for log entries); the rest
 *     are dropped;
 *   - clean-up: when a worker's socket closes, its user context is removed,
 *     which closes its tabs.
 *
 * Ownership of fds: the bridge owns the socket it is given.
 */
#ifndef TABVISOR_BIDI_BRIDGE_H
#define TABVISOR_BIDI_BRIDGE_H

struct loop;
struct bidi_bridge;

struct bidi_bridge_events {
    /* The session is up and subscribed: workers may connect. */
    void (*ready)(void *ud);
    /* The connection to the browser broke; every worker connection is
     * closed. Free the bridge afterwards, not from inside this callback. */
    void (*closed)(void *ud, const char *why);
};

/* Bridge over fd, a NUL-framed connection to Firefox's BiDi (the
 * supervisor's end of the WebSocket adapter, cdp_remote.h). Takes fd. NULL
 * on failure (fd closed too). */
struct bidi_bridge *bidi_bridge_new(struct loop *l, int fd, const struct bidi_bridge_events *ev,
                                    void *ud);
/* A new worker connection: the worker's end of a socketpair (close-on-exec;
 * the caller hands it to the child and closes its copy), or -1. label names
 * the worker in log lines. */
int bidi_bridge_connect(struct bidi_bridge *b, const char *label);
/* The proxy's session shares (TCP ports on Firefox's own 127.0.0.1,
 * firefox.h): each worker's user context is created with one of them as
 * its proxy, the least recently used free one, so one session's page holds
 * only its own share of the proxy (socks_proxy.h). Without one free (or
 * before this is called) a user context goes through the proxy's shared
 * socket, as Firefox's own traffic does. ports is copied. */
void bidi_bridge_set_shares(struct bidi_bridge *b, const int *ports, int n);
/* Ask Firefox to close itself in order (browser.close). */
void bidi_bridge_close_browser(struct bidi_bridge *b);
/* Workers connected now. */
unsigned bidi_bridge_clients(const struct bidi_bridge *b);
/* Close every connection and the fd. Safe with NULL. */
void bidi_bridge_free(struct bidi_bridge *b);

#endif
