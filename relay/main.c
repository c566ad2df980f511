/*
 * main.c - tabvisor-relay: the bridge between workers (nng pair1 over ipc, proto.h types
 * 400..499) and the browser extension (WebSocket on 127.0.0.1, JSON). See
 * docs/relay.md.
 *
 *   tabvisor-relay [--relay-port N] [--runtime-dir DIR] [--secret-file F]
 *                  [--extension-id ID] [--log-level L] [--log-file F]
 *   tabvisor-relay pair [--relay-port N] [--secret-file F] [--extension-id ID] [--new]
 *
 * Exit status: 0 stopped by SIGINT/SIGTERM; 1 error; 3 another relay holds
 * the runtime dir's lock (its discovery file is printed on stdout); 4 the
 * port is taken by another process (which is left alone).
 */
#include "relay.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include "log.h"
#include "logfile.h"
#include "pairing.h"
#include "privdir.h"

#define EXIT_ALREADY 3
#define EXIT_PORT_TAKEN 4

struct args {
    int port;
    const char *rundir, *secret, *ext_id, *level, *log_file;
    bool rotate;
};

static void usage(FILE *f)
{
    fprintf(f,
            "usage: tabvisor-relay [--relay-port N] [--runtime-dir DIR] [--secret-file F]\n"
            "                      [--extension-id ID] [--log-level L] [--log-file F]\n"
            "       tabvisor-relay pair [--relay-port N] [--secret-file F] [--extension-id ID] "
            "[--new]\n"
            "Default port %d (0: any, printed on stderr). See docs/relay.md.\n",
            RELAY_DEFAULT_PORT);
}

static int parse_args(int argc, char **argv, int first, struct args *a)
{
    for (int i = first; i < argc; i++) {
        const char *k = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (strcmp(k, "--new") == 0) {
            a->rotate = true;
            continue;
        }
        if (strcmp(k, "-h") == 0 || strcmp(k, "--help") == 0) {
            usage(stdout);
            exit(0);
        }
        if (!v) {
            fprintf(stderr, "tabvisor-relay: %s needs a value\n", k);
            return -1;
        }
        i++;
        if (strcmp(k, "--relay-port") == 0) {
            char *end;
            long p = strtol(v, &end, 10);
            if (*end || p < 0 || p > 65535) {
                fprintf(stderr, "tabvisor-relay: bad port '%s'\n", v);
                return -1;
            }
            a->port = (int)p;
        } else if (strcmp(k, "--runtime-dir") == 0) {
            a->rundir = v;
        } else if (strcmp(k, "--secret-file") == 0) {
            a->secret = v;
        } else if (strcmp(k, "--extension-id") == 0) {
            if (strlen(v) != 32 || strspn(v, "abcdefghijklmnop") != 32) {
                fprintf(stderr, "tabvisor-relay: an extension id is 32 letters a-p\n");
                return -1;
            }
            a->ext_id = v;
        } else if (strcmp(k, "--log-level") == 0) {
            a->level = v;
        } else if (strcmp(k, "--log-file") == 0) {
            a->log_file = v;
        } else {
            fprintf(stderr, "tabvisor-relay: unknown option %s\n", k);
            usage(stderr);
            return -1;
        }
    }
    return 0;
}

/* $XDG_CONFIG_HOME/tabvisor/relay.secret, else ~/.config/tabvisor/relay.secret. */
static void default_secret(char *out, size_t len)
{
    const char *x = getenv("XDG_CONFIG_HOME");
    if (x && *x == '/')
        snprintf(out, len, "%s/tabvisor/relay.secret", x);
    else
        snprintf(out, len, "%s/.config/tabvisor/relay.secret",
                 getenv("HOME") ? getenv("HOME") : "");
}

/* `pair`: make the secret once, and a one-time code (pairing.h) that the
 * user types into the extension's pairing page; the extension gets the
 * secret over the socket. Nothing secret goes into a URL (Chromium keeps
 * URLs in the profile's history) or on a command line. */
