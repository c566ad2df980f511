/*
 * relay_proc.c - the user's tabvisor-relay in extension mode (relay_proc.h).
 */
#include "relay_proc.h"

#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "clock.h"
#include "log.h"
#include "privdir.h"
#include "loop.h"
#include "server.h"
#include "spawn.h"

#define CHECK_MS 500
#define START_WAIT_MS 10000
#define BACKOFF_MIN_MS 200
#define BACKOFF_MAX_MS 5000
#define MAX_WAITERS 1024

struct relay_waiter {
    browser_ready_fn fn;
    void *ud;
    long long until;
};

struct relay_proc {
    struct server *srv;
    char dir[PATH_MAX];
    char url[PATH_MAX + 16];
    bool live;          /* the discovery file was true at the last check */
    bool started;       /* demanded once: keep checking from then on */
    pid_t pid;          /* the relay we started, while it runs */
    long long next_try; /* no start before this (backoff) */
    long long backoff;
    long long child_since;
    uint64_t timer;
    struct relay_waiter waiters[MAX_WAITERS];
    size_t nwaiters;
};

/* The relay's own default (relay/main.c), unless --relay-runtime-dir. */
static void runtime_dir(const struct config *c, char *out, size_t n)
{
    if (c->relay_runtime_dir[0]) {
        snprintf(out, n, "%s", c->relay_runtime_dir);
        return;
    }
    char note[PATH_MAX + 200];
    privdir_default("tabvisor-relay", out, n, note, sizeof note);
    if (note[0])
        log_warn("relay runtime dir: %s", note);
}

struct relay_proc *relay_proc_new(struct server *srv)
{
    struct relay_proc *r = calloc(1, sizeof *r);
    if (!r)
        return NULL;
    r->srv = srv;
    r->backoff = BACKOFF_MIN_MS;
    runtime_dir(&srv->cfg, r->dir, sizeof r->dir);
    return r;
}

const char *relay_url(const struct relay_proc *r)
{
    return r->url;
}

/* Is a relay running for our runtime dir? Then r->url is its worker URL.
 * The discovery file counts only while its lock is held, and only when the
 * dir and the file are ours and private (another user could plant one). */
static bool check_live(struct relay_proc *r)
{
    char path[PATH_MAX + 32];
    struct stat st;
    if (lstat(r->dir, &st) != 0 || !S_ISDIR(st.st_mode) || st.st_uid != geteuid() ||
        (st.st_mode & 077))
        return false;
    snprintf(path, sizeof path, "%s/relay.lock", r->dir);
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
    if (fd < 0)
        return false;
    /* A shared lock we can take means nobody holds the exclusive one. */
    bool held = flock(fd, LOCK_SH | LOCK_NB) != 0 && errno == EWOULDBLOCK;
    close(fd);
    if (!held)
        return false;
    snprintf(path, sizeof path, "%s/relay.json", r->dir);
    fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
    if (fd < 0)
        return false;
    json_t *d = NULL;
    if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_uid == geteuid() && !(st.st_mode & 077))
        d = json_loadfd(fd, 0, NULL);
    close(fd);
    const char *ipc = json_string_value(json_object_get(d, "ipc"));
    bool ok = ipc && strncmp(ipc, "ipc://", 6) == 0 && strlen(ipc) < sizeof r->url;
    if (ok && strcmp(r->url, ipc) != 0) {
        log_info("extension mode: tabvisor-relay pid %lld at %s",
                 (long long)json_integer_value(json_object_get(d, "pid")), ipc);
        snprintf(r->url, sizeof r->url, "%s", ipc);
    }
    json_decref(d);
    return ok;
}

static void start_child(struct relay_proc *r)
{
    const struct config *c = &r->srv->cfg;
    char port[16], log_path[PATH_MAX + 16];
    snprintf(port, sizeof port, "%d", c->relay_port);
    /* The relay's log lives in its own runtime dir, kept across restarts of
     * either process and rotated by the relay (relay/logfile.h); until the
     * relay has that dir's lock, it writes to our stderr. */
    snprintf(log_path, sizeof log_path, "%s/relay.log", r->dir);
    char *argv[16] = {(char *)c->relay_bin,
                      "--relay-port",
                      port,
                      "--runtime-dir",
                      r->dir,
                      "--log-level",
                      (char *)log_level_name(c->log_level),
                      "--log-file",
                      log_path};
    int n = 9;
    if (c->relay_secret_file[0]) {
        argv[n++] = "--secret-file";
        argv[n++] = (char *)c->relay_secret_file;
    }
    argv[n] = NULL;
    struct spawn_opts o = {.argv = argv};
    r->pid = spawn_child(&o);
    r->child_since = mono_ms();
    r->next_try = mono_ms() + r->backoff;
    if (r->pid < 0) {
        log_error("extension mode: cannot start %s", c->relay_bin);
        r->pid = 0;
    } else {
        log_info("extension mode: started tabvisor-relay (pid %d, port %d, runtime dir %s)",
                 (int)r->pid, c->relay_port, r->dir);
    }
}

