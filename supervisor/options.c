/* options.c - the settings table (options.h) and the setters that check
 * each value. A setter names the value's source in its errors exactly as
 * the user wrote it (--flag, TABVISOR_FLAG or FILE: key). */
#include "options.h"
#include "cdp_url.h"
#include "config_token.h"
#include "origins.h"
#include "sessions.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

/* --- generic setters: the field is found by o->off --- */

static int parse_num(const char *name, const char *s, long long lo, long long hi, long long *out)
{
    char *end;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    if (errno || *end || end == s || v < lo || v > hi) {
        fprintf(stderr, "tabvisor: %s wants a whole number from %lld to %lld, not '%s'\n", name, lo,
                hi, s);
        return -1;
    }
    *out = v;
    return 0;
}

/* A long long field, value * scale. */
static int set_ll(struct config *c, const struct opt_def *o, const char *v, const struct opt_src *s)
{
    long long n;
    if (parse_num(s->name, v, o->lo, o->hi, &n) < 0)
        return -1;
    *(long long *)((char *)c + o->off) = n * (o->scale ? o->scale : 1);
    return 0;
}

/* A char[o->size] field: a path. */
static int set_path(struct config *c, const struct opt_def *o, const char *v,
                    const struct opt_src *s)
{
    if (strlen(v) >= o->size) {
        fprintf(stderr, "tabvisor: %s is longer than %zu bytes\n", s->name, o->size - 1);
        return -1;
    }
    snprintf((char *)c + o->off, o->size, "%s", v);
    return 0;
}

/* A const char * field that keeps v. */
static int set_text(struct config *c, const struct opt_def *o, const char *v,
                    const struct opt_src *s)
{
    (void)s;
    *(const char **)((char *)c + o->off) = v;
    return 0;
}

/* --help, --version and --config are handled by config_parse(). */
static int set_nothing(struct config *c, const struct opt_def *o, const char *v,
                       const struct opt_src *s)
{
    (void)c, (void)o, (void)v, (void)s;
    return 0;
}

int opt_parse_bool(const char *s)
{
    if (!strcasecmp(s, "true") || !strcmp(s, "1"))
        return 1;
    if (!strcasecmp(s, "false") || !strcmp(s, "0"))
        return 0;
    return -1;
}

/* An OPT_BOOL value: NULL (the flag itself) is true. */
static int bool_value(const char *v, const struct opt_src *s)
{
    int b = v ? opt_parse_bool(v) : 1;
    if (b < 0)
        fprintf(stderr, "tabvisor: %s wants true, false, 1 or 0, not '%s'\n", s->name, v);
    return b;
}

/* --- one setter per setting with its own rules --- */

static int set_max_sessions(struct config *c, const struct opt_def *o, const char *v,
                            const struct opt_src *s)
{
    long long n;
    if (parse_num(s->name, v, o->lo, o->hi, &n) < 0)
        return -1;
    c->max_sessions = (size_t)n;
    return 0;
}

static int set_relay_port(struct config *c, const struct opt_def *o, const char *v,
                          const struct opt_src *s)
{
    long long n;
    if (parse_num(s->name, v, o->lo, o->hi, &n) < 0)
        return -1;
    c->relay_port = (int)n;
    return 0;
}

static int set_browser_mode(struct config *c, const struct opt_def *o, const char *v,
                            const struct opt_src *s)
{
    (void)o;
    static const char *const modes[] = {"shared", "dedicated", "cdp", "extension"};
    for (size_t k = 0; k < sizeof modes / sizeof *modes; k++) {
        if (strcmp(v, modes[k]) == 0) {
            c->browser_mode = modes[k];
            c->extension = k == 3;
            c->dedicated = k == 1;
            c->cdp = k == 2;
            return 0;
        }
    }
    fprintf(stderr, "tabvisor: %s: unknown mode '%s' (shared, dedicated, cdp or extension)\n",
            s->name, v);
    return -1;
}

/* --cdp-endpoint: checked here for form only (ws:// or http://, a host);
 * config.c checks it goes with --browser-mode cdp. */
