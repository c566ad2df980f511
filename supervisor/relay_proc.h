/*
 * relay_proc.h - extension mode (--browser-mode extension): the user's
 * tabvisor-relay, joined or started (docs/extension-mode.md).
 *
 * On first demand the supervisor looks for a running relay through its
 * discovery file (relay.json in the relay's runtime dir, true only while
 * relay.lock is flock'ed); when there is none it starts tabvisor-relay
 * (beside the tabvisor binary) as its child and waits for the discovery file.
 * From then on it checks every 500 ms: a relay that went away (killed,
 * crashed, or another tabvisor's that exited) is started again, with backoff
 * (200 ms doubling to 5 s). Nothing here ever kills a process it did not
 * start: a relay that exits 4 (its port is someone else's) is reported and
 * retried later, one that exits 3 (another relay holds the lock) is joined.
 * Workers get the relay's ipc URL (--relay) instead of a browser connection.
 */
#ifndef TABVISOR_RELAY_PROC_H
#define TABVISOR_RELAY_PROC_H

#include <sys/types.h>

#include "browser.h" /* browser_ready_fn */

struct relay_proc;

struct relay_proc *relay_proc_new(struct server *srv);
void relay_proc_free(struct relay_proc *r);
/* Find or start the relay now (at server start: the extension connects to
 * it before any session exists) and keep it running from then on. */
void relay_proc_start(struct relay_proc *r);
/* Call fn once a relay is up (at once if it is), or with an error after
 * 10 s without one. */
void relay_when_ready(struct relay_proc *r, browser_ready_fn fn, void *ud);
void relay_cancel_wait(struct relay_proc *r, void *ud);
/* The relay's worker URL (ipc://DIR/relay.ipc); "" before the first relay. */
const char *relay_url(const struct relay_proc *r);
/* SIGCHLD reaping: 1 if pid was the relay we started. */
int relay_reaped(struct relay_proc *r, pid_t pid, int status);
/* SIGTERM to the relay we started (if any), waiting up to timeout_ms. */
void relay_stop(struct relay_proc *r, long long timeout_ms);

#endif
