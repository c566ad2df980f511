/*
 * bidi_bridge.c - multiplex the workers' BiDi connections over the shared
 * Firefox's one session. See bidi_bridge.h for what it guarantees.
 */
#include "bidi_bridge.h"
#include "bidi_bridge_int.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <jansson.h>

#include "bidi_policy.h"
#include "bridge_command.h"
#include "json_top.h"
#include "log.h"
#include "loop.h"
#include "nulframe.h"

/* Bytes asked of each read of Firefox (a worker's: bridge_core.h). */
#define READ_CHUNK (256 * 1024)
/* The largest body Firefox keeps for network.getData; all of them together
 * are bounded by Firefox (remote.network.maxTotalDataSize, 200 MB), the
 * oldest dropped first. */
#define MAX_BODY_BYTES (10 * 1000 * 1000)

/* The events workers follow (worker/cdp/bidi_map.c), subscribed once for
 * the whole browser and routed by the context they name. */
static const char *const subscribed[] = {
    "browsingContext.contextCreated",
    "browsingContext.contextDestroyed",
    "browsingContext.navigationStarted",
    "browsingContext.domContentLoaded",
    "browsingContext.load",
    "browsingContext.fragmentNavigated",
    "browsingContext.userPromptOpened",
    "browsingContext.userPromptClosed",
    "browsingContext.navigationFailed",
    "browsingContext.navigationCommitted",
    "browsingContext.downloadWillBegin",
    "browsingContext.downloadEnd",
    "log.entryAdded",
    "network.beforeRequestSent",
    "network.responseCompleted",
    "network.fetchError",
};

static void broken(struct bidi_bridge *b, const char *why);

/* ---- writing ---- */

static void flush_browser(struct bidi_bridge *b)
{
    if (b->broken)
        return;
    if (nf_queue_write(&b->out, b->fd) < 0) {
        broken(b, "Firefox's connection stopped taking commands");
        return;
    }
    loop_set_events(b->loop, b->fd, (short)(POLLIN | (nf_queue_len(&b->out) ? POLLOUT : 0)));
}

static void to_client(struct bclient *c, const char *msg, size_t len, const struct json_top *t,
                      long long id)
{
    bridge_client_send(&c->base, msg, len, t, id);
}

static void send_json(struct bclient *c, json_t *m)
{
    char *text = json_dumps(m, JSON_COMPACT);
    json_decref(m);
    if (text)
        to_client(c, text, strlen(text), NULL, 0);
    free(text);
}

/* Answer c's command ourselves with a BiDi error. */
static void refuse(struct bclient *c, long long id, const char *method, const char *why)
{
    char msg[400];
    snprintf(msg, sizeof msg, "tabvisor: the bridge refuses %.100s: %s", method, why);
    send_json(c, json_pack("{s:s, s:I, s:s, s:s}", "type", "error", "id", (json_int_t)id, "error",
                           "invalid argument", "message", msg));
}

/* Send cmd (stolen; its id is set here) to Firefox for c (NULL: the
 * bridge's own), its answer to be handled as track says. */
static void forward(struct bidi_bridge *b, struct bclient *c, long long client_id, json_t *cmd,
                    enum track track)
{
    long long bid = ++b->next_id;
    char key[24];
    snprintf(key, sizeof key, "%lld", bid);
    json_object_set_new(cmd, "id", json_integer(bid));
    char *text = json_dumps(cmd, JSON_COMPACT);
    json_decref(cmd);
    if (!text || nf_queue_append(&b->out, text, strlen(text) + 1, BRIDGE_MAX_QUEUE) < 0) {
        free(text);
        broken(b, "out of memory, or Firefox stopped reading");
        return;
    }
    free(text);
    json_object_set_new(
        b->pending, key,
        json_pack("[I, I, i]", (json_int_t)(intptr_t)c, (json_int_t)client_id, (int)track));
    flush_browser(b);
}

