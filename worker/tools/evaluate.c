/* evaluate.c - browser_evaluate: run the caller's function in the page's
 * main world (where the page's own globals are), optionally with an element;
 * with an element inside an iframe (f<K>e<N>), in that frame's main world. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "frames.h"
#include "worker.h"

/* Resolve target in our world of its frame, then hand the same node to that
 * frame's main world: isolated-world handles cannot cross worlds, backend
 * node ids can. */
static int main_world_element(struct wctx *w, struct frame *f, const char *target, char *object_id,
                              size_t len)
{
    long long backend;
    if (frame_node(w, f, target, &backend, NULL, 0) < 0)
        return -1;
    json_t *r;
    if (frame_cdp(w, f, "DOM.resolveNode", json_pack("{s:I}", "backendNodeId", (json_int_t)backend),
                  &r) < 0)
        return -1;
    const char *moid = json_string_value(json_object_get(json_object_get(r, "object"), "objectId"));
    snprintf(object_id, len, "%s", moid ? moid : "");
    json_decref(r);
    return moid ? 0 : fail_call(w, TV_ELEMENT_NOT_FOUND, NULL, "element not found");
}

json_t *tool_evaluate(struct wctx *w, json_t *args)
{
    const char *fn = arg_str(args, "function", "");
    const char *target = arg_str(args, "target", NULL);
    json_t *r;
    int rc;
    if (target) {
        char oid[256];
        struct frame *f = frame_for_target(w, target);
        if (!f || main_world_element(w, f, target, oid, sizeof oid) < 0)
            return tool_fail(w);
        rc = frame_cdp(w, f, "Runtime.callFunctionOn",
                       json_pack("{s:s, s:s, s:[{s:s}], s:b, s:b, s:b}", "functionDeclaration", fn,
                                 "objectId", oid, "arguments", "objectId", oid, "awaitPromise", 1,
                                 "returnByValue", 1, "userGesture", 1),
                       &r);
    } else {
        size_t n = strlen(fn) + 16;
        char *expr = malloc(n);
        if (!expr)
            abort();
        /* Wrapping in parentheses and calling accepts both function
         * expressions and arrow functions. */
        snprintf(expr, n, "(%s)()", fn);
        rc = page_call(w, "Runtime.evaluate",
                       json_pack("{s:s, s:b, s:b, s:b}", "expression", expr, "awaitPromise", 1,
                                 "returnByValue", 1, "userGesture", 1),
                       &r);
        free(expr);
    }
    if (rc < 0)
        return tool_fail(w);
    json_t *exc = json_object_get(r, "exceptionDetails");
    if (exc) {
        const char *d = exception_text(exc);
        fail_call(w, TV_BROWSER_ERROR, "Fix the function; it must be a function expression.",
                  "the function threw: %.800s", d ? d : "unknown error");
        json_decref(r);
        return tool_fail(w);
    }
    json_t *res = json_object_get(r, "result");
    json_t *value = json_object_get(res, "value");
    const char *type = json_string_value(json_object_get(res, "type"));
    json_t *out = json_object();
    json_t *wrapped = json_object();
    if (value)
        json_object_set(wrapped, "value", value);
    json_object_set_new(out, "result", wrapped);
    page_refresh_info(w);
    add_page(w, out);
    char *text = value ? json_dumps(value, JSON_ENCODE_ANY | JSON_COMPACT) : NULL;
    json_t *ret =
        tool_ok(w, text ? text : (type && !strcmp(type, "undefined") ? "undefined" : "null"), out);
    free(text);
    json_decref(r);
    return ret;
}
