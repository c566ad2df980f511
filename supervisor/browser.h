/*
 * browser.h - the shared headless Chromium of --browser-mode shared.
 *
 * Started on first demand, not at server start: a client that only lists
 * tools never pays for a browser. Waiters register a callback and get the
 * browser's WebSocket endpoint (or an error) once DevToolsActivePort
 * appears. If the browser dies, its waiters and users learn it through
 * router_browser_died(); the next demand starts a new one.
 */
#ifndef TABVISOR_BROWSER_H
#define TABVISOR_BROWSER_H

#include <sys/types.h>

struct server;
struct browser;

/* endpoint is NULL on failure, with err saying why. */
typedef void (*browser_ready_fn)(struct server *srv, void *ud, const char *endpoint,
                                 const char *err);

struct browser *browser_new(struct server *srv);
void browser_free(struct browser *b); /* kills the process group if still running */
/* Call fn once the browser is ready (at once if it already is). */
void browser_when_ready(struct browser *b, browser_ready_fn fn, void *ud);
/* Forget a pending waiter (its owner is going away). */
void browser_cancel_wait(struct browser *b, void *ud);
/* SIGCHLD reaping: returns 1 if pid was the browser (state reset). */
int browser_reaped(struct browser *b, pid_t pid, int status);
/* Terminate the browser's process group and wait up to timeout_ms. */
void browser_stop(struct browser *b, long long timeout_ms);

#endif
