/*
 * http_parse.h - HTTP/1.1 request heads, parsed in place.
 *
 * A pure function over a byte buffer: no allocation, no I/O, every output
 * points into the caller's buffer. The server (http.c) calls it on what it
 * has read so far; it is unit-tested (tests/unit/test_http_parse.c) and
 * fuzzed (tests/fuzz/fuzz_http_parse.c).
 *
 * Accepted: "METHOD SP target SP HTTP/1.x" then header lines, each ended by
 * CRLF (a bare LF is tolerated), then an empty line. Refused with a status
 * the server sends back: obsolete line folding, control bytes, bad header
 * names, conflicting or malformed Content-Length, more than one Host (400), a head longer than
 * max_head or more than HTTP_MAX_HEADERS headers (431), HTTP versions other
 * than 1.0 and 1.1 (505). Transfer-Encoding is reported, not decoded: the
 * server answers 411 (tabvisor does not read chunked request bodies).
 */
#ifndef TABVISOR_HTTP_PARSE_H
#define TABVISOR_HTTP_PARSE_H

#include <stdbool.h>
#include <stddef.h>

#define HTTP_MAX_HEADERS 64

enum http_parse_result {
    HTTP_PARSE_DONE = 0,   /* a whole head: fields below are set */
    HTTP_PARSE_MORE = 1,   /* no error so far; read more bytes */
    HTTP_PARSE_ERROR = -1, /* req->error_status says what to answer */
};

struct http_span {
    const char *p;
    size_t n;
};

struct http_header {
    struct http_span name, value; /* value without surrounding blanks */
};

struct http_request {
    struct http_span method, target;
    int minor;       /* HTTP/1.<minor> */
    size_t head_len; /* bytes up to and including the empty line */
    struct http_header headers[HTTP_MAX_HEADERS];
    size_t nheaders;
    long long content_length; /* -1 when absent */
    bool transfer_encoding;   /* a Transfer-Encoding header was present */
    bool keep_alive;          /* the connection may carry another request */
    int error_status;         /* on HTTP_PARSE_ERROR: 400, 431 or 505 */
    const char *error;        /* on HTTP_PARSE_ERROR: a short reason */
};

/* Parse the head at the start of buf[0..len). max_head bounds the head's
 * size (the request line and headers). Never reads past buf+len. */
enum http_parse_result http_parse_request(const char *buf, size_t len, size_t max_head,
                                          struct http_request *req);

/* The value of the first header called name (case-insensitive), or NULL. */
const struct http_span *http_header(const struct http_request *req, const char *name);

/* True when span equals s, ignoring ASCII case. */
bool http_span_ieq(struct http_span a, const char *s);

/* True when the comma-separated list in v has an element equal (ignoring
 * case and any ";parameters") to item. */
bool http_list_has(struct http_span v, const char *item);

#endif
