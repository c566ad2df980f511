/*
 * tabs.c - the session's tabs (see tabs.h). Each tab owns its page (struct
 * tab_page); w->page points at the current tab's. Selecting a tab moves the
 * pointer; an event of a background tab runs with the pointer on that tab's
 * page for its length. Nothing is copied between tabs.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "frames.h"
#include "log.h"
#include "netpolicy.h"
#include "tabs.h"
#include "hooks.h"
#include "worker.h"

/* When the engine of a tab cannot say how far it numbered refs, the next
 * tab starts this far above what we know, so numbers never collide. */
#define REF_MARGIN 100000
/* Ranges kept for naming the tab of a foreign ref (a dropped one only makes
 * the message vaguer: numbers are unique anyway). */
#define MAX_RANGES 4096

struct tab {
    int serial;     /* stable for the session; indexes shift as tabs close */
    bool gone;      /* closed or detached: dropped at the next safe point */
    bool closing;   /* we asked for the close (browser_tabs close) */
    bool by_page;   /* it went away without the agent asking */
    struct tab_page st; /* its page */
};

struct tab_list {
    struct tab *t[MAX_TABS];
    int n, cur, next_serial;
    json_t *children; /* child CDP session id -> serial of its tab */
    json_t *pending;  /* targetId -> targetInfo of pages not yet adopted */
    json_t *ranges;   /* [[lo, hi, serial]]: main-frame ref numbers each stint handed out */
    long long ref_hw; /* no tab handed out a ref number at or above this */
    long long cur_lo; /* first number of the current tab's stint */
    bool busy;        /* inside tabs_sync */
    char lost[700];
    /* Where w->page points while no tab is current (between dropping the
     * last tab and opening a fresh one): events then write into it. */
    struct tab_page none;
};

/* Release what page p owns, and clear it. */
static void free_page(struct tab_page *p)
{
    json_decref(p->settle.requests);
    json_decref(p->console.messages);
    json_decref(p->console.log);
    json_decref(p->netlog.list);
    json_decref(p->netlog.index);
    free(p->last_snapshot);
    free(p->last_snapshot_url);
    free(p->frames);
    memset(p, 0, sizeof *p);
}

void tabs_each_session(struct session *w, void (*fn)(struct session *w, const char *sid, void *ud),
                       void *ud)
{
    struct tab_list *tl = w->tabs;
    if (!tl) {
        fn(w, w->page->cdp_session, ud);
        return;
    }
    for (int i = 0; i < tl->n; i++) {
        const char *sid = tl->t[i]->st.cdp_session;
        if (!tl->t[i]->gone && *sid)
            fn(w, sid, ud);
    }
}

static int by_serial(struct tab_list *tl, int serial)
{
    for (int i = 0; i < tl->n; i++)
        if (tl->t[i]->serial == serial)
            return i;
    return -1;
}

/* The tab whose page session is sid (main_only) or which owns sid as a
 * child session too; -1. */
static int by_session(struct session *w, struct tab_list *tl, const char *sid, bool main_only)
{
    for (int i = 0; i < tl->n; i++)
        if (*tl->t[i]->st.cdp_session && strcmp(tl->t[i]->st.cdp_session, sid) == 0)
            return i;
    if (main_only)
        return -1;
    json_t *s = json_object_get(tl->children, sid);
    return s ? by_serial(tl, (int)json_integer_value(s)) : -1;
}

static int by_target(struct session *w, struct tab_list *tl, const char *tid)
{
    for (int i = 0; i < tl->n; i++)
        if (*tl->t[i]->st.target_id && strcmp(tl->t[i]->st.target_id, tid) == 0)
            return i;
    return -1;
}

/* ---- ref ranges ---- */

/* The current tab stops handing out refs: record the range it used. ask:
 * read how far its engine really numbered (it may have handed out refs we
 * did not see in a result). Best effort: w->call.err is left as it was. */
