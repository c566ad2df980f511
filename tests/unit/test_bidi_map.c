/*
 * test_bidi_map.c - the worker's CDP-to-BiDi map (worker/cdp/bidi_map.h) on
 * messages alone: what each CDP command becomes, how answers and events
 * come back, what is refused. The real Firefox runs it in the e2e suites
 * (TABVISOR_BROWSER=firefox).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "bidi_map.h"
#include "transport.h"

/* What the map emitted, in order. */
static json_t *emitted;

static void collect(void *ud, json_t *cdp)
{
    (void)ud;
    json_array_append(emitted, cdp);
}

static int setup(void **state)
{
    emitted = json_array();
    struct bidi_map *m = bidi_map_new();
    assert_non_null(m);
    /* A page: Target.createTarget answered with context "top". */
    json_t *out;
    json_t *p = json_pack("{s:s}", "browserContextId", "u1");
    assert_int_equal(bidi_map_command(m, 1, NULL, "Target.createTarget", p, &out), BIDI_SEND);
    assert_string_equal(json_string_value(json_object_get(out, "method")),
                        "browsingContext.create");
    assert_string_equal(
        json_string_value(json_object_get(json_object_get(out, "params"), "userContext")), "u1");
    json_decref(p);
    json_decref(out);
    json_t *a =
        json_pack("{s:s, s:i, s:{s:s}}", "type", "success", "id", 1, "result", "context", "top");
    bidi_map_answer(m, a, collect, NULL);
    json_decref(a);
    json_array_clear(emitted);
    *state = m;
    return 0;
}

static int teardown(void **state)
{
    bidi_map_free(*state);
    json_decref(emitted);
    return 0;
}

/* Map the CDP command (params as JSON text) on session "top". */
static json_t *command(struct bidi_map *m, long long id, const char *method, const char *params,
                       enum bidi_outcome want)
{
    json_t *p = json_loads(params, 0, NULL);
    json_t *out = NULL;
    assert_int_equal(bidi_map_command(m, id, "top", method, p, &out), want);
    json_decref(p);
    return out;
}

static void answer(struct bidi_map *m, const char *json)
{
    json_t *a = json_loads(json, 0, NULL);
    assert_non_null(a);
    bidi_map_answer(m, a, collect, NULL);
    json_decref(a);
}

static void event(struct bidi_map *m, const char *json)
{
    json_t *e = json_loads(json, 0, NULL);
    assert_non_null(e);
    bidi_map_event(m, e, collect, NULL);
    json_decref(e);
}

static const char *path_str(json_t *o, const char *a, const char *b)
{
    json_t *v = json_object_get(o, a);
    return json_string_value(b ? json_object_get(v, b) : v);
}

