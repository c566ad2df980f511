/* network_log.c - browser_network_requests and browser_network_request: the
 * requests of the current page (a new main-frame document starts a new
 * list), from the Network events the worker already receives. The first
 * MAX_REQUESTS are kept; a request's index is its place in the list. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "worker.h"

#define MAX_REQUESTS 1000
/* Bounds of one request's detail: each header value, and the bodies. */
#define HEADER_CHARS 1000
#define BODY_CHARS 20000

/* A string field of a record, "" when absent. */
static const char *str(json_t *e, const char *key)
{
    const char *s = json_string_value(json_object_get(e, key));
    return s ? s : "";
}

static json_t *entry(struct session *w, const char *id)
{
    json_t *pos = json_object_get(w->page->netlog.index, id ? id : "");
    return pos ? json_array_get(w->page->netlog.list, (size_t)json_integer_value(pos)) : NULL;
}

static void reset(struct session *w)
{
    json_decref(w->page->netlog.list);
    json_decref(w->page->netlog.index);
    w->page->netlog.list = json_array();
    w->page->netlog.index = json_object();
    w->page->netlog.dropped = 0;
}

static void on_request(struct session *w, const char *session, json_t *params)
{
    const char *id = json_string_value(json_object_get(params, "requestId"));
    json_t *req = json_object_get(params, "request");
    const char *type = json_string_value(json_object_get(params, "type"));
    const char *frame = json_string_value(json_object_get(params, "frameId"));
    const char *loader = json_string_value(json_object_get(params, "loaderId"));
    if (!id || !req)
        return;
    /* The main frame's document request starts the new page's list. */
    json_t *redirect = json_object_get(params, "redirectResponse");
    if (!redirect && type && !strcmp(type, "Document") && frame && loader &&
        !strcmp(frame, w->page->target_id) && !strcmp(id, loader))
        reset(w);
    if (!w->page->netlog.list)
        reset(w);
    json_t *prev = entry(w, id);
    if (prev && redirect) { /* the same id goes on to the redirect's target */
        json_object_set(prev, "status", json_object_get(redirect, "status"));
        json_object_set(prev, "statusText", json_object_get(redirect, "statusText"));
        json_object_set(prev, "responseHeaders", json_object_get(redirect, "headers"));
        json_object_set_new(prev, "state", json_string("redirected"));
    }
    if (json_array_size(w->page->netlog.list) >= MAX_REQUESTS) {
        w->page->netlog.dropped++;
        json_object_del(w->page->netlog.index, id);
        return;
    }
    json_t *e = json_pack("{s:I, s:s, s:O, s:O, s:s, s:s, s:s, s:O, s:O?, s:b}", "index",
                          (json_int_t)json_array_size(w->page->netlog.list), "requestId", id, "method",
                          json_object_get(req, "method"), "url", json_object_get(req, "url"),
                          "type", type ? type : "Other", "state", "pending", "session",
                          session ? session : "", "requestHeaders", json_object_get(req, "headers"),
                          "postData", json_object_get(req, "postData"), "hasPostData",
                          json_is_true(json_object_get(req, "hasPostData")));
    json_object_set(e, "started", json_object_get(params, "timestamp"));
    json_object_set(e, "wallTime", json_object_get(params, "wallTime"));
    json_object_set_new(w->page->netlog.index, id,
                        json_integer((json_int_t)json_array_size(w->page->netlog.list)));
    json_array_append_new(w->page->netlog.list, e);
}

void network_log_on_event(struct session *w, const char *session, const char *method, json_t *params)
{
    if (strncmp(method, "Network.", 8) != 0)
        return;
    w->page->netlog.last_activity = mono_ms();
    if (!strcmp(method, "Network.requestWillBeSent")) {
        on_request(w, session, params);
        return;
    }
    json_t *e = entry(w, json_string_value(json_object_get(params, "requestId")));
    if (!e)
        return;
    if (!strcmp(method, "Network.responseReceived")) {
        json_t *r = json_object_get(params, "response");
        json_object_set(e, "status", json_object_get(r, "status"));
        json_object_set(e, "statusText", json_object_get(r, "statusText"));
        json_object_set(e, "mimeType", json_object_get(r, "mimeType"));
        json_object_set(e, "responseHeaders", json_object_get(r, "headers"));
        json_object_set(e, "timing", json_object_get(r, "timing"));
        json_object_set(e, "remoteIPAddress", json_object_get(r, "remoteIPAddress"));
        json_object_set(e, "responded", json_object_get(params, "timestamp"));
    } else if (!strcmp(method, "Network.loadingFinished")) {
        json_object_set_new(e, "state", json_string("finished"));
        json_object_set(e, "ended", json_object_get(params, "timestamp"));
        json_object_set(e, "encodedDataLength", json_object_get(params, "encodedDataLength"));
    } else if (!strcmp(method, "Network.loadingFailed")) {
        json_object_set_new(e, "state", json_string("failed"));
        json_object_set(e, "ended", json_object_get(params, "timestamp"));
        json_object_set(e, "errorText", json_object_get(params, "errorText"));
    }
}

