/*
 * workers.c - worker processes seen from the supervisor.
 */
#include "workers.h"

#include <errno.h>
#include <poll.h>
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "browser.h"
#include "channel_retire.h"
#include "clock.h"
#include "log.h"
#include "outdirs.h"
#include "proto.h"
#include "relay_proc.h"
#include "session_secret.h"
#include "router.h"
#include "server.h"
#include "spawn.h"

#define WORKER_START_TIMEOUT_MS 30000

static const struct browser_events dedicated_browser_events;

/* A worker is gone for good: its dedicated browser goes with it. */
static void free_worker(void *ud)
{
    struct worker *w = ud;
    if (w->owns_browser)
        browser_discard(w->browser);
    json_decref(w->restore);
    json_decref(w->restored);
    free(w);
}

static void unlink_worker(struct server *srv, struct worker *w)
{
    for (struct worker **p = &srv->workers; *p; p = &(*p)->next) {
        if (*p == w) {
            *p = w->next;
            return;
        }
    }
}

static void close_channel(struct worker *w)
{
    if (w->ch) {
        loop_del_fd(w->srv->loop, w->chfd);
        /* Closed once nng lets go of the worker's connection: closing it
         * while the worker's last messages are read can hang nng for good
         * (proto/channel.h, channel_connected). */
        channel_retire(w->srv->loop, w->ch);
        w->ch = NULL;
        unlink(w->url + strlen("ipc://"));
    }
    if (w->life_fd >= 0) {
        close(w->life_fd);
        w->life_fd = -1;
    }
}

void worker_kill(struct worker *w, const char *why)
{
    if (w->pid > 0) {
        log_warn("killing worker %d of session %s: %s", (int)w->pid, w->session_id, why);
        spawn_kill_group(w->pid, SIGKILL);
    }
    w->state = W_STOPPING;
}

void worker_discard(struct worker *w, const char *why)
{
    if (w->state == W_WAIT_BROWSER || w->pid <= 0) {
        worker_stop(w, 0); /* never started: nothing is sent */
        return;
    }
    w->owner = NULL;
    worker_kill(w, why);
}

/* Send to w without ever waiting (channel.h). A worker whose queue is full
 * has stopped reading: shed it (killed, so the owner's exited event fails its
 * call and its queued calls get a fresh worker). Returns channel_send's. */
static int send_or_shed(struct worker *w, uint32_t type, uint64_t id, const json_t *body)
{
    int r = channel_send(w->ch, type, id, body);
    if (r == CHANNEL_FULL)
        worker_kill(w, "it stopped reading its channel (send queue full)");
    return r;
}

static void on_timeout(struct loop *l, void *ud)
{
    struct worker *w = ud;
    w->timer = 0;
    worker_kill(w,
                w->state == W_STOPPING ? "did not exit after shutdown" : "did not start in time");
}

static int append_item(const char *item, void *ud)
{
    return json_array_append_new(ud, json_string(item));
}

/* What the worker's pages may not reach (worker/netpolicy.h): our own ports
 * and the --allowed-origins / --blocked-origins rules. */
static void add_network_policy(struct server *srv, json_t *cfg)
{
    json_t *ports = json_array(), *allow = json_array(), *block = json_array();
    if (srv->http_port > 0)
        json_array_append_new(ports, json_integer(srv->http_port));
    config_each_item(srv->cfg.browser_allowed_origins, append_item, allow);
    config_each_item(srv->cfg.browser_blocked_origins, append_item, block);
    json_object_set_new(cfg, "blockedPorts", ports);
    json_object_set_new(cfg, "allowedOrigins", allow);
    json_object_set_new(cfg, "blockedOrigins", block);
    json_object_set_new(cfg, "blockLinkLocal", json_boolean(!srv->cfg.allow_link_local));
}

/* A worker leaving on its own (its browser gone, no page left) says so
 * last and then only reads until we let go (worker/main.c). Its channel is
 * quiet both ways now, the one moment nng 1.5.2 closes a connection safely
 * (proto/channel.h): a call sent to it meanwhile reaches a live reader,
 * never a closed socket whose error would make nng close the connection
 * while our side reads. Returns whether m was that notice. */
