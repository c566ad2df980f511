/*
 * http_requests.c - one HTTP request, judged on its head (Host, Origin,
 * token, size) before its body is read, then POST /mcp, GET /mcp (SSE),
 * DELETE /mcp, /healthz and /metrics.
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

/* ------------------------------------------------------------- requests */

/* s in the comma-separated list (exact, ASCII case-insensitive). */
static bool in_list(const char *list, struct http_span s)
{
    while (list && *list) {
        const char *comma = strchr(list, ',');
        size_t n = comma ? (size_t)(comma - list) : strlen(list);
        while (n && *list == ' ') {
            list++;
            n--;
        }
        while (n && list[n - 1] == ' ')
            n--;
        if (n == s.n && strncasecmp(list, s.p, n) == 0)
            return true;
        list = comma ? comma + 1 : NULL;
    }
    return false;
}

/* Host: the bound address and port, and for loopback binds the loopback
 * names; plus --allowed-host. Origin (when present): http:// + one of those
 * for loopback binds, plus --allowed-origin. Anything else is a page in a
 * browser reaching us through DNS rebinding or a cross-site request. */
static bool host_allowed(const struct http_span *host)
{
    return host && (in_list(hs.self_hosts, *host) || in_list(hs.srv->cfg.allowed_hosts, *host));
}

static bool origin_allowed(const struct http_span *origin)
{
    if (!origin)
        return true; /* not a browser: curl, SDKs, agents */
    if (in_list(hs.srv->cfg.allowed_origins, *origin))
        return true;
    if (origin->n < 8 || strncasecmp(origin->p, "http://", 7) != 0)
        return false;
    struct http_span rest = {origin->p + 7, origin->n - 7};
    return host_allowed(&rest);
}

static bool auth_ok(const struct http_request *req)
{
    const char *token = hs.srv->cfg.auth_token;
    if (!token)
        return true;
    const struct http_span *a = http_header(req, "authorization");
    if (!a || a->n < 7 || strncasecmp(a->p, "Bearer ", 7) != 0)
        return false;
    size_t n = strlen(token);
    const char *given = a->p + 7;
    size_t gn = a->n - 7;
    unsigned char diff = gn != n;
    for (size_t i = 0; i < n; i++) /* constant time in the token's length */
        diff |= (unsigned char)(token[i] ^ (i < gn ? given[i] : 0));
    return diff == 0;
}

static bool accepts(const struct http_request *req, const char *type)
{
    const struct http_span *a = http_header(req, "accept");
    if (!a)
        return false;
    char major[32];
    snprintf(major, sizeof major, "%.*s/*", (int)(strchr(type, '/') - type), type);
    return http_list_has(*a, type) || http_list_has(*a, major) || http_list_has(*a, "*/*");
}

/* The session of a non-initialize request: replies 400/404 itself. */
static struct msess *request_session(struct hconn *hc, const struct http_request *req)
{
    const struct http_span *sid = http_header(req, "mcp-session-id");
    if (!sid) {
        http_respond_rpc_error(hc, 400, -32000, "Bad Request: Mcp-Session-Id header is required",
                               NULL);
        return NULL;
    }
    struct msess *ms = http_find_msess(sid);
    if (!ms) {
        http_respond_rpc_error(hc, 404, -32001, "Session not found", NULL);
        return NULL;
    }
    ms->last_used = mono_ms();
    return ms;
}

/* Hand m to the session's MCP connection, with the session as the context
 * of the log lines this causes (see http_log_sink). */
static void dispatch(struct msess *ms, const struct jsonrpc_msg *m)
{
    struct msess *saved = hs.log_ctx;
    hs.log_ctx = ms;
    mcp_conn_dispatch(ms->mcp, m);
    hs.log_ctx = saved;
}

/* A new MCP session for an initialize on hc, within the limits: per
 * connection, and overall (where the oldest session that never made a
 * request makes room). Replies the refusal itself. */
