/*
 * test_bidi_policy.c - the BiDi policy table (proto/bidi_policy.c): a
 * session's commands pass only on what it owns; whole-browser commands and
 * local paths never; URLs judged as the browser parses them.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "bidi_policy.h"

/* Session A owns contexts a1 and a2 (a frame), user context uA, preload
 * script s1, request r1 and subscription sub1; B's are b1, uB, s2, r2. */
static bool owns_context(void *ud, const char *c)
{
    (void)ud;
    return strcmp(c, "a1") == 0 || strcmp(c, "a2") == 0;
}

static bool owns_handle(void *ud, const char *kind, const char *id)
{
    (void)ud;
    return (strcmp(kind, "script") == 0 && strcmp(id, "s1") == 0) ||
           (strcmp(kind, "request") == 0 && strcmp(id, "r1") == 0) ||
           (strcmp(kind, "intercept") == 0 && strcmp(id, "i1") == 0) ||
           (strcmp(kind, "subscription") == 0 && strcmp(id, "sub1") == 0);
}

static const struct bidi_owner A = {"uA", owns_context, owns_handle, NULL};

/* The verdict on a command given as JSON text. */
static const char *check(const char *json)
{
    json_error_t e;
    json_t *m = json_loads(json, 0, &e);
    if (!m)
        fail_msg("bad test JSON %s: %s", json, e.text);
    const char *why = bidi_policy_check(m, &A);
    json_decref(m);
    return why;
}

#define PASSES(j) assert_null(check(j))
#define REFUSED(j, text)                                                                           \
    do {                                                                                           \
        const char *why_ = check(j);                                                               \
        assert_non_null(why_);                                                                     \
        assert_non_null(strstr(why_, text));                                                       \
    } while (0)

static void test_own_contexts_only(void **state)
{
    (void)state;
    PASSES("{\"method\":\"browsingContext.navigate\",\"params\":{\"context\":\"a1\",\"url\":"
           "\"http://127.0.0.1:8080/\"}}");
    PASSES("{\"method\":\"input.performActions\",\"params\":{\"context\":\"a2\",\"actions\":[]}}");
    PASSES("{\"method\":\"browsingContext.getTree\",\"params\":{\"root\":\"a1\"}}");
    REFUSED("{\"method\":\"browsingContext.captureScreenshot\",\"params\":{\"context\":\"b1\"}}",
            "not this session's browsing context");
    /* Without a root, the tree would be every session's. */
    REFUSED("{\"method\":\"browsingContext.getTree\",\"params\":{}}", "not this session's");
    REFUSED("{\"method\":\"browsingContext.close\",\"params\":{\"context\":7}}",
            "not this session");
    REFUSED("{\"method\":\"browsingContext.close\"}", "not this session");
    REFUSED("{\"method\":\"browsingContext.close\",\"params\":[\"a1\"]}", "must be an object");
    /* A parameter the rule does not check is not let through beside one it does. */
    REFUSED("{\"method\":\"browsingContext.reload\",\"params\":{\"context\":\"a1\","
            "\"contexts\":[\"b1\"]}}",
            "does not take");
    REFUSED("{\"method\":\"session.subscribe\",\"params\":{\"events\":[\"log\"],"
            "\"contexts\":[\"a1\"],\"context\":\"b1\"}}",
            "does not take");
    REFUSED("{\"method\":\"storage.getCookies\",\"params\":{\"partition\":{\"type\":"
            "\"storageKey\",\"userContext\":\"uA\",\"context\":\"b1\"}}}",
            "names no context");
}

static void test_scripts_target_a_context_not_a_realm(void **state)
{
    (void)state;
    PASSES("{\"method\":\"script.evaluate\",\"params\":{\"expression\":\"1\",\"target\":{"
           "\"context\":\"a1\",\"sandbox\":\"tabvisor\"},\"awaitPromise\":false}}");
    REFUSED("{\"method\":\"script.callFunction\",\"params\":{\"functionDeclaration\":\"()=>1\","
            "\"target\":{\"context\":\"b1\"},\"awaitPromise\":false}}",
            "not this session's browsing context");
    REFUSED("{\"method\":\"script.evaluate\",\"params\":{\"expression\":\"1\",\"target\":{"
            "\"realm\":\"r-1\"},\"awaitPromise\":false}}",
            "not a realm");
    REFUSED("{\"method\":\"script.evaluate\",\"params\":{\"expression\":\"1\",\"target\":{"
            "\"realm\":\"r-1\",\"context\":\"a1\"}}}",
            "not a realm");
}

