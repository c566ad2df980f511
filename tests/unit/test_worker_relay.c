/*
 * test_worker_relay.c - the worker's relay transport (worker/cdp/relay.c)
 * through the CDP client, against a fake relay: an nng pair1 polyamorous
 * listener on a thread that answers as tabvisor-relay does. Checks the
 * virtual browser's translations, batches, local refusals, and that a
 * broken link fails the call in flight at once.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <nng/nng.h>
#include <nng/protocol/pair1/pair.h>

#include "cdp.h"
#include "clock.h"
#include "codec.h"
#include "proto.h"

struct fake {
    char dir[64], url[128];
    nng_socket sock;
    pthread_t th;
    atomic_bool stop;
    /* When (mono ms) the fake relay closes its socket itself: an nng socket
     * is closed by the thread that uses it, never under its feet. */
    atomic_llong close_at;
    char last_method[128]; /* the method of the last relay-cdp */
    char hello_session[64];
    /* A relay-cdp "Late.answer" is answered 300 ms after it came (thread's own). */
    nng_pipe late_pipe;
    uint64_t late_id;
    long long late_at;
    /* A restarted relay: its hello says the extension is not there yet, and
     * 300 ms later its "extension" event lists the session's tabs (reclaim
     * of them; json array, borrowed). NULL: an ordinary relay. */
    json_t *reclaim;
    nng_pipe ext_pipe;
    long long ext_at;
    /* A relay without a pairing secret: its hello says paired false. */
    bool unpaired;
    /* Hellos to refuse first, as a relay does while it still counts the
     * worker's previous connection as the session's; hellos seen. */
    int refuse_hellos, hellos;
};

static void send_to(struct fake *f, nng_pipe p, uint32_t type, uint64_t id, json_t *body)
{
    char *buf;
    size_t len;
    assert_int_equal(proto_encode(type, id, body, &buf, &len), 0);
    json_decref(body);
    nng_msg *m;
    nng_msg_alloc(&m, 0);
    nng_msg_append(m, buf, len);
    free(buf);
    nng_msg_set_pipe(m, p);
    if (nng_sendmsg(f->sock, m, 0) != 0)
        nng_msg_free(m);
}

