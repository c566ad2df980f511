/*
 * main.c - the worker process: one browser session.
 *
 * Start-up: dial the supervisor, HELLO, receive CONFIG, then over the
 * browser connection the supervisor passed us (fd 4, through its CDP
 * bridge) create our own browser context (disposed by the bridge when our
 * connection closes, so a crash of this process leaves nothing behind) and
 * a page, then READY. Then: run MSG_CALLs one at a time until SHUTDOWN, the
 * supervisor's death (liveness pipe EOF), or the browser's.
 */
#include <errno.h>
#include <getopt.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>

#include "catalog.h"
#include "channel.h"
#include "confine.h"
#include "hooks.h"
#include "log.h"
#include "memtrim.h"
#include "netpolicy.h"
#include "proto.h"
#include "tabs.h"
#include "worker.h"

#define CONNECT_TIMEOUT_MS 20000

static struct session W;
/* MSG_CONFIG's restore, until it is applied (static: the early exits before
 * it leave it reachable, not leaked). */
static json_t *restore;

/* Messages read while a call or start-up was running that are not for it
 * (a CALL that raced in): kept in arrival order for the main loop. */
#define MAX_DEFERRED 16
static struct proto_msg deferred[MAX_DEFERRED];
static size_t ndeferred;

/* Drain the channel while waiting on the browser: a CANCEL for the running
 * call or a SHUTDOWN interrupts the wait (cdp.h); anything else is kept. */
static int on_interrupt(void *ud)
{
    struct session *w = ud;
    for (;;) {
        struct proto_msg m = {0};
        char err[200];
        int r = channel_recv(w->ch, &m, 1, err, sizeof err);
        if (r == CHANNEL_AGAIN)
            break;
        if (r < 0) {
            log_error("bad message from supervisor: %s", err);
            w->shutdown = true;
            break;
        }
        if (m.type == MSG_CANCEL) {
            if (m.id == w->call.id && w->call.id)
                w->call.cancelled = true;
        } else if (m.type == MSG_SHUTDOWN) {
            w->shutdown = true;
        } else if (ndeferred < MAX_DEFERRED) {
            deferred[ndeferred++] = m;
            continue; /* ownership moved */
        } else {
            log_error("dropping %s: too many messages while busy", proto_msg_name(m.type));
        }
        proto_msg_clear(&m);
    }
    /* A capture of the session's state gives way to a call at once. */
    return w->call.cancelled || w->shutdown || (w->state_capturing && ndeferred);
}

/* READY: ok, or the error; restored (stolen, may be NULL) says what a
 * restart's restore brought back. */
static int send_ready(struct session *w, const char *error, json_t *restored)
{
    const char *code = w->call.err != TV_OK ? tv_err_code(w->call.err) : "BROWSER_ERROR";
    json_t *body =
        error ? json_pack("{s:b, s:{s:s, s:s}}", "ok", 0, "error", "code", code, "message", error)
              : json_pack("{s:b}", "ok", 1);
    if (restored && !error)
        json_object_set(body, "restored", restored);
    json_decref(restored);
    int r = channel_send(w->ch, MSG_READY, 0, body);
    json_decref(body);
    return r;
}

bool call_waiting(void)
{
    return ndeferred > 0;
}

/* cdp_set_abort hook: the running call's page cannot answer, or a capture
 * of the session's state must give way to a call. */
static int call_blocked(void *ud)
{
    struct session *w = ud;
    return dialog_blocks(w) || (w->call.id && (tabs_current_gone(w) || w->page->crashed)) ||
           relay_broke(w) || (w->state_capturing && ndeferred);
}

/* Set up context + page over the browser connection on browser_fd (the
 * supervisor's CDP bridge), or in extension mode over the relay at
 * relay_url (worker/cdp/relay.c). Returns 0 or -1 with w->call.errmsg set. */
