/*
 * cdp_remote.c - relay between the CDP bridge's NUL-framed pipe and a
 * remote browser's WebSocket (cdp_remote.h).
 */
#include "cdp_remote.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "cdp_connect.h"
#include "clock.h"
#include "log.h"
#include "loop.h"
#include "nulframe.h"
#include "ws_frame.h"

#define CONNECT_TIMEOUT_MS 10000
/* As the bridge's own limits: a screenshot runs to tens of MiB. */
#define MAX_MESSAGE (256u * 1024 * 1024)
#define MAX_QUEUE (2 * (size_t)MAX_MESSAGE)
#define READ_CHUNK (256 * 1024)

/* The connecting thread's job, shared by the thread and the loop: whoever
 * drops the last reference frees it (and closes a socket nobody took). */
struct job {
    atomic_int refs;
    struct cdp_url url;
    cdp_remote_connect_fn connect; /* NULL: cdp_connect(url) */
    void *arg;                     /* connect's, freed by arg_free unless taken */
    void (*arg_free)(void *arg);
    int notify; /* write end of the loop's pipe: one byte when done */
    struct cdp_conn_result res;
};

struct cdp_remote {
    struct loop *loop;
    const struct cdp_remote_events *ev;
    void *ud;
    struct job *job; /* while connecting */
    int notify_rd;
    int bridge_fd, ws_fd;
    struct nf_reader from_bridge; /* NUL-framed commands from the bridge */
    struct nf_queue to_bridge;    /* NUL-framed messages for the bridge */
    struct ws_reader rd;          /* frames from the browser */
    struct nf_queue to_ws;        /* masked frames for the browser */
    bool dead;
    void *arg; /* the connect function's, once it returned */
    void (*arg_free)(void *arg);
};

static void job_drop(struct job *j)
{
    if (atomic_fetch_sub(&j->refs, 1) != 1)
        return;
    if (j->res.fd >= 0)
        close(j->res.fd);
    if (j->notify >= 0)
        close(j->notify);
    free(j->res.extra);
    if (j->arg && j->arg_free)
        j->arg_free(j->arg);
    free(j);
}

static void *connect_thread(void *arg)
{
    struct job *j = arg;
    if (j->connect)
        j->connect(j->arg, &j->res);
    else
        cdp_connect(&j->url, mono_ms() + CONNECT_TIMEOUT_MS, &j->res);
    char one = 1;
    /* Fails with EPIPE when the remote was freed meanwhile: then the
     * last reference is ours. */
    if (write(j->notify, &one, 1) < 0) {
    }
    job_drop(j);
    return NULL;
}

static void fail(struct cdp_remote *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* The connection is over: stop watching, tell the owner once. */
static void fail(struct cdp_remote *r, const char *fmt, ...)
{
    if (r->dead)
        return;
    r->dead = true;
    char why[300];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, sizeof why, fmt, ap);
    va_end(ap);
    if (r->ws_fd >= 0)
        loop_del_fd(r->loop, r->ws_fd);
    loop_del_fd(r->loop, r->bridge_fd);
    r->ev->closed(r->ud, why);
}

static void update_events(struct cdp_remote *r)
{
    if (r->dead)
        return;
    loop_set_events(r->loop, r->ws_fd, (short)(POLLIN | (nf_queue_len(&r->to_ws) ? POLLOUT : 0)));
    loop_set_events(r->loop, r->bridge_fd,
                    (short)(POLLIN | (nf_queue_len(&r->to_bridge) ? POLLOUT : 0)));
}

/* Queue one frame for the browser: header, then payload masked in place
 * (data is the caller's scratch: it is overwritten). 0 or -1. */
static int queue_frame(struct cdp_remote *r, enum ws_opcode op, void *data, size_t len)
{
    uint8_t head[WS_MAX_HEADER], mask[4];
    if (ws_random_mask(mask) < 0)
        return -1;
    size_t hl = ws_frame_encode(head, true, op, len, mask);
    ws_mask(data, len, mask, 0);
    if (nf_queue_append(&r->to_ws, head, hl, MAX_QUEUE) < 0 ||
        nf_queue_append(&r->to_ws, data, len, MAX_QUEUE) < 0)
        return -1;
    return 0;
}

