/*
 * mcp.c - the MCP methods a tools-only server has, on messages that
 * jsonrpc.c parsed and checked.
 *
 * Errors: -32700 unparsable JSON, -32600 not a valid request (including a
 * batch array, which MCP 2025-06-18 removed, and a message with neither a
 * method nor a result or error), -32601 unknown method, -32602
 * bad params (including an unknown tool name, as the MCP spec asks). A tool
 * whose arguments fail validation is a tool result with isError and
 * INVALID_PARAMETERS, so the model can read and fix it (MCP 2025-11-25).
 */
#include "mcp.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "catalog.h"
#include "errors.h"
#include "log.h"
#include "router.h"
#include "server.h"

static const char *const supported_versions[] = {"2025-11-25", "2025-06-18", "2025-03-26", NULL};

int mcp_version_supported(const char *v)
{
    for (size_t i = 0; v && supported_versions[i]; i++)
        if (strcmp(v, supported_versions[i]) == 0)
            return 1;
    return 0;
}

struct mcp_conn *mcp_conn_new(struct server *srv, const struct mcp_transport_ops *ops,
                              void *transport)
{
    struct mcp_conn *c = calloc(1, sizeof *c);
    if (!c)
        return NULL;
    c->srv = srv;
    c->ops = ops;
    c->transport = transport;
    c->log_level = -1;
    return c;
}

void mcp_conn_free(struct mcp_conn *c)
{
    if (!c)
        return;
    router_conn_closed(c->srv, c);
    json_decref(c->roots);
    free(c);
}

/* Ask the client for its roots (a request of ours; the answer comes back
 * as a JSONRPC_RESPONSE with our id). Only where they name this server's
 * files. */
static void ask_roots(struct mcp_conn *c)
{
    if (!c->client_roots || (c->ops->remote && !c->srv->cfg.http_client_roots))
        return;
    snprintf(c->roots_asked, sizeof c->roots_asked, "tabvisor-roots-%u", ++c->roots_seq);
    json_t *msg = json_pack("{s:s, s:s, s:s}", "jsonrpc", "2.0", "id", c->roots_asked, "method",
                            "roots/list");
    c->ops->send(c, msg);
    json_decref(msg);
}

void mcp_conn_stream_opened(struct mcp_conn *c)
{
    if (c && c->initialized && !c->roots)
        ask_roots(c);
}

/* A file:// URI's path, percent-decoded, into out; false for anything else
 * (another scheme, a host, a relative or NUL-holding path). */
static bool root_path(const char *uri, char *out, size_t outlen)
{
    const char *p = NULL;
    if (!strncmp(uri, "file:///", 8))
        p = uri + 7;
    else if (!strncmp(uri, "file://localhost/", 17))
        p = uri + 16;
    if (!p)
        return false;
    size_t o = 0;
    for (; *p && *p != '?' && *p != '#'; p++) {
        int ch = (unsigned char)*p;
        if (ch == '%') {
            unsigned v;
            if (sscanf(p + 1, "%2x", &v) != 1 || !p[1] || !p[2] || v == 0)
                return false;
            ch = (int)v;
            p += 2;
        }
        if (o + 1 >= outlen)
            return false;
        out[o++] = (char)ch;
    }
    while (o > 1 && out[o - 1] == '/')
        o--; /* "/home/u/" is "/home/u" */
    out[o] = '\0';
    return out[0] == '/';
}

/* The answer to our roots/list: keep the file:// ones (at most 64). */
static void take_roots(struct mcp_conn *c, json_t *result)
{
    c->roots_asked[0] = '\0';
    json_t *list = json_array();
    size_t i;
    json_t *r;
    json_array_foreach(json_object_get(result, "roots"), i, r)
    {
        const char *uri = json_string_value(json_object_get(r, "uri"));
        char path[PATH_MAX];
        if (uri && json_array_size(list) < 64 && root_path(uri, path, sizeof path))
            json_array_append_new(list, json_string(path));
    }
    json_decref(c->roots);
    c->roots = list;
    log_info("the client declared %zu root%s for uploads", json_array_size(list),
             json_array_size(list) == 1 ? "" : "s");
}

