/*
 * bidi_events.c - BiDi events as the CDP events the worker's modules
 * follow (bidi_map.h).
 */
#include <stdio.h>
#include <string.h>

#include "bidi_map_int.h"
#include "origins.h"
#include "transport.h"

/* ---- events ---- */

/* The page (top-level context we opened) context belongs to, or NULL. */
const char *bm_top_of(struct bidi_map *m, const char *context)
{
    if (!context)
        return NULL;
    if (json_object_get(m->tops, context))
        return json_object_iter_key(json_object_iter_at(m->tops, context));
    return json_string_value(json_object_get(m->parents, context));
}

void bm_emit(void (*emit)(void *, json_t *), void *ud, const char *session, const char *method,
             json_t *params)
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
        const char *name = bm_str(e, "name");
        const char *value = bm_str(json_object_get(e, "value"), "value");
        if (name && value)
            json_object_set_new(h, name, json_string(value));
    }
    return h;
}

static void lifecycle(void (*emit)(void *, json_t *), void *ud, const char *top,
                      const char *context, json_t *p, const char *name)
{
    bm_emit(emit, ud, top, "Page.lifecycleEvent",
            json_pack("{s:s, s:s, s:s, s:f}", "frameId", context, "loaderId",
                      bm_str(p, "navigation") ?: "", "name", name, "timestamp",
                      bm_num(p, "timestamp") / 1000.0));
}

/* CDP's resource type for a BiDi request: by its initiator or destination
 * (Fetch, XHR, Script, ...), Document for a navigation. */
static const char *resource_type(json_t *req, bool navigation)
{
    static const struct {
        const char *bidi, *cdp;
    } by_initiator[] = {{"fetch", "Fetch"}, {"xmlhttprequest", "XHR"}, {"beacon", "Ping"}},
      by_destination[] = {{"document", "Document"}, {"iframe", "Document"},  {"frame", "Document"},
                          {"script", "Script"},     {"style", "Stylesheet"}, {"image", "Image"},
                          {"font", "Font"},         {"audio", "Media"},      {"video", "Media"},
                          {"track", "TextTrack"},   {"manifest", "Manifest"}};
    const char *i = bm_str(req, "initiatorType"), *d = bm_str(req, "destination");
    for (size_t k = 0; i && k < sizeof by_initiator / sizeof by_initiator[0]; k++)
        if (!strcmp(i, by_initiator[k].bidi))
            return by_initiator[k].cdp;
    for (size_t k = 0; d && k < sizeof by_destination / sizeof by_destination[0]; k++)
        if (!strcmp(d, by_destination[k].bidi))
            return by_destination[k].cdp;
    return navigation ? "Document" : "Other";
}

