/*
 * router.c - the session router: per-session FIFO of calls, deadlines,
 * cancellation, crash handling and idle expiry.
 */
#include "router.h"

#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "codec.h"
#include "errors.h"
#include "log.h"
#include "memtrim.h"
#include "upload_roots.h"
#include "mcp_conn.h"
#include "metrics.h"
#include "pool.h"
#include "proto.h"
#include "server.h"
#include "sessions.h"
#include "workers.h"
#include "router_int.h"

#define HOUSEKEEPING_MS 1000
#define DEADLINE_SLACK_MS 500 /* the worker answers TIMEOUT itself; this is our backstop */

/* --- results --- */

/* Send result (stolen) for c unless it already has an answer. */
void call_reply(struct call *c, json_t *result)
{
    if (!c->replied) {
        const char *code = json_string_value(json_object_get(
            json_object_get(json_object_get(result, "structuredContent"), "error"), "code"));
        bool failed = json_is_true(json_object_get(result, "isError"));
        metrics_call_done(c->tool->name, failed ? (code ? code : "error") : "ok",
                          mono_ms() - c->started);
    }
    if (!c->replied && c->conn)
        c->conn->srv->front->reply(c->conn, c->rpc_id, result);
    else
        json_decref(result);
    c->replied = true;
}

void call_free(struct server *srv, struct call *c)
{
    loop_del_timer(srv->loop, c->timer);
    loop_del_timer(srv->loop, c->progress_timer);
    if (c->sess) {
        c->sess->s->busy--;
        session_touch(srv->sessions, c->sess->s, wall_ms());
    }
    json_decref(c->rpc_id);
    json_decref(c->args);
    json_decref(c->progress_token);
    free(c);
}

struct call *call_pop_head(struct sess *ss)
{
    struct call *c = ss->head;
    if (c) {
        ss->head = c->next;
        if (!ss->head)
            ss->tail = NULL;
    }
    return c;
}

static void unlink_call(struct sess *ss, struct call *c)
{
    struct call *prev = NULL;
    for (struct call *p = ss->head; p; prev = p, p = p->next) {
        if (p != c)
            continue;
        if (prev)
            prev->next = c->next;
        else
            ss->head = c->next;
        if (ss->tail == c)
            ss->tail = prev;
        return;
    }
}

/* --- progress --- */

#define PROGRESS_HEARTBEAT_MS 1000

/* notifications/progress for c. params (stolen) gets the token and a value
 * above the last one sent: a worker's own stages keep their numbers when they
 * grow, heartbeats add a thousandth (a call lasts at most 600 s, so they
 * never reach the worker's next whole step). */
void call_send_progress(struct call *c, json_t *params, double value)
{
    if (!(value > c->progress_last))
        value = c->progress_last + 0.001;
    c->progress_last = value;
    json_object_set(params, "progressToken", c->progress_token);
    json_object_set_new(params, "progress", json_real(value));
    json_t *n = json_pack("{s:s, s:s, s:o}", "jsonrpc", "2.0", "method", "notifications/progress",
                          "params", params);
    c->conn->srv->front->notify(c->conn, n);
    json_decref(n);
}

/* While a call with a progressToken runs, say every second that it still
 * does, so a client can tell a long call from a lost one. */
static void on_progress_heartbeat(struct loop *l, void *ud)
{
    struct call *c = ud;
    c->progress_timer = 0;
    if (c->replied || !c->conn)
        return;
    char msg[160];
    snprintf(msg, sizeof msg, "%s still running (%lld s)", c->tool->name,
             (mono_ms() - c->started) / 1000);
    call_send_progress(c, json_pack("{s:s}", "message", msg), c->progress_last + 0.001);
    c->progress_timer = loop_add_timer(l, PROGRESS_HEARTBEAT_MS, on_progress_heartbeat, c);
}

/* --- session lifetime --- */

static struct sess *sess_new(struct server *srv, struct session *s)
{
    struct sess *ss = calloc(1, sizeof *ss);
    if (!ss)
        abort();
    ss->srv = srv;
    ss->s = s;
    s->ctx = ss;
    return ss;
}

/* Close a session: fail its calls, stop its worker, drop it from the table
 * (as expired when expired is true, so the id answers SESSION_EXPIRED). */
