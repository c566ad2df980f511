/* registry.c - worker-side dispatch: catalog name -> handler. A unit test
 * checks that every TOOL_WORKER entry of the catalog has one. */
#include <string.h>

#include "worker.h"

static const struct {
    const char *name;
    tool_fn fn;
} handlers[] = {
    {"browser_navigate", tool_navigate}, {"browser_snapshot", tool_snapshot},
    {"browser_click", tool_click},       {"browser_type", tool_type},
    {"browser_evaluate", tool_evaluate}, {"browser_take_screenshot", tool_screenshot},
    {"browser_find", tool_find},
    {"browser_handle_dialog", tool_handle_dialog},
};

tool_fn tools_find(const char *name)
{
    for (size_t i = 0; i < sizeof handlers / sizeof handlers[0]; i++)
        if (strcmp(handlers[i].name, name) == 0)
            return handlers[i].fn;
    return NULL;
}
