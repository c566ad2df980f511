/*
 * router.c - the relay's policy (docs/relay.md). Worker requests are checked
 * against the registry (a session sees only its own tabs) and forwarded to
 * the extension as named verbs; the extension's answers go back to the
 * worker that asked, its events to the owner of the tab only.
 */
#include "relay.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <openssl/crypto.h>

#include "auth.h"
#include "cdp_policy.h"
#include "errors.h"
#include "log.h"
#include "proto.h"
#include "url_policy.h"

int64_t relay_now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

void router_init(struct relay *r)
{
    reg_init(&r->reg);
    r->next_ext_id = 1;
    r->children = json_object();
}

void router_free(struct relay *r)
{
    json_decref(r->children);
    r->children = NULL;
    free(r->pend);
    r->pend = NULL;
    r->npend = r->pend_cap = 0;
    reg_free(&r->reg);
}

const char *router_url_refused(const char *url)
{
    return url_policy_check(url, strlen(url), cdp_policy_url_allow(CDP_LAYER_RELAY));
}

/* The relay layer of the CDP policy table (proto/cdp_policy.c): the relay is
 * the boundary between workers and the user's profile, so it checks every
 * command itself, whatever the worker's own transport already refused. */
const char *router_cdp_refused(const char *method, const json_t *params)
{
    return cdp_policy_check(CDP_LAYER_RELAY, method, strlen(method), params);
}

/* --- pending requests to the extension --- */

static struct pending *pending_add(struct relay *r)
{
    if (r->npend >= RELAY_MAX_PENDING)
        return NULL;
    if (r->npend == r->pend_cap) {
        size_t cap = r->pend_cap ? r->pend_cap * 2 : 32;
        struct pending *p = realloc(r->pend, cap * sizeof(*p));
        if (!p)
            return NULL;
        r->pend = p;
        r->pend_cap = cap;
    }
    struct pending *p = &r->pend[r->npend++];
    memset(p, 0, sizeof(*p));
    p->ext_id = r->next_ext_id++;
    if (r->next_ext_id == 0 || r->next_ext_id > UINT32_MAX / 2)
        r->next_ext_id = 1;
    p->deadline_ms = relay_now_ms() + RELAY_CALL_TIMEOUT_MS;
    return p;
}

/* Take the pending request ext_id out of the table into *out. */
static bool pending_take(struct relay *r, uint32_t ext_id, struct pending *out)
{
    for (size_t i = 0; i < r->npend; i++) {
        if (r->pend[i].ext_id != ext_id)
            continue;
        *out = r->pend[i];
        r->pend[i] = r->pend[--r->npend];
        return true;
    }
    return false;
}

/* The live pipe of the session with this serial, or 0. */
static uint32_t serial_pipe(struct relay *r, uint64_t serial)
{
    int idx = reg_session_by_serial(&r->reg, serial);
    return idx >= 0 ? r->reg.sessions[idx].pipe : 0;
}

static void reply_err_serial(struct relay *r, const struct pending *p, const char *code,
                             const char *msg)
{
    uint32_t pipe = serial_pipe(r, p->serial);
    if (pipe && p->worker_id)
        worker_reply_err(r, pipe, p->worker_id, code, msg);
}

/* Send verb to the extension with params (stolen) and remember who asked.
 * On failure the asking worker gets EXTENSION_NOT_CONNECTED. */
static void ext_request(struct relay *r, int sidx, uint64_t worker_id, uint32_t type,
                        int64_t tab_id, const char *verb, json_t *params)
{
    uint32_t pipe = sidx >= 0 ? r->reg.sessions[sidx].pipe : 0;
    if (!ext_ready(r)) {
        json_decref(params);
        if (pipe && worker_id)
            worker_reply_err(r, pipe, worker_id, "EXTENSION_NOT_CONNECTED",
                             "the browser extension is not connected to the relay");
        return;
    }
    struct pending *p = pending_add(r);
    if (!p) {
        json_decref(params);
        if (pipe && worker_id)
            worker_reply_err(r, pipe, worker_id, "BROWSER_ERROR",
                             "too many calls in flight to the extension");
        return;
    }
    p->serial = sidx >= 0 ? r->reg.sessions[sidx].serial : 0;
    p->worker_id = worker_id;
    p->type = type;
    p->tab_id = tab_id;
    json_t *req = json_pack("{s:i, s:s, s:I, s:s, s:o}", "v", RELAY_WIRE_VERSION, "type", "req",
                            "id", (json_int_t)p->ext_id, "verb", verb, "params", params);
    if (!req || ext_send(r, req) != 0) {
        struct pending gone;
        pending_take(r, p->ext_id, &gone);
        if (pipe && worker_id)
            worker_reply_err(r, pipe, worker_id, "EXTENSION_NOT_CONNECTED",
                             "the browser extension does not take messages");
    }
    json_decref(req);
}

