/*
 * owner_map.h - which bridge client owns an id (a target, a session, a
 * browsing context, a handle): a jansson object from the id to the owner's
 * pointer. Shared by the CDP bridge (cdp_bridge.c) and the BiDi bridge
 * (bidi_owner.c), whose clients are different structs.
 *
 * Ownership: the map holds no reference to an owner; an owner drops its
 * ids (owner_map_drop) before it is freed. Ids are copied into the map.
 * Bounding an id's length is the caller's rule.
 */
#ifndef TV_OWNER_MAP_H
#define TV_OWNER_MAP_H

#include <jansson.h>
#include <stddef.h>

/* Record owner as the owner of id (len bytes), replacing any other. */
void owner_map_set(json_t *map, const char *id, size_t len, const void *owner);
/* The owner of id (len bytes), or NULL. */
void *owner_map_get(json_t *map, const char *id, size_t len);
/* Forget every id owner owns. */
void owner_map_drop(json_t *map, const void *owner);
/* A bridge's n maps at once: each *maps[i] a new empty map, 0; or -1 with
 * none left allocated. owner_maps_free releases them (NULLs are skipped). */
int owner_maps_new(json_t **const maps[], size_t n);
void owner_maps_free(json_t **const maps[], size_t n);

#endif
