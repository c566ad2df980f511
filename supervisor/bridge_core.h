/*
 * bridge_core.h - what the browser bridges share (the CDP bridge to Chromium,
 * cdp_bridge.c; the BiDi bridge to Firefox, bidi_bridge.c): their workers'
 * connections. Each is one end of a socketpair carrying NUL-framed JSON
 * messages both ways, read and written on the loop, closed once. The
 * protocol half of a bridge gets each whole message, and the close, through
 * its ops, as nng's core hands a protocol its pipes.
 *
 * A client is the first member of the half's own per-client struct, which
 * the half allocates: the ops get the client and cast it back. The core
 * owns the descriptor and the buffers; free (after the loop iteration the
 * client closed in) frees the whole struct.
 */
#ifndef TABVISOR_BRIDGE_CORE_H
#define TABVISOR_BRIDGE_CORE_H

#include <stdbool.h>
#include <stddef.h>

#include <jansson.h>

#include "json_top.h"
#include "loop.h"
#include "nulframe.h"

/* Screenshots and snapshots of big pages run to tens of MiB; a message
 * larger than this, in either direction, breaks its connection. */
#define BRIDGE_MAX_MESSAGE (256u * 1024 * 1024)
/* Unsent bytes a connection may hold: a worker that stops reading loses its
 * connection (and so its session) rather than growing our memory. */
#define BRIDGE_MAX_QUEUE (2 * (size_t)BRIDGE_MAX_MESSAGE)
/* Bytes asked of each read of a worker: one read per wake-up keeps one busy
 * worker from starving the loop (commands are a few hundred bytes; the
 * injected script, 100 KiB, is the largest but a file upload). */
#define BRIDGE_CLIENT_READ_CHUNK (64 * 1024)

struct bridge_client;

struct bridge_client_ops {
    /* One whole message of c (msg[len] is its NUL; the buffer is the core's,
     * valid until the next read). */
    void (*message)(struct bridge_client *c, char *msg, size_t len);
    /* c's connection ended (its descriptor is closed, nothing more is sent
     * to it): forget what it owned. why says how, for the log. */
    void (*closed)(struct bridge_client *c, const char *why);
    /* Free c's own parts and c itself (its buffers are freed already). */
    void (*free)(struct bridge_client *c);
};

/* A bridge's clients: the half fills loop, ops and name ("cdp bridge"). */
struct bridge_clients {
    struct loop *loop;
    const struct bridge_client_ops *ops;
    const char *name;
    struct bridge_client *list;
    unsigned count;
};

struct bridge_client {
    struct bridge_clients *set;
    /* The set's ops, kept here: the deferred free may run after the
     * bridge (and so the set) is gone. */
    const struct bridge_client_ops *ops;
    int fd;
    struct nf_reader in;
    struct nf_queue out;
    bool dead; /* closed: its struct lives until the loop iteration ends */
    char label[48];
    struct bridge_client *next;
};

/* Open a connection for c (the half's struct, zeroed, c its first member):
 * a socketpair whose other end is returned for the worker, or -1. Messages
 * from the worker larger than max_msg close it. */
int bridge_client_open(struct bridge_clients *set, struct bridge_client *c, const char *label,
                       size_t max_msg);
/* Queue one message to c and start writing it; with t (the message's JSON
 * top level), its id is rewritten to id on the way. A worker that stopped
 * reading (over BRIDGE_MAX_QUEUE) or whose socket failed is closed. Nothing
 * happens for a closed client. */
void bridge_client_send(struct bridge_client *c, const char *msg, size_t len,
                        const struct json_top *t, long long id);
/* Close c once: its descriptor, the half's closed(), then free() after
 * this loop iteration. */
void bridge_client_close(struct bridge_client *c, const char *why);
/* What every bridge sets up first: its clients (on l, with the half's ops
 * and name), the bound on a message from its browser (in), and its owner
 * maps (owner_map.h); -1 when memory is out (nothing to undo then). */
int bridge_core_setup(struct bridge_clients *clients, struct nf_reader *in,
                      json_t **const maps[], size_t nmaps, struct loop *l,
                      const struct bridge_client_ops *ops, const char *name);
/* Close every client (the browser or the bridge is gone). */
void bridge_clients_close_all(struct bridge_clients *set, const char *why);

#endif