static void end_stint(struct session *w, struct tab_list *tl, bool ask)
{
    long long hi = w->page->next_ref;
    if (ask && w->page->util_installed) {
        struct subcall sub;
        subcall_begin(w, &sub, 2000, SUBCALL_WITHIN);
        json_t *v = NULL;
        if (util_eval(w, "__tabvisor.init({}).nextRef", &v) == 0 && json_is_integer(v)) {
            if (json_integer_value(v) > w->page->next_ref)
                w->page->next_ref = json_integer_value(v);
            hi = w->page->next_ref;
        } else {
            hi = w->page->next_ref + REF_MARGIN;
        }
        json_decref(v);
        subcall_end(w, &sub);
    }
    if (hi > tl->cur_lo) {
        if (json_array_size(tl->ranges) >= MAX_RANGES)
            json_array_remove(tl->ranges, 0);
        json_array_append_new(tl->ranges, json_pack("[I,I,i]", (json_int_t)tl->cur_lo,
                                                    (json_int_t)hi, tl->t[tl->cur]->serial));
    }
    if (hi > tl->ref_hw)
        tl->ref_hw = hi;
}

/* The current tab starts handing out refs: above every number any tab used.
 * Its engine learns the new base when it is next used (util_install). */
static void start_stint(struct session *w, struct tab_list *tl)
{
    if (tl->ref_hw > w->page->next_ref) {
        w->page->next_ref = tl->ref_hw;
        w->page->util_installed = false;
    }
    tl->cur_lo = w->page->next_ref;
}

/* Make tab i current. */
static void load(struct session *w, struct tab_list *tl, int i)
{
    w->page = &tl->t[i]->st;
    tl->cur = i;
    start_stint(w, tl);
}

/* A new tab at the end of the list becomes current, with a fresh page. */
static struct tab *push_current(struct session *w, struct tab_list *tl);

static struct tab *push_tab(struct tab_list *tl)
{
    struct tab *t = calloc(1, sizeof *t);
    if (!t)
        abort();
    t->serial = tl->next_serial++;
    tl->t[tl->n++] = t;
    return t;
}

/* ---- set-up ---- */

static struct tab *push_current(struct session *w, struct tab_list *tl)
{
    struct tab *t = push_tab(tl);
    tl->cur = tl->n - 1;
    w->page = &t->st;
    return t;
}

int tabs_init(struct session *w)
{
    struct tab_list *tl = calloc(1, sizeof *tl);
    if (!tl)
        return -1;
    tl->children = json_object();
    tl->pending = json_object();
    tl->ranges = json_array();
    tl->ref_hw = tl->cur_lo = 1;
    w->tabs = tl;
    push_current(w, tl);
    w->page->next_ref = 1; /* ref numbers continue across documents and tabs */
    return 0;
}

void tabs_free(struct session *w)
{
    struct tab_list *tl = w->tabs;
    if (!tl)
        return;
    for (int i = 0; i < tl->n; i++) {
        free_page(&tl->t[i]->st);
        free(tl->t[i]);
    }
    free_page(&tl->none);
    json_decref(tl->children);
    json_decref(tl->pending);
    json_decref(tl->ranges);
    free(tl);
    w->tabs = NULL;
    w->page = NULL;
}

/* Set up the page on CDP session sid without waiting (events, network
 * policy, settling script, viewport): safe inside an event handler, which
 * is where a paused popup gets it before it is resumed. Commands on one
 * session run in order, so whatever comes next on sid comes after these. */
