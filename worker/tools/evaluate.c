/* evaluate.c - browser_evaluate: run the caller's function in the page's
 * main world (where the page's own globals are), optionally with an element. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "worker.h"

/* Resolve target in our world, then hand the same node to the main world:
 * isolated-world handles cannot cross worlds, backend node ids can. */
static int main_world_element(struct wctx *w, const char *target, char *object_id, size_t len)
{
    json_t *r;
    json_t *jt = json_string(target);
    char *tjson = json_dumps(jt, JSON_ENCODE_ANY);
    json_decref(jt);
    if (!tjson)
        return fail_call(w, TV_INVALID_PARAMETERS, NULL, "bad target");
    size_t n = strlen(tjson) + 200;
    char *expr = malloc(n);
    if (!expr)
        abort();
    snprintf(expr, n,
             "(() => { const r = __tabvisor.resolve(%s); return (r && r.error) ? "
             "JSON.stringify(r.error) : r; })()",
             tjson);
    free(tjson);
    json_t *v;
    /* Make sure the world and script exist before asking for a handle. */
    if (util_eval(w, "0", &v) < 0) {
        free(expr);
        return -1;
    }
    json_decref(v);
    int rc = page_call(w, "Runtime.evaluate",
                       json_pack("{s:s, s:i}", "expression", expr, "contextId", w->util_ctx), &r);
    free(expr);
    if (rc < 0)
        return -1;
    json_t *res = json_object_get(r, "result");
    if (json_is_string(json_object_get(res, "value"))) {
        json_error_t je;
        json_t *err = json_loads(json_string_value(json_object_get(res, "value")), 0, &je);
        const char *code = json_string_value(json_object_get(err, "code"));
        const char *msg = json_string_value(json_object_get(err, "message"));
        enum tv_err e = tv_err_from_code(code ? code : "");
        fail_call(w, e ? e : TV_ELEMENT_NOT_FOUND, "Take a new browser_snapshot.", "%s",
                  msg ? msg : "element not found");
        json_decref(err);
        json_decref(r);
        return -1;
    }
    const char *oid = json_string_value(json_object_get(res, "objectId"));
    if (!oid) {
        json_decref(r);
        return fail_call(w, TV_ELEMENT_NOT_FOUND, NULL, "element not found");
    }
    json_t *d;
    rc = page_call(w, "DOM.describeNode", json_pack("{s:s}", "objectId", oid), &d);
    json_decref(r);
    if (rc < 0)
        return -1;
    json_int_t backend =
        json_integer_value(json_object_get(json_object_get(d, "node"), "backendNodeId"));
    json_decref(d);
    if (page_call(w, "DOM.resolveNode", json_pack("{s:I}", "backendNodeId", backend), &r) < 0)
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
        if (main_world_element(w, target, oid, sizeof oid) < 0)
            return tool_fail(w);
        rc = page_call(w, "Runtime.callFunctionOn",
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
        const char *d =
            json_string_value(json_object_get(json_object_get(exc, "exception"), "description"));
        if (!d)
            d = json_string_value(json_object_get(exc, "text"));
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
