/*
 * bidi_map.c - the map's state and CDP commands as WebDriver BiDi
 * (bidi_map.h); input is bidi_input.c's, answers bidi_answers.c's, events
 * bidi_events.c's, the messages every part builds bidi_msg.c's.
 */
#include "bidi_map_int.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "transport.h"

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
    m->crashed = json_object();
    m->commits = json_object();
    m->intercepts = json_object();
    m->streams = json_object();
    if (!m->fragments || !m->history_steps || !m->crashed || !m->commits || !m->intercepts ||
        !m->streams || !m->tops || !m->parents || !m->pending || !m->nodes || !m->frame_parent ||
        !m->node_numbers) {
        bidi_map_free(m);
        return NULL;
    }
    return m;
}

void bidi_map_set_url_check(struct bidi_map *m, const char *(*check)(const char *url))
{
    m->url_check = check;
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
    json_decref(m->crashed);
    json_decref(m->commits);
    json_decref(m->intercepts);
    json_decref(m->streams);
    free(m);
}

/* ---- nodes ---- */

/* Most nodes numbered at once; past it the numbering starts again (an old
 * number then names no node: CDP's answer for a node that is gone). */
#define MAX_NODES 20000
#define NODE_PREFIX "bidi-node:"

/* The number of the node with sharedId sid in browsing context ctx
 * (numbered on first sight). */
json_int_t bm_node_add(struct bidi_map *m, const char *sid, const char *ctx)
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
bool bm_node_get(struct bidi_map *m, json_int_t n, const char **sid, const char **ctx)
{
    json_t *e = n > 0 ? json_array_get(m->nodes, (size_t)(n - 1)) : NULL;
    *sid = json_string_value(json_array_get(e, 0));
    *ctx = json_string_value(json_array_get(e, 1));
    return *sid && *ctx;
}

/* CDP objectIds of ours name a node and the world it was resolved in:
 * "bidi-node:N:W" (W 0: the page's own). */
void bm_object_id(char *out, size_t len, json_int_t n, int world)
{
    snprintf(out, len, NODE_PREFIX "%lld:%d", (long long)n, world);
}

bool bm_parse_object_id(const char *oid, json_int_t *n, int *world)
{
    long long nn;
    size_t plen = strlen(NODE_PREFIX);
    if (!oid || strncmp(oid, NODE_PREFIX, plen) != 0 ||
        sscanf(oid + plen, "%lld:%d", &nn, world) != 2)
        return false;
    *n = (json_int_t)nn;
    return true;
}

/* Deeper than this, a value is passed as null (CDP's arguments here are a
 * few levels deep: the files of an upload). */
#define MAX_VALUE_DEPTH 32

/* A JSON value as a BiDi local value (new reference). */
static json_t *local_value(json_t *v, int depth)
{
    if (json_is_string(v))
        return json_pack("{s:s, s:O}", "type", "string", "value", v);
    if (json_is_number(v))
        return json_pack("{s:s, s:O}", "type", "number", "value", v);
    if (json_is_boolean(v))
        return json_pack("{s:s, s:O}", "type", "boolean", "value", v);
    if (depth >= MAX_VALUE_DEPTH || json_is_null(v))
        return json_pack("{s:s}", "type", "null");
    json_t *items = json_array();
    size_t i;
    json_t *e;
    if (json_is_array(v)) {
        json_array_foreach(v, i, e) json_array_append_new(items, local_value(e, depth + 1));
        return json_pack("{s:s, s:o}", "type", "array", "value", items);
    }
    const char *k;
    json_object_foreach(v, k, e)
        json_array_append_new(items, json_pack("[s, o]", k, local_value(e, depth + 1)));
    return json_pack("{s:s, s:o}", "type", "object", "value", items);
}

/* A CDP call argument ({objectId} of a node, or {value}) as a BiDi one. */
static json_t *bidi_argument(struct bidi_map *m, json_t *a)
{
    json_int_t n;
    int world;
    const char *sid, *ctx;
    if (bm_parse_object_id(bm_str(a, "objectId"), &n, &world) && bm_node_get(m, n, &sid, &ctx))
        return json_pack("{s:s}", "sharedId", sid);
    json_t *v = json_object_get(a, "value");
    return v ? local_value(v, 0) : json_pack("{s:s}", "type", "undefined");
}

