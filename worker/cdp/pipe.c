/*
 * pipe.c - the NUL-framed cdp_transport: Chromium's --remote-debugging-pipe
 * framing (one JSON text, then one NUL byte) over a read fd and a write fd.
 *
 * Shared mode hands the worker one end of a socketpair to the supervisor's
 * CDP bridge (both directions on one fd); a browser of the worker's own would
 * give it the two pipe ends. No handshake, no masking, no control frames:
 * the cheapest framing there is, and no port anyone else can open.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "clock.h"
#include "nulframe.h"
#include "transport.h"

/* The same bound as the WebSocket transport and the bridge. */
#define PIPE_MAX_MESSAGE (256u * 1024 * 1024)
#define PIPE_READ_CHUNK (256 * 1024)

struct pipe_transport {
    struct cdp_transport base;
    int rfd, wfd;
    struct nf_reader in;
    struct nf_queue out;
    bool dead;
    char err[160];
};

static struct pipe_transport *pipe_of(struct cdp_transport *t)
{
    return (struct pipe_transport *)t;
}

static void mark_dead(struct pipe_transport *p, const char *why)
{
    if (p->dead)
        return; /* keep the first reason */
    p->dead = true;
    snprintf(p->err, sizeof p->err, "pipe: %s", why);
}

/* Write queued output; with a deadline, wait for the fd while it is full. */
static int flush(struct pipe_transport *p, long long deadline_ms, bool wait)
{
    for (;;) {
        int r = nf_queue_write(&p->out, p->wfd);
        if (r == 0)
            return 0;
        if (r < 0) {
            mark_dead(p, errno == EPIPE ? "the browser closed the connection" : strerror(errno));
            return -1;
        }
        if (!wait)
            return 0;
        struct pollfd pf = {.fd = p->wfd, .events = POLLOUT};
        int n = poll(&pf, 1, poll_timeout_ms(deadline_ms, mono_ms()));
        if (n == 0)
            return 0; /* still queued: later send()/recv() calls go on writing it */
        if (n < 0 && errno != EINTR) {
            mark_dead(p, strerror(errno));
            return -1;
        }
    }
}

static int pipe_send(struct cdp_transport *t, const char *msg, size_t len, long long deadline_ms)
{
    struct pipe_transport *p = pipe_of(t);
    if (p->dead)
        return -1;
    if (len > PIPE_MAX_MESSAGE || memchr(msg, 0, len)) {
        /* Not fatal for the connection: nothing was queued. */
        snprintf(p->err, sizeof p->err, "pipe: refusing a message of %zu bytes", len);
        return -1;
    }
    if (nf_queue_append(&p->out, msg, len, 0) < 0 || nf_queue_append(&p->out, "", 1, 0) < 0) {
        mark_dead(p, "out of memory");
        return -1;
    }
    return flush(p, deadline_ms, true);
}

static int pipe_recv(struct cdp_transport *t, char **msg, size_t *len)
{
    struct pipe_transport *p = pipe_of(t);
    for (;;) {
        char *m;
        size_t n;
        int r = nf_reader_next(&p->in, &m, &n);
        if (r == 1) {
            char *copy = malloc(n + 1);
            if (!copy) {
                mark_dead(p, "out of memory");
                return -1;
            }
            memcpy(copy, m, n + 1);
            *msg = copy;
            *len = n;
            return 0;
        }
        if (r < 0)
            mark_dead(p, "the browser sent a message over the size limit");
        if (p->dead)
            return -1;
        if (nf_queue_len(&p->out) && flush(p, 0, false) < 0)
            return -1;
        long got = nf_reader_read(&p->in, p->rfd, PIPE_READ_CHUNK);
        if (got > 0)
            continue;
        if (got == 0) {
            mark_dead(p, "the browser closed the connection");
            return -1;
        }
        if (errno == EINTR)
            continue;
        if (errno == EAGAIN || errno == EWOULDBLOCK)
            return TRANSPORT_AGAIN;
        mark_dead(p, strerror(errno));
        return -1;
    }
}

static int pipe_pending(struct cdp_transport *t)
{
    return nf_reader_has_message(&pipe_of(t)->in);
}

static int pipe_fd(struct cdp_transport *t)
{
    return pipe_of(t)->rfd;
}

static void pipe_destroy(struct cdp_transport *t)
{
    struct pipe_transport *p = pipe_of(t);
    if (p->rfd >= 0)
        close(p->rfd);
    if (p->wfd >= 0 && p->wfd != p->rfd)
        close(p->wfd);
    nf_reader_free(&p->in);
    nf_queue_free(&p->out);
    free(p);
}

static const char *pipe_error(struct cdp_transport *t)
{
    return pipe_of(t)->err;
}

static const struct cdp_transport_ops pipe_ops = {
    .send = pipe_send,
    .recv = pipe_recv,
    .pending = pipe_pending,
    .fd = pipe_fd,
    .destroy = pipe_destroy,
    .error = pipe_error,
};

struct cdp_transport *pipe_transport_new(int rfd, int wfd)
{
    struct pipe_transport *p = calloc(1, sizeof *p);
    if (!p)
        return NULL;
    p->base.ops = &pipe_ops;
    p->rfd = rfd;
    p->wfd = wfd;
    p->in.max_msg = PIPE_MAX_MESSAGE;
    fcntl(rfd, F_SETFL, fcntl(rfd, F_GETFL) | O_NONBLOCK);
    if (wfd != rfd)
        fcntl(wfd, F_SETFL, fcntl(wfd, F_GETFL) | O_NONBLOCK);
    return &p->base;
}
