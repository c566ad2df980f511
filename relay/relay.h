/*
 * relay.h - the relay process's state and the seams between its files:
 *   main.c        arguments, `pair`, start-up, the lws loop
 *   discovery.c   runtime dir, lock, discovery file
 *   ext_socket.c  the extension's WebSocket: Host/Origin checks, auth, frames
 *   worker_side.c the workers' Unix socket and connections (nng's pair1 wire,
 *                 spwire.c), adopted into lws
 *   worker_outbox.c what goes to workers: batched, windowed, bounded
 *   router.c      policy: worker requests -> extension verbs, events -> owners
 *   registry.c    sessions and tab ownership (pure data)
 *   children.c    the CDP child sessions of each tab (OOPIFs)
 *   auth.c        pairing secret and HMAC challenge-response (pure)
 *   extmsg.c      the extension's frames, parsed and checked (pure, fuzzed)
 * One thread (lws's loop) owns all of it; the relay starts no other.
 */
#ifndef TABVISOR_RELAY_H
#define TABVISOR_RELAY_H

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>

#include <jansson.h>
#include <libwebsockets.h>

#include "auth.h"
#include "extmsg.h"
#include "registry.h"

#define RELAY_DEFAULT_PORT 47653
/* The extension's id, fixed by the "key" in extension/manifest.json
 * (test_relay_auth.c checks that they agree). */
#define RELAY_EXTENSION_ID "kleajojcdmdjllklfgeficjcnpfpkabl"
#define RELAY_GRACE_MS 30000 /* sessions and tabs kept across a reconnect */
#define RELAY_CALL_TIMEOUT_MS 60000
#define RELAY_AUTH_TIMEOUT_MS 10000
#define RELAY_TICK_MS 250
#define RELAY_SYNC_MS 3000 /* longest wait for the extension's state after its auth */
#define RELAY_TX_MAX_BYTES (64u * 1024 * 1024) /* queued to one extension */
#define RELAY_MAX_PENDING 4096                 /* calls in flight to the extension */

struct ext_conn;
struct worker_conn;

struct pending {
    uint32_t ext_id;    /* id of the request to the extension */
    uint64_t serial;    /* session that asked; 0: the relay itself */
    uint64_t worker_id; /* the worker's message id, for its reply */
    uint32_t type;      /* the worker's message type (MSG_RELAY_*) */
    int64_t tab_id;
    int64_t deadline_ms;
};

struct relay {
    struct lws_context *ctx;
    struct lws_vhost *vh;
    int port;
    char rundir[PATH_MAX];
    char ipc_url[PATH_MAX + 8];
    char secret_path[PATH_MAX];
    char extension_id[40];
    volatile bool stop;

    struct registry reg;

    struct ext_conn *ext; /* the authenticated extension, or NULL */
    int64_t ext_lost_ms;  /* when it went away; 0 while connected or never seen */
    /* Between the extension's authentication and its first "state" event the
     * relay does not yet know which tabs still exist (or, when it was just
     * restarted, which tabs were whose): workers are told the extension is
     * not there yet. ext_synced also comes after RELAY_SYNC_MS without one. */
    bool ext_synced;
    int64_t ext_up_ms;
    bool claims_taken; /* the claims of this relay's first extension are in */
    unsigned ext_connections, ext_refused, ext_heartbeats;
    unsigned ext_refused_uid; /* of ext_refused: another local user's, at accept */
    int ext_unauthed;         /* connections waiting to authenticate (ext_socket.c) */
    int pair_failures;        /* wrong answers to the current pairing code (pairing.h) */

    int workers_fd;            /* the workers' listening socket (lws owns it), or -1 */
    struct worker_conn *conns; /* workers connected now (worker_side.c) */
    unsigned nconns;
    uint32_t next_conn_id; /* a connection's id ("pipe"): never 0, not reused for 2^32 */
    bool workers_down;     /* at exit: closing connections no longer reach the router */

    struct pending *pend;
    size_t npend, pend_cap;
    uint32_t next_ext_id;

    lws_sorted_usec_list_t tick;
    /* Messages to workers wait here for the next flush (worker_side.c). */
    json_t *outbox;       /* pipe id (decimal) -> [{type, id, body}] */
    json_t *inflight;     /* pipe id (decimal) -> messages sent, not yet acknowledged */
    json_t *outbox_bytes; /* pipe id (decimal) -> about how many bytes its outbox holds */
    json_t *dropped;      /* pipe ids closed for not reading, until their close comes */
    lws_sorted_usec_list_t flush;
    bool flush_armed;

