/*
 * ws.c - the WebSocket cdp_transport (shared and cdp browser modes).
 *
 * A deliberately small RFC 6455 client: it talks only to a DevTools endpoint
 * on this machine (loopback literal or "localhost"), so there is no TLS, no
 * DNS, no proxy, no extensions and no subprotocols. The browser accepts our
 * upgrade because we send no Origin header (Chromium refuses foreign Origins
 * unless --remote-allow-origins is given).
 *
 * Receiving: bytes are read non-blocking into a ws_reader, which streams data
 * payloads into the message being assembled (one copy per byte, however big
 * the message) and hands back whole messages; these wait in a small FIFO so
 * pending() can tell exactly whether recv() has something without a read.
 *
 * Sending: every outgoing frame (our messages, pongs, our close) is appended
 * to one output queue and written from it in order, so a pong can never land
 * inside a half-written message frame. send() writes until the queue is empty
 * or its deadline passes; whatever is left is written by later send() and
 * recv() calls.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <unistd.h>

#include "base64.h"
#include "clock.h"
#include "errbuf.h"
#include "fdio.h"
#include "transport.h"
#include "ws_frame.h"

/* CDP screenshots and snapshots of big pages run to tens of MiB; refuse
 * anything larger than this rather than let one message exhaust memory. */
#define WS_MAX_MESSAGE (256u * 1024 * 1024)
/* Bytes asked of each read(); large enough that a multi-MB message takes few
 * system calls, small enough to keep the raw buffer modest. */
#define WS_READ_CHUNK (256 * 1024)
/* Upgrade response headers larger than this are not a DevTools endpoint. */
#define WS_MAX_RESPONSE_HEAD 16384
/* Refuse to queue more unsent output than this (a browser that stopped reading). */
#define WS_MAX_OUT_QUEUE ((size_t)WS_MAX_MESSAGE + 2 * WS_MAX_HEADER)

struct ws_msg {
    char *data;
    size_t len;
};

struct ws_transport {
    struct cdp_transport base;
    int fd;
    struct ws_reader rd;

    /* Output queue: out[out_start, out_end) is framed, masked, unsent. */
    uint8_t *out;
    size_t out_start, out_end, out_cap;

    /* Whole messages received and not yet returned by recv(). */
    struct ws_msg *q;
    size_t q_head, q_len, q_cap;

    bool dead;       /* nothing more will be read: closed by the peer, or broken */
    bool close_sent; /* our close frame is queued; send nothing after it */
    char err[256];   /* why dead ("" while healthy) */
};

/* ---- output queue ---- */

static void mark_dead(struct ws_transport *w, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static void mark_dead(struct ws_transport *w, const char *fmt, ...)
{
    if (w->dead)
        return; /* keep the first reason: it is the real one */
    w->dead = true;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(w->err, sizeof w->err, fmt, ap);
    va_end(ap);
}

/*
 * Write queued output. With wait, block (poll) until the queue is empty or
 * the deadline passes; without, write what the socket takes now. 0, or -1
 * when the socket is broken (the transport is then dead).
 */
static int out_flush(struct ws_transport *w, long long deadline_ms, bool wait)
{
    while (w->out_start < w->out_end) {
        ssize_t n = send(w->fd, w->out + w->out_start, w->out_end - w->out_start,
                         MSG_NOSIGNAL | MSG_DONTWAIT);
        if (n > 0) {
            w->out_start += (size_t)n;
            continue;
        }
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
            if (!wait)
                return 0;
            int r = fd_wait(w->fd, POLLOUT, deadline_ms);
            if (r == 0)
                return 0; /* still queued; a later send/recv continues */
            if (r < 0) {
                mark_dead(w, "ws: poll: %s", strerror(errno));
                return -1;
            }
            continue;
        }
        mark_dead(w, "ws: write to the browser failed: %s",
                  n < 0 ? strerror(errno) : "no progress");
        return -1;
    }
    w->out_start = w->out_end = 0;
    return 0;
}

