/*
 * worker_side.c - the workers' side of the relay: a Unix socket at
 * <runtime dir>/relay.ipc that workers (of any number of tabvisors) dial
 * with nng's pair1 over ipc (ipc://<path>), each connection one worker, told
 * apart by a connection id that is never reused (the router's "pipe").
 *
 * The relay speaks nng's wire itself (spwire.h says why: nng 1.5.2's close
 * race left the relay's descriptors behind when workers died while it
 * answered them). The listening socket is adopted into lws as a raw file;
 * each accepted connection as a raw socket, so its reads, writes and close
 * all happen on the loop's one thread: a worker that dies is gone at once,
 * its descriptor with it, and nothing else in the relay waits on it.
 *
 * Messages are proto.h envelopes, types 400..499, checked by proto_decode
 * against bodies.c before the router sees them. What goes back is batched
 * and windowed by worker_outbox.c; here it is queued per connection and
 * written as the socket takes it.
 */
#include "relay.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "codec.h"
#include "log.h"
#include "proto.h"
#include "spwire.h"

#define WORKER_CONNS_MAX 1024 /* connections at once; a session needs one */
#define WORKER_ACCEPT_BATCH 64

/* One frame waiting to be written (LWS_PRE bytes of room before data, as
 * lws_write wants). */
struct tx_frame {
    struct tx_frame *next;
    size_t len;
    unsigned char buf[]; /* LWS_PRE + len */
};

/* One worker's connection: lws's per-connection user data. */
struct worker_conn {
    struct relay *r;
    struct lws *wsi;
    uint32_t id;
    bool closing; /* being closed: reads ignored, writes refused */
    struct spwire_reader rd;
    struct tx_frame *tx_head, *tx_tail;
    struct worker_conn *next; /* r->conns */
};

static struct worker_conn *conn_by_id(struct relay *r, uint32_t id)
{
    for (struct worker_conn *c = r->conns; c; c = c->next)
        if (c->id == id)
            return c;
    return NULL;
}

/* Queue len bytes (with the frame head when head is true) for c. */
static int conn_queue(struct worker_conn *c, bool head, const void *data, size_t len)
{
    size_t n = (head ? SPWIRE_FRAME_HEAD : 0) + len;
    struct tx_frame *f = malloc(sizeof *f + LWS_PRE + n);
    if (!f)
        return -1;
    f->next = NULL;
    f->len = n;
    if (head)
        spwire_frame_head(f->buf + LWS_PRE, len);
    memcpy(f->buf + LWS_PRE + (head ? SPWIRE_FRAME_HEAD : 0), data, len);
    if (c->tx_tail)
        c->tx_tail->next = f;
    else
        c->tx_head = f;
    c->tx_tail = f;
    lws_callback_on_writable(c->wsi);
    return 0;
}

static void conn_free_tx(struct worker_conn *c)
{
    while (c->tx_head) {
        struct tx_frame *f = c->tx_head;
        c->tx_head = f->next;
        free(f);
    }
    c->tx_tail = NULL;
}

int worker_conn_write(struct relay *r, uint32_t pipe, const void *body, size_t len)
{
    struct worker_conn *c = conn_by_id(r, pipe);
    if (!c || c->closing)
        return -1;
    if (conn_queue(c, true, body, len) != 0) {
        log_warn("worker pipe %u: out of memory for a message of %zu bytes", pipe, len);
        return -1;
    }
    return 0;
}

void worker_conn_close(struct relay *r, uint32_t pipe)
{
    struct worker_conn *c = conn_by_id(r, pipe);
    if (!c || c->closing)
        return;
    c->closing = true;
    /* Closed by lws on its next turn, out of whatever callback we are in. */
    lws_set_timeout(c->wsi, PENDING_TIMEOUT_KILLED_BY_PARENT, LWS_TO_KILL_ASYNC);
}

