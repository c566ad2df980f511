/*
 * cdp_bridge.c - multiplex the workers' CDP connections over the shared
 * browser's pipe. See cdp_bridge.h for what it guarantees.
 */
#include "cdp_bridge.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <unistd.h>

#include <jansson.h>

#include "cdp_policy.h"
#include "json_top.h"
#include "log.h"
#include "loop.h"
#include "nulframe.h"
#include "url_policy.h"

/* Screenshots and snapshots of big pages run to tens of MiB; a message
 * larger than this, in either direction, breaks its connection. */
#define BRIDGE_MAX_MESSAGE (256u * 1024 * 1024)
/* Unsent bytes a connection may hold: a worker that stops reading loses its
 * connection (and so its session) rather than growing our memory. */
#define BRIDGE_MAX_QUEUE (2 * (size_t)BRIDGE_MAX_MESSAGE)
/* Bytes asked of each read: the browser sends screenshots of many MiB, a
 * worker sends commands of a few hundred bytes (the injected script, 100
 * KiB, is the largest). */
#define BROWSER_READ_CHUNK (256 * 1024)
#define CLIENT_READ_CHUNK (64 * 1024)
/* Commands in flight, browser-wide: a command's bridge id holds its slot
 * index in the low 16 bits, so ids never exceed 31 bits. */
#define SLOT_BITS 16
#define MAX_SLOTS (1u << SLOT_BITS)
/* CDP ids of contexts, targets and sessions are 32 hex digits today. */
#define MAX_CDP_ID 64

enum track {
    TRACK_NONE,
    TRACK_CONTEXT, /* Target.createBrowserContext: result.browserContextId is the client's */
    TRACK_TARGET,  /* Target.createTarget: result.targetId */
    TRACK_SESSION, /* Target.attachToTarget: result.sessionId */
    TRACK_READY,   /* the bridge's own first command */
    TRACK_DEFAULT, /* Target.getTargets: the default context's id (cdp_bridge_use_default_context)
                    */
};

struct client {
    struct cdp_bridge *b;
    int fd;
    struct nf_reader in;
    struct nf_queue out;
    bool dead;
    char label[48];
    char *download_dir; /* where its context's downloads go (malloc'd), or NULL: not set */
    struct client *next;
};

struct slot {
    uint32_t bid;         /* 0: free */
    struct client *owner; /* NULL: the bridge's own command, or its client left */
    long long client_id;  /* the id the client gave the command */
    enum track track;
    uint32_t next_free;
};

struct cdp_bridge {
    struct loop *loop;
    const struct cdp_bridge_events *ev;
    void *ud;
    int to_browser, from_browser;
    struct nf_reader in;
    struct nf_queue out;
    bool broken, ready;
    bool use_default;                 /* sessions get the default context (a persistent profile) */
    char default_ctx[MAX_CDP_ID + 1]; /* its id, learnt before ready */
    struct client *clients;
    /* Ownership, id string -> struct client * (as an integer). */
    json_t *contexts, *targets, *sessions;
    struct slot *slots;
    uint32_t nslots, free_head; /* free list through next_free; free_head = nslots: empty */
    uint16_t *gen;              /* per slot, so a late answer never matches a reused slot */
    struct cdp_bridge_stats stats;
};

static void client_close(struct client *c, const char *why);
static void browser_broken(struct cdp_bridge *b, const char *why);

/* ---- ownership maps ---- */

static void own(json_t *map, const char *id, size_t len, struct client *c)
{
    if (len == 0 || len > MAX_CDP_ID)
        return;
    json_object_setn_new_nocheck(map, id, len, json_integer((json_int_t)(intptr_t)c));
}

static struct client *owner_of(json_t *map, const char *id, size_t len)
{
    if (!id || len == 0 || len > MAX_CDP_ID)
        return NULL;
    json_t *v = json_object_getn(map, id, len);
    return v ? (struct client *)(intptr_t)json_integer_value(v) : NULL;
}

static void disown_all(json_t *map, struct client *c)
{
    const char *k;
    json_t *v;
    void *tmp;
    json_object_foreach_safe(map, tmp, k, v)
    {
        if ((struct client *)(intptr_t)json_integer_value(v) == c)
            json_object_del(map, k);
    }
}

/* ---- command slots ---- */

static struct slot *slot_get(struct cdp_bridge *b, long long bid)
{
    if (bid <= 0 || bid > INT32_MAX)
        return NULL;
    uint32_t i = (uint32_t)bid & (MAX_SLOTS - 1);
    if (i >= b->nslots || b->slots[i].bid != (uint32_t)bid)
        return NULL;
    return &b->slots[i];
}

