/*
 * fuzz_http_parse.c - libFuzzer target for the HTTP request-head parser
 * (supervisor/http_parse.c), which sees every byte a network client sends.
 * Checks: no crash or out-of-bounds read; every span lies inside the input
 * and the head; a complete parse of a prefix stays complete with more bytes;
 * errors always carry a status and a reason.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "http_parse.h"

static void inside(const uint8_t *data, size_t head, struct http_span s)
{
    if (s.n && ((const uint8_t *)s.p < data || (const uint8_t *)s.p + s.n > data + head))
        abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct http_request req;
    size_t max_head = 1024;
    enum http_parse_result r = http_parse_request((const char *)data, size, max_head, &req);
    if (r == HTTP_PARSE_ERROR) {
        if (!req.error ||
            (req.error_status != 400 && req.error_status != 431 && req.error_status != 505))
            abort();
        return 0;
    }
    if (r == HTTP_PARSE_MORE)
        return 0;
    if (req.head_len == 0 || req.head_len > size || req.head_len > max_head ||
        req.nheaders > HTTP_MAX_HEADERS || req.content_length < -1)
        abort();
    inside(data, req.head_len, req.method);
    inside(data, req.head_len, req.target);
    for (size_t i = 0; i < req.nheaders; i++) {
        inside(data, req.head_len, req.headers[i].name);
        inside(data, req.head_len, req.headers[i].value);
        (void)http_list_has(req.headers[i].value, "text/event-stream");
    }
    (void)http_header(&req, "host");
    /* The same head alone parses the same way. */
    struct http_request again;
    if (http_parse_request((const char *)data, req.head_len, max_head, &again) != HTTP_PARSE_DONE ||
        again.head_len != req.head_len || again.nheaders != req.nheaders)
        abort();
    return 0;
}