/* One whole message from the worker on c. */
static int on_message(void *ud, const uint8_t *data, size_t len)
{
    struct worker_conn *c = ud;
    struct relay *r = c->r;
    struct proto_msg msg;
    char err[200];
    if (proto_decode(data, len, &msg, err, sizeof(err)) != 0) {
        /* A worker speaking nonsense is a bug in it; it gets no answer
         * (there is no id to answer), the relay carries on. */
        log_warn("worker pipe %u: message refused: %s", c->id, err);
        return 0;
    }
    if (msg.type == MSG_RELAY_ACK) {
        worker_outbox_acked(r, c->id, json_integer_value(json_object_get(msg.body, "n")));
    } else if (msg.type < 400 || msg.type >= 450) {
        log_warn("worker pipe %u: %s is not a request to the relay", c->id,
                 proto_msg_name(msg.type));
        if (msg.id)
            worker_reply_err(r, c->id, msg.id, "INVALID_PARAMETERS", "not a request to the relay");
    } else {
        router_worker_msg(r, c->id, msg.type, msg.id, msg.body);
    }
    proto_msg_clear(&msg);
    /* The router may have closed this connection (a refused hello): what
     * follows on it is not read. */
    return c->closing;
}

/* The worker's uid must be ours. The socket's directory (0700) already
 * keeps other users out; this holds if its mode is ever wrong. */
static bool peer_is_us(int fd)
{
    struct ucred cred;
    socklen_t len = sizeof cred;
    return getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) == 0 && cred.uid == geteuid();
}

static void accept_workers(struct relay *r)
{
    for (int i = 0; i < WORKER_ACCEPT_BATCH; i++) {
        int fd = accept4(r->workers_fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (fd < 0) {
            if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR && errno != ECONNABORTED)
                log_warn("workers: accept: %s", strerror(errno));
            return;
        }
        if (!peer_is_us(fd)) {
            log_warn("workers: a connection from another user refused");
            close(fd);
            continue;
        }
        if (r->nconns >= WORKER_CONNS_MAX) {
            log_warn("workers: %d connections already; one more refused", WORKER_CONNS_MAX);
            close(fd);
            continue;
        }
        lws_sock_file_fd_type u = {.sockfd = fd};
        /* On failure lws closes fd itself. */
        if (!lws_adopt_descriptor_vhost(r->vh, LWS_ADOPT_SOCKET, u, worker_protocol.name, NULL))
            log_warn("workers: lws could not adopt a connection");
    }
}

static int conn_adopted(struct relay *r, struct lws *wsi, struct worker_conn *c)
{
    memset(c, 0, sizeof *c);
    c->r = r;
    c->wsi = wsi;
    if (++r->next_conn_id == 0)
        r->next_conn_id = 1;
    c->id = r->next_conn_id;
    spwire_reader_init(&c->rd, PROTO_MAX_MESSAGE);
    c->next = r->conns;
    r->conns = c;
    r->nconns++;
    uint8_t g[SPWIRE_GREETING_LEN];
    spwire_greeting(g);
    return conn_queue(c, false, g, sizeof g);
}

static void conn_closed(struct relay *r, struct worker_conn *c)
{
    if (!c->r)
        return; /* never adopted */
    for (struct worker_conn **p = &r->conns; *p; p = &(*p)->next)
        if (*p == c) {
            *p = c->next;
            r->nconns--;
            break;
        }
    conn_free_tx(c);
    spwire_reader_free(&c->rd);
    c->r = NULL;
    worker_outbox_forget(r, c->id);
    if (!r->workers_down)
        router_worker_gone(r, c->id);
}

/* Write c's next frame; lws keeps what the socket did not take and calls
 * again once it is out. */
static int conn_writable(struct worker_conn *c)
{
    struct tx_frame *f = c->tx_head;
    if (!f)
        return 0;
    c->tx_head = f->next;
    if (!c->tx_head)
        c->tx_tail = NULL;
    int n = lws_write(c->wsi, f->buf + LWS_PRE, f->len, LWS_WRITE_RAW);
    bool ok = n >= 0 && (size_t)n == f->len;
    free(f);
    if (!ok)
        return -1; /* the worker is gone: lws closes the connection */
    if (c->tx_head)
        lws_callback_on_writable(c->wsi);
    return 0;
}

