/*
 * firefox_bidi.c - what Firefox over BiDi costs, at the protocol level
 * (bench/firefox.sh builds it without sanitizers and runs it):
 *   - cold start: firefox_launch (namespaces, proxy, Firefox) to session.new
 *     answered;
 *   - per call, in a sandbox of a tab in its own user context: script.evaluate,
 *     a DOM walk, navigate to a page on the host's 127.0.0.1 (through the
 *     SOCKS proxy, wait "complete"), a click (input.performActions),
 *     captureScreenshot;
 *   - memory per extra session: PSS of Firefox's processes with one user
 *     context and tab, then with SESSIONS more, each on the page.
 * Then the same on Chromium over CDP (tests/support/chromium_launch.c, its
 * DevTools port on 127.0.0.1, no proxy), as tabvisor's shared mode uses it:
 * a browser context and target each, an isolated world, Page.navigate to
 * the load event, a click as two Input.dispatchMouseEvent, Page.captureScreenshot.
 * First, what the SOCKS proxy alone adds to a page fetch on a new
 * connection (direct against through it, no browser). Prints one line per figure. TV_FIREFOX,
 * TV_CHROMIUM: the browsers; BENCH_ROUNDS: calls per figure (default 50).
 */
#include <arpa/inet.h>
#include <dirent.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cdp.h"
#include "chromium_launch.h"
#include "clock.h"
#include "firefox.h"
#include "page_server.h"
#include "socks_proxy.h"
#include "transport.h"

#define SESSIONS 5

static struct cdp *bidi;

static const char *cdp_session; /* Chromium: the page's session; NULL for BiDi */

static json_t *must(const char *method, json_t *params)
{
    json_t *r = NULL;
    if (cdp_call(bidi, cdp_session, method, params, &r, mono_ms() + 60000) != CDP_OK) {
        fprintf(stderr, "%s: %s\n", method, cdp_last_error(bidi));
        exit(1);
    }
    json_decref(params);
    return r;
}

static int cmp_ll(const void *a, const void *b)
{
    long long x = *(const long long *)a, y = *(const long long *)b;
    return x < y ? -1 : x > y;
}

static void report(const char *what, long long *us, int n)
{
    qsort(us, (size_t)n, sizeof us[0], cmp_ll);
    printf("%-38s median %7.2f ms   p90 %7.2f ms   (%d calls)\n", what, us[n / 2] / 1000.0,
           us[n * 9 / 10] / 1000.0, n);
}

static long long now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1000000LL + ts.tv_nsec / 1000;
}

/* Sum of PSS (KiB) of the processes in process group pgid. */
static long pss_kib(pid_t pgid)
{
    DIR *d = opendir("/proc");
    long total = 0;
    struct dirent *e;
    while (d && (e = readdir(d))) {
        int pid = atoi(e->d_name);
        if (pid <= 0 || getpgid(pid) != pgid)
            continue;
        char path[64], line[256];
        snprintf(path, sizeof path, "/proc/%d/smaps_rollup", pid);
        FILE *f = fopen(path, "r");
        while (f && fgets(line, sizeof line, f)) {
            long kib;
            if (sscanf(line, "Pss: %ld kB", &kib) == 1)
                total += kib;
        }
        if (f)
            fclose(f);
    }
    if (d)
        closedir(d);
    return total;
}

static const char page[] =
    "<!doctype html><title>Bench</title><button onclick=\"this.textContent++\">0</button>"
    "<ul>"
    "<li><a href=#1>one</a><li><a href=#2>two</a><li><a href=#3>three</a><li><a href=#4>four</a>"
    "</ul><p>Some text for the page to hold, as pages do.</p>";

/* A new user context with a tab on url: the tab's context id (malloc'd). */
static char *open_session(const char *url)
{
    json_t *r = must("browser.createUserContext", NULL);
    json_t *uc = json_incref(json_object_get(r, "userContext"));
    json_decref(r);
    r = must("browsingContext.create", json_pack("{s:s, s:o}", "type", "tab", "userContext", uc));
    char *ctx = strdup(json_string_value(json_object_get(r, "context")));
    json_decref(r);
    json_decref(must("browsingContext.navigate",
                     json_pack("{s:s, s:s, s:s}", "context", ctx, "url", url, "wait", "complete")));
    return ctx;
}

static void connect_bidi(struct firefox *ff)
{
    char err[512];
    struct cdp_transport *t =
        ws_transport_adopt(ff->bidi_fd, ff->ws_url, mono_ms() + 30000, err, sizeof err);
    ff->bidi_fd = -1;
    if (!t || !(bidi = cdp_new(t))) {
        fprintf(stderr, "BiDi: %s\n", err);
        exit(1);
    }
    json_decref(must("session.new", json_pack("{s:{}}", "capabilities")));
}