static struct slot *slot_alloc(struct cdp_bridge *b)
{
    if (b->free_head == b->nslots) {
        if (b->nslots == MAX_SLOTS)
            return NULL;
        uint32_t n = b->nslots ? b->nslots * 2 : 64;
        struct slot *ns = realloc(b->slots, n * sizeof *ns);
        uint16_t *ng = ns ? realloc(b->gen, n * sizeof *ng) : NULL;
        if (ns)
            b->slots = ns;
        if (!ng)
            return NULL;
        b->gen = ng;
        for (uint32_t i = b->nslots; i < n; i++) {
            b->slots[i] = (struct slot){.next_free = i + 1};
            b->gen[i] = 0;
        }
        b->free_head = b->nslots;
        b->nslots = n;
        /* The old free list was empty, so the new slots form the whole list. */
    }
    uint32_t i = b->free_head;
    struct slot *s = &b->slots[i];
    b->free_head = s->next_free;
    /* Generation in bits 16..30; never 0, so bid 0 never names a slot. */
    b->gen[i] = (uint16_t)(b->gen[i] % 0x7fff + 1);
    *s = (struct slot){.bid = ((uint32_t)b->gen[i] << SLOT_BITS) | i};
    return s;
}

static void slot_free(struct cdp_bridge *b, struct slot *s)
{
    uint32_t i = (uint32_t)(s - b->slots);
    s->bid = 0;
    s->owner = NULL;
    s->next_free = b->free_head;
    b->free_head = i;
}

/* ---- writing ---- */

static void want_write(struct loop *l, int fd, struct nf_queue *q, short base)
{
    loop_set_events(l, fd, (short)(base | (nf_queue_len(q) ? POLLOUT : 0)));
}

static void flush_browser(struct cdp_bridge *b)
{
    if (b->broken)
        return;
    if (nf_queue_write(&b->out, b->to_browser) < 0) {
        browser_broken(b, "the browser stopped reading its pipe");
        return;
    }
    want_write(b->loop, b->to_browser, &b->out, 0);
}

/* Queue msg[0..len) with its id text [id_start, id_end) replaced by id, then a NUL. */
static int queue_with_id(struct nf_queue *q, const char *msg, size_t len, size_t id_start,
                         size_t id_end, long long id)
{
    char num[24];
    int nl = snprintf(num, sizeof num, "%lld", id);
    if (nf_queue_append(q, msg, id_start, BRIDGE_MAX_QUEUE) < 0 ||
        nf_queue_append(q, num, (size_t)nl, BRIDGE_MAX_QUEUE) < 0 ||
        nf_queue_append(q, msg + id_end, len - id_end, BRIDGE_MAX_QUEUE) < 0 ||
        nf_queue_append(q, "", 1, BRIDGE_MAX_QUEUE) < 0)
        return -1;
    return 0;
}

static void to_client(struct client *c, const char *msg, size_t len, const struct json_top *t,
                      long long client_id)
{
    if (c->dead)
        return;
    int r = t ? queue_with_id(&c->out, msg, len, t->id_start, t->id_end, client_id)
            : (nf_queue_append(&c->out, msg, len, BRIDGE_MAX_QUEUE) < 0 ||
               nf_queue_append(&c->out, "", 1, BRIDGE_MAX_QUEUE) < 0)
                ? -1
                : 0;
    if (r < 0) {
        client_close(c, "it stopped reading (output queue full)");
        return;
    }
    if (nf_queue_write(&c->out, c->fd) < 0) {
        client_close(c, "write failed");
        return;
    }
    want_write(c->b->loop, c->fd, &c->out, POLLIN);
}

/* Send a command of the bridge's own, on session (NULL: the browser); its
 * answer is dropped unless track says otherwise. params is stolen. */
static void bridge_session_command(struct cdp_bridge *b, const char *session, const char *method,
                                   json_t *params, enum track track)
{
    struct slot *s = slot_alloc(b);
    if (!s) {
        json_decref(params);
        return;
    }
    s->track = track;
    json_t *m = json_pack("{s:I, s:s, s:o}", "id", (json_int_t)s->bid, "method", method, "params",
                          params ? params : json_object());
    if (session)
        json_object_set_new(m, "sessionId", json_string(session));
    char *text = m ? json_dumps(m, JSON_COMPACT) : NULL;
    json_decref(m);
    if (!text || nf_queue_append(&b->out, text, strlen(text) + 1, BRIDGE_MAX_QUEUE) < 0) {
        free(text);
        slot_free(b, s);
        browser_broken(b, "out of memory or the browser stopped reading");
        return;
    }
    free(text);
    b->stats.to_browser++;
    flush_browser(b);
}

