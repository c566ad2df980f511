/*
 * catalog_data.c - tools that move data in and out of a session: files into
 * the page (core), cookies and web storage (storage group), routes, offline
 * and extra headers (network group). Names and arguments as @playwright/mcp.
 */
#include "catalog_defs.h"

/* A file the agent names: like P_FILENAME, under the output dir. */
#define P_INPUT_FILE(req, what)                                                                    \
    {                                                                                              \
        .name = "filename", .type = PT_STRING, .description = what, .required = req,               \
        .has_min = true, .min = 1, .has_max = true, .max = 1024                                    \
    }

static const struct tool_param file_upload_params[] = {
    {.name = "paths",
     .type = PT_ARRAY,
     .item_type = PT_STRING,
     .description = "Files in the output dir; omitted: cancel the chooser",
     .has_max = true,
     .max = 64},
    {.name = "target",
     .type = PT_STRING,
     .description = "The <input type=file> (ref or selector); default: the open chooser's.",
     .has_min = true,
     .min = 1,
     .has_max = true,
     .max = 4096},
    P_ELEMENT,
    P_SNAPSHOT,
    P_TIMEOUT,
    P_SESSION,
    P_END};

static const struct tool_param drop_params[] = {
    P_TARGET(true),
    P_ELEMENT,
    {.name = "paths",
     .type = PT_ARRAY,
     .item_type = PT_STRING,
     .description = "Files in the output dir to drop",
     .has_max = true,
     .max = 64},
    {.name = "data",
     .type = PT_OBJECT,
     .description = "{mimeType: text}, e.g. {\"text/plain\": \"hi\"}"},
    P_SNAPSHOT,
    P_TIMEOUT,
    P_SESSION,
    P_END};

static const struct tool_field drop_out[] = {
    {"types", PT_ARRAY, "The dropped data's types (Files for files)", false},
    {"files", PT_ARRAY, "Names of the dropped files", false},
    {"handled", PT_BOOLEAN, "Whether the page cancelled the drop (took it)", false},
    O_SNAPSHOT_FIELDS,
    O_PAGE_END};

static const struct tool_field file_upload_out[] = {
    {"files", PT_ARRAY, "Names of the files the input now holds.", false},
    O_SNAPSHOT_FIELDS,
    O_PAGE_END};

/* --- storage group --- */

static const char *const same_site_values[] = {"Strict", "Lax", "None", NULL};

#define P_NAMED(n, what, req)                                                                      \
    {                                                                                              \
        .name = n, .type = PT_STRING, .description = what, .required = req, .has_min = true,       \
        .min = 1, .has_max = true, .max = 4096                                                     \
    }

static const struct tool_param cookie_list_params[] = {
    P_NAMED("domain", "Only cookies of this domain (and its subdomains)", false),
    P_NAMED("path", "Only cookies with this path", false), P_TIMEOUT, P_SESSION, P_END};

static const struct tool_param cookie_name_params[] = {P_NAMED("name", "Cookie name", true),
                                                       P_TIMEOUT, P_SESSION, P_END};

static const struct tool_param cookie_set_params[] = {
    P_NAMED("name", "Cookie name", true),
    {.name = "value",
     .type = PT_STRING,
     .description = "Cookie value",
     .required = true,
     .has_max = true,
     .max = 65536},
    P_NAMED("domain", "Default: the current page's host", false),
    P_NAMED("path", "Default: /", false),
    /* -1 is a session cookie (Playwright's storageState); the top is the
     * last second of year 9999, past which no cookie date is meaningful. */
    {.name = "expires",
     .type = PT_NUMBER,
     .description = "Unix time in seconds; default: session",
     .has_min = true,
     .min = -1,
     .has_max = true,
     .max = 253402300799.0},
    {.name = "httpOnly", .type = PT_BOOLEAN, .description = "Hidden from page scripts"},
    {.name = "secure", .type = PT_BOOLEAN, .description = "Sent over HTTPS only"},
    {.name = "sameSite",
     .type = PT_STRING,
     .description = "SameSite attribute",
     .enum_values = same_site_values},
    P_TIMEOUT,
    P_SESSION,
    P_END};

static const struct tool_param session_only_params[] = {P_TIMEOUT, P_SESSION, P_END};

static const struct tool_param storage_key_params[] = {{.name = "key",
                                                        .type = PT_STRING,
                                                        .description = "Item key",
                                                        .required = true,
                                                        .has_max = true,
                                                        .max = 65536},
                                                       P_TIMEOUT,
                                                       P_SESSION,
                                                       P_END};

static const struct tool_param storage_set_params[] = {{.name = "key",
                                                        .type = PT_STRING,
                                                        .description = "Item key",
                                                        .required = true,
                                                        .has_max = true,
                                                        .max = 65536},
                                                       {.name = "value",
                                                        .type = PT_STRING,
                                                        .description = "Item value",
                                                        .required = true,
                                                        .has_max = true,
                                                        .max = 1000000},
                                                       P_TIMEOUT,
                                                       P_SESSION,
                                                       P_END};

