/* bodies.c - see bodies.h. The comments beside each type in proto.h say what
 * the fields mean; these tables say what they must be. */
#include "bodies.h"

#include <limits.h>
#include <string.h>

#include "errbuf.h"
#include "proto.h"

/* Limits that keep a peer's fields sane without knowing their meaning. */
#define SHORT_STR 64      /* ids, modes, levels, kinds */
#define TEXT_STR 65536    /* a log line, an error message */
#define ORIGIN_RULES 4096 /* entries of one origin list */

static const struct body_field hello[] = {
    {"pid", BT_UINT, true, INT_MAX, BT_STR, 0},
    {"proto", BT_UINT, true, UINT32_MAX, BT_STR, 0},
    BODY_FIELDS_END,
};

static const struct body_field config[] = {
    {"sessionId", BT_STR, true, TV_SESSION_ID_MAX, BT_STR, 0},
    {"mode", BT_STR, true, SHORT_STR, BT_STR, 0},
    {"viewportWidth", BT_UINT, true, 100000, BT_STR, 0},
    {"viewportHeight", BT_UINT, true, 100000, BT_STR, 0},
    {"outputDir", BT_STR, true, PATH_MAX - 1, BT_STR, 0},
    {"restarted", BT_BOOL, true, 0, BT_STR, 0},
    {"maxOutputChars", BT_UINT, true, 0, BT_STR, 0},
    {"snapshotMode", BT_STR, true, SHORT_STR, BT_STR, 0},
    {"blockedPorts", BT_ARRAY, false, 64, BT_UINT, 0},
    {"allowedOrigins", BT_ARRAY, false, ORIGIN_RULES, BT_STR, 0},
    {"blockedOrigins", BT_ARRAY, false, ORIGIN_RULES, BT_STR, 0},
    {"blockLinkLocal", BT_BOOL, false, 0, BT_STR, 0},
    {"cdpAllow", BT_STR, false, TEXT_STR, BT_STR, 0},
    {"storageState", BT_STR, false, PATH_MAX - 1, BT_STR, 0},
    {"relayProof", BT_STR, false, 64, BT_STR, 0},
    {"downloads", BT_STR, false, SHORT_STR, BT_STR, 0},
    {"restore", BT_MAP, false, 0, BT_STR, 0},
    {"keepState", BT_BOOL, false, 0, BT_STR, 0},
    {"browser", BT_STR, false, SHORT_STR, BT_STR, 0}, /* chromium (absent) or firefox */
    BODY_FIELDS_END,
};

static const struct body_field ready[] = {
    {"ok", BT_BOOL, true, 0, BT_STR, 0},
    {"error", BT_MAP, false, 0, BT_STR, 0},
    {"browserVersion", BT_STR, false, TEXT_STR, BT_STR, 0},
    {"restored", BT_MAP, false, 0, BT_STR, 0},
    BODY_FIELDS_END,
};

static const struct body_field call[] = {
    {"tool", BT_STR, true, SHORT_STR, BT_STR, 0},
    {"args", BT_MAP, true, 0, BT_STR, 0},
    {"deadline", BT_UINT, true, 0, BT_STR, 0},
    {"progress", BT_BOOL, false, 0, BT_STR, 0},
    BODY_FIELDS_END,
};

static const struct body_field result[] = {
    {"content", BT_ARRAY, true, 0, BT_MAP, 0},
    {"structured", BT_MAP, true, 0, BT_STR, 0},
    {"isError", BT_BOOL, true, 0, BT_STR, 0},
    /* The worker exits after this result (its browser connection is gone,
     * or it has no page left): the supervisor sends it nothing more. */
    {"final", BT_BOOL, false, 0, BT_STR, 0},
    BODY_FIELDS_END,
};

static const struct body_field progress[] = {
    {"progress", BT_NUM, true, 0, BT_STR, 0},
    {"total", BT_NUM, false, 0, BT_STR, 0},
    {"message", BT_STR, false, TEXT_STR, BT_STR, 0},
    BODY_FIELDS_END,
};

