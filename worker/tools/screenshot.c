/* screenshot.c - browser_take_screenshot. */
#include <stdio.h>
#include <string.h>

#include "worker.h"

json_t *tool_screenshot(struct wctx *w, json_t *args)
{
    const char *type = arg_str(args, "type", "png");
    bool full = arg_bool(args, "fullPage", false);
    json_t *params = json_pack("{s:s}", "format", type);
    if (!strcmp(type, "jpeg"))
        json_object_set_new(params, "quality", json_integer(80));
    if (full) {
        json_t *m;
        if (page_call(w, "Page.getLayoutMetrics", NULL, &m) < 0) {
            json_decref(params);
            return tool_fail(w);
        }
        json_t *size = json_object_get(m, "cssContentSize");
        double cw = json_number_value(json_object_get(size, "width"));
        double ch = json_number_value(json_object_get(size, "height"));
        /* Chromium caps a texture at 16384 px per side. */
        if (ch > 16384)
            ch = 16384;
        json_object_set_new(params, "clip",
                            json_pack("{s:f, s:f, s:f, s:f, s:f}", "x", 0.0, "y", 0.0, "width", cw,
                                      "height", ch, "scale", 1.0));
        json_object_set_new(params, "captureBeyondViewport", json_true());
        json_decref(m);
    }
    json_t *r;
    if (page_call(w, "Page.captureScreenshot", params, &r) < 0)
        return tool_fail(w);
    const char *data = json_string_value(json_object_get(r, "data"));
    size_t b64 = data ? strlen(data) : 0;
    size_t bytes = b64 / 4 * 3 - (b64 && data[b64 - 1] == '=') - (b64 > 1 && data[b64 - 2] == '=');
    const char *mime = !strcmp(type, "jpeg") ? "image/jpeg" : "image/png";
    page_refresh_info(w);
    json_t *out = json_pack("{s:s, s:I}", "mimeType", mime, "bytes", (json_int_t)bytes);
    add_page(w, out);
    char text[2600];
    snprintf(text, sizeof text, "Screenshot of %s (%s, %zu bytes)", w->url,
             full ? "full page" : "viewport", bytes);
    json_t *res = tool_ok(w, text, out);
    json_array_append_new(
        json_object_get(res, "content"),
        json_pack("{s:s, s:s, s:s}", "type", "image", "data", data ? data : "", "mimeType", mime));
    json_decref(r);
    return res;
}
