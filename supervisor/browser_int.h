/*
 * browser_int.h - a browser's state, shared by browser.c (Chromium, the
 * common life cycle) and browser_firefox.c (Firefox's launch and its BiDi
 * bridge). Not for other files: browser.h is the interface.
 */
#ifndef TABVISOR_BROWSER_INT_H
#define TABVISOR_BROWSER_INT_H

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "browser.h"

struct ff_launch;
struct loop;

#define BROWSER_START_TIMEOUT_MS 30000
#define MAX_WAITERS 1024
/* A launched browser that ends itself (not SIGKILLed) this soon after its
 * start died young: the
 * next start backs off (250 ms, doubling, up to 4 s), and once
 * BROWSER_GIVE_UP young deaths in a row have happened, demands made while
 * the back-off lasts fail at once with the reason instead of waiting. A
 * Chromium that cannot run (a missing capability, a broken profile) would
 * otherwise be restarted hundreds of times while a call waits out its
 * timeout. */
#define BROWSER_YOUNG_MS 10000
#define BROWSER_GIVE_UP 3

/* DYING: the connection to a launched browser is gone and the browser is
 * killed, but not reaped yet. Under load that window is long enough for a
 * new session's worker to be started against the dead browser and fail with
 * "could not connect to the browser"; demands made in it wait for the next
 * browser instead, which the reaping starts. */
enum browser_state { BROWSER_DOWN, BROWSER_STARTING, BROWSER_READY, BROWSER_DYING };

struct waiter {
    browser_ready_fn fn;
    void *ud;
};

struct browser {
    struct server *srv;
    const struct browser_events *events;
    enum browser_state state;
    pid_t pid;
    long long started;
    uint64_t start_timer;
    struct cdp_bridge *bridge;
    /* --browser-mode cdp: no process; the bridge's pipe leads to a remote
     * browser's WebSocket through this. */
    struct cdp_remote *remote;
    /* --browser firefox: its BiDi bridge (remote then carries the WebSocket
     * to it, its launch run on remote's thread) and, once it is up, what
     * was launched (ff->ff.holder is pid). */
    struct bidi_bridge *bidi;
    struct ff_launch *ff;
    unsigned failures;      /* attempts failed, or browsers died young, in a row */
    long long next_attempt; /* mono ms before which no new attempt starts */
    uint64_t retry_timer;
    char name[32];
    char profile[PATH_MAX];
    struct waiter waiters[MAX_WAITERS];
    size_t nwaiters;
};

/* browser.c: the life cycle both browsers share. */
void browser_now_ready(struct browser *b);
void browser_notify_waiters(struct browser *b, const char *err);
void browser_back_off(struct browser *b);
void browser_write_pidfile(struct browser *b);
void browser_on_start_timeout(struct loop *l, void *ud);

/* browser_firefox.c */
int browser_start_firefox(struct browser *b);
/* Stop Firefox (grace_ms for it to close), reap its holder, remove its
 * profile; the bridge and connection are freed after this iteration. */
void browser_stop_firefox(struct browser *b, long long grace_ms);
/* Its holder was reaped: remove its profile and forget it. */
void browser_firefox_reaped(struct browser *b);
/* Its bridge and connection, freed after this loop iteration. */
void browser_drop_firefox_link(struct browser *b);

#endif
