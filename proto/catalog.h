/*
 * catalog.h - the one declarative tool catalog.
 *
 * Single source for: tools/list (inputSchema, outputSchema, annotations),
 * supervisor-side argument validation, and the worker's dispatch table
 * (worker/tools/registry.c maps every TOOL_WORKER entry to a handler; a unit
 * test checks that none is missing).
 */
#ifndef TABVISOR_CATALOG_H
#define TABVISOR_CATALOG_H

#include <stdbool.h>
#include <stddef.h>
#include <jansson.h>

#include "tool_ids.h"

enum param_type { PT_STRING, PT_INTEGER, PT_NUMBER, PT_BOOLEAN, PT_ARRAY, PT_OBJECT };

struct tool_param {
    const char *name;
    enum param_type type;
    const char *description;
    bool required;
    const char *const *enum_values; /* NULL-terminated, strings only */
    bool has_min, has_max;
    double min, max;           /* numbers: value range; strings/arrays: length range */
    enum param_type item_type; /* arrays */
    /* Defined once for all tools in the server's instructions (initialize),
     * or self-evident from its name and the tool's description (x, y of a
     * mouse tool): the compact tools/list gives only its type and enum; see
     * catalog_instructions() and catalog_tool_json(). */
    bool shared;
    /* An alias kept for older clients: accepted, not listed in tools/list. */
    bool hidden;
    bool nullable; /* JSON null is accepted too (it clears a setting) */
};

struct tool_field {
    const char *name;
    enum param_type type;
    const char *description;
    bool required;
};

enum tool_scope {
    TOOL_SUPERVISOR, /* answered by the supervisor (session management) */
    TOOL_WORKER,     /* forwarded to the session's worker */
};

/* Capability groups (--caps): tools/list offers a group's tools only when it
 * is on; core is always on. Names as @playwright/mcp's --caps where it has
 * the same group. */
enum tool_cap {
    CAP_CORE,
    CAP_STORAGE,  /* cookies, localStorage/sessionStorage, storage state */
    CAP_NETWORK,  /* routes, offline, extra headers */
    CAP_PDF,      /* browser_pdf_save */
    CAP_VISION,   /* mouse by coordinates */
    CAP_TESTING,  /* browser_verify_*, browser_generate_locator */
    CAP_DEVTOOLS, /* browser_cdp, browser_get_content */
    CAP_COUNT
};

struct tool_def {
    enum tool_id id; /* set with TOOL(name), which sets name too */
    const char *name;
    const char *title;
    const char *description;
    enum tool_scope scope;
    const struct tool_param *params;
    const struct tool_field *outputs;
    bool read_only, destructive, idempotent, open_world; /* annotations */
    int default_timeout_ms; /* used when the call gives no timeout argument */
    enum tool_cap cap;      /* CAP_CORE (0) unless set */
    /* Worker tools: runs while a JavaScript dialog blocks the session's pages
     * (it answers the dialog, or reads or sets the session's own records:
     * tabs, logs, routes). Any other worker tool is refused with MODAL_STATE
     * before it runs (worker/main.c), as Playwright's MCP server refuses a
     * tool that does not handle the modal state. */
    bool modal_ok;
};

/* Check the catalog against the tool list (tool_ids.h): every listed tool
 * has exactly one entry, every entry an id, ids and names agree, worker
 * tools are TOOL_WORKER and supervisor tools TOOL_SUPERVISOR, the dialog's
 * answer (browser_handle_dialog) runs while a dialog is open. Returns 0, or
 * -1 with the first problem in err. The unit tests and start-up run it. */
int catalog_check(char *err, size_t errlen);

/* Every tool, whatever --caps says (callers filter by tool_def.cap). */
size_t catalog_count(void);
const struct tool_def *catalog_at(size_t i);
const struct tool_def *catalog_find(const char *name);

/* "storage" for CAP_STORAGE; catalog_cap_parse() takes a name of len
 * bytes (not NUL-terminated) and returns its cap or -1. */
const char *catalog_cap_name(enum tool_cap cap);
int catalog_cap_parse(const char *name, size_t len);

/* What initialize's `instructions` say once for every tool: the shared
 * parameters (sessionId, timeout, target, element, snapshot, filename) and
 * result fields, which tools/list therefore does not repeat per tool. */
const char *catalog_instructions(void);

/* The tools/list entry for t (new reference).
 *
 * Compact (full false, the default of tools/list) because schemas are paid on
 * every model request: shared parameters carry no description (the
 * instructions give it), string length limits are enforced by
 * catalog_validate() and named in its errors rather than spelled out, hidden
 * aliases are left out, the outputSchema lists the tool's own fields with
 * their types, and annotations give readOnlyHint, openWorldHint and the hints
 * whose value differs from MCP's defaults.
 *
 * Full (--schemas full) states every rule catalog_validate() applies, so a
 * client (or a test) can derive valid and invalid arguments from it. */
json_t *catalog_tool_json(const struct tool_def *t, bool full);

/* Check args (an object, or NULL for none) against t's parameters: required
 * present, types, enums, ranges, no unknown names. Returns 0, or -1 with a
 * message naming the parameter in err. On success, an integer parameter
 * given as a whole-number real (5000.0, as some clients send) is replaced by
 * the integer, so every reader can take it with json_integer_value. */
int catalog_validate(const struct tool_def *t, json_t *args, char *err, size_t errlen);

#endif
