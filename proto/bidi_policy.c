/*
 * bidi_policy.c - the BiDi policy table (bidi_policy.h).
 */
#include "bidi_policy.h"

#include <string.h>

#include "url_policy.h"

enum scope {
    NEVER,        /* never through the bridge */
    CONTEXT,      /* params[key] (default "context") names an owned browsing context */
    TARGET,       /* params.target.context owned; a realm target is refused */
    CREATE,       /* params.userContext is the session's; referenceContext owned if given */
    PARTITION,    /* params.partition: the session's user context or an owned context */
    USER_CONTEXT, /* params.userContext is the session's */
    SCOPED,       /* params.contexts all owned, or params.userContexts only the session's */
    CONTEXTS,     /* params.contexts given and all owned */
    HANDLE,       /* params[key] is an id of kind the session owns */
    UNSUBSCRIBE,  /* params.subscriptions alone, each one the session's */
};

/* The parameters that name a session's things (contexts, user contexts,
 * handles), one bit each. A rule lists those the browser honours for its
 * command; any other one is refused. Firefox drops a parameter it does not
 * implement, and the command then acts on every session: session.unsubscribe
 * with "userContexts" (ESR 153 reads only "contexts" and "subscriptions")
 * removed events from the bridge's browser-wide subscription. */
enum {
    P_CONTEXT = 1 << 0,
    P_ROOT = 1 << 1,
    P_REFERENCE_CONTEXT = 1 << 2,
    P_CONTEXTS = 1 << 3,
    P_USER_CONTEXT = 1 << 4,
    P_USER_CONTEXTS = 1 << 5,
    P_SCRIPT = 1 << 6,
    P_REQUEST = 1 << 7,
    P_INTERCEPT = 1 << 8,
    P_SUBSCRIPTIONS = 1 << 9,
};
static const char *const scoped_keys[] = {
    "context",      "root",   "referenceContext", "contexts",  "userContext",
    "userContexts", "script", "request",          "intercept", "subscriptions"};

/* Firefox ESR 153 reads both for these (checked in its remote/ modules:
 * emulation, network.setExtraHeaders, script.addPreloadScript,
 * session.subscribe). */
#define P_SCOPED (P_CONTEXTS | P_USER_CONTEXTS)

struct bidi_rule {
    const char *method;
    enum scope scope;
    unsigned params;  /* the scoping parameters it may carry (P_*) */
    const char *key;  /* CONTEXT: the param (NULL: "context"); HANDLE: the param */
    const char *kind; /* HANDLE: what the bridge calls the ids */
    bool url;         /* params.url, when present, is loaded: URL policy */
};

static const char whole_browser[] = "tabvisor: a command of the whole browser (the supervisor's)";