/* ---- commands ---- */

struct world *bm_world_by_id(struct bidi_map *m, int id)
{
    for (int i = 0; i < MAX_WORLDS; i++)
        if (m->worlds[i].id == id && id)
            return &m->worlds[i];
    return NULL;
}

static json_t *new_world(struct bidi_map *m, long long id, json_t *p)
{
    const char *frame = bm_str(p, "frameId"), *name = bm_str(p, "worldName");
    if (!frame || !*frame || strlen(frame) >= MAX_ID)
        return bm_error(id, -32602, "Page.createIsolatedWorld needs a frameId");
    int n = ++m->next_world;
    struct world *w = &m->worlds[n % MAX_WORLDS];
    w->id = n;
    snprintf(w->context, sizeof w->context, "%s", frame);
    snprintf(w->sandbox, sizeof w->sandbox, "%s", name && *name ? name : "tabvisor");
    return bm_answer(id, json_pack("{s:i}", "executionContextId", n));
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
};

static enum bidi_outcome evaluate(struct bidi_map *m, long long id, const char *ctx, json_t *p,
                                  json_t **out)
{
    const char *expr = bm_str(p, "expression");
    if (!expr)
        expr = "undefined";
    json_t *target;
    enum kind kind = K_EVAL_MAIN;
    json_t *cid = json_object_get(p, "contextId");
    if (cid) {
        struct world *w = bm_world_by_id(m, (int)json_integer_value(cid));
        if (!w) {
            *out = bm_error(id, -32000, "Cannot find context with specified id");
            return BIDI_ANSWER;
        }
        target = json_pack("{s:s, s:s}", "context", w->context, "sandbox", w->sandbox);
        kind = K_EVAL_WORLD;
    } else {
        target = json_pack("{s:s}", "context", ctx);
    }
    /* Nodes in the answer belong to the context evaluated in. */
    char where[MAX_ID];
    snprintf(where, sizeof where, "%s", bm_str(target, "context") ?: "");
    return bm_send_with(m, id, kind, json_is_true(json_object_get(p, "returnByValue")), NULL, where,
                        "script.evaluate",
                        json_pack("{s:s, s:o, s:b, s:s}", "expression", expr, "target", target,
                                  "awaitPromise", json_is_true(json_object_get(p, "awaitPromise")),
                                  "resultOwnership", "none"),
                        out);
}

static enum bidi_outcome screenshot(struct bidi_map *m, long long id, const char *ctx, json_t *p,
                                    json_t **out)
{
    const char *fmt = bm_str(p, "format");
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
                                      bm_num(clip, "x"), "y", bm_num(clip, "y"), "width",
                                      bm_num(clip, "width"), "height", bm_num(clip, "height")));
    return bm_send(m, id, K_SCREENSHOT, ctx, "browsingContext.captureScreenshot", bp, out);
}

/* Page.getNavigationHistory: BiDi has no history list, only steps. The
 * answer names the entries as steps (-1 back, 1 forward) around the current
 * one; whether a step exists is known only when it is taken, and
 * browsingContext.traverseHistory then says "no such history entry". */