static void bridge_command(struct cdp_bridge *b, const char *method, json_t *params,
                           enum track track)
{
    bridge_session_command(b, NULL, method, params, track);
}

/*
 * A client's context saves downloads into the directory the supervisor chose
 * for its session (worker/downloads.c handles the files). The bridge sends
 * it itself, before the client hears of the context: a worker never sends a
 * command that hands the browser a path (proto/cdp_policy.c).
 */
static void set_downloads(struct cdp_bridge *b, struct client *c, const char *ctx)
{
    if (c->download_dir)
        bridge_command(b, "Browser.setDownloadBehavior",
                       json_pack("{s:s, s:s, s:s}", "behavior", "allowAndName", "browserContextId",
                                 ctx, "downloadPath", c->download_dir),
                       TRACK_NONE);
}

/* Answer a client's command ourselves, with a CDP error. */
static void refuse(struct client *c, long long id, const char *session, size_t session_len,
                   const char *why)
{
    c->b->stats.refused++;
    json_t *m = json_pack("{s:I, s:{s:i, s:s}}", "id", (json_int_t)id, "error", "code", -32000,
                          "message", why);
    if (session)
        json_object_set_new(m, "sessionId", json_stringn(session, session_len));
    char *text = json_dumps(m, JSON_COMPACT);
    json_decref(m);
    if (text)
        to_client(c, text, strlen(text), NULL, 0);
    free(text);
}

/* Answer a client's command ourselves, with result (stolen). */
static void answer(struct client *c, long long id, json_t *result)
{
    json_t *m = json_pack("{s:I, s:o}", "id", (json_int_t)id, "result", result);
    char *text = m ? json_dumps(m, JSON_COMPACT) : NULL;
    json_decref(m);
    if (text)
        to_client(c, text, strlen(text), NULL, 0);
    free(text);
}

/* ---- from a worker ---- */

static const char *param_str(json_t *msg, const char *key)
{
    return json_string_value(json_object_get(json_object_get(msg, "params"), key));
}

static bool owned(json_t *map, const char *id, struct client *c)
{
    return id && owner_of(map, id, strlen(id)) == c;
}

/* Whether a page of ours may be created at url (Target.createTarget; ""
 * is about:blank): the bridge layer's URL policy, as the browser parses it. */
static bool url_allowed(json_t *url)
{
    if (!url)
        return true;
    return json_is_string(url) &&
           !url_policy_check(json_string_value(url), json_string_length(url),
                             cdp_policy_url_allow(CDP_LAYER_BRIDGE) | URL_ALLOW_EMPTY);
}

/*
 * The policy for browser-level commands (no sessionId): what a session
 * needs to set itself up and tear itself down, on its own things only.
 * Returns NULL when allowed (with *track set), else the refusal.
 */
static const char *browser_policy(struct client *c, json_t *msg, const char *method,
                                  enum track *track)
{
    struct cdp_bridge *b = c->b;
    *track = TRACK_NONE;
    if (strcmp(method, "Browser.getVersion") == 0)
        return NULL;
    if (strcmp(method, "Target.createBrowserContext") == 0) {
        *track = TRACK_CONTEXT;
        return NULL;
    }
    if (strcmp(method, "Target.disposeBrowserContext") == 0) {
        const char *ctx = param_str(msg, "browserContextId");
        if (!owned(b->contexts, ctx, c))
            return "tabvisor: not this session's browser context";
        json_object_del(b->contexts, ctx); /* given up as it is sent */
        return NULL;
    }
    if (strcmp(method, "Target.createTarget") == 0) {
        if (!owned(b->contexts, param_str(msg, "browserContextId"), c))
            return "tabvisor: a target must be created in this session's browser context";
        if (!url_allowed(json_object_get(json_object_get(msg, "params"), "url")))
            return "tabvisor: a page may not open local files or browser pages";
        *track = TRACK_TARGET;
        return NULL;
    }
    if (strcmp(method, "Target.attachToTarget") == 0) {
        json_t *flatten = json_object_get(json_object_get(msg, "params"), "flatten");
        if (!json_is_true(flatten))
            return "tabvisor: only flattened sessions are bridged";
        if (!owned(b->targets, param_str(msg, "targetId"), c))
            return "tabvisor: not this session's target";
        *track = TRACK_SESSION;
        return NULL;
    }
    /* A download of its own context that went past the worker's bounds. */
    if (strcmp(method, "Browser.cancelDownload") == 0) {
        if (!owned(b->contexts, param_str(msg, "browserContextId"), c))
            return "tabvisor: not this session's browser context";
        return NULL;
    }
    if (strcmp(method, "Target.closeTarget") == 0 || strcmp(method, "Target.activateTarget") == 0) {
        const char *tid = param_str(msg, "targetId");
        if (!owned(b->targets, tid, c))
            return "tabvisor: not this session's target";
        if (method[7] == 'c')
            json_object_del(b->targets, tid);
        return NULL;
    }
    return "tabvisor: this browser-level command is not available to a session";
}

