/* cdp_policy.c - the CDP policy table (see cdp_policy.h). */
#include "cdp_policy.h"

#include <stdio.h>
#include <string.h>

#include "url_policy.h"

#define T CDP_LAYER_TOOL
#define B CDP_LAYER_BRIDGE
#define R CDP_LAYER_RELAY
#define E CDP_LAYER_EXTENSION
#define NONE CDP_LAYERS_NONE
#define ALL CDP_LAYERS_ALL

/* Reasons shared by several rows. */
#define WHY_LOCAL_PATH "it hands the browser a path on this machine"
#define WHY_BROWSER_WIDE                                                                           \
    "it reaches past the session's own pages (the browser is shared by every session, and in "     \
    "extension mode it is the user's own)"
#define WHY_PROFILE                                                                                \
    "in extension mode the profile is the user's own: it would reach other sites' cookies or "     \
    "storage"
#define WHY_WORKER_ONLY                                                                            \
    "the session itself relies on it (events, network policy, the page's life); use the tools"

/*
 * The table. Rows name a method ("Domain.method"), a domain ("Domain.*") or
 * a method of every domain ("*.disable"); a method not named passes every
 * layer. Keep it sorted by domain; docs/devtools.md explains the layers.
 */
const struct cdp_rule cdp_policy_table[] = {
    /* Paths on this machine: no layer, ever. */
    {"DOM.setFileInputFiles", NONE, NULL, NULL, 0, WHY_LOCAL_PATH},
    {"Page.handleFileChooser", NONE, NULL, NULL, 0, WHY_LOCAL_PATH},
    {"Page.setDownloadBehavior", NONE, NULL, NULL, 0, WHY_LOCAL_PATH},
    {"Extensions.*", NONE, NULL, NULL, 0, WHY_LOCAL_PATH},
    {"Input.dispatchDragEvent", ALL, NULL, "data.files", ALL,
     "dragged files are paths on this machine"},
    /* Loads any URL, file: included, outside the page's own rules. */
    {"Network.loadNetworkResource", NONE, NULL, NULL, 0,
     "it loads any URL, local files included, outside the page's rules"},

    /* The browser and everything in it. */
    {"Browser.*", NONE, NULL, NULL, 0, WHY_BROWSER_WIDE},
    {"SystemInfo.*", NONE, NULL, NULL, 0, WHY_BROWSER_WIDE},
    {"Tracing.*", NONE, NULL, NULL, 0, WHY_BROWSER_WIDE},
    {"Storage.*", NONE, NULL, NULL, 0, WHY_BROWSER_WIDE},
    {"Tethering.*", NONE, NULL, NULL, 0, WHY_BROWSER_WIDE},
    {"PWA.*", NONE, NULL, NULL, 0, WHY_BROWSER_WIDE},
    {"Security.setIgnoreCertificateErrors", NONE, NULL, NULL, 0, WHY_BROWSER_WIDE},
    {"Target.*", NONE, NULL, NULL, 0,
     "targets are handed out per session by the bridge and the relay, not asked for"},
    {"Target.setAutoAttach", B | R | E, NULL, NULL, 0, WHY_WORKER_ONLY},
    {"Target.detachFromTarget", B, NULL, NULL, 0, WHY_WORKER_ONLY},
    {"Target.getTargetInfo", R | E, NULL, NULL, 0, WHY_WORKER_ONLY},

    /* Cookies and storage: a shared-mode session's own context, but in
     * extension mode the user's whole profile. */
    {"Network.getAllCookies", T | B, NULL, NULL, 0, WHY_PROFILE},
    {"Network.getCookies", ALL, NULL, "urls", R | E, WHY_PROFILE},
    {"Network.setCookie", T | B, NULL, NULL, 0, WHY_PROFILE},
    {"Network.setCookies", T | B, NULL, NULL, 0, WHY_PROFILE},
    {"Network.deleteCookies", T | B, NULL, NULL, 0, WHY_PROFILE},
    {"Network.clearBrowserCookies", B, NULL, NULL, 0,
     "it clears every cookie of the context (the user's whole profile in extension mode); use "
     "browser_cookie_clear"},
    {"Network.clearBrowserCache", B, NULL, NULL, 0,
     "it clears the cache of the whole context (the user's whole profile in extension mode)"},
    {"CacheStorage.*", T | B, NULL, NULL, 0, WHY_PROFILE},
    {"IndexedDB.*", T | B, NULL, NULL, 0, WHY_PROFILE},
    {"FileSystem.*", T | B, NULL, NULL, 0, WHY_PROFILE},
    {"BackgroundService.*", T | B, NULL, NULL, 0, WHY_PROFILE},
    {"ServiceWorker.*", T | B, NULL, NULL, 0, WHY_PROFILE},

    /* What the worker itself needs and a client's browser_cdp must not
     * touch: the network policy rides on request interception, the page's
     * events on its domains, navigation on browser_navigate's checks. */
    {"Fetch.*", B | R | E, NULL, NULL, 0,
     "request interception carries the server's network policy (--allowed-origins, "
     "--blocked-origins)"},
    {"Fetch.continueRequest", B | R | E, "url", NULL, 0,
     "request interception carries the server's network policy (--allowed-origins, "
     "--blocked-origins)"},
    {"Network.setRequestInterception", NONE, NULL, NULL, 0,
     "request interception carries the server's network policy"},
    {"*.disable", B | R | E, NULL, NULL, 0,
     "the session relies on its domains' events; disabling one would break it"},
    {"Page.close", B | R | E, NULL, NULL, 0,
     "the page's life is the session's (use browser_tabs or browser_session_close)"},
    {"Page.crash", B | R | E, NULL, NULL, 0,
     "the page's life is the session's (use browser_tabs or browser_session_close)"},
    {"Page.navigate", B | R | E, "url", NULL, 0,
     "navigation goes through browser_navigate, which checks the URL and waits for the page"},
};
const size_t cdp_policy_count = sizeof cdp_policy_table / sizeof *cdp_policy_table;

