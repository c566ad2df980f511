/*
 * http_out.c - what goes out on a connection: buffered writes, status lines
 * and headers, JSON-RPC error bodies, SSE streams and their events.
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

/* ---------------------------------------------------------------- output */

void http_buf_reserve(char **p, size_t *cap, size_t need)
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

void http_try_flush(struct hconn *hc)
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
    http_buf_reserve(&hc->out, &hc->out_cap, hc->out_len + n);
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
    http_process_input(hc);
    if (!hc->closed)
        hc_update(hc);
}

/* After a response is complete: next request, or close. A request pipelined
 * behind this one may already be in hc->in, where no socket event will
 * announce it: read it from a timer, not from here, since the caller may be
 * http_process_input() itself or the router in the middle of a change. */
static void response_done(struct hconn *hc)
{
    hc->post = NULL;
    hc->state = hc->keep_alive ? HC_READ : HC_CLOSING;
    http_try_flush(hc);
    if (!hc->closed && hc->state == HC_READ && hc->in_len > 0 && !hc->resume_timer)
        hc->resume_timer = loop_add_timer(hs.srv->loop, 0, on_resume, hc);
}

/* A whole response. extra: more header lines, each ending in CRLF. After
 * errors that may leave the stream out of step, the connection closes. */
void http_respond_h(struct hconn *hc, int status, const char *ctype, const char *extra,
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

void http_respond(struct hconn *hc, int status, const char *ctype, const char *body, size_t len)
{
    http_respond_h(hc, status, ctype, NULL, body, len);
}

/* A JSON-RPC error as the body of an HTTP error (id null: the request was
 * not processed). */
void http_respond_rpc_error(struct hconn *hc, int status, int code, const char *msg,
                            const char *extra)
{
    json_t *j = json_pack("{s:s, s:n, s:{s:i, s:s}}", "jsonrpc", "2.0", "id", "error", "code", code,
                          "message", msg);
    char *text = json_dumps(j, JSON_COMPACT);
    json_decref(j);
    http_respond_h(hc, status, "application/json", extra, text ? text : "",
                   text ? strlen(text) : 0);
    free(text);
}

void http_start_sse(struct hconn *hc, const char *session_header)
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
void http_sse_write(struct hconn *hc, uint64_t stream, uint64_t n, const char *data, size_t len)
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

void http_sse_end(struct hconn *hc)
{
    if (hc->chunked) {
        hc_write(hc, "0\r\n\r\n", 5);
        response_done(hc);
    } else {
        hc->post = NULL;
        hc->state = HC_CLOSING;
        http_try_flush(hc);
    }
}
