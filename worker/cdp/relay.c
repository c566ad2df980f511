/*
 * relay.c - the extension-mode cdp_transport: a "virtual browser" over the
 * relay's nng pair1 socket (docs/relay.md, docs/extension-mode.md).
 *
 * The worker speaks CDP as it does to Chromium; this file answers the few
 * browser-level Target.* commands it uses with relay verbs and forwards
 * everything sent on a page session as relay-cdp:
 *   Target.createBrowserContext  -> a local id (the user's profile is the context)
 *   Target.createTarget          -> relay-tab-create, targetId "tab-<tabId>"
 *   Target.attachToTarget        -> relay-tab-attach, sessionId "rs-<tabId>"
 *   Target.closeTarget           -> relay-tab-close
 *   Target.disposeBrowserContext -> relay-tab-close for every tab we know
 *   anything on "rs-<tabId>"     -> relay-cdp {tabId, method, params}
 *   anything on a child session  -> relay-cdp {..., cdpSession} (out-of-process
 *                                   iframes announced by Target.attachedToTarget)
 * Events come back with the synthesized session ids; the relay's other events
 * become Target.* events tabs.c already understands: opened-by and granted ->
 * Target.targetCreated (adopted at the next safe point; such a page is not
 * paused: chrome.debugger cannot hold a popup), removed -> targetDestroyed,
 * detached and revoked -> detachedFromTarget.
 *
 * Link state. nng redials by itself; pipe add/remove notifications (nng's
 * threads) reach us through a pipe. After every (re)connection we say
 * relay-hello; requests made while the link is down or the hello is
 * unanswered, and requests for the extension while the relay has none
 * (its hello answer and "extension" events say so), are held until the
 * call's deadline (RELAY_HOLD_MS without one), then fail with
 * EXTENSION_NOT_CONNECTED: a call made while the extension reconnects
 * waits for it. A relay without a pairing secret can have no extension:
 * then they fail at once. When the link drops,
 * every request in flight fails at once with CDP_ERR_EXTENSION_NOT_CONNECTED
 * and relay_transport_breaks() counts up (so does the relay's "extension
 * disconnected" event), which lets the worker end waits that expect events
 * instead of answers. A hello after a reconnect that is not "resumed" means
 * the relay forgot our tabs (it was restarted): relay_transport_take_reset().
 *
 * One epoll fd (nng's receive fd, the notification pipe, a timer for held
 * requests) is what the worker polls.
 *
 * Ownership: messages handed out by recv() are malloc'd for the caller.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/timerfd.h>
#include <unistd.h>

#include <jansson.h>
#include <nng/nng.h>
#include <nng/protocol/pair1/pair.h>

#include "bodies.h"
#include "cdp_policy.h"
#include "clock.h"
#include "codec.h"
#include "json_util.h"
#include "log.h"
#include "proto.h"
#include "transport.h"

/* How long a request without a deadline waits for the relay (link down,
 * hello unanswered) or its extension; one with a deadline waits until
 * RELAY_HOLD_MARGIN_MS before it, so that it fails with our reason, not
 * with the caller's timeout. */
#define RELAY_HOLD_MS 5000
#define RELAY_HOLD_MARGIN_MS 150
/* A refused relay-hello (the relay still counts our previous connection as
 * holding the session: its removal is on its way) is said again after
 * this, doubling up to RELAY_REHELLO_MAX_MS. */
#define RELAY_REHELLO_MS 100
#define RELAY_REHELLO_MAX_MS 2000
/* nng 1.5's dialer can stop redialing after a relay is killed just after
 * the connection came up (seen: one worker of five never back after the
 * new relay, for good): while the link is down this long, the dialer is
 * replaced by a new one, again every RELAY_REDIAL_MS. */
#define RELAY_REDIAL_MS 1000
#define RELAY_CONTEXT_ID "extension-profile"
#define MAX_KNOWN_TABS 1024
#define RELAY_RECV_QUEUE 8192 /* messages; nng's largest */
/* With no send queue a non-blocking send fails while the pipe still writes
 * the previous message, and what was not sent waits for the 100 ms retry
 * timer: half of all snapshots in extension mode took 100 ms more. */
#define RELAY_SEND_QUEUE 256

/* K_INFO_CREATED / K_INFO_ADOPT: Target.getTargetInfo on a new tab, for its
 * real target id (the worker takes a page's target id for its main frame id,
 * as Chromium's are), answering createTarget or announcing the tab. */
enum req_kind {
    K_HELLO,
    K_CDP,
    K_CREATE,
    K_INFO_CREATED,
    K_INFO_ADOPT,
    K_ATTACH,
    K_CLOSE,
    K_IGNORE,
    K_TABS,
    K_BARRIER /* not sent: answered once the tab's earlier requests are */
};

struct req {
    uint64_t rid;     /* our relay request id */
    long long cdp_id; /* the worker's CDP id; 0: nobody waits */
    enum req_kind kind;
    uint32_t type;
    json_t *body; /* owned until sent */
    long tab;
    bool sent;
    long long hold_until;
};

