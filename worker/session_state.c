/*
 * session_state.c - what a session needs to come back as it was after its
 * worker, its browser or a page's renderer dies (docs/sessions.md, "After a
 * crash"), short of in-page state:
 *
 *   {"cookies":  [Playwright's form, tools/cookies.c],
 *    "origins":  [{"origin", "localStorage": [{name, value}]}],
 *    "tabs":     [{"url", "origin", "sessionStorage": [{name, value}]}],
 *    "current":  index of the current tab,
 *    "viewport": {"width", "height"},
 *    "media":    {browser_emulate_media argument: value},
 *    "truncated": [what was left out to stay within SESSION_STATE_MAX]}
 *
 * Captured between calls, never inside one: the main loop calls
 * session_state_idle() once the worker has been idle SESSION_STATE_QUIET_MS
 * after a call that may have changed something (not after a read-only tool,
 * catalog.h), so the agent does not wait for it and calls made back to back
 * do not pay for it; a call that arrives during a capture interrupts it
 * (main.c's hooks), and it is tried again at the next quiet moment. A capture is
 * one Network.getAllCookies and one Runtime.evaluate per tab; it goes to
 * the supervisor (MSG_STATE) only when it differs from the last one sent.
 * localStorage of an origin no tab shows any more is carried over from the
 * previous capture.
 *
 * The supervisor keeps the last state with the session and hands it to the
 * session's next worker (MSG_CONFIG "restore"), which restores it before
 * READY (session_state_restore) and says in READY's "restored" what it
 * restored and what it could not; the next result's notice tells the agent.
 *
 * Not in extension mode: there the tabs and cookies are the user's own
 * browser's, which outlive the worker, and the relay gives the tabs back.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "channel.h"
#include "proto.h"
#include "tabs.h"
#include "worker.h"

/* Each tab's origin, href and web storage, read in the page's main world. */
static const char STORAGE_JS[] =
    "(() => { const out = {href: location.href, origin: location.origin};"
    " const items = (s) => { const a = []; for (let i = 0; i < s.length; i++) {"
    " const k = s.key(i); a.push({name: k, value: s.getItem(k)}); } return a; };"
    " try { out.local = items(localStorage); out.session = items(sessionStorage); }"
    " catch (e) { /* storage denied (opaque origin) */ }"
    " return out; })()";

static bool web_origin(const char *o)
{
    return o && (strncmp(o, "http://", 7) == 0 || strncmp(o, "https://", 8) == 0);
}

static void read_tab(struct session *w, const char *sid, void *ud)
{
    json_t *out = ud;
    json_t *r = NULL;
    json_t *v = NULL;
    if (session_call(w, sid, "Runtime.evaluate",
                     json_pack("{s:s, s:b}", "expression", STORAGE_JS, "returnByValue", 1),
                     &r) == 0)
        v = json_object_get(json_object_get(r, "result"), "value");
    json_array_append(out, json_is_object(v) ? v : json_null());
    json_decref(r);
    w->call.err = TV_OK; /* a busy or blocked page keeps its last state */
}

/* The largest storage list found so far: holder[key], named what. */
struct largest {
    json_t *holder;
    const char *key, *what;
    size_t len;
};

/* Look at list key of every object of in (named by its field name). */
static void find_largest(json_t *in, const char *key, const char *name, struct largest *l)
{
    size_t i;
    json_t *o;
    json_array_foreach(in, i, o)
    {
        char *d = json_dumps(json_object_get(o, key), JSON_COMPACT);
        size_t n = d ? strlen(d) : 0;
        free(d);
        if (n > l->len)
            *l = (struct largest){o, key, json_string_value(json_object_get(o, name)), n};
    }
}

