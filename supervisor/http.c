/*
 * http.c - MCP Streamable HTTP transport; see http.h and docs/http.md.
 *
 * Objects, all owned by the loop thread:
 *   hconn  one TCP connection: input and output buffers, a state, a timer.
 *   msess  one MCP session (Mcp-Session-Id): its mcp_conn, its standalone
 *          GET stream if open, and the POSTed requests still unanswered.
 *   post   one POSTed JSON-RPC request waiting for its response. It points
 *          at the hconn to answer on, or NULL once that client went away
 *          (the call still runs; its browser session stays usable).
 *
 * A connection handles one request at a time: while a POST waits for its
 * answer the connection only watches for the peer hanging up (POLLRDHUP),
 * so pipelined requests wait in the socket or in its input buffer. Closing
 * is immediate (fd closed, references cleared) but the struct is freed
 * through loop_defer, so a caller further up the stack may still look at
 * hc->closed.
 */
#include "http.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
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
#include "http_parse.h"
#include "log.h"
#include "mcp.h"
#include "metrics.h"
#include "router.h"
#include "server.h"
#include "sessions.h"

#define MAX_HEAD (16 * 1024)
#define IDLE_MS 60000         /* keep-alive connection with nothing to say */
#define REQUEST_MS 30000      /* first byte to whole request (slow clients) */
#define PING_MS 15000         /* SSE comment so proxies keep streams open */
#define MAX_OUT (64u << 20)   /* a client that stops reading loses its connection */
#define MAX_MCP_SESSIONS 4096 /* beyond this, initialize answers 503 */
#define HOUSEKEEPING_MS 5000
#define MAX_PENDING_LOG 256 /* log lines waiting for the deferred flush */

enum hc_state {
    HC_READ,   /* reading a request (or idle between requests) */
    HC_WAIT,   /* a POST waits for its JSON-RPC response (maybe streaming SSE) */
    HC_STREAM, /* the standalone GET SSE stream of a session */
    HC_CLOSING /* write what is buffered, then close */
};

struct msess;

struct hconn {
    struct hconn *next;
    int fd;
    enum hc_state state;
    char *in;
    size_t in_len, in_cap;
    char *out;
    size_t out_len, out_off, out_cap;
    uint64_t timer;
    uint64_t resume_timer; /* reads a request pipelined behind an answered one */
    bool request_timer;    /* the timer is the slow-request one */
    bool keep_alive;
    bool chunked; /* the current streamed response uses chunked coding */
    bool closed;
    struct post *post;       /* HC_WAIT */
    struct msess *stream_of; /* HC_STREAM */
};

struct post {
    struct post *next;
    struct hconn *hc;
    json_t *rpc_id;
    json_t *progress_token;
    bool sse;     /* SSE headers sent: further messages are events */
    bool is_init; /* the response carries the new Mcp-Session-Id */
};

struct msess {
    struct msess *next;
    char id[SESSION_ID_LEN + 1];
    struct mcp_conn *mcp;
    struct hconn *stream;
    struct post *posts;
    long long last_used; /* mono ms */
};

static struct {
    struct server *srv;
    int lfd;
    int port;
    char url_host[300];   /* host as printed in URLs ([v6] bracketed) */
    char self_hosts[900]; /* Host values that name us, comma-separated */
    struct hconn *conns;
    size_t nconns;
    struct msess *sessions;
    size_t nsessions;
    struct post *current; /* the request mcp_conn_handle is handling now */
    uint64_t housekeeping;
    json_t *pending_logs; /* array of [session id, notification] */
    bool flush_scheduled;
    bool running;
} hs = {.lfd = -1};

static void hc_close(struct hconn *hc);
static void hc_update(struct hconn *hc);
static void process_input(struct hconn *hc);

/* ---------------------------------------------------------------- output */

static void buf_reserve(char **p, size_t *cap, size_t need)
{
    if (need <= *cap)
        return;
    size_t n = *cap ? *cap : 4096;
    while (n < need)
        n *= 2;
    char *q = realloc(*p, n);
    if (!q)
        abort();
    *p = q;
    *cap = n;
}

static void try_flush(struct hconn *hc)
{
    while (!hc->closed && hc->out_off < hc->out_len) {
        ssize_t w = send(hc->fd, hc->out + hc->out_off, hc->out_len - hc->out_off, MSG_NOSIGNAL);
        if (w < 0) {
            if (errno == EINTR)
                continue;
            if (errno == EAGAIN || errno == EWOULDBLOCK)
                break;
            hc_close(hc);
            return;
        }
        hc->out_off += (size_t)w;
    }
    if (hc->out_off == hc->out_len)
        hc->out_off = hc->out_len = 0;
    if (hc->state == HC_CLOSING && hc->out_len == 0) {
        hc_close(hc);
        return;
    }
    hc_update(hc);
}