static struct msess *admit_session(struct hconn *hc)
{
    if (http_sessions_of_conn(hc->serial) >= MAX_MSESS_PER_CONN) {
        http_respond_rpc_error(hc, 429, -32000,
                               "Too many MCP sessions initialized on this connection",
                               "Retry-After: 1\r\n");
        return NULL;
    }
    if (hs.nsessions >= (size_t)hs.srv->cfg.http_max_mcp_sessions) {
        struct msess *victim = http_oldest_unused();
        if (!victim) {
            http_respond_rpc_error(hc, 503, -32000,
                                   "Too many MCP sessions (--http-max-mcp-sessions)",
                                   "Retry-After: 1\r\n");
            return NULL;
        }
        http_msess_end(victim, "the server is full and it made no request since initialize");
    }
    struct msess *ms = http_msess_new(hc->serial);
    struct msess *saved = hs.log_ctx;
    hs.log_ctx = ms;
    log_info("http: MCP session %s started", ms->id);
    hs.log_ctx = saved;
    return ms;
}

/* notifications/cancelled names one of ms's open requests: the router stops
 * the call and will not answer it, so its POST is ended here. */
static void end_cancelled(struct msess *ms, const struct jsonrpc_msg *m)
{
    if (m->kind != JSONRPC_NOTIFICATION || strcmp(m->method, "notifications/cancelled") != 0)
        return;
    json_t *rid = json_object_get(m->params, "requestId");
    for (struct post *p = ms->posts; rid && p; p = p->next) {
        if (json_equal(p->rpc_id, rid)) {
            http_post_abandon(ms, p);
            return;
        }
    }
}

static void handle_post(struct hconn *hc, const struct http_request *req, const char *body,
                        size_t len)
{
    struct jsonrpc_msg m;
    jsonrpc_parse(body, len, &m);
    /* Bad params of a well-formed request are answered by mcp.c, in band. */
    if (m.kind == JSONRPC_INVALID && !(m.error_code == -32602 && m.id)) {
        http_respond_rpc_error(hc, 400, m.error_code ? m.error_code : -32600, m.error, NULL);
        jsonrpc_msg_clear(&m);
        return;
    }
    bool is_request = m.kind == JSONRPC_REQUEST || m.kind == JSONRPC_INVALID;
    bool is_init = m.method && strcmp(m.method, "initialize") == 0;
    struct msess *ms;
    if (is_init) {
        const char *refusal = NULL;
        if (http_header(req, "mcp-session-id"))
            refusal = "Invalid Request: initialize must not carry an Mcp-Session-Id";
        else if (!is_request)
            refusal = "Invalid Request: initialize needs an id";
        if (refusal || !(ms = admit_session(hc))) {
            if (refusal)
                http_respond_rpc_error(hc, 400, -32600, refusal, NULL);
            jsonrpc_msg_clear(&m);
            return;
        }
    } else {
        const struct http_span *pv = http_header(req, "mcp-protocol-version");
        if (pv) {
            char v[32];
            snprintf(v, sizeof v, "%.*s", (int)(pv->n < 31 ? pv->n : 31), pv->p);
            if (!mcp_version_supported(v)) {
                char msg[120];
                snprintf(msg, sizeof msg, "Bad Request: unsupported MCP-Protocol-Version %s", v);
                http_respond_rpc_error(hc, 400, -32000, msg, NULL);
                jsonrpc_msg_clear(&m);
                return;
            }
        }
        ms = request_session(hc, req);
        if (!ms) {
            jsonrpc_msg_clear(&m);
            return;
        }
        if (is_request)
            ms->used = true;
    }
    if (!is_request) {
        /* A notification or a response: accepted, nothing to send back. */
        http_respond(hc, 202, NULL, NULL, 0);
        dispatch(ms, &m);
        end_cancelled(ms, &m);
        jsonrpc_msg_clear(&m);
        return;
    }
    if (ms->nposts >= MAX_POSTS_PER_MSESS) {
        http_respond_rpc_error(hc, 429, -32000, "Too many unanswered requests in this MCP session",
                               "Retry-After: 1\r\n");
        jsonrpc_msg_clear(&m);
        return;
    }
    struct post *p = calloc(1, sizeof *p);
    if (!p)
        abort();
    p->hc = hc;
    p->rpc_id = json_incref(m.id);
    p->is_init = is_init;
    json_t *tok = json_object_get(json_object_get(m.params, "_meta"), "progressToken");
    if (json_is_string(tok) || json_is_integer(tok))
        p->progress_token = json_incref(tok);
    p->next = ms->posts;
    ms->posts = p;
    ms->nposts++;
    hc->post = p;
    hc->state = HC_WAIT;
    hs.current = p;
    dispatch(ms, &m);
    if (hs.current == p)
        hs.current = NULL;
    jsonrpc_msg_clear(&m);
}