static int set_browser(struct config *c, const struct opt_def *o, const char *v,
                       const struct opt_src *s)
{
    (void)o;
    if (strcmp(v, "chromium") != 0 && strcmp(v, "firefox") != 0) {
        fprintf(stderr, "tabvisor: %s: unknown browser '%s' (chromium or firefox)\n", s->name, v);
        return -1;
    }
    c->firefox = strcmp(v, "firefox") == 0;
    return 0;
}

static int set_cdp_endpoint(struct config *c, const struct opt_def *o, const char *v,
                            const struct opt_src *s)
{
    char why[200];
    struct cdp_url u;
    if (cdp_url_parse(v, &u, why, sizeof why) < 0) {
        fprintf(stderr, "tabvisor: %s: %s\n", s->name, why);
        return -1;
    }
    return set_text(c, o, v, s);
}

static int set_extension(struct config *c, const struct opt_def *o, const char *v,
                         const struct opt_src *s)
{
    (void)o;
    int b = bool_value(v, s);
    if (b < 0)
        return -1;
    c->extension = b;
    c->dedicated = c->cdp = false;
    c->browser_mode = b ? "extension" : "shared";
    return 0;
}

/* An OPT_BOOL kept in the bool at o->off. */
static int set_bool(struct config *c, const struct opt_def *o, const char *v,
                    const struct opt_src *s)
{
    int b = bool_value(v, s);
    if (b < 0)
        return -1;
    *(bool *)((char *)c + o->off) = b;
    return 0;
}

static int set_snapshot_mode(struct config *c, const struct opt_def *o, const char *v,
                             const struct opt_src *s)
{
    (void)o;
    if (strcmp(v, "full") && strcmp(v, "diff") && strcmp(v, "none")) {
        fprintf(stderr, "tabvisor: %s wants full, diff or none\n", s->name);
        return -1;
    }
    c->snapshot_mode = v;
    return 0;
}

static int set_viewport(struct config *c, const struct opt_def *o, const char *v,
                        const struct opt_src *s)
{
    (void)o;
    int w, h, end = 0;
    if (sscanf(v, "%dx%d%n", &w, &h, &end) != 2 || v[end] || w < 100 || w > 8192 || h < 100 ||
        h > 8192) {
        fprintf(stderr, "tabvisor: %s wants WxH between 100 and 8192\n", s->name);
        return -1;
    }
    c->viewport_width = w;
    c->viewport_height = h;
    return 0;
}

static int set_log_level(struct config *c, const struct opt_def *o, const char *v,
                         const struct opt_src *s)
{
    (void)o;
    static const char *const names[] = {"debug", "info", "notice", "warning", "error", "warn"};
    for (size_t k = 0; k < sizeof names / sizeof *names; k++) {
        if (strcasecmp(v, names[k]) == 0) {
            c->log_level = log_level_from_name(v);
            return 0;
        }
    }
    fprintf(stderr, "tabvisor: %s wants debug, info, notice, warning or error, not '%s'\n", s->name,
            v);
    return -1;
}

static int set_http(struct config *c, const struct opt_def *o, const char *v,
                    const struct opt_src *s)
{
    (void)o;
    if (config_parse_hostport(v, c->http_host, sizeof c->http_host, &c->http_port) < 0) {
        fprintf(stderr, "tabvisor: %s wants HOST:PORT (e.g. 127.0.0.1:8931), not '%s'\n", s->name,
                v);
        return -1;
    }
    c->http = v;
    return 0;
}

/* --instance-id: the characters of one DNS label, so a pod's name fits and
 * the '.' that ends the prefix cannot occur inside it. */
static int set_instance_id(struct config *c, const struct opt_def *o, const char *v,
                           const struct opt_src *s)
{
    if (!instance_id_valid(v)) {
        fprintf(stderr,
                "tabvisor: %s wants 1 to %d characters of a-z, 0-9 and '-' (e.g. r1 or "
                "tabvisor-0), not '%s'\n",
                s->name, INSTANCE_ID_MAX, v);
        return -1;
    }
    return set_text(c, o, v, s);
}

/* Both spellings of the token setting in one source: an error that names
 * them as written there, the token first (as it always read on the
 * command line). */
static int token_twice(const struct opt_src *s)
{
    struct opt_src tok = {.kind = s->kind, .file = s->file}, file = tok;
    opt_src_name(&tok, opt_by_name("auth-token"));
    opt_src_name(&file, opt_by_name("auth-token-file"));
    fprintf(stderr, "tabvisor: give one of %s and %s\n", tok.name, file.name);
    return -1;
}

