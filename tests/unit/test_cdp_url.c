/*
 * test_cdp_url.c - --cdp-endpoint parsing: the two accepted forms, the
 * parts taken from each, and the refusals (other schemes, TLS, no host,
 * user info, bad ports, paths where none belong, request-line injection).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "cdp_url.h"

static void test_ws_form(void **state)
{
    (void)state;
    struct cdp_url u;
    char why[200];
    assert_int_equal(
        cdp_url_parse("ws://127.0.0.1:9222/devtools/browser/abc-1", &u, why, sizeof why), 0);
    assert_false(u.http);
    assert_string_equal(u.host, "127.0.0.1");
    assert_int_equal(u.port, 9222);
    assert_string_equal(u.path, "/devtools/browser/abc-1");
    assert_int_equal(cdp_url_parse("WS://[::1]:9/x", &u, why, sizeof why), 0);
    assert_true(u.bracketed);
    assert_string_equal(u.host, "::1");
    assert_int_equal(cdp_url_parse("ws://browsers.internal", &u, why, sizeof why), 0);
    assert_int_equal(u.port, 80);
    assert_string_equal(u.path, "/");
}

static void test_http_form(void **state)
{
    (void)state;
    struct cdp_url u;
    char why[200];
    assert_int_equal(cdp_url_parse("http://localhost:9222", &u, why, sizeof why), 0);
    assert_true(u.http);
    assert_string_equal(u.host, "localhost");
    assert_int_equal(u.port, 9222);
    assert_int_equal(cdp_url_parse("http://10.0.0.5:9222/", &u, why, sizeof why), 0);
}

static void test_refusals(void **state)
{
    (void)state;
    static const struct {
        const char *url, *why;
    } bad[] = {
        {"ftp://h:1", "wants ws://"},
        {"127.0.0.1:9222", "wants ws://"},
        {"wss://h:1/x", "TLS"},
        {"https://h:1", "TLS"},
        {"ws://:9222/x", "a host is required"},
        {"http://", "a host is required"},
        {"ws://user:pw@h:1/x", "user info"},
        {"ws://h:0/x", "port out of range"},
        {"ws://h:65536/x", "port"},
        {"ws://h:/x", "bad port"},
        {"ws://h:12a/x", "bad port"},
        {"http://h:1/json/version", "HOST:PORT only"},
        {"ws://h:1/a b", "bad character in the path"},
        {"ws://h:1/a\r\nX: y", "bad character in the path"},
        {"ws://h%0a:1/", "bad character in the host"},
        {"ws://[::1:1/", "unterminated ["},
        {"ws://h:1?x", "query or fragment"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        struct cdp_url u;
        char why[200] = "";
        assert_int_equal(cdp_url_parse(bad[i].url, &u, why, sizeof why), -1);
        if (!strstr(why, bad[i].why))
            fail_msg("%s: got '%s', want '%s'", bad[i].url, why, bad[i].why);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_ws_form),
        cmocka_unit_test(test_http_form),
        cmocka_unit_test(test_refusals),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