static void own_command(struct bidi_bridge *b, const char *method, json_t *params, enum track track)
{
    forward(b, NULL, 0, json_pack("{s:s, s:o}", "method", method, "params", params), track);
}

/* ---- the proxy's shares ---- */

/* Give c the least recently released free share and name it as the proxy
 * of the user context cmd creates. */
static void share_proxy(struct bidi_bridge *b, struct bclient *c, json_t *cmd)
{
    int best = -1;
    for (int i = 0; i < b->nshares; i++)
        if (!b->share_taken[i] && (best < 0 || b->share_released[i] < b->share_released[best]))
            best = i;
    if (best < 0) {
        if (b->nshares)
            log_warn("bidi bridge: every proxy share is taken; %s goes through the shared one",
                     c->base.label);
        return;
    }
    char proxy[32];
    snprintf(proxy, sizeof proxy, "127.0.0.1:%d", b->share_port[best]);
    json_t *params = json_object_get(cmd, "params");
    if (!params) {
        params = json_object();
        json_object_set_new(cmd, "params", params);
    }
    /* SOCKS 5 with the names resolved by the proxy (Firefox's filter sets
     * TRANSPARENT_PROXY_RESOLVES_HOST), as the shared socket's prefs. */
    json_object_set_new(params, "proxy",
                        json_pack("{s:s, s:s, s:i}", "proxyType", "manual", "socksProxy", proxy,
                                  "socksVersion", 5));
    b->share_taken[best] = true;
    c->share = best;
}

static void share_release(struct bidi_bridge *b, struct bclient *c)
{
    if (c->share < 0)
        return;
    b->share_taken[c->share] = false;
    b->share_released[c->share] = ++b->share_clock;
    c->share = -1;
}

void bidi_bridge_set_shares(struct bidi_bridge *b, const int *ports, int n)
{
    b->nshares = n < MAX_SHARES ? n : MAX_SHARES;
    for (int i = 0; i < b->nshares; i++) {
        b->share_port[i] = ports[i];
        b->share_taken[i] = false;
        b->share_released[i] = 0;
    }
    log_debug("bidi bridge: %d proxy shares", b->nshares);
}

/* ---- from workers ---- */

/* One whole message of a worker (bridge_core.h: the message op). */
static void from_client(struct bridge_client *bc, char *msg, size_t len)
{
    struct bclient *c = (struct bclient *)bc;
    struct bidi_bridge *b = c->b;
    const char *why = NULL;
    json_t *m = bridge_command_parse(msg, len, JSON_REJECT_DUPLICATES, &why);
    json_t *jid = json_object_get(m, "id");
    const char *method = json_string_value(json_object_get(m, "method"));
    struct json_top t;
    if (!m && json_top_scan(msg, len, &t) == 0 && t.id_end) {
        /* Too many values to build, or not strict JSON: its id says whose. */
        refuse(c, t.id, "a command", why);
        return;
    }
    if (!json_is_integer(jid) || !method) {
        json_decref(m);
        bridge_client_close(&c->base, "it sent a message that is not a BiDi command");
        return;
    }
    long long id = json_integer_value(jid);
    json_t *params = json_object_get(m, "params");
    enum track track = T_NONE;
    if (!strcmp(method, "browser.createUserContext")) {
        /* One user context per session: its cookies and storage, and its
         * own share of the proxy. */
        if (c->user_context[0] || c->creating)
            why = "a session has one user context";
        else if (json_object_size(params))
            why = "a user context takes no parameters here";
        else
            share_proxy(b, c, m);
        track = T_USER_CONTEXT;
    } else if (!strcmp(method, "browser.removeUserContext")) {
        const char *uc = json_string_value(json_object_get(params, "userContext"));
        if (!uc || !c->user_context[0] || strcmp(uc, c->user_context) != 0 ||
            json_object_size(params) != 1)
            why = "not this session's user context";
        else
            c->user_context[0] = 0;
    } else {
        struct bidi_owner o = {.user_context = c->user_context[0] ? c->user_context : NULL,
                               .owns_context = bo_owns_context,
                               .owns_handle = bo_owns_handle,
                               .ud = c};
        why = bidi_policy_check(m, &o);
        if (!strcmp(method, "browsingContext.create"))
            track = T_CONTEXT;
        else if (!strcmp(method, "script.addPreloadScript"))
            track = T_PRELOAD;
        else if (!strcmp(method, "session.subscribe"))
            track = T_SUBSCRIPTION;
    }
    if (why) {
        refuse(c, id, method, why);
        json_decref(m);
        return;
    }
    if (track == T_USER_CONTEXT)
        c->creating = true;
    forward(b, c, id, m, track);
}