static int run_firefox(const char *url, int rounds)
{
    char err[512];
    long long *us = calloc((size_t)rounds, sizeof *us);
    struct firefox ff;
    printf("Firefox over WebDriver BiDi (in its namespace, pages through the proxy)\n");

    /* Cold starts: launch to session.new answered. */
    long long cold[3];
    for (int i = 0; i < 3; i++) {
        long long t0 = now_us();
        if (firefox_launch(getenv("TV_FIREFOX"), NULL, false, NULL, mono_ms() + 60000, &ff, err,
                           sizeof err) != 0) {
            fprintf(stderr, "firefox_launch: %s\n", err);
            return 1;
        }
        connect_bidi(&ff);
        cold[i] = now_us() - t0;
        if (i < 2) {
            cdp_free(bidi);
            firefox_stop(&ff, 5000);
        }
    }
    report("cold start (to session.new)", cold, 3);
    (void)err;

    char *ctx = open_session(url);
    json_t *target = json_pack("{s:s, s:s}", "context", ctx, "sandbox", "tabvisor");
    for (int i = 0; i < rounds; i++) {
        long long t0 = now_us();
        json_decref(must("script.evaluate", json_pack("{s:s, s:O, s:b}", "expression", "1 + 1",
                                                      "target", target, "awaitPromise", 0)));
        us[i] = now_us() - t0;
    }
    report("script.evaluate 1+1 (sandbox)", us, rounds);
    for (int i = 0; i < rounds; i++) {
        long long t0 = now_us();
        json_decref(must("script.evaluate",
                         json_pack("{s:s, s:O, s:b}", "expression",
                                   "[...document.querySelectorAll('*')].map(e => e.tagName + "
                                   "(e.textContent || '').slice(0, 20)).join('\\n')",
                                   "target", target, "awaitPromise", 0)));
        us[i] = now_us() - t0;
    }
    report("script.evaluate DOM walk (sandbox)", us, rounds);
    for (int i = 0; i < rounds; i++) {
        long long t0 = now_us();
        json_decref(must("browsingContext.navigate", json_pack("{s:s, s:s, s:s}", "context", ctx,
                                                               "url", url, "wait", "complete")));
        us[i] = now_us() - t0;
    }
    report("navigate, host page via proxy", us, rounds);
    for (int i = 0; i < rounds; i++) {
        long long t0 = now_us();
        json_decref(must(
            "input.performActions",
            json_pack("{s:s, s:[{s:s, s:s, s:{s:s}, s:[{s:s, s:i, s:i}, {s:s, s:i}, {s:s, "
                      "s:i}]}]}",
                      "context", ctx, "actions", "type", "pointer", "id", "mouse", "parameters",
                      "pointerType", "mouse", "actions", "type", "pointerMove", "x", 20, "y", 15,
                      "type", "pointerDown", "button", 0, "type", "pointerUp", "button", 0)));
        us[i] = now_us() - t0;
    }
    report("input.performActions click", us, rounds);
    for (int i = 0; i < rounds; i++) {
        long long t0 = now_us();
        json_decref(must("browsingContext.captureScreenshot", json_pack("{s:s}", "context", ctx)));
        us[i] = now_us() - t0;
    }
    report("browsingContext.captureScreenshot", us, rounds);
    json_decref(target);

    usleep(500000);
    long base = pss_kib(ff.browser);
    char *more[SESSIONS];
    for (int i = 0; i < SESSIONS; i++)
        more[i] = open_session(url);
    usleep(1000000);
    long after = pss_kib(ff.browser);
    printf("%-38s %ld KiB with one session, %ld KiB with %d more: %ld KiB per extra session\n",
           "memory (PSS, Firefox's processes)", base, after, SESSIONS, (after - base) / SESSIONS);
    for (int i = 0; i < SESSIONS; i++)
        free(more[i]);
    free(ctx);
    free(us);
    cdp_free(bidi);
    firefox_stop(&ff, 5000);
    return 0;
}

/* ---- Chromium over CDP ---- */

static int loads;

static void on_cdp_event(void *ud, const char *session, const char *method, json_t *params)
{
    (void)ud;
    (void)params;
    if (session && cdp_session && strcmp(session, cdp_session) == 0 &&
        strcmp(method, "Page.loadEventFired") == 0)
        loads++;
}

static int loaded_since;
static int load_came(void *ud)
{
    (void)ud;
    return loads > loaded_since;
}

/* A new browser context with a page on url, attached: its session id
 * (malloc'd) and target id (*target, malloc'd). */