/* Append one masked frame to the output queue. 0 or -1 (dead). */
static int out_frame(struct ws_transport *w, enum ws_opcode op, const void *payload, size_t len)
{
    size_t queued = w->out_end - w->out_start;
    if (len > WS_MAX_OUT_QUEUE - WS_MAX_HEADER || queued > WS_MAX_OUT_QUEUE - WS_MAX_HEADER - len) {
        mark_dead(w, "ws: output queue over %zu bytes (is the browser reading?)",
                  (size_t)WS_MAX_OUT_QUEUE);
        return -1;
    }
    size_t need = WS_MAX_HEADER + len;
    if (w->out_start == w->out_end)
        w->out_start = w->out_end = 0;
    if (w->out_cap - w->out_end < need) {
        if (w->out_start > 0) {
            memmove(w->out, w->out + w->out_start, queued);
            w->out_start = 0;
            w->out_end = queued;
        }
        if (w->out_cap - w->out_end < need) {
            size_t ncap = w->out_cap * 2;
            if (ncap < w->out_end + need)
                ncap = w->out_end + need;
            uint8_t *nb = realloc(w->out, ncap);
            if (!nb) {
                mark_dead(w, "ws: out of memory queueing %zu bytes", len);
                return -1;
            }
            w->out = nb;
            w->out_cap = ncap;
        }
    }
    uint8_t mask[4];
    if (ws_random_mask(mask) < 0) {
        mark_dead(w, "ws: getrandom: %s", strerror(errno));
        return -1;
    }
    uint8_t *p = w->out + w->out_end;
    size_t hl = ws_frame_encode(p, true, op, len, mask);
    if (len)
        memcpy(p + hl, payload, len);
    ws_mask(p + hl, len, mask, 0);
    w->out_end += hl + len;
    return 0;
}

/* Queue our close frame (once) and push it out without waiting. */
static void send_close(struct ws_transport *w, unsigned code)
{
    if (w->close_sent || w->fd < 0)
        return;
    uint8_t payload[2] = {(uint8_t)(code >> 8), (uint8_t)code};
    /* Works on a dead transport too (dead means "nothing more to read");
     * failures here only matter if nothing else went wrong first. */
    if (out_frame(w, WS_OP_CLOSE, payload, sizeof payload) == 0)
        out_flush(w, 0, false);
    w->close_sent = true;
}

/* ---- transport ops ---- */

static struct ws_transport *ws_of(struct cdp_transport *t)
{
    return (struct ws_transport *)t;
}

static int ws_send(struct cdp_transport *t, const char *msg, size_t len, long long deadline_ms)
{
    struct ws_transport *w = ws_of(t);
    if (w->dead || w->close_sent)
        return -1;
    if (len > WS_MAX_MESSAGE) {
        /* Not fatal for the connection: nothing was queued. */
        snprintf(w->err, sizeof w->err, "ws: message of %zu bytes is over the %u byte limit", len,
                 WS_MAX_MESSAGE);
        return -1;
    }
    if (out_frame(w, WS_OP_TEXT, msg, len) < 0)
        return -1;
    return out_flush(w, deadline_ms, true);
}

static int q_push(struct ws_transport *w, char *data, size_t len)
{
    if (w->q_head == w->q_len)
        w->q_head = w->q_len = 0;
    if (w->q_len == w->q_cap) {
        size_t ncap = w->q_cap ? w->q_cap * 2 : 16;
        struct ws_msg *nq = realloc(w->q, ncap * sizeof *nq);
        if (!nq)
            return -1;
        w->q = nq;
        w->q_cap = ncap;
    }
    w->q[w->q_len++] = (struct ws_msg){data, len};
    return 0;
}

/* Run the reader over everything buffered: queue messages, answer pings,
 * note a close or a protocol error. */
