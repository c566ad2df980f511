/*
 * bodies.h - the body of every message type, typed: one field table per type
 * (name, msgpack type, required, bound), checked by proto_decode() before any
 * reader sees the message, in the spirit of relayd's IMSG_SIZE_CHECK and
 * tmux's per-message structs. A reader may then take a required field
 * without checking its type, and never meets a field the table does not name.
 *
 * A new message type, or a new field, is added to the table in bodies.c in the
 * same change as its sender and reader; unknown types and unknown fields are
 * refused, so a peer built from other sources fails loudly at once.
 */
#ifndef TABVISOR_BODIES_H
#define TABVISOR_BODIES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <jansson.h>

enum body_type {
    BT_STR,   /* string; bound: most bytes (0: PROTO_MAX_STRING only) */
    BT_UINT,  /* integer >= 0; bound: largest value (0: any) */
    BT_NUM,   /* integer or real */
    BT_BOOL,  /* true or false */
    BT_MAP,   /* object; free-form (tool arguments, results) */
    BT_ARRAY, /* array; bound: most elements (0: any); item type below */
};

struct body_field {
    const char *name;
    enum body_type type;
    bool required;
    uint64_t bound;
    enum body_type item; /* BT_ARRAY: type of every element (BT_MAP: any) */
    uint64_t item_bound; /* BT_ARRAY: bound of every element (as bound above) */
};

/* The end of a field table. */
#define BODY_FIELDS_END                                                                            \
    {                                                                                              \
        NULL, BT_STR, false, 0, BT_STR, 0                                                          \
    }

/* The table of a message type, or NULL for a type proto.h does not list. */
const struct body_field *body_fields(uint32_t type);

/* Check body (an object; NULL counts as {}) against type's table. Returns
 * 0, or -1 with a one-line reason naming the field in err. */
int body_check(uint32_t type, const json_t *body, char *err, size_t errlen);

/* The same check against any field table (fields ends with a NULL name),
 * for other typed JSON (the relay's extension frames); what names the
 * object in err. */
int body_check_fields(const char *what, const json_t *obj, const struct body_field *fields,
                      char *err, size_t errlen);

#endif