static int open_session(struct session *w, int browser_fd, const char *relay_url)
{
    w->call.deadline = mono_ms() + CONNECT_TIMEOUT_MS;
    struct cdp_transport *t = NULL;
    if (relay_url) {
        char err[300];
        t = w->relay =
            relay_transport_new(relay_url, w->session_id, w->relay_proof, err, sizeof err);
        if (!t)
            return fail_call(w, TV_BROWSER_ERROR, NULL, "%s", err);
    } else if (browser_fd >= 0) {
        t = pipe_transport_new(browser_fd, browser_fd);
        if (w->firefox)
            t = bidi_transport_new(t, netpolicy_check);
    }
    if (!t)
        return fail_call(w, TV_BROWSER_ERROR, NULL, "no connection to the browser (--cdp-fd)");
    w->cdp = cdp_new(t);
    cdp_set_event_handler(w->cdp, page_on_event, w);
    cdp_set_interrupt(w->cdp, channel_fd(w->ch), on_interrupt, w);
    /* A JavaScript dialog blocks the page, a closed tab never answers:
     * waits end, sends are refused. */
    cdp_set_abort(w->cdp, call_blocked, w);

    json_t *r;
    if (browser_call(w, "Target.createBrowserContext", json_pack("{s:b}", "disposeOnDetach", 1),
                     &r) < 0)
        return -1;
    snprintf(w->context_id, sizeof w->context_id, "%s",
             json_string_value(json_object_get(r, "browserContextId")) ?: "");
    json_decref(r);
    return tabs_open_page(w);
}

/* A failed result the agent should see instead, when the current tab was
 * closed by the page (tabs.h): before the call (result NULL), the call does
 * not run (it would act on another page than the agent thinks); during it
 * (during), an error the closing caused is replaced; otherwise (a success,
 * or browser_tabs, which runs anyway) the result gets a note. NULL: nothing
 * to replace result with. */
static json_t *lost_tab_result(struct session *w, json_t *result, bool during)
{
    const char *lost = tabs_lost(w);
    if (!lost)
        return NULL;
    json_t *out = NULL;
    if (!result || (during && json_is_true(json_object_get(result, "isError")))) {
        fail_call(w, TV_TAB_NOT_FOUND,
                  result ? "What the call did before the tab closed is unknown; take a "
                           "browser_snapshot."
                         : "Call again to act on the new current tab, or pick one with "
                           "browser_tabs.",
                  "%s", lost);
        out = tool_fail(w);
    } else {
        char note[800];
        snprintf(note, sizeof note, "Note: %s.", lost);
        json_array_append_new(json_object_get(result, "content"),
                              json_pack("{s:s, s:s}", "type", "text", "text", note));
    }
    tabs_lost_clear(w);
    return out;
}

/* After a failed READY, or a last answer before leaving: stay (up to 5 s)
 * until the supervisor has read it and says SHUTDOWN, kills us, or goes
 * away, so it never sees our exit before our reason. */
static void linger_until_shutdown(struct session *w)
{
    long long end = mono_ms() + 5000;
    for (long long now; (now = mono_ms()) < end;) {
        struct pollfd p = {.fd = channel_fd(w->ch), .events = POLLIN};
        if (poll(&p, 1, (int)(end - now)) <= 0)
            return;
        struct proto_msg m = {0};
        char err[200];
        int r = channel_recv(w->ch, &m, 1, err, sizeof err);
        if (r == CHANNEL_AGAIN)
            continue;
        bool done = r < 0 || m.type == MSG_SHUTDOWN;
        proto_msg_clear(&m);
        if (done)
            return;
    }
}

/* Leaving on our own: say so, as our last message, and read on until the
 * supervisor kills us. Exiting at once would close our end while the
 * supervisor may be reading our last messages and sending us a call; the
 * failed send then makes its nng close the connection mid-read, which can
 * hang nng for good (proto/channel.h). Once told, the supervisor lets go of
 * a quiet channel and kills us. */
static void say_exiting(struct session *w, const char *reason)
{
    json_t *body = json_pack("{s:s, s:{s:s}}", "kind", "exiting", "detail", "reason", reason);
    if (channel_send(w->ch, MSG_EVENT, 0, body) == 0)
        linger_until_shutdown(w);
    json_decref(body);
}

static int relay_ready(void *ud)
{
    return relay_transport_ready(ud);
}

/* Extension mode, before a call: wait (up to 5 s) for a broken link to the
 * relay to come back, and if the relay that answers forgot our tabs (it was
 * restarted), start over in a fresh tab. */
