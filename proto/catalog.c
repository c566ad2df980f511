/*
 * catalog.c - the tool catalog: every tool tabvisor offers, declared once.
 *
 * Names and argument names follow Playwright's MCP server (target, element,
 * text, function, url) so prompts written for it work unchanged; tabvisor
 * only adds arguments (sessionId, timeout, ...).
 */
#include "catalog.h"
#include "catalog_defs.h"

#include "utf8.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

const char *const wait_until_values[] = {"load", "domcontentloaded", "networkidle", "commit", NULL};
const char *const button_values[] = {"left", "right", "middle", NULL};
const char *const modifier_values[] = {"Alt", "Control", "ControlOrMeta", "Meta", "Shift", NULL};
const char *const image_type_values[] = {"png", "jpeg", NULL};
const char *const snapshot_mode_values[] = {"full", "diff", "none", NULL};

static const struct tool_param no_params[] = {P_END};

static const struct tool_param session_close_params[] = {{.name = "sessionId",
                                                          .type = PT_STRING,
                                                          .description = NULL,
                                                          .required = true,
                                                          .has_min = true,
                                                          .min = 1,
                                                          .has_max = true,
                                                          .max = TV_SESSION_ID_MAX},
                                                         P_END};

static const struct tool_param navigate_params[] = {
    {.name = "url",
     .type = PT_STRING,
     .description = "http(s), about:blank or data: URL; a bare host means http://",
     .required = true,
     .has_min = true,
     .min = 1,
     .has_max = true,
     .max = 65536},
    {.name = "waitUntil",
     .type = PT_STRING,
     .description = "When navigation is done (default load)",
     .enum_values = wait_until_values},
    P_SNAPSHOT,
    P_TIMEOUT,
    P_SESSION,
    P_END};

static const struct tool_param snapshot_params[] = {
    P_TARGET(false),
    {.name = "depth",
     .type = PT_INTEGER,
     .description = "Tree levels below the root.",
     .has_min = true,
     .min = 0,
     .has_max = true,
     .max = 1000},
    {.name = "interactive",
     .type = PT_BOOLEAN,
     .description = "Only actionable elements and their context."},
    {.name = "maxChars",
     .type = PT_INTEGER,
     .description = "Cut after this many characters.",
     .has_min = true,
     .min = 100,
     .has_max = true,
     .max = 10000000},
    P_FILENAME("snapshot"),
    P_TIMEOUT,
    P_SESSION,
    P_END};

static const struct tool_param click_params[] = {
    P_TARGET(true),
    P_ELEMENT,
    {.name = "button", .type = PT_STRING, .description = NULL, .enum_values = button_values},
    {.name = "clickCount",
     .type = PT_INTEGER,
     .description = "2: double click",
     .has_min = true,
     .min = 1,
     .has_max = true,
     .max = 3},
    {.name = "doubleClick", .type = PT_BOOLEAN, .description = NULL},
    {.name = "modifiers",
     .type = PT_ARRAY,
     .item_type = PT_STRING,
     .enum_values = modifier_values,
     .description = NULL,
     .has_max = true,
     .max = 5},
    {.name = "force", .type = PT_BOOLEAN, .description = "Skip actionability checks"},
    P_SNAPSHOT,
    P_TIMEOUT,
    P_SESSION,
    P_END};

static const struct tool_param type_params[] = {
    P_TARGET(true),
    P_ELEMENT,
    {.name = "text",
     .type = PT_STRING,
     .description = NULL,
     .required = true,
     .has_max = true,
     .max = 1000000},
    {.name = "clear", .type = PT_BOOLEAN, .description = "Replace the content (default true)"},
    {.name = "submit", .type = PT_BOOLEAN, .description = "Press Enter after"},
    {.name = "slowly", .type = PT_BOOLEAN, .description = "One key event per character"},
    P_SNAPSHOT,
    P_TIMEOUT,
    P_SESSION,
    P_END};

static const struct tool_param find_params[] = {
    {.name = "text",
     .type = PT_STRING,
     .description = "Case-insensitive substring, or a JS regex with regex",
     .required = true,
     .has_min = true,
     .min = 1,
     .has_max = true,
     .max = 4096},
    {.name = "regex", .type = PT_BOOLEAN, .description = "text is a regex (/x/i for flags)"},
    P_TARGET(false),
    P_FILENAME("result"),
    P_TIMEOUT,
    P_SESSION,
    P_END};

static const struct tool_param evaluate_params[] = {
    {.name = "function",
     .type = PT_STRING,
     .description = "() => {...} or (element) => {...}; may be async",
     .required = true,
     .has_min = true,
     .min = 1,
     .has_max = true,
     .max = 1000000},
    P_TARGET(false),
    P_ELEMENT,
    P_TIMEOUT,
    P_SESSION,
    P_END};

static const struct tool_param screenshot_params[] = {
    {.name = "type", .type = PT_STRING, .description = NULL, .enum_values = image_type_values},
    {.name = "fullPage", .type = PT_BOOLEAN, .description = "Whole scrollable page"},
    P_FILENAME("image"),
    P_TIMEOUT,
    P_SESSION,
    P_END};

