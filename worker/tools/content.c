/* content.c - browser_get_content: the page's, or one target's, content as
 * text, Markdown or HTML (js/content.js makes it in the page). Bounded like
 * every result: the page cuts the content before sending it (maxChars or
 * --max-output-chars, plus one to know it was cut), tool_ok marks the cut;
 * with filename the whole content goes to a file, up to MAX_FILE_CHARS. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "js_content.h"
#include "worker.h"

/* The most a file gets (UTF-16 units as the page counts; docs/limits.md). */
#define MAX_FILE_CHARS (32LL * 1024 * 1024)

json_t *tool_get_content(struct session *w, json_t *args)
{
    const char *format = arg_str(args, "format", "text");
    const char *target = arg_str(args, "target", NULL);
    const char *filename = arg_str(args, "filename", NULL);
    long long max = (long long)max_output(w);
    long long want = arg_int(args, "maxChars", 0);
    if (want > 0 && want < max)
        max = want;
    json_t *o = json_pack("{s:s, s:I}", "format", format, "max",
                          (json_int_t)(filename ? MAX_FILE_CHARS + 1 : max + 1));
    json_t *v = NULL;
    int rc;
    if (target) {
        rc = element_eval(w, target, js_content, o, &v);
    } else {
        char *oj = json_dumps(o, JSON_COMPACT);
        struct sb src = {0};
        sb_printf(&src, "(%s)(null, %s)", js_content, oj ? oj : "{}");
        free(oj);
        rc = util_eval(w, src.p, &v);
        free(src.p);
    }
    json_decref(o);
    if (rc < 0) {
        json_decref(v);
        return tool_fail(w);
    }
    json_t *err = json_object_get(v, "error");
    json_t *content = json_object_get(v, "content");
    if (err || !json_is_string(content)) {
        if (err)
            page_error(w, err, arg_str(args, "element", NULL));
        else
            fail_call(w, TV_BROWSER_ERROR, NULL, "the page returned no content");
        json_decref(v);
        return tool_fail(w);
    }
    page_refresh_info(w);
    const char *text = json_string_value(content);
    size_t len = json_string_length(content);
    long long total = json_integer_value(json_object_get(v, "total"));
    json_t *out = json_pack("{s:s, s:I}", "format", format, "chars", (json_int_t)total);
    add_page(w, out);
    json_t *res;
    if (filename) {
        char path[PATH_MAX + 256];
        if (total > MAX_FILE_CHARS) {
            fail_call(w, TV_NOT_SUPPORTED, "Pass a target to save one part of the page.",
                      "the content has %lld characters, over the %lld a file gets "
                      "(docs/limits.md)",
                      total, MAX_FILE_CHARS);
            res = tool_fail(w);
        } else if (output_write(w, filename, text, len, path, sizeof path) < 0) {
            res = tool_fail(w);
        } else {
            char line[PATH_MAX + 400];
            snprintf(line, sizeof line, "Content (%s, %lld characters) saved to %s", format, total,
                     path);
            json_object_set_new(out, "file", json_string(path));
            res = tool_ok(w, line, out);
            out = NULL;
        }
        json_decref(out);
    } else {
        /* Characters the page left out (it counts UTF-16 units; close enough
         * for a count in a marker). */
        size_t shown = utf8_chars(text, len);
        size_t missing = total > (long long)shown ? (size_t)(total - (long long)shown) : 0;
        if (missing && shown > (size_t)max) {
            /* The page sent one unit past the bound to show it cut: drop it. */
            len = cut_text(text, len, (size_t)max);
            missing += shown - utf8_chars(text, len);
        }
        json_object_set_new(out, "content", json_stringn(text, len));
        json_object_set_new(out, "truncated", json_boolean(missing > 0));
        char *copy = strndup(text, len);
        if (!copy)
            abort();
        res = tool_ok_partial(w, *copy ? copy : "(no content)", missing, out);
        free(copy);
    }
    json_decref(v);
    return res;
}
