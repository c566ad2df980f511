/* test_relay_extmsg.c - the extension's frames: every kind parsed, and what
 * must be refused (with the reason) refused. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "extmsg.h"
#include "relay.h"

static int parse(const char *s, struct ext_msg *m, char *err, size_t errlen)
{
    return extmsg_parse(s, strlen(s), m, err, errlen);
}

static void test_kinds(void **state)
{
    (void)state;
    struct ext_msg m;
    char err[200];
    const char *nonce = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";
    char buf[400];
    snprintf(buf, sizeof(buf), "{\"v\":1,\"type\":\"auth\",\"nonce\":\"%s\",\"mac\":\"%s\"}", nonce,
             nonce);
    assert_int_equal(parse(buf, &m, err, sizeof(err)), 0);
    assert_int_equal(m.kind, EXT_AUTH);
    assert_string_equal(m.nonce, nonce);
    extmsg_clear(&m);
    snprintf(buf, sizeof(buf), "{\"v\":1,\"type\":\"pair\",\"nonce\":\"%s\",\"mac\":\"%s\"}", nonce,
             nonce);
    assert_int_equal(parse(buf, &m, err, sizeof(err)), 0);
    assert_int_equal(m.kind, EXT_PAIR);
    assert_string_equal(m.mac, nonce);
    extmsg_clear(&m);

    assert_int_equal(parse("{\"v\":1,\"type\":\"res\",\"id\":7,\"ok\":true,\"result\":{\"a\":1}}",
                           &m, err, sizeof(err)),
                     0);
    assert_int_equal(m.kind, EXT_RES);
    assert_int_equal(m.id, 7);
    assert_true(m.ok);
    assert_int_equal(json_integer_value(json_object_get(m.result, "a")), 1);
    extmsg_clear(&m);

    assert_int_equal(parse("{\"v\":1,\"type\":\"res\",\"id\":8,\"ok\":false,\"error\":{\"code\":"
                           "\"TAB_NOT_FOUND\",\"message\":\"gone\"}}",
                           &m, err, sizeof(err)),
                     0);
    assert_false(m.ok);
    assert_non_null(m.error);
    extmsg_clear(&m);

    assert_int_equal(parse("{\"v\":1,\"type\":\"event\",\"event\":\"cdp\",\"tabId\":5,\"method\":"
                           "\"Page.loadEventFired\",\"params\":{\"timestamp\":1.5},\"sessionId\":"
                           "\"S1\"}",
                           &m, err, sizeof(err)),
                     0);
    assert_int_equal(m.kind, EXT_EVENT_CDP);
    assert_int_equal(m.tab_id, 5);
    assert_string_equal(m.method, "Page.loadEventFired");
    assert_string_equal(m.session, "S1");
    extmsg_clear(&m);

    assert_int_equal(parse("{\"v\":1,\"type\":\"event\",\"event\":\"opened-by\",\"tabId\":6,"
                           "\"openerTabId\":5}",
                           &m, err, sizeof(err)),
                     0);
    assert_int_equal(m.kind, EXT_EVENT_OPENED_BY);
    assert_int_equal(m.opener, 5);
    extmsg_clear(&m);

    assert_int_equal(parse("{\"v\":1,\"type\":\"event\",\"event\":\"state\",\"present\":[1,2,3]}",
                           &m, err, sizeof(err)),
                     0);
    assert_int_equal(json_array_size(m.present), 3);
    assert_null(m.claims);
    extmsg_clear(&m);

    assert_int_equal(parse("{\"v\":1,\"type\":\"event\",\"event\":\"state\",\"present\":[],"
                           "\"claims\":[{\"tabId\":4,\"session\":\"s\",\"created\":true}]}",
                           &m, err, sizeof(err)),
                     0);
    assert_int_equal(json_array_size(m.claims), 1);
    extmsg_clear(&m);

    assert_int_equal(parse("{\"v\":1,\"type\":\"event\",\"event\":\"detached\",\"tabId\":1,"
                           "\"reason\":\"target_closed\"}",
                           &m, err, sizeof(err)),
                     0);
    extmsg_clear(&m);
    assert_int_equal(parse("{\"v\":1,\"type\":\"event\",\"event\":\"removed\",\"tabId\":1}", &m,
                           err, sizeof(err)),
                     0);
    extmsg_clear(&m);
    assert_int_equal(parse("{\"v\":1,\"type\":\"event\",\"event\":\"granted\",\"tabId\":9,"
                           "\"session\":\"s-1\"}",
                           &m, err, sizeof(err)),
                     0);
    assert_int_equal(m.kind, EXT_EVENT_GRANTED);
    assert_int_equal(m.tab_id, 9);
    assert_string_equal(m.session, "s-1");
    extmsg_clear(&m);
    assert_int_equal(parse("{\"v\":1,\"type\":\"event\",\"event\":\"revoked\",\"tabId\":9}", &m,
                           err, sizeof(err)),
                     0);
    assert_int_equal(m.kind, EXT_EVENT_REVOKED);
    extmsg_clear(&m);
    assert_int_equal(parse("{\"v\":1,\"type\":\"heartbeat\"}", &m, err, sizeof(err)), 0);
    assert_int_equal(m.kind, EXT_HEARTBEAT);
    extmsg_clear(&m);
}

static void test_refused(void **state)
{
    (void)state;
    static const struct {
        const char *frame, *reason;
    } cases[] = {
        {"", "not JSON"},
        {"[1]", "not a JSON object"},
        {"{\"type\":\"heartbeat\"}", "'v'"},
        {"{\"v\":2,\"type\":\"heartbeat\"}", "'v'"},
        {"{\"v\":1}", "'type'"},
        {"{\"v\":1,\"type\":\"req\"}", "unknown type 'req'"},
        {"{\"v\":1,\"type\":\"heartbeat\",\"x\":1}", "unknown field 'x'"},
        {"{\"v\":1,\"type\":\"event\",\"event\":\"consent\",\"tabId\":1}", "unknown event"},
        {"{\"v\":1,\"type\":\"event\",\"event\":\"granted\",\"tabId\":1}", "'session' is missing"},
        {"{\"v\":1,\"type\":\"event\",\"event\":\"removed\",\"tabId\":-1}", "'tabId'"},
        {"{\"v\":1,\"type\":\"event\",\"event\":\"removed\",\"tabId\":2147483648}", "'tabId'"},
        {"{\"v\":1,\"type\":\"event\",\"event\":\"removed\",\"tabId\":1.5}", "'tabId'"},
        {"{\"v\":1,\"type\":\"event\",\"event\":\"removed\"}", "'tabId' is missing"},
        {"{\"v\":1,\"type\":\"event\",\"event\":\"removed\",\"tabId\":1,\"tabId\":2}", "not JSON"},
        {"{\"v\":1,\"type\":\"event\",\"event\":\"state\",\"present\":[1,\"2\"]}", "'present'[1]"},
        {"{\"v\":1,\"type\":\"event\",\"event\":\"state\",\"present\":[],\"claims\":[1]}",
         "'claims'[0]"},
        {"{\"v\":1,\"type\":\"event\",\"event\":\"state\",\"present\":[],\"claims\":[{"
         "\"tabId\":1,\"session\":\"s\"}]}",
         "state.claims[0]: field 'created' is missing"},
        {"{\"v\":1,\"type\":\"event\",\"event\":\"state\",\"present\":[],\"claims\":[{"
         "\"tabId\":-1,\"session\":\"s\",\"created\":true}]}",
         "'tabId'"},
        {"{\"v\":1,\"type\":\"res\",\"id\":1,\"ok\":false}", "needs 'error'"},
        {"{\"v\":1,\"type\":\"res\",\"id\":1,\"ok\":false,\"error\":{\"code\":1,\"message\":\"m\"}"
         "}",
         "res.error"},
        {"{\"v\":1,\"type\":\"res\",\"id\":1,\"ok\":false,\"error\":{\"code\":\"X\",\"message\":"
         "\"m\",\"stack\":\"\"}}",
         "unknown field 'stack'"},
        {"{\"v\":1,\"type\":\"res\",\"id\":4294967296,\"ok\":true}", "'id'"},
        {"{\"v\":1,\"type\":\"auth\",\"nonce\":\"ab\"}", "'mac' is missing"},
        {"{\"v\":1,\"type\":\"event\",\"event\":\"cdp\",\"tabId\":1,\"method\":\"X.y\",\"params\":["
         "]}",
         "'params'"},
        {"{\"v\":1,\"type\":\"heartbeat\"} trailing", "not JSON"},
        {"{\"v\":1,\"type\":\"\xff\"}", "not JSON"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        struct ext_msg m;
        char err[200] = "";
        int rc = parse(cases[i].frame, &m, err, sizeof(err));
        if (rc != -1 || !strstr(err, cases[i].reason))
            fail_msg("case %zu (%s): rc %d, reason '%s', wanted '%s'", i, cases[i].frame, rc, err,
                     cases[i].reason);
        assert_null(m.root);
    }
}

static void test_size_cap(void **state)
{
    (void)state;
    size_t n = RELAY_MAX_FRAME + 1;
    char *big = malloc(n);
    memset(big, ' ', n);
    struct ext_msg m;
    char err[200];
    assert_int_equal(extmsg_parse(big, n, &m, err, sizeof(err)), -1);
    assert_non_null(strstr(err, "over the limit"));
    /* Not NUL-terminated input: only len bytes are read. */
    memcpy(big, "{\"v\":1,\"type\":\"heartbeat\"}xxxx", 30);
    assert_int_equal(extmsg_parse(big, 26, &m, err, sizeof(err)), 0);
    extmsg_clear(&m);
    free(big);
}