static const struct tool_param handle_dialog_params[] = {
    {.name = "accept",
     .type = PT_BOOLEAN,
     .description = "OK (true) or Cancel (false)",
     .required = true},
    {.name = "promptText",
     .type = PT_STRING,
     .description = "Answer to a prompt",
     .has_max = true,
     .max = 100000},
    P_TIMEOUT,
    P_SESSION,
    P_END};

static const struct tool_param session_create_params[] = {
    {.name = "storageState",
     .type = PT_STRING,
     .description = "Storage state file (output dir) to start with",
     .has_min = true,
     .min = 1,
     .has_max = true,
     .max = 1024},
    P_FROM_SESSION,
    P_END};

static const struct tool_field session_create_out[] = {
    {"sessionId", PT_STRING, "The new session's id; pass it as sessionId to other tools.", true},
    {"expiresAt", PT_STRING, "When the session expires if unused (ISO 8601, UTC).", true},
    {"idleTimeoutSeconds", PT_INTEGER, "Idle seconds after which the session expires.", true},
    {"outputDir", PT_STRING,
     "The session's own directory: its files (screenshots, uploads, downloads) live there.", true},
    O_END};
static const struct tool_field session_close_out[] = {
    {"sessionId", PT_STRING, "The closed session.", true},
    {"closed", PT_BOOLEAN, "Always true on success.", true},
    O_END};
static const struct tool_field session_list_out[] = {
    {"sessions", PT_ARRAY,
     "Sessions of this connection: sessionId, createdAt, expiresAt, state, isDefault, outputDir, "
     "and savedState {bytes, tabs, cookies, localStorageOrigins, viewport} once its state is "
     "kept for a restart after a crash.",
     true},
    O_END};
static const struct tool_field navigate_out[] = {
    O_URL,
    O_TITLE,
    {"status", PT_INTEGER, "HTTP status of the main document (absent for non-HTTP URLs).", false},
    O_SNAPSHOT_FIELDS,
    O_SESSION,
    O_RESTARTED,
    O_END};
static const struct tool_field snapshot_out[] = {
    {"snapshot", PT_STRING, "The accessibility snapshot (YAML-like lines with [ref=...]).", false},
    {"truncated", PT_BOOLEAN,
     "True when the snapshot was cut (maxChars or --max-output-chars); the text says how much.",
     false},
    {"file", PT_STRING, "With filename: the absolute path the snapshot was written to.", false},
    O_PAGE_END};
static const struct tool_field find_out[] = {
    {"matches", PT_INTEGER, "Number of matching snapshot lines.", false},
    {"snapshot", PT_STRING, "The matching lines, each after its ancestors' lines.", false},
    {"truncated", PT_BOOLEAN, "True when the lines were cut to fit the response.", false},
    {"file", PT_STRING, "With filename: the absolute path the lines were written to.", false},
    O_PAGE_END};
static const struct tool_field action_out[] = {
    {"ref", PT_STRING, "Ref of the element acted on.", false},
    {"snapshot", PT_STRING,
     "The page's snapshot after the action (per the snapshot argument): whole, or with diff only "
     "the changed lines and their ancestors.",
     false},
    {"diff", PT_BOOLEAN, "True when snapshot is a diff against the previous snapshot.", false},
    {"truncated", PT_BOOLEAN, "True when the snapshot was cut to fit the response.", false},
    O_PAGE_END};
static const struct tool_field evaluate_out[] = {
    {"result", PT_OBJECT, "{value}: the function's JSON return value (absent when undefined).",
     false},
    O_PAGE_END};
static const struct tool_field screenshot_out[] = {
    {"mimeType", PT_STRING, "image/png or image/jpeg.", false},
    {"bytes", PT_INTEGER, "Size of the image in bytes.", false},
    {"file", PT_STRING, "With filename: the absolute path the image was written to.", false},
    O_PAGE_END};

static const struct tool_field handle_dialog_out[] = {
    {"dialogType", PT_STRING, "alert, confirm, prompt or beforeunload.", false},
    {"accepted", PT_BOOLEAN, "Whether the dialog was accepted.", false},
    O_PAGE_END};

/* --- tools of issue 8 (history, keys, pointer, forms, waits, logs) --- */
const char *const wait_state_values[] = {"visible", "hidden", "attached", "detached", NULL};
const char *const load_state_values[] = {"load", "domcontentloaded", "networkidle", NULL};
const char *const console_level_values[] = {"error", "warning", "info", "debug", NULL};

/* No snapshot argument here (tools/list stays within @playwright/mcp's
 * size, e2e.protocol): the lean view comes as --snapshot-mode says. */
static const struct tool_param history_params[] = {P_WAIT_UNTIL, P_TIMEOUT, P_SESSION, P_END};

static const struct tool_param reload_params[] = {
    {.name = "ignoreCache", .type = PT_BOOLEAN, .description = NULL},
    P_WAIT_UNTIL,
    P_TIMEOUT,
    P_SESSION,
    P_END};

