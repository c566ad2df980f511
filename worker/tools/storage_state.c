/*
 * storage_state.c - browser_storage_state / browser_set_storage_state and
 * the storageState of browser_session_create: the session's cookies and
 * localStorage in Playwright's storageState JSON
 *   {"cookies": [{name, value, domain, path, expires (-1: session),
 *                 httpOnly, secure, sameSite}],
 *    "origins": [{"origin": "https://...", "localStorage": [{name, value}]}]}
 * in a file under the output dir.
 *
 * Cookies come from the page session's Network.* commands (cookies.c).
 * localStorage is read and written per origin by a hidden page of the
 * session's context (struct helper below). The browser has no list of
 * origins with storage that a session may ask for, so the worker remembers
 * the origins its frames have shown (and those it loaded) and saves theirs.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "worker.h"

#define HELPER_COMMIT_MS 10000 /* longest wait for the hidden page's document */

#define STATE_MAX_BYTES (16u * 1024 * 1024)
#define MAX_ORIGINS 256

static void remember_origin(struct session *w, const char *origin)
{
    if (!origin || (strncmp(origin, "http://", 7) != 0 && strncmp(origin, "https://", 8) != 0))
        return;
    if (!w->storage_origins)
        w->storage_origins = json_object();
    if (json_object_size(w->storage_origins) < MAX_ORIGINS)
        json_object_set_new(w->storage_origins, origin, json_true());
}

void storage_state_on_event(struct session *w, const char *session, const char *method, json_t *params)
{
    (void)session;
    if (strcmp(method, "Page.frameNavigated") == 0)
        remember_origin(w, json_string_value(json_object_get(json_object_get(params, "frame"),
                                                             "securityOrigin")));
}

/* A hidden page of the session's context that visits origins to read or
 * write their localStorage. Chromium gives DevTools an origin's storage only
 * through a frame of that origin (DOMStorage.* says "Frame not found"
 * otherwise), so, as Playwright does, the page navigates to each origin
 * while every request it makes is answered here with an empty document:
 * no request leaves the browser. */
struct helper {
    char target[64];
};

static void helper_close(struct session *w, struct helper *h)
{
    if (!h->target[0])
        return;
    /* Closed even after a failure (the call's own deadline may be gone),
     * leaving the call's outcome as it was. Should the close fail, the
     * bridge disposes of the page with the context. */
    struct subcall sub;
    subcall_begin(w, &sub, 2000, SUBCALL_OWN);
    browser_call(w, "Target.closeTarget", json_pack("{s:s}", "targetId", h->target), NULL);
    subcall_end(w, &sub);
    w->storage_helper[0] = 0;
    h->target[0] = 0;
}

static int helper_open(struct session *w, struct helper *h)
{
    json_t *r = NULL;
    if (browser_call(w, "Target.createTarget",
                     json_pack("{s:s, s:s, s:b}", "url", "about:blank", "browserContextId",
                               w->context_id, "background", 1),
                     &r) < 0)
        return -1;
    snprintf(h->target, sizeof h->target, "%s",
             json_string_value(json_object_get(r, "targetId")) ?: "");
    json_decref(r);
    r = NULL;
    if (browser_call(w, "Target.attachToTarget",
                     json_pack("{s:s, s:b}", "targetId", h->target, "flatten", 1), &r) < 0) {
        helper_close(w, h);
        return -1;
    }
    snprintf(w->storage_helper, sizeof w->storage_helper, "%s",
             json_string_value(json_object_get(r, "sessionId")) ?: "");
    json_decref(r);
    if (session_call(w, w->storage_helper, "Fetch.enable",
                     json_pack("{s:[{s:s}]}", "patterns", "urlPattern", "*"), NULL) < 0) {
        helper_close(w, h);
        return -1;
    }
    return 0;
}

static json_t *helper_eval(struct session *w, const char *expr);

/* The hidden page shows origin's document: Chromium answers Page.navigate
 * once the document commits, Firefox (BiDi) as the navigation starts, so
 * the page is asked until it says so. 0, or -1 with w->call.err set. */