/* Tell the extension who owns what (the popup shows it; the extension
 * forwards events of these tabs only). */
static void push_sessions(struct relay *r)
{
    if (!ext_ready(r))
        return;
    json_t *list = json_array();
    for (int i = 0; i < REG_MAX_SESSIONS; i++) {
        struct reg_session *s = &r->reg.sessions[i];
        if (!s->used)
            continue;
        json_t *tabs = json_array();
        for (size_t t = 0; t < r->reg.ntabs; t++)
            if (r->reg.tabs[t].owner == i)
                json_array_append_new(tabs, json_pack("{s:I, s:b}", "tabId",
                                                      (json_int_t)r->reg.tabs[t].id, "created",
                                                      r->reg.tabs[t].created));
        json_array_append_new(
            list, json_pack("{s:s, s:b, s:o}", "id", s->id, "live", s->pipe != 0, "tabs", tabs));
    }
    json_t *msg =
        json_pack("{s:i, s:s, s:o}", "v", RELAY_WIRE_VERSION, "type", "sessions", "sessions", list);
    if (msg)
        ext_send(r, msg);
    json_decref(msg);
}

json_t *router_owned_list(struct relay *r)
{
    json_t *list = json_array();
    for (size_t t = 0; t < r->reg.ntabs; t++) {
        struct reg_tab *tab = &r->reg.tabs[t];
        json_array_append_new(list,
                              json_pack("{s:I, s:s, s:b}", "tabId", (json_int_t)tab->id, "session",
                                        r->reg.sessions[tab->owner].id, "attached", tab->attached));
    }
    return list;
}

static void event_to_owner(struct relay *r, int owner, json_t *body /* stolen */)
{
    if (owner >= 0 && owner < REG_MAX_SESSIONS && r->reg.sessions[owner].used &&
        r->reg.sessions[owner].pipe)
        worker_send(r, r->reg.sessions[owner].pipe, MSG_RELAY_EVENT, 0, body);
    json_decref(body);
}

/* The ids of the tabs session idx owns (new reference). */
static json_t *tab_ids_of(struct relay *r, int idx)
{
    json_t *ids = json_array();
    for (size_t t = 0; t < r->reg.ntabs; t++)
        if (r->reg.tabs[t].owner == idx)
            json_array_append_new(ids, json_integer(r->reg.tabs[t].id));
    return ids;
}

/* Tell every live worker whether the extension is there; when it is, with
 * the tabs its session owns (after a relay restart, the ones reclaimed). */
static void broadcast_ext_state(struct relay *r, bool connected)
{
    for (int i = 0; i < REG_MAX_SESSIONS; i++) {
        if (!r->reg.sessions[i].used || !r->reg.sessions[i].pipe)
            continue;
        json_t *ev = json_pack("{s:s, s:b}", "kind", "extension", "connected", connected);
        if (connected)
            json_object_set_new(ev, "tabs", tab_ids_of(r, i));
        event_to_owner(r, i, ev);
    }
}

/* The relay knows again which tabs are whose: workers may go on. */
static void ext_synced(struct relay *r)
{
    if (r->ext_synced)
        return;
    r->ext_synced = true;
    broadcast_ext_state(r, true);
    push_sessions(r);
}