static const struct tool_param press_key_params[] = {
    {.name = "key",
     .type = PT_STRING,
     .description = "Key name (Enter, ArrowDown), character or chord (Control+A)",
     .required = true,
     .has_min = true,
     .min = 1,
     .has_max = true,
     .max = 100},
    P_TARGET(false),
    P_ELEMENT,
    P_SNAPSHOT,
    P_TIMEOUT,
    P_SESSION,
    P_END};

static const struct tool_param hover_params[] = {
    P_TARGET(true),
    P_ELEMENT,
    {.name = "force", .type = PT_BOOLEAN, .description = "Skip actionability checks"},
    P_SNAPSHOT,
    P_TIMEOUT,
    P_SESSION,
    P_END};

static const struct tool_param drag_params[] = {
    P_DRAG_END("startTarget", false),
    P_DRAG_END("startRef", true),
    {.name = "startElement", .type = PT_STRING, .has_max = true, .max = 1024},
    P_DRAG_END("endTarget", false),
    P_DRAG_END("endRef", true),
    {.name = "endElement", .type = PT_STRING, .has_max = true, .max = 1024},
    P_SNAPSHOT,
    P_TIMEOUT,
    P_SESSION,
    P_END};

static const struct tool_param select_option_params[] = {P_TARGET(true),
                                                         P_ELEMENT,
                                                         {.name = "values",
                                                          .type = PT_ARRAY,
                                                          .item_type = PT_STRING,
                                                          .description = "By value or label",
                                                          .required = true,
                                                          .has_max = true,
                                                          .max = 1000},
                                                         P_SNAPSHOT,
                                                         P_TIMEOUT,
                                                         P_SESSION,
                                                         P_END};

static const struct tool_param fill_form_params[] = {
    {.name = "fields",
     .type = PT_ARRAY,
     .item_type = PT_OBJECT,
     .description = "{target, name, type, value}; checkbox/radio value true|false",
     .required = true,
     .has_max = true,
     .max = 200},
    P_SNAPSHOT,
    P_TIMEOUT,
    P_SESSION,
    P_END};

static const struct tool_param wait_for_params[] = {
    {.name = "time",
     .type = PT_NUMBER,
     .description = "Seconds",
     .has_min = true,
     .min = 0,
     .has_max = true,
     .max = 600},
    {.name = "text",
     .type = PT_STRING,
     .description = NULL,
     .has_min = true,
     .min = 1,
     .has_max = true,
     .max = 4096},
    {.name = "textGone",
     .type = PT_STRING,
     .description = NULL,
     .has_min = true,
     .min = 1,
     .has_max = true,
     .max = 4096},
    P_TARGET(false),
    {.name = "selector",
     .type = PT_STRING,
     .description = "Same as target.",
     .hidden = true,
     .has_min = true,
     .min = 1,
     .has_max = true,
     .max = 4096},
    {.name = "state",
     .type = PT_STRING,
     .description = "Of target (default visible)",
     .enum_values = wait_state_values},
    {.name = "url",
     .type = PT_STRING,
     .description = "Glob or /regex/",
     .has_min = true,
     .min = 1,
     .has_max = true,
     .max = 4096},
    {.name = "loadState", .type = PT_STRING, .description = NULL, .enum_values = load_state_values},
    P_SNAPSHOT,
    P_TIMEOUT,
    P_SESSION,
    P_END};

static const struct tool_param resize_params[] = {{.name = "width",
                                                   .type = PT_INTEGER,
                                                   .description = NULL,
                                                   .required = true,
                                                   .has_min = true,
                                                   .min = 100,
                                                   .has_max = true,
                                                   .max = 10000},
                                                  {.name = "height",
                                                   .type = PT_INTEGER,
                                                   .description = NULL,
                                                   .required = true,
                                                   .has_min = true,
                                                   .min = 100,
                                                   .has_max = true,
                                                   .max = 10000},
                                                  P_SNAPSHOT,
                                                  P_TIMEOUT,
                                                  P_SESSION,
                                                  P_END};

static const struct tool_param console_messages_params[] = {
    {.name = "level",
     .type = PT_STRING,
     .description = "Lowest level (default info)",
     .enum_values = console_level_values},
    {.name = "onlyNew", .type = PT_BOOLEAN, .description = "Only since the last call"},
    {.name = "onlyErrors",
     .type = PT_BOOLEAN,
     .description = "Same as level error.",
     .hidden = true},
    P_TIMEOUT,
    P_SESSION,
    P_END};

static const struct tool_param network_requests_params[] = {
    {.name = "includeStatic",
     .type = PT_BOOLEAN,
     .description = "Include images, fonts, scripts, styles"},
    {.name = "filter",
     .type = PT_STRING,
     .description = "URL substring",
     .has_min = true,
     .min = 1,
     .has_max = true,
     .max = 4096},
    P_TIMEOUT,
    P_SESSION,
    P_END};

static const struct tool_param network_request_params[] = {
    {.name = "index",
     .type = PT_INTEGER,
     .description = NULL,
     .required = true,
     .has_min = true,
     .min = 0,
     .has_max = true,
     .max = 1000000},
    {.name = "body", .type = PT_BOOLEAN, .description = "Include the body (default true)"},
    P_TIMEOUT,
    P_SESSION,
    P_END};