struct relay_transport {
    struct cdp_transport base;
    nng_socket sock;
    int recv_fd, ep, note[2], tfd;
    char session[80];
    char proof[65]; /* the supervisor's proof that this worker is the session's (relay-hello) */
    bool up, helloed, ever_ready, reset;
    /* The relay has its extension, as far as we know (hello answer,
     * "extension" events); unpaired: it has no pairing secret, so no
     * extension can connect. */
    bool ext, unpaired;
    long long send_deadline; /* the deadline of the command rt_send handles, 0: none */
    long long rehello_at;    /* when to say relay-hello again after a refusal; 0: not */
    int rehello_ms;          /* the next wait after a refusal */
    char refused[200];       /* why the last hello was refused; "" after one is answered */
    nng_dialer dialer;
    char url[256];
    long long down_since; /* when the link went down; 0: up, or never up */
    long long redial_at;  /* the next replacement of the dialer while down */
    /* The link came back, but the relay does not know yet which of our tabs
     * it holds (its extension is not there, or not settled): requests for
     * a tab fail with EXTENSION_NOT_CONNECTED until its "extension" event
     * lists them (reclaim_check). */
    bool reclaim;
    unsigned breaks;
    uint32_t ack_pipe; /* the pipe the relay's unacknowledged messages came on */
    unsigned unacked;  /* relay messages read and not yet acknowledged (relay-ack) */
    uint64_t next_rid;
    struct req *reqs;
    size_t nreqs, capreqs;
    char **out; /* local messages for recv(), FIFO */
    size_t nout, capout;
    long tabs[MAX_KNOWN_TABS]; /* tabs we created or adopted */
    size_t ntabs;
    json_t *children; /* child CDP session id -> tabId */
    json_t *targets;  /* a tab's real target id -> tabId */
    char err[200];
};

static struct relay_transport *rt_of(struct cdp_transport *t)
{
    return (struct relay_transport *)t;
}

/* ---- small helpers ---- */

static void push_out(struct relay_transport *r, json_t *msg)
{
    char *s = json_dumps(msg, JSON_COMPACT);
    json_decref(msg);
    if (!s)
        return;
    if (r->nout == r->capout) {
        size_t n = r->capout ? r->capout * 2 : 16;
        char **o = realloc(r->out, n * sizeof *o);
        if (!o) {
            free(s);
            return;
        }
        r->out = o;
        r->capout = n;
    }
    r->out[r->nout++] = s;
}

static void reply_ok(struct relay_transport *r, long long id, json_t *result)
{
    if (id)
        push_out(r, json_pack("{s:I, s:o}", "id", (json_int_t)id, "result",
                              result ? result : json_object()));
    else
        json_decref(result);
}

static void reply_err(struct relay_transport *r, long long id, int code, const char *msg)
{
    if (id)
        push_out(r, json_pack("{s:I, s:{s:i, s:s}}", "id", (json_int_t)id, "error", "code", code,
                              "message", msg));
}

static void event(struct relay_transport *r, const char *session, const char *method,
                  json_t *params)
{
    json_t *m = json_pack("{s:s, s:o}", "method", method, "params", params);
    if (session)
        json_object_set_new(m, "sessionId", json_string(session));
    push_out(r, m);
}

static int code_of(const char *code)
{
    if (!code)
        return CDP_ERR_RELAY;
    if (!strcmp(code, "EXTENSION_NOT_CONNECTED"))
        return CDP_ERR_EXTENSION_NOT_CONNECTED;
    if (!strcmp(code, "NOT_SUPPORTED"))
        return CDP_ERR_NOT_SUPPORTED;
    if (!strcmp(code, "TAB_NOT_FOUND"))
        return CDP_ERR_TAB_NOT_FOUND;
    return CDP_ERR_RELAY;
}

static bool knows_tab(struct relay_transport *r, long tab)
{
    for (size_t i = 0; i < r->ntabs; i++)
        if (r->tabs[i] == tab)
            return true;
    return false;
}

static void add_tab(struct relay_transport *r, long tab)
{
    if (!knows_tab(r, tab) && r->ntabs < MAX_KNOWN_TABS)
        r->tabs[r->ntabs++] = tab;
}

static void forget_tab(struct relay_transport *r, long tab)
{
    json_object_del_int_values(r->targets, tab);
    for (size_t i = 0; i < r->ntabs; i++)
        if (r->tabs[i] == tab) {
            r->tabs[i] = r->tabs[--r->ntabs];
            return;
        }
}

/* "tab-N" / "rs-N" -> N; -1. */
static long parse_id(const char *s, const char *prefix)
{
    size_t n = strlen(prefix);
    if (!s || strncmp(s, prefix, n) != 0 || !s[n])
        return -1;
    char *end;
    long v = strtol(s + n, &end, 10);
    return *end || v <= 0 ? -1 : v;
}

/* The target id the worker knows tab by (its real one once learned). */
static void target_of(struct relay_transport *r, long tab, char *out, size_t n)
{
    const char *k;
    json_t *v;
    json_object_foreach(r->targets, k, v)
    {
        if (json_integer_value(v) == tab) {
            snprintf(out, n, "%s", k);
            return;
        }
    }
    snprintf(out, n, "tab-%ld", tab);
}

static long tab_of_target(struct relay_transport *r, const char *tid)
{
    json_t *v = tid ? json_object_get(r->targets, tid) : NULL;
    return v ? (long)json_integer_value(v) : parse_id(tid, "tab-");
}

static void arm_timer(struct relay_transport *r, bool on)
{
    struct itimerspec its = {0};
    if (on) {
        its.it_value.tv_nsec = 100 * 1000000L;
        its.it_interval.tv_nsec = 100 * 1000000L;
    }
    timerfd_settime(r->tfd, 0, &its, NULL);
}

/* Tell the relay how many of its messages we read: it sends no more than
 * RELAY_WINDOW ahead (docs/relay.md, relay-batch). A
 * full send queue leaves the count for the next try (the timer). */
static void send_acks(struct relay_transport *r)
{
    if (!r->unacked)
        return;
    char *buf;
    size_t len;
    json_t *body = json_pack("{s:i}", "n", (int)r->unacked);
    int rc = proto_encode(MSG_RELAY_ACK, 0, body, &buf, &len);
    json_decref(body);
    if (rc != 0)
        return;
    if (nng_send(r->sock, buf, len, NNG_FLAG_NONBLOCK) == 0)
        r->unacked = 0;
    else
        arm_timer(r, true);
    free(buf);
}