static void drain_reader(struct ws_transport *w)
{
    for (;;) {
        enum ws_event ev = ws_reader_next(&w->rd);
        switch (ev) {
        case WS_EV_NEED_MORE:
            return;
        case WS_EV_MESSAGE: {
            char *m;
            size_t n;
            ws_reader_take(&w->rd, &m, &n, NULL);
            if (q_push(w, m, n) < 0) {
                free(m);
                mark_dead(w, "ws: out of memory queueing a message");
                send_close(w, WS_CLOSE_TOO_BIG);
                return;
            }
            break;
        }
        case WS_EV_PING:
            if (!w->close_sent && out_frame(w, WS_OP_PONG, w->rd.ctl, w->rd.ctl_len) == 0)
                out_flush(w, 0, false);
            break;
        case WS_EV_CLOSE: {
            unsigned code = ws_close_code(w->rd.ctl, w->rd.ctl_len);
            mark_dead(w, "ws: the browser closed the connection (code %u)", code);
            /* Echo the status code, as RFC 6455 5.5.1 asks; 1005 is never sent. */
            send_close(w, code == 1005 ? WS_CLOSE_NORMAL : code);
            return;
        }
        case WS_EV_ERROR:
            mark_dead(w, "ws: %s", w->rd.error);
            send_close(w, w->rd.error_close_code);
            return;
        }
    }
}

static int ws_recv(struct cdp_transport *t, char **msg, size_t *len)
{
    struct ws_transport *w = ws_of(t);
    for (;;) {
        if (w->q_head < w->q_len) {
            struct ws_msg m = w->q[w->q_head++];
            *msg = m.data;
            *len = m.len;
            return 0;
        }
        if (w->dead)
            return -1;
        /* Output left behind by a send that hit its deadline, or a pong. */
        if (w->out_start < w->out_end && out_flush(w, 0, false) < 0)
            continue;

        void *space = ws_reader_space(&w->rd, WS_READ_CHUNK);
        if (!space) {
            mark_dead(w, "ws: out of memory reading");
            continue;
        }
        ssize_t n = recv(w->fd, space, WS_READ_CHUNK, MSG_DONTWAIT);
        if (n > 0) {
            ws_reader_commit(&w->rd, (size_t)n);
            drain_reader(w);
            continue;
        }
        if (n == 0) {
            mark_dead(w, "ws: the browser closed the connection");
            continue;
        }
        if (errno == EINTR)
            continue;
        if (errno == EAGAIN || errno == EWOULDBLOCK)
            return TRANSPORT_AGAIN;
        mark_dead(w, "ws: read from the browser failed: %s", strerror(errno));
    }
}

static int ws_pending(struct cdp_transport *t)
{
    struct ws_transport *w = ws_of(t);
    return w->q_head < w->q_len;
}

static int ws_fd(struct cdp_transport *t)
{
    return ws_of(t)->fd;
}

static const char *ws_error(struct cdp_transport *t)
{
    return ws_of(t)->err;
}

static void ws_destroy(struct cdp_transport *t)
{
    struct ws_transport *w = ws_of(t);
    if (!w)
        return;
    if (w->fd >= 0) {
        if (!w->dead)
            send_close(w, WS_CLOSE_NORMAL); /* polite, best effort, never blocks */
        close(w->fd);
    }
    for (size_t i = w->q_head; i < w->q_len; i++)
        free(w->q[i].data);
    free(w->q);
    free(w->out);
    ws_reader_free(&w->rd);
    free(w);
}

static const struct cdp_transport_ops ws_ops = {
    .send = ws_send,
    .recv = ws_recv,
    .pending = ws_pending,
    .fd = ws_fd,
    .destroy = ws_destroy,
    .error = ws_error,
};

/* ---- connecting ---- */

struct ws_url {
    char host[64]; /* as written, without brackets; for the Host header */
    bool bracketed;
    int port;
    const char *path; /* points into the URL */
    /* Addresses to try, in order. */
    struct sockaddr_storage addr[2];
    socklen_t addrlen[2];
    int naddr;
};