static const struct tool_field history_out[] = {O_SNAPSHOT_FIELDS, O_PAGE_END};
static const struct tool_field drag_out[] = {
    {"ref", PT_STRING, "Ref of the dragged element.", false},
    {"endRef", PT_STRING, "Ref of the drop target.", false},
    O_SNAPSHOT_FIELDS,
    O_PAGE_END};
static const struct tool_field fill_form_out[] = {
    {"fields", PT_ARRAY, "The fields filled: {ref, type, value}.", false},
    O_SNAPSHOT_FIELDS,
    O_PAGE_END};
static const struct tool_field wait_for_out[] = {
    {"waitedMs", PT_INTEGER, "How long the call waited.", false}, O_SNAPSHOT_FIELDS, O_PAGE_END};
static const struct tool_field resize_out[] = {
    {"width", PT_INTEGER, "The viewport width now.", false},
    {"height", PT_INTEGER, "The viewport height now.", false},
    O_SNAPSHOT_FIELDS,
    O_PAGE_END};
static const struct tool_field downloads_out[] = {
    {"downloads", PT_ARRAY,
     "Files the session's pages downloaded: {name, state, size, url, path, reason}.", true},
    O_PAGE_END};
static const struct tool_param downloads_params[] = {P_SESSION, P_END};
static const struct tool_field console_messages_out[] = {
    {"messages", PT_ARRAY, "Messages, oldest first: {level, type, text, location}.", false},
    {"dropped", PT_INTEGER, "Older messages no longer kept.", false},
    O_PAGE_END};
static const struct tool_field network_requests_out[] = {
    {"requests", PT_ARRAY,
     "Requests of the current page: {index, method, url, type, state, status}.", false},
    O_PAGE_END};
static const struct tool_field network_request_out[] = {
    {"index", PT_INTEGER, "The request's index.", false},
    {"method", PT_STRING, "HTTP method.", false},
    {"url", PT_STRING, "The request URL.", false},
    {"type", PT_STRING, "Resource type (Document, Fetch, XHR, Script, Image, ...).", false},
    {"state", PT_STRING, "pending, finished, failed or redirected.", false},
    {"status", PT_INTEGER, "HTTP status.", false},
    {"statusText", PT_STRING, "HTTP status text.", false},
    {"mimeType", PT_STRING, "Response MIME type.", false},
    {"requestHeaders", PT_OBJECT, "Request headers.", false},
    {"responseHeaders", PT_OBJECT, "Response headers.", false},
    {"postData", PT_STRING, "Request body (cut).", false},
    {"body", PT_STRING, "Response body when it is text (cut).", false},
    {"errorText", PT_STRING, "Why a failed request failed.", false},
    {"encodedDataLength", PT_INTEGER, "Bytes received.", false},
    {"remoteIPAddress", PT_STRING, "Server address.", false},
    {"timing", PT_OBJECT, "{responseMs, totalMs, startedAt, phases}.", false},
    O_SESSION,
    O_RESTARTED,
    O_END};