/* Sorted by method, for a reader; looked up linearly (a few dozen). */
static const struct bidi_rule rules[] = {
    {"browser.close", NEVER, 0, NULL, NULL, false},
    {"browser.createUserContext", NEVER, 0, NULL, NULL, false},
    {"browser.getClientWindows", NEVER, 0, NULL, NULL, false},
    {"browser.getUserContexts", NEVER, 0, NULL, NULL, false},
    {"browser.removeUserContext", NEVER, 0, NULL, NULL, false},
    {"browser.setClientWindowState", NEVER, 0, NULL, NULL, false},
    {"browser.setDownloadBehavior", NEVER, 0, NULL, NULL, false},
    {"browsingContext.activate", CONTEXT, P_CONTEXT, NULL, NULL, false},
    {"browsingContext.captureScreenshot", CONTEXT, P_CONTEXT, NULL, NULL, false},
    {"browsingContext.close", CONTEXT, P_CONTEXT, NULL, NULL, false},
    {"browsingContext.create", CREATE, P_USER_CONTEXT | P_REFERENCE_CONTEXT, NULL, NULL, false},
    {"browsingContext.getTree", CONTEXT, P_ROOT, "root", NULL, false},
    {"browsingContext.handleUserPrompt", CONTEXT, P_CONTEXT, NULL, NULL, false},
    {"browsingContext.locateNodes", CONTEXT, P_CONTEXT, NULL, NULL, false},
    {"browsingContext.navigate", CONTEXT, P_CONTEXT, NULL, NULL, true},
    {"browsingContext.print", CONTEXT, P_CONTEXT, NULL, NULL, false},
    {"browsingContext.reload", CONTEXT, P_CONTEXT, NULL, NULL, false},
    {"browsingContext.setViewport", CONTEXT, P_CONTEXT, NULL, NULL, false},
    {"browsingContext.traverseHistory", CONTEXT, P_CONTEXT, NULL, NULL, false},
    {"emulation.setGeolocationOverride", SCOPED, P_SCOPED, NULL, NULL, false},
    {"emulation.setLocaleOverride", SCOPED, P_SCOPED, NULL, NULL, false},
    {"emulation.setNetworkConditions", SCOPED, P_SCOPED, NULL, NULL, false},
    {"emulation.setScreenOrientationOverride", SCOPED, P_SCOPED, NULL, NULL, false},
    {"emulation.setTimezoneOverride", SCOPED, P_SCOPED, NULL, NULL, false},
    {"input.performActions", CONTEXT, P_CONTEXT, NULL, NULL, false},
    {"input.releaseActions", CONTEXT, P_CONTEXT, NULL, NULL, false},
    {"input.setFiles", NEVER, 0, NULL, NULL, false},
    {"network.addDataCollector", NEVER, 0, NULL, NULL, false}, /* the bridge's one */
    {"network.addIntercept", CONTEXTS, P_CONTEXTS, NULL, NULL, false},
    {"network.continueRequest", HANDLE, P_REQUEST, "request", "request", true},
    {"network.continueResponse", HANDLE, P_REQUEST, "request", "request", false},
    {"network.continueWithAuth", HANDLE, P_REQUEST, "request", "request", false},
    {"network.disownData", NEVER, 0, NULL, NULL, false},
    {"network.failRequest", HANDLE, P_REQUEST, "request", "request", false},
    {"network.getData", HANDLE, P_REQUEST, "request", "request", false},
    {"network.provideResponse", HANDLE, P_REQUEST, "request", "request", false},
    {"network.removeDataCollector", NEVER, 0, NULL, NULL, false},
    {"network.removeIntercept", HANDLE, P_INTERCEPT, "intercept", "intercept", false},
    {"network.setCacheBehavior", CONTEXTS, P_CONTEXTS, NULL, NULL, false},
    {"network.setExtraHeaders", SCOPED, P_SCOPED, NULL, NULL, false},
    {"permissions.setPermission", USER_CONTEXT, P_USER_CONTEXT, NULL, NULL, false},
    {"script.addPreloadScript", SCOPED, P_SCOPED, NULL, NULL, false},
    {"script.callFunction", TARGET, 0, NULL, NULL, false},
    {"script.disown", TARGET, 0, NULL, NULL, false},
    {"script.evaluate", TARGET, 0, NULL, NULL, false},
    {"script.getRealms", CONTEXT, P_CONTEXT, NULL, NULL, false},
    {"script.removePreloadScript", HANDLE, P_SCRIPT, "script", "script", false},
    {"session.end", NEVER, 0, NULL, NULL, false},
    {"session.new", NEVER, 0, NULL, NULL, false},
    {"session.status", NEVER, 0, NULL, NULL, false},
    {"session.subscribe", SCOPED, P_SCOPED, NULL, NULL, false},
    /* By attributes, an unsubscribe edits every subscription of the one
     * BiDi session, the bridge's browser-wide one included: only by the
     * ids the session's own subscribes got. */
    {"session.unsubscribe", UNSUBSCRIBE, P_SUBSCRIPTIONS, NULL, NULL, false},
    {"storage.deleteCookies", PARTITION, 0, NULL, NULL, false},
    {"storage.getCookies", PARTITION, 0, NULL, NULL, false},
    {"storage.setCookie", PARTITION, 0, NULL, NULL, false},
    {"webExtension.install", NEVER, 0, NULL, NULL, false},
    {"webExtension.uninstall", NEVER, 0, NULL, NULL, false},
};

int bidi_policy_rules(void)
{
    return (int)(sizeof rules / sizeof rules[0]);
}

static const struct bidi_rule *rule_of(const char *method)
{
    for (size_t i = 0; i < sizeof rules / sizeof rules[0]; i++)
        if (strcmp(rules[i].method, method) == 0)
            return &rules[i];
    return NULL;
}

static bool owns(const struct bidi_owner *o, const json_t *ctx)
{
    return json_is_string(ctx) && o->owns_context(o->ud, json_string_value(ctx));
}

static bool is_own_user_context(const struct bidi_owner *o, const json_t *uc)
{
    return json_is_string(uc) && o->user_context &&
           strcmp(json_string_value(uc), o->user_context) == 0;
}

/* list: absent, or a non-empty array whose every entry is the session's
 * (mine). *given says whether it was there. */
static bool all_mine(const struct bidi_owner *o, const json_t *list, bool *given,
                     bool (*mine)(const struct bidi_owner *, const json_t *))
{
    *given = list != NULL;
    if (!list)
        return true;
    if (!json_is_array(list) || json_array_size(list) == 0)
        return false;
    size_t i;
    const json_t *c;
    json_array_foreach(list, i, c) if (!mine(o, c)) return false;
    return true;
}

/* contexts or userContexts, at least one, all the session's. */
static const char *scoped(const struct bidi_owner *o, const json_t *params)
{
    bool by_ctx, by_user;
    if (!all_mine(o, json_object_get(params, "contexts"), &by_ctx, owns))
        return "tabvisor: not this session's browsing context";
    if (!all_mine(o, json_object_get(params, "userContexts"), &by_user, is_own_user_context))
        return "tabvisor: not this session's user context";
    if (!by_ctx && !by_user)
        return "tabvisor: a command for every context must name the session's contexts";
    return NULL;
}