static void setup_send(struct session *w, const char *sid)
{
    json_t *p;
    cdp_send(w->cdp, sid, "Page.enable", NULL);
    p = json_pack("{s:b}", "enabled", 1);
    cdp_send(w->cdp, sid, "Page.setLifecycleEventsEnabled", p);
    json_decref(p);
    cdp_send(w->cdp, sid, "Runtime.enable", NULL);
    /* Requests an action starts are part of its settling (settle.c). */
    cdp_send(w->cdp, sid, "Network.enable", NULL);
    /* Out-of-process iframes become child sessions on this one (frames.c). */
    p = json_pack("{s:b, s:b, s:b}", "autoAttach", 1, "waitForDebuggerOnStart", 0, "flatten", 1);
    cdp_send(w->cdp, sid, "Target.setAutoAttach", p);
    json_decref(p);
    /* Requests to our own ports or outside the origin rules fail (netpolicy.h),
     * routes and extra headers apply, and offline holds (tools/routes.c). */
    netpolicy_attach(w, sid);
    /* Every page behaves as the focused, visible one: timers and animation
     * frames are never throttled for being in the background. */
    p = json_pack("{s:b}", "enabled", 1);
    cdp_send(w->cdp, sid, "Emulation.setFocusEmulationEnabled", p);
    json_decref(p);
    /* The set-up of the modules entered in the attach table (hooks.h):
     * routes' offline state, the file chooser held for browser_file_upload,
     * the settling's instrumentation (settle.c). */
    hooks_run_attach(w, sid, ATTACH_PAGE);
    p = json_pack("{s:i, s:i, s:i, s:b}", "width", w->viewport_w, "height", w->viewport_h,
                  "deviceScaleFactor", 1, "mobile", 0);
    cdp_send(w->cdp, sid, "Emulation.setDeviceMetricsOverride", p);
    json_decref(p);
}

/* Attach to w->page->target_id and set the page up; the page fields of session are
 * the new tab's. 0 or -1 with w->call.err set. */
static int attach_and_setup(struct session *w)
{
    json_t *r;
    if (browser_call(w, "Target.attachToTarget",
                     json_pack("{s:s, s:b}", "targetId", w->page->target_id, "flatten", 1), &r) < 0)
        return -1;
    snprintf(w->page->cdp_session, sizeof w->page->cdp_session, "%s",
             json_string_value(json_object_get(r, "sessionId")) ?: "");
    json_decref(r);
    if (!*w->page->cdp_session)
        return fail_call(w, TV_BROWSER_ERROR, NULL, "the browser gave no session for the page");
    setup_send(w, w->page->cdp_session);
    /* Answered after the set-up (same session); a page still paused (not
     * handed over by the bridge's auto-attach) starts here. */
    return page_call(w, "Runtime.runIfWaitingForDebugger", NULL, NULL);
}

/* Take t out of the list (the caller frees it). */
static void remove_tab(struct tab_list *tl, struct tab *t)
{
    for (int i = 0; i < tl->n; i++) {
        if (tl->t[i] != t)
            continue;
        memmove(&tl->t[i], &tl->t[i + 1], (size_t)(tl->n - i - 1) * sizeof tl->t[0]);
        tl->n--;
        if (tl->cur > i)
            tl->cur--;
        return;
    }
}

static int index_of(struct tab_list *tl, struct tab *t)
{
    for (int i = 0; i < tl->n; i++)
        if (tl->t[i] == t)
            return i;
    return -1;
}

int tabs_open_page(struct session *w)
{
    json_t *r;
    if (browser_call(
            w, "Target.createTarget",
            json_pack("{s:s, s:s}", "url", "about:blank", "browserContextId", w->context_id),
            &r) < 0)
        return -1;
    snprintf(w->page->target_id, sizeof w->page->target_id, "%s",
             json_string_value(json_object_get(r, "targetId")) ?: "");
    json_decref(r);
    snprintf(w->page->url, sizeof w->page->url, "about:blank");
    if (attach_and_setup(w) < 0) {
        json_t *p = json_pack("{s:s}", "targetId", w->page->target_id);
        cdp_send(w->cdp, NULL, "Target.closeTarget", p);
        json_decref(p);
        return -1;
    }
    return 0;
}

/* ---- events ---- */

static void mark_gone(struct tab_list *tl, int i, bool by_page)
{
    if (!tl->t[i]->gone) {
        tl->t[i]->gone = true;
        tl->t[i]->by_page = by_page && !tl->t[i]->closing;
    }
}

static void set_info(struct tab_page *p, json_t *info)
{
    const char *url = json_string_value(json_object_get(info, "url"));
    const char *title = json_string_value(json_object_get(info, "title"));
    if (url && *url)
        snprintf(p->url, sizeof p->url, "%s", url);
    if (title)
        snprintf(p->title, sizeof p->title, "%s", title);
    utf8_drop_partial_tail(p->url);
    utf8_drop_partial_tail(p->title);
}