static const struct body_field cancel[] = {
    {"reason", BT_STR, false, TEXT_STR, BT_STR, 0},
    BODY_FIELDS_END,
};

static const struct body_field log_line[] = {
    {"level", BT_STR, true, SHORT_STR, BT_STR, 0},
    {"message", BT_STR, true, TEXT_STR, BT_STR, 0},
    BODY_FIELDS_END,
};

static const struct body_field event[] = {
    {"kind", BT_STR, true, SHORT_STR, BT_STR, 0},
    {"detail", BT_MAP, false, 0, BT_STR, 0},
    BODY_FIELDS_END,
};

/* Its size (SESSION_STATE_MAX) is checked by the supervisor, as JSON. */
static const struct body_field state[] = {
    {"state", BT_MAP, true, 0, BT_STR, 0},
    BODY_FIELDS_END,
};

static const struct body_field empty[] = {BODY_FIELDS_END};

/* worker<->relay (400..499). Chrome's tab ids are positive int32. */
#define TAB_ID INT32_MAX
static const struct body_field relay_hello[] = {
    {"sessionId", BT_STR, true, TV_SESSION_ID_MAX, BT_STR, 0},
    {"pid", BT_UINT, true, INT_MAX, BT_STR, 0},
    {"proto", BT_UINT, true, UINT32_MAX, BT_STR, 0},
    {"proof", BT_STR, true, 64, BT_STR, 0},
    BODY_FIELDS_END,
};

static const struct body_field relay_tab_create[] = {
    {"url", BT_STR, false, 8192, BT_STR, 0},
    BODY_FIELDS_END,
};

static const struct body_field relay_tab[] = {
    {"tabId", BT_UINT, true, TAB_ID, BT_STR, 0},
    BODY_FIELDS_END,
};

static const struct body_field relay_cdp[] = {
    {"tabId", BT_UINT, true, TAB_ID, BT_STR, 0},
    {"method", BT_STR, true, 128, BT_STR, 0},
    {"params", BT_MAP, false, 0, BT_STR, 0},
    {"cdpSession", BT_STR, false, 128, BT_STR, 0},
    BODY_FIELDS_END,
};

static const struct body_field relay_group[] = {
    {"title", BT_STR, false, 256, BT_STR, 0},
    {"color", BT_STR, false, 16, BT_STR, 0},
    BODY_FIELDS_END,
};

static const struct body_field relay_reply[] = {
    {"ok", BT_BOOL, true, 0, BT_STR, 0},
    {"result", BT_MAP, false, 0, BT_STR, 0},
    {"error", BT_MAP, false, 0, BT_STR, 0},
    BODY_FIELDS_END,
};

static const struct body_field relay_event[] = {
    {"kind", BT_STR, true, SHORT_STR, BT_STR, 0},
    {"tabId", BT_UINT, false, TAB_ID, BT_STR, 0},
    {"method", BT_STR, false, 128, BT_STR, 0},
    {"params", BT_MAP, false, 0, BT_STR, 0},
    {"cdpSession", BT_STR, false, 128, BT_STR, 0},
    {"openerTabId", BT_UINT, false, TAB_ID, BT_STR, 0},
    {"reason", BT_STR, false, TEXT_STR, BT_STR, 0},
    {"connected", BT_BOOL, false, 0, BT_STR, 0},
    {"tabs", BT_ARRAY, false, 4096, BT_UINT, TAB_ID},
    BODY_FIELDS_END,
};

/* The inner bodies are checked as their own types by the receiver. */
#define RELAY_BATCH_MAX 128
static const struct body_field relay_ack[] = {
    {"n", BT_UINT, true, 1u << 20, BT_STR, 0},
    BODY_FIELDS_END,
};

static const struct body_field relay_batch[] = {
    {"msgs", BT_ARRAY, true, RELAY_BATCH_MAX, BT_MAP, 0},
    BODY_FIELDS_END,
};