static void relay_before_call(struct session *w)
{
    if (!w->relay)
        return;
    long long cap = mono_ms() + 5000;
    if (w->call.deadline < cap)
        cap = w->call.deadline;
    /* Breaks counted since the last call are history, and so are those
     * while we wait here: the abort hook (relay_broke) would otherwise end
     * this wait at once, and the call would go out before the relay's hello
     * told us whether it still knows our tabs. */
    do {
        w->relay_breaks = relay_transport_breaks(w->relay);
        cdp_wait(w->cdp, relay_ready, w->relay, cap);
    } while (relay_transport_breaks(w->relay) != w->relay_breaks && mono_ms() < cap);
    /* One from here on fails the call. */
    w->relay_breaks = relay_transport_breaks(w->relay);
    if (relay_transport_take_reset(w->relay)) {
        log_info("session %s: the relay was restarted; continuing in a new tab", w->session_id);
        tabs_forget_all(w);
    }
}

/* Append a text note to a result's content; note is cleared. */
static void add_note(json_t *result, char *note)
{
    if (!*note)
        return;
    json_array_append_new(json_object_get(result, "content"),
                          json_pack("{s:s, s:s}", "type", "text", "text", note));
    *note = 0;
}

static void run_call(struct session *w, struct proto_msg *m)
{
    const char *tool = json_string_value(json_object_get(m->body, "tool"));
    json_t *args = json_object_get(m->body, "args");
    w->call.id = m->id;
    w->call.deadline = json_integer_value(json_object_get(m->body, "deadline"));
    if (w->call.deadline <= 0)
        w->call.deadline = mono_ms() + 30000;
    w->call.cancelled = false;
    w->call.err = TV_OK;
    w->call.errmsg[0] = w->call.errhint[0] = 0;
    const struct tool_def *def = tool ? catalog_find(tool) : NULL;
    tool_fn fn = tool ? tools_find(tool) : NULL;
    json_t *result;
    const char *refused = fn && w->firefox ? firefox_refusal(tool) : NULL;
    if (!fn) {
        fail_call(w, TV_NOT_SUPPORTED, NULL, "this worker has no tool %s", tool ? tool : "(none)");
        result = tool_fail(w);
    } else if (refused) {
        fail_call(w, TV_NOT_SUPPORTED,
                  "Run this tool on Chromium (--browser chromium); the README lists the tools by "
                  "browser.",
                  "%s does not run on Firefox: %s", tool, refused);
        result = tool_fail(w);
    } else {
        relay_before_call(w);
        /* Tabs that came or went since the last call (safe point). */
        tabs_sync(w);
        bool tab_tool = strcmp(tool, "browser_tabs") == 0 || strcmp(tool, "browser_close") == 0;
        bool lost_before = tabs_lost(w) != NULL;
        if (w->page->crashed && !w->broken)
            replace_crashed_page(w, w->crash_note, sizeof w->crash_note);
        if (w->broken) {
            fail_call(w, TV_BROWSER_CRASHED, "The next call starts a fresh browser context.",
                      "the session has no page");
            result = tool_fail(w);
        } else if (!tab_tool && (result = lost_tab_result(w, NULL, false))) {
            /* the agent hears of the closed tab first */
        } else if (!def->modal_ok && dialog_fail(w)) {
            /* A dialog blocks the session's pages: the one check before a
             * tool that needs them (catalog.h, modal_ok). One that opens
             * during the call ends its commands the same way (page.c). */
            result = tool_fail(w);
        } else {
            w->call.args = json_is_object(args) ? args : NULL;
            result = fn(w, w->call.args);
            w->call.args = NULL;
            /* The page crashed during the call: it failed (PAGE_CRASHED,
             * fail_cdp) or finished first; either way the next call finds
             * a working tab. */
            if (w->page->crashed && !w->broken) {
                /* The tab is reloaded once this answer is out (main loop),
                 * so the answer is not held up by the reload. */
                snprintf(w->crash_note, sizeof w->crash_note,
                         "Note: the page of the current tab (%.300s) crashed: its renderer "
                         "process ended (killed, or out of memory). The tab is reloaded before "
                         "the next call: what the page held in memory is lost; the session's "
                         "cookies and storage are kept.",
                         w->page->url);
                w->crash_told = true;
            } else if (w->call.err == TV_TIMEOUT)
                page_unstick(w);
            /* Pages the call opened are tabs by the time it answers. */
            tabs_sync(w);
            json_t *lost = lost_tab_result(w, result, !lost_before);
            if (lost) {
                json_decref(result);
                result = lost;
            }
        }
    }
    add_note(result, w->crash_note);
    /* The main loop ends after this call: say so, so the supervisor sends
     * the next call to a fresh worker, not to one on its way out. */
    if (w->broken || (w->cdp && cdp_closed(w->cdp)))
        json_object_set_new(result, "final", json_true());
    if (!w->page->crashed && !w->broken && !json_is_true(json_object_get(result, "isError")))
        w->reload_unproven = false;
    send_result(w, m->id, result);
    json_decref(result);
    w->call.id = 0;
    /* Captured once idle (session_state.c); a tool that only reads changes
     * nothing worth restoring. */
    if (!def || !def->read_only)
        session_state_mark(w);
}