static const struct tool_param storage_state_params[] = {
    P_INPUT_FILE(false, "File in the output dir; default storage-state-<time>.json"), P_TIMEOUT,
    P_SESSION, P_END};

static const struct tool_param set_storage_state_params[] = {
    P_INPUT_FILE(true, "File in the output dir saved by browser_storage_state"), P_FROM_SESSION,
    P_TIMEOUT, P_SESSION, P_END};

static const struct tool_field cookies_out[] = {
    {"cookies", PT_ARRAY, "{name, value, domain, path, expires, httpOnly, secure, sameSite}", true},
    O_SESSION,
    O_RESTARTED,
    O_END};
static const struct tool_field cookie_change_out[] = {
    {"deleted", PT_INTEGER, "Cookies deleted (browser_cookie_delete)", false},
    O_SESSION,
    O_RESTARTED,
    O_END};
static const struct tool_field storage_out[] = {
    {"origin", PT_STRING, "The page's origin", true},
    {"items", PT_ARRAY, "{key, value} (list)", false},
    {"found", PT_BOOLEAN, "Whether the key exists (get)", false},
    {"value", PT_STRING, "The item's value (get)", false},
    {"deleted", PT_BOOLEAN, "Whether the key existed (delete)", false},
    O_SESSION,
    O_RESTARTED,
    O_END};
static const struct tool_field storage_state_out[] = {
    {"file", PT_STRING, "Absolute path of the file written", false},
    {"cookies", PT_INTEGER, "Cookies saved or loaded", true},
    {"origins", PT_INTEGER, "Origins with localStorage saved or loaded", true},
    O_SESSION,
    O_RESTARTED,
    O_END};

/* A storage tool: read-only ones are idempotent too. */
#define STORAGE_TOOL(name_, title_, desc, params_, out, ro, idem)                                  \
    {                                                                                              \
        TOOL(name_), .title = title_, .description = desc, .scope = TOOL_WORKER,                   \
                     .params = params_, .outputs = out, .read_only = ro, .destructive = !(ro),     \
                     .idempotent = idem, .default_timeout_ms = 10000, .cap = CAP_STORAGE           \
    }
#define WEB_STORAGE_TOOLS(kind, Kind)                                                              \
    STORAGE_TOOL(browser_##kind##_list, "List " Kind,                                              \
                 "List the " Kind " items of the current page's origin.", session_only_params,     \
                 storage_out, true, true),                                                         \
        STORAGE_TOOL(browser_##kind##_get, "Get " Kind " item", "Get a " Kind " item by key.",     \
                     storage_key_params, storage_out, true, true),                                 \
        STORAGE_TOOL(browser_##kind##_set, "Set " Kind " item",                                    \
                     "Set a " Kind " item on the current page's origin.", storage_set_params,      \
                     storage_out, false, true),                                                    \
        STORAGE_TOOL(browser_##kind##_delete, "Delete " Kind " item",                              \
                     "Delete a " Kind " item by key.", storage_key_params, storage_out, false,     \
                     true),                                                                        \
        STORAGE_TOOL(browser_##kind##_clear, "Clear " Kind,                                        \
                     "Clear the " Kind " of the current page's origin.", session_only_params,      \
                     storage_out, false, true)

/* --- network group --- */

static const char *const network_state_values[] = {"online", "offline", NULL};

static const struct tool_param route_params[] = {
    P_NAMED("pattern", "URL glob, e.g. **/api/users or **/*.{png,jpg}", true),
    {.name = "status",
     .type = PT_INTEGER,
     .description = "HTTP status to answer (default 200)",
     .has_min = true,
     .min = 100,
     .has_max = true,
     .max = 599},
    {.name = "body",
     .type = PT_STRING,
     .description = "Response body (text or JSON)",
     .has_max = true,
     .max = 1000000},
    P_NAMED("contentType", "Content-Type of the response", false),
    {.name = "headers",
     .type = PT_ARRAY,
     .item_type = PT_STRING,
     .description = "Response headers as \"Name: Value\"",
     .has_max = true,
     .max = 64},
    P_NAMED("removeHeaders", "Request headers to drop, comma-separated", false),
    {.name = "abort", .type = PT_BOOLEAN, .description = "Fail matching requests instead"},
    P_TIMEOUT,
    P_SESSION,
    P_END};

static const struct tool_param unroute_params[] = {
    P_NAMED("pattern", "Route to remove; omitted: all", false), P_TIMEOUT, P_SESSION, P_END};

static const struct tool_param network_state_params[] = {
    {.name = "state",
     .type = PT_STRING,
     .description = "offline: every request fails",
     .required = true,
     .enum_values = network_state_values},
    P_TIMEOUT,
    P_SESSION,
    P_END};

static const struct tool_param extra_headers_params[] = {
    {.name = "headers",
     .type = PT_OBJECT,
     .description = "{name: value}; {} removes them",
     .required = true},
    P_NAMED("origin", "Only requests to this origin or host (*.a.com)", false),
    P_TIMEOUT,
    P_SESSION,
    P_END};