int network_log_pending(struct session *w)
{
    int n = 0;
    size_t i;
    json_t *e;
    json_array_foreach(w->page->netlog.list, i, e)
    {
        n += !strcmp(str(e, "state"), "pending");
    }
    return n;
}

long long network_log_quiet_ms(struct session *w)
{
    return mono_ms() - w->page->netlog.last_activity;
}

static bool is_static(json_t *e)
{
    static const char *const types[] = {"Image", "Font", "Stylesheet", "Script", "Media", NULL};
    const char *t = str(e, "type");
    long long status = json_integer_value(json_object_get(e, "status"));
    for (int i = 0; types[i]; i++)
        if (!strcmp(t, types[i]))
            return status >= 200 && status < 400;
    return false;
}

/* "[3] POST http://x/api => 200 OK (Fetch)" */
static void summary_line(struct sb *b, json_t *e)
{
    const char *state = str(e, "state");
    sb_printf(b, "[%lld] %s %.1000s => ",
              (long long)json_integer_value(json_object_get(e, "index")), str(e, "method"),
              str(e, "url"));
    if (!strcmp(state, "failed"))
        sb_printf(b, "failed: %s", str(e, "errorText"));
    else if (json_object_get(e, "status"))
        sb_printf(b, "%lld %s%s", (long long)json_integer_value(json_object_get(e, "status")),
                  str(e, "statusText"), !strcmp(state, "pending") ? " (body still loading)" : "");
    else
        sb_printf(b, "pending");
    sb_printf(b, " (%s)\n", str(e, "type"));
}

json_t *tool_network_requests(struct session *w, json_t *args)
{
    bool with_static = arg_bool(args, "includeStatic", false);
    const char *filter = arg_str(args, "filter", NULL);
    json_t *list = json_array();
    struct sb b = {0};
    size_t i, hidden = 0;
    json_t *e;
    json_array_foreach(w->page->netlog.list, i, e)
    {
        if (filter && !strstr(str(e, "url"), filter))
            continue;
        if (!with_static && is_static(e)) {
            hidden++;
            continue;
        }
        summary_line(&b, e);
        json_t *s =
            json_pack("{s:O, s:O, s:O, s:O, s:O}", "index", json_object_get(e, "index"), "method",
                      json_object_get(e, "method"), "url", json_object_get(e, "url"), "type",
                      json_object_get(e, "type"), "state", json_object_get(e, "state"));
        if (json_object_get(e, "status"))
            json_object_set(s, "status", json_object_get(e, "status"));
        json_array_append_new(list, s);
    }
    if (!b.p)
        sb_printf(&b, "No requests%s on this page yet.", filter ? " matching the filter" : "");
    if (hidden)
        sb_printf(&b, "(%zu successful static requests not shown: pass includeStatic)\n", hidden);
    if (w->page->netlog.dropped)
        sb_printf(&b, "(%zu later requests not recorded: only the first %d are kept)\n",
                  w->page->netlog.dropped, MAX_REQUESTS);
    while (b.len && b.p[b.len - 1] == '\n')
        b.p[--b.len] = 0;
    json_t *out = json_pack("{s:o}", "requests", list);
    page_refresh_info(w);
    add_page(w, out);
    json_t *res = tool_ok(w, b.p, out);
    free(b.p);
    return res;
}

/* Headers as "name: value" lines, each value cut. */
static void headers(struct sb *b, const char *label, json_t *h)
{
    if (!json_object_size(h))
        return;
    sb_printf(b, "%s:\n", label);
    const char *k;
    json_t *v;
    json_object_foreach(h, k, v)
    {
        const char *s = json_string_value(v);
        sb_printf(b, "  %.200s: %.*s%s\n", k, HEADER_CHARS, s ? s : "",
                  s && strlen(s) > HEADER_CHARS ? "..." : "");
    }
}

/* body (len bytes) into b and out.key, cut to BODY_CHARS characters. */
static void body(struct sb *b, json_t *out, const char *key, const char *label, const char *text,
                 size_t len)
{
    size_t keep = cut_text(text, len, BODY_CHARS);
    sb_printf(b, "%s (%zu bytes):\n", label, len);
    sb_add(b, text, keep);
    if (keep < len)
        sb_printf(b, "\n[body cut: %zu more characters not shown]",
                  utf8_chars(text + keep, len - keep));
    sb_add(b, "\n", 1);
    json_object_set_new(out, key, json_stringn(text, keep));
}

