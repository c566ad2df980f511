/*
 * worker_side.c - the workers' side of the relay: one nng pair1 socket in
 * polyamorous mode listening on ipc://<runtime dir>/relay.ipc, so any number
 * of workers (of any number of tabvisors) connect to the one relay and each
 * is told apart by its nng pipe. Messages are proto.h envelopes, types
 * 400..499, checked by proto_decode against bodies.c before the router sees
 * them.
 *
 * The socket's receive fd (NNG_OPT_RECVFD, readable while messages wait) is
 * dup'ed and adopted into lws as a raw file, because lws closes what it
 * adopts and nng must keep its own. Pipe closures are reported by nng on its
 * own threads: they go into a small locked queue and lws_cancel_service()
 * wakes the loop, which drains it (LWS_CALLBACK_EVENT_WAIT_CANCELLED).
 */
#include "relay.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <time.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <nng/protocol/pair1/pair.h>

#include "bodies.h"
#include "codec.h"
#include "json_util.h"
#include "log.h"
#include "proto.h"

#define WORKER_QUEUE 256 /* messages queued per direction */

static void pipe_event(nng_pipe p, nng_pipe_ev ev, void *arg)
{
    struct relay *r = arg;
    if (ev != NNG_PIPE_EV_REM_POST)
        return;
    pthread_mutex_lock(&r->gone_mu);
    if (r->ngone < sizeof(r->gone) / sizeof(r->gone[0]))
        r->gone[r->ngone++] = nng_pipe_id(p);
    else
        r->gone_overflow = true;
    /* Under the lock: worker_side_close sets gone_quiet before the context
     * goes, so no report wakes a destroyed context. */
    if (!r->gone_quiet && r->ctx)
        lws_cancel_service(r->ctx);
    pthread_mutex_unlock(&r->gone_mu);
}

void worker_side_drain_gone(struct relay *r)
{
    uint32_t gone[sizeof(r->gone) / sizeof(r->gone[0])];
    pthread_mutex_lock(&r->gone_mu);
    size_t n = r->ngone;
    memcpy(gone, r->gone, n * sizeof(gone[0]));
    r->ngone = 0;
    bool overflow = r->gone_overflow;
    r->gone_overflow = false;
    pthread_mutex_unlock(&r->gone_mu);
    for (size_t i = 0; i < n; i++) {
        char key[16];
        snprintf(key, sizeof key, "%u", gone[i]);
        if (r->outbox)
            json_object_del(r->outbox, key);
        if (r->outbox_bytes)
            json_object_del(r->outbox_bytes, key);
        if (r->inflight)
            json_object_del(r->inflight, key);
        if (r->dropped)
            json_object_del(r->dropped, key);
        router_worker_gone(r, gone[i]);
    }
    if (overflow) {
        /* More closed at once than the queue holds: find the rest by asking
         * nng about every live session's pipe. */
        for (int i = 0; i < REG_MAX_SESSIONS; i++) {
            uint32_t pid = r->reg.sessions[i].pipe;
            if (!r->reg.sessions[i].used || !pid)
                continue;
            nng_pipe p = NNG_PIPE_INITIALIZER;
            p.id = pid;
            nng_sockaddr sa;
            if (nng_pipe_get_addr(p, NNG_OPT_REMADDR, &sa) == NNG_ENOENT)
                router_worker_gone(r, pid);
        }
    }
}

/* Send one envelope to pipe now. */
static int send_now(struct relay *r, uint32_t pipe, uint32_t type, uint64_t id, const json_t *body)
{
    char *buf;
    size_t len;
    if (proto_encode(type, id, body, &buf, &len) != 0) {
        log_warn("worker pipe %u: %s message over the protocol's limits, not sent", pipe,
                 proto_msg_name(type));
        return -1;
    }
    nng_msg *m;
    int rv = nng_msg_alloc(&m, 0);
    if (rv == 0)
        rv = nng_msg_append(m, buf, len);
    free(buf);
    if (rv != 0) {
        log_warn("worker pipe %u: %s", pipe, nng_strerror(rv));
        return -1;
    }
    nng_pipe p = NNG_PIPE_INITIALIZER;
    p.id = pipe;
    nng_msg_set_pipe(m, p);
    rv = nng_sendmsg(r->sock, m, NNG_FLAG_NONBLOCK);
    if (rv != 0) {
        nng_msg_free(m);
        log_warn("worker pipe %u: send %s: %s", pipe, proto_msg_name(type), nng_strerror(rv));
        return -1;
    }
    return 0;
}

