/*
 * workers.h - the supervisor's side of worker processes: spawn, handshake,
 * message intake, stop and reap. One worker serves one browser session.
 *
 * Lifecycle: WAIT_BROWSER -> (spawn) STARTING -> HELLO received, CONFIG sent
 * -> READY <-> BUSY -> STOPPING -> reaped. Every transition its owner cares
 * about is reported through the owner's worker_events table (the router's
 * for session workers); the worker struct is freed (deferred) after
 * events->exited returns.
 */
#ifndef TABVISOR_WORKERS_H
#define TABVISOR_WORKERS_H

#include <stdbool.h>
#include <stdint.h>
#include <limits.h>
#include <sys/types.h>
#include <jansson.h>

#include "channel.h"
#include "sessions.h"

struct server;
struct worker;
struct proto_msg;

/* What a worker tells its owner. Called from the loop, only while the
 * worker has an owner (worker_stop() detaches it, then only nothing more).
 * ready: the worker answered CONFIG (error NULL) or will never run (error
 * says why). message: every message but HELLO/READY/LOG/HEARTBEAT; msg is
 * borrowed for the call. exited: the process was reaped; w is freed after. */
struct worker_events {
    void (*ready)(struct server *srv, struct worker *w, const char *error);
    void (*message)(struct server *srv, struct worker *w, struct proto_msg *msg);
    void (*exited)(struct server *srv, struct worker *w, int status);
};

enum worker_state {
    W_WAIT_BROWSER, /* waiting for its browser to be ready */
    W_STARTING,     /* process started, no HELLO yet */
    W_CONFIGURING,  /* CONFIG sent, no READY yet */
    W_READY,        /* idle */
    W_BUSY,         /* running a call */
    W_STOPPING,     /* SHUTDOWN sent or killed; waiting to reap */
};

struct worker {
    struct server *srv;
    const struct worker_events *events; /* the owner's callbacks */
    void *owner; /* owner's per-worker state (router: the session); NULL once detached */
    char session_id[SESSION_ID_LEN + 1];
    bool restarted;
    /* It said it is leaving (MSG_EVENT "exiting"): it runs nothing more, so
     * a call sent to it goes to the next worker. */
    bool exiting;
    enum worker_state state;
    pid_t pid;
    /* The browser it drives (not in extension mode): the shared one, or in
     * dedicated mode its own (owns_browser), discarded when it is reaped. */
    struct browser *browser;
    bool owns_browser;
    struct channel *ch;
    int chfd;
    int life_fd;        /* write end of the liveness pipe: its EOF tells the worker we died */
    char url[PATH_MAX]; /* ipc:// URL of its channel */
    uint64_t seq;
    uint64_t timer; /* start-up or stop deadline */
    long long spawned_at;
    char start_error[128];     /* why it never started, until the router is told */
    char storage_state[1100];  /* storage state file for the worker to load first ("": none) */
    json_t *restore;           /* a restarted session's state for CONFIG (NULL: none); owned */
    json_t *restored;          /* READY's report of that restore (NULL: none); owned */
    char output_dir[PATH_MAX]; /* the session's own dir under --output-dir (outdirs.h) */
    struct worker *next;
};

/* Start a worker for session_id (asynchronously: the browser may still be starting). */
struct worker *worker_start(struct server *srv, const struct worker_events *events, void *owner,
                            const char *session_id, bool restarted);
/* Send a call; the worker must be READY. Returns 0; CHANNEL_TOO_BIG when
 * the call is over the protocol's limits (nothing sent, the worker stays
 * READY); else < 0, and a worker that stopped reading is being killed.
 * worker_send_cancel likewise. Neither ever waits. */
int worker_send_call(struct worker *w, uint64_t call_id, const char *tool, const json_t *args,
                     long long deadline, bool progress);
int worker_send_cancel(struct worker *w, uint64_t call_id);
/* Ask the worker to close its context and exit; SIGKILL after grace_ms. The
 * worker is detached from its owner: no more events. */
void worker_stop(struct worker *w, long long grace_ms);
/* Detach w from its owner and SIGKILL it without sending it anything: for
 * a worker whose browser died or that is exiting by itself. A SHUTDOWN sent
 * to a worker while it exits can make nng 1.5's nng_close hang (channel.h). */
void worker_discard(struct worker *w, const char *why);
/* SIGKILL now (a hung or misbehaving worker). */
void worker_kill(struct worker *w, const char *why);
/* From SIGCHLD handling: returns 1 if pid was a worker. */
int workers_reaped(struct server *srv, pid_t pid, int status);
/* Shutdown: SHUTDOWN to all, wait up to timeout_ms, SIGKILL the rest, reap. */
void workers_stop_all(struct server *srv, long long timeout_ms);

#endif
