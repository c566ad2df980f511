/*
 * pool.c - ready workers waiting for a session (see pool.h).
 *
 * A pooled worker is an ordinary worker (workers.c) whose owner is its pool
 * slot. It is started under a fresh session id, because a worker's id is
 * fixed at start (its logs and its CONFIG carry it); the session that takes
 * it is created with that id (session_create_with_id).
 */
#include "pool.h"

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "log.h"
#include "server.h"
#include "workers.h"

#define POOL_MAX 16

struct pool_slot {
    struct worker *w; /* NULL: free slot */
    bool ready;
    char id[SESSION_ID_LEN + 1];
};

static struct pool_slot slots[POOL_MAX];

size_t pool_count(const struct server *srv)
{
    (void)srv;
    size_t n = 0;
    for (int i = 0; i < POOL_MAX; i++)
        n += slots[i].w != NULL;
    return n;
}

static void on_ready(struct server *srv, struct worker *w, const char *error)
{
    (void)srv;
    struct pool_slot *p = w->owner;
    if (error) {
        /* workers.c stops it; housekeeping tries again in a second. */
        log_warn("pooled worker failed to start: %s", error);
        p->w = NULL;
        return;
    }
    p->ready = true;
}

static void on_message(struct server *srv, struct worker *w, struct proto_msg *msg)
{
    (void)srv;
    (void)w;
    (void)msg; /* an idle worker has nothing to say */
}

static void on_exited(struct server *srv, struct worker *w, int status)
{
    (void)srv;
    (void)status;
    struct pool_slot *p = w->owner;
    p->w = NULL;
    p->ready = false;
}

static const struct worker_events pool_events = {
    .ready = on_ready,
    .message = on_message,
    .exited = on_exited,
};

void pool_fill(struct server *srv)
{
    const struct config *c = &srv->cfg;
    if (c->extension || srv->shutting_down)
        return;
    size_t want = (size_t)c->pool_size;
    for (int i = 0; i < POOL_MAX && pool_count(srv) < want; i++) {
        if (slots[i].w)
            continue;
        if (session_count(srv->sessions) + pool_count(srv) >= session_max(srv->sessions))
            return;
        struct pool_slot *p = &slots[i];
        session_new_id(p->id, c->instance_id);
        p->ready = false;
        p->w = worker_start(srv, &pool_events, p, p->id, false);
        if (!p->w)
            return;
        log_debug("pool: worker for future session %s starting", p->id);
    }
}

struct worker *pool_take(struct server *srv, char id[SESSION_ID_LEN + 1])
{
    (void)srv;
    /* A ready one first; else one still starting, which is further along
     * than a worker started now (and starting another beside it could go
     * past --max-sessions). */
    for (int pass = 0; pass < 2; pass++)
        for (int i = 0; i < POOL_MAX; i++) {
            struct pool_slot *p = &slots[i];
            if (!p->w || (pass == 0 && !p->ready))
                continue;
            struct worker *w = p->w;
            memcpy(id, p->id, SESSION_ID_LEN + 1);
            p->w = NULL;
            p->ready = false;
            w->owner = NULL;
            return w;
        }
    return NULL;
}

int pool_evict_one(struct server *srv)
{
    char id[SESSION_ID_LEN + 1];
    /* pool_take prefers a ready one; here the least useful goes first. */
    for (int i = 0; i < POOL_MAX; i++) {
        if (slots[i].w && !slots[i].ready) {
            worker_stop(slots[i].w, 0);
            slots[i].w = NULL;
            return 0;
        }
    }
    struct worker *w = pool_take(srv, id);
    if (!w)
        return -1;
    worker_stop(w, 0);
    return 0;
}

void pool_drain(struct server *srv)
{
    (void)srv;
    for (int i = 0; i < POOL_MAX; i++) {
        if (slots[i].w)
            worker_discard(slots[i].w, "the pool was drained");
        slots[i].w = NULL;
        slots[i].ready = false;
    }
}