static bool worker_exiting(struct worker *w, const struct proto_msg *m)
{
    const char *kind = json_string_value(json_object_get(m->body, "kind"));
    if (!kind || strcmp(kind, "exiting") != 0)
        return false;
    w->exiting = true;
    worker_kill(w, "it said it is exiting");
    close_channel(w);
    return true;
}

static void on_channel(struct loop *l, int fd, short revents, void *ud)
{
    struct worker *w = ud;
    for (;;) {
        struct proto_msg m = {0};
        char err[256];
        int r = channel_recv(w->ch, &m, 1, err, sizeof err);
        if (r == CHANNEL_AGAIN)
            return;
        if (r < 0) {
            /* A malformed message from a worker is a bug in it: kill it, never us. */
            log_error("worker %d sent a bad message: %s", (int)w->pid, err);
            worker_kill(w, "protocol violation");
            close_channel(w);
            return;
        }
        switch (m.type) {
        case MSG_HELLO: {
            if (w->state != W_STARTING)
                break;
            const struct config *c = &w->srv->cfg;
            json_t *cfg =
                json_pack("{s:s, s:s, s:i, s:i, s:s, s:b, s:I, s:s}", "sessionId", w->session_id,
                          "mode", c->browser_mode, "viewportWidth", c->viewport_width,
                          "viewportHeight", c->viewport_height, "outputDir", w->output_dir,
                          "restarted", w->restarted, "maxOutputChars",
                          (json_int_t)c->max_output_chars, "snapshotMode", c->snapshot_mode);
            json_object_set_new(cfg, "cdpAllow", json_string(c->cdp_allow ? c->cdp_allow : ""));
            json_object_set_new(cfg, "browser", json_string(c->firefox ? "firefox" : "chromium"));
            add_network_policy(w->srv, cfg);
            /* The bridge sets where the browser saves downloads (not for a
             * remote browser or the user's own): the worker renames and bounds them. */
            if (!w->srv->relay && strcmp(c->browser_mode, "cdp") != 0 && !c->firefox)
                json_object_set_new(cfg, "downloads", json_string("bridge"));
            if (w->srv->relay) {
                /* The same for every worker of the session, known to no other:
                 * the relay lets only its holder take the session back. */
                char proof[65];
                session_secret("relay", w->session_id, proof, 64);
                json_object_set_new(cfg, "relayProof", json_string(proof));
            }
            if (w->storage_state[0])
                json_object_set_new(cfg, "storageState", json_string(w->storage_state));
            if (w->restore)
                json_object_set(cfg, "restore", w->restore);
            if (c->no_session_restore)
                json_object_set_new(cfg, "keepState", json_false());
            int sent = send_or_shed(w, MSG_CONFIG, 0, cfg);
            json_decref(cfg);
            if (sent == 0)
                w->state = W_CONFIGURING;
            else if (w->state != W_STOPPING)
                worker_kill(w, "could not send its configuration");
            break;
        }
        case MSG_READY: {
            if (w->state != W_CONFIGURING)
                break;
            loop_del_timer(l, w->timer);
            w->timer = 0;
            json_t *ok = json_object_get(m.body, "ok");
            const char *msg =
                json_string_value(json_object_get(json_object_get(m.body, "error"), "message"));
            if (json_is_true(ok)) {
                w->state = W_READY;
                json_t *restored = json_object_get(m.body, "restored");
                if (json_is_object(restored))
                    w->restored = json_incref(restored);
                log_debug("worker %d ready in %lld ms", (int)w->pid, mono_ms() - w->spawned_at);
                if (w->owner)
                    w->events->ready(w->srv, w, NULL);
            } else {
                if (w->owner)
                    w->events->ready(w->srv, w, msg ? msg : "worker failed to start");
                worker_stop(w, 1000);
            }
            break;
        }
        case MSG_LOG: {
            const char *lvl = json_string_value(json_object_get(m.body, "level"));
            const char *text = json_string_value(json_object_get(m.body, "message"));
            log_msg(log_level_from_name(lvl ? lvl : "info"), "worker %d: %s", (int)w->pid,
                    text ? text : "");
            break;
        }
        case MSG_HEARTBEAT:
            break;
        case MSG_EVENT:
            if (!worker_exiting(w, &m))
                goto pass_on;
            proto_msg_clear(&m);
            return; /* its channel is retired */
        case MSG_RESULT:
            if (w->state == W_BUSY)
                w->state = W_READY; /* worker_send_call set BUSY */
            /* fall through */
        default:
        pass_on:
            if (w->owner)
                w->events->message(w->srv, w, &m);
            break;
        }
        proto_msg_clear(&m);
        if (!w->ch)
            return;
    }
}

