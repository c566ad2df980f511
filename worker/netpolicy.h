/*
 * netpolicy.h - which requests a session's pages may make.
 *
 * Two rules, both enforced in the browser with the Fetch domain on every
 * CDP session of the page (the page itself, its out-of-process iframes, its
 * dedicated workers), so a request that breaks one fails with
 * net::ERR_BLOCKED_BY_CLIENT before it leaves the browser:
 *
 *   - tabvisor's own ports (the supervisor's HTTP port): no page, on any
 *     host name, may address them. Any host is blocked, not only loopback
 *     literals, because a name can resolve to 127.0.0.1.
 *   - --blocked-origins / --allowed-origins, as @playwright/mcp has them:
 *     a request whose origin matches the blocklist fails; with an allowlist,
 *     so does one that matches nothing in it. The blocklist wins.
 *     An entry with a scheme ("https://example.com", "http://a:8080") is one
 *     origin; an entry without ("example.com", "*.example.com") is a host on
 *     any scheme and port ("*." also takes its subdomains).
 *   - link-local addresses (169.254.0.0/16, fe80::/10, GCE's metadata
 *     name), where cloud metadata services hand out credentials: refused
 *     unless --allow-link-local. Literal addresses and that name only: a
 *     DNS name that resolves there is for the network to stop (the systemd
 *     unit's IPAddressDeny=, the Kubernetes NetworkPolicy; docs/deploy.md).
 *
 * Only the requests the rules can touch are paused: with no origin lists,
 * only URLs on tabvisor's own ports, so ordinary requests cost nothing.
 * While the session has routes or extra headers (tools/routes.c) every
 * request pauses; the policy still decides first.
 * WebSocket and WebTransport connections are not seen by Fetch (our HTTP
 * server refuses upgrades and foreign Origins anyway).
 */
#ifndef TABVISOR_NETPOLICY_H
#define TABVISOR_NETPOLICY_H

#include <stdbool.h>
#include <jansson.h>

#include "hooks.h"

struct session;

/* From CONFIG: blockedPorts (array of ints), allowedOrigins and
 * blockedOrigins (arrays of strings). Borrowed; copied. 0, or -1 with why. */
int netpolicy_configure(const json_t *config, char *err, size_t errlen);
/* Whether any rule is set (else nothing needs pausing). */
bool netpolicy_active(void);
/* Turn interception on for one CDP session (NULL: the page's). No wait. */
void netpolicy_attach(struct session *w, const char *session);
/* Fetch.requestPaused: continue or fail the request. No wait. */
void netpolicy_on_event(struct session *w, const char *session, const char *method, json_t *params);
/* The verdict for a URL, for tests: NULL when allowed, else why not. */
const char *netpolicy_check(const char *url);

/* What answers a paused request the policy allows (tools/routes.c, entered by
 * worker/main.c): whether any route applies at all (then every request
 * pauses), and the answer (true: answered; false: it continues). Without
 * one, only the policy pauses requests. */
struct request_router {
    bool (*active)(void);
    bool (*answer)(struct session *w, const char *session, const char *id, json_t *params);
};
void netpolicy_set_router(const struct request_router *r);

/* --- routes and extra headers (tools/routes.c), answered after the policy --- */
/* Whether any route or extra header is set (then every request pauses). */
bool routes_active(void);
/* A paused request the policy allows: fulfil, fail or rewrite it when a
 * route or extra header applies (true: answered), else false. No wait. */
bool routes_answer(struct session *w, const char *session, const char *id, json_t *params);
/* Tracks the sessions below the page, which get the same interception. */
void routes_on_event(struct session *w, const char *session, const char *method, json_t *params);
/* A new tab's page (an attach hook, hooks.h): what routes.c holds
 * session-wide (offline) applied to its CDP session sid. No wait. */
void routes_page_setup(struct session *w, const char *sid, enum attach_kind kind);
void routes_free(void);

#endif
