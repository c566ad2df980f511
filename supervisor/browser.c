/*
 * browser.c - launch and watch one Chromium (browser.h).
 */
#include "browser_int.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bidi_bridge.h"
#include "cdp_bridge.h"
#include "cdp_remote.h"
#include "clock.h"
#include "errbuf.h"
#include "log.h"
#include "rundir.h"
#include "server.h"
#include "spawn.h"

struct browser *browser_new(struct server *srv, const struct browser_events *events,
                            const char *name)
{
    struct browser *b = calloc(1, sizeof *b);
    if (b) {
        b->srv = srv;
        b->events = events;
        snprintf(b->name, sizeof b->name, "%s", name);
    }
    return b;
}

void browser_notify_waiters(struct browser *b, const char *err)
{
    /* Callbacks may register new waiters; take the current list first. */
    size_t n = b->nwaiters;
    struct waiter *w = malloc(n * sizeof *w + 1);
    if (!w)
        abort();
    memcpy(w, b->waiters, n * sizeof *w);
    b->nwaiters = 0;
    for (size_t i = 0; i < n; i++)
        w[i].fn(b->srv, w[i].ud, err);
    free(w);
}

static void on_bridge_ready(void *ud)
{
    browser_now_ready(ud);
}

void browser_now_ready(struct browser *b)
{
    loop_del_timer(b->srv->loop, b->start_timer);
    b->start_timer = 0;
    b->state = BROWSER_READY;
    /* A launched browser's streak ends only when it outlives BROWSER_YOUNG_MS
     * (browser_reaped): answering the pipe and then dying is still a loop. */
    if (b->remote && !b->bidi) {
        b->failures = 0;
        log_info("attached to the browser at %s in %lld ms", b->srv->cfg.cdp_endpoint,
                 mono_ms() - b->started);
    } else {
        log_info("%s ready in %lld ms (%s; no port)", b->name, mono_ms() - b->started,
                 b->bidi ? "WebDriver BiDi over a handed-out socket" : "DevTools over a pipe");
    }
    browser_notify_waiters(b, NULL);
}

static void free_bridge(void *ud)
{
    cdp_bridge_free(ud);
}

/* Hand the bridge to the loop to free after this iteration (its callbacks
 * may be on the stack). */
static void drop_bridge(struct browser *b)
{
    if (b->bridge)
        loop_defer(b->srv->loop, free_bridge, b->bridge);
    b->bridge = NULL;
}

static void remote_down(struct browser *b, const char *why);

static void on_bridge_closed(void *ud, const char *why)
{
    struct browser *b = ud;
    if (b->remote) {
        remote_down(b, why);
        return;
    }
    /* A browser we cannot talk to is of no use: end it; reaping resets the
     * state and tells the router. */
    log_warn("browser connection lost (%s); stopping the browser", why);
    drop_bridge(b);
    if (b->state == BROWSER_READY)
        b->state = BROWSER_DYING;
    spawn_kill_group(b->pid, SIGKILL);
}

bool browser_dying(const struct browser *b)
{
    return b && b->state == BROWSER_DYING;
}

static const struct cdp_bridge_events bridge_events = {
    .ready = on_bridge_ready,
    .closed = on_bridge_closed,
};

void browser_on_start_timeout(struct loop *l, void *ud)
{
    struct browser *b = ud;
    (void)l;
    b->start_timer = 0;
    if (b->state != BROWSER_STARTING)
        return;
    if (b->bidi && b->pid <= 0) {
        /* Still launching: the thread gives up at its own deadline. */
        browser_notify_waiters(b, "Firefox did not start in time");
        return;
    }
    if (b->remote && !b->bidi) {
        remote_down(b, "the browser did not answer in time");
        return;
    }
    log_error("%s did not start within %d ms (see %s/%s.log)", b->name, BROWSER_START_TIMEOUT_MS,
              b->srv->run_dir, b->name);
    spawn_kill_group(b->pid, SIGKILL);
    /* State resets when the pid is reaped; waiters fail now. */
    browser_notify_waiters(b, "the browser did not start in time");
}

/* --headed: what Chromium needs to reach the user's display, appended to
 * envp (room for 5 and a NULL) in bufs. HOME is a private one, so X11's
 * default ~/.Xauthority is named from the real HOME; Wayland's socket is
 * found in the real XDG_RUNTIME_DIR. */