static json_t *history_steps(long long id)
{
    return bm_answer(id,
                     json_pack("{s:i, s:[{s:i, s:s, s:s}, {s:i, s:s, s:s}, {s:i, s:s, s:s}]}",
                               "currentIndex", 1, "entries", "id", -1, "url", "", "title", "", "id",
                               0, "url", "", "title", "", "id", 1, "url", "", "title", ""));
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
        const char *frame = bm_str(p, "frameId");
        const char *parent =
            frame ? json_string_value(json_object_get(m->frame_parent, frame)) : NULL;
        if (!parent) {
            *out = bm_error(id, -32000, "Frame with the given id was not found.");
            return BIDI_ANSWER;
        }
        return bm_send_with(
            m, id, K_FRAME_OWNER, false, json_string(frame), parent, "script.evaluate",
            json_pack("{s:s, s:{s:s, s:s}, s:b, s:s, s:{s:i}}", "expression", FRAME_OWNERS_JS,
                      "target", "context", parent, "sandbox", "tabvisor-frames", "awaitPromise", 0,
                      "resultOwnership", "none", "serializationOptions", "maxObjectDepth", 2),
            out);
    }
    if (!strcmp(method, "DOM.resolveNode")) {
        n = json_integer_value(json_object_get(p, "backendNodeId"));
        json_t *cid = json_object_get(p, "executionContextId");
        if (cid && bm_world_by_id(m, (int)json_integer_value(cid)))
            world = (int)json_integer_value(cid);
        if (!bm_node_get(m, n, &sid, &nctx)) {
            *out = bm_error(id, -32000, "No node with given id found");
            return BIDI_ANSWER;
        }
        char oid[64];
        bm_object_id(oid, sizeof oid, n, world);
        *out = bm_answer(id, json_pack("{s:{s:s, s:s, s:s}}", "object", "type", "object", "subtype",
                                       "node", "objectId", oid));
        return BIDI_ANSWER;
    }
    if (!bm_parse_object_id(bm_str(p, "objectId"), &n, &world) || !bm_node_get(m, n, &sid, &nctx)) {
        *out = strncmp(method, "DOM.", 4) == 0 && strcmp(method, "DOM.describeNode") != 0
                   ? bm_not_supported(id, method)
                   : bm_error(id, -32000, "Could not find object with given id");
        return BIDI_ANSWER;
    }
    if (!strcmp(method, "DOM.describeNode"))
        return bm_send_with(m, id, K_DESCRIBE, false, json_integer(n), nctx, "script.callFunction",
                            json_pack("{s:s, s:{s:s, s:s}, s:{s:s}, s:b, s:s}",
                                      "functionDeclaration", CONTENT_WINDOW_JS, "target", "context",
                                      nctx, "sandbox", "tabvisor-frames", "this", "sharedId", sid,
                                      "awaitPromise", 0, "resultOwnership", "none"),
                            out);
    if (!strcmp(method, "Runtime.callFunctionOn")) {
        struct world *w = world ? bm_world_by_id(m, world) : NULL;
        json_t *target = w ? json_pack("{s:s, s:s}", "context", w->context, "sandbox", w->sandbox)
                           : json_pack("{s:s}", "context", nctx);
        json_t *args = json_array();
        size_t i;
        json_t *a;
        json_array_foreach(json_object_get(p, "arguments"), i, a)
            json_array_append_new(args, bidi_argument(m, a));
        return bm_send_with(
            m, id, w ? K_EVAL_WORLD : K_EVAL_MAIN,
            json_is_true(json_object_get(p, "returnByValue")), NULL, w ? w->context : nctx,
            "script.callFunction",
            json_pack("{s:s, s:o, s:{s:s}, s:o, s:b, s:s, s:b}", "functionDeclaration",
                      bm_str(p, "functionDeclaration") ?: "() => undefined", "target", target,
                      "this", "sharedId", sid, "arguments", args, "awaitPromise",
                      json_is_true(json_object_get(p, "awaitPromise")), "resultOwnership", "none",
                      "userActivation", json_is_true(json_object_get(p, "userGesture"))),
            out);
    }
    *out = bm_not_supported(id, method);
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
        /* Answered as the navigation starts; its lifecycle events follow,
         * and a fragment's fragmentNavigated comes before the answer. */
        const char *url = bm_str(p, "url");
        const char *why = url && m->url_check ? m->url_check(url) : NULL;
        if (why) {
            char text[400];
            snprintf(text, sizeof text, "net::ERR_BLOCKED_BY_CLIENT (%s)", why);
            *out = bm_answer(id, json_pack("{s:s, s:s}", "frameId", ctx, "errorText", text));
            return BIDI_ANSWER;
        }
        return bm_send(
            m, id, K_NAVIGATE, ctx, "browsingContext.navigate",
            json_pack("{s:s, s:s, s:s}", "context", ctx, "url", url ? url : "", "wait", "none"),
            out);
    }
    if (!strcmp(method, "Page.reload")) {
        /* A page whose content process died shows about:tabcrashed, whose
         * reload is about:blank: the page's own URL is loaded again instead,
         * as Chromium's reload of a crashed tab does. */
        const char *lost = json_string_value(json_object_get(m->crashed, ctx));
        if (lost && !(m->url_check && m->url_check(lost))) {
            json_t *bp = json_pack("{s:s, s:s, s:s}", "context", ctx, "url", lost, "wait", "none");
            json_object_del(m->crashed, ctx);
            return bm_send(m, id, K_EMPTY, ctx, "browsingContext.navigate", bp, out);
        }
        /* Firefox ESR takes ignoreCache only when it is asked for (and then
         * refuses it). */
        json_t *bp = json_pack("{s:s, s:s}", "context", ctx, "wait", "none");
        if (json_is_true(json_object_get(p, "ignoreCache")))
            json_object_set_new(bp, "ignoreCache", json_true());
        return bm_send(m, id, K_EMPTY, ctx, "browsingContext.reload", bp, out);
    }
    if (!strcmp(method, "Page.getNavigationHistory")) {
        *out = history_steps(id);
        return BIDI_ANSWER;
    }
    if (!strcmp(method, "Page.navigateToHistoryEntry")) {
        json_int_t step = json_integer_value(json_object_get(p, "entryId"));
        if (step != -1 && step != 1) {
            *out = bm_error(id, -32602, "no history entry %lld", (long long)step);
            return BIDI_ANSWER;
        }
        json_object_set_new(m->history_steps, ctx, json_false());
        return bm_send(m, id, K_HISTORY_GO, ctx, "browsingContext.traverseHistory",
                       json_pack("{s:s, s:I}", "context", ctx, "delta", step), out);
    }
    /* Bodies kept by the bridge's data collector (supervisor/bidi_bridge.c),
     * fetched by the request's id, which the bridge checks is the session's. */
    if (!strcmp(method, "Network.getResponseBody") ||
        !strcmp(method, "Network.getRequestPostData")) {
        bool response = !strcmp(method, "Network.getResponseBody");
        return bm_send(m, id, response ? K_BODY : K_POST_DATA, ctx, "network.getData",
                       json_pack("{s:s, s:s}", "dataType", response ? "response" : "request",
                                 "request", bm_str(p, "requestId") ?: ""),
                       out);
    }
    if (bm_is_cookie_command(method))
        return bm_cookie_command(m, id, method, p, out);
    if (bm_is_fetch_command(method))
        return bm_fetch_command(m, id, ctx, method, p, out);
    if (bm_is_print_command(method))
        return bm_print_command(m, id, ctx, method, p, out);
    if (!strcmp(method, "Page.captureScreenshot"))
        return screenshot(m, id, ctx, p, out);
    if (!strcmp(method, "Page.getLayoutMetrics"))
        return bm_send(m, id, K_LAYOUT, ctx, "script.evaluate",
                       json_pack("{s:s, s:{s:s, s:s}, s:b, s:s}", "expression",
                                 "(() => { const e = document.documentElement, b = document.body; "
                                 "return [Math.max(e.scrollWidth, b ? b.scrollWidth : 0), "
                                 "Math.max(e.scrollHeight, b ? b.scrollHeight : 0), "
                                 "e.clientWidth, e.clientHeight, scrollX, scrollY]; })()",
                                 "target", "context", ctx, "sandbox", "tabvisor-measure",
                                 "awaitPromise", 0, "resultOwnership", "none"),
                       out);
    if (!strcmp(method, "Page.bringToFront"))
        return bm_send(m, id, K_EMPTY, ctx, "browsingContext.activate",
                       json_pack("{s:s}", "context", ctx), out);
    if (!strcmp(method, "Page.handleJavaScriptDialog")) {
        json_t *bp = json_pack("{s:s, s:b}", "context", ctx, "accept",
                               json_is_true(json_object_get(p, "accept")));
        if (bm_str(p, "promptText"))
            json_object_set_new(bp, "userText", json_string(bm_str(p, "promptText")));
        return bm_send(m, id, K_EMPTY, ctx, "browsingContext.handleUserPrompt", bp, out);
    }
    if (!strcmp(method, "Emulation.setDeviceMetricsOverride"))
        return bm_send(
            m, id, K_EMPTY, ctx, "browsingContext.setViewport",
            json_pack("{s:s, s:{s:i, s:i}, s:f}", "context", ctx, "viewport", "width",
                      (int)bm_num(p, "width"), "height", (int)bm_num(p, "height"),
                      "devicePixelRatio",
                      bm_num(p, "deviceScaleFactor") > 0 ? bm_num(p, "deviceScaleFactor") : 1.0),
            out);
    if (!strcmp(method, "Page.addScriptToEvaluateOnNewDocument")) {
        const char *src = bm_str(p, "source");
        char *fn = NULL;
        if (!src || asprintf(&fn, "() => {\n%s\n}", src) < 0) {
            *out = bm_error(id, -32602, "no source");
            return BIDI_ANSWER;
        }
        json_t *bp = json_pack("{s:s, s:[s]}", "functionDeclaration", fn, "contexts", ctx);
        free(fn);
        if (bm_str(p, "worldName") && *bm_str(p, "worldName"))
            json_object_set_new(bp, "sandbox", json_string(bm_str(p, "worldName")));
        return bm_send(m, id, K_PRELOAD, ctx, "script.addPreloadScript", bp, out);
    }
    if (!strcmp(method, "Page.removeScriptToEvaluateOnNewDocument"))
        return bm_send(m, id, K_EMPTY, ctx, "script.removePreloadScript",
                       json_pack("{s:s}", "script", bm_str(p, "identifier") ?: ""), out);
    if (!strncmp(method, "Input.", 6))
        return bm_input_command(m, id, ctx, method, p, out);
    *out = bm_not_supported(id, method);
    return BIDI_ANSWER;
}

