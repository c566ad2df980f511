/*
 * socks_proxy.h - Firefox's only way out of its network namespace: a SOCKS5
 * proxy (CONNECT, no authentication) on a Unix socket, run as a process of
 * its own in the host's namespace (firefox.c starts it).
 *
 * Firefox takes a SOCKS proxy on a Unix socket (network.proxy.socks set to
 * a file:// path, with network.proxy.allow_hijacking_localhost so that
 * 127.0.0.1 goes through it too), so no TCP port is opened for it on either
 * side. Every connection Firefox makes comes here named by host and port,
 * which is where a policy on them belongs (blocked_ports: tabvisor's own;
 * link-local addresses).
 *
 * One poll loop, non-blocking sockets. A name is looked up with
 * getaddrinfo on a thread of its own (at most 16 at once), so a slow DNS
 * server holds only the connections to the names it is slow on; addresses
 * (127.0.0.1, literals) are not looked up.
 */
#ifndef TABVISOR_SOCKS_PROXY_H
#define TABVISOR_SOCKS_PROXY_H

#include <netdb.h>
#include <stdbool.h>
#include <sys/socket.h>

#include "origins.h"

/* Connections of the whole proxy (fewer when the fd limit is lower). */
#define SOCKS_MAX_CONNS 2048
/* Shares: the Unix socket (share 0, Firefox's own traffic) and one per
 * session slot, a TCP listener in Firefox's namespace that the session's
 * user context names as its proxy (firefox.c, bidi_bridge.c). */
#define SOCKS_MAX_SHARES 65
/* Connections one share may hold; more are answered "general failure". */
#define SOCKS_SHARE_MAX_CONNS 128
#define SOCKS_MAX_BLOCKED_PORTS 16

struct socks_policy {
    int blocked_ports[SOCKS_MAX_BLOCKED_PORTS]; /* refused on any host; 0 ends the list */
    /* Link-local addresses and the clouds' other metadata addresses
     * (origin_host_is_metadata, proto/origins.h), where credentials are
     * handed out, are refused unless this is set, judged on the address a
     * name resolves to (stricter than Chromium's path, worker/netpolicy.h,
     * which sees literals only). */
    bool allow_link_local;
    /* --blocked-origins / --allowed-origins (proto/origins.h), judged by host
     * and port: a SOCKS proxy never sees the scheme, so a rule with one
     * matches its host and port ("https://example.com": example.com:443).
     * The blocklist wins; with an allowlist, a host it does not name is
     * refused. A blocked rule naming an address also holds on the address
     * connected to, whatever name led there. Borrowed; NULL with a count of
     * 0 for none. */
    const struct origin_rule *blocked;
    int nblocked;
    const struct origin_rule *allowed;
    int nallowed;
    /* Session shares to open (firefox.c; at most SOCKS_MAX_SHARES - 1). */
    int shares;
};

/* The name lookup the proxy's threads call: getaddrinfo's signature and
 * contract. getaddrinfo unless set; for tests, before socks_proxy_run. */
typedef int (*socks_resolver)(const char *host, const char *service, const struct addrinfo *hints,
                              struct addrinfo **res);
void socks_proxy_set_resolver(socks_resolver r);

/* How long a connection may stay in each phase before it is answered or
 * closed; defaults 10 s (greeting and request), 10 s (waiting for a lookup
 * thread), 15 s (the lookup), 15 s (the connect), 30 s (the server's end
 * after Firefox closed its own). For tests, before socks_proxy_run. */
struct socks_timeouts {
    int handshake_ms, lookup_wait_ms, lookup_ms, connect_ms, half_close_ms;
};
void socks_proxy_set_timeouts(const struct socks_timeouts *t);

/* Serve listen_fd (a listening Unix stream socket, taken: share 0) and the
 * share listeners that come over ctl (a Unix socket, one listening fd per
 * message by SCM_RIGHTS, in order: share 1, 2, ...; -1 for none) until
 * listen_fd fails or the process is killed; never returns. Each share is
 * held to SOCKS_SHARE_MAX_CONNS connections and 4 running lookups; a
 * lookup waiting for a thread, a lookup and a connect each time out. */
void socks_proxy_run(int listen_fd, int ctl, const struct socks_policy *policy)
    __attribute__((noreturn));

/* Pure: why policy refuses a connection to host (as the CONNECT named it:
 * a name, or an address as text) on port, or NULL. */
const char *socks_policy_refuses_host(const struct socks_policy *policy, const char *host,
                                      int port);
/* Pure: why policy refuses a connection to sa (an address a name resolved
 * to) on port, or NULL. */
const char *socks_policy_refuses(const struct socks_policy *policy, const struct sockaddr *sa,
                                 int port);

/* Pure, for tests and the fuzzer: parse a SOCKS5 request head in buf (len
 * bytes). Returns the bytes it takes when whole, 0 when more are needed, -1
 * when malformed or not CONNECT (*reply_code then says which SOCKS reply:
 * 7 command not supported, 8 address type not supported, 1 otherwise).
 * host gets the name or the address as text, *port the port. */
int socks_parse_request(const unsigned char *buf, int len, char *host, int hostlen, int *port,
                        int *reply_code);

#endif
