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
 * A connection handles one request at a time, and reads only what that
 * request needs: first its head, which alone decides whether the request is
 * admitted (Host, Origin, token, size), then exactly its body. A refused
 * request's body is never buffered: the answer goes out, the connection
 * shuts its sending side and drops what still arrives (lingering close).
 * While a POST waits for its answer the connection only watches for the
 * peer hanging up (POLLRDHUP), so pipelined requests wait in the socket or
 * in its input buffer; a peer that only half-closed (shutdown(SHUT_WR))
 * still gets its answer. Closing is immediate (fd closed, references
 * cleared) but the struct is freed through loop_defer, so a caller further
 * up the stack may still look at hc->closed.
 *
 * SSE events carry ids "STREAM-N": STREAM is 0 for the session's GET stream
 * and a number per POST stream, N counts the session's events. The last
 * events of each session are kept (bounded) so that a client reconnecting
 * with GET and Last-Event-ID gets what it missed on that stream.
 */
#include "http.h"

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

#define MAX_HEAD (16 * 1024)
#define IDLE_MS 60000    /* keep-alive connection with nothing to say */
#define REQUEST_MS 30000 /* first byte to whole request (slow clients) */
#define PING_MS 15000    /* SSE comment so proxies keep streams open */
#define LINGER_MS 2000   /* after the last answer: drop what the client still sends */
#define LINGER_BYTES (8u << 20)
#define MAX_OUT (64u << 20) /* a client that stops reading loses its connection */
#define HOUSEKEEPING_MS 1000
#define MAX_PENDING_LOG 256      /* log lines waiting for the deferred flush */
#define ACCEPT_PAUSE_MS 1000     /* out of descriptors: stop accepting this long (as tmux) */
#define SMALL_BODY (64 * 1024)   /* bodies up to this size need no reservation */
#define MAX_RESERVED (64u << 20) /* larger bodies together (or one --http-max-body) */
#define MAX_MSESS_PER_CONN 64    /* live MCP sessions initialized over one connection */
#define MAX_POSTS_PER_MSESS 64   /* unanswered requests of one MCP session */
#define REPLAY_EVENTS 64         /* SSE events kept per MCP session for Last-Event-ID */
#define REPLAY_BYTES (1u << 20)  /* ... and their size, per session */
#define REPLAY_TOTAL (32u << 20) /* ... and over all sessions */

enum hc_state {
    HC_READ,    /* reading a request (or idle between requests) */
    HC_WAIT,    /* a POST waits for its JSON-RPC response (maybe streaming SSE) */
    HC_STREAM,  /* the standalone GET SSE stream of a session */
    HC_CLOSING, /* write what is buffered, then linger */
    HC_DRAIN    /* sending side shut: drop input until EOF or LINGER_MS */
};

struct msess;

struct hconn {
    struct hconn *next;
    int fd;
    uint64_t serial; /* MCP sessions remember which connection initialized them */
    enum hc_state state;
    char *in;
    size_t in_len, in_cap;
    size_t need;     /* once the head is admitted: bytes of head and body */
    size_t reserved; /* bytes of hs.reserved this request's body holds */
    char *out;
    size_t out_len, out_off, out_cap;
    size_t drained; /* HC_DRAIN: bytes dropped */
    uint64_t timer;
    uint64_t resume_timer; /* reads a request pipelined behind an answered one */
    long long idle_since;  /* mono ms; HC_READ with nothing buffered */
    bool request_timer;    /* the timer is the slow-request one */
    bool keep_alive;
    bool http11;   /* the current request is HTTP/1.1 (chunked responses allowed) */
    bool chunked;  /* the current streamed response uses chunked coding */
    bool peer_eof; /* the client shut its sending side */
    bool closed;
    struct post *post;       /* HC_WAIT */
    struct msess *stream_of; /* HC_STREAM */
};

struct post {
    struct post *next;
    struct hconn *hc;
    json_t *rpc_id;
    json_t *progress_token;
    uint64_t stream; /* SSE stream number once sse */
    bool sse;        /* SSE headers sent: further messages are events */
    bool is_init;    /* the response carries the new Mcp-Session-Id */
};

/* One SSE event kept for replay. */
struct sse_ev {
    struct sse_ev *next;
    uint64_t stream, n;
    size_t len;
    char text[];
};

