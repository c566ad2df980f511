/*
 * bidi_map.c - CDP commands as WebDriver BiDi, BiDi answers and events as
 * CDP (bidi_map.h).
 */
#include "bidi_map.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "transport.h"

/* Isolated worlds handed out (Page.createIsolatedWorld): a CDP execution
 * context id names a sandbox of a browsing context. The ring is larger than
 * the frames a page keeps worlds in at once. */
#define MAX_WORLDS 256
#define MAX_ID 64

/* How an answer is turned back into CDP (kept per command id). */
enum kind {
    K_EMPTY,        /* {} whatever BiDi says */
    K_USER_CONTEXT, /* {browserContextId} */
    K_CREATE_TAB,   /* {targetId} */
    K_NAVIGATE,     /* {frameId, loaderId} */
    K_EVAL_MAIN,    /* Runtime.evaluate in the page's own world */
    K_EVAL_WORLD,   /* ... in one of our sandboxes */
    K_SCREENSHOT,   /* {data} */
    K_LAYOUT,       /* Page.getLayoutMetrics from a script's measures */
    K_PRELOAD,      /* {identifier} */
    K_HISTORY_GO,   /* browsingContext.traverseHistory */
    K_DESCRIBE,     /* DOM.describeNode: {node: {backendNodeId, frameId}} */
    K_FRAME_OWNER,  /* DOM.getFrameOwner: {backendNodeId} */
};

struct world {
    int id; /* 0: free */
    char context[MAX_ID];
    char sandbox[32];
};

struct bidi_map {
    struct world worlds[MAX_WORLDS];
    int next_world;
    json_t *tops;    /* top-level context id -> true: the pages (sessions) we opened */
    json_t *parents; /* a frame's context id -> its top-level context id */
    json_t *pending; /* "id" -> [kind, context, by value, extra] */
    /* Nodes handed to the client (CDP's backendNodeId is a number, BiDi's
     * sharedId a string). */
    json_t *nodes;         /* node n is nodes[n - 1]: [sharedId, browsing context] */
    json_t *node_numbers;  /* sharedId -> n */
    json_t *frame_parent;  /* a frame's context id -> its parent's */
    json_t *fragments;     /* top context -> the navigation id of its last fragment navigation */
    json_t *history_steps; /* top context -> whether a navigation started since its step */
};

struct bidi_map *bidi_map_new(void)
{
    struct bidi_map *m = calloc(1, sizeof *m);
    if (!m)
        return NULL;
    m->tops = json_object();
    m->parents = json_object();
    m->pending = json_object();
    m->nodes = json_array();
    m->frame_parent = json_object();
    m->node_numbers = json_object();
    m->fragments = json_object();
    m->history_steps = json_object();
    if (!m->fragments || !m->history_steps || !m->tops || !m->parents || !m->pending || !m->nodes ||
        !m->frame_parent || !m->node_numbers) {
        bidi_map_free(m);
        return NULL;
    }
    return m;
}

void bidi_map_free(struct bidi_map *m)
{
    if (!m)
        return;
    json_decref(m->tops);
    json_decref(m->parents);
    json_decref(m->pending);
    json_decref(m->nodes);
    json_decref(m->frame_parent);
    json_decref(m->node_numbers);
    json_decref(m->fragments);
    json_decref(m->history_steps);
    free(m);
}

/* ---- building messages ---- */

static json_t *cdp_answer(long long id, json_t *result)
{
    return json_pack("{s:I, s:o}", "id", (json_int_t)id, "result", result ? result : json_object());
}