/* A paused popup (session sid) becomes a tab at the end of the list, set
 * up and resumed without waiting (we are inside an event handler, and its
 * opener may be blocked until it runs). */
static void adopt_paused(struct session *w, struct tab_list *tl, const char *sid, json_t *info)
{
    const char *tid = json_string_value(json_object_get(info, "targetId"));
    const char *ctx = json_string_value(json_object_get(info, "browserContextId"));
    if (!sid)
        return;
    if (!tid || !ctx || strcmp(ctx, w->context_id) != 0 || by_target(w, tl, tid) >= 0) {
        /* Not a new page of ours: never leave it paused. */
        cdp_send(w->cdp, sid, "Runtime.runIfWaitingForDebugger", NULL);
        return;
    }
    json_object_del(tl->pending, tid);
    if (tl->n >= MAX_TABS) {
        log_warn("session %s: more than %d tabs; closing the page's new one", w->session_id,
                 MAX_TABS);
        /* Resumed first: its opener may be blocked until it runs. */
        cdp_send(w->cdp, sid, "Runtime.runIfWaitingForDebugger", NULL);
        json_t *p = json_pack("{s:s}", "targetId", tid);
        cdp_send(w->cdp, NULL, "Target.closeTarget", p);
        json_decref(p);
        return;
    }
    struct tab *t = push_tab(tl);
    snprintf(t->st.target_id, sizeof t->st.target_id, "%s", tid);
    snprintf(t->st.cdp_session, sizeof t->st.cdp_session, "%s", sid);
    set_info(&t->st, info);
    setup_send(w, sid);
    cdp_send(w->cdp, sid, "Runtime.runIfWaitingForDebugger", NULL);
    log_info("session %s: the page opened tab %d", w->session_id, tl->n - 1);
}

/* Browser-level Target.* events (discovery, detaches): true when handled. */
static bool browser_event(struct session *w, struct tab_list *tl, const char *method, json_t *params)
{
    json_t *info = json_object_get(params, "targetInfo");
    const char *tid = json_string_value(json_object_get(info, "targetId"));
    if (!tid)
        tid = json_string_value(json_object_get(params, "targetId"));
    const char *type = json_string_value(json_object_get(info, "type"));
    bool page = type && strcmp(type, "page") == 0;
    if (strcmp(method, "Target.targetCreated") == 0) {
        const char *ctx = json_string_value(json_object_get(info, "browserContextId"));
        /* Our own new pages are announced too (before createTarget answers):
         * tabs_sync skips those it knows by then. */
        if (page && tid && ctx && strcmp(ctx, w->context_id) == 0 && by_target(w, tl, tid) < 0)
            json_object_set(tl->pending, tid, info);
        return true;
    }
    if (strcmp(method, "Target.targetInfoChanged") == 0) {
        int i = tid ? by_target(w, tl, tid) : -1;
        if (i >= 0)
            set_info(&tl->t[i]->st, info);
        else if (tid && json_object_get(tl->pending, tid))
            json_object_set(tl->pending, tid, info);
        return true;
    }
    if (strcmp(method, "Target.targetDestroyed") == 0) {
        int i = tid ? by_target(w, tl, tid) : -1;
        if (i >= 0)
            mark_gone(tl, i, true);
        if (tid)
            json_object_del(tl->pending, tid);
        return true;
    }
    if (strcmp(method, "Target.attachedToTarget") == 0 && page) {
        /* A page the page opened, handed over paused by the bridge: set it
         * up and let it run now (its opener may be waiting for it). Our
         * own attachToTarget's event is not paused; attach_and_setup has it. */
        if (json_is_true(json_object_get(params, "waitingForDebugger")))
            adopt_paused(w, tl, json_string_value(json_object_get(params, "sessionId")), info);
        return true;
    }
    if (strcmp(method, "Target.detachedFromTarget") == 0) {
        const char *sid = json_string_value(json_object_get(params, "sessionId"));
        int i = sid ? by_session(w, tl, sid, true) : -1;
        if (i < 0)
            return false;
        /* The page's session ended: the page closed (a crash comes as
         * Inspector.targetCrashed instead). */
        mark_gone(tl, i, true);
        return true;
    }
    return false;
}