struct msess {
    struct msess *next;
    char id[SESSION_ID_LEN + 1];
    struct mcp_conn *mcp;
    struct hconn *stream;
    struct post *posts;
    size_t nposts;
    long long last_used;  /* mono ms */
    uint64_t conn_serial; /* the connection that sent initialize */
    bool used;            /* made a request after initialize */
    bool had_get;         /* a GET stream was opened once: stream 0 exists */
    uint64_t next_stream, next_event;
    struct sse_ev *replay, *replay_tail;
    size_t replay_count, replay_bytes;
};

static struct {
    struct server *srv;
    int lfd;
    int port;
    char url_host[300];   /* host as printed in URLs ([v6] bracketed) */
    char self_hosts[900]; /* Host values that name us, comma-separated */
    struct hconn *conns;
    size_t nconns;
    uint64_t next_serial;
    size_t reserved; /* body bytes reserved by admitted large requests */
    struct msess *sessions;
    size_t nsessions;
    size_t replay_bytes;   /* over all sessions */
    struct post *current;  /* the request mcp_conn_handle is handling now */
    struct msess *log_ctx; /* the session whose message is being handled */
    uint64_t housekeeping;
    uint64_t accept_timer; /* accepting paused (out of descriptors) */
    json_t *pending_logs;  /* array of [session id, notification] */
    bool flush_scheduled;
    bool running;
} hs = {.lfd = -1};

static void hc_close(struct hconn *hc);
static void hc_update(struct hconn *hc);
static void process_input(struct hconn *hc);
static void hc_linger(struct hconn *hc);

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
        metrics_bytes_sent("http", (size_t)w);
    }
    if (hc->out_off == hc->out_len) {
        hc->out_off = hc->out_len = 0;
        /* A large response went out: do not keep its buffer for the life of
         * a keep-alive connection. */
        if (hc->out_cap > MEMTRIM_KEEP_BYTES) {
            memtrim_released(hc->out_cap);
            free(hc->out);
            hc->out = NULL;
            hc->out_cap = 0;
        }
    }
    if (hc->state == HC_CLOSING && hc->out_len == 0) {
        hc_linger(hc);
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
    case 204:
        return "No Content";
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
    case 429:
        return "Too Many Requests";
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
    if (status != 204)
        hc_printf(hc, "Content-Length: %zu\r\n", len);
    hc_printf(hc, "%s\r\n", hc->keep_alive ? "" : "Connection: close\r\n");
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
    /* HTTP/1.0 has no chunked coding: such a stream ends by closing. */
    hc->chunked = hc->keep_alive && hc->http11;
    if (!hc->chunked)
        hc->keep_alive = false;
    hc_printf(hc,
              "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nCache-Control: no-cache\r\n"
              "%s%s%s%s\r\n",
              session_header ? "Mcp-Session-Id: " : "", session_header ? session_header : "",
              session_header ? "\r\n" : "",
              hc->chunked ? "Transfer-Encoding: chunked\r\n" : "Connection: close\r\n");
}

/* One SSE event with id STREAM-N (data NULL: a ping comment; data "": a
 * priming event that only carries the id). */
