/*
 * bidi_bridge_int.h - the BiDi bridge's state, shared by its files:
 * bidi_bridge.c (connections, commands and events) and bidi_owner.c (what
 * each worker owns). Not for other files: bidi_bridge.h is the interface.
 */
#ifndef TABVISOR_BIDI_BRIDGE_INT_H
#define TABVISOR_BIDI_BRIDGE_INT_H

#include <stdbool.h>
#include <jansson.h>

#include "bidi_bridge.h"
#include "bridge_core.h"
#include "nulframe.h"
#include "owner_map.h"

#define MAX_ID 64
#define MAX_SHARES 64
/* Requests of a worker whose bodies it may fetch (network.getData): its
 * latest ones, as its request list keeps (worker/tools/network_log.c). */
#define MAX_OWNED_REQUESTS 1000

enum track {
    T_NONE,
    T_USER_CONTEXT, /* result.userContext is the client's */
    T_CONTEXT,      /* result.context */
    T_PRELOAD,      /* result.script */
    T_SUBSCRIPTION, /* result.subscription: the client's own subscribe */
    T_SESSION,      /* the bridge's session.new */
    T_READY,        /* the bridge's session.subscribe */
    T_COLLECTOR,    /* the bridge's network.addDataCollector */
};

/* A worker's connection: the core's part first (bridge_core.h), then ours. */
struct bclient {
    struct bridge_client base;
    struct bidi_bridge *b;
    bool creating;
    char user_context[MAX_ID]; /* "" until created */
    int share;                 /* its proxy share's index, -1 for none */
    json_t *requests;          /* its owned request ids, oldest first (MAX_OWNED_REQUESTS) */
};

struct bidi_bridge {
    struct loop *loop;
    const struct bidi_bridge_events *ev;
    void *ud;
    int fd;
    struct nf_reader in;
    struct nf_queue out;
    bool broken, ready;
    struct bridge_clients clients;
    json_t *contexts; /* browsing context id -> client (as an integer) */
    json_t *handles;  /* "script:ID" -> client */
    json_t *pending;  /* bridge id -> [client, client's id, track] */
    long long next_id;
    /* The proxy's session shares: port, and when it was last released
     * (a clock, 0: never used), and whether a worker holds it. */
    int share_port[MAX_SHARES];
    long long share_released[MAX_SHARES];
    bool share_taken[MAX_SHARES];
    int nshares;
    long long share_clock;
};
/* The bridge's maps, made and freed together (owner_map.h). */
#define BIDI_MAPS(b) ((json_t **const[]){&(b)->contexts, &(b)->handles, &(b)->pending})
#define BIDI_NMAPS 3


/* bidi_owner.c: who owns a context, a handle ("kind:ID") or a user
 * context (owner_map.h); a closed client's entries go with it
 * (owner_map_drop). */
struct bclient *bo_owner_of(json_t *map, const char *id);
void bo_own(json_t *map, const char *id, struct bclient *c);
/* The bidi_owner callbacks of the policy table (proto/bidi_policy.h); ud is
 * the client. */
bool bo_owns_context(void *ud, const char *context);
bool bo_owns_handle(void *ud, const char *kind, const char *id);
struct bclient *bo_client_of_user_context(struct bidi_bridge *b, const char *uc);
/* A request an event told client c of is c's: its bodies are c's to fetch.
 * Only the latest MAX_OWNED_REQUESTS stay c's. */
void bo_own_request(struct bclient *c, const char *id);

#endif