/* Close the session: its created tabs are closed, shared ones detached. */
static void session_close(struct relay *r, int idx, const char *why)
{
    struct reg_tab *tabs[REG_MAX_TABS];
    size_t n = reg_session_tabs(&r->reg, idx, tabs, REG_MAX_TABS);
    log_info("session %s closed (%s): %zu tab(s)", r->reg.sessions[idx].id, why, n);
    for (size_t i = 0; i < n && ext_ready(r); i++)
        ext_request(r, -1, 0, 0, tabs[i]->id, tabs[i]->created ? "tab.close" : "tab.detach",
                    json_pack("{s:I}", "tabId", (json_int_t)tabs[i]->id));
    reg_session_free(&r->reg, idx);
    push_sessions(r);
}

/* --- worker messages --- */

static void worker_hello(struct relay *r, uint32_t pipe, uint64_t id, json_t *body)
{
    if (json_integer_value(json_object_get(body, "proto")) != PROTO_VERSION) {
        worker_reply_err(r, pipe, id, "INVALID_PARAMETERS", "protocol version mismatch");
        return;
    }
    char err[160];
    bool resumed;
    const char *sid = json_string_value(json_object_get(body, "sessionId"));
    const char *proof = json_string_value(json_object_get(body, "proof"));
    int idx = reg_session_open(&r->reg, sid, proof, pipe, &resumed, err, sizeof(err));
    if (idx < 0) {
        log_warn("worker pipe %u: hello refused: %s", pipe, err);
        worker_reply_err(r, pipe, id, "INVALID_PARAMETERS", err);
        return;
    }
    log_info("session %s %s (pid %lld)", sid, resumed ? "resumed" : "opened",
             (long long)json_integer_value(json_object_get(body, "pid")));
    /* tabs: what the session owns now, for a worker that lost the relay to
     * check that it can go on in its tabs (worker/cdp/relay.c). paired:
     * whether an extension can connect at all (there is a pairing secret);
     * the worker waits for one that can, and fails at once when none can. */
    char secret[AUTH_SECRET_HEX + 1];
    bool paired = auth_load_secret(r->secret_path, secret, err, sizeof(err)) == 0;
    OPENSSL_cleanse(secret, sizeof secret);
    worker_reply_ok(r, pipe, id,
                    json_pack("{s:b, s:b, s:b, s:o}", "extension", ext_ready(r) && r->ext_synced,
                              "paired", paired, "resumed", resumed, "tabs", tab_ids_of(r, idx)));
    push_sessions(r);
}

static json_t *tabs_of(struct relay *r, int idx)
{
    json_t *list = json_array();
    for (size_t t = 0; t < r->reg.ntabs; t++) {
        struct reg_tab *tab = &r->reg.tabs[t];
        if (tab->owner == idx)
            json_array_append_new(list,
                                  json_pack("{s:I, s:b, s:b}", "tabId", (json_int_t)tab->id,
                                            "created", tab->created, "attached", tab->attached));
    }
    return list;
}

