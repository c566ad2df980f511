/*
 * http_sessions.c - MCP sessions of the HTTP transport (Mcp-Session-Id):
 * their POSTed requests and answers, SSE events and their replay for
 * Last-Event-ID, the mcp_conn each one drives, limits and idle expiry.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <unistd.h>

#include "clock.h"
#include "http_int.h"
#include "http_parse.h"
#include "jsonrpc.h"
#include "log.h"
#include "memtrim.h"
#include "mcp.h"
#include "metrics.h"
#include "peer_uid.h"
#include "router.h"
#include "server.h"
#include "sessions.h"

/* --------------------------------------------------------- MCP sessions */

struct msess *http_find_msess(const struct http_span *id)
{
    if (!id)
        return NULL;
    for (struct msess *ms = hs.sessions; ms; ms = ms->next)
        if (id->n == strlen(ms->id) && memcmp(id->p, ms->id, id->n) == 0)
            return ms;
    return NULL;
}

static void free_post(struct post *p)
{
    json_decref(p->rpc_id);
    json_decref(p->progress_token);
    free(p);
}

static void unlink_post(struct msess *ms, struct post *p)
{
    for (struct post **pp = &ms->posts; *pp; pp = &(*pp)->next) {
        if (*pp == p) {
            *pp = p->next;
            ms->nposts--;
            return;
        }
    }
}

static void replay_drop_head(struct msess *ms)
{
    struct sse_ev *e = ms->replay;
    ms->replay = e->next;
    if (!ms->replay)
        ms->replay_tail = NULL;
    ms->replay_count--;
    ms->replay_bytes -= e->len;
    hs.replay_bytes -= e->len;
    free(e);
}

/* Keep an event for http_replay, within the per-session and total bounds (the
 * oldest go first; an event too big to keep is not kept). */
static void replay_keep(struct msess *ms, uint64_t stream, uint64_t n, const char *text, size_t len)
{
    if (len > REPLAY_BYTES / 4)
        return;
    struct sse_ev *e = malloc(sizeof *e + len);
    if (!e)
        abort();
    *e = (struct sse_ev){.stream = stream, .n = n, .len = len};
    memcpy(e->text, text, len);
    if (ms->replay_tail)
        ms->replay_tail->next = e;
    else
        ms->replay = e;
    ms->replay_tail = e;
    ms->replay_count++;
    ms->replay_bytes += len;
    hs.replay_bytes += len;
    while (ms->replay != e && (ms->replay_count > REPLAY_EVENTS ||
                               ms->replay_bytes > REPLAY_BYTES || hs.replay_bytes > REPLAY_TOTAL))
        replay_drop_head(ms);
}

/* One message as an event of ms's SSE stream `stream`: it gets the next
 * event id, is kept for http_replay, and goes out on hc when there is one. */
static void sse_emit(struct msess *ms, uint64_t stream, struct hconn *hc, json_t *msg)
{
    char *text = json_dumps(msg, JSON_COMPACT);
    if (!text)
        return;
    size_t len = strlen(text);
    uint64_t n = ++ms->next_event;
    replay_keep(ms, stream, n, text, len);
    if (hc && !hc->closed) {
        http_sse_write(hc, stream, n, text, len);
        http_try_flush(hc);
    }
    free(text);
}

/* Send the kept events of `stream` after event `after` on hc. */
void http_replay(struct msess *ms, uint64_t stream, uint64_t after, struct hconn *hc)
{
    for (struct sse_ev *e = ms->replay; e; e = e->next)
        if (e->stream == stream && e->n > after)
            http_sse_write(hc, stream, e->n, e->text, e->len);
}

/* A notification for a request: on that request's POST, as SSE. Once the
 * stream started, events are kept for replay even while the client is away. */
static void post_notify(struct msess *ms, struct post *p, json_t *msg)
{
    struct hconn *hc = p->hc && !p->hc->closed ? p->hc : NULL;
    if (!p->sse) {
        if (!hc)
            return; /* no stream the client could resume */
        http_start_sse(hc, p->is_init ? ms->id : NULL);
        p->sse = true;
        p->stream = ++ms->next_stream;
    }
    sse_emit(ms, p->stream, hc, msg);
}

/* A notification tied to no request: the GET stream, else any open POST,
 * else kept for the GET stream's resumption when it existed. */
void http_session_notify(struct msess *ms, json_t *msg)
{
    if (ms->stream && !ms->stream->closed) {
        sse_emit(ms, 0, ms->stream, msg);
        return;
    }
    for (struct post *p = ms->posts; p; p = p->next) {
        if (p->hc && !p->hc->closed) {
            post_notify(ms, p, msg);
            return;
        }
    }
    if (ms->had_get)
        sse_emit(ms, 0, NULL, msg);
}

/* The response to p: ends its POST (or its stream, kept for http_replay). */
static void post_answer(struct msess *ms, struct post *p, json_t *msg)
{
    unlink_post(ms, p);
    if (hs.current == p)
        hs.current = NULL;
    struct hconn *hc = p->hc && !p->hc->closed ? p->hc : NULL;
    if (p->sse) {
        sse_emit(ms, p->stream, hc, msg);
        if (hc && !hc->closed)
            http_sse_end(hc);
    } else if (hc) {
        char *text = json_dumps(msg, JSON_COMPACT);
        char extra[80] = "";
        if (p->is_init)
            snprintf(extra, sizeof extra, "Mcp-Session-Id: %s\r\n", ms->id);
        http_respond_h(hc, 200, "application/json", extra, text ? text : "",
                       text ? strlen(text) : 0);
        free(text);
    }
    free_post(p);
}