const struct body_field *body_fields(uint32_t type)
{
    switch (type) {
    case MSG_HELLO:
        return hello;
    case MSG_CONFIG:
        return config;
    case MSG_READY:
        return ready;
    case MSG_CALL:
        return call;
    case MSG_RESULT:
        return result;
    case MSG_PROGRESS:
        return progress;
    case MSG_CANCEL:
        return cancel;
    case MSG_LOG:
        return log_line;
    case MSG_EVENT:
        return event;
    case MSG_STATE:
        return state;
    case MSG_HEARTBEAT:
    case MSG_SHUTDOWN:
        return empty;
    case MSG_RELAY_HELLO:
        return relay_hello;
    case MSG_RELAY_TAB_CREATE:
        return relay_tab_create;
    case MSG_RELAY_TAB_ATTACH:
    case MSG_RELAY_TAB_DETACH:
    case MSG_RELAY_TAB_CLOSE:
        return relay_tab;
    case MSG_RELAY_CDP:
        return relay_cdp;
    case MSG_RELAY_GROUP:
        return relay_group;
    case MSG_RELAY_TABS:
    case MSG_RELAY_STATUS:
    case MSG_RELAY_BYE:
        return empty;
    case MSG_RELAY_ACK:
        return relay_ack;
    case MSG_RELAY_REPLY:
        return relay_reply;
    case MSG_RELAY_EVENT:
        return relay_event;
    case MSG_RELAY_BATCH:
        return relay_batch;
    }
    return NULL;
}

static const char *type_word(enum body_type t)
{
    switch (t) {
    case BT_STR:
        return "a string";
    case BT_UINT:
        return "an unsigned integer";
    case BT_NUM:
        return "a number";
    case BT_BOOL:
        return "a boolean";
    case BT_MAP:
        return "a map";
    case BT_ARRAY:
        return "an array";
    }
    return "?";
}

/* Whether v has type t and keeps within bound (see enum body_type). */
static bool value_fits(const json_t *v, enum body_type t, uint64_t bound)
{
    switch (t) {
    case BT_STR:
        return json_is_string(v) && (!bound || json_string_length(v) <= bound);
    case BT_UINT:
        return json_is_integer(v) && json_integer_value(v) >= 0 &&
               (!bound || (uint64_t)json_integer_value(v) <= bound);
    case BT_NUM:
        return json_is_number(v);
    case BT_BOOL:
        return json_is_boolean(v);
    case BT_MAP:
        return json_is_object(v);
    case BT_ARRAY:
        return json_is_array(v) && (!bound || json_array_size(v) <= bound);
    }
    return false;
}

int body_check_fields(const char *what, const json_t *obj, const struct body_field *fields,
                      char *err, size_t errlen)
{
    for (const struct body_field *f = fields; f->name; f++) {
        const json_t *v = json_object_get(obj, f->name);
        if (!v) {
            if (f->required) {
                errbuf_set(err, errlen, "%s: field '%s' is missing", what, f->name);
                return -1;
            }
            continue;
        }
        if (!value_fits(v, f->type, f->bound)) {
            errbuf_set(err, errlen, "%s: field '%s' is not %s%s", what, f->name, type_word(f->type),
                       f->bound ? " within its bound" : "");
            return -1;
        }
        if (f->type == BT_ARRAY) {
            size_t i;
            const json_t *item;
            json_array_foreach(v, i, item) if (!value_fits(item, f->item, f->item_bound))
            {
                errbuf_set(err, errlen, "%s: field '%s'[%zu] is not %s%s", what, f->name, i,
                           type_word(f->item), f->item_bound ? " within its bound" : "");
                return -1;
            }
        }
    }
    const char *key;
    const json_t *v;
    json_object_foreach((json_t *)obj, key, v)
    {
        const struct body_field *f = fields;
        while (f->name && strcmp(f->name, key) != 0)
            f++;
        if (!f->name) {
            errbuf_set(err, errlen, "%s: unknown field '%.64s'", what, key);
            return -1;
        }
    }
    return 0;
}

int body_check(uint32_t type, const json_t *body, char *err, size_t errlen)
{
    const struct body_field *fields = body_fields(type);
    if (!fields) {
        errbuf_set(err, errlen, "unknown message type %u", type);
        return -1;
    }
    return body_check_fields(proto_msg_name(type), body, fields, err, errlen);
}