json_t *tool_network_request(struct session *w, json_t *args)
{
    long long index = arg_int(args, "index", -1);
    json_t *e = index >= 0 ? json_array_get(w->page->netlog.list, (size_t)index) : NULL;
    if (!e) {
        fail_call(w, TV_INVALID_PARAMETERS, "Take an index from browser_network_requests.",
                  "no request %lld on this page (it has %zu)", index,
                  json_array_size(w->page->netlog.list));
        return tool_fail(w);
    }
    struct sb b = {0};
    summary_line(&b, e);
    json_t *out =
        json_pack("{s:O, s:O, s:O, s:O, s:O}", "index", json_object_get(e, "index"), "method",
                  json_object_get(e, "method"), "url", json_object_get(e, "url"), "type",
                  json_object_get(e, "type"), "state", json_object_get(e, "state"));
    static const char *const copy[] = {"status",
                                       "statusText",
                                       "mimeType",
                                       "requestHeaders",
                                       "responseHeaders",
                                       "errorText",
                                       "encodedDataLength",
                                       "remoteIPAddress",
                                       NULL};
    for (int i = 0; copy[i]; i++)
        if (json_object_get(e, copy[i]))
            json_object_set(out, copy[i], json_object_get(e, copy[i]));
    headers(&b, "Request headers", json_object_get(e, "requestHeaders"));
    const char *session = str(e, "session");
    const char *id = str(e, "requestId");
    const char *post = str(e, "postData");
    json_t *r = NULL;
    if (*post) {
        body(&b, out, "postData", "Request body", post, strlen(post));
    } else if (json_is_true(json_object_get(e, "hasPostData")) &&
               session_call(w, session, "Network.getRequestPostData",
                            json_pack("{s:s}", "requestId", id), &r) == 0) {
        const char *p = json_string_value(json_object_get(r, "postData"));
        if (p)
            body(&b, out, "postData", "Request body", p, strlen(p));
        json_decref(r);
    }
    headers(&b, "Response headers", json_object_get(e, "responseHeaders"));
    /* Timing: seconds since an arbitrary origin, as CDP reports them. */
    double t0 = json_number_value(json_object_get(e, "started"));
    json_t *timing = json_object();
    if (json_is_number(json_object_get(e, "responded")))
        json_object_set_new(
            timing, "responseMs",
            json_real((json_number_value(json_object_get(e, "responded")) - t0) * 1000));
    if (json_is_number(json_object_get(e, "ended")))
        json_object_set_new(
            timing, "totalMs",
            json_real((json_number_value(json_object_get(e, "ended")) - t0) * 1000));
    if (json_is_number(json_object_get(e, "wallTime")))
        json_object_set(timing, "startedAt", json_object_get(e, "wallTime"));
    if (json_object_get(e, "timing"))
        json_object_set(timing, "phases", json_object_get(e, "timing"));
    if (json_object_get(timing, "responseMs") || json_object_get(timing, "totalMs"))
        sb_printf(&b, "Timing: response after %.1f ms, done after %.1f ms\n",
                  json_number_value(json_object_get(timing, "responseMs")),
                  json_number_value(json_object_get(timing, "totalMs")));
    json_object_set_new(out, "timing", timing);
    const char *state = str(e, "state");
    if (!strcmp(state, "finished") && arg_bool(args, "body", true)) {
        r = NULL;
        /* The browser keeps bodies for a while; an evicted one is no error. */
        if (session_call(w, session, "Network.getResponseBody", json_pack("{s:s}", "requestId", id),
                         &r) == 0) {
            json_t *jb = json_object_get(r, "body");
            if (json_is_true(json_object_get(r, "base64Encoded")))
                sb_printf(&b, "Response body: binary, %zu bytes of base64 (not shown)\n",
                          json_string_length(jb));
            else
                body(&b, out, "body", "Response body", json_string_value(jb),
                     json_string_length(jb));
            json_decref(r);
        } else {
            if (w->call.err == TV_TIMEOUT || w->call.err == TV_CANCELLED || w->call.err == TV_BROWSER_CRASHED) {
                free(b.p);
                json_decref(out);
                return tool_fail(w);
            }
            sb_printf(&b, "Response body: not available (%s)\n", w->call.errmsg);
            w->call.err = TV_OK;
            w->call.errmsg[0] = w->call.errhint[0] = 0;
        }
    }
    while (b.len && b.p[b.len - 1] == '\n')
        b.p[--b.len] = 0;
    page_refresh_info(w);
    add_page(w, out);
    json_t *res = tool_ok(w, b.p, out);
    free(b.p);
    return res;
}
