/* config.c - settings from flags, environment and config file, in that
 * precedence (options.h has the table, config_file.c the file and the
 * environment); every value is checked by its option's setter. */
#include "config.h"
#include "config_file.h"
#include "config_token.h"
#include "options.h"
#include "privdir.h"

#include <errno.h>
#include <getopt.h>
#include <linux/landlock.h>
#include <linux/seccomp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/syscall.h>
#include <unistd.h>

int config_each_item(const char *list, int (*fn)(const char *item, void *ud), void *ud)
{
    while (list && *list) {
        size_t n = strcspn(list, ";,");
        char item[512];
        size_t a = 0, b = n;
        while (a < b && list[a] == ' ')
            a++;
        while (b > a && list[b - 1] == ' ')
            b--;
        if (b > a) {
            snprintf(item, sizeof item, "%.*s", (int)(b - a), list + a);
            int r = fn(item, ud);
            if (r)
                return r;
        }
        list += n + (list[n] != 0);
    }
    return 0;
}

static int same_name(const char *item, void *ud)
{
    return strcmp(item, ud) == 0;
}

bool config_tool_enabled(const struct config *c, const struct tool_def *t)
{
    if (c->tools)
        return config_each_item(c->tools, same_name, (void *)t->name) != 0;
    return (c->caps >> t->cap) & 1u;
}

/* Find name in PATH; copy the full path into out. */
static int which(const char *name, char *out, size_t len)
{
    const char *path = getenv("PATH");
    if (!path)
        path = "/usr/local/bin:/usr/bin:/bin";
    while (*path) {
        const char *colon = strchr(path, ':');
        size_t n = colon ? (size_t)(colon - path) : strlen(path);
        snprintf(out, len, "%.*s/%s", (int)n, path, name);
        if (access(out, X_OK) == 0)
            return 0;
        path += n + (colon ? 1 : 0);
    }
    return -1;
}

#ifndef TV_LIBEXEC_REL
#define TV_LIBEXEC_REL "../libexec/tabvisor"
#endif

/* Set out to dir/name when that is executable, else to dir/TV_LIBEXEC_REL/name.
 * The build tree keeps every binary side by side; an installed tree (cmake
 * --install, the .deb) keeps the helpers in libexec, out of PATH, at
 * TV_LIBEXEC_REL from bin (CMakeLists.txt computes it from GNUInstallDirs). */
static void helper_path(char *out, size_t len, const char *dir, const char *name)
{
    snprintf(out, len, "%s/%s", dir, name);
    if (access(out, X_OK) == 0)
        return;
    char alt[PATH_MAX];
    snprintf(alt, sizeof alt, "%s/" TV_LIBEXEC_REL "/%s", dir, name);
    if (access(alt, X_OK) == 0)
        snprintf(out, len, "%s", alt);
}

