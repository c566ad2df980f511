/*
 * routes.c - the network group: browser_route / browser_unroute /
 * browser_route_list (mock or abort requests by URL glob),
 * browser_network_state_set (offline) and browser_set_extra_http_headers.
 *
 * Routes and extra headers ride on the Fetch interception the network
 * policy already runs on every CDP session of the page (netpolicy.c): while
 * any is set, every request pauses, the policy is checked first (a blocked
 * origin stays blocked, routed or not), then routes_answer() fulfils,
 * fails or rewrites it; with none set, interception shrinks back to what
 * the policy needs. Everything here is this worker's, so this session's:
 * no other session's requests ever reach it.
 *
 * Extra headers: Playwright has setExtraHTTPHeaders on pages and contexts
 * but @playwright/mcp no tool for it, so the tool takes the library's name
 * (browser_set_extra_http_headers), with an optional origin (an entry as
 * --allowed-origins takes) so a token for one API is not sent to every site
 * the page loads from. They are added at interception rather than with
 * Network.setExtraHTTPHeaders, which knows no origins and would have to be
 * repeated on every out-of-process frame and worker.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base64.h"
#include "netpolicy.h"
#include "origins.h"
#include "urlglob.h"
#include "tabs.h"
#include "worker.h"

#define MAX_ROUTES 64
#define MAX_HEADER_SETS 32
#define MAX_CHILD_SESSIONS 64

static struct {
    json_t *routes;  /* newest first: {pattern, status, body, contentType, headers[],
                      * removeHeaders[], abort, hits} */
    json_t *headers; /* [{origin ("" = every request), rule, headers {name: value}}] */
    bool offline;
    /* CDP sessions auto-attached below the page (OOPIFs, workers): Fetch and
     * offline must be set on each. */
    char child[MAX_CHILD_SESSIONS][64];
    int nchild;
} R;

bool routes_active(void)
{
    return json_array_size(R.routes) || json_array_size(R.headers);
}

/* Offline emulation for one session (NULL: the page's). No wait. */
static void send_offline(struct session *w, const char *session)
{
    json_t *p = json_pack("{s:b, s:i, s:i, s:i}", "offline", R.offline, "latency", 0,
                          "downloadThroughput", -1, "uploadThroughput", -1);
    cdp_send(w->cdp, session ? session : w->page->cdp_session, "Network.emulateNetworkConditions", p);
    json_decref(p);
}

/* Interception on one session after the routes changed. */
static void refresh_fetch(struct session *w, const char *session)
{
    if (netpolicy_active() || routes_active()) {
        netpolicy_attach(w, session);
    } else {
        cdp_send(w->cdp, session ? session : w->page->cdp_session, "Fetch.disable", NULL);
    }
}

static void refresh_tab(struct session *w, const char *sid, void *ud)
{
    (void)ud;
    refresh_fetch(w, sid);
}

/* Every tab's page and every child session (OOPIFs, workers) of any tab. */
static void refresh_all(struct session *w)
{
    tabs_each_session(w, refresh_tab, NULL);
    for (int i = 0; i < R.nchild; i++)
        refresh_fetch(w, R.child[i]);
}

/* The background tabs' pages; the current one is answered by page_call. */
static void background_offline(struct session *w, const char *sid, void *ud)
{
    (void)ud;
    if (strcmp(sid, w->page->cdp_session) != 0)
        send_offline(w, sid);
}

void routes_page_setup(struct session *w, const char *sid, enum attach_kind kind)
{
    if (R.offline && kind == ATTACH_PAGE)
        send_offline(w, sid);
}

