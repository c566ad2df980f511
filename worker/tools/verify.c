/* verify.c - the testing group: browser_verify_element_visible,
 * _text_visible, _list_visible, _value and browser_generate_locator. The
 * checks run once, in the page (js/checks.js), on the page as it is now:
 * they assert, they do not wait (browser_wait_for waits). A check that does
 * not hold is VERIFICATION_FAILED with what was found; a target that does
 * not resolve keeps its own error (ELEMENT_NOT_FOUND, STALE_REF, ...). */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "js_checks.h"
#include "worker.h"

/* js/checks.js on the whole main frame (el = null) with o. o borrowed. */
static int check_page(struct session *w, json_t *o, json_t **v)
{
    char *oj = json_dumps(o, JSON_COMPACT);
    if (!oj)
        return fail_call(w, TV_INVALID_PARAMETERS, NULL, "arguments cannot be encoded");
    struct sb src = {0};
    sb_printf(&src, "(%s)(null, %s)", js_checks, oj);
    free(oj);
    int rc = util_eval(w, src.p, v);
    free(src.p);
    return rc;
}

/* The result of a check's value v (stolen): success line ok_line, else the
 * failure the page described. */
static json_t *verdict(struct session *w, json_t *v, const char *ok_line, const char *element)
{
    json_t *err = json_object_get(v, "error");
    const char *fail = json_string_value(json_object_get(v, "fail"));
    if (err) {
        page_error(w, err, element);
        json_decref(v);
        return tool_fail(w);
    }
    page_refresh_info(w);
    if (fail) {
        fail_call(w, TV_VERIFICATION_FAILED,
                  "Take a browser_snapshot to see the page as it is, or browser_wait_for it first.",
                  "Verification failed: %s%s%s", element ? element : "", element ? ": " : "", fail);
        json_t *res = tool_fail(w);
        json_t *st = json_object_get(res, "structured");
        json_object_set_new(st, "verified", json_false());
        if (json_object_get(v, "actual"))
            json_object_set(st, "actual", json_object_get(v, "actual"));
        if (json_object_get(v, "missing"))
            json_object_set(st, "missing", json_object_get(v, "missing"));
        json_decref(v);
        return res;
    }
    json_t *out = json_pack("{s:b}", "verified", 1);
    if (json_object_get(v, "actual"))
        json_object_set(out, "actual", json_object_get(v, "actual"));
    json_decref(v);
    add_page(w, out);
    return tool_ok(w, ok_line, out);
}

/* A check on the whole page with o (stolen): its verdict. */
static json_t *check_whole_page(struct session *w, json_t *o, const char *ok_line)
{
    json_t *v;
    int rc = check_page(w, o, &v);
    json_decref(o);
    return rc < 0 ? tool_fail(w) : verdict(w, v, ok_line, NULL);
}

json_t *tool_verify_element_visible(struct session *w, json_t *args)
{
    const char *role = arg_str(args, "role", ""), *name = arg_str(args, "accessibleName", "");
    char line[1200];
    snprintf(line, sizeof line, "Verified: %.100s \"%.1000s\" is visible", role, name);
    return check_whole_page(
        w, json_pack("{s:s, s:s, s:s}", "kind", "role", "role", role, "name", name), line);
}

json_t *tool_verify_text_visible(struct session *w, json_t *args)
{
    const char *text = arg_str(args, "text", "");
    char line[1200];
    snprintf(line, sizeof line, "Verified: text \"%.1000s\" is visible", text);
    return check_whole_page(w, json_pack("{s:s, s:s}", "kind", "text", "text", text), line);
}

/* A check on the target's element with o (borrowed), in its frame. */
static json_t *check_element(struct session *w, json_t *args, json_t *o, const char *ok_line)
{
    const char *element = arg_str(args, "element", NULL);
    json_t *v;
    if (element_eval(w, arg_str(args, "target", ""), js_checks, o, &v) < 0)
        return tool_fail(w);
    return verdict(w, v, ok_line, element);
}

json_t *tool_verify_list_visible(struct session *w, json_t *args)
{
    json_t *items = json_object_get(args, "items");
    json_t *o = json_pack("{s:s, s:O}", "kind", "list", "items", items);
    char line[200];
    snprintf(line, sizeof line, "Verified: the list shows all %zu items", json_array_size(items));
    json_t *res = check_element(w, args, o, line);
    json_decref(o);
    return res;
}

json_t *tool_verify_value(struct session *w, json_t *args)
{
    const char *type = arg_str(args, "type", "textbox"), *value = arg_str(args, "value", "");
    json_t *o = json_pack("{s:s, s:s, s:s}", "kind", "value", "type", type, "value", value);
    char line[1200];
    snprintf(line, sizeof line, "Verified: the %s's value is \"%.1000s\"", type, value);
    json_t *res = check_element(w, args, o, line);
    json_decref(o);
    return res;
}

/* True for a ref of an element inside an iframe (f<K>e<N>). */
static bool frame_ref(const char *t)
{
    if (t[0] != 'f' || !isdigit((unsigned char)t[1]))
        return false;
    t++;
    while (isdigit((unsigned char)*t))
        t++;
    if (*t++ != 'e' || !isdigit((unsigned char)*t))
        return false;
    while (isdigit((unsigned char)*t))
        t++;
    return *t == 0;
}

json_t *tool_generate_locator(struct session *w, json_t *args)
{
    const char *target = arg_str(args, "target", "");
    if (frame_ref(target)) {
        fail_call(w, TV_NOT_SUPPORTED, "Use the ref itself as the target.",
                  "%s is inside an iframe, and selectors address the main frame only", target);
        return tool_fail(w);
    }
    json_t *o = json_pack("{s:s, s:s}", "kind", "locator", "target", target);
    json_t *v;
    int rc = element_eval(w, target, js_checks, o, &v);
    json_decref(o);
    if (rc < 0)
        return tool_fail(w);
    json_t *err = json_object_get(v, "error");
    const char *loc = json_string_value(json_object_get(v, "locator"));
    if (err || !loc) {
        if (err)
            page_error(w, err, arg_str(args, "element", NULL));
        else
            fail_call(w, TV_BROWSER_ERROR, NULL, "the page returned no locator");
        json_decref(v);
        return tool_fail(w);
    }
    page_refresh_info(w);
    char what[400], line[5000];
    describe_element(v, what, sizeof what);
    snprintf(line, sizeof line, "Locator for %s:\n%s", what, loc);
    json_t *out = json_pack("{s:s}", "locator", loc);
    if (json_is_string(json_object_get(v, "ref")))
        json_object_set(out, "ref", json_object_get(v, "ref"));
    json_decref(v);
    add_page(w, out);
    return tool_ok(w, line, out);
}
