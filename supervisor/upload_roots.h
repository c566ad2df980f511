/*
 * upload_roots.h - the user's own files for browser_file_upload and
 * browser_drop (issue 37, item 4).
 *
 * A worker reads only its session's directory (Landlock), a name the user
 * cannot know in advance. Following the MCP ecosystem's convention, a file
 * inside one of the client's declared roots (roots/list: over stdio always,
 * over HTTP with --http-client-roots, as the paths are the server's) may be
 * uploaded by that client's calls, and so may a file under an operator's
 * --upload-dir (every session). The supervisor reads such a file with the
 * same no-symlink walk as every other (proto/safepath.h) from the root it
 * lies in, and hands the bytes to the worker in the call's arguments
 * (UPLOAD_FILES_ARG); nothing under --output-dir is read here, so another
 * session's directory stays out of reach.
 */
#ifndef TABVISOR_UPLOAD_ROOTS_H
#define TABVISOR_UPLOAD_ROOTS_H

#include <stdbool.h>
#include <jansson.h>

#include "catalog.h"

struct server;
struct mcp_conn;

/* For a tool with file paths: read each absolute path outside the output
 * dir from the client's roots or --upload-dir into args (UPLOAD_FILES_ARG).
 * NULL when done, else the error result (the caller's) to answer with: a
 * path outside every root, a symlink, a missing or too large file. */
json_t *upload_from_roots(struct server *srv, struct mcp_conn *conn, const struct tool_def *tool,
                          json_t *args, const char *session_id);

#endif