static void report_start_failure(void *ud)
{
    struct worker *w = ud;
    if (w->owner)
        w->events->ready(w->srv, w, w->start_error);
    free_worker(w);
}

/* A worker that never got a process: forget it, and tell the router once,
 * after the current callback. The failure can happen inside worker_start()
 * (the browser is already up, or cannot start), before the owner has stored
 * w; told then, the router would not recognise w and would keep it after it
 * is freed. worker_stop() meanwhile (the session closing) clears the owner. */
static void start_failed(struct server *srv, struct worker *w, const char *reason)
{
    close_channel(w);
    w->state = W_STOPPING;
    unlink_worker(srv, w);
    snprintf(w->start_error, sizeof w->start_error, "%s", reason);
    loop_defer(srv->loop, report_start_failure, w);
}

extern char **environ;

/* The worker's environment: only what the dynamic loader and the
 * sanitizers read. Never the rest of ours (the token was there). */
static void worker_env(char **env, size_t cap)
{
    static const char *const keep[] = {
        "LD_LIBRARY_PATH=", "ASAN_OPTIONS=", "LSAN_OPTIONS=", "UBSAN_OPTIONS="};
    size_t n = 0;
    for (char **e = environ; *e && n + 1 < cap; e++)
        for (size_t k = 0; k < sizeof keep / sizeof keep[0]; k++)
            if (strncmp(*e, keep[k], strlen(keep[k])) == 0)
                env[n++] = *e;
    env[n] = NULL;
}

/* Confinement settings on the worker's command line (worker/confine.h):
 * it applies Landlock before its first thread, before it could read a
 * CONFIG. Appends to argv from *n; the numbers are kept in buf. */
static void confine_args(const struct config *c, const struct worker *w, char **argv, int *n,
                         char buf[3][24])
{
    argv[(*n)++] = "--confine";
    argv[(*n)++] = (char *)c->worker_confine;
    argv[(*n)++] = "--output-dir";
    argv[(*n)++] = (char *)w->output_dir;
    static const char *const names[] = {"--max-memory-mb", "--max-fds", "--cpu-seconds"};
    const long long v[] = {c->worker_max_memory_mb, c->worker_max_fds, c->worker_cpu_seconds};
    for (int k = 0; k < 3; k++) {
        if (!v[k])
            continue;
        snprintf(buf[k], sizeof buf[k], "%lld", v[k]);
        argv[(*n)++] = (char *)names[k];
        argv[(*n)++] = buf[k];
    }
}

/* Once per run: what the confinement of every worker will lack. */
static void note_confinement(const struct config *c)
{
    static bool said;
    if (said)
        return;
    said = true;
    if (strcmp(c->worker_confine, "off") == 0)
        log_info("workers run unconfined (--worker-confine off)");
    else if (!c->landlock_abi || !c->seccomp_filter)
        log_info("this kernel has no %s: workers run without it (docs/confinement.md)",
                 !c->landlock_abi ? "Landlock" : "seccomp filter");
    else
        log_debug("workers confined with Landlock ABI %d and seccomp", c->landlock_abi);
}

static void cancel_wait(struct server *srv, struct worker *w)
{
    if (srv->relay)
        relay_cancel_wait(srv->relay, w);
    else
        browser_cancel_wait(w->browser, w);
}

/* The browser is up: start the process, with its liveness pipe as fd 3 and
 * its own connection to the browser (through the CDP bridge) as fd 4. */