static int worker_callback(struct lws *wsi, enum lws_callback_reasons reason, void *user, void *in,
                           size_t len)
{
    struct relay *r = lws_context_user(lws_get_context(wsi));
    struct worker_conn *c = user;
    char err[200];
    switch (reason) {
    case LWS_CALLBACK_RAW_RX_FILE: /* the listening socket */
        accept_workers(r);
        return 0;
    case LWS_CALLBACK_RAW_CLOSE_FILE:
        if (!r->workers_down)
            log_error("workers: the listening socket closed");
        return 0;
    case LWS_CALLBACK_RAW_ADOPT:
        return c ? conn_adopted(r, wsi, c) : -1;
    case LWS_CALLBACK_RAW_RX:
        if (!c || !c->r || c->closing)
            return 0;
        if (spwire_read(&c->rd, in, len, on_message, c, err, sizeof err) < 0) {
            log_warn("worker pipe %u: %s; closing it", c->id, err);
            worker_conn_close(r, c->id);
        }
        return 0;
    case LWS_CALLBACK_RAW_WRITEABLE:
        if (!c || !c->r || c->closing)
            return 0;
        return conn_writable(c);
    case LWS_CALLBACK_RAW_CLOSE:
        if (c)
            conn_closed(r, c);
        return 0;
    default:
        return 0;
    }
}

const struct lws_protocols worker_protocol = {
    .name = "tabvisor-relay-workers",
    .callback = worker_callback,
    .per_session_data_size = sizeof(struct worker_conn),
    .rx_buffer_size = 65536,
};

int worker_side_open(struct relay *r, char *err, size_t errlen)
{
    struct sockaddr_un sa = {.sun_family = AF_UNIX};
    const char *path = r->ipc_url + strlen("ipc://");
    if (strlen(path) >= sizeof sa.sun_path) {
        snprintf(err, errlen, "workers' socket path %s is longer than %zu bytes", path,
                 sizeof sa.sun_path - 1);
        return -1;
    }
    memcpy(sa.sun_path, path, strlen(path) + 1);
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0) {
        snprintf(err, errlen, "workers' socket: %s", strerror(errno));
        return -1;
    }
    /* We hold the relay lock: a socket file left here is a dead relay's. */
    unlink(path);
    mode_t old = umask(077);
    int rc = bind(fd, (struct sockaddr *)&sa, sizeof sa);
    umask(old);
    if (rc != 0 || listen(fd, 128) != 0) {
        snprintf(err, errlen, "workers' socket %s: %s", path, strerror(errno));
        close(fd);
        return -1;
    }
    r->workers_fd = fd;
    lws_sock_file_fd_type u = {.filefd = fd};
    if (!lws_adopt_descriptor_vhost(r->vh, LWS_ADOPT_RAW_FILE_DESC, u, worker_protocol.name,
                                    NULL)) {
        /* lws closed fd */
        r->workers_fd = -1;
        snprintf(err, errlen, "lws could not adopt the workers' socket");
        return -1;
    }
    return 0;
}

/* How long the stop gives the last replies (a bye's) to leave. */
#define WORKER_LAST_WRITES_MS 200

void worker_side_close(struct relay *r)
{
    worker_side_flush(r);
    int64_t until = relay_now_ms() + WORKER_LAST_WRITES_MS;
    for (;;) {
        bool pending = false;
        for (struct worker_conn *c = r->conns; c; c = c->next)
            pending |= c->tx_head != NULL && !c->closing;
        if (!pending || relay_now_ms() >= until || lws_service(r->ctx, 10) < 0)
            break;
    }
    /* From here on the connections close with the context, quietly. */
    r->workers_down = true;
    worker_outbox_free(r);
    if (r->workers_fd >= 0)
        unlink(r->ipc_url + strlen("ipc://"));
}