void routes_on_event(struct session *w, const char *session, const char *method, json_t *params)
{
    /* Only targets attached below our own sessions (the browser-level
     * attach of a hidden storage page has no parent session). */
    if (strcmp(method, "Target.attachedToTarget") == 0 && session && *session) {
        const char *sid = json_string_value(json_object_get(params, "sessionId"));
        if (!sid || R.nchild == MAX_CHILD_SESSIONS)
            return;
        snprintf(R.child[R.nchild++], sizeof R.child[0], "%s", sid);
        if (R.offline)
            send_offline(w, sid);
    } else if (strcmp(method, "Target.detachedFromTarget") == 0) {
        const char *sid = json_string_value(json_object_get(params, "sessionId"));
        for (int i = 0; sid && i < R.nchild; i++) {
            if (strcmp(R.child[i], sid) == 0) {
                memmove(R.child[i], R.child[i + 1], (size_t)(R.nchild - i - 1) * sizeof R.child[0]);
                R.nchild--;
                break;
            }
        }
    }
}

/* name: value pairs of obj (a request's headers) without those named in
 * remove (array of names, any case) and with extra's (objects {name:
 * value}, later ones win), as Fetch.continueRequest takes them. */
static json_t *merge_headers(json_t *obj, json_t *remove, json_t *const *extra, int nextra)
{
    json_t *out = json_array();
    const char *k;
    json_t *v;
    json_object_foreach(obj, k, v)
    {
        bool drop = false;
        size_t i;
        json_t *r;
        json_array_foreach(remove, i, r)
        {
            drop |= strcasecmp(json_string_value(r) ?: "", k) == 0;
        }
        for (int e = 0; e < nextra && !drop; e++) {
            const char *ek;
            json_t *ev;
            json_object_foreach(extra[e], ek, ev)
            {
                drop |= strcasecmp(ek, k) == 0;
            }
        }
        if (!drop && json_is_string(v))
            json_array_append_new(out, json_pack("{s:s, s:O}", "name", k, "value", v));
    }
    for (int e = 0; e < nextra; e++) {
        json_object_foreach(extra[e], k, v)
        {
            json_array_append_new(out, json_pack("{s:s, s:O}", "name", k, "value", v));
        }
    }
    return out;
}

/* The extra header sets that apply to url (at most MAX_HEADER_SETS). */
static int extra_for(const char *url, json_t **sets)
{
    struct url_origin o;
    bool parsed = url && url_origin_parse(url, &o) == 0;
    int n = 0;
    size_t i;
    json_t *h;
    json_array_foreach(R.headers, i, h)
    {
        const char *origin = json_string_value(json_object_get(h, "origin"));
        struct origin_rule rule;
        bool match =
            !origin || !*origin ||
            (parsed && origin_rule_parse(origin, &rule) == 0 && origin_rule_matches(&rule, &o));
        if (match && n < MAX_HEADER_SETS)
            sets[n++] = json_object_get(h, "headers");
    }
    return n;
}

static char *b64(const char *s, size_t n)
{
    char *out = base64_encode(s, n);
    return out ? out : strdup("");
}

bool routes_answer(struct session *w, const char *session, const char *id, json_t *params)
{
    if (!routes_active())
        return false;
    json_t *req = json_object_get(params, "request");
    const char *url = json_string_value(json_object_get(req, "url"));
    json_t *route = NULL;
    size_t i;
    json_t *r;
    json_array_foreach(R.routes, i, r)
    {
        if (url_glob_match(json_string_value(json_object_get(r, "pattern")), url)) {
            route = r;
            break;
        }
    }
    json_t *p = NULL;
    const char *method = "Fetch.continueRequest";
    bool fulfil = route && json_is_true(json_object_get(route, "fulfil"));
    if (route) {
        json_object_set_new(route, "hits",
                            json_integer(json_integer_value(json_object_get(route, "hits")) + 1));
    }
    if (route && json_is_true(json_object_get(route, "abort"))) {
        method = "Fetch.failRequest";
        p = json_pack("{s:s, s:s}", "requestId", id, "errorReason", "Failed");
    } else if (fulfil) {
        method = "Fetch.fulfillRequest";
        json_t *hdrs = json_array();
        json_array_extend(hdrs, json_object_get(route, "headers"));
        const char *ct = json_string_value(json_object_get(route, "contentType"));
        if (ct)
            json_array_append_new(hdrs,
                                  json_pack("{s:s, s:s}", "name", "Content-Type", "value", ct));
        const char *body = json_string_value(json_object_get(route, "body")) ?: "";
        char *enc = b64(body, json_string_length(json_object_get(route, "body")));
        p = json_pack("{s:s, s:I, s:o, s:s}", "requestId", id, "responseCode",
                      json_integer_value(json_object_get(route, "status")), "responseHeaders", hdrs,
                      "body", enc);
        free(enc);
    } else {
        json_t *sets[MAX_HEADER_SETS];
        int n = extra_for(url, sets);
        json_t *remove = route ? json_object_get(route, "removeHeaders") : NULL;
        if (!n && !json_array_size(remove))
            return false; /* continue untouched, as without routes */
        p = json_pack("{s:s, s:o}", "requestId", id, "headers",
                      merge_headers(json_object_get(req, "headers"), remove, sets, n));
    }
    cdp_send(w->cdp, session, method, p);
    json_decref(p);
    return true;
}

