#include "netpolicy.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "errbuf.h"
#include "log.h"
#include "origins.h"
#include "worker.h"

#define MAX_PORTS 8
#define MAX_ORIGINS 64

static struct {
    int ports[MAX_PORTS];
    int nports;
    struct origin_rule allow[MAX_ORIGINS], block[MAX_ORIGINS];
    int nallow, nblock;
    bool link_local; /* refuse link-local addresses (no --allow-link-local) */
} P;

/* Fetch patterns that every metadata URL matches (and a few others,
 * which netpolicy_check then lets through): 169.254.0.0/16 as Chromium
 * writes IPv4 hosts, fe80::/10, the IPv4-mapped forms Chromium writes in
 * hex (::ffff:a9fe:..., ::ffff:6464:64c8, ::ffff:a83f:8110), and the
 * named ones of origin_host_is_metadata (proto/origins.h). */
static const char *const LINK_LOCAL_PATTERNS[] = {"*169.254.*",
                                                  "*[fe8*",
                                                  "*[fe9*",
                                                  "*[fea*",
                                                  "*[feb*",
                                                  "*:a9fe:*",
                                                  "*:6464:64c8*",
                                                  "*:a83f:8110*",
                                                  "*100.100.100.200*",
                                                  "*168.63.129.16*",
                                                  "*[fd00:ec2::254]*",
                                                  "*metadata.google.internal*"};

static int load_rules(const json_t *arr, struct origin_rule *rules, int *n, const char *what,
                      char *err, size_t errlen)
{
    size_t i;
    json_t *v;
    *n = 0;
    json_array_foreach(arr, i, v)
    {
        const char *s = json_string_value(v);
        if (!s || *n == MAX_ORIGINS || origin_rule_parse(s, &rules[*n]) < 0) {
            errbuf_set(err, errlen, "%s: bad or too many entries (at \"%s\")", what, s ? s : "?");
            return -1;
        }
        (*n)++;
    }
    return 0;
}

int netpolicy_configure(const json_t *config, char *err, size_t errlen)
{
    memset(&P, 0, sizeof P);
    size_t i;
    json_t *v;
    json_array_foreach(json_object_get(config, "blockedPorts"), i, v)
    {
        json_int_t p = json_integer_value(v);
        if (p > 0 && p < 65536 && P.nports < MAX_PORTS)
            P.ports[P.nports++] = (int)p;
    }
    if (load_rules(json_object_get(config, "allowedOrigins"), P.allow, &P.nallow, "allowedOrigins",
                   err, errlen) < 0 ||
        load_rules(json_object_get(config, "blockedOrigins"), P.block, &P.nblock, "blockedOrigins",
                   err, errlen) < 0)
        return -1;
    P.link_local = json_is_true(json_object_get(config, "blockLinkLocal"));
    return 0;
}

bool netpolicy_active(void)
{
    return P.nports || P.nallow || P.nblock || P.link_local;
}

const char *netpolicy_check(const char *url)
{
    struct url_origin o;
    if (!url || url_origin_parse(url, &o) < 0)
        return NULL; /* data:, blob:, about: never leave the browser */
    for (int i = 0; i < P.nports; i++)
        if (o.port == P.ports[i])
            return "the address is one of tabvisor's own ports";
    if (P.link_local && origin_host_is_metadata(o.host))
        return "the address is link-local or a cloud's metadata service (--allow-link-local lets "
               "pages reach it)";
    for (int i = 0; i < P.nblock; i++)
        if (origin_rule_blocks(&P.block[i], &o))
            return "the origin is in --blocked-origins";
    if (P.nallow) {
        for (int i = 0; i < P.nallow; i++)
            if (origin_rule_matches(&P.allow[i], &o))
                return NULL;
        return "the origin is not in --allowed-origins";
    }
    return NULL;
}

static const struct request_router *router;

void netpolicy_set_router(const struct request_router *r)
{
    router = r;
}

void netpolicy_attach(struct session *w, const char *session)
{
    bool routed = router && router->active();
    /* On Firefox the policy holds in its SOCKS proxy and the bridge's URL
     * check (supervisor/socks_proxy.c, bidi_bridge.c): only routes pause
     * requests, each a round trip through the worker. */
    if ((!netpolicy_active() || w->firefox) && !routed)
        return;
    json_t *patterns = json_array();
    /* Without origin rules only our ports matter, and a pattern naming the
     * port pauses nothing else. The default ports have no ":N" in a URL. */
    bool all = routed || P.nallow || P.nblock;
    for (int i = 0; i < P.nports && !all; i++)
        all = P.ports[i] == 80 || P.ports[i] == 443;
    if (all) {
        json_array_append_new(patterns, json_pack("{s:s}", "urlPattern", "*"));
    } else {
        for (int i = 0; i < P.nports; i++) {
            char pat[32];
            snprintf(pat, sizeof pat, "*:%d/*", P.ports[i]);
            json_array_append_new(patterns, json_pack("{s:s}", "urlPattern", pat));
        }
        for (size_t i = 0;
             P.link_local && i < sizeof LINK_LOCAL_PATTERNS / sizeof *LINK_LOCAL_PATTERNS; i++)
            json_array_append_new(patterns,
                                  json_pack("{s:s}", "urlPattern", LINK_LOCAL_PATTERNS[i]));
    }
    json_t *p = json_pack("{s:o}", "patterns", patterns);
    cdp_send(w->cdp, session && *session ? session : w->page->cdp_session, "Fetch.enable", p);
    json_decref(p);
}

void netpolicy_on_event(struct session *w, const char *session, const char *method, json_t *params)
{
    if (strcmp(method, "Fetch.requestPaused") != 0)
        return;
    /* The hidden storage page's requests are answered in the worker. */
    if (session && w->storage_helper[0] && strcmp(session, w->storage_helper) == 0)
        return;
    const char *id = json_string_value(json_object_get(params, "requestId"));
    const char *url = json_string_value(json_object_get(json_object_get(params, "request"), "url"));
    if (!id)
        return;
    const char *why = netpolicy_check(url);
    /* The policy first: a route never unblocks an origin. */
    if (!why && router && router->answer(w, session, id, params))
        return;
    json_t *p = why ? json_pack("{s:s, s:s}", "requestId", id, "errorReason", "BlockedByClient")
                    : json_pack("{s:s}", "requestId", id);
    if (why)
        log_info("blocked a request: %s", why); /* no URL: it may carry secrets */
    cdp_send(w->cdp, session, why ? "Fetch.failRequest" : "Fetch.continueRequest", p);
    json_decref(p);
}