static int set_auth_token(struct config *c, const struct opt_def *o, const char *v,
                          const struct opt_src *s)
{
    if (c->auth_token)
        return token_twice(s);
    if (token_set(c, v, strlen(v), s->name) < 0)
        return -1;
    if (s->kind == SRC_CLI) {
        /* Scrub it from /proc/PID/cmdline (our argv strings, writable);
         * it was readable there until now. */
        memset((char *)v, 0, strlen(v));
        log_warn("--auth-token shows the token to every local user (ps) until tabvisor "
                 "erases it; use --auth-token-file or $TABVISOR_AUTH_TOKEN");
    }
    return 0;
}

static int set_auth_token_file(struct config *c, const struct opt_def *o, const char *v,
                               const struct opt_src *s)
{
    if (c->auth_token)
        return token_twice(s);
    return token_read_file(c, v, s->name);
}

static int set_worker_confine(struct config *c, const struct opt_def *o, const char *v,
                              const struct opt_src *s)
{
    (void)o;
    if (strcmp(v, "auto") && strcmp(v, "require") && strcmp(v, "off")) {
        fprintf(stderr, "tabvisor: %s wants auto, require or off\n", s->name);
        return -1;
    }
    c->worker_confine = v;
    return 0;
}

static int check_origin_rule(const char *item, void *ud)
{
    (void)ud;
    struct origin_rule r;
    if (origin_rule_parse(item, &r) == 0)
        return 0;
    fprintf(stderr,
            "tabvisor: '%s' is not an origin ('https://example.com', 'http://host:8080') or a "
            "host ('example.com', '*.example.com')\n",
            item);
    return -1;
}

/* --allowed-origins, --blocked-origins: rules pages' requests are checked by. */
static int set_origin_rules(struct config *c, const struct opt_def *o, const char *v,
                            const struct opt_src *s)
{
    if (config_each_item(v, check_origin_rule, NULL) != 0)
        return -1;
    return set_text(c, o, v, s);
}

/* An --upload-dir entry: an absolute path to an existing directory. */
static int check_upload_dir(const char *item, void *ud)
{
    const struct opt_src *s = ud;
    struct stat st;
    if (item[0] != '/' || stat(item, &st) != 0 || !S_ISDIR(st.st_mode)) {
        fprintf(stderr, "tabvisor: %s %s: not an absolute path to a directory\n", s->name, item);
        return -1;
    }
    return 0;
}

/* --upload-dir, repeatable: each use adds to the list. */
static int set_upload_dirs(struct config *c, const struct opt_def *o, const char *v,
                           const struct opt_src *s)
{
    if (config_each_item(v, check_upload_dir, (void *)s) != 0)
        return -1;
    const char **field = (const char **)((char *)c + o->off);
    if (!*field) {
        *field = v;
        return 0;
    }
    size_t n = strlen(*field) + strlen(v) + 2;
    char *joined = malloc(n); /* lives as long as the configuration */
    if (!joined)
        return -1;
    snprintf(joined, n, "%s,%s", *field, v);
    *field = joined;
    return 0;
}

struct item_ctx {
    const struct opt_src *src;
    unsigned *caps;
};

/* --caps: one group name, or "all". */
static int add_cap(const char *item, void *ud)
{
    struct item_ctx *x = ud;
    if (strcmp(item, "all") == 0) {
        *x->caps = (1u << CAP_COUNT) - 1;
        return 0;
    }
    int cap = catalog_cap_parse(item, strlen(item));
    if (cap < 0) {
        fprintf(stderr,
                "tabvisor: %s: unknown group '%s' (storage, network, pdf, vision, "
                "testing, devtools, all)\n",
                x->src->name, item);
        return -1;
    }
    *x->caps |= 1u << cap;
    return 0;
}

static int set_caps(struct config *c, const struct opt_def *o, const char *v,
                    const struct opt_src *s)
{
    (void)o;
    struct item_ctx x = {s, &c->caps};
    return config_each_item(v, add_cap, &x) != 0 ? -1 : 0;
}

