/*
 * cdp_connect.c - TCP, /json/version and the WebSocket upgrade for
 * --browser-mode cdp (cdp_connect.h). Blocking, with one deadline.
 */
#include "base64.h"
#include "cdp_connect.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <unistd.h>

#include <jansson.h>

#include "clock.h"
#include "errbuf.h"
#include "fdio.h"
#include "ws_frame.h"

/* Response heads (and /json/version bodies) larger than this are not DevTools. */
#define MAX_HEAD 16384
#define MAX_BODY 65536

/* One address, non-blocking connect within the deadline. fd or -1 (err set). */
static int connect_addr(const struct addrinfo *ai, long long deadline_ms, char *err, size_t errlen)
{
    int fd = socket(ai->ai_family, ai->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0) {
        errbuf_set(err, errlen, "socket: %s", strerror(errno));
        return -1;
    }
    if (connect(fd, ai->ai_addr, ai->ai_addrlen) < 0 && errno != EINPROGRESS) {
        errbuf_set(err, errlen, "connect: %s", strerror(errno));
        close(fd);
        return -1;
    }
    int r = fd_wait(fd, POLLOUT, deadline_ms), soerr = 0;
    socklen_t sl = sizeof soerr;
    if (r > 0 && getsockopt(fd, SOL_SOCKET, SO_ERROR, &soerr, &sl) < 0)
        soerr = errno;
    if (r <= 0 || soerr) {
        errbuf_set(err, errlen, "connect: %s",
                   r == 0 ? "timed out" : strerror(r < 0 ? errno : soerr));
        close(fd);
        return -1;
    }
    int one = 1; /* CDP is small requests and answers: no Nagle delay */
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    return fd;
}

/* TCP to the endpoint's host and port (each address in turn). fd or -1. */
static int tcp_open(const struct cdp_url *u, long long deadline_ms, char *err, size_t errlen)
{
    char port[8];
    snprintf(port, sizeof port, "%d", u->port);
    struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM}, *res = NULL;
    int gr = getaddrinfo(u->host, port, &hints, &res);
    if (gr != 0) {
        errbuf_set(err, errlen, "cannot resolve %s: %s", u->host, gai_strerror(gr));
        return -1;
    }
    int fd = -1;
    for (struct addrinfo *ai = res; ai && fd < 0; ai = ai->ai_next)
        fd = connect_addr(ai, deadline_ms, err, errlen);
    freeaddrinfo(res);
    return fd;
}

/* Read a response head into buf (NUL-terminated, ending in CRLFCRLF) and
 * any bytes after it into *extra. Returns the head length, or -1. */
static long read_head(int fd, char *buf, size_t cap, char **extra, size_t *extra_len,
                      long long deadline_ms, char *err, size_t errlen)
{
    size_t have = 0;
    for (;;) {
        ssize_t n = recv(fd, buf + have, cap - 1 - have, MSG_DONTWAIT);
        if (n > 0) {
            have += (size_t)n;
            buf[have] = 0;
            char *end = memmem(buf, have, "\r\n\r\n", 4);
            if (end) {
                size_t hlen = (size_t)(end - buf) + 4;
                *extra_len = have - hlen;
                *extra = *extra_len ? malloc(*extra_len) : NULL;
                if (*extra_len && !*extra)
                    *extra_len = 0;
                if (*extra)
                    memcpy(*extra, buf + hlen, *extra_len);
                buf[hlen] = 0;
                return (long)hlen;
            }
            if (have == cap - 1) {
                errbuf_set(err, errlen, "the response head is over %zu bytes", cap);
                return -1;
            }
        } else if (n == 0) {
            errbuf_set(err, errlen, "the connection closed before a response");
            return -1;
        } else if (errno != EINTR && errno != EAGAIN) {
            errbuf_set(err, errlen, "read: %s", strerror(errno));
            return -1;
        } else if (errno == EAGAIN) {
            int r = fd_wait(fd, POLLIN, deadline_ms);
            if (r <= 0) {
                errbuf_set(err, errlen, "%s waiting for a response",
                           r == 0 ? "timed out" : strerror(errno));
                return -1;
            }
        }
    }
}

/* The status code of a response head's first line, or 0. */
static int status_of(const char *head)
{
    int status = 0;
    if (sscanf(head, "HTTP/1.%*1[01] %3d", &status) != 1)
        return 0;
    return status;
}