static const struct tool_def first_tools[] = {
    {TOOL(browser_session_create), .title = "Create browser session",
     .description = "Start an isolated browser session (own cookies, storage, tabs); returns its "
                    "sessionId for other tools or another agent.",
     .scope = TOOL_SUPERVISOR, .params = session_create_params, .outputs = session_create_out,
     .default_timeout_ms = 60000},
    {TOOL(browser_session_close), .title = "Close browser session",
     .description = "Close a session and its browser context.", .scope = TOOL_SUPERVISOR,
     .params = session_close_params, .outputs = session_close_out, .destructive = true,
     .idempotent = true, .default_timeout_ms = 10000},
    {TOOL(browser_session_list), .title = "List browser sessions",
     .description = "List this connection's sessions.", .scope = TOOL_SUPERVISOR,
     .params = no_params, .outputs = session_list_out, .read_only = true, .idempotent = true,
     .default_timeout_ms = 5000},
    {TOOL(browser_navigate), .title = "Navigate to a URL",
     .description = "Load a URL in the current tab and wait for it; returns URL, title, status.",
     .scope = TOOL_WORKER, .params = navigate_params, .outputs = navigate_out, .open_world = true,
     .default_timeout_ms = 30000},
    {TOOL(browser_snapshot), .title = "Page snapshot",
     .description = "Accessibility snapshot of the page: roles, names, states, a ref per "
                    "element to use as target.",
     .scope = TOOL_WORKER, .params = snapshot_params, .outputs = snapshot_out, .read_only = true,
     .default_timeout_ms = 30000},
    {TOOL(browser_find), .title = "Find in page snapshot",
     .description = "Snapshot lines matching a text or regex, with their ancestors and refs; "
                    "cheaper than a snapshot.",
     .scope = TOOL_WORKER, .params = find_params, .outputs = find_out, .read_only = true,
     .default_timeout_ms = 30000},
    {TOOL(browser_click), .title = "Click",
     .description = "Click an element once it is visible, stable, enabled and not covered.",
     .scope = TOOL_WORKER, .params = click_params, .outputs = action_out, .destructive = true,
     .open_world = true, .default_timeout_ms = 10000},
    {TOOL(browser_type), .title = "Type text", .description = "Type text into an editable element.",
     .scope = TOOL_WORKER, .params = type_params, .outputs = action_out, .destructive = true,
     .open_world = true, .default_timeout_ms = 10000},
    {TOOL(browser_evaluate), .title = "Evaluate JavaScript",
     .description =
         "Run a JS function in the page (given the element with target); returns its JSON result.",
     .scope = TOOL_WORKER, .params = evaluate_params, .outputs = evaluate_out, .destructive = true,
     .open_world = true, .default_timeout_ms = 30000},
    {TOOL(browser_take_screenshot), .title = "Take a screenshot",
     .description = "Screenshot of the viewport or the full page.", .scope = TOOL_WORKER,
     .params = screenshot_params, .outputs = screenshot_out, .read_only = true,
     .default_timeout_ms = 30000},
    {TOOL(browser_handle_dialog), .title = "Handle a dialog",
     .description = "Accept or dismiss the JavaScript dialog the page shows.", .scope = TOOL_WORKER,
     .params = handle_dialog_params, .outputs = handle_dialog_out, .destructive = true,
     .default_timeout_ms = 10000, .modal_ok = true},
    {TOOL(browser_navigate_back), .title = "Go back",
     .description = "Go back to the previous page in the tab's history and wait for it.",
     .scope = TOOL_WORKER, .params = history_params, .outputs = history_out, .open_world = true,
     .default_timeout_ms = 30000},
    {TOOL(browser_navigate_forward), .title = "Go forward",
     .description = "Go forward to the next page in the tab's history and wait for it.",
     .scope = TOOL_WORKER, .params = history_params, .outputs = history_out, .open_world = true,
     .default_timeout_ms = 30000},
    {TOOL(browser_reload), .title = "Reload",
     .description = "Reload the current page and wait for it.", .scope = TOOL_WORKER,
     .params = reload_params, .outputs = history_out, .open_world = true,
     .default_timeout_ms = 30000},
    {TOOL(browser_press_key), .title = "Press a key",
     .description = "Press a key or chord on the focused element, or on target.",
     .scope = TOOL_WORKER, .params = press_key_params, .outputs = action_out, .destructive = true,
     .open_world = true, .default_timeout_ms = 10000},
    {TOOL(browser_hover), .title = "Hover", .description = "Move the mouse over an element.",
     .scope = TOOL_WORKER, .params = hover_params, .outputs = action_out, .open_world = true,
     .default_timeout_ms = 10000},
    {TOOL(browser_drag), .title = "Drag and drop",
     .description = "Drag one element onto another with a real mouse path.", .scope = TOOL_WORKER,
     .params = drag_params, .outputs = drag_out, .destructive = true, .open_world = true,
     .default_timeout_ms = 10000},
    {TOOL(browser_select_option), .title = "Select options",
     .description = "Select options of a <select> by value or label.", .scope = TOOL_WORKER,
     .params = select_option_params, .outputs = action_out, .destructive = true, .idempotent = true,
     .open_world = true, .default_timeout_ms = 10000},
    {TOOL(browser_fill_form), .title = "Fill a form",
     .description = "Fill several fields in one call.", .scope = TOOL_WORKER,
     .params = fill_form_params, .outputs = fill_form_out, .destructive = true, .idempotent = true,
     .open_world = true, .default_timeout_ms = 30000},
    {TOOL(browser_wait_for), .title = "Wait for",
     .description = "Wait for time, text shown or gone, an element state, a URL or a load state.",
     .scope = TOOL_WORKER, .params = wait_for_params, .outputs = wait_for_out, .read_only = true,
     .idempotent = true, .default_timeout_ms = 30000},
    {TOOL(browser_resize), .title = "Resize the viewport",
     .description = "Set the viewport size in CSS pixels.", .scope = TOOL_WORKER,
     .params = resize_params, .outputs = resize_out, .idempotent = true,
     .default_timeout_ms = 10000},
    {TOOL(browser_downloads), .title = "Downloads",
     .description = "Files the session's pages downloaded, saved in its output dir.",
     .scope = TOOL_WORKER, .params = downloads_params, .outputs = downloads_out, .read_only = true,
     .idempotent = true, .default_timeout_ms = 5000, .modal_ok = true},
    {TOOL(browser_console_messages), .title = "Console messages",
     .description = "Console messages and uncaught errors of the current tab.",
     .scope = TOOL_WORKER, .params = console_messages_params, .outputs = console_messages_out,
     .read_only = true, .default_timeout_ms = 5000, .modal_ok = true},
    {TOOL(browser_network_requests), .title = "Network requests",
     .description = "Requests of the current page.", .scope = TOOL_WORKER,
     .params = network_requests_params, .outputs = network_requests_out, .read_only = true,
     .idempotent = true, .default_timeout_ms = 5000, .modal_ok = true},
    {TOOL(browser_network_request), .title = "Network request detail",
     .description = "One request by index: headers, bodies, timing.", .scope = TOOL_WORKER,
     .params = network_request_params, .outputs = network_request_out, .read_only = true,
     .idempotent = true, .default_timeout_ms = 10000, .modal_ok = true},
};