static void hc_write(struct hconn *hc, const char *p, size_t n)
{
    if (hc->closed)
        return;
    if (hc->out_len - hc->out_off + n > MAX_OUT) {
        log_warn("http: client is not reading its responses; closing its connection");
        hc_close(hc);
        return;
    }
    buf_reserve(&hc->out, &hc->out_cap, hc->out_len + n);
    memcpy(hc->out + hc->out_len, p, n);
    hc->out_len += n;
}

static void hc_printf(struct hconn *hc, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void hc_printf(struct hconn *hc, const char *fmt, ...)
{
    char buf[2048];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    if (n > 0)
        hc_write(hc, buf, (size_t)n < sizeof buf ? (size_t)n : sizeof buf - 1);
}

static const char *reason(int status)
{
    switch (status) {
    case 200:
        return "OK";
    case 202:
        return "Accepted";
    case 400:
        return "Bad Request";
    case 401:
        return "Unauthorized";
    case 403:
        return "Forbidden";
    case 404:
        return "Not Found";
    case 405:
        return "Method Not Allowed";
    case 406:
        return "Not Acceptable";
    case 408:
        return "Request Timeout";
    case 409:
        return "Conflict";
    case 411:
        return "Length Required";
    case 413:
        return "Content Too Large";
    case 415:
        return "Unsupported Media Type";
    case 431:
        return "Request Header Fields Too Large";
    case 503:
        return "Service Unavailable";
    case 505:
        return "HTTP Version Not Supported";
    default:
        return "Error";
    }
}

static void on_resume(struct loop *l, void *ud)
{
    struct hconn *hc = ud;
    hc->resume_timer = 0;
    if (hc->closed)
        return;
    process_input(hc);
    if (!hc->closed)
        hc_update(hc);
}

/* After a response is complete: next request, or close. A request pipelined
 * behind this one may already be in hc->in, where no socket event will
 * announce it: read it from a timer, not from here, since the caller may be
 * process_input() itself or the router in the middle of a change. */
static void response_done(struct hconn *hc)
{
    hc->post = NULL;
    hc->state = hc->keep_alive ? HC_READ : HC_CLOSING;
    try_flush(hc);
    if (!hc->closed && hc->state == HC_READ && hc->in_len > 0 && !hc->resume_timer)
        hc->resume_timer = loop_add_timer(hs.srv->loop, 0, on_resume, hc);
}

/* A whole response. extra: more header lines, each ending in CRLF. After
 * errors that may leave the stream out of step, the connection closes. */
static void respond_h(struct hconn *hc, int status, const char *ctype, const char *extra,
                      const char *body, size_t len)
{
    metrics_http_request(status);
    if (status == 400 || status == 408 || status == 411 || status == 413 || status == 431 ||
        status >= 500)
        hc->keep_alive = false;
    hc_printf(hc, "HTTP/1.1 %d %s\r\n", status, reason(status));
    if (ctype)
        hc_printf(hc, "Content-Type: %s\r\n", ctype);
    if (extra)
        hc_write(hc, extra, strlen(extra));
    hc_printf(hc, "Content-Length: %zu\r\n%s\r\n", len,
              hc->keep_alive ? "" : "Connection: close\r\n");
    if (len)
        hc_write(hc, body, len);
    response_done(hc);
}

static void respond(struct hconn *hc, int status, const char *ctype, const char *body, size_t len)
{
    respond_h(hc, status, ctype, NULL, body, len);
}

/* A JSON-RPC error as the body of an HTTP error (id null: the request was
 * not processed). */
static void respond_rpc_error(struct hconn *hc, int status, int code, const char *msg,
                              const char *extra)
{
    json_t *j = json_pack("{s:s, s:n, s:{s:i, s:s}}", "jsonrpc", "2.0", "id", "error", "code", code,
                          "message", msg);
    char *text = json_dumps(j, JSON_COMPACT);
    json_decref(j);
    respond_h(hc, status, "application/json", extra, text ? text : "", text ? strlen(text) : 0);
    free(text);
}

static void start_sse(struct hconn *hc, const char *session_header)
{
    metrics_http_request(200);
    hc->chunked = hc->keep_alive;
    hc_printf(hc,
              "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nCache-Control: no-cache\r\n"
              "%s%s%s%s\r\n",
              session_header ? "Mcp-Session-Id: " : "", session_header ? session_header : "",
              session_header ? "\r\n" : "",
              hc->chunked ? "Transfer-Encoding: chunked\r\n" : "Connection: close\r\n");
}

/* One SSE event (or comment when msg is NULL) as a chunk. */
static void sse_event(struct hconn *hc, json_t *msg)
{
    char *text = msg ? json_dumps(msg, JSON_COMPACT) : NULL;
    const char *pre = msg ? "event: message\ndata: " : ": ping";
    const char *post = "\n\n";
    size_t n = strlen(pre) + (text ? strlen(text) : 0) + strlen(post);
    if (hc->chunked)
        hc_printf(hc, "%zx\r\n", n);
    hc_write(hc, pre, strlen(pre));
    if (text)
        hc_write(hc, text, strlen(text));
    hc_write(hc, post, strlen(post));
    if (hc->chunked)
        hc_write(hc, "\r\n", 2);
    free(text);
}

static void sse_end(struct hconn *hc)
{
    if (hc->chunked) {
        hc_write(hc, "0\r\n\r\n", 5);
        response_done(hc);
    } else {
        hc->post = NULL;
        hc->state = HC_CLOSING;
        try_flush(hc);
    }
}

/* ------------------------------------------------------------ connections */

static void on_conn_timer(struct loop *l, void *ud);

static void hc_arm(struct hconn *hc, long long ms, bool request_timer)
{
    loop_del_timer(hs.srv->loop, hc->timer);
    hc->timer = loop_add_timer(hs.srv->loop, ms, on_conn_timer, hc);
    hc->request_timer = request_timer;
}

static void hc_update(struct hconn *hc)
{
    if (hc->closed)
        return;
    short ev = hc->out_len ? POLLOUT : 0;
    if (hc->state == HC_READ)
        ev |= POLLIN;
    else
        ev |= POLLRDHUP;
    loop_set_events(hs.srv->loop, hc->fd, ev);
    if (hc->state == HC_READ && hc->in_len == 0) {
        hc_arm(hc, IDLE_MS, false);
    } else if (hc->state == HC_READ) {
        if (!hc->request_timer || !hc->timer)
            hc_arm(hc, REQUEST_MS, true);
    } else if (hc->state == HC_STREAM || (hc->state == HC_WAIT && hc->post && hc->post->sse)) {
        if (hc->request_timer || !hc->timer)
            hc_arm(hc, PING_MS, false);
    } else if (hc->state == HC_WAIT) {
        loop_del_timer(hs.srv->loop, hc->timer);
        hc->timer = 0;
    }
}

static void free_hconn(void *ud)
{
    struct hconn *hc = ud;
    free(hc->in);
    free(hc->out);
    free(hc);
}

static void hc_close(struct hconn *hc)
{
    if (hc->closed)
        return;
    hc->closed = true;
    loop_del_timer(hs.srv->loop, hc->timer);
    loop_del_timer(hs.srv->loop, hc->resume_timer);
    hc->timer = hc->resume_timer = 0;
    loop_del_fd(hs.srv->loop, hc->fd);
    close(hc->fd);
    if (hc->post)
        hc->post->hc = NULL; /* its call goes on; the answer is dropped */
    if (hc->stream_of && hc->stream_of->stream == hc)
        hc->stream_of->stream = NULL;
    for (struct hconn **pp = &hs.conns; *pp; pp = &(*pp)->next) {
        if (*pp == hc) {
            *pp = hc->next;
            hs.nconns--;
            break;
        }
    }
    loop_defer(hs.srv->loop, free_hconn, hc);
}

static void on_conn_timer(struct loop *l, void *ud)
{
    struct hconn *hc = ud;
    hc->timer = 0;
    if (hc->closed)
        return;
    if (hc->state == HC_READ && hc->in_len > 0) {
        log_info("http: closing a connection whose request did not arrive within %d s",
                 REQUEST_MS / 1000);
        hc->keep_alive = false;
        respond(hc, 408, "text/plain", "request timeout\n", 16);
        return;
    }
    if (hc->state == HC_READ) {
        hc_close(hc); /* idle keep-alive connection */
        return;
    }
    if (hc->state == HC_STREAM || (hc->state == HC_WAIT && hc->post && hc->post->sse)) {
        sse_event(hc, NULL);
        try_flush(hc);
        if (!hc->closed)
            hc_arm(hc, PING_MS, false);
    }
}

static void on_conn_io(struct loop *l, int fd, short revents, void *ud)
{
    struct hconn *hc = ud;
    if (hc->closed)
        return;
    if (revents & POLLOUT)
        try_flush(hc);
    if (hc->closed)
        return;
    if (hc->state != HC_READ) {
        if (revents & (POLLRDHUP | POLLHUP | POLLERR)) {
            if (hc->post)
                log_info("http: client disconnected before its answer; the call goes on");
            hc_close(hc);
        }
        return;
    }
    if (!(revents & (POLLIN | POLLHUP | POLLERR)))
        return;
    size_t cap = MAX_HEAD + (size_t)hs.srv->cfg.http_max_body + 1;
    for (;;) {
        if (hc->in_len >= cap)
            break;
        buf_reserve(&hc->in, &hc->in_cap, hc->in_len + 65536 < cap ? hc->in_len + 65536 : cap);
        ssize_t r = recv(fd, hc->in + hc->in_len, hc->in_cap - hc->in_len, 0);
        if (r > 0) {
            hc->in_len += (size_t)r;
            continue;
        }
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
            break;
        hc_close(hc); /* EOF or error */
        return;
    }
    process_input(hc);
    if (!hc->closed)
        hc_update(hc);
}

static void on_accept(struct loop *l, int fd, short revents, void *ud)
{
    for (;;) {
        int c = accept4(fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (c < 0) {
            if (errno == EMFILE || errno == ENFILE)
                log_warn("http: accept: %s", strerror(errno));
            return;
        }
        if (hs.nconns >= (size_t)hs.srv->cfg.http_max_conns) {
            static const char busy[] = "HTTP/1.1 503 Service Unavailable\r\nContent-Length: 21\r\n"
                                       "Connection: close\r\nRetry-After: 1\r\n\r\n"
                                       "too many connections\n";
            metrics_http_request(503);
            (void)!send(c, busy, sizeof busy - 1, MSG_NOSIGNAL | MSG_DONTWAIT);
            close(c);
            log_warn("http: connection refused: --http-max-connections (%lld) reached",
                     hs.srv->cfg.http_max_conns);
            continue;
        }
        int one = 1;
        setsockopt(c, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
        struct hconn *hc = calloc(1, sizeof *hc);
        if (!hc)
            abort();
        hc->fd = c;
        hc->next = hs.conns;
        hs.conns = hc;
        hs.nconns++;
        loop_add_fd(hs.srv->loop, c, POLLIN, on_conn_io, hc);
        hc_update(hc);
    }
}

/* --------------------------------------------------------- MCP sessions */

static struct msess *find_msess(const struct http_span *id)
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
            return;
        }
    }
}