void sess_close(struct sess *ss, bool expired, const char *why)
{
    struct server *srv = ss->srv;
    char sid[SESSION_ID_LEN + 1];
    snprintf(sid, sizeof sid, "%s", ss->s->id);
    log_info("session %s closed (%s)", sid, why);
    struct call *c;
    while ((c = call_pop_head(ss))) {
        call_reply(c, router_error(expired ? TV_SESSION_EXPIRED : TV_CANCELLED, why, NULL, sid));
        call_free(srv, c);
    }
    if (ss->create_call) {
        call_reply(ss->create_call, router_error(TV_CANCELLED, why, NULL, sid));
        call_free(srv, ss->create_call);
        ss->create_call = NULL;
    }
    if (ss->w) {
        worker_stop(ss->w, STOP_GRACE_MS);
        ss->w = NULL;
    }
    if (expired)
        session_expire(srv->sessions, ss->s);
    else
        session_remove(srv->sessions, ss->s);
    json_decref(ss->state);
    json_decref(ss->restored);
    free(ss);
}

/* --- calls --- */

static void on_grace_expired(struct loop *l, void *ud)
{
    struct call *c = ud;
    c->timer = 0;
    /* Still in flight long after its deadline: the worker is hung. Killing it
     * fails nothing else: the call already has its TIMEOUT answer. */
    if (c->sess && c->sess->w)
        worker_kill(c->sess->w, "call ran past its deadline");
}

static void on_deadline(struct loop *l, void *ud)
{
    struct call *c = ud;
    struct sess *ss = c->sess;
    struct server *srv = ss->srv;
    c->timer = 0;
    char msg[160];
    snprintf(msg, sizeof msg, "%s did not finish within its timeout", c->tool->name);
    if (c == ss->create_call) {
        call_reply(c, router_error(TV_TIMEOUT, "the browser session did not start in time", NULL,
                                   ss->s->id));
        sess_close(ss, false, "start timed out");
        return;
    }
    if (!c->sent) {
        unlink_call(ss, c);
        call_reply(c, router_error(TV_TIMEOUT, msg,
                                   "Earlier calls on this session were still running.", ss->s->id));
        call_free(srv, c);
        return;
    }
    call_reply(c, router_error(TV_TIMEOUT, msg, "Raise 'timeout' or check the page.", ss->s->id));
    if (ss->w)
        worker_send_cancel(ss->w, c->id);
    c->timer = loop_add_timer(srv->loop, srv->cfg.grace_ms, on_grace_expired, c);
}

struct call *call_new(struct server *srv, struct mcp_conn *conn, json_t *rpc_id,
                      const struct tool_def *tool, json_t *args, json_t *ptoken)
{
    struct call *c = calloc(1, sizeof *c);
    if (!c)
        abort();
    c->id = ++srv->next_call_id;
    c->conn = conn;
    c->rpc_id = json_incref(rpc_id);
    c->tool = tool;
    c->args = args ? json_incref(args) : json_object();
    c->progress_token = ptoken ? json_incref(ptoken) : NULL;
    json_t *t = json_object_get(c->args, "timeout");
    long long timeout = json_is_integer(t) ? json_integer_value(t) : tool->default_timeout_ms;
    c->started = mono_ms();
    c->deadline = c->started + timeout;
    return c;
}

void call_attach(struct sess *ss, struct call *c)
{
    c->sess = ss;
    ss->s->busy++;
    session_touch(ss->srv->sessions, ss->s, wall_ms());
    c->timer =
        loop_add_timer(ss->srv->loop, c->deadline - mono_ms() + DEADLINE_SLACK_MS, on_deadline, c);
}

