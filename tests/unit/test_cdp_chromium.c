/*
 * test_cdp_chromium.c - the CDP client (worker/cdp/cdp.c) and the WebSocket
 * transport (worker/cdp/ws.c) against a real headless Chromium.
 *
 * The group setup launches Chromium the way the supervisor's shared mode
 * does (port 0 on 127.0.0.1, hermetic HOME/XDG, port read from
 * DevToolsActivePort); the tests run in order on one connection and share
 * the attached page. Chromium missing is a failure, not a skip: this is the
 * test that proves the worker can talk to a browser at all.
 *
 * TV_CHROMIUM overrides the browser path.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cdp.h"
#include "chromium_launch.h"
#include "clock.h"
#include "transport.h"

#define PAGE_TITLE "tabvisor cdp test"

struct events {
    const char *session_id; /* the page session we watch */
    int load_fired;
    int console_calls;
    /* nested-call test */
    bool nest;
    bool in_handler;
    int nested_rc;
    long long nested_value;
};

static struct {
    struct chromium_proc proc;
    struct cdp *c;
    char *context_id;
    char *target_id;
    char *session_id;
    struct events ev;
} B = {.proc = {.pid = -1}};

static void msleep(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
        ;
}

static int launch_browser(void **state)
{
    (void)state;
    return chromium_launch(&B.proc);
}

static int stop_browser(void **state)
{
    (void)state;
    cdp_free(B.c);
    B.c = NULL;
    free(B.context_id);
    free(B.target_id);
    free(B.session_id);
    chromium_stop(&B.proc);
    return 0;
}

/* ---- helpers ---- */

static void on_event(void *ud, const char *session_id, const char *method, json_t *params)
{
    struct events *e = ud;
    assert_non_null(params);
    bool ours = session_id && e->session_id && strcmp(session_id, e->session_id) == 0;
    if (ours && strcmp(method, "Page.loadEventFired") == 0)
        e->load_fired++;
    if (ours && strcmp(method, "Runtime.consoleAPICalled") == 0) {
        e->console_calls++;
        if (e->nest && !e->in_handler) {
            /* A command from inside the handler, slow enough that the outer
             * call's response arrives while this one waits. */
            e->in_handler = true;
            json_t *p = json_pack("{s:s,s:b,s:b}", "expression",
                                  "new Promise(r => setTimeout(() => r(2 + 2), 300))",
                                  "awaitPromise", 1, "returnByValue", 1);
            json_t *res = NULL;
            e->nested_rc =
                cdp_call(B.c, session_id, "Runtime.evaluate", p, &res, mono_ms() + 10000);
            e->nested_value =
                json_integer_value(json_object_get(json_object_get(res, "result"), "value"));
            json_decref(res);
            json_decref(p);
            e->in_handler = false;
        }
    }
}

static int load_fired(void *ud)
{
    return ((struct events *)ud)->load_fired > 0;
}

static void require_connected(void)
{
    if (!B.c || !B.session_id)
        fail_msg("no browser connection (an earlier test failed)");
}

/* Runtime.evaluate on the page; returns the whole result (new ref). */
static int evaluate(const char *expr, bool await, json_t **result, long long deadline)
{
    json_t *p =
        json_pack("{s:s,s:b,s:b}", "expression", expr, "awaitPromise", await, "returnByValue", 1);
    int rc = cdp_call(B.c, B.session_id, "Runtime.evaluate", p, result, deadline);
    json_decref(p);
    return rc;
}

static json_t *eval_value(json_t *result)
{
    return json_object_get(json_object_get(result, "result"), "value");
}

static void check_ok(int rc, const char *what)
{
    if (rc != CDP_OK)
        fail_msg("%s: status %d: %s", what, rc, cdp_last_error(B.c));
}

/* ---- tests ---- */

