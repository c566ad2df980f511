/* screenshot.c - browser_take_screenshot: in the result, or with filename
 * to a file under the output dir. */
#include <stdio.h>
#include <string.h>

#include "worker.h"

/* The largest image a result carries, as base64. The official MCP SDK's
 * stdio client refuses a message over 10 MiB by closing the connection
 * (STDIO_DEFAULT_MAX_BUFFER_SIZE), so a bigger image would cost the client
 * every session, not just this call; 9 MiB leaves room for the text. */
#define MAX_IMAGE_BASE64 (9u * 1024 * 1024)

json_t *tool_screenshot(struct session *w, json_t *args)
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
    json_t *data = json_object_get(r, "data");
    if (!json_is_string(data)) {
        json_decref(r);
        fail_call(w, TV_BROWSER_ERROR, NULL, "the browser returned no image");
        return tool_fail(w);
    }
    const char *b64 = json_string_value(data);
    size_t b64len = json_string_length(data);
    size_t bytes = b64len / 4 * 3 - (b64len && b64[b64len - 1] == '=') -
                   (b64len > 1 && b64[b64len - 2] == '=');
    const char *mime = !strcmp(type, "jpeg") ? "image/jpeg" : "image/png";
    const char *filename = arg_str(args, "filename", NULL);
    char path[PATH_MAX + 256];
    if (filename && output_write_base64(w, filename, b64, b64len, path, sizeof path, &bytes) < 0) {
        json_decref(r);
        return tool_fail(w);
    }
    /* A page can make an image of any size (a tall page of noise: ~60 MB);
     * over what a result may carry it fails here, saying what to do. */
    if (!filename && b64len > MAX_IMAGE_BASE64) {
        json_decref(r);
        fail_call(w, TV_NOT_SUPPORTED,
                  "Pass filename to save it to a file, take the viewport only (no fullPage), or "
                  "use type jpeg.",
                  "the %s screenshot is too large for a result: %zu bytes, %zu as base64, over "
                  "the %u MiB of base64 a result may carry (docs/limits.md)",
                  full ? "full-page" : "viewport", bytes, b64len, MAX_IMAGE_BASE64 >> 20);
        return tool_fail(w);
    }
    page_refresh_info(w);
    json_t *out = json_pack("{s:s, s:I}", "mimeType", mime, "bytes", (json_int_t)bytes);
    add_page(w, out);
    char text[PATH_MAX + 2900];
    int n = snprintf(text, sizeof text, "Screenshot of %s (%s, %zu bytes)", w->page->url,
                     full ? "full page" : "viewport", bytes);
    if (filename) {
        snprintf(text + n, sizeof text - (size_t)n, " saved to %s", path);
        json_object_set_new(out, "file", json_string(path));
    }
    json_t *res = tool_ok(w, text, out);
    /* The image is the browser's string itself (O: no copy of megabytes). */
    if (!filename)
        json_array_append_new(
            json_object_get(res, "content"),
            json_pack("{s:s, s:O, s:s}", "type", "image", "data", data, "mimeType", mime));
    json_decref(r);
    return res;
}
