/*
 * test_cdp_policy.c - the one CDP policy table (proto/cdp_policy.c) and the
 * URL policy (proto/url_policy.c): URLs judged as the browser parses them
 * (the audit's " file:///etc/passwd" among them), the table's own shape,
 * and the relay layer (relay/router.c) walked against every row. The bridge
 * layer is walked in test_cdp_bridge.c, the extension's copy in
 * tests/e2e/cdp-policy.test.mjs, browser_cdp in e2e.tools-caps.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include <jansson.h>

#include "cdp_policy.h"
#include "relay.h"
#include "url_policy.h"

#define WEB (URL_ALLOW_HTTP | URL_ALLOW_ABOUT_BLANK | URL_ALLOW_DATA)

static const char *check(const char *url, unsigned allow)
{
    return url_policy_check(url, strlen(url), allow);
}

static void test_urls_as_the_browser_reads_them(void **state)
{
    /* Allowed. */
    const char *ok[] = {"http://127.0.0.1/", "https://example.org/a?b#c",
                        "HTTP://UPPER/",     "  http://x/  ",
                        "\thttps://x/",      "ht\ntp://x/",
                        "about:blank",       "ABOUT:BLANK",
                        "about:blank#frag",  "about:blank?q",
                        "data:text/html,hi", "DaTa:,x"};
    for (size_t i = 0; i < sizeof ok / sizeof *ok; i++)
        assert_null(check(ok[i], WEB));
    /* Refused: local files however spelled, browser pages, scripts. */
    const char *no[] = {"file:///etc/passwd",
                        " file:///etc/passwd",
                        "\x01\x02 file:///etc/passwd",
                        "FILE:///etc/passwd",
                        "fi\tle:///etc/passwd",
                        "f\ni\rle:///etc/passwd",
                        "file:/etc/passwd",
                        "file:",
                        "chrome://settings",
                        "chrome-extension://x/",
                        "devtools://devtools/x",
                        "view-source:http://x/",
                        "about:version",
                        "about:blankx",
                        "about:",
                        "javascript:alert(1)",
                        "blob:http://x/1",
                        "filesystem:http://x/temporary/a",
                        "ws://x/",
                        "/relative",
                        "nonsense",
                        "1http://x/",
                        ":http://x/",
                        "http//x",
                        ""};
    for (size_t i = 0; i < sizeof no / sizeof *no; i++) {
        const char *why = check(no[i], WEB);
        if (!why)
            fail_msg("allowed: %s", no[i]);
    }
    assert_string_equal(check(" file:///etc/passwd", WEB), "local files may not be loaded");
    /* A NUL anywhere, even after an allowed scheme. */
    assert_non_null(url_policy_check("http://x/\0file:", 15, WEB));
    /* The empty URL only where asked for (Target.createTarget). */
    assert_null(check("", WEB | URL_ALLOW_EMPTY));
    assert_null(check(" \t ", WEB | URL_ALLOW_EMPTY));
    /* Each kind only when allowed. */
    assert_non_null(check("data:,x", URL_ALLOW_HTTP | URL_ALLOW_ABOUT_BLANK));
    assert_non_null(check("about:blank", URL_ALLOW_HTTP));
    assert_non_null(check("http://x/", URL_ALLOW_DATA));
    /* A very long scheme, or a very long URL, is read only as far as needed. */
    char longurl[5000];
    memset(longurl, 'a', sizeof longurl - 1);
    longurl[sizeof longurl - 1] = 0;
    assert_non_null(check(longurl, WEB));
    memcpy(longurl, "https://", 8);
    assert_null(check(longurl, WEB));
    char scheme[URL_POLICY_MAX_SCHEME + 1];
    assert_true(url_policy_scheme(" \tFiLe:x", 8, scheme));
    assert_string_equal(scheme, "file");
    assert_false(url_policy_scheme("x", 1, scheme));
}

