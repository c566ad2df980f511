/*
 * fuzz_ws_frame.c - libFuzzer target for what the worker reads from the
 * browser's socket:
 *   - ws_frame_parse on the raw bytes, as server and as client frames;
 *   - ws_reader (reassembly) fed the bytes in fuzzer-chosen chunk sizes;
 *   - the CDP client's message routing (id peeking, the lone-surrogate
 *     repair, event dispatch, nested calls) through an in-memory transport
 *     that replays the reassembled messages.
 * Nothing here may crash, leak or read out of bounds.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "cdp.h"
#include "ws_frame.h"

/* Small cap so inputs can reach the "too large" paths cheaply. */
#define FUZZ_MAX_MESSAGE 4096
#define FUZZ_MAX_MESSAGES 64

/* ---- an in-memory transport replaying fixed messages ---- */

struct replay {
    struct cdp_transport base;
    char *msg[FUZZ_MAX_MESSAGES];
    size_t len[FUZZ_MAX_MESSAGES];
    size_t n, next;
    int fd; /* always readable, so poll() never blocks */
};

static int rp_send(struct cdp_transport *t, const char *msg, size_t len, long long deadline_ms)
{
    (void)t;
    (void)msg;
    (void)len;
    (void)deadline_ms;
    return 0;
}

static int rp_recv(struct cdp_transport *t, char **msg, size_t *len)
{
    struct replay *r = (struct replay *)t;
    if (r->next == r->n)
        return -1; /* the browser went away: ends every wait */
    *msg = r->msg[r->next];
    *len = r->len[r->next];
    r->msg[r->next++] = NULL;
    return 0;
}

static int rp_pending(struct cdp_transport *t)
{
    struct replay *r = (struct replay *)t;
    return r->next < r->n;
}

static int rp_fd(struct cdp_transport *t)
{
    return ((struct replay *)t)->fd;
}

static void rp_destroy(struct cdp_transport *t)
{
    struct replay *r = (struct replay *)t;
    for (size_t i = r->next; i < r->n; i++)
        free(r->msg[i]);
    r->n = r->next = 0;
}

static const struct cdp_transport_ops rp_ops = {
    .send = rp_send,
    .recv = rp_recv,
    .pending = rp_pending,
    .fd = rp_fd,
    .destroy = rp_destroy,
    .error = NULL,
};

struct fuzz_ctx {
    struct cdp *c;
    int depth;
    unsigned events;
};

static void on_event(void *ud, const char *session_id, const char *method, json_t *params)
{
    struct fuzz_ctx *fc = ud;
    fc->events++;
    if (!json_is_object(params))
        abort(); /* the contract: always an object */
    (void)session_id;
    /* Re-entrancy: some events trigger a nested call, as tool code does. */
    if (method[0] == 'N' && fc->depth < 3) {
        fc->depth++;
        json_t *res = NULL;
        cdp_call(fc->c, session_id, "Nested.call", NULL, &res, 0);
        json_decref(res);
        fc->depth--;
    }
}

static void run_cdp(struct replay *rp)
{
    static int efd = -1;
    if (efd < 0) {
        efd = eventfd(1, EFD_CLOEXEC); /* counter 1, never read: stays readable */
        if (efd < 0)
            abort();
    }
    rp->base.ops = &rp_ops;
    rp->fd = efd;
    struct fuzz_ctx fc = {0};
    fc.c = cdp_new(&rp->base);
    if (!fc.c)
        return;
    cdp_set_event_handler(fc.c, on_event, &fc);
    json_t *res = NULL;
    /* Waits for id 1 (and nested ids 2, 3, ...) while replaying the rest. */
    int rc = cdp_call(fc.c, "S", "Fuzz.call", NULL, &res, 0);
    if (rc == CDP_OK && !json_is_object(res))
        abort();
    json_decref(res);
    (void)cdp_last_error(fc.c);
    cdp_wait(fc.c, NULL, NULL, 0); /* drain what is left; ends CLOSED */
    cdp_free(fc.c);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct ws_frame f;
    const char *why = NULL;
    for (int from = 0; from < 2; from++) {
        int rc = ws_frame_parse(data, size, (enum ws_sender)from, &f, &why);
        if (rc == WS_PARSE_OK && (f.header_len > WS_MAX_HEADER || f.header_len > size))
            abort();
        if (rc == WS_PARSE_ERROR && !why)
            abort();
    }
    if (size < 1)
        return 0;

    /* First byte: chunking seed. The rest: the byte stream from the server. */
    unsigned seed = data[0];
    data++;
    size--;
    struct ws_reader rd;
    ws_reader_init(&rd, FUZZ_MAX_MESSAGE);
    struct replay rp;
    memset(&rp, 0, sizeof rp);
    size_t fed = 0;
    for (;;) {
        enum ws_event ev = ws_reader_next(&rd);
        if (ev == WS_EV_NEED_MORE) {
            if (fed == size)
                break;
            size_t chunk = 1 + (seed % 17);
            seed = seed * 1103515245u + 12345u;
            if (chunk > size - fed)
                chunk = size - fed;
            if (ws_reader_push(&rd, data + fed, chunk) < 0)
                abort();
            fed += chunk;
            continue;
        }
        if (ev == WS_EV_MESSAGE) {
            char *m;
            size_t n;
            ws_reader_take(&rd, &m, &n, NULL);
            if (!m || n > FUZZ_MAX_MESSAGE || m[n] != '\0')
                abort();
            if (rp.n < FUZZ_MAX_MESSAGES) {
                rp.msg[rp.n] = m;
                rp.len[rp.n++] = n;
            } else {
                free(m);
            }
            continue;
        }
        if (ev == WS_EV_PING) {
            if (rd.ctl_len > WS_MAX_CONTROL)
                abort();
            continue;
        }
        if (ev == WS_EV_CLOSE)
            (void)ws_close_code(rd.ctl, rd.ctl_len);
        else if (!rd.error)
            abort();
        break; /* close or error: the stream is over */
    }
    ws_reader_free(&rd);
    run_cdp(&rp);
    return 0;
}