/* A notification for a request: on that request's POST, as SSE. */
static void post_notify(struct msess *ms, struct post *p, json_t *msg)
{
    struct hconn *hc = p->hc;
    if (!hc || hc->closed)
        return;
    if (!p->sse) {
        start_sse(hc, p->is_init ? ms->id : NULL);
        p->sse = true;
    }
    sse_event(hc, msg);
    try_flush(hc);
}

/* A notification tied to no request: the GET stream, else any open POST. */
static void session_notify(struct msess *ms, json_t *msg)
{
    if (ms->stream && !ms->stream->closed) {
        sse_event(ms->stream, msg);
        try_flush(ms->stream);
        return;
    }
    for (struct post *p = ms->posts; p; p = p->next) {
        if (p->hc && !p->hc->closed) {
            post_notify(ms, p, msg);
            return;
        }
    }
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
        if (!p)
            return;
        unlink_post(ms, p);
        if (hs.current == p)
            hs.current = NULL;
        struct hconn *hc = p->hc;
        if (hc && !hc->closed) {
            if (p->sse) {
                sse_event(hc, msg);
                sse_end(hc);
            } else {
                char *text = json_dumps(msg, JSON_COMPACT);
                char extra[80] = "";
                if (p->is_init)
                    snprintf(extra, sizeof extra, "Mcp-Session-Id: %s\r\n", ms->id);
                respond_h(hc, 200, "application/json", extra, text ? text : "",
                          text ? strlen(text) : 0);
                free(text);
            }
        }
        free_post(p);
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
    session_notify(ms, msg);
}