static void test_connect_and_attach(void **state)
{
    (void)state;
    char err[256];
    json_t *r = NULL, *p;
    long long t0 = mono_ms();
    struct cdp_transport *t =
        ws_transport_connect(B.proc.ws_url, mono_ms() + 10000, err, sizeof err);
    if (!t)
        fail_msg("ws_transport_connect(%s): %s", B.proc.ws_url, err);
    long long t_connect = mono_ms();
    B.c = cdp_new(t);
    assert_non_null(B.c);
    B.ev.session_id = NULL;
    cdp_set_event_handler(B.c, on_event, &B.ev);

    check_ok(cdp_call(B.c, NULL, "Browser.getVersion", NULL, &r, mono_ms() + 10000),
             "Browser.getVersion");
    const char *product = json_string_value(json_object_get(r, "product"));
    assert_non_null(product);
    assert_non_null(strstr(product, "Chrome"));
    print_message("browser: %s, protocol %s\n", product,
                  json_string_value(json_object_get(r, "protocolVersion")));
    json_decref(r);
    long long t_version = mono_ms();

    p = json_pack("{s:b}", "disposeOnDetach", 1);
    check_ok(cdp_call(B.c, NULL, "Target.createBrowserContext", p, &r, mono_ms() + 10000),
             "Target.createBrowserContext");
    json_decref(p);
    B.context_id = strdup(json_string_value(json_object_get(r, "browserContextId")));
    json_decref(r);
    long long t_context = mono_ms();

    p = json_pack("{s:s,s:s}", "url", "about:blank", "browserContextId", B.context_id);
    check_ok(cdp_call(B.c, NULL, "Target.createTarget", p, &r, mono_ms() + 10000),
             "Target.createTarget");
    json_decref(p);
    B.target_id = strdup(json_string_value(json_object_get(r, "targetId")));
    json_decref(r);
    long long t_target = mono_ms();

    p = json_pack("{s:s,s:b}", "targetId", B.target_id, "flatten", 1);
    check_ok(cdp_call(B.c, NULL, "Target.attachToTarget", p, &r, mono_ms() + 10000),
             "Target.attachToTarget");
    json_decref(p);
    const char *sid = json_string_value(json_object_get(r, "sessionId"));
    assert_non_null(sid);
    B.session_id = strdup(sid);
    json_decref(r);
    long long t_attach = mono_ms();
    B.ev.session_id = B.session_id;

    print_message("connect %lld ms, getVersion %lld ms, createBrowserContext %lld ms, "
                  "createTarget %lld ms, attachToTarget %lld ms\n",
                  t_connect - t0, t_version - t_connect, t_context - t_version,
                  t_target - t_context, t_attach - t_target);
    print_message("connect+createBrowserContext+createTarget+attach: %lld ms\n",
                  (t_connect - t0) + (t_attach - t_version));
}

/* Does the browser still list this browser context? */
static bool context_exists(const char *id)
{
    json_t *r = NULL;
    check_ok(cdp_call(B.c, NULL, "Target.getBrowserContexts", NULL, &r, mono_ms() + 10000),
             "Target.getBrowserContexts");
    bool found = false;
    size_t i;
    json_t *v;
    json_array_foreach(json_object_get(r, "browserContextIds"), i, v)
    {
        if (strcmp(json_string_value(v), id) == 0)
            found = true;
    }
    json_decref(r);
    return found;
}

/*
 * What a second worker does against the shared, warmed-up browser: its own
 * connection, context, page and session. Also proves disposeOnDetach: when
 * that connection goes, so does its context.
 */
static void test_second_session(void **state)
{
    (void)state;
    require_connected();
    char err[256];
    json_t *r = NULL, *p;
    long long t0 = mono_ms();
    struct cdp_transport *t =
        ws_transport_connect(B.proc.ws_url, mono_ms() + 10000, err, sizeof err);
    if (!t)
        fail_msg("second connection: %s", err);
    struct cdp *c2 = cdp_new(t);
    assert_non_null(c2);
    long long t_connect = mono_ms();

    p = json_pack("{s:b}", "disposeOnDetach", 1);
    assert_int_equal(cdp_call(c2, NULL, "Target.createBrowserContext", p, &r, mono_ms() + 10000),
                     CDP_OK);
    json_decref(p);
    char *ctx = strdup(json_string_value(json_object_get(r, "browserContextId")));
    json_decref(r);
    long long t_context = mono_ms();

    p = json_pack("{s:s,s:s}", "url", "about:blank", "browserContextId", ctx);
    assert_int_equal(cdp_call(c2, NULL, "Target.createTarget", p, &r, mono_ms() + 10000), CDP_OK);
    json_decref(p);
    p = json_pack("{s:O,s:b}", "targetId", json_object_get(r, "targetId"), "flatten", 1);
    json_decref(r);
    long long t_target = mono_ms();
    assert_int_equal(cdp_call(c2, NULL, "Target.attachToTarget", p, &r, mono_ms() + 10000), CDP_OK);
    json_decref(p);
    assert_non_null(json_string_value(json_object_get(r, "sessionId")));
    json_decref(r);
    long long t_attach = mono_ms();
    print_message("warm session: connect %lld ms, createBrowserContext %lld ms, createTarget %lld "
                  "ms, attachToTarget %lld ms; total %lld ms\n",
                  t_connect - t0, t_context - t_connect, t_target - t_context, t_attach - t_target,
                  t_attach - t0);

    assert_true(context_exists(ctx));
    cdp_free(c2);
    /* The browser disposes of the context once it sees the socket close. */
    long long deadline = mono_ms() + 5000;
    while (context_exists(ctx) && mono_ms() < deadline)
        msleep(20);
    assert_false(context_exists(ctx));
    free(ctx);
}

