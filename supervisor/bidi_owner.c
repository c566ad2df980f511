/*
 * bidi_owner.c - what each worker of the BiDi bridge owns: its browsing
 * contexts, its handles (preload scripts, requests) and its user context
 * (bidi_bridge_int.h). The policy table (proto/bidi_policy.c) asks these
 * before a worker's command goes to Firefox.
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "bidi_bridge_int.h"

struct bclient *bo_owner_of(json_t *map, const char *id)
{
    return id ? owner_map_get(map, id, strlen(id)) : NULL;
}

void bo_own(json_t *map, const char *id, struct bclient *c)
{
    if (id && *id && strlen(id) < 2 * MAX_ID)
        owner_map_set(map, id, strlen(id), c);
}

bool bo_owns_context(void *ud, const char *context)
{
    struct bclient *c = ud;
    return bo_owner_of(c->b->contexts, context) == c;
}

bool bo_owns_handle(void *ud, const char *kind, const char *id)
{
    struct bclient *c = ud;
    char key[2 * MAX_ID];
    snprintf(key, sizeof key, "%s:%s", kind, id ? id : "");
    return bo_owner_of(c->b->handles, key) == c;
}

struct bclient *bo_client_of_user_context(struct bidi_bridge *b, const char *uc)
{
    for (struct bridge_client *bc = b->clients.list; uc && bc; bc = bc->next) {
        struct bclient *c = (struct bclient *)bc;
        if (c->user_context[0] && strcmp(c->user_context, uc) == 0)
            return c;
    }
    return NULL;
}

void bo_own_request(struct bclient *c, const char *id)
{
    char key[2 * MAX_ID];
    if (!id || strlen(id) >= MAX_ID || !c->requests)
        return;
    snprintf(key, sizeof key, "request:%s", id);
    if (bo_owner_of(c->b->handles, key) == c)
        return;
    bo_own(c->b->handles, key, c);
    json_array_append_new(c->requests, json_string(key));
    if (json_array_size(c->requests) > MAX_OWNED_REQUESTS) {
        json_object_del(c->b->handles, json_string_value(json_array_get(c->requests, 0)));
        json_array_remove(c->requests, 0);
    }
}
