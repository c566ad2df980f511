/* snapshot.c - browser_snapshot: the injected engine builds the text; this
 * file adds page info and bounds the size. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "worker.h"

#define DEFAULT_MAX_CHARS 200000

/* Cut text at the last line break before max chars; returns the kept length. */
static size_t cut_at_line(const char *text, size_t len, size_t max)
{
    if (len <= max)
        return len;
    size_t keep = max;
    while (keep > 0 && text[keep - 1] != '\n')
        keep--;
    return keep ? keep : max;
}

json_t *tool_snapshot(struct wctx *w, json_t *args)
{
    json_t *opts = json_object();
    if (json_object_get(args, "target"))
        json_object_set(opts, "target", json_object_get(args, "target"));
    if (json_object_get(args, "depth"))
        json_object_set(opts, "depth", json_object_get(args, "depth"));
    if (json_object_get(args, "interactive"))
        json_object_set(opts, "interactive", json_object_get(args, "interactive"));
    json_t *v;
    if (util_call(w, "snapshot", opts, &v) < 0)
        return tool_fail(w);
    json_t *err = json_object_get(v, "error");
    if (err) {
        const char *code = json_string_value(json_object_get(err, "code"));
        const char *msg = json_string_value(json_object_get(err, "message"));
        enum tv_err e = tv_err_from_code(code ? code : "");
        fail_call(w, e ? e : TV_BROWSER_ERROR, NULL, "%s", msg ? msg : "snapshot failed");
        json_decref(v);
        return tool_fail(w);
    }
    const char *text = json_string_value(json_object_get(v, "text"));
    size_t len = text ? strlen(text) : 0;
    size_t max = (size_t)arg_int(args, "maxChars", DEFAULT_MAX_CHARS);
    size_t keep = cut_at_line(text ? text : "", len, max);
    bool truncated = keep < len;
    page_refresh_info(w);

    json_t *out = json_object();
    json_object_set_new(out, "snapshot", json_stringn(text ? text : "", keep));
    json_object_set_new(out, "truncated", json_boolean(truncated));
    add_page(w, out);

    size_t cap = keep + strlen(w->url) + strlen(w->title) + 256;
    char *body = malloc(cap);
    if (!body)
        abort();
    int n = snprintf(body, cap, "- Page URL: %s\n- Page Title: %s\n- Page Snapshot:\n```yaml\n%.*s",
                     w->url, w->title, (int)keep, text ? text : "");
    if (keep && text[keep - 1] != '\n')
        n += snprintf(body + n, cap - (size_t)n, "\n");
    if (truncated)
        n += snprintf(body + n, cap - (size_t)n,
                      "[truncated: %zu more characters; use target, depth or interactive, or "
                      "raise maxChars]\n",
                      len - keep);
    snprintf(body + n, cap - (size_t)n, "```");
    json_t *res = tool_ok(w, body, out);
    free(body);
    json_decref(v);
    return res;
}