void router_worker_msg(struct relay *r, uint32_t pipe, uint32_t type, uint64_t id, json_t *body)
{
    if (type == MSG_RELAY_HELLO) {
        worker_hello(r, pipe, id, body);
        return;
    }
    if (type == MSG_RELAY_STATUS) { /* needs no session: start-up checks use it */
        worker_reply_ok(r, pipe, id,
                        json_pack("{s:b, s:I, s:I, s:I, s:I, s:I, s:I}", "extension", ext_ready(r),
                                  "sessions", (json_int_t)reg_session_count(&r->reg), "tabs",
                                  (json_int_t)reg_tab_count(&r->reg), "extensionConnections",
                                  (json_int_t)r->ext_connections, "extensionRefused",
                                  (json_int_t)r->ext_refused, "extensionRefusedOtherUser",
                                  (json_int_t)r->ext_refused_uid, "extensionHeartbeats",
                                  (json_int_t)r->ext_heartbeats));
        return;
    }
    int idx = reg_session_by_pipe(&r->reg, pipe);
    if (idx < 0) {
        worker_reply_err(r, pipe, id, "INVALID_PARAMETERS", "no session: send relay-hello first");
        return;
    }
    int64_t tab_id = json_integer_value(json_object_get(body, "tabId"));
    struct reg_tab *tab = NULL;
    switch (type) {
    case MSG_RELAY_TAB_ATTACH:
    case MSG_RELAY_TAB_DETACH:
    case MSG_RELAY_TAB_CLOSE:
    case MSG_RELAY_CDP:
        tab = reg_tab_owned(&r->reg, idx, tab_id);
        if (!tab) {
            worker_reply_err(r, pipe, id, "TAB_NOT_FOUND", "no such tab in this session");
            return;
        }
        break;
    default:
        break;
    }
    switch (type) {
    case MSG_RELAY_TABS:
        worker_reply_ok(r, pipe, id, json_pack("{s:o}", "tabs", tabs_of(r, idx)));
        return;
    case MSG_RELAY_BYE:
        worker_reply_ok(r, pipe, id, json_object());
        session_close(r, idx, "bye");
        return;
    case MSG_RELAY_TAB_CREATE: {
        const char *url = json_string_value(json_object_get(body, "url"));
        const char *why = url ? router_url_refused(url) : NULL;
        if (why) {
            worker_reply_err(r, pipe, id, "INVALID_PARAMETERS", why);
            return;
        }
        ext_request(r, idx, id, type, 0, "tab.create",
                    json_pack("{s:s, s:s}", "url", url ? url : "about:blank", "session",
                              r->reg.sessions[idx].id));
        return;
    }
    case MSG_RELAY_TAB_ATTACH:
        ext_request(r, idx, id, type, tab_id, "tab.attach",
                    json_pack("{s:I}", "tabId", (json_int_t)tab_id));
        return;
    case MSG_RELAY_TAB_DETACH:
        ext_request(r, idx, id, type, tab_id, "tab.detach",
                    json_pack("{s:I}", "tabId", (json_int_t)tab_id));
        return;
    case MSG_RELAY_TAB_CLOSE:
        ext_request(r, idx, id, type, tab_id, "tab.close",
                    json_pack("{s:I}", "tabId", (json_int_t)tab_id));
        return;
    case MSG_RELAY_CDP: {
        const char *method = json_string_value(json_object_get(body, "method"));
        json_t *params = json_object_get(body, "params");
        const char *why = router_cdp_refused(method, params);
        if (why) {
            worker_reply_err(r, pipe, id, "NOT_SUPPORTED", why);
            return;
        }
        const char *cs = json_string_value(json_object_get(body, "cdpSession"));
        /* A child session of another tab (another session's iframe, say)
         * is not this tab's to name. */
        if (cs && !children_of_tab(r, cs, tab_id)) {
            worker_reply_err(r, pipe, id, "TAB_NOT_FOUND", "no such child session in this tab");
            return;
        }
        json_t *p = json_pack("{s:I, s:s}", "tabId", (json_int_t)tab_id, "method", method);
        json_object_set_new(p, "params", params ? json_incref(params) : json_object());
        if (cs)
            json_object_set_new(p, "sessionId", json_string(cs));
        ext_request(r, idx, id, type, tab_id, "cdp", p);
        return;
    }
    case MSG_RELAY_GROUP: {
        json_t *ids = json_array();
        for (size_t t = 0; t < r->reg.ntabs; t++)
            if (r->reg.tabs[t].owner == idx)
                json_array_append_new(ids, json_integer(r->reg.tabs[t].id));
        const char *title = json_string_value(json_object_get(body, "title"));
        const char *color = json_string_value(json_object_get(body, "color"));
        /* No title: the extension labels the group; a title is readable by
         * every extension, so it is never the session id (the capability). */
        json_t *p = json_pack("{s:s, s:o}", "session", r->reg.sessions[idx].id, "tabIds", ids);
        if (title)
            json_object_set_new(p, "title", json_string(title));
        if (color)
            json_object_set_new(p, "color", json_string(color));
        ext_request(r, idx, id, type, 0, "tab.group", p);
        return;
    }
    default:
        worker_reply_err(r, pipe, id, "INVALID_PARAMETERS", "not a request to the relay");
        return;
    }
}

void router_worker_gone(struct relay *r, uint32_t pipe)
{
    int idx = reg_session_by_pipe(&r->reg, pipe);
    if (idx < 0)
        return;
    log_info("session %s: worker gone; kept for %d s", r->reg.sessions[idx].id,
             RELAY_GRACE_MS / 1000);
    reg_session_orphan(&r->reg, idx, relay_now_ms() + RELAY_GRACE_MS);
    push_sessions(r);
}