static void spawn_now(struct server *srv, void *ud, const char *err)
{
    struct worker *w = ud;
    if (err) {
        start_failed(srv, w, err);
        return;
    }
    snprintf(w->url, sizeof w->url, "ipc://%s/w-%llu.sock", srv->run_dir,
             (unsigned long long)w->seq);
    const char *reason = NULL;
    char label[32];
    snprintf(label, sizeof label, "worker %llu", (unsigned long long)w->seq);
    int cdp_fd = -1, life[2] = {-1, -1};
    /* The session's own directory. Without one the session still runs; its
     * tools that read or write files say there is no output dir. */
    char outdir_err[300], downloads[PATH_MAX + 16] = "";
    if (outdir_for_session(srv->cfg.output_dir, w->session_id, w->output_dir, sizeof w->output_dir,
                           outdir_err, sizeof outdir_err) < 0) {
        log_warn("session %s: %s; it cannot read or write files", w->session_id, outdir_err);
        w->output_dir[0] = 0;
    } else {
        snprintf(downloads, sizeof downloads, "%s/downloads", w->output_dir);
    }
    if (channel_listen(&w->ch, w->url) < 0) {
        reason = "could not open the worker channel";
    } else if (!srv->relay &&
               (cdp_fd = browser_connect(w->browser, label, downloads[0] ? downloads : NULL)) < 0) {
        reason = "could not connect to the browser";
    } else if (pipe2(life, O_CLOEXEC) < 0) {
        reason = "pipe failed";
    } else {
        w->chfd = channel_fd(w->ch);
        loop_add_fd(srv->loop, w->chfd, POLLIN, on_channel, w);
        w->life_fd = life[1];
        char lvl[32];
        snprintf(lvl, sizeof lvl, "%s", log_level_name(srv->cfg.log_level));
        char *argv[24] = {
            srv->cfg.worker_bin, "--connect", w->url, "--parent-fd", "3", "--cdp-fd", "4",
            "--log-level",       lvl};
        int argc = 9;
        if (srv->relay) {
            /* Extension mode: the worker dials the relay itself (no fd 4). */
            argv[5] = "--relay";
            argv[6] = (char *)relay_url(srv->relay);
        }
        char nums[3][24], *env[8];
        confine_args(&srv->cfg, w, argv, &argc, nums);
        argv[argc] = NULL;
        worker_env(env, sizeof env / sizeof env[0]);
        note_confinement(&srv->cfg);
        struct spawn_opts o = {
            .argv = argv, .envp = env, .fds = {life[0], cdp_fd}, .nfds = srv->relay ? 1 : 2};
        w->pid = spawn_child(&o);
        if (w->pid < 0)
            reason = "could not start tabvisor-worker";
    }
    if (life[0] >= 0)
        close(life[0]);
    if (cdp_fd >= 0)
        close(cdp_fd);
    if (reason) {
        log_error("session %s: %s", w->session_id, reason);
        start_failed(srv, w, reason);
        return;
    }
    w->state = W_STARTING;
    w->spawned_at = mono_ms();
    w->timer = loop_add_timer(srv->loop, WORKER_START_TIMEOUT_MS, on_timeout, w);
    log_debug("session %s: worker pid %d", w->session_id, (int)w->pid);
}

struct worker *worker_start(struct server *srv, const struct worker_events *events, void *owner,
                            const char *session_id, bool restarted)
{
    struct worker *w = calloc(1, sizeof *w);
    if (!w)
        return NULL;
    w->srv = srv;
    w->events = events;
    w->owner = owner;
    w->restarted = restarted;
    w->life_fd = -1;
    w->chfd = -1;
    w->seq = ++srv->next_worker_seq;
    w->state = W_WAIT_BROWSER;
    snprintf(w->session_id, sizeof w->session_id, "%s", session_id);
    w->next = srv->workers;
    srv->workers = w;
    if (srv->relay) {
        relay_when_ready(srv->relay, spawn_now, w);
        return w;
    }
    w->browser = srv->browser;
    if (srv->cfg.dedicated) {
        /* Its own Chromium, started now and gone with it. */
        char name[32];
        snprintf(name, sizeof name, "browser-w%llu", (unsigned long long)w->seq);
        w->browser = browser_new(srv, &dedicated_browser_events, name);
        w->owns_browser = w->browser != NULL;
    }
    if (!w->browser) {
        start_failed(srv, w, "out of memory");
        return w;
    }
    browser_when_ready(w->browser, spawn_now, w);
    return w;
}

int worker_send_call(struct worker *w, uint64_t call_id, const char *tool, const json_t *args,
                     long long deadline, bool progress)
{
    if (w->state != W_READY || !w->ch)
        return -1;
    json_t *body = json_pack("{s:s, s:o, s:I, s:b}", "tool", tool, "args",
                             args ? json_incref((json_t *)args) : json_object(), "deadline",
                             (json_int_t)deadline, "progress", progress);
    int r = send_or_shed(w, MSG_CALL, call_id, body);
    json_decref(body);
    if (r == 0)
        w->state = W_BUSY;
    return r;
}

