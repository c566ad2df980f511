/* config.h - configuration of the supervisor: flags, TABVISOR_* environment
 * variables and a JSON file (--config), in that precedence (options.h). */
#ifndef TABVISOR_CONFIG_H
#define TABVISOR_CONFIG_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include "catalog.h"
#include "log.h"

struct config {
    size_t max_sessions;
    long long pool_size;          /* --pool: ready workers kept ahead of need (pool.h) */
    long long idle_ms;            /* --session-idle-timeout (seconds on the command line) */
    const char *browser_mode;     /* shared, dedicated, cdp or extension (also --extension) */
    bool dedicated;               /* --browser-mode dedicated: a Chromium per session */
    bool cdp;                     /* --browser-mode cdp: attach to cdp_endpoint */
    const char *cdp_endpoint;     /* --cdp-endpoint ws://... or http://HOST:PORT */
    char user_data_dir[PATH_MAX]; /* --user-data-dir: persistent profile ("": none) */
    char chromium[PATH_MAX];      /* browser binary */
    bool firefox; /* --browser firefox: Firefox over WebDriver BiDi (docs/firefox.md) */
    char firefox_bin[PATH_MAX]; /* --firefox: its binary */
    char worker_bin[PATH_MAX];
    char runtime_base[PATH_MAX];       /* private 0700 directory for sockets and profiles */
    char runtime_note[PATH_MAX + 200]; /* why the default runtime dir is not /tmp/tabvisor-UID */
    char output_dir[PATH_MAX];
    long long max_output_chars; /* bound on every tool result's text */
    const char *snapshot_mode;  /* action tools' default `snapshot`: none|full|diff */
    enum log_level log_level;
    int viewport_width, viewport_height;
    long long grace_ms;     /* how long past a deadline a worker may take before it is killed */
    const char *http;       /* --http HOST:PORT: serve MCP over HTTP instead of stdio */
    char http_host[256];    /* from --http; default 127.0.0.1 */
    int http_port;          /* from --http; 0 picks a free port */
    const char *auth_token; /* --auth-token(-file), $TABVISOR_AUTH_TOKEN(_FILE) or the
                               file's authToken(File): Bearer required. Never in our
                               environment or argv after config_parse(), and never
                               passed to a child (config_token.h). */
    const char *allowed_origins; /* --allowed-origin, comma-separated extra Origins */
    const char *allowed_hosts;   /* --allowed-host, comma-separated extra Host values */
    long long http_max_conns;    /* --http-max-connections */
    long long http_max_body;     /* --http-max-body (bytes) */
    /* What pages may request (origins.h), ';'- or ','-separated; NULL: no rule. */
    const char *browser_allowed_origins; /* --allowed-origins */
    const char *browser_blocked_origins; /* --blocked-origins */

    /* --http-max-mcp-sessions, and --http-unused-session-timeout (seconds on
     * the command line): an MCP session without a request after initialize. */
    long long http_max_mcp_sessions;
    long long http_unused_ms;
    /* --instance-id: this replica's name behind a proxy ([a-z0-9-], at most
     * INSTANCE_ID_MAX), the "NAME." prefix of every MCP and browser session
     * id it makes (docs/deploy.md); NULL: no prefix. */
    const char *instance_id;
    /* Worker confinement (worker/confine.h, docs/confinement.md). */
    const char *worker_confine;     /* --worker-confine auto|require|off */
    long long worker_max_memory_mb; /* --worker-max-memory MB; 0: no limit */
    long long worker_max_fds;       /* --worker-max-fds N; 0: inherited */
    long long worker_cpu_seconds;   /* --worker-cpu-seconds S; 0: no limit */
    int landlock_abi;               /* this kernel's Landlock ABI; 0: none */
    int seccomp_filter;             /* this kernel has seccomp filters */
    /* Tools offered: bit 1<<cap per enum tool_cap on (--caps; core always),
     * or only those named in --tools (comma-separated) when set. */
    unsigned caps;
    const char *tools;
    bool full_schemas; /* --schemas full: tools/list states every rule */
    /* --cdp-allow: CDP methods browser_cdp may send, comma-separated
     * (Domain.method, Domain.prefix*, Domain.*); CDP_ALLOW_DEFAULT when not
     * given. The worker refuses browser-wide commands whatever it says. */
    const char *cdp_allow;
    /* Extension mode (supervisor/relay_proc.h, docs/extension-mode.md). */
    bool extension;
    bool headed;              /* --headed: Chromium shows its windows (needs a display) */
    bool allow_link_local;    /* --allow-link-local: pages may reach 169.254/16 and fe80::/10 */
    bool no_session_restore;  /* --no-session-restore: keep no state for a restart */
    /* The user's own files for browser_file_upload (upload_roots.h): the
     * --upload-dir list (','-separated, read-only, every session), and
     * whether an HTTP client's roots count (--http-client-roots: the paths
     * are the server's; over stdio they always do). */
    const char *upload_dirs;
    bool http_client_roots;
    int relay_port;           /* --relay-port; the relay's default 47653, 0: any */
    char relay_bin[PATH_MAX]; /* --relay-bin; default tabvisor-relay beside us */
    char relay_runtime_dir[PATH_MAX]; /* --relay-runtime-dir; "": the relay's default */
    char relay_secret_file[PATH_MAX]; /* --relay-secret-file; "": the relay's default */
};

/* Read-mostly methods (docs/devtools.md says why each is safe). */
#define CDP_ALLOW_DEFAULT                                                                          \
    "DOM.enable,DOM.getDocument,DOM.querySelector,DOM.querySelectorAll,DOM.describeNode,"          \
    "DOM.getOuterHTML,DOM.getAttributes,DOM.getBoxModel,DOM.getNodeForLocation,DOM.resolveNode,"   \
    "CSS.enable,CSS.getComputedStyleForNode,Accessibility.getFullAXTree,"                          \
    "Accessibility.getPartialAXTree,Accessibility.queryAXTree,Page.getLayoutMetrics,"              \
    "Page.getFrameTree,Page.getNavigationHistory,Runtime.getHeapUsage,Memory.getDOMCounters,"      \
    "DOMSnapshot.captureSnapshot"

/* Fill c from argv, the TABVISOR_* environment and the --config file.
 * Returns 0 to run, 1 when --help/--version was printed (exit 0), -1 on a
 * bad setting from any source (message printed to stderr, exit 2).
 * Removes $TABVISOR_AUTH_TOKEN from the environment. c points into argv,
 * the environment and storage of config.c, which the next call frees. */
int config_parse(struct config *c, int argc, char **argv);

/* Split "HOST:PORT", "[V6]:PORT", ":PORT" or "PORT" (host 127.0.0.1).
 * Returns 0 or -1. */
int config_parse_hostport(const char *s, char *host, size_t hostlen, int *port);
/* Call fn for each non-empty item of a ';'- or ','-separated list (items
 * longer than 511 bytes are passed cut). Stops at and returns fn's first
 * nonzero return; else 0. */
int config_each_item(const char *list, int (*fn)(const char *item, void *ud), void *ud);
/* Whether tools/list offers t and tools/call runs it (--caps, --tools). */
bool config_tool_enabled(const struct config *c, const struct tool_def *t);
/* True for 127.0.0.0/8, ::1 and localhost. */
int config_host_is_loopback(const char *host);

#endif