static size_t open_get_streams(void)
{
    size_t n = 0;
    for (struct hconn *hc = hs.conns; hc; hc = hc->next)
        n += hc->state == HC_STREAM;
    return n;
}

/* Last-Event-ID "STREAM-N": false when malformed. */
static bool parse_event_id(const struct http_span *v, uint64_t *stream, uint64_t *n)
{
    char buf[48];
    if (v->n == 0 || v->n >= sizeof buf)
        return false;
    memcpy(buf, v->p, v->n);
    buf[v->n] = 0;
    int used = 0;
    return sscanf(buf, "%" SCNu64 "-%" SCNu64 "%n", stream, n, &used) == 2 &&
           (size_t)used == v->n && buf[0] >= '0' && buf[0] <= '9';
}

/* GET with Last-Event-ID of a POST stream: its kept events after that id
 * come first; then the stream goes on until its response if the request is
 * still open, else it ends (204 when nothing was left to send). */
static void resume_post_stream(struct hconn *hc, struct msess *ms, uint64_t stream, uint64_t after)
{
    struct post *p = NULL;
    for (struct post *q = ms->posts; q && !p; q = q->next)
        if (q->sse && q->stream == stream)
            p = q;
    bool pending = false;
    for (struct sse_ev *e = ms->replay; e && !pending; e = e->next)
        pending = e->stream == stream && e->n > after;
    if (!p && !pending) {
        http_respond(hc, 204, NULL, NULL, 0);
        return;
    }
    http_start_sse(hc, NULL);
    http_replay(ms, stream, after, hc);
    if (!p) {
        http_sse_end(hc);
        return;
    }
    if (p->hc && !p->hc->closed) {
        p->hc->post = NULL;
        hc_close(p->hc);
    }
    p->hc = hc;
    hc->post = p;
    hc->state = HC_WAIT;
    http_try_flush(hc);
}

/* GET: the session's standalone stream, new or resumed (Last-Event-ID of
 * stream 0: the kept events after that id first), or the resumption of a
 * POST stream. */
static void handle_get(struct hconn *hc, const struct http_request *req)
{
    if (!accepts(req, "text/event-stream")) {
        http_respond_rpc_error(hc, 406, -32000,
                               "Not Acceptable: Accept must list text/event-stream", NULL);
        return;
    }
    struct msess *ms = request_session(hc, req);
    if (!ms)
        return;
    ms->used = true;
    const struct http_span *last = http_header(req, "last-event-id");
    uint64_t stream = 0, after = 0;
    if (last && (!parse_event_id(last, &stream, &after) || stream > ms->next_stream)) {
        http_respond_rpc_error(hc, 400, -32000, "Bad Request: unknown Last-Event-ID", NULL);
        return;
    }
    if (last && stream > 0) {
        resume_post_stream(hc, ms, stream, after);
        return;
    }
    if (ms->stream && !ms->stream->closed) {
        if (!last) {
            http_respond_rpc_error(hc, 409, -32000,
                                   "Conflict: this session already has a GET stream", NULL);
            return;
        }
        hc_close(ms->stream); /* the client reconnected: this one replaces it */
    }
    size_t max_streams = (size_t)hs.srv->cfg.http_max_conns / 4;
    if (open_get_streams() >= (max_streams ? max_streams : 1)) {
        http_respond_rpc_error(hc, 503, -32000,
                               "Too many open GET streams (a quarter of --http-max-connections)",
                               "Retry-After: 5\r\n");
        return;
    }
    http_start_sse(hc, NULL);
    if (last) {
        http_replay(ms, 0, after, hc);
    } else {
        /* A priming event: the client gets an id to resume this stream from. */
        http_sse_write(hc, 0, ++ms->next_event, "", 0);
    }
    ms->had_get = true;
    hc->state = HC_STREAM;
    hc->stream_of = ms;
    ms->stream = hc;
    /* A request of ours asked before the stream was there had nowhere to go. */
    mcp_conn_stream_opened(ms->mcp);
    http_try_flush(hc);
}

