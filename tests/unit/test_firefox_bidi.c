/*
 * test_firefox_bidi.c - Firefox ESR in its own network namespace
 * (supervisor/firefox.c), spoken to over WebDriver BiDi with the worker's
 * own WebSocket (ws_transport_adopt) and CDP client, whose envelope BiDi
 * shares (worker/cdp/cdp.c): the groundwork of issue 23.
 *
 * The group setup starts one Firefox; the tests run in order on one BiDi
 * session. Firefox missing is a failure, not a skip (deploy/install-deps.sh
 * installs firefox-esr). TV_FIREFOX overrides the browser path.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cdp.h"
#include "clock.h"
#include "firefox.h"
#include "page_server.h"
#include "transport.h"

static struct firefox ff;
/* A page server on the host's 127.0.0.1, and a port the proxy refuses. */
static int page_port, blocked_port, blocked_fd;
static struct cdp *bidi;
static char user_a[128], user_b[128], ctx_a[128];

static int call(const char *method, json_t *params, json_t **result)
{
    int rc = cdp_call(bidi, NULL, method, params, result, mono_ms() + 30000);
    json_decref(params);
    if (rc != CDP_OK && rc != CDP_ERROR)
        fail_msg("%s: status %d: %s", method, rc, cdp_last_error(bidi));
    return rc;
}

static json_t *ok(const char *method, json_t *params)
{
    json_t *r = NULL;
    if (call(method, params, &r) != CDP_OK)
        fail_msg("%s: %s", method, cdp_last_error(bidi));
    return r;
}

/* script.evaluate in the tabvisor sandbox of ctx_a; the value (a new
 * reference). */
static json_t *eval_sandboxed(const char *expression)
{
    json_t *r = ok("script.evaluate",
                   json_pack("{s:s, s:{s:s, s:s}, s:b}", "expression", expression, "target",
                             "context", ctx_a, "sandbox", "tabvisor", "awaitPromise", 1));
    json_t *v = json_incref(json_object_get(json_object_get(r, "result"), "value"));
    json_decref(r);
    return v;
}

static int setup(void **state)
{
    (void)state;
    char err[512];
    blocked_fd = page_listen_local(&blocked_port);
    if (page_server_start("<!doctype html><title>Host page</title><p>from the host</p>",
                          &page_port) != 0 ||
        blocked_fd < 0)
        return -1;
    struct socks_policy policy = {.blocked_ports = {blocked_port}};
    if (firefox_launch(getenv("TV_FIREFOX"), NULL, false, &policy, mono_ms() + 60000, &ff, err,
                       sizeof err) != 0) {
        fprintf(stderr, "firefox_launch: %s\n", err);
        return -1;
    }
    struct cdp_transport *t =
        ws_transport_adopt(ff.bidi_fd, ff.ws_url, mono_ms() + 30000, err, sizeof err);
    ff.bidi_fd = -1; /* the transport's now */
    if (!t) {
        fprintf(stderr, "ws_transport_adopt: %s\n", err);
        return -1;
    }
    bidi = cdp_new(t);
    return bidi ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    pid_t browser = ff.browser;
    char dir[PATH_MAX];
    snprintf(dir, sizeof dir, "%s", ff.dir);
    if (bidi) {
        json_t *r = NULL;
        cdp_call(bidi, NULL, "session.end", NULL, &r, mono_ms() + 5000);
        json_decref(r);
        cdp_free(bidi);
    }
    firefox_stop(&ff, 5000);
    /* Nothing left: Firefox's group is gone and its profile removed. */
    if (browser > 0 && kill(-browser, 0) == 0) {
        fprintf(stderr, "Firefox's process group %d outlived firefox_stop\n", (int)browser);
        return -1;
    }
    struct stat st;
    if (dir[0] && stat(dir, &st) == 0) {
        fprintf(stderr, "%s outlived firefox_stop\n", dir);
        return -1;
    }
    return 0;
}

/* Firefox's BiDi port is in its own network namespace: the same port on
 * the host's 127.0.0.1 has no listener, and Firefox's namespace is not
 * ours. */