static void recompute_log_sink(void);

static void http_log_level_changed(struct mcp_conn *c)
{
    recompute_log_sink();
}

static const struct mcp_transport_ops http_ops = {.send = http_send,
                                                  .log_level_changed = http_log_level_changed};

static struct msess *msess_new(void)
{
    struct msess *ms = calloc(1, sizeof *ms);
    if (!ms)
        abort();
    session_new_id(ms->id);
    ms->mcp = mcp_conn_new(hs.srv, &http_ops, ms);
    if (!ms->mcp)
        abort();
    ms->last_used = mono_ms();
    ms->next = hs.sessions;
    hs.sessions = ms;
    hs.nsessions++;
    return ms;
}

/* End an MCP session: close its default browser session (its queued calls
 * answer CANCELLED on their POSTs), end its streams, forget it. */
static void msess_end(struct msess *ms, const char *why)
{
    for (struct msess **pp = &hs.sessions; *pp; pp = &(*pp)->next) {
        if (*pp == ms) {
            *pp = ms->next;
            hs.nsessions--;
            break;
        }
    }
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
                sse_end(p->hc);
            else
                respond_rpc_error(p->hc, 404, -32001, "MCP session ended", NULL);
        }
        free_post(p);
    }
    if (ms->stream && !ms->stream->closed) {
        ms->stream->stream_of = NULL;
        sse_end(ms->stream);
    }
    free(ms);
    recompute_log_sink();
}