static int helper_at(struct session *w, const char *origin)
{
    json_t *js = json_string(origin);
    char *q = js ? json_dumps(js, JSON_ENCODE_ANY) : NULL;
    json_decref(js);
    if (!q)
        return fail_call(w, TV_BROWSER_ERROR, NULL, "cannot encode origin %.200s", origin);
    char expr[700];
    snprintf(expr, sizeof expr, "location.origin === %.600s", q);
    free(q);
    long long end = mono_ms() + HELPER_COMMIT_MS;
    for (;;) {
        json_t *v = helper_eval(w, expr);
        bool there = json_is_true(v);
        json_decref(v);
        if (there)
            return 0;
        /* A question to the document the navigation replaces may fail. */
        if (w->call.err == TV_TIMEOUT || w->call.err == TV_CANCELLED || w->call.err == TV_BROWSER_CRASHED)
            return -1;
        w->call.err = TV_OK;
        w->call.errmsg[0] = w->call.errhint[0] = 0;
        if (mono_ms() > end)
            return fail_call(w, TV_TIMEOUT, NULL, "the storage page did not open origin %.200s",
                             origin);
    }
}

/* Point the hidden page at origin; 0, or -1 with w->call.err set. */
static int helper_visit(struct session *w, const char *origin)
{
    char url[600];
    snprintf(url, sizeof url, "%s/", origin);
    json_t *r = NULL;
    if (session_call(w, w->storage_helper, "Page.navigate", json_pack("{s:s}", "url", url), &r) < 0)
        return -1;
    const char *e = json_string_value(json_object_get(r, "errorText"));
    int rc =
        e ? fail_call(w, TV_BROWSER_ERROR, NULL, "cannot open origin %.200s: %s", origin, e) : 0;
    json_decref(r);
    return rc < 0 ? rc : helper_at(w, origin);
}

/* Evaluate expr in the hidden page; its JSON value (new reference) or NULL. */
static json_t *helper_eval(struct session *w, const char *expr)
{
    json_t *r = NULL;
    if (session_call(w, w->storage_helper, "Runtime.evaluate",
                     json_pack("{s:s, s:b}", "expression", expr, "returnByValue", 1), &r) < 0)
        return NULL;
    json_t *ex = json_object_get(r, "exceptionDetails");
    if (ex) {
        fail_call(w, TV_BROWSER_ERROR, NULL, "localStorage: %.300s",
                  exception_text(ex) ?: "exception");
        json_decref(r);
        return NULL;
    }
    json_t *v = json_incref(json_object_get(json_object_get(r, "result"), "value"));
    json_decref(r);
    return v ? v : json_null();
}

void storage_helper_on_event(struct session *w, const char *session, const char *method,
                             json_t *params)
{
    if (!w->storage_helper[0] || !session || strcmp(session, w->storage_helper) != 0 ||
        strcmp(method, "Fetch.requestPaused") != 0)
        return;
    const char *id = json_string_value(json_object_get(params, "requestId"));
    if (!id)
        return;
    /* "<html></html>" in base64, as a 200 text/html answer. */
    json_t *p = json_pack("{s:s, s:i, s:[{s:s, s:s}], s:s}", "requestId", id, "responseCode", 200,
                          "responseHeaders", "name", "Content-Type", "value", "text/html", "body",
                          "PGh0bWw+PC9odG1sPg==");
    cdp_send(w->cdp, session, "Fetch.fulfillRequest", p);
    json_decref(p);
}

/* {"origin", "localStorage": [{name, value}]} of one origin, or NULL when
 * it has none. *failed is set when the call must end (w->call.err). */
static json_t *origin_state(struct session *w, const char *origin, bool *failed)
{
    json_t *v = NULL;
    if (helper_visit(w, origin) < 0 ||
        !(v = helper_eval(w, "Object.entries(localStorage).map(([name, value]) => ({name, "
                             "value}))"))) {
        *failed = true;
        return NULL;
    }
    if (!json_array_size(v)) {
        json_decref(v);
        return NULL;
    }
    return json_pack("{s:s, s:o}", "origin", origin, "localStorage", v);
}

/* Replace the localStorage of origin with items ([{name, value}], NULL to
 * clear only). 0, or -1 with w->call.err set. */
static int origin_load(struct session *w, const char *origin, json_t *items)
{
    if (helper_visit(w, origin) < 0)
        return -1;
    char *ij = json_dumps(items ? items : json_array(), JSON_COMPACT);
    if (!ij)
        return fail_call(w, TV_BROWSER_ERROR, NULL, "cannot encode localStorage items");
    struct sb src = {0};
    sb_printf(&src,
              "(() => { localStorage.clear(); for (const it of %s) if (typeof it.name === "
              "'string' && typeof it.value === 'string') localStorage.setItem(it.name, it.value); "
              "return localStorage.length; })()",
              ij);
    free(ij);
    json_t *v = helper_eval(w, src.p);
    free(src.p);
    if (!v)
        return -1;
    json_decref(v);
    return 0;
}

