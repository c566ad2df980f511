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

/* The transport's state (http_int.h). */
struct http_state hs = {.lfd = -1};

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

void hc_update(struct hconn *hc)
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

void http_release_reservation(struct hconn *hc)
{
    hs.reserved -= hc->reserved;
    hc->reserved = 0;
}

void hc_close(struct hconn *hc)
{
    if (hc->closed)
        return;
    hc->closed = true;
    loop_del_timer(hs.srv->loop, hc->timer);
    loop_del_timer(hs.srv->loop, hc->resume_timer);
    hc->timer = hc->resume_timer = 0;
    loop_del_fd(hs.srv->loop, hc->fd);
    close(hc->fd);
    http_release_reservation(hc);
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
void hc_linger(struct hconn *hc)
{
    hc->state = HC_DRAIN;
    http_release_reservation(hc);
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
        http_respond(hc, 408, "text/plain", "request timeout\n", 16);
        return;
    }
    if (hc->state == HC_READ) {
        hc_close(hc); /* idle keep-alive connection */
        return;
    }
    if (hc_streaming(hc)) {
        http_sse_write(hc, 0, 0, NULL, 0);
        http_try_flush(hc);
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
        http_buf_reserve(&hc->in, &hc->in_cap, hc->in_len + chunk);
        ssize_t r = recv(hc->fd, hc->in + hc->in_len, chunk, 0);
        if (r > 0) {
            hc->in_len += (size_t)r;
            if (!hc->need) {
                http_process_input(hc); /* the head decides whether the body is read */
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
    http_process_input(hc);
    if (hc->closed || !hc->peer_eof)
        return;
    /* Half-closed: answer what arrived whole, then close. */
    hc->keep_alive = false;
    if (hc->state == HC_READ) {
        hc->state = HC_CLOSING;
        http_try_flush(hc);
    }
}

static void on_conn_io(struct loop *l, int fd, short revents, void *ud)
{
    struct hconn *hc = ud;
    if (hc->closed)
        return;
    if (revents & POLLOUT)
        http_try_flush(hc);
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
    hs.housekeeping = loop_add_timer(srv->loop, HOUSEKEEPING_MS, http_housekeeping, NULL);
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
                    http_try_flush(hcs[i]);
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
        http_msess_end(hs.sessions, "server shutting down");
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
