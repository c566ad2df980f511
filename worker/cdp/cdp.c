/*
 * cdp.c - the CDP client of cdp.h.
 *
 * Re-entrancy: the event handler may call cdp_call() (and cdp_wait()) again;
 * the handler itself may be re-entered by events that arrive during such a
 * nested call. Each active cdp_call() waits for its own id; the ids of all
 * active calls form a stack. A response for an id on that stack is parked in
 * a small "done" table until its caller looks, so the outer call's answer is
 * not lost when it arrives while an inner call is waiting. A response whose id
 * is on no stack belongs to an abandoned call (timed out, interrupted, or
 * cdp_send) and is dropped, usually without even parsing it.
 *
 * An interrupt ends every nested wait: once the callback asks to stop, every
 * active frame returns CDP_INTERRUPTED up to the outermost one.
 *
 * Responses are parsed into jansson trees (the contract hands out json_t);
 * only dropped ones are recognised by a prefix scan instead.
 */
#include "cdp.h"

#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* How long cdp_send() may block writing into a full socket. */
#define CDP_SEND_FLUSH_MS 5000
/* Longest error text we keep (error.data can be large). */
#define CDP_MAX_ERROR 4096

struct cdp_done {
    long long id;
    json_t *msg; /* the whole response object, owned */
};

struct cdp {
    struct cdp_transport *t;
    long long next_id;

    cdp_event_fn ev_fn;
    void *ev_ud;
    int int_fd;
    cdp_interrupt_fn int_fn;
    void *int_ud;
    int (*abort_fn)(void *ud); /* cdp_set_abort */
    void *abort_ud;

    long long *waiting; /* ids of the active cdp_call frames, innermost last */
    size_t nwaiting, capwaiting;
    struct cdp_done *done; /* responses for waiting ids not yet claimed */
    size_t ndone, capdone;

    int depth;        /* nested wait loops */
    bool interrupted; /* latched until the outermost wait returns */
    bool closed;      /* the transport failed; sticky */

    int err_code;
    char *err;
};

static void set_errv(struct cdp *c, int code, const char *fmt, va_list ap)
    __attribute__((format(printf, 3, 0)));

static void set_errv(struct cdp *c, int code, const char *fmt, va_list ap)
{
    char *s = NULL;
    if (vasprintf(&s, fmt, ap) < 0)
        s = NULL;
    if (s && strlen(s) > CDP_MAX_ERROR)
        strcpy(s + CDP_MAX_ERROR - 3, "...");
    free(c->err);
    c->err = s;
    c->err_code = code;
}

