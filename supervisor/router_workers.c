/*
 * router_workers.c - what workers and browsers tell the router: a worker
 * ready (or failed to start), a result or progress of a call, a worker that
 * exited, a browser that died. Each fails or answers the calls concerned
 * and lets the session's next call get a fresh worker (router_int.h).
 */
#include "router.h"

#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "browser.h"
#include "clock.h"
#include "codec.h"
#include "errors.h"
#include "log.h"
#include "memtrim.h"
#include "mcp_conn.h"
#include "metrics.h"
#include "pool.h"
#include "proto.h"
#include "server.h"
#include "sessions.h"
#include "workers.h"
#include "router_int.h"

/* --- from workers --- */

/* The first worker of a browser_session_create never got ready: answer the
 * create with the error and drop the session, which nobody can use yet. */
/* Extension mode: a worker that could not start because the user's browser
 * cannot be reached, or refused what it needed (its message carries the
 * relay's code, worker/cdp/relay.c), says so with that code. */
static enum tv_err start_error(const char *msg, const char **hint)
{
    if (msg && strstr(msg, "EXTENSION_NOT_CONNECTED:")) {
        *hint = "Check that the tabvisor extension is installed, paired (tabvisor-relay pair) "
                "and connected (its popup shows the relay).";
        return TV_EXTENSION_NOT_CONNECTED;
    }
    if (msg && strstr(msg, "NOT_SUPPORTED:")) {
        *hint = "Extension mode cannot do this in the user's browser (docs/extension-mode.md).";
        return TV_NOT_SUPPORTED;
    }
    return TV_BROWSER_ERROR;
}

static void create_failed(struct sess *ss, const char *msg, const char *hint)
{
    struct call *c = ss->create_call;
    ss->create_call = NULL;
    /* The worker says "storageState: ..." when the file it was given is at
     * fault (workers.c passes it; worker/tools/storage_state.c loads it). */
    enum tv_err code = start_error(msg, &hint);
    bool state = code == TV_BROWSER_ERROR && msg && strncmp(msg, "storageState:", 13) == 0;
    call_reply(c,
               router_error(state ? TV_INVALID_PARAMETERS : code, msg,
                            state ? "Give a file saved by browser_storage_state, relative to the "
                                    "output dir."
                                  : hint,
                            ss->s->id));
    call_free(ss->srv, c);
    sess_close(ss, false, "worker failed to start");
}

void router_worker_ready(struct server *srv, struct worker *w, const char *error)
{
    struct sess *ss = w->owner;
    if (!ss || ss->w != w)
        return;
    if (error) {
        ss->w = NULL; /* workers.c stops it */
        log_error("session %s: worker failed to start: %s", ss->s->id, error);
        if (ss->create_call) {
            create_failed(ss, error, "Check that Chromium starts.");
            return;
        }
        struct call *c = call_pop_head(ss);
        if (c) {
            const char *hint = "Check that Chromium starts.";
            enum tv_err code = start_error(error, &hint);
            call_reply(c, router_error(code, error, hint, ss->s->id));
            call_free(srv, c);
        }
        sess_pump(ss); /* the calls queued behind it get a fresh worker, as after a crash */
        return;
    }
    ss->ever_ready = true;
    if (w->restored) {
        json_decref(ss->restored);
        ss->restored = w->restored; /* for the restart notice */
        w->restored = NULL;
    }
    if (ss->create_call)
        session_created(srv, ss);
    sess_pump(ss);
}

/* The hint of a call that failed for a crash: what the next call finds. */
static const char *restart_hint(const struct sess *ss, bool worker)
{
    if (ss->state)
        return worker ? "The session id stays valid: the next call starts a fresh browser context "
                        "and restores the session's tabs, cookies and storage into it."
                      : "The next call starts a fresh browser context and restores the "
                        "session's tabs, cookies and storage into it.";
    return worker ? "The session id stays valid: the next call starts a fresh browser context "
                    "(page state is lost)."
                  : "The next call starts a fresh browser context (page state is lost).";
}

/* The restart notice: what was lost, or what the restore brought back and
 * what it could not (the worker's READY report, borrowed; NULL: nothing was
 * saved before the crash). */