/* One more message of the relay's read, on pipe. */
static void count_read(struct relay_transport *r, uint32_t pipe)
{
    if (pipe != r->ack_pipe) {
        /* A new connection: the old relay's count means nothing to it. */
        r->ack_pipe = pipe;
        r->unacked = 0;
    }
    r->unacked++;
}

/* ---- requests to the relay ---- */

static int send_now(struct relay_transport *r, struct req *q)
{
    char *buf;
    size_t len;
    if (proto_encode(q->type, q->rid, q->body, &buf, &len) != 0)
        return -2; /* over the limits: fails for good */
    int rv = nng_send(r->sock, buf, len, NNG_FLAG_NONBLOCK);
    free(buf);
    if (rv != 0)
        return -1;
    json_decref(q->body);
    q->body = NULL;
    q->sent = true;
    return 0;
}

/* Fail request i (removed from the list) with code and message. */
static void fail_req(struct relay_transport *r, size_t i, int code, const char *msg)
{
    struct req q = r->reqs[i];
    memmove(r->reqs + i, r->reqs + i + 1, (r->nreqs - i - 1) * sizeof *r->reqs);
    r->nreqs--;
    json_decref(q.body);
    reply_err(r, q.cdp_id, code, msg);
}

/* Answer the barriers whose tab has no earlier request left (requests are
 * kept in the order they were made). */
static void settle_barriers(struct relay_transport *r)
{
    for (size_t i = 0; i < r->nreqs;) {
        struct req *q = &r->reqs[i];
        bool waits = false;
        for (size_t j = 0; j < i && q->kind == K_BARRIER && !waits; j++)
            waits = r->reqs[j].tab == q->tab && r->reqs[j].kind != K_BARRIER;
        if (q->kind != K_BARRIER || waits) {
            i++;
            continue;
        }
        long long id = q->cdp_id;
        memmove(r->reqs + i, r->reqs + i + 1, (r->nreqs - i - 1) * sizeof *r->reqs);
        r->nreqs--;
        reply_ok(r, id, NULL);
    }
}

/* Whether a request of this kind goes to the extension (held while the
 * relay has none) or is the relay's own business. */
static bool needs_extension(enum req_kind kind)
{
    return kind != K_HELLO && kind != K_TABS && kind != K_BARRIER;
}

/* The relay told us it has no pairing secret: no extension can come, so a
 * request for one fails at once instead of waiting out its hold. */
static bool extension_impossible(const struct relay_transport *r, enum req_kind kind)
{
    return r->helloed && r->unpaired && needs_extension(kind);
}

static bool can_send(const struct relay_transport *r, const struct req *q)
{
    return r->up && (r->helloed || q->kind == K_HELLO) && (r->ext || !needs_extension(q->kind));
}

/* Why a held request failed, one code for every case (page.c adds the
 * hint): the relay, or its extension. */
static const char *held_failure(struct relay_transport *r)
{
    static char buf[300];
    if (r->up && !r->helloed && r->refused[0]) {
        snprintf(buf, sizeof buf, "EXTENSION_NOT_CONNECTED: tabvisor-relay refused the session: %s",
                 r->refused);
        return buf;
    }
    if (!r->up || !r->helloed)
        return "EXTENSION_NOT_CONNECTED: tabvisor-relay cannot be reached";
    if (r->unpaired)
        return "EXTENSION_NOT_CONNECTED: tabvisor-relay is not paired with a browser extension "
               "yet (tabvisor pair)";
    return "EXTENSION_NOT_CONNECTED: the browser extension did not connect to tabvisor-relay "
           "in time";
}

/* Queue a request; sent at once when the link is ready. Steals body. */
static void request(struct relay_transport *r, long long cdp_id, enum req_kind kind, uint32_t type,
                    json_t *body, long tab)
{
    if (r->nreqs == r->capreqs) {
        size_t n = r->capreqs ? r->capreqs * 2 : 16;
        struct req *q = realloc(r->reqs, n * sizeof *q);
        if (!q) {
            json_decref(body);
            reply_err(r, cdp_id, CDP_ERR_RELAY, "out of memory");
            return;
        }
        r->reqs = q;
        r->capreqs = n;
    }
    struct req *q = &r->reqs[r->nreqs++];
    long long hold =
        r->send_deadline ? r->send_deadline - RELAY_HOLD_MARGIN_MS : mono_ms() + RELAY_HOLD_MS;
    *q = (struct req){.rid = r->next_rid++,
                      .cdp_id = cdp_id,
                      .kind = kind,
                      .type = type,
                      .body = body,
                      .tab = tab,
                      .hold_until = hold};
    if (kind == K_BARRIER) {
        settle_barriers(r);
        return;
    }
    if (extension_impossible(r, kind)) {
        fail_req(r, r->nreqs - 1, CDP_ERR_EXTENSION_NOT_CONNECTED, held_failure(r));
        return;
    }
    int rc = can_send(r, q) ? send_now(r, q) : -1;
    if (rc == -2)
        fail_req(r, r->nreqs - 1, CDP_ERR_RELAY, "the command is over the protocol's limits");
    else if (rc < 0)
        arm_timer(r, true);
}

static void send_hello(struct relay_transport *r)
{
    request(r, 0, K_HELLO, MSG_RELAY_HELLO,
            json_pack("{s:s, s:i, s:i, s:s}", "sessionId", r->session, "pid", (int)getpid(),
                      "proto", PROTO_VERSION, "proof", r->proof),
            0);
}

/* The link has been down for RELAY_REDIAL_MS: a new dialer for the same
 * URL (the old one is closed; it has no pipe to take along). */
