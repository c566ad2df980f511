/*
 * browser.h - one headless Chromium launched by the supervisor: the shared
 * one of --browser-mode shared, or one per session in --browser-mode
 * dedicated (workers.c owns those).
 *
 * Started on first demand, not at server start: a client that only lists
 * tools never pays for a browser. It speaks CDP over --remote-debugging-pipe
 * to its own CDP bridge (cdp_bridge.h) and listens on no port. Waiters
 * register a callback that runs once the browser answers over the pipe (or
 * fails to start); each worker then gets its own connection to the bridge
 * with browser_connect(). If the browser dies, its waiters fail and the
 * owner's browser_events.died runs; the next demand starts a new one.
 *
 * Files in the run dir are named by the browser's name: NAME-profile,
 * NAME-home, NAME-tmp, NAME.log, NAME.pid ("browser" for the shared one).
 */
#ifndef TABVISOR_BROWSER_H
#define TABVISOR_BROWSER_H

#include <stdbool.h>
#include <sys/types.h>

struct server;
struct browser;

/* err is NULL when the browser is ready, else why it is not. */
typedef void (*browser_ready_fn)(struct server *srv, void *ud, const char *err);

/* What the browser tells its owner (the router). died: the process exited
 * or its pipe broke while it was up; called from the loop. */
struct browser_events {
    void (*died)(struct server *srv, struct browser *b);
};

/* events must outlive the browser; name (copied) names its files. */
struct browser *browser_new(struct server *srv, const struct browser_events *events,
                            const char *name);
void browser_free(struct browser *b); /* kills the process group if still running */
/* Dedicated mode, its session's worker is gone: SIGKILL the browser's
 * group and reap it now, drop its waiters unheard, and after this loop
 * iteration free b and remove its files from the run dir. No event
 * follows. Safe with NULL. */
void browser_discard(struct browser *b);
/* Its connection was lost and it is being ended (until it is reaped). */
bool browser_dying(const struct browser *b);
/* Call fn once the browser is ready (at once if it already is). */
void browser_when_ready(struct browser *b, browser_ready_fn fn, void *ud);
/* A new CDP connection for a worker (the browser must be ready): an fd to
 * pass to the child, which the caller closes afterwards; -1 on failure. */
int browser_connect(struct browser *b, const char *label, const char *download_dir);
/* Forget a pending waiter (its owner is going away). */
void browser_cancel_wait(struct browser *b, void *ud);
/* SIGCHLD reaping: returns 1 if pid was the browser (state reset). */
int browser_reaped(struct browser *b, pid_t pid, int status);
/* Terminate the browser's process group and wait up to timeout_ms. */
void browser_stop(struct browser *b, long long timeout_ms);

#endif