static int check_tool_name(const char *item, void *ud)
{
    const struct item_ctx *x = ud;
    if (catalog_find(item))
        return 0;
    fprintf(stderr, "tabvisor: %s: no tool named '%s' (see tools/list with --caps all)\n",
            x->src->name, item);
    return -1;
}

static int set_tools(struct config *c, const struct opt_def *o, const char *v,
                     const struct opt_src *s)
{
    struct item_ctx x = {s, NULL};
    if (config_each_item(v, check_tool_name, &x) != 0)
        return -1;
    return set_text(c, o, v, s);
}

static int set_schemas(struct config *c, const struct opt_def *o, const char *v,
                       const struct opt_src *s)
{
    (void)o;
    if (strcmp(v, "full") != 0 && strcmp(v, "compact") != 0) {
        fprintf(stderr, "tabvisor: %s: '%s' is not compact or full\n", s->name, v);
        return -1;
    }
    c->full_schemas = strcmp(v, "full") == 0;
    return 0;
}

/* One --cdp-allow item: "*", Domain.*, Domain.method or Domain.prefix*. */
static int check_cdp_pattern(const char *item, void *ud)
{
    const struct item_ctx *x = ud;
    const char *p = item;
    if (strcmp(item, "*") == 0)
        return 0;
    if (*p < 'A' || *p > 'Z')
        goto bad;
    while ((*p >= 'A' && *p <= 'Z') || (*p >= 'a' && *p <= 'z'))
        p++;
    if (*p++ != '.')
        goto bad;
    while ((*p >= 'A' && *p <= 'Z') || (*p >= 'a' && *p <= 'z'))
        p++;
    if (*p == '*')
        p++;
    if (*p == 0 && p[-1] != '.')
        return 0;
bad:
    fprintf(stderr,
            "tabvisor: %s: '%s' is not a CDP method pattern (Domain.method, "
            "Domain.prefix* or Domain.*)\n",
            x->src->name, item);
    return -1;
}

static int set_cdp_allow(struct config *c, const struct opt_def *o, const char *v,
                         const struct opt_src *s)
{
    struct item_ctx x = {s, NULL};
    if (config_each_item(v, check_cdp_pattern, &x) != 0)
        return -1;
    return set_text(c, o, v, s);
}

/* --- the table --- */

#define FIELD(f) .off = offsetof(struct config, f)
#define PATHF(f) FIELD(f), .size = sizeof((struct config *)0)->f
enum { G_NONE, G_AUTH, G_MODE };