static bool method_eq(const struct json_top *t, const char *name)
{
    size_t n = strlen(name);
    return t->method_len == n && memcmp(t->method, name, n) == 0;
}

/*
 * The policy for commands on a session the worker owns: the bridge layer of
 * the CDP policy table (proto/cdp_policy.c). Its page is its own, but some
 * commands reach past it (the browser's downloads, other targets, the
 * machine's files) or load a URL that must be checked. A worker never needs
 * them; one taken over by a hostile page must not get them. The command is
 * parsed only when the table needs its params, and then strictly: a
 * duplicate key could show us one URL and the browser another. NULL when
 * allowed.
 */
static const char *session_policy(const struct json_top *t, const char *msg, size_t len)
{
    if (!cdp_policy_needs_params(CDP_LAYER_BRIDGE, t->method, t->method_len))
        return cdp_policy_check(CDP_LAYER_BRIDGE, t->method, t->method_len, NULL);
    json_t *m = json_loadb(msg, len, JSON_REJECT_DUPLICATES | JSON_ALLOW_NUL, NULL);
    const char *why = m ? cdp_policy_check(CDP_LAYER_BRIDGE, t->method, t->method_len,
                                           json_object_get(m, "params"))
                        : "a command the bridge must read is not strict JSON (duplicate keys?)";
    json_decref(m);
    return why;
}

/* Close every page c owns (what disposing of its context would do). */
static void close_targets_of(struct cdp_bridge *b, struct client *c)
{
    const char *k;
    json_t *v;
    json_object_foreach(b->targets, k, v)
    {
        if ((struct client *)(intptr_t)json_integer_value(v) == c)
            bridge_command(b, "Target.closeTarget", json_pack("{s:s}", "targetId", k), TRACK_NONE);
    }
}

/*
 * With a persistent profile (cdp_bridge_use_default_context), a session's
 * "own context" is the browser's default one, whose cookies and storage
 * live in the profile: creating a context hands it out, disposing of it
 * closes the session's pages but keeps the context (the default context
 * cannot be disposed). Returns true when the command was answered here.
 */
static bool default_context_command(struct client *c, json_t *msg, const char *method, long long id)
{
    struct cdp_bridge *b = c->b;
    if (strcmp(method, "Target.createBrowserContext") == 0) {
        own(b->contexts, b->default_ctx, strlen(b->default_ctx), c);
        set_downloads(b, c, b->default_ctx);
        answer(c, id, json_pack("{s:s}", "browserContextId", b->default_ctx));
        return true;
    }
    const char *ctx = param_str(msg, "browserContextId");
    if (strcmp(method, "Target.disposeBrowserContext") == 0 && ctx &&
        strcmp(ctx, b->default_ctx) == 0 && owned(b->contexts, ctx, c)) {
        close_targets_of(b, c);
        answer(c, id, json_object());
        return true;
    }
    return false;
}

static void from_client(struct client *c, char *msg, size_t len)
{
    struct cdp_bridge *b = c->b;
    struct json_top t;
    if (json_top_scan(msg, len, &t) < 0 || !t.id_end || !t.method) {
        client_close(c, "it sent a message that is not a CDP command");
        return;
    }
    enum track track = TRACK_NONE;
    if (t.session) {
        if (owner_of(b->sessions, t.session, t.session_len) != c) {
            refuse(c, t.id, t.session, t.session_len, "tabvisor: not this session's CDP session");
            return;
        }
        const char *why = session_policy(&t, msg, len);
        if (why) {
            char text[400];
            snprintf(text, sizeof text, "tabvisor: the bridge refuses %.*s: %s",
                     (int)(t.method_len > 100 ? 100 : t.method_len), t.method, why);
            refuse(c, t.id, t.session, t.session_len, text);
            return;
        }
    } else {
        json_t *parsed = json_loadb(msg, len, JSON_REJECT_DUPLICATES | JSON_ALLOW_NUL, NULL);
        char method[128];
        snprintf(method, sizeof method, "%.*s", (int)t.method_len, t.method);
        if (b->use_default && default_context_command(c, parsed, method, t.id)) {
            json_decref(parsed);
            return;
        }
        const char *why = parsed ? browser_policy(c, parsed, method, &track) : "malformed command";
        json_decref(parsed);
        if (why) {
            refuse(c, t.id, NULL, 0, why);
            return;
        }
    }
    struct slot *s = slot_alloc(b);
    if (!s) {
        refuse(c, t.id, t.session, t.session_len, "tabvisor: too many commands in flight");
        return;
    }
    s->owner = c;
    s->client_id = t.id;
    s->track = track;
    if (queue_with_id(&b->out, msg, len, t.id_start, t.id_end, s->bid) < 0) {
        slot_free(b, s);
        browser_broken(b, "the browser stopped reading its pipe (queue full)");
        return;
    }
    b->stats.to_browser++;
    flush_browser(b);
}

