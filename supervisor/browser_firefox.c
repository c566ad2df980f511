/*
 * browser_firefox.c - --browser firefox: one Firefox (ESR) launched in its
 * own namespaces (firefox.h), spoken to over WebDriver BiDi through the
 * supervisor's BiDi bridge (bidi_bridge.h).
 *
 * The launch takes seconds (namespaces, proxy, Firefox's own start), so it
 * runs on the WebSocket adapter's connecting thread (cdp_remote.h): the
 * thread launches, upgrades the handed-over socket to a WebSocket, and the
 * loop then relays NUL-framed BiDi between the bridge and it. The loop
 * never waits on Firefox.
 *
 * Pages leave Firefox's namespace only through its SOCKS proxy, whose
 * policy is built here from the supervisor's flags: our own HTTP port,
 * link-local addresses unless --allow-link-local, --allowed-origins and
 * --blocked-origins.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bidi_bridge.h"
#include "browser_int.h"
#include "cdp_connect.h"
#include "cdp_remote.h"
#include "clock.h"
#include "firefox.h"
#include "log.h"
#include "origins.h"
#include "server.h"

#define MAX_RULES 64

/* What the connecting thread needs, and what it started (the holder). */
struct ff_launch {
    char binary[PATH_MAX];
    char tmpdir[PATH_MAX];
    bool headed;
    struct socks_policy policy;
    struct origin_rule blocked[MAX_RULES], allowed[MAX_RULES];
    struct firefox ff;
};

static int add_rule(const char *item, void *ud)
{
    struct {
        struct origin_rule *r;
        int *n;
    } *x = ud;
    if (*x->n >= MAX_RULES)
        return -1;
    if (origin_rule_parse(item, &x->r[*x->n]) == 0)
        (*x->n)++;
    return 0;
}

/* The proxy's policy from the supervisor's flags. -1 when a list is too long. */
static int build_policy(struct server *srv, struct ff_launch *l)
{
    struct socks_policy *p = &l->policy;
    int np = 0;
    if (srv->http_port > 0)
        p->blocked_ports[np++] = srv->http_port;
    p->allow_link_local = srv->cfg.allow_link_local;
    struct {
        struct origin_rule *r;
        int *n;
    } b = {l->blocked, &p->nblocked}, a = {l->allowed, &p->nallowed};
    if (config_each_item(srv->cfg.browser_blocked_origins, add_rule, &b) != 0 ||
        config_each_item(srv->cfg.browser_allowed_origins, add_rule, &a) != 0)
        return -1;
    p->blocked = p->nblocked ? l->blocked : NULL;
    p->allowed = p->nallowed ? l->allowed : NULL;
    /* A proxy share for every session there can be (pooled workers too). */
    long long shares = (long long)srv->cfg.max_sessions + srv->cfg.pool_size;
    p->shares = shares < SOCKS_MAX_SHARES - 1 ? (int)shares : SOCKS_MAX_SHARES - 1;
    return 0;
}

static void launch_free(void *arg)
{
    struct ff_launch *l = arg;
    if (l->ff.bidi_fd >= 0)
        close(l->ff.bidi_fd);
    firefox_stop(&l->ff, 0);
    free(l);
}

/* On the connecting thread: launch, then the WebSocket upgrade. */
static void launch_connect(void *arg, struct cdp_conn_result *out)
{
    struct ff_launch *l = arg;
    memset(out, 0, sizeof *out);
    out->fd = -1;
    long long deadline = mono_ms() + BROWSER_START_TIMEOUT_MS - 2000;
    if (firefox_launch(l->binary, l->tmpdir, l->headed, &l->policy, deadline, &l->ff, out->err,
                       sizeof out->err) < 0)
        return;
    struct cdp_url u;
    char why[200];
    if (cdp_url_parse(l->ff.ws_url, &u, why, sizeof why) < 0) {
        snprintf(out->err, sizeof out->err, "Firefox's BiDi address %s: %s", l->ff.ws_url, why);
        return;
    }
    int fd = l->ff.bidi_fd;
    l->ff.bidi_fd = -1;
    fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
    cdp_upgrade_on(fd, &u, u.path, deadline, out);
}