static void housekeeping(struct loop *l, void *ud)
{
    long long now = mono_ms();
    struct msess *ms = hs.sessions;
    while (ms) {
        struct msess *next = ms->next;
        if (!ms->posts && !ms->stream && now - ms->last_used > hs.srv->cfg.idle_ms)
            msess_end(ms, "idle");
        ms = next;
    }
    hs.housekeeping = loop_add_timer(l, HOUSEKEEPING_MS, housekeeping, NULL);
}

/* ------------------------------------------------------------- logging */

static void flush_logs(void *ud)
{
    hs.flush_scheduled = false;
    if (!hs.running || !hs.pending_logs)
        return;
    json_t *logs = hs.pending_logs;
    hs.pending_logs = NULL;
    size_t i;
    json_t *item;
    json_array_foreach(logs, i, item)
    {
        const char *sid = json_string_value(json_array_get(item, 0));
        struct http_span id = {sid, strlen(sid)};
        struct msess *ms = find_msess(&id);
        if (ms)
            session_notify(ms, json_array_get(item, 1));
    }
    json_decref(logs);
}

/* The log sink: queue a notifications/message for every session whose
 * level admits lvl. Delivery is deferred to the end of the loop iteration,
 * because a log line can come from anywhere, including this file in the
 * middle of changing a list. */
static void log_sink(void *ud, enum log_level lvl, const char *text)
{
    if (!hs.running)
        return;
    for (struct msess *ms = hs.sessions; ms; ms = ms->next) {
        if (ms->mcp->log_level < 0 || (int)lvl < ms->mcp->log_level)
            continue;
        if (!hs.pending_logs)
            hs.pending_logs = json_array();
        if (json_array_size(hs.pending_logs) >= MAX_PENDING_LOG)
            break;
        json_t *n = json_pack("{s:s, s:s, s:{s:s, s:s, s:s}}", "jsonrpc", "2.0", "method",
                              "notifications/message", "params", "level", log_level_name(lvl),
                              "logger", "tabvisor", "data", text);
        json_array_append_new(hs.pending_logs, json_pack("[s, o]", ms->id, n));
    }
    if (hs.pending_logs && !hs.flush_scheduled) {
        hs.flush_scheduled = true;
        loop_defer(hs.srv->loop, flush_logs, NULL);
    }
}

static void recompute_log_sink(void)
{
    int min = -1;
    for (struct msess *ms = hs.sessions; ms; ms = ms->next)
        if (ms->mcp->log_level >= 0 && (min < 0 || ms->mcp->log_level < min))
            min = ms->mcp->log_level;
    if (min < 0 || min > LOG_ERROR)
        log_set_sink(NULL, NULL, LOG_ERROR);
    else
        log_set_sink(log_sink, NULL, (enum log_level)min);
}

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
        respond_rpc_error(hc, 400, -32000, "Bad Request: Mcp-Session-Id header is required", NULL);
        return NULL;
    }
    struct msess *ms = find_msess(sid);
    if (!ms) {
        respond_rpc_error(hc, 404, -32001, "Session not found", NULL);
        return NULL;
    }
    ms->last_used = mono_ms();
    return ms;
}

