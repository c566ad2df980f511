/*
 * worker_outbox.c - what the relay sends to workers, batched and within a
 * window (the comment below); worker_side.c writes it to the connections.
 * The loop's thread only.
 */
#include "relay.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bodies.h"
#include "codec.h"
#include "json_util.h"
#include "log.h"
#include "proto.h"

/* Send one envelope to the worker on connection pipe now. */
static int send_now(struct relay *r, uint32_t pipe, uint32_t type, uint64_t id, const json_t *body)
{
    char *buf;
    size_t len;
    if (proto_encode(type, id, body, &buf, &len) != 0) {
        log_warn("worker pipe %u: %s message over the protocol's limits, not sent", pipe,
                 proto_msg_name(type));
        return -1;
    }
    int rc = worker_conn_write(r, pipe, buf, len);
    free(buf);
    return rc;
}

/*
 * Why messages to workers are batched and acknowledged: a page load makes
 * the extension forward dozens of CDP events within a millisecond. Written
 * one by one they cost a frame and a write each; and a worker that stops
 * reading must not make the relay hold an unbounded queue. So what goes to
 * one worker waits up to RELAY_FLUSH_US and leaves as one relay-batch
 * message (a lone message leaves as itself), RELAY_BATCH_MAX at a time, and
 * at most RELAY_WINDOW messages are on their way to a worker: it
 * acknowledges what it read (relay-ack), and the rest waits here until it
 * does. (The window first answered nng's polyamorous pair1, which dropped
 * what found a pipe's queue of two full; the relay now writes its own
 * connections, worker_side.c, and the window bounds what they hold.)
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

void worker_outbox_acked(struct relay *r, uint32_t pipe, json_int_t n)
{
    char key[16];
    snprintf(key, sizeof key, "%u", pipe);
    if (!r->inflight)
        return;
    inflight_add(r, key, -n);
    if (json_object_get(r->outbox, key))
        arm_flush(r);
}

/* The worker on pipe stopped reading (it sends no relay-ack): its queue goes and the pipe is
 * closed, once. Its session keeps its tabs for the grace period, as after any lost worker, and the
 * worker may come back with relay-hello. */
static void drop_unread_pipe(struct relay *r, uint32_t pipe, const char *key, size_t msgs,
                             size_t bytes)
{
    log_warn("worker pipe %u: %zu messages (about %zu bytes) wait unread; dropping that worker's "
             "connection",
             pipe, msgs, bytes);
    json_object_del(r->outbox, key);
    json_object_set_new(r->dropped, key, json_true());
    worker_conn_close(r, pipe);
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
        return -1; /* closed for not reading; its close comes soon */
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

void worker_outbox_forget(struct relay *r, uint32_t pipe)
{
    char key[16];
    snprintf(key, sizeof key, "%u", pipe);
    if (r->outbox)
        json_object_del(r->outbox, key);
    if (r->outbox_bytes)
        json_object_del(r->outbox_bytes, key);
    if (r->inflight)
        json_object_del(r->inflight, key);
    if (r->dropped)
        json_object_del(r->dropped, key);
}

void worker_outbox_free(struct relay *r)
{
    json_decref(r->outbox);
    r->outbox = NULL;
    json_decref(r->outbox_bytes);
    r->outbox_bytes = NULL;
    json_decref(r->dropped);
    r->dropped = NULL;
    json_decref(r->inflight);
    r->inflight = NULL;
}