static void test_evaluate_in_our_world_is_a_sandbox(void **state)
{
    struct bidi_map *m = *state;
    json_t *w = command(m, 2, "Page.createIsolatedWorld",
                        "{\"frameId\":\"top\",\"worldName\":\"tabvisor\"}", BIDI_ANSWER);
    json_int_t ctx =
        json_integer_value(json_object_get(json_object_get(w, "result"), "executionContextId"));
    assert_true(ctx > 0);
    json_decref(w);
    char params[128];
    snprintf(params, sizeof params,
             "{\"expression\":\"1+1\",\"contextId\":%lld,\"returnByValue\":true}", (long long)ctx);
    json_t *c = command(m, 3, "Runtime.evaluate", params, BIDI_SEND);
    json_t *target = json_object_get(json_object_get(c, "params"), "target");
    assert_string_equal(path_str(target, "context", NULL), "top");
    assert_string_equal(path_str(target, "sandbox", NULL), "tabvisor");
    assert_int_equal(json_integer_value(json_object_get(c, "id")), 3);
    json_decref(c);
    answer(m, "{\"type\":\"success\",\"id\":3,\"result\":{\"type\":\"success\",\"result\":"
              "{\"type\":\"object\",\"value\":[[\"a\",{\"type\":\"array\",\"value\":[{\"type\":"
              "\"number\",\"value\":1},{\"type\":\"number\",\"value\":\"NaN\"},{\"type\":"
              "\"undefined\"}]}]]}}}");
    json_t *a = json_array_get(emitted, 0);
    json_t *v = json_object_get(json_object_get(json_object_get(a, "result"), "result"), "value");
    char *text = json_dumps(v, JSON_COMPACT);
    assert_string_equal(text, "{\"a\":[1,null,null]}");
    free(text);
    /* A new document's sandbox lacks our engine: CDP's "context gone". */
    c = command(m, 4, "Runtime.evaluate", params, BIDI_SEND);
    json_decref(c);
    answer(m,
           "{\"type\":\"success\",\"id\":4,\"result\":{\"type\":\"exception\",\"exceptionDetails\""
           ":{\"text\":\"ReferenceError: __tabvisor is not defined\"}}}");
    assert_non_null(strstr(path_str(json_array_get(emitted, 1), "error", "message"), "context"));
    /* A world that was never made. */
    c = command(m, 5, "Runtime.evaluate", "{\"expression\":\"1\",\"contextId\":999}", BIDI_ANSWER);
    assert_non_null(strstr(path_str(c, "error", "message"), "context"));
    json_decref(c);
}

static void test_input_as_actions(void **state)
{
    struct bidi_map *m = *state;
    json_t *c = command(m, 2, "Input.dispatchKeyEvent", "{\"type\":\"keyDown\",\"key\":\"Enter\"}",
                        BIDI_SEND);
    json_t *acts = json_object_get(json_object_get(c, "params"), "actions");
    json_t *key = json_array_get(json_object_get(json_array_get(acts, 0), "actions"), 0);
    assert_string_equal(path_str(key, "type", NULL), "keyDown");
    assert_string_equal(path_str(key, "value", NULL), "\xee\x80\x86"); /* U+E006, Return */
    json_decref(c);
    /* char events are typed by their keyDown already. */
    c = command(m, 3, "Input.dispatchKeyEvent", "{\"type\":\"char\",\"text\":\"a\"}", BIDI_ANSWER);
    assert_non_null(json_object_get(c, "result"));
    json_decref(c);
    c = command(m, 4, "Input.dispatchMouseEvent",
                "{\"type\":\"mousePressed\",\"x\":10.4,\"y\":20.6,\"button\":\"right\"}",
                BIDI_SEND);
    acts = json_object_get(
        json_array_get(json_object_get(json_object_get(c, "params"), "actions"), 0), "actions");
    assert_int_equal(json_array_size(acts), 2);
    assert_int_equal(json_integer_value(json_object_get(json_array_get(acts, 0), "y")), 21);
    assert_string_equal(path_str(json_array_get(acts, 1), "type", NULL), "pointerDown");
    assert_int_equal(json_integer_value(json_object_get(json_array_get(acts, 1), "button")), 2);
    json_decref(c);
    /* A Control-click: a key source beside the pointer holds Control from
     * before the press to after the release. */
    c = command(m, 6, "Input.dispatchMouseEvent",
                "{\"type\":\"mousePressed\",\"x\":1,\"y\":1,\"modifiers\":2}", BIDI_SEND);
    json_t *srcs = json_object_get(json_object_get(c, "params"), "actions");
    assert_int_equal(json_array_size(srcs), 2);
    json_t *ptr = json_object_get(json_array_get(srcs, 0), "actions");
    json_t *kb = json_object_get(json_array_get(srcs, 1), "actions");
    assert_int_equal(json_array_size(ptr), json_array_size(kb) + 2);
    assert_string_equal(path_str(json_array_get(ptr, 0), "type", NULL), "pause");
    assert_string_equal(path_str(json_array_get(kb, 0), "type", NULL), "keyDown");
    assert_string_equal(path_str(json_array_get(kb, 0), "value", NULL), "\xee\x80\x89");
    json_decref(c);
    c = command(m, 5, "Input.insertText", "{\"text\":\"h\xc3\xa9\"}", BIDI_SEND);
    acts = json_object_get(
        json_array_get(json_object_get(json_object_get(c, "params"), "actions"), 0), "actions");
    assert_int_equal(json_array_size(acts), 4); /* down and up per character */
    assert_string_equal(path_str(json_array_get(acts, 2), "value", NULL), "\xc3\xa9");
    json_decref(c);
}

