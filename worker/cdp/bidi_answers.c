/*
 * bidi_answers.c - BiDi answers as CDP answers, and BiDi's remote values
 * as CDP's (bidi_map.h).
 */
#include <stdio.h>
#include <string.h>

#include "bidi_map_int.h"
#include "transport.h"

/* ---- values ---- */

static json_t *object_entries(json_t *entries, bool map)
{
    json_t *o = json_object();
    size_t i;
    json_t *e;
    json_array_foreach(entries, i, e)
    {
        json_t *k = json_array_get(e, 0), *v = json_array_get(e, 1);
        const char *key = json_is_string(k) ? json_string_value(k)
                          : map             ? json_string_value(json_object_get(k, "value"))
                                            : NULL;
        if (key)
            json_object_set_new(o, key, bidi_remote_value_json(v));
    }
    return o;
}

json_t *bidi_remote_value_json(json_t *rv)
{
    const char *type = bm_str(rv, "type");
    json_t *v = json_object_get(rv, "value");
    if (!type)
        return json_null();
    if (!strcmp(type, "string") || !strcmp(type, "boolean"))
        return v ? json_incref(v) : json_null();
    if (!strcmp(type, "number")) {
        if (json_is_number(v))
            return json_incref(v);
        /* NaN, Infinity: not JSON. "-0" is 0. */
        return json_is_string(v) && !strcmp(json_string_value(v), "-0") ? json_integer(0)
                                                                        : json_null();
    }
    if (!strcmp(type, "bigint"))
        return json_is_string(v) ? json_string(json_string_value(v)) : json_null();
    if (!strcmp(type, "array") || !strcmp(type, "set")) {
        json_t *a = json_array();
        size_t i;
        json_t *e;
        json_array_foreach(v, i, e) json_array_append_new(a, bidi_remote_value_json(e));
        return a;
    }
    if (!strcmp(type, "object") || !strcmp(type, "map"))
        return object_entries(v, !strcmp(type, "map"));
    if (!strcmp(type, "date") || !strcmp(type, "regexp"))
        return json_is_string(v) ? json_incref(v) : json_null();
    /* undefined, null, functions, nodes, windows: what JSON.stringify drops
     * or CDP's returnByValue turns into {}. */
    if (!strcmp(type, "undefined") || !strcmp(type, "null"))
        return json_null();
    return json_object();
}

/* CDP's result object for a remote value: {type, value}, or for a node
 * not asked for by value a handle to it (objectId). */
static json_t *cdp_remote_object(struct bidi_map *m, json_t *rv, bool by_value, const char *ctx,
                                 int world)
{
    const char *type = bm_str(rv, "type");
    const char *sid = bm_str(rv, "sharedId");
    if (!by_value && sid) {
        char oid[64];
        bm_object_id(oid, sizeof oid, bm_node_add(m, sid, ctx), world);
        return json_pack("{s:s, s:s, s:s}", "type", "object", "subtype", "node", "objectId", oid);
    }
    if (!type || !strcmp(type, "undefined"))
        return json_pack("{s:s}", "type", "undefined");
    const char *cdp_type = !strcmp(type, "string")     ? "string"
                           : !strcmp(type, "number")   ? "number"
                           : !strcmp(type, "boolean")  ? "boolean"
                           : !strcmp(type, "bigint")   ? "bigint"
                           : !strcmp(type, "function") ? "function"
                                                       : "object";
    return json_pack("{s:s, s:o}", "type", cdp_type, "value", bidi_remote_value_json(rv));
}

/* ---- answers ---- */

/* Firefox's network errors (NS_ERROR_*, in a failed navigation's message)
 * under Chromium's names, which agents and tabvisor's own hints know, with
 * Firefox's own after them. NULL when the message names none. */