static void handle_post(struct hconn *hc, const struct http_request *req, const char *body,
                        size_t len)
{
    if (!accepts(req, "application/json") || !accepts(req, "text/event-stream")) {
        respond_rpc_error(hc, 406, -32000,
                          "Not Acceptable: Accept must list application/json and text/event-stream",
                          NULL);
        return;
    }
    const struct http_span *ct = http_header(req, "content-type");
    if (!ct || !http_list_has(*ct, "application/json")) {
        respond_rpc_error(hc, 415, -32000, "Unsupported Media Type: use application/json", NULL);
        return;
    }
    json_error_t jerr;
    json_t *msg = json_loadb(body, len, JSON_ALLOW_NUL, &jerr);
    if (!msg) {
        char m[300];
        snprintf(m, sizeof m, "Parse error: %s", jerr.text);
        respond_rpc_error(hc, 400, -32700, m, NULL);
        return;
    }
    if (!json_is_object(msg)) {
        respond_rpc_error(hc, 400, -32600,
                          json_is_array(msg) ? "Invalid Request: batches are not supported"
                                             : "Invalid Request: expected a JSON-RPC 2.0 object",
                          NULL);
        json_decref(msg);
        return;
    }
    const char *version = json_string_value(json_object_get(msg, "jsonrpc"));
    const char *method = json_string_value(json_object_get(msg, "method"));
    json_t *id = json_object_get(msg, "id");
    bool is_request = method && id;
    bool is_init = method && strcmp(method, "initialize") == 0;
    if (!version || strcmp(version, "2.0") != 0 ||
        (!method && !json_object_get(msg, "result") && !json_object_get(msg, "error"))) {
        respond_rpc_error(hc, 400, -32600, "Invalid Request: expected a JSON-RPC 2.0 message",
                          NULL);
        json_decref(msg);
        return;
    }
    struct msess *ms;
    if (is_init) {
        if (http_header(req, "mcp-session-id")) {
            respond_rpc_error(hc, 400, -32600,
                              "Invalid Request: initialize must not carry an Mcp-Session-Id", NULL);
            json_decref(msg);
            return;
        }
        if (!is_request) {
            respond_rpc_error(hc, 400, -32600, "Invalid Request: initialize needs an id", NULL);
            json_decref(msg);
            return;
        }
        if (hs.nsessions >= MAX_MCP_SESSIONS) {
            respond_rpc_error(hc, 503, -32000, "Too many MCP sessions", NULL);
            json_decref(msg);
            return;
        }
        ms = msess_new();
        log_info("http: MCP session %s started", ms->id);
    } else {
        const struct http_span *pv = http_header(req, "mcp-protocol-version");
        if (pv) {
            char v[32];
            snprintf(v, sizeof v, "%.*s", (int)(pv->n < 31 ? pv->n : 31), pv->p);
            if (!mcp_version_supported(v)) {
                char m[120];
                snprintf(m, sizeof m, "Bad Request: unsupported MCP-Protocol-Version %s", v);
                respond_rpc_error(hc, 400, -32000, m, NULL);
                json_decref(msg);
                return;
            }
        }
        ms = request_session(hc, req);
        if (!ms) {
            json_decref(msg);
            return;
        }
    }
    if (!is_request) {
        /* A notification or a response: accepted, nothing to send back. */
        respond(hc, 202, NULL, NULL, 0);
        mcp_conn_handle(ms->mcp, body, len);
        json_decref(msg);
        return;
    }
    struct post *p = calloc(1, sizeof *p);
    if (!p)
        abort();
    p->hc = hc;
    p->rpc_id = json_incref(id);
    p->is_init = is_init;
    json_t *tok =
        json_object_get(json_object_get(json_object_get(msg, "params"), "_meta"), "progressToken");
    if (json_is_string(tok) || json_is_integer(tok))
        p->progress_token = json_incref(tok);
    p->next = ms->posts;
    ms->posts = p;
    hc->post = p;
    hc->state = HC_WAIT;
    json_decref(msg);
    hs.current = p;
    mcp_conn_handle(ms->mcp, body, len);
    if (hs.current == p) {
        hs.current = NULL;
    }
}