static void handle_delete(struct hconn *hc, const struct http_request *req)
{
    struct msess *ms = request_session(hc, req);
    if (!ms)
        return;
    http_msess_end(ms, "DELETE from the client");
    http_respond(hc, 200, NULL, NULL, 0);
}

static struct http_span request_path(const struct http_request *req)
{
    struct http_span path = req->target;
    const char *q = memchr(path.p, '?', path.n);
    if (q)
        path.n = (size_t)(q - path.p);
    return path;
}

/* A POST to /mcp must accept both answer types and carry JSON: decided on
 * the head, like the rest of admit(). Replies the refusal itself. */
static bool post_head_ok(struct hconn *hc, const struct http_request *req)
{
    if (!accepts(req, "application/json") || !accepts(req, "text/event-stream")) {
        http_respond_rpc_error(
            hc, 406, -32000,
            "Not Acceptable: Accept must list application/json and text/event-stream", NULL);
        return false;
    }
    const struct http_span *ct = http_header(req, "content-type");
    if (!ct || !http_list_has(*ct, "application/json")) {
        http_respond_rpc_error(hc, 415, -32000, "Unsupported Media Type: use application/json",
                               NULL);
        return false;
    }
    return true;
}

/* Decide on a request by its head alone, before any of its body is read:
 * Host, Origin, token, body size, and room for a large body among all
 * connections. Replies the refusal itself (and the connection closes); on
 * success sets hc->need to the request's whole size. */
static bool admit(struct hconn *hc, const struct http_request *req)
{
    if (req->transfer_encoding) {
        http_respond(hc, 411, "text/plain", "chunked request bodies are not supported\n", 41);
        return false;
    }
    const struct http_span *host = http_header(req, "host");
    if (!host && req->minor == 1) {
        http_respond(hc, 400, "text/plain", "missing Host header\n", 20);
        return false;
    }
    if (!host_allowed(host)) {
        log_warn("http: 403 for a request with a foreign Host header");
        http_respond(hc, 403, "text/plain", "forbidden host\n", 15);
        return false;
    }
    if (!origin_allowed(http_header(req, "origin"))) {
        log_warn("http: 403 for a request with a foreign Origin header");
        http_respond(hc, 403, "text/plain", "forbidden origin\n", 17);
        return false;
    }
    if (!http_span_ieq(request_path(req), "/healthz") && !auth_ok(req)) {
        http_respond_h(hc, 401, "text/plain", "WWW-Authenticate: Bearer realm=\"tabvisor\"\r\n",
                       "unauthorized\n", 13);
        return false;
    }
    if (http_span_ieq(req->method, "POST") && http_span_ieq(request_path(req), "/mcp") &&
        !post_head_ok(hc, req))
        return false;
    long long cl = req->content_length < 0 ? 0 : req->content_length;
    if (cl > hs.srv->cfg.http_max_body) {
        http_respond_rpc_error(hc, 413, -32000, "Request body too large (--http-max-body)", NULL);
        return false;
    }
    if (cl > SMALL_BODY) {
        size_t cap = (size_t)hs.srv->cfg.http_max_body > MAX_RESERVED
                         ? (size_t)hs.srv->cfg.http_max_body
                         : MAX_RESERVED;
        if (hs.reserved + (size_t)cl > cap) {
            log_warn("http: 503 for a large body: %zu bytes of large bodies are being received",
                     hs.reserved);
            http_respond_rpc_error(hc, 503, -32000, "Server busy receiving other large requests",
                                   "Retry-After: 1\r\n");
            return false;
        }
        hc->reserved = (size_t)cl;
        hs.reserved += hc->reserved;
    }
    hc->need = req->head_len + (size_t)cl;
    return true;
}