const struct opt_def options[] = {
    {"config", "FILE", OPT_STR, SCOPE_NO_FILE, .set = set_nothing,
     .help = "read settings from a JSON file (keys: the flags in camelCase)"},
    {"max-sessions", "N", OPT_INT, .lo = 1, .hi = 1024, .set = set_max_sessions,
     .help = "concurrent browser sessions (default 16, 1..1024)"},
    {"pool", "N", OPT_INT, .lo = 0, .hi = 16, FIELD(pool_size), .set = set_ll,
     .help = "workers kept ready, each with its context and page, so a new session costs only "
             "the hand-over (default 1, 0..16; shared mode; within --max-sessions)"},
    {"session-idle-timeout", "SEC", OPT_INT, .lo = 1, .hi = 30LL * 24 * 3600, .scale = 1000,
     FIELD(idle_ms), .set = set_ll, .help = "idle seconds before a session expires (default 1800)"},
    {"browser-mode", "MODE", OPT_STR, .group = G_MODE, .set = set_browser_mode,
     .help = "shared (default): one Chromium for all sessions;\n"
             "dedicated: one Chromium per session; cdp: attach to\n"
             "--cdp-endpoint; extension: the user's own browser\n"
             "through the tabvisor extension and tabvisor-relay"},
    {"cdp-endpoint", "URL", OPT_STR, FIELD(cdp_endpoint), .set = set_cdp_endpoint,
     .help = "--browser-mode cdp: a running Chrome's DevTools, as\n"
             "ws://HOST:PORT/devtools/browser/ID or http://HOST:PORT"},
    {"user-data-dir", "DIR", OPT_STR, PATHF(user_data_dir), .set = set_path,
     .help = "a persistent browser profile for one user (needs\n"
             "--max-sessions 1; shared or dedicated mode): the session\n"
             "uses its default context, so cookies outlive restarts"},
    {"extension", NULL, OPT_BOOL, .group = G_MODE, .set = set_extension,
     .help = "same as --browser-mode extension"},
    {"headed", NULL, OPT_BOOL, FIELD(headed), .set = set_bool,
     .help = "show the browser's windows (needs $DISPLAY or\n"
             "$WAYLAND_DISPLAY); default headless"},
    {"relay-port", "N", OPT_INT, .lo = 0, .hi = 65535, .set = set_relay_port,
     .help = "the relay's WebSocket port for the extension (47653)"},
    {"relay-bin", "PATH", OPT_STR, PATHF(relay_bin), .set = set_path,
     .help = "tabvisor-relay (default: beside this binary)"},
    {"relay-runtime-dir", "DIR", OPT_STR, PATHF(relay_runtime_dir), .set = set_path,
     .help = "the relay's runtime dir (default: the relay's own)"},
    {"relay-secret-file", "F", OPT_STR, PATHF(relay_secret_file), .set = set_path,
     .help = "the relay's pairing secret (default: the relay's own)"},
    {"browser", "NAME", OPT_STR, .set = set_browser,
     .help = "chromium (default) or firefox: Firefox ESR over WebDriver\n"
             "BiDi, in its own network namespace (docs/firefox.md)"},
    {"firefox", "PATH", OPT_STR, PATHF(firefox_bin), .set = set_path,
     .help = "Firefox binary for --browser firefox (default: firefox-esr)"},
    {"chromium", "PATH", OPT_STR, PATHF(chromium), .set = set_path,
     .help = "browser binary (default: Debian's chromium-headless-shell if installed, else "
             "chromium; --headed uses the full chromium)"},
    {"worker", "PATH", OPT_STR, PATHF(worker_bin), .set = set_path,
     .help = "tabvisor-worker binary (default: beside tabvisor)"},
    {"runtime-dir", "DIR", OPT_STR, PATHF(runtime_base), .set = set_path,
     .help = "private runtime directory (default $XDG_RUNTIME_DIR/tabvisor\n"
             "or /tmp/tabvisor-UID)"},
    {"output-dir", "DIR", OPT_STR, PATHF(output_dir), .set = set_path,
     .help = "where files are written (default ./tabvisor-output)"},
    /* Below ~1000 even a truncation marker and page line would not fit. */
    {"max-output-chars", "N", OPT_INT, .lo = 1000, .hi = 100000000, FIELD(max_output_chars),
     .set = set_ll, .help = "bound on every tool result's text (default 40000)"},
    {"snapshot-mode", "MODE", OPT_STR, .set = set_snapshot_mode,
     .help = "snapshot in action results: diff (default: changes, or a lean whole view\n"
             "of a new document), full or none"},
    {"viewport", "WxH", OPT_STR, .set = set_viewport, .help = "page viewport (default 1280x720)"},
    {"allowed-origins", "LIST", OPT_LIST, FIELD(browser_allowed_origins), .set = set_origin_rules,
     .help = "origins pages may request, ';'-separated (default: all);\n"
             "'https://a.com:8443' one origin, 'a.com' or '*.a.com' a host"},
    {"blocked-origins", "LIST", OPT_LIST, FIELD(browser_blocked_origins), .set = set_origin_rules,
     .help = "origins pages may not request (checked first); every spelling\n"
             "of an address is that address, localhost is 127.0.0.1; another\n"
             "DNS name of the same server is not stopped on Chromium (use\n"
             "--allowed-origins)"},
    {"allow-link-local", NULL, OPT_BOOL, FIELD(allow_link_local), .set = set_bool,
     .help = "let pages request cloud metadata addresses (link-local\n"
             "169.254.0.0/16 and fe80::/10, fd00:ec2::254, 100.100.100.200,\n"
             "168.63.129.16); refused by default"},
    {"upload-dir", "DIR", OPT_LIST, FIELD(upload_dirs), .set = set_upload_dirs,
     .help = "a directory whose files browser_file_upload may send to pages\n"
             "(read-only, every session; repeatable or ','-separated)"},
    {"http-client-roots", NULL, OPT_BOOL, FIELD(http_client_roots), .set = set_bool,
     .help = "over --http, let a client's declared roots (roots/list) name\n"
             "files to upload; they are paths on this server (stdio: always)"},
    {"no-session-restore", NULL, OPT_BOOL, FIELD(no_session_restore), .set = set_bool,
     .help = "keep no copy of sessions' cookies, storage and tabs (in\n"
             "memory) to restore them after a crash; default: kept"},
    {"caps", "LIST", OPT_LIST, .set = set_caps,
     .help = "extra tool groups, comma-separated: storage, network,\n"
             "pdf, vision, testing, devtools, or all (core is always on)"},
    {"schemas", "MODE", OPT_STR, .set = set_schemas,
     .help = "tools/list schemas: compact (default) or full (every\n"
             "bound and shared description, for tools and tests)"},
    {"tools", "LIST", OPT_LIST, FIELD(tools), .set = set_tools,
     .help = "offer only these tools (comma-separated names; any group)"},
    {"cdp-allow", "LIST", OPT_LIST, FIELD(cdp_allow), .set = set_cdp_allow,
     .help = "CDP methods browser_cdp (--caps devtools) may send, comma-\n"
             "separated: Domain.method, Domain.prefix* or Domain.*\n"
             "(default: a read-mostly set, docs/devtools.md); browser-\n"
             "wide domains (Target, Browser, ...) are always refused"},
    {"log-level", "LEVEL", OPT_STR, .set = set_log_level,
     .help = "debug|info|notice|warning|error (default info)"},
    {"http", "HOST:PORT", OPT_STR, .set = set_http,
     .help = "serve MCP over Streamable HTTP at /mcp instead of stdio\n"
             "(host defaults to 127.0.0.1; port 0 picks a free one)"},
    {"instance-id", "NAME", OPT_STR, FIELD(instance_id), .set = set_instance_id,
     .help = "this replica's name behind a proxy (1-32 of a-z, 0-9, -):\n"
             "MCP and browser session ids start with NAME. so the\n"
             "proxy can route by them (docs/deploy.md)"},
    {"auth-token-file", "PATH", OPT_STR, .group = G_AUTH, .set = set_auth_token_file,
     .help = "require 'Authorization: Bearer TOKEN', TOKEN read from\n"
             "PATH; required for non-loopback hosts"},
    {"auth-token", "TOKEN", OPT_STR, .group = G_AUTH, .set = set_auth_token,
     .help = "the token itself: best as $TABVISOR_AUTH_TOKEN (as a flag\n"
             "it shows in ps until tabvisor erases it)"},
    {"allowed-origin", "LIST", OPT_LIST, FIELD(allowed_origins), .set = set_text,
     .help = "extra Origin values allowed, comma-separated"},
    {"allowed-host", "LIST", OPT_LIST, FIELD(allowed_hosts), .set = set_text,
     .help = "extra Host header values allowed, comma-separated"},
    {"http-max-connections", "N", OPT_INT, .lo = 1, .hi = 100000, FIELD(http_max_conns),
     .set = set_ll, .help = "open HTTP connections (default 512)"},
    {"http-max-body", "BYTES", OPT_INT, .lo = 1024, .hi = 1LL << 30, FIELD(http_max_body),
     .set = set_ll, .help = "largest request body (default 4194304)"},
    {"http-max-mcp-sessions", "N", OPT_INT, .lo = 1, .hi = 100000, FIELD(http_max_mcp_sessions),
     .set = set_ll, .help = "MCP sessions at once (default 4096)"},
    {"http-unused-session-timeout", "S", OPT_INT, .lo = 1, .hi = 30LL * 24 * 3600, .scale = 1000,
     FIELD(http_unused_ms), .set = set_ll,
     .help = "end an MCP session that made no request\n"
             "this long after initialize (default 60)"},
    {"worker-confine", "MODE", OPT_STR, .set = set_worker_confine,
     .help = "auto (default): Landlock and seccomp where the kernel\n"
             "has them; require: refuse to run without; off"},
    /* Below ~16 MB a worker cannot hold one snapshot of a big page. */
    {"worker-max-memory", "MB", OPT_INT, .lo = 16, .hi = 1 << 20, FIELD(worker_max_memory_mb),
     .set = set_ll, .help = "memory a worker may map beyond its start-up (RLIMIT_DATA)"},
    /* A worker holds about 10 descriptors; below 32 it could not work. */
    {"worker-max-fds", "N", OPT_INT, .lo = 32, .hi = 1 << 20, FIELD(worker_max_fds), .set = set_ll,
     .help = "open files per worker (RLIMIT_NOFILE)"},
    {"worker-cpu-seconds", "S", OPT_INT, .lo = 1, .hi = 1LL << 31, FIELD(worker_cpu_seconds),
     .set = set_ll, .help = "CPU seconds per worker over its life (RLIMIT_CPU)"},
    {"version", NULL, OPT_ACTION, SCOPE_CLI_ONLY, .set = set_nothing,
     .help = "print the version and exit"},
    {"help", NULL, OPT_ACTION, SCOPE_CLI_ONLY, .set = set_nothing,
     .help = "print this help and exit"},
};
const size_t options_count = sizeof options / sizeof *options;
_Static_assert(sizeof options / sizeof *options <= OPTIONS_MAX, "raise OPTIONS_MAX");

