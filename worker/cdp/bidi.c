/*
 * bidi.c - the worker's transport to Firefox: CDP on top, WebDriver BiDi
 * underneath (bidi_map.h does the mapping; this file moves the messages).
 *
 * It wraps the transport that reaches the browser (the pipe to the
 * supervisor's BiDi bridge) and presents CDP to the worker's client
 * (cdp.c): each command sent is mapped, and either goes out as BiDi under
 * the same id or is answered here; each message read is mapped back, an
 * answer to its CDP answer, an event to the CDP events it makes. Messages
 * made here wait in a queue that recv() empties first.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bidi_map.h"
#include "log.h"
#include "transport.h"

struct bidi_transport {
    struct cdp_transport base;
    struct cdp_transport *inner;
    struct bidi_map *map;
    json_t **queue; /* CDP messages to hand out, oldest first (owned) */
    size_t head, n, cap;
    char err[160];
};

static struct bidi_transport *bt_of(struct cdp_transport *t)
{
    return (struct bidi_transport *)t;
}

/* Queue msg (borrowed) for recv_json() (or recv(), as text). */
static void push(void *ud, json_t *msg)
{
    struct bidi_transport *b = ud;
    if (b->head + b->n == b->cap) {
        if (b->head) {
            memmove(b->queue, b->queue + b->head, b->n * sizeof *b->queue);
            b->head = 0;
        } else {
            size_t cap = b->cap ? b->cap * 2 : 16;
            json_t **q = realloc(b->queue, cap * sizeof *q);
            if (!q)
                abort();
            b->queue = q;
            b->cap = cap;
        }
    }
    b->queue[b->head + b->n++] = json_incref(msg);
}

/* A CDP command (borrowed) mapped to BiDi: answered here, or sent on to
 * the bridge as BiDi text (the one place a command becomes text). */
static int bt_send_json(struct cdp_transport *t, const json_t *m, long long deadline_ms)
{
    struct bidi_transport *b = bt_of(t);
    json_t *jid = json_object_get(m, "id");
    const char *method = json_string_value(json_object_get(m, "method"));
    if (!json_is_integer(jid) || !method) {
        snprintf(b->err, sizeof b->err, "bidi: the client sent a message that is no command");
        return -1;
    }
    json_t *out = NULL;
    enum bidi_outcome o = bidi_map_command(b->map, json_integer_value(jid),
                                           json_string_value(json_object_get(m, "sessionId")),
                                           method, json_object_get(m, "params"), &out);
    if (o == BIDI_ANSWER) {
        push(b, out);
        json_decref(out);
        return 0;
    }
    char *s = json_dumps(out, JSON_COMPACT);
    json_decref(out);
    if (!s)
        abort();
    size_t n = strlen(s);
    if (n > CDP_MAX_COMMAND) {
        free(s);
        snprintf(b->err, sizeof b->err, "its BiDi command of %zu bytes is over the %u byte limit",
                 n, CDP_MAX_COMMAND);
        return TRANSPORT_TOO_BIG;
    }
    int rc = b->inner->ops->send(b->inner, s, n, deadline_ms);
    free(s);
    return rc;
}

static int bt_send(struct cdp_transport *t, const char *msg, size_t len, long long deadline_ms)
{
    json_t *m = json_loadb(msg, len, 0, NULL);
    int rc = bt_send_json(t, m, deadline_ms);
    json_decref(m);
    return rc < 0 ? -1 : rc;
}

static int pop(struct bidi_transport *b, json_t **msg)
{
    if (!b->n)
        return TRANSPORT_AGAIN;
    *msg = b->queue[b->head++];
    if (!--b->n)
        b->head = 0;
    return 0;
}

static int bt_recv_json(struct cdp_transport *t, json_t **msg)
{
    struct bidi_transport *b = bt_of(t);
    for (;;) {
        if (pop(b, msg) == 0)
            return 0;
        char *raw;
        size_t rl;
        int r = b->inner->ops->recv(b->inner, &raw, &rl);
        if (r != 0)
            return r;
        json_t *m = json_loadb(raw, rl, 0, NULL);
        free(raw);
        if (!m)
            continue; /* not JSON: nothing a client could use */
        if (json_object_get(m, "id")) {
            bidi_map_answer(b->map, m, push, b);
        } else {
            log_debug("bidi event %.160s", json_string_value(json_object_get(m, "method")) ?: "?");
            bidi_map_event(b->map, m, push, b);
        }
        json_decref(m);
    }
}

static int bt_recv(struct cdp_transport *t, char **msg, size_t *len)
{
    json_t *m;
    int r = bt_recv_json(t, &m);
    if (r != 0)
        return r;
    *msg = json_dumps(m, JSON_COMPACT);
    json_decref(m);
    if (!*msg)
        abort();
    *len = strlen(*msg);
    return 0;
}

static int bt_pending(struct cdp_transport *t)
{
    struct bidi_transport *b = bt_of(t);
    return b->n || b->inner->ops->pending(b->inner);
}

static int bt_fd(struct cdp_transport *t)
{
    struct bidi_transport *b = bt_of(t);
    return b->inner->ops->fd(b->inner);
}

static const char *bt_error(struct cdp_transport *t)
{
    struct bidi_transport *b = bt_of(t);
    if (b->err[0])
        return b->err;
    return b->inner->ops->error ? b->inner->ops->error(b->inner) : "";
}

static void bt_destroy(struct cdp_transport *t)
{
    struct bidi_transport *b = bt_of(t);
    b->inner->ops->destroy(b->inner);
    bidi_map_free(b->map);
    for (size_t i = 0; i < b->n; i++)
        json_decref(b->queue[b->head + i]);
    free(b->queue);
    free(b);
}

static const struct cdp_transport_ops bidi_ops = {
    .send = bt_send,
    .recv = bt_recv,
    .pending = bt_pending,
    .fd = bt_fd,
    .destroy = bt_destroy,
    .error = bt_error,
    .send_json = bt_send_json,
    .recv_json = bt_recv_json,
};

struct cdp_transport *bidi_transport_new(struct cdp_transport *inner,
                                         const char *(*url_check)(const char *url))
{
    if (!inner)
        return NULL;
    struct bidi_transport *b = calloc(1, sizeof *b);
    if (b)
        b->map = bidi_map_new();
    if (!b || !b->map) {
        free(b);
        inner->ops->destroy(inner);
        return NULL;
    }
    b->base.ops = &bidi_ops;
    b->inner = inner;
    bidi_map_set_url_check(b->map, url_check);
    return &b->base;
}