static void test_user_context_and_cookies(void **state)
{
    (void)state;
    PASSES("{\"method\":\"browsingContext.create\",\"params\":{\"type\":\"tab\",\"userContext\":"
           "\"uA\"}}");
    REFUSED("{\"method\":\"browsingContext.create\",\"params\":{\"type\":\"tab\"}}",
            "session's user context");
    REFUSED("{\"method\":\"browsingContext.create\",\"params\":{\"type\":\"tab\",\"userContext\":"
            "\"uB\"}}",
            "session's user context");
    REFUSED("{\"method\":\"browsingContext.create\",\"params\":{\"type\":\"tab\",\"userContext\":"
            "\"uA\",\"referenceContext\":\"b1\"}}",
            "not this session's browsing context");
    PASSES("{\"method\":\"storage.getCookies\",\"params\":{\"partition\":{\"type\":\"storageKey\","
           "\"userContext\":\"uA\"}}}");
    PASSES("{\"method\":\"storage.deleteCookies\",\"params\":{\"partition\":{\"type\":\"context\","
           "\"context\":\"a1\"}}}");
    /* No partition: the default user context's cookies, nobody's session. */
    REFUSED("{\"method\":\"storage.getCookies\",\"params\":{}}", "cookie partition");
    REFUSED("{\"method\":\"storage.setCookie\",\"params\":{\"cookie\":{},\"partition\":{\"type\":"
            "\"storageKey\",\"userContext\":\"uB\"}}}",
            "cookie partition");
    REFUSED("{\"method\":\"storage.setCookie\",\"params\":{\"partition\":{\"type\":\"storageKey\","
            "\"sourceOrigin\":\"http://x\"}}}",
            "cookie partition");
    PASSES("{\"method\":\"permissions.setPermission\",\"params\":{\"userContext\":\"uA\"}}");
    REFUSED("{\"method\":\"permissions.setPermission\",\"params\":{}}", "user context");
}

static void test_subscriptions_and_handles(void **state)
{
    (void)state;
    PASSES("{\"method\":\"session.subscribe\",\"params\":{\"events\":[\"log.entryAdded\"],"
           "\"contexts\":[\"a1\"]}}");
    PASSES("{\"method\":\"session.subscribe\",\"params\":{\"events\":[\"network\"],"
           "\"userContexts\":[\"uA\"]}}");
    /* A global subscription would deliver every session's events. */
    REFUSED("{\"method\":\"session.subscribe\",\"params\":{\"events\":[\"log.entryAdded\"]}}",
            "must name the session's contexts");
    REFUSED("{\"method\":\"session.subscribe\",\"params\":{\"events\":[\"log\"],\"contexts\":[]}}",
            "not this session's browsing context");
    REFUSED("{\"method\":\"session.subscribe\",\"params\":{\"events\":[\"log\"],\"contexts\":["
            "\"a1\",\"b1\"]}}",
            "not this session's browsing context");
    REFUSED("{\"method\":\"session.subscribe\",\"params\":{\"events\":[\"log\"],\"userContexts\":["
            "\"uA\",\"uB\"]}}",
            "not this session's user context");
    PASSES("{\"method\":\"session.unsubscribe\",\"params\":{\"subscriptions\":[\"sub1\"]}}");
    /* Issue 36, finding 1: Firefox ESR 153 has no userContexts on
     * unsubscribe, drops it, and unsubscribes the whole browser (the
     * bridge's own subscription); by contexts it edits every subscription
     * too. Only by the session's own ids, and nothing beside them. */
    REFUSED("{\"method\":\"session.unsubscribe\",\"params\":{\"events\":[\"browsingContext.load\"],"
            "\"userContexts\":[\"uA\"]}}",
            "does not take");
    REFUSED("{\"method\":\"session.unsubscribe\",\"params\":{\"events\":[\"browsingContext.load\"],"
            "\"contexts\":[\"a1\"]}}",
            "does not take");
    REFUSED("{\"method\":\"session.unsubscribe\",\"params\":{\"events\":[\"log.entryAdded\"]}}",
            "subscriptions, alone");
    REFUSED("{\"method\":\"session.unsubscribe\",\"params\":{\"subscriptions\":[\"sub1\"],"
            "\"events\":[\"log.entryAdded\"]}}",
            "subscriptions, alone");
    REFUSED("{\"method\":\"session.unsubscribe\",\"params\":{\"subscriptions\":[]}}",
            "subscriptions, alone");
    /* Each scoped command takes only the scoping parameters Firefox reads
     * for it: a userContext (singular) on emulation is not one of them. */
    REFUSED("{\"method\":\"emulation.setTimezoneOverride\",\"params\":{\"timezone\":\"UTC\","
            "\"userContext\":\"uA\"}}",
            "does not take");
    REFUSED("{\"method\":\"network.addIntercept\",\"params\":{\"phases\":[\"beforeRequestSent\"],"
            "\"userContexts\":[\"uA\"]}}",
            "does not take");
    REFUSED("{\"method\":\"session.unsubscribe\",\"params\":{\"subscriptions\":[\"sub2\"]}}",
            "subscription");
    PASSES("{\"method\":\"script.removePreloadScript\",\"params\":{\"script\":\"s1\"}}");
    REFUSED("{\"method\":\"script.removePreloadScript\",\"params\":{\"script\":\"s2\"}}",
            "not this session's");
    PASSES("{\"method\":\"network.failRequest\",\"params\":{\"request\":\"r1\"}}");
    REFUSED("{\"method\":\"network.provideResponse\",\"params\":{\"request\":\"r2\"}}",
            "not this session's");
    /* Bodies: only of the session's own requests (the bridge owns a request
     * for the worker its events went to); the collector is the bridge's. */
    PASSES("{\"method\":\"network.getData\",\"params\":{\"dataType\":\"response\","
           "\"request\":\"r1\"}}");
    REFUSED("{\"method\":\"network.getData\",\"params\":{\"dataType\":\"request\","
            "\"request\":\"r2\"}}",
            "not this session's");
    REFUSED("{\"method\":\"network.getData\",\"params\":{\"dataType\":\"response\"}}",
            "not this session's");
    PASSES("{\"method\":\"network.addIntercept\",\"params\":{\"phases\":[\"beforeRequestSent\"],"
           "\"contexts\":[\"a1\"]}}");
    REFUSED("{\"method\":\"network.addIntercept\",\"params\":{\"phases\":[\"beforeRequestSent\"]}}",
            "name the session's browsing contexts");
    PASSES("{\"method\":\"script.addPreloadScript\",\"params\":{\"functionDeclaration\":\"()=>{}\","
           "\"userContexts\":[\"uA\"]}}");
    REFUSED("{\"method\":\"script.addPreloadScript\",\"params\":{\"functionDeclaration\":"
            "\"()=>{}\"}}",
            "must name the session's contexts");
}