static void usage(void)
{
    fprintf(stderr, "usage: tabvisor-worker --connect ipc://PATH (--cdp-fd N | --relay ipc://PATH) "
                    "[--parent-fd N] "
                    "[--log-level LEVEL] [--confine auto|require|off] [--output-dir DIR]\n"
                    "       [--max-memory-mb MB] [--max-fds N] [--cpu-seconds S]\n"
                    "(started by tabvisor; not for direct use)\n");
}

/* The worker's composition: every module the core reaches through a table
 * (hooks.h, netpolicy.h), entered in the order the core runs them. The one
 * place that names the modules above the core. */
static void register_hooks(void)
{
    static const event_hook events[] = {
        nav_on_event,         frames_on_event,        dialogs_on_event,
        settle_on_event,      console_on_event,       netpolicy_on_event,
        console_log_on_event, network_log_on_event,   drag_on_event,
        upload_on_event,      storage_state_on_event, storage_helper_on_event,
        routes_on_event,      downloads_on_event,
    };
    for (size_t i = 0; i < sizeof events / sizeof events[0]; i++)
        hooks_on_event(events[i]);
    hooks_on_attach(routes_page_setup);
    hooks_on_attach(upload_attach);
    hooks_on_attach(settle_attach);
    hooks_on_notes(chooser_note);
    hooks_on_notes(console_notes);
    hooks_on_notes(downloads_notes);
    static const struct request_router routes = {.active = routes_active,
                                                 .answer = routes_answer};
    netpolicy_set_router(&routes);
}