static void set_err(struct cdp *c, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void set_err(struct cdp *c, int code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    set_errv(c, code, fmt, ap);
    va_end(ap);
}

struct cdp *cdp_new(struct cdp_transport *t)
{
    if (!t)
        return NULL;
    struct cdp *c = calloc(1, sizeof *c);
    if (!c) {
        t->ops->destroy(t);
        return NULL;
    }
    c->t = t;
    c->next_id = 1;
    c->int_fd = -1;
    return c;
}

void cdp_free(struct cdp *c)
{
    if (!c)
        return;
    for (size_t i = 0; i < c->ndone; i++)
        json_decref(c->done[i].msg);
    free(c->done);
    free(c->waiting);
    free(c->err);
    c->t->ops->destroy(c->t);
    free(c);
}

void cdp_set_event_handler(struct cdp *c, cdp_event_fn fn, void *ud)
{
    c->ev_fn = fn;
    c->ev_ud = ud;
}

void cdp_set_interrupt(struct cdp *c, int fd, cdp_interrupt_fn fn, void *ud)
{
    c->int_fd = fd;
    c->int_fn = fn;
    c->int_ud = ud;
}

void cdp_set_abort(struct cdp *c, int (*fn)(void *ud), void *ud)
{
    c->abort_fn = fn;
    c->abort_ud = ud;
}

const char *cdp_last_error(struct cdp *c)
{
    return c->err ? c->err : "";
}

int cdp_last_error_code(struct cdp *c)
{
    return c->err_code;
}

bool cdp_closed(const struct cdp *c)
{
    return c->closed;
}

int cdp_fd(struct cdp *c)
{
    return c->t->ops->fd(c->t);
}

/* ---- bookkeeping of waiting ids and parked responses ---- */

static bool is_waiting(const struct cdp *c, long long id)
{
    for (size_t i = 0; i < c->nwaiting; i++)
        if (c->waiting[i] == id)
            return true;
    return false;
}

static int push_waiting(struct cdp *c, long long id)
{
    if (c->nwaiting == c->capwaiting) {
        size_t ncap = c->capwaiting ? c->capwaiting * 2 : 8;
        long long *nw = realloc(c->waiting, ncap * sizeof *nw);
        if (!nw)
            return -1;
        c->waiting = nw;
        c->capwaiting = ncap;
    }
    c->waiting[c->nwaiting++] = id;
    return 0;
}

static void pop_waiting(struct cdp *c, long long id)
{
    for (size_t i = c->nwaiting; i-- > 0;) {
        if (c->waiting[i] == id) {
            memmove(c->waiting + i, c->waiting + i + 1, (c->nwaiting - i - 1) * sizeof *c->waiting);
            c->nwaiting--;
            return;
        }
    }
}

/* Park a response for a waiting id; steals msg. */
static void park(struct cdp *c, long long id, json_t *msg)
{
    if (c->ndone == c->capdone) {
        size_t ncap = c->capdone ? c->capdone * 2 : 8;
        struct cdp_done *nd = realloc(c->done, ncap * sizeof *nd);
        if (!nd) {
            /* The caller will time out; nothing better to do without memory. */
            json_decref(msg);
            return;
        }
        c->done = nd;
        c->capdone = ncap;
    }
    c->done[c->ndone++] = (struct cdp_done){id, msg};
}

static json_t *unpark(struct cdp *c, long long id)
{
    for (size_t i = 0; i < c->ndone; i++) {
        if (c->done[i].id == id) {
            json_t *m = c->done[i].msg;
            c->done[i] = c->done[--c->ndone];
            return m;
        }
    }
    return NULL;
}

/* ---- incoming messages ---- */

static const char *skip_ws(const char *p, const char *end)
{
    while (p < end && (*p == ' ' || *p == '\t' || *p == '\r' || *p == '\n'))
        p++;
    return p;
}

/*
 * Cheap look at a message: if it starts {"id":<integer>, return the id.
 * Chromium writes "id" first in every response, so this lets us drop answers
 * to abandoned calls (a late multi-MB screenshot, say) without building a
 * tree, and lets us fail a waiting call whose response does not parse.
 */
static bool peek_id(const char *s, size_t len, long long *id)
{
    const char *p = s, *end = s + len;
    p = skip_ws(p, end);
    if (p >= end || *p++ != '{')
        return false;
    p = skip_ws(p, end);
    if ((size_t)(end - p) < 4 || memcmp(p, "\"id\"", 4) != 0)
        return false;
    p = skip_ws(p + 4, end);
    if (p >= end || *p++ != ':')
        return false;
    p = skip_ws(p, end);
    bool neg = p < end && *p == '-';
    if (neg)
        p++;
    if (p >= end || *p < '0' || *p > '9')
        return false;
    long long v = 0;
    for (; p < end && *p >= '0' && *p <= '9'; p++) {
        if (v > (LLONG_MAX - (*p - '0')) / 10)
            return false;
        v = v * 10 + (*p - '0');
    }
    p = skip_ws(p, end);
    if (p >= end || (*p != ',' && *p != '}'))
        return false;
    *id = neg ? -v : v;
    return true;
}

static int hexval(char ch)
{
    if (ch >= '0' && ch <= '9')
        return ch - '0';
    if (ch >= 'a' && ch <= 'f')
        return ch - 'a' + 10;
    if (ch >= 'A' && ch <= 'F')
        return ch - 'A' + 10;
    return -1;
}

/* The value of the \uXXXX escape at p (p[0] == '\\'), or -1. */
static long u_escape(const char *p, const char *end)
{
    if (end - p < 6 || p[1] != 'u')
        return -1;
    long v = 0;
    for (int i = 2; i < 6; i++) {
        int h = hexval(p[i]);
        if (h < 0)
            return -1;
        v = v * 16 + h;
    }
    return v;
}

/*
 * Replace unpaired UTF-16 surrogate escapes with \uFFFD, in place (same
 * length). JavaScript strings may hold lone surrogates (a title cut in the
 * middle of an emoji) and Chromium escapes them faithfully, but jansson
 * rejects them and with them the whole message. Returns whether anything
 * changed. Every backslash in valid JSON starts an escape inside a string,
 * so no string tracking is needed.
 */
static bool fix_lone_surrogates(char *s, size_t len)
{
    bool changed = false;
    const char *end = s + len;
    for (char *p = s; p < end;) {
        if (*p != '\\') {
            p++;
            continue;
        }
        long v = u_escape(p, end);
        if (v < 0) {
            p += 2; /* \" \\ \n ... */
            continue;
        }
        if (v >= 0xD800 && v <= 0xDBFF) {
            long lo = p + 6 < end && p[6] == '\\' ? u_escape(p + 6, end) : -1;
            if (lo >= 0xDC00 && lo <= 0xDFFF) {
                p += 12;
                continue;
            }
        } else if (!(v >= 0xDC00 && v <= 0xDFFF)) {
            p += 6;
            continue;
        }
        memcpy(p, "\\uFFFD", 6);
        changed = true;
        p += 6;
    }
    return changed;
}

static void dispatch_event(struct cdp *c, json_t *m)
{
    const char *method = json_string_value(json_object_get(m, "method"));
    if (!method || !c->ev_fn)
        return;
    const char *sid = json_string_value(json_object_get(m, "sessionId"));
    json_t *params = json_object_get(m, "params");
    json_t *empty = NULL;
    if (!json_is_object(params))
        params = empty = json_object(); /* handlers need not test for NULL */
    c->ev_fn(c->ev_ud, sid, method, params);
    json_decref(empty);
}

/* Route one message from the browser (m stolen): an answer to its
 * waiting call, or an event to dispatch. */
static void route_message(struct cdp *c, json_t *m)
{
    if (!json_is_object(m)) {
        json_decref(m);
        return;
    }
    json_t *jid = json_object_get(m, "id");
    if (jid) {
        if (json_is_integer(jid) && is_waiting(c, json_integer_value(jid)))
            park(c, json_integer_value(jid), m);
        else
            json_decref(m); /* answer to an abandoned call */
        return;
    }
    dispatch_event(c, m);
    json_decref(m);
}

/* Route one message from the browser; takes ownership of text. */
static void handle_message(struct cdp *c, char *text, size_t len)
{
    long long id = 0;
    bool has_id = peek_id(text, len, &id);
    if (has_id && !is_waiting(c, id)) {
        free(text); /* answer to an abandoned call */
        return;
    }
    json_error_t je;
    json_t *m = json_loadb(text, len, JSON_ALLOW_NUL, &je);
    if (!m && fix_lone_surrogates(text, len))
        m = json_loadb(text, len, JSON_ALLOW_NUL, &je);
    free(text); /* before dispatching: the handler may wait a long time */
    if (!m) {
        /* Fail the call rather than let it time out; an unreadable event is lost. */
        if (has_id)
            park(c, id,
                 json_pack("{s:I,s:{s:i,s:s+}}", "id", (json_int_t)id, "error", "code", -32700,
                           "message",
                           "tabvisor: unparseable response from the browser: ", je.text));
        return;
    }
    route_message(c, m);
}

/* Receive and handle at most one message. */
static void pump_one(struct cdp *c)
{
    if (c->t->ops->recv_json) {
        json_t *m = NULL;
        int r = c->t->ops->recv_json(c->t, &m);
        if (r < 0)
            c->closed = true;
        if (r == 0)
            route_message(c, m);
        return;
    }
    char *text = NULL;
    size_t len = 0;
    int r = c->t->ops->recv(c->t, &text, &len);
    if (r == TRANSPORT_AGAIN)
        return;
    if (r < 0) {
        c->closed = true;
        return;
    }
    handle_message(c, text, len);
}

static void set_closed_err(struct cdp *c)
{
    const char *why = c->t->ops->error ? c->t->ops->error(c->t) : NULL;
    set_err(c, 0, "connection to the browser lost%s%s", why && *why ? ": " : "", why ? why : "");
}

/*
 * The one wait loop. With id != 0: until the response for id arrives (*resp
 * gets it). With id == 0: until cond(ud) holds (cond NULL: until the
 * deadline). Events are dispatched meanwhile. what names the wait in errors.
 */
static int wait_loop(struct cdp *c, long long id, int (*cond)(void *), void *ud,
                     long long deadline_ms, json_t **resp, const char *what)
{
    int rc;
    bool looked_late = false;
    c->depth++;
    for (;;) {
        if (id) {
            json_t *m = unpark(c, id);
            if (m) {
                *resp = m;
                rc = CDP_OK;
                break;
            }
        }
        if (c->interrupted) {
            set_err(c, 0, "%s: interrupted", what);
            rc = CDP_INTERRUPTED;
            break;
        }
        if (c->closed) {
            set_closed_err(c);
            rc = CDP_CLOSED;
            break;
        }
        if (c->abort_fn && c->abort_fn(c->abort_ud)) {
            set_err(c, 0, "%s: aborted", what);
            rc = CDP_INTERRUPTED;
            break;
        }
        if (!id && cond && cond(ud)) {
            rc = CDP_OK;
            break;
        }
        /* Messages already buffered in the transport would not wake poll(). */
        if (c->t->ops->pending(c->t)) {
            pump_one(c);
            continue;
        }
        /* Past the deadline, look once more without sleeping: what has
         * already arrived is still handled, so cdp_wait(c, NULL, NULL,
         * mono_ms()) dispatches pending events, and a response that came in
         * just in time counts. Only once, so a stream of events cannot keep
         * an expired wait alive. */
        long long now = mono_ms();
        bool expired = deadline_ms && now >= deadline_ms;
        if (expired && looked_late) {
            set_err(c, 0, "%s: timed out", what);
            rc = CDP_TIMEOUT;
            break;
        }
        looked_late = expired;

        struct pollfd pf[2] = {{.fd = c->t->ops->fd(c->t), .events = POLLIN}};
        nfds_t n = 1;
        if (c->int_fd >= 0) {
            pf[1] = (struct pollfd){.fd = c->int_fd, .events = POLLIN};
            n = 2;
        }
        int pr = poll(pf, n, expired ? 0 : poll_timeout_ms(deadline_ms, now));
        if (pr < 0) {
            if (errno == EINTR) {
                looked_late = false;
                continue;
            }
            set_err(c, 0, "%s: poll: %s", what, strerror(errno));
            rc = CDP_CLOSED;
            break;
        }
        if (n == 2 && pf[1].revents) {
            if (pf[1].revents & POLLNVAL) {
                c->int_fd = -1; /* closed under us: stop watching it */
            } else if (!c->int_fn || c->int_fn(c->int_ud)) {
                c->interrupted = true;
                continue;
            }
        }
        if (pf[0].revents)
            pump_one(c);
    }
    if (--c->depth == 0)
        c->interrupted = false;
    return rc;
}

/*
 * Serialise and send one command. 0; CDP_ERROR when it cannot be encoded;
 * CDP_CLOSED when the transport fails.
 */
static int send_command(struct cdp *c, long long id, const char *session_id, const char *method,
                        const json_t *params, long long deadline_ms)
{
    if (params && !json_is_object(params)) {
        set_err(c, 0, "%s: params must be a JSON object", method);
        return CDP_ERROR;
    }
    /* One dump of the whole command. The envelope holds a reference to the
     * borrowed params for the dump only; neither changes them. */
    json_t *empty = params ? NULL : json_object();
    json_t *env = json_pack("{s:I,s:s,s:s*,s:O}", "id", (json_int_t)id, "method", method,
                            "sessionId", session_id, "params", params ? (json_t *)params : empty);
    json_decref(empty);
    if (env && c->t->ops->send_json) {
        /* An in-process transport takes the tree as it is. */
        int r = c->t->ops->send_json(c->t, env, deadline_ms);
        json_decref(env);
        if (r == TRANSPORT_TOO_BIG) {
            set_err(c, 0, "%s: %s", method, c->t->ops->error(c->t));
            return CDP_ERROR;
        }
        if (r < 0) {
            c->closed = true;
            set_closed_err(c);
            return CDP_CLOSED;
        }
        return 0;
    }
    char *msg = env ? json_dumps(env, JSON_COMPACT) : NULL;
    json_decref(env);
    if (!msg) {
        set_err(c, 0, "%s: cannot encode the command (invalid UTF-8 or out of memory)", method);
        return CDP_ERROR;
    }
    size_t n = strlen(msg);

    if (n > CDP_MAX_COMMAND) {
        free(msg);
        set_err(c, 0, "%s: command of %zu bytes is over the %u byte limit", method, n,
                CDP_MAX_COMMAND);
        return CDP_ERROR;
    }
    int r = c->t->ops->send(c->t, msg, n, deadline_ms);
    free(msg);
    if (r < 0) {
        c->closed = true;
        set_closed_err(c);
        return CDP_CLOSED;
    }
    return 0;
}

int cdp_call(struct cdp *c, const char *session_id, const char *method, const json_t *params,
             json_t **result, long long deadline_ms)
{
    if (result)
        *result = NULL;
    if (!method) {
        set_err(c, 0, "cdp_call: no method");
        return CDP_ERROR;
    }
    if (c->closed) {
        set_closed_err(c);
        return CDP_CLOSED;
    }
    if (deadline_ms && mono_ms() >= deadline_ms) {
        set_err(c, 0, "%s: timed out", method);
        return CDP_TIMEOUT;
    }
    if (c->abort_fn && c->abort_fn(c->abort_ud)) {
        set_err(c, 0, "%s: aborted", method);
        return CDP_INTERRUPTED;
    }
    long long id = c->next_id++;
    if (push_waiting(c, id) < 0) {
        set_err(c, 0, "%s: out of memory", method);
        return CDP_ERROR;
    }
    int rc = send_command(c, id, session_id, method, params, deadline_ms);
    json_t *resp = NULL;
    if (rc == 0)
        rc = wait_loop(c, id, NULL, NULL, deadline_ms, &resp, method);
    pop_waiting(c, id);
    if (rc != CDP_OK)
        return rc;

    json_t *e = json_object_get(resp, "error");
    if (json_is_string(e)) {
        /* WebDriver BiDi's shape: {"type":"error","error":"no such frame",
         * "message":...}; the envelope is otherwise CDP's. */
        const char *msg = json_string_value(json_object_get(resp, "message"));
        set_err(c, CDP_ERR_BIDI, "%s: %s", json_string_value(e), msg ? msg : "");
        json_decref(resp);
        return CDP_ERROR;
    }
    if (e) {
        const char *msg = json_string_value(json_object_get(e, "message"));
        int code = (int)json_integer_value(json_object_get(e, "code"));
        json_t *data = json_object_get(e, "data");
        char *dumped = NULL;
        const char *dtext = json_string_value(data);
        if (data && !dtext)
            dtext = dumped = json_dumps(data, JSON_COMPACT | JSON_ENCODE_ANY);
        if (dtext)
            set_err(c, code, "%s: %s", msg ? msg : "error", dtext);
        else
            set_err(c, code, "%s", msg ? msg : "error");
        free(dumped);
        json_decref(resp);
        return CDP_ERROR;
    }
    if (result) {
        json_t *r = json_object_get(resp, "result");
        *result = json_is_object(r) ? json_incref(r) : json_object();
    }
    json_decref(resp);
    return CDP_OK;
}

int cdp_send(struct cdp *c, const char *session_id, const char *method, const json_t *params)
{
    if (!method) {
        set_err(c, 0, "cdp_send: no method");
        return CDP_ERROR;
    }
    if (c->closed) {
        set_closed_err(c);
        return CDP_CLOSED;
    }
    /* The id is never waited for, so its response is dropped on arrival. */
    long long id = c->next_id++;
    int rc = send_command(c, id, session_id, method, params, mono_ms() + CDP_SEND_FLUSH_MS);
    return rc == 0 ? CDP_OK : rc;
}

int cdp_wait(struct cdp *c, int (*cond)(void *ud), void *ud, long long deadline_ms)
{
    if (cond && cond(ud))
        return CDP_OK;
    return wait_loop(c, 0, cond, ud, deadline_ms, NULL, "waiting for events");
}
