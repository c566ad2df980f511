/*
 * catalog_data.c - tools that move data in and out of a session: files into
 * the page (core), cookies and web storage (storage group), routes, offline
 * and extra headers (network group). Names and arguments as @playwright/mcp.
 */
#include "catalog_defs.h"

/* A file the agent names: like P_FILENAME, under the output dir. */
#define P_INPUT_FILE(req, what)                                                                    \
    {                                                                                              \
        .name = "filename", .type = PT_STRING,                                                     \
        .description = what " (a path inside the server's output dir)", .required = req,           \
        .has_min = true, .min = 1, .has_max = true, .max = 1024                                    \
    }

static const struct tool_param file_upload_params[] = {
    {.name = "paths",
     .type = PT_ARRAY,
     .item_type = PT_STRING,
     .description = "Files in the server's output dir. Omitted: cancel the chooser.",
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

static const struct tool_field file_upload_out[] = {
    {"files", PT_ARRAY, "Names of the files the input now holds.", false},
    O_SNAPSHOT_FIELDS,
    O_URL,
    O_TITLE,
    O_SESSION,
    O_RESTARTED,
    O_END};

static const struct tool_def data_tools[] = {
    {.name = "browser_file_upload",
     .title = "Upload files",
     .description = "Set files from the output dir on the open file chooser (or on target, an "
                    "<input type=file>).",
     .scope = TOOL_WORKER,
     .params = file_upload_params,
     .outputs = file_upload_out,
     .destructive = true,
     .open_world = true,
     .default_timeout_ms = 10000},
};

const struct tool_group catalog_data_tools = TOOL_GROUP(data_tools);