static void test_table_shape(void **state)
{
    assert_true(cdp_policy_count > 0);
    for (size_t i = 0; i < cdp_policy_count; i++) {
        const struct cdp_rule *r = &cdp_policy_table[i];
        assert_non_null(r->method);
        assert_non_null(r->why);
        assert_int_equal(r->pass & ~CDP_LAYERS_ALL, 0);
        /* A row is found for the method it names, and no two rows name the same. */
        char m[128];
        cdp_policy_sample_method(r, m, sizeof m);
        assert_ptr_equal(cdp_policy_rule(m, strlen(m)), r);
        for (size_t j = i + 1; j < cdp_policy_count; j++)
            assert_string_not_equal(r->method, cdp_policy_table[j].method);
        /* A URL or barred member is checked where the command passes. */
        if (r->bar_param)
            assert_int_not_equal(r->bar_layers & r->pass, 0);
    }
    /* The findings: nothing that hands the browser a path passes any layer. */
    const char *never[] = {"DOM.setFileInputFiles",       "Page.setDownloadBehavior",
                           "Browser.setDownloadBehavior", "Page.handleFileChooser",
                           "Network.loadNetworkResource", "Storage.getCookies",
                           "Extensions.loadUnpacked",     "Target.createTarget"};
    for (size_t i = 0; i < sizeof never / sizeof *never; i++)
        for (unsigned layer = 1; layer <= CDP_LAYER_EXTENSION; layer <<= 1)
            assert_non_null(cdp_policy_check(layer, never[i], strlen(never[i]), NULL));
    /* The most specific row wins: Target.* refused, Target.setAutoAttach passed. */
    assert_null(cdp_policy_check(CDP_LAYER_BRIDGE, "Target.setAutoAttach", 20, NULL));
    assert_non_null(cdp_policy_check(CDP_LAYER_BRIDGE, "Target.getTargets", 17, NULL));
    assert_non_null(cdp_policy_check(CDP_LAYER_TOOL, "Page.disable", 12, NULL));
    assert_null(cdp_policy_check(CDP_LAYER_BRIDGE, "Page.disable", 12, NULL));
    /* Not a method name. */
    assert_non_null(cdp_policy_check(CDP_LAYER_BRIDGE, "nodot", 5, NULL));
    assert_non_null(cdp_policy_check(CDP_LAYER_BRIDGE, "A.b.c", 5, NULL));
    assert_non_null(cdp_policy_check(CDP_LAYER_BRIDGE, ".x", 2, NULL));
    /* Params: a dragged file, a cookie read of other sites in the user's profile. */
    json_t *drag = json_pack("{s:s, s:{s:[s]}}", "type", "drop", "data", "files", "/etc/shadow");
    assert_non_null(cdp_policy_check(CDP_LAYER_BRIDGE, "Input.dispatchDragEvent", 23, drag));
    json_object_set_new(json_object_get(drag, "data"), "files", json_array());
    assert_null(cdp_policy_check(CDP_LAYER_BRIDGE, "Input.dispatchDragEvent", 23, drag));
    json_decref(drag);
    json_t *urls = json_pack("{s:[s]}", "urls", "https://bank.example/");
    assert_non_null(cdp_policy_check(CDP_LAYER_RELAY, "Network.getCookies", 18, urls));
    assert_null(cdp_policy_check(CDP_LAYER_BRIDGE, "Network.getCookies", 18, urls));
    json_decref(urls);
    json_t *nav = json_pack("{s:s}", "url", " file:///etc/passwd");
    assert_non_null(cdp_policy_check(CDP_LAYER_BRIDGE, "Page.navigate", 13, nav));
    json_decref(nav);
    nav = json_pack("{s:i}", "url", 1);
    assert_non_null(cdp_policy_check(CDP_LAYER_BRIDGE, "Page.navigate", 13, nav));
    json_decref(nav);
    nav = json_string("x");
    assert_non_null(cdp_policy_check(CDP_LAYER_BRIDGE, "Page.navigate", 13, nav));
    json_decref(nav);
}

/* The relay's gate answers as the table does, row by row, with the params
 * that each row looks at. */
static void test_relay_layer_walks_the_table(void **state)
{
    for (size_t i = 0; i < cdp_policy_count; i++) {
        const struct cdp_rule *r = &cdp_policy_table[i];
        char m[128];
        cdp_policy_sample_method(r, m, sizeof m);
        bool passes = (r->pass & CDP_LAYER_RELAY) != 0;
        if ((router_cdp_refused(m, NULL) == NULL) != passes)
            fail_msg("%s: relay %s, table %s", m, passes ? "refuses" : "passes",
                     passes ? "passes" : "refuses");
        if (passes && r->url_param) {
            json_t *p = json_pack("{s:s}", r->url_param, "\x01 FILE:///etc/passwd");
            assert_non_null(router_cdp_refused(m, p));
            json_object_set_new(p, r->url_param, json_string("https://x/"));
            assert_null(router_cdp_refused(m, p));
            json_object_set_new(p, r->url_param, json_string("data:,x"));
            assert_non_null(router_cdp_refused(m, p)); /* not in the user's browser */
            json_decref(p);
        }
    }
    /* The audit's profile-wide reads and writes through an owned tab. */
    const char *profile[] = {"Storage.getCookies",
                             "Network.getAllCookies",
                             "Network.clearBrowserCookies",
                             "Network.setCookie",
                             "Network.deleteCookies",
                             "DOM.setFileInputFiles",
                             "CacheStorage.requestCacheNames"};
    for (size_t i = 0; i < sizeof profile / sizeof *profile; i++)
        assert_non_null(router_cdp_refused(profile[i], NULL));
    json_t *urls = json_pack("{s:[s]}", "urls", "https://bank.example/");
    assert_non_null(router_cdp_refused("Network.getCookies", urls));
    json_decref(urls);
    assert_null(router_cdp_refused("Network.getCookies", NULL));
    assert_null(router_cdp_refused("Runtime.evaluate", NULL));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_urls_as_the_browser_reads_them),
        cmocka_unit_test(test_table_shape),
        cmocka_unit_test(test_relay_layer_walks_the_table),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
