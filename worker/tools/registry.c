/* registry.c - worker-side dispatch: catalog name -> handler. A unit test
 * checks that every TOOL_WORKER entry of the catalog has one. */
#include <string.h>

#include "worker.h"

static const struct {
    const char *name;
    tool_fn fn;
} handlers[] = {
    {"browser_navigate", tool_navigate},
    {"browser_snapshot", tool_snapshot},
    {"browser_click", tool_click},
    {"browser_type", tool_type},
    {"browser_evaluate", tool_evaluate},
    {"browser_take_screenshot", tool_screenshot},
    {"browser_find", tool_find},
    {"browser_handle_dialog", tool_handle_dialog},
    {"browser_navigate_back", tool_navigate_back},
    {"browser_navigate_forward", tool_navigate_forward},
    {"browser_reload", tool_reload},
    {"browser_press_key", tool_press_key},
    {"browser_hover", tool_hover},
    {"browser_drag", tool_drag},
    {"browser_select_option", tool_select_option},
    {"browser_fill_form", tool_fill_form},
    {"browser_wait_for", tool_wait_for},
    {"browser_resize", tool_resize},
    {"browser_console_messages", tool_console_messages},
    {"browser_network_requests", tool_network_requests},
    {"browser_network_request", tool_network_request},
    {"browser_tabs", tool_tabs},
    {"browser_close", tool_close},
};

tool_fn tools_find(const char *name)
{
    for (size_t i = 0; i < sizeof handlers / sizeof handlers[0]; i++)
        if (strcmp(handlers[i].name, name) == 0)
            return handlers[i].fn;
    return NULL;
}