/* Leave out the largest storage list until the state fits. */
static void bound(json_t *st)
{
    json_t *truncated = json_array();
    for (;;) {
        char *s = json_dumps(st, JSON_COMPACT);
        size_t len = s ? strlen(s) : 0;
        free(s);
        if (len <= SESSION_STATE_MAX)
            break;
        struct largest l = {0};
        find_largest(json_object_get(st, "origins"), "localStorage", "origin", &l);
        find_largest(json_object_get(st, "tabs"), "sessionStorage", "url", &l);
        if (!l.holder || l.len <= 2) {
            /* Only cookies and URLs left, still too big: keep nothing. */
            json_object_clear(st);
            json_array_append_new(truncated, json_string("everything (over the size bound)"));
            break;
        }
        char note[300];
        snprintf(note, sizeof note, "%s of %.200s", l.key, l.what ? l.what : "?");
        json_array_append_new(truncated, json_string(note));
        json_object_set_new(l.holder, l.key, json_array());
    }
    if (json_array_size(truncated))
        json_object_set_new(st, "truncated", truncated);
    else
        json_decref(truncated);
}

/* The session's state now (new reference), or NULL when the browser did not
 * answer (the last state stays). */
static json_t *capture(struct session *w)
{
    json_t *cookies = session_cookies(w);
    if (!cookies) {
        w->call.err = TV_OK;
        return NULL;
    }
    json_t *list = tabs_list_json(w);
    json_t *storage = json_array();
    tabs_each_session(w, read_tab, storage);
    bool paired = json_array_size(list) == json_array_size(storage);

    /* origin -> localStorage: the previous capture's, then what tabs show. */
    json_t *local = json_object();
    size_t i;
    json_t *o;
    json_array_foreach(json_object_get(w->state_last, "origins"), i, o)
    {
        const char *org = json_string_value(json_object_get(o, "origin"));
        if (web_origin(org))
            json_object_set(local, org, json_object_get(o, "localStorage"));
    }
    json_t *tabs = json_array();
    int current = 0;
    json_array_foreach(list, i, o)
    {
        if (json_is_true(json_object_get(o, "current")))
            current = (int)i;
        json_t *t = json_pack("{s:O}", "url", json_object_get(o, "url"));
        json_t *s = paired ? json_array_get(storage, i) : NULL;
        const char *org = json_string_value(json_object_get(s, "origin"));
        if (web_origin(org)) {
            json_object_set_new(t, "origin", json_string(org));
            json_t *items = json_object_get(s, "session");
            if (json_array_size(items))
                json_object_set(t, "sessionStorage", items);
            if (json_is_array(json_object_get(s, "local")))
                json_object_set(local, org, json_object_get(s, "local"));
        }
        json_array_append_new(tabs, t);
    }
    json_t *origins = json_array();
    const char *org;
    json_object_foreach(local, org, o)
    {
        if (json_array_size(o))
            json_array_append_new(origins,
                                  json_pack("{s:s, s:O}", "origin", org, "localStorage", o));
    }
    json_decref(local);
    json_decref(list);
    json_decref(storage);
    json_t *st = json_pack("{s:o, s:o, s:o, s:i, s:{s:i, s:i}, s:o}", "cookies", cookies, "origins",
                           origins, "tabs", tabs, "current", current, "viewport", "width",
                           w->viewport_w, "height", w->viewport_h, "media", emulate_media_state());
    bound(st);
    return st;
}

void session_state_mark(struct session *w)
{
    w->state_dirty = true;
    w->state_due = mono_ms() + SESSION_STATE_QUIET_MS;
}

static bool capturing_applies(const struct session *w)
{
    return w->state_dirty && !w->state_off && !w->relay && !w->broken && !w->page->crashed;
}

int session_state_due_ms(struct session *w, int timeout_ms)
{
    if (!capturing_applies(w))
        return timeout_ms;
    long long left = w->state_due - mono_ms();
    int due = left < 0 ? 0 : (int)left;
    return timeout_ms < 0 || due < timeout_ms ? due : timeout_ms;
}

