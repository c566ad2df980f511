/*
 * json_util.h - small jansson helpers that more than one process needs.
 */
#ifndef TABVISOR_JSON_UTIL_H
#define TABVISOR_JSON_UTIL_H

#include <stddef.h>
#include <jansson.h>

/* Delete every member of obj whose value is the integer value (a reverse
 * index such as "child session -> tab" losing a tab). Returns how many went.
 * obj may be NULL or not an object: nothing happens. */
size_t json_object_del_int_values(json_t *obj, json_int_t value);

#endif