static const char *net_error(const char *message)
{
    static const struct {
        const char *ns, *net;
    } map[] = {
        {"NS_ERROR_CONNECTION_REFUSED",
         "net::ERR_CONNECTION_REFUSED (NS_ERROR_CONNECTION_REFUSED)"},
        {"NS_ERROR_UNKNOWN_HOST", "net::ERR_NAME_NOT_RESOLVED (NS_ERROR_UNKNOWN_HOST)"},
        {"NS_ERROR_NET_TIMEOUT", "net::ERR_TIMED_OUT (NS_ERROR_NET_TIMEOUT)"},
        {"NS_ERROR_NET_RESET", "net::ERR_CONNECTION_RESET (NS_ERROR_NET_RESET)"},
        {"NS_ERROR_NET_INTERRUPT", "net::ERR_CONNECTION_CLOSED (NS_ERROR_NET_INTERRUPT)"},
        {"NS_ERROR_PROXY_CONNECTION_REFUSED",
         "net::ERR_BLOCKED_BY_CLIENT (refused by tabvisor's network policy: "
         "NS_ERROR_PROXY_CONNECTION_REFUSED)"},
        {"NS_ERROR_PROXY", "net::ERR_BLOCKED_BY_CLIENT (refused by tabvisor's network policy)"},
        {"NS_ERROR_PORT_ACCESS_NOT_ALLOWED",
         "net::ERR_UNSAFE_PORT (NS_ERROR_PORT_ACCESS_NOT_ALLOWED)"},
        {"NS_ERROR_OFFLINE", "net::ERR_INTERNET_DISCONNECTED (NS_ERROR_OFFLINE)"},
        {"NS_BINDING_ABORTED", "net::ERR_ABORTED (NS_BINDING_ABORTED)"},
        {"NS_ERROR_ABORT", "net::ERR_ABORTED (NS_ERROR_ABORT)"},
        {"NS_ERROR_MALFORMED_URI", "net::ERR_INVALID_URL (NS_ERROR_MALFORMED_URI)"},
        {"NS_ERROR_UNKNOWN_PROTOCOL", "net::ERR_UNKNOWN_URL_SCHEME (NS_ERROR_UNKNOWN_PROTOCOL)"},
    };
    if (!message)
        return NULL;
    for (size_t i = 0; i < sizeof map / sizeof map[0]; i++)
        if (strstr(message, map[i].ns))
            return map[i].net;
    return strstr(message, "NS_ERROR_") ? message : NULL;
}

static json_t *eval_answer(struct bidi_map *m, long long id, json_t *r, bool world, bool by_value,
                           const char *ctx)
{
    const char *type = bm_str(r, "type");
    if (type && !strcmp(type, "exception")) {
        json_t *d = json_object_get(r, "exceptionDetails");
        const char *text = bm_str(d, "text");
        json_t *exc = json_object_get(d, "exception");
        const char *desc = bm_str(exc, "type") && !strcmp(bm_str(exc, "type"), "string")
                               ? bm_str(exc, "value")
                               : text;
        /* Our engine is not in this sandbox: a new document made a new one.
         * CDP says so of a world whose document went. */
        if (world && text && strstr(text, "__tabvisor is not defined"))
            return bm_error(id, -32000, "Cannot find context with specified id");
        return bm_answer(id, json_pack("{s:{s:s}, s:{s:s, s:{s:s}}}", "result", "type", "object",
                                       "exceptionDetails", "text", text ? text : "exception",
                                       "exception", "description",
                                       desc ? desc : (text ? text : "exception")));
    }
    return bm_answer(
        id, json_pack("{s:o}", "result",
                      cdp_remote_object(m, json_object_get(r, "result"), by_value, ctx, 0)));
}