static void redial(struct relay_transport *r, long long now)
{
    r->redial_at = now + RELAY_REDIAL_MS;
    nng_dialer d;
    int rv = nng_dial(r->sock, r->url, &d, NNG_FLAG_NONBLOCK);
    if (rv != 0) {
        log_warn("relay: a new dialer for %s: %s", r->url, nng_strerror(rv));
        return;
    }
    log_info("relay: no link for %lld ms; dialing %s afresh", now - r->down_since, r->url);
    nng_dialer_close(r->dialer);
    r->dialer = d;
}

/* Send what was held, in order; fail what waited too long. */
static void flush_held(struct relay_transport *r)
{
    long long now = mono_ms();
    bool held = false;
    if (r->rehello_at && now >= r->rehello_at) {
        r->rehello_at = 0;
        if (r->up && !r->helloed)
            send_hello(r);
    }
    if (!r->up && r->down_since && now >= r->redial_at)
        redial(r, now);
    for (size_t i = 0; i < r->nreqs;) {
        struct req *q = &r->reqs[i];
        if (q->sent || q->kind == K_BARRIER) {
            i++;
            continue;
        }
        if (can_send(r, q)) {
            int rc = send_now(r, q);
            if (rc == 0) {
                i++;
                continue;
            }
            if (rc == -2) {
                fail_req(r, i, CDP_ERR_RELAY, "the command is over the protocol's limits");
                continue;
            }
        }
        if (now >= q->hold_until || extension_impossible(r, q->kind)) {
            log_debug("relay: request %llu (type %u) held too long (up %d, helloed %d, ext %d)",
                      (unsigned long long)q->rid, q->type, r->up, r->helloed, r->ext);
            fail_req(r, i, CDP_ERR_EXTENSION_NOT_CONNECTED, held_failure(r));
            continue;
        }
        held = true;
        i++;
    }
    settle_barriers(r);
    arm_timer(r, held || r->unacked || r->rehello_at || (!r->up && r->down_since));
}

/* ---- the worker's CDP, translated ---- */

static void browser_command(struct relay_transport *r, long long id, const char *method,
                            json_t *params)
{
    if (!strcmp(method, "Target.createBrowserContext")) {
        reply_ok(r, id, json_pack("{s:s}", "browserContextId", RELAY_CONTEXT_ID));
    } else if (!strcmp(method, "Target.disposeBrowserContext")) {
        /* The user's profile stays; our tabs go. */
        for (size_t i = 0; i < r->ntabs; i++)
            request(r, 0, K_IGNORE, MSG_RELAY_TAB_CLOSE, json_pack("{s:i}", "tabId", r->tabs[i]),
                    r->tabs[i]);
        r->ntabs = 0;
        json_object_clear(r->children);
        json_object_clear(r->targets);
        reply_ok(r, id, NULL);
    } else if (!strcmp(method, "Target.createTarget")) {
        const char *url = json_string_value(json_object_get(params, "url"));
        request(r, id, K_CREATE, MSG_RELAY_TAB_CREATE,
                json_pack("{s:s}", "url", url ? url : "about:blank"), 0);
    } else if (!strcmp(method, "Target.attachToTarget") || !strcmp(method, "Target.closeTarget")) {
        long tab = tab_of_target(r, json_string_value(json_object_get(params, "targetId")));
        bool attach = method[7] == 'a';
        if (tab < 0)
            reply_err(r, id, CDP_ERR_TAB_NOT_FOUND, "TAB_NOT_FOUND: no such target");
        else
            request(r, id, attach ? K_ATTACH : K_CLOSE,
                    attach ? MSG_RELAY_TAB_ATTACH : MSG_RELAY_TAB_CLOSE,
                    json_pack("{s:i}", "tabId", (int)tab), tab);
    } else {
        char msg[200];
        snprintf(msg, sizeof msg,
                 "NOT_SUPPORTED: %.100s is not available in extension mode (browser-wide)", method);
        reply_err(r, id, CDP_ERR_NOT_SUPPORTED, msg);
    }
}

static void session_command(struct relay_transport *r, long long id, const char *sid,
                            const char *method, json_t *params)
{
    long tab = parse_id(sid, "rs-");
    const char *child = NULL;
    if (tab < 0) {
        json_t *t = json_object_get(r->children, sid);
        if (!t) {
            reply_err(r, id, CDP_ERR_TAB_NOT_FOUND, "TAB_NOT_FOUND: no session with given id");
            return;
        }
        tab = (long)json_integer_value(t);
        child = sid;
    }
    /* Every cookie of the profile is no page's business: only the cookies
     * of this page's URLs (what Network.getCookies without urls returns). */
    if (!strcmp(method, "Network.getAllCookies"))
        method = "Network.getCookies";
    /* The relay layer of the CDP policy table: the relay checks it again,
     * this says it clearly and early (the profile is the user's own). */
    const char *why = cdp_policy_check(CDP_LAYER_RELAY, method, strlen(method), params);
    if (why) {
        char msg[400];
        snprintf(msg, sizeof msg, "NOT_SUPPORTED: %.100s is not available in extension mode: %s",
                 method, why);
        reply_err(r, id, CDP_ERR_NOT_SUPPORTED, msg);
        return;
    }
    /* No page is ever paused in extension mode (chrome.debugger cannot hold
     * a new tab): the command is answered here, but only once the tab's
     * earlier commands are, as Chromium answers it after the set-up sent
     * before it. The worker navigates when it has the answer; a navigation
     * that starts while chrome.debugger still applies the set-up
     * (emulation, focus, Fetch) crashed the new page's renderer. */
    if (!strcmp(method, "Runtime.runIfWaitingForDebugger")) {
        request(r, id, K_BARRIER, 0, NULL, tab);
        return;
    }
    json_t *body = json_pack("{s:i, s:s}", "tabId", (int)tab, "method", method);
    if (json_is_object(params) && json_object_size(params))
        json_object_set(body, "params", params);
    if (child)
        json_object_set_new(body, "cdpSession", json_string(child));
    request(r, id, K_CDP, MSG_RELAY_CDP, body, tab);
}