void session_state_idle(struct session *w)
{
    if (!capturing_applies(w) || mono_ms() < w->state_due)
        return;
    long long saved_deadline = w->call.deadline;
    w->call.deadline = mono_ms() + SESSION_STATE_CAPTURE_MS;
    w->state_capturing = true;
    json_t *st = capture(w);
    w->state_capturing = false;
    w->call.deadline = saved_deadline;
    w->call.err = TV_OK;
    if (st && call_waiting()) {
        json_decref(st); /* cut short by a call: partial */
        st = NULL;
    }
    if (!st)
        return; /* still dirty: the next idle moment tries again */
    w->state_dirty = false;
    char *text = json_dumps(st, JSON_COMPACT | JSON_SORT_KEYS);
    if (text && (!w->state_sent || strcmp(text, w->state_sent) != 0)) {
        json_t *body = json_pack("{s:O}", "state", st);
        if (channel_send(w->ch, MSG_STATE, 0, body) == 0) {
            free(w->state_sent);
            w->state_sent = text;
            text = NULL;
        }
        json_decref(body);
    }
    free(text);
    json_decref(w->state_last);
    w->state_last = st;
}

/* What failed (w's error) goes to the list of what was not restored. */
static void note_failure(struct session *w, json_t *failed, const char *what)
{
    char line[600];
    snprintf(line, sizeof line, "%.200s: %.300s", what, w->call.errmsg[0] ? w->call.errmsg : "failed");
    json_array_append_new(failed, json_string(line));
    w->call.err = TV_OK;
    w->call.errmsg[0] = w->call.errhint[0] = 0;
}

/* A tool run for its effect during the restore: false (and why, in
 * failed) when it failed. */
static bool run_tool(struct session *w, json_t *(*fn)(struct session *, json_t *), json_t *args,
                     json_t *failed, const char *what)
{
    json_t *r = fn(w, args);
    json_decref(args);
    bool ok = r && !json_is_true(json_object_get(r, "isError"));
    json_decref(r);
    if (!ok)
        note_failure(w, failed, what);
    w->call.err = TV_OK;
    w->call.errmsg[0] = w->call.errhint[0] = 0;
    return ok;
}

/* Open tab i of the saved state (the first is the session's first tab) at
 * its URL, its sessionStorage put in place by a script that runs before the
 * page's own and is removed once the page loaded. */
static bool restore_tab(struct session *w, size_t i, json_t *t, json_t *failed)
{
    const char *url = json_string_value(json_object_get(t, "url"));
    char what[300];
    snprintf(what, sizeof what, "tab %zu (%.200s)", i, url ? url : "?");
    w->call.deadline = mono_ms() + SESSION_STATE_TAB_MS;
    if (i > 0 && tabs_new(w) < 0) {
        note_failure(w, failed, what);
        return false;
    }
    if (!url || !web_origin(url))
        return true; /* about:blank */
    const char *origin = json_string_value(json_object_get(t, "origin"));
    json_t *items = json_object_get(t, "sessionStorage");
    char script_id[64] = "";
    if (web_origin(origin) && json_array_size(items)) {
        char *oj = json_dumps(json_string(origin), JSON_ENCODE_ANY);
        char *ij = json_dumps(items, JSON_COMPACT);
        struct sb src = {0};
        sb_printf(&src,
                  "(() => { try { if (location.origin !== %s || sessionStorage.length) return;"
                  " for (const it of %s) sessionStorage.setItem(it.name, it.value); }"
                  " catch (e) {} })()",
                  oj ? oj : "\"\"", ij ? ij : "[]");
        free(oj);
        free(ij);
        json_t *r = NULL;
        if (page_call(w, "Page.addScriptToEvaluateOnNewDocument",
                      json_pack("{s:s}", "source", src.p), &r) == 0)
            snprintf(script_id, sizeof script_id, "%s",
                     json_string_value(json_object_get(r, "identifier")) ?: "");
        json_decref(r);
        free(src.p);
        w->call.err = TV_OK;
    }
    bool ok = run_tool(w, tool_navigate, json_pack("{s:s}", "url", url), failed, what);
    if (script_id[0]) {
        page_call(w, "Page.removeScriptToEvaluateOnNewDocument",
                  json_pack("{s:s}", "identifier", script_id), NULL);
        w->call.err = TV_OK;
    }
    return ok;
}