static void add_display_env(char **envp, char bufs[5][PATH_MAX + 32])
{
    static const char *const pass[] = {"DISPLAY", "WAYLAND_DISPLAY", "XAUTHORITY",
                                       "XDG_RUNTIME_DIR"};
    int n = 0;
    for (size_t k = 0; k < sizeof pass / sizeof *pass; k++) {
        const char *v = getenv(pass[k]);
        if (v && *v) {
            snprintf(bufs[n], sizeof bufs[n], "%s=%s", pass[k], v);
            envp[n] = bufs[n];
            n++;
        }
    }
    const char *home = getenv("HOME");
    if (!getenv("XAUTHORITY") && home && *home) {
        snprintf(bufs[n], sizeof bufs[n], "XAUTHORITY=%s/.Xauthority", home);
        envp[n] = bufs[n];
        n++;
    }
    envp[n] = NULL;
}

/* One more failure in a row: no new attempt for 250 ms, doubling up to 4 s. */
void browser_back_off(struct browser *b)
{
    b->failures++;
    long long delay = 250LL << (b->failures < 5 ? b->failures - 1 : 4);
    b->next_attempt = mono_ms() + delay;
}

/* ---- --browser-mode cdp ---- */

static void free_remote(void *ud)
{
    cdp_remote_free(ud);
}

/* The remote browser is unreachable or gone: like a reaped browser, fail
 * the waiters, tell the owner if it was up, and back off before the next
 * attempt (made on the next demand). */
static void remote_down(struct browser *b, const char *why)
{
    if (b->state == BROWSER_DOWN)
        return;
    bool was_ready = b->state == BROWSER_READY;
    log_warn("browser at %s: %s", b->srv->cfg.cdp_endpoint, why);
    drop_bridge(b);
    loop_defer(b->srv->loop, free_remote, b->remote);
    b->remote = NULL;
    b->state = BROWSER_DOWN;
    loop_del_timer(b->srv->loop, b->start_timer);
    b->start_timer = 0;
    if (!was_ready)
        browser_back_off(b);
    if (b->nwaiters) {
        char err[400];
        snprintf(err, sizeof err, "could not connect to the browser at %s: %s",
                 b->srv->cfg.cdp_endpoint, why);
        browser_notify_waiters(b, err);
    }
    if (was_ready)
        b->events->died(b->srv, b);
}

static void on_remote_closed(void *ud, const char *why)
{
    remote_down(ud, why);
}

static const struct cdp_remote_events remote_events = {.closed = on_remote_closed};

/* Attach to --cdp-endpoint: the bridge gets one end of a socketpair as its
 * browser pipe, the remote the other. */
static int start_remote(struct browser *b)
{
    struct server *srv = b->srv;
    int sv[2];
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0)
        return -1;
    int to = fcntl(sv[0], F_DUPFD_CLOEXEC, 0);
    if (to < 0) {
        close(sv[0]);
        close(sv[1]);
        return -1;
    }
    b->remote = cdp_remote_new(srv->loop, srv->cfg.cdp_endpoint, sv[1], &remote_events, b);
    if (!b->remote) {
        close(sv[0]);
        close(to);
        return -1;
    }
    b->state = BROWSER_STARTING;
    b->started = mono_ms();
    log_info("connecting to the browser at %s", srv->cfg.cdp_endpoint);
    b->bridge = cdp_bridge_new(srv->loop, to, sv[0], &bridge_events, b);
    if (!b->bridge) {
        remote_down(b, "out of memory");
        return 0;
    }
    b->start_timer =
        loop_add_timer(srv->loop, BROWSER_START_TIMEOUT_MS, browser_on_start_timeout, b);
    return 0;
}

static int start(struct browser *b, char *err, size_t errlen);
static int launch(struct browser *b);

static void on_retry(struct loop *l, void *ud)
{
    struct browser *b = ud;
    char err[512];
    b->retry_timer = 0;
    if (b->state == BROWSER_DOWN && b->nwaiters && start(b, err, sizeof err) < 0)
        browser_notify_waiters(b, err);
}

/* Start the browser (or the connection to a remote one) for the waiters, now
 * or, while a back-off lasts, from a timer. -1 with err set when the waiters
 * should fail now. */
static int start(struct browser *b, char *err, size_t errlen)
{
    struct server *srv = b->srv;
    long long wait = b->next_attempt - mono_ms();
    if (wait > 0 && !srv->cfg.cdp && b->failures >= BROWSER_GIVE_UP) {
        errbuf_set(err, errlen,
                   "%s exited within %d s of its start %u times in a row (see %s/%s.log); "
                   "the next call tries again in %lld ms or later",
                   srv->cfg.firefox ? "Firefox" : "Chromium", BROWSER_YOUNG_MS / 1000, b->failures,
                   srv->run_dir, b->name, wait);
        return -1;
    }
    if (wait > 0) {
        if (!b->retry_timer)
            b->retry_timer = loop_add_timer(srv->loop, wait, on_retry, b);
        return 0;
    }
    int started = srv->cfg.cdp       ? start_remote(b)
                  : srv->cfg.firefox ? browser_start_firefox(b)
                                     : launch(b);
    if (started < 0) {
        errbuf_set(err, errlen,
                   srv->cfg.cdp ? "could not start connecting to the browser"
                                : "could not start the browser");
        return -1;
    }
    return 0;
}