static void handle_get(struct hconn *hc, const struct http_request *req)
{
    if (!accepts(req, "text/event-stream")) {
        respond_rpc_error(hc, 406, -32000, "Not Acceptable: Accept must list text/event-stream",
                          NULL);
        return;
    }
    struct msess *ms = request_session(hc, req);
    if (!ms)
        return;
    if (ms->stream && !ms->stream->closed) {
        respond_rpc_error(hc, 409, -32000, "Conflict: this session already has a GET stream", NULL);
        return;
    }
    start_sse(hc, NULL);
    hc->state = HC_STREAM;
    hc->stream_of = ms;
    ms->stream = hc;
    try_flush(hc);
}

static void handle_delete(struct hconn *hc, const struct http_request *req)
{
    struct msess *ms = request_session(hc, req);
    if (!ms)
        return;
    msess_end(ms, "DELETE from the client");
    respond(hc, 200, NULL, NULL, 0);
}

static void handle_request(struct hconn *hc, const struct http_request *req, const char *body,
                           size_t len)
{
    struct http_span path = req->target;
    const char *q = memchr(path.p, '?', path.n);
    if (q)
        path.n = (size_t)(q - path.p);
    if (!host_allowed(http_header(req, "host"))) {
        log_warn("http: 403 for a request with a foreign Host header");
        respond(hc, 403, "text/plain", "forbidden host\n", 15);
        return;
    }
    if (!origin_allowed(http_header(req, "origin"))) {
        log_warn("http: 403 for a request with a foreign Origin header");
        respond(hc, 403, "text/plain", "forbidden origin\n", 17);
        return;
    }
    bool get = http_span_ieq(req->method, "GET");
    if (http_span_ieq(path, "/healthz")) {
        char b[160];
        int n =
            snprintf(b, sizeof b, "{\"status\":\"ok\",\"browserSessions\":%zu,\"mcpSessions\":%zu}",
                     session_count(hs.srv->sessions), hs.nsessions);
        respond(hc, get ? 200 : 405, "application/json", b, get ? (size_t)n : 0);
        return;
    }
    if (!auth_ok(req)) {
        respond_h(hc, 401, "text/plain", "WWW-Authenticate: Bearer realm=\"tabvisor\"\r\n",
                  "unauthorized\n", 13);
        return;
    }
    if (http_span_ieq(path, "/metrics")) {
        char *text = metrics_render(hs.srv, hs.nsessions, hs.nconns);
        respond(hc, 200, "text/plain; version=0.0.4; charset=utf-8", text, strlen(text));
        free(text);
        return;
    }
    if (!(path.n == 4 && memcmp(path.p, "/mcp", 4) == 0)) {
        respond(hc, 404, "text/plain", "not found\n", 10);
        return;
    }
    if (http_span_ieq(req->method, "POST"))
        handle_post(hc, req, body, len);
    else if (get)
        handle_get(hc, req);
    else if (http_span_ieq(req->method, "DELETE"))
        handle_delete(hc, req);
    else
        respond_h(hc, 405, "text/plain", "Allow: GET, POST, DELETE\r\n", "method not allowed\n",
                  19);
}

/* Parse and run the requests that are complete in hc->in. */
static void process_input(struct hconn *hc)
{
    while (!hc->closed && hc->state == HC_READ && hc->in_len > 0) {
        struct http_request req;
        enum http_parse_result r = http_parse_request(hc->in, hc->in_len, MAX_HEAD, &req);
        if (r == HTTP_PARSE_MORE)
            return;
        hc->keep_alive = false;
        if (r == HTTP_PARSE_ERROR) {
            char b[128];
            int n = snprintf(b, sizeof b, "%s\n", req.error);
            respond(hc, req.error_status, "text/plain", b, (size_t)n);
            return;
        }
        if (req.transfer_encoding) {
            respond(hc, 411, "text/plain", "chunked request bodies are not supported\n", 41);
            return;
        }
        long long cl = req.content_length < 0 ? 0 : req.content_length;
        if (cl > hs.srv->cfg.http_max_body) {
            respond_rpc_error(hc, 413, -32000, "Request body too large (--http-max-body)", NULL);
            return;
        }
        if (hc->in_len - req.head_len < (size_t)cl)
            return; /* the body is still coming */
        hc->keep_alive = req.keep_alive;
        size_t used = req.head_len + (size_t)cl;
        /* The spans point into hc->in: handle before consuming. */
        handle_request(hc, &req, hc->in + req.head_len, (size_t)cl);
        if (hc->closed)
            return;
        memmove(hc->in, hc->in + used, hc->in_len - used);
        hc->in_len -= used;
        hc->request_timer = false;
    }
}

/* --------------------------------------------------------------- public */