static void test_what_bidi_cannot_do_is_not_supported(void **state)
{
    struct bidi_map *m = *state;
    json_t *c = command(m, 2, "Emulation.setEmulatedMedia", "{}", BIDI_ANSWER);
    assert_int_equal(json_integer_value(json_object_get(json_object_get(c, "error"), "code")),
                     CDP_ERR_NOT_SUPPORTED);
    assert_non_null(strstr(path_str(c, "error", "message"), "Emulation.setEmulatedMedia"));
    json_decref(c);
    /* A session that is not a page of ours. */
    json_t *out;
    assert_int_equal(bidi_map_command(m, 3, "other", "Page.navigate", NULL, &out), BIDI_ANSWER);
    assert_non_null(json_object_get(out, "error"));
    json_decref(out);
    /* Set-up Firefox needs no counterpart of. */
    c = command(m, 4, "Page.enable", "{}", BIDI_ANSWER);
    assert_non_null(json_object_get(c, "result"));
    json_decref(c);
}

static void test_navigation_answers_and_errors(void **state)
{
    struct bidi_map *m = *state;
    json_t *c = command(m, 2, "Page.navigate", "{\"url\":\"http://a.test/\"}", BIDI_SEND);
    assert_string_equal(path_str(json_object_get(c, "params"), "wait", NULL), "none");
    json_decref(c);
    answer(m, "{\"type\":\"error\",\"id\":2,\"error\":\"unknown error\",\"message\":"
              "\"Error: NS_ERROR_CONNECTION_REFUSED\"}");
    json_t *r = json_object_get(json_array_get(emitted, 0), "result");
    assert_non_null(strstr(path_str(r, "errorText", NULL), "net::ERR_CONNECTION_REFUSED"));
    /* A fragment: no loaderId, as CDP's same-document answer. */
    c = command(m, 3, "Page.navigate", "{\"url\":\"http://a.test/#x\"}", BIDI_SEND);
    json_decref(c);
    event(m, "{\"type\":\"event\",\"method\":\"browsingContext.fragmentNavigated\",\"params\":"
             "{\"context\":\"top\",\"navigation\":\"n9\",\"url\":\"http://a.test/#x\"}}");
    answer(m, "{\"type\":\"success\",\"id\":3,\"result\":{\"navigation\":\"n9\",\"url\":\"u\"}}");
    json_t *last = json_array_get(emitted, json_array_size(emitted) - 1);
    assert_null(json_object_get(json_object_get(last, "result"), "loaderId"));
    /* A history step with no navigation before its answer stayed in the
     * document: navigatedWithinDocument follows the answer. */
    c = command(m, 4, "Page.navigateToHistoryEntry", "{\"entryId\":-1}", BIDI_SEND);
    assert_int_equal(json_integer_value(json_object_get(json_object_get(c, "params"), "delta")),
                     -1);
    json_decref(c);
    json_array_clear(emitted);
    answer(m, "{\"type\":\"success\",\"id\":4,\"result\":{}}");
    assert_int_equal(json_array_size(emitted), 2);
    assert_string_equal(path_str(json_array_get(emitted, 1), "method", NULL),
                        "Page.navigatedWithinDocument");
}