static void test_no_port_in_the_hosts_namespace(void **state)
{
    (void)state;
    int port = 0;
    const char *colon = strrchr(ff.ws_url, ':');
    assert_non_null(colon);
    port = atoi(colon + 1);
    assert_true(port > 0);
    int s = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    assert_int_equal(connect(s, (struct sockaddr *)&a, sizeof a), -1);
    assert_int_equal(errno, ECONNREFUSED);
    close(s);
    char mine[64] = "", theirs[64] = "", path[64];
    snprintf(path, sizeof path, "/proc/%d/ns/net", (int)ff.browser);
    assert_true(readlink("/proc/self/ns/net", mine, sizeof mine - 1) > 0);
    assert_true(readlink(path, theirs, sizeof theirs - 1) > 0);
    assert_string_not_equal(mine, theirs);
}

static void test_session_and_user_contexts(void **state)
{
    (void)state;
    json_t *r = ok("session.new", json_pack("{s:{}}", "capabilities"));
    assert_non_null(json_string_value(json_object_get(r, "sessionId")));
    json_decref(r);
    r = ok("browser.createUserContext", NULL);
    snprintf(user_a, sizeof user_a, "%s", json_string_value(json_object_get(r, "userContext")));
    json_decref(r);
    r = ok("browser.createUserContext", NULL);
    snprintf(user_b, sizeof user_b, "%s", json_string_value(json_object_get(r, "userContext")));
    json_decref(r);
    assert_true(user_a[0] && user_b[0] && strcmp(user_a, user_b) != 0);
    r = ok("browsingContext.create", json_pack("{s:s, s:s}", "type", "tab", "userContext", user_a));
    snprintf(ctx_a, sizeof ctx_a, "%s", json_string_value(json_object_get(r, "context")));
    json_decref(r);
    assert_true(ctx_a[0]);
}

/* The same injected-engine seam as Chromium's isolated world: the DOM is
 * shared, the page's globals are not. */
static void test_navigate_and_evaluate_in_a_sandbox(void **state)
{
    (void)state;
    const char *page = "data:text/html,<title>Fox</title><p id=x>hello</p>"
                       "<button onclick=\"document.title='clicked'\">Go</button>"
                       "<script>window.pageSecret=42</script>";
    json_t *r = ok("browsingContext.navigate",
                   json_pack("{s:s, s:s, s:s}", "context", ctx_a, "url", page, "wait", "complete"));
    json_decref(r);
    json_t *v = eval_sandboxed("document.title + ' ' + document.getElementById('x').textContent");
    assert_string_equal(json_string_value(v), "Fox hello");
    json_decref(v);
    v = eval_sandboxed("typeof window.pageSecret");
    assert_string_equal(json_string_value(v), "undefined");
    json_decref(v);
}

/* Pages on the host's 127.0.0.1 come through the proxy; a port the policy
 * blocks is never reached. */
static void test_host_pages_through_the_proxy(void **state)
{
    (void)state;
    char url[96];
    snprintf(url, sizeof url, "http://127.0.0.1:%d/page", page_port);
    int hits = page_server_hits();
    json_t *r = ok("browsingContext.navigate",
                   json_pack("{s:s, s:s, s:s}", "context", ctx_a, "url", url, "wait", "complete"));
    json_decref(r);
    json_t *v = eval_sandboxed("document.title");
    assert_string_equal(json_string_value(v), "Host page");
    json_decref(v);
    assert_true(page_server_hits() > hits);
    snprintf(url, sizeof url, "http://127.0.0.1:%d/secret", blocked_port);
    r = NULL;
    assert_int_equal(
        call("browsingContext.navigate",
             json_pack("{s:s, s:s, s:s}", "context", ctx_a, "url", url, "wait", "complete"), &r),
        CDP_ERROR);
    json_decref(r);
    /* Nothing ever connected to the blocked port. */
    struct pollfd p = {.fd = blocked_fd, .events = POLLIN};
    assert_int_equal(poll(&p, 1, 0), 0);
}