json_t *session_state_restore(struct session *w, json_t *st)
{
    json_t *failed = json_array();
    json_t *report = json_object();
    long long saved_deadline = w->call.deadline;

    json_t *vp = json_object_get(st, "viewport");
    int vw = (int)json_integer_value(json_object_get(vp, "width"));
    int vh = (int)json_integer_value(json_object_get(vp, "height"));
    if (vw >= 100 && vh >= 100 && (vw != w->viewport_w || vh != w->viewport_h)) {
        w->call.deadline = mono_ms() + SESSION_STATE_TAB_MS;
        if (run_tool(w, tool_resize, json_pack("{s:i, s:i}", "width", vw, "height", vh), failed,
                     "the viewport"))
            json_object_set_new(report, "viewport",
                                json_pack("{s:i, s:i}", "width", vw, "height", vh));
    }

    json_t *storage = json_object();
    json_t *cookies = json_object_get(st, "cookies");
    json_t *origins = json_object_get(st, "origins");
    json_object_set_new(storage, "cookies",
                        json_is_array(cookies) ? json_incref(cookies) : json_array());
    json_object_set_new(storage, "origins",
                        json_is_array(origins) ? json_incref(origins) : json_array());
    size_t nc = 0, no = 0;
    w->call.deadline = mono_ms() + SESSION_STATE_TAB_MS;
    if (storage_state_apply(w, storage, "the session's saved state", &nc, &no) == 0) {
        json_object_set_new(report, "cookies", json_integer((json_int_t)nc));
        json_object_set_new(report, "localStorageOrigins", json_integer((json_int_t)no));
    } else {
        note_failure(w, failed, "cookies and localStorage");
    }
    json_decref(storage);

    json_t *tabs = json_object_get(st, "tabs");
    size_t i, opened = 0, with_session = 0;
    json_t *t;
    json_t *urls = json_array();
    json_array_foreach(tabs, i, t)
    {
        if (i >= MAX_TABS)
            break;
        if (restore_tab(w, i, t, failed)) {
            opened++;
            if (json_array_size(json_object_get(t, "sessionStorage")))
                with_session++;
            json_array_append(urls, json_object_get(t, "url"));
        }
    }
    json_object_set_new(report, "tabs", urls);
    json_object_set_new(report, "sessionStorageTabs", json_integer((json_int_t)with_session));
    int current = (int)json_integer_value(json_object_get(st, "current"));
    if (opened && tabs_select(w, current < tabs_count(w) ? current : 0) == 0)
        json_object_set_new(report, "current", json_integer(tabs_current(w)));
    w->call.err = TV_OK;

    json_t *media = json_object_get(st, "media");
    if (json_object_size(media)) {
        w->call.deadline = mono_ms() + SESSION_STATE_TAB_MS;
        if (run_tool(w, tool_emulate_media, json_deep_copy(media), failed, "media emulation"))
            json_object_set(report, "media", media);
    }
    json_t *truncated = json_object_get(st, "truncated");
    json_array_foreach(truncated, i, t)
    {
        char line[400];
        snprintf(line, sizeof line, "%.300s: not kept (the saved state is bounded)",
                 json_string_value(t) ?: "?");
        json_array_append_new(failed, json_string(line));
    }
    json_object_set_new(report, "notRestored", failed);
    w->call.deadline = saved_deadline;
    /* What was restored is the state now: the supervisor has it already. */
    json_decref(w->state_last);
    w->state_last = json_incref(st);
    return report;
}