const char *cdp_layer_name(unsigned layer)
{
    switch (layer) {
    case CDP_LAYER_TOOL:
        return "browser_cdp";
    case CDP_LAYER_BRIDGE:
        return "the shared browser's bridge";
    case CDP_LAYER_RELAY:
        return "the relay";
    case CDP_LAYER_EXTENSION:
        return "the extension";
    }
    return "?";
}

/* Whether pattern names method: exactly, as its domain ("D.*") or as its
 * method name ("*.m"). Returns the specificity (3, 2, 1), 0 for no match. */
static int matches(const char *pattern, const char *method, size_t len, size_t dot)
{
    size_t pl = strlen(pattern);
    if (pl == len && memcmp(pattern, method, len) == 0)
        return 3;
    if (pl >= 2 && pattern[pl - 1] == '*' && pattern[pl - 2] == '.' && pl - 1 == dot + 1 &&
        memcmp(pattern, method, dot + 1) == 0)
        return 2;
    if (pl >= 2 && pattern[0] == '*' && pattern[1] == '.' && pl - 1 == len - dot &&
        memcmp(pattern + 1, method + dot, len - dot) == 0)
        return 1;
    return 0;
}

/* The position of the one dot of "Domain.method", or 0 when method is not
 * one (no dot, two, or an empty side). */
static size_t method_dot(const char *method, size_t len)
{
    const char *dot = memchr(method, '.', len);
    if (!dot || dot == method || (size_t)(dot - method) + 1 >= len)
        return 0;
    if (memchr(dot + 1, '.', len - (size_t)(dot - method) - 1))
        return 0;
    return (size_t)(dot - method);
}

const struct cdp_rule *cdp_policy_rule(const char *method, size_t len)
{
    size_t dot = method_dot(method, len);
    if (!dot)
        return NULL;
    const struct cdp_rule *best = NULL;
    int best_score = 0;
    for (size_t i = 0; i < cdp_policy_count; i++) {
        int s = matches(cdp_policy_table[i].method, method, len, dot);
        if (s > best_score) {
            best = &cdp_policy_table[i];
            best_score = s;
        }
    }
    return best;
}

void cdp_policy_sample_method(const struct cdp_rule *rule, char *out, size_t cap)
{
    const char *pattern = rule->method;
    size_t n = strlen(pattern);
    if (pattern[0] == '*')
        snprintf(out, cap, "Made%s", pattern + 1);
    else if (pattern[n - 1] == '*')
        snprintf(out, cap, "%.*smadeUp", (int)(n - 1), pattern);
    else
        snprintf(out, cap, "%s", pattern);
}

unsigned cdp_policy_url_allow(unsigned layer)
{
    /* The user's browser loads only what a person would type; a shared
     * headless browser also loads data: documents (an opaque origin). */
    if (layer == CDP_LAYER_RELAY || layer == CDP_LAYER_EXTENSION)
        return URL_ALLOW_HTTP | URL_ALLOW_ABOUT_BLANK;
    return URL_ALLOW_HTTP | URL_ALLOW_ABOUT_BLANK | URL_ALLOW_DATA;
}

bool cdp_policy_needs_params(unsigned layer, const char *method, size_t len)
{
    const struct cdp_rule *r = cdp_policy_rule(method, len);
    return r && (r->pass & layer) && (r->url_param || (r->bar_param && (r->bar_layers & layer)));
}

/* The member at a dotted path ("data.files") of params, or NULL. */
static const json_t *member(const json_t *params, const char *path)
{
    const json_t *v = params;
    while (v && *path) {
        size_t n = strcspn(path, ".");
        char key[64];
        if (n >= sizeof key)
            return NULL;
        memcpy(key, path, n);
        key[n] = 0;
        v = json_object_get(v, key);
        path += n + (path[n] == '.');
    }
    return v;
}

/* An absent member, null, false, "", [] and {} carry nothing. */
static bool empty(const json_t *v)
{
    return !v || json_is_null(v) || json_is_false(v) ||
           (json_is_string(v) && json_string_length(v) == 0) ||
           (json_is_array(v) && json_array_size(v) == 0) ||
           (json_is_object(v) && json_object_size(v) == 0);
}

const char *cdp_policy_check(unsigned layer, const char *method, size_t len, const json_t *params)
{
    if (!method_dot(method, len))
        return "not a CDP method name (Domain.method)";
    const struct cdp_rule *r = cdp_policy_rule(method, len);
    if (!r)
        return NULL;
    if (!(r->pass & layer))
        return r->why;
    if (params && !json_is_object(params))
        return "its params are not an object";
    if (r->bar_param && (r->bar_layers & layer) && !empty(member(params, r->bar_param)))
        return r->why;
    if (r->url_param) {
        const json_t *u = json_object_get(params, r->url_param);
        if (u && !json_is_string(u))
            return "its URL is not a string";
        /* Without one, nothing is loaded (Fetch.continueRequest keeps the
         * request's URL; the browser refuses Page.navigate). */
        if (u) {
            const char *why = url_policy_check(json_string_value(u), json_string_length(u),
                                               cdp_policy_url_allow(layer));
            if (why)
                return why;
        }
    }
    return NULL;
}