void sess_pump(struct sess *ss)
{
    struct call *c = ss->head;
    if (!c && !ss->create_call)
        return;
    if (!ss->w) {
        if (ss->ever_ready)
            metrics_worker_restart();
        ss->w = worker_start(ss->srv, &router_worker_events, ss, ss->s->id, ss->ever_ready);
        /* A restarted one gets the session's state as its last worker saw it
         * (worker/session_state.c); browser_session_create's storageState
         * goes to the session's first worker only. */
        if (ss->w && ss->ever_ready && ss->state)
            ss->w->restore = json_incref(ss->state);
        const char *state =
            ss->create_call
                ? json_string_value(json_object_get(ss->create_call->args, "storageState"))
                : NULL;
        if (ss->w && state)
            snprintf(ss->w->storage_state, sizeof ss->w->storage_state, "%s", state);
        return;
    }
    if (c && !c->sent && ss->w->state == W_READY) {
        bool progress = c->progress_token != NULL;
        int r = worker_send_call(ss->w, c->id, c->tool->name, c->args, c->deadline, progress);
        if (r == CHANNEL_TOO_BIG) {
            /* The call itself is at fault, not the worker: fail it alone. */
            call_pop_head(ss);
            call_reply(
                c, router_error(TV_INVALID_PARAMETERS,
                                "the arguments are too large to pass to the session's worker",
                                "See docs/limits.md for the limits on one message.", ss->s->id));
            call_free(ss->srv, c);
            sess_pump(ss);
            return;
        }
        if (r < 0) {
            worker_kill(ss->w, "could not send a call");
            return;
        }
        c->sent = true;
        if (c->progress_token)
            c->progress_timer =
                loop_add_timer(ss->srv->loop, PROGRESS_HEARTBEAT_MS, on_progress_heartbeat, c);
    }
}

/* A new session, on a pooled worker when one is ready (pool.h): then the
 * session takes the worker's id and has it at once, READY. Without one, the
 * session gets a fresh id and sess_pump() starts its worker. */
enum tv_err sess_create(struct server *srv, bool may_pool, struct sess **out)
{
    struct session *s = NULL;
    char id[SESSION_ID_LEN + 1];
    struct worker *w = may_pool ? pool_take(srv, id) : NULL;
    /* Pooled workers count against --max-sessions: a session that does not
     * take one makes room by stopping one. */
    if (!w && session_count(srv->sessions) + pool_count(srv) >= session_max(srv->sessions))
        pool_evict_one(srv);
    /* The pooled worker was counted against --max-sessions already. */
    enum tv_err e = w ? session_create_with_id(srv->sessions, wall_ms(), id, &s)
                      : session_create(srv->sessions, wall_ms(), &s);
    if (e != TV_OK) {
        if (w)
            worker_stop(w, STOP_GRACE_MS);
        return e;
    }
    struct sess *ss = sess_new(srv, s);
    if (w) {
        w->owner = ss;
        w->events = &router_worker_events;
        ss->w = w;
        /* No refill here: a new context and renderer would compete for the
         * CPU with this session's first call. Housekeeping refills within a
         * second. */
    }
    *out = ss;
    return TV_OK;
}

struct sess *sess_resolve(struct server *srv, struct mcp_conn *conn, json_t *args, json_t **err)
{
    struct session *s = NULL;
    const char *sid = json_string_value(json_object_get(args, "sessionId"));
    enum tv_err e;
    if (sid) {
        e = session_lookup(srv->sessions, sid, &s);
        if (e == TV_SESSION_EXPIRED) {
            *err = router_error(e, "this session expired after being idle",
                                "Create a new one with browser_session_create.", sid);
            return NULL;
        }
        if (e != TV_OK) {
            *err = router_error(e, "no session with this id",
                                "Use browser_session_list or browser_session_create.", sid);
            return NULL;
        }
        return s->ctx;
    }
    if (conn->default_session[0] &&
        session_lookup(srv->sessions, conn->default_session, &s) == TV_OK)
        return s->ctx;
    struct sess *ss;
    e = sess_create(srv, true, &ss);
    if (e != TV_OK) {
        *err = router_error(e, "the server has reached --max-sessions",
                            "Close a session with browser_session_close.", NULL);
        return NULL;
    }
    s = ss->s;
    s->owner = conn;
    s->is_default = true;
    snprintf(conn->default_session, sizeof conn->default_session, "%s", s->id);
    log_info("session %s created (default session of a connection%s)", s->id,
             ss->w ? ", from the pool" : "");
    return ss;
}