static void handle_response(struct mcp_conn *c, const struct jsonrpc_msg *m)
{
    const char *id = json_string_value(m->id);
    if (!id || !c->roots_asked[0] || strcmp(id, c->roots_asked) != 0)
        return; /* not an answer anything waits for */
    json_t *result = json_object_get(m->root, "result");
    if (json_is_object(result)) {
        take_roots(c, result);
    } else {
        c->roots_asked[0] = '\0';
        log_info("the client did not list its roots: %s",
                 json_string_value(json_object_get(json_object_get(m->root, "error"), "message"))
                     ?: "error");
    }
}

void mcp_reply_result(struct mcp_conn *c, json_t *rpc_id, json_t *result)
{
    json_t *msg = json_pack("{s:s, s:O, s:o}", "jsonrpc", "2.0", "id", rpc_id, "result", result);
    c->ops->send(c, msg);
    json_decref(msg);
}

static void front_notify(struct mcp_conn *c, json_t *msg)
{
    c->ops->send(c, msg);
}

const struct router_front mcp_front = {.reply = mcp_reply_result, .notify = front_notify};

void mcp_reply_error(struct mcp_conn *c, json_t *rpc_id, int code, const char *message)
{
    json_t *msg =
        json_pack("{s:s, s:O, s:{s:i, s:s}}", "jsonrpc", "2.0", "id", rpc_id ? rpc_id : json_null(),
                  "error", "code", code, "message", message);
    c->ops->send(c, msg);
    json_decref(msg);
}

static void handle_initialize(struct mcp_conn *c, json_t *id, json_t *params)
{
    const char *asked = json_string_value(json_object_get(params, "protocolVersion"));
    if (!json_is_object(params) || !asked) {
        mcp_reply_error(c, id, -32602, "initialize needs params.protocolVersion");
        return;
    }
    /* Answer with the client's version when we speak it, else our latest:
     * the client then decides whether it can go on. */
    const char *v = mcp_version_supported(asked) ? asked : MCP_LATEST_VERSION;
    snprintf(c->protocol, sizeof c->protocol, "%s", v);
    c->initialized = 1;
    c->client_roots =
        json_is_object(json_object_get(json_object_get(params, "capabilities"), "roots"));
    json_t *result = json_pack(
        "{s:s, s:{s:{s:b}, s:{}}, s:{s:s, s:s, s:s}, s:s}", "protocolVersion", v, "capabilities",
        "tools", "listChanged", 0, "logging", "serverInfo", "name", "tabvisor", "title",
        "tabvisor browser automation", "version", "0.1.0", "instructions", catalog_instructions());
    mcp_reply_result(c, id, result);
}

static void handle_tools_list(struct mcp_conn *c, json_t *id)
{
    json_t *tools = json_array();
    for (size_t i = 0; i < catalog_count(); i++)
        if (config_tool_enabled(&c->srv->cfg, catalog_at(i)))
            json_array_append_new(tools,
                                  catalog_tool_json(catalog_at(i), c->srv->cfg.full_schemas));
    mcp_reply_result(c, id, json_pack("{s:o}", "tools", tools));
}