static void client_free(struct bridge_client *bc)
{
    struct bclient *c = (struct bclient *)bc;
    json_decref(c->requests);
    free(c);
}

/* A worker's connection ended (bridge_core.c closed it): remove its user
 * context (closing its tabs) and forget what it owned. */
static void client_closed(struct bridge_client *bc, const char *why)
{
    struct bclient *c = (struct bclient *)bc;
    struct bidi_bridge *b = c->b;
    if (c->user_context[0] && !b->broken) {
        log_info("bidi bridge: removing user context %s of %s (%s)", c->user_context, c->base.label,
                 why);
        own_command(b, "browser.removeUserContext",
                    json_pack("{s:s}", "userContext", c->user_context), T_NONE);
    }
    owner_map_drop(b->contexts, c);
    owner_map_drop(b->handles, c);
    share_release(b, c);
    const char *k;
    json_t *v;
    json_object_foreach(b->pending, k, v)
    {
        if ((struct bclient *)(intptr_t)json_integer_value(json_array_get(v, 0)) == c)
            json_array_set_new(v, 0, json_integer(0)); /* its answer is dropped */
    }
}

static const struct bridge_client_ops client_ops = {
    .message = from_client, .closed = client_closed, .free = client_free};

/* ---- from Firefox ---- */

/* The events, and one data collector for the whole browser: request and
 * response bodies for browser_network_request, each fetched only by the
 * worker whose request it is (bo_owns_handle, "request:ID"). */
static void subscribe(struct bidi_bridge *b)
{
    json_t *events = json_array();
    for (size_t i = 0; i < sizeof subscribed / sizeof subscribed[0]; i++)
        json_array_append_new(events, json_string(subscribed[i]));
    own_command(b, "session.subscribe", json_pack("{s:o}", "events", events), T_READY);
    own_command(b, "network.addDataCollector",
                json_pack("{s:[s, s], s:i}", "dataTypes", "request", "response",
                          "maxEncodedDataSize", MAX_BODY_BYTES),
                T_COLLECTOR);
    /* Downloads are refused, so none lands in Firefox's own dir, shared by
     * every session and bounded by nothing: BiDi reports no progress, so a
     * download's size could not be held to the session's bound until it
     * ended. The worker reports each one as canceled. */
    own_command(b, "browser.setDownloadBehavior",
                json_pack("{s:{s:s}}", "downloadBehavior", "type", "denied"), T_NONE);
}

/* A handle (kind "script", "subscription") a reply gave client c. */
static void own_handle(struct bidi_bridge *b, struct bclient *c, const char *kind, const json_t *id)
{
    char key[2 * MAX_ID];
    if (json_is_string(id) && json_string_length(id) < MAX_ID) {
        snprintf(key, sizeof key, "%s:%s", kind, json_string_value(id));
        bo_own(b->handles, key, c);
    }
}