static void *fake_relay(void *arg)
{
    struct fake *f = arg;
    while (!atomic_load(&f->stop)) {
        long long at = atomic_load(&f->close_at);
        if (at && mono_ms() >= at) {
            nng_close(f->sock); /* a kill -9 of the relay */
            break;
        }
        if (f->late_at && mono_ms() >= f->late_at) {
            f->late_at = 0;
            send_to(f, f->late_pipe, MSG_RELAY_REPLY, f->late_id,
                    json_pack("{s:b, s:{s:s}}", "ok", 1, "result", "method", "Late.answer"));
        }
        if (f->ext_at && mono_ms() >= f->ext_at) {
            f->ext_at = 0;
            send_to(f, f->ext_pipe, MSG_RELAY_EVENT, 0,
                    json_pack("{s:s, s:b, s:O}", "kind", "extension", "connected", 1, "tabs",
                              f->reclaim));
        }
        nng_msg *m;
        int rv = nng_recvmsg(f->sock, &m, 0);
        if (rv == NNG_ECLOSED)
            break;
        if (rv != 0)
            continue; /* receive timeout: look at stop */
        nng_pipe p = nng_msg_get_pipe(m);
        struct proto_msg pm;
        char err[200];
        int rc = proto_decode(nng_msg_body(m), nng_msg_len(m), &pm, err, sizeof err);
        nng_msg_free(m);
        if (rc != 0)
            continue;
        json_t *b = pm.body;
        switch (pm.type) {
        case MSG_RELAY_HELLO:
            snprintf(f->hello_session, sizeof f->hello_session, "%s",
                     json_string_value(json_object_get(b, "sessionId")));
            f->hellos++;
            if (f->refuse_hellos > 0) {
                f->refuse_hellos--;
                send_to(f, p, MSG_RELAY_REPLY, pm.id,
                        json_pack("{s:b, s:{s:s, s:s}}", "ok", 0, "error", "code",
                                  "INVALID_PARAMETERS", "message",
                                  "session 'sess-h' is held by another worker"));
                break;
            }
            if (f->unpaired) {
                send_to(f, p, MSG_RELAY_REPLY, pm.id,
                        json_pack("{s:b, s:{s:b, s:b, s:b}}", "ok", 1, "result", "extension", 0,
                                  "paired", 0, "resumed", 0));
                break;
            }
            if (f->reclaim) {
                send_to(f, p, MSG_RELAY_REPLY, pm.id,
                        json_pack("{s:b, s:{s:b, s:b, s:[]}}", "ok", 1, "result", "extension", 0,
                                  "resumed", 0, "tabs"));
                f->ext_pipe = p;
                f->ext_at = mono_ms() + 300;
                break;
            }
            send_to(
                f, p, MSG_RELAY_REPLY, pm.id,
                json_pack("{s:b, s:{s:b, s:b}}", "ok", 1, "result", "extension", 1, "resumed", 0));
            break;
        case MSG_RELAY_TAB_CREATE:
            send_to(f, p, MSG_RELAY_REPLY, pm.id,
                    json_pack("{s:b, s:{s:i}}", "ok", 1, "result", "tabId", 7));
            break;
        case MSG_RELAY_TAB_ATTACH:
        case MSG_RELAY_TAB_CLOSE:
            send_to(f, p, MSG_RELAY_REPLY, pm.id, json_pack("{s:b, s:{}}", "ok", 1, "result"));
            break;
        case MSG_RELAY_CDP: {
            const char *method = json_string_value(json_object_get(b, "method"));
            snprintf(f->last_method, sizeof f->last_method, "%s", method);
            assert_int_equal(json_integer_value(json_object_get(b, "tabId")), 7);
            if (!strcmp(method, "Target.getTargetInfo")) {
                send_to(f, p, MSG_RELAY_REPLY, pm.id,
                        json_pack("{s:b, s:{s:{s:s, s:s}}}", "ok", 1, "result", "targetInfo",
                                  "targetId", "FRAME7", "url", "about:blank"));
            } else if (!strcmp(method, "Runtime.evaluate")) {
                /* An event and the answer in one batch, in this order. */
                json_t *msgs = json_pack(
                    "[{s:i, s:i, s:{s:s, s:i, s:s, s:{s:s}}}, {s:i, s:I, s:{s:b, s:{s:i}}}]",
                    "type", MSG_RELAY_EVENT, "id", 0, "body", "kind", "cdp", "tabId", 7, "method",
                    "Page.lifecycleEvent", "params", "name", "load", "type", MSG_RELAY_REPLY, "id",
                    (json_int_t)pm.id, "body", "ok", 1, "result", "value", 2);
                send_to(f, p, MSG_RELAY_BATCH, 0, json_pack("{s:o}", "msgs", msgs));
            } else if (!strcmp(method, "Late.answer")) {
                f->late_pipe = p;
                f->late_id = pm.id;
                f->late_at = mono_ms() + 300;
            } else if (!strcmp(method, "Slow.never")) {
                /* no answer: the test breaks the link */
            } else if (!strcmp(method, "Gone.tab")) {
                send_to(f, p, MSG_RELAY_REPLY, pm.id,
                        json_pack("{s:b, s:{s:s, s:s}}", "ok", 0, "error", "code", "TAB_NOT_FOUND",
                                  "message", "not this session's tab"));
            } else {
                send_to(f, p, MSG_RELAY_REPLY, pm.id,
                        json_pack("{s:b, s:{s:s}}", "ok", 1, "result", "method", method));
            }
            break;
        }
        default:
            break;
        }
        proto_msg_clear(&pm);
    }
    return NULL;
}

struct ev_log {
    int lifecycle;
    char session[32];
};

static void on_event(void *ud, const char *session, const char *method, json_t *params)
{
    struct ev_log *e = ud;
    (void)params;
    if (!strcmp(method, "Page.lifecycleEvent")) {
        e->lifecycle++;
        snprintf(e->session, sizeof e->session, "%s", session ? session : "");
    }
}

