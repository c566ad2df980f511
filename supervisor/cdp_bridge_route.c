/*
 * cdp_bridge_route.c - where the browser's messages go: an answer to the
 * worker that asked (under its own id), what it gave that worker (a
 * context, a target, a session), and each event to the worker that owns
 * its session or target; nobody else's.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cdp_bridge_int.h"
#include "log.h"

/* ---- from the browser ---- */

/* Record what an answer to a tracked command gives its client. s is a copy
 * of the answered slot (commands sent from here may move the slot array). */
static void track_answer(struct cdp_bridge *b, const struct slot *s, const char *msg, size_t len)
{
    json_t *m = json_loadb(msg, len, 0, NULL);
    json_t *res = json_object_get(m, "result");
    const char *id = NULL;
    json_t *map = NULL;
    if (s->track == TRACK_CONTEXT) {
        id = json_string_value(json_object_get(res, "browserContextId"));
        map = b->contexts;
    } else if (s->track == TRACK_TARGET) {
        id = json_string_value(json_object_get(res, "targetId"));
        map = b->targets;
    } else if (s->track == TRACK_SESSION) {
        id = json_string_value(json_object_get(res, "sessionId"));
        map = b->sessions;
    }
    if (id && map) {
        if (s->owner) {
            bridge_own(map, id, strlen(id), s->owner);
            if (s->track == TRACK_CONTEXT)
                bridge_set_downloads(b, s->owner, id);
        } else if (s->track == TRACK_CONTEXT)
            /* Its worker left before the answer: nobody will dispose it. */
            bridge_command(b, "Target.disposeBrowserContext",
                           json_pack("{s:s}", "browserContextId", id), TRACK_NONE);
    }
    json_decref(m);
}

/* The answer to Target.getTargets at start-up: every target there is in
 * the default context (we have made none yet). Then the bridge is ready. */
static void learn_default_context(struct cdp_bridge *b, const char *msg, size_t len)
{
    json_t *m = json_loadb(msg, len, 0, NULL);
    json_t *infos = json_object_get(json_object_get(m, "result"), "targetInfos");
    size_t i;
    json_t *info;
    json_array_foreach(infos, i, info)
    {
        const char *ctx = json_string_value(json_object_get(info, "browserContextId"));
        if (ctx && strlen(ctx) <= MAX_CDP_ID) {
            snprintf(b->default_ctx, sizeof b->default_ctx, "%s", ctx);
            break;
        }
    }
    json_decref(m);
    if (!b->default_ctx[0]) {
        bridge_broken(b, "the browser reported no default browser context");
        return;
    }
    b->ev->ready(b->ud);
}

void bridge_on_answer(struct cdp_bridge *b, const char *msg, size_t len, const struct json_top *t)
{
    struct slot *s = bridge_slot_get(b, t->id);
    if (!s) {
        b->stats.dropped++;
        return;
    }
    if (s->track == TRACK_READY) {
        bridge_slot_free(b, s);
        if (!b->ready) {
            b->ready = true;
            /* Popups (window.open, target=_blank) are targets no worker
             * created: discovery reports them, and browser_event_owner hands
             * each to the owner of its context and to nobody else. */
            bridge_command(b, "Target.setDiscoverTargets", json_pack("{s:b}", "discover", 1),
                           TRACK_NONE);
            /* And every new page waits for a debugger (auto_attached): a
             * popup is handed to its owner before it loads anything, so the
             * owner's network rules hold from its first request. */
            bridge_command(b, "Target.setAutoAttach",
                           json_pack("{s:b, s:b, s:b, s:[{s:s}, {s:b}]}", "autoAttach", 1,
                                     "waitForDebuggerOnStart", 1, "flatten", 1, "filter", "type",
                                     "page", "exclude", 1),
                           TRACK_NONE);
            if (b->use_default) /* ready once the default context is known */
                bridge_command(b, "Target.getTargets", NULL, TRACK_DEFAULT);
            else
                b->ev->ready(b->ud);
        }
        return;
    }
    if (s->track == TRACK_DEFAULT) {
        bridge_slot_free(b, s);
        learn_default_context(b, msg, len);
        return;
    }
    /* The slot is copied and freed first: track_answer may send commands
     * of its own, whose slots can move the slot array (bridge_slot_alloc's
     * realloc; ASan caught the read after it under load). */
    struct slot done = *s;
    bridge_slot_free(b, s);
    s = NULL;
    if (done.track != TRACK_NONE)
        track_answer(b, &done, msg, len);
    struct client *c = done.owner;
    long long client_id = done.client_id;
    if (c)
        bridge_to_client(c, msg, len, t, client_id);
    else
        b->stats.dropped++;
}

/* Who owns an event without a sessionId: the owner of the session or
 * target its params name, else (target discovery: a popup the page opened)
 * the owner of the browser context its targetInfo names, who then owns the
 * target too, so it may attach to and close it. Target lifecycle events
 * also update the maps. */
