/* extmsg.c - see extmsg.h. */
#include "extmsg.h"

#include <stdio.h>
#include <string.h>

#include "bodies.h"
#include "errbuf.h"
#include "json_util.h"

#define TAB_ID INT32_MAX

static const struct body_field f_auth[] = {
    {"v", BT_UINT, true, 0, BT_STR, 0},
    {"type", BT_STR, true, 0, BT_STR, 0},
    {"nonce", BT_STR, true, 64, BT_STR, 0},
    {"mac", BT_STR, true, 64, BT_STR, 0},
    BODY_FIELDS_END,
};

static const struct body_field f_res[] = {
    {"v", BT_UINT, true, 0, BT_STR, 0},
    {"type", BT_STR, true, 0, BT_STR, 0},
    {"id", BT_UINT, true, UINT32_MAX, BT_STR, 0},
    {"ok", BT_BOOL, true, 0, BT_STR, 0},
    {"result", BT_MAP, false, 0, BT_STR, 0},
    {"error", BT_MAP, false, 0, BT_STR, 0},
    BODY_FIELDS_END,
};

static const struct body_field f_heartbeat[] = {
    {"v", BT_UINT, true, 0, BT_STR, 0},
    {"type", BT_STR, true, 0, BT_STR, 0},
    BODY_FIELDS_END,
};

static const struct body_field f_cdp[] = {
    {"v", BT_UINT, true, 0, BT_STR, 0},           {"type", BT_STR, true, 0, BT_STR, 0},
    {"event", BT_STR, true, 0, BT_STR, 0},        {"tabId", BT_UINT, true, TAB_ID, BT_STR, 0},
    {"method", BT_STR, true, 128, BT_STR, 0},     {"params", BT_MAP, false, 0, BT_STR, 0},
    {"sessionId", BT_STR, false, 128, BT_STR, 0}, BODY_FIELDS_END,
};

static const struct body_field f_detached[] = {
    {"v", BT_UINT, true, 0, BT_STR, 0},       {"type", BT_STR, true, 0, BT_STR, 0},
    {"event", BT_STR, true, 0, BT_STR, 0},    {"tabId", BT_UINT, true, TAB_ID, BT_STR, 0},
    {"reason", BT_STR, true, 128, BT_STR, 0}, BODY_FIELDS_END,
};

static const struct body_field f_removed[] = {
    {"v", BT_UINT, true, 0, BT_STR, 0},
    {"type", BT_STR, true, 0, BT_STR, 0},
    {"event", BT_STR, true, 0, BT_STR, 0},
    {"tabId", BT_UINT, true, TAB_ID, BT_STR, 0},
    BODY_FIELDS_END,
};

static const struct body_field f_opened_by[] = {
    {"v", BT_UINT, true, 0, BT_STR, 0},
    {"type", BT_STR, true, 0, BT_STR, 0},
    {"event", BT_STR, true, 0, BT_STR, 0},
    {"tabId", BT_UINT, true, TAB_ID, BT_STR, 0},
    {"openerTabId", BT_UINT, true, TAB_ID, BT_STR, 0},
    BODY_FIELDS_END,
};

static const struct body_field f_state[] = {
    {"v", BT_UINT, true, 0, BT_STR, 0},
    {"type", BT_STR, true, 0, BT_STR, 0},
    {"event", BT_STR, true, 0, BT_STR, 0},
    {"present", BT_ARRAY, true, 4096, BT_UINT, TAB_ID},
    {"claims", BT_ARRAY, false, 4096, BT_MAP, 0},
    BODY_FIELDS_END,
};

/* One claim of a state event: a tab the extension had given to a session
 * of the relay before this one (docs/relay.md, "Reconnecting"). */
static const struct body_field f_claim[] = {
    {"tabId", BT_UINT, true, TAB_ID, BT_STR, 0},
    {"session", BT_STR, true, 64, BT_STR, 0},
    {"created", BT_BOOL, true, 0, BT_STR, 0},
    {"children", BT_ARRAY, false, 256, BT_STR, 128},
    BODY_FIELDS_END,
};

static const struct body_field f_granted[] = {
    {"v", BT_UINT, true, 0, BT_STR, 0},       {"type", BT_STR, true, 0, BT_STR, 0},
    {"event", BT_STR, true, 0, BT_STR, 0},    {"tabId", BT_UINT, true, TAB_ID, BT_STR, 0},
    {"session", BT_STR, true, 64, BT_STR, 0}, BODY_FIELDS_END,
};

/* An error object of a response: {code:str<=64, message:str<=4096}. */
static const struct body_field f_error[] = {
    {"code", BT_STR, true, 64, BT_STR, 0},
    {"message", BT_STR, true, 4096, BT_STR, 0},
    BODY_FIELDS_END,
};

static const char *str(const json_t *o, const char *k)
{
    return json_string_value(json_object_get(o, k));
}

static int64_t num(const json_t *o, const char *k)
{
    return json_integer_value(json_object_get(o, k));
}