static void on_client(struct loop *l, int fd, short revents, void *ud)
{
    struct client *c = ud;
    if (revents & POLLOUT) {
        if (nf_queue_write(&c->out, fd) < 0) {
            client_close(c, "write failed");
            return;
        }
        want_write(l, fd, &c->out, POLLIN);
    }
    if (!(revents & (POLLIN | POLLHUP | POLLERR)))
        return;
    /* One read per wake-up keeps one busy worker from starving the loop. */
    long n = nf_reader_read(&c->in, fd, CLIENT_READ_CHUNK);
    if (n < 0 && (errno == EAGAIN || errno == EINTR))
        return;
    if (n <= 0) {
        client_close(c, n == 0 ? "it closed the connection" : strerror(errno));
        return;
    }
    char *msg;
    size_t len;
    int r;
    while (!c->dead && (r = nf_reader_next(&c->in, &msg, &len)) == 1)
        from_client(c, msg, len);
    if (!c->dead && r < 0)
        client_close(c, "it sent a message over the size limit");
}

static void free_client(void *ud)
{
    struct client *c = ud;
    nf_reader_free(&c->in);
    nf_queue_free(&c->out);
    free(c->download_dir);
    free(c);
}

/* A worker's connection ends: dispose of its contexts (closing its pages),
 * forget what it owned, and free it after this loop iteration. */
static void client_close(struct client *c, const char *why)
{
    if (c->dead)
        return;
    struct cdp_bridge *b = c->b;
    c->dead = true;
    log_debug("cdp bridge: %s disconnected: %s", c->label, why);
    loop_del_fd(b->loop, c->fd);
    close(c->fd);
    c->fd = -1;
    const char *k;
    json_t *v;
    json_object_foreach(b->contexts, k, v)
    {
        if ((struct client *)(intptr_t)json_integer_value(v) != c || b->broken)
            continue;
        if (b->use_default && strcmp(k, b->default_ctx) == 0) {
            close_targets_of(b, c); /* the default context stays: it is the profile */
        } else {
            bridge_command(b, "Target.disposeBrowserContext",
                           json_pack("{s:s}", "browserContextId", k), TRACK_NONE);
        }
    }
    disown_all(b->contexts, c);
    disown_all(b->targets, c);
    disown_all(b->sessions, c);
    for (uint32_t i = 0; i < b->nslots; i++)
        if (b->slots[i].bid && b->slots[i].owner == c)
            b->slots[i].owner = NULL; /* its answer is dropped when it comes */
    for (struct client **p = &b->clients; *p; p = &(*p)->next) {
        if (*p == c) {
            *p = c->next;
            break;
        }
    }
    b->stats.clients--;
    loop_defer(b->loop, free_client, c);
}

/* ---- from the browser ---- */

/* Record what an answer to a tracked command gives its client. */
static void track_answer(struct cdp_bridge *b, struct slot *s, const char *msg, size_t len)
{
    json_t *m = json_loadb(msg, len, 0, NULL);
    json_t *res = json_object_get(m, "result");
    const char *id = NULL;
    json_t *map = NULL;
    if (s->track == TRACK_CONTEXT) {
        id = json_string_value(json_object_get(res, "browserContextId"));
        map = b->contexts;
    } else if (s->track == TRACK_TARGET) {
        id = json_string_value(json_object_get(res, "targetId"));
        map = b->targets;
    } else if (s->track == TRACK_SESSION) {
        id = json_string_value(json_object_get(res, "sessionId"));
        map = b->sessions;
    }
    if (id && map) {
        if (s->owner) {
            own(map, id, strlen(id), s->owner);
            if (s->track == TRACK_CONTEXT)
                set_downloads(b, s->owner, id);
        } else if (s->track == TRACK_CONTEXT)
            /* Its worker left before the answer: nobody will dispose it. */
            bridge_command(b, "Target.disposeBrowserContext",
                           json_pack("{s:s}", "browserContextId", id), TRACK_NONE);
    }
    json_decref(m);
}

