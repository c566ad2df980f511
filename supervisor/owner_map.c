/*
 * owner_map.c - which bridge client owns an id (owner_map.h).
 */
#include <stdint.h>

#include "owner_map.h"

void owner_map_set(json_t *map, const char *id, size_t len, const void *owner)
{
    json_object_setn_new(map, id, len, json_integer((json_int_t)(intptr_t)owner));
}

void *owner_map_get(json_t *map, const char *id, size_t len)
{
    json_t *v = id ? json_object_getn(map, id, len) : NULL;
    return v ? (void *)(intptr_t)json_integer_value(v) : NULL;
}

void owner_map_drop(json_t *map, const void *owner)
{
    const char *k;
    json_t *v;
    void *tmp;
    json_object_foreach_safe(map, tmp, k, v)
    {
        if ((const void *)(intptr_t)json_integer_value(v) == owner)
            json_object_del(map, k);
    }
}

int owner_maps_new(json_t **const maps[], size_t n)
{
    for (size_t i = 0; i < n; i++) {
        *maps[i] = json_object();
        if (!*maps[i]) {
            owner_maps_free(maps, i);
            return -1;
        }
    }
    return 0;
}

void owner_maps_free(json_t **const maps[], size_t n)
{
    for (size_t i = 0; i < n; i++) {
        json_decref(*maps[i]);
        *maps[i] = NULL;
    }
}