/* "Name: Value" strings into [{name, value}]; NULL with w->call.err set. */
static json_t *parse_header_lines(struct session *w, json_t *lines)
{
    json_t *out = json_array();
    size_t i;
    json_t *l;
    json_array_foreach(lines, i, l)
    {
        const char *s = json_string_value(l) ?: "";
        const char *colon = strchr(s, ':');
        /* Chromium refuses a fulfil with a bad header, and the request
         * would then stay paused: check here. */
        if (!colon || colon == s || strcspn(s, " \t\r\n") < (size_t)(colon - s) ||
            strpbrk(colon, "\r\n")) {
            json_decref(out);
            fail_call(w, TV_INVALID_PARAMETERS, "Write each header as \"Name: Value\".",
                      "headers[%zu] (\"%.100s\") is not \"Name: Value\"", i, s);
            return NULL;
        }
        const char *v = colon + 1;
        while (*v == ' ')
            v++;
        json_array_append_new(out,
                              json_pack("{s:s%, s:s}", "name", s, (size_t)(colon - s), "value", v));
    }
    return out;
}

json_t *tool_route(struct session *w, json_t *args)
{
    const char *pattern = arg_str(args, "pattern", "");
    bool abort_ = arg_bool(args, "abort", false);
    json_t *body = json_object_get(args, "body");
    const char *ct = arg_str(args, "contentType", NULL);
    json_t *lines = json_object_get(args, "headers");
    const char *remove = arg_str(args, "removeHeaders", NULL);
    if (ct && strpbrk(ct, "\r\n"))
        return fail_call(w, TV_INVALID_PARAMETERS, NULL, "contentType must be one line"),
               tool_fail(w);
    bool fulfil = !abort_ && (body || ct || lines || json_object_get(args, "status") || !remove);
    if (abort_ && (body || ct || lines || remove || json_object_get(args, "status")))
        return fail_call(w, TV_INVALID_PARAMETERS, NULL,
                         "abort fails the request; it takes no status, body, contentType or "
                         "headers"),
               tool_fail(w);
    json_t *hdrs = parse_header_lines(w, lines);
    if (!hdrs)
        return tool_fail(w);
    json_t *rm = json_array();
    for (const char *p = remove; p && *p;) {
        while (*p == ' ' || *p == ',')
            p++;
        size_t n = strcspn(p, ",");
        size_t m = n;
        while (m && p[m - 1] == ' ')
            m--;
        if (m)
            json_array_append_new(rm, json_stringn(p, m));
        p += n;
    }
    json_t *route = json_pack("{s:s, s:I, s:O?, s:s?, s:o, s:o, s:b, s:b, s:i}", "pattern", pattern,
                              "status", (json_int_t)arg_int(args, "status", 200), "body", body,
                              "contentType", ct, "headers", hdrs, "removeHeaders", rm, "abort",
                              abort_, "fulfil", fulfil, "hits", 0);
    if (!R.routes)
        R.routes = json_array();
    /* The same pattern again replaces the route; the newest wins a match. */
    bool replaced = false;
    size_t i;
    json_t *r;
    json_array_foreach(R.routes, i, r)
    {
        if (strcmp(json_string_value(json_object_get(r, "pattern")), pattern) == 0) {
            json_array_remove(R.routes, i);
            replaced = true;
            break;
        }
    }
    if (json_array_size(R.routes) >= MAX_ROUTES) {
        json_decref(route);
        return fail_call(w, TV_INVALID_PARAMETERS, "Remove some with browser_unroute.",
                         "this session has the maximum of %d routes", MAX_ROUTES),
               tool_fail(w);
    }
    json_array_insert_new(R.routes, 0, route);
    refresh_all(w);
    char line[4300];
    if (abort_)
        snprintf(line, sizeof line, "Route %s: requests to %s fail",
                 replaced ? "replaced" : "added", pattern);
    else if (fulfil)
        snprintf(line, sizeof line, "Route %s: requests to %s get a %lld %s response (%zu bytes)",
                 replaced ? "replaced" : "added", pattern, arg_int(args, "status", 200),
                 ct ? ct : "", json_string_length(body));
    else
        snprintf(line, sizeof line, "Route %s: requests to %s go out without %s",
                 replaced ? "replaced" : "added", pattern, remove);
    return tool_ok(w, line,
                   json_pack("{s:s, s:I}", "pattern", pattern, "routes",
                             (json_int_t)json_array_size(R.routes)));
}

