/*
 * cdp_bridge.c - multiplex the workers' CDP connections over the shared
 * browser's pipe. See cdp_bridge.h for what it guarantees.
 */
#include "cdp_bridge_int.h"

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

#include "bridge_command.h"
#include "json_top.h"
#include "log.h"
#include "loop.h"
#include "nulframe.h"
#include "owner_map.h"


/* ---- ownership maps ---- */

void bridge_own(json_t *map, const char *id, size_t len, struct client *c)
{
    if (len > 0 && len <= MAX_CDP_ID)
        owner_map_set(map, id, len, c);
}

struct client *bridge_owner_of(json_t *map, const char *id, size_t len)
{
    return len > 0 && len <= MAX_CDP_ID ? owner_map_get(map, id, len) : NULL;
}

/* ---- command slots ---- */

struct slot *bridge_slot_get(struct cdp_bridge *b, long long bid)
{
    if (bid <= 0 || bid > INT32_MAX)
        return NULL;
    uint32_t i = (uint32_t)bid & (MAX_SLOTS - 1);
    if (i >= b->nslots || b->slots[i].bid != (uint32_t)bid)
        return NULL;
    return &b->slots[i];
}

static struct slot *bridge_slot_alloc(struct cdp_bridge *b)
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

void bridge_slot_free(struct cdp_bridge *b, struct slot *s)
{
    uint32_t i = (uint32_t)(s - b->slots);
    s->bid = 0;
    s->owner = NULL;
    s->next_free = b->free_head;
    b->free_head = i;
}

/* ---- writing ---- */

static void bridge_want_write(struct loop *l, int fd, struct nf_queue *q, short base)
{
    loop_set_events(l, fd, (short)(base | (nf_queue_len(q) ? POLLOUT : 0)));
}

static void bridge_flush_browser(struct cdp_bridge *b)
{
    if (b->broken)
        return;
    if (nf_queue_write(&b->out, b->to_browser) < 0) {
        bridge_broken(b, "the browser stopped reading its pipe");
        return;
    }
    bridge_want_write(b->loop, b->to_browser, &b->out, 0);
}

static int bridge_queue_with_id(struct nf_queue *q, const char *msg, size_t len, size_t id_start,
                                size_t id_end, long long id)
{
    return nf_queue_message_with_id(q, msg, len, id_start, id_end, id, BRIDGE_MAX_QUEUE);
}

void bridge_to_client(struct client *c, const char *msg, size_t len, const struct json_top *t,
                      long long client_id)
{
    bridge_client_send(&c->base, msg, len, t, client_id);
}

/* Send a command of the bridge's own, on session (NULL: the browser); its
 * answer is dropped unless track says otherwise. params is stolen. */
void bridge_session_command(struct cdp_bridge *b, const char *session, const char *method,
                            json_t *params, enum track track)
{
    struct slot *s = bridge_slot_alloc(b);
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
        bridge_slot_free(b, s);
        bridge_broken(b, "out of memory or the browser stopped reading");
        return;
    }
    free(text);
    b->stats.to_browser++;
    bridge_flush_browser(b);
}

void bridge_command(struct cdp_bridge *b, const char *method, json_t *params, enum track track)
{
    bridge_session_command(b, NULL, method, params, track);
}

/*
 * A client's context saves downloads into the directory the supervisor chose
 * for its session (worker/downloads.c handles the files). The bridge sends
 * it itself, before the client hears of the context: a worker never sends a
 * command that hands the browser a path (proto/cdp_policy.c).
 */
void bridge_set_downloads(struct cdp_bridge *b, struct client *c, const char *ctx)
{
    if (c->download_dir)
        bridge_command(b, "Browser.setDownloadBehavior",
                       json_pack("{s:s, s:s, s:s}", "behavior", "allowAndName", "browserContextId",
                                 ctx, "downloadPath", c->download_dir),
                       TRACK_NONE);
}

/* Answer a client's command ourselves, with a CDP error. */
static void bridge_refuse(struct client *c, long long id, const char *session, size_t session_len,
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
        bridge_to_client(c, text, strlen(text), NULL, 0);
    free(text);
}

/* Answer a client's command ourselves, with result (stolen). */
void bridge_answer(struct client *c, long long id, json_t *result)
{
    json_t *m = json_pack("{s:I, s:o}", "id", (json_int_t)id, "result", result);
    char *text = m ? json_dumps(m, JSON_COMPACT) : NULL;
    json_decref(m);
    if (text)
        bridge_to_client(c, text, strlen(text), NULL, 0);
    free(text);
}

