/*
 * fuzz_jsonrpc.c - libFuzzer target for the stdio transport's input path:
 * line framing (jsonrpc_split_lines) and JSON-RPC parsing and validation
 * (jsonrpc_parse), the calls stdio_transport.c and http.c make on every
 * byte a client sends. Checks: no crash, leak or out-of-bounds read; lines
 * lie inside the input, hold no LF and are never empty; the framing consumes
 * exactly up to the last LF; every classification is consistent (a request
 * has a method and a string or integer id, a notification a method and no
 * id, params is an object or absent, an invalid message has a known code
 * and a reason).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "jsonrpc.h"

struct frame {
    const uint8_t *data;
    size_t size;
    size_t lines;
};

static void check_msg(const char *p, size_t n)
{
    struct jsonrpc_msg m;
    enum jsonrpc_kind k = jsonrpc_parse(p, n, &m);
    if (k != m.kind)
        abort();
    if (m.id && !json_is_string(m.id) && !json_is_integer(m.id))
        abort();
    if (m.params && !json_is_object(m.params))
        abort();
    switch (k) {
    case JSONRPC_REQUEST:
        if (!m.method || !m.id || !m.root)
            abort();
        break;
    case JSONRPC_NOTIFICATION:
        if (!m.method || m.id || !m.root)
            abort();
        break;
    case JSONRPC_RESPONSE:
        if (m.method || !m.id || !m.root)
            abort();
        break;
    case JSONRPC_INVALID:
        if (!m.error[0] || m.method ||
            (m.error_code != -32700 && m.error_code != -32600 && m.error_code != -32602 &&
             m.error_code != 0) ||
            (m.error_code == -32700) != (m.root == NULL))
            abort();
        break;
    default:
        abort();
    }
    jsonrpc_msg_clear(&m);
}

static void on_line(void *ud, const char *line, size_t n)
{
    struct frame *f = ud;
    const uint8_t *p = (const uint8_t *)line;
    if (n == 0 || p < f->data || p + n > f->data + f->size || memchr(line, '\n', n))
        abort();
    f->lines++;
    check_msg(line, n);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct frame f = {data, size, 0};
    size_t used = jsonrpc_split_lines((const char *)data, size, on_line, &f);
    if (used > size || (used > 0 && data[used - 1] != '\n') ||
        memchr(data + used, '\n', size - used))
        abort();
    /* At EOF stdio hands a last line without its LF over as it is. */
    if (used < size)
        check_msg((const char *)data + used, size - used);
    return 0;
}