static void add_addr4(struct ws_url *u, const struct in_addr *a)
{
    struct sockaddr_in *sin = (struct sockaddr_in *)&u->addr[u->naddr];
    memset(sin, 0, sizeof *sin);
    sin->sin_family = AF_INET;
    sin->sin_port = htons((uint16_t)u->port);
    sin->sin_addr = *a;
    u->addrlen[u->naddr++] = sizeof *sin;
}

static void add_addr6(struct ws_url *u, const struct in6_addr *a)
{
    struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *)&u->addr[u->naddr];
    memset(sin6, 0, sizeof *sin6);
    sin6->sin6_family = AF_INET6;
    sin6->sin6_port = htons((uint16_t)u->port);
    sin6->sin6_addr = *a;
    u->addrlen[u->naddr++] = sizeof *sin6;
}

/*
 * Accept only ws://HOST[:PORT][/PATH] with HOST a loopback literal (127.x.y.z,
 * [::1]) or "localhost". The endpoint grants full control of a browser, so a
 * typo must not send our traffic to another machine; and "localhost" maps to
 * fixed addresses rather than whatever the resolver says.
 */
static int parse_url(const char *url, struct ws_url *u, char *err, size_t errlen)
{
    memset(u, 0, sizeof *u);
    if (strncasecmp(url, "wss://", 6) == 0) {
        errbuf_set(err, errlen,
                   "ws: wss:// is not supported: DevTools listens on plain ws:// on "
                   "loopback");
        return -1;
    }
    if (strncasecmp(url, "ws://", 5) != 0) {
        errbuf_set(err, errlen, "ws: not a ws:// URL: \"%.100s\"", url);
        return -1;
    }
    const char *auth = url + 5;
    size_t alen = strcspn(auth, "/?#");
    if (memchr(auth, '@', alen)) {
        errbuf_set(err, errlen, "ws: user info in the URL is not supported");
        return -1;
    }
    const char *host = auth, *hend, *rest;
    if (*auth == '[') {
        host = auth + 1;
        hend = memchr(host, ']', alen > 0 ? alen - 1 : 0);
        if (!hend) {
            errbuf_set(err, errlen, "ws: unterminated [ in the URL host");
            return -1;
        }
        rest = hend + 1;
        u->bracketed = true;
    } else {
        hend = memchr(auth, ':', alen);
        if (!hend)
            hend = auth + alen;
        rest = hend;
    }
    size_t hlen = (size_t)(hend - host);
    if (hlen == 0 || hlen >= sizeof u->host) {
        errbuf_set(err, errlen, "ws: bad host in \"%.100s\"", url);
        return -1;
    }
    memcpy(u->host, host, hlen);
    u->host[hlen] = '\0';

    u->port = 80;
    if (rest < auth + alen) {
        if (*rest != ':' || rest + 1 == auth + alen) {
            errbuf_set(err, errlen, "ws: bad port in \"%.100s\"", url);
            return -1;
        }
        long port = 0;
        for (const char *p = rest + 1; p < auth + alen; p++) {
            if (*p < '0' || *p > '9' || port > 65535) {
                errbuf_set(err, errlen, "ws: bad port in \"%.100s\"", url);
                return -1;
            }
            port = port * 10 + (*p - '0');
        }
        if (port < 1 || port > 65535) {
            errbuf_set(err, errlen, "ws: port out of range in \"%.100s\"", url);
            return -1;
        }
        u->port = (int)port;
    }

    u->path = auth + alen;
    if (*u->path == '\0')
        u->path = "/";
    if (*u->path != '/') {
        errbuf_set(err, errlen, "ws: the URL path must start with /");
        return -1;
    }
    /* The path goes verbatim into the request line: no spaces, no CR/LF. */
    for (const char *p = u->path; *p; p++) {
        if ((unsigned char)*p <= 0x20 || (unsigned char)*p >= 0x7F) {
            errbuf_set(err, errlen, "ws: invalid character in the URL path");
            return -1;
        }
    }
    if (strlen(u->path) > 2048) {
        errbuf_set(err, errlen, "ws: URL path too long");
        return -1;
    }

    struct in_addr a4;
    struct in6_addr a6;
    if (!u->bracketed && strcasecmp(u->host, "localhost") == 0) {
        inet_pton(AF_INET, "127.0.0.1", &a4);
        add_addr4(u, &a4);
        add_addr6(u, &in6addr_loopback);
    } else if (!u->bracketed && inet_pton(AF_INET, u->host, &a4) == 1) {
        if ((ntohl(a4.s_addr) >> 24) != 127)
            goto not_loopback;
        add_addr4(u, &a4);
    } else if (u->bracketed && inet_pton(AF_INET6, u->host, &a6) == 1) {
        if (!IN6_IS_ADDR_LOOPBACK(&a6))
            goto not_loopback;
        add_addr6(u, &a6);
    } else {
        goto not_loopback;
    }
    return 0;

not_loopback:
    errbuf_set(err, errlen,
               "ws: refusing host \"%s\": only loopback addresses (127.0.0.0/8, [::1]) and "
               "localhost are allowed",
               u->host);
    return -1;
}