static json_t *layout_answer(long long id, json_t *r)
{
    json_t *v = bidi_remote_value_json(json_object_get(r, "result"));
    double cw = json_number_value(json_array_get(v, 0)),
           ch = json_number_value(json_array_get(v, 1));
    double vw = json_number_value(json_array_get(v, 2)),
           vh = json_number_value(json_array_get(v, 3));
    double sx = json_number_value(json_array_get(v, 4)),
           sy = json_number_value(json_array_get(v, 5));
    json_decref(v);
    json_t *content =
        json_pack("{s:f, s:f, s:f, s:f}", "x", 0.0, "y", 0.0, "width", cw, "height", ch);
    json_t *layout = json_pack("{s:f, s:f, s:f, s:f}", "pageX", sx, "pageY", sy, "clientWidth", vw,
                               "clientHeight", vh);
    json_t *visual =
        json_pack("{s:f, s:f, s:f, s:f, s:f, s:f, s:f}", "offsetX", 0.0, "offsetY", 0.0, "pageX",
                  sx, "pageY", sy, "clientWidth", vw, "clientHeight", vh, "scale", 1.0);
    return bm_answer(id, json_pack("{s:O, s:o, s:O, s:o, s:o}", "contentSize", content,
                                   "cssContentSize", content, "layoutViewport", layout,
                                   "cssLayoutViewport", layout, "cssVisualViewport", visual));
}

/* DOM.getFrameOwner's answer: the frame element, of the [element, window]
 * pairs its parent listed, whose window is frame. */
static json_t *frame_owner_answer(struct bidi_map *m, long long id, json_t *r, const char *parent,
                                  const char *frame)
{
    json_t *pairs = json_object_get(json_object_get(r, "result"), "value");
    size_t i;
    json_t *pair;
    json_array_foreach(pairs, i, pair)
    {
        json_t *items = json_object_get(pair, "value");
        json_t *el = json_array_get(items, 0), *win = json_array_get(items, 1);
        const char *session = bm_str(json_object_get(win, "value"), "context");
        if (frame && session && !strcmp(session, frame) && bm_str(el, "sharedId"))
            return bm_answer(id, json_pack("{s:I}", "backendNodeId",
                                           bm_node_add(m, bm_str(el, "sharedId"), parent)));
    }
    return bm_error(id, -32000, "Frame with the given id does not belong to the target.");
}

/* A successful BiDi answer r to command id, as pend (its pending entry)
 * says to map it. */
static json_t *success_answer(struct bidi_map *m, long long id, json_t *r, json_t *pend)
{
    enum kind kind = (enum kind)json_integer_value(json_array_get(pend, 0));
    const char *ctx = json_string_value(json_array_get(pend, 1));
    bool by_value = json_is_true(json_array_get(pend, 2));
    json_t *extra = json_array_get(pend, 3);
    switch (kind) {
    case K_USER_CONTEXT:
        return bm_answer(id,
                         json_pack("{s:s}", "browserContextId", bm_str(r, "userContext") ?: ""));
    case K_CREATE_TAB: {
        const char *c = bm_str(r, "context");
        if (c && strlen(c) < MAX_ID)
            json_object_set_new(m->tops, c, json_true());
        return bm_answer(id, json_pack("{s:s}", "targetId", c ? c : ""));
    }
    case K_NAVIGATE: {
        const char *nav = bm_str(r, "navigation");
        json_t *frag = json_object_get(m->fragments, ctx);
        bool same_document = nav && json_is_string(frag) && !strcmp(json_string_value(frag), nav);
        json_object_del(m->fragments, ctx);
        return same_document ? bm_answer(id, json_pack("{s:s}", "frameId", ctx))
                             : bm_answer(id, json_pack("{s:s, s:s}", "frameId", ctx, "loaderId",
                                                       nav ? nav : ""));
    }
    case K_EVAL_MAIN:
    case K_EVAL_WORLD:
        return eval_answer(m, id, r, kind == K_EVAL_WORLD, by_value, ctx);
    case K_DESCRIBE: {
        json_t *node = json_pack("{s:O}", "backendNodeId", extra);
        json_t *rv = json_object_get(r, "result");
        const char *child = bm_str(json_object_get(rv, "value"), "context");
        if (bm_str(rv, "type") && !strcmp(bm_str(rv, "type"), "window") && child)
            json_object_set_new(node, "frameId", json_string(child));
        return bm_answer(id, json_pack("{s:o}", "node", node));
    }
    case K_FRAME_OWNER:
        return frame_owner_answer(m, id, r, ctx, json_string_value(extra));
    case K_SCREENSHOT:
        return bm_answer(id, json_pack("{s:s}", "data", bm_str(r, "data") ?: ""));
    case K_LAYOUT:
        return layout_answer(id, r);
    case K_PRELOAD:
        return bm_answer(id, json_pack("{s:s}", "identifier", bm_str(r, "script") ?: ""));
    case K_PRINT:
        return bm_print_answer(m, id, r, json_is_true(extra));
    case K_COOKIES:
        return bm_cookies_answer(id, r);
    case K_SET_COOKIE:
        return bm_answer(id, json_pack("{s:b}", "success", 1));
    case K_BODY: {
        json_t *bytes = json_object_get(r, "bytes");
        bool base64 = bm_str(bytes, "type") && !strcmp(bm_str(bytes, "type"), "base64");
        return bm_answer(id, json_pack("{s:s, s:b}", "body", bm_str(bytes, "value") ?: "",
                                       "base64Encoded", base64));
    }
    case K_POST_DATA: {
        /* CDP's postData is text; a binary body stays unshown. */
        json_t *bytes = json_object_get(r, "bytes");
        if (bm_str(bytes, "type") && !strcmp(bm_str(bytes, "type"), "base64"))
            return bm_error(id, CDP_ERR_BIDI, "the request body is binary");
        return bm_answer(id, json_pack("{s:s}", "postData", bm_str(bytes, "value") ?: ""));
    }
    case K_EMPTY:
    case K_HISTORY_GO:
    case K_INTERCEPT:
        break;
    }
    return bm_answer(id, NULL);
}