static void network_event(struct bidi_map *m, const char *method, json_t *p,
                          void (*emit)(void *, json_t *), void *ud)
{
    const char *ctx = bm_str(p, "context");
    const char *top = bm_top_of(m, ctx);
    json_t *req = json_object_get(p, "request");
    const char *rid = bm_str(req, "request");
    if (!top || !rid)
        return;
    double ts = bm_num(p, "timestamp") / 1000.0;
    if (!strcmp(method, "network.beforeRequestSent")) {
        const char *nav = bm_str(p, "navigation");
        const char *type = resource_type(req, nav != NULL);
        /* CDP's document request has its loader's id: a new page's request
         * list starts there (tools/network_log.c). */
        bool document = nav && !strcmp(type, "Document");
        bm_emit(emit, ud, top, "Network.requestWillBeSent",
                json_pack("{s:s, s:s, s:s, s:{s:s, s:s, s:o, s:b}, s:f, s:f, s:s, s:s}",
                          "requestId", rid, "loaderId", document ? rid : "", "documentURL", "",
                          "request", "url", bm_str(req, "url") ?: "", "method",
                          bm_str(req, "method") ?: "GET", "headers",
                          headers_object(json_object_get(req, "headers")), "hasPostData",
                          bm_num(req, "bodySize") > 0, "timestamp", ts, "wallTime", ts, "type",
                          type, "frameId", ctx));
        /* Paused by the page's intercept (bidi_intercept.c): CDP's Fetch
         * pause, answered by the request's id; headers as Fetch lists them. */
        if (json_is_true(json_object_get(p, "isBlocked")))
            bm_emit(emit, ud, top, "Fetch.requestPaused",
                    json_pack("{s:s, s:{s:s, s:s, s:o}, s:s, s:s, s:s}", "requestId", rid,
                              "request", "url", bm_str(req, "url") ?: "", "method",
                              bm_str(req, "method") ?: "GET", "headers",
                              headers_object(json_object_get(req, "headers")), "frameId", ctx,
                              "resourceType", type, "networkId", rid));
    } else if (!strcmp(method, "network.responseCompleted")) {
        json_t *resp = json_object_get(p, "response");
        bm_emit(
            emit, ud, top, "Network.responseReceived",
            json_pack("{s:s, s:f, s:s, s:{s:s, s:I, s:s, s:s, s:o}}", "requestId", rid, "timestamp",
                      ts, "type", "Other", "response", "url", bm_str(resp, "url") ?: "", "status",
                      (json_int_t)json_integer_value(json_object_get(resp, "status")), "statusText",
                      bm_str(resp, "statusText") ?: "", "mimeType", bm_str(resp, "mimeType") ?: "",
                      "headers", headers_object(json_object_get(resp, "headers"))));
        bm_emit(emit, ud, top, "Network.loadingFinished",
                json_pack("{s:s, s:f, s:f}", "requestId", rid, "timestamp", ts, "encodedDataLength",
                          bm_num(resp, "bytesReceived")));
    } else if (!strcmp(method, "network.fetchError")) {
        bm_emit(emit, ud, top, "Network.loadingFailed",
                json_pack("{s:s, s:f, s:s, s:s}", "requestId", rid, "timestamp", ts, "type",
                          "Other", "errorText", bm_str(p, "errorText") ?: "failed"));
    }
}

/* The page asked for a file chooser (worker/firefox_page.c): args are the
 * marker, the <input type=file> and whether it takes several files. */
static void file_chooser(struct bidi_map *m, const char *top, const char *ctx, json_t *args,
                         void (*emit)(void *, json_t *), void *ud)
{
    const char *sid = bm_str(json_array_get(args, 1), "sharedId");
    bool multiple = json_is_true(json_object_get(json_array_get(args, 2), "value"));
    if (!sid || !ctx)
        return;
    bm_emit(emit, ud, top, "Page.fileChooserOpened",
            json_pack("{s:s, s:s, s:I}", "frameId", ctx, "mode",
                      multiple ? "selectMultiple" : "selectSingle", "backendNodeId",
                      bm_node_add(m, sid, ctx)));
}

static void log_event(struct bidi_map *m, json_t *p, void (*emit)(void *, json_t *), void *ud)
{
    const char *top = bm_top_of(m, bm_str(json_object_get(p, "source"), "context"));
    if (!top)
        return;
    const char *type = bm_str(p, "type"), *text = bm_str(p, "text") ?: "";
    json_t *args = json_object_get(p, "args");
    if (!strcmp(bm_str(json_array_get(args, 0), "value") ?: "", FIREFOX_CHOOSER_MARK)) {
        file_chooser(m, top, bm_str(json_object_get(p, "source"), "context"), args, emit, ud);
        return;
    }
    double ts = bm_num(p, "timestamp");
    /* BiDi's stack trace has CDP's shape (callFrames: url, functionName,
     * lineNumber and columnNumber from 0). */
    json_t *stack = json_object_get(p, "stackTrace");
    if (type && !strcmp(type, "javascript")) {
        json_t *d = json_pack("{s:s, s:{s:s}}", "text", text, "exception", "description", text);
        if (json_is_object(stack))
            json_object_set(d, "stackTrace", stack);
        bm_emit(emit, ud, top, "Runtime.exceptionThrown",
                json_pack("{s:f, s:o}", "timestamp", ts, "exceptionDetails", d));
        return;
    }
    const char *level = bm_str(p, "method");
    if (!level)
        level = bm_str(p, "level") ?: "log";
    if (!strcmp(level, "warn") || !strcmp(level, "warning"))
        level = "warning";
    json_t *e = json_pack("{s:s, s:[{s:s, s:s}], s:i, s:f}", "type", level, "args", "type",
                          "string", "value", text, "executionContextId", 0, "timestamp", ts);
    if (json_is_object(stack))
        json_object_set(e, "stackTrace", stack);
    bm_emit(emit, ud, top, "Runtime.consoleAPICalled", e);
}

