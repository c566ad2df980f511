/* result.c - tool results as the supervisor forwards them (MSG_RESULT body). */
#include <stdio.h>
#include <string.h>

#include "worker.h"

void add_page(struct wctx *w, json_t *structured)
{
    json_object_set_new(structured, "url", json_string(w->url));
    json_object_set_new(structured, "title", json_string(w->title));
}

json_t *tool_ok(struct wctx *w, const char *text, json_t *structured)
{
    json_t *content = json_array();
    if (w->dialog_note[0]) {
        json_array_append_new(content,
                              json_pack("{s:s, s:s}", "type", "text", "text", w->dialog_note));
        w->dialog_note[0] = 0;
    }
    json_array_append_new(content, json_pack("{s:s, s:s}", "type", "text", "text", text));
    return json_pack("{s:o, s:o, s:b}", "content", content, "structured", structured, "isError", 0);
}

json_t *tool_fail(struct wctx *w)
{
    json_t *page = json_pack("{s:s, s:s}", "url", w->url, "title", w->title);
    json_t *r = tv_error_result(w->err ? w->err : TV_BROWSER_ERROR, w->errmsg,
                                w->errhint[0] ? w->errhint : NULL, w->session_id, page);
    json_decref(page);
    /* tv_error_result is shaped for MCP; the wire body names it "structured". */
    json_t *body = json_pack("{s:O, s:O, s:b}", "content", json_object_get(r, "content"),
                             "structured", json_object_get(r, "structuredContent"), "isError", 1);
    json_decref(r);
    return body;
}

json_t *action_result(struct wctx *w, const char *verb, json_t *target_info)
{
    const char *ref = json_string_value(json_object_get(target_info, "ref"));
    const char *role = json_string_value(json_object_get(target_info, "role"));
    const char *name = json_string_value(json_object_get(target_info, "name"));
    page_refresh_info(w);
    json_t *out = json_object();
    if (ref)
        json_object_set_new(out, "ref", json_string(ref));
    add_page(w, out);
    char text[3000];
    snprintf(text, sizeof text, "%s %s \"%.200s\"%s%s%s\nPage URL: %s\nPage Title: %s", verb,
             role ? role : "element", name ? name : "", ref ? " [ref=" : "", ref ? ref : "",
             ref ? "]" : "", w->url, w->title);
    return tool_ok(w, text, out);
}

const char *arg_str(json_t *args, const char *name, const char *dflt)
{
    const char *s = json_string_value(json_object_get(args, name));
    return s ? s : dflt;
}

long long arg_int(json_t *args, const char *name, long long dflt)
{
    json_t *v = json_object_get(args, name);
    return json_is_number(v) ? (long long)json_number_value(v) : dflt;
}

bool arg_bool(json_t *args, const char *name, bool dflt)
{
    json_t *v = json_object_get(args, name);
    return json_is_boolean(v) ? json_is_true(v) : dflt;
}
