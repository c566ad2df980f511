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
