/*
 * cdp_bridge.h - the shared Chromium's only DevTools connection, shared by
 * every worker.
 *
 * CDP has no authentication, so a DevTools TCP port on 127.0.0.1 would hand
 * every local user the browser, its sessions and our account (issue 7). The
 * shared browser therefore runs with --remote-debugging-pipe: it reads CDP
 * commands on its fd 3 and writes answers and events on its fd 4, NUL-framed,
 * and no socket of the browser listens anywhere. The supervisor holds the
 * other ends and runs this bridge in its loop. Each worker gets one end of a
 * socketpair at exec (cdp_bridge_connect) and speaks the same NUL-framed CDP
 * over it, as if it had the browser to itself:
 *
 *   - command ids: each worker numbers its commands as it likes; the bridge
 *     gives each a browser-wide id and puts the worker's id back on the answer;
 *   - ownership: the browser contexts, targets and (flattened) sessions a
 *     worker creates or attaches to are its own. Commands on a session it does
 *     not own, and browser-level commands other than the few a session needs
 *     (create/dispose its context, create/attach/close its targets), are
 *     answered with an error and never reach the browser. Events go only to
 *     the owner of their session or target; the rest are dropped;
 *   - popups: the bridge itself turns on Target.setDiscoverTargets and
 *     Target.setAutoAttach (pages only, each new one paused until resumed)
 *     once, at browser level. A page a page opens (window.open, a
 *     target=_blank link: it has an opener) is handed, still paused, to the
 *     owner of its browser context as that worker's target and session, so
 *     the worker sets it up before it loads anything; other workers never
 *     hear of it. Any other new page (one a worker created) is resumed and
 *     detached from the bridge at once. Discovery events (targetCreated,
 *     targetInfoChanged, targetDestroyed) go to the owner of the target or
 *     of its context only;
 *   - clean-up: when a worker's socket closes (it exited or crashed), its
 *     contexts are disposed, which closes its pages. This replaces
 *     disposeOnDetach, which keys on the whole connection.
 *
 * Routing reads only the top-level "id", "sessionId" and "method" of each
 * message (json_top.h); a message is parsed as a whole only for the few
 * Target.* commands, answers and events whose contents carry ownership.
 */
#ifndef TABVISOR_CDP_BRIDGE_H
#define TABVISOR_CDP_BRIDGE_H

struct loop;
struct cdp_bridge;

struct cdp_bridge_events {
    /* The browser answered its first command: workers may connect. */
    void (*ready)(void *ud);
    /* The pipe to the browser broke (it exited, or stopped reading). Every
     * worker connection has been closed; call cdp_bridge_free() next, but not
     * from inside this callback (defer it). */
    void (*closed)(void *ud, const char *why);
};

/*
 * Start bridging over the browser's pipe: to_browser is the write end of the
 * pipe the browser reads as fd 3, from_browser the read end of the one it
 * writes as fd 4. The bridge takes ownership of both fds (it makes them
 * non-blocking and closes them in cdp_bridge_free()). NULL on failure (the
 * fds are closed then too).
 */
struct cdp_bridge *cdp_bridge_new(struct loop *l, int to_browser, int from_browser,
                                  const struct cdp_bridge_events *ev, void *ud);
/*
 * A persistent profile (--user-data-dir, one session): a worker's
 * Target.createBrowserContext is answered with the browser's default
 * context, whose cookies and storage are the profile's; its disposal, and
 * the worker's going, close the worker's pages instead. Call
 * right after cdp_bridge_new(); ready then waits until that context's id
 * is known.
 */
void cdp_bridge_use_default_context(struct cdp_bridge *b);
/* Ask the browser to close itself in order (Browser.close), writing its
 * profile out; only for a browser we launched. The command is small and
 * written at once unless the pipe is full. */
void cdp_bridge_close_browser(struct cdp_bridge *b);
/*
 * A new worker connection. Returns the worker's end of a socketpair (close-on
 * -exec; the caller hands it to the child and then closes its copy), or -1.
 * label names the worker in log lines (no secrets: it reaches only stderr).
 */
int cdp_bridge_connect(struct cdp_bridge *b, const char *label, const char *download_dir);
/* Counters for /metrics and tests. */
struct cdp_bridge_stats {
    unsigned clients;
    unsigned long long to_browser, from_browser, refused, dropped;
};
void cdp_bridge_stats(const struct cdp_bridge *b, struct cdp_bridge_stats *out);
/* Close every connection and both pipe fds. Safe with NULL. */
void cdp_bridge_free(struct cdp_bridge *b);

#endif