/* The answer to Target.getTargets at start-up: every target there is in
 * the default context (we have made none yet). Then the bridge is ready. */
static void learn_default_context(struct cdp_bridge *b, const char *msg, size_t len)
{
    json_t *m = json_loadb(msg, len, 0, NULL);
    json_t *infos = json_object_get(json_object_get(m, "result"), "targetInfos");
    size_t i;
    json_t *info;
    json_array_foreach(infos, i, info)
    {
        const char *ctx = json_string_value(json_object_get(info, "browserContextId"));
        if (ctx && strlen(ctx) <= MAX_CDP_ID) {
            snprintf(b->default_ctx, sizeof b->default_ctx, "%s", ctx);
            break;
        }
    }
    json_decref(m);
    if (!b->default_ctx[0]) {
        browser_broken(b, "the browser reported no default browser context");
        return;
    }
    b->ev->ready(b->ud);
}

static void on_answer(struct cdp_bridge *b, const char *msg, size_t len, const struct json_top *t)
{
    struct slot *s = slot_get(b, t->id);
    if (!s) {
        b->stats.dropped++;
        return;
    }
    if (s->track == TRACK_READY) {
        slot_free(b, s);
        if (!b->ready) {
            b->ready = true;
            /* Popups (window.open, target=_blank) are targets no worker
             * created: discovery reports them, and browser_event_owner hands
             * each to the owner of its context and to nobody else. */
            bridge_command(b, "Target.setDiscoverTargets", json_pack("{s:b}", "discover", 1),
                           TRACK_NONE);
            /* And every new page waits for a debugger (auto_attached): a
             * popup is handed to its owner before it loads anything, so the
             * owner's network rules hold from its first request. */
            bridge_command(b, "Target.setAutoAttach",
                           json_pack("{s:b, s:b, s:b, s:[{s:s}, {s:b}]}", "autoAttach", 1,
                                     "waitForDebuggerOnStart", 1, "flatten", 1, "filter", "type",
                                     "page", "exclude", 1),
                           TRACK_NONE);
            if (b->use_default) /* ready once the default context is known */
                bridge_command(b, "Target.getTargets", NULL, TRACK_DEFAULT);
            else
                b->ev->ready(b->ud);
        }
        return;
    }
    if (s->track == TRACK_DEFAULT) {
        slot_free(b, s);
        learn_default_context(b, msg, len);
        return;
    }
    if (s->track != TRACK_NONE)
        track_answer(b, s, msg, len);
    struct client *c = s->owner;
    long long client_id = s->client_id;
    slot_free(b, s);
    if (c)
        to_client(c, msg, len, t, client_id);
    else
        b->stats.dropped++;
}

/* Who owns an event without a sessionId: the owner of the session or
 * target its params name, else (target discovery: a popup the page opened)
 * the owner of the browser context its targetInfo names, who then owns the
 * target too, so it may attach to and close it. Target lifecycle events
 * also update the maps. */
static struct client *browser_event_owner(struct cdp_bridge *b, const char *msg, size_t len,
                                          const char *method)
{
    json_t *m = json_loadb(msg, len, 0, NULL);
    json_t *params = json_object_get(m, "params");
    json_t *info = json_object_get(params, "targetInfo");
    const char *sid = json_string_value(json_object_get(params, "sessionId"));
    const char *tid = json_string_value(json_object_get(params, "targetId"));
    if (!tid)
        tid = json_string_value(json_object_get(info, "targetId"));
    struct client *c = NULL;
    if (sid)
        c = owner_of(b->sessions, sid, strlen(sid));
    /* A detach is the session owner's business only (the bridge's own
     * auto-attach sessions of a worker's page end unheard). */
    bool detach = strcmp(method, "Target.detachedFromTarget") == 0;
    if (!c && tid && !(detach && sid))
        c = owner_of(b->targets, tid, strlen(tid));
    const char *ctx = json_string_value(json_object_get(info, "browserContextId"));
    if (!c && tid && ctx && !detach && strcmp(method, "Target.targetDestroyed") != 0) {
        c = owner_of(b->contexts, ctx, strlen(ctx));
        if (c)
            own(b->targets, tid, strlen(tid), c);
    }
    if (strcmp(method, "Target.detachedFromTarget") == 0 && sid)
        json_object_del(b->sessions, sid);
    else if (strcmp(method, "Target.targetDestroyed") == 0 && tid)
        json_object_del(b->targets, tid);
    json_decref(m);
    return c;
}

/* Child sessions (out-of-process iframes, workers) attach on a parent
 * session: they belong to the parent's owner. */