static int cmd_pair(const struct args *a)
{
    char path[PATH_MAX], secret[AUTH_SECRET_HEX + 1], err[PATH_MAX + 100];
    char code[PAIR_CODE_LEN + 3];
    if (a->secret)
        snprintf(path, sizeof(path), "%s", a->secret);
    else
        default_secret(path, sizeof(path));
    if (auth_make_secret(path, a->rotate, secret, err, sizeof(err)) != 0 ||
        pair_code_make(path, code, err, sizeof(err)) != 0) {
        fprintf(stderr, "tabvisor-relay pair: %s\n", err);
        return 1;
    }
    memset(secret, 0, sizeof secret);
    const char *id = a->ext_id ? a->ext_id : RELAY_EXTENSION_ID;
    char url[200];
    int n = snprintf(url, sizeof url, "chrome-extension://%s/pair.html", id);
    if (a->port != RELAY_DEFAULT_PORT && n > 0 && (size_t)n < sizeof url)
        snprintf(url + n, sizeof url - (size_t)n, "?port=%d", a->port);
    printf("Pairing code: %s\n"
           "Open %s in the browser that has the tabvisor extension and type the code there "
           "(within %d minutes, with the relay running).\n",
           code, url, PAIR_CODE_TTL_S / 60);
    fflush(stdout);
    fprintf(stderr, "tabvisor-relay pair: secret in %s\n", path);
    return 0;
}

static int signal_callback(struct lws *wsi, enum lws_callback_reasons reason, void *user, void *in,
                           size_t len)
{
    struct relay *r = lws_context_user(lws_get_context(wsi));
    if (reason == LWS_CALLBACK_RAW_RX_FILE) {
        struct signalfd_siginfo si;
        if (read(lws_get_socket_fd(wsi), &si, sizeof(si)) == (ssize_t)sizeof(si)) {
            log_info("signal %u: stopping", si.ssi_signo);
            r->stop = true;
        }
    }
    return 0;
}

static const struct lws_protocols signal_protocol = {
    .name = "tabvisor-relay-signal",
    .callback = signal_callback,
};

static void tick(lws_sorted_usec_list_t *sul)
{
    struct relay *r = lws_container_of(sul, struct relay, tick);
    router_tick(r, relay_now_ms());
    logfile_check();
    lws_sul_schedule(r->ctx, 0, &r->tick, tick, RELAY_TICK_MS * LWS_US_PER_MS);
}

/* SIGINT and SIGTERM are blocked (before lws starts any thread) and read from a signalfd adopted
 * into the loop, so the loop stops cleanly: discovery file removed, sockets closed. */
static int block_signals(sigset_t *set)
{
    sigemptyset(set);
    sigaddset(set, SIGINT);
    sigaddset(set, SIGTERM);
    return sigprocmask(SIG_BLOCK, set, NULL);
}

static int adopt_signals(struct relay *r)
{
    sigset_t set;
    if (block_signals(&set) != 0)
        return -1;
    int fd = signalfd(-1, &set, SFD_NONBLOCK | SFD_CLOEXEC);
    if (fd < 0)
        return -1;
    lws_sock_file_fd_type u = {.filefd = fd};
    if (!lws_adopt_descriptor_vhost(r->vh, LWS_ADOPT_RAW_FILE_DESC, u, signal_protocol.name,
                                    NULL)) {
        close(fd);
        return -1;
    }
    return 0;
}