/* --- names --- */

void opt_env_name(const struct opt_def *o, char *out, size_t len)
{
    if (o->scope == SCOPE_CLI_ONLY) {
        snprintf(out, len, "%s", "");
        return;
    }
    size_t n = snprintf(out, len, "TABVISOR_");
    for (const char *p = o->name; *p && n + 1 < len; p++)
        out[n++] = *p == '-' ? '_' : (char)toupper((unsigned char)*p);
    out[n < len ? n : len - 1] = 0;
}

void opt_key_name(const struct opt_def *o, char *out, size_t len)
{
    size_t n = 0;
    if (o->scope == SCOPE_ALL) {
        bool up = false;
        for (const char *p = o->name; *p && n + 1 < len; p++) {
            if (*p == '-') {
                up = true;
                continue;
            }
            out[n++] = up ? (char)toupper((unsigned char)*p) : *p;
            up = false;
        }
    }
    out[n] = 0;
}

void opt_src_name(struct opt_src *src, const struct opt_def *o)
{
    char k[64];
    switch (src->kind) {
    case SRC_ENV:
        opt_env_name(o, src->name, sizeof src->name);
        break;
    case SRC_FILE:
        opt_key_name(o, k, sizeof k);
        snprintf(src->name, sizeof src->name, "%s: %s", src->file, k);
        break;
    default:
        snprintf(src->name, sizeof src->name, "--%s", o->name);
    }
}