json_t *router_tool_call(struct server *srv, struct mcp_conn *conn, json_t *rpc_id,
                         const struct tool_def *tool, json_t *args, json_t *progress_token)
{
    if (srv->shutting_down)
        return router_error(TV_CANCELLED, "the server is shutting down", NULL, NULL);
    if (tool->id == TOOL_browser_session_create)
        return tool_session_create(srv, conn, rpc_id, tool, args);
    if (tool->id == TOOL_browser_session_close)
        return tool_session_close(srv, conn, args);
    if (tool->id == TOOL_browser_session_list)
        return tool_session_list(srv, conn);
    json_t *err = NULL;
    struct sess *ss = sess_resolve(srv, conn, args, &err);
    if (!ss)
        return err;
    if ((err = session_hand_over(srv, ss, args, "filename")) ||
        (err = upload_from_roots(srv, conn, tool, args, ss->s->id)))
        return err;
    struct call *c = call_new(srv, conn, rpc_id, tool, args, progress_token);
    /* The worker never sees sessionId: routing is the supervisor's business. */
    json_object_del(c->args, "sessionId");
    call_attach(ss, c);
    if (ss->tail)
        ss->tail->next = c;
    else
        ss->head = c;
    ss->tail = c;
    sess_pump(ss);
    return NULL;
}

static struct call *find_call(struct server *srv, struct mcp_conn *conn, json_t *rpc_id,
                              struct sess **owner)
{
    for (size_t i = 0; i < session_count(srv->sessions); i++) {
        struct sess *ss = session_at(srv->sessions, i)->ctx;
        *owner = ss;
        if (ss->create_call && ss->create_call->conn == conn &&
            json_equal(ss->create_call->rpc_id, rpc_id))
            return ss->create_call;
        for (struct call *c = ss->head; c; c = c->next)
            if (c->conn == conn && !c->replied && json_equal(c->rpc_id, rpc_id))
                return c;
    }
    return NULL;
}

void router_cancel(struct server *srv, struct mcp_conn *conn, json_t *rpc_id)
{
    struct sess *ss;
    struct call *c = find_call(srv, conn, rpc_id, &ss);
    if (!c)
        return; /* finished already, or never existed: nothing to do */
    /* MCP: the receiver of a cancellation should not answer the request. */
    c->replied = true;
    if (c == ss->create_call) {
        ss->create_call = NULL;
        call_free(srv, c);
        sess_close(ss, false, "creation cancelled");
        return;
    }
    if (!c->sent) {
        unlink_call(ss, c);
        call_free(srv, c);
        return;
    }
    if (ss->w)
        worker_send_cancel(ss->w, c->id);
    loop_del_timer(srv->loop, c->timer);
    c->timer = loop_add_timer(srv->loop, srv->cfg.grace_ms, on_grace_expired, c);
}

void router_conn_closed(struct server *srv, struct mcp_conn *conn)
{
    for (size_t i = 0; i < session_count(srv->sessions); i++) {
        struct session *s = session_at(srv->sessions, i);
        struct sess *ss = s->ctx;
        if (s->owner == conn)
            s->owner = NULL;
        if (ss->create_call && ss->create_call->conn == conn)
            ss->create_call->conn = NULL;
        for (struct call *c = ss->head; c; c = c->next)
            if (c->conn == conn)
                c->conn = NULL;
    }
}

void router_close_session(struct server *srv, const char *sid, const char *why)
{
    struct session *s;
    if (sid && *sid && session_lookup(srv->sessions, sid, &s) == TV_OK)
        sess_close(s->ctx, false, why);
}

void router_close_all(struct server *srv)
{
    while (session_count(srv->sessions) > 0)
        sess_close(session_at(srv->sessions, 0)->ctx, false, "server shutting down");
}

/* --- housekeeping --- */

static void housekeeping(struct loop *l, void *ud)
{
    struct server *srv = ud;
    struct session *s;
    long long now = wall_ms();
    while ((s = session_next_expired(srv->sessions, now))) {
        sess_close(s->ctx, true, "idle timeout");
    }
    pool_fill(srv); /* after a hand-over, a closed session or a pooled worker's death */
    memtrim_idle();
    srv->housekeeping_timer = loop_add_timer(l, HOUSEKEEPING_MS, housekeeping, srv);
}

void router_start_housekeeping(struct server *srv)
{
    pool_fill(srv); /* also starts the browser, while the client initializes */
    srv->housekeeping_timer = loop_add_timer(srv->loop, HOUSEKEEPING_MS, housekeeping, srv);
}

const struct worker_events router_worker_events = {
    .ready = router_worker_ready,
    .message = router_worker_message,
    .exited = router_worker_exited,
};

const struct browser_events router_browser_events = {.died = router_browser_died};