static json_t *restart_notice(json_t *restored)
{
    if (!restored)
        return json_string("Note: this session's worker or the browser had crashed; this call ran "
                           "in a fresh browser context, so earlier page state (tabs, cookies, "
                           "storage) was lost.");
    json_t *tabs = json_object_get(restored, "tabs");
    json_t *lost = json_object_get(restored, "notRestored");
    char *text = NULL;
    size_t text_len = 0;
    FILE *f = open_memstream(&text, &text_len);
    if (!f)
        return json_string("Note: this session's worker or the browser had crashed; its state "
                           "was restored into a fresh browser context.");
    fprintf(f,
            "Note: this session's worker or the browser had crashed; this call ran in a fresh "
            "browser context into which the session's state was restored: %zu tab(s)",
            json_array_size(tabs));
    size_t i;
    json_t *v;
    json_array_foreach(tabs, i, v)
    {
        if (i < 8)
            fprintf(f, "%s%.200s", i ? ", " : " (", json_string_value(v) ?: "?");
    }
    fprintf(f, "%s", json_array_size(tabs) > 8 ? ", ...)" : json_array_size(tabs) ? ")" : "");
    fprintf(f, ", %lld cookie(s), localStorage of %lld origin(s), sessionStorage of %lld tab(s)",
            (long long)json_integer_value(json_object_get(restored, "cookies")),
            (long long)json_integer_value(json_object_get(restored, "localStorageOrigins")),
            (long long)json_integer_value(json_object_get(restored, "sessionStorageTabs")));
    if (json_object_get(restored, "viewport"))
        fprintf(f, ", the viewport");
    if (json_object_get(restored, "media"))
        fprintf(f, ", media emulation");
    fprintf(f, ". In-page state (script variables, unsaved form input, scroll) was lost.");
    json_array_foreach(lost, i, v)
    {
        if (i < 8)
            fprintf(f, "%s%.300s", i ? "; " : " Not restored: ", json_string_value(v) ?: "?");
    }
    if (json_array_size(lost))
        fprintf(f, ".");
    fclose(f);
    json_t *out = json_string(text ? text : "");
    free(text);
    return out;
}

/* Turn a worker's MSG_RESULT body into an MCP CallToolResult for ss. */
static json_t *make_result(struct sess *ss, json_t *body)
{
    json_t *content = json_object_get(body, "content");
    json_t *structured = json_object_get(body, "structured");
    json_t *result = json_object();
    json_object_set_new(result, "content",
                        json_is_array(content) ? json_incref(content) : json_array());
    json_object_set_new(result, "structuredContent",
                        json_is_object(structured) ? json_incref(structured) : json_object());
    json_object_set_new(result, "isError",
                        json_boolean(json_is_true(json_object_get(body, "isError"))));
    structured = json_object_get(result, "structuredContent");
    json_object_set_new(structured, "sessionId", json_string(ss->s->id));
    if (ss->restarted_notice) {
        ss->restarted_notice = false;
        json_object_set_new(structured, "sessionRestarted", json_true());
        if (ss->restored)
            json_object_set(structured, "sessionRestored", ss->restored);
        json_array_insert_new(
            json_object_get(result, "content"), 0,
            json_pack("{s:s, s:o}", "type", "text", "text", restart_notice(ss->restored)));
        json_decref(ss->restored);
        ss->restored = NULL;
    }
    return result;
}

void router_worker_message(struct server *srv, struct worker *w, struct proto_msg *msg)
{
    struct sess *ss = w->owner;
    if (!ss || ss->w != w)
        return;
    switch (msg->type) {
    case MSG_RESULT: {
        struct call *c = ss->head;
        if (c && c->sent && c->id == msg->id) {
            call_pop_head(ss);
            call_reply(c, make_result(ss, msg->body));
            call_free(srv, c);
        } else {
            log_warn("session %s: result for unknown call %llu dropped", ss->s->id,
                     (unsigned long long)msg->id);
        }
        if (json_is_true(json_object_get(msg->body, "final"))) {
            /* It exits now; the next call goes to a fresh worker. */
            worker_discard(w, "it said its result was its last");
            ss->w = NULL;
            ss->restarted_notice = ss->ever_ready;
        }
        sess_pump(ss);
        break;
    }
    case MSG_PROGRESS: {
        struct call *c = ss->head;
        if (c && c->id == msg->id && c->progress_token && c->conn && !c->replied)
            call_send_progress(c, json_deep_copy(msg->body),
                               json_number_value(json_object_get(msg->body, "progress")));
        break;
    }
    case MSG_STATE: {
        /* Kept for the session's next worker, should this one die. */
        json_t *st = json_object_get(msg->body, "state");
        char *text = json_dumps(st, JSON_COMPACT);
        size_t len = text ? strlen(text) : 0;
        free(text);
        if (len > SESSION_STATE_MAX) {
            log_warn("session %s: state of %zu bytes refused (over %u)", ss->s->id, len,
                     SESSION_STATE_MAX);
            break;
        }
        json_decref(ss->state);
        ss->state = json_incref(st);
        ss->state_bytes = len;
        break;
    }
    case MSG_EVENT: {
        const char *kind = json_string_value(json_object_get(msg->body, "kind"));
        log_info("session %s: event %s", ss->s->id, kind ? kind : "?");
        break;
    }
    default:
        log_warn("session %s: unexpected %s from worker", ss->s->id, proto_msg_name(msg->type));
        break;
    }
}