const struct opt_def *opt_by_name(const char *name)
{
    for (size_t i = 0; i < options_count; i++)
        if (strcmp(options[i].name, name) == 0)
            return &options[i];
    return NULL;
}

/* --- help --- */

static const char usage_head[] =
    "usage: tabvisor [options]\n"
    "       tabvisor pair [--new] [options]\n"
    "Browser-automation MCP server. Speaks MCP over stdio (one JSON message per line),\n"
    "or over Streamable HTTP with --http. `pair` prints the link that pairs the browser\n"
    "extension with the relay of --relay-port and --relay-secret-file (--new: a new secret).\n"
    "\n"
    "Every option can also be set by the environment variable and the --config file key\n"
    "shown under it. Precedence: flag, then environment, then file, then default.\n"
    "Booleans in the environment: true, false, 1 or 0; lists: comma-separated, or in the\n"
    "file a JSON array.\n"
    "\n";

void options_usage(FILE *f)
{
    enum { COL = 30 };
    fputs(usage_head, f);
    for (size_t i = 0; i < options_count; i++) {
        const struct opt_def *o = &options[i];
        char flag[64], env[64], key[64];
        int n = snprintf(flag, sizeof flag, "  --%s%s%s", o->name, o->arg ? " " : "",
                         o->arg ? o->arg : "");
        fprintf(f, "%s%*s", flag, n < COL ? COL - n : 2, "");
        for (const char *h = o->help; *h;) {
            size_t len = strcspn(h, "\n");
            fprintf(f, "%s%.*s\n", h == o->help ? "" : "                              ", (int)len,
                    h);
            h += len + (h[len] != 0);
        }
        opt_env_name(o, env, sizeof env);
        opt_key_name(o, key, sizeof key);
        if (*env)
            fprintf(f, "%*s%s%s%s\n", COL, "", env, *key ? ", key " : "", key);
    }
}
