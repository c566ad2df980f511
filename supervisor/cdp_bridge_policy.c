/*
 * cdp_bridge_policy.c - what a worker may send through the bridge: the
 * browser-level commands a session needs for its own contexts, targets and
 * downloads (ownership), and on its sessions the bridge layer of the CDP
 * policy table (proto/cdp_policy.c) with URLs as the browser parses them.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bridge_command.h"
#include "cdp_bridge_int.h"
#include "cdp_policy.h"
#include "url_policy.h"

/* ---- from a worker ---- */

static const char *param_str(json_t *msg, const char *key)
{
    return json_string_value(json_object_get(json_object_get(msg, "params"), key));
}

static bool owned(json_t *map, const char *id, struct client *c)
{
    return id && bridge_owner_of(map, id, strlen(id)) == c;
}

/* Whether a page of ours may be created at url (Target.createTarget; ""
 * is about:blank): the bridge layer's URL policy, as the browser parses it. */
static bool url_allowed(json_t *url)
{
    if (!url)
        return true;
    return json_is_string(url) &&
           !url_policy_check(json_string_value(url), json_string_length(url),
                             cdp_policy_url_allow(CDP_LAYER_BRIDGE) | URL_ALLOW_EMPTY);
}

/*
 * The policy for browser-level commands (no sessionId): what a session
 * needs to set itself up and tear itself down, on its own things only.
 * Returns NULL when allowed (with *track set), else the refusal.
 */
const char *bridge_browser_policy(struct client *c, json_t *msg, const char *method,
                                  enum track *track)
{
    struct cdp_bridge *b = c->b;
    *track = TRACK_NONE;
    if (strcmp(method, "Browser.getVersion") == 0)
        return NULL;
    if (strcmp(method, "Target.createBrowserContext") == 0) {
        *track = TRACK_CONTEXT;
        return NULL;
    }
    if (strcmp(method, "Target.disposeBrowserContext") == 0) {
        const char *ctx = param_str(msg, "browserContextId");
        if (!owned(b->contexts, ctx, c))
            return "tabvisor: not this session's browser context";
        json_object_del(b->contexts, ctx); /* given up as it is sent */
        return NULL;
    }
    if (strcmp(method, "Target.createTarget") == 0) {
        if (!owned(b->contexts, param_str(msg, "browserContextId"), c))
            return "tabvisor: a target must be created in this session's browser context";
        if (!url_allowed(json_object_get(json_object_get(msg, "params"), "url")))
            return "tabvisor: a page may not open local files or browser pages";
        *track = TRACK_TARGET;
        return NULL;
    }
    if (strcmp(method, "Target.attachToTarget") == 0) {
        json_t *flatten = json_object_get(json_object_get(msg, "params"), "flatten");
        if (!json_is_true(flatten))
            return "tabvisor: only flattened sessions are bridged";
        if (!owned(b->targets, param_str(msg, "targetId"), c))
            return "tabvisor: not this session's target";
        *track = TRACK_SESSION;
        return NULL;
    }
    /* A download of its own context that went past the worker's bounds. */
    if (strcmp(method, "Browser.cancelDownload") == 0) {
        if (!owned(b->contexts, param_str(msg, "browserContextId"), c))
            return "tabvisor: not this session's browser context";
        return NULL;
    }
    if (strcmp(method, "Target.closeTarget") == 0 || strcmp(method, "Target.activateTarget") == 0) {
        const char *tid = param_str(msg, "targetId");
        if (!owned(b->targets, tid, c))
            return "tabvisor: not this session's target";
        if (method[7] == 'c')
            json_object_del(b->targets, tid);
        return NULL;
    }
    return "tabvisor: this browser-level command is not available to a session";
}

bool bridge_method_eq(const struct json_top *t, const char *name)
{
    size_t n = strlen(name);
    return t->method_len == n && memcmp(t->method, name, n) == 0;
}

/*
 * The policy for commands on a session the worker owns: the bridge layer of
 * the CDP policy table (proto/cdp_policy.c). Its page is its own, but some
 * commands reach past it (the browser's downloads, other targets, the
 * machine's files) or load a URL that must be checked. A worker never needs
 * them; one taken over by a hostile page must not get them. The command is
 * parsed only when the table needs its params, and then strictly: a
 * duplicate key could show us one URL and the browser another. NULL when
 * allowed.
 */
const char *bridge_session_policy(const struct json_top *t, const char *msg, size_t len)
{
    if (!cdp_policy_needs_params(CDP_LAYER_BRIDGE, t->method, t->method_len))
        return cdp_policy_check(CDP_LAYER_BRIDGE, t->method, t->method_len, NULL);
    const char *why = NULL;
    json_t *m = bridge_command_parse(msg, len, JSON_REJECT_DUPLICATES | JSON_ALLOW_NUL, &why);
    if (m)
        why = cdp_policy_check(CDP_LAYER_BRIDGE, t->method, t->method_len,
                               json_object_get(m, "params"));
    json_decref(m);
    return why;
}

/* Close every page c owns (what disposing of its context would do). */
void bridge_close_targets_of(struct cdp_bridge *b, struct client *c)
{
    const char *k;
    json_t *v;
    json_object_foreach(b->targets, k, v)
    {
        if ((struct client *)(intptr_t)json_integer_value(v) == c)
            bridge_command(b, "Target.closeTarget", json_pack("{s:s}", "targetId", k), TRACK_NONE);
    }
}

/*
 * With a persistent profile (cdp_bridge_use_default_context), a session's
 * "own context" is the browser's default one, whose cookies and storage
 * live in the profile: creating a context hands it out, disposing of it
 * closes the session's pages but keeps the context (the default context
 * cannot be disposed). Returns true when the command was answered here.
 */
bool bridge_default_context_command(struct client *c, json_t *msg, const char *method, long long id)
{
    struct cdp_bridge *b = c->b;
    if (strcmp(method, "Target.createBrowserContext") == 0) {
        bridge_own(b->contexts, b->default_ctx, strlen(b->default_ctx), c);
        bridge_set_downloads(b, c, b->default_ctx);
        bridge_answer(c, id, json_pack("{s:s}", "browserContextId", b->default_ctx));
        return true;
    }
    const char *ctx = param_str(msg, "browserContextId");
    if (strcmp(method, "Target.disposeBrowserContext") == 0 && ctx &&
        strcmp(ctx, b->default_ctx) == 0 && owned(b->contexts, ctx, c)) {
        bridge_close_targets_of(b, c);
        bridge_answer(c, id, json_object());
        return true;
    }
    return false;
}