/* Connect one address, non-blocking, within the deadline. fd or -1. */
static int tcp_connect(const struct sockaddr *sa, socklen_t salen, long long deadline_ms, char *err,
                       size_t errlen)
{
    int fd = socket(sa->sa_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0) {
        errbuf_set(err, errlen, "ws: socket: %s", strerror(errno));
        return -1;
    }
    if (connect(fd, sa, salen) < 0) {
        if (errno != EINPROGRESS && errno != EINTR) {
            errbuf_set(err, errlen, "ws: connect: %s", strerror(errno));
            close(fd);
            return -1;
        }
        int r = fd_wait(fd, POLLOUT, deadline_ms);
        if (r <= 0) {
            errbuf_set(err, errlen, "ws: connect: %s", r == 0 ? "timed out" : strerror(errno));
            close(fd);
            return -1;
        }
        int soerr = 0;
        socklen_t sl = sizeof soerr;
        if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &soerr, &sl) < 0)
            soerr = errno;
        if (soerr) {
            errbuf_set(err, errlen, "ws: connect: %s", strerror(soerr));
            close(fd);
            return -1;
        }
    }
    /* CDP is request/response with small messages: Nagle would add latency. */
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    return fd;
}

/* Does the comma-separated header value contain token (case-insensitive)? */
static bool has_token(const char *value, const char *token)
{
    size_t tl = strlen(token);
    const char *p = value;
    while (*p) {
        p += strspn(p, " \t,");
        size_t n = strcspn(p, ",");
        size_t m = n;
        while (m > 0 && (p[m - 1] == ' ' || p[m - 1] == '\t'))
            m--;
        if (m == tl && strncasecmp(p, token, tl) == 0)
            return true;
        p += n;
    }
    return false;
}

/* Copy a response line into err-friendly form: printable ASCII only. */
static void printable(char *dst, size_t dstlen, const char *src, size_t n)
{
    size_t o = 0;
    for (size_t i = 0; i < n && o + 1 < dstlen; i++)
        dst[o++] = (src[i] >= 0x20 && src[i] < 0x7F) ? src[i] : '?';
    dst[o] = '\0';
}

/*
 * Check the upgrade response head (NUL-terminated, ending with the blank
 * line): status 101, Upgrade: websocket, Connection: upgrade, the right
 * Sec-WebSocket-Accept, and no extension or subprotocol we did not ask for.
 */