static void test_virtual_browser(void **state)
{
    (void)state;
    struct fake f = {0};
    snprintf(f.dir, sizeof f.dir, "/tmp/tvrelayXXXXXX");
    assert_non_null(mkdtemp(f.dir));
    snprintf(f.url, sizeof f.url, "ipc://%s/relay.ipc", f.dir);
    assert_int_equal(nng_pair1_open_poly(&f.sock), 0);
    nng_socket_set_ms(f.sock, NNG_OPT_RECVTIMEO, 20);
    assert_int_equal(nng_listen(f.sock, f.url, NULL, 0), 0);
    pthread_create(&f.th, NULL, fake_relay, &f);

    char err[200];
    struct cdp_transport *t =
        relay_transport_new(f.url, "sess-1", "0123456789abcdef0123456789abcdef", err, sizeof err);
    assert_non_null(t);
    struct cdp *c = cdp_new(t);
    struct ev_log ev = {0};
    cdp_set_event_handler(c, on_event, &ev);
    long long dl = mono_ms() + 5000;
    json_t *r = NULL;

    /* The context is local; the tab is the relay's, known by its real target id. */
    assert_int_equal(cdp_call(c, NULL, "Target.createBrowserContext", NULL, &r, dl), CDP_OK);
    assert_non_null(json_string_value(json_object_get(r, "browserContextId")));
    json_decref(r);
    json_t *p = json_pack("{s:s}", "url", "about:blank");
    assert_int_equal(cdp_call(c, NULL, "Target.createTarget", p, &r, dl), CDP_OK);
    json_decref(p);
    assert_string_equal(json_string_value(json_object_get(r, "targetId")), "FRAME7");
    json_decref(r);
    assert_string_equal(f.hello_session, "sess-1");
    assert_true(relay_transport_ready(t));
    p = json_pack("{s:s, s:b}", "targetId", "FRAME7", "flatten", 1);
    assert_int_equal(cdp_call(c, NULL, "Target.attachToTarget", p, &r, dl), CDP_OK);
    json_decref(p);
    assert_string_equal(json_string_value(json_object_get(r, "sessionId")), "rs-7");
    json_decref(r);

    /* A batch: the event is dispatched on the tab's session before the answer. */
    assert_int_equal(cdp_call(c, "rs-7", "Runtime.evaluate", NULL, &r, dl), CDP_OK);
    assert_int_equal(json_integer_value(json_object_get(r, "value")), 2);
    json_decref(r);
    assert_int_equal(ev.lifecycle, 1);
    assert_string_equal(ev.session, "rs-7");

    /* Every cookie of the profile: only the page's. */
    assert_int_equal(cdp_call(c, "rs-7", "Network.getAllCookies", NULL, &r, dl), CDP_OK);
    assert_string_equal(json_string_value(json_object_get(r, "method")), "Network.getCookies");
    json_decref(r);

    /* Refused here, at once, with our codes. */
    assert_int_equal(cdp_call(c, NULL, "Browser.getVersion", NULL, NULL, dl), CDP_ERROR);
    assert_int_equal(cdp_last_error_code(c), CDP_ERR_NOT_SUPPORTED);
    assert_int_equal(cdp_call(c, "rs-7", "Network.setCookies", NULL, NULL, dl), CDP_ERROR);
    assert_int_equal(cdp_last_error_code(c), CDP_ERR_NOT_SUPPORTED);
    assert_int_equal(cdp_call(c, "rs-7", "Storage.getCookies", NULL, NULL, dl), CDP_ERROR);
    assert_int_equal(cdp_last_error_code(c), CDP_ERR_NOT_SUPPORTED);
    assert_int_equal(cdp_call(c, "nobody", "Runtime.evaluate", NULL, NULL, dl), CDP_ERROR);
    assert_int_equal(cdp_last_error_code(c), CDP_ERR_TAB_NOT_FOUND);
    /* The relay's refusal keeps its code. */
    assert_int_equal(cdp_call(c, "rs-7", "Gone.tab", NULL, NULL, dl), CDP_ERROR);
    assert_int_equal(cdp_last_error_code(c), CDP_ERR_TAB_NOT_FOUND);
    /* Never paused in extension mode: answered here, but only after the
     * tab's earlier commands (the set-up), as Chromium does. */
    assert_int_equal(cdp_call(c, "rs-7", "Runtime.runIfWaitingForDebugger", NULL, NULL, dl),
                     CDP_OK);
    assert_int_equal(cdp_send(c, "rs-7", "Late.answer", NULL), CDP_OK);
    long long b0 = mono_ms();
    assert_int_equal(cdp_call(c, "rs-7", "Runtime.runIfWaitingForDebugger", NULL, NULL, dl),
                     CDP_OK);
    assert_true(mono_ms() - b0 >= 250);

    /* The relay goes away mid-call: the call fails at once, the break is counted. */
    unsigned breaks = relay_transport_breaks(t);
    atomic_store(&f.close_at, mono_ms() + 200);
    long long t0 = mono_ms();
    assert_int_equal(cdp_call(c, "rs-7", "Slow.never", NULL, NULL, mono_ms() + 10000), CDP_ERROR);
    assert_int_equal(cdp_last_error_code(c), CDP_ERR_EXTENSION_NOT_CONNECTED);
    assert_true(mono_ms() - t0 < 1000);
    assert_int_equal(relay_transport_breaks(t), breaks + 1);
    assert_false(relay_transport_ready(t));
    atomic_store(&f.stop, true);
    pthread_join(f.th, NULL);
    /* With no relay, a command waits for one until just before its
     * deadline, then fails with the relay's code, not as a timeout. */
    long long w0 = mono_ms();
    assert_int_equal(cdp_call(c, "rs-7", "Runtime.evaluate", NULL, NULL, mono_ms() + 400),
                     CDP_ERROR);
    assert_int_equal(cdp_last_error_code(c), CDP_ERR_EXTENSION_NOT_CONNECTED);
    assert_true(mono_ms() - w0 >= 200);
    cdp_free(c);
    char path[160];
    snprintf(path, sizeof path, "%s/relay.ipc", f.dir);
    unlink(path);
    rmdir(f.dir);
}