/* --- the extension --- */

void router_ext_up(struct relay *r)
{
    r->ext_lost_ms = 0;
    r->ext_synced = false;
    r->ext_up_ms = relay_now_ms();
    push_sessions(r);
}

void router_ext_down(struct relay *r)
{
    r->ext_lost_ms = relay_now_ms();
    r->ext_synced = false;
    /* Calls in flight cannot be answered any more: fail them now rather
     * than at their deadline. */
    while (r->npend) {
        struct pending p = r->pend[--r->npend];
        reply_err_serial(r, &p, "EXTENSION_NOT_CONNECTED",
                         "the browser extension went away during the call");
    }
    broadcast_ext_state(r, false);
}

/* The answer to a tab.create: the new tab joins the session that asked. */
static void created(struct relay *r, const struct pending *p, const json_t *result)
{
    json_t *tid = json_object_get(result, "tabId");
    int64_t tab_id = json_is_integer(tid) ? json_integer_value(tid) : 0;
    int idx = reg_session_by_serial(&r->reg, p->serial);
    uint32_t pipe = idx >= 0 ? r->reg.sessions[idx].pipe : 0;
    if (tab_id <= 0 || tab_id > INT32_MAX) {
        if (pipe)
            worker_reply_err(r, pipe, p->worker_id, "BROWSER_ERROR",
                             "the extension gave no tab id");
        return;
    }
    if (idx < 0 || reg_tab_add(&r->reg, tab_id, idx, true) != 0) {
        /* The session closed meanwhile (or the tab is somebody else's, which
         * a fresh tab cannot be): do not leave the tab behind. */
        if (idx < 0)
            ext_request(r, -1, 0, 0, tab_id, "tab.close",
                        json_pack("{s:I}", "tabId", (json_int_t)tab_id));
        if (pipe)
            worker_reply_err(r, pipe, p->worker_id, "BROWSER_ERROR", "tab registry full");
        return;
    }
    if (pipe)
        worker_reply_ok(r, pipe, p->worker_id, json_pack("{s:I}", "tabId", (json_int_t)tab_id));
    push_sessions(r);
}

static void ext_response(struct relay *r, const struct ext_msg *m)
{
    struct pending p;
    if (!pending_take(r, (uint32_t)m->id, &p)) {
        log_debug("extension: response to unknown request %llu", (unsigned long long)m->id);
        return;
    }
    uint32_t pipe = serial_pipe(r, p.serial);
    if (!m->ok) {
        const char *code = json_string_value(json_object_get(m->error, "code"));
        const char *msg = json_string_value(json_object_get(m->error, "message"));
        /* Only codes of docs/errors.md travel on; anything else is the
         * browser's business. */
        if (tv_err_from_code(code) == TV_OK)
            code = "BROWSER_ERROR";
        if (tv_err_from_code(code) == TV_TAB_NOT_FOUND && p.tab_id) {
            int owner = reg_tab_remove(&r->reg, p.tab_id);
            if (owner >= 0)
                push_sessions(r);
        }
        if (pipe && p.worker_id)
            worker_reply_err(r, pipe, p.worker_id, code, msg);
        return;
    }
    int idx = reg_session_by_serial(&r->reg, p.serial);
    struct reg_tab *tab = p.tab_id ? reg_tab_owned(&r->reg, idx, p.tab_id) : NULL;
    switch (p.type) {
    case MSG_RELAY_TAB_CREATE:
        created(r, &p, m->result);
        return;
    case MSG_RELAY_TAB_ATTACH:
        if (tab)
            tab->attached = true;
        break;
    case MSG_RELAY_TAB_DETACH:
        if (tab)
            tab->attached = false;
        break;
    case MSG_RELAY_TAB_CLOSE:
        if (tab) {
            reg_tab_remove(&r->reg, p.tab_id);
            push_sessions(r);
        }
        break;
    case MSG_RELAY_CDP:
        if (tab)
            tab->attached = true; /* the extension attaches on first use */
        break;
    default:
        break;
    }
    if (pipe && p.worker_id)
        worker_reply_ok(r, pipe, p.worker_id, m->result ? json_incref(m->result) : json_object());
}