/* A top-level context a page of ours opened (window.open, a link's
 * target): one of ours from now on, handed to the worker as CDP's
 * auto-attach hands a popup (tabs.c adopts it). Our own new tabs have no
 * opener. Firefox does not pause it: it may have started loading. */
static bool popup(struct bidi_map *m, const char *ctx, json_t *p, void (*emit)(void *, json_t *),
                  void *ud)
{
    const char *opener = bm_str(p, "originalOpener");
    if (!opener || !bm_top_of(m, opener) || json_object_get(m->tops, ctx) || strlen(ctx) >= MAX_ID)
        return false;
    json_object_set_new(m->tops, ctx, json_true());
    json_t *info = json_pack("{s:s, s:s, s:s, s:s, s:s, s:b, s:s}", "targetId", ctx, "type", "page",
                             "url", bm_str(p, "url") ?: "", "title", "", "browserContextId",
                             bm_str(p, "userContext") ?: "", "attached", 1, "openerId", opener);
    bm_emit(emit, ud, NULL, "Target.targetCreated", json_pack("{s:O}", "targetInfo", info));
    bm_emit(emit, ud, NULL, "Target.attachedToTarget",
            json_pack("{s:s, s:o, s:b}", "sessionId", ctx, "targetInfo", info, "waitingForDebugger",
                      1));
    return true;
}

/* A navigation of the page that loads nothing: the document that stays is
 * loaded, and whoever waits on the navigation from its "init" is done. */
static void loaded_nothing(void (*emit)(void *, json_t *), void *ud, const char *top,
                           const char *ctx, json_t *p)
{
    lifecycle(emit, ud, top, ctx, p, "DOMContentLoaded");
    lifecycle(emit, ud, top, ctx, p, "load");
    lifecycle(emit, ud, top, ctx, p, "networkIdle");
    bm_emit(emit, ud, top, "Page.frameStoppedLoading", json_pack("{s:s}", "frameId", ctx));
}

/* A document committed in ctx: CDP's Page.frameNavigated, with the
 * document's origin (the storage state remembers the origins a session
 * visited, tools/storage_state.c) and its parent for a frame. */
static void navigated(struct bidi_map *m, const char *top, const char *ctx, const char *nav,
                      const char *url, void (*emit)(void *, json_t *), void *ud)
{
    char origin[16 + ORIGIN_MAX_HOST + 16] = "null";
    struct url_origin o;
    if (url_origin_parse(url, &o) == 0 &&
        (!strcmp(o.scheme, "http") || !strcmp(o.scheme, "https"))) {
        bool default_port = o.port == (!strcmp(o.scheme, "http") ? 80 : 443);
        if (default_port || o.port < 0)
            snprintf(origin, sizeof origin, "%s://%s", o.scheme, o.host);
        else
            snprintf(origin, sizeof origin, "%s://%s:%d", o.scheme, o.host, o.port);
    }
    json_t *frame = json_pack("{s:s, s:s, s:s, s:s}", "id", ctx, "loaderId", nav, "url", url,
                              "securityOrigin", origin);
    const char *parent = json_string_value(json_object_get(m->frame_parent, ctx));
    if (parent)
        json_object_set_new(frame, "parentId", json_string(parent));
    bm_emit(emit, ud, top, "Page.frameNavigated",
            json_pack("{s:o, s:s}", "frame", frame, "type", "Navigation"));
}

