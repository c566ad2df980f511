/*
 * firefox.h - one headless Firefox (ESR) in a network namespace of its own,
 * spoken to over WebDriver BiDi (issue 23's groundwork; docs/firefox.md).
 *
 * BiDi listens on a TCP port (--remote-debugging-port) with no
 * authentication: any local user could drive the browser. So Firefox runs
 * in its own unprivileged user and network namespace, where 127.0.0.1 is
 * its alone, and a small holder process in that namespace makes the one
 * TCP connection to it and hands the connected socket back over a Unix
 * socketpair (SCM_RIGHTS). The caller then speaks BiDi on that socket from
 * outside the namespace; nothing in the host's namespace listens.
 *
 * Firefox's only way out is a SOCKS5 proxy on a Unix socket in its profile
 * dir (socks_proxy.h), in the host's namespace, started by the holder
 * before it leaves that namespace; policy (may be NULL) is the proxy's.
 *
 * Processes: the caller's child, the holder (in the namespaces, reads
 * Firefox's stderr and waits for it), the proxy and Firefox's own group
 * under the holder. The holder ends Firefox when this process exits (a
 * pipe only it holds closes), the proxy and Firefox die with the holder
 * (PR_SET_PDEATHSIG).
 */
#ifndef TABVISOR_FIREFOX_H
#define TABVISOR_FIREFOX_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "socks_proxy.h"

struct firefox {
    pid_t holder;       /* our child, in the namespaces; 0 when none */
    pid_t browser;      /* Firefox (its process group), as the holder sees it */
    int bidi_fd;        /* TCP connection to Firefox's BiDi endpoint; -1 when none */
    int alive_fd;       /* the holder's tie to this process (closing it ends Firefox); -1 */
    char ws_url[96];    /* ws://HOST:PORT/session (127.0.0.1 or localhost), in its namespace */
    char dir[PATH_MAX]; /* profile and home, removed by firefox_stop */
    /* The proxy's session shares (policy->shares of them): TCP ports on
     * Firefox's own 127.0.0.1, each a user context's proxy (bidi_bridge.h). */
    int share_ports[SOCKS_MAX_SHARES];
    int nshares;
    char log[PATH_MAX]; /* Firefox's stderr, in dir */
};

/* Start binary (NULL: firefox-esr on PATH) headless (or headed) in a fresh
 * profile under tmpdir (NULL: $TMPDIR or /tmp), wait until deadline_ms
 * (CLOCK_MONOTONIC ms) for its BiDi endpoint and connect to it. On success
 * ff->bidi_fd is a connected, blocking socket the caller owns; the
 * WebSocket upgrade is the caller's (ws_transport_adopt with ff->ws_url).
 * -1 with the reason in err (nothing left running or on disk). */
int firefox_launch(const char *binary, const char *tmpdir, bool headed,
                   const struct socks_policy *policy, long long deadline_ms, struct firefox *ff,
                   char *err, size_t errlen);
/* SIGTERM to Firefox's group, up to grace_ms for it to go, then SIGKILL;
 * reaps the holder, removes the profile. ff->bidi_fd is left to the caller
 * (closed or not). Safe on a failed or stopped ff. */
void firefox_stop(struct firefox *ff, int grace_ms);

#endif
