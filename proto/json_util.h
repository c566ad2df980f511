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

/* About how many bytes v takes as text: its strings and keys, 8 for every
 * value. A cheap bound for queues (no serialisation); never 0. */
size_t json_weight(const json_t *v);

/* Whether the JSON text s[0..n) holds at most max values, counted without
 * parsing (containers, and the commas and colons between members, outside
 * strings): a bound to check before building a tree, since jansson spends
 * about 50 bytes on each value ("[[],[],..." is 3 bytes a value). */
int json_text_values_within(const char *s, size_t n, size_t max);

#endif