static void firefox_down(struct browser *b, const char *why)
{
    if (b->state == BROWSER_DOWN)
        return;
    log_warn("firefox: %s", why);
    browser_drop_firefox_link(b);
    if (b->pid > 0 && b->state != BROWSER_DYING) {
        /* Up, or launched: end it; its reaping resets the state and tells
         * the owner (browser_reaped). */
        if (b->state == BROWSER_READY)
            b->state = BROWSER_DYING;
        kill(b->pid, SIGKILL);
        return;
    }
    if (b->pid > 0)
        return;
    /* The launch itself failed: nothing runs (the thread cleaned up). */
    b->state = BROWSER_DOWN;
    loop_del_timer(b->srv->loop, b->start_timer);
    b->start_timer = 0;
    browser_back_off(b);
    char err[400];
    snprintf(err, sizeof err, "could not start Firefox: %s", why);
    browser_notify_waiters(b, err);
}

static void on_bidi_ready(void *ud)
{
    browser_now_ready(ud);
}

static void on_bidi_closed(void *ud, const char *why)
{
    firefox_down(ud, why);
}

static const struct bidi_bridge_events bidi_events = {.ready = on_bidi_ready,
                                                      .closed = on_bidi_closed};

static void on_link_up(void *ud)
{
    struct browser *b = ud;
    b->ff = cdp_remote_take_arg(b->remote);
    if (b->ff) {
        b->pid = b->ff->ff.holder;
        if (b->bidi)
            bidi_bridge_set_shares(b->bidi, b->ff->ff.share_ports, b->ff->ff.nshares);
        browser_write_pidfile(b);
        log_info("%s: Firefox up (holder pid %d, browser pid %d in its namespace); BiDi over a "
                 "socket handed out of it, no port in ours",
                 b->name, (int)b->ff->ff.holder, (int)b->ff->ff.browser);
    }
}

static void on_link_closed(void *ud, const char *why)
{
    firefox_down(ud, why);
}

static const struct cdp_remote_events link_events = {.connected = on_link_up,
                                                     .closed = on_link_closed};

int browser_start_firefox(struct browser *b)
{
    struct server *srv = b->srv;
    struct ff_launch *l = calloc(1, sizeof *l);
    if (!l)
        return -1;
    snprintf(l->binary, sizeof l->binary, "%s", srv->cfg.firefox_bin);
    snprintf(l->tmpdir, sizeof l->tmpdir, "%s", srv->run_dir);
    l->headed = srv->cfg.headed;
    l->ff.bidi_fd = -1;
    if (build_policy(srv, l) < 0) {
        free(l);
        log_error("firefox: more than %d origin rules", MAX_RULES);
        return -1;
    }
    int sv[2];
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0) {
        free(l);
        return -1;
    }
    b->remote =
        cdp_remote_new_with(srv->loop, launch_connect, l, launch_free, sv[1], &link_events, b);
    if (!b->remote) {
        close(sv[0]);
        return -1;
    }
    b->state = BROWSER_STARTING;
    b->started = mono_ms();
    log_info("starting %s: %s (Firefox, WebDriver BiDi)", b->name, srv->cfg.firefox_bin);
    b->bidi = bidi_bridge_new(srv->loop, sv[0], &bidi_events, b);
    if (!b->bidi) {
        firefox_down(b, "out of memory");
        return 0;
    }
    b->start_timer =
        loop_add_timer(srv->loop, BROWSER_START_TIMEOUT_MS, browser_on_start_timeout, b);
    return 0;
}

static void free_bidi(void *ud)
{
    bidi_bridge_free(ud);
}

static void free_link(void *ud)
{
    cdp_remote_free(ud);
}

void browser_drop_firefox_link(struct browser *b)
{
    if (b->bidi)
        loop_defer(b->srv->loop, free_bidi, b->bidi);
    if (b->remote)
        loop_defer(b->srv->loop, free_link, b->remote);
    b->bidi = NULL;
    b->remote = NULL;
}

void browser_stop_firefox(struct browser *b, long long grace_ms)
{
    if (b->bidi && b->state == BROWSER_READY && grace_ms > 0)
        bidi_bridge_close_browser(b->bidi);
    browser_drop_firefox_link(b);
    if (b->ff) {
        firefox_stop(&b->ff->ff, (int)grace_ms);
        free(b->ff);
        b->ff = NULL;
    }
    b->pid = 0;
}

void browser_firefox_reaped(struct browser *b)
{
    if (!b->ff)
        return;
    /* The holder is gone, and with it every process of Firefox (it leaves
     * only when all are reaped): what is left is the profile. */
    b->ff->ff.holder = 0;
    firefox_stop(&b->ff->ff, 0); /* closes our tie to it, removes the profile */
    free(b->ff);
    b->ff = NULL;
}