/* What an answer tells the bridge about ownership, before it goes on. */
static void note_answer(struct bidi_bridge *b, struct bclient *c, enum track track, json_t *m)
{
    json_t *r = json_object_get(m, "result");
    bool ok = r && !json_object_get(m, "error");
    switch (track) {
    case T_SESSION:
        if (!ok) {
            broken(b, "Firefox refused to start a BiDi session");
            return;
        }
        subscribe(b);
        return;
    case T_READY:
        if (!ok) {
            broken(b, "Firefox refused the event subscription");
            return;
        }
        b->ready = true;
        b->ev->ready(b->ud);
        return;
    case T_USER_CONTEXT:
        if (c) {
            c->creating = false;
            const char *uc = json_string_value(json_object_get(r, "userContext"));
            if (ok && uc && strlen(uc) < MAX_ID)
                snprintf(c->user_context, sizeof c->user_context, "%s", uc);
        } else if (ok) {
            /* Its client left before the answer: remove it at once. */
            own_command(b, "browser.removeUserContext",
                        json_pack("{s:O}", "userContext", json_object_get(r, "userContext")),
                        T_NONE);
        }
        return;
    case T_CONTEXT:
        if (c && ok)
            bo_own(b->contexts, json_string_value(json_object_get(r, "context")), c);
        return;
    case T_COLLECTOR:
        if (!ok)
            log_warn("bidi bridge: Firefox keeps no request bodies (network.addDataCollector: "
                     "%s): browser_network_request shows none",
                     json_string_value(json_object_get(m, "message")) ?: "refused");
        return;
    case T_PRELOAD:
        if (c && ok)
            own_handle(b, c, "script", json_object_get(r, "script"));
        return;
    case T_SUBSCRIPTION:
        if (c && ok)
            own_handle(b, c, "subscription", json_object_get(r, "subscription"));
        return;
    case T_NONE:
        return;
    }
}

static void on_answer(struct bidi_bridge *b, const char *msg, size_t len, const struct json_top *t)
{
    char key[24];
    snprintf(key, sizeof key, "%lld", t->id);
    json_t *p = json_object_get(b->pending, key);
    if (!p) {
        log_warn("bidi bridge: an answer to no command (id %lld)", t->id);
        return;
    }
    struct bclient *c = (struct bclient *)(intptr_t)json_integer_value(json_array_get(p, 0));
    long long client_id = json_integer_value(json_array_get(p, 1));
    enum track track = (enum track)json_integer_value(json_array_get(p, 2));
    json_object_del(b->pending, key);
    if (track != T_NONE) {
        json_t *m = json_loadb(msg, len, 0, NULL);
        note_answer(b, c, track, m);
        json_decref(m);
    }
    if (c)
        to_client(c, msg, len, t, client_id);
}

static void on_event(struct bidi_bridge *b, const char *msg, size_t len)
{
    json_t *m = json_loadb(msg, len, 0, NULL);
    const char *method = json_string_value(json_object_get(m, "method"));
    json_t *params = json_object_get(m, "params");
    const char *ctx = json_string_value(json_object_get(params, "context"));
    if (!ctx)
        ctx = json_string_value(json_object_get(json_object_get(params, "source"), "context"));
    if (!method || !ctx) {
        json_decref(m);
        return;
    }
    if (!strcmp(method, "browsingContext.contextCreated")) {
        /* A frame of a page, or a page a page opened: its page's owner's. */
        const char *parent = json_string_value(json_object_get(params, "parent"));
        struct bclient *c = parent
                                ? bo_owner_of(b->contexts, parent)
                                : bo_client_of_user_context(
                                      b, json_string_value(json_object_get(params, "userContext")));
        if (c)
            bo_own(b->contexts, ctx, c);
    }
    struct bclient *c = bo_owner_of(b->contexts, ctx);
    if (c && !strncmp(method, "network.", 8))
        bo_own_request(
            c, json_string_value(json_object_get(json_object_get(params, "request"), "request")));
    if (c)
        to_client(c, msg, len, NULL, 0);
    if (!strcmp(method, "browsingContext.contextDestroyed"))
        json_object_del(b->contexts, ctx);
    json_decref(m);
}

