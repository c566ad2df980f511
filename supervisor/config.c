/* config.c - option parsing with getopt_long; every value is range-checked. */
#include "config.h"
#include "origins.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <linux/landlock.h>
#include <linux/seccomp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

static const char usage[] =
    "usage: tabvisor [options]\n"
    "Browser-automation MCP server. Speaks MCP over stdio (one JSON message per line),\n"
    "or over Streamable HTTP with --http.\n"
    "\n"
    "  --max-sessions N            concurrent browser sessions (default 16, 1..1024)\n"
    "  --session-idle-timeout SEC  idle seconds before a session expires (default 1800)\n"
    "  --browser-mode MODE         shared (default), or extension: the user's own browser\n"
    "                              through the tabvisor extension and tabvisor-relay\n"
    "  --extension                 same as --browser-mode extension\n"
    "  --relay-port N              the relay's WebSocket port for the extension (47653)\n"
    "  --relay-bin PATH            tabvisor-relay (default: beside this binary)\n"
    "  --relay-runtime-dir DIR     the relay's runtime dir (default: the relay's own)\n"
    "  --relay-secret-file F       the relay's pairing secret (default: the relay's own)\n"
    "  --chromium PATH             browser binary (default: chromium-headless-shell if\n"
    "                              installed, else chromium from PATH)\n"
    "  --worker PATH               tabvisor-worker binary (default: beside tabvisor)\n"
    "  --runtime-dir DIR           private runtime directory (default $XDG_RUNTIME_DIR/tabvisor\n"
    "                              or /tmp/tabvisor-UID)\n"
    "  --output-dir DIR            where files are written (default ./tabvisor-output)\n"
    "  --max-output-chars N        bound on every tool result's text (default 40000)\n"
    "  --snapshot-mode MODE        snapshot in action results: full (default), diff or none\n"
    "  --viewport WxH              page viewport (default 1280x720)\n"
    "  --allowed-origins LIST      origins pages may request, ';'-separated (default: all);\n"
    "                              'https://a.com:8443' one origin, 'a.com' or '*.a.com' a host\n"
    "  --blocked-origins LIST      origins pages may not request (checked first)\n"
    "  --caps LIST                 extra tool groups, comma-separated: storage, network,\n"
    "                              pdf, vision, testing, devtools, or all (core is always on)\n"
    "  --schemas MODE              tools/list schemas: compact (default) or full (every\n"
    "                              bound and shared description, for tools and tests)\n"
    "  --tools LIST                offer only these tools (comma-separated names; any group)\n"
    "  --cdp-allow LIST            CDP methods browser_cdp (--caps devtools) may send, comma-\n"
    "                              separated: Domain.method, Domain.prefix* or Domain.*\n"
    "                              (default: a read-mostly set, docs/devtools.md); browser-\n"
    "                              wide domains (Target, Browser, ...) are always refused\n"
    "  --log-level LEVEL           debug|info|notice|warning|error (default info)\n"
    "  --http HOST:PORT            serve MCP over Streamable HTTP at /mcp instead of stdio\n"
    "                              (host defaults to 127.0.0.1; port 0 picks a free one)\n"
    "  --auth-token-file PATH      require 'Authorization: Bearer TOKEN', TOKEN read from\n"
    "                              PATH (or $TABVISOR_AUTH_TOKEN; --auth-token TOKEN works\n"
    "                              but shows in ps); required for non-loopback hosts\n"
    "  --allowed-origin LIST       extra Origin values allowed, comma-separated\n"
    "  --allowed-host LIST         extra Host header values allowed, comma-separated\n"
    "  --http-max-connections N    open HTTP connections (default 512)\n"
    "  --http-max-body BYTES       largest request body (default 4194304)\n"
    "  --http-max-mcp-sessions N   MCP sessions at once (default 4096)\n"
    "  --http-unused-session-timeout S  end an MCP session that made no request\n"
    "                              this long after initialize (default 60)\n"
    "  --worker-confine MODE       auto (default): Landlock and seccomp where the kernel\n"
    "                              has them; require: refuse to run without; off\n"
    "  --worker-max-memory MB      memory a worker may map beyond its start-up (RLIMIT_DATA)\n"
    "  --worker-max-fds N          open files per worker (RLIMIT_NOFILE)\n"
    "  --worker-cpu-seconds S      CPU seconds per worker over its life (RLIMIT_CPU)\n"
    "  --version, --help\n";

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