static int rt_send(struct cdp_transport *t, const char *msg, size_t len, long long deadline_ms)
{
    struct relay_transport *r = rt_of(t);
    json_t *m = json_loadb(msg, len, 0, NULL);
    const char *method = json_string_value(json_object_get(m, "method"));
    long long id = json_integer_value(json_object_get(m, "id"));
    if (!method || !id) {
        json_decref(m);
        snprintf(r->err, sizeof r->err, "relay: not a CDP command");
        return 0; /* nothing sent; the caller times out, the link stays */
    }
    json_t *params = json_object_get(m, "params");
    const char *sid = json_string_value(json_object_get(m, "sessionId"));
    r->send_deadline = deadline_ms;
    if (sid && *sid)
        session_command(r, id, sid, method, params);
    else
        browser_command(r, id, method, params);
    r->send_deadline = 0;
    json_decref(m);
    return 0;
}

/* ---- the relay's messages, translated ---- */

/* After the link to the relay came back: the relay now holds the tabs in
 * held (its hello answer, or its "extension" event once the extension is
 * back). When every tab we know is among them, we go on in them: the same
 * relay kept them, or a restarted one took them back from the extension's
 * claims (docs/extension-mode.md). Otherwise the relay forgot them: our
 * tabs are dropped, and what was held for one of them fails as the broken
 * link it is (it would come back TAB_NOT_FOUND, which is not the truth). */
static void reclaim_check(struct relay_transport *r, const json_t *held)
{
    r->reclaim = false;
    size_t missing = 0;
    for (size_t i = 0; i < r->ntabs; i++) {
        bool found = false;
        size_t k;
        const json_t *v;
        json_array_foreach(held, k, v) found = found || json_integer_value(v) == r->tabs[i];
        missing += !found;
    }
    log_debug("relay: %zu of our %zu tab(s) held by the relay", r->ntabs - missing, r->ntabs);
    if (!missing)
        return;
    r->reset = true;
    r->ntabs = 0;
    json_object_clear(r->children);
    json_object_clear(r->targets);
    for (size_t k = r->nreqs; k-- > 0;)
        if (!r->reqs[k].sent && r->reqs[k].tab > 0)
            fail_req(r, k, CDP_ERR_EXTENSION_NOT_CONNECTED,
                     "EXTENSION_NOT_CONNECTED: tabvisor-relay lost the session's tabs during the "
                     "call; the next call goes on in a new tab");
}

