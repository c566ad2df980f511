/*
 * channel.c - protocol envelopes over an nng pair1 socket. (Not pair0: in
 * nng 1.5 a pair0 socket leaks the two descriptors of NNG_OPT_RECVFD when it
 * is closed, so a supervisor lost two per worker restart.)
 */
#include "channel.h"

#include <pthread.h>
#include <stdatomic.h>
#include "errbuf.h"
#include "log.h"
#include "memtrim.h"
#include "proto.h"

#include <stdlib.h>
#include <string.h>

#include <nng/nng.h>
#include <nng/protocol/pair1/pair.h>

struct channel {
    nng_socket sock;
    int fd;       /* NNG_OPT_RECVFD, fetched on first use */
    int nonblock; /* sends never wait (the listening end: the supervisor) */
    /* The id of the connection (nng pipe) nng holds, 0 when none: set and
     * cleared by nng's threads (on_pipe_event), read by the owner. */
    _Atomic uint32_t pipe;
};

/* nng's pipe notifications, on its threads. NNG_PIPE_EV_REM_POST comes once
 * nng has closed the pipe (the peer's end reached, or an error), before it
 * reaps it: from then on nng_close does not close that pipe itself. */
static void on_pipe_event(nng_pipe p, nng_pipe_ev ev, void *arg)
{
    struct channel *c = arg;
    uint32_t id = (uint32_t)nng_pipe_id(p);
    if (ev == NNG_PIPE_EV_ADD_POST) {
        atomic_store(&c->pipe, id);
    } else {
        uint32_t held = id;
        atomic_compare_exchange_strong(&c->pipe, &held, 0);
    }
}

/* pair1 puts a 4-byte hop count before each message on the wire, and the
 * receiver's size limit counts it. */
#define PAIR1_HEADER 4

static int channel_open(struct channel **out, const char *url, int listen)
{
    int rv;
    const char *what = "nng_pair1_open";

    *out = NULL;
    struct channel *c = calloc(1, sizeof(*c));
    if (!c)
        return -1;
    c->fd = -1;
    c->nonblock = listen;
    if ((rv = nng_pair1_open(&c->sock)) != 0) {
        free(c);
        log_error("channel %s: nng_pair1_open: %s", url, nng_strerror(rv));
        return -1;
    }
    /* nng drops (and on ipc, disconnects) anything larger than this, before
     * it is ever allocated in full; proto_encode refuses to make one. */
    what = "set options";
    if ((rv = nng_socket_set_size(c->sock, NNG_OPT_RECVMAXSZ, PROTO_MAX_MESSAGE + PAIR1_HEADER)) !=
            0 ||
        (rv = nng_socket_set_int(c->sock, NNG_OPT_SENDBUF, CHANNEL_QUEUE)) != 0 ||
        (rv = nng_socket_set_int(c->sock, NNG_OPT_RECVBUF, CHANNEL_QUEUE)) != 0 ||
        (rv = nng_socket_set_ms(c->sock, NNG_OPT_SENDTIMEO, CHANNEL_SEND_TIMEOUT_MS)) != 0 ||
        (rv = nng_pipe_notify(c->sock, NNG_PIPE_EV_ADD_POST, on_pipe_event, c)) != 0 ||
        (rv = nng_pipe_notify(c->sock, NNG_PIPE_EV_REM_POST, on_pipe_event, c)) != 0)
        goto fail;
    if (listen) {
        what = "nng_listen";
        rv = nng_listen(c->sock, url, NULL, 0);
    } else {
        /* The worker may start before the supervisor's listener is up (or
         * reconnect after a hiccup): retry quickly, back off to 250 ms. */
        what = "set reconnect options";
        if ((rv = nng_socket_set_ms(c->sock, NNG_OPT_RECONNMINT, 10)) != 0 ||
            (rv = nng_socket_set_ms(c->sock, NNG_OPT_RECONNMAXT, 250)) != 0)
            goto fail;
        /* NONBLOCK: return at once and keep dialing in the background. */
        what = "nng_dial";
        rv = nng_dial(c->sock, url, NULL, NNG_FLAG_NONBLOCK);
    }
    if (rv != 0)
        goto fail;
    *out = c;
    return 0;
fail:
    log_error("channel %s: %s: %s", url, what, nng_strerror(rv));
    nng_close(c->sock);
    free(c);
    return -1;
}

