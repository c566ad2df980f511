/* jsonrpc.c - see jsonrpc.h. */
#include "jsonrpc.h"

#include <stdio.h>
#include <string.h>

static enum jsonrpc_kind invalid(struct jsonrpc_msg *m, int code, json_t *id, const char *why)
{
    m->kind = JSONRPC_INVALID;
    m->error_code = code;
    m->id = id;
    m->method = NULL;
    m->params = NULL;
    snprintf(m->error, sizeof m->error, "%s", why);
    return m->kind;
}

enum jsonrpc_kind jsonrpc_parse(const char *data, size_t len, struct jsonrpc_msg *m)
{
    memset(m, 0, sizeof *m);
    json_error_t jerr;
    m->root = json_loadb(data, len, JSON_ALLOW_NUL | JSON_DECODE_ANY, &jerr);
    if (!m->root) {
        char why[300];
        snprintf(why, sizeof why, "Parse error: %s", jerr.text);
        return invalid(m, -32700, NULL, why);
    }
    json_t *msg = m->root;
    if (json_is_array(msg))
        return invalid(m, -32600, NULL, "Invalid Request: batches are not supported");
    if (!json_is_object(msg))
        return invalid(m, -32600, NULL, "Invalid Request: expected a JSON-RPC 2.0 object");
    json_t *id = json_object_get(msg, "id");
    if (id && !json_is_string(id) && !json_is_integer(id))
        return invalid(m, -32600, NULL, "Invalid Request: id must be a string or an integer");
    const char *version = json_string_value(json_object_get(msg, "jsonrpc"));
    if (!version || strcmp(version, "2.0") != 0)
        return invalid(m, -32600, id, "Invalid Request: expected a JSON-RPC 2.0 object");
    json_t *jmethod = json_object_get(msg, "method");
    if (!jmethod) {
        if (id && (json_object_get(msg, "result") || json_object_get(msg, "error"))) {
            m->kind = JSONRPC_RESPONSE;
            m->id = id;
            return m->kind;
        }
        return invalid(m, -32600, id,
                       "Invalid Request: a message needs a method, or an id with a result or "
                       "error");
    }
    if (!json_is_string(jmethod))
        return invalid(m, -32600, id, "Invalid Request: method must be a string");
    json_t *params = json_object_get(msg, "params");
    if (params && !json_is_object(params))
        return invalid(m, id ? -32602 : 0, id, "Invalid params: params must be an object");
    m->kind = id ? JSONRPC_REQUEST : JSONRPC_NOTIFICATION;
    m->id = id;
    m->method = json_string_value(jmethod);
    /* "ping\u0000x" is no method of ours; compared as a C string it would
     * pass for "ping". It goes on as a request no handler knows. */
    if (strlen(m->method) != json_string_length(jmethod))
        m->method = "(a name holding a NUL character)";
    m->params = params;
    return m->kind;
}

void jsonrpc_msg_clear(struct jsonrpc_msg *m)
{
    json_decref(m->root);
    memset(m, 0, sizeof *m);
}

size_t jsonrpc_split_lines(const char *buf, size_t len, jsonrpc_line_fn fn, void *ud)
{
    size_t start = 0;
    for (;;) {
        const char *nl = memchr(buf + start, '\n', len - start);
        if (!nl)
            return start;
        size_t end = (size_t)(nl - buf);
        size_t n = end - start;
        if (n && buf[start + n - 1] == '\r')
            n--;
        if (n)
            fn(ud, buf + start, n);
        start = end + 1;
    }
}