/*
 * Why messages to workers are batched and acknowledged: in polyamorous mode
 * nng (1.5) gives each pipe a send queue of two messages and discards,
 * without telling the sender, a message that finds it full. A page load
 * makes the extension forward dozens of CDP events within a millisecond, so
 * sending each as it came lost some (a navigation's lifecycle events, a
 * reply); and even one batch per millisecond lost one now and then when
 * nng's threads were slow to write (a busy machine). So what goes to one
 * worker waits up to RELAY_FLUSH_US and leaves as one relay-batch message (a
 * lone message leaves as itself), RELAY_BATCH_MAX at a time, and at most
 * RELAY_WINDOW messages are on their way to a worker: it acknowledges what
 * it read (relay-ack), and the rest waits here until it does.
 */
#define RELAY_FLUSH_US 1000
/* What may wait for one worker that does not read: past either bound the
 * pipe is dropped. A page's load is a few hundred events; a full-page
 * screenshot is tens of MB. */
#define RELAY_OUTBOX_MAX_MSGS 8192
#define RELAY_OUTBOX_MAX_BYTES (64u * 1024 * 1024)
#define RELAY_BATCH_MAX 128

static void flush_cb(lws_sorted_usec_list_t *sul)
{
    struct relay *r = lws_container_of(sul, struct relay, flush);
    worker_side_flush(r);
}

static void arm_flush(struct relay *r)
{
    if (!r->flush_armed && r->ctx) {
        r->flush_armed = true;
        lws_sul_schedule(r->ctx, 0, &r->flush, flush_cb, RELAY_FLUSH_US);
    }
}

static json_int_t inflight_of(struct relay *r, const char *key)
{
    return json_integer_value(json_object_get(r->inflight, key));
}

static void inflight_add(struct relay *r, const char *key, json_int_t d)
{
    json_int_t v = inflight_of(r, key) + d;
    json_object_set_new(r->inflight, key, json_integer(v > 0 ? v : 0));
}

static int send_entry(struct relay *r, uint32_t pipe, const json_t *m)
{
    return send_now(r, pipe, (uint32_t)json_integer_value(json_object_get(m, "type")),
                    (uint64_t)json_integer_value(json_object_get(m, "id")),
                    json_object_get(m, "body"));
}

/* Add d to the bytes queued for the pipe key; returns the new total. */
static size_t outbox_bytes_add(struct relay *r, const char *key, json_int_t d)
{
    if (!r->outbox_bytes && !(r->outbox_bytes = json_object()))
        return 0;
    json_int_t v = json_integer_value(json_object_get(r->outbox_bytes, key)) + d;
    json_object_set_new(r->outbox_bytes, key, json_integer(v));
    return (size_t)v;
}

/* Send pipe's queue (list, in order) within its window; what stays goes
 * back to the outbox. True when something stays and the window has room
 * (the timer must come back), false when it stays for an acknowledgement. */
static bool flush_pipe(struct relay *r, const char *key, json_t *list)
{
    uint32_t pipe = (uint32_t)strtoul(key, NULL, 10);
    size_t n = json_array_size(list), used = 0;
    while (used < n && inflight_of(r, key) < RELAY_WINDOW) {
        size_t take = n - used < RELAY_BATCH_MAX ? n - used : RELAY_BATCH_MAX;
        int rc;
        if (take == 1) {
            rc = send_entry(r, pipe, json_array_get(list, used));
        } else {
            json_t *batch = json_array();
            for (size_t i = 0; i < take; i++)
                json_array_append(batch, json_array_get(list, used + i));
            json_t *body = json_pack("{s:o}", "msgs", batch);
            rc = send_now(r, pipe, MSG_RELAY_BATCH, 0, body);
            json_decref(body);
            if (rc != 0) {
                /* Too big together: the first alone (each is within the
                 * limits), the rest after it. */
                take = 1;
                rc = send_entry(r, pipe, json_array_get(list, used));
            }
        }
        used += take;
        if (rc == 0)
            inflight_add(r, key, 1);
    }
    if (used == n) {
        json_object_del(r->outbox_bytes, key);
        return false;
    }
    json_t *rest = json_array();
    json_int_t bytes = 0;
    for (size_t i = used; i < n; i++) {
        json_t *m = json_array_get(list, i);
        bytes += json_integer_value(json_object_get(m, "w"));
        json_array_append(rest, m);
    }
    json_object_set_new(r->outbox, key, rest);
    json_object_set_new(r->outbox_bytes, key, json_integer(bytes));
    return inflight_of(r, key) < RELAY_WINDOW;
}

