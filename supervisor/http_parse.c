/* http_parse.c - see http_parse.h. Strict where leniency would let two
 * parsers disagree about where a request ends (request smuggling):
 * conflicting Content-Length, Transfer-Encoding, folded lines, two Hosts. */
#include "http_parse.h"

#include <string.h>
#include <strings.h>

/* RFC 9110 tchar. */
static bool is_tchar(unsigned char c)
{
    if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9'))
        return true;
    return c && strchr("!#$%&'*+-.^_`|~", c) != NULL;
}

/* Field values: visible ASCII, blanks and obs-text; no other control bytes. */
static bool is_vchar(unsigned char c)
{
    return c == '\t' || (c >= 0x20 && c != 0x7f);
}

static enum http_parse_result fail(struct http_request *req, int status, const char *why)
{
    req->error_status = status;
    req->error = why;
    return HTTP_PARSE_ERROR;
}

/* Find the end of the line starting at off: sets *eol to the index of the
 * LF and *content_end to the end of the content (before an optional CR).
 * Returns false if no LF within buf[off..len). */
static bool next_line(const char *buf, size_t len, size_t off, size_t *eol, size_t *content_end)
{
    const char *lf = memchr(buf + off, '\n', len - off);
    if (!lf)
        return false;
    *eol = (size_t)(lf - buf);
    *content_end = *eol;
    if (*content_end > off && buf[*content_end - 1] == '\r')
        (*content_end)--;
    return true;
}

bool http_span_ieq(struct http_span a, const char *s)
{
    size_t n = strlen(s);
    return a.n == n && strncasecmp(a.p, s, n) == 0;
}

static enum http_parse_result parse_request_line(const char *p, size_t n, struct http_request *req)
{
    size_t i = 0;
    while (i < n && is_tchar((unsigned char)p[i]))
        i++;
    if (i == 0 || i >= n || p[i] != ' ')
        return fail(req, 400, "bad request line");
    req->method = (struct http_span){p, i};
    size_t t = ++i;
    while (i < n && p[i] != ' ') {
        unsigned char c = (unsigned char)p[i];
        if (c <= 0x20 || c == 0x7f)
            return fail(req, 400, "bad request target");
        i++;
    }
    if (i == t || i >= n)
        return fail(req, 400, "bad request line");
    req->target = (struct http_span){p + t, i - t};
    i++;
    if (n - i != 8 || memcmp(p + i, "HTTP/", 5) != 0 || p[i + 6] != '.' || p[i + 5] < '0' ||
        p[i + 5] > '9' || p[i + 7] < '0' || p[i + 7] > '9')
        return fail(req, 400, "bad HTTP version");
    if (p[i + 5] != '1' || (p[i + 7] != '0' && p[i + 7] != '1'))
        return fail(req, 505, "HTTP version not supported");
    req->minor = p[i + 7] - '0';
    return HTTP_PARSE_DONE;
}

static enum http_parse_result parse_content_length(struct http_span v, struct http_request *req)
{
    if (v.n == 0 || v.n > 15)
        return fail(req, 400, "bad Content-Length");
    long long n = 0;
    for (size_t i = 0; i < v.n; i++) {
        if (v.p[i] < '0' || v.p[i] > '9')
            return fail(req, 400, "bad Content-Length");
        n = n * 10 + (v.p[i] - '0');
    }
    if (req->content_length >= 0 && req->content_length != n)
        return fail(req, 400, "conflicting Content-Length");
    req->content_length = n;
    return HTTP_PARSE_DONE;
}

static enum http_parse_result parse_header_line(const char *p, size_t n, struct http_request *req)
{
    if (p[0] == ' ' || p[0] == '\t')
        return fail(req, 400, "obsolete line folding");
    size_t i = 0;
    while (i < n && is_tchar((unsigned char)p[i]))
        i++;
    if (i == 0 || i >= n || p[i] != ':')
        return fail(req, 400, "bad header line");
    if (req->nheaders == HTTP_MAX_HEADERS)
        return fail(req, 431, "too many headers");
    /* RFC 9112 3.2: two Host lines would let two parsers pick different hosts. */
    if (http_span_ieq((struct http_span){p, i}, "host") && http_header(req, "host"))
        return fail(req, 400, "more than one Host header");
    struct http_header *h = &req->headers[req->nheaders++];
    h->name = (struct http_span){p, i};
    size_t b = i + 1, e = n;
    while (b < e && (p[b] == ' ' || p[b] == '\t'))
        b++;
    while (e > b && (p[e - 1] == ' ' || p[e - 1] == '\t'))
        e--;
    for (size_t k = b; k < e; k++)
        if (!is_vchar((unsigned char)p[k]))
            return fail(req, 400, "control character in a header value");
    h->value = (struct http_span){p + b, e - b};
    if (http_span_ieq(h->name, "content-length"))
        return parse_content_length(h->value, req);
    if (http_span_ieq(h->name, "transfer-encoding"))
        req->transfer_encoding = true;
    return HTTP_PARSE_DONE;
}

enum http_parse_result http_parse_request(const char *buf, size_t len, size_t max_head,
                                          struct http_request *req)
{
    memset(req, 0, sizeof *req);
    req->content_length = -1;
    size_t limit = len < max_head ? len : max_head;
    size_t off = 0, eol, end;
    /* RFC 9112 2.2: ignore at least one empty line before the request line. */
    while (off < limit && (buf[off] == '\r' || buf[off] == '\n'))
        off++;
    if (!next_line(buf, limit, off, &eol, &end))
        return len >= max_head ? fail(req, 431, "request head too large") : HTTP_PARSE_MORE;
    if (parse_request_line(buf + off, end - off, req) != HTTP_PARSE_DONE)
        return HTTP_PARSE_ERROR;
    off = eol + 1;
    for (;;) {
        if (!next_line(buf, limit, off, &eol, &end))
            return len >= max_head ? fail(req, 431, "request head too large") : HTTP_PARSE_MORE;
        if (end == off)
            break; /* the empty line */
        if (parse_header_line(buf + off, end - off, req) != HTTP_PARSE_DONE)
            return HTTP_PARSE_ERROR;
        off = eol + 1;
    }
    req->head_len = eol + 1;
    const struct http_span *conn = http_header(req, "connection");
    if (req->minor == 1)
        req->keep_alive = !(conn && http_list_has(*conn, "close"));
    else
        req->keep_alive = conn && http_list_has(*conn, "keep-alive");
    return HTTP_PARSE_DONE;
}

const struct http_span *http_header(const struct http_request *req, const char *name)
{
    for (size_t i = 0; i < req->nheaders; i++)
        if (http_span_ieq(req->headers[i].name, name))
            return &req->headers[i].value;
    return NULL;
}

bool http_list_has(struct http_span v, const char *item)
{
    size_t i = 0;
    while (i < v.n) {
        size_t b = i;
        while (i < v.n && v.p[i] != ',')
            i++;
        size_t e = i;
        /* The element is up to its first ';' (media-type parameters). */
        const char *semi = memchr(v.p + b, ';', e - b);
        if (semi)
            e = (size_t)(semi - v.p);
        while (b < e && (v.p[b] == ' ' || v.p[b] == '\t'))
            b++;
        while (e > b && (v.p[e - 1] == ' ' || v.p[e - 1] == '\t'))
            e--;
        if (http_span_ieq((struct http_span){v.p + b, e - b}, item))
            return true;
        i++; /* skip the comma */
    }
    return false;
}