static void flush(struct cdp_remote *r)
{
    if (!r->dead && nf_queue_len(&r->to_ws) && nf_queue_write(&r->to_ws, r->ws_fd) < 0)
        fail(r, "writing to the browser failed: %s", strerror(errno));
    if (!r->dead && nf_queue_len(&r->to_bridge) && nf_queue_write(&r->to_bridge, r->bridge_fd) < 0)
        fail(r, "the CDP bridge went away");
    update_events(r);
}

/* Whole messages and control frames the browser sent so far. */
static void drain_ws(struct cdp_remote *r)
{
    for (;;) {
        enum ws_event e = ws_reader_next(&r->rd);
        if (e == WS_EV_NEED_MORE)
            return;
        if (e == WS_EV_MESSAGE) {
            char *msg;
            size_t len;
            ws_reader_take(&r->rd, &msg, &len, NULL);
            int q = nf_queue_append(&r->to_bridge, msg, len + 1, MAX_QUEUE); /* with its NUL */
            free(msg);
            if (q < 0) {
                fail(r, "the CDP bridge stopped reading (queue full)");
                return;
            }
        } else if (e == WS_EV_PING) {
            uint8_t pong[WS_MAX_CONTROL];
            memcpy(pong, r->rd.ctl, r->rd.ctl_len);
            if (queue_frame(r, WS_OP_PONG, pong, r->rd.ctl_len) < 0) {
                fail(r, "out of memory");
                return;
            }
        } else if (e == WS_EV_CLOSE) {
            fail(r, "the browser closed the connection (code %u)",
                 ws_close_code(r->rd.ctl, r->rd.ctl_len));
            return;
        } else {
            fail(r, "the browser broke the WebSocket protocol: %s", r->rd.error);
            return;
        }
    }
}

static void on_ws(struct loop *l, int fd, short revents, void *ud)
{
    struct cdp_remote *r = ud;
    if (revents & (POLLIN | POLLHUP | POLLERR)) {
        void *space = ws_reader_space(&r->rd, READ_CHUNK);
        ssize_t n = space ? recv(fd, space, READ_CHUNK, MSG_DONTWAIT) : -1;
        if (n < 0 && (errno == EAGAIN || errno == EINTR))
            return;
        if (n <= 0) {
            fail(r, "the connection to the browser %s", n == 0 ? "closed" : strerror(errno));
            return;
        }
        ws_reader_commit(&r->rd, (size_t)n);
        drain_ws(r);
    }
    flush(r);
}

static void on_bridge(struct loop *l, int fd, short revents, void *ud)
{
    struct cdp_remote *r = ud;
    if (revents & (POLLIN | POLLHUP | POLLERR)) {
        long n = nf_reader_read(&r->from_bridge, fd, READ_CHUNK);
        if (n < 0 && (errno == EAGAIN || errno == EINTR))
            return;
        if (n <= 0) {
            fail(r, "the CDP bridge closed its end");
            return;
        }
        char *msg;
        size_t len;
        int k;
        while ((k = nf_reader_next(&r->from_bridge, &msg, &len)) == 1) {
            if (queue_frame(r, WS_OP_TEXT, msg, len) < 0) {
                fail(r, "the browser stopped reading (queue full)");
                return;
            }
        }
        if (k < 0) {
            fail(r, "a message from the CDP bridge is over the size limit");
            return;
        }
    }
    flush(r);
}

/* The connecting thread is done: take its socket, or report its error. */
static void on_connected(struct loop *l, int fd, short revents, void *ud)
{
    struct cdp_remote *r = ud;
    char one;
    if (read(fd, &one, 1) < 0 && errno == EAGAIN)
        return;
    loop_del_fd(l, fd);
    close(fd);
    r->notify_rd = -1;
    struct job *j = r->job;
    r->job = NULL;
    r->arg = j->arg; /* now the owner's to take (cdp_remote_take_arg) or ours to free */
    r->arg_free = j->arg_free;
    j->arg = NULL;
    if (j->res.fd < 0) {
        char why[sizeof j->res.err];
        snprintf(why, sizeof why, "%s", j->res.err[0] ? j->res.err : "could not connect");
        job_drop(j);
        fail(r, "%s", why);
        return;
    }
    r->ws_fd = j->res.fd;
    j->res.fd = -1;
    int pushed = ws_reader_push(&r->rd, j->res.extra, j->res.extra_len);
    job_drop(j);
    if (pushed < 0) {
        fail(r, "out of memory");
        return;
    }
    loop_add_fd(l, r->ws_fd, POLLIN, on_ws, r);
    loop_add_fd(l, r->bridge_fd, POLLIN, on_bridge, r);
    if (r->ev->connected)
        r->ev->connected(r->ud);
    drain_ws(r);
    flush(r);
}