static void fake_start(struct fake *f, const char *dir, json_t *reclaim)
{
    memset(f, 0, sizeof *f);
    snprintf(f->dir, sizeof f->dir, "%s", dir);
    snprintf(f->url, sizeof f->url, "ipc://%s/relay.ipc", dir);
    f->reclaim = reclaim;
    assert_int_equal(nng_pair1_open_poly(&f->sock), 0);
    nng_socket_set_ms(f->sock, NNG_OPT_RECVTIMEO, 20);
    assert_int_equal(nng_listen(f->sock, f->url, NULL, 0), 0);
    pthread_create(&f->th, NULL, fake_relay, f);
}

/* The relay is killed and started again: is the worker's tab still its? */
static void kill_and_restart(struct fake *f, struct cdp_transport *t, json_t *reclaim)
{
    char dir[64];
    snprintf(dir, sizeof dir, "%s", f->dir);
    atomic_store(&f->close_at, mono_ms());
    pthread_join(f->th, NULL);
    long long until = mono_ms() + 2000;
    while (relay_transport_ready(t) && mono_ms() < until)
        usleep(10000);
    assert_false(relay_transport_ready(t));
    fake_start(f, dir, reclaim);
}

static int ready_cond(void *ud)
{
    return relay_transport_ready(ud);
}

/* Pump the client (as the worker does before a call) until the link is
 * ready or ms pass. */
static bool wait_ready(struct cdp *c, struct cdp_transport *t, long long ms)
{
    cdp_wait(c, ready_cond, t, mono_ms() + ms);
    return relay_transport_ready(t);
}

/* A restarted relay that the extension told about our tab (its claims):
 * the worker waits for the relay to say so, then goes on in the same tab.
 * One that does not list the tab: the worker starts over (reset). */
static void test_reclaim_after_restart(void **state)
{
    (void)state;
    char dir[64];
    snprintf(dir, sizeof dir, "/tmp/tvrelayXXXXXX");
    assert_non_null(mkdtemp(dir));
    struct fake f;
    fake_start(&f, dir, NULL);
    char err[200];
    struct cdp_transport *t =
        relay_transport_new(f.url, "sess-r", "0123456789abcdef0123456789abcdef", err, sizeof err);
    assert_non_null(t);
    struct cdp *c = cdp_new(t);
    long long dl = mono_ms() + 5000;
    json_t *r = NULL, *p = json_pack("{s:s}", "url", "about:blank");
    assert_int_equal(cdp_call(c, NULL, "Target.createTarget", p, &r, dl), CDP_OK);
    json_decref(p);
    json_decref(r);
    p = json_pack("{s:s, s:b}", "targetId", "FRAME7", "flatten", 1);
    assert_int_equal(cdp_call(c, NULL, "Target.attachToTarget", p, NULL, dl), CDP_OK);
    json_decref(p);

    json_t *held = json_pack("[i]", 7), *none = json_array();
    kill_and_restart(&f, t, held);
    long long t0 = mono_ms();
    assert_true(wait_ready(c, t, 3000));
    /* Not ready on the hello alone: only once the tabs were listed. */
    assert_true(mono_ms() - t0 >= 250);
    assert_false(relay_transport_take_reset(t));
    assert_int_equal(cdp_call(c, "rs-7", "Page.reload", NULL, &r, mono_ms() + 5000), CDP_OK);
    assert_string_equal(json_string_value(json_object_get(r, "method")), "Page.reload");
    json_decref(r);

    /* A call made while the restarted relay waits for its extension waits
     * too, and goes on in the same tab once the extension is back. */
    kill_and_restart(&f, t, held);
    t0 = mono_ms();
    assert_int_equal(cdp_call(c, "rs-7", "Page.reload", NULL, &r, mono_ms() + 5000), CDP_OK);
    assert_true(mono_ms() - t0 >= 250);
    assert_false(relay_transport_take_reset(t));
    json_decref(r);

    kill_and_restart(&f, t, none);
    assert_true(wait_ready(c, t, 3000));
    assert_true(relay_transport_take_reset(t));

    atomic_store(&f.stop, true);
    pthread_join(f.th, NULL);
    cdp_free(c);
    json_decref(held);
    json_decref(none);
    char path[160];
    snprintf(path, sizeof path, "%s/relay.ipc", dir);
    unlink(path);
    rmdir(dir);
}

