/*
 * cookies.c - browser_cookie_*: the cookies of this session's browser
 * context.
 *
 * Every command goes to the page's CDP session. Network.* cookie commands
 * there act on the cookie store of the page's own storage partition, which
 * is the session's browser context; the browser-wide Storage.* commands are
 * refused by the CDP bridge (supervisor/cdp_bridge.c), so no session can
 * read or clear another's cookies.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "worker.h"

json_t *cookie_out(json_t *c)
{
    json_t *o = json_object();
    static const char *const keep[] = {"name",    "value",    "domain", "path",
                                       "expires", "httpOnly", "secure", "sameSite"};
    for (size_t i = 0; i < sizeof keep / sizeof keep[0]; i++) {
        json_t *v = json_object_get(c, keep[i]);
        if (v)
            json_object_set(o, keep[i], v);
    }
    /* Playwright's storage state gives session cookies expires -1 and
     * always a sameSite; CDP omits it for the browser's default. */
    if (json_is_true(json_object_get(c, "session")))
        json_object_set_new(o, "expires", json_integer(-1));
    if (!json_object_get(o, "sameSite"))
        json_object_set_new(o, "sameSite", json_string("Lax"));
    return o;
}

json_t *session_cookies(struct session *w)
{
    json_t *r = NULL;
    if (page_call(w, "Network.getAllCookies", NULL, &r) < 0)
        return NULL;
    json_t *out = json_array();
    size_t i;
    json_t *c;
    json_array_foreach(json_object_get(r, "cookies"), i, c)
    {
        json_array_append_new(out, cookie_out(c));
    }
    json_decref(r);
    return out;
}

/* A cookie's domain matches a filter for that host or a parent domain of
 * it: "example.com" takes ".example.com" and "www.example.com". */
static bool domain_matches(const char *cookie, const char *filter)
{
    while (*cookie == '.')
        cookie++;
    while (*filter == '.')
        filter++;
    size_t n = strlen(cookie), m = strlen(filter);
    if (n < m || strcasecmp(cookie + n - m, filter) != 0)
        return false;
    return n == m || cookie[n - m - 1] == '.';
}

static void cookie_line(struct sb *b, json_t *c)
{
    const char *name = json_string_value(json_object_get(c, "name"));
    const char *value = json_string_value(json_object_get(c, "value"));
    const char *domain = json_string_value(json_object_get(c, "domain"));
    const char *path = json_string_value(json_object_get(c, "path"));
    const char *same = json_string_value(json_object_get(c, "sameSite"));
    double exp = json_number_value(json_object_get(c, "expires"));
    sb_printf(b, "- %s=%s (domain %s, path %s%s%s, sameSite %s, ", name ? name : "",
              value ? value : "", domain ? domain : "", path ? path : "/",
              json_is_true(json_object_get(c, "httpOnly")) ? ", httpOnly" : "",
              json_is_true(json_object_get(c, "secure")) ? ", secure" : "", same ? same : "Lax");
    if (exp < 0)
        sb_printf(b, "session)\n");
    else
        sb_printf(b, "expires %.0f)\n", exp);
}

/* The session's cookies that pass the filters (NULL: any), as text + array. */
static json_t *cookies_result(struct session *w, const char *name, const char *domain,
                              const char *path, const char *none)
{
    json_t *all = session_cookies(w);
    if (!all)
        return tool_fail(w);
    json_t *list = json_array();
    struct sb b = {0};
    size_t i;
    json_t *c;
    json_array_foreach(all, i, c)
    {
        const char *n = json_string_value(json_object_get(c, "name"));
        const char *d = json_string_value(json_object_get(c, "domain"));
        const char *p = json_string_value(json_object_get(c, "path"));
        if ((name && (!n || strcmp(n, name) != 0)) ||
            (domain && (!d || !domain_matches(d, domain))) ||
            (path && (!p || strcmp(p, path) != 0)))
            continue;
        cookie_line(&b, c);
        json_array_append(list, c);
    }
    json_decref(all);
    if (!b.p)
        sb_printf(&b, "%s\n", none);
    json_t *res = tool_ok(w, b.p, json_pack("{s:o}", "cookies", list));
    free(b.p);
    return res;
}