static int run(const struct args *a)
{
    static struct relay r; /* big (the registry); one per process */
    char err[PATH_MAX + 200];
    memset(&r, 0, sizeof(r));
    r.workers_fd = -1;
    sigset_t sigs;
    if (block_signals(&sigs) != 0) {
        log_error("sigprocmask: %s", strerror(errno));
        return 1;
    }
    router_init(&r);
    if (a->rundir)
        snprintf(r.rundir, sizeof(r.rundir), "%s", a->rundir);
    else {
        char note[PATH_MAX + 200];
        privdir_default("tabvisor-relay", r.rundir, sizeof(r.rundir), note, sizeof note);
        if (note[0])
            log_warn("runtime dir: %s", note);
    }
    if (a->secret)
        snprintf(r.secret_path, sizeof(r.secret_path), "%s", a->secret);
    else
        default_secret(r.secret_path, sizeof(r.secret_path));
    snprintf(r.extension_id, sizeof(r.extension_id), "%s",
             a->ext_id ? a->ext_id : RELAY_EXTENSION_ID);
    snprintf(r.ipc_url, sizeof(r.ipc_url), "ipc://%s/relay.ipc", r.rundir);

    if (discovery_prepare_dir(r.rundir, err, sizeof(err)) != 0) {
        log_error("runtime dir: %s", err);
        return 1;
    }
    int lockfd = discovery_lock(r.rundir, err, sizeof(err));
    if (lockfd == -2) {
        char *d = discovery_read(r.rundir);
        printf("%s\n", d ? d : "{}");
        fflush(stdout);
        log_msg(LOG_NOTICE, "a relay is already running for %s: %s", r.rundir,
                d ? d : "(starting)");
        free(d);
        return EXIT_ALREADY;
    }
    if (lockfd < 0) {
        log_error("lock: %s", err);
        return 1;
    }
    /* The one relay of this dir from here on: its log goes to the file
     * (what came before, on stderr, was another relay's business). */
    if (a->log_file && logfile_open(a->log_file, LOGFILE_MAX_BYTES, err, sizeof(err)) != 0)
        log_warn("log file: %s; logging to stderr", err);
    char probe[AUTH_SECRET_HEX + 1];
    if (auth_load_secret(r.secret_path, probe, err, sizeof(err)) != 0)
        log_warn("not paired yet: %s; the extension is refused until then", err);
    memset(probe, 0, sizeof(probe));

    lws_set_log_level(LLL_ERR | LLL_WARN, NULL);
    struct lws_protocols protocols[] = {
        ext_protocol, worker_protocol, signal_protocol, {NULL, NULL, 0, 0, 0, NULL, 0}};
    struct lws_context_creation_info info;
    memset(&info, 0, sizeof(info));
    info.options = LWS_SERVER_OPTION_EXPLICIT_VHOSTS | LWS_SERVER_OPTION_DISABLE_IPV6 |
                   LWS_SERVER_OPTION_VALIDATE_UTF8;
    info.user = &r;
    info.port = CONTEXT_PORT_NO_LISTEN;
    r.ctx = lws_create_context(&info);
    if (!r.ctx) {
        log_error("lws_create_context failed");
        return 1;
    }
    info.port = a->port;
    info.iface = "127.0.0.1";
    info.protocols = protocols;
    info.vhost_name = "tabvisor-relay";
    r.vh = lws_create_vhost(r.ctx, &info);
    if (!r.vh) {
        /* Most likely the port is taken. Whoever holds it is left alone. */
        log_error("cannot listen on 127.0.0.1:%d (taken by another process?); not touching it",
                  a->port);
        lws_context_destroy(r.ctx);
        return EXIT_PORT_TAKEN;
    }
    r.port = lws_get_vhost_listen_port(r.vh);
    int rc = 1;
    if (worker_side_open(&r, err, sizeof(err)) != 0) {
        log_error("%s", err);
        goto out;
    }
    if (adopt_signals(&r) != 0) {
        log_error("signals: %s", strerror(errno));
        goto out;
    }
    if (discovery_write(&r, err, sizeof(err)) != 0) {
        log_error("discovery: %s", err);
        goto out;
    }
    lws_sul_schedule(r.ctx, 0, &r.tick, tick, RELAY_TICK_MS * LWS_US_PER_MS);
    fprintf(stderr, "tabvisor-relay: listening on ws://127.0.0.1:%d/extension workers %s\n", r.port,
            r.ipc_url);
    while (!r.stop && lws_service(r.ctx, 0) >= 0)
        ;
    rc = 0;
out:
    discovery_remove(&r);
    /* Before the context goes: the last replies leave on its loop. */
    worker_side_close(&r);
    lws_context_destroy(r.ctx);
    router_free(&r);
    close(lockfd);
    return rc;
}

int main(int argc, char **argv)
{
    struct args a = {.port = RELAY_DEFAULT_PORT};
    signal(SIGPIPE, SIG_IGN);
    bool pair = argc > 1 && strcmp(argv[1], "pair") == 0;
    if (parse_args(argc, argv, pair ? 2 : 1, &a) != 0)
        return 1;
    if (pair)
        return cmd_pair(&a);
    log_init("tabvisor-relay", a.level ? log_level_from_name(a.level) : LOG_INFO);
    return run(&a);
}
