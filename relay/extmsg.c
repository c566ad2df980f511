/* extmsg.c - see extmsg.h. */
#include "extmsg.h"

#include <string.h>

#include "bodies.h"
#include "errbuf.h"

#define END                                                                                        \
    {                                                                                              \
        NULL, BT_STR, false, 0, BT_STR                                                             \
    }
#define TAB_ID INT32_MAX

static const struct body_field f_auth[] = {
    {"v", BT_UINT, true, 0, BT_STR},
    {"type", BT_STR, true, 0, BT_STR},
    {"nonce", BT_STR, true, 64, BT_STR},
    {"mac", BT_STR, true, 64, BT_STR},
    END,
};

static const struct body_field f_res[] = {
    {"v", BT_UINT, true, 0, BT_STR},
    {"type", BT_STR, true, 0, BT_STR},
    {"id", BT_UINT, true, UINT32_MAX, BT_STR},
    {"ok", BT_BOOL, true, 0, BT_STR},
    {"result", BT_MAP, false, 0, BT_STR},
    {"error", BT_MAP, false, 0, BT_STR},
    END,
};

static const struct body_field f_heartbeat[] = {
    {"v", BT_UINT, true, 0, BT_STR},
    {"type", BT_STR, true, 0, BT_STR},
    END,
};

static const struct body_field f_cdp[] = {
    {"v", BT_UINT, true, 0, BT_STR},           {"type", BT_STR, true, 0, BT_STR},
    {"event", BT_STR, true, 0, BT_STR},        {"tabId", BT_UINT, true, TAB_ID, BT_STR},
    {"method", BT_STR, true, 128, BT_STR},     {"params", BT_MAP, false, 0, BT_STR},
    {"sessionId", BT_STR, false, 128, BT_STR}, END,
};

static const struct body_field f_detached[] = {
    {"v", BT_UINT, true, 0, BT_STR},       {"type", BT_STR, true, 0, BT_STR},
    {"event", BT_STR, true, 0, BT_STR},    {"tabId", BT_UINT, true, TAB_ID, BT_STR},
    {"reason", BT_STR, true, 128, BT_STR}, END,
};

static const struct body_field f_removed[] = {
    {"v", BT_UINT, true, 0, BT_STR},
    {"type", BT_STR, true, 0, BT_STR},
    {"event", BT_STR, true, 0, BT_STR},
    {"tabId", BT_UINT, true, TAB_ID, BT_STR},
    END,
};

static const struct body_field f_opened_by[] = {
    {"v", BT_UINT, true, 0, BT_STR},
    {"type", BT_STR, true, 0, BT_STR},
    {"event", BT_STR, true, 0, BT_STR},
    {"tabId", BT_UINT, true, TAB_ID, BT_STR},
    {"openerTabId", BT_UINT, true, TAB_ID, BT_STR},
    END,
};

static const struct body_field f_state[] = {
    {"v", BT_UINT, true, 0, BT_STR},
    {"type", BT_STR, true, 0, BT_STR},
    {"event", BT_STR, true, 0, BT_STR},
    {"present", BT_ARRAY, true, 4096, BT_UINT},
    END,
};

static const struct body_field f_granted[] = {
    {"v", BT_UINT, true, 0, BT_STR},       {"type", BT_STR, true, 0, BT_STR},
    {"event", BT_STR, true, 0, BT_STR},    {"tabId", BT_UINT, true, TAB_ID, BT_STR},
    {"session", BT_STR, true, 64, BT_STR}, END,
};

/* An error object of a response: {code:str<=64, message:str<=4096}. */
static const struct body_field f_error[] = {
    {"code", BT_STR, true, 64, BT_STR},
    {"message", BT_STR, true, 4096, BT_STR},
    END,
};

static bool fits(const json_t *v, enum body_type t, uint64_t bound)
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

/* Check obj against table: required fields present, every field of its type
 * and bound, array items of their type, no field the table does not name. */
static int check(const char *what, const json_t *obj, const struct body_field *table, char *err,
                 size_t errlen)
{
    for (const struct body_field *f = table; f->name; f++) {
        const json_t *v = json_object_get(obj, f->name);
        if (!v) {
            if (f->required) {
                errbuf_set(err, errlen, "%s: field '%s' is missing", what, f->name);
                return -1;
            }
            continue;
        }
        if (!fits(v, f->type, f->bound)) {
            errbuf_set(err, errlen, "%s: field '%s' has the wrong type or size", what, f->name);
            return -1;
        }
        if (f->type == BT_ARRAY) {
            size_t i;
            const json_t *item;
            json_array_foreach(v, i, item)
            {
                if (!fits(item, f->item, f->item == BT_UINT ? TAB_ID : 0)) {
                    errbuf_set(err, errlen, "%s: field '%s'[%zu] has the wrong type", what, f->name,
                               i);
                    return -1;
                }
            }
        }
    }
    const char *key;
    const json_t *v;
    json_object_foreach((json_t *)obj, key, v)
    {
        const struct body_field *f = table;
        while (f->name && strcmp(f->name, key) != 0)
            f++;
        if (!f->name) {
            errbuf_set(err, errlen, "%s: unknown field '%.64s'", what, key);
            return -1;
        }
    }
    return 0;
}

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
    if (strcmp(type, "auth") == 0) {
        out->kind = EXT_AUTH;
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
    if (check(type, root, table, err, errlen) != 0)
        goto fail;

    out->root = root;
    switch (out->kind) {
    case EXT_AUTH:
        out->nonce = str(root, "nonce");
        out->mac = str(root, "mac");
        break;
    case EXT_RES:
        out->id = (uint64_t)num(root, "id");
        out->ok = json_is_true(json_object_get(root, "ok"));
        out->result = json_object_get(root, "result");
        out->error = json_object_get(root, "error");
        if (out->error && check("res.error", out->error, f_error, err, errlen) != 0)
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
    case EXT_EVENT_STATE:
        out->present = json_object_get(root, "present");
        break;
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