/* A fake relay in a fresh directory and a worker's transport to it through
 * a CDP client; tweak(f) sets the fake's behaviour before the worker says
 * hello. fake_end stops both and removes the directory. */
struct fake_link {
    char dir[64];
    struct fake f;
    struct cdp_transport *t;
    struct cdp *c;
};

static void fake_link_start(struct fake_link *l, const char *session, void (*tweak)(struct fake *))
{
    snprintf(l->dir, sizeof l->dir, "/tmp/tvrelayXXXXXX");
    assert_non_null(mkdtemp(l->dir));
    fake_start(&l->f, l->dir, NULL);
    tweak(&l->f);
    char err[200];
    l->t =
        relay_transport_new(l->f.url, session, "0123456789abcdef0123456789abcdef", err, sizeof err);
    assert_non_null(l->t);
    l->c = cdp_new(l->t);
}

static void fake_link_end(struct fake_link *l)
{
    atomic_store(&l->f.stop, true);
    pthread_join(l->f.th, NULL);
    cdp_free(l->c);
    char path[160];
    snprintf(path, sizeof path, "%s/relay.ipc", l->dir);
    unlink(path);
    rmdir(l->dir);
}

static void unpaired(struct fake *f)
{
    f->unpaired = true;
}

static void refuses_two_hellos(struct fake *f)
{
    f->refuse_hellos = 2;
}

/* A relay that has no pairing secret can have no extension: what needs
 * one fails at once with EXTENSION_NOT_CONNECTED, not at the deadline. */
static void test_unpaired_relay_fails_at_once(void **state)
{
    (void)state;
    struct fake_link l;
    fake_link_start(&l, "sess-u", unpaired);
    json_t *p = json_pack("{s:s}", "url", "about:blank");
    long long t0 = mono_ms();
    assert_int_equal(cdp_call(l.c, NULL, "Target.createTarget", p, NULL, mono_ms() + 10000),
                     CDP_ERROR);
    json_decref(p);
    assert_int_equal(cdp_last_error_code(l.c), CDP_ERR_EXTENSION_NOT_CONNECTED);
    assert_true(mono_ms() - t0 < 3000);
    fake_link_end(&l);
}

/* A refused hello is said again (the relay had not yet heard that the
 * previous connection dropped); the call made meanwhile waits and works. */
static void test_refused_hello_is_said_again(void **state)
{
    (void)state;
    struct fake_link l;
    fake_link_start(&l, "sess-h", refuses_two_hellos);
    json_t *p = json_pack("{s:s}", "url", "about:blank"), *r = NULL;
    assert_int_equal(cdp_call(l.c, NULL, "Target.createTarget", p, &r, mono_ms() + 5000), CDP_OK);
    json_decref(p);
    assert_string_equal(json_string_value(json_object_get(r, "targetId")), "FRAME7");
    json_decref(r);
    assert_int_equal(l.f.hellos, 3);
    assert_true(relay_transport_ready(l.t));
    fake_link_end(&l);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_virtual_browser),
        cmocka_unit_test(test_reclaim_after_restart),
        cmocka_unit_test(test_unpaired_relay_fails_at_once),
        cmocka_unit_test(test_refused_hello_is_said_again),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
