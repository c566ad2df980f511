/*
 * extmsg.h - the messages the extension sends to the relay: JSON text frames
 * {"v":1, "type":..., ...}, size-checked, then parsed and checked against one
 * field table per type (and per event), so a reader may take every field the
 * table requires without checking it, and never meets one it does not name.
 * The frames and their meaning are in docs/relay.md.
 */
#ifndef TABVISOR_RELAY_EXTMSG_H
#define TABVISOR_RELAY_EXTMSG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <jansson.h>

#define RELAY_WIRE_VERSION 1
/* One frame from the extension, bytes. A CDP result (a full-page screenshot,
 * a large DOM) can be several MB of base64; more is refused. */
#define RELAY_MAX_FRAME (24u * 1024 * 1024)
/* JSON values in one frame (jansson spends about 50 bytes on each). */
#define RELAY_MAX_FRAME_VALUES (1u << 20)
/* Before authentication: the auth message is about 200 bytes. */
#define RELAY_AUTH_MAX_FRAME 1024u
/* Connections that have not authenticated yet, at once. */
#define RELAY_MAX_UNAUTHED 4

enum ext_kind {
    EXT_AUTH,            /* nonce, mac */
    EXT_PAIR,            /* nonce, mac: keyed by a one-time code instead (pairing.h) */
    EXT_RES,             /* id, ok, result?, error? */
    EXT_HEARTBEAT,       /* nothing */
    EXT_EVENT_CDP,       /* tab_id, method, params?, session? */
    EXT_EVENT_DETACHED,  /* tab_id, reason */
    EXT_EVENT_REMOVED,   /* tab_id */
    EXT_EVENT_OPENED_BY, /* tab_id, opener */
    EXT_EVENT_STATE,     /* present (array of tab ids), claims? ([{tabId, session, created}]) */
    EXT_EVENT_GRANTED,   /* tab_id, session: the user shared a tab from the popup */
    EXT_EVENT_REVOKED,   /* tab_id: the user stopped sharing it */
};

struct ext_msg {
    enum ext_kind kind;
    json_t *root; /* owned: the whole frame; the pointers below borrow from it */
    uint64_t id;
    bool ok;
    int64_t tab_id, opener;
    const char *nonce, *mac, *method, *session, *reason;
    json_t *params, *result, *error, *present, *claims;
};

/* Parse and check one frame of len bytes (need not be NUL-terminated). On
 * success fills *out (release with extmsg_clear) and returns 0; otherwise
 * returns -1 with a one-line reason in err and *out zeroed. */
int extmsg_parse(const char *buf, size_t len, struct ext_msg *out, char *err, size_t errlen);

void extmsg_clear(struct ext_msg *m);

#endif