static int check_response(char *head, const char *want_accept, char *err, size_t errlen)
{
    char *save = NULL;
    char *line = strtok_r(head, "\r\n", &save);
    char shown[160];
    if (!line) {
        errbuf_set(err, errlen, "ws: empty upgrade response");
        return -1;
    }
    int status = 0;
    if (sscanf(line, "HTTP/1.%*1[01] %3d", &status) != 1 || status != 101) {
        printable(shown, sizeof shown, line, strlen(line));
        errbuf_set(err, errlen, "ws: the browser refused the WebSocket upgrade: \"%s\"", shown);
        return -1;
    }
    bool upgrade = false, connection = false, accept = false;
    while ((line = strtok_r(NULL, "\r\n", &save))) {
        char *colon = strchr(line, ':');
        if (!colon)
            continue;
        *colon = '\0';
        char *v = colon + 1;
        v += strspn(v, " \t");
        size_t vl = strlen(v);
        while (vl > 0 && (v[vl - 1] == ' ' || v[vl - 1] == '\t'))
            v[--vl] = '\0';
        if (strcasecmp(line, "Upgrade") == 0) {
            upgrade = strcasecmp(v, "websocket") == 0;
        } else if (strcasecmp(line, "Connection") == 0) {
            connection = has_token(v, "upgrade");
        } else if (strcasecmp(line, "Sec-WebSocket-Accept") == 0) {
            if (strcmp(v, want_accept) != 0) {
                errbuf_set(err, errlen, "ws: wrong Sec-WebSocket-Accept in the upgrade response");
                return -1;
            }
            accept = true;
        } else if (strcasecmp(line, "Sec-WebSocket-Extensions") == 0 ||
                   strcasecmp(line, "Sec-WebSocket-Protocol") == 0) {
            errbuf_set(err, errlen, "ws: the server chose %s we did not offer", line);
            return -1;
        }
    }
    if (!upgrade || !connection || !accept) {
        errbuf_set(err, errlen, "ws: upgrade response lacks %s",
                   !upgrade      ? "\"Upgrade: websocket\""
                   : !connection ? "\"Connection: Upgrade\""
                                 : "Sec-WebSocket-Accept");
        return -1;
    }
    return 0;
}

/* Send the upgrade request and validate the answer. Bytes that arrived after
 * the response head (frames) go into the reader. */
static int handshake(struct ws_transport *w, const struct ws_url *u, long long deadline_ms,
                     char *err, size_t errlen)
{
    uint8_t nonce[16];
    if (getrandom(nonce, sizeof nonce, 0) != (ssize_t)sizeof nonce) {
        errbuf_set(err, errlen, "ws: getrandom: %s", strerror(errno));
        return -1;
    }
    char key[32], accept[WS_ACCEPT_LEN + 1];
    base64_encode_to(nonce, sizeof nonce, key, sizeof key);
    ws_accept_key(key, accept);

    char hostport[96];
    snprintf(hostport, sizeof hostport, u->bracketed ? "[%s]:%d" : "%s:%d", u->host, u->port);
    /* No Origin header: Chromium only checks Origin when one is sent. */
    char *req = NULL;
    int rl = asprintf(&req,
                      "GET %s HTTP/1.1\r\n"
                      "Host: %s\r\n"
                      "Upgrade: websocket\r\n"
                      "Connection: Upgrade\r\n"
                      "Sec-WebSocket-Key: %s\r\n"
                      "Sec-WebSocket-Version: 13\r\n"
                      "\r\n",
                      u->path, hostport, key);
    if (rl < 0) {
        errbuf_set(err, errlen, "ws: out of memory");
        return -1;
    }
    int wr = fd_send_all(w->fd, req, (size_t)rl, deadline_ms);
    free(req);
    if (wr < 0) {
        errbuf_set(err, errlen, "ws: sending the upgrade request: %s", strerror(errno));
        return -1;
    }

    char head[WS_MAX_RESPONSE_HEAD + 1];
    size_t have = 0;
    for (;;) {
        ssize_t n = recv(w->fd, head + have, WS_MAX_RESPONSE_HEAD - have, MSG_DONTWAIT);
        if (n > 0) {
            size_t from = have > 3 ? have - 3 : 0;
            have += (size_t)n;
            head[have] = '\0';
            char *end = memmem(head + from, have - from, "\r\n\r\n", 4);
            if (end) {
                size_t hlen = (size_t)(end - head) + 4;
                if (ws_reader_push(&w->rd, head + hlen, have - hlen) < 0) {
                    errbuf_set(err, errlen, "ws: out of memory");
                    return -1;
                }
                head[hlen] = '\0';
                return check_response(head, accept, err, errlen);
            }
            if (have == WS_MAX_RESPONSE_HEAD) {
                errbuf_set(err, errlen, "ws: upgrade response head over %d bytes",
                           WS_MAX_RESPONSE_HEAD);
                return -1;
            }
            continue;
        }
        if (n == 0) {
            errbuf_set(err, errlen, "ws: connection closed during the upgrade");
            return -1;
        }
        if (errno == EINTR)
            continue;
        if (errno != EAGAIN && errno != EWOULDBLOCK) {
            errbuf_set(err, errlen, "ws: reading the upgrade response: %s", strerror(errno));
            return -1;
        }
        int r = fd_wait(w->fd, POLLIN, deadline_ms);
        if (r <= 0) {
            errbuf_set(err, errlen, "ws: %s waiting for the upgrade response",
                       r == 0 ? "timed out" : strerror(errno));
            return -1;
        }
    }
}