int http_transport_start(struct server *srv)
{
    struct config *cfg = &srv->cfg;
    hs.srv = srv;
    struct addrinfo hints = {.ai_family = AF_UNSPEC,
                             .ai_socktype = SOCK_STREAM,
                             .ai_flags = AI_PASSIVE | AI_NUMERICSERV};
    struct addrinfo *ai = NULL;
    char port[16];
    snprintf(port, sizeof port, "%d", cfg->http_port);
    int rc = getaddrinfo(cfg->http_host, port, &hints, &ai);
    if (rc != 0) {
        log_error("--http %s: %s", cfg->http, gai_strerror(rc));
        return -1;
    }
    int fd = -1;
    for (struct addrinfo *a = ai; a && fd < 0; a = a->ai_next) {
        fd = socket(a->ai_family, a->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
        if (fd < 0)
            continue;
        int one = 1;
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
        if (bind(fd, a->ai_addr, a->ai_addrlen) < 0 || listen(fd, 128) < 0) {
            log_error("--http %s: %s", cfg->http, strerror(errno));
            close(fd);
            fd = -1;
        }
    }
    freeaddrinfo(ai);
    if (fd < 0)
        return -1;
    struct sockaddr_storage ss;
    socklen_t sl = sizeof ss;
    getsockname(fd, (struct sockaddr *)&ss, &sl);
    char addr[INET6_ADDRSTRLEN] = "";
    if (ss.ss_family == AF_INET6) {
        struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)&ss;
        inet_ntop(AF_INET6, &s6->sin6_addr, addr, sizeof addr);
        hs.port = ntohs(s6->sin6_port);
        snprintf(hs.url_host, sizeof hs.url_host, "[%s]", addr);
    } else {
        struct sockaddr_in *s4 = (struct sockaddr_in *)&ss;
        inet_ntop(AF_INET, &s4->sin_addr, addr, sizeof addr);
        hs.port = ntohs(s4->sin_port);
        snprintf(hs.url_host, sizeof hs.url_host, "%s", addr);
    }
    int n = snprintf(hs.self_hosts, sizeof hs.self_hosts, "%s:%d", hs.url_host, hs.port);
    if (config_host_is_loopback(cfg->http_host))
        snprintf(hs.self_hosts + n, sizeof hs.self_hosts - (size_t)n,
                 ",127.0.0.1:%d,localhost:%d,[::1]:%d", hs.port, hs.port, hs.port);
    hs.lfd = fd;
    hs.running = true;
    srv->http_port = hs.port;
    loop_add_fd(srv->loop, fd, POLLIN, on_accept, NULL);
    hs.housekeeping = loop_add_timer(srv->loop, HOUSEKEEPING_MS, housekeeping, NULL);
    fprintf(stderr, "Listening on http://%s:%d/mcp\n", hs.url_host, hs.port);
    fflush(stderr);
    return 0;
}

void http_transport_flush(long long timeout_ms)
{
    long long end = mono_ms() + timeout_ms;
    for (;;) {
        size_t n = 0;
        for (struct hconn *hc = hs.conns; hc; hc = hc->next)
            if (hc->out_len)
                n++;
        if (!n || mono_ms() >= end)
            return;
        struct pollfd *pf = calloc(n, sizeof *pf);
        struct hconn **hcs = calloc(n, sizeof *hcs);
        if (!pf || !hcs)
            abort();
        size_t i = 0;
        for (struct hconn *hc = hs.conns; hc; hc = hc->next)
            if (hc->out_len) {
                pf[i] = (struct pollfd){.fd = hc->fd, .events = POLLOUT};
                hcs[i++] = hc;
            }
        if (poll(pf, n, 50) > 0)
            for (i = 0; i < n; i++)
                if (pf[i].revents)
                    try_flush(hcs[i]);
        free(pf);
        free(hcs);
    }
}

void http_transport_stop(void)
{
    if (!hs.srv)
        return;
    hs.running = false;
    log_set_sink(NULL, NULL, LOG_ERROR);
    loop_del_timer(hs.srv->loop, hs.housekeeping);
    while (hs.sessions)
        msess_end(hs.sessions, "server shutting down");
    http_transport_flush(500);
    while (hs.conns)
        hc_close(hs.conns);
    if (hs.lfd >= 0) {
        loop_del_fd(hs.srv->loop, hs.lfd);
        close(hs.lfd);
        hs.lfd = -1;
    }
    json_decref(hs.pending_logs);
    hs.pending_logs = NULL;
}