/* A header's value in a response head (NUL-terminated copy into out), or NULL. */
static const char *header(const char *head, const char *name, char *out, size_t outlen)
{
    size_t nl = strlen(name);
    for (const char *line = strstr(head, "\r\n"); line && line[2];
         line = strstr(line + 2, "\r\n")) {
        const char *h = line + 2;
        if (strncasecmp(h, name, nl) == 0 && h[nl] == ':') {
            const char *v = h + nl + 1;
            v += strspn(v, " \t");
            size_t vl = strcspn(v, "\r\n");
            while (vl && (v[vl - 1] == ' ' || v[vl - 1] == '\t'))
                vl--;
            snprintf(out, outlen, "%.*s", (int)vl, v);
            return out;
        }
    }
    return NULL;
}

/* The Host header for a request on fd. Chromium's DevTools answers only requests whose Host
 * is an IP address or "localhost" (a guard against DNS rebinding): for any other name
 * (http://chrome:9222, a Kubernetes Service) send the address fd is connected to, which is
 * the one that name resolved to. */
static void host_header(const struct cdp_url *u, int fd, char *out, size_t len)
{
    unsigned char bin[sizeof(struct in6_addr)];
    bool literal = inet_pton(AF_INET, u->host, bin) == 1 ||
                   inet_pton(AF_INET6, u->host, bin) == 1 || strcasecmp(u->host, "localhost") == 0;
    struct sockaddr_storage ss;
    socklen_t sl = sizeof ss;
    char ip[INET6_ADDRSTRLEN];
    if (!literal && getpeername(fd, (struct sockaddr *)&ss, &sl) == 0) {
        bool v6 = ss.ss_family == AF_INET6;
        const void *a = v6 ? (const void *)&((struct sockaddr_in6 *)&ss)->sin6_addr
                           : (const void *)&((struct sockaddr_in *)&ss)->sin_addr;
        if (inet_ntop(ss.ss_family, a, ip, sizeof ip)) {
            snprintf(out, len, v6 ? "[%s]:%d" : "%s:%d", ip, u->port);
            return;
        }
    }
    snprintf(out, len, u->bracketed ? "[%s]:%d" : "%s:%d", u->host, u->port);
}

/* GET /json/version on u's host and port: the path of its
 * webSocketDebuggerUrl into path. 0, or -1 with err. */
static int discover(const struct cdp_url *u, char *path, size_t pathlen, long long deadline_ms,
                    char *err, size_t errlen)
{
    int fd = tcp_open(u, deadline_ms, err, errlen);
    if (fd < 0)
        return -1;
    char req[512], host[300], head[MAX_HEAD], *body = NULL, val[32];
    host_header(u, fd, host, sizeof host);
    int rl = snprintf(req, sizeof req,
                      "GET /json/version HTTP/1.1\r\nHost: %s\r\nConnection: close\r\n\r\n", host);
    size_t have = 0;
    int rc = -1;
    if (fd_send_all(fd, req, (size_t)rl, deadline_ms) < 0) {
        errbuf_set(err, errlen, "sending GET /json/version: %s", strerror(errno));
        goto out;
    }
    if (read_head(fd, head, sizeof head, &body, &have, deadline_ms, err, errlen) < 0)
        goto out;
    if (status_of(head) != 200) {
        errbuf_set(err, errlen, "GET /json/version answered \"%.60s\"", head);
        goto out;
    }
    long want = header(head, "Content-Length", val, sizeof val) ? atol(val) : -1;
    if (want > MAX_BODY) {
        errbuf_set(err, errlen, "the /json/version body is too large");
        goto out;
    }
    char *nb = realloc(body, MAX_BODY + 1);
    if (!nb) {
        errbuf_set(err, errlen, "out of memory");
        goto out;
    }
    body = nb;
    while (want < 0 || have < (size_t)want) {
        ssize_t n = have < MAX_BODY ? recv(fd, body + have, MAX_BODY - have, MSG_DONTWAIT) : 0;
        if (n > 0)
            have += (size_t)n;
        else if (n == 0)
            break;
        else if (errno == EAGAIN && fd_wait(fd, POLLIN, deadline_ms) > 0)
            continue;
        else if (errno != EINTR)
            break;
    }
    json_t *j = json_loadb(body, have, 0, NULL);
    const char *ws = json_string_value(json_object_get(j, "webSocketDebuggerUrl"));
    struct cdp_url wu;
    char why[200];
    if (!ws || cdp_url_parse(ws, &wu, why, sizeof why) < 0 || wu.http) {
        errbuf_set(err, errlen, "/json/version has no usable webSocketDebuggerUrl");
    } else {
        snprintf(path, pathlen, "%s", wu.path);
        rc = 0;
    }
    json_decref(j);
out:
    free(body);
    close(fd);
    return rc;
}

