/*
 * jsonrpc.h - JSON-RPC 2.0 messages as the MCP transports receive them:
 * stdio's line framing, and the checks every message passes before mcp.c
 * acts on it. Pure (no I/O, no server state): fuzzed by
 * tests/fuzz/fuzz_jsonrpc.c through the same calls stdio makes.
 */
#ifndef TABVISOR_JSONRPC_H
#define TABVISOR_JSONRPC_H

#include <stddef.h>
#include <jansson.h>

enum jsonrpc_kind {
    JSONRPC_INVALID,      /* error_code and error say why */
    JSONRPC_REQUEST,      /* method and id (a string or an integer) */
    JSONRPC_NOTIFICATION, /* method, no id */
    JSONRPC_RESPONSE,     /* result or error, from the client */
};

struct jsonrpc_msg {
    enum jsonrpc_kind kind;
    json_t *root;       /* owned; NULL when the bytes were not JSON */
    json_t *id;         /* borrowed from root; NULL when absent or unusable */
    const char *method; /* borrowed from root */
    json_t *params;     /* borrowed; NULL or an object */
    /* JSONRPC_INVALID: -32700, -32600 or -32602 to answer with (id when
     * set, else null); 0 when nothing may be answered (a notification). */
    int error_code;
    char error[320];
};

/* Parse and classify the bytes of one message. Always fills m; release it
 * with jsonrpc_msg_clear(). Returns m->kind. */
enum jsonrpc_kind jsonrpc_parse(const char *data, size_t len, struct jsonrpc_msg *m);
void jsonrpc_msg_clear(struct jsonrpc_msg *m);

/* stdio framing: fn gets each complete line of buf[0..len) (ended by LF; a
 * CR before the LF dropped; empty lines skipped). Returns how many bytes
 * were consumed, i.e. up to and including the last LF. */
typedef void (*jsonrpc_line_fn)(void *ud, const char *line, size_t n);
size_t jsonrpc_split_lines(const char *buf, size_t len, jsonrpc_line_fn fn, void *ud);

#endif