/* A transport on fd (taken; -1 to connect to u here), once its upgrade
 * to a WebSocket is done. */
static struct cdp_transport *ws_open(int fd, const char *url, long long deadline_ms, char *err,
                                     size_t errlen)
{
    errbuf_set(err, errlen, "%s", "");
    if (!url) {
        errbuf_set(err, errlen, "ws: no URL");
        if (fd >= 0)
            close(fd);
        return NULL;
    }
    struct ws_url u;
    if (parse_url(url, &u, err, errlen) < 0) {
        if (fd >= 0)
            close(fd);
        return NULL;
    }

    struct ws_transport *w = calloc(1, sizeof *w);
    if (!w) {
        errbuf_set(err, errlen, "ws: out of memory");
        if (fd >= 0)
            close(fd);
        return NULL;
    }
    w->base.ops = &ws_ops;
    w->fd = fd;
    ws_reader_init(&w->rd, WS_MAX_MESSAGE);

    char cerr[200] = "";
    for (int i = 0; i < u.naddr && w->fd < 0; i++)
        w->fd = tcp_connect((const struct sockaddr *)&u.addr[i], u.addrlen[i], deadline_ms, cerr,
                            sizeof cerr);
    if (w->fd < 0) {
        errbuf_set(err, errlen, "%s (%s)", cerr, url);
        ws_destroy(&w->base);
        return NULL;
    }
    if (fd >= 0) {
        int fl = fcntl(fd, F_GETFL);
        if (fl >= 0)
            fcntl(fd, F_SETFL, fl | O_NONBLOCK);
        fcntl(fd, F_SETFD, FD_CLOEXEC);
        int one = 1;
        setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    }
    if (handshake(w, &u, deadline_ms, err, errlen) < 0) {
        w->dead = true; /* no close frame: the connection never became a WebSocket */
        ws_destroy(&w->base);
        return NULL;
    }
    /* Frames that came with the response head are parsed now, so pending()
     * is right from the start. */
    drain_reader(w);
    return &w->base;
}

struct cdp_transport *ws_transport_connect(const char *url, long long deadline_ms, char *err,
                                           size_t errlen)
{
    return ws_open(-1, url, deadline_ms, err, errlen);
}

struct cdp_transport *ws_transport_adopt(int fd, const char *url, long long deadline_ms, char *err,
                                         size_t errlen)
{
    return ws_open(fd, url, deadline_ms, err, errlen);
}