/* Upgrade a new connection on path. 0 with out->fd, 1 when the browser
 * refused the upgrade (a stale path), -1 on other errors. */
static int upgrade(const struct cdp_url *u, const char *path, long long deadline_ms,
                   struct cdp_conn_result *out)
{
    int fd = tcp_open(u, deadline_ms, out->err, sizeof out->err);
    if (fd < 0)
        return -1;
    return cdp_upgrade_on(fd, u, path, deadline_ms, out);
}

int cdp_upgrade_on(int fd, const struct cdp_url *u, const char *path, long long deadline_ms,
                   struct cdp_conn_result *out)
{
    uint8_t nonce[16];
    char key[32], accept[WS_ACCEPT_LEN + 1], host[300], head[MAX_HEAD], val[64];
    if (getrandom(nonce, sizeof nonce, 0) != (ssize_t)sizeof nonce) {
        errbuf_set(out->err, sizeof out->err, "getrandom: %s", strerror(errno));
        close(fd);
        return -1;
    }
    base64_encode_to(nonce, sizeof nonce, key, sizeof key);
    ws_accept_key(key, accept);
    host_header(u, fd, host, sizeof host);
    /* No Origin header: Chromium checks Origin only when one is sent. */
    char *req = NULL;
    int rl = asprintf(&req,
                      "GET %s HTTP/1.1\r\nHost: %s\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                      "Sec-WebSocket-Key: %s\r\nSec-WebSocket-Version: 13\r\n\r\n",
                      path, host, key);
    int sent = rl < 0 ? -1 : fd_send_all(fd, req, (size_t)rl, deadline_ms);
    free(req);
    if (sent < 0) {
        errbuf_set(out->err, sizeof out->err, "sending the upgrade request failed");
        close(fd);
        return -1;
    }
    if (read_head(fd, head, sizeof head, &out->extra, &out->extra_len, deadline_ms, out->err,
                  sizeof out->err) < 0) {
        close(fd);
        return -1;
    }
    int status = status_of(head);
    const char *why = NULL;
    if (status != 101)
        why = "refused";
    else if (!header(head, "Sec-WebSocket-Accept", val, sizeof val) || strcmp(val, accept) != 0)
        why = "a wrong Sec-WebSocket-Accept";
    else if (!header(head, "Upgrade", val, sizeof val) || strcasecmp(val, "websocket") != 0)
        why = "no Upgrade: websocket";
    else if (header(head, "Sec-WebSocket-Extensions", val, sizeof val) ||
             header(head, "Sec-WebSocket-Protocol", val, sizeof val))
        why = "an extension or protocol we did not offer";
    if (why) {
        errbuf_set(out->err, sizeof out->err, "the WebSocket upgrade on %.80s failed: %s (%.40s)",
                   path, why, head);
        free(out->extra);
        out->extra = NULL;
        out->extra_len = 0;
        close(fd);
        return status != 101 ? 1 : -1;
    }
    out->fd = fd;
    return 0;
}

void cdp_connect(const struct cdp_url *u, long long deadline_ms, struct cdp_conn_result *out)
{
    memset(out, 0, sizeof *out);
    out->fd = -1;
    char path[sizeof u->path];
    int r = 1;
    if (!u->http)
        r = upgrade(u, u->path, deadline_ms, out);
    if (r == 1) {
        /* http://, or a ws:// path the browser no longer knows. */
        char derr[256];
        if (discover(u, path, sizeof path, deadline_ms, derr, sizeof derr) < 0) {
            if (u->http)
                snprintf(out->err, sizeof out->err, "%s", derr);
            return;
        }
        upgrade(u, path, deadline_ms, out);
    }
}