/* --caps: one group name, or "all". */
static int add_cap(const char *item, void *ud)
{
    unsigned *caps = ud;
    if (strcmp(item, "all") == 0) {
        *caps = (1u << CAP_COUNT) - 1;
        return 0;
    }
    int cap = catalog_cap_parse(item, strlen(item));
    if (cap < 0) {
        fprintf(stderr,
                "tabvisor: --caps: unknown group '%s' (storage, network, pdf, vision, "
                "testing, devtools, all)\n",
                item);
        return -1;
    }
    *caps |= 1u << cap;
    return 0;
}

static int check_tool_name(const char *item, void *ud)
{
    (void)ud;
    if (catalog_find(item))
        return 0;
    fprintf(stderr, "tabvisor: --tools: no tool named '%s' (see tools/list with --caps all)\n",
            item);
    return -1;
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

static int check_origin_rule(const char *item, void *ud)
{
    struct origin_rule r;
    if (origin_rule_parse(item, &r) == 0)
        return 0;
    fprintf(stderr,
            "tabvisor: '%s' is not an origin ('https://example.com', 'http://host:8080') or a "
            "host ('example.com', '*.example.com')\n",
            item);
    return -1;
}

static int parse_num(const char *opt, const char *s, long long lo, long long hi, long long *out)
{
    char *end;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    if (errno || *end || end == s || v < lo || v > hi) {
        fprintf(stderr, "tabvisor: %s wants a whole number from %lld to %lld, not '%s'\n", opt, lo,
                hi, s);
        return -1;
    }
    *out = v;
    return 0;
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

static void default_paths(struct config *c, const char *argv0)
{
    char self[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    if (n > 0) {
        self[n] = 0;
        char *slash = strrchr(self, '/');
        if (slash)
            *slash = 0;
        snprintf(c->worker_bin, sizeof c->worker_bin, "%s/tabvisor-worker", self);
        snprintf(c->relay_bin, sizeof c->relay_bin, "%s/tabvisor-relay", self);
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
    const char *xdg = getenv("XDG_RUNTIME_DIR");
    if (xdg && *xdg)
        snprintf(c->runtime_base, sizeof c->runtime_base, "%s/tabvisor", xdg);
    else
        snprintf(c->runtime_base, sizeof c->runtime_base, "/tmp/tabvisor-%u", (unsigned)getuid());
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

/* The token lives here, not in argv or the environment, which other local
 * users (ps) and our children (the environment is inherited) can read. */
static char token_buf[4096];

/* Copy a token; 0, or -1 (message printed) when it is empty, too long or
 * has characters an Authorization header cannot carry. */
static int set_token(struct config *c, const char *t, size_t n, const char *from)
{
    if (n == 0 || n >= sizeof token_buf) {
        fprintf(stderr, "tabvisor: the token from %s must be 1 to %zu bytes\n", from,
                sizeof token_buf - 1);
        return -1;
    }
    for (size_t k = 0; k < n; k++) {
        if ((unsigned char)t[k] <= ' ' || t[k] == 0x7f) {
            fprintf(stderr, "tabvisor: the token from %s has a space or control character\n", from);
            return -1;
        }
    }
    memcpy(token_buf, t, n);
    token_buf[n] = 0;
    c->auth_token = token_buf;
    return 0;
}

/* --auth-token-file: the file's content without its trailing line break. */
static int read_token_file(struct config *c, const char *path)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) < 0) {
        fprintf(stderr, "tabvisor: --auth-token-file %s: %s\n", path, strerror(errno));
        if (fd >= 0)
            close(fd);
        return -1;
    }
    if (st.st_mode & 077)
        log_warn("--auth-token-file %s can be read by other users (mode %03o); chmod 600 it", path,
                 (unsigned)(st.st_mode & 0777));
    char buf[sizeof token_buf + 2];
    size_t n = 0;
    ssize_t r;
    while (n < sizeof buf && (r = read(fd, buf + n, sizeof buf - n)) != 0) {
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0) {
            fprintf(stderr, "tabvisor: --auth-token-file %s: %s\n", path, strerror(errno));
            close(fd);
            return -1;
        }
        n += (size_t)r;
    }
    close(fd);
    while (n && (buf[n - 1] == '\n' || buf[n - 1] == '\r'))
        n--;
    int rc = set_token(c, buf, n, "--auth-token-file");
    memset(buf, 0, sizeof buf);
    return rc;
}

/* Remove $TABVISOR_AUTH_TOKEN from our environment and overwrite its text
 * (/proc/PID/environ shows the original bytes, not environ[]); its value is
 * the token unless one came from the command line. */
static int take_env_token(struct config *c)
{
    static const char name[] = "TABVISOR_AUTH_TOKEN";
    char *value = getenv(name);
    if (!value)
        return 0;
    int rc = 0;
    if (!c->auth_token && *value)
        rc = set_token(c, value, strlen(value), "$TABVISOR_AUTH_TOKEN");
    char *entry = value - sizeof name; /* "NAME=value" */
    unsetenv(name);                    /* finds it by name: before the wipe */
    memset(entry, 0, strlen(entry));
    return rc;
}

/* What the worker confinement can use on this kernel. */
static void probe_confinement(struct config *c)
{
    long abi = syscall(SYS_landlock_create_ruleset, NULL, 0, LANDLOCK_CREATE_RULESET_VERSION);
    c->landlock_abi = abi > 0 ? (int)abi : 0;
    uint32_t action = SECCOMP_RET_ERRNO;
    c->seccomp_filter = syscall(SYS_seccomp, SECCOMP_GET_ACTION_AVAIL, 0, &action) == 0;
}

/* One --cdp-allow item: "*", Domain.*, Domain.method or Domain.prefix*. */
static int check_cdp_pattern(const char *item, void *ud)
{
    (void)ud;
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
            "tabvisor: --cdp-allow: '%s' is not a CDP method pattern (Domain.method, "
            "Domain.prefix* or Domain.*)\n",
            item);
    return -1;
}