static void test_events_become_cdp(void **state)
{
    struct bidi_map *m = *state;
    event(m, "{\"type\":\"event\",\"method\":\"browsingContext.navigationStarted\",\"params\":"
             "{\"context\":\"top\",\"navigation\":\"n1\",\"url\":\"http://a.test/\"}}");
    json_t *init = json_array_get(emitted, 1);
    assert_string_equal(path_str(init, "method", NULL), "Page.lifecycleEvent");
    assert_string_equal(path_str(init, "params", "name"), "init");
    assert_string_equal(path_str(init, "params", "loaderId"), "n1");
    assert_string_equal(path_str(init, "sessionId", NULL), "top");
    /* A frame: attached below its parent, its log entries the page's. */
    event(m, "{\"type\":\"event\",\"method\":\"browsingContext.contextCreated\",\"params\":"
             "{\"context\":\"kid\",\"parent\":\"top\",\"url\":\"about:blank\"}}");
    json_t *att = json_array_get(emitted, json_array_size(emitted) - 2);
    assert_string_equal(path_str(att, "method", NULL), "Page.frameAttached");
    assert_string_equal(path_str(att, "params", "parentFrameId"), "top");
    /* ... and a session of its own, for input that must name it. */
    json_t *sess = json_array_get(emitted, json_array_size(emitted) - 1);
    assert_string_equal(path_str(sess, "method", NULL), "Target.attachedToTarget");
    assert_string_equal(path_str(sess, "params", "sessionId"), "kid");
    json_t *in = command(m, 40, "Input.dispatchMouseEvent",
                         "{\"type\":\"mouseMoved\",\"x\":1,\"y\":2}", BIDI_SEND);
    json_decref(in);
    json_t *p = json_pack("{s:s, s:i, s:i}", "type", "mouseMoved", "x", 1, "y", 2);
    json_t *out = NULL;
    assert_int_equal(bidi_map_command(m, 41, "kid", "Input.dispatchMouseEvent", p, &out),
                     BIDI_SEND);
    assert_string_equal(path_str(json_object_get(out, "params"), "context", NULL), "kid");
    json_decref(out);
    json_decref(p);
    event(m, "{\"type\":\"event\",\"method\":\"log.entryAdded\",\"params\":{\"type\":\"console\","
             "\"method\":\"warn\",\"text\":\"hi\",\"source\":{\"context\":\"kid\"},"
             "\"stackTrace\":{\"callFrames\":[{\"url\":\"u\",\"lineNumber\":3}]}}}");
    json_t *log = json_array_get(emitted, json_array_size(emitted) - 1);
    assert_string_equal(path_str(log, "method", NULL), "Runtime.consoleAPICalled");
    assert_string_equal(path_str(log, "params", "type"), "warning");
    assert_string_equal(path_str(log, "sessionId", NULL), "top");
    assert_non_null(json_object_get(json_object_get(log, "params"), "stackTrace"));
    /* A navigation that loads nothing (a beforeunload dismissed) ends the
     * waits its init started. */
    json_array_clear(emitted);
    event(m, "{\"type\":\"event\",\"method\":\"browsingContext.navigationFailed\",\"params\":"
             "{\"context\":\"top\",\"navigation\":\"n1\",\"url\":\"http://a.test/\"}}");
    assert_string_equal(path_str(json_array_get(emitted, 0), "params", "name"), "DOMContentLoaded");
    assert_string_equal(path_str(json_array_get(emitted, 0), "params", "loaderId"), "n1");
    /* Another session's context: nothing. */
    size_t n = json_array_size(emitted);
    event(m, "{\"type\":\"event\",\"method\":\"browsingContext.load\",\"params\":"
             "{\"context\":\"stranger\",\"navigation\":\"n2\"}}");
    assert_int_equal(json_array_size(emitted), n);
    /* The page closing is its target's end. */
    event(m, "{\"type\":\"event\",\"method\":\"browsingContext.contextDestroyed\",\"params\":"
             "{\"context\":\"top\"}}");
    assert_string_equal(
        path_str(json_array_get(emitted, json_array_size(emitted) - 1), "method", NULL),
        "Target.targetDestroyed");
}