void router_worker_exited(struct server *srv, struct worker *w, int status)
{
    struct sess *ss = w->owner;
    if (!ss || ss->w != w)
        return;
    ss->w = NULL;
    metrics_worker_crash();
    if (ss->create_call) {
        create_failed(ss, "the session's worker exited while starting", NULL);
        return;
    }
    if (ss->ever_ready)
        ss->restarted_notice = true;
    struct call *c = ss->head;
    if (c && c->sent && w->exiting) {
        /* It said it was leaving before it read this call, and runs
         * nothing after that: the call goes to the next worker. */
        c->sent = false;
    } else if (c && c->sent) {
        call_pop_head(ss);
        /* A worker whose browser died exits as soon as its connection
         * closes, and may be reaped before the browser is: the call failed
         * because the browser died, as router_browser_died would say. */
        if (browser_dying(w->browser))
            call_reply(c, router_error(TV_BROWSER_CRASHED, "the browser exited during this call",
                                       restart_hint(ss, false), ss->s->id));
        else
            call_reply(c, router_error(TV_SESSION_CRASHED,
                                       "the session's worker process died during this call",
                                       restart_hint(ss, true), ss->s->id));
        call_free(srv, c);
    }
    sess_pump(ss); /* queued calls get a fresh worker */
}

void router_session_gauges(struct server *srv, size_t by_state[SESSION_STATES])
{
    for (int k = 0; k < SESSION_STATES; k++)
        by_state[k] = 0;
    for (size_t i = 0; i < session_count(srv->sessions); i++) {
        struct sess *ss = session_at(srv->sessions, i)->ctx;
        int st = SESSION_STARTING;
        if (ss && ss->w && ss->w->state == W_READY)
            st = SESSION_IDLE;
        else if (ss && ss->w && ss->w->state == W_BUSY)
            st = SESSION_BUSY;
        else if (ss && ss->w && ss->w->state == W_STOPPING)
            st = SESSION_STOPPING;
        by_state[st]++;
    }
}

void router_browser_died(struct server *srv, struct browser *b)
{
    metrics_browser_restart();
    /* Pooled workers of a shared browser lost their contexts with it;
     * housekeeping starts new ones. (A dedicated one dies with its worker.) */
    if (!srv->cfg.dedicated)
        pool_drain(srv);
    log_warn("a browser exited; its sessions continue in a new one");
    /* Every worker's context died with the browser. Each would notice its
     * connection closing and exit, but a call sent before that exit is seen
     * would fail as a worker crash. So let go of them all now: a call in
     * flight fails here with BROWSER_CRASHED (unless its worker answered
     * first), and the next call of each session gets a fresh worker, which
     * starts a new browser. */
    for (size_t i = 0; i < session_count(srv->sessions); i++) {
        struct sess *ss = session_at(srv->sessions, i)->ctx;
        if (!ss->w || ss->w->browser != b)
            continue; /* dedicated mode: another session's browser */
        worker_discard(ss->w, "its browser died");
        ss->w = NULL;
        if (ss->ever_ready)
            ss->restarted_notice = true;
        struct call *c = ss->head;
        if (c && c->sent) {
            call_pop_head(ss);
            call_reply(c, router_error(TV_BROWSER_CRASHED, "the browser exited during this call",
                                       restart_hint(ss, false), ss->s->id));
            call_free(srv, c);
        }
        sess_pump(ss); /* queued calls, or a session being created, get a fresh worker */
    }
}