static void handle_tools_call(struct mcp_conn *c, json_t *id, json_t *params)
{
    if (!json_is_object(params)) {
        mcp_reply_error(c, id, -32602, "tools/call needs params {name, arguments}");
        return;
    }
    const char *name = json_string_value(json_object_get(params, "name"));
    if (!name) {
        mcp_reply_error(c, id, -32602, "tools/call needs params.name (a string)");
        return;
    }
    /* A name with a NUL inside would match the tool named by its first part. */
    const struct tool_def *tool =
        strlen(name) == json_string_length(json_object_get(params, "name")) ? catalog_find(name)
                                                                            : NULL;
    if (!tool) {
        char msg[200];
        snprintf(msg, sizeof msg, "Unknown tool: %.120s", name);
        mcp_reply_error(c, id, -32602, msg);
        return;
    }
    if (!config_tool_enabled(&c->srv->cfg, tool)) {
        char msg[240];
        if (c->srv->cfg.tools)
            snprintf(msg, sizeof msg,
                     "Tool %s is not enabled: this server offers only --tools %.120s", tool->name,
                     c->srv->cfg.tools);
        else
            snprintf(msg, sizeof msg,
                     "Tool %s is not enabled: start the server with --caps %s to use it",
                     tool->name, catalog_cap_name(tool->cap));
        mcp_reply_error(c, id, -32602, msg);
        return;
    }
    json_t *args = json_object_get(params, "arguments");
    if (args && json_is_null(args))
        args = NULL;
    char err[256];
    if (catalog_validate(tool, args, err, sizeof err) < 0) {
        const char *sid = json_string_value(json_object_get(args, "sessionId"));
        char hint[160];
        snprintf(hint, sizeof hint, "See the inputSchema of %s in tools/list.", tool->name);
        mcp_reply_result(c, id, tv_error_result(TV_INVALID_PARAMETERS, err, hint, sid, NULL));
        return;
    }
    json_t *meta = json_object_get(params, "_meta");
    json_t *ptoken = json_object_get(meta, "progressToken");
    if (ptoken && !json_is_string(ptoken) && !json_is_integer(ptoken))
        ptoken = NULL;
    json_t *result = router_tool_call(c->srv, c, id, tool, args, ptoken);
    if (result)
        mcp_reply_result(c, id, result);
}

/* MCP's syslog levels onto ours; critical and above map past LOG_ERROR. */
static void handle_set_level(struct mcp_conn *c, json_t *id, json_t *params)
{
    static const char *const names[] = {"debug", "info",     "notice", "warning",
                                        "error", "critical", "alert",  "emergency"};
    const char *level = json_string_value(json_object_get(params, "level"));
    for (int i = 0; level && i < 8; i++) {
        if (strcmp(level, names[i]) == 0) {
            c->log_level = i <= LOG_ERROR ? i : LOG_ERROR + 1;
            mcp_reply_result(c, id, json_object());
            if (c->ops->log_level_changed)
                c->ops->log_level_changed(c);
            return;
        }
    }
    mcp_reply_error(c, id, -32602,
                    "Invalid params: level must be one of debug, info, notice, warning, error, "
                    "critical, alert, emergency");
}

static void handle_notification(struct mcp_conn *c, const char *method, json_t *params)
{
    if (strcmp(method, "notifications/cancelled") == 0) {
        json_t *rid = json_object_get(params, "requestId");
        if (rid)
            router_cancel(c->srv, c, rid);
    } else if (strcmp(method, "notifications/initialized") == 0 ||
               strcmp(method, "notifications/roots/list_changed") == 0) {
        ask_roots(c);
    }
    /* Unknown notifications need no action. */
}

void mcp_conn_dispatch(struct mcp_conn *c, const struct jsonrpc_msg *m)
{
    json_t *id = m->id;
    switch (m->kind) {
    case JSONRPC_INVALID:
        if (m->error_code)
            mcp_reply_error(c, id, m->error_code, m->error);
        return;
    case JSONRPC_RESPONSE:
        handle_response(c, m);
        return;
    case JSONRPC_NOTIFICATION:
        handle_notification(c, m->method, m->params);
        return;
    case JSONRPC_REQUEST:
        break;
    }
    const char *method = m->method;
    json_t *params = m->params;
    if (strcmp(method, "initialize") == 0) {
        handle_initialize(c, id, params);
    } else if (strcmp(method, "ping") == 0) {
        mcp_reply_result(c, id, json_object());
    } else if (strcmp(method, "tools/list") == 0) {
        handle_tools_list(c, id);
    } else if (strcmp(method, "tools/call") == 0) {
        handle_tools_call(c, id, params);
    } else if (strcmp(method, "logging/setLevel") == 0) {
        handle_set_level(c, id, params);
    } else {
        char msg[200];
        snprintf(msg, sizeof msg, "Method not found: %.120s", method);
        mcp_reply_error(c, id, -32601, msg);
    }
}

void mcp_conn_handle(struct mcp_conn *c, const char *data, size_t len)
{
    struct jsonrpc_msg m;
    jsonrpc_parse(data, len, &m);
    mcp_conn_dispatch(c, &m);
    jsonrpc_msg_clear(&m);
}
