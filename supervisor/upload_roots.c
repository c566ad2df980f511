/* upload_roots.c - see upload_roots.h. */
#include "base64.h"
#include "upload_roots.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "errors.h"
#include "mcp_conn.h"
#include "safepath.h"
#include "server.h"
#include "uploads.h"

/* dir's length when path lies strictly inside it ("/a/b" in "/a"), else 0. */
static size_t inside(const char *path, const char *dir)
{
    size_t n = strlen(dir);
    while (n > 1 && dir[n - 1] == '/')
        n--;
    if (n == 1 && dir[0] == '/')
        return path[0] == '/' && path[1] ? 1 : 0;
    return strncmp(path, dir, n) == 0 && path[n] == '/' && path[n + 1] ? n : 0;
}

struct root_match {
    char dir[PATH_MAX];
    const char *path;
    bool found;
};

static int match_upload_dir(const char *item, void *ud)
{
    struct root_match *m = ud;
    if (!m->found && inside(m->path, item)) {
        snprintf(m->dir, sizeof m->dir, "%s", item);
        m->found = true;
    }
    return 0;
}

/* The root path lies in (the client's roots first): true with m->dir. */
static bool find_root(const struct server *srv, const struct mcp_conn *conn, const char *path,
                      struct root_match *m)
{
    m->path = path;
    m->found = false;
    size_t i;
    json_t *r;
    json_array_foreach(conn->roots, i, r)
    {
        if (inside(path, json_string_value(r))) {
            snprintf(m->dir, sizeof m->dir, "%s", json_string_value(r));
            return m->found = true;
        }
    }
    if (srv->cfg.upload_dirs)
        config_each_item(srv->cfg.upload_dirs, match_upload_dir, m);
    return m->found;
}

json_t *upload_from_roots(struct server *srv, struct mcp_conn *conn, const struct tool_def *tool,
                          json_t *args, const char *session_id)
{
    json_t *paths = json_object_get(args, "paths");
    if (strcmp(tool->name, "browser_file_upload") != 0 && strcmp(tool->name, "browser_drop") != 0)
        return NULL;
    json_object_del(args, UPLOAD_FILES_ARG); /* only ever ours */
    if (!json_is_array(paths))
        return NULL;
    json_t *files = json_object();
    size_t total = 0, i;
    json_t *v;
    char msg[PATH_MAX + 300];
    json_array_foreach(paths, i, v)
    {
        const char *path = json_string_value(v);
        /* Relative names and the output dir are the worker's to judge. */
        if (!path || path[0] != '/' || inside(path, srv->cfg.output_dir) ||
            json_object_get(files, path))
            continue;
        struct root_match m;
        if (!find_root(srv, conn, path, &m)) {
            snprintf(msg, sizeof msg,
                     "paths[%zu]: %.1000s is outside the output dir, the client's roots and "
                     "every --upload-dir (%zu root%s declared)",
                     i, path, json_array_size(conn->roots),
                     json_array_size(conn->roots) == 1 ? "" : "s");
            json_decref(files);
            return tv_error_result(TV_PATH_NOT_ALLOWED, msg,
                                   "Name a file inside a root the MCP client declared, a "
                                   "directory given with --upload-dir, or the session's own "
                                   "directory.",
                                   session_id, NULL);
        }
        char *data = NULL, why[300];
        size_t len = 0;
        enum safepath_err r = safepath_read(m.dir, path + inside(path, m.dir) + 1,
                                            UPLOAD_MAX_BYTES - total, &data, &len, why, sizeof why);
        if (r != SAFEPATH_OK) {
            snprintf(msg, sizeof msg, "paths[%zu]: %.1000s: %s", i, path, why);
            json_decref(files);
            return tv_error_result(r == SAFEPATH_REFUSED || r == SAFEPATH_MISSING
                                       ? TV_PATH_NOT_ALLOWED
                                       : TV_INVALID_PARAMETERS,
                                   msg, NULL, session_id, NULL);
        }
        total += len;
        size_t cap = (len + 2) / 3 * 4 + 1;
        char *b64 = malloc(cap);
        if (b64)
            base64_encode_to(data, len, b64, cap);
        free(data);
        const char *slash = strrchr(path, '/');
        json_object_set_new(files, path,
                            json_pack("{s:s, s:s}", "name", slash + 1, "data", b64 ? b64 : ""));
        free(b64);
    }
    if (json_object_size(files))
        json_object_set_new(args, UPLOAD_FILES_ARG, files);
    else
        json_decref(files);
    return NULL;
}