/* One whole message of a worker (bridge_core.h: the message op). */
static void from_client(struct bridge_client *bc, char *msg, size_t len)
{
    struct client *c = (struct client *)bc;
    struct cdp_bridge *b = c->b;
    struct json_top t;
    if (json_top_scan(msg, len, &t) < 0 || !t.id_end || !t.method) {
        bridge_client_close(&c->base, "it sent a message that is not a CDP command");
        return;
    }
    enum track track = TRACK_NONE;
    if (t.session) {
        if (bridge_owner_of(b->sessions, t.session, t.session_len) != c) {
            bridge_refuse(c, t.id, t.session, t.session_len,
                          "tabvisor: not this session's CDP session");
            return;
        }
        const char *why = bridge_session_policy(&t, msg, len);
        if (why) {
            char text[400];
            snprintf(text, sizeof text, "tabvisor: the bridge refuses %.*s: %s",
                     (int)(t.method_len > 100 ? 100 : t.method_len), t.method, why);
            bridge_refuse(c, t.id, t.session, t.session_len, text);
            return;
        }
    } else {
        const char *why = NULL;
        json_t *parsed =
            bridge_command_parse(msg, len, JSON_REJECT_DUPLICATES | JSON_ALLOW_NUL, &why);
        if (!parsed) {
            bridge_refuse(c, t.id, NULL, 0, why);
            return;
        }
        char method[128];
        snprintf(method, sizeof method, "%.*s", (int)t.method_len, t.method);
        if (b->use_default && bridge_default_context_command(c, parsed, method, t.id)) {
            json_decref(parsed);
            return;
        }
        why = bridge_browser_policy(c, parsed, method, &track);
        json_decref(parsed);
        if (why) {
            bridge_refuse(c, t.id, NULL, 0, why);
            return;
        }
    }
    struct slot *s = bridge_slot_alloc(b);
    if (!s) {
        bridge_refuse(c, t.id, t.session, t.session_len, "tabvisor: too many commands in flight");
        return;
    }
    s->owner = c;
    s->client_id = t.id;
    s->track = track;
    if (bridge_queue_with_id(&b->out, msg, len, t.id_start, t.id_end, s->bid) < 0) {
        bridge_slot_free(b, s);
        bridge_broken(b, "the browser stopped reading its pipe (queue full)");
        return;
    }
    b->stats.to_browser++;
    bridge_flush_browser(b);
}

static void client_free(struct bridge_client *bc)
{
    struct client *c = (struct client *)bc;
    free(c->download_dir);
    free(c);
}

/* A worker's connection ended (bridge_core.c closed it): dispose of its
 * contexts (closing its pages) and forget what it owned. */
static void client_closed(struct bridge_client *bc, const char *why)
{
    (void)why;
    struct client *c = (struct client *)bc;
    struct cdp_bridge *b = c->b;
    const char *k;
    json_t *v;
    json_object_foreach(b->contexts, k, v)
    {
        if ((struct client *)(intptr_t)json_integer_value(v) != c || b->broken)
            continue;
        if (b->use_default && strcmp(k, b->default_ctx) == 0) {
            bridge_close_targets_of(b, c); /* the default context stays: it is the profile */
        } else {
            bridge_command(b, "Target.disposeBrowserContext",
                           json_pack("{s:s}", "browserContextId", k), TRACK_NONE);
        }
    }
    owner_map_drop(b->contexts, c);
    owner_map_drop(b->targets, c);
    owner_map_drop(b->sessions, c);
    for (uint32_t i = 0; i < b->nslots; i++)
        if (b->slots[i].bid && b->slots[i].owner == c)
            b->slots[i].owner = NULL; /* its answer is dropped when it comes */
}

static const struct bridge_client_ops client_ops = {
    .message = from_client, .closed = client_closed, .free = client_free};

static void on_browser_readable(struct loop *l, int fd, short revents, void *ud)
{
    struct cdp_bridge *b = ud;
    long n = nf_reader_read(&b->in, fd, BROWSER_READ_CHUNK);
    if (n < 0 && (errno == EAGAIN || errno == EINTR))
        return;
    if (n <= 0) {
        bridge_broken(b, n == 0 ? "the browser closed its pipe"
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
            bridge_on_answer(b, msg, len, &t);
        else
            bridge_on_event(b, msg, len, &t);
    }
    if (!b->broken && r < 0)
        bridge_broken(b, "the browser sent a message over the size limit");
}

static void on_browser_writable(struct loop *l, int fd, short revents, void *ud)
{
    struct cdp_bridge *b = ud;
    if (revents & (POLLERR | POLLHUP) && !(revents & POLLOUT)) {
        bridge_broken(b, "the browser closed its command pipe");
        return;
    }
    bridge_flush_browser(b);
}

void bridge_broken(struct cdp_bridge *b, const char *why)
{
    if (b->broken)
        return;
    b->broken = true;
    log_warn("cdp bridge: %s", why);
    loop_del_fd(b->loop, b->from_browser);
    loop_del_fd(b->loop, b->to_browser);
    bridge_clients_close_all(&b->clients, "the browser is gone");
    b->ev->closed(b->ud, why);
}

/* ---- public ---- */

struct cdp_bridge *cdp_bridge_new(struct loop *l, int to_browser, int from_browser,
                                  const struct cdp_bridge_events *ev, void *ud)
{
    struct cdp_bridge *b = calloc(1, sizeof *b);
    if (!b || bridge_core_setup(&b->clients, &b->in, BRIDGE_MAPS(b), BRIDGE_NMAPS, l,
                                &client_ops, "cdp bridge") < 0) {
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
    struct client *c = calloc(1, sizeof *c);
    if (!c)
        return -1;
    c->b = b;
    c->download_dir = download_dir ? strdup(download_dir) : NULL;
    int fd = bridge_client_open(&b->clients, &c->base, label, BRIDGE_MAX_COMMAND);
    if (fd < 0)
        client_free(&c->base);
    return fd;
}

void cdp_bridge_stats(const struct cdp_bridge *b, struct cdp_bridge_stats *out)
{
    if (b) {
        *out = b->stats;
        out->clients = b->clients.count;
    } else
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
        bridge_clients_close_all(&b->clients, "the bridge is closing");
    }
    close(b->to_browser);
    close(b->from_browser);
    nf_reader_free(&b->in);
    nf_queue_free(&b->out);
    owner_maps_free(BRIDGE_MAPS(b), BRIDGE_NMAPS);
    free(b->slots);
    free(b->gen);
    free(b);
}
