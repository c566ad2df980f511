/*
 * catalog_devtools.c - the tools of the optional groups (and their core
 * companion browser_emulate_media): vision (mouse by coordinates), pdf,
 * testing (browser_verify_*, browser_generate_locator) and devtools
 * (browser_cdp, browser_get_content). Names and arguments follow
 * @playwright/mcp 0.0.83 where it has the tool.
 */
#include "catalog.h"
#include "catalog_defs.h"

#include <stddef.h>

/* --- browser_emulate_media (core) --- */
static const char *const color_scheme_values[] = {"light", "dark", NULL};
static const char *const reduced_motion_values[] = {"reduce", "no-preference", NULL};
static const char *const forced_colors_values[] = {"active", "none", NULL};
static const char *const contrast_values[] = {"more", "no-preference", NULL};
static const char *const media_values[] = {"screen", "print", NULL};

#define P_MEDIA_FEATURE(name_, what, values)                                                       \
    {                                                                                              \
        .name = name_, .type = PT_STRING, .description = what " (null: no override)",              \
        .enum_values = values, .nullable = true, .shared = true                                    \
    }

static const struct tool_param emulate_media_params[] = {
    P_MEDIA_FEATURE("colorScheme", "prefers-color-scheme", color_scheme_values),
    P_MEDIA_FEATURE("reducedMotion", "prefers-reduced-motion", reduced_motion_values),
    P_MEDIA_FEATURE("forcedColors", "forced-colors", forced_colors_values),
    P_MEDIA_FEATURE("contrast", "prefers-contrast", contrast_values),
    P_MEDIA_FEATURE("media", "CSS media type", media_values),
    P_TIMEOUT,
    P_SESSION,
    P_END};

static const struct tool_field emulate_media_out[] = {
    {"emulated", PT_OBJECT, "The overrides now in force, by parameter name.", false}, O_PAGE_END};

/* --- vision: the mouse by coordinates (CSS pixels of the viewport) --- */
#define P_COORD(name_, what)                                                                       \
    {                                                                                              \
        .name = name_, .type = PT_NUMBER, .description = what, .shared = true, .required = true,   \
        .has_min = true, .min = 0, .has_max = true, .max = 100000                                  \
    }
#define P_BUTTON                                                                                   \
    {                                                                                              \
        .name = "button", .type = PT_STRING, .description = "Mouse button (default left).",        \
        .enum_values = button_values, .shared = true                                               \
    }

static const struct tool_param mouse_move_params[] = {
    P_COORD("x", "X in CSS pixels from the viewport's left"),
    P_COORD("y", "Y in CSS pixels from the viewport's top"),
    P_SNAPSHOT,
    P_TIMEOUT,
    P_SESSION,
    P_END};

static const struct tool_param mouse_click_params[] = {
    P_COORD("x", "X in CSS pixels from the viewport's left"),
    P_COORD("y", "Y in CSS pixels from the viewport's top"),
    P_BUTTON,
    {.name = "clickCount",
     .type = PT_INTEGER,
     .description = "Number of clicks (default 1).",
     .has_min = true,
     .min = 1,
     .has_max = true,
     .max = 3},
    {.name = "delay",
     .type = PT_NUMBER,
     .description = "Milliseconds between press and release (default 0).",
     .has_min = true,
     .min = 0,
     .has_max = true,
     .max = 10000},
    P_SNAPSHOT,
    P_TIMEOUT,
    P_SESSION,
    P_END};

static const struct tool_param mouse_drag_params[] = {P_COORD("startX", "Start X (CSS pixels)"),
                                                      P_COORD("startY", "Start Y (CSS pixels)"),
                                                      P_COORD("endX", "End X (CSS pixels)"),
                                                      P_COORD("endY", "End Y (CSS pixels)"),
                                                      P_SNAPSHOT,
                                                      P_TIMEOUT,
                                                      P_SESSION,
                                                      P_END};

static const struct tool_param mouse_button_params[] = {P_BUTTON, P_SNAPSHOT, P_TIMEOUT, P_SESSION,
                                                        P_END};

static const struct tool_param mouse_wheel_params[] = {
    {.name = "deltaX",
     .type = PT_NUMBER,
     .description = "Horizontal scroll in CSS pixels",
     .required = true,
     .has_min = true,
     .min = -100000,
     .has_max = true,
     .max = 100000},
    {.name = "deltaY",
     .type = PT_NUMBER,
     .description = "Vertical scroll in CSS pixels (positive: down)",
     .required = true,
     .has_min = true,
     .min = -100000,
     .has_max = true,
     .max = 100000},
    P_SNAPSHOT,
    P_TIMEOUT,
    P_SESSION,
    P_END};