/* A content process that died (killed, out of memory): each of its
 * contexts commits about:blank again under the navigation that loaded the
 * document it showed (a selected tab then commits about:tabcrashed, a
 * background one only when selected). A navigation commits once, so a
 * second commit of the same navigation is the crash: CDP's
 * Inspector.targetCrashed on the context's session (a frame's on its own,
 * which the worker leaves to the frame), and the page's URL is kept for its
 * reload (Page.reload). BiDi answers nothing pending in that context until it
 * is closed; the worker's waits end on the crash. */
static void committed(struct bidi_map *m, const char *top, const char *ctx, json_t *p,
                      void (*emit)(void *, json_t *), void *ud)
{
    const char *nav = bm_str(p, "navigation");
    const char *url = bm_str(p, "url");
    if (!nav || !url)
        return;
    json_t *last = json_object_get(m->commits, ctx);
    if (!last || strcmp(json_string_value(json_array_get(last, 0)) ?: "", nav) != 0) {
        json_object_set_new(m->commits, ctx, json_pack("[s, s]", nav, url));
        navigated(m, top, ctx, nav, url, emit, ud);
        return;
    }
    const char *was = json_string_value(json_array_get(last, 1));
    if (!was || !strcmp(was, "about:blank") || !strncmp(was, "about:tabcrashed", 16))
        return; /* told already */
    if (!strcmp(top, ctx))
        json_object_set_new(m->crashed, ctx, json_string(was));
    json_array_set_new(last, 1, json_string(url));
    bm_emit(emit, ud, ctx, "Inspector.targetCrashed", json_object());
}

