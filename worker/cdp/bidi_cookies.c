/*
 * bidi_cookies.c - CDP's cookie commands as BiDi's storage.* on the
 * session's user context (bidi_map.h): the cookie tools and the storage
 * state read and write the session's cookies alone, as CDP's do in its
 * browser context. The bridge's policy table checks the partition is the
 * session's (proto/bidi_policy.c, PARTITION).
 */
#include <stdio.h>
#include <string.h>

#include "bidi_map_int.h"
#include "origins.h"
#include "transport.h"

static json_t *partition(const struct bidi_map *m)
{
    return json_pack("{s:s, s:s}", "type", "storageKey", "userContext", m->user_context);
}

/* The host of a URL into out (IPv6 without its brackets), or false. */
static bool url_host(const char *url, char *out, size_t len)
{
    struct url_origin o;
    if (url_origin_parse(url, &o) < 0)
        return false;
    const char *h = o.host;
    size_t n = strlen(h);
    if (n >= 2 && h[0] == '[' && h[n - 1] == ']') {
        h++;
        n -= 2;
    }
    if (n == 0 || n >= len)
        return false;
    memcpy(out, h, n);
    out[n] = 0;
    return true;
}

/* CDP's sameSite (Strict, Lax, None) as BiDi's, or NULL when it is none of
 * them. */
static const char *same_site(const char *cdp)
{
    static const char *const names[][2] = {{"Strict", "strict"}, {"Lax", "lax"}, {"None", "none"}};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (!strcmp(cdp, names[i][0]))
            return names[i][1];
    return NULL;
}

/* Network.setCookie as storage.setCookie: a cookie for url's host when no
 * domain is given, as CDP sets it. */
static enum bidi_outcome set_cookie(struct bidi_map *m, long long id, json_t *p, json_t **out)
{
    char host[256];
    const char *domain = bm_str(p, "domain");
    if (!domain && bm_str(p, "url") && url_host(bm_str(p, "url"), host, sizeof host))
        domain = host;
    if (!domain || !bm_str(p, "name")) {
        *out = bm_error(id, -32602, "a cookie needs a name and a domain or an http(s) URL");
        return BIDI_ANSWER;
    }
    json_t *c = json_pack("{s:s, s:{s:s, s:s}, s:s, s:s}", "name", bm_str(p, "name"), "value",
                          "type", "string", "value", bm_str(p, "value") ?: "", "domain", domain,
                          "path", bm_str(p, "path") ?: "/");
    static const char *const flags[] = {"httpOnly", "secure"};
    for (size_t i = 0; i < sizeof flags / sizeof flags[0]; i++)
        if (json_object_get(p, flags[i]))
            json_object_set_new(c, flags[i],
                                json_boolean(json_is_true(json_object_get(p, flags[i]))));
    if (bm_str(p, "sameSite")) {
        const char *s = same_site(bm_str(p, "sameSite"));
        if (!s) {
            json_decref(c);
            *out = bm_error(id, -32602, "sameSite is Strict, Lax or None");
            return BIDI_ANSWER;
        }
        json_object_set_new(c, "sameSite", json_string(s));
    }
    double expires = bm_num(p, "expires");
    if (json_is_number(json_object_get(p, "expires")) && expires > 0)
        json_object_set_new(c, "expiry", json_integer((json_int_t)expires));
    return bm_send(m, id, K_SET_COOKIE, NULL, "storage.setCookie",
                   json_pack("{s:o, s:o}", "cookie", c, "partition", partition(m)), out);
}

enum bidi_outcome bm_cookie_command(struct bidi_map *m, long long id, const char *method, json_t *p,
                                    json_t **out)
{
    if (!m->user_context[0]) {
        *out = bm_error(id, CDP_ERR_NOT_SUPPORTED, "%s: no browser context of the session's yet",
                        method);
        return BIDI_ANSWER;
    }
    if (!strcmp(method, "Network.getAllCookies") || !strcmp(method, "Network.getCookies"))
        return bm_send(m, id, K_COOKIES, NULL, "storage.getCookies",
                       json_pack("{s:o}", "partition", partition(m)), out);
    if (!strcmp(method, "Network.setCookie"))
        return set_cookie(m, id, p, out);
    if (!strcmp(method, "Network.clearBrowserCookies"))
        return bm_send(m, id, K_EMPTY, NULL, "storage.deleteCookies",
                       json_pack("{s:o}", "partition", partition(m)), out);
    /* Network.deleteCookies: by name, and the exact domain and path given. */
    json_t *filter = json_pack("{s:s}", "name", bm_str(p, "name") ?: "");
    static const char *const keys[] = {"domain", "path"};
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++)
        if (bm_str(p, keys[i]))
            json_object_set_new(filter, keys[i], json_string(bm_str(p, keys[i])));
    return bm_send(m, id, K_EMPTY, NULL, "storage.deleteCookies",
                   json_pack("{s:o, s:o}", "filter", filter, "partition", partition(m)), out);
}

bool bm_is_cookie_command(const char *method)
{
    static const char *const methods[] = {"Network.getAllCookies", "Network.getCookies",
                                          "Network.setCookie", "Network.deleteCookies",
                                          "Network.clearBrowserCookies"};
    for (size_t i = 0; i < sizeof methods / sizeof methods[0]; i++)
        if (!strcmp(method, methods[i]))
            return true;
    return false;
}

/* storage.getCookies' answer as CDP's: {cookies: [...]}, session cookies
 * with expires -1, sameSite capitalised (BiDi's "default" left out). */
json_t *bm_cookies_answer(long long id, json_t *r)
{
    json_t *list = json_array();
    size_t i;
    json_t *c;
    json_array_foreach(json_object_get(r, "cookies"), i, c)
    {
        json_t *value = json_object_get(c, "value");
        json_t *expiry = json_object_get(c, "expiry");
        json_t *o = json_pack("{s:s, s:s, s:s, s:s, s:I, s:b, s:b, s:b, s:f}", "name",
                              bm_str(c, "name") ?: "", "value", bm_str(value, "value") ?: "",
                              "domain", bm_str(c, "domain") ?: "", "path", bm_str(c, "path") ?: "/",
                              "size", (json_int_t)bm_num(c, "size"), "httpOnly",
                              json_is_true(json_object_get(c, "httpOnly")), "secure",
                              json_is_true(json_object_get(c, "secure")), "session", !expiry,
                              "expires", expiry ? json_number_value(expiry) : -1.0);
        const char *s = bm_str(c, "sameSite");
        if (s && (!strcmp(s, "strict") || !strcmp(s, "lax") || !strcmp(s, "none")))
            json_object_set_new(o, "sameSite",
                                json_string(!strcmp(s, "strict") ? "Strict"
                                            : !strcmp(s, "lax")  ? "Lax"
                                                                 : "None"));
        json_array_append_new(list, o);
    }
    return bm_answer(id, json_pack("{s:o}", "cookies", list));
}