int config_parse(struct config *c, int argc, char **argv)
{
    *c = (struct config){.max_sessions = 16,
                         .idle_ms = 1800 * 1000LL,
                         .browser_mode = "shared",
                         .log_level = LOG_INFO,
                         .viewport_width = 1280,
                         .viewport_height = 720,
                         .grace_ms = 5000,
                         .max_output_chars = 40000,
                         .snapshot_mode = "full",
                         .http_max_conns = 512,
                         .http_max_body = 4 * 1024 * 1024,
                         .http_max_mcp_sessions = 4096,
                         .http_unused_ms = 60 * 1000LL,
                         .worker_confine = "auto",
                         .caps = 1u << CAP_CORE,
                         .cdp_allow = CDP_ALLOW_DEFAULT,
                         .relay_port = 47653};
    default_paths(c, argv[0]);
    enum {
        O_MAX = 256,
        O_IDLE,
        O_MODE,
        O_CHROMIUM,
        O_WORKER,
        O_RUNTIME,
        O_OUTPUT,
        O_MAX_OUTPUT,
        O_SNAPSHOT_MODE,
        O_VIEWPORT,
        O_LOG,
        O_HTTP,
        O_AUTH_TOKEN,
        O_ALLOWED_ORIGIN,
        O_ALLOWED_HOST,
        O_HTTP_MAX_CONNS,
        O_HTTP_MAX_BODY,
        O_BROWSER_ALLOWED,
        O_BROWSER_BLOCKED,
        O_HTTP_MAX_MCP,
        O_HTTP_UNUSED,
        O_AUTH_TOKEN_FILE,
        O_WORKER_CONFINE,
        O_WORKER_MAX_MEMORY,
        O_WORKER_MAX_FDS,
        O_WORKER_CPU,
        O_CAPS,
        O_TOOLS,
        O_SCHEMAS,
        O_CDP_ALLOW,
        O_VERSION,
        O_HELP,
        O_EXTENSION,
        O_RELAY_PORT,
        O_RELAY_BIN,
        O_RELAY_RUNTIME,
        O_RELAY_SECRET
    };
    static const struct option opts[] = {
        {"max-sessions", required_argument, 0, O_MAX},
        {"session-idle-timeout", required_argument, 0, O_IDLE},
        {"browser-mode", required_argument, 0, O_MODE},
        {"chromium", required_argument, 0, O_CHROMIUM},
        {"worker", required_argument, 0, O_WORKER},
        {"runtime-dir", required_argument, 0, O_RUNTIME},
        {"output-dir", required_argument, 0, O_OUTPUT},
        {"max-output-chars", required_argument, 0, O_MAX_OUTPUT},
        {"snapshot-mode", required_argument, 0, O_SNAPSHOT_MODE},
        {"viewport", required_argument, 0, O_VIEWPORT},
        {"log-level", required_argument, 0, O_LOG},
        {"http", required_argument, 0, O_HTTP},
        {"auth-token", required_argument, 0, O_AUTH_TOKEN},
        {"allowed-origin", required_argument, 0, O_ALLOWED_ORIGIN},
        {"allowed-host", required_argument, 0, O_ALLOWED_HOST},
        {"http-max-connections", required_argument, 0, O_HTTP_MAX_CONNS},
        {"http-max-body", required_argument, 0, O_HTTP_MAX_BODY},
        {"allowed-origins", required_argument, 0, O_BROWSER_ALLOWED},
        {"blocked-origins", required_argument, 0, O_BROWSER_BLOCKED},
        {"http-max-mcp-sessions", required_argument, 0, O_HTTP_MAX_MCP},
        {"http-unused-session-timeout", required_argument, 0, O_HTTP_UNUSED},
        {"auth-token-file", required_argument, 0, O_AUTH_TOKEN_FILE},
        {"worker-confine", required_argument, 0, O_WORKER_CONFINE},
        {"worker-max-memory", required_argument, 0, O_WORKER_MAX_MEMORY},
        {"worker-max-fds", required_argument, 0, O_WORKER_MAX_FDS},
        {"worker-cpu-seconds", required_argument, 0, O_WORKER_CPU},
        {"caps", required_argument, 0, O_CAPS},
        {"tools", required_argument, 0, O_TOOLS},
        {"schemas", required_argument, 0, O_SCHEMAS},
        {"cdp-allow", required_argument, 0, O_CDP_ALLOW},
        {"version", no_argument, 0, O_VERSION},
        {"extension", no_argument, 0, O_EXTENSION},
        {"relay-port", required_argument, 0, O_RELAY_PORT},
        {"relay-bin", required_argument, 0, O_RELAY_BIN},
        {"relay-runtime-dir", required_argument, 0, O_RELAY_RUNTIME},
        {"relay-secret-file", required_argument, 0, O_RELAY_SECRET},
        {"help", no_argument, 0, O_HELP},
        {0, 0, 0, 0}};
    long long v;
    int o;
    optind = 1;
    while ((o = getopt_long(argc, argv, "", opts, NULL)) != -1) {
        switch (o) {
        case O_MAX:
            if (parse_num("--max-sessions", optarg, 1, 1024, &v) < 0)
                return -1;
            c->max_sessions = (size_t)v;
            break;
        case O_IDLE:
            if (parse_num("--session-idle-timeout", optarg, 1, 30LL * 24 * 3600, &v) < 0)
                return -1;
            c->idle_ms = v * 1000;
            break;
        case O_MODE:
            if (strcmp(optarg, "shared") != 0 && strcmp(optarg, "extension") != 0) {
                fprintf(stderr,
                        "tabvisor: --browser-mode %s is not supported (shared or extension)\n",
                        optarg);
                return -1;
            }
            c->extension = strcmp(optarg, "extension") == 0;
            c->browser_mode = c->extension ? "extension" : "shared";
            break;
        case O_EXTENSION:
            c->extension = true;
            c->browser_mode = "extension";
            break;
        case O_RELAY_PORT:
            if (parse_num("--relay-port", optarg, 0, 65535, &v) < 0)
                return -1;
            c->relay_port = (int)v;
            break;
        case O_RELAY_BIN:
            snprintf(c->relay_bin, sizeof c->relay_bin, "%s", optarg);
            break;
        case O_RELAY_RUNTIME:
            snprintf(c->relay_runtime_dir, sizeof c->relay_runtime_dir, "%s", optarg);
            break;
        case O_RELAY_SECRET:
            snprintf(c->relay_secret_file, sizeof c->relay_secret_file, "%s", optarg);
            break;
        case O_CHROMIUM:
            snprintf(c->chromium, sizeof c->chromium, "%s", optarg);
            break;
        case O_WORKER:
            snprintf(c->worker_bin, sizeof c->worker_bin, "%s", optarg);
            break;
        case O_RUNTIME:
            snprintf(c->runtime_base, sizeof c->runtime_base, "%s", optarg);
            break;
        case O_OUTPUT:
            snprintf(c->output_dir, sizeof c->output_dir, "%s", optarg);
            break;
        case O_MAX_OUTPUT:
            /* Below ~1000 even a truncation marker and page line would not fit. */
            if (parse_num("--max-output-chars", optarg, 1000, 100000000, &c->max_output_chars) < 0)
                return -1;
            break;
        case O_SNAPSHOT_MODE:
            if (strcmp(optarg, "full") && strcmp(optarg, "diff") && strcmp(optarg, "none")) {
                fprintf(stderr, "tabvisor: --snapshot-mode wants full, diff or none\n");
                return -1;
            }
            c->snapshot_mode = optarg;
            break;
        case O_VIEWPORT:
            if (sscanf(optarg, "%dx%d", &c->viewport_width, &c->viewport_height) != 2 ||
                c->viewport_width < 100 || c->viewport_width > 8192 || c->viewport_height < 100 ||
                c->viewport_height > 8192) {
                fprintf(stderr, "tabvisor: --viewport wants WxH between 100 and 8192\n");
                return -1;
            }
            break;
        case O_LOG:
            c->log_level = log_level_from_name(optarg);
            break;
        case O_HTTP:
            if (config_parse_hostport(optarg, c->http_host, sizeof c->http_host, &c->http_port) <
                0) {
                fprintf(stderr,
                        "tabvisor: --http wants HOST:PORT (e.g. 127.0.0.1:8931), not '%s'\n",
                        optarg);
                return -1;
            }
            c->http = optarg;
            break;
        case O_AUTH_TOKEN:
        case O_AUTH_TOKEN_FILE:
            if (c->auth_token) {
                fprintf(stderr, "tabvisor: give one of --auth-token and --auth-token-file\n");
                return -1;
            }
            if (o == O_AUTH_TOKEN_FILE) {
                if (read_token_file(c, optarg) < 0)
                    return -1;
                break;
            }
            if (set_token(c, optarg, strlen(optarg), "--auth-token") < 0)
                return -1;
            /* Scrub it from /proc/PID/cmdline (our argv strings); it was
             * readable there until now. */
            memset(optarg, 0, strlen(optarg));
            log_warn("--auth-token shows the token to every local user (ps) until tabvisor "
                     "erases it; use --auth-token-file or $TABVISOR_AUTH_TOKEN");
            break;
        case O_WORKER_CONFINE:
            if (strcmp(optarg, "auto") && strcmp(optarg, "require") && strcmp(optarg, "off")) {
                fprintf(stderr, "tabvisor: --worker-confine wants auto, require or off\n");
                return -1;
            }
            c->worker_confine = optarg;
            break;
        case O_WORKER_MAX_MEMORY:
            /* Below ~16 MB a worker cannot hold one snapshot of a big page. */
            if (parse_num("--worker-max-memory", optarg, 16, 1 << 20, &c->worker_max_memory_mb) < 0)
                return -1;
            break;
        case O_WORKER_MAX_FDS:
            /* A worker holds about 10 descriptors; below 32 it could not work. */
            if (parse_num("--worker-max-fds", optarg, 32, 1 << 20, &c->worker_max_fds) < 0)
                return -1;
            break;
        case O_WORKER_CPU:
            if (parse_num("--worker-cpu-seconds", optarg, 1, 1LL << 31, &c->worker_cpu_seconds) < 0)
                return -1;
            break;
        case O_ALLOWED_ORIGIN:
            c->allowed_origins = optarg;
            break;
        case O_ALLOWED_HOST:
            c->allowed_hosts = optarg;
            break;
        case O_BROWSER_ALLOWED:
        case O_BROWSER_BLOCKED:
            if (config_each_item(optarg, check_origin_rule, NULL) != 0)
                return -1;
            *(o == O_BROWSER_ALLOWED ? &c->browser_allowed_origins : &c->browser_blocked_origins) =
                optarg;
            break;
        case O_HTTP_MAX_CONNS:
            if (parse_num("--http-max-connections", optarg, 1, 100000, &c->http_max_conns) < 0)
                return -1;
            break;
        case O_HTTP_MAX_BODY:
            if (parse_num("--http-max-body", optarg, 1024, 1LL << 30, &c->http_max_body) < 0)
                return -1;
            break;
        case O_HTTP_MAX_MCP:
            if (parse_num("--http-max-mcp-sessions", optarg, 1, 100000, &c->http_max_mcp_sessions) <
                0)
                return -1;
            break;
        case O_HTTP_UNUSED:
            if (parse_num("--http-unused-session-timeout", optarg, 1, 30LL * 24 * 3600, &v) < 0)
                return -1;
            c->http_unused_ms = v * 1000;
            break;
        case O_CAPS:
            if (config_each_item(optarg, add_cap, &c->caps) != 0)
                return -1;
            break;
        case O_TOOLS:
            if (config_each_item(optarg, check_tool_name, NULL) != 0)
                return -1;
            c->tools = optarg;
            break;
        case O_SCHEMAS:
            if (strcmp(optarg, "full") != 0 && strcmp(optarg, "compact") != 0) {
                fprintf(stderr, "tabvisor: --schemas: '%s' is not compact or full\n", optarg);
                return -1;
            }
            c->full_schemas = strcmp(optarg, "full") == 0;
            break;
        case O_CDP_ALLOW:
            if (config_each_item(optarg, check_cdp_pattern, NULL) != 0)
                return -1;
            c->cdp_allow = optarg;
            break;
        case O_VERSION:
            printf("tabvisor 0.1.0\n");
            return 1;
        case O_HELP:
            fputs(usage, stdout);
            return 1;
        default:
            fputs(usage, stderr);
            return -1;
        }
    }
    if (optind < argc) {
        fprintf(stderr, "tabvisor: unexpected argument '%s'\n%s", argv[optind], usage);
        return -1;
    }
    if (take_env_token(c) < 0)
        return -1;
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
    if (!c->chromium[0]) {
        fprintf(stderr, "tabvisor: no chromium found on PATH; install it or pass --chromium\n");
        return -1;
    }
    return 0;
}