static void track_child_session(struct cdp_bridge *b, const char *msg, size_t len,
                                struct client *owner, bool attached)
{
    json_t *m = json_loadb(msg, len, 0, NULL);
    const char *sid = json_string_value(json_object_get(json_object_get(m, "params"), "sessionId"));
    if (sid) {
        if (attached)
            own(b->sessions, sid, strlen(sid), owner);
        else if (owner_of(b->sessions, sid, strlen(sid)) == owner)
            json_object_del(b->sessions, sid);
    }
    json_decref(m);
}

/*
 * A page auto-attached to the bridge's own connection (browser level), most
 * paused before loading. A popup (it has an opener) of a context a worker
 * owns is handed to that worker, paused, as its target and session: the
 * worker sets it up and resumes it. Any other page (one a worker created
 * with Target.createTarget, or of nobody's context) is resumed and detached
 * at once, so workers that never heard of auto-attach see no change.
 * Returns the owner, or NULL when the event goes no further.
 */
static struct client *auto_attached(struct cdp_bridge *b, json_t *params)
{
    json_t *info = json_object_get(params, "targetInfo");
    const char *sid = json_string_value(json_object_get(params, "sessionId"));
    const char *tid = json_string_value(json_object_get(info, "targetId"));
    const char *ctx = json_string_value(json_object_get(info, "browserContextId"));
    const char *opener = json_string_value(json_object_get(info, "openerId"));
    struct client *c = opener && ctx ? owner_of(b->contexts, ctx, strlen(ctx)) : NULL;
    if (c) {
        own(b->targets, tid, strlen(tid), c);
        own(b->sessions, sid, strlen(sid), c);
        return c;
    }
    if (json_is_true(json_object_get(params, "waitingForDebugger")))
        bridge_session_command(b, sid, "Runtime.runIfWaitingForDebugger", NULL, TRACK_NONE);
    bridge_command(b, "Target.detachFromTarget", json_pack("{s:s}", "sessionId", sid), TRACK_NONE);
    return NULL;
}

/* Whether a browser-level Target.attachedToTarget comes from the bridge's
 * auto-attach rather than a worker's Target.attachToTarget: a worker only
 * attaches to its own targets, and its session is then not paused. */
static bool is_auto_attach(struct cdp_bridge *b, json_t *params)
{
    const char *sid = json_string_value(json_object_get(params, "sessionId"));
    const char *tid =
        json_string_value(json_object_get(json_object_get(params, "targetInfo"), "targetId"));
    if (!sid || !tid || owner_of(b->sessions, sid, strlen(sid)))
        return false;
    return json_is_true(json_object_get(params, "waitingForDebugger")) ||
           !owner_of(b->targets, tid, strlen(tid));
}

static void on_event(struct cdp_bridge *b, const char *msg, size_t len, const struct json_top *t)
{
    struct client *c;
    if (!t->session && method_eq(t, "Target.attachedToTarget")) {
        json_t *m = json_loadb(msg, len, 0, NULL);
        json_t *params = json_object_get(m, "params");
        bool handled = is_auto_attach(b, params);
        c = handled ? auto_attached(b, params) : NULL;
        json_decref(m);
        if (handled) {
            if (c)
                to_client(c, msg, len, NULL, 0);
            else
                b->stats.dropped++;
            return;
        }
    }
    if (t->session) {
        c = owner_of(b->sessions, t->session, t->session_len);
        if (c && method_eq(t, "Target.attachedToTarget"))
            track_child_session(b, msg, len, c, true);
        else if (c && method_eq(t, "Target.detachedFromTarget"))
            track_child_session(b, msg, len, c, false);
    } else {
        char method[128];
        snprintf(method, sizeof method, "%.*s", (int)(t->method ? t->method_len : 0),
                 t->method ? t->method : "");
        c = browser_event_owner(b, msg, len, method);
    }
    if (c)
        to_client(c, msg, len, NULL, 0);
    else
        b->stats.dropped++;
}

static void on_browser_readable(struct loop *l, int fd, short revents, void *ud)
{
    struct cdp_bridge *b = ud;
    long n = nf_reader_read(&b->in, fd, BROWSER_READ_CHUNK);
    if (n < 0 && (errno == EAGAIN || errno == EINTR))
        return;
    if (n <= 0) {
        browser_broken(b, n == 0 ? "the browser closed its pipe"
                                 : "reading the browser's pipe failed (or out of memory)");
        return;
    }
    char *msg;
    size_t len;
    int r;
    while (!b->broken && (r = nf_reader_next(&b->in, &msg, &len)) == 1) {
        b->stats.from_browser++;
        struct json_top t;
        if (json_top_scan(msg, len, &t) < 0) {
            log_warn("cdp bridge: dropping a malformed message from the browser (%zu bytes)", len);
            b->stats.dropped++;
            continue;
        }
        if (t.id_end)
            on_answer(b, msg, len, &t);
        else
            on_event(b, msg, len, &t);
    }
    if (!b->broken && r < 0)
        browser_broken(b, "the browser sent a message over the size limit");
}