static const struct tool_field route_out[] = {
    {"pattern", PT_STRING, "The route's pattern", false},
    {"routes", PT_INTEGER, "Routes now set", false},
    {"removed", PT_INTEGER, "Routes removed (browser_unroute)", false},
    O_SESSION,
    O_RESTARTED,
    O_END};
static const struct tool_field route_list_out[] = {
    {"routes", PT_ARRAY, "{pattern, status, contentType, abort, hits}", true},
    O_SESSION,
    O_RESTARTED,
    O_END};
static const struct tool_field network_state_out[] = {
    {"state", PT_STRING, "online or offline", true}, O_SESSION, O_RESTARTED, O_END};
static const struct tool_field extra_headers_out[] = {
    {"origin", PT_STRING, "The origin they apply to (* for all)", true},
    {"headers", PT_INTEGER, "How many headers are now added", true},
    O_SESSION,
    O_RESTARTED,
    O_END};

/* modal: the tool sets the session's own rules, not the page's (modal_ok). */
#define NETWORK_TOOL(name_, title_, desc, params_, out, ro, idem, modal)                           \
    {                                                                                              \
        TOOL(name_), .title = title_, .description = desc, .scope = TOOL_WORKER,                   \
                     .params = params_, .outputs = out, .read_only = ro, .destructive = !(ro),     \
                     .idempotent = idem, .open_world = true, .default_timeout_ms = 10000,          \
                     .cap = CAP_NETWORK, .modal_ok = modal                                         \
    }

static const struct tool_def data_tools[] = {
    {TOOL(browser_file_upload), .title = "Upload files",
     .description = "Set files from the output dir on the open file chooser (or on target, an "
                    "<input type=file>).",
     .scope = TOOL_WORKER, .params = file_upload_params, .outputs = file_upload_out,
     .destructive = true, .open_world = true, .default_timeout_ms = 10000, .modal_ok = true},
    {TOOL(browser_drop), .title = "Drop files or data onto an element",
     .description = "Drop files (from the output dir) or MIME-typed data onto an element, as if "
                    "dragged from outside.",
     .scope = TOOL_WORKER, .params = drop_params, .outputs = drop_out, .destructive = true,
     .open_world = true, .default_timeout_ms = 10000},
    STORAGE_TOOL(browser_cookie_list, "List cookies",
                 "List this session's cookies (optionally by domain/path).", cookie_list_params,
                 cookies_out, true, true),
    STORAGE_TOOL(browser_cookie_get, "Get cookie", "Get this session's cookies with a name.",
                 cookie_name_params, cookies_out, true, true),
    STORAGE_TOOL(browser_cookie_set, "Set cookie",
                 "Set a cookie (domain, path, expires, httpOnly, secure, sameSite).",
                 cookie_set_params, cookie_change_out, false, true),
    STORAGE_TOOL(browser_cookie_delete, "Delete cookie",
                 "Delete this session's cookies with a "
                 "name.",
                 cookie_name_params, cookie_change_out, false, true),
    STORAGE_TOOL(browser_cookie_clear, "Clear cookies", "Clear all of this session's cookies.",
                 session_only_params, cookie_change_out, false, true),
    WEB_STORAGE_TOOLS(localstorage, "localStorage"),
    WEB_STORAGE_TOOLS(sessionstorage, "sessionStorage"),
    /* Writes a file, but changes nothing in the session: read-only as Playwright marks it. */
    STORAGE_TOOL(browser_storage_state, "Save storage state",
                 "Save the session's cookies and localStorage to a file (Playwright's "
                 "storageState).",
                 storage_state_params, storage_state_out, true, false),
    STORAGE_TOOL(browser_set_storage_state, "Restore storage state",
                 "Replace the session's cookies and localStorage with a saved storage state.",
                 set_storage_state_params, storage_state_out, false, true),
    NETWORK_TOOL(browser_route, "Mock network requests",
                 "Answer requests matching a URL glob with a mock response, or fail them (abort).",
                 route_params, route_out, false, true, true),
    NETWORK_TOOL(browser_unroute, "Remove network routes",
                 "Remove the route with this pattern, or all routes.", unroute_params, route_out,
                 false, false, true),
    NETWORK_TOOL(browser_route_list, "List network routes",
                 "List this session's routes with their hit counts.", session_only_params,
                 route_list_out, true, true, true),
    NETWORK_TOOL(browser_network_state_set, "Set network state",
                 "Take the session offline (every request fails) or back online.",
                 network_state_params, network_state_out, false, true, false),
    NETWORK_TOOL(browser_set_extra_http_headers, "Set extra HTTP headers",
                 "Add headers to every request of the session, or only to one origin's.",
                 extra_headers_params, extra_headers_out, false, true, true),
};

const struct tool_group catalog_data_tools = TOOL_GROUP(data_tools);