void browser_write_pidfile(struct browser *b)
{
    char pidfile[PATH_MAX + 16];
    snprintf(pidfile, sizeof pidfile, "%s/%s.pid", b->srv->run_dir, b->name);
    FILE *f = fopen(pidfile, "w");
    if (f) {
        fprintf(f, "%d\n", (int)b->pid);
        fclose(f);
    }
}

/* Spawn Chromium with its CDP pipe on fds 3 and 4. 0 (started, or failing
 * in a way its reaping reports), or -1. */
static int launch(struct browser *b)
{
    struct server *srv = b->srv;
    char home[PATH_MAX], cfgdir[PATH_MAX + 16], cache[PATH_MAX + 16], data[PATH_MAX + 16];
    char tmpdir[PATH_MAX + 16], logfile[PATH_MAX + 16];
    snprintf(home, sizeof home, "%s/%s-home", srv->run_dir, b->name);
    /* --user-data-dir: the user's persistent profile, else a throwaway one. */
    if (srv->cfg.user_data_dir[0])
        snprintf(b->profile, sizeof b->profile, "%s", srv->cfg.user_data_dir);
    else
        snprintf(b->profile, sizeof b->profile, "%s/%s-profile", srv->run_dir, b->name);
    snprintf(cfgdir, sizeof cfgdir, "%s/.config", home);
    snprintf(cache, sizeof cache, "%s/.cache", home);
    snprintf(data, sizeof data, "%s/.local", home);
    /* Chromium's scoped temp dirs (org.chromium.Chromium.*) go here, inside
     * the run dir, so they go with it instead of piling up in /tmp. */
    snprintf(tmpdir, sizeof tmpdir, "%s/%s-tmp", srv->run_dir, b->name);
    snprintf(logfile, sizeof logfile, "%s/%s.log", srv->run_dir, b->name);
    mkdir(home, 0700);
    mkdir(b->profile, 0700);
    mkdir(tmpdir, 0700);

    char udd[PATH_MAX + 32], env_home[PATH_MAX + 8], env_cfg[PATH_MAX + 40],
        env_cache[PATH_MAX + 40], env_data[PATH_MAX + 40], env_tmp[PATH_MAX + 24], env_path[4096];
    snprintf(udd, sizeof udd, "--user-data-dir=%s", b->profile);
    snprintf(env_home, sizeof env_home, "HOME=%s", home);
    snprintf(env_cfg, sizeof env_cfg, "XDG_CONFIG_HOME=%s", cfgdir);
    snprintf(env_cache, sizeof env_cache, "XDG_CACHE_HOME=%s", cache);
    snprintf(env_data, sizeof env_data, "XDG_DATA_HOME=%s", data);
    snprintf(env_tmp, sizeof env_tmp, "TMPDIR=%s", tmpdir);
    const char *path = getenv("PATH");
    snprintf(env_path, sizeof env_path, "PATH=%s", path ? path : "/usr/bin:/bin");
    char *envp[16] = {env_home, env_cfg, env_cache, env_data, env_tmp, env_path, "LANG=C.UTF-8"};
    char env_display[5][PATH_MAX + 32];
    if (srv->cfg.headed)
        add_display_env(envp + 7, env_display);
    char *argv[32];
    int n = 0;
    argv[n++] = srv->cfg.chromium;
    if (!srv->cfg.headed)
        argv[n++] = "--headless";
    if (geteuid() == 0) {
        /* Chromium refuses to run as root with its sandbox. */
        argv[n++] = "--no-sandbox";
        log_warn("running as root: Chromium's sandbox is off (--no-sandbox); run tabvisor as a "
                 "normal user to keep pages sandboxed (README, Security)");
    }
    argv[n++] = "--disable-gpu";
    argv[n++] = "--no-first-run";
    argv[n++] = "--no-default-browser-check";
    argv[n++] = "--disable-background-networking";
    argv[n++] = "--disable-component-update";
    argv[n++] = "--disable-sync";
    argv[n++] = "--disable-quic";
    argv[n++] = "--mute-audio";
    /* A page an agent drives runs at full speed whether or not its tab or
     * window is the one in front: no 1 Hz timers in background tabs, no
     * throttled frames in windows another one covers (headed mode). */
    argv[n++] = "--disable-background-timer-throttling";
    argv[n++] = "--disable-backgrounding-occluded-windows";
    argv[n++] = "--disable-renderer-backgrounding";
    argv[n++] = "--disable-features=WebUIOmniboxPopup,WebUIOmniboxAimPopup,WebUIOmniboxFullPopup";
    /* Chrome isolates sites by default; the headless shell does not: a
     * cross-site frame gets its own renderer either way. */
    argv[n++] = "--site-per-process";
    /* CDP on fds 3 (commands in) and 4 (answers and events out): no
     * DevTools port for other local users or for pages to reach. */
    argv[n++] = "--remote-debugging-pipe";
    argv[n++] = udd;
    argv[n++] = "about:blank";
    argv[n] = NULL;

    int cmd[2], out[2];
    if (pipe2(cmd, O_CLOEXEC) < 0)
        return -1;
    if (pipe2(out, O_CLOEXEC) < 0) {
        close(cmd[0]);
        close(cmd[1]);
        return -1;
    }
    struct spawn_opts o = {
        .argv = argv, .envp = envp, .fds = {cmd[0], out[1]}, .nfds = 2, .output = logfile};
    b->pid = spawn_child(&o);
    close(cmd[0]);
    close(out[1]);
    if (b->pid < 0) {
        close(cmd[1]);
        close(out[0]);
        return -1;
    }
    browser_write_pidfile(b);
    b->state = BROWSER_STARTING;
    b->started = mono_ms();
    log_info("starting %s: %s (pid %d)", b->name, srv->cfg.chromium, (int)b->pid);
    b->bridge = cdp_bridge_new(srv->loop, cmd[1], out[0], &bridge_events, b);
    if (!b->bridge) {
        spawn_kill_group(b->pid, SIGKILL);
        return 0; /* reaping resets the state; the start timer fails the waiters */
    }
    if (srv->cfg.user_data_dir[0])
        cdp_bridge_use_default_context(b->bridge);
    b->start_timer =
        loop_add_timer(srv->loop, BROWSER_START_TIMEOUT_MS, browser_on_start_timeout, b);
    return 0;
}