/* The extension's claims after this relay's start: tabs it had given to
 * sessions of the relay before this one (which was killed, or crashed).
 * Each joins its session, made now (orphaned, kept for the grace period)
 * when no worker of that id has come yet; the worker's hello takes it back
 * and goes on in its tabs. Only the first extension connection's claims
 * count: after that the relay's own registry is the truth. */
static void ext_claims(struct relay *r, const json_t *claims)
{
    size_t i, n = 0;
    const json_t *c;
    json_array_foreach(claims, i, c)
    {
        int64_t tab_id = json_integer_value(json_object_get(c, "tabId"));
        const char *sid = json_string_value(json_object_get(c, "session"));
        bool created = json_is_true(json_object_get(c, "created"));
        if (reg_tab_get(&r->reg, tab_id))
            continue;
        int idx = reg_session_claim(&r->reg, sid, relay_now_ms() + RELAY_GRACE_MS);
        if (idx < 0 || reg_tab_add(&r->reg, tab_id, idx, created) != 0) {
            log_warn("extension: claim of tab %lld for '%s' refused (registry full or bad id)",
                     (long long)tab_id, sid);
            continue;
        }
        /* The extension claims only tabs its debugger is attached to, with
         * the child sessions (iframes) chrome.debugger still has open. */
        reg_tab_get(&r->reg, tab_id)->attached = true;
        size_t k;
        const json_t *child;
        json_array_foreach(json_object_get(c, "children"), k, child)
        {
            json_t *params = json_pack("{s:s}", "sessionId", json_string_value(child));
            children_note_event(r, tab_id, "Target.attachedToTarget", params);
            json_decref(params);
        }
        n++;
    }
    if (n)
        log_info("extension: %zu tab(s) of a previous relay reclaimed", n);
}

/* The extension's list of tabs that still exist after a reconnect: owned
 * tabs not in it are gone. */
static void ext_state(struct relay *r, const json_t *present)
{
    bool changed = false;
    for (size_t t = 0; t < r->reg.ntabs;) {
        int64_t id = r->reg.tabs[t].id;
        bool found = false;
        size_t i;
        const json_t *v;
        json_array_foreach(present, i, v) if (json_integer_value(v) == id) found = true;
        if (found) {
            t++;
            continue;
        }
        int owner = reg_tab_remove(&r->reg, id);
        event_to_owner(r, owner, json_pack("{s:s, s:I}", "kind", "removed", "tabId", id));
        changed = true;
    }
    if (changed)
        push_sessions(r);
}