int worker_send_cancel(struct worker *w, uint64_t call_id)
{
    return w->ch ? send_or_shed(w, MSG_CANCEL, call_id, NULL) : -1;
}

void worker_stop(struct worker *w, long long grace_ms)
{
    w->owner = NULL;
    if (w->state == W_WAIT_BROWSER) {
        /* Not started yet: just forget it. */
        cancel_wait(w->srv, w);
        unlink_worker(w->srv, w);
        loop_defer(w->srv->loop, free_worker, w);
        return;
    }
    if (w->state == W_STOPPING)
        return;
    if (w->ch && channel_send(w->ch, MSG_SHUTDOWN, 0, NULL) == CHANNEL_FULL)
        worker_kill(w, "it stopped reading its channel (send queue full)");
    w->state = W_STOPPING;
    loop_del_timer(w->srv->loop, w->timer);
    w->timer = loop_add_timer(w->srv->loop, grace_ms, on_timeout, w);
}

/* Dedicated mode: a session's own browser died. Only the router's sessions
 * on it hear of it; the worker that drove it is let go there and, once
 * reaped, discards the browser. */
static void dedicated_browser_died(struct server *srv, struct browser *b)
{
    router_browser_died(srv, b);
}

static const struct browser_events dedicated_browser_events = {.died = dedicated_browser_died};

int workers_reaped(struct server *srv, pid_t pid, int status)
{
    for (struct worker *w = srv->workers; w; w = w->next)
        if (w->owns_browser && browser_reaped(w->browser, pid, status))
            return 1;
    for (struct worker *w = srv->workers; w; w = w->next) {
        if (w->pid != pid)
            continue;
        if (WIFSIGNALED(status) || WEXITSTATUS(status) != 0)
            log_warn("worker %d of session %s exited (%s %d)", (int)pid, w->session_id,
                     WIFSIGNALED(status) ? "signal" : "status",
                     WIFSIGNALED(status) ? WTERMSIG(status) : WEXITSTATUS(status));
        kill(-pid, SIGKILL); /* anything it left in its group (pid itself is reaped) */
        loop_del_timer(srv->loop, w->timer);
        w->timer = 0;
        close_channel(w);
        w->pid = 0;
        w->state = W_STOPPING;
        unlink_worker(srv, w);
        if (w->owns_browser) {
            /* Before its session may start a new one (on the same
             * --user-data-dir profile, which one browser holds at a time). */
            browser_discard(w->browser);
            w->owns_browser = false;
        }
        if (w->owner)
            w->events->exited(srv, w, status);
        loop_defer(srv->loop, free_worker, w);
        return 1;
    }
    return 0;
}

void workers_stop_all(struct server *srv, long long timeout_ms)
{
    for (struct worker *w = srv->workers; w; w = w->next) {
        w->owner = NULL;
        /* A stopping worker already has its SHUTDOWN; a second one would sit
         * in nng's queue of a peer that is gone. */
        if (w->ch && w->state != W_STOPPING)
            channel_send(w->ch, MSG_SHUTDOWN, 0, NULL);
    }
    long long end = mono_ms() + timeout_ms;
    for (;;) {
        int alive = 0;
        for (struct worker *w = srv->workers; w; w = w->next) {
            if (w->pid > 0 && waitpid(w->pid, NULL, WNOHANG) == w->pid)
                w->pid = 0;
            alive += w->pid > 0;
        }
        if (!alive || mono_ms() >= end)
            break;
        usleep(5000);
    }
    while (srv->workers) {
        struct worker *w = srv->workers;
        srv->workers = w->next;
        if (w->pid > 0) {
            spawn_kill_group(w->pid, SIGKILL);
            waitpid(w->pid, NULL, 0);
        }
        if (w->state == W_WAIT_BROWSER)
            cancel_wait(srv, w);
        loop_del_timer(srv->loop, w->timer);
        close_channel(w);
        if (w->owns_browser)
            browser_discard(w->browser); /* frees after this iteration: loop_free runs it */
        json_decref(w->restore);
        json_decref(w->restored);
        free(w);
    }
    /* Exiting: every worker is dead, so nng lets go within milliseconds. */
    channel_retire_flush(srv->loop, 1000);
}