void worker_side_flush(struct relay *r)
{
    r->flush_armed = false;
    if (!r->outbox)
        return;
    if (!r->inflight && !(r->inflight = json_object()))
        return;
    json_t *box = r->outbox;
    r->outbox = json_object();
    const char *key;
    json_t *list;
    bool more = false;
    json_object_foreach(box, key, list)
    {
        if (flush_pipe(r, key, list))
            more = true;
    }
    json_decref(box);
    if (more)
        arm_flush(r);
}

/* The worker on pipe read n more of our messages: room for as many more. */
static void worker_acked(struct relay *r, uint32_t pipe, json_int_t n)
{
    char key[16];
    snprintf(key, sizeof key, "%u", pipe);
    if (!r->inflight)
        return;
    inflight_add(r, key, -n);
    if (json_object_get(r->outbox, key))
        arm_flush(r);
}

/* The worker on pipe stopped reading (it sends no relay-ack, or nng cannot
 * write to it): its queue goes and the pipe is closed, once. Its session
 * keeps its tabs for the grace period, as after any lost worker, and the
 * worker may come back with relay-hello. */
static void drop_unread_pipe(struct relay *r, uint32_t pipe, const char *key, size_t msgs,
                             size_t bytes)
{
    log_warn("worker pipe %u: %zu messages (about %zu bytes) wait unread; dropping that worker's "
             "connection",
             pipe, msgs, bytes);
    json_object_del(r->outbox, key);
    json_object_set_new(r->dropped, key, json_true());
    nng_pipe p = NNG_PIPE_INITIALIZER;
    p.id = pipe;
    nng_pipe_close(p);
}

int worker_send(struct relay *r, uint32_t pipe, uint32_t type, uint64_t id, const json_t *body)
{
    /* Refused now, as an immediate send would be, rather than at the flush. */
    char err[200];
    if (body_check(type, body, err, sizeof err) != 0) {
        log_warn("worker pipe %u: %s message refused: %s", pipe, proto_msg_name(type), err);
        return -1;
    }
    if (!r->outbox && !(r->outbox = json_object()))
        return -1;
    if (!r->dropped && !(r->dropped = json_object()))
        return -1;
    char key[16];
    snprintf(key, sizeof key, "%u", pipe);
    if (json_object_get(r->dropped, key))
        return -1; /* closed for not reading; nng tells us it is gone soon */
    json_t *list = json_object_get(r->outbox, key);
    if (!list) {
        list = json_array();
        json_object_set_new(r->outbox, key, list);
    }
    size_t weight = json_weight(body);
    json_array_append_new(list, json_pack("{s:I, s:I, s:O, s:I}", "type", (json_int_t)type, "id",
                                          (json_int_t)id, "body", (json_t *)body, "w",
                                          (json_int_t)weight));
    size_t bytes = outbox_bytes_add(r, key, (json_int_t)weight);
    if (json_array_size(list) > RELAY_OUTBOX_MAX_MSGS || bytes > RELAY_OUTBOX_MAX_BYTES) {
        drop_unread_pipe(r, pipe, key, json_array_size(list), bytes);
        return -1;
    }
    arm_flush(r);
    return 0;
}

void worker_reply_ok(struct relay *r, uint32_t pipe, uint64_t id, json_t *result)
{
    json_t *body = json_pack("{s:b}", "ok", 1);
    if (result)
        json_object_set_new(body, "result", result);
    worker_send(r, pipe, MSG_RELAY_REPLY, id, body);
    json_decref(body);
}