static const struct tool_field mouse_out[] = {
    {"x", PT_NUMBER, "The mouse's X after the call.", false},
    {"y", PT_NUMBER, "The mouse's Y after the call.", false},
    O_SNAPSHOT_FIELDS,
    O_PAGE_END};

/* --- pdf --- */
static const struct tool_param pdf_save_params[] = {
    {.name = "filename",
     .type = PT_STRING,
     .description = "File in the output dir (default page-<time>.pdf)",
     .has_min = true,
     .min = 1,
     .has_max = true,
     .max = 1024},
    P_TIMEOUT,
    P_SESSION,
    P_END};

static const struct tool_field pdf_save_out[] = {
    {"file", PT_STRING, "Absolute path of the PDF written.", false},
    {"bytes", PT_INTEGER, "Size of the PDF in bytes.", false},
    O_PAGE_END};

/* --- testing: assertions on the page as it is, and locators --- */
static const char *const verify_type_values[] = {"textbox",  "checkbox", "radio",
                                                 "combobox", "slider",   NULL};

static const struct tool_param verify_element_params[] = {
    {.name = "role",
     .type = PT_STRING,
     .description = "ARIA role as in the snapshot: - {role} \"name\"",
     .required = true,
     .has_min = true,
     .min = 1,
     .has_max = true,
     .max = 100},
    {.name = "accessibleName",
     .type = PT_STRING,
     .description = "Accessible name as in the snapshot (exact, any case)",
     .required = true,
     .has_max = true,
     .max = 4096},
    P_TIMEOUT,
    P_SESSION,
    P_END};

static const struct tool_param verify_text_params[] = {
    {.name = "text",
     .type = PT_STRING,
     .description = "Text that must be shown (substring, any case)",
     .required = true,
     .has_min = true,
     .min = 1,
     .has_max = true,
     .max = 4096},
    P_TIMEOUT,
    P_SESSION,
    P_END};

static const struct tool_param verify_list_params[] = {P_TARGET(true),
                                                       P_ELEMENT,
                                                       {.name = "items",
                                                        .type = PT_ARRAY,
                                                        .item_type = PT_STRING,
                                                        .description = "Texts the list must show",
                                                        .required = true,
                                                        .has_max = true,
                                                        .max = 1000},
                                                       P_TIMEOUT,
                                                       P_SESSION,
                                                       P_END};

static const struct tool_param verify_value_params[] = {
    {.name = "type",
     .type = PT_STRING,
     .description = "Kind of element",
     .required = true,
     .enum_values = verify_type_values},
    P_TARGET(true),
    P_ELEMENT,
    {.name = "value",
     .type = PT_STRING,
     .description = "Expected value; checkbox/radio: \"true\" or \"false\"",
     .required = true,
     .has_max = true,
     .max = 100000},
    P_TIMEOUT,
    P_SESSION,
    P_END};

static const struct tool_param generate_locator_params[] = {P_TARGET(true), P_ELEMENT, P_TIMEOUT,
                                                            P_SESSION, P_END};

static const struct tool_field verify_out[] = {
    {"verified", PT_BOOLEAN, "True when the check held (false on VERIFICATION_FAILED).", false},
    {"actual", PT_STRING, "verify_value: the value found.", false},
    {"missing", PT_ARRAY, "verify_list_visible: the items not found.", false},
    O_PAGE_END};

static const struct tool_field generate_locator_out[] = {
    {"locator", PT_STRING, "A selector for the element, usable as target.", false},
    {"ref", PT_STRING, "The element's ref.", false},
    O_PAGE_END};

#define TESTING_TOOL(name_, title_, desc, params_, outputs_)                                       \
    {                                                                                              \
        TOOL(name_), .title = title_, .description = desc, .scope = TOOL_WORKER,                   \
                     .params = params_, .outputs = outputs_, .read_only = true,                    \
                     .idempotent = true, .default_timeout_ms = 10000, .cap = CAP_TESTING           \
    }

/* --- devtools: raw CDP and the page's content --- */
static const struct tool_param cdp_params[] = {
    {.name = "method",
     .type = PT_STRING,
     .description = "CDP method, e.g. DOM.getDocument (see --cdp-allow)",
     .required = true,
     .has_min = true,
     .min = 3,
     .has_max = true,
     .max = 128},
    {.name = "params", .type = PT_OBJECT, .description = "The method's parameters"},
    P_TIMEOUT,
    P_SESSION,
    P_END};

static const struct tool_field cdp_out[] = {
    {"result", PT_OBJECT, "The browser's answer (left out when too large).", false},
    {"truncated", PT_BOOLEAN, "True when the answer was cut to fit the response.", false},
    O_PAGE_END};

static const char *const content_format_values[] = {"text", "markdown", "html", NULL};

