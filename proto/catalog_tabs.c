/*
 * catalog_tabs.c - the session's tabs: browser_tabs and browser_close, as
 * @playwright/mcp names them (core: always on).
 */
#include "catalog_defs.h"

static const char *const tab_action_values[] = {"list", "new", "close", "select", NULL};

static const struct tool_param tabs_params[] = {
    {.name = "action",
     .type = PT_STRING,
     .description = "Operation to perform",
     .required = true,
     .enum_values = tab_action_values},
    {.name = "index",
     .type = PT_INTEGER,
     .description = "Tab index for close/select; close without it: current tab",
     .has_min = true,
     .min = 0,
     .has_max = true,
     .max = 1000},
    {.name = "url",
     .type = PT_STRING,
     .description = "URL to load in the new tab (action new)",
     .has_min = true,
     .min = 1,
     .has_max = true,
     .max = 8192},
    P_SNAPSHOT,
    P_TIMEOUT,
    P_SESSION,
    P_END};

static const struct tool_param close_params[] = {P_TIMEOUT, P_SESSION, P_END};

static const struct tool_field tabs_out[] = {
    {"tabs", PT_ARRAY, "Every tab: {index, url, title, current}.", true},
    {"current", PT_INTEGER, "Index of the current tab.", true},
    O_SNAPSHOT_FIELDS,
    O_PAGE_END};

static const struct tool_def tabs_tools[] = {
    {TOOL(browser_tabs), .title = "Manage tabs",
     .description = "List, create, close, or select a browser tab. Other tools act on the "
                    "current tab.",
     .scope = TOOL_WORKER, .params = tabs_params, .outputs = tabs_out, .destructive = true,
     .open_world = true, .default_timeout_ms = 30000, .modal_ok = true},
    {TOOL(browser_close), .title = "Close browser",
     .description = "Close the page: every tab, cookies and storage. The session goes on with a "
                    "blank tab.",
     .scope = TOOL_WORKER, .params = close_params, .outputs = tabs_out, .destructive = true,
     .idempotent = true, /* closing again leaves the same one blank tab */
     .default_timeout_ms = 10000, .modal_ok = true},
};

const struct tool_group catalog_tabs_tools = TOOL_GROUP(tabs_tools);
