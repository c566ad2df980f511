/*
 * cdp_bridge_int.h - the bridge's own state and helpers, shared by its three
 * files: cdp_bridge.c (connections, writing, command slots, the public
 * API), cdp_bridge_policy.c (what a worker may send) and
 * cdp_bridge_route.c (where the browser's answers and events go). Not for
 * other files: cdp_bridge.h is the bridge's interface.
 */
#ifndef TABVISOR_CDP_BRIDGE_INT_H
#define TABVISOR_CDP_BRIDGE_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "cdp_bridge.h"
#include "json_top.h"
#include "loop.h"
#include "bridge_core.h"
#include "nulframe.h"

/* Bytes asked of each read of the browser, which sends screenshots of many
 * MiB (a worker's: bridge_core.h). */
#define BROWSER_READ_CHUNK (256 * 1024)
/* Commands in flight, browser-wide: a command's bridge id holds its slot
 * index in the low 16 bits, so ids never exceed 31 bits. */
#define SLOT_BITS 16
#define MAX_SLOTS (1u << SLOT_BITS)
/* CDP ids of contexts, targets and sessions are 32 hex digits today. */
#define MAX_CDP_ID 64

enum track {
    TRACK_NONE,
    TRACK_CONTEXT, /* Target.createBrowserContext: result.browserContextId is the client's */
    TRACK_TARGET,  /* Target.createTarget: result.targetId */
    TRACK_SESSION, /* Target.attachToTarget: result.sessionId */
    TRACK_READY,   /* the bridge's own first command */
    TRACK_DEFAULT, /* Target.getTargets: the default context's id (cdp_bridge_use_default_context)
                    */
};

/* A worker's connection: the core's part first (bridge_core.h), then ours. */
struct client {
    struct bridge_client base;
    struct cdp_bridge *b;
    char *download_dir; /* where its context's downloads go (malloc'd), or NULL: not set */
};

struct slot {
    uint32_t bid;         /* 0: free */
    struct client *owner; /* NULL: the bridge's own command, or its client left */
    long long client_id;  /* the id the client gave the command */
    enum track track;
    uint32_t next_free;
};

struct cdp_bridge {
    struct loop *loop;
    const struct cdp_bridge_events *ev;
    void *ud;
    int to_browser, from_browser;
    struct nf_reader in;
    struct nf_queue out;
    bool broken, ready;
    bool use_default;                 /* sessions get the default context (a persistent profile) */
    char default_ctx[MAX_CDP_ID + 1]; /* its id, learnt before ready */
    struct bridge_clients clients;
    /* Ownership, id string -> struct client * (as an integer). */
    json_t *contexts, *targets, *sessions;
    struct slot *slots;
    uint32_t nslots, free_head; /* free list through next_free; free_head = nslots: empty */
    uint16_t *gen;              /* per slot, so a late answer never matches a reused slot */
    struct cdp_bridge_stats stats;
};
/* The bridge's maps, made and freed together (owner_map.h). */
#define BRIDGE_MAPS(b) ((json_t **const[]){&(b)->contexts, &(b)->targets, &(b)->sessions})
#define BRIDGE_NMAPS 3


/* cdp_bridge.c: ownership maps (id -> client), command slots, writing. */
void bridge_own(json_t *map, const char *id, size_t len, struct client *c);
struct client *bridge_owner_of(json_t *map, const char *id, size_t len);
struct slot *bridge_slot_get(struct cdp_bridge *b, long long bid);
void bridge_slot_free(struct cdp_bridge *b, struct slot *s);
/* msg to client c, its id restored to client_id when t names one. */
void bridge_to_client(struct client *c, const char *msg, size_t len, const struct json_top *t,
                      long long client_id);
/* Answer c's command id ourselves, with result (stolen). */
void bridge_answer(struct client *c, long long id, json_t *result);
/* The bridge's own commands (params stolen); their answers are dropped,
 * or tracked as track says. */
void bridge_command(struct cdp_bridge *b, const char *method, json_t *params, enum track track);
void bridge_session_command(struct cdp_bridge *b, const char *session, const char *method,
                            json_t *params, enum track track);
/* c's new context ctx saves downloads into c's directory, if it has one. */
void bridge_set_downloads(struct cdp_bridge *b, struct client *c, const char *ctx);
/* The browser's pipe is unusable: every client is closed. */
void bridge_broken(struct cdp_bridge *b, const char *why);

/* cdp_bridge_policy.c: NULL when allowed, else the refusal. */
const char *bridge_browser_policy(struct client *c, json_t *msg, const char *method,
                                  enum track *track);
const char *bridge_session_policy(const struct json_top *t, const char *msg, size_t len);
/* With a persistent profile: answers context commands itself (true). */
bool bridge_default_context_command(struct client *c, json_t *msg, const char *method,
                                    long long id);
/* Close every page c owns (what disposing of its context would do). */
void bridge_close_targets_of(struct cdp_bridge *b, struct client *c);
bool bridge_method_eq(const struct json_top *t, const char *name);

/* cdp_bridge_route.c: one answer or event from the browser, to its owner. */
void bridge_on_answer(struct cdp_bridge *b, const char *msg, size_t len, const struct json_top *t);
void bridge_on_event(struct cdp_bridge *b, const char *msg, size_t len, const struct json_top *t);

#endif