static void sse_write(struct hconn *hc, uint64_t stream, uint64_t n, const char *data, size_t len)
{
    char pre[96];
    int pn = data ? snprintf(pre, sizeof pre, "id: %" PRIu64 "-%" PRIu64 "\n%sdata: ", stream, n,
                             len ? "event: message\n" : "")
                  : snprintf(pre, sizeof pre, ": ping");
    static const char post[] = "\n\n";
    size_t total = (size_t)pn + len + 2;
    if (hc->chunked)
        hc_printf(hc, "%zx\r\n", total);
    hc_write(hc, pre, (size_t)pn);
    if (len)
        hc_write(hc, data, len);
    hc_write(hc, post, 2);
    if (hc->chunked)
        hc_write(hc, "\r\n", 2);
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

static bool hc_streaming(const struct hconn *hc)
{
    return hc->state == HC_STREAM || (hc->state == HC_WAIT && hc->post && hc->post->sse);
}

static void hc_update(struct hconn *hc)
{
    if (hc->closed)
        return;
    short ev = hc->out_len ? POLLOUT : 0;
    if (hc->state == HC_READ || hc->state == HC_DRAIN)
        ev |= hc->peer_eof ? 0 : POLLIN;
    else if (!hc->peer_eof)
        ev |= POLLRDHUP;
    loop_set_events(hs.srv->loop, hc->fd, ev);
    if (hc->state == HC_DRAIN) {
        /* its timer was armed by hc_linger */
    } else if (hc->state == HC_READ && hc->in_len == 0) {
        if (hc->request_timer || !hc->timer)
            hc->idle_since = mono_ms();
        hc_arm(hc, IDLE_MS, false);
    } else if (hc->state == HC_READ) {
        if (!hc->request_timer || !hc->timer)
            hc_arm(hc, REQUEST_MS, true);
    } else if (hc_streaming(hc)) {
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

static void release_reservation(struct hconn *hc)
{
    hs.reserved -= hc->reserved;
    hc->reserved = 0;
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
    release_reservation(hc);
    if (hc->post)
        hc->post->hc = NULL; /* its call goes on; the answer is dropped or kept for replay */
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

/* Everything is answered: shut our sending side (the client sees the end of
 * a close-delimited response) and drop what the client still sends, so that
 * closing with unread input does not reset the connection before the client
 * read our answer. Bounded by LINGER_MS and LINGER_BYTES. */
static void hc_linger(struct hconn *hc)
{
    hc->state = HC_DRAIN;
    release_reservation(hc);
    hc->need = 0;
    free(hc->in);
    hc->in = NULL;
    hc->in_len = hc->in_cap = 0;
    if (hc->peer_eof || shutdown(hc->fd, SHUT_WR) < 0) {
        hc_close(hc);
        return;
    }
    hc_arm(hc, LINGER_MS, false);
    hc_update(hc);
}

static void drain(struct hconn *hc)
{
    char buf[65536];
    for (;;) {
        ssize_t r = recv(hc->fd, buf, sizeof buf, 0);
        if (r > 0) {
            hc->drained += (size_t)r;
            if (hc->drained > LINGER_BYTES)
                break;
            continue;
        }
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
            return;
        break; /* EOF or error */
    }
    hc_close(hc);
}

static void on_conn_timer(struct loop *l, void *ud)
{
    struct hconn *hc = ud;
    hc->timer = 0;
    if (hc->closed)
        return;
    if (hc->state == HC_DRAIN) {
        hc_close(hc);
        return;
    }
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
    if (hc_streaming(hc)) {
        sse_write(hc, 0, 0, NULL, 0);
        try_flush(hc);
        if (!hc->closed)
            hc_arm(hc, PING_MS, false);
    }
}

/* Read what the current request needs: up to MAX_HEAD bytes until its head
 * is admitted, then exactly the rest of its body. Nothing beyond is read, so
 * a refused or oversized body never reaches memory. */
static void read_request(struct hconn *hc)
{
    for (;;) {
        size_t want = hc->need ? hc->need : MAX_HEAD + 1;
        if (hc->in_len >= want)
            break;
        size_t chunk = want - hc->in_len < 65536 ? want - hc->in_len : 65536;
        buf_reserve(&hc->in, &hc->in_cap, hc->in_len + chunk);
        ssize_t r = recv(hc->fd, hc->in + hc->in_len, chunk, 0);
        if (r > 0) {
            hc->in_len += (size_t)r;
            if (!hc->need) {
                process_input(hc); /* the head decides whether the body is read */
                if (hc->closed || hc->state != HC_READ)
                    return;
            }
            continue;
        }
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
            break;
        if (r < 0) {
            hc_close(hc);
            return;
        }
        hc->peer_eof = true; /* the client may still read our answer */
        break;
    }
    process_input(hc);
    if (hc->closed || !hc->peer_eof)
        return;
    /* Half-closed: answer what arrived whole, then close. */
    hc->keep_alive = false;
    if (hc->state == HC_READ) {
        hc->state = HC_CLOSING;
        try_flush(hc);
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
    if (hc->state == HC_DRAIN) {
        if (revents & (POLLIN | POLLHUP | POLLERR))
            drain(hc);
        return;
    }
    if (hc->state != HC_READ) {
        if (revents & (POLLHUP | POLLERR) ||
            ((revents & POLLRDHUP) && (hc_streaming(hc) || hc->state != HC_WAIT))) {
            if (hc->post)
                log_info("http: client disconnected before its answer; the call goes on");
            hc_close(hc);
        } else if (revents & POLLRDHUP) {
            /* Closed or only half-closed: we cannot tell until we write.
             * Keep the answer's way open; a closed peer fails the write. */
            log_info("http: client disconnected before its answer (or half-closed); the call "
                     "goes on");
            hc->peer_eof = true;
            hc->keep_alive = false;
            hc_update(hc);
        }
        return;
    }
    if (!(revents & (POLLIN | POLLHUP | POLLERR)))
        return;
    read_request(hc);
    if (!hc->closed)
        hc_update(hc);
}

/* The keep-alive connection idle the longest, to make room for a new one. */
static struct hconn *longest_idle(void)
{
    struct hconn *best = NULL;
    for (struct hconn *hc = hs.conns; hc; hc = hc->next)
        if (hc->state == HC_READ && hc->in_len == 0 && hc->out_len == 0 && !hc->resume_timer &&
            (!best || hc->idle_since < best->idle_since))
            best = hc;
    return best;
}

static void on_accept_resume(struct loop *l, void *ud)
{
    hs.accept_timer = 0;
    if (hs.lfd >= 0)
        loop_set_events(l, hs.lfd, POLLIN);
}

static void on_accept(struct loop *l, int fd, short revents, void *ud)
{
    for (;;) {
        int c = accept4(fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (c < 0) {
            if (errno == EINTR || errno == ECONNABORTED)
                continue;
            if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM) {
                /* The pending connection stays in the backlog and the
                 * listener stays readable: polling it now would spin. */
                log_warn("http: accept: %s; not accepting connections for %d ms", strerror(errno),
                         ACCEPT_PAUSE_MS);
                loop_set_events(l, fd, 0);
                hs.accept_timer = loop_add_timer(l, ACCEPT_PAUSE_MS, on_accept_resume, NULL);
            }
            return;
        }
        if (hs.nconns >= (size_t)hs.srv->cfg.http_max_conns) {
            struct hconn *idle = longest_idle();
            if (idle) {
                hc_close(idle);
            } else {
                static const char busy[] =
                    "HTTP/1.1 503 Service Unavailable\r\nContent-Length: 21\r\n"
                    "Connection: close\r\nRetry-After: 1\r\n\r\n"
                    "too many connections\n";
                metrics_http_request(503);
                (void)!send(c, busy, sizeof busy - 1, MSG_NOSIGNAL | MSG_DONTWAIT);
                close(c);
                log_warn("http: connection refused: --http-max-connections (%lld) reached",
                         hs.srv->cfg.http_max_conns);
                continue;
            }
        }
        /* Without a token, loopback serves only our own user (peer_uid.h). */
        char why[300];
        if (!hs.srv->cfg.auth_token && peer_is_us(c, why, sizeof why) < 0) {
            char resp[600];
            int n = snprintf(resp, sizeof resp,
                             "HTTP/1.1 403 Forbidden\r\nContent-Type: text/plain\r\n"
                             "Content-Length: %zu\r\nConnection: close\r\n\r\n%s\n",
                             strlen(why) + 1, why);
            metrics_http_request(403);
            (void)!send(c, resp, (size_t)n, MSG_NOSIGNAL | MSG_DONTWAIT);
            close(c);
            log_warn("http: connection refused: %s", why);
            continue;
        }
        int one = 1;
        setsockopt(c, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
        struct hconn *hc = calloc(1, sizeof *hc);
        if (!hc)
            abort();
        hc->fd = c;
        hc->serial = ++hs.next_serial;
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

/* Keep an event for replay, within the per-session and total bounds (the
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
 * event id, is kept for replay, and goes out on hc when there is one. */
static void sse_emit(struct msess *ms, uint64_t stream, struct hconn *hc, json_t *msg)
{
    char *text = json_dumps(msg, JSON_COMPACT);
    if (!text)
        return;
    size_t len = strlen(text);
    uint64_t n = ++ms->next_event;
    replay_keep(ms, stream, n, text, len);
    if (hc && !hc->closed) {
        sse_write(hc, stream, n, text, len);
        try_flush(hc);
    }
    free(text);
}

/* Send the kept events of `stream` after event `after` on hc. */
static void replay(struct msess *ms, uint64_t stream, uint64_t after, struct hconn *hc)
{
    for (struct sse_ev *e = ms->replay; e; e = e->next)
        if (e->stream == stream && e->n > after)
            sse_write(hc, stream, e->n, e->text, e->len);
}

/* A notification for a request: on that request's POST, as SSE. Once the
 * stream started, events are kept for replay even while the client is away. */
static void post_notify(struct msess *ms, struct post *p, json_t *msg)
{
    struct hconn *hc = p->hc && !p->hc->closed ? p->hc : NULL;
    if (!p->sse) {
        if (!hc)
            return; /* no stream the client could resume */
        start_sse(hc, p->is_init ? ms->id : NULL);
        p->sse = true;
        p->stream = ++ms->next_stream;
    }
    sse_emit(ms, p->stream, hc, msg);
}

/* A notification tied to no request: the GET stream, else any open POST,
 * else kept for the GET stream's resumption when it existed. */
static void session_notify(struct msess *ms, json_t *msg)
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

/* The response to p: ends its POST (or its stream, kept for replay). */
static void post_answer(struct msess *ms, struct post *p, json_t *msg)
{
    unlink_post(ms, p);
    if (hs.current == p)
        hs.current = NULL;
    struct hconn *hc = p->hc && !p->hc->closed ? p->hc : NULL;
    if (p->sse) {
        sse_emit(ms, p->stream, hc, msg);
        if (hc && !hc->closed)
            sse_end(hc);
    } else if (hc) {
        char *text = json_dumps(msg, JSON_COMPACT);
        char extra[80] = "";
        if (p->is_init)
            snprintf(extra, sizeof extra, "Mcp-Session-Id: %s\r\n", ms->id);
        respond_h(hc, 200, "application/json", extra, text ? text : "", text ? strlen(text) : 0);
        free(text);
    }
    free_post(p);
}

/* p was cancelled (notifications/cancelled): MCP says no response follows,
 * so end its HTTP response without one: an SSE stream with no events, or
 * the end of the stream it already has. */
static void post_abandon(struct msess *ms, struct post *p)
{
    unlink_post(ms, p);
    struct hconn *hc = p->hc && !p->hc->closed ? p->hc : NULL;
    if (hc) {
        if (!p->sse)
            start_sse(hc, NULL);
        sse_end(hc);
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
    session_notify(ms, msg);
}

static void recompute_log_sink(void);

static void http_log_level_changed(struct mcp_conn *c)
{
    recompute_log_sink();
}

static const struct mcp_transport_ops http_ops = {.send = http_send,
                                                  .log_level_changed = http_log_level_changed};

static struct msess *msess_new(uint64_t conn_serial)
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
static void msess_end(struct msess *ms, const char *why)
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
    while (ms->replay)
        replay_drop_head(ms);
    free(ms);
    recompute_log_sink();
}

static size_t sessions_of_conn(uint64_t serial)
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
static struct msess *oldest_unused(void)
{
    /* The list runs newest first, so on a tie (sessions made within the
     * same millisecond) the later one in the list is the older: hence <=. */
    struct msess *best = NULL;
    for (struct msess *ms = hs.sessions; ms; ms = ms->next)
        if (msess_unused(ms) && (!best || ms->last_used <= best->last_used))
            best = ms;
    return best;
}

static void housekeeping(struct loop *l, void *ud)
{
    long long now = mono_ms();
    struct msess *ms = hs.sessions;
    while (ms) {
        struct msess *next = ms->next;
        if (msess_unused(ms) && now - ms->last_used > hs.srv->cfg.http_unused_ms)
            msess_end(ms, "no request since initialize");
        else if (!ms->posts && !ms->stream && now - ms->last_used > hs.srv->cfg.idle_ms)
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

/* Copy text with what must never reach a client masked: the token and any
 * WebSocket URL (the browser's endpoint). */
static char *redact(const char *text)
{
    size_t n = strlen(text);
    char *out = malloc(n + 1);
    if (!out)
        abort();
    memcpy(out, text, n + 1);
    const char *token = hs.srv->cfg.auth_token;
    size_t tn = token ? strlen(token) : 0;
    for (char *p = out; tn && (p = strstr(p, token));)
        memset(p, '*', tn);
    static const char *const urls[] = {"ws://", "wss://"};
    for (size_t i = 0; i < 2; i++) {
        for (char *p = out; (p = strstr(p, urls[i]));) {
            char *e = p;
            while (*e && *e != ' ' && *e != '\t')
                e++;
            memset(p, '*', (size_t)(e - p));
            p = e;
        }
    }
    return out;
}

/* The log sink. Server-wide lines go to no client: they name other
 * clients' MCP and browser sessions and worker pids, which would let one
 * client take over another's sessions. A line reaches a client only when
 * it was logged while that client's own message was being handled
 * (hs.log_ctx), at or above its logging/setLevel level, and redacted.
 * Delivery is deferred to the end of the loop iteration, because a log line
 * can come from anywhere, including this file in the middle of changing a
 * list. */
static void log_sink(void *ud, enum log_level lvl, const char *text)
{
    struct msess *ms = hs.log_ctx;
    if (!hs.running || !ms || ms->mcp->log_level < 0 || (int)lvl < ms->mcp->log_level)
        return;
    if (!hs.pending_logs)
        hs.pending_logs = json_array();
    if (json_array_size(hs.pending_logs) >= MAX_PENDING_LOG)
        return;
    char *clean = redact(text);
    json_t *n = json_pack("{s:s, s:s, s:{s:s, s:s, s:s}}", "jsonrpc", "2.0", "method",
                          "notifications/message", "params", "level", log_level_name(lvl), "logger",
                          "tabvisor", "data", clean);
    free(clean);
    json_array_append_new(hs.pending_logs, json_pack("[s, o]", ms->id, n));
    if (!hs.flush_scheduled) {
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

/* Hand m to the session's MCP connection, with the session as the context
 * of the log lines this causes (see log_sink). */
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
    if (sessions_of_conn(hc->serial) >= MAX_MSESS_PER_CONN) {
        respond_rpc_error(hc, 429, -32000, "Too many MCP sessions initialized on this connection",
                          "Retry-After: 1\r\n");
        return NULL;
    }
    if (hs.nsessions >= (size_t)hs.srv->cfg.http_max_mcp_sessions) {
        struct msess *victim = oldest_unused();
        if (!victim) {
            respond_rpc_error(hc, 503, -32000, "Too many MCP sessions (--http-max-mcp-sessions)",
                              "Retry-After: 1\r\n");
            return NULL;
        }
        msess_end(victim, "the server is full and it made no request since initialize");
    }
    struct msess *ms = msess_new(hc->serial);
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
            post_abandon(ms, p);
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
        respond_rpc_error(hc, 400, m.error_code ? m.error_code : -32600, m.error, NULL);
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
                respond_rpc_error(hc, 400, -32600, refusal, NULL);
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
                respond_rpc_error(hc, 400, -32000, msg, NULL);
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
        respond(hc, 202, NULL, NULL, 0);
        dispatch(ms, &m);
        end_cancelled(ms, &m);
        jsonrpc_msg_clear(&m);
        return;
    }
    if (ms->nposts >= MAX_POSTS_PER_MSESS) {
        respond_rpc_error(hc, 429, -32000, "Too many unanswered requests in this MCP session",
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
        respond(hc, 204, NULL, NULL, 0);
        return;
    }
    start_sse(hc, NULL);
    replay(ms, stream, after, hc);
    if (!p) {
        sse_end(hc);
        return;
    }
    if (p->hc && !p->hc->closed) {
        p->hc->post = NULL;
        hc_close(p->hc);
    }
    p->hc = hc;
    hc->post = p;
    hc->state = HC_WAIT;
    try_flush(hc);
}

/* GET: the session's standalone stream, new or resumed (Last-Event-ID of
 * stream 0: the kept events after that id first), or the resumption of a
 * POST stream. */
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
    ms->used = true;
    const struct http_span *last = http_header(req, "last-event-id");
    uint64_t stream = 0, after = 0;
    if (last && (!parse_event_id(last, &stream, &after) || stream > ms->next_stream)) {
        respond_rpc_error(hc, 400, -32000, "Bad Request: unknown Last-Event-ID", NULL);
        return;
    }
    if (last && stream > 0) {
        resume_post_stream(hc, ms, stream, after);
        return;
    }
    if (ms->stream && !ms->stream->closed) {
        if (!last) {
            respond_rpc_error(hc, 409, -32000, "Conflict: this session already has a GET stream",
                              NULL);
            return;
        }
        hc_close(ms->stream); /* the client reconnected: this one replaces it */
    }
    size_t max_streams = (size_t)hs.srv->cfg.http_max_conns / 4;
    if (open_get_streams() >= (max_streams ? max_streams : 1)) {
        respond_rpc_error(hc, 503, -32000,
                          "Too many open GET streams (a quarter of --http-max-connections)",
                          "Retry-After: 5\r\n");
        return;
    }
    start_sse(hc, NULL);
    if (last) {
        replay(ms, 0, after, hc);
    } else {
        /* A priming event: the client gets an id to resume this stream from. */
        sse_write(hc, 0, ++ms->next_event, "", 0);
    }
    ms->had_get = true;
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
        respond_rpc_error(hc, 406, -32000,
                          "Not Acceptable: Accept must list application/json and text/event-stream",
                          NULL);
        return false;
    }
    const struct http_span *ct = http_header(req, "content-type");
    if (!ct || !http_list_has(*ct, "application/json")) {
        respond_rpc_error(hc, 415, -32000, "Unsupported Media Type: use application/json", NULL);
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
        respond(hc, 411, "text/plain", "chunked request bodies are not supported\n", 41);
        return false;
    }
    const struct http_span *host = http_header(req, "host");
    if (!host && req->minor == 1) {
        respond(hc, 400, "text/plain", "missing Host header\n", 20);
        return false;
    }
    if (!host_allowed(host)) {
        log_warn("http: 403 for a request with a foreign Host header");
        respond(hc, 403, "text/plain", "forbidden host\n", 15);
        return false;
    }
    if (!origin_allowed(http_header(req, "origin"))) {
        log_warn("http: 403 for a request with a foreign Origin header");
        respond(hc, 403, "text/plain", "forbidden origin\n", 17);
        return false;
    }
    if (!http_span_ieq(request_path(req), "/healthz") && !auth_ok(req)) {
        respond_h(hc, 401, "text/plain", "WWW-Authenticate: Bearer realm=\"tabvisor\"\r\n",
                  "unauthorized\n", 13);
        return false;
    }
    if (http_span_ieq(req->method, "POST") && http_span_ieq(request_path(req), "/mcp") &&
        !post_head_ok(hc, req))
        return false;
    long long cl = req->content_length < 0 ? 0 : req->content_length;
    if (cl > hs.srv->cfg.http_max_body) {
        respond_rpc_error(hc, 413, -32000, "Request body too large (--http-max-body)", NULL);
        return false;
    }
    if (cl > SMALL_BODY) {
        size_t cap = (size_t)hs.srv->cfg.http_max_body > MAX_RESERVED
                         ? (size_t)hs.srv->cfg.http_max_body
                         : MAX_RESERVED;
        if (hs.reserved + (size_t)cl > cap) {
            log_warn("http: 503 for a large body: %zu bytes of large bodies are being received",
                     hs.reserved);
            respond_rpc_error(hc, 503, -32000, "Server busy receiving other large requests",
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
        respond(hc, get ? 200 : 405, "application/json", b, get ? (size_t)n : 0);
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
        hc->keep_alive = false; /* refusals close the connection */
        hc->http11 = r == HTTP_PARSE_DONE && req.minor == 1;
        if (r == HTTP_PARSE_ERROR) {
            char b[128];
            int n = snprintf(b, sizeof b, "%s\n", req.error);
            respond(hc, req.error_status, "text/plain", b, (size_t)n);
            return;
        }
        if (!hc->need && !admit(hc, &req))
            return;
        if (hc->in_len < hc->need)
            return; /* the body is still coming */
        hc->keep_alive = req.keep_alive && !hc->peer_eof;
        size_t used = hc->need;
        hc->need = 0;
        release_reservation(hc);
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
    loop_del_timer(hs.srv->loop, hs.accept_timer);
    hs.accept_timer = 0;
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