static struct client *browser_event_owner(struct cdp_bridge *b, const char *msg, size_t len,
                                          const char *method)
{
    json_t *m = json_loadb(msg, len, 0, NULL);
    json_t *params = json_object_get(m, "params");
    json_t *info = json_object_get(params, "targetInfo");
    const char *sid = json_string_value(json_object_get(params, "sessionId"));
    const char *tid = json_string_value(json_object_get(params, "targetId"));
    if (!tid)
        tid = json_string_value(json_object_get(info, "targetId"));
    struct client *c = NULL;
    if (sid)
        c = bridge_owner_of(b->sessions, sid, strlen(sid));
    /* A detach is the session owner's business only (the bridge's own
     * auto-attach sessions of a worker's page end unheard). */
    bool detach = strcmp(method, "Target.detachedFromTarget") == 0;
    if (!c && tid && !(detach && sid))
        c = bridge_owner_of(b->targets, tid, strlen(tid));
    const char *ctx = json_string_value(json_object_get(info, "browserContextId"));
    if (!c && tid && ctx && !detach && strcmp(method, "Target.targetDestroyed") != 0) {
        c = bridge_owner_of(b->contexts, ctx, strlen(ctx));
        if (c)
            bridge_own(b->targets, tid, strlen(tid), c);
    }
    if (strcmp(method, "Target.detachedFromTarget") == 0 && sid)
        json_object_del(b->sessions, sid);
    else if (strcmp(method, "Target.targetDestroyed") == 0 && tid)
        json_object_del(b->targets, tid);
    json_decref(m);
    return c;
}

/* Child sessions (out-of-process iframes, workers) attach on a parent
 * session: they belong to the parent's owner. */
static void track_child_session(struct cdp_bridge *b, const char *msg, size_t len,
                                struct client *owner, bool attached)
{
    json_t *m = json_loadb(msg, len, 0, NULL);
    const char *sid = json_string_value(json_object_get(json_object_get(m, "params"), "sessionId"));
    if (sid) {
        if (attached)
            bridge_own(b->sessions, sid, strlen(sid), owner);
        else if (bridge_owner_of(b->sessions, sid, strlen(sid)) == owner)
            json_object_del(b->sessions, sid);
    }
    json_decref(m);
}

/*
 * A page auto-attached to the bridge's own connection (browser level), most
 * paused before loading. A popup (it has an opener) of a context a worker
 * owns is handed to that worker, paused, as its target and session: the
 * worker sets it up and resumes it. Any other page (one a worker created
 * with Target.createTarget, or of nobody's context) is resumed and detached
 * at once, so workers that never heard of auto-attach see no change.
 * Returns the owner, or NULL when the event goes no further.
 */
static struct client *auto_attached(struct cdp_bridge *b, json_t *params)
{
    json_t *info = json_object_get(params, "targetInfo");
    const char *sid = json_string_value(json_object_get(params, "sessionId"));
    const char *tid = json_string_value(json_object_get(info, "targetId"));
    const char *ctx = json_string_value(json_object_get(info, "browserContextId"));
    const char *opener = json_string_value(json_object_get(info, "openerId"));
    struct client *c = opener && ctx ? bridge_owner_of(b->contexts, ctx, strlen(ctx)) : NULL;
    if (c) {
        bridge_own(b->targets, tid, strlen(tid), c);
        bridge_own(b->sessions, sid, strlen(sid), c);
        return c;
    }
    if (json_is_true(json_object_get(params, "waitingForDebugger")))
        bridge_session_command(b, sid, "Runtime.runIfWaitingForDebugger", NULL, TRACK_NONE);
    bridge_command(b, "Target.detachFromTarget", json_pack("{s:s}", "sessionId", sid), TRACK_NONE);
    return NULL;
}

/* Whether a browser-level Target.attachedToTarget comes from the bridge's
 * auto-attach rather than a worker's Target.attachToTarget: a worker only
 * attaches to its own targets, and its session is then not paused. */
static bool is_auto_attach(struct cdp_bridge *b, json_t *params)
{
    const char *sid = json_string_value(json_object_get(params, "sessionId"));
    const char *tid =
        json_string_value(json_object_get(json_object_get(params, "targetInfo"), "targetId"));
    if (!sid || !tid || bridge_owner_of(b->sessions, sid, strlen(sid)))
        return false;
    return json_is_true(json_object_get(params, "waitingForDebugger")) ||
           !bridge_owner_of(b->targets, tid, strlen(tid));
}

void bridge_on_event(struct cdp_bridge *b, const char *msg, size_t len, const struct json_top *t)
{
    struct client *c;
    if (!t->session && bridge_method_eq(t, "Target.attachedToTarget")) {
        json_t *m = json_loadb(msg, len, 0, NULL);
        json_t *params = json_object_get(m, "params");
        bool handled = is_auto_attach(b, params);
        c = handled ? auto_attached(b, params) : NULL;
        json_decref(m);
        if (handled) {
            if (c)
                bridge_to_client(c, msg, len, NULL, 0);
            else
                b->stats.dropped++;
            return;
        }
    }
    if (t->session) {
        c = bridge_owner_of(b->sessions, t->session, t->session_len);
        if (c && bridge_method_eq(t, "Target.attachedToTarget"))
            track_child_session(b, msg, len, c, true);
        else if (c && bridge_method_eq(t, "Target.detachedFromTarget"))
            track_child_session(b, msg, len, c, false);
    } else {
        char method[128];
        snprintf(method, sizeof method, "%.*s", (int)(t->method ? t->method_len : 0),
                 t->method ? t->method : "");
        c = browser_event_owner(b, msg, len, method);
    }
    if (c)
        bridge_to_client(c, msg, len, NULL, 0);
    else
        b->stats.dropped++;
}