int main(int argc, char **argv)
{
    const char *url = NULL, *relay_url = NULL;
    int parent_fd = -1, browser_fd = -1;
    enum log_level lvl = LOG_INFO;
    struct confine conf = {0};
    static const struct option opts[] = {{"connect", required_argument, 0, 'c'},
                                         {"parent-fd", required_argument, 0, 'p'},
                                         {"cdp-fd", required_argument, 0, 'd'},
                                         {"log-level", required_argument, 0, 'l'},
                                         {"relay", required_argument, 0, 'r'},
                                         CONFINE_OPTIONS,
                                         {0, 0, 0, 0}};
    int o;
    while ((o = getopt_long(argc, argv, "", opts, NULL)) != -1) {
        if (confine_option(&conf, o, optarg) > 0)
            continue; /* a bad value falls through to usage() */
        if (o == 'c')
            url = optarg;
        else if (o == 'p')
            parent_fd = atoi(optarg);
        else if (o == 'd')
            browser_fd = atoi(optarg);
        else if (o == 'l')
            lvl = log_level_from_name(optarg);
        else if (o == 'r')
            relay_url = optarg;
        else {
            usage();
            return 2;
        }
    }
    if (!url) {
        usage();
        return 2;
    }
    memtrim_init(); /* before nng's threads */
    log_init("tabvisor-worker", lvl);
    /* Extension mode reconnects to the relay (a new unix socket) after it
     * restarts: the seccomp filter lets AF_UNIX sockets through. */
    conf.unix_sockets = relay_url != NULL;
    confine_start(&conf); /* before any thread: Landlock binds only this one */
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    signal(SIGPIPE, SIG_IGN);

    register_hooks();
    struct session *w = &W;
    /* The tab list and its first tab's page before anything else: every
     * event and every helper reads the current tab's page (w->page). */
    if (tabs_init(w) < 0) {
        log_error("out of memory");
        return 1;
    }
    if (channel_dial(&w->ch, url) < 0) {
        log_error("cannot dial %s", url);
        return 1;
    }
    json_t *hello = json_pack("{s:i, s:i}", "pid", (int)getpid(), "proto", PROTO_VERSION);
    channel_send(w->ch, MSG_HELLO, 0, hello);
    json_decref(hello);

    /* Wait for CONFIG. */
    struct proto_msg m = {0};
    char err[256];
    for (;;) {
        int r = channel_recv(w->ch, &m, 0, err, sizeof err);
        if (r < 0) {
            log_error("handshake failed: %s", err);
            return 1;
        }
        if (r == 0 && m.type == MSG_CONFIG)
            break;
        if (r == 0 && m.type == MSG_SHUTDOWN) {
            /* Stopped before it began (a pooled worker no longer wanted). */
            proto_msg_clear(&m);
            channel_close(w->ch);
            return 0;
        }
        proto_msg_clear(&m);
    }
    snprintf(w->session_id, sizeof w->session_id, "%s",
             json_string_value(json_object_get(m.body, "sessionId")) ?: "");
    snprintf(w->output_dir, sizeof w->output_dir, "%s",
             json_string_value(json_object_get(m.body, "outputDir")) ?: "");
    snprintf(w->relay_proof, sizeof w->relay_proof, "%s",
             json_string_value(json_object_get(m.body, "relayProof")) ?: "");
    snprintf(w->downloads_how, sizeof w->downloads_how, "%s",
             json_string_value(json_object_get(m.body, "downloads")) ?: "");
    downloads_configure(w, w->downloads_how);
    w->max_output_chars = json_integer_value(json_object_get(m.body, "maxOutputChars"));
    snprintf(w->snapshot_mode, sizeof w->snapshot_mode, "%s",
             json_string_value(json_object_get(m.body, "snapshotMode")) ?: "diff");
    cdp_allow_set(json_string_value(json_object_get(m.body, "cdpAllow")));
    w->viewport_w = (int)json_integer_value(json_object_get(m.body, "viewportWidth"));
    w->viewport_h = (int)json_integer_value(json_object_get(m.body, "viewportHeight"));
    if (w->viewport_w < 100)
        w->viewport_w = 1280;
    if (w->viewport_h < 100)
        w->viewport_h = 720;
    int policy = netpolicy_configure(m.body, err, sizeof err);
    /* browser_session_create's storageState: loaded before READY, so the
     * session's first call finds it (tools/storage_state.c). */
    char storage_state[1100];
    snprintf(storage_state, sizeof storage_state, "%s",
             json_string_value(json_object_get(m.body, "storageState")) ?: "");
    restore = json_incref(json_object_get(m.body, "restore"));
    w->state_off = json_is_false(json_object_get(m.body, "keepState"));
    const char *browser = json_string_value(json_object_get(m.body, "browser"));
    w->firefox = browser && strcmp(browser, "firefox") == 0;
    /* Extension mode: the tabs and cookies are the user's browser's (session_state.c). */
    if (relay_url) {
        json_decref(restore);
        restore = NULL;
    }
    proto_msg_clear(&m);

    if (policy < 0) {
        fail_call(w, TV_INVALID_PARAMETERS, NULL, "network policy: %s", err);
        log_error("session %s: %s", w->session_id, w->call.errmsg);
        send_ready(w, w->call.errmsg, NULL);
        return 1;
    }
    if (open_session(w, browser_fd, relay_url) < 0) {
        log_error("session %s: %s", w->session_id, w->call.errmsg);
        send_ready(w, w->call.errmsg, NULL);
        return 1;
    }
    size_t ncookies, norigins;
    if (storage_state[0] && storage_state_load(w, storage_state, &ncookies, &norigins) < 0) {
        log_error("session %s: storageState: %s", w->session_id, w->call.errmsg);
        char msg[1200];
        snprintf(msg, sizeof msg, "storageState: %s", w->call.errmsg);
        send_ready(w, msg, NULL);
        linger_until_shutdown(w);
        return 1;
    }
    if (confine_finish(&conf) < 0) {
        log_error("session %s: cannot confine the worker: %s", w->session_id, conf.error);
        send_ready(w, conf.error, NULL);
        return 1;
    }
    /* A restarted session's state, as its last worker saw it. */
    json_t *restored = restore ? session_state_restore(w, restore) : NULL;
    json_decref(restore);
    restore = NULL;
    send_ready(w, NULL, restored);

    int chfd = channel_fd(w->ch);
    int exit_code = 0;
    while (!w->shutdown) {
        /* The channel is drained through on_interrupt, which also runs inside
         * every browser wait; calls it kept are run here in arrival order. */
        while (ndeferred && !w->shutdown) {
            m = deferred[0];
            memmove(deferred, deferred + 1, --ndeferred * sizeof *deferred);
            if (m.type == MSG_CALL)
                run_call(w, &m);
            proto_msg_clear(&m);
        }
        /* Dispatch browser events that arrived between calls (dialogs,
         * crashes, navigations the page started by itself). */
        int st = cdp_wait(w->cdp, NULL, NULL, mono_ms());
        if (st == CDP_CLOSED) {
            log_error("session %s: browser connection closed", w->session_id);
            exit_code = 3;
            break;
        }
        if (w->page->crashed && !w->broken) {
            log_warn("session %s: the page crashed between calls; reloading it", w->session_id);
            replace_crashed_page(w, w->crash_note, sizeof w->crash_note);
        }
        if (w->broken) {
            log_error("session %s: no page left; exiting so the session restarts", w->session_id);
            exit_code = 4;
            break;
        }
        if (ndeferred || w->shutdown)
            continue;
        /* Tabs the page opened or closed meanwhile (capped waits). */
        w->call.deadline = mono_ms() + 10000;
        tabs_sync(w);
        if (ndeferred || w->shutdown || w->page->crashed || w->broken)
            continue;
        /* Idle after a call: the session's state for a restart. */
        session_state_idle(w);
        if (ndeferred || w->shutdown || w->page->crashed || w->broken)
            continue;
        /* Idle: give back what a large result used (proto/memtrim.h). */
        memtrim_idle();
        struct pollfd p[3] = {{.fd = chfd, .events = POLLIN},
                              {.fd = parent_fd, .events = POLLIN},
                              {.fd = cdp_fd(w->cdp), .events = POLLIN}};
        /* Wakes for a due trim too: an idle session's worker gives back
         * its last burst's heap while the agent thinks. */
        int r = poll(p, 3, session_state_due_ms(w, memtrim_due_ms()));
        if (r < 0 && errno != EINTR)
            break;
        if (p[1].revents) {
            log_info("supervisor gone; exiting");
            break;
        }
        if (p[0].revents & POLLIN)
            on_interrupt(w);
    }
    /* Leaving after a call that ran out of memory: its answer may still be
     * in nng's queue, and exiting at once could drop it (the call then read
     * "worker died" instead of "ran out of memory"). The supervisor kills
     * us once it has read it. Only then: workers lingering after every
     * browser death made e2e.faults' 100 Chromium kills leave the
     * supervisor with 649 descriptors once (nng 1.5's hung closes). */
    if (w->out_of_memory)
        linger_until_shutdown(w);
    else if (exit_code == 3 || exit_code == 4)
        say_exiting(w, exit_code == 3 ? "its browser connection closed" : "no page left");
    while (ndeferred)
        proto_msg_clear(&deferred[--ndeferred]);
    /* Extension mode: our tabs are in the user's browser; the relay closes
     * them now rather than after its grace period. */
    if (w->relay && exit_code == 0)
        relay_transport_bye(w->relay);
    /* No orderly Target.disposeBrowserContext: when our connection closes,
     * the CDP bridge disposes of our context (closing its pages) whether we
     * exit, crash or are killed, so one path covers every way out. */
    cdp_free(w->cdp);
    tabs_free(w); /* every tab's page */
    json_decref(w->storage_origins);
    json_decref(w->state_last);
    free(w->state_sent);
    routes_free();
    channel_close(w->ch);
    return exit_code;
}