static void on_reply(struct relay_transport *r, uint64_t rid, json_t *body)
{
    size_t i = 0;
    while (i < r->nreqs && !(r->reqs[i].rid == rid && r->reqs[i].sent))
        i++;
    if (i == r->nreqs)
        return; /* failed already (the link dropped meanwhile) */
    struct req q = r->reqs[i];
    memmove(r->reqs + i, r->reqs + i + 1, (r->nreqs - i - 1) * sizeof *r->reqs);
    r->nreqs--;
    bool ok = json_is_true(json_object_get(body, "ok"));
    json_t *res = json_object_get(body, "result");
    json_t *err = json_object_get(body, "error");
    const char *code = json_string_value(json_object_get(err, "code"));
    char msg[600];
    snprintf(msg, sizeof msg, "%s: %.500s", code ? code : "BROWSER_ERROR",
             json_string_value(json_object_get(err, "message")) ?: "the relay refused");
    switch (q.kind) {
    case K_HELLO:
        log_debug("relay: hello answered: ok %d, resumed %d", ok,
                  json_is_true(json_object_get(res, "resumed")));
        if (!ok) {
            snprintf(r->err, sizeof r->err, "relay-hello refused: %.150s", msg);
            if (strstr(msg, "protocol version mismatch")) {
                /* For good: everything held fails now rather than after the hold. */
                for (size_t k = r->nreqs; k-- > 0;)
                    if (!r->reqs[k].sent)
                        fail_req(r, k, code_of(code), msg);
                return;
            }
            /* Most likely our previous connection still holds the session
             * in the relay (it hears of the drop a moment later): say it
             * again soon; what is held waits for it, until its deadline. */
            snprintf(r->refused, sizeof r->refused, "%.190s", msg);
            if (r->rehello_ms < RELAY_REHELLO_MS)
                r->rehello_ms = RELAY_REHELLO_MS;
            log_warn("relay: hello refused (%s); again in %d ms", msg, r->rehello_ms);
            r->rehello_at = mono_ms() + r->rehello_ms;
            r->rehello_ms =
                r->rehello_ms * 2 > RELAY_REHELLO_MAX_MS ? RELAY_REHELLO_MAX_MS : r->rehello_ms * 2;
            arm_timer(r, true);
            return;
        }
        r->refused[0] = '\0';
        r->rehello_ms = 0;
        r->ext = json_is_true(json_object_get(res, "extension"));
        r->unpaired = json_is_false(json_object_get(res, "paired"));
        if (r->ever_ready) {
            /* Back after a break: which of our tabs does this relay hold?
             * It knows only once its extension is connected and settled;
             * until then what is asked of the extension waits. */
            if (r->ext)
                reclaim_check(r, json_object_get(res, "tabs"));
            else
                r->reclaim = true;
        }
        bool first = !r->ever_ready;
        r->helloed = r->ever_ready = true;
        /* A restarted worker resumed its session: the tabs of its previous
         * life are of no use to it; the relay lists them for closing. */
        if (first && json_is_true(json_object_get(res, "resumed")))
            request(r, 0, K_TABS, MSG_RELAY_TABS, json_object(), 0);
        flush_held(r);
        break;
    case K_TABS: {
        size_t k;
        json_t *tab;
        json_array_foreach(json_object_get(res, "tabs"), k, tab)
        {
            long id = (long)json_integer_value(json_object_get(tab, "tabId"));
            if (id > 0 && !knows_tab(r, id))
                request(r, 0, K_IGNORE, MSG_RELAY_TAB_CLOSE, json_pack("{s:i}", "tabId", (int)id),
                        id);
        }
        break;
    }
    case K_CREATE: {
        long tab = (long)json_integer_value(json_object_get(res, "tabId"));
        if (!ok || tab <= 0) {
            reply_err(r, q.cdp_id, code_of(code), msg);
            break;
        }
        add_tab(r, tab);
        request(r, q.cdp_id, K_INFO_CREATED, MSG_RELAY_CDP,
                json_pack("{s:i, s:s}", "tabId", (int)tab, "method", "Target.getTargetInfo"), tab);
        break;
    }
    case K_INFO_CREATED:
    case K_INFO_ADOPT: {
        json_t *info = json_object_get(res, "targetInfo");
        const char *real = json_string_value(json_object_get(info, "targetId"));
        if (ok && real && strlen(real) < 64)
            json_object_set_new(r->targets, real, json_integer(q.tab));
        char tid[80];
        target_of(r, q.tab, tid, sizeof tid);
        if (q.kind == K_INFO_CREATED) {
            reply_ok(r, q.cdp_id, json_pack("{s:s}", "targetId", tid));
            break;
        }
        /* A page of ours that we did not create: a new target for tabs.c
         * to adopt (attach, set up) at its next safe point. */
        const char *url = json_string_value(json_object_get(info, "url"));
        const char *title = json_string_value(json_object_get(info, "title"));
        event(r, NULL, "Target.targetCreated",
              json_pack("{s:{s:s, s:s, s:s, s:s, s:s, s:b}}", "targetInfo", "targetId", tid, "type",
                        "page", "browserContextId", RELAY_CONTEXT_ID, "url",
                        url ? url : "about:blank", "title", title ? title : "", "attached", 0));
        break;
    }
    case K_ATTACH: {
        if (!ok) {
            reply_err(r, q.cdp_id, code_of(code), msg);
            break;
        }
        add_tab(r, q.tab);
        char sid[32];
        snprintf(sid, sizeof sid, "rs-%ld", q.tab);
        reply_ok(r, q.cdp_id, json_pack("{s:s}", "sessionId", sid));
        break;
    }
    case K_CLOSE:
    case K_IGNORE: {
        char tid[80];
        target_of(r, q.tab, tid, sizeof tid);
        forget_tab(r, q.tab);
        if (q.kind == K_IGNORE)
            break;
        /* Gone either way: a tab that was already closed is what we want. */
        if (ok || code_of(code) == CDP_ERR_TAB_NOT_FOUND) {
            reply_ok(r, q.cdp_id, json_pack("{s:b}", "success", 1));
            event(r, NULL, "Target.targetDestroyed", json_pack("{s:s}", "targetId", tid));
        } else {
            reply_err(r, q.cdp_id, code_of(code), msg);
        }
        break;
    }
    case K_BARRIER: /* never sent, so never answered */
        break;
    case K_CDP:
        if (ok)
            reply_ok(r, q.cdp_id, json_is_object(res) ? json_incref(res) : NULL);
        else
            reply_err(r, q.cdp_id, code_of(code), msg);
        break;
    }
}

/* The tab's page session ended (closed, detached, revoked). */
static void tab_ended(struct relay_transport *r, long tab, bool destroyed)
{
    char tid[80], sid[32];
    target_of(r, tab, tid, sizeof tid);
    snprintf(sid, sizeof sid, "rs-%ld", tab);
    forget_tab(r, tab);
    event(r, NULL, "Target.detachedFromTarget",
          json_pack("{s:s, s:s}", "sessionId", sid, "targetId", tid));
    if (destroyed)
        event(r, NULL, "Target.targetDestroyed", json_pack("{s:s}", "targetId", tid));
}

static void on_event(struct relay_transport *r, json_t *body)
{
    const char *kind = json_string_value(json_object_get(body, "kind"));
    long tab = (long)json_integer_value(json_object_get(body, "tabId"));
    if (!kind)
        return;
    if (!strcmp(kind, "cdp")) {
        const char *method = json_string_value(json_object_get(body, "method"));
        const char *cs = json_string_value(json_object_get(body, "cdpSession"));
        json_t *params = json_object_get(body, "params");
        if (!method || tab <= 0)
            return;
        const char *child = json_string_value(json_object_get(params, "sessionId"));
        if (child && !strcmp(method, "Target.attachedToTarget"))
            json_object_set_new(r->children, child, json_integer(tab));
        else if (child && !strcmp(method, "Target.detachedFromTarget"))
            json_object_del(r->children, child);
        char sid[32];
        snprintf(sid, sizeof sid, "rs-%ld", tab);
        event(r, cs && *cs ? cs : sid, method,
              json_is_object(params) ? json_incref(params) : json_object());
    } else if (!strcmp(kind, "removed")) {
        if (tab > 0)
            tab_ended(r, tab, true);
    } else if (!strcmp(kind, "detached") || !strcmp(kind, "revoked")) {
        if (tab > 0)
            tab_ended(r, tab, !strcmp(kind, "revoked"));
    } else if (!strcmp(kind, "opened-by") || !strcmp(kind, "granted")) {
        if (tab <= 0 || knows_tab(r, tab))
            return;
        add_tab(r, tab);
        request(r, 0, K_INFO_ADOPT, MSG_RELAY_CDP,
                json_pack("{s:i, s:s}", "tabId", (int)tab, "method", "Target.getTargetInfo"), tab);
    } else if (!strcmp(kind, "extension")) {
        if (!json_is_true(json_object_get(body, "connected"))) {
            r->breaks++;
            r->ext = false;
            return;
        }
        if (r->reclaim)
            reclaim_check(r, json_object_get(body, "tabs"));
        /* Connected, so paired: what waited for the extension goes now. */
        r->ext = true;
        r->unpaired = false;
        flush_held(r);
    }
}