static char *open_cdp_page(const char *url, char **target)
{
    const char *outer = cdp_session;
    cdp_session = NULL;
    json_t *r = must("Target.createBrowserContext", json_pack("{s:b}", "disposeOnDetach", 1));
    json_t *bc = json_incref(json_object_get(r, "browserContextId"));
    json_decref(r);
    r = must("Target.createTarget",
             json_pack("{s:s, s:o}", "url", "about:blank", "browserContextId", bc));
    *target = strdup(json_string_value(json_object_get(r, "targetId")));
    json_decref(r);
    r = must("Target.attachToTarget", json_pack("{s:s, s:b}", "targetId", *target, "flatten", 1));
    char *session = strdup(json_string_value(json_object_get(r, "sessionId")));
    json_decref(r);
    cdp_session = session;
    json_decref(must("Page.enable", NULL));
    loaded_since = loads;
    json_decref(must("Page.navigate", json_pack("{s:s}", "url", url)));
    cdp_wait(bidi, load_came, NULL, mono_ms() + 30000);
    cdp_session = outer;
    return session;
}

static int run_chromium(const char *url, int rounds)
{
    long long *us = calloc((size_t)rounds, sizeof *us);
    struct chromium_proc cp = {.pid = -1};
    char err[512];
    printf("Chromium over CDP (its DevTools port on 127.0.0.1, pages direct)\n");
    long long cold[3];
    for (int i = 0; i < 3; i++) {
        long long t0 = now_us();
        if (chromium_launch(&cp) != 0)
            return 1;
        struct cdp_transport *t =
            ws_transport_connect(cp.ws_url, mono_ms() + 30000, err, sizeof err);
        if (!t || !(bidi = cdp_new(t))) {
            fprintf(stderr, "CDP: %s\n", err);
            return 1;
        }
        cdp_session = NULL;
        json_decref(must("Browser.getVersion", NULL));
        cold[i] = now_us() - t0;
        if (i < 2) {
            cdp_free(bidi);
            chromium_stop(&cp);
        }
    }
    report("cold start (to the first answer)", cold, 3);
    cdp_set_event_handler(bidi, on_cdp_event, NULL);
    char *target;
    char *session = open_cdp_page(url, &target);
    cdp_session = session;
    json_t *r = must("Page.createIsolatedWorld",
                     json_pack("{s:s, s:s}", "frameId", target, "worldName", "tabvisor"));
    json_int_t world = json_integer_value(json_object_get(r, "executionContextId"));
    json_decref(r);
    for (int i = 0; i < rounds; i++) {
        long long t0 = now_us();
        json_decref(must("Runtime.evaluate", json_pack("{s:s, s:I, s:b}", "expression", "1 + 1",
                                                       "contextId", world, "returnByValue", 1)));
        us[i] = now_us() - t0;
    }
    report("Runtime.evaluate 1+1 (isolated world)", us, rounds);
    for (int i = 0; i < rounds; i++) {
        long long t0 = now_us();
        json_decref(must("Runtime.evaluate",
                         json_pack("{s:s, s:I, s:b}", "expression",
                                   "[...document.querySelectorAll('*')].map(e => e.tagName + "
                                   "(e.textContent || '').slice(0, 20)).join('\\n')",
                                   "contextId", world, "returnByValue", 1)));
        us[i] = now_us() - t0;
    }
    report("Runtime.evaluate DOM walk (isolated)", us, rounds);
    for (int i = 0; i < rounds; i++) {
        long long t0 = now_us();
        loaded_since = loads;
        json_decref(must("Page.navigate", json_pack("{s:s}", "url", url)));
        cdp_wait(bidi, load_came, NULL, mono_ms() + 30000);
        us[i] = now_us() - t0;
    }
    report("Page.navigate to the load event", us, rounds);
    for (int i = 0; i < rounds; i++) {
        long long t0 = now_us();
        json_decref(must("Input.dispatchMouseEvent",
                         json_pack("{s:s, s:i, s:i, s:s, s:i}", "type", "mousePressed", "x", 20,
                                   "y", 15, "button", "left", "clickCount", 1)));
        json_decref(must("Input.dispatchMouseEvent",
                         json_pack("{s:s, s:i, s:i, s:s, s:i}", "type", "mouseReleased", "x", 20,
                                   "y", 15, "button", "left", "clickCount", 1)));
        us[i] = now_us() - t0;
    }
    report("click (two Input.dispatchMouseEvent)", us, rounds);
    for (int i = 0; i < rounds; i++) {
        long long t0 = now_us();
        json_decref(must("Page.captureScreenshot", NULL));
        us[i] = now_us() - t0;
    }
    report("Page.captureScreenshot", us, rounds);
    usleep(500000);
    long base = pss_kib(cp.pid);
    char *more[SESSIONS], *more_t[SESSIONS];
    for (int i = 0; i < SESSIONS; i++)
        more[i] = open_cdp_page(url, &more_t[i]);
    usleep(1000000);
    long after = pss_kib(cp.pid);
    printf("%-38s %ld KiB with one session, %ld KiB with %d more: %ld KiB per extra session\n",
           "memory (PSS, Chromium's processes)", base, after, SESSIONS, (after - base) / SESSIONS);
    for (int i = 0; i < SESSIONS; i++) {
        free(more[i]);
        free(more_t[i]);
    }
    free(session);
    free(target);
    free(us);
    cdp_free(bidi);
    chromium_stop(&cp);
    return 0;
}