int channel_listen(struct channel **out, const char *url)
{
    return channel_open(out, url, 1);
}

int channel_dial(struct channel **out, const char *url)
{
    return channel_open(out, url, 0);
}

int channel_send(struct channel *c, uint32_t type, uint64_t id, const json_t *body)
{
    char *buf;
    size_t len;

    if (proto_encode(type, id, body, &buf, &len) != 0) {
        log_warn("channel: %s message over the protocol's limits, not sent", proto_msg_name(type));
        return CHANNEL_TOO_BIG;
    }
    /* Copies buf. Non-blocking: EAGAIN when nng's queue is full. */
    int rv = nng_send(c->sock, buf, len, c->nonblock ? NNG_FLAG_NONBLOCK : 0);
    free(buf);
    memtrim_released(len);
    if (rv != 0) {
        log_warn("channel: send %s: %s", proto_msg_name(type), nng_strerror(rv));
        return rv == NNG_EAGAIN || rv == NNG_ETIMEDOUT ? CHANNEL_FULL : -1;
    }
    return 0;
}

int channel_recv(struct channel *c, struct proto_msg *msg, int nonblock, char *err, size_t errlen)
{
    nng_msg *m = NULL;

    memset(msg, 0, sizeof(*msg));
    if (err && errlen)
        err[0] = '\0';
    int rv = nng_recvmsg(c->sock, &m, nonblock ? NNG_FLAG_NONBLOCK : 0);
    if (rv == NNG_EAGAIN)
        return CHANNEL_AGAIN;
    if (rv != 0) {
        errbuf_set(err, errlen, "receive failed: %s", nng_strerror(rv));
        return -1;
    }
    int rc = proto_decode(nng_msg_body(m), nng_msg_len(m), msg, err, errlen);
    memtrim_released(nng_msg_len(m));
    nng_msg_free(m);
    return rc;
}

int channel_fd(struct channel *c)
{
    if (c->fd < 0) {
        int fd;
        int rv = nng_socket_get_int(c->sock, NNG_OPT_RECVFD, &fd);
        if (rv != 0) {
            log_error("channel: NNG_OPT_RECVFD: %s", nng_strerror(rv));
            return -1;
        }
        c->fd = fd;
    }
    return c->fd;
}

bool channel_connected(struct channel *c)
{
    return atomic_load(&c->pipe) != 0;
}

void channel_discard_pending(struct channel *c)
{
    nng_msg *m;
    while (nng_recvmsg(c->sock, &m, NNG_FLAG_NONBLOCK) == 0) {
        memtrim_released(nng_msg_len(m));
        nng_msg_free(m);
    }
}

static _Atomic int closes_in_flight;

static void *close_thread(void *arg)
{
    channel_close(arg);
    atomic_fetch_sub(&closes_in_flight, 1);
    return NULL;
}

int channel_closes_in_flight(void)
{
    return atomic_load(&closes_in_flight);
}

void channel_close_detached(struct channel *c)
{
    if (!c)
        return;
    pthread_t t;
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    pthread_attr_setstacksize(&attr, 64 * 1024);
    atomic_fetch_add(&closes_in_flight, 1);
    if (pthread_create(&t, &attr, close_thread, c) != 0) {
        atomic_fetch_sub(&closes_in_flight, 1);
        channel_close(c); /* no thread to be had: close here */
    }
    pthread_attr_destroy(&attr);
}

void channel_close(struct channel *c)
{
    if (!c)
        return;
    nng_close(c->sock);
    free(c);
}