void worker_reply_err(struct relay *r, uint32_t pipe, uint64_t id, const char *code,
                      const char *message)
{
    json_t *body = json_pack("{s:b, s:{s:s, s:s}}", "ok", 0, "error", "code", code, "message",
                             message ? message : "");
    worker_send(r, pipe, MSG_RELAY_REPLY, id, body);
    json_decref(body);
}

/* What waits on the socket, each message to the router: at most
 * WORKER_BATCH per wake-up, so that a flooding worker cannot starve the
 * extension's socket (the fd stays readable and lws calls again). */
#define WORKER_BATCH 256
static void drain(struct relay *r)
{
    for (int n = 0; n < WORKER_BATCH; n++) {
        nng_msg *m = NULL;
        int rv = nng_recvmsg(r->sock, &m, NNG_FLAG_NONBLOCK);
        if (rv == NNG_EAGAIN)
            return;
        if (rv != 0) {
            log_error("workers: receive: %s", nng_strerror(rv));
            return;
        }
        uint32_t pipe = nng_pipe_id(nng_msg_get_pipe(m));
        struct proto_msg msg;
        char err[200];
        int rc = proto_decode(nng_msg_body(m), nng_msg_len(m), &msg, err, sizeof(err));
        nng_msg_free(m);
        if (rc != 0) {
            /* A worker speaking nonsense is a bug in it; it gets no answer
             * (there is no id to answer), the relay carries on. */
            log_warn("worker pipe %u: message refused: %s", pipe, err);
            continue;
        }
        if (msg.type == MSG_RELAY_ACK) {
            worker_acked(r, pipe, json_integer_value(json_object_get(msg.body, "n")));
        } else if (msg.type < 400 || msg.type >= 450) {
            log_warn("worker pipe %u: %s is not a request to the relay", pipe,
                     proto_msg_name(msg.type));
            if (msg.id)
                worker_reply_err(r, pipe, msg.id, "INVALID_PARAMETERS",
                                 "not a request to the relay");
        } else {
            router_worker_msg(r, pipe, msg.type, msg.id, msg.body);
        }
        proto_msg_clear(&msg);
    }
}

static int worker_callback(struct lws *wsi, enum lws_callback_reasons reason, void *user, void *in,
                           size_t len)
{
    struct relay *r = lws_context_user(lws_get_context(wsi));
    switch (reason) {
    case LWS_CALLBACK_RAW_RX_FILE:
        drain(r);
        return 0;
    case LWS_CALLBACK_RAW_CLOSE_FILE:
        if (!r->stop)
            log_error("workers: nng's receive fd closed");
        return 0;
    default:
        return 0;
    }
}

const struct lws_protocols worker_protocol = {
    .name = "tabvisor-relay-nng",
    .callback = worker_callback,
};

int worker_side_open(struct relay *r, char *err, size_t errlen)
{
    int rv;
    const char *what = "nng_pair1_open_poly";
    pthread_mutex_init(&r->gone_mu, NULL);
    if ((rv = nng_pair1_open_poly(&r->sock)) != 0)
        goto fail0;
    r->sock_open = true;
    what = "options";
    if ((rv = nng_socket_set_size(r->sock, NNG_OPT_RECVMAXSZ, PROTO_MAX_MESSAGE)) != 0 ||
        (rv = nng_socket_set_int(r->sock, NNG_OPT_SENDBUF, WORKER_QUEUE)) != 0 ||
        (rv = nng_socket_set_int(r->sock, NNG_OPT_RECVBUF, WORKER_QUEUE)) != 0 ||
        (rv = nng_pipe_notify(r->sock, NNG_PIPE_EV_REM_POST, pipe_event, r)) != 0)
        goto fail;
    /* We hold the relay lock: a socket file left here is a dead relay's. */
    char path[PATH_MAX];
    snprintf(path, sizeof(path), "%s/relay.ipc", r->rundir);
    unlink(path);
    what = "nng_listen";
    if ((rv = nng_listen(r->sock, r->ipc_url, NULL, 0)) != 0)
        goto fail;
    int fd;
    what = "NNG_OPT_RECVFD";
    if ((rv = nng_socket_get_int(r->sock, NNG_OPT_RECVFD, &fd)) != 0)
        goto fail;
    int dupfd = fcntl(fd, F_DUPFD_CLOEXEC, 3);
    if (dupfd < 0) {
        snprintf(err, errlen, "dup: %s", strerror(errno));
        return -1;
    }
    lws_sock_file_fd_type u = {.filefd = dupfd};
    if (!lws_adopt_descriptor_vhost(r->vh, LWS_ADOPT_RAW_FILE_DESC, u, worker_protocol.name,
                                    NULL)) {
        close(dupfd);
        snprintf(err, errlen, "lws_adopt_descriptor_vhost failed");
        return -1;
    }
    return 0;
fail:
    snprintf(err, errlen, "workers' socket %s: %s: %s", r->ipc_url, what, nng_strerror(rv));
    return -1;
fail0:
    snprintf(err, errlen, "%s: %s", what, nng_strerror(rv));
    return -1;
}