static void test_whole_browser_and_local_paths_never(void **state)
{
    (void)state;
    const char *never[] = {"session.new",
                           "session.end",
                           "browser.close",
                           "browser.createUserContext",
                           "browser.removeUserContext",
                           "browser.getUserContexts",
                           "network.addDataCollector",
                           "network.removeDataCollector",
                           "network.disownData",
                           "webExtension.install"};
    char json[200];
    for (size_t i = 0; i < sizeof never / sizeof never[0]; i++) {
        snprintf(json, sizeof json, "{\"method\":\"%s\",\"params\":{\"userContext\":\"uA\"}}",
                 never[i]);
        REFUSED(json, "whole browser");
    }
    REFUSED("{\"method\":\"input.setFiles\",\"params\":{\"context\":\"a1\",\"files\":["
            "\"/etc/passwd\"]}}",
            "local path");
    REFUSED("{\"method\":\"bluetooth.simulateAdapter\",\"params\":{\"context\":\"a1\"}}",
            "not a command tabvisor passes");
    REFUSED("{\"params\":{}}", "needs a method");
}

static void test_urls_as_the_browser_reads_them(void **state)
{
    (void)state;
    const char *bad[] = {"file:///etc/passwd",    " file:///etc/passwd",
                         "FILE:///etc/passwd",    "fi\\tle:///etc/passwd",
                         "javascript:alert(1)",   "about:config",
                         "view-source:http://x/", "chrome://browser/content/browser.xhtml"};
    char json[300];
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        snprintf(json, sizeof json,
                 "{\"method\":\"browsingContext.navigate\",\"params\":{\"context\":\"a1\","
                 "\"url\":\"%s\"}}",
                 bad[i]);
        REFUSED(json, "not one a page of ours may load");
    }
    PASSES("{\"method\":\"browsingContext.navigate\",\"params\":{\"context\":\"a1\",\"url\":"
           "\"about:blank\"}}");
    PASSES("{\"method\":\"browsingContext.navigate\",\"params\":{\"context\":\"a1\",\"url\":"
           "\"data:text/html,hi\"}}");
    REFUSED("{\"method\":\"browsingContext.navigate\",\"params\":{\"context\":\"a1\"}}",
            "needs a url");
    REFUSED("{\"method\":\"network.continueRequest\",\"params\":{\"request\":\"r1\",\"url\":"
            "\"file:///etc/shadow\"}}",
            "not one a page of ours may load");
    PASSES("{\"method\":\"network.continueRequest\",\"params\":{\"request\":\"r1\"}}");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_own_contexts_only),
        cmocka_unit_test(test_scripts_target_a_context_not_a_realm),
        cmocka_unit_test(test_user_context_and_cookies),
        cmocka_unit_test(test_subscriptions_and_handles),
        cmocka_unit_test(test_whole_browser_and_local_paths_never),
        cmocka_unit_test(test_urls_as_the_browser_reads_them),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