static void test_navigate_and_title(void **state)
{
    (void)state;
    require_connected();
    json_t *r = NULL;
    check_ok(cdp_call(B.c, B.session_id, "Page.enable", NULL, NULL, mono_ms() + 10000),
             "Page.enable");
    B.ev.load_fired = 0;
    json_t *p = json_pack("{s:s}", "url",
                          "data:text/html,%3Ctitle%3Etabvisor%20cdp%20test%3C/title%3E%3Cp%3Ehi");
    check_ok(cdp_call(B.c, B.session_id, "Page.navigate", p, &r, mono_ms() + 10000),
             "Page.navigate");
    json_decref(p);
    assert_null(json_object_get(r, "errorText"));
    json_decref(r);
    check_ok(cdp_wait(B.c, load_fired, &B.ev, mono_ms() + 10000),
             "waiting for Page.loadEventFired");
    assert_int_equal(B.ev.load_fired, 1);

    check_ok(evaluate("document.title", false, &r, mono_ms() + 10000), "document.title");
    assert_string_equal(json_string_value(eval_value(r)), PAGE_TITLE);
    json_decref(r);

    /* The worker's idle loop: poll cdp_fd() and dispatch with zero-length
     * waits. The load event of a reload must arrive that way too. */
    B.ev.load_fired = 0;
    check_ok(cdp_call(B.c, B.session_id, "Page.reload", NULL, NULL, mono_ms() + 10000),
             "Page.reload");
    long long deadline = mono_ms() + 10000;
    while (!B.ev.load_fired && mono_ms() < deadline) {
        int rc = cdp_wait(B.c, NULL, NULL, mono_ms());
        assert_int_equal(rc, CDP_TIMEOUT);
        if (B.ev.load_fired)
            break;
        struct pollfd pfd = {.fd = cdp_fd(B.c), .events = POLLIN};
        poll(&pfd, 1, 100);
    }
    assert_int_equal(B.ev.load_fired, 1);
}

static void test_large_messages(void **state)
{
    (void)state;
    require_connected();
    json_t *r = NULL;
    size_t big = 5u << 20;

    /* Receive: a 5 MiB response, many TCP reads, one 64-bit-length frame. */
    long long t0 = mono_ms();
    check_ok(evaluate("'x'.repeat(5 * 1024 * 1024)", false, &r, mono_ms() + 30000), "5 MiB result");
    long long t1 = mono_ms();
    json_t *v = eval_value(r);
    assert_true(json_is_string(v));
    assert_int_equal(json_string_length(v), big);
    const char *s = json_string_value(v);
    assert_true(s[0] == 'x' && s[big / 2] == 'x' && s[big - 1] == 'x');
    json_decref(r);

    /* Send: a 5 MiB command (masked, written in pieces into a full socket). */
    char *expr = malloc(big + 16);
    assert_non_null(expr);
    expr[0] = '\'';
    memset(expr + 1, 'y', big);
    strcpy(expr + 1 + big, "'.length");
    long long t2 = mono_ms();
    check_ok(evaluate(expr, false, &r, mono_ms() + 30000), "5 MiB command");
    long long t3 = mono_ms();
    free(expr);
    assert_int_equal(json_integer_value(eval_value(r)), big);
    json_decref(r);
    print_message("5 MiB response in %lld ms, 5 MiB command in %lld ms\n", t1 - t0, t3 - t2);
}