#define COMMIT(ctx, nav, url)                                                                      \
    "{\"type\":\"event\",\"method\":\"browsingContext.navigationCommitted\",\"params\":{"          \
    "\"context\":\"" ctx "\",\"navigation\":\"" nav "\",\"url\":\"" url "\"}}"

/* A content process that died: the page commits about:blank again under the
 * navigation of the document it showed (then about:tabcrashed), which is
 * CDP's targetCrashed on the page's session, once; its reload loads the
 * page's own URL again, not the crash page's about:blank. */
static void test_content_process_crash(void **state)
{
    struct bidi_map *m = *state;
    json_array_clear(emitted);
    event(m, COMMIT("top", "n1", "http://a.test/x?q=1"));
    event(m, COMMIT("top", "n2", "http://u:p@a.test:81/y"));
    /* Each new document is CDP's frameNavigated, with its origin. */
    assert_int_equal(json_array_size(emitted), 2);
    json_t *nav = json_object_get(json_object_get(json_array_get(emitted, 1), "params"), "frame");
    assert_string_equal(path_str(nav, "securityOrigin", NULL), "http://a.test:81");
    assert_string_equal(path_str(nav, "loaderId", NULL), "n2");
    json_array_clear(emitted);
    json_t *out = command(m, 50, "Page.reload", "{}", BIDI_SEND);
    assert_string_equal(path_str(out, "method", NULL), "browsingContext.reload");
    json_decref(out);
    event(m, COMMIT("top", "n2", "about:blank"));
    event(m, COMMIT("top", "n2", "about:tabcrashed?e=tabcrashed&u=http%3A//a.test/y"));
    assert_int_equal(json_array_size(emitted), 1);
    assert_string_equal(path_str(json_array_get(emitted, 0), "method", NULL),
                        "Inspector.targetCrashed");
    assert_string_equal(path_str(json_array_get(emitted, 0), "sessionId", NULL), "top");
    out = command(m, 51, "Page.reload", "{}", BIDI_SEND);
    assert_string_equal(path_str(out, "method", NULL), "browsingContext.navigate");
    assert_string_equal(path_str(json_object_get(out, "params"), "url", NULL),
                        "http://u:p@a.test:81/y");
    json_decref(out);
    /* Once: the next reload is the page's own. */
    out = command(m, 52, "Page.reload", "{}", BIDI_SEND);
    assert_string_equal(path_str(out, "method", NULL), "browsingContext.reload");
    json_decref(out);
    /* A frame's crash is told on the frame's session. */
    event(m, "{\"type\":\"event\",\"method\":\"browsingContext.contextCreated\",\"params\":"
             "{\"context\":\"kid\",\"parent\":\"top\",\"url\":\"about:blank\"}}");
    json_array_clear(emitted);
    event(m, COMMIT("kid", "k1", "http://b.test/"));
    assert_string_equal(
        path_str(json_object_get(json_object_get(json_array_get(emitted, 0), "params"), "frame"),
                 "parentId", NULL),
        "top");
    json_array_clear(emitted);
    event(m, COMMIT("kid", "k1", "about:blank"));
    assert_int_equal(json_array_size(emitted), 1);
    assert_string_equal(path_str(json_array_get(emitted, 0), "sessionId", NULL), "kid");
}

/* Cookies are the session's user context's (the setup's createTarget named
 * u1): a URL's host becomes the domain, CDP's names BiDi's, and back. */