json_t *tool_storage_state(struct session *w, json_t *args)
{
    json_t *cookies = session_cookies(w);
    if (!cookies)
        return tool_fail(w);
    page_refresh_info(w);
    json_t *origins = json_array();
    struct helper h = {0};
    bool failed = json_object_size(w->storage_origins) && helper_open(w, &h) < 0;
    const char *origin;
    json_t *v;
    json_object_foreach(w->storage_origins, origin, v)
    {
        json_t *o = failed ? NULL : origin_state(w, origin, &failed);
        if (o)
            json_array_append_new(origins, o);
    }
    helper_close(w, &h);
    if (failed) {
        json_decref(cookies);
        json_decref(origins);
        return tool_fail(w);
    }
    size_t ncookies = json_array_size(cookies), norigins = json_array_size(origins);
    json_t *state = json_pack("{s:o, s:o}", "cookies", cookies, "origins", origins);
    char *data = json_dumps(state, JSON_INDENT(2));
    json_decref(state);
    char name[64];
    const char *rel = arg_str(args, "filename", NULL);
    if (!rel) {
        snprintf(name, sizeof name, "storage-state-%lld.json", (long long)time(NULL));
        rel = name;
    }
    char path[PATH_MAX + 64];
    int rc = data ? output_write(w, rel, data, strlen(data), path, sizeof path)
                  : fail_call(w, TV_BROWSER_ERROR, NULL, "cannot encode the storage state");
    free(data);
    if (rc < 0)
        return tool_fail(w);
    char line[PATH_MAX + 200];
    snprintf(line, sizeof line,
             "Saved the storage state (%zu cookies, localStorage of %zu origins) to %s", ncookies,
             norigins, path);
    return tool_ok(w, line,
                   json_pack("{s:s, s:I, s:I}", "file", path, "cookies", (json_int_t)ncookies,
                             "origins", (json_int_t)norigins));
}

/* A cookie of the file as Network.setCookies takes it, or NULL when it is
 * not a cookie (then *why says what is missing). */
static json_t *cookie_param(json_t *c, const char **why)
{
    const char *name = json_string_value(json_object_get(c, "name"));
    const char *value = json_string_value(json_object_get(c, "value"));
    const char *domain = json_string_value(json_object_get(c, "domain"));
    if (!name || !value || !domain) {
        *why = "a cookie needs string name, value and domain";
        return NULL;
    }
    json_t *p = json_pack("{s:s, s:s, s:s, s:s}", "name", name, "value", value, "domain", domain,
                          "path", json_string_value(json_object_get(c, "path")) ?: "/");
    json_t *exp = json_object_get(c, "expires");
    if (json_is_number(exp) && json_number_value(exp) > 0)
        json_object_set(p, "expires", exp);
    static const char *const flags[] = {"httpOnly", "secure"};
    for (size_t i = 0; i < 2; i++)
        if (json_is_boolean(json_object_get(c, flags[i])))
            json_object_set(p, flags[i], json_object_get(c, flags[i]));
    const char *ss = json_string_value(json_object_get(c, "sameSite"));
    if (ss && (!strcmp(ss, "Strict") || !strcmp(ss, "Lax") || !strcmp(ss, "None")))
        json_object_set_new(p, "sameSite", json_string(ss));
    return p;
}

/* Check the file's shape before anything is cleared. Returns the cookies
 * in setCookies form (new reference) or NULL with w->call.err set. */