/* ---- the proxy alone ---- */

/* One page fetch (request written, response read to its close) on fd,
 * already connected to the page server. */
static void fetch_on(int fd)
{
    const char req[] = "GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n";
    if (write(fd, req, sizeof req - 1) != (ssize_t)(sizeof req - 1))
        exit(1);
    char buf[4096];
    while (read(fd, buf, sizeof buf) > 0)
        ;
    close(fd);
}

static int connect_tcp(int port)
{
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (connect(fd, (struct sockaddr *)&a, sizeof a) != 0)
        exit(1);
    return fd;
}

/* Through the proxy at path: connect, SOCKS5 greeting and CONNECT to
 * 127.0.0.1:port; the fd once the proxy says it is through. */
static int connect_socks(const char *path, int port)
{
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    struct sockaddr_un a = {.sun_family = AF_UNIX};
    snprintf(a.sun_path, sizeof a.sun_path, "%s", path);
    if (connect(fd, (struct sockaddr *)&a, sizeof a) != 0)
        exit(1);
    unsigned char hello[] = {5, 1, 0}, req[] = {5, 1, 0, 1, 127, 0, 0, 1, 0, 0}, r[10];
    req[8] = (unsigned char)(port >> 8);
    req[9] = (unsigned char)(port & 0xff);
    if (write(fd, hello, 3) != 3 || read(fd, r, 2) != 2 || r[1] != 0 || write(fd, req, 10) != 10)
        exit(1);
    size_t got = 0;
    while (got < 10) {
        ssize_t n = read(fd, r + got, 10 - got);
        if (n <= 0)
            exit(1);
        got += (size_t)n;
    }
    if (r[1] != 0)
        exit(1);
    return fd;
}

/* What the proxy adds to one connection and page fetch: the same fetch
 * direct and through a proxy of its own (no Firefox). */
static void run_proxy(int port, int rounds)
{
    long long *us = calloc((size_t)rounds, sizeof *us);
    char dir[] = "/tmp/tv-bench-socks-XXXXXX", path[64];
    if (!mkdtemp(dir))
        exit(1);
    snprintf(path, sizeof path, "%s/socks.sock", dir);
    int lfd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    struct sockaddr_un a = {.sun_family = AF_UNIX};
    snprintf(a.sun_path, sizeof a.sun_path, "%s", path);
    if (bind(lfd, (struct sockaddr *)&a, sizeof a) != 0 || listen(lfd, 64) != 0)
        exit(1);
    pid_t proxy = fork();
    if (proxy == 0)
        socks_proxy_run(lfd, -1, NULL);
    close(lfd);
    printf("The SOCKS proxy alone (a page fetch on a new connection)\n");
    for (int i = 0; i < rounds; i++) {
        long long t0 = now_us();
        fetch_on(connect_tcp(port));
        us[i] = now_us() - t0;
    }
    report("direct", us, rounds);
    for (int i = 0; i < rounds; i++) {
        long long t0 = now_us();
        fetch_on(connect_socks(path, port));
        us[i] = now_us() - t0;
    }
    report("through the proxy", us, rounds);
    kill(proxy, SIGKILL);
    waitpid(proxy, NULL, 0);
    unlink(path);
    rmdir(dir);
    free(us);
}

int main(void)
{
    int rounds = getenv("BENCH_ROUNDS") ? atoi(getenv("BENCH_ROUNDS")) : 50;
    if (rounds < 10)
        rounds = 10;
    int port;
    if (page_server_start(page, &port) != 0)
        return 1;
    char url[96];
    snprintf(url, sizeof url, "http://127.0.0.1:%d/", port);
    run_proxy(port, rounds);
    if (run_firefox(url, rounds) != 0)
        return 1;
    return run_chromium(url, rounds);
}