static void test_cookies_in_the_sessions_partition(void **state)
{
    struct bidi_map *m = *state;
    json_t *out =
        command(m, 60, "Network.setCookie",
                "{\"name\":\"a\",\"value\":\"1\",\"url\":\"http://u:p@[::1]:8080/x\","
                "\"path\":\"/\",\"sameSite\":\"Strict\",\"httpOnly\":true,\"expires\":99}",
                BIDI_SEND);
    json_t *bp = json_object_get(out, "params");
    assert_string_equal(path_str(out, "method", NULL), "storage.setCookie");
    assert_string_equal(path_str(json_object_get(bp, "partition"), "userContext", NULL), "u1");
    json_t *ck = json_object_get(bp, "cookie");
    assert_string_equal(path_str(ck, "domain", NULL), "::1");
    assert_string_equal(path_str(ck, "sameSite", NULL), "strict");
    assert_string_equal(path_str(json_object_get(ck, "value"), "value", NULL), "1");
    assert_int_equal(json_integer_value(json_object_get(ck, "expiry")), 99);
    assert_true(json_is_true(json_object_get(ck, "httpOnly")));
    json_decref(out);
    json_decref(
        command(m, 61, "Network.setCookie", "{\"name\":\"a\",\"value\":\"1\"}", BIDI_ANSWER));
    json_decref(command(m, 62, "Network.setCookie",
                        "{\"name\":\"a\",\"domain\":\"x.test\",\"sameSite\":\"Sometimes\"}",
                        BIDI_ANSWER));
    out = command(m, 63, "Network.deleteCookies", "{\"name\":\"a\",\"domain\":\"x.test\"}",
                  BIDI_SEND);
    assert_string_equal(
        path_str(json_object_get(json_object_get(out, "params"), "filter"), "domain", NULL),
        "x.test");
    json_decref(out);
    out = command(m, 64, "Network.getAllCookies", "{}", BIDI_SEND);
    assert_string_equal(path_str(out, "method", NULL), "storage.getCookies");
    json_decref(out);
    json_array_clear(emitted);
    answer(m, "{\"type\":\"success\",\"id\":64,\"result\":{\"cookies\":[{\"name\":\"a\","
              "\"value\":{\"type\":\"string\",\"value\":\"1\"},\"domain\":\"x.test\","
              "\"path\":\"/\",\"size\":2,\"httpOnly\":false,\"secure\":true,\"sameSite\":"
              "\"none\"}]}}");
    json_t *c0 = json_array_get(
        json_object_get(json_object_get(json_array_get(emitted, 0), "result"), "cookies"), 0);
    assert_string_equal(path_str(c0, "value", NULL), "1");
    assert_string_equal(path_str(c0, "sameSite", NULL), "None");
    assert_true(json_is_true(json_object_get(c0, "session")));
    assert_int_equal((int)json_number_value(json_object_get(c0, "expires")), -1);
}

/* A PDF: print's options in BiDi's units (cm), its answer held as a stream
 * read in base64 quanta until eof, then closed. */
static void test_print_as_a_stream(void **state)
{
    struct bidi_map *m = *state;
    json_t *out = command(m, 70, "Page.printToPDF",
                          "{\"transferMode\":\"ReturnAsStream\",\"printBackground\":true,"
                          "\"paperWidth\":10,\"marginTop\":1,\"pageRanges\":\"1-2, 4\"}",
                          BIDI_SEND);
    json_t *bp = json_object_get(out, "params");
    assert_string_equal(path_str(out, "method", NULL), "browsingContext.print");
    assert_true(json_is_true(json_object_get(bp, "background")));
    assert_true(json_number_value(json_object_get(json_object_get(bp, "page"), "width")) == 25.4);
    assert_true(json_number_value(json_object_get(json_object_get(bp, "margin"), "top")) == 2.54);
    assert_string_equal(json_string_value(json_array_get(json_object_get(bp, "pageRanges"), 1)),
                        "4");
    json_decref(out);
    json_array_clear(emitted);
    answer(m, "{\"type\":\"success\",\"id\":70,\"result\":{\"data\":\"JVBERi0xLjQKJSVFT0Y=\"}}");
    const char *handle =
        path_str(json_object_get(json_array_get(emitted, 0), "result"), "stream", NULL);
    assert_non_null(handle);
    char read[200];
    snprintf(read, sizeof read, "{\"handle\":\"%s\",\"size\":6}", handle);
    out = command(m, 71, "IO.read", read, BIDI_ANSWER);
    assert_string_equal(path_str(json_object_get(out, "result"), "data", NULL), "JVBERi0x");
    assert_true(json_is_false(json_object_get(json_object_get(out, "result"), "eof")));
    json_decref(out);
    out = command(m, 72, "IO.read", read, BIDI_ANSWER);
    assert_string_equal(path_str(json_object_get(out, "result"), "data", NULL), "LjQKJSVF");
    json_decref(out);
    out = command(m, 73, "IO.read", read, BIDI_ANSWER);
    assert_string_equal(path_str(json_object_get(out, "result"), "data", NULL), "T0Y=");
    assert_true(json_is_true(json_object_get(json_object_get(out, "result"), "eof")));
    json_decref(out);
    json_decref(command(m, 74, "IO.close", read, BIDI_ANSWER));
    out = command(m, 75, "IO.read", read, BIDI_ANSWER);
    assert_non_null(json_object_get(out, "error"));
    json_decref(out);
}