bool tabs_route(struct session *w, const char *session, const char *method, json_t *params)
{
    struct tab_list *tl = w->tabs;
    if (!tl)
        return false;
    if (!session || !*session)
        return browser_event(w, tl, method, params);
    /* The storage tools' hidden page is no tab (tools/storage_state.c). */
    if (w->storage_helper[0] && strcmp(session, w->storage_helper) == 0)
        return false;
    int i = by_session(w, tl, session, false);
    if (i < 0)
        return true; /* a session of a tab already dropped */
    const char *child = json_string_value(json_object_get(params, "sessionId"));
    if (child && strcmp(method, "Target.attachedToTarget") == 0)
        json_object_set_new(tl->children, child, json_integer(tl->t[i]->serial));
    else if (child && strcmp(method, "Target.detachedFromTarget") == 0)
        json_object_del(tl->children, child);
    if (tl->t[i]->gone)
        return true;
    if (i == tl->cur)
        return false;
    /* The background tab's page is the one the modules see, for this event. */
    struct tab_page *cur = w->page;
    w->page = &tl->t[i]->st;
    hooks_run_event(w, session, method, params);
    w->page = cur;
    /* A background page whose renderer crashed is of no use: it leaves the
     * list (the current tab's is replaced: tabs_replace_crashed). */
    if (tl->t[i]->st.crashed)
        mark_gone(tl, i, true);
    return true;
}

/* ---- safe points ---- */

/* Open a fresh about:blank tab as the only one (the page fields are clear). */
static void open_fresh(struct session *w, struct tab_list *tl)
{
    push_current(w, tl);
    w->page->next_ref = tl->ref_hw;
    start_stint(w, tl);
    if (tabs_open_page(w) < 0) {
        /* Without a page the session is of no use: let it restart. */
        log_error("session %s: cannot open a new tab: %s", w->session_id, w->call.errmsg);
        w->broken = true;
    }
}

/* Drop the tabs that went away; a new current tab when the current one did. */
static void drop_gone(struct session *w, struct tab_list *tl)
{
    struct tab *cur = tl->t[tl->cur];
    if (cur->gone)
        end_stint(w, tl, false); /* while tl->cur still names it */
    int m = 0, pos = 0;
    for (int i = 0; i < tl->n; i++) {
        struct tab *t = tl->t[i];
        if (t == cur)
            pos = m;
        if (t->gone && t != cur) {
            free_page(&t->st);
            free(t);
            continue;
        }
        if (t != cur || !t->gone)
            tl->t[m++] = t;
    }
    tl->n = m;
    if (!cur->gone) {
        tl->cur = pos;
        return;
    }
    char old[300];
    snprintf(old, sizeof old, "%s", w->page->url);
    bool by_page = cur->by_page;
    w->page = &tl->none;
    free_page(&cur->st);
    free(cur);
    if (m > 0)
        load(w, tl, pos < m ? pos : m - 1);
    else
        open_fresh(w, tl);
    if (by_page)
        snprintf(tl->lost, sizeof tl->lost,
                 "the current tab (%.300s) was closed by the page; tab %d (%.300s) is now current",
                 old, tl->cur, w->page->url);
}

void tabs_replace_crashed(struct session *w, char *was, size_t len)
{
    struct tab_list *tl = w->tabs;
    snprintf(was, len, "%s", w->page->url);
    /* Close the dead page's target (its answer does not matter: it may be
     * gone already) and let drop_gone pick the next current tab. */
    json_t *p = json_pack("{s:s}", "targetId", w->page->target_id);
    cdp_send(w->cdp, NULL, "Target.closeTarget", p);
    json_decref(p);
    tl->t[tl->cur]->closing = true;
    mark_gone(tl, tl->cur, false);
    drop_gone(w, tl);
}

/* Attach to the pages the page opened and add them as tabs (not current).
 * Events while attaching may announce more: they wait for the next round. */