static void notify(struct relay_proc *r, bool all, const char *err)
{
    long long now = mono_ms();
    size_t n = r->nwaiters;
    struct relay_waiter *w = malloc(n * sizeof *w + 1);
    if (!w)
        abort();
    memcpy(w, r->waiters, n * sizeof *w);
    r->nwaiters = 0;
    for (size_t i = 0; i < n; i++) {
        if (all || now >= w[i].until)
            w[i].fn(r->srv, w[i].ud, err);
        else
            r->waiters[r->nwaiters++] = w[i];
    }
    free(w);
}

static void check(struct relay_proc *r)
{
    r->live = check_live(r);
    if (r->live) {
        /* Up long enough: the next failure starts the backoff afresh. */
        if (!r->pid || mono_ms() - r->child_since > 10000)
            r->backoff = BACKOFF_MIN_MS;
        if (r->nwaiters)
            notify(r, true, NULL);
        return;
    }
    if (!r->pid && mono_ms() >= r->next_try)
        start_child(r);
    if (r->nwaiters)
        notify(r, false,
               "tabvisor-relay did not start (see relay.log in its runtime dir, or tabvisor's "
               "stderr)");
}

static void on_timer(struct loop *l, void *ud)
{
    struct relay_proc *r = ud;
    r->timer = loop_add_timer(l, CHECK_MS, on_timer, r);
    check(r);
}

void relay_proc_start(struct relay_proc *r)
{
    if (r->started)
        return;
    r->started = true;
    r->timer = loop_add_timer(r->srv->loop, CHECK_MS, on_timer, r);
    r->live = check_live(r);
    if (!r->live)
        start_child(r);
}

void relay_when_ready(struct relay_proc *r, browser_ready_fn fn, void *ud)
{
    relay_proc_start(r);
    if (r->live) {
        fn(r->srv, ud, NULL);
        return;
    }
    if (r->nwaiters == MAX_WAITERS) {
        fn(r->srv, ud, "too many sessions waiting for tabvisor-relay");
        return;
    }
    r->waiters[r->nwaiters++] = (struct relay_waiter){fn, ud, mono_ms() + START_WAIT_MS};
    /* Poll faster than the monitor while someone waits for the first relay. */
    loop_del_timer(r->srv->loop, r->timer);
    r->timer = loop_add_timer(r->srv->loop, 50, on_timer, r);
}

void relay_cancel_wait(struct relay_proc *r, void *ud)
{
    size_t m = 0;
    for (size_t i = 0; i < r->nwaiters; i++)
        if (r->waiters[i].ud != ud)
            r->waiters[m++] = r->waiters[i];
    r->nwaiters = m;
}

int relay_reaped(struct relay_proc *r, pid_t pid, int status)
{
    if (!r || !r->pid || pid != r->pid)
        return 0;
    r->pid = 0;
    int code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    if (code == 3) {
        log_info("extension mode: another tabvisor-relay holds %s; joining it", r->dir);
        r->backoff = BACKOFF_MIN_MS;
    } else {
        if (code == 4)
            log_error("extension mode: relay port %d is taken by another process; it is left "
                      "alone (use --relay-port)",
                      r->srv->cfg.relay_port);
        else if (WIFSIGNALED(status))
            log_warn("extension mode: tabvisor-relay was killed by signal %d; restarting it",
                     WTERMSIG(status));
        else
            log_warn("extension mode: tabvisor-relay exited with status %d; restarting it", code);
        r->backoff = r->backoff * 2 > BACKOFF_MAX_MS ? BACKOFF_MAX_MS : r->backoff * 2;
    }
    r->next_try = mono_ms() + (code == 3 ? 0 : r->backoff);
    r->live = false;
    r->url[0] = 0;
    return 1;
}

void relay_stop(struct relay_proc *r, long long timeout_ms)
{
    if (!r)
        return;
    loop_del_timer(r->srv->loop, r->timer);
    r->timer = 0;
    if (!r->pid)
        return;
    spawn_stop(&(struct child_stop){.pid = r->pid, .term = r->pid, .group = r->pid}, timeout_ms);
    r->pid = 0;
}

void relay_proc_free(struct relay_proc *r)
{
    if (!r)
        return;
    if (r->pid)
        spawn_kill_group(r->pid, SIGKILL);
    free(r);
}
