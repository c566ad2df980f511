/*
 * browser.c - launch and watch the shared Chromium.
 */
#include "browser.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cdp_bridge.h"
#include "clock.h"
#include "log.h"
#include "server.h"
#include "spawn.h"

#define BROWSER_START_TIMEOUT_MS 30000
#define MAX_WAITERS 1024

enum browser_state { BROWSER_DOWN, BROWSER_STARTING, BROWSER_READY };

struct waiter {
    browser_ready_fn fn;
    void *ud;
};

struct browser {
    struct server *srv;
    const struct browser_events *events;
    enum browser_state state;
    pid_t pid;
    long long started;
    uint64_t start_timer;
    struct cdp_bridge *bridge;
    char profile[PATH_MAX];
    struct waiter waiters[MAX_WAITERS];
    size_t nwaiters;
};

struct browser *browser_new(struct server *srv, const struct browser_events *events)
{
    struct browser *b = calloc(1, sizeof *b);
    if (b) {
        b->srv = srv;
        b->events = events;
    }
    return b;
}

static void notify_waiters(struct browser *b, const char *err)
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
    struct browser *b = ud;
    loop_del_timer(b->srv->loop, b->start_timer);
    b->start_timer = 0;
    b->state = BROWSER_READY;
    log_info("browser ready in %lld ms (DevTools over a pipe; no port)", mono_ms() - b->started);
    notify_waiters(b, NULL);
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

static void on_bridge_closed(void *ud, const char *why)
{
    struct browser *b = ud;
    /* A browser we cannot talk to is of no use: end it; reaping resets the
     * state and tells the router. */
    log_warn("browser connection lost (%s); stopping the browser", why);
    drop_bridge(b);
    spawn_kill_group(b->pid, SIGKILL);
}

static const struct cdp_bridge_events bridge_events = {
    .ready = on_bridge_ready,
    .closed = on_bridge_closed,
};

static void on_start_timeout(struct loop *l, void *ud)
{
    struct browser *b = ud;
    b->start_timer = 0;
    if (b->state != BROWSER_STARTING)
        return;
    log_error("browser did not start within %d ms (see %s/browser.log)", BROWSER_START_TIMEOUT_MS,
              b->srv->run_dir);
    spawn_kill_group(b->pid, SIGKILL);
    /* State resets when the pid is reaped; waiters fail now. */
    notify_waiters(b, "the browser did not start in time");
}

static int start(struct browser *b)
{
    struct server *srv = b->srv;
    char home[PATH_MAX], cfgdir[PATH_MAX + 16], cache[PATH_MAX + 16], data[PATH_MAX + 16];
    char tmpdir[PATH_MAX + 16], logfile[PATH_MAX + 16], pidfile[PATH_MAX + 16];
    snprintf(home, sizeof home, "%s/browser-home", srv->run_dir);
    snprintf(b->profile, sizeof b->profile, "%s/browser-profile", srv->run_dir);
    snprintf(cfgdir, sizeof cfgdir, "%s/.config", home);
    snprintf(cache, sizeof cache, "%s/.cache", home);
    snprintf(data, sizeof data, "%s/.local", home);
    /* Chromium's scoped temp dirs (org.chromium.Chromium.*) go here, inside
     * the run dir, so they go with it instead of piling up in /tmp. */
    snprintf(tmpdir, sizeof tmpdir, "%s/browser-tmp", srv->run_dir);
    snprintf(logfile, sizeof logfile, "%s/browser.log", srv->run_dir);
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
    char *envp[] = {env_home, env_cfg,  env_cache,      env_data,
                    env_tmp,  env_path, "LANG=C.UTF-8", NULL};
    char *argv[32];
    int n = 0;
    argv[n++] = srv->cfg.chromium;
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
    snprintf(pidfile, sizeof pidfile, "%s/browser.pid", srv->run_dir);
    FILE *f = fopen(pidfile, "w");
    if (f) {
        fprintf(f, "%d\n", (int)b->pid);
        fclose(f);
    }
    b->state = BROWSER_STARTING;
    b->started = mono_ms();
    log_info("starting browser %s (pid %d)", srv->cfg.chromium, (int)b->pid);
    b->bridge = cdp_bridge_new(srv->loop, cmd[1], out[0], &bridge_events, b);
    if (!b->bridge) {
        spawn_kill_group(b->pid, SIGKILL);
        return 0; /* reaping resets the state; the start timer fails the waiters */
    }
    b->start_timer = loop_add_timer(srv->loop, BROWSER_START_TIMEOUT_MS, on_start_timeout, b);
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
    if (b->state == BROWSER_DOWN && start(b) < 0)
        notify_waiters(b, "could not start the browser");
}

int browser_connect(struct browser *b, const char *label)
{
    if (b->state != BROWSER_READY || !b->bridge)
        return -1;
    return cdp_bridge_connect(b->bridge, label);
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
    log_warn("browser (pid %d) exited: %s %d", (int)pid, WIFSIGNALED(status) ? "signal" : "status",
             WIFSIGNALED(status) ? WTERMSIG(status) : WEXITSTATUS(status));
    /* Its helper processes die with it; make sure of it. Only the group:
     * pid itself is reaped and may already name another process. */
    kill(-pid, SIGKILL);
    b->pid = 0;
    b->state = BROWSER_DOWN;
    drop_bridge(b);
    loop_del_timer(b->srv->loop, b->start_timer);
    b->start_timer = 0;
    if (b->nwaiters)
        notify_waiters(b, "the browser exited while starting");
    b->events->died(b->srv);
    return 1;
}

void browser_stop(struct browser *b, long long timeout_ms)
{
    if (!b || b->pid <= 0)
        return;
    spawn_kill_group(b->pid, SIGTERM);
    long long end = mono_ms() + timeout_ms;
    while (mono_ms() < end) {
        if (waitpid(b->pid, NULL, WNOHANG) == b->pid) {
            kill(-b->pid, SIGKILL); /* stragglers of the group (pid itself is reaped) */
            b->pid = 0;
            return;
        }
        usleep(10000);
    }
    spawn_kill_group(b->pid, SIGKILL);
    waitpid(b->pid, NULL, 0);
    b->pid = 0;
}

void browser_free(struct browser *b)
{
    if (!b)
        return;
    browser_stop(b, 2000);
    cdp_bridge_free(b->bridge);
    if (b->start_timer)
        loop_del_timer(b->srv->loop, b->start_timer);
    free(b);
}
