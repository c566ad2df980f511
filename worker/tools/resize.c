/* resize.c - browser_resize: the page's viewport in CSS pixels. */
#include <stdio.h>

#include "worker.h"

json_t *tool_resize(struct session *w, json_t *args)
{
    int width = (int)arg_int(args, "width", w->viewport_w);
    int height = (int)arg_int(args, "height", w->viewport_h);
    nav_reset(w);
    if (page_call(w, "Emulation.setDeviceMetricsOverride",
                  json_pack("{s:i, s:i, s:i, s:b}", "width", width, "height", height,
                            "deviceScaleFactor", 1, "mobile", 0),
                  NULL) < 0 ||
        settle(w) < 0)
        return tool_fail(w);
    w->viewport_w = width;
    w->viewport_h = height;
    char line[100];
    snprintf(line, sizeof line, "Resized the viewport to %dx%d", width, height);
    return page_action_result(w, line, json_pack("{s:i, s:i}", "width", width, "height", height));
}