/* nng 1.5.2's nng_close can wait for ever when a peer's pipe goes away
 * while the socket closes (nng issues 1543 and 1813: the close waits for a
 * pipe reaper that a racing pipe removal left waiting). Seen once in a suite
 * run under load: the relay never exited on SIGTERM. At exit nothing needs
 * the close to finish (the kernel frees the socket and the ipc path is ours
 * to unlink next start), so the relay closes in a thread and gives it
 * WORKER_CLOSE_MS; a close still stuck then is logged and left behind. */
#define WORKER_CLOSE_MS 3000

static struct {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    nng_socket sock;
    bool done;
} closer = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, NNG_SOCKET_INITIALIZER, false};

static void *close_thread(void *arg)
{
    (void)arg;
    nng_close(closer.sock);
    pthread_mutex_lock(&closer.mu);
    closer.done = true;
    pthread_cond_signal(&closer.cv);
    pthread_mutex_unlock(&closer.mu);
    return NULL;
}

/* Closes r->sock, waiting at most ms. Returns false if nng is still in the
 * close then (its thread is detached and left to the process's exit). */
static bool close_bounded(struct relay *r, int ms)
{
    closer.sock = r->sock;
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_destroy(&closer.cv);
    pthread_cond_init(&closer.cv, &ca);
    pthread_condattr_destroy(&ca);
    pthread_t t;
    if (pthread_create(&t, NULL, close_thread, NULL) != 0) {
        nng_close(r->sock); /* no thread to spare: close in place */
        return true;
    }
    struct timespec until;
    clock_gettime(CLOCK_MONOTONIC, &until);
    until.tv_sec += ms / 1000;
    until.tv_nsec += (long)(ms % 1000) * 1000000L;
    if (until.tv_nsec >= 1000000000L) {
        until.tv_sec++;
        until.tv_nsec -= 1000000000L;
    }
    pthread_mutex_lock(&closer.mu);
    int rc = 0;
    while (!closer.done && rc != ETIMEDOUT)
        rc = pthread_cond_timedwait(&closer.cv, &closer.mu, &until);
    bool done = closer.done;
    pthread_mutex_unlock(&closer.mu);
    if (done)
        pthread_join(t, NULL);
    else
        pthread_detach(t);
    return done;
}

void worker_side_close(struct relay *r)
{
    if (r->sock_open)
        worker_side_flush(r); /* the last replies (a bye's) */
    json_decref(r->outbox);
    r->outbox = NULL;
    json_decref(r->outbox_bytes);
    r->outbox_bytes = NULL;
    json_decref(r->dropped);
    r->dropped = NULL;
    json_decref(r->inflight);
    r->inflight = NULL;
    pthread_mutex_lock(&r->gone_mu);
    r->gone_quiet = true;
    pthread_mutex_unlock(&r->gone_mu);
    if (r->sock_open) {
        if (!close_bounded(r, WORKER_CLOSE_MS))
            log_warn("workers: nng's close of the socket did not end in %d ms; exiting without it",
                     WORKER_CLOSE_MS);
        r->sock_open = false;
    }
}