static void handle_request(struct hconn *hc, const struct http_request *req, const char *body,
                           size_t len)
{
    struct http_span path = request_path(req);
    bool get = http_span_ieq(req->method, "GET");
    if (http_span_ieq(path, "/healthz")) {
        /* instanceId: [a-z0-9-] (options.c), no escaping needed. */
        const char *inst = hs.srv->cfg.instance_id;
        char b[200];
        int n = snprintf(b, sizeof b,
                         "{\"status\":\"ok\",%s%s%s\"browserSessions\":%zu,\"mcpSessions\":%zu}",
                         inst ? "\"instanceId\":\"" : "", inst ? inst : "", inst ? "\"," : "",
                         session_count(hs.srv->sessions), hs.nsessions);
        http_respond(hc, get ? 200 : 405, "application/json", b, get ? (size_t)n : 0);
        return;
    }
    if (http_span_ieq(path, "/metrics")) {
        struct metrics_gauges g = {.instance_id = hs.srv->cfg.instance_id,
                                   .sessions = session_count(hs.srv->sessions),
                                   .mcp_sessions = hs.nsessions,
                                   .http_connections = hs.nconns};
        router_session_gauges(hs.srv, g.by_state);
        char *text = metrics_render(&g);
        http_respond(hc, 200, "text/plain; version=0.0.4; charset=utf-8", text, strlen(text));
        free(text);
        return;
    }
    if (!(path.n == 4 && memcmp(path.p, "/mcp", 4) == 0)) {
        http_respond(hc, 404, "text/plain", "not found\n", 10);
        return;
    }
    if (http_span_ieq(req->method, "POST"))
        handle_post(hc, req, body, len);
    else if (get)
        handle_get(hc, req);
    else if (http_span_ieq(req->method, "DELETE"))
        handle_delete(hc, req);
    else
        http_respond_h(hc, 405, "text/plain", "Allow: GET, POST, DELETE\r\n",
                       "method not allowed\n", 19);
}

/* Parse and run the requests that are complete in hc->in. */
void http_process_input(struct hconn *hc)
{
    while (!hc->closed && hc->state == HC_READ && hc->in_len > 0) {
        struct http_request req;
        enum http_parse_result r = http_parse_request(hc->in, hc->in_len, MAX_HEAD, &req);
        if (r == HTTP_PARSE_MORE)
            return;
        hc->keep_alive = false; /* refusals close the connection */
        hc->http11 = r == HTTP_PARSE_DONE && req.minor == 1;
        if (r == HTTP_PARSE_ERROR) {
            char b[128];
            int n = snprintf(b, sizeof b, "%s\n", req.error);
            http_respond(hc, req.error_status, "text/plain", b, (size_t)n);
            return;
        }
        if (!hc->need && !admit(hc, &req))
            return;
        if (hc->in_len < hc->need)
            return; /* the body is still coming */
        hc->keep_alive = req.keep_alive && !hc->peer_eof;
        size_t used = hc->need;
        hc->need = 0;
        http_release_reservation(hc);
        /* The spans point into hc->in: handle before consuming. */
        handle_request(hc, &req, hc->in + req.head_len, used - req.head_len);
        if (hc->closed || hc->state == HC_DRAIN)
            return;
        memmove(hc->in, hc->in + used, hc->in_len - used);
        hc->in_len -= used;
        hc->request_timer = false;
        if (hc->in_len == 0 && hc->in_cap > MEMTRIM_KEEP_BYTES) {
            memtrim_released(hc->in_cap); /* a large request body was read */
            free(hc->in);
            hc->in = NULL;
            hc->in_cap = 0;
        }
    }
}
