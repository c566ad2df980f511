/* navigate.c - browser_navigate. */
#include <ctype.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "cdp_policy.h"
#include "proto.h"
#include "url_policy.h"
#include "worker.h"

/* Progress for clients that asked for it (the supervisor drops it for calls
 * without a progressToken, so it is sent unconditionally; it is tiny). */
static void progress(struct session *w, int step, const char *what)
{
    json_t *body = json_pack("{s:i, s:i, s:s}", "progress", step, "total", 2, "message", what);
    channel_send(w->ch, MSG_PROGRESS, w->call.id, body);
    json_decref(body);
}

/* True when url starts with "scheme:" (RFC 3986: a letter, then letters,
 * digits, + - .). "localhost:3000" and "example.com:8080/x" are host:port,
 * not a scheme: what follows their colon is a port (digits, then / or end). */
static bool has_scheme(const char *url)
{
    const char *p = url;
    if (!isalpha((unsigned char)*p))
        return false;
    while (isalnum((unsigned char)*p) || *p == '+' || *p == '-' || *p == '.')
        p++;
    if (*p != ':')
        return false;
    const char *q = p + 1;
    while (isdigit((unsigned char)*q))
        q++;
    bool port = q > p + 1 && (*q == 0 || *q == '/' || *q == '?' || *q == '#');
    return !port;
}

json_t *tool_navigate(struct session *w, json_t *args)
{
    const char *url = arg_str(args, "url", "");
    const char *until = arg_str(args, "waitUntil", "load");
    char fixed[8192];
    /* "example.com" means http(s)://example.com, as in a browser's address bar. */
    if (!has_scheme(url)) {
        snprintf(fixed, sizeof fixed, "http://%s", url);
        url = fixed;
    }
    /* The bridge's and the relay's own rule (proto/url_policy.c), said here
     * first and clearly: javascript: and chrome: URLs would bypass the tool
     * model, file: would read the machine's files. */
    const char *why = url_policy_check(url, strlen(url), cdp_policy_url_allow(CDP_LAYER_BRIDGE));
    if (why) {
        fail_call(w, TV_INVALID_PARAMETERS, "Use an http(s) URL.",
                  "URL scheme not allowed: %.200s (%s)", url, why);
        return tool_fail(w);
    }
    nav_reset(w);
    json_t *r;
    if (page_call(w, "Page.navigate", json_pack("{s:s}", "url", url), &r) < 0)
        return tool_fail(w);
    const char *errtext = json_string_value(json_object_get(r, "errorText"));
    if (errtext && *errtext) {
        fail_call(w, TV_NAVIGATION_FAILED, "Check the URL and that the server is reachable.",
                  "could not load %.1000s: %s", url, errtext);
        json_decref(r);
        page_refresh_info(w);
        return tool_fail(w);
    }
    bool new_document = json_object_get(r, "loaderId") != NULL;
    json_decref(r);
    if (new_document) {
        /* Page.navigate answers once the response committed; the lifecycle
         * "init" event may not have been processed yet. */
        w->page->nav_started = true;
        progress(w, 1, "response committed");
        if (nav_wait(w, until, 1LL << 40) < 0)
            return tool_fail(w);
        progress(w, 2, "loaded");
    }
    json_t *st = NULL;
    long long status = -1;
    if (strncasecmp(url, "http", 4) == 0 &&
        util_eval(w, "(performance.getEntriesByType('navigation')[0] || {}).responseStatus || 0",
                  &st) == 0) {
        status = json_integer_value(st);
        json_decref(st);
    }
    page_refresh_info(w);
    json_t *out = json_object();
    add_page(w, out);
    if (status > 0)
        json_object_set_new(out, "status", json_integer(status));
    char text[3000];
    /* The URL the agent passed is not repeated back unless the page ended
     * up elsewhere (a redirect, a normalised URL). */
    int n = strcmp(w->page->url, url) == 0
                ? snprintf(text, sizeof text, "Navigated. Title: %s", w->page->title)
                : snprintf(text, sizeof text, "Navigated to %s\nTitle: %s", w->page->url, w->page->title);
    page_shown(w);
    if (status > 0 && n > 0 && (size_t)n < sizeof text)
        snprintf(text + n, sizeof text - (size_t)n, "\nHTTP status: %lld", status);
    /* With the page's lean view (issue 37, item 3): most tasks then need no
     * whole browser_snapshot. */
    return page_action_result(w, text, out);
}