static void on_message(struct relay_transport *r, uint32_t type, uint64_t id, json_t *body)
{
    if (type == MSG_RELAY_REPLY) {
        on_reply(r, id, body);
        settle_barriers(r);
    } else if (type == MSG_RELAY_EVENT)
        on_event(r, body);
}

/* A relay-batch: its messages in order, each checked against its own type's
 * table as if it had come alone. */
static void on_batch(struct relay_transport *r, json_t *body)
{
    size_t i;
    json_t *m;
    json_array_foreach(json_object_get(body, "msgs"), i, m)
    {
        json_t *t = json_object_get(m, "type"), *id = json_object_get(m, "id");
        json_t *b = json_object_get(m, "body");
        uint32_t type = (uint32_t)json_integer_value(t);
        char err[200];
        if (!json_is_integer(t) || !json_is_integer(id) || json_integer_value(id) < 0 ||
            (type != MSG_RELAY_REPLY && type != MSG_RELAY_EVENT) ||
            body_check(type, b, err, sizeof err) != 0)
            continue; /* checked at both ends: a bad one is a bug, not a reason to die */
        on_message(r, type, (uint64_t)json_integer_value(id), b);
    }
}

/* ---- link notifications (nng's threads) ---- */

static void on_pipe(nng_pipe p, nng_pipe_ev ev, void *arg)
{
    (void)p;
    struct relay_transport *r = arg;
    char c = ev == NNG_PIPE_EV_ADD_POST ? 'A' : 'R';
    ssize_t n = write(r->note[1], &c, 1);
    (void)n;
}

static void link_changes(struct relay_transport *r)
{
    char buf[64];
    ssize_t n;
    while ((n = read(r->note[0], buf, sizeof buf)) > 0) {
        for (ssize_t i = 0; i < n; i++) {
            log_debug("relay: link %s (was %s)", buf[i] == 'A' ? "up" : "down",
                      r->up ? "up" : "down");
            if (buf[i] == 'A') {
                r->up = true;
                r->helloed = false;
                r->rehello_at = 0;
                r->down_since = 0;
                send_hello(r);
                continue;
            }
            if (!r->up)
                continue;
            r->up = r->helloed = r->ext = false;
            r->down_since = mono_ms();
            r->redial_at = r->down_since + RELAY_REDIAL_MS;
            arm_timer(r, true);
            r->breaks++;
            snprintf(r->err, sizeof r->err, "relay: the connection to tabvisor-relay broke");
            /* What was sent will never be answered. */
            for (size_t k = r->nreqs; k-- > 0;)
                if (r->reqs[k].sent)
                    fail_req(r, k, CDP_ERR_EXTENSION_NOT_CONNECTED,
                             "EXTENSION_NOT_CONNECTED: the connection to tabvisor-relay broke");
        }
    }
    uint64_t ticks;
    if (read(r->tfd, &ticks, sizeof ticks) > 0 || r->nreqs)
        flush_held(r);
    send_acks(r);
}

static int rt_recv(struct cdp_transport *t, char **msg, size_t *len)
{
    struct relay_transport *r = rt_of(t);
    link_changes(r);
    for (;;) {
        if (r->nout) {
            *msg = r->out[0];
            *len = strlen(r->out[0]);
            memmove(r->out, r->out + 1, --r->nout * sizeof *r->out);
            return 0;
        }
        nng_msg *m;
        if (nng_recvmsg(r->sock, &m, NNG_FLAG_NONBLOCK) != 0) {
            send_acks(r);
            return TRANSPORT_AGAIN;
        }
        count_read(r, nng_pipe_id(nng_msg_get_pipe(m)));
        if (r->unacked >= RELAY_WINDOW)
            send_acks(r);
        struct proto_msg pm;
        char err[200];
        int rc = proto_decode(nng_msg_body(m), nng_msg_len(m), &pm, err, sizeof err);
        nng_msg_free(m);
        if (rc != 0)
            continue; /* checked at both ends: a bad one is a bug, not a reason to die */
        if (pm.type == MSG_RELAY_BATCH)
            on_batch(r, pm.body);
        else
            on_message(r, pm.type, pm.id, pm.body);
        proto_msg_clear(&pm);
    }
}

static int rt_pending(struct cdp_transport *t)
{
    return rt_of(t)->nout > 0;
}

static int rt_fd(struct cdp_transport *t)
{
    return rt_of(t)->ep;
}

static const char *rt_error(struct cdp_transport *t)
{
    return rt_of(t)->err;
}

static void rt_destroy(struct cdp_transport *t)
{
    struct relay_transport *r = rt_of(t);
    nng_close(r->sock);
    for (int i = 0; i < 2; i++)
        if (r->note[i] >= 0)
            close(r->note[i]);
    if (r->ep >= 0)
        close(r->ep);
    if (r->tfd >= 0)
        close(r->tfd);
    for (size_t i = 0; i < r->nreqs; i++)
        json_decref(r->reqs[i].body);
    free(r->reqs);
    for (size_t i = 0; i < r->nout; i++)
        free(r->out[i]);
    free(r->out);
    json_decref(r->children);
    json_decref(r->targets);
    free(r);
}