static void default_paths(struct config *c, const char *argv0)
{
    char self[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    if (n > 0) {
        self[n] = 0;
        char *slash = strrchr(self, '/');
        if (slash)
            *slash = 0;
        helper_path(c->worker_bin, sizeof c->worker_bin, self, "tabvisor-worker");
        helper_path(c->relay_bin, sizeof c->relay_bin, self, "tabvisor-relay");
    } else {
        snprintf(c->worker_bin, sizeof c->worker_bin, "%s-worker", argv0);
        snprintf(c->relay_bin, sizeof c->relay_bin, "%s-relay", argv0);
    }
    /* Debian's /usr/bin/chromium is a shell wrapper; the real binary avoids
     * an extra process and its environment handling. The headless shell
     * (chromium-headless-shell), when installed, comes first: it costs about
     * 10 MB less per session (docs/memory.md). */
    if (access("/usr/lib/chromium/chromium-headless-shell", X_OK) == 0)
        snprintf(c->chromium, sizeof c->chromium, "/usr/lib/chromium/chromium-headless-shell");
    else if (access("/usr/lib/chromium/chromium", X_OK) == 0)
        snprintf(c->chromium, sizeof c->chromium, "/usr/lib/chromium/chromium");
    else if (which("chromium", c->chromium, sizeof c->chromium) < 0 &&
             which("chromium-browser", c->chromium, sizeof c->chromium) < 0 &&
             which("google-chrome", c->chromium, sizeof c->chromium) < 0)
        c->chromium[0] = 0;
    if (which("firefox-esr", c->firefox_bin, sizeof c->firefox_bin) < 0 &&
        which("firefox", c->firefox_bin, sizeof c->firefox_bin) < 0)
        c->firefox_bin[0] = 0;
    privdir_default("tabvisor", c->runtime_base, sizeof c->runtime_base, c->runtime_note,
                    sizeof c->runtime_note);
    snprintf(c->output_dir, sizeof c->output_dir, "tabvisor-output");
}

int config_parse_hostport(const char *s, char *host, size_t hostlen, int *port)
{
    const char *colon = strrchr(s, ':');
    const char *p = colon ? colon + 1 : s;
    size_t hn = colon ? (size_t)(colon - s) : 0;
    if (hn >= 2 && s[0] == '[' && s[hn - 1] == ']') {
        s++;
        hn -= 2;
    } else if (hn && memchr(s, ':', hn)) {
        return -1; /* an IPv6 address needs brackets */
    }
    char *end;
    errno = 0;
    long v = strtol(p, &end, 10);
    if (!*p || *end || errno || v < 0 || v > 65535 || hn >= hostlen)
        return -1;
    if (hn)
        snprintf(host, hostlen, "%.*s", (int)hn, s);
    else
        snprintf(host, hostlen, "127.0.0.1");
    *port = (int)v;
    return 0;
}

int config_host_is_loopback(const char *host)
{
    return strncmp(host, "127.", 4) == 0 || strcmp(host, "::1") == 0 ||
           strcasecmp(host, "localhost") == 0;
}

/* What the worker confinement can use on this kernel. */
static void probe_confinement(struct config *c)
{
    long abi = syscall(SYS_landlock_create_ruleset, NULL, 0, LANDLOCK_CREATE_RULESET_VERSION);
    c->landlock_abi = abi > 0 ? (int)abi : 0;
    uint32_t action = SECCOMP_RET_ERRNO;
    c->seccomp_filter = syscall(SYS_seccomp, SECCOMP_GET_ACTION_AVAIL, 0, &action) == 0;
}

/* The config file's values: owned here for the life of the process, since
 * struct config points into them; freed by the next config_parse(). */
static char *file_vals[OPTIONS_MAX];

static void free_file_vals(void)
{
    for (size_t i = 0; i < OPTIONS_MAX; i++) {
        free(file_vals[i]);
        file_vals[i] = NULL;
    }
}

/* One occurrence of a flag on the command line, in argv order. */
struct cli_val {
    size_t opt;
    char *value; /* optarg: argv's own string, NULL for a boolean flag */
};

/* getopt_long's table, from options[]: val is 256 + the option's index. */
static void build_longopts(struct option *lo)
{
    for (size_t i = 0; i < options_count; i++) {
        int takes = options[i].kind != OPT_BOOL && options[i].kind != OPT_ACTION;
        lo[i] = (struct option){options[i].name, takes ? required_argument : no_argument, NULL,
                                256 + (int)i};
    }
    lo[options_count] = (struct option){0, 0, 0, 0};
}

/* Which source gives option i: the highest one giving any option of its
 * group (a group is one setting written two ways). */
static enum opt_source winner(size_t i, const bool *on_cli, const char *const *env)
{
    enum opt_source w = SRC_NONE;
    for (size_t j = 0; j < options_count; j++) {
        if (j != i && (!options[i].group || options[j].group != options[i].group))
            continue;
        enum opt_source s = on_cli[j]      ? SRC_CLI
                            : env[j]       ? SRC_ENV
                            : file_vals[j] ? SRC_FILE
                                           : SRC_NONE;
        if (s > w)
            w = s;
    }
    return w;
}

static int apply(struct config *c, size_t i, const char *value, enum opt_source kind,
                 const char *file)
{
    struct opt_src src = {.kind = kind, .file = file};
    opt_src_name(&src, &options[i]);
    return options[i].set(c, &options[i], value, &src);
}

/* Checks that need every setting in place. 0, or -1 with a message. */
static int check_whole(struct config *c)
{
    probe_confinement(c);
    if (strcmp(c->worker_confine, "require") == 0 && (!c->landlock_abi || !c->seccomp_filter)) {
        fprintf(stderr,
                "tabvisor: --worker-confine require: this kernel has no %s; run with "
                "--worker-confine auto to run workers without it\n",
                !c->landlock_abi ? "Landlock (CONFIG_SECURITY_LANDLOCK, lsm=landlock)"
                                 : "seccomp filter");
        return -1;
    }
    if (c->http && !config_host_is_loopback(c->http_host) && !c->auth_token) {
        fprintf(stderr,
                "tabvisor: refusing to serve HTTP on non-loopback address %s without a token: "
                "anyone who can reach it could drive the browser. Pass --auth-token TOKEN (or set "
                "TABVISOR_AUTH_TOKEN), or bind 127.0.0.1.\n",
                c->http_host);
        return -1;
    }
    if (c->cdp && !c->cdp_endpoint) {
        fprintf(stderr, "tabvisor: --browser-mode cdp needs --cdp-endpoint URL (ws://HOST:PORT/"
                        "devtools/browser/ID or http://HOST:PORT)\n");
        return -1;
    }
    if (c->cdp_endpoint && !c->cdp) {
        fprintf(stderr,
                "tabvisor: --cdp-endpoint is only for --browser-mode cdp (the mode is %s)\n",
                c->browser_mode);
        return -1;
    }
    if (c->user_data_dir[0]) {
        if (c->cdp || c->extension) {
            fprintf(stderr,
                    "tabvisor: --user-data-dir is for the browser tabvisor launches "
                    "(shared or dedicated mode), not --browser-mode %s\n",
                    c->browser_mode);
            return -1;
        }
        if (c->max_sessions != 1) {
            fprintf(stderr, "tabvisor: --user-data-dir needs --max-sessions 1: a profile is one "
                            "user's, and its one session uses its cookies and storage\n");
            return -1;
        }
    }
    if (c->firefox && (c->cdp || c->extension || c->dedicated)) {
        fprintf(stderr,
                "tabvisor: --browser firefox runs in shared mode only (one Firefox, a user "
                "context per session), not --browser-mode %s\n",
                c->browser_mode);
        return -1;
    }
    if (c->firefox && c->user_data_dir[0]) {
        fprintf(stderr, "tabvisor: --user-data-dir is not supported with --browser firefox yet\n");
        return -1;
    }
    if (c->firefox && !c->firefox_bin[0]) {
        fprintf(stderr, "tabvisor: --browser firefox: no firefox-esr found on PATH; install it "
                        "(deploy/install-deps.sh does) or pass --firefox\n");
        return -1;
    }
    if (c->firefox && access(c->firefox_bin, X_OK) != 0) {
        fprintf(stderr, "tabvisor: --firefox: %s: %s\n", c->firefox_bin, strerror(errno));
        return -1;
    }
    if (!c->chromium[0] && !c->cdp && !c->firefox) {
        fprintf(stderr, "tabvisor: no chromium found on PATH; install it or pass --chromium\n");
        return -1;
    }
    if (c->headed && !c->extension && !c->cdp) {
        const char *x = getenv("DISPLAY"), *w = getenv("WAYLAND_DISPLAY");
        if (!(x && *x) && !(w && *w)) {
            fprintf(stderr, "tabvisor: --headed needs a display, but neither DISPLAY nor "
                            "WAYLAND_DISPLAY is set; run headless (the default) or under a "
                            "display server such as xvfb-run\n");
            return -1;
        }
    }
    /* The headless shell has no windows: a visible browser is the full one. */
    if (c->headed && !c->extension && !c->cdp && !c->firefox &&
        strstr(c->chromium, "headless-shell")) {
        if (access("/usr/lib/chromium/chromium", X_OK) != 0) {
            fprintf(stderr,
                    "tabvisor: --headed needs a browser with windows, and %s is the "
                    "headless shell; install chromium or pass --chromium\n",
                    c->chromium);
            return -1;
        }
        snprintf(c->chromium, sizeof c->chromium, "/usr/lib/chromium/chromium");
    }
    if (c->headed && (c->extension || c->cdp))
        log_warn("--headed does nothing in %s mode: that browser is not ours to launch",
                 c->browser_mode);
    return 0;
}

int config_parse(struct config *c, int argc, char **argv)
{
    *c = (struct config){.max_sessions = 16,
                         .pool_size = 1,
                         .idle_ms = 1800 * 1000LL,
                         .browser_mode = "shared",
                         .log_level = LOG_INFO,
                         .viewport_width = 1280,
                         .viewport_height = 720,
                         .grace_ms = 5000,
                         .max_output_chars = 40000,
                         .snapshot_mode = "diff",
                         .http_max_conns = 512,
                         .http_max_body = 4 * 1024 * 1024,
                         .http_max_mcp_sessions = 4096,
                         .http_unused_ms = 60 * 1000LL,
                         .worker_confine = "auto",
                         .caps = 1u << CAP_CORE,
                         .cdp_allow = CDP_ALLOW_DEFAULT,
                         .relay_port = 47653};
    default_paths(c, argv[0]);
    token_reset();
    free_file_vals();

    int rc = -1;
    struct option longopts[OPTIONS_MAX + 1];
    build_longopts(longopts);
    struct cli_val *cli = calloc((size_t)argc + 1, sizeof *cli);
    bool on_cli[OPTIONS_MAX] = {0};
    const char *env[OPTIONS_MAX] = {0};
    size_t ncli = 0;
    if (!cli)
        goto out;

    /* 1. The command line, collected but not yet applied: a flag must
     * override the environment and file whatever the order we read them. */
    int o;
    optind = 0; /* glibc: start afresh, also when called again */
    while ((o = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
        if (o < 256 || o >= 256 + (int)options_count) {
            options_usage(stderr);
            goto out;
        }
        size_t i = (size_t)(o - 256);
        if (strcmp(options[i].name, "help") == 0) {
            options_usage(stdout);
            rc = 1;
            goto out;
        }
        if (strcmp(options[i].name, "version") == 0) {
            printf("tabvisor 0.1.0\n");
            rc = 1;
            goto out;
        }
        cli[ncli++] = (struct cli_val){i, optarg};
        on_cli[i] = true;
    }
    if (optind < argc) {
        fprintf(stderr, "tabvisor: unexpected argument '%s'\n", argv[optind]);
        options_usage(stderr);
        goto out;
    }

    /* 2. The environment, and 3. the file it or a flag names. */
    config_env_collect(env);
    config_env_warn_unknown();
    size_t cfg = (size_t)(opt_by_name("config") - options);
    const char *cfg_path = env[cfg];
    struct opt_src cfg_src = {.kind = cfg_path ? SRC_ENV : SRC_NONE};
    for (size_t k = 0; k < ncli; k++) {
        if (cli[k].opt == cfg) {
            cfg_path = cli[k].value;
            cfg_src.kind = SRC_CLI;
        }
    }
    if (cfg_path) {
        opt_src_name(&cfg_src, &options[cfg]);
        if (config_file_load(cfg_path, cfg_src.name, file_vals) < 0)
            goto out;
    }

    /* Each setting from its winning source only, so a list flag such as
     * --caps replaces the file's list instead of adding to it. */
    for (size_t i = 0; i < options_count; i++)
        if (file_vals[i] && winner(i, on_cli, env) == SRC_FILE &&
            apply(c, i, file_vals[i], SRC_FILE, cfg_path) < 0)
            goto out;
    for (size_t i = 0; i < options_count; i++)
        if (env[i] && winner(i, on_cli, env) == SRC_ENV && apply(c, i, env[i], SRC_ENV, NULL) < 0)
            goto out;
    for (size_t k = 0; k < ncli; k++)
        if (winner(cli[k].opt, on_cli, env) == SRC_CLI &&
            apply(c, cli[k].opt, cli[k].value, SRC_CLI, NULL) < 0)
            goto out;
    rc = check_whole(c);
out:
    token_wipe_env(); /* used or not, it leaves our environment */
    free(cli);
    return rc;
}