static void test_nodes_cross_worlds_by_number(void **state)
{
    struct bidi_map *m = *state;
    json_t *c = command(m, 2, "Runtime.evaluate", "{\"expression\":\"document.body\"}", BIDI_SEND);
    json_decref(c);
    answer(m, "{\"type\":\"success\",\"id\":2,\"result\":{\"type\":\"success\",\"result\":"
              "{\"type\":\"node\",\"sharedId\":\"s-1\"}}}");
    const char *oid =
        path_str(json_object_get(json_array_get(emitted, 0), "result"), "result", "objectId");
    assert_non_null(oid);
    char params[160];
    snprintf(params, sizeof params, "{\"objectId\":\"%s\"}", oid);
    c = command(m, 3, "DOM.describeNode", params, BIDI_SEND);
    assert_string_equal(path_str(json_object_get(c, "params"), "this", "sharedId"), "s-1");
    json_decref(c);
    answer(m, "{\"type\":\"success\",\"id\":3,\"result\":{\"type\":\"success\",\"result\":"
              "{\"type\":\"null\"}}}");
    json_int_t backend = json_integer_value(json_object_get(
        json_object_get(json_object_get(json_array_get(emitted, 1), "result"), "node"),
        "backendNodeId"));
    assert_true(backend > 0);
    snprintf(params, sizeof params, "{\"backendNodeId\":%lld}", (long long)backend);
    c = command(m, 4, "DOM.resolveNode", params, BIDI_ANSWER);
    const char *oid2 = path_str(json_object_get(c, "result"), "object", "objectId");
    snprintf(params, sizeof params,
             "{\"functionDeclaration\":\"function(){return 1}\",\"objectId\":\"%s\"}", oid2);
    json_t *call = command(m, 5, "Runtime.callFunctionOn", params, BIDI_SEND);
    assert_string_equal(path_str(call, "method", NULL), "script.callFunction");
    assert_string_equal(path_str(json_object_get(call, "params"), "this", "sharedId"), "s-1");
    json_decref(call);
    json_decref(c);
    c = command(m, 6, "DOM.resolveNode", "{\"backendNodeId\":12345}", BIDI_ANSWER);
    assert_non_null(json_object_get(c, "error"));
    json_decref(c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_evaluate_in_our_world_is_a_sandbox, setup, teardown),
        cmocka_unit_test_setup_teardown(test_input_as_actions, setup, teardown),
        cmocka_unit_test_setup_teardown(test_what_bidi_cannot_do_is_not_supported, setup, teardown),
        cmocka_unit_test_setup_teardown(test_navigation_answers_and_errors, setup, teardown),
        cmocka_unit_test_setup_teardown(test_events_become_cdp, setup, teardown),
        cmocka_unit_test_setup_teardown(test_nodes_cross_worlds_by_number, setup, teardown),
        cmocka_unit_test_setup_teardown(test_content_process_crash, setup, teardown),
        cmocka_unit_test_setup_teardown(test_cookies_in_the_sessions_partition, setup, teardown),
        cmocka_unit_test_setup_teardown(test_print_as_a_stream, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