static const struct cdp_transport_ops relay_ops = {
    .send = rt_send,
    .recv = rt_recv,
    .pending = rt_pending,
    .fd = rt_fd,
    .destroy = rt_destroy,
    .error = rt_error,
};

struct cdp_transport *relay_transport_new(const char *url, const char *session_id,
                                          const char *proof, char *err, size_t errlen)
{
    struct relay_transport *r = calloc(1, sizeof *r);
    if (!r) {
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    r->base.ops = &relay_ops;
    r->note[0] = r->note[1] = r->ep = r->tfd = -1;
    r->next_rid = 1;
    r->children = json_object();
    r->targets = json_object();
    snprintf(r->session, sizeof r->session, "%s", session_id);
    snprintf(r->proof, sizeof r->proof, "%s", proof ? proof : "");
    int rv;
    const char *what = "nng_pair1_open";
    if ((rv = nng_pair1_open(&r->sock)) != 0) {
        snprintf(err, errlen, "%s: %s", what, nng_strerror(rv));
        json_decref(r->children);
        json_decref(r->targets);
        free(r);
        return NULL;
    }
    if (pipe2(r->note, O_CLOEXEC | O_NONBLOCK) < 0 ||
        (r->tfd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK)) < 0 ||
        (r->ep = epoll_create1(EPOLL_CLOEXEC)) < 0) {
        snprintf(err, errlen, "relay transport: %s", strerror(errno));
        rt_destroy(&r->base);
        return NULL;
    }
    /* Notifications before the dial, so the first connection is seen. */
    what = "options";
    /* A deep receive queue: nng's pipe then reads the relay's events off the
     * socket as they come, and the relay's writes never wait on us while we
     * are not in nng_recv. (When the relay used nng's polyamorous pair1, a
     * shallow queue made it drop what it sent next without a word.) */
    if ((rv = nng_socket_set_size(r->sock, NNG_OPT_RECVMAXSZ, PROTO_MAX_MESSAGE)) != 0 ||
        (rv = nng_socket_set_int(r->sock, NNG_OPT_RECVBUF, RELAY_RECV_QUEUE)) != 0 ||
        (rv = nng_socket_set_int(r->sock, NNG_OPT_SENDBUF, RELAY_SEND_QUEUE)) != 0 ||
        (rv = nng_socket_set_ms(r->sock, NNG_OPT_RECONNMINT, 50)) != 0 ||
        (rv = nng_socket_set_ms(r->sock, NNG_OPT_RECONNMAXT, 500)) != 0 ||
        (rv = nng_pipe_notify(r->sock, NNG_PIPE_EV_ADD_POST, on_pipe, r)) != 0 ||
        (rv = nng_pipe_notify(r->sock, NNG_PIPE_EV_REM_POST, on_pipe, r)) != 0 ||
        (rv = nng_socket_get_int(r->sock, NNG_OPT_RECVFD, &r->recv_fd)) != 0)
        goto fail;
    what = "nng_dial";
    snprintf(r->url, sizeof r->url, "%s", url);
    if (strlen(url) >= sizeof r->url) {
        rv = NNG_EINVAL;
        goto fail;
    }
    if ((rv = nng_dial(r->sock, url, &r->dialer, NNG_FLAG_NONBLOCK)) != 0)
        goto fail;
    int fds[3] = {r->recv_fd, r->note[0], r->tfd};
    for (int i = 0; i < 3; i++) {
        struct epoll_event ev = {.events = EPOLLIN, .data.fd = fds[i]};
        if (epoll_ctl(r->ep, EPOLL_CTL_ADD, fds[i], &ev) < 0) {
            snprintf(err, errlen, "epoll_ctl: %s", strerror(errno));
            rt_destroy(&r->base);
            return NULL;
        }
    }
    return &r->base;
fail:
    snprintf(err, errlen, "relay %s: %s: %s", url, what, nng_strerror(rv));
    rt_destroy(&r->base);
    return NULL;
}

unsigned relay_transport_breaks(struct cdp_transport *t)
{
    return rt_of(t)->breaks;
}

bool relay_transport_ready(struct cdp_transport *t)
{
    struct relay_transport *r = rt_of(t);
    link_changes(r);
    return r->up && r->helloed && !r->reclaim;
}

bool relay_transport_take_reset(struct cdp_transport *t)
{
    struct relay_transport *r = rt_of(t);
    bool v = r->reset;
    r->reset = false;
    return v;
}

void relay_transport_bye(struct cdp_transport *t)
{
    struct relay_transport *r = rt_of(t);
    link_changes(r);
    if (!r->up || !r->helloed)
        return;
    uint64_t rid = r->next_rid++;
    char *buf;
    size_t len;
    json_t *body = json_object();
    if (proto_encode(MSG_RELAY_BYE, rid, body, &buf, &len) == 0) {
        if (nng_send(r->sock, buf, len, 0) == 0) {
            /* Wait briefly for the answer, so the message is out before nng_close. */
            nng_socket_set_ms(r->sock, NNG_OPT_RECVTIMEO, 1000);
            for (int i = 0; i < 64; i++) {
                nng_msg *m;
                if (nng_recvmsg(r->sock, &m, 0) != 0)
                    break;
                count_read(r, nng_pipe_id(nng_msg_get_pipe(m)));
                send_acks(r);
                struct proto_msg pm = {0};
                char e[100];
                int rc = proto_decode(nng_msg_body(m), nng_msg_len(m), &pm, e, sizeof e);
                nng_msg_free(m);
                if (rc != 0)
                    continue;
                bool done = pm.type == MSG_RELAY_REPLY && pm.id == rid;
                proto_msg_clear(&pm);
                if (done)
                    break;
            }
        }
        free(buf);
    }
    json_decref(body);
}