/* p was cancelled (notifications/cancelled): MCP says no response follows,
 * so end its HTTP response without one: an SSE stream with no events, or
 * the end of the stream it already has. */
void http_post_abandon(struct msess *ms, struct post *p)
{
    unlink_post(ms, p);
    struct hconn *hc = p->hc && !p->hc->closed ? p->hc : NULL;
    if (hc) {
        if (!p->sse)
            http_start_sse(hc, NULL);
        http_sse_end(hc);
    }
    free_post(p);
}

/* mcp ops->send: route one outgoing message to the HTTP response it
 * belongs to. Responses end their POST; progress goes to the POST whose
 * request carried the token; other notifications to the session. */
static void http_send(struct mcp_conn *c, json_t *msg)
{
    struct msess *ms = c->transport;
    json_t *method = json_object_get(msg, "method");
    if (!method) {
        json_t *id = json_object_get(msg, "id");
        struct post *p = NULL;
        for (struct post *q = ms->posts; q && !p; q = q->next)
            if (json_equal(q->rpc_id, id))
                p = q;
        if (!p && hs.current && (!id || json_is_null(id)))
            p = hs.current; /* an error about the request being handled now */
        if (p)
            post_answer(ms, p, msg);
        return;
    }
    const char *m = json_string_value(method);
    if (m && strcmp(m, "notifications/progress") == 0) {
        json_t *tok = json_object_get(json_object_get(msg, "params"), "progressToken");
        for (struct post *p = ms->posts; p; p = p->next) {
            if (p->progress_token && json_equal(p->progress_token, tok)) {
                post_notify(ms, p, msg);
                return;
            }
        }
        return;
    }
    http_session_notify(ms, msg);
}

static void http_log_level_changed(struct mcp_conn *c)
{
    http_recompute_log_sink();
}

static const struct mcp_transport_ops http_ops = {
    .send = http_send, .log_level_changed = http_log_level_changed, .remote = true};

struct msess *http_msess_new(uint64_t conn_serial)
{
    struct msess *ms = calloc(1, sizeof *ms);
    if (!ms)
        abort();
    session_new_id(ms->id, hs.srv->cfg.instance_id);
    ms->mcp = mcp_conn_new(hs.srv, &http_ops, ms);
    if (!ms->mcp)
        abort();
    ms->last_used = mono_ms();
    ms->conn_serial = conn_serial;
    ms->next = hs.sessions;
    hs.sessions = ms;
    hs.nsessions++;
    return ms;
}

/* End an MCP session: close its default browser session (its queued calls
 * answer CANCELLED on their POSTs), end its streams, forget it. */
void http_msess_end(struct msess *ms, const char *why)
{
    for (struct msess **pp = &hs.sessions; *pp; pp = &(*pp)->next) {
        if (*pp == ms) {
            *pp = ms->next;
            hs.nsessions--;
            break;
        }
    }
    if (hs.log_ctx == ms)
        hs.log_ctx = NULL;
    log_info("http: MCP session %s ended (%s)", ms->id, why);
    if (ms->mcp->default_session[0])
        router_close_session(hs.srv, ms->mcp->default_session, "its MCP session ended");
    mcp_conn_free(ms->mcp); /* detaches the calls still running elsewhere */
    struct post *p;
    while ((p = ms->posts)) {
        ms->posts = p->next;
        if (p->hc && !p->hc->closed) {
            p->hc->keep_alive = false;
            if (p->sse)
                http_sse_end(p->hc);
            else
                http_respond_rpc_error(p->hc, 404, -32001, "MCP session ended", NULL);
        }
        free_post(p);
    }
    if (ms->stream && !ms->stream->closed) {
        ms->stream->stream_of = NULL;
        http_sse_end(ms->stream);
    }
    while (ms->replay)
        replay_drop_head(ms);
    free(ms);
    http_recompute_log_sink();
}

size_t http_sessions_of_conn(uint64_t serial)
{
    size_t n = 0;
    for (struct msess *ms = hs.sessions; ms; ms = ms->next)
        n += ms->conn_serial == serial;
    return n;
}

static bool msess_unused(const struct msess *ms)
{
    return !ms->used && !ms->posts && !ms->stream;
}

/* The oldest session that never made a request: the first to go when the
 * server is full, so a flood of initializes cannot lock others out. */
struct msess *http_oldest_unused(void)
{
    /* The list runs newest first, so on a tie (sessions made within the
     * same millisecond) the later one in the list is the older: hence <=. */
    struct msess *best = NULL;
    for (struct msess *ms = hs.sessions; ms; ms = ms->next)
        if (msess_unused(ms) && (!best || ms->last_used <= best->last_used))
            best = ms;
    return best;
}

void http_housekeeping(struct loop *l, void *ud)
{
    long long now = mono_ms();
    struct msess *ms = hs.sessions;
    while (ms) {
        struct msess *next = ms->next;
        if (msess_unused(ms) && now - ms->last_used > hs.srv->cfg.http_unused_ms)
            http_msess_end(ms, "no request since initialize");
        else if (!ms->posts && !ms->stream && now - ms->last_used > hs.srv->cfg.idle_ms)
            http_msess_end(ms, "idle");
        ms = next;
    }
    hs.housekeeping = loop_add_timer(l, HOUSEKEEPING_MS, http_housekeeping, NULL);
}