static void on_browser_writable(struct loop *l, int fd, short revents, void *ud)
{
    struct cdp_bridge *b = ud;
    if (revents & (POLLERR | POLLHUP) && !(revents & POLLOUT)) {
        browser_broken(b, "the browser closed its command pipe");
        return;
    }
    flush_browser(b);
}

static void browser_broken(struct cdp_bridge *b, const char *why)
{
    if (b->broken)
        return;
    b->broken = true;
    log_warn("cdp bridge: %s", why);
    loop_del_fd(b->loop, b->from_browser);
    loop_del_fd(b->loop, b->to_browser);
    while (b->clients)
        client_close(b->clients, "the browser is gone");
    b->ev->closed(b->ud, why);
}

/* ---- public ---- */

struct cdp_bridge *cdp_bridge_new(struct loop *l, int to_browser, int from_browser,
                                  const struct cdp_bridge_events *ev, void *ud)
{
    struct cdp_bridge *b = calloc(1, sizeof *b);
    if (b) {
        b->contexts = json_object();
        b->targets = json_object();
        b->sessions = json_object();
    }
    if (!b || !b->contexts || !b->targets || !b->sessions) {
        if (b) {
            json_decref(b->contexts);
            json_decref(b->targets);
            json_decref(b->sessions);
        }
        free(b);
        close(to_browser);
        close(from_browser);
        return NULL;
    }
    b->loop = l;
    b->ev = ev;
    b->ud = ud;
    b->to_browser = to_browser;
    b->from_browser = from_browser;
    b->in.max_msg = BRIDGE_MAX_MESSAGE;
    fcntl(to_browser, F_SETFL, fcntl(to_browser, F_GETFL) | O_NONBLOCK);
    fcntl(from_browser, F_SETFL, fcntl(from_browser, F_GETFL) | O_NONBLOCK);
    loop_add_fd(l, from_browser, POLLIN, on_browser_readable, b);
    loop_add_fd(l, to_browser, 0, on_browser_writable, b);
    /* The browser reads the pipe once it is up: its answer means ready. */
    bridge_command(b, "Browser.getVersion", NULL, TRACK_READY);
    return b;
}

void cdp_bridge_close_browser(struct cdp_bridge *b)
{
    if (!b->broken)
        bridge_command(b, "Browser.close", NULL, TRACK_NONE);
}

void cdp_bridge_use_default_context(struct cdp_bridge *b)
{
    b->use_default = true;
}

int cdp_bridge_connect(struct cdp_bridge *b, const char *label, const char *download_dir)
{
    if (b->broken || !b->ready)
        return -1;
    int sv[2];
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0)
        return -1;
    struct client *c = calloc(1, sizeof *c);
    if (!c) {
        close(sv[0]);
        close(sv[1]);
        return -1;
    }
    c->b = b;
    c->fd = sv[0];
    c->in.max_msg = BRIDGE_MAX_MESSAGE;
    snprintf(c->label, sizeof c->label, "%s", label);
    c->download_dir = download_dir ? strdup(download_dir) : NULL;
    fcntl(c->fd, F_SETFL, fcntl(c->fd, F_GETFL) | O_NONBLOCK);
    c->next = b->clients;
    b->clients = c;
    b->stats.clients++;
    loop_add_fd(b->loop, c->fd, POLLIN, on_client, c);
    return sv[1];
}

void cdp_bridge_stats(const struct cdp_bridge *b, struct cdp_bridge_stats *out)
{
    if (b)
        *out = b->stats;
    else
        memset(out, 0, sizeof *out);
}

void cdp_bridge_free(struct cdp_bridge *b)
{
    if (!b)
        return;
    if (!b->broken) {
        b->broken = true; /* no disposals: the browser is going away too */
        loop_del_fd(b->loop, b->from_browser);
        loop_del_fd(b->loop, b->to_browser);
        while (b->clients)
            client_close(b->clients, "the bridge is closing");
    }
    close(b->to_browser);
    close(b->from_browser);
    nf_reader_free(&b->in);
    nf_queue_free(&b->out);
    json_decref(b->contexts);
    json_decref(b->targets);
    json_decref(b->sessions);
    free(b->slots);
    free(b->gen);
    free(b);
}