json_t *tool_cookie_list(struct session *w, json_t *args)
{
    return cookies_result(w, NULL, arg_str(args, "domain", NULL), arg_str(args, "path", NULL),
                          "No cookies");
}

json_t *tool_cookie_get(struct session *w, json_t *args)
{
    const char *name = arg_str(args, "name", "");
    char none[300];
    snprintf(none, sizeof none, "No cookie named '%.200s'", name);
    return cookies_result(w, name, NULL, NULL, none);
}

json_t *tool_cookie_set(struct session *w, json_t *args)
{
    const char *name = arg_str(args, "name", "");
    const char *domain = arg_str(args, "domain", NULL);
    json_t *p = json_pack("{s:s, s:s}", "name", name, "value", arg_str(args, "value", ""));
    if (domain) {
        json_object_set_new(p, "domain", json_string(domain));
    } else {
        /* Like document.cookie: for the page's host. */
        page_refresh_info(w);
        if (strncmp(w->page->url, "http://", 7) != 0 && strncmp(w->page->url, "https://", 8) != 0) {
            json_decref(p);
            fail_call(w, TV_INVALID_PARAMETERS, "Pass domain, or navigate to a page of the site.",
                      "the page (%.200s) has no host for the cookie", w->page->url);
            return tool_fail(w);
        }
        json_object_set_new(p, "url", json_string(w->page->url));
    }
    json_object_set_new(p, "path", json_string(arg_str(args, "path", "/")));
    static const char *const flags[] = {"httpOnly", "secure", "sameSite", "expires"};
    for (size_t i = 0; i < sizeof flags / sizeof flags[0]; i++) {
        json_t *v = json_object_get(args, flags[i]);
        if (v)
            json_object_set(p, flags[i], v);
    }
    json_t *r = NULL;
    int rc = page_call(w, "Network.setCookie", p, &r);
    if (rc < 0 && w->call.err != TV_BROWSER_ERROR)
        return tool_fail(w); /* timeout, cancel, crash: not the cookie's fault */
    if (rc < 0 || json_is_false(json_object_get(r, "success"))) {
        /* Chromium says no without a reason; the usual ones: */
        char why[600];
        snprintf(why, sizeof why, "the browser refused cookie '%.200s'%s%.300s", name,
                 w->call.err ? ": " : "", w->call.err ? w->call.errmsg : "");
        json_decref(r);
        fail_call(w, TV_INVALID_PARAMETERS,
                  "Check the name (no ';', '=' or spaces), that domain is the page's site, and "
                  "that sameSite None comes with secure.",
                  "%s", why);
        return tool_fail(w);
    }
    json_decref(r);
    char line[400];
    snprintf(line, sizeof line, "Set cookie '%.200s' for %.150s", name, domain ? domain : w->page->url);
    return tool_ok(w, line, json_pack("{s:s}", "name", name));
}

json_t *tool_cookie_delete(struct session *w, json_t *args)
{
    const char *name = arg_str(args, "name", "");
    json_t *all = session_cookies(w);
    if (!all)
        return tool_fail(w);
    int deleted = 0;
    size_t i;
    json_t *c;
    json_array_foreach(all, i, c)
    {
        if (strcmp(json_string_value(json_object_get(c, "name")) ?: "", name) != 0)
            continue;
        json_t *p = json_pack("{s:s, s:O, s:O}", "name", name, "domain",
                              json_object_get(c, "domain"), "path", json_object_get(c, "path"));
        if (page_call(w, "Network.deleteCookies", p, NULL) < 0) {
            json_decref(all);
            return tool_fail(w);
        }
        deleted++;
    }
    json_decref(all);
    char line[300];
    if (deleted)
        snprintf(line, sizeof line, "Deleted %d cookie%s named '%.200s'", deleted,
                 deleted == 1 ? "" : "s", name);
    else
        snprintf(line, sizeof line, "No cookie named '%.200s'", name);
    return tool_ok(w, line, json_pack("{s:i}", "deleted", deleted));
}

json_t *tool_cookie_clear(struct session *w, json_t *args)
{
    (void)args;
    if (page_call(w, "Network.clearBrowserCookies", NULL, NULL) < 0)
        return tool_fail(w);
    return tool_ok(w, "Cleared all cookies of this session", json_object());
}