static void test_cdp_policy(void **state)
{
    (void)state;
    assert_null(router_cdp_refused("Page.navigate", NULL));
    assert_null(router_cdp_refused("Runtime.evaluate", NULL));
    assert_null(router_cdp_refused("Target.setAutoAttach", NULL));
    assert_non_null(router_cdp_refused("Browser.close", NULL));
    assert_non_null(router_cdp_refused("Target.getTargets", NULL));
    assert_non_null(router_cdp_refused("Target.createBrowserContext", NULL));
    assert_non_null(router_cdp_refused("Target.attachToBrowserTarget", NULL));
    assert_non_null(router_cdp_refused("nodot", NULL));
    assert_non_null(router_cdp_refused(".x", NULL));
    assert_non_null(router_cdp_refused("X.", NULL));
    assert_non_null(router_cdp_refused("A.b.c", NULL));
    json_t *p = json_pack("{s:s}", "url", "https://example.com/");
    assert_null(router_cdp_refused("Page.navigate", p));
    json_object_set_new(p, "url", json_string("file:///etc/passwd"));
    assert_non_null(router_cdp_refused("Page.navigate", p));
    json_object_set_new(p, "url", json_string("chrome://settings"));
    assert_non_null(router_cdp_refused("Page.navigate", p));
    json_object_set_new(p, "url", json_string("javascript:alert(1)"));
    assert_non_null(router_cdp_refused("Page.navigate", p));
    json_decref(p);
    assert_null(router_url_refused("about:blank"));
    assert_null(router_url_refused("http://127.0.0.1:1/"));
    assert_non_null(router_url_refused("about:config"));
    assert_non_null(router_url_refused("chrome-extension://x/pair.html"));
    /* URLs as the browser reads them: the scheme's case does not matter,
     * leading spaces and controls are stripped. */
    assert_null(router_url_refused("HTTP://upper.case/"));
    assert_non_null(router_url_refused(" file:///etc/passwd"));
    assert_non_null(router_url_refused("data:text/html,x"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_kinds),
        cmocka_unit_test(test_refused),
        cmocka_unit_test(test_size_cap),
        cmocka_unit_test(test_cdp_policy),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
