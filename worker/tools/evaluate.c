/* evaluate.c - browser_evaluate: run the caller's function in the page's
 * main world (where the page's own globals are), optionally with an element;
 * with an element inside an iframe (f<K>e<N>), in that frame's main world. */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "frames.h"
#include "worker.h"

int main_world_element(struct session *w, struct frame *f, const char *target, char *object_id,
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

/*
 * The caller's value is serialised in the page and only its first `limit`
 * characters cross to us, as one string: a function returning 20 MB of JSON
 * used to arrive as a 20 MB CDP message parsed into a tree of a million
 * values (the worker peaked at 23x the value). limit is what the response
 * can show (--max-output-chars), so nothing of use is lost. Lone surrogate
 * halves are not cut off into the JSON, which could not be parsed.
 * Returns {undef:true}, {json} or, when cut, {json, length}.
 */
#define PACK_FN                                                                                    \
    "(v, limit) => {\n"                                                                            \
    "  const s = v === undefined ? undefined : JSON.stringify(v);\n"                               \
    "  if (typeof s !== 'string') return {undef: true};\n"                                         \
    "  if (s.length <= limit) return {json: s};\n"                                                 \
    "  let head = s.slice(0, limit);\n"                                                            \
    "  const last = head.charCodeAt(head.length - 1);\n"                                           \
    "  if (last >= 0xd800 && last <= 0xdbff) head = head.slice(0, -1);\n"                          \
    "  return {json: head, length: s.length};\n"                                                   \
    "}"

/* Pack the caller's result r (with the limit as %zu): at once when it is a
 * plain value, after it settles when it is a promise. An async wrapper
 * would make every call a promise, and CDP's awaitPromise path costs a
 * tenth of a millisecond more than a plain return (bench/ab.mjs). */
#define THEN_PACK                                                                                  \
    "(r !== null && (typeof r === 'object' || typeof r === 'function') && "                        \
    "typeof r.then === 'function') ? Promise.resolve(r).then((v) => pack(v, %zu)) : pack(r, %zu)"

/* A value with more values than this, or nested deeper, is left out of the
 * structured copy (the text keeps the JSON): a value is a few characters of
 * JSON but ~100 bytes of tree, and a message has room for PROTO_MAX_ELEMENTS
 * values, nested PROTO_MAX_DEPTH deep, envelope and result included. */
#define MAX_VALUE_ELEMENTS 100000
#define MAX_VALUE_DEPTH 32

/* Whether v fits in *budget values and depth more levels (counting down). */
static bool value_fits(json_t *v, size_t *budget, int depth)
{
    size_t i;
    const char *key;
    json_t *x;
    if (*budget == 0 || depth == 0)
        return false;
    --*budget;
    if (json_is_array(v)) {
        json_array_foreach(v, i, x)
        {
            if (!value_fits(x, budget, depth - 1))
                return false;
        }
    } else if (json_is_object(v)) {
        json_object_foreach(v, key, x)
        {
            /* The key is a value of the message too. */
            if (*budget == 0)
                return false;
            --*budget;
            if (!value_fits(x, budget, depth - 1))
                return false;
        }
    }
    return true;
}

/* The response for a {undef} / {json[, length]} object from PACK_FN. */
static json_t *evaluate_result(struct session *w, json_t *packed)
{
    json_t *out = json_object();
    json_t *wrapped = json_object();
    json_object_set_new(out, "result", wrapped);
    page_refresh_info(w);
    add_page(w, out);
    json_t *js = json_object_get(packed, "json");
    if (!json_is_string(js))
        return tool_ok(w, "undefined", out);
    const char *text = json_string_value(js);
    json_t *length = json_object_get(packed, "length");
    if (json_is_integer(length)) {
        /* Cut in the page: no value to give, only the start of its JSON. */
        size_t have = utf8_chars(text, json_string_length(js));
        json_int_t total = json_integer_value(length);
        json_object_set_new(out, "truncated", json_true());
        return tool_ok_partial(w, text, total > (json_int_t)have ? (size_t)total - have : 1, out);
    }
    json_error_t jerr;
    json_t *value =
        json_loadb(text, json_string_length(js), JSON_DECODE_ANY | JSON_ALLOW_NUL, &jerr);
    size_t budget = MAX_VALUE_ELEMENTS;
    if (value && value_fits(value, &budget, MAX_VALUE_DEPTH))
        json_object_set(wrapped, "value", value);
    else
        json_object_set_new(out, "truncated", json_true());
    json_decref(value);
    return tool_ok(w, text, out);
}

json_t *tool_evaluate(struct session *w, json_t *args)
{
    const char *fn = arg_str(args, "function", "");
    const char *target = arg_str(args, "target", NULL);
    /* The caller's source goes on lines of its own, so a trailing // comment
     * cannot swallow what follows. */
    struct sb src = {0};
    json_t *r;
    int rc;
    if (target) {
        char oid[256];
        struct frame *f = frame_for_target(w, target);
        if (!f || main_world_element(w, f, target, oid, sizeof oid) < 0)
            return tool_fail(w);
        sb_printf(&src,
                  "function (el) {\n  const pack = " PACK_FN
                  ";\n  const r = (\n%s\n).call(this, el);\n"
                  "  return " THEN_PACK ";\n}",
                  fn, max_output(w), max_output(w));
        rc = frame_cdp(w, f, "Runtime.callFunctionOn",
                       json_pack("{s:s, s:s, s:[{s:s}], s:b, s:b, s:b}", "functionDeclaration",
                                 src.p, "objectId", oid, "arguments", "objectId", oid,
                                 "awaitPromise", 1, "returnByValue", 1, "userGesture", 1),
                       &r);
    } else {
        /* Wrapping in parentheses and calling accepts both function
         * expressions and arrow functions. */
        sb_printf(&src,
                  "(() => {\n  const pack = " PACK_FN
                  ";\n  const r = (\n%s\n)();\n  return " THEN_PACK ";\n})()",
                  fn, max_output(w), max_output(w));
        rc = page_call(w, "Runtime.evaluate",
                       json_pack("{s:s, s:b, s:b, s:b}", "expression", src.p, "awaitPromise", 1,
                                 "returnByValue", 1, "userGesture", 1),
                       &r);
    }
    free(src.p);
    if (rc < 0)
        return tool_fail(w);
    json_t *exc = json_object_get(r, "exceptionDetails");
    if (exc) {
        const char *d = exception_text(exc);
        fail_call(w, TV_BROWSER_ERROR,
                  "Fix the function; it must be a function expression whose value is "
                  "JSON-serialisable.",
                  "the function threw: %.800s", d ? d : "unknown error");
        json_decref(r);
        return tool_fail(w);
    }
    json_t *ret = evaluate_result(w, json_object_get(json_object_get(r, "result"), "value"));
    json_decref(r);
    return ret;
}