static void adopt_pending(struct session *w, struct tab_list *tl)
{
    json_t *todo = tl->pending;
    tl->pending = json_object();
    const char *tid;
    json_t *info;
    json_object_foreach(todo, tid, info)
    {
        if (by_target(w, tl, tid) >= 0)
            continue;
        if (tl->n >= MAX_TABS) {
            log_warn("session %s: more than %d tabs; closing the page's new one", w->session_id,
                     MAX_TABS);
            json_t *p = json_pack("{s:s}", "targetId", tid);
            cdp_send(w->cdp, NULL, "Target.closeTarget", p);
            json_decref(p);
            continue;
        }
        struct tab *prev = tl->t[tl->cur];
        end_stint(w, tl, true); /* the current tab stops being current */
        struct tab *t = push_current(w, tl);
        snprintf(w->page->target_id, sizeof w->page->target_id, "%s", tid);
        set_info(w->page, info);
        enum tv_err err = w->call.err;
        char msg[sizeof w->call.errmsg];
        memcpy(msg, w->call.errmsg, sizeof msg);
        if (attach_and_setup(w) < 0) {
            log_info("session %s: a new page went away before it was attached: %s", w->session_id,
                     w->call.errmsg);
            w->page = &tl->none;
            free_page(&t->st);
            remove_tab(tl, t);
            free(t);
        } else {
            log_info("session %s: the page opened a tab (%s)", w->session_id, w->page->url);
        }
        w->call.err = err;
        memcpy(w->call.errmsg, msg, sizeof msg);
        load(w, tl, index_of(tl, prev));
    }
    json_decref(todo);
}

void tabs_sync(struct session *w)
{
    struct tab_list *tl = w->tabs;
    /* No tab at all only after tabs_reset failed: the worker is exiting. */
    if (!tl || tl->busy || !tl->n)
        return;
    tl->busy = true;
    drop_gone(w, tl);
    for (int round = 0; round < 4 && json_object_size(tl->pending); round++)
        adopt_pending(w, tl);
    drop_gone(w, tl);
    tl->busy = false;
}

const char *tabs_lost(struct session *w)
{
    return w->tabs && w->tabs->lost[0] ? w->tabs->lost : NULL;
}

void tabs_lost_clear(struct session *w)
{
    if (w->tabs)
        w->tabs->lost[0] = 0;
}

/* ---- the tools' operations ---- */

int tabs_count(struct session *w)
{
    return w->tabs ? w->tabs->n : 1;
}

int tabs_current(struct session *w)
{
    return w->tabs ? w->tabs->cur : 0;
}

static int no_tab(struct session *w, int i)
{
    return fail_call(w, TV_TAB_NOT_FOUND, "List the tabs with browser_tabs action 'list'.",
                     "no tab at index %d (the session has %d tab%s: 0..%d)", i, w->tabs->n,
                     w->tabs->n == 1 ? "" : "s", w->tabs->n - 1);
}

int tabs_select(struct session *w, int i)
{
    struct tab_list *tl = w->tabs;
    if (i < 0 || i >= tl->n || tl->t[i]->gone)
        return no_tab(w, i);
    if (i == tl->cur)
        return 0;
    end_stint(w, tl, true); /* the current tab stops being current */
    load(w, tl, i);
    /* A headed window left behind another one is occluded and its frames
     * slow down; the selected tab comes to the front, as a user's click on
     * it would. Not in the user's own browser (extension mode), whose focus
     * is theirs. Best effort: the tab is selected either way. */
    if (!w->relay && page_call(w, "Page.bringToFront", json_object(), NULL) < 0)
        w->call.err = TV_OK;
    return 0;
}

int tabs_new(struct session *w)
{
    struct tab_list *tl = w->tabs;
    if (!tl->n)
        return fail_call(w, TV_BROWSER_CRASHED, NULL, "the session has no browser context");
    if (tl->n >= MAX_TABS)
        return fail_call(w, TV_INVALID_PARAMETERS, "Close a tab first.",
                         "a session has at most %d tabs", MAX_TABS);
    struct tab *prev = tl->t[tl->cur];
    end_stint(w, tl, true); /* the current tab stops being current */
    struct tab *t = push_current(w, tl);
    w->page->next_ref = tl->ref_hw;
    start_stint(w, tl);
    if (tabs_open_page(w) < 0) {
        w->page = &tl->none;
        free_page(&t->st);
        remove_tab(tl, t);
        free(t);
        load(w, tl, index_of(tl, prev));
        return -1;
    }
    return 0;
}