int extmsg_parse(const char *buf, size_t len, struct ext_msg *out, char *err, size_t errlen)
{
    memset(out, 0, sizeof(*out));
    if (len > RELAY_MAX_FRAME) {
        errbuf_set(err, errlen, "frame of %zu bytes is over the limit of %u", len, RELAY_MAX_FRAME);
        return -1;
    }
    /* Bounded before it is built: a 24 MiB frame of "[],[],..." would make
     * jansson allocate over a gigabyte. */
    if (!json_text_values_within(buf, len, RELAY_MAX_FRAME_VALUES)) {
        errbuf_set(err, errlen, "frame holds over %u JSON values", RELAY_MAX_FRAME_VALUES);
        return -1;
    }
    json_error_t jerr;
    /* REJECT_DUPLICATES: a second "tabId" must not hide the one we checked. */
    json_t *root = json_loadb(buf, len, JSON_REJECT_DUPLICATES, &jerr);
    if (!root) {
        errbuf_set(err, errlen, "not JSON: %.120s", jerr.text);
        return -1;
    }
    if (!json_is_object(root)) {
        errbuf_set(err, errlen, "not a JSON object");
        goto fail;
    }
    json_t *v = json_object_get(root, "v");
    if (!json_is_integer(v) || json_integer_value(v) != RELAY_WIRE_VERSION) {
        errbuf_set(err, errlen, "field 'v' is not %d", RELAY_WIRE_VERSION);
        goto fail;
    }
    const char *type = str(root, "type");
    if (!type) {
        errbuf_set(err, errlen, "field 'type' is missing or not a string");
        goto fail;
    }
    const struct body_field *table = NULL;
    if (strcmp(type, "auth") == 0 || strcmp(type, "pair") == 0) {
        out->kind = type[0] == 'a' ? EXT_AUTH : EXT_PAIR;
        table = f_auth;
    } else if (strcmp(type, "res") == 0) {
        out->kind = EXT_RES;
        table = f_res;
    } else if (strcmp(type, "heartbeat") == 0) {
        out->kind = EXT_HEARTBEAT;
        table = f_heartbeat;
    } else if (strcmp(type, "event") == 0) {
        const char *ev = str(root, "event");
        if (!ev) {
            errbuf_set(err, errlen, "event: field 'event' is missing or not a string");
            goto fail;
        }
        if (strcmp(ev, "cdp") == 0) {
            out->kind = EXT_EVENT_CDP;
            table = f_cdp;
        } else if (strcmp(ev, "detached") == 0) {
            out->kind = EXT_EVENT_DETACHED;
            table = f_detached;
        } else if (strcmp(ev, "removed") == 0) {
            out->kind = EXT_EVENT_REMOVED;
            table = f_removed;
        } else if (strcmp(ev, "opened-by") == 0) {
            out->kind = EXT_EVENT_OPENED_BY;
            table = f_opened_by;
        } else if (strcmp(ev, "state") == 0) {
            out->kind = EXT_EVENT_STATE;
            table = f_state;
        } else if (strcmp(ev, "granted") == 0) {
            out->kind = EXT_EVENT_GRANTED;
            table = f_granted;
        } else if (strcmp(ev, "revoked") == 0) {
            out->kind = EXT_EVENT_REVOKED;
            table = f_removed;
        } else {
            errbuf_set(err, errlen, "unknown event '%.64s'", ev);
            goto fail;
        }
        type = ev;
    } else {
        errbuf_set(err, errlen, "unknown type '%.64s'", type);
        goto fail;
    }
    if (body_check_fields(type, root, table, err, errlen) != 0)
        goto fail;

    out->root = root;
    switch (out->kind) {
    case EXT_AUTH:
    case EXT_PAIR:
        out->nonce = str(root, "nonce");
        out->mac = str(root, "mac");
        break;
    case EXT_RES:
        out->id = (uint64_t)num(root, "id");
        out->ok = json_is_true(json_object_get(root, "ok"));
        out->result = json_object_get(root, "result");
        out->error = json_object_get(root, "error");
        if (out->error && body_check_fields("res.error", out->error, f_error, err, errlen) != 0)
            goto fail;
        if (!out->ok && !out->error) {
            errbuf_set(err, errlen, "res: a failed response needs 'error'");
            goto fail;
        }
        break;
    case EXT_HEARTBEAT:
        break;
    case EXT_EVENT_CDP:
        out->tab_id = num(root, "tabId");
        out->method = str(root, "method");
        out->params = json_object_get(root, "params");
        out->session = str(root, "sessionId");
        break;
    case EXT_EVENT_DETACHED:
        out->tab_id = num(root, "tabId");
        out->reason = str(root, "reason");
        break;
    case EXT_EVENT_REMOVED:
    case EXT_EVENT_REVOKED:
        out->tab_id = num(root, "tabId");
        break;
    case EXT_EVENT_GRANTED:
        out->tab_id = num(root, "tabId");
        out->session = str(root, "session");
        break;
    case EXT_EVENT_OPENED_BY:
        out->tab_id = num(root, "tabId");
        out->opener = num(root, "openerTabId");
        break;
    case EXT_EVENT_STATE: {
        out->present = json_object_get(root, "present");
        out->claims = json_object_get(root, "claims");
        size_t i;
        json_t *c;
        json_array_foreach(out->claims, i, c)
        {
            char what[32];
            snprintf(what, sizeof(what), "state.claims[%zu]", i);
            if (body_check_fields(what, c, f_claim, err, errlen) != 0)
                goto fail;
        }
        break;
    }
    }
    return 0;
fail:
    json_decref(root);
    memset(out, 0, sizeof(*out));
    return -1;
}

void extmsg_clear(struct ext_msg *m)
{
    if (!m)
        return;
    json_decref(m->root);
    memset(m, 0, sizeof(*m));
}