/* Trusted input: a real click on the button's centre. */
static void test_trusted_click(void **state)
{
    (void)state;
    json_t *v = eval_sandboxed(
        "(() => { const b = document.querySelector('button').getBoundingClientRect();"
        " return [Math.round(b.x + b.width / 2), Math.round(b.y + b.height / 2)]; })()");
    /* A BiDi array value: [{type: number, value: x}, ...] */
    int x = (int)json_integer_value(json_object_get(json_array_get(v, 0), "value"));
    int y = (int)json_integer_value(json_object_get(json_array_get(v, 1), "value"));
    json_decref(v);
    assert_true(x > 0 && y > 0);
    json_t *r =
        ok("input.performActions",
           json_pack("{s:s, s:[{s:s, s:s, s:{s:s}, s:[{s:s, s:i, s:i}, {s:s, s:i}, {s:s, s:i}]}]}",
                     "context", ctx_a, "actions", "type", "pointer", "id", "mouse", "parameters",
                     "pointerType", "mouse", "actions", "type", "pointerMove", "x", x, "y", y,
                     "type", "pointerDown", "button", 0, "type", "pointerUp", "button", 0));
    json_decref(r);
    v = eval_sandboxed("document.title");
    assert_string_equal(json_string_value(v), "clicked");
    json_decref(v);
}

static void test_screenshot(void **state)
{
    (void)state;
    json_t *r = ok("browsingContext.captureScreenshot", json_pack("{s:s}", "context", ctx_a));
    const char *data = json_string_value(json_object_get(r, "data"));
    assert_non_null(data);
    assert_memory_equal(data, "iVBORw0KGgo", 11); /* PNG, base64 */
    json_decref(r);
}

/* Each user context has its own cookies. */
static void test_user_contexts_do_not_share_cookies(void **state)
{
    (void)state;
    json_t *r = ok("storage.setCookie",
                   json_pack("{s:{s:s, s:{s:s, s:s}, s:s}, s:{s:s, s:s}}", "cookie", "name", "who",
                             "value", "type", "string", "value", "a", "domain", "fox.test",
                             "partition", "type", "storageKey", "userContext", user_a));
    json_decref(r);
    r = ok("storage.getCookies",
           json_pack("{s:{s:s, s:s}}", "partition", "type", "storageKey", "userContext", user_a));
    assert_int_equal(json_array_size(json_object_get(r, "cookies")), 1);
    json_decref(r);
    r = ok("storage.getCookies",
           json_pack("{s:{s:s, s:s}}", "partition", "type", "storageKey", "userContext", user_b));
    assert_int_equal(json_array_size(json_object_get(r, "cookies")), 0);
    json_decref(r);
}

/* BiDi's error shape reaches the caller as CDP_ERROR with its code first. */
static void test_bidi_errors(void **state)
{
    (void)state;
    json_t *r = NULL;
    assert_int_equal(
        call("browsingContext.navigate",
             json_pack("{s:s, s:s}", "context", "no-such-context", "url", "about:blank"), &r),
        CDP_ERROR);
    assert_null(r);
    assert_int_equal(cdp_last_error_code(bidi), CDP_ERR_BIDI);
    assert_non_null(strstr(cdp_last_error(bidi), "no such frame"));
    /* Removing a user context closes its tabs. */
    r = ok("browser.removeUserContext", json_pack("{s:s}", "userContext", user_a));
    json_decref(r);
    r = ok("browsingContext.getTree", NULL);
    json_t *c;
    size_t i;
    json_array_foreach(json_object_get(r, "contexts"), i, c)
        assert_string_not_equal(json_string_value(json_object_get(c, "context")), ctx_a);
    json_decref(r);
}

/* A browser that does not start: a clear error, nothing left behind. */
static void test_launch_failure_is_clean(void **state)
{
    (void)state;
    struct firefox bad;
    char err[512] = "";
    assert_int_equal(firefox_launch("/nonexistent/firefox", NULL, false, NULL, mono_ms() + 30000,
                                    &bad, err, sizeof err),
                     -1);
    assert_non_null(strstr(err, "exited before opening its BiDi endpoint: tabvisor: exec "
                                "/nonexistent/firefox: No such file or directory"));
    assert_int_equal(bad.holder, 0);
    assert_int_equal(bad.bidi_fd, -1);
    assert_string_equal(bad.dir, "");
}