    json_t *children; /* CDP child session id -> tab id (children.c) */
};

int64_t relay_now_ms(void);

/* discovery.c */
int discovery_prepare_dir(const char *dir, char *err, size_t errlen);
/* Take the relay lock in dir. Returns the lock fd (kept open for life), -2
 * when another relay holds it, -1 on error (reason in err). */
int discovery_lock(const char *dir, char *err, size_t errlen);
int discovery_write(const struct relay *r, char *err, size_t errlen);
/* The discovery file's contents (malloc'd, caller frees), or NULL. */
char *discovery_read(const char *dir);
void discovery_remove(const struct relay *r);

/* ext_socket.c */
extern const struct lws_protocols ext_protocol;
/* Queue a JSON frame to the authenticated extension (obj borrowed). Returns
 * 0, -1 when there is none or its queue is over RELAY_TX_MAX_BYTES. */
int ext_send(struct relay *r, const json_t *obj);
bool ext_ready(const struct relay *r);

/* worker_side.c */
extern const struct lws_protocols worker_protocol;
/* Listen on r->ipc_url's path (the caller holds the relay lock). */
int worker_side_open(struct relay *r, char *err, size_t errlen);
/* At exit: flushes the last replies (for at most 200 ms of the loop) and
 * unlinks the socket; the connections close with the lws context, without
 * telling the router. */
void worker_side_close(struct relay *r);
/* Queue one message body (copied) on connection pipe. -1 when there is no
 * such connection or it is closing. */
int worker_conn_write(struct relay *r, uint32_t pipe, const void *body, size_t len);
/* Close connection pipe on the loop's next turn (never inside the caller's
 * callback); the router hears router_worker_gone then. */
void worker_conn_close(struct relay *r, uint32_t pipe);

/* worker_outbox.c */
/* Send one message to a worker's pipe (body borrowed). */
int worker_send(struct relay *r, uint32_t pipe, uint32_t type, uint64_t id, const json_t *body);
/* Send what worker_send() queued (the flush timer does this; also at exit). */
void worker_side_flush(struct relay *r);
void worker_reply_ok(struct relay *r, uint32_t pipe, uint64_t id, json_t *result /* stolen */);
void worker_reply_err(struct relay *r, uint32_t pipe, uint64_t id, const char *code,
                      const char *message);
/* The worker on pipe read n more of our messages (relay-ack): room for as
 * many more. */
void worker_outbox_acked(struct relay *r, uint32_t pipe, json_int_t n);
/* The connection pipe is gone: what waited for it goes. */
void worker_outbox_forget(struct relay *r, uint32_t pipe);
void worker_outbox_free(struct relay *r);

/* children.c */
/* A CDP event of tab_id (params may be NULL): note the child sessions it
 * announces or ends. */
void children_note_event(struct relay *r, int64_t tab_id, const char *method, const json_t *params);
/* Whether child is a child session of tab_id. */
bool children_of_tab(const struct relay *r, const char *child, int64_t tab_id);
/* The tab is gone or its debugger detached: its children are no more. */
void children_forget_tab(struct relay *r, int64_t tab_id);
/* Forget the children of tabs the registry no longer has (closed by any
 * path: session end, tab.close, the extension's state); router_tick. */
void children_prune(struct relay *r);

/* router.c */
void router_init(struct relay *r);
void router_free(struct relay *r);
void router_worker_msg(struct relay *r, uint32_t pipe, uint32_t type, uint64_t id, json_t *body);
void router_worker_gone(struct relay *r, uint32_t pipe);
/* The extension authenticated: the welcome frame's "owned" list. */
json_t *router_owned_list(struct relay *r);
void router_ext_up(struct relay *r);
void router_ext_down(struct relay *r);
void router_ext_msg(struct relay *r, const struct ext_msg *m);
void router_tick(struct relay *r, int64_t now);
/* Whether a CDP method (with its params, may be NULL) may be sent through
 * chrome.debugger for a worker; NULL when allowed, else the reason. */
const char *router_cdp_refused(const char *method, const json_t *params);
/* Whether a worker may open url in the user's browser; NULL when allowed. */
const char *router_url_refused(const char *url);

#endif