int tabs_close(struct session *w, int i)
{
    struct tab_list *tl = w->tabs;
    if (i < 0)
        i = tl->cur;
    if (i >= tl->n || tl->t[i]->gone)
        return no_tab(w, i);
    /* A refusal means the target is gone already, which is what we want;
     * so does an answer cut short because its close events came first. A
     * dialog open in the current tab does not hold the close back. */
    struct tab *t = tl->t[i];
    t->closing = true;
    json_t *r = NULL;
    bool answering = w->page->dialog.answering;
    w->page->dialog.answering = true;
    int rc = browser_call(w, "Target.closeTarget",
                          json_pack("{s:s}", "targetId", tl->t[i]->st.target_id), &r);
    w->page->dialog.answering = answering;
    if (rc < 0) {
        if (!t->gone &&
            (w->call.err == TV_TIMEOUT || w->call.err == TV_CANCELLED || w->call.err == TV_BROWSER_CRASHED)) {
            t->closing = false;
            return -1;
        }
        w->call.err = TV_OK;
        w->call.errmsg[0] = w->call.errhint[0] = 0;
    }
    json_decref(r);
    mark_gone(tl, index_of(tl, t), false);
    drop_gone(w, tl);
    return w->broken ? fail_call(w, TV_BROWSER_CRASHED, NULL, "no new tab could be opened") : 0;
}

int tabs_reset(struct session *w)
{
    struct tab_list *tl = w->tabs;
    if (tl->n)
        end_stint(w, tl, false);
    w->page = &tl->none;
    for (int i = 0; i < tl->n; i++) {
        free_page(&tl->t[i]->st);
        free(tl->t[i]);
    }
    tl->n = 0;
    json_object_clear(tl->children);
    json_object_clear(tl->pending);
    /* Disposing of the context closes its pages; cookies and storage go too. */
    json_t *r;
    if (browser_call(w, "Target.disposeBrowserContext",
                     json_pack("{s:s}", "browserContextId", w->context_id), NULL) < 0 ||
        browser_call(w, "Target.createBrowserContext", json_pack("{s:b}", "disposeOnDetach", 1),
                     &r) < 0) {
        w->broken = true; /* no context: the session restarts */
        return -1;
    }
    snprintf(w->context_id, sizeof w->context_id, "%s",
             json_string_value(json_object_get(r, "browserContextId")) ?: "");
    json_decref(r);
    open_fresh(w, tl);
    return w->broken ? fail_call(w, TV_BROWSER_CRASHED, NULL, "no new tab could be opened") : 0;
}

int tabs_forget_all(struct session *w)
{
    struct tab_list *tl = w->tabs;
    if (!tl || !tl->n)
        return 0;
    for (int i = 0; i < tl->n; i++) {
        tl->t[i]->closing = true;
        mark_gone(tl, i, false);
    }
    json_object_clear(tl->children);
    json_object_clear(tl->pending);
    drop_gone(w, tl);
    return w->broken ? fail_call(w, TV_BROWSER_CRASHED, NULL, "no new tab could be opened") : 0;
}

/* Background tabs' URL and title, read from their pages: Chromium reports
 * a title change of a page that is not active in no target event. Each read
 * is capped at a second; a page that cannot answer (blocked by a dialog,
 * busy) keeps what the target events said. w->call.err is left as it was. */