/* Start the connecting thread on j (prepared by the caller) and set up r. */
static struct cdp_remote *start(struct loop *l, struct job *j, int bridge_fd,
                                const struct cdp_remote_events *ev, void *ud)
{
    struct cdp_remote *r = calloc(1, sizeof *r);
    int p[2] = {-1, -1};
    if (!r || pipe2(p, O_CLOEXEC | O_NONBLOCK) < 0)
        goto fail;
    atomic_init(&j->refs, 2);
    j->notify = p[1];
    j->res.fd = -1;
    pthread_attr_t attr;
    pthread_t t;
    pthread_attr_init(&attr);
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    int tr = pthread_create(&t, &attr, connect_thread, j);
    pthread_attr_destroy(&attr);
    if (tr != 0)
        goto fail;
    r->loop = l;
    r->ev = ev;
    r->ud = ud;
    r->job = j;
    r->notify_rd = p[0];
    r->bridge_fd = bridge_fd;
    r->ws_fd = -1;
    r->from_bridge.max_msg = MAX_MESSAGE;
    ws_reader_init(&r->rd, MAX_MESSAGE);
    fcntl(bridge_fd, F_SETFL, fcntl(bridge_fd, F_GETFL) | O_NONBLOCK);
    loop_add_fd(l, p[0], POLLIN, on_connected, r);
    return r;
fail:
    if (p[0] >= 0) {
        close(p[0]);
        close(p[1]);
    }
    if (j->arg && j->arg_free)
        j->arg_free(j->arg);
    free(j);
    free(r);
    close(bridge_fd);
    return NULL;
}

struct cdp_remote *cdp_remote_new(struct loop *l, const char *url, int bridge_fd,
                                  const struct cdp_remote_events *ev, void *ud)
{
    struct job *j = calloc(1, sizeof *j);
    char why[200];
    if (!j || cdp_url_parse(url, &j->url, why, sizeof why) < 0) {
        free(j);
        close(bridge_fd);
        return NULL;
    }
    return start(l, j, bridge_fd, ev, ud);
}

struct cdp_remote *cdp_remote_new_with(struct loop *l, cdp_remote_connect_fn connect, void *arg,
                                       void (*arg_free)(void *arg), int bridge_fd,
                                       const struct cdp_remote_events *ev, void *ud)
{
    struct job *j = calloc(1, sizeof *j);
    if (!j) {
        if (arg_free)
            arg_free(arg);
        close(bridge_fd);
        return NULL;
    }
    j->connect = connect;
    j->arg = arg;
    j->arg_free = arg_free;
    return start(l, j, bridge_fd, ev, ud);
}

void *cdp_remote_take_arg(struct cdp_remote *r)
{
    void *a = r ? r->arg : NULL;
    if (r)
        r->arg = NULL;
    return a;
}

void cdp_remote_free(struct cdp_remote *r)
{
    if (!r)
        return;
    if (r->notify_rd >= 0) {
        loop_del_fd(r->loop, r->notify_rd);
        close(r->notify_rd); /* the thread's notice now fails; it frees the job */
    }
    if (r->job)
        job_drop(r->job);
    if (r->ws_fd >= 0) {
        if (!r->dead) {
            /* A polite close, best effort: never wait for the browser. */
            uint8_t code[2] = {WS_CLOSE_NORMAL >> 8, WS_CLOSE_NORMAL & 0xff};
            if (queue_frame(r, WS_OP_CLOSE, code, sizeof code) == 0)
                nf_queue_write(&r->to_ws, r->ws_fd);
            loop_del_fd(r->loop, r->ws_fd);
        }
        close(r->ws_fd);
    }
    if (!r->dead)
        loop_del_fd(r->loop, r->bridge_fd);
    close(r->bridge_fd);
    if (r->arg && r->arg_free)
        r->arg_free(r->arg);
    nf_reader_free(&r->from_bridge);
    nf_queue_free(&r->to_bridge);
    nf_queue_free(&r->to_ws);
    ws_reader_free(&r->rd);
    free(r);
}
