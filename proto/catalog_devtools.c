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
        .enum_values = values, .nullable = true                                                    \
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
    {"emulated", PT_OBJECT, "The overrides now in force, by parameter name.", false},
    O_URL,
    O_TITLE,
    O_SESSION,
    O_RESTARTED,
    O_END};

static const struct tool_def devtools_tools[] = {
    {.name = "browser_emulate_media",
     .title = "Emulate media features",
     .description = "Emulate CSS media (color scheme, reduced motion, ...). Omitted: unchanged; "
                    "null: cleared.",
     .scope = TOOL_WORKER,
     .params = emulate_media_params,
     .outputs = emulate_media_out,
     .idempotent = true,
     .default_timeout_ms = 10000},
};

const struct tool_group catalog_devtools_tools = TOOL_GROUP(devtools_tools);