const struct tool_group catalog_first_tools = TOOL_GROUP(first_tools);

/* Every table of tools, in tools/list order. */
static const struct tool_group *const catalog_groups[] = {
    &catalog_first_tools,
    &catalog_devtools_tools,
    &catalog_data_tools,
    &catalog_tabs_tools,
};

size_t catalog_count(void)
{
    size_t n = 0;
    for (size_t g = 0; g < sizeof catalog_groups / sizeof catalog_groups[0]; g++)
        n += catalog_groups[g]->count;
    return n;
}

const struct tool_def *catalog_at(size_t i)
{
    for (size_t g = 0; g < sizeof catalog_groups / sizeof catalog_groups[0]; g++) {
        if (i < catalog_groups[g]->count)
            return &catalog_groups[g]->tools[i];
        i -= catalog_groups[g]->count;
    }
    return NULL;
}

const struct tool_def *catalog_find(const char *name)
{
    const struct tool_def *t;
    for (size_t i = 0; name && (t = catalog_at(i)) != NULL; i++)
        if (strcmp(t->name, name) == 0)
            return t;
    return NULL;
}

int catalog_check(char *err, size_t errlen)
{
    static const struct {
        const char *name;
        enum tool_scope scope;
    } listed[TOOL_COUNT] = {
#define CHECK_S(n) [TOOL_##n] = {#n, TOOL_SUPERVISOR},
#define CHECK_W(n, fn) [TOOL_##n] = {#n, TOOL_WORKER},
        TOOL_LIST(CHECK_S, CHECK_W)
#undef CHECK_S
#undef CHECK_W
    };
    int seen[TOOL_COUNT] = {0};
    const struct tool_def *t;
    for (size_t i = 0; (t = catalog_at(i)) != NULL; i++) {
        if (t->id <= TOOL_NONE || t->id >= TOOL_COUNT) {
            snprintf(err, errlen, "catalog entry %s has no id (TOOL(name))", t->name);
            return -1;
        }
        if (strcmp(t->name, listed[t->id].name) != 0 || t->scope != listed[t->id].scope) {
            snprintf(err, errlen, "catalog entry %s disagrees with the tool list", t->name);
            return -1;
        }
        if (seen[t->id]++) {
            snprintf(err, errlen, "tool %s has two catalog entries", t->name);
            return -1;
        }
        /* The dialog's own answer must run while it is open. */
        if (t->id == TOOL_browser_handle_dialog && !t->modal_ok) {
            snprintf(err, errlen, "%s must be modal_ok", t->name);
            return -1;
        }
    }
    for (int id = TOOL_NONE + 1; id < TOOL_COUNT; id++) {
        if (!seen[id]) {
            snprintf(err, errlen, "listed tool %s has no catalog entry", listed[id].name);
            return -1;
        }
    }
    return 0;
}

static const char *const cap_names[CAP_COUNT] = {
    [CAP_CORE] = "core",         [CAP_STORAGE] = "storage", [CAP_NETWORK] = "network",
    [CAP_PDF] = "pdf",           [CAP_VISION] = "vision",   [CAP_TESTING] = "testing",
    [CAP_DEVTOOLS] = "devtools",
};

const char *catalog_cap_name(enum tool_cap cap)
{
    return cap < CAP_COUNT ? cap_names[cap] : "?";
}

int catalog_cap_parse(const char *name, size_t len)
{
    for (int c = 0; c < CAP_COUNT; c++)
        if (strlen(cap_names[c]) == len && strncmp(cap_names[c], name, len) == 0)
            return c;
    return -1;
}

static const char *type_name(enum param_type t)
{
    switch (t) {
    case PT_STRING:
        return "string";
    case PT_INTEGER:
        return "integer";
    case PT_NUMBER:
        return "number";
    case PT_BOOLEAN:
        return "boolean";
    case PT_ARRAY:
        return "array";
    case PT_OBJECT:
        return "object";
    }
    return "string";
}

static json_t *enum_json(const char *const *values)
{
    json_t *a = json_array();
    for (; *values; values++)
        json_array_append_new(a, json_string(*values));
    return a;
}