void browser_when_ready(struct browser *b, browser_ready_fn fn, void *ud)
{
    if (b->state == BROWSER_READY) {
        fn(b->srv, ud, NULL);
        return;
    }
    if (b->nwaiters == MAX_WAITERS) {
        fn(b->srv, ud, "too many sessions waiting for the browser");
        return;
    }
    b->waiters[b->nwaiters++] = (struct waiter){fn, ud};
    char err[512];
    if (b->state == BROWSER_DOWN && !b->retry_timer && start(b, err, sizeof err) < 0)
        browser_notify_waiters(b, err);
}

int browser_connect(struct browser *b, const char *label, const char *download_dir)
{
    if (b->state != BROWSER_READY)
        return -1;
    if (b->bidi)
        return bidi_bridge_connect(b->bidi, label);
    if (!b->bridge)
        return -1;
    /* A remote browser (cdp mode) would save files on its own machine. */
    return cdp_bridge_connect(b->bridge, label, b->remote ? NULL : download_dir);
}

void browser_cancel_wait(struct browser *b, void *ud)
{
    for (size_t i = 0; i < b->nwaiters; i++) {
        if (b->waiters[i].ud == ud) {
            memmove(&b->waiters[i], &b->waiters[i + 1], (b->nwaiters - i - 1) * sizeof *b->waiters);
            b->nwaiters--;
            i--;
        }
    }
}

