/*
 * browser.c - launch and watch the shared Chromium.
 */
#include "browser.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "clock.h"
#include "log.h"
#include "router.h"
#include "server.h"
#include "spawn.h"

#define BROWSER_START_TIMEOUT_MS 30000
#define BROWSER_POLL_MS 20
#define MAX_WAITERS 1024

enum browser_state { BROWSER_DOWN, BROWSER_STARTING, BROWSER_READY };

struct waiter {
    browser_ready_fn fn;
    void *ud;
};

struct browser {
    struct server *srv;
    enum browser_state state;
    pid_t pid;
    long long started;
    uint64_t poll_timer;
    char profile[PATH_MAX];
    char endpoint[256];
    struct waiter waiters[MAX_WAITERS];
    size_t nwaiters;
};

struct browser *browser_new(struct server *srv)
{
    struct browser *b = calloc(1, sizeof *b);
    if (b)
        b->srv = srv;
    return b;
}

static void notify_waiters(struct browser *b, const char *endpoint, const char *err)
{
    /* Callbacks may register new waiters; take the current list first. */
    size_t n = b->nwaiters;
    struct waiter *w = malloc(n * sizeof *w + 1);
    if (!w)
        abort();
    memcpy(w, b->waiters, n * sizeof *w);
    b->nwaiters = 0;
    for (size_t i = 0; i < n; i++)
        w[i].fn(b->srv, w[i].ud, endpoint, err);
    free(w);
}

/* Read DevToolsActivePort: "PORT\n/devtools/browser/UUID\n". */
static int read_active_port(struct browser *b)
{
    char path[PATH_MAX + 32], buf[512];
    snprintf(path, sizeof path, "%s/DevToolsActivePort", b->profile);
    FILE *f = fopen(path, "r");
    if (!f)
        return -1;
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = 0;
    unsigned port = 0;
    char wspath[256];
    if (sscanf(buf, "%u\n%255s", &port, wspath) != 2 || port == 0 || port > 65535 ||
        strncmp(wspath, "/devtools/browser/", 18) != 0)
        return -1; /* partially written; try again */
    snprintf(b->endpoint, sizeof b->endpoint, "ws://127.0.0.1:%u%s", port, wspath);
    return 0;
}

static void poll_ready(struct loop *l, void *ud)
{
    struct browser *b = ud;
    b->poll_timer = 0;
    if (b->state != BROWSER_STARTING)
        return;
    if (read_active_port(b) == 0) {
        b->state = BROWSER_READY;
        log_info("browser ready in %lld ms at %s", mono_ms() - b->started, b->endpoint);
        notify_waiters(b, b->endpoint, NULL);
        return;
    }
    if (mono_ms() - b->started > BROWSER_START_TIMEOUT_MS) {
        log_error("browser did not start within %d ms (see %s/browser.log)",
                  BROWSER_START_TIMEOUT_MS, b->srv->run_dir);
        spawn_kill_group(b->pid, SIGKILL);
        /* State resets when the pid is reaped; waiters fail now. */
        notify_waiters(b, NULL, "the browser did not start in time");
        return;
    }
    b->poll_timer = loop_add_timer(l, BROWSER_POLL_MS, poll_ready, b);
}