void bidi_map_event(struct bidi_map *m, json_t *msg, void (*emit)(void *ud, json_t *cdp), void *ud)
{
    const char *method = bm_str(msg, "method");
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
    const char *ctx = bm_str(p, "context");
    if (!ctx)
        return;
    if (!strcmp(method, "browsingContext.contextCreated")) {
        /* A frame of one of our pages. It is also a session of its own, as
         * CDP's out-of-process frames are (announced on its parent's):
         * input for it must name it, since Firefox does not pass input
         * given to the page on into a frame in another process. */
        const char *parent = bm_str(p, "parent");
        const char *top = bm_top_of(m, parent);
        if (!parent && popup(m, ctx, p, emit, ud))
            return;
        if (top && strlen(ctx) < MAX_ID) {
            json_object_set_new(m->parents, ctx, json_string(top));
            json_object_set_new(m->frame_parent, ctx, json_string(parent));
            bm_emit(emit, ud, top, "Page.frameAttached",
                    json_pack("{s:s, s:s}", "frameId", ctx, "parentFrameId", parent));
            bm_emit(emit, ud, json_object_get(m->tops, parent) ? top : parent,
                    "Target.attachedToTarget",
                    json_pack("{s:s, s:{s:s, s:s, s:s}, s:b}", "sessionId", ctx, "targetInfo",
                              "targetId", ctx, "type", "iframe", "url", bm_str(p, "url") ?: "",
                              "waitingForDebugger", 0));
        }
        return;
    }
    /* Copied: contextDestroyed drops the key top_of points into. */
    char top[MAX_ID];
    const char *t = bm_top_of(m, ctx);
    if (!t)
        return;
    snprintf(top, sizeof top, "%s", t);
    bool main_frame = strcmp(top, ctx) == 0;
    if (!strcmp(method, "browsingContext.contextDestroyed")) {
        if (main_frame) {
            json_object_del(m->tops, ctx);
            json_object_del(m->crashed, ctx);
            json_object_del(m->commits, ctx);
            json_object_del(m->intercepts, ctx);
            bm_emit(emit, ud, NULL, "Target.detachedFromTarget",
                    json_pack("{s:s, s:s}", "sessionId", top, "targetId", top));
            bm_emit(emit, ud, NULL, "Target.targetDestroyed", json_pack("{s:s}", "targetId", top));
        } else {
            json_object_del(m->parents, ctx);
            json_object_del(m->frame_parent, ctx);
            json_object_del(m->commits, ctx);
            bm_emit(emit, ud, top, "Page.frameDetached",
                    json_pack("{s:s, s:s}", "frameId", ctx, "reason", "remove"));
        }
    } else if (!strcmp(method, "browsingContext.navigationCommitted")) {
        committed(m, top, ctx, p, emit, ud);
    } else if (!strcmp(method, "browsingContext.navigationStarted")) {
        if (main_frame) {
            if (json_object_get(m->history_steps, ctx))
                json_object_set_new(m->history_steps, ctx, json_true());
            bm_emit(emit, ud, top, "Page.frameStartedLoading", json_pack("{s:s}", "frameId", ctx));
            lifecycle(emit, ud, top, ctx, p, "init");
        }
    } else if (!strcmp(method, "browsingContext.downloadWillBegin")) {
        /* A navigation that became a download (refused by the bridge:
         * supervisor/bidi_bridge.c) loads nothing either; the worker hears
         * of the download, then of its end, as from CDP. */
        bm_emit(emit, ud, top, "Page.downloadWillBegin",
                json_pack("{s:s, s:s, s:s, s:s}", "frameId", ctx, "guid",
                          bm_str(p, "navigation") ?: bm_str(p, "url") ?: "", "url",
                          bm_str(p, "url") ?: "", "suggestedFilename",
                          bm_str(p, "suggestedFilename") ?: ""));
        if (main_frame)
            loaded_nothing(emit, ud, top, ctx, p);
    } else if (!strcmp(method, "browsingContext.downloadEnd")) {
        const char *status = bm_str(p, "status");
        bm_emit(emit, ud, top, "Page.downloadProgress",
                json_pack("{s:s, s:s, s:i, s:i}", "guid",
                          bm_str(p, "navigation") ?: bm_str(p, "url") ?: "", "state",
                          status && !strcmp(status, "complete") ? "completed" : "canceled",
                          "receivedBytes", 0, "totalBytes", 0));
    } else if (!strcmp(method, "browsingContext.navigationFailed")) {
        /* A navigation that will load nothing (a beforeunload dismissed, a
         * download, an error page's): the document that stays is loaded, and
         * whoever waits on the navigation from its "init" is done, as CDP,
         * which never started one, would have it. */
        if (main_frame)
            loaded_nothing(emit, ud, top, ctx, p);
    } else if (!strcmp(method, "browsingContext.domContentLoaded")) {
        lifecycle(emit, ud, top, ctx, p, "DOMContentLoaded");
    } else if (!strcmp(method, "browsingContext.load")) {
        lifecycle(emit, ud, top, ctx, p, "load");
        lifecycle(emit, ud, top, ctx, p, "networkIdle");
        bm_emit(emit, ud, top, "Page.frameStoppedLoading", json_pack("{s:s}", "frameId", ctx));
    } else if (!strcmp(method, "browsingContext.fragmentNavigated")) {
        if (main_frame && bm_str(p, "navigation"))
            json_object_set_new(m->fragments, ctx, json_string(bm_str(p, "navigation")));
        /* The navigation that started stayed in the document, which has
         * loaded: whoever waits on it from its "init" is done. */
        lifecycle(emit, ud, top, ctx, p, "DOMContentLoaded");
        lifecycle(emit, ud, top, ctx, p, "load");
        lifecycle(emit, ud, top, ctx, p, "networkIdle");
        bm_emit(emit, ud, top, "Page.navigatedWithinDocument",
                json_pack("{s:s, s:s}", "frameId", ctx, "url", bm_str(p, "url") ?: ""));
    } else if (!strcmp(method, "browsingContext.userPromptOpened")) {
        bm_emit(emit, ud, top, "Page.javascriptDialogOpening",
                json_pack("{s:s, s:s, s:s, s:b, s:s}", "url", "", "message",
                          bm_str(p, "message") ?: "", "type", bm_str(p, "type") ?: "alert",
                          "hasBrowserHandler", 0, "defaultPrompt",
                          bm_str(p, "defaultValue") ?: ""));
    } else if (!strcmp(method, "browsingContext.userPromptClosed")) {
        bm_emit(emit, ud, top, "Page.javascriptDialogClosed",
                json_pack("{s:b, s:s}", "result", json_is_true(json_object_get(p, "accepted")),
                          "userInput", bm_str(p, "userText") ?: ""));
    }
}