static int count_fds(void)
{
    int n = 0;
    DIR *d = opendir("/proc/self/fd");
    while (d && readdir(d))
        n++;
    if (d)
        closedir(d);
    return n;
}

/* kill -9 of Firefox during a call: the call ends within a second as the
 * connection closes, and the stop leaves no process, dir or descriptor. */
static void test_kill_mid_call(void **state)
{
    (void)state;
    int fds = count_fds();
    struct firefox f2;
    char err[512];
    assert_int_equal(firefox_launch(getenv("TV_FIREFOX"), NULL, false, NULL, mono_ms() + 60000, &f2,
                                    err, sizeof err),
                     0);
    struct cdp_transport *t =
        ws_transport_adopt(f2.bidi_fd, f2.ws_url, mono_ms() + 30000, err, sizeof err);
    f2.bidi_fd = -1;
    assert_non_null(t);
    struct cdp *c = cdp_new(t);
    json_t *r = NULL;
    json_t *caps = json_pack("{s:{}}", "capabilities");
    assert_int_equal(cdp_call(c, NULL, "session.new", caps, &r, mono_ms() + 30000), CDP_OK);
    json_decref(caps);
    json_decref(r);
    r = NULL;
    assert_int_equal(cdp_call(c, NULL, "browsingContext.getTree", NULL, &r, mono_ms() + 30000),
                     CDP_OK);
    const char *ctx = json_string_value(
        json_object_get(json_array_get(json_object_get(r, "contexts"), 0), "context"));
    assert_non_null(ctx);
    json_t *params = json_pack("{s:s, s:{s:s}, s:b}", "expression", "new Promise(() => {})",
                               "target", "context", ctx, "awaitPromise", 1);
    json_decref(r);
    /* A child kills Firefox 300 ms into a call that never answers, and
     * says when (CLOCK_MONOTONIC is the same for both). */
    int when[2];
    assert_int_equal(pipe(when), 0);
    pid_t killer = fork();
    if (killer == 0) {
        usleep(300000);
        kill(f2.browser, SIGKILL);
        long long at = mono_ms();
        if (write(when[1], &at, sizeof at) != sizeof at)
            _exit(1);
        _exit(0);
    }
    int rc = cdp_call(c, NULL, "script.evaluate", params, NULL, mono_ms() + 30000);
    long long back = mono_ms(), killed = 0;
    json_decref(params);
    assert_int_equal(read(when[0], &killed, sizeof killed), (ssize_t)sizeof killed);
    close(when[0]);
    close(when[1]);
    waitpid(killer, NULL, 0);
    assert_int_equal(rc, CDP_CLOSED);
    if (back - killed >= 1000)
        fail_msg("the call ended %lld ms after the kill", back - killed);
    cdp_free(c);
    pid_t group = f2.browser;
    char dir[PATH_MAX];
    snprintf(dir, sizeof dir, "%s", f2.dir);
    firefox_stop(&f2, 3000);
    assert_int_equal(kill(-group, 0), -1);
    struct stat st;
    assert_int_equal(stat(dir, &st), -1);
    assert_int_equal(count_fds(), fds);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_no_port_in_the_hosts_namespace),
        cmocka_unit_test(test_session_and_user_contexts),
        cmocka_unit_test(test_navigate_and_evaluate_in_a_sandbox),
        cmocka_unit_test(test_trusted_click),
        cmocka_unit_test(test_host_pages_through_the_proxy),
        cmocka_unit_test(test_screenshot),
        cmocka_unit_test(test_user_contexts_do_not_share_cookies),
        cmocka_unit_test(test_bidi_errors),
        cmocka_unit_test(test_launch_failure_is_clean),
        cmocka_unit_test(test_kill_mid_call),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