static void refresh_background(struct session *w, struct tab_list *tl)
{
    for (int i = 0; i < tl->n; i++) {
        struct tab_page *p = &tl->t[i]->st;
        if (i == tl->cur || tl->t[i]->gone || !*p->cdp_session)
            continue;
        struct subcall sub;
        subcall_begin(w, &sub, 1000, SUBCALL_WITHIN);
        json_t *r = NULL;
        if (session_call(w, p->cdp_session, "Runtime.evaluate",
                         json_pack("{s:s, s:b}", "expression", "[location.href, document.title]",
                                   "returnByValue", 1),
                         &r) == 0) {
            json_t *v = json_object_get(json_object_get(r, "result"), "value");
            const char *url = json_string_value(json_array_get(v, 0));
            const char *title = json_string_value(json_array_get(v, 1));
            if (url && title) {
                snprintf(p->url, sizeof p->url, "%s", url);
                snprintf(p->title, sizeof p->title, "%s", title);
                utf8_drop_partial_tail(p->url);
                utf8_drop_partial_tail(p->title);
            }
        }
        json_decref(r);
        subcall_end(w, &sub);
    }
}

json_t *tabs_list_json(struct session *w)
{
    struct tab_list *tl = w->tabs;
    if (tl)
        refresh_background(w, tl);
    json_t *a = json_array();
    for (int i = 0; tl && i < tl->n; i++) {
        struct tab_page *p = &tl->t[i]->st;
        json_array_append_new(a, json_pack("{s:i, s:s, s:s, s:b}", "index", i, "url", p->url,
                                           "title", p->title, "current", i == tl->cur));
    }
    return a;
}

/* "e<N>" -> N, "f<K>e<N>" -> K and N; 0 when target is no ref. */
static int parse_ref(const char *s, long long *k, long long *n)
{
    *k = 0;
    if (*s == 'f') {
        char *end;
        if (!isdigit((unsigned char)s[1]))
            return 0;
        *k = strtoll(s + 1, &end, 10);
        s = end;
    }
    if (*s != 'e' || !isdigit((unsigned char)s[1]))
        return 0;
    char *end;
    *n = strtoll(s + 1, &end, 10);
    return *end == 0;
}

static int foreign(struct session *w, const char *ref, int serial)
{
    int i = by_serial(w->tabs, serial);
    if (i < 0)
        return fail_call(w, TV_STALE_REF, "Take a new browser_snapshot and use a ref from it.",
                         "ref %s is from a snapshot of a tab that has been closed", ref);
    return fail_call(w, TV_STALE_REF, "Select that tab with browser_tabs, or snapshot this one.",
                     "ref %s is from the snapshot of tab %d (%.300s), not of the current tab %d",
                     ref, i, w->tabs->t[i]->st.url, w->tabs->cur);
}

int tabs_check_ref(struct session *w, const char *target)
{
    struct tab_list *tl = w->tabs;
    long long k, n;
    if (!tl || !tl->n || !target || !parse_ref(target, &k, &n))
        return 0;
    if (k > 0) {
        if (frame_by_k(w, (int)k))
            return 0;
        for (int i = 0; i < tl->n; i++) {
            struct frame_table *ft = i == tl->cur ? NULL : tl->t[i]->st.frames;
            for (int j = 1; ft && j < MAX_FRAMES; j++)
                if (ft->f[j].used && ft->f[j].k == k)
                    return foreign(w, target, tl->t[i]->serial);
        }
        return 0;
    }
    if (n >= tl->cur_lo)
        return 0;
    size_t idx;
    json_t *r;
    json_array_foreach(tl->ranges, idx, r)
    {
        long long lo = json_integer_value(json_array_get(r, 0));
        long long hi = json_integer_value(json_array_get(r, 1));
        int serial = (int)json_integer_value(json_array_get(r, 2));
        if (n >= lo && n < hi)
            return serial == tl->t[tl->cur]->serial ? 0 : foreign(w, target, serial);
    }
    return 0;
}

int tabs_other_dialog(struct session *w, const char **type, const char **message)
{
    struct tab_list *tl = w->tabs;
    for (int i = 0; tl && i < tl->n; i++) {
        if (i == tl->cur || tl->t[i]->gone || !tl->t[i]->st.dialog.open)
            continue;
        if (type)
            *type = tl->t[i]->st.dialog.type;
        if (message)
            *message = tl->t[i]->st.dialog.message;
        return i;
    }
    return -1;
}

bool tabs_current_gone(struct session *w)
{
    return w->tabs && w->tabs->n && w->tabs->t[w->tabs->cur]->gone;
}
