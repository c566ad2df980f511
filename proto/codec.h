/*
 * codec.h - encode and decode protocol envelopes (see proto.h).
 *
 * The in-memory form of a body is a jansson object: both processes build and
 * read bodies with jansson, and json_mp.h converts at the boundary.
 *
 * Ownership: proto_encode allocates *buf with malloc; the caller frees it.
 * proto_decode fills msg->body with a new reference the caller must release
 * with proto_msg_clear(). Neither function keeps a pointer to its inputs.
 */
#ifndef TABVISOR_CODEC_H
#define TABVISOR_CODEC_H

#include <stddef.h>
#include <stdint.h>
#include <jansson.h>

struct proto_msg {
    uint32_t version;
    uint32_t type;
    uint64_t id;
    json_t *body; /* always a JSON object after a successful decode */
};

/* Encode [PROTO_VERSION, type, id, body]. body may be NULL (sent as {}).
 * Returns 0, or -1 when body cannot be represented (e.g. not an object). */
int proto_encode(uint32_t type, uint64_t id, const json_t *body, char **buf, size_t *len);

/* Validate then decode one envelope occupying exactly len bytes. On failure
 * returns -1 and writes a one-line reason into err (which may be NULL). A
 * message of another PROTO_VERSION fails, and so does a body that does not
 * match its type's field table (bodies.h), or a type proto.h does not list. */
int proto_decode(const void *buf, size_t len, struct proto_msg *msg, char *err, size_t errlen);

/* Release msg->body and zero the struct. Safe on a zeroed struct. */
void proto_msg_clear(struct proto_msg *msg);

#endif