static json_t *cdp_error(long long id, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static json_t *cdp_error(long long id, int code, const char *fmt, ...)
{
    char msg[600];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return json_pack("{s:I, s:{s:i, s:s}}", "id", (json_int_t)id, "error", "code", code, "message",
                     msg);
}

static json_t *not_supported(long long id, const char *method)
{
    return cdp_error(id, CDP_ERR_NOT_SUPPORTED,
                     "%s has no WebDriver BiDi counterpart in tabvisor (Firefox)", method);
}

/* Note how id's answer maps back, then hand out the command. */
static enum bidi_outcome send_cmd_with(struct bidi_map *m, long long id, enum kind kind,
                                       bool by_value, json_t *extra, const char *context,
                                       const char *method, json_t *params, json_t **out)
{
    char key[24];
    snprintf(key, sizeof key, "%lld", id);
    json_object_set_new(m->pending, key,
                        json_pack("[i,s,b,o]", (int)kind, context ? context : "", by_value,
                                  extra ? extra : json_null()));
    *out = json_pack("{s:I, s:s, s:o}", "id", (json_int_t)id, "method", method, "params", params);
    return BIDI_SEND;
}

static const char *str(json_t *o, const char *k)
{
    return json_string_value(json_object_get(o, k));
}

static double num(json_t *o, const char *k)
{
    return json_number_value(json_object_get(o, k));
}

static enum bidi_outcome send_cmd(struct bidi_map *m, long long id, enum kind kind,
                                  const char *context, const char *method, json_t *params,
                                  json_t **out)
{
    return send_cmd_with(m, id, kind, true, NULL, context, method, params, out);
}

/* ---- nodes ---- */

/* Most nodes numbered at once; past it the numbering starts again (an old
 * number then names no node: CDP's answer for a node that is gone). */
#define MAX_NODES 20000
#define NODE_PREFIX "bidi-node:"

/* The number of the node with sharedId sid in browsing context ctx
 * (numbered on first sight). */
static json_int_t node_add(struct bidi_map *m, const char *sid, const char *ctx)
{
    json_t *n = json_object_get(m->node_numbers, sid);
    if (n)
        return json_integer_value(n);
    if (json_array_size(m->nodes) >= MAX_NODES) {
        json_array_clear(m->nodes);
        json_object_clear(m->node_numbers);
    }
    json_array_append_new(m->nodes, json_pack("[s,s]", sid, ctx ? ctx : ""));
    json_int_t k = (json_int_t)json_array_size(m->nodes);
    json_object_set_new(m->node_numbers, sid, json_integer(k));
    return k;
}

/* Node n's sharedId and browsing context, or false. */
static bool node_get(struct bidi_map *m, json_int_t n, const char **sid, const char **ctx)
{
    json_t *e = n > 0 ? json_array_get(m->nodes, (size_t)(n - 1)) : NULL;
    *sid = json_string_value(json_array_get(e, 0));
    *ctx = json_string_value(json_array_get(e, 1));
    return *sid && *ctx;
}

/* CDP objectIds of ours name a node and the world it was resolved in:
 * "bidi-node:N:W" (W 0: the page's own). */
static void object_id(char *out, size_t len, json_int_t n, int world)
{
    snprintf(out, len, NODE_PREFIX "%lld:%d", (long long)n, world);
}

static bool parse_object_id(const char *oid, json_int_t *n, int *world)
{
    long long nn;
    size_t plen = strlen(NODE_PREFIX);
    if (!oid || strncmp(oid, NODE_PREFIX, plen) != 0 ||
        sscanf(oid + plen, "%lld:%d", &nn, world) != 2)
        return false;
    *n = (json_int_t)nn;
    return true;
}

/* A CDP call argument ({objectId} of a node, or {value}) as a BiDi one. */
static json_t *bidi_argument(struct bidi_map *m, json_t *a)
{
    json_int_t n;
    int world;
    const char *sid, *ctx;
    if (parse_object_id(str(a, "objectId"), &n, &world) && node_get(m, n, &sid, &ctx))
        return json_pack("{s:s}", "sharedId", sid);
    json_t *v = json_object_get(a, "value");
    if (json_is_string(v))
        return json_pack("{s:s, s:O}", "type", "string", "value", v);
    if (json_is_number(v))
        return json_pack("{s:s, s:O}", "type", "number", "value", v);
    if (json_is_boolean(v))
        return json_pack("{s:s, s:O}", "type", "boolean", "value", v);
    if (json_is_null(v))
        return json_pack("{s:s}", "type", "null");
    return json_pack("{s:s}", "type", "undefined");
}

/* ---- input ---- */

/* WebDriver's code points for keys that type nothing (WebDriver spec,
 * "Keyboard actions"), by KeyboardEvent.key. Enter is WebDriver's "Return"
 * (U+E006, code Enter); its "Enter" (U+E007) is the keypad's. */
static const struct {
    const char *key;
    unsigned cp;
} special_keys[] = {
    {"Backspace", 0xE003}, {"Tab", 0xE004},      {"Enter", 0xE006},      {"Shift", 0xE008},
    {"Control", 0xE009},   {"Alt", 0xE00A},      {"Pause", 0xE00B},      {"Escape", 0xE00C},
    {"PageUp", 0xE00E},    {"PageDown", 0xE00F}, {"End", 0xE010},        {"Home", 0xE011},
    {"ArrowLeft", 0xE012}, {"ArrowUp", 0xE013},  {"ArrowRight", 0xE014}, {"ArrowDown", 0xE015},
    {"Insert", 0xE016},    {"Delete", 0xE017},   {"F1", 0xE031},         {"F2", 0xE032},
    {"F3", 0xE033},        {"F4", 0xE034},       {"F5", 0xE035},         {"F6", 0xE036},
    {"F7", 0xE037},        {"F8", 0xE038},       {"F9", 0xE039},         {"F10", 0xE03A},
    {"F11", 0xE03B},       {"F12", 0xE03C},      {"Meta", 0xE03D},
};

/* One code point as UTF-8 into out (at least 5 bytes). */
static void utf8_put(unsigned cp, char *out)
{
    if (cp < 0x80) {
        out[0] = (char)cp;
        out[1] = 0;
    } else if (cp < 0x800) {
        out[0] = (char)(0xC0 | cp >> 6);
        out[1] = (char)(0x80 | (cp & 0x3F));
        out[2] = 0;
    } else {
        out[0] = (char)(0xE0 | cp >> 12);
        out[1] = (char)(0x80 | ((cp >> 6) & 0x3F));
        out[2] = (char)(0x80 | (cp & 0x3F));
        out[3] = 0;
    }
}

/* Length of the UTF-8 sequence s starts with (1 for a stray byte). */
static size_t utf8_len(const char *s)
{
    unsigned char c = (unsigned char)*s;
    size_t n = c < 0xC0 ? 1 : c < 0xE0 ? 2 : c < 0xF0 ? 3 : 4;
    for (size_t i = 1; i < n; i++)
        if (!s[i])
            return i;
    return n;
}

/* The BiDi key value of a CDP key event: the character it names, or
 * WebDriver's code for a named key. false when there is none. */
static bool key_value(json_t *params, char out[8])
{
    const char *key = str(params, "key");
    if (!key || !*key)
        key = str(params, "text");
    if (!key || !*key)
        return false;
    if (strcmp(key, "\r") == 0 || strcmp(key, "\n") == 0)
        key = "Enter";
    if (utf8_len(key) == strlen(key)) {
        snprintf(out, 8, "%s", key);
        return true;
    }
    for (size_t i = 0; i < sizeof special_keys / sizeof special_keys[0]; i++) {
        if (strcmp(special_keys[i].key, key) == 0) {
            utf8_put(special_keys[i].cp, out);
            return true;
        }
    }
    return false;
}

static json_t *key_source(json_t *actions)
{
    return json_pack("[{s:s, s:s, s:o}]", "type", "key", "id", "keyboard", "actions", actions);
}

static int mouse_button(const char *b)
{
    if (!b || !strcmp(b, "left"))
        return 0;
    if (!strcmp(b, "middle"))
        return 1;
    if (!strcmp(b, "right"))
        return 2;
    if (!strcmp(b, "back"))
        return 3;
    if (!strcmp(b, "forward"))
        return 4;
    return 0;
}

/* Input.dispatchMouseEvent: a move, a move and a press, a move and a
 * release, or a wheel turn. NULL when the type is not one of those. */
static json_t *mouse_actions(json_t *p)
{
    const char *type = str(p, "type");
    json_int_t x = (json_int_t)lround(num(p, "x")), y = (json_int_t)lround(num(p, "y"));
    if (!type)
        return NULL;
    if (!strcmp(type, "mouseWheel"))
        return json_pack("[{s:s, s:s, s:[{s:s, s:I, s:I, s:I, s:I}]}]", "type", "wheel", "id",
                         "wheel", "actions", "type", "scroll", "x", x, "y", y, "deltaX",
                         (json_int_t)lround(num(p, "deltaX")), "deltaY",
                         (json_int_t)lround(num(p, "deltaY")));
    json_t *acts = json_pack("[{s:s, s:I, s:I}]", "type", "pointerMove", "x", x, "y", y);
    if (!strcmp(type, "mousePressed") || !strcmp(type, "mouseReleased"))
        json_array_append_new(acts, json_pack("{s:s, s:i}", "type",
                                              type[5] == 'P' ? "pointerDown" : "pointerUp",
                                              "button", mouse_button(str(p, "button"))));
    else if (strcmp(type, "mouseMoved") != 0) {
        json_decref(acts);
        return NULL;
    }
    return json_pack("[{s:s, s:s, s:{s:s}, s:o}]", "type", "pointer", "id", "mouse", "parameters",
                     "pointerType", "mouse", "actions", acts);
}

/* ---- commands ---- */

static struct world *world_by_id(struct bidi_map *m, int id)
{
    for (int i = 0; i < MAX_WORLDS; i++)
        if (m->worlds[i].id == id && id)
            return &m->worlds[i];
    return NULL;
}

static json_t *new_world(struct bidi_map *m, long long id, json_t *p)
{
    const char *frame = str(p, "frameId"), *name = str(p, "worldName");
    if (!frame || !*frame || strlen(frame) >= MAX_ID)
        return cdp_error(id, -32602, "Page.createIsolatedWorld needs a frameId");
    int n = ++m->next_world;
    struct world *w = &m->worlds[n % MAX_WORLDS];
    w->id = n;
    snprintf(w->context, sizeof w->context, "%s", frame);
    snprintf(w->sandbox, sizeof w->sandbox, "%s", name && *name ? name : "tabvisor");
    return cdp_answer(id, json_pack("{s:i}", "executionContextId", n));
}

/* Set-up commands with nothing to do on Firefox: events come subscribed
 * (the bridge), pages are never paused, focus is not throttled. */
static const char *const no_op[] = {
    "Page.enable",
    "Page.setLifecycleEventsEnabled",
    "Runtime.enable",
    "Network.enable",
    "Target.setAutoAttach",
    "Runtime.runIfWaitingForDebugger",
    "Emulation.setFocusEmulationEnabled",
    "Runtime.releaseObjectGroup",
    "Runtime.terminateExecution", /* best effort after a timeout: BiDi has none */
    "Input.setInterceptDrags",
    "Page.setInterceptFileChooserDialog",
    /* The network policy (worker/netpolicy.c) holds in Firefox's SOCKS
     * proxy and the bridge's URL check; no request pauses. */
    "Fetch.enable",
    "Fetch.disable",
};

static enum bidi_outcome evaluate(struct bidi_map *m, long long id, const char *ctx, json_t *p,
                                  json_t **out)
{
    const char *expr = str(p, "expression");
    if (!expr)
        expr = "undefined";
    json_t *target;
    enum kind kind = K_EVAL_MAIN;
    json_t *cid = json_object_get(p, "contextId");
    if (cid) {
        struct world *w = world_by_id(m, (int)json_integer_value(cid));
        if (!w) {
            *out = cdp_error(id, -32000, "Cannot find context with specified id");
            return BIDI_ANSWER;
        }
        target = json_pack("{s:s, s:s}", "context", w->context, "sandbox", w->sandbox);
        kind = K_EVAL_WORLD;
    } else {
        target = json_pack("{s:s}", "context", ctx);
    }
    /* Nodes in the answer belong to the context evaluated in. */
    char where[MAX_ID];
    snprintf(where, sizeof where, "%s", str(target, "context") ?: "");
    return send_cmd_with(m, id, kind, json_is_true(json_object_get(p, "returnByValue")), NULL,
                         where, "script.evaluate",
                         json_pack("{s:s, s:o, s:b, s:s}", "expression", expr, "target", target,
                                   "awaitPromise", json_is_true(json_object_get(p, "awaitPromise")),
                                   "resultOwnership", "none"),
                         out);
}

static enum bidi_outcome screenshot(struct bidi_map *m, long long id, const char *ctx, json_t *p,
                                    json_t **out)
{
    const char *fmt = str(p, "format");
    bool jpeg = fmt && !strcmp(fmt, "jpeg");
    json_t *format = json_pack("{s:s}", "type", jpeg ? "image/jpeg" : "image/png");
    if (jpeg && json_is_integer(json_object_get(p, "quality")))
        json_object_set_new(
            format, "quality",
            json_real((double)json_integer_value(json_object_get(p, "quality")) / 100.0));
    json_t *bp = json_pack("{s:s, s:o, s:s}", "context", ctx, "format", format, "origin",
                           json_is_true(json_object_get(p, "captureBeyondViewport")) ? "document"
                                                                                     : "viewport");
    json_t *clip = json_object_get(p, "clip");
    if (json_is_object(clip))
        json_object_set_new(bp, "clip",
                            json_pack("{s:s, s:f, s:f, s:f, s:f}", "type", "box", "x",
                                      num(clip, "x"), "y", num(clip, "y"), "width",
                                      num(clip, "width"), "height", num(clip, "height")));
    return send_cmd(m, id, K_SCREENSHOT, ctx, "browsingContext.captureScreenshot", bp, out);
}

/* Page.getNavigationHistory: BiDi has no history list, only steps. The
 * answer names the entries as steps (-1 back, 1 forward) around the current
 * one; whether a step exists is known only when it is taken, and
 * browsingContext.traverseHistory then says "no such history entry". */
static json_t *history_steps(long long id)
{
    return cdp_answer(id,
                      json_pack("{s:i, s:[{s:i, s:s, s:s}, {s:i, s:s, s:s}, {s:i, s:s, s:s}]}",
                                "currentIndex", 1, "entries", "id", -1, "url", "", "title", "",
                                "id", 0, "url", "", "title", "", "id", 1, "url", "", "title", ""));
}

/* In a node's document: whether it hosts a frame, and which. */
#define CONTENT_WINDOW_JS "function () { return this.contentWindow || null; }"
/* In a frame's parent: every frame element with the window it hosts. */
#define FRAME_OWNERS_JS                                                                            \
    "[...document.querySelectorAll('iframe, frame')].map((e) => [e, e.contentWindow])"

/* The DOM commands tools send, on nodes numbered here. */
static enum bidi_outcome node_command(struct bidi_map *m, long long id, const char *method,
                                      json_t *p, json_t **out)
{
    json_int_t n;
    int world = 0;
    const char *sid = NULL, *nctx = NULL;
    if (!strcmp(method, "DOM.getFrameOwner")) {
        const char *frame = str(p, "frameId");
        const char *parent =
            frame ? json_string_value(json_object_get(m->frame_parent, frame)) : NULL;
        if (!parent) {
            *out = cdp_error(id, -32000, "Frame with the given id was not found.");
            return BIDI_ANSWER;
        }
        return send_cmd_with(
            m, id, K_FRAME_OWNER, false, json_string(frame), parent, "script.evaluate",
            json_pack("{s:s, s:{s:s, s:s}, s:b, s:s, s:{s:i}}", "expression", FRAME_OWNERS_JS,
                      "target", "context", parent, "sandbox", "tabvisor-frames", "awaitPromise", 0,
                      "resultOwnership", "none", "serializationOptions", "maxObjectDepth", 2),
            out);
    }
    if (!strcmp(method, "DOM.resolveNode")) {
        n = json_integer_value(json_object_get(p, "backendNodeId"));
        json_t *cid = json_object_get(p, "executionContextId");
        if (cid && world_by_id(m, (int)json_integer_value(cid)))
            world = (int)json_integer_value(cid);
        if (!node_get(m, n, &sid, &nctx)) {
            *out = cdp_error(id, -32000, "No node with given id found");
            return BIDI_ANSWER;
        }
        char oid[64];
        object_id(oid, sizeof oid, n, world);
        *out = cdp_answer(id, json_pack("{s:{s:s, s:s, s:s}}", "object", "type", "object",
                                        "subtype", "node", "objectId", oid));
        return BIDI_ANSWER;
    }
    if (!parse_object_id(str(p, "objectId"), &n, &world) || !node_get(m, n, &sid, &nctx)) {
        *out = strncmp(method, "DOM.", 4) == 0 && strcmp(method, "DOM.describeNode") != 0
                   ? not_supported(id, method)
                   : cdp_error(id, -32000, "Could not find object with given id");
        return BIDI_ANSWER;
    }
    if (!strcmp(method, "DOM.describeNode"))
        return send_cmd_with(
            m, id, K_DESCRIBE, false, json_integer(n), nctx, "script.callFunction",
            json_pack("{s:s, s:{s:s, s:s}, s:{s:s}, s:b, s:s}", "functionDeclaration",
                      CONTENT_WINDOW_JS, "target", "context", nctx, "sandbox", "tabvisor-frames",
                      "this", "sharedId", sid, "awaitPromise", 0, "resultOwnership", "none"),
            out);
    if (!strcmp(method, "Runtime.callFunctionOn")) {
        struct world *w = world ? world_by_id(m, world) : NULL;
        json_t *target = w ? json_pack("{s:s, s:s}", "context", w->context, "sandbox", w->sandbox)
                           : json_pack("{s:s}", "context", nctx);
        json_t *args = json_array();
        size_t i;
        json_t *a;
        json_array_foreach(json_object_get(p, "arguments"), i, a)
            json_array_append_new(args, bidi_argument(m, a));
        return send_cmd_with(
            m, id, w ? K_EVAL_WORLD : K_EVAL_MAIN,
            json_is_true(json_object_get(p, "returnByValue")), NULL, w ? w->context : nctx,
            "script.callFunction",
            json_pack("{s:s, s:o, s:{s:s}, s:o, s:b, s:s, s:b}", "functionDeclaration",
                      str(p, "functionDeclaration") ?: "() => undefined", "target", target, "this",
                      "sharedId", sid, "arguments", args, "awaitPromise",
                      json_is_true(json_object_get(p, "awaitPromise")), "resultOwnership", "none",
                      "userActivation", json_is_true(json_object_get(p, "userGesture"))),
            out);
    }
    *out = not_supported(id, method);
    return BIDI_ANSWER;
}

static enum bidi_outcome page_command(struct bidi_map *m, long long id, const char *ctx,
                                      const char *method, json_t *p, json_t **out)
{
    if (!strcmp(method, "Runtime.evaluate"))
        return evaluate(m, id, ctx, p, out);
    if (!strcmp(method, "Page.createIsolatedWorld")) {
        *out = new_world(m, id, p);
        return BIDI_ANSWER;
    }
    if (!strncmp(method, "DOM.", 4) || !strcmp(method, "Runtime.callFunctionOn"))
        return node_command(m, id, method, p, out);
    if (!strcmp(method, "Page.navigate")) {
        const char *url = str(p, "url");
        return send_cmd(
            m, id, K_NAVIGATE, ctx, "browsingContext.navigate",
            json_pack("{s:s, s:s, s:s}", "context", ctx, "url", url ? url : "", "wait", "none"),
            out);
    }
    if (!strcmp(method, "Page.reload")) {
        /* Firefox ESR takes ignoreCache only when it is asked for (and then
         * refuses it). */
        json_t *bp = json_pack("{s:s, s:s}", "context", ctx, "wait", "none");
        if (json_is_true(json_object_get(p, "ignoreCache")))
            json_object_set_new(bp, "ignoreCache", json_true());
        return send_cmd(m, id, K_EMPTY, ctx, "browsingContext.reload", bp, out);
    }
    if (!strcmp(method, "Page.getNavigationHistory")) {
        *out = history_steps(id);
        return BIDI_ANSWER;
    }
    if (!strcmp(method, "Page.navigateToHistoryEntry")) {
        json_int_t step = json_integer_value(json_object_get(p, "entryId"));
        if (step != -1 && step != 1) {
            *out = cdp_error(id, -32602, "no history entry %lld", (long long)step);
            return BIDI_ANSWER;
        }
        json_object_set_new(m->history_steps, ctx, json_false());
        return send_cmd(m, id, K_HISTORY_GO, ctx, "browsingContext.traverseHistory",
                        json_pack("{s:s, s:I}", "context", ctx, "delta", step), out);
    }
    if (!strcmp(method, "Page.captureScreenshot"))
        return screenshot(m, id, ctx, p, out);
    if (!strcmp(method, "Page.getLayoutMetrics"))
        return send_cmd(m, id, K_LAYOUT, ctx, "script.evaluate",
                        json_pack("{s:s, s:{s:s, s:s}, s:b, s:s}", "expression",
                                  "(() => { const e = document.documentElement, b = document.body; "
                                  "return [Math.max(e.scrollWidth, b ? b.scrollWidth : 0), "
                                  "Math.max(e.scrollHeight, b ? b.scrollHeight : 0), "
                                  "e.clientWidth, e.clientHeight, scrollX, scrollY]; })()",
                                  "target", "context", ctx, "sandbox", "tabvisor-measure",
                                  "awaitPromise", 0, "resultOwnership", "none"),
                        out);
    if (!strcmp(method, "Page.bringToFront"))
        return send_cmd(m, id, K_EMPTY, ctx, "browsingContext.activate",
                        json_pack("{s:s}", "context", ctx), out);
    if (!strcmp(method, "Page.handleJavaScriptDialog")) {
        json_t *bp = json_pack("{s:s, s:b}", "context", ctx, "accept",
                               json_is_true(json_object_get(p, "accept")));
        if (str(p, "promptText"))
            json_object_set_new(bp, "userText", json_string(str(p, "promptText")));
        return send_cmd(m, id, K_EMPTY, ctx, "browsingContext.handleUserPrompt", bp, out);
    }
    if (!strcmp(method, "Emulation.setDeviceMetricsOverride"))
        return send_cmd(
            m, id, K_EMPTY, ctx, "browsingContext.setViewport",
            json_pack("{s:s, s:{s:i, s:i}, s:f}", "context", ctx, "viewport", "width",
                      (int)num(p, "width"), "height", (int)num(p, "height"), "devicePixelRatio",
                      num(p, "deviceScaleFactor") > 0 ? num(p, "deviceScaleFactor") : 1.0),
            out);
    if (!strcmp(method, "Page.addScriptToEvaluateOnNewDocument")) {
        const char *src = str(p, "source");
        char *fn = NULL;
        if (!src || asprintf(&fn, "() => {\n%s\n}", src) < 0) {
            *out = cdp_error(id, -32602, "no source");
            return BIDI_ANSWER;
        }
        json_t *bp = json_pack("{s:s, s:[s]}", "functionDeclaration", fn, "contexts", ctx);
        free(fn);
        if (str(p, "worldName") && *str(p, "worldName"))
            json_object_set_new(bp, "sandbox", json_string(str(p, "worldName")));
        return send_cmd(m, id, K_PRELOAD, ctx, "script.addPreloadScript", bp, out);
    }
    if (!strcmp(method, "Page.removeScriptToEvaluateOnNewDocument"))
        return send_cmd(m, id, K_EMPTY, ctx, "script.removePreloadScript",
                        json_pack("{s:s}", "script", str(p, "identifier") ?: ""), out);
    if (!strcmp(method, "Input.dispatchMouseEvent")) {
        json_t *acts = mouse_actions(p);
        if (!acts) {
            *out = cdp_error(id, -32602, "mouse event type %s is not one tabvisor sends",
                             str(p, "type") ?: "?");
            return BIDI_ANSWER;
        }
        return send_cmd(m, id, K_EMPTY, ctx, "input.performActions",
                        json_pack("{s:s, s:o}", "context", ctx, "actions", acts), out);
    }
    if (!strcmp(method, "Input.dispatchKeyEvent")) {
        const char *type = str(p, "type");
        char v[8];
        if (type && !strcmp(type, "char")) { /* the keyDown typed it already */
            *out = cdp_answer(id, NULL);
            return BIDI_ANSWER;
        }
        if (!type || !key_value(p, v)) {
            *out =
                cdp_error(id, CDP_ERR_NOT_SUPPORTED,
                          "the key %s has no WebDriver key value (Firefox)", str(p, "key") ?: "?");
            return BIDI_ANSWER;
        }
        bool up = !strcmp(type, "keyUp");
        return send_cmd(m, id, K_EMPTY, ctx, "input.performActions",
                        json_pack("{s:s, s:o}", "context", ctx, "actions",
                                  key_source(json_pack("[{s:s, s:s}]", "type",
                                                       up ? "keyUp" : "keyDown", "value", v))),
                        out);
    }
    if (!strcmp(method, "Input.insertText")) {
        const char *t = str(p, "text");
        json_t *acts = json_array();
        for (const char *s = t ? t : ""; *s;) {
            size_t n = utf8_len(s);
            char ch[8];
            snprintf(ch, sizeof ch, "%.*s", (int)n, s);
            s += n;
            json_array_append_new(acts, json_pack("{s:s, s:s}", "type", "keyDown", "value", ch));
            json_array_append_new(acts, json_pack("{s:s, s:s}", "type", "keyUp", "value", ch));
        }
        return send_cmd(m, id, K_EMPTY, ctx, "input.performActions",
                        json_pack("{s:s, s:o}", "context", ctx, "actions", key_source(acts)), out);
    }
    *out = not_supported(id, method);
    return BIDI_ANSWER;
}

static enum bidi_outcome browser_command(struct bidi_map *m, long long id, const char *method,
                                         json_t *p, json_t **out)
{
    if (!strcmp(method, "Target.createBrowserContext"))
        return send_cmd(m, id, K_USER_CONTEXT, NULL, "browser.createUserContext", json_object(),
                        out);
    if (!strcmp(method, "Target.disposeBrowserContext"))
        return send_cmd(m, id, K_EMPTY, NULL, "browser.removeUserContext",
                        json_pack("{s:s}", "userContext", str(p, "browserContextId") ?: ""), out);
    if (!strcmp(method, "Target.createTarget")) {
        json_t *bp = json_pack("{s:s}", "type", "tab");
        if (str(p, "browserContextId"))
            json_object_set_new(bp, "userContext", json_string(str(p, "browserContextId")));
        const char *url = str(p, "url");
        if (url && strcmp(url, "about:blank") != 0) {
            json_decref(bp);
            *out = cdp_error(id, CDP_ERR_NOT_SUPPORTED,
                             "a new Firefox tab opens on about:blank; navigate it afterwards");
            return BIDI_ANSWER;
        }
        return send_cmd(m, id, K_CREATE_TAB, NULL, "browsingContext.create", bp, out);
    }
    if (!strcmp(method, "Target.attachToTarget")) {
        /* A page's session is its context: nothing to attach. */
        const char *t = str(p, "targetId");
        if (!t || !json_object_get(m->tops, t)) {
            *out = cdp_error(id, -32602, "No target with given id found");
            return BIDI_ANSWER;
        }
        *out = cdp_answer(id, json_pack("{s:s}", "sessionId", t));
        return BIDI_ANSWER;
    }
    if (!strcmp(method, "Target.closeTarget"))
        return send_cmd(m, id, K_EMPTY, NULL, "browsingContext.close",
                        json_pack("{s:s}", "context", str(p, "targetId") ?: ""), out);
    *out = not_supported(id, method);
    return BIDI_ANSWER;
}

enum bidi_outcome bidi_map_command(struct bidi_map *m, long long id, const char *session,
                                   const char *method, json_t *params, json_t **out)
{
    json_t *empty = NULL;
    if (!json_is_object(params))
        params = empty = json_object();
    enum bidi_outcome r;
    for (size_t i = 0; i < sizeof no_op / sizeof no_op[0]; i++) {
        if (!strcmp(method, no_op[i])) {
            *out = cdp_answer(id, NULL);
            r = BIDI_ANSWER;
            goto done;
        }
    }
    if (!session || !*session)
        r = browser_command(m, id, method, params, out);
    else if (!json_object_get(m->tops, session)) {
        *out = cdp_error(id, -32001, "Session with given id not found.");
        r = BIDI_ANSWER;
    } else {
        r = page_command(m, id, session, method, params, out);
    }
done:
    json_decref(empty);
    return r;
}

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
    const char *type = str(rv, "type");
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
    const char *type = str(rv, "type");
    const char *sid = str(rv, "sharedId");
    if (!by_value && sid) {
        char oid[64];
        object_id(oid, sizeof oid, node_add(m, sid, ctx), world);
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

static void emit_event(void (*emit)(void *, json_t *), void *ud, const char *session,
                       const char *method, json_t *params);

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
    const char *type = str(r, "type");
    if (type && !strcmp(type, "exception")) {
        json_t *d = json_object_get(r, "exceptionDetails");
        const char *text = str(d, "text");
        json_t *exc = json_object_get(d, "exception");
        const char *desc =
            str(exc, "type") && !strcmp(str(exc, "type"), "string") ? str(exc, "value") : text;
        /* Our engine is not in this sandbox: a new document made a new one.
         * CDP says so of a world whose document went. */
        if (world && text && strstr(text, "__tabvisor is not defined"))
            return cdp_error(id, -32000, "Cannot find context with specified id");
        return cdp_answer(id, json_pack("{s:{s:s}, s:{s:s, s:{s:s}}}", "result", "type", "object",
                                        "exceptionDetails", "text", text ? text : "exception",
                                        "exception", "description",
                                        desc ? desc : (text ? text : "exception")));
    }
    return cdp_answer(
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
    return cdp_answer(id, json_pack("{s:O, s:o, s:O, s:o, s:o}", "contentSize", content,
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
        const char *wctx = str(json_object_get(win, "value"), "context");
        if (frame && wctx && !strcmp(wctx, frame) && str(el, "sharedId"))
            return cdp_answer(
                id, json_pack("{s:I}", "backendNodeId", node_add(m, str(el, "sharedId"), parent)));
    }
    return cdp_error(id, -32000, "Frame with the given id does not belong to the target.");
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
        return cdp_answer(id, json_pack("{s:s}", "browserContextId", str(r, "userContext") ?: ""));
    case K_CREATE_TAB: {
        const char *c = str(r, "context");
        if (c && strlen(c) < MAX_ID)
            json_object_set_new(m->tops, c, json_true());
        return cdp_answer(id, json_pack("{s:s}", "targetId", c ? c : ""));
    }
    case K_NAVIGATE: {
        const char *nav = str(r, "navigation");
        json_t *frag = json_object_get(m->fragments, ctx);
        bool same_document = nav && json_is_string(frag) && !strcmp(json_string_value(frag), nav);
        json_object_del(m->fragments, ctx);
        return same_document ? cdp_answer(id, json_pack("{s:s}", "frameId", ctx))
                             : cdp_answer(id, json_pack("{s:s, s:s}", "frameId", ctx, "loaderId",
                                                        nav ? nav : ""));
    }
    case K_EVAL_MAIN:
    case K_EVAL_WORLD:
        return eval_answer(m, id, r, kind == K_EVAL_WORLD, by_value, ctx);
    case K_DESCRIBE: {
        json_t *node = json_pack("{s:O}", "backendNodeId", extra);
        json_t *rv = json_object_get(r, "result");
        const char *child = str(json_object_get(rv, "value"), "context");
        if (str(rv, "type") && !strcmp(str(rv, "type"), "window") && child)
            json_object_set_new(node, "frameId", json_string(child));
        return cdp_answer(id, json_pack("{s:o}", "node", node));
    }
    case K_FRAME_OWNER:
        return frame_owner_answer(m, id, r, ctx, json_string_value(extra));
    case K_SCREENSHOT:
        return cdp_answer(id, json_pack("{s:s}", "data", str(r, "data") ?: ""));
    case K_LAYOUT:
        return layout_answer(id, r);
    case K_PRELOAD:
        return cdp_answer(id, json_pack("{s:s}", "identifier", str(r, "script") ?: ""));
    case K_EMPTY:
    case K_HISTORY_GO:
        break;
    }
    return cdp_answer(id, NULL);
}

static json_t *error_answer(long long id, json_t *msg, json_t *pend)
{
    enum kind kind = (enum kind)json_integer_value(json_array_get(pend, 0));
    const char *e = str(msg, "error"), *text = str(msg, "message");
    const char *net = kind == K_NAVIGATE ? net_error(text) : NULL;
    if (net)
        return cdp_answer(id,
                          json_pack("{s:s, s:s}", "frameId",
                                    json_string_value(json_array_get(pend, 1)), "errorText", net));
    return cdp_error(id, CDP_ERR_BIDI, "%s: %s", e ? e : "error", text ? text : "");
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
    const char *type = str(msg, "type");
    bool failed = type && !strcmp(type, "error");
    json_t *out = failed ? error_answer(id, msg, pend)
                         : success_answer(m, id, json_object_get(msg, "result"), pend);
    emit(ud, out);
    json_decref(out);
    /* A history step that started no navigation before its answer stayed
     * in the document, and Firefox says nothing more of it: CDP would have
     * said navigatedWithinDocument. */
    const char *ctx = json_string_value(json_array_get(pend, 1));
    if ((enum kind)json_integer_value(json_array_get(pend, 0)) == K_HISTORY_GO && ctx) {
        json_t *started = json_object_get(m->history_steps, ctx);
        if (!failed && json_is_false(started))
            emit_event(emit, ud, ctx, "Page.navigatedWithinDocument",
                       json_pack("{s:s, s:s}", "frameId", ctx, "url", ""));
        json_object_del(m->history_steps, ctx);
    }
    json_decref(pend);
}

/* ---- events ---- */

/* The page (top-level context we opened) context belongs to, or NULL. */
static const char *top_of(struct bidi_map *m, const char *context)
{
    if (!context)
        return NULL;
    if (json_object_get(m->tops, context))
        return json_object_iter_key(json_object_iter_at(m->tops, context));
    return json_string_value(json_object_get(m->parents, context));
}

static void emit_event(void (*emit)(void *, json_t *), void *ud, const char *session,
                       const char *method, json_t *params)
{
    json_t *e = json_pack("{s:s, s:o}", "method", method, "params", params);
    if (session)
        json_object_set_new(e, "sessionId", json_string(session));
    emit(ud, e);
    json_decref(e);
}

static json_t *headers_object(json_t *list)
{
    json_t *h = json_object();
    size_t i;
    json_t *e;
    json_array_foreach(list, i, e)
    {
        const char *name = str(e, "name");
        const char *value = str(json_object_get(e, "value"), "value");
        if (name && value)
            json_object_set_new(h, name, json_string(value));
    }
    return h;
}

static void lifecycle(void (*emit)(void *, json_t *), void *ud, const char *top,
                      const char *context, json_t *p, const char *name)
{
    emit_event(emit, ud, top, "Page.lifecycleEvent",
               json_pack("{s:s, s:s, s:s, s:f}", "frameId", context, "loaderId",
                         str(p, "navigation") ?: "", "name", name, "timestamp",
                         num(p, "timestamp") / 1000.0));
}

static void network_event(struct bidi_map *m, const char *method, json_t *p,
                          void (*emit)(void *, json_t *), void *ud)
{
    const char *ctx = str(p, "context");
    const char *top = top_of(m, ctx);
    json_t *req = json_object_get(p, "request");
    const char *rid = str(req, "request");
    if (!top || !rid)
        return;
    double ts = num(p, "timestamp") / 1000.0;
    if (!strcmp(method, "network.beforeRequestSent")) {
        const char *nav = str(p, "navigation");
        emit_event(emit, ud, top, "Network.requestWillBeSent",
                   json_pack("{s:s, s:s, s:s, s:{s:s, s:s, s:o}, s:f, s:f, s:s, s:s}", "requestId",
                             rid, "loaderId", nav ? nav : "", "documentURL", "", "request", "url",
                             str(req, "url") ?: "", "method", str(req, "method") ?: "GET",
                             "headers", headers_object(json_object_get(req, "headers")),
                             "timestamp", ts, "wallTime", ts, "type", nav ? "Document" : "Other",
                             "frameId", ctx));
    } else if (!strcmp(method, "network.responseCompleted")) {
        json_t *resp = json_object_get(p, "response");
        emit_event(
            emit, ud, top, "Network.responseReceived",
            json_pack("{s:s, s:f, s:s, s:{s:s, s:I, s:s, s:s, s:o}}", "requestId", rid, "timestamp",
                      ts, "type", "Other", "response", "url", str(resp, "url") ?: "", "status",
                      (json_int_t)json_integer_value(json_object_get(resp, "status")), "statusText",
                      str(resp, "statusText") ?: "", "mimeType", str(resp, "mimeType") ?: "",
                      "headers", headers_object(json_object_get(resp, "headers"))));
        emit_event(emit, ud, top, "Network.loadingFinished",
                   json_pack("{s:s, s:f, s:f}", "requestId", rid, "timestamp", ts,
                             "encodedDataLength", num(resp, "bytesReceived")));
    } else if (!strcmp(method, "network.fetchError")) {
        emit_event(emit, ud, top, "Network.loadingFailed",
                   json_pack("{s:s, s:f, s:s, s:s}", "requestId", rid, "timestamp", ts, "type",
                             "Other", "errorText", str(p, "errorText") ?: "failed"));
    }
}

static void log_event(struct bidi_map *m, json_t *p, void (*emit)(void *, json_t *), void *ud)
{
    const char *top = top_of(m, str(json_object_get(p, "source"), "context"));
    if (!top)
        return;
    const char *type = str(p, "type"), *text = str(p, "text") ?: "";
    double ts = num(p, "timestamp");
    /* BiDi's stack trace has CDP's shape (callFrames: url, functionName,
     * lineNumber and columnNumber from 0). */
    json_t *stack = json_object_get(p, "stackTrace");
    if (type && !strcmp(type, "javascript")) {
        json_t *d = json_pack("{s:s, s:{s:s}}", "text", text, "exception", "description", text);
        if (json_is_object(stack))
            json_object_set(d, "stackTrace", stack);
        emit_event(emit, ud, top, "Runtime.exceptionThrown",
                   json_pack("{s:f, s:o}", "timestamp", ts, "exceptionDetails", d));
        return;
    }
    const char *level = str(p, "method");
    if (!level)
        level = str(p, "level") ?: "log";
    if (!strcmp(level, "warn") || !strcmp(level, "warning"))
        level = "warning";
    json_t *e = json_pack("{s:s, s:[{s:s, s:s}], s:i, s:f}", "type", level, "args", "type",
                          "string", "value", text, "executionContextId", 0, "timestamp", ts);
    if (json_is_object(stack))
        json_object_set(e, "stackTrace", stack);
    emit_event(emit, ud, top, "Runtime.consoleAPICalled", e);
}

void bidi_map_event(struct bidi_map *m, json_t *msg, void (*emit)(void *ud, json_t *cdp), void *ud)
{
    const char *method = str(msg, "method");
    json_t *p = json_object_get(msg, "params");
    if (!method || !json_is_object(p))
        return;
    if (!strncmp(method, "network.", 8)) {
        network_event(m, method, p, emit, ud);
        return;
    }
    if (!strcmp(method, "log.entryAdded")) {
        log_event(m, p, emit, ud);
        return;
    }
    const char *ctx = str(p, "context");
    if (!ctx)
        return;
    if (!strcmp(method, "browsingContext.contextCreated")) {
        /* A frame of one of our pages: in process as far as the worker
         * can tell (its session is the page's). */
        const char *parent = str(p, "parent");
        const char *top = top_of(m, parent);
        if (top && strlen(ctx) < MAX_ID) {
            json_object_set_new(m->parents, ctx, json_string(top));
            json_object_set_new(m->frame_parent, ctx, json_string(parent));
            emit_event(emit, ud, top, "Page.frameAttached",
                       json_pack("{s:s, s:s}", "frameId", ctx, "parentFrameId", parent));
        }
        return;
    }
    /* Copied: contextDestroyed drops the key top_of points into. */
    char top[MAX_ID];
    const char *t = top_of(m, ctx);
    if (!t)
        return;
    snprintf(top, sizeof top, "%s", t);
    bool main_frame = strcmp(top, ctx) == 0;
    if (!strcmp(method, "browsingContext.contextDestroyed")) {
        if (main_frame) {
            json_object_del(m->tops, ctx);
            emit_event(emit, ud, NULL, "Target.detachedFromTarget",
                       json_pack("{s:s, s:s}", "sessionId", top, "targetId", top));
            emit_event(emit, ud, NULL, "Target.targetDestroyed",
                       json_pack("{s:s}", "targetId", top));
        } else {
            json_object_del(m->parents, ctx);
            json_object_del(m->frame_parent, ctx);
            emit_event(emit, ud, top, "Page.frameDetached",
                       json_pack("{s:s, s:s}", "frameId", ctx, "reason", "remove"));
        }
    } else if (!strcmp(method, "browsingContext.navigationStarted")) {
        if (main_frame) {
            if (json_object_get(m->history_steps, ctx))
                json_object_set_new(m->history_steps, ctx, json_true());
            emit_event(emit, ud, top, "Page.frameStartedLoading",
                       json_pack("{s:s}", "frameId", ctx));
            lifecycle(emit, ud, top, ctx, p, "init");
        }
    } else if (!strcmp(method, "browsingContext.domContentLoaded")) {
        lifecycle(emit, ud, top, ctx, p, "DOMContentLoaded");
    } else if (!strcmp(method, "browsingContext.load")) {
        lifecycle(emit, ud, top, ctx, p, "load");
        lifecycle(emit, ud, top, ctx, p, "networkIdle");
        emit_event(emit, ud, top, "Page.frameStoppedLoading", json_pack("{s:s}", "frameId", ctx));
    } else if (!strcmp(method, "browsingContext.fragmentNavigated")) {
        if (main_frame && str(p, "navigation"))
            json_object_set_new(m->fragments, ctx, json_string(str(p, "navigation")));
        /* The navigation that started stayed in the document, which has
         * loaded: whoever waits on it from its "init" is done. */
        lifecycle(emit, ud, top, ctx, p, "DOMContentLoaded");
        lifecycle(emit, ud, top, ctx, p, "load");
        lifecycle(emit, ud, top, ctx, p, "networkIdle");
        emit_event(emit, ud, top, "Page.navigatedWithinDocument",
                   json_pack("{s:s, s:s}", "frameId", ctx, "url", str(p, "url") ?: ""));
    } else if (!strcmp(method, "browsingContext.userPromptOpened")) {
        emit_event(emit, ud, top, "Page.javascriptDialogOpening",
                   json_pack("{s:s, s:s, s:s, s:b, s:s}", "url", "", "message",
                             str(p, "message") ?: "", "type", str(p, "type") ?: "alert",
                             "hasBrowserHandler", 0, "defaultPrompt",
                             str(p, "defaultValue") ?: ""));
    } else if (!strcmp(method, "browsingContext.userPromptClosed")) {
        emit_event(emit, ud, top, "Page.javascriptDialogClosed",
                   json_pack("{s:b, s:s}", "result", json_is_true(json_object_get(p, "accepted")),
                             "userInput", str(p, "userText") ?: ""));
    }
}
