/*
 * fuzz_bidi_map.c - the worker's BiDi map (worker/cdp/bidi_map.h) on what
 * Firefox sends: arbitrary JSON as answers and events, after a page and a
 * few commands of every kind are in flight. Never a crash or a leak, every
 * CDP message it makes is an object with an id or a method, and events
 * come out only on sessions the map announced (the page, its frames).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "bidi_map.h"

/* The sessions the map announced (Target.attachedToTarget: the page
 * "top", then its frames) for this input; events may name only those. */
static json_t *announced;

static void check(void *ud, json_t *cdp)
{
    (void)ud;
    if (!json_is_object(cdp) || (!json_object_get(cdp, "id") && !json_object_get(cdp, "method")))
        abort();
    const char *s = json_string_value(json_object_get(cdp, "sessionId"));
    if (s && strcmp(s, "top") != 0 && !json_object_get(announced, s))
        abort();
    const char *method = json_string_value(json_object_get(cdp, "method"));
    const char *sid =
        json_string_value(json_object_get(json_object_get(cdp, "params"), "sessionId"));
    if (method && !strcmp(method, "Target.attachedToTarget") && sid)
        json_object_set_new(announced, sid, json_true());
}

/* Commands whose answers the input may be: one of each kind of answer. */
static void seed(struct bidi_map *m)
{
    static const char *const cmds[][2] = {
        {"Page.navigate", "{\"url\":\"http://a.test/\"}"},
        {"Runtime.evaluate", "{\"expression\":\"1\"}"},
        {"Runtime.evaluate", "{\"expression\":\"1\",\"contextId\":1}"},
        {"Page.captureScreenshot", "{}"},
        {"Page.getLayoutMetrics", "{}"},
        {"Page.addScriptToEvaluateOnNewDocument", "{\"source\":\"1\"}"},
        {"Page.navigateToHistoryEntry", "{\"entryId\":-1}"},
        {"DOM.getFrameOwner", "{\"frameId\":\"child\"}"},
        {"DOM.describeNode", "{\"objectId\":\"bidi-node:1:0\"}"},
        {"Input.insertText", "{\"text\":\"h\\u00e9\"}"},
        {"Network.getResponseBody", "{\"requestId\":\"r1\"}"},
        {"Network.getRequestPostData", "{\"requestId\":\"r1\"}"},
        {"Network.getAllCookies", "{}"},
        {"Network.setCookie", "{\"name\":\"a\",\"value\":\"b\",\"url\":\"http://a.test/\"}"},
        {"Fetch.enable", "{}"},
        {"Page.printToPDF", "{\"transferMode\":\"ReturnAsStream\"}"},
        {"Page.printToPDF", "{}"},
    };
    json_t *out;
    json_t *p = json_pack("{s:s}", "browserContextId", "u");
    bidi_map_command(m, 1, NULL, "Target.createTarget", p, &out);
    json_decref(p);
    json_decref(out);
    json_t *a =
        json_pack("{s:s, s:i, s:{s:s}}", "type", "success", "id", 1, "result", "context", "top");
    bidi_map_answer(m, a, check, NULL);
    json_decref(a);
    json_t *ev = json_pack("{s:s, s:{s:s, s:s}}", "method", "browsingContext.contextCreated",
                           "params", "context", "child", "parent", "top");
    bidi_map_event(m, ev, check, NULL);
    json_decref(ev);
    p = json_pack("{s:s, s:s}", "frameId", "top", "worldName", "tabvisor");
    bidi_map_command(m, 2, "top", "Page.createIsolatedWorld", p, &out);
    json_decref(p);
    json_decref(out);
    for (size_t i = 0; i < sizeof cmds / sizeof cmds[0]; i++) {
        p = json_loads(cmds[i][1], 0, NULL);
        bidi_map_command(m, 10 + (long long)i, "top", cmds[i][0], p, &out);
        json_decref(p);
        json_decref(out);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    json_t *msg = json_loadb((const char *)data, size, JSON_DECODE_ANY, NULL);
    if (!msg)
        return 0;
    struct bidi_map *m = bidi_map_new();
    if (!m)
        abort();
    announced = json_object();
    seed(m);
    if (json_object_get(msg, "id"))
        bidi_map_answer(m, msg, check, NULL);
    else
        bidi_map_event(m, msg, check, NULL);
    /* The same message again, once the map has seen it (a node it numbered,
     * a frame it attached). */
    if (json_object_get(msg, "id"))
        bidi_map_answer(m, msg, check, NULL);
    else
        bidi_map_event(m, msg, check, NULL);
    bidi_map_free(m);
    json_decref(announced);
    json_decref(msg);
    return 0;
}