static int start(struct browser *b)
{
    struct server *srv = b->srv;
    char home[PATH_MAX], cfgdir[PATH_MAX + 16], cache[PATH_MAX + 16], data[PATH_MAX + 16];
    char logfile[PATH_MAX + 16], pidfile[PATH_MAX + 16];
    snprintf(home, sizeof home, "%s/browser-home", srv->run_dir);
    snprintf(b->profile, sizeof b->profile, "%s/browser-profile", srv->run_dir);
    snprintf(cfgdir, sizeof cfgdir, "%s/.config", home);
    snprintf(cache, sizeof cache, "%s/.cache", home);
    snprintf(data, sizeof data, "%s/.local", home);
    snprintf(logfile, sizeof logfile, "%s/browser.log", srv->run_dir);
    mkdir(home, 0700);
    mkdir(b->profile, 0700);
    char active[PATH_MAX + 32];
    snprintf(active, sizeof active, "%s/DevToolsActivePort", b->profile);
    unlink(active);

    char udd[PATH_MAX + 32], env_home[PATH_MAX + 8], env_cfg[PATH_MAX + 40],
        env_cache[PATH_MAX + 40], env_data[PATH_MAX + 40], env_path[4096];
    snprintf(udd, sizeof udd, "--user-data-dir=%s", b->profile);
    snprintf(env_home, sizeof env_home, "HOME=%s", home);
    snprintf(env_cfg, sizeof env_cfg, "XDG_CONFIG_HOME=%s", cfgdir);
    snprintf(env_cache, sizeof env_cache, "XDG_CACHE_HOME=%s", cache);
    snprintf(env_data, sizeof env_data, "XDG_DATA_HOME=%s", data);
    const char *path = getenv("PATH");
    snprintf(env_path, sizeof env_path, "PATH=%s", path ? path : "/usr/bin:/bin");
    char *envp[] = {env_home, env_cfg, env_cache, env_data, env_path, "LANG=C.UTF-8", NULL};
    char *argv[32];
    int n = 0;
    argv[n++] = srv->cfg.chromium;
    argv[n++] = "--headless";
    if (geteuid() == 0)
        argv[n++] = "--no-sandbox"; /* Chromium refuses to run as root with its sandbox */
    argv[n++] = "--disable-gpu";
    argv[n++] = "--no-first-run";
    argv[n++] = "--no-default-browser-check";
    argv[n++] = "--disable-background-networking";
    argv[n++] = "--disable-component-update";
    argv[n++] = "--disable-sync";
    argv[n++] = "--disable-quic";
    argv[n++] = "--mute-audio";
    argv[n++] = "--disable-features=WebUIOmniboxPopup,WebUIOmniboxAimPopup,WebUIOmniboxFullPopup";
    argv[n++] = "--remote-debugging-port=0";
    argv[n++] = "--remote-debugging-address=127.0.0.1";
    argv[n++] = udd;
    argv[n++] = "about:blank";
    argv[n] = NULL;

    struct spawn_opts o = {.argv = argv, .envp = envp, .keep_fd = -1, .output = logfile};
    b->pid = spawn_child(&o);
    if (b->pid < 0)
        return -1;
    snprintf(pidfile, sizeof pidfile, "%s/browser.pid", srv->run_dir);
    FILE *f = fopen(pidfile, "w");
    if (f) {
        fprintf(f, "%d\n", (int)b->pid);
        fclose(f);
    }
    b->state = BROWSER_STARTING;
    b->started = mono_ms();
    log_info("starting browser %s (pid %d)", srv->cfg.chromium, (int)b->pid);
    b->poll_timer = loop_add_timer(srv->loop, BROWSER_POLL_MS, poll_ready, b);
    return 0;
}

void browser_when_ready(struct browser *b, browser_ready_fn fn, void *ud)
{
    if (b->state == BROWSER_READY) {
        fn(b->srv, ud, b->endpoint, NULL);
        return;
    }
    if (b->nwaiters == MAX_WAITERS) {
        fn(b->srv, ud, NULL, "too many sessions waiting for the browser");
        return;
    }
    b->waiters[b->nwaiters++] = (struct waiter){fn, ud};
    if (b->state == BROWSER_DOWN && start(b) < 0)
        notify_waiters(b, NULL, "could not start the browser");
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
    loop_del_timer(b->srv->loop, b->poll_timer);
    b->poll_timer = 0;
    if (b->nwaiters)
        notify_waiters(b, NULL, "the browser exited while starting");
    router_browser_died(b->srv);
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
    if (b->poll_timer)
        loop_del_timer(b->srv->loop, b->poll_timer);
    free(b);
}