static const char *partition(const struct bidi_owner *o, const json_t *params)
{
    const json_t *p = json_object_get(params, "partition");
    const char *type = json_string_value(json_object_get(p, "type"));
    if (type && strcmp(type, "storageKey") == 0) {
        if (json_object_get(p, "context"))
            return "tabvisor: a storageKey partition names no context";
        if (!is_own_user_context(o, json_object_get(p, "userContext")))
            return "tabvisor: not this session's cookie partition (name its user context)";
        return NULL;
    }
    if (type && strcmp(type, "context") == 0) {
        if (json_object_get(p, "userContext"))
            return "tabvisor: a context partition names no user context";
        if (!owns(o, json_object_get(p, "context")))
            return "tabvisor: not this session's browsing context";
        return NULL;
    }
    return "tabvisor: name the session's cookie partition (storageKey with its user context)";
}

static const char *handle(const struct bidi_owner *o, const struct bidi_rule *r,
                          const json_t *params)
{
    const char *id = json_string_value(json_object_get(params, r->key));
    if (!id || !o->owns_handle || !o->owns_handle(o->ud, r->kind, id))
        return "tabvisor: not this session's";
    return NULL;
}

/* A scoping parameter the rule does not list (P_*): one the browser ignores
 * today could make the command global, or be honoured by the next Firefox. */
static const char *stray_key(const struct bidi_rule *r, const json_t *params)
{
    for (size_t i = 0; i < sizeof scoped_keys / sizeof scoped_keys[0]; i++)
        if (json_object_get(params, scoped_keys[i]) && !(r->params & (1u << i)))
            return "tabvisor: a parameter naming contexts or handles that this command does not "
                   "take";
    return NULL;
}

const char *bidi_policy_check(const json_t *msg, const struct bidi_owner *o)
{
    const char *method = json_string_value(json_object_get(msg, "method"));
    if (!method)
        return "tabvisor: a command needs a method";
    const struct bidi_rule *r = rule_of(method);
    if (!r)
        return "tabvisor: not a command tabvisor passes to Firefox";
    const json_t *params = json_object_get(msg, "params");
    if (params && !json_is_object(params))
        return "tabvisor: params must be an object";
    const char *why = r->scope == NEVER ? NULL : stray_key(r, params);
    if (why)
        return why;
    switch (r->scope) {
    case NEVER:
        return strcmp(method, "input.setFiles") == 0
                   ? "tabvisor: hands the browser a local path (the supervisor's file upload does)"
                   : whole_browser;
    case CONTEXT:
        if (!owns(o, json_object_get(params, r->key ? r->key : "context")))
            return "tabvisor: not this session's browsing context";
        break;
    case TARGET: {
        const json_t *t = json_object_get(params, "target");
        if (json_object_get(t, "realm"))
            return "tabvisor: target a browsing context (and sandbox), not a realm";
        if (!owns(o, json_object_get(t, "context")))
            return "tabvisor: not this session's browsing context";
        break;
    }
    case CREATE: {
        if (!is_own_user_context(o, json_object_get(params, "userContext")))
            return "tabvisor: create in the session's user context";
        const json_t *ref = json_object_get(params, "referenceContext");
        if (ref && !owns(o, ref))
            return "tabvisor: not this session's browsing context";
        break;
    }
    case PARTITION:
        why = partition(o, params);
        break;
    case USER_CONTEXT:
        if (!is_own_user_context(o, json_object_get(params, "userContext")))
            return "tabvisor: not this session's user context";
        break;
    case SCOPED:
        why = scoped(o, params);
        break;
    case CONTEXTS: {
        bool given;
        if (!all_mine(o, json_object_get(params, "contexts"), &given, owns) || !given)
            return "tabvisor: name the session's browsing contexts";
        break;
    }
    case HANDLE:
        why = handle(o, r, params);
        break;
    case UNSUBSCRIBE: {
        const json_t *subs = json_object_get(params, "subscriptions");
        if (!json_is_array(subs) || json_array_size(subs) == 0 || json_object_size(params) != 1)
            return "tabvisor: unsubscribe by the ids of the session's own subscriptions "
                   "(subscriptions, alone)";
        size_t i;
        const json_t *s;
        json_array_foreach(subs, i, s)
        {
            if (!json_is_string(s) || !o->owns_handle ||
                !o->owns_handle(o->ud, "subscription", json_string_value(s)))
                return "tabvisor: not this session's subscription";
        }
        break;
    }
    }
    if (why)
        return why;
    if (r->url) {
        const json_t *url = json_object_get(params, "url");
        if (r->scope == CONTEXT && !url)
            return "tabvisor: navigate needs a url";
        if (url && (!json_is_string(url) ||
                    url_policy_check(json_string_value(url), json_string_length(url),
                                     URL_ALLOW_HTTP | URL_ALLOW_ABOUT_BLANK | URL_ALLOW_DATA)))
            return "tabvisor: the URL is not one a page of ours may load (http, https, "
                   "about:blank, data)";
    }
    return NULL;
}