void router_ext_msg(struct relay *r, const struct ext_msg *m)
{
    switch (m->kind) {
    case EXT_RES:
        ext_response(r, m);
        return;
    case EXT_HEARTBEAT: {
        r->ext_heartbeats++;
        json_t *hb = json_pack("{s:i, s:s}", "v", RELAY_WIRE_VERSION, "type", "heartbeat");
        ext_send(r, hb);
        json_decref(hb);
        return;
    }
    case EXT_EVENT_CDP: {
        struct reg_tab *tab = reg_tab_get(&r->reg, m->tab_id);
        if (!tab)
            return; /* nobody's tab: dropped */
        children_note_event(r, m->tab_id, m->method, m->params);
        json_t *ev = json_pack("{s:s, s:I, s:s}", "kind", "cdp", "tabId", (json_int_t)m->tab_id,
                               "method", m->method);
        if (m->params)
            json_object_set(ev, "params", m->params);
        if (m->session)
            json_object_set_new(ev, "cdpSession", json_string(m->session));
        event_to_owner(r, tab->owner, ev);
        return;
    }
    case EXT_EVENT_DETACHED: {
        struct reg_tab *tab = reg_tab_get(&r->reg, m->tab_id);
        if (!tab)
            return;
        tab->attached = false;
        children_forget_tab(r, m->tab_id);
        event_to_owner(r, tab->owner,
                       json_pack("{s:s, s:I, s:s}", "kind", "detached", "tabId",
                                 (json_int_t)m->tab_id, "reason", m->reason));
        return;
    }
    case EXT_EVENT_REMOVED: {
        children_forget_tab(r, m->tab_id);
        int owner = reg_tab_remove(&r->reg, m->tab_id);
        if (owner < 0)
            return;
        event_to_owner(r, owner,
                       json_pack("{s:s, s:I}", "kind", "removed", "tabId", (json_int_t)m->tab_id));
        push_sessions(r);
        return;
    }
    case EXT_EVENT_OPENED_BY: {
        int owner = reg_tab_opened_by(&r->reg, m->tab_id, m->opener);
        if (owner < 0)
            return;
        event_to_owner(r, owner,
                       json_pack("{s:s, s:I, s:I}", "kind", "opened-by", "tabId",
                                 (json_int_t)m->tab_id, "openerTabId", (json_int_t)m->opener));
        push_sessions(r);
        return;
    }
    case EXT_EVENT_STATE:
        ext_state(r, m->present);
        if (!r->claims_taken && m->claims)
            ext_claims(r, m->claims);
        r->claims_taken = true;
        if (r->ext_synced)
            push_sessions(r);
        ext_synced(r);
        return;
    case EXT_EVENT_GRANTED: {
        /* The user gave one of their tabs to a session in the popup: the
         * only way a tab the session did not open becomes its own. */
        int idx = reg_session_by_id(&r->reg, m->session);
        if (idx < 0 || reg_tab_add(&r->reg, m->tab_id, idx, false) != 0) {
            log_warn("extension: tab %lld not granted to '%s' (%s)", (long long)m->tab_id,
                     m->session, idx < 0 ? "no such session" : "owned by another session");
            push_sessions(r); /* the popup shows the truth again */
            return;
        }
        log_info("tab %lld granted to session %s", (long long)m->tab_id, m->session);
        event_to_owner(r, idx,
                       json_pack("{s:s, s:I}", "kind", "granted", "tabId", (json_int_t)m->tab_id));
        push_sessions(r);
        return;
    }
    case EXT_EVENT_REVOKED: {
        children_forget_tab(r, m->tab_id);
        int owner = reg_tab_remove(&r->reg, m->tab_id);
        if (owner < 0)
            return;
        log_info("tab %lld no longer shared with session %s", (long long)m->tab_id,
                 r->reg.sessions[owner].id);
        event_to_owner(r, owner,
                       json_pack("{s:s, s:I}", "kind", "revoked", "tabId", (json_int_t)m->tab_id));
        push_sessions(r);
        return;
    }
    case EXT_AUTH:
    case EXT_PAIR:
        log_warn("extension: auth or pair after authentication ignored");
        return;
    }
}

void router_tick(struct relay *r, int64_t now)
{
    if (ext_ready(r) && !r->ext_synced && now - r->ext_up_ms > RELAY_SYNC_MS) {
        log_warn("extension: no state within %d ms of its authentication", RELAY_SYNC_MS);
        ext_synced(r);
    }
    for (size_t i = 0; i < r->npend;) {
        if (r->pend[i].deadline_ms > now) {
            i++;
            continue;
        }
        struct pending p = r->pend[i];
        r->pend[i] = r->pend[--r->npend];
        reply_err_serial(r, &p, "TIMEOUT", "the browser extension did not answer in time");
    }
    if (json_object_size(r->children))
        children_prune(r);
    int idx[REG_MAX_SESSIONS];
    size_t n = reg_expired(&r->reg, now, idx, REG_MAX_SESSIONS);
    for (size_t i = 0; i < n; i++)
        session_close(r, idx[i], "worker did not come back");
    /* The extension stayed away past the grace period: its tab ids mean
     * nothing any more (the browser may have restarted). */
    if (r->ext_lost_ms && now - r->ext_lost_ms > RELAY_GRACE_MS && r->reg.ntabs) {
        log_info("extension away for %d s: forgetting %zu tab(s)", RELAY_GRACE_MS / 1000,
                 r->reg.ntabs);
        while (r->reg.ntabs) {
            int64_t id = r->reg.tabs[0].id;
            int owner = reg_tab_remove(&r->reg, id);
            event_to_owner(r, owner,
                           json_pack("{s:s, s:I, s:s}", "kind", "removed", "tabId", (json_int_t)id,
                                     "reason", "extension gone"));
        }
    }
}
