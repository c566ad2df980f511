/*
 * codec.c - protocol envelopes [version, type, id, body] (see proto.h).
 */
#include "codec.h"

#include "bodies.h"

#include "errbuf.h"
#include "json_mp.h"
#include "log.h"
#include "proto.h"

#include <string.h>

/*
 * The encoder refuses anything the decoder would reject (depth, string and
 * message size), so a sender learns at its own end that a body is too big
 * instead of the peer treating it as a protocol violation.
 */
int proto_encode(uint32_t type, uint64_t id, const json_t *body, char **buf, size_t *len)
{
    msgpack_sbuffer sb;
    msgpack_packer pk;
    int rc = -1;

    *buf = NULL;
    *len = 0;
    if (body && !json_is_object(body))
        return -1;
    /* A body its type's table refuses is our own bug: say which field. */
    char why[200];
    if (body_check(type, body, why, sizeof why) < 0) {
        log_error("not sending a malformed message: %s", why);
        return -1;
    }

    msgpack_sbuffer_init(&sb);
    msgpack_packer_init(&pk, &sb, msgpack_sbuffer_write);
    if (msgpack_pack_array(&pk, 4) != 0 || msgpack_pack_uint32(&pk, PROTO_VERSION) != 0 ||
        msgpack_pack_uint32(&pk, type) != 0 || msgpack_pack_uint64(&pk, id) != 0)
        goto out;
    /* The envelope array is one level and four objects, so the body gets
     * the rest. */
    if (body ? json_to_msgpack_bounded(&pk, body, PROTO_MAX_DEPTH - 1, PROTO_MAX_ELEMENTS - 4) != 0
             : msgpack_pack_map(&pk, 0) != 0)
        goto out;
    if (sb.size > PROTO_MAX_MESSAGE)
        goto out;
    *len = sb.size;
    *buf = msgpack_sbuffer_release(&sb);
    rc = 0;
out:
    msgpack_sbuffer_destroy(&sb); /* no-op after release */
    return rc;
}

int proto_decode(const void *buf, size_t len, struct proto_msg *msg, char *err, size_t errlen)
{
    char why[160];
    uint64_t count, version, type, id;

    memset(msg, 0, sizeof(*msg));
    if (len > PROTO_MAX_MESSAGE) {
        errbuf_set(err, errlen, "message of %zu bytes exceeds limit %u", len, PROTO_MAX_MESSAGE);
        return -1;
    }
    long n = mp_validate(buf, len, PROTO_MAX_DEPTH, why, sizeof(why));
    if (n < 0) {
        errbuf_set(err, errlen, "malformed msgpack: %s", why);
        return -1;
    }
    if ((size_t)n != len) {
        errbuf_set(err, errlen, "%zu trailing bytes after the envelope", len - (size_t)n);
        return -1;
    }

    struct mp_reader r = {.p = buf, .end = (const unsigned char *)buf + len};
    if (mp_read_array(&r, &count) < 0) {
        errbuf_set(err, errlen, "envelope is not an array");
        return -1;
    }
    if (count != 4) {
        errbuf_set(err, errlen, "envelope has %llu elements, expected 4",
                   (unsigned long long)count);
        return -1;
    }
    if (mp_read_uint(&r, &version) < 0) {
        errbuf_set(err, errlen, "version is not an unsigned integer");
        return -1;
    }
    if (version != PROTO_VERSION) {
        errbuf_set(err, errlen, "protocol version %llu, expected %d", (unsigned long long)version,
                   PROTO_VERSION);
        return -1;
    }
    if (mp_read_uint(&r, &type) < 0 || type > UINT32_MAX) {
        errbuf_set(err, errlen, "type is not an unsigned 32-bit integer");
        return -1;
    }
    if (mp_read_uint(&r, &id) < 0) {
        errbuf_set(err, errlen, "id is not an unsigned integer");
        return -1;
    }
    if (!mp_peek_map(&r)) {
        errbuf_set(err, errlen, "body of %s is not a map", proto_msg_name((uint32_t)type));
        return -1;
    }
    json_t *body = mp_read_json(&r, PROTO_MAX_DEPTH - 1, why, sizeof(why));
    if (!body) {
        errbuf_set(err, errlen, "body of %s: %s", proto_msg_name((uint32_t)type), why);
        return -1;
    }
    /* Typed before any reader sees it (bodies.h). */
    if (body_check((uint32_t)type, body, err, errlen) < 0) {
        json_decref(body);
        return -1;
    }
    msg->version = (uint32_t)version;
    msg->type = (uint32_t)type;
    msg->id = id;
    msg->body = body;
    return 0;
}

void proto_msg_clear(struct proto_msg *msg)
{
    if (!msg)
        return;
    json_decref(msg->body);
    memset(msg, 0, sizeof(*msg));
}

const char *proto_msg_name(uint32_t type)
{
    switch (type) {
    case MSG_HELLO:
        return "hello";
    case MSG_CONFIG:
        return "config";
    case MSG_READY:
        return "ready";
    case MSG_CALL:
        return "call";
    case MSG_RESULT:
        return "result";
    case MSG_PROGRESS:
        return "progress";
    case MSG_CANCEL:
        return "cancel";
    case MSG_LOG:
        return "log";
    case MSG_EVENT:
        return "event";
    case MSG_STATE:
        return "state";
    case MSG_HEARTBEAT:
        return "heartbeat";
    case MSG_SHUTDOWN:
        return "shutdown";
    case MSG_RELAY_HELLO:
        return "relay-hello";
    case MSG_RELAY_TAB_CREATE:
        return "relay-tab-create";
    case MSG_RELAY_TAB_ATTACH:
        return "relay-tab-attach";
    case MSG_RELAY_TAB_DETACH:
        return "relay-tab-detach";
    case MSG_RELAY_TAB_CLOSE:
        return "relay-tab-close";
    case MSG_RELAY_CDP:
        return "relay-cdp";
    case MSG_RELAY_GROUP:
        return "relay-group";
    case MSG_RELAY_TABS:
        return "relay-tabs";
    case MSG_RELAY_STATUS:
        return "relay-status";
    case MSG_RELAY_BYE:
        return "relay-bye";
    case MSG_RELAY_ACK:
        return "relay-ack";
    case MSG_RELAY_REPLY:
        return "relay-reply";
    case MSG_RELAY_EVENT:
        return "relay-event";
    case MSG_RELAY_BATCH:
        return "relay-batch";
    }
    return "unknown";
}