static json_t *check_state(struct session *w, json_t *state, const char *name)
{
    json_t *cookies = json_object_get(state, "cookies");
    json_t *origins = json_object_get(state, "origins");
    const char *hint = "Use a file saved by browser_storage_state (Playwright's storageState "
                       "format: {cookies: [...], origins: [...]}).";
    if (!json_is_object(state) || (cookies && !json_is_array(cookies)) ||
        (origins && !json_is_array(origins))) {
        fail_call(w, TV_INVALID_PARAMETERS, hint,
                  "'%.200s' is not a storage state: cookies and origins must be arrays", name);
        return NULL;
    }
    json_t *out = json_array();
    size_t i;
    json_t *c;
    json_array_foreach(cookies, i, c)
    {
        const char *why = NULL;
        json_t *p = cookie_param(c, &why);
        if (!p) {
            json_decref(out);
            fail_call(w, TV_INVALID_PARAMETERS, hint, "'%.200s': cookies[%zu]: %s", name, i, why);
            return NULL;
        }
        json_array_append_new(out, p);
    }
    json_array_foreach(origins, i, c)
    {
        if (!json_is_string(json_object_get(c, "origin")) ||
            !json_is_array(json_object_get(c, "localStorage"))) {
            json_decref(out);
            fail_call(w, TV_INVALID_PARAMETERS, hint,
                      "'%.200s': origins[%zu] needs origin and a localStorage array", name, i);
            return NULL;
        }
    }
    return out;
}

int storage_state_load(struct session *w, const char *name, size_t *ncookies, size_t *norigins)
{
    char *data = NULL;
    size_t len = 0;
    if (output_read(w, name, STATE_MAX_BYTES, &data, &len, NULL, 0) < 0)
        return -1;
    json_error_t jerr;
    json_t *state = json_loadb(data, len, 0, &jerr);
    free(data);
    if (!state)
        return fail_call(w, TV_INVALID_PARAMETERS, NULL, "'%.200s' is not JSON: %.200s (line %d)",
                         name, jerr.text, jerr.line);
    int rc = storage_state_apply(w, state, name, ncookies, norigins);
    json_decref(state);
    return rc;
}

int storage_state_apply(struct session *w, json_t *state, const char *name, size_t *ncookies,
                        size_t *norigins)
{
    json_t *cookies = check_state(w, state, name);
    if (!cookies)
        return -1;
    /* Replace, as Playwright's does: what the session had goes first. */
    int rc = page_call(w, "Network.clearBrowserCookies", NULL, NULL);
    /* One by one (BiDi's storage.setCookie sets one): a cookie the browser
     * refuses fails the call, naming it. */
    size_t i;
    json_t *c;
    json_array_foreach(cookies, i, c)
    {
        json_t *r = NULL;
        if (rc == 0 && (rc = page_call(w, "Network.setCookie", json_copy(c), &r)) == 0 &&
            json_is_false(json_object_get(r, "success")))
            rc = fail_call(w, TV_INVALID_PARAMETERS, NULL,
                           "'%.200s': the browser refused cookies[%zu] ('%.100s')", name, i,
                           json_string_value(json_object_get(c, "name")) ?: "");
        json_decref(r);
    }
    /* Every origin known before and every origin of the file: the file's get
     * its items, the others are cleared. */
    json_t *todo = json_object();
    const char *origin;
    json_t *v;
    json_object_foreach(w->storage_origins, origin, v)
    {
        json_object_set_new(todo, origin, json_null());
    }
    json_t *o;
    json_array_foreach(json_object_get(state, "origins"), i, o)
    {
        const char *org = json_string_value(json_object_get(o, "origin"));
        if (strncmp(org, "http://", 7) == 0 || strncmp(org, "https://", 8) == 0)
            json_object_set(todo, org, json_object_get(o, "localStorage"));
    }
    struct helper h = {0};
    if (rc == 0 && json_object_size(todo))
        rc = helper_open(w, &h);
    json_object_foreach(todo, origin, v)
    {
        if (rc == 0)
            rc = origin_load(w, origin, json_is_array(v) ? v : NULL);
        remember_origin(w, origin);
    }
    helper_close(w, &h);
    json_decref(todo);
    *ncookies = json_array_size(cookies);
    *norigins = json_array_size(json_object_get(state, "origins"));
    json_decref(cookies);
    return rc;
}

json_t *tool_set_storage_state(struct session *w, json_t *args)
{
    const char *name = arg_str(args, "filename", "");
    size_t nc = 0, no = 0;
    if (storage_state_load(w, name, &nc, &no) < 0)
        return tool_fail(w);
    char line[400];
    snprintf(line, sizeof line,
             "Restored the storage state from %.200s (%zu cookies, localStorage of %zu origins)",
             name, nc, no);
    return tool_ok(w, line,
                   json_pack("{s:I, s:I}", "cookies", (json_int_t)nc, "origins", (json_int_t)no));
}