/* {pattern, status, contentType, abort, hits} of every route. */
static json_t *route_summaries(struct sb *b)
{
    json_t *list = json_array();
    size_t i;
    json_t *r;
    json_array_foreach(R.routes, i, r)
    {
        const char *pattern = json_string_value(json_object_get(r, "pattern"));
        bool abort_ = json_is_true(json_object_get(r, "abort"));
        bool fulfil = json_is_true(json_object_get(r, "fulfil"));
        json_int_t status = json_integer_value(json_object_get(r, "status"));
        json_int_t hits = json_integer_value(json_object_get(r, "hits"));
        const char *ct = json_string_value(json_object_get(r, "contentType"));
        json_t *o = json_pack("{s:s, s:b, s:I}", "pattern", pattern, "abort", abort_, "hits", hits);
        if (fulfil) {
            json_object_set_new(o, "status", json_integer(status));
            if (ct)
                json_object_set_new(o, "contentType", json_string(ct));
        }
        json_array_append_new(list, o);
        if (b) {
            if (abort_)
                sb_printf(b, "- %s: abort", pattern);
            else if (fulfil)
                sb_printf(b, "- %s: %lld %s", pattern, (long long)status, ct ? ct : "");
            else
                sb_printf(b, "- %s: continue, headers removed", pattern);
            sb_printf(b, " (%lld hits)\n", (long long)hits);
        }
    }
    return list;
}

json_t *tool_route_list(struct session *w, json_t *args)
{
    (void)args;
    struct sb b = {0};
    json_t *list = route_summaries(&b);
    if (!b.p)
        sb_printf(&b, "No routes");
    json_t *res = tool_ok(w, b.p, json_pack("{s:o}", "routes", list));
    free(b.p);
    return res;
}