static json_t *param_schema(const struct tool_param *p, bool full)
{
    json_t *s = json_pack("{s:s}", "type", type_name(p->type));
    if (p->description && (full || !p->shared))
        json_object_set_new(s, "description", json_string(p->description));
    if (p->type == PT_ARRAY) {
        json_t *items = json_pack("{s:s}", "type", type_name(p->item_type));
        if (p->enum_values)
            json_object_set_new(items, "enum", enum_json(p->enum_values));
        json_object_set_new(s, "items", items);
        if (full && p->has_max)
            json_object_set_new(s, "maxItems", json_integer((json_int_t)p->max));
    } else if (p->enum_values) {
        json_object_set_new(s, "enum", enum_json(p->enum_values));
    } else if (p->type == PT_STRING && full) {
        if (p->has_min)
            json_object_set_new(s, "minLength", json_integer((json_int_t)p->min));
        if (p->has_max)
            json_object_set_new(s, "maxLength", json_integer((json_int_t)p->max));
    } else if ((p->type == PT_INTEGER || p->type == PT_NUMBER) && (full || !p->shared)) {
        /* Compact keeps a number's range: it is not guessable (a viewport's
         * width is at least 100); a string's length limits are, and errors
         * name them. */
        if (p->has_min)
            json_object_set_new(s, "minimum",
                                p->type == PT_INTEGER ? json_integer((json_int_t)p->min)
                                                      : json_real(p->min));
        if (p->has_max)
            json_object_set_new(s, "maximum",
                                p->type == PT_INTEGER ? json_integer((json_int_t)p->max)
                                                      : json_real(p->max));
    }
    if (p->nullable) {
        /* {anyOf: [<the schema without its description>, {type: null}]} */
        json_t *desc = json_incref(json_object_get(s, "description"));
        json_object_del(s, "description");
        s = json_pack("{s:[o, {s:s}]}", "anyOf", s, "type", "null");
        if (desc)
            json_object_set_new(s, "description", desc);
    }
    return s;
}

static const char instructions[] =
    "Drive web browsers. Use browser_snapshot to get element refs, then act on them. "
    "Arguments every tool shares: sessionId: the browser session (from "
    "browser_session_create; omitted: this connection's default session, made on first use). "
    "timeout: deadline of the whole call in ms. target: the element, a snapshot ref (e12, "
    "f2e7) or a selector: css=..., xpath=... or //..., role=button[name=\"Save\"], text=..., "
    "or plain CSS. element: a description of the element, used only in messages. snapshot: "
    "the snapshot an action returns: diff (default: the lines changed since the last "
    "snapshot, with their ancestors, then under Gone the tops of removed elements; the "
    "whole page when its document is new), full or none. A view marked lean leaves out "
    "/url lines, cuts long texts and long lists and folds big regions, each cut saying how "
    "to read it; browser_snapshot shows all. "
    "filename: write the output to this path inside the server's output dir instead of the "
    "response. Results carry sessionId; url and title of the page; an action's snapshot; "
    "truncated when an output was cut; diff when snapshot is a diff; sessionRestarted when the "
    "session's worker had "
    "crashed and the call ran in a fresh one; on failure isError with error {code, message, "
    "hint}; modalState while a dialog blocks the page; consoleErrors since the last call. "
    "Arguments a tool does not list are refused.";

const char *catalog_instructions(void)
{
    return instructions;
}

/* Output fields every result may carry are said once in the instructions. */
static bool common_output(const struct tool_def *t, const char *name)
{
    /* The snapshot an action returns (its snapshot argument); a read-only
     * tool's snapshot is its own output (browser_snapshot, browser_find). */
    if (strcmp(name, "snapshot") == 0)
        return !t->read_only;
    static const char *const common[] = {"sessionId", "sessionRestarted", "url", "title",
                                         "diff",      "truncated",        NULL};
    for (const char *const *c = common; *c; c++)
        if (strcmp(name, *c) == 0)
            return true;
    return false;
}

json_t *catalog_tool_json(const struct tool_def *t, bool full)
{
    json_t *props = json_object(), *required = json_array();
    for (const struct tool_param *p = t->params; p->name; p++) {
        if (p->hidden && !full)
            continue;
        json_object_set_new(props, p->name, param_schema(p, full));
        if (p->required)
            json_array_append_new(required, json_string(p->name));
    }
    json_t *input = json_pack("{s:s, s:o}", "type", "object", "properties", props);
    if (json_array_size(required))
        json_object_set_new(input, "required", required);
    else
        json_decref(required);
    /* Unknown arguments are refused either way (catalog_validate); the
     * instructions say so once instead of every compact schema. */
    if (full)
        json_object_set_new(input, "additionalProperties", json_false());

    /* No "required" and no additionalProperties: error results carry other
     * fields ({error, page, ...}) and must validate too. */
    json_t *oprops = json_object();
    for (const struct tool_field *f = t->outputs; f->name; f++)
        if (full || !common_output(t, f->name))
            json_object_set_new(oprops, f->name, json_pack("{s:s}", "type", type_name(f->type)));
    json_t *output = json_pack("{s:s, s:o}", "type", "object", "properties", oprops);

    /* MCP's defaults: readOnlyHint false, destructiveHint true, idempotentHint
     * false, openWorldHint true. destructiveHint means nothing when read-only. */
    json_t *annotations = json_pack("{s:b}", "readOnlyHint", t->read_only);
    if (full || !t->read_only)
        json_object_set_new(annotations, "destructiveHint", json_boolean(t->destructive));
    if (full || t->idempotent)
        json_object_set_new(annotations, "idempotentHint", json_boolean(t->idempotent));
    json_object_set_new(annotations, "openWorldHint", json_boolean(t->open_world));
    return json_pack("{s:s, s:s, s:s, s:o, s:o, s:o}", "name", t->name, "title", t->title,
                     "description", t->description, "inputSchema", input, "outputSchema", output,
                     "annotations", annotations);
}