static void on_browser(struct loop *l, int fd, short revents, void *ud)
{
    struct bidi_bridge *b = ud;
    if (revents & POLLOUT)
        flush_browser(b);
    if (b->broken || !(revents & (POLLIN | POLLHUP | POLLERR)))
        return;
    long n = nf_reader_read(&b->in, fd, READ_CHUNK);
    if (n < 0 && (errno == EAGAIN || errno == EINTR))
        return;
    if (n <= 0) {
        broken(b, n == 0 ? "Firefox's connection closed" : "reading Firefox's connection failed");
        return;
    }
    char *msg;
    size_t len;
    int r;
    while (!b->broken && (r = nf_reader_next(&b->in, &msg, &len)) == 1) {
        struct json_top t;
        if (json_top_scan(msg, len, &t) < 0) {
            log_warn("bidi bridge: dropping a malformed message from Firefox (%zu bytes)", len);
            continue;
        }
        if (t.id_end)
            on_answer(b, msg, len, &t);
        else
            on_event(b, msg, len);
    }
    if (!b->broken && r < 0)
        broken(b, "Firefox sent a message over the size limit");
    (void)l;
}

static void broken(struct bidi_bridge *b, const char *why)
{
    if (b->broken)
        return;
    b->broken = true;
    log_warn("bidi bridge: %s", why);
    loop_del_fd(b->loop, b->fd);
    bridge_clients_close_all(&b->clients, "the browser is gone");
    b->ev->closed(b->ud, why);
}

/* ---- public ---- */

struct bidi_bridge *bidi_bridge_new(struct loop *l, int fd, const struct bidi_bridge_events *ev,
                                    void *ud)
{
    struct bidi_bridge *b = calloc(1, sizeof *b);
    if (!b || bridge_core_setup(&b->clients, &b->in, BIDI_MAPS(b), BIDI_NMAPS, l, &client_ops,
                                "bidi bridge") < 0) {
        free(b);
        close(fd);
        return NULL;
    }
    b->loop = l;
    b->ev = ev;
    b->ud = ud;
    b->fd = fd;
    fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
    loop_add_fd(l, fd, POLLIN, on_browser, b);
    /* Dialogs wait for the agent (browser_handle_dialog), never dismissed
     * by the next command. A file picker is dismissed: pages report their
     * choosers to the worker themselves (worker/firefox_page.c). */
    own_command(b, "session.new",
                json_pack("{s:{s:{s:{s:s, s:s}}}}", "capabilities", "alwaysMatch",
                          "unhandledPromptBehavior", "default", "ignore", "file", "dismiss"),
                T_SESSION);
    return b;
}

int bidi_bridge_connect(struct bidi_bridge *b, const char *label)
{
    if (b->broken || !b->ready)
        return -1;
    struct bclient *c = calloc(1, sizeof *c);
    if (!c)
        return -1;
    c->b = b;
    c->share = -1;
    c->requests = json_array();
    int fd = bridge_client_open(&b->clients, &c->base, label, BRIDGE_MAX_COMMAND);
    if (fd < 0)
        client_free(&c->base);
    return fd;
}

void bidi_bridge_close_browser(struct bidi_bridge *b)
{
    if (!b->broken)
        own_command(b, "browser.close", json_object(), T_NONE);
}

unsigned bidi_bridge_clients(const struct bidi_bridge *b)
{
    return b ? b->clients.count : 0;
}

void bidi_bridge_free(struct bidi_bridge *b)
{
    if (!b)
        return;
    if (!b->broken) {
        b->broken = true;
        loop_del_fd(b->loop, b->fd);
        bridge_clients_close_all(&b->clients, "the bridge is closing");
    }
    close(b->fd);
    nf_reader_free(&b->in);
    nf_queue_free(&b->out);
    owner_maps_free(BIDI_MAPS(b), BIDI_NMAPS);
    free(b);
}
