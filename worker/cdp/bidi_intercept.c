/*
 * bidi_intercept.c - CDP's Fetch domain as BiDi's network interception,
 * and offline as BiDi's network conditions (bidi_map.h): the routes, extra
 * headers, offline and the storage state's helper page
 * (worker/tools/routes.c, storage_state.c) work on Firefox as on Chromium.
 *
 * Fetch.enable on a page becomes one network.addIntercept for that page's
 * top-level context (BiDi intercepts by top-level context; it covers the
 * page's frames, so a frame's Fetch.enable has nothing to add), with no URL
 * pattern: the worker decides per request, as netpolicy_on_event does.
 * Fetch.disable removes it. A blocked network.beforeRequestSent becomes
 * Fetch.requestPaused (bidi_events.c); the answers to it become
 * network.continueRequest, failRequest and provideResponse, each checked
 * by the bridge to be a request of the session's.
 */
#include <stdio.h>
#include <string.h>

#include "bidi_map_int.h"
#include "transport.h"

/* CDP's [{name, value}] headers as BiDi's, values as strings. */
static json_t *bidi_headers(json_t *cdp)
{
    json_t *out = json_array();
    size_t i;
    json_t *h;
    json_array_foreach(cdp, i, h)
    {
        const char *name = bm_str(h, "name"), *value = bm_str(h, "value");
        if (name && value)
            json_array_append_new(out, json_pack("{s:s, s:{s:s, s:s}}", "name", name, "value",
                                                 "type", "string", "value", value));
    }
    return out;
}

bool bm_is_fetch_command(const char *method)
{
    return !strncmp(method, "Fetch.", 6) || !strcmp(method, "Network.emulateNetworkConditions");
}

/* Offline is BiDi's emulation.setNetworkConditions on the page (a frame's
 * requests are its page's); latency and throughput have no counterpart. */
static enum bidi_outcome network_conditions(struct bidi_map *m, long long id, const char *ctx,
                                            bool top, json_t *p, json_t **out)
{
    if (!top) {
        *out = bm_answer(id, NULL);
        return BIDI_ANSWER;
    }
    json_t *conditions = json_is_true(json_object_get(p, "offline"))
                             ? json_pack("{s:s}", "type", "offline")
                             : json_null();
    return bm_send(m, id, K_EMPTY, ctx, "emulation.setNetworkConditions",
                   json_pack("{s:o, s:[s]}", "networkConditions", conditions, "contexts", ctx),
                   out);
}

enum bidi_outcome bm_fetch_command(struct bidi_map *m, long long id, const char *ctx,
                                   const char *method, json_t *p, json_t **out)
{
    bool top = json_object_get(m->tops, ctx) != NULL;
    json_t *have = json_object_get(m->intercepts, ctx);
    if (!strcmp(method, "Network.emulateNetworkConditions"))
        return network_conditions(m, id, ctx, top, p, out);
    if (!strcmp(method, "Fetch.enable")) {
        /* A frame's requests are its page's intercept's; one intercept per
         * page, pausing every request, however often it is asked for. */
        if (!top || have) {
            *out = bm_answer(id, NULL);
            return BIDI_ANSWER;
        }
        json_object_set_new(m->intercepts, ctx, json_string("")); /* until its answer */
        return bm_send(m, id, K_INTERCEPT, ctx, "network.addIntercept",
                       json_pack("{s:[s], s:[s]}", "phases", "beforeRequestSent", "contexts", ctx),
                       out);
    }
    if (!strcmp(method, "Fetch.disable")) {
        const char *intercept = json_string_value(have);
        if (!top || !intercept || !*intercept) {
            *out = bm_answer(id, NULL);
            return BIDI_ANSWER;
        }
        json_t *bp = json_pack("{s:s}", "intercept", intercept);
        json_object_del(m->intercepts, ctx);
        return bm_send(m, id, K_EMPTY, ctx, "network.removeIntercept", bp, out);
    }
    const char *request = bm_str(p, "requestId");
    if (!request) {
        *out = bm_error(id, -32602, "%s needs a requestId", method);
        return BIDI_ANSWER;
    }
    if (!strcmp(method, "Fetch.continueRequest")) {
        json_t *bp = json_pack("{s:s}", "request", request);
        if (json_is_array(json_object_get(p, "headers")))
            json_object_set_new(bp, "headers", bidi_headers(json_object_get(p, "headers")));
        return bm_send(m, id, K_EMPTY, ctx, "network.continueRequest", bp, out);
    }
    if (!strcmp(method, "Fetch.failRequest"))
        return bm_send(m, id, K_EMPTY, ctx, "network.failRequest",
                       json_pack("{s:s}", "request", request), out);
    if (!strcmp(method, "Fetch.fulfillRequest")) {
        json_t *bp = json_pack("{s:s, s:I, s:o}", "request", request, "statusCode",
                               (json_int_t)bm_num(p, "responseCode"), "headers",
                               bidi_headers(json_object_get(p, "responseHeaders")));
        if (bm_str(p, "body"))
            json_object_set_new(
                bp, "body", json_pack("{s:s, s:s}", "type", "base64", "value", bm_str(p, "body")));
        return bm_send(m, id, K_EMPTY, ctx, "network.provideResponse", bp, out);
    }
    *out = bm_not_supported(id, method);
    return BIDI_ANSWER;
}

void bm_intercept_answered(struct bidi_map *m, const char *ctx, json_t *r, bool failed)
{
    const char *intercept = bm_str(r, "intercept");
    if (failed || !intercept || !json_object_get(m->tops, ctx))
        json_object_del(m->intercepts, ctx);
    else
        json_object_set_new(m->intercepts, ctx, json_string(intercept));
}
