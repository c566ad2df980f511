/*
 * catalog_defs.h - private to proto/catalog*.c: the parameter and output
 * definitions every tool table shares, so each is written (and worded) once.
 *
 * The tools are declared in several files, one per concern (catalog.c holds
 * the machinery and the first tools; catalog_<concern>.c the rest), each
 * exporting a table that catalog.c lists in catalog_groups.
 */
#ifndef TABVISOR_CATALOG_DEFS_H
#define TABVISOR_CATALOG_DEFS_H

#include "catalog.h"
#include "proto.h"

/* Enum values shared by several tools (defined in catalog.c). */
extern const char *const wait_until_values[];
extern const char *const button_values[];
extern const char *const modifier_values[];
extern const char *const image_type_values[];
extern const char *const snapshot_mode_values[];
extern const char *const wait_state_values[];
extern const char *const load_state_values[];
extern const char *const console_level_values[];

/* Parameters shared by every browser tool. */
#define P_SESSION                                                                                  \
    {                                                                                              \
        .name = "sessionId", .type = PT_STRING,                                                    \
        .description = "Browser session to use (from browser_session_create). Omitted: this "      \
                       "connection's default session, created on first use.",                      \
        .has_min = true, .min = 1, .has_max = true, .max = TV_SESSION_ID_MAX, .shared = true       \
    }

/* The session whose directory a storage state file is read from: each
 * session's files are its own (supervisor/outdirs.h), so handing one to
 * another takes the source session's id, the capability to drive it. */
#define P_FROM_SESSION                                                                             \
    {                                                                                              \
        .name = "fromSessionId", .type = PT_STRING,                                                \
        .description = "Copy the file from that session's output dir first", .has_min = true,      \
        .min = 1, .has_max = true, .max = TV_SESSION_ID_MAX                                        \
    }

#define P_TIMEOUT                                                                                  \
    {                                                                                              \
        .name = "timeout", .type = PT_INTEGER,                                                     \
        .description = "Deadline for the whole call in milliseconds.", .has_min = true, .min = 1,  \
        .has_max = true, .max = 600000, .shared = true                                             \
    }

#define P_TARGET(req)                                                                              \
    {                                                                                              \
        .name = "target", .type = PT_STRING,                                                       \
        .description = "The element: a snapshot ref (e12, f2e7) or a selector: css=..., "          \
                       "xpath=... or //..., role=button[name=\"Save\"], text=..., or plain CSS.",  \
        .required = req, .has_min = true, .min = 1, .has_max = true, .max = 4096, .shared = true   \
    }

#define P_ELEMENT                                                                                  \
    {                                                                                              \
        .name = "element", .type = PT_STRING,                                                      \
        .description = "Human-readable description of the element, used only in messages.",        \
        .has_max = true, .max = 1024, .shared = true                                               \
    }

/* The snapshot an action tool returns (respond.c); every action tool takes it. */
#define P_SNAPSHOT                                                                                 \
    {                                                                                              \
        .name = "snapshot", .type = PT_STRING,                                                     \
        .description = "Snapshot in the result: full, diff (only lines changed since the last "    \
                       "snapshot, with their ancestors) or none. Default: the server's "           \
                       "--snapshot-mode (full unless configured).",                                \
        .enum_values = snapshot_mode_values, .shared = true                                        \
    }

/* A file under the server's output dir for the whole output (output.c). */
#define P_FILENAME(what)                                                                           \
    {                                                                                              \
        .name = "filename", .type = PT_STRING,                                                     \
        .description = "Write the whole " what " to this file (a relative path inside the "        \
                       "server's output dir) instead of the response; the result gives its path.", \
        .has_min = true, .min = 1, .has_max = true, .max = 1024, .shared = true                    \
    }

#define P_END                                                                                      \
    {                                                                                              \
        .name = NULL                                                                               \
    }

/* Output fields shared by results that describe the page. */
#define O_SESSION                                                                                  \
    {                                                                                              \
        "sessionId", PT_STRING, "The browser session that ran the call.", false                    \
    }

#define O_URL                                                                                      \
    {                                                                                              \
        "url", PT_STRING, "The page URL after the call.", false                                    \
    }

#define O_TITLE                                                                                    \
    {                                                                                              \
        "title", PT_STRING, "The page title after the call.", false                                \
    }

#define O_RESTARTED                                                                                \
    {"sessionRestarted", PT_BOOLEAN,                                                               \
     "True when the session's worker or browser had crashed and this call ran in a fresh one.",    \
     false},                                                                                       \
    {                                                                                              \
        "sessionRestored", PT_OBJECT,                                                              \
            "After a crash: what was restored into the fresh one (tabs, cookies, "                 \
            "localStorageOrigins, sessionStorageTabs, viewport, media) and notRestored.",          \
            false                                                                                  \
    }

#define O_END                                                                                      \
    {                                                                                              \
        NULL, PT_STRING, NULL, false                                                               \
    }

#define P_WAIT_UNTIL                                                                               \
    {                                                                                              \
        .name = "waitUntil", .type = PT_STRING,                                                    \
        .description = "When the navigation counts as done (default load).",                       \
        .enum_values = wait_until_values                                                           \
    }

/* The end of most output tables: the page after the call, the session. */
#define O_PAGE_END O_URL, O_TITLE, O_SESSION, O_RESTARTED, O_END

/* A drag's start or end element (a ref or selector). Playwright's older
 * startRef/endRef names are accepted too, as hidden aliases. */
#define P_DRAG_END(name_, alias)                                                                   \
    {                                                                                              \
        .name = name_, .type = PT_STRING, .has_min = true, .min = 1, .has_max = true, .max = 4096, \
        .hidden = alias                                                                            \
    }

#define O_SNAPSHOT_FIELDS                                                                          \
    {"snapshot", PT_STRING, "The page's snapshot after the call (per the snapshot argument).",     \
     false},                                                                                       \
        {"diff", PT_BOOLEAN, "True when snapshot is a diff against the previous snapshot.",        \
         false},                                                                                   \
    {                                                                                              \
        "truncated", PT_BOOLEAN, "True when the snapshot was cut to fit the response.", false      \
    }

/* One file's tools: catalog.c walks every group in catalog_groups order. */
struct tool_group {
    const struct tool_def *tools;
    size_t count;
};
#define TOOL_GROUP(arr)                                                                            \
    {                                                                                              \
        (arr), sizeof(arr) / sizeof((arr)[0])                                                      \
    }

/* The tables (one line per catalog_<concern>.c). */
extern const struct tool_group catalog_first_tools;
extern const struct tool_group catalog_devtools_tools;
extern const struct tool_group catalog_data_tools;
extern const struct tool_group catalog_tabs_tools;

#endif