static enum bidi_outcome browser_command(struct bidi_map *m, long long id, const char *method,
                                         json_t *p, json_t **out)
{
    if (!strcmp(method, "Target.createBrowserContext"))
        return bm_send(m, id, K_USER_CONTEXT, NULL, "browser.createUserContext", json_object(),
                       out);
    if (!strcmp(method, "Target.disposeBrowserContext"))
        return bm_send(m, id, K_EMPTY, NULL, "browser.removeUserContext",
                       json_pack("{s:s}", "userContext", bm_str(p, "browserContextId") ?: ""), out);
    if (!strcmp(method, "Target.createTarget")) {
        json_t *bp = json_pack("{s:s}", "type", "window");
        const char *uc = bm_str(p, "browserContextId");
        if (uc) {
            json_object_set_new(bp, "userContext", json_string(uc));
            if (strlen(uc) < sizeof m->user_context)
                snprintf(m->user_context, sizeof m->user_context, "%s", uc);
        }
        const char *url = bm_str(p, "url");
        if (url && strcmp(url, "about:blank") != 0) {
            json_decref(bp);
            *out = bm_error(id, CDP_ERR_NOT_SUPPORTED,
                            "a new Firefox tab opens on about:blank; navigate it afterwards");
            return BIDI_ANSWER;
        }
        return bm_send(m, id, K_CREATE_TAB, NULL, "browsingContext.create", bp, out);
    }
    if (!strcmp(method, "Target.attachToTarget")) {
        /* A page's session is its context: nothing to attach. */
        const char *t = bm_str(p, "targetId");
        if (!t || !json_object_get(m->tops, t)) {
            *out = bm_error(id, -32602, "No target with given id found");
            return BIDI_ANSWER;
        }
        *out = bm_answer(id, json_pack("{s:s}", "sessionId", t));
        return BIDI_ANSWER;
    }
    if (!strcmp(method, "Target.closeTarget"))
        return bm_send(m, id, K_EMPTY, NULL, "browsingContext.close",
                       json_pack("{s:s}", "context", bm_str(p, "targetId") ?: ""), out);
    *out = bm_not_supported(id, method);
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
            *out = bm_answer(id, NULL);
            r = BIDI_ANSWER;
            goto done;
        }
    }
    if (!session || !*session)
        r = browser_command(m, id, method, params, out);
    else if (!json_object_get(m->tops, session) && !json_object_get(m->parents, session)) {
        *out = bm_error(id, -32001, "Session with given id not found.");
        r = BIDI_ANSWER;
    } else {
        r = page_command(m, id, session, method, params, out);
    }
done:
    json_decref(empty);
    return r;
}
