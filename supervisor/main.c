/*
 * main.c - the supervisor process: MCP transports, the session table, and
 * the children (workers and the shared browser). See DESIGN.md section 1.
 */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/wait.h>
#include <unistd.h>

#include "browser.h"
#include "catalog.h"
#include "config.h"
#include "http.h"
#include "log.h"
#include "loop.h"
#include "mcp.h"
#include "memtrim.h"
#include "pair.h"
#include "relay_proc.h"
#include "router.h"
#include "rundir.h"
#include "server.h"
#include "sessions.h"
#include "stdio_transport.h"
#include "workers.h"

/* The kinds of child the supervisor starts, each with the function that
 * knows its pids: told of an exit, it returns 1 when the pid was one of its
 * own (and has dealt with it), 0 otherwise. Workers come first: a dedicated
 * worker's own browser is theirs to tell apart from the shared one. */
static int reaped_worker(struct server *srv, pid_t pid, int status)
{
    return workers_reaped(srv, pid, status);
}
static int reaped_relay(struct server *srv, pid_t pid, int status)
{
    return relay_reaped(srv->relay, pid, status);
}
static int reaped_browser(struct server *srv, pid_t pid, int status)
{
    return browser_reaped(srv->browser, pid, status);
}
static const struct {
    const char *kind;
    int (*reaped)(struct server *srv, pid_t pid, int status);
} children[] = {
    {"worker", reaped_worker},
    {"relay", reaped_relay},
    {"browser", reaped_browser},
};

static void reap_children(struct server *srv)
{
    int status;
    pid_t pid;
    while ((pid = waitpid(-1, &status, WNOHANG)) > 0) {
        size_t i = 0;
        while (i < sizeof children / sizeof children[0] && !children[i].reaped(srv, pid, status))
            i++;
        if (i < sizeof children / sizeof children[0])
            log_debug("reaped %s %d (status %d)", children[i].kind, (int)pid, status);
        else
            log_debug("reaped %d (status %d): an orphan that came to us", (int)pid, status);
    }
}

static void on_signal(struct loop *l, int fd, short revents, void *ud)
{
    struct server *srv = ud;
    struct signalfd_siginfo si;
    while (read(fd, &si, sizeof si) == sizeof si) {
        if (si.ssi_signo == SIGCHLD) {
            reap_children(srv);
        } else {
            log_info("signal %d; shutting down", (int)si.ssi_signo);
            loop_stop(l);
        }
    }
}

static void shutdown_all(struct server *srv)
{
    srv->shutting_down = 1;
    router_close_all(srv);
    workers_stop_all(srv, 1500);
    browser_stop(srv->browser, 3000);
    relay_stop(srv->relay, 2000);
    if (srv->cfg.http)
        http_transport_flush(1000);
    else
        stdio_transport_flush(1000);
}

int main(int argc, char **argv)
{
    struct server srv = {0};
    char why[200];
    memtrim_init();
    if (catalog_check(why, sizeof why) != 0) {
        /* A build whose catalog and tool list disagree must not serve. */
        fprintf(stderr, "tabvisor: broken build: %s\n", why);
        return 70;
    }
    if (argc > 1 && strcmp(argv[1], "pair") == 0)
        return pair_main(argc - 1, argv + 1);
    int r = config_parse(&srv.cfg, argc, argv);
    if (r != 0)
        return r > 0 ? 0 : 2;
    log_init("tabvisor", srv.cfg.log_level);
    signal(SIGPIPE, SIG_IGN);
    /* Orphaned descendants (Chromium's helpers whose parent died) are
     * re-parented to us, so we reap them and nothing outlives us unseen. */
    prctl(PR_SET_CHILD_SUBREAPER, 1);

    sigset_t mask;
    sigemptyset(&mask);
    sigaddset(&mask, SIGCHLD);
    sigaddset(&mask, SIGTERM);
    sigaddset(&mask, SIGINT);
    sigaddset(&mask, SIGHUP);
    sigprocmask(SIG_BLOCK, &mask, NULL);
    int sigfd = signalfd(-1, &mask, SFD_NONBLOCK | SFD_CLOEXEC);
    if (sigfd < 0) {
        log_error("signalfd: %s", strerror(errno));
        return 1;
    }
    if (srv.cfg.runtime_note[0])
        log_warn("runtime dir: %s", srv.cfg.runtime_note);
    if (rundir_create(srv.cfg.runtime_base, srv.run_dir, sizeof srv.run_dir) < 0)
        return 1;
    srv.front = &mcp_front; /* the router answers clients through the MCP front */
    srv.loop = loop_new();
    srv.sessions = session_table_new(srv.cfg.max_sessions, srv.cfg.idle_ms);
    if (srv.sessions)
        session_table_set_instance(srv.sessions, srv.cfg.instance_id);
    /* Shared mode's one browser; dedicated mode starts one per worker
     * (workers.c). */
    if (!srv.cfg.dedicated && !srv.cfg.extension)
        srv.browser = browser_new(&srv, &router_browser_events, "browser");
    if (srv.cfg.extension)
        srv.relay = relay_proc_new(&srv);
    if (!srv.loop || !srv.sessions || (!srv.browser && !srv.cfg.dedicated && !srv.cfg.extension)) {
        log_error("out of memory");
        return 1;
    }
    /* With --http the server serves HTTP only: stdin is ignored (it may be
     * /dev/null under a service manager) and SIGTERM/SIGINT stop it. */
    if (srv.cfg.http ? http_transport_start(&srv) < 0 : stdio_transport_start(&srv) < 0) {
        rundir_remove(srv.run_dir);
        return 1;
    }
    loop_add_fd(srv.loop, sigfd, POLLIN, on_signal, &srv);
    router_start_housekeeping(&srv);
    if (srv.relay)
        relay_proc_start(srv.relay);
    log_info("tabvisor ready on %s (max %zu sessions, idle timeout %llds, runtime %s)",
             srv.cfg.http ? "HTTP" : "stdio", srv.cfg.max_sessions, srv.cfg.idle_ms / 1000,
             srv.run_dir);

    loop_run(srv.loop);

    shutdown_all(&srv);
    if (srv.cfg.http)
        http_transport_stop();
    else
        stdio_transport_stop();
    browser_free(srv.browser);
    relay_proc_free(srv.relay);
    session_table_free(srv.sessions);
    loop_free(srv.loop);
    rundir_remove(srv.run_dir);
    close(sigfd);
    log_info("bye");
    return 0;
}