int browser_reaped(struct browser *b, pid_t pid, int status)
{
    if (!b || pid != b->pid)
        return 0;
    log_warn("%s (pid %d) exited: %s %d", b->name, (int)pid,
             WIFSIGNALED(status) ? "signal" : "status",
             WIFSIGNALED(status) ? WTERMSIG(status) : WEXITSTATUS(status));
    /* Its helper processes die with it; make sure of it. Only the group:
     * pid itself is reaped and may already name another process. */
    kill(-pid, SIGKILL);
    b->pid = 0;
    browser_firefox_reaped(b);
    browser_drop_firefox_link(b);
    bool was_dying = b->state == BROWSER_DYING;
    b->state = BROWSER_DOWN;
    /* A SIGKILL comes from outside (a user, the OOM killer, a test killing
     * it on purpose): the next demand restarts it at once. A browser that
     * ended itself (a CHECK's SIGTRAP, a SIGSEGV, an exit) soon after its
     * start will do it again. */
    bool killed = WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL;
    if (killed) {
        /* neither a young death nor proof of health */
    } else if (mono_ms() - b->started < BROWSER_YOUNG_MS) {
        browser_back_off(b);
        log_warn("%s died young (%u in a row): no new one for %lld ms", b->name, b->failures,
                 b->next_attempt - mono_ms());
    } else {
        b->failures = 0;
    }
    drop_bridge(b);
    loop_del_timer(b->srv->loop, b->start_timer);
    b->start_timer = 0;
    if (b->nwaiters && was_dying) {
        /* They came after the connection was lost: they want the next one. */
        char err[512];
        if (!b->retry_timer && start(b, err, sizeof err) < 0)
            browser_notify_waiters(b, err);
    } else if (b->nwaiters) {
        browser_notify_waiters(b, "the browser exited while starting");
    }
    b->events->died(b->srv, b);
    return 1;
}

void browser_stop(struct browser *b, long long timeout_ms)
{
    if (b && b->srv->cfg.firefox) {
        browser_stop_firefox(b, timeout_ms);
        return;
    }
    if (!b || b->pid <= 0)
        return;
    /* An orderly close writes the profile's cookies out; a signal to the
     * group would end the network service before it could. */
    bool orderly = b->srv->cfg.user_data_dir[0] && b->bridge && b->state == BROWSER_READY;
    if (orderly)
        cdp_bridge_close_browser(b->bridge);
    spawn_stop(&(struct child_stop){.pid = b->pid, .term = orderly ? 0 : -b->pid, .group = b->pid,
                                    .reap_stragglers = true},
               timeout_ms);
    b->pid = 0;
}

void browser_free(struct browser *b)
{
    if (!b)
        return;
    /* Firefox's bridge and link go now, not after a loop iteration that may
     * never come; an unfinished launch is ended with its link. */
    bidi_bridge_free(b->bidi);
    b->bidi = NULL;
    if (b->srv->cfg.firefox) {
        cdp_remote_free(b->remote);
        b->remote = NULL;
    }
    browser_stop(b, 2000);
    cdp_bridge_free(b->bridge);
    /* A remote browser stays up; closing our connection makes it dispose
     * of our contexts (created with disposeOnDetach). */
    cdp_remote_free(b->remote);
    if (b->start_timer)
        loop_del_timer(b->srv->loop, b->start_timer);
    if (b->retry_timer)
        loop_del_timer(b->srv->loop, b->retry_timer);
    free(b);
}

/* After the loop iteration of browser_discard(): nothing refers to b now. */
static void discard_files(void *ud)
{
    struct browser *b = ud;
    const char *run = b->srv->run_dir;
    char path[PATH_MAX + 48];
    static const char *const dirs[] = {"home", "tmp", "profile"};
    /* --user-data-dir is the user's: never removed. */
    size_t ndirs = b->srv->cfg.user_data_dir[0] ? 2 : 3;
    for (size_t i = 0; i < ndirs; i++) {
        snprintf(path, sizeof path, "%s/%s-%s", run, b->name, dirs[i]);
        rundir_remove(path);
    }
    snprintf(path, sizeof path, "%s/%s.pid", run, b->name);
    unlink(path);
    snprintf(path, sizeof path, "%s/%s.log", run, b->name);
    unlink(path);
    free(b);
}

void browser_discard(struct browser *b)
{
    if (!b)
        return;
    b->nwaiters = 0;
    loop_del_timer(b->srv->loop, b->start_timer);
    b->start_timer = 0;
    if (b->srv->cfg.firefox) {
        browser_stop_firefox(b, 0);
    } else if (b->pid > 0 && b->srv->cfg.user_data_dir[0]) {
        /* A persistent profile: let Chromium write its cookies out. One
         * session only (--max-sessions 1), so the wait stalls no other. */
        browser_stop(b, 3000);
    } else if (b->pid > 0) {
        /* Its session is over and the profile is thrown away: nothing to
         * shut down gracefully. A SIGKILLed process is reaped at once. */
        spawn_kill_group(b->pid, SIGKILL);
        waitpid(b->pid, NULL, 0);
        kill(-b->pid, SIGKILL); /* stragglers of the group */
        b->pid = 0;
    }
    b->state = BROWSER_DOWN;
    /* The bridge's callbacks may still run in this iteration (with b
     * valid); both are freed after it. */
    drop_bridge(b);
    loop_defer(b->srv->loop, discard_files, b);
}