static json_t *error_answer(long long id, json_t *msg, json_t *pend)
{
    enum kind kind = (enum kind)json_integer_value(json_array_get(pend, 0));
    const char *e = bm_str(msg, "error"), *text = bm_str(msg, "message");
    const char *net = kind == K_NAVIGATE ? net_error(text) : NULL;
    if (net)
        return bm_answer(id,
                         json_pack("{s:s, s:s}", "frameId",
                                   json_string_value(json_array_get(pend, 1)), "errorText", net));
    return bm_error(id, CDP_ERR_BIDI, "%s: %s", e ? e : "error", text ? text : "");
}

void bidi_map_answer(struct bidi_map *m, json_t *msg, void (*emit)(void *ud, json_t *cdp), void *ud)
{
    json_t *jid = json_object_get(msg, "id");
    if (!json_is_integer(jid))
        return;
    long long id = json_integer_value(jid);
    char key[24];
    snprintf(key, sizeof key, "%lld", id);
    json_t *pend = json_incref(json_object_get(m->pending, key));
    if (!pend)
        return;
    json_object_del(m->pending, key);
    const char *type = bm_str(msg, "type");
    bool failed = type && !strcmp(type, "error");
    json_t *out = failed ? error_answer(id, msg, pend)
                         : success_answer(m, id, json_object_get(msg, "result"), pend);
    emit(ud, out);
    json_decref(out);
    if ((enum kind)json_integer_value(json_array_get(pend, 0)) == K_INTERCEPT)
        bm_intercept_answered(m, json_string_value(json_array_get(pend, 1)) ?: "",
                              json_object_get(msg, "result"), failed);
    /* A history step that started no navigation before its answer stayed
     * in the document, and Firefox says nothing more of it: CDP would have
     * said navigatedWithinDocument. */
    const char *ctx = json_string_value(json_array_get(pend, 1));
    if ((enum kind)json_integer_value(json_array_get(pend, 0)) == K_HISTORY_GO && ctx) {
        json_t *started = json_object_get(m->history_steps, ctx);
        if (!failed && json_is_false(started))
            bm_emit(emit, ud, ctx, "Page.navigatedWithinDocument",
                    json_pack("{s:s, s:s}", "frameId", ctx, "url", ""));
        json_object_del(m->history_steps, ctx);
    }
    json_decref(pend);
}