static void test_unknown_method_and_bad_params(void **state)
{
    (void)state;
    require_connected();
    json_t *r = (json_t *)1;
    int rc = cdp_call(B.c, NULL, "Tabvisor.noSuchMethod", NULL, &r, mono_ms() + 10000);
    assert_int_equal(rc, CDP_ERROR);
    assert_null(r);
    print_message("unknown method: %d %s\n", cdp_last_error_code(B.c), cdp_last_error(B.c));
    assert_non_null(strstr(cdp_last_error(B.c), "Tabvisor.noSuchMethod"));
    assert_int_equal(cdp_last_error_code(B.c), -32601);

    /* error.data is appended to the message. */
    json_t *p = json_object();
    rc = cdp_call(B.c, B.session_id, "Page.navigate", p, &r, mono_ms() + 10000);
    json_decref(p);
    assert_int_equal(rc, CDP_ERROR);
    print_message("bad params: %s\n", cdp_last_error(B.c));
    assert_non_null(strstr(cdp_last_error(B.c), "url"));

    /* The connection is fine afterwards. */
    check_ok(cdp_call(B.c, NULL, "Browser.getVersion", NULL, NULL, mono_ms() + 10000),
             "getVersion after errors");
}

static void test_timeout_then_usable(void **state)
{
    (void)state;
    require_connected();
    json_t *r = NULL;
    long long t0 = mono_ms();
    int rc = evaluate("new Promise(r => setTimeout(r, 2000))", true, &r, mono_ms() + 50);
    long long waited = mono_ms() - t0;
    assert_int_equal(rc, CDP_TIMEOUT);
    assert_null(r);
    assert_true(waited >= 45 && waited < 1000);

    /* The next call waits past the moment the abandoned answer arrives
     * (~2000 ms): it must be dropped, not mistaken for ours. */
    check_ok(
        evaluate("new Promise(r => setTimeout(() => r(42), 2300))", true, &r, mono_ms() + 10000),
        "call after a timeout");
    assert_int_equal(json_integer_value(eval_value(r)), 42);
    json_decref(r);

    /* An already-passed deadline fails at once without sending. */
    assert_int_equal(evaluate("1", false, &r, mono_ms() - 1), CDP_TIMEOUT);
    check_ok(evaluate("1 + 1", false, &r, mono_ms() + 10000), "quick call");
    assert_int_equal(json_integer_value(eval_value(r)), 2);
    json_decref(r);
}

struct intr {
    int fd;
    int calls;
    int answer;
};

static int on_interrupt(void *ud)
{
    struct intr *in = ud;
    char buf[16];
    while (read(in->fd, buf, sizeof buf) > 0)
        ;
    in->calls++;
    return in->answer;
}

static void test_interrupt_fd(void **state)
{
    (void)state;
    require_connected();
    int pfd[2];
    assert_int_equal(pipe2(pfd, O_CLOEXEC | O_NONBLOCK), 0);
    struct intr in = {.fd = pfd[0]};
    cdp_set_interrupt(B.c, pfd[0], on_interrupt, &in);
    json_t *r = NULL;

    /* The callback says stop: the call ends at once. */
    in.answer = 1;
    assert_int_equal(write(pfd[1], "c", 1), 1);
    long long t0 = mono_ms();
    int rc = evaluate("new Promise(r => setTimeout(() => r(1), 500))", true, &r, mono_ms() + 10000);
    assert_int_equal(rc, CDP_INTERRUPTED);
    assert_true(mono_ms() - t0 < 400);
    assert_int_equal(in.calls, 1);
    assert_null(r);

    /* The callback says carry on (say, a heartbeat): the call completes. */
    in.answer = 0;
    assert_int_equal(write(pfd[1], "h", 1), 1);
    check_ok(evaluate("new Promise(r => setTimeout(() => r(7), 200))", true, &r, mono_ms() + 10000),
             "call with a declined interrupt");
    assert_int_equal(in.calls, 2);
    assert_int_equal(json_integer_value(eval_value(r)), 7);
    json_decref(r);

    /* Without a callback, readability alone interrupts (cdp_wait too). */
    cdp_set_interrupt(B.c, pfd[0], NULL, NULL);
    assert_int_equal(write(pfd[1], "x", 1), 1);
    assert_int_equal(cdp_wait(B.c, NULL, NULL, mono_ms() + 5000), CDP_INTERRUPTED);

    cdp_set_interrupt(B.c, -1, NULL, NULL);
    close(pfd[0]);
    close(pfd[1]);
    check_ok(evaluate("3", false, &r, mono_ms() + 10000), "call after interrupts");
    assert_int_equal(json_integer_value(eval_value(r)), 3);
    json_decref(r);
}