json_t *tool_unroute(struct session *w, json_t *args)
{
    const char *pattern = arg_str(args, "pattern", NULL);
    size_t removed = 0;
    if (!pattern) {
        removed = json_array_size(R.routes);
        json_array_clear(R.routes);
    } else {
        for (size_t i = 0; i < json_array_size(R.routes); i++) {
            json_t *r = json_array_get(R.routes, i);
            if (strcmp(json_string_value(json_object_get(r, "pattern")), pattern) == 0) {
                json_array_remove(R.routes, i);
                removed++;
                break;
            }
        }
        if (!removed) {
            struct sb b = {0};
            json_decref(route_summaries(&b));
            fail_call(
                w, TV_INVALID_PARAMETERS, "Use a pattern exactly as browser_route_list shows it.",
                "no route with pattern '%.300s'; routes: %.600s", pattern, b.p ? b.p : "(none)");
            free(b.p);
            return tool_fail(w);
        }
    }
    refresh_all(w);
    char line[400];
    snprintf(line, sizeof line, "Removed %zu route%s", removed, removed == 1 ? "" : "s");
    return tool_ok(w, line,
                   json_pack("{s:I, s:I}", "removed", (json_int_t)removed, "routes",
                             (json_int_t)json_array_size(R.routes)));
}

json_t *tool_network_state_set(struct session *w, json_t *args)
{
    bool offline = strcmp(arg_str(args, "state", "online"), "offline") == 0;
    R.offline = offline;
    for (int i = 0; i < R.nchild; i++)
        send_offline(w, R.child[i]);
    tabs_each_session(w, background_offline, NULL);
    json_t *p = json_pack("{s:b, s:i, s:i, s:i}", "offline", offline, "latency", 0,
                          "downloadThroughput", -1, "uploadThroughput", -1);
    if (page_call(w, "Network.emulateNetworkConditions", p, NULL) < 0)
        return tool_fail(w);
    return tool_ok(
        w, offline ? "The session is offline: every request fails" : "The session is online",
        json_pack("{s:s}", "state", offline ? "offline" : "online"));
}

json_t *tool_set_extra_http_headers(struct session *w, json_t *args)
{
    json_t *headers = json_object_get(args, "headers");
    const char *origin = arg_str(args, "origin", "");
    struct origin_rule rule;
    if (*origin && origin_rule_parse(origin, &rule) < 0)
        return fail_call(w, TV_INVALID_PARAMETERS,
                         "Give an origin (https://api.example.com) or a host (example.com, "
                         "*.example.com).",
                         "'%.200s' is not an origin", origin),
               tool_fail(w);
    const char *k;
    json_t *v;
    json_object_foreach(headers, k, v)
    {
        if (!json_is_string(v) || !*k || strpbrk(k, ": \t\r\n") ||
            strpbrk(json_string_value(v), "\r\n"))
            return fail_call(w, TV_INVALID_PARAMETERS, NULL,
                             "header '%.100s' needs a name without ':' or spaces and a string "
                             "value on one line",
                             k),
                   tool_fail(w);
    }
    if (!R.headers)
        R.headers = json_array();
    for (size_t i = 0; i < json_array_size(R.headers); i++) {
        if (strcmp(json_string_value(json_object_get(json_array_get(R.headers, i), "origin")),
                   origin) == 0) {
            json_array_remove(R.headers, i);
            break;
        }
    }
    size_t n = json_object_size(headers);
    if (n) {
        if (json_array_size(R.headers) >= MAX_HEADER_SETS)
            return fail_call(w, TV_INVALID_PARAMETERS, NULL, "at most %d origins with headers",
                             MAX_HEADER_SETS),
                   tool_fail(w);
        json_array_append_new(R.headers,
                              json_pack("{s:s, s:O}", "origin", origin, "headers", headers));
    }
    refresh_all(w);
    char line[400];
    const char *to = *origin ? "to " : "", *what = *origin ? origin : "of this session";
    if (n)
        snprintf(line, sizeof line, "Requests %s%.200s now carry %zu extra header%s", to, what, n,
                 n == 1 ? "" : "s");
    else
        snprintf(line, sizeof line, "Requests %s%.200s carry no extra headers", to, what);
    return tool_ok(
        w, line,
        json_pack("{s:s, s:I}", "origin", *origin ? origin : "*", "headers", (json_int_t)n));
}

void routes_free(void)
{
    json_decref(R.routes);
    json_decref(R.headers);
    R.routes = R.headers = NULL;
}