static const struct tool_param *find_param(const struct tool_def *t, const char *name)
{
    for (const struct tool_param *p = t->params; p->name; p++)
        if (strcmp(p->name, name) == 0)
            return p;
    return NULL;
}

static bool in_enum(const char *const *values, const char *s)
{
    for (; *values; values++)
        if (strcmp(*values, s) == 0)
            return true;
    return false;
}

static bool type_matches(enum param_type t, const json_t *v)
{
    switch (t) {
    case PT_STRING:
        return json_is_string(v);
    case PT_INTEGER:
        return json_is_integer(v) ||
               (json_is_real(v) && json_real_value(v) == floor(json_real_value(v)) &&
                fabs(json_real_value(v)) < 9007199254740992.0);
    case PT_NUMBER:
        return json_is_number(v);
    case PT_BOOLEAN:
        return json_is_boolean(v);
    case PT_ARRAY:
        return json_is_array(v);
    case PT_OBJECT:
        return json_is_object(v);
    }
    return false;
}

static int check_value(const struct tool_param *p, const char *what, enum param_type type,
                       const json_t *v, char *err, size_t errlen)
{
    if (!type_matches(type, v)) {
        snprintf(err, errlen, "%s must be %s %s", what, type == PT_INTEGER ? "an" : "a",
                 type_name(type));
        return -1;
    }
    if (type == PT_STRING) {
        /* Every string reaches C code that ends it at the first NUL: a NUL
         * would silently cut it ("a\u0000b.txt" would write "a"). */
        if (memchr(json_string_value(v), 0, json_string_length(v))) {
            snprintf(err, errlen, "%s contains a NUL character (\\u0000)", what);
            return -1;
        }
        /* Characters, as the schema's minLength/maxLength count them. */
        size_t len = utf8_chars(json_string_value(v), json_string_length(v));
        if (p->enum_values && !in_enum(p->enum_values, json_string_value(v))) {
            char list[256] = "";
            for (const char *const *e = p->enum_values; *e; e++) {
                strncat(list, *e, sizeof list - strlen(list) - 1);
                if (e[1])
                    strncat(list, ", ", sizeof list - strlen(list) - 1);
            }
            snprintf(err, errlen, "%s must be one of: %s", what, list);
            return -1;
        }
        if (p->type == PT_STRING && p->has_min && len < (size_t)p->min) {
            if (p->min <= 1)
                snprintf(err, errlen, "%s must not be empty", what);
            else
                snprintf(err, errlen, "%s is too short (%zu characters, at least %.0f)", what, len,
                         p->min);
            return -1;
        }
        if (p->type == PT_STRING && p->has_max && len > (size_t)p->max) {
            snprintf(err, errlen, "%s is too long (%zu characters, at most %.0f)", what, len,
                     p->max);
            return -1;
        }
    } else if (type == PT_INTEGER || type == PT_NUMBER) {
        double d = json_number_value(v);
        if ((p->has_min && d < p->min) || (p->has_max && d > p->max)) {
            snprintf(err, errlen, "%s must be between %.0f and %.0f", what, p->min, p->max);
            return -1;
        }
    }
    return 0;
}

int catalog_validate(const struct tool_def *t, json_t *args, char *err, size_t errlen)
{
    if (args && !json_is_object(args)) {
        snprintf(err, errlen, "arguments must be an object");
        return -1;
    }
    const char *key;
    json_t *v;
    json_object_foreach(args, key, v)
    {
        const struct tool_param *p = find_param(t, key);
        if (!p) {
            snprintf(err, errlen, "unknown parameter '%.64s' for %s", key, t->name);
            return -1;
        }
        char what[96];
        snprintf(what, sizeof what, "'%s'", p->name);
        if (p->nullable && json_is_null(v))
            continue;
        if (p->type == PT_ARRAY) {
            if (!json_is_array(v)) {
                snprintf(err, errlen, "%s must be an array", what);
                return -1;
            }
            if (p->has_max && json_array_size(v) > (size_t)p->max) {
                snprintf(err, errlen, "%s has too many items (at most %.0f)", what, p->max);
                return -1;
            }
            size_t i;
            json_t *item;
            json_array_foreach(v, i, item)
            {
                snprintf(what, sizeof what, "'%s[%zu]'", p->name, i);
                if (check_value(p, what, p->item_type, item, err, errlen) < 0)
                    return -1;
            }
        } else if (check_value(p, what, p->type, v, err, errlen) < 0) {
            return -1;
        }
    }
    for (const struct tool_param *p = t->params; p->name; p++) {
        if (p->required && !(args && json_object_get(args, p->name))) {
            snprintf(err, errlen, "missing required parameter '%s'", p->name);
            return -1;
        }
    }
    for (const struct tool_param *p = t->params; args && p->name; p++) {
        json_t *given = json_object_get(args, p->name);
        if (p->type == PT_INTEGER && json_is_real(given))
            json_object_set_new(args, p->name, json_integer((json_int_t)json_real_value(given)));
    }
    return 0;
}