static void test_nested_call_from_handler(void **state)
{
    (void)state;
    require_connected();
    json_t *r = NULL;
    check_ok(cdp_call(B.c, B.session_id, "Runtime.enable", NULL, NULL, mono_ms() + 10000),
             "Runtime.enable");
    B.ev.nest = true;
    B.ev.console_calls = 0;
    B.ev.nested_rc = 99;
    /* console.log fires an event before the response; the handler's own
     * 300 ms call is still waiting when our response comes. */
    long long t0 = mono_ms();
    check_ok(evaluate("console.log('nested'), 5", false, &r, mono_ms() + 10000),
             "outer call of a nested pair");
    long long took = mono_ms() - t0;
    B.ev.nest = false;
    assert_int_equal(json_integer_value(eval_value(r)), 5);
    json_decref(r);
    assert_int_equal(B.ev.console_calls, 1);
    assert_int_equal(B.ev.nested_rc, CDP_OK);
    assert_int_equal(B.ev.nested_value, 4);
    assert_true(took >= 250); /* the handler ran inside the outer call */
    check_ok(cdp_call(B.c, B.session_id, "Runtime.disable", NULL, NULL, mono_ms() + 10000),
             "Runtime.disable");
}

static void test_lone_surrogate(void **state)
{
    (void)state;
    require_connected();
    json_t *r = NULL;
    /* JavaScript strings may hold unpaired surrogates; the response must
     * still be readable (they become U+FFFD). A proper pair is kept. */
    check_ok(evaluate("'a\\uD800b\\uDC00c\\uD83D\\uDE00d'", false, &r, mono_ms() + 10000),
             "string with lone surrogates");
    assert_string_equal(json_string_value(eval_value(r)), "a\xEF\xBF\xBD"
                                                          "b\xEF\xBF\xBD"
                                                          "c\xF0\x9F\x98\x80"
                                                          "d");
    json_decref(r);
}

static void test_cdp_send_and_close(void **state)
{
    (void)state;
    require_connected();
    /* Fire and forget; its answer must not confuse the next call. */
    json_t *p = json_pack("{s:s}", "expression", "'fire and forget'");
    assert_int_equal(cdp_send(B.c, B.session_id, "Runtime.evaluate", p), CDP_OK);
    json_decref(p);
    json_t *r = NULL;
    check_ok(evaluate("'second'", false, &r, mono_ms() + 10000), "call after cdp_send");
    assert_string_equal(json_string_value(eval_value(r)), "second");
    json_decref(r);

    /* Closing the browser: the connection reports CDP_CLOSED, not a hang. */
    int rc = cdp_call(B.c, NULL, "Browser.close", NULL, NULL, mono_ms() + 10000);
    if (rc == CDP_OK)
        rc = cdp_wait(B.c, NULL, NULL, mono_ms() + 10000);
    assert_int_equal(rc, CDP_CLOSED);
    print_message("after Browser.close: %s\n", cdp_last_error(B.c));
    assert_int_equal(cdp_call(B.c, NULL, "Browser.getVersion", NULL, NULL, mono_ms() + 1000),
                     CDP_CLOSED);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_connect_and_attach),
        cmocka_unit_test(test_second_session),
        cmocka_unit_test(test_navigate_and_title),
        cmocka_unit_test(test_large_messages),
        cmocka_unit_test(test_unknown_method_and_bad_params),
        cmocka_unit_test(test_timeout_then_usable),
        cmocka_unit_test(test_interrupt_fd),
        cmocka_unit_test(test_nested_call_from_handler),
        cmocka_unit_test(test_lone_surrogate),
        cmocka_unit_test(test_cdp_send_and_close),
    };
    return cmocka_run_group_tests(tests, launch_browser, stop_browser);
}