static const struct tool_param get_content_params[] = {
    {.name = "format",
     .type = PT_STRING,
     .description = "text (default), markdown or html",
     .enum_values = content_format_values},
    P_TARGET(false),
    P_ELEMENT,
    {.name = "maxChars",
     .type = PT_INTEGER,
     .description = "Cut after this many characters",
     .has_min = true,
     .min = 100,
     .has_max = true,
     .max = 100000000},
    P_FILENAME("content"),
    P_TIMEOUT,
    P_SESSION,
    P_END};

static const struct tool_field get_content_out[] = {
    {"content", PT_STRING, "The content (cut to fit; see truncated).", false},
    {"format", PT_STRING, "text, markdown or html.", false},
    {"chars", PT_INTEGER, "Length of the whole content.", false},
    {"truncated", PT_BOOLEAN, "True when content was cut.", false},
    {"file", PT_STRING, "With filename: the absolute path written.", false},
    O_PAGE_END};

#define MOUSE_TOOL(name_, title_, desc, params_)                                                   \
    {                                                                                              \
        TOOL(name_), .title = title_, .description = desc, .scope = TOOL_WORKER,                   \
                     .params = params_, .outputs = mouse_out, .destructive = true,                 \
                     .default_timeout_ms = 10000, .cap = CAP_VISION                                \
    }

static const struct tool_def devtools_tools[] = {
    {TOOL(browser_emulate_media), .title = "Emulate media features",
     .description = "Emulate CSS media (color scheme, reduced motion, ...). Omitted: unchanged; "
                    "null: cleared.",
     .scope = TOOL_WORKER, .params = emulate_media_params, .outputs = emulate_media_out,
     .idempotent = true, .default_timeout_ms = 10000},
    MOUSE_TOOL(browser_mouse_move_xy, "Move mouse", "Move the mouse to (x, y) in the viewport.",
               mouse_move_params),
    MOUSE_TOOL(browser_mouse_click_xy, "Click at coordinates",
               "Click at (x, y) in the viewport (CSS pixels).", mouse_click_params),
    MOUSE_TOOL(browser_mouse_drag_xy, "Drag mouse",
               "Drag with the left button from (startX, startY) to (endX, endY).",
               mouse_drag_params),
    MOUSE_TOOL(browser_mouse_down, "Press mouse down", "Press a mouse button where the mouse is.",
               mouse_button_params),
    MOUSE_TOOL(browser_mouse_up, "Release mouse button",
               "Release a mouse button where the mouse is.", mouse_button_params),
    MOUSE_TOOL(browser_mouse_wheel, "Scroll mouse wheel",
               "Turn the mouse wheel where the mouse is (deltas in CSS pixels).",
               mouse_wheel_params),
    {TOOL(browser_pdf_save), .title = "Save as PDF",
     .description = "Save the page as a PDF file in the server's output dir.", .scope = TOOL_WORKER,
     .params = pdf_save_params, .outputs = pdf_save_out, .read_only = true,
     .default_timeout_ms = 60000, .cap = CAP_PDF},
    TESTING_TOOL(browser_verify_element_visible, "Verify element visible",
                 "Check that an element with this role and accessible name is visible.",
                 verify_element_params, verify_out),
    TESTING_TOOL(browser_verify_text_visible, "Verify text visible",
                 "Check that the text is visible on the page.", verify_text_params, verify_out),
    TESTING_TOOL(browser_verify_list_visible, "Verify list visible",
                 "Check that the list (target) is visible and shows every item.",
                 verify_list_params, verify_out),
    TESTING_TOOL(browser_verify_value, "Verify value",
                 "Check a form element's value (checkbox/radio: \"true\" or \"false\").",
                 verify_value_params, verify_out),
    TESTING_TOOL(browser_generate_locator, "Create locator for element",
                 "A selector for the element (role=..., css=..., text=...) to use as target.",
                 generate_locator_params, generate_locator_out),
    {TOOL(browser_cdp), .title = "Raw CDP command",
     .description = "Send one Chrome DevTools Protocol command to the page; only what --cdp-allow "
                    "permits.",
     .scope = TOOL_WORKER, .params = cdp_params, .outputs = cdp_out, .destructive = true,
     .open_world = true, .default_timeout_ms = 30000, .cap = CAP_DEVTOOLS},
    {TOOL(browser_get_content), .title = "Page content",
     .description = "The page's or one element's content as text, Markdown or HTML.",
     .scope = TOOL_WORKER, .params = get_content_params, .outputs = get_content_out,
     .read_only = true, .idempotent = true, .default_timeout_ms = 30000, .cap = CAP_DEVTOOLS},
};

const struct tool_group catalog_devtools_tools = TOOL_GROUP(devtools_tools);
