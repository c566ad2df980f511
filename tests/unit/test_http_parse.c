/*
 * test_http_parse.c - the HTTP/1.1 request-head parser (supervisor/http_parse.c):
 * whole and partial heads, every refusal with its status, byte-at-a-time
 * feeding, and the list helpers used for Accept and Connection.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "http_parse.h"

static enum http_parse_result parse(const char *s, struct http_request *req)
{
    return http_parse_request(s, strlen(s), 16384, req);
}

static void span_is(struct http_span sp, const char *want)
{
    assert_int_equal(sp.n, strlen(want));
    assert_memory_equal(sp.p, want, sp.n);
}

static void test_post_with_body(void **state)
{
    (void)state;
    const char *s = "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:8931\r\n"
                    "Content-Type: application/json\r\nContent-Length:  7 \r\n"
                    "Accept: application/json, text/event-stream\r\n\r\n{\"a\":1}";
    struct http_request req;
    assert_int_equal(parse(s, &req), HTTP_PARSE_DONE);
    span_is(req.method, "POST");
    span_is(req.target, "/mcp");
    assert_int_equal(req.minor, 1);
    assert_int_equal(req.nheaders, 4);
    assert_int_equal(req.content_length, 7);
    assert_true(req.keep_alive);
    assert_false(req.transfer_encoding);
    assert_int_equal(req.head_len, strlen(s) - 7);
    span_is(*http_header(&req, "HOST"), "127.0.0.1:8931");
    assert_true(http_list_has(*http_header(&req, "accept"), "text/event-stream"));
    assert_true(http_list_has(*http_header(&req, "accept"), "APPLICATION/JSON"));
    assert_false(http_list_has(*http_header(&req, "accept"), "text/html"));
    assert_null(http_header(&req, "origin"));
}

static void test_every_prefix_is_more(void **state)
{
    (void)state;
    const char *s = "GET /mcp?x=1 HTTP/1.1\r\nHost: a\r\nMcp-Session-Id: abc\r\n\r\n";
    struct http_request req;
    for (size_t n = 0; n < strlen(s); n++)
        assert_int_equal(http_parse_request(s, n, 16384, &req), HTTP_PARSE_MORE);
    assert_int_equal(parse(s, &req), HTTP_PARSE_DONE);
    span_is(req.target, "/mcp?x=1");
    assert_int_equal(req.content_length, -1);
}

static void test_lf_only_and_leading_blank_lines(void **state)
{
    (void)state;
    struct http_request req;
    assert_int_equal(parse("\r\n\nDELETE /mcp HTTP/1.0\nConnection: keep-alive\n\n", &req),
                     HTTP_PARSE_DONE);
    span_is(req.method, "DELETE");
    assert_int_equal(req.minor, 0);
    assert_true(req.keep_alive);
    assert_int_equal(parse("GET / HTTP/1.0\r\n\r\n", &req), HTTP_PARSE_DONE);
    assert_false(req.keep_alive);
    assert_int_equal(parse("GET / HTTP/1.1\r\nConnection: foo, Close\r\n\r\n", &req),
                     HTTP_PARSE_DONE);
    assert_false(req.keep_alive);
}

static void refused(const char *s, int status)
{
    struct http_request req;
    assert_int_equal(parse(s, &req), HTTP_PARSE_ERROR);
    assert_int_equal(req.error_status, status);
    assert_non_null(req.error);
}

static void test_refusals(void **state)
{
    (void)state;
    refused("GET  / HTTP/1.1\r\n\r\n", 400);
    refused("GET /\r\n\r\n", 400);
    refused("GET / HTTP/1.1 x\r\n\r\n", 400);
    refused("G(T / HTTP/1.1\r\n\r\n", 400);
    refused("GET / HTTP/2.0\r\n\r\n", 505);
    refused("GET / HTTP/1.2\r\n\r\n", 505);
    refused("GET / HTTQ/1.1\r\n\r\n", 400);
    refused("GET /\x01 HTTP/1.1\r\n\r\n", 400);
    refused("GET / HTTP/1.1\r\nHost: a\r\n folded\r\n\r\n", 400);
    refused("GET / HTTP/1.1\r\nBad Name: a\r\n\r\n", 400);
    refused("GET / HTTP/1.1\r\nNoColon\r\n\r\n", 400);
    refused("GET / HTTP/1.1\r\n: empty\r\n\r\n", 400);
    refused("GET / HTTP/1.1\r\nX: a\x01"
            "b\r\n\r\n",
            400);
    refused("POST / HTTP/1.1\r\nContent-Length: 1x\r\n\r\n", 400);
    refused("POST / HTTP/1.1\r\nContent-Length: -1\r\n\r\n", 400);
    refused("POST / HTTP/1.1\r\nContent-Length: \r\n\r\n", 400);
    refused("POST / HTTP/1.1\r\nContent-Length: 9999999999999999\r\n\r\n", 400);
    refused("POST / HTTP/1.1\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n", 400);
    /* RFC 9112 3.2: a second Host line, whatever its value. */
    refused("GET / HTTP/1.1\r\nHost: a\r\nX: 1\r\nhost: a\r\n\r\n", 400);
    refused("GET / HTTP/1.1\r\nHost: a\r\nHOST: b\r\n\r\n", 400);
}

static void test_duplicate_equal_length_and_te(void **state)
{
    (void)state;
    struct http_request req;
    assert_int_equal(
        parse("POST / HTTP/1.1\r\nContent-Length: 3\r\ncontent-length: 3\r\n\r\nabc", &req),
        HTTP_PARSE_DONE);
    assert_int_equal(req.content_length, 3);
    assert_int_equal(parse("POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n", &req),
                     HTTP_PARSE_DONE);
    assert_true(req.transfer_encoding);
}

static void test_limits(void **state)
{
    (void)state;
    struct http_request req;
    /* A head that does not end within max_head. */
    char big[600];
    memset(big, 'a', sizeof big);
    memcpy(big, "GET / HTTP/1.1\r\nX: ", 19);
    assert_int_equal(http_parse_request(big, sizeof big, 512, &req), HTTP_PARSE_ERROR);
    assert_int_equal(req.error_status, 431);
    assert_int_equal(http_parse_request(big, 300, 512, &req), HTTP_PARSE_MORE);
    /* One header too many. */
    size_t cap = 32 + (HTTP_MAX_HEADERS + 1) * 8;
    char *many = malloc(cap);
    size_t n = (size_t)snprintf(many, cap, "GET / HTTP/1.1\r\n");
    for (int i = 0; i <= HTTP_MAX_HEADERS; i++)
        n += (size_t)snprintf(many + n, cap - n, "H%02d: v\r\n", i);
    n += (size_t)snprintf(many + n, cap - n, "\r\n");
    assert_int_equal(http_parse_request(many, n, 16384, &req), HTTP_PARSE_ERROR);
    assert_int_equal(req.error_status, 431);
    free(many);
}

static void test_list_has(void **state)
{
    (void)state;
    const char *v = " text/event-stream;q=0.9 ,application/json , */*";
    struct http_span s = {v, strlen(v)};
    assert_true(http_list_has(s, "text/event-stream"));
    assert_true(http_list_has(s, "application/json"));
    assert_true(http_list_has(s, "*/*"));
    assert_false(http_list_has(s, "text/event"));
    struct http_span empty = {"", 0};
    assert_false(http_list_has(empty, "x"));
    assert_true(http_span_ieq((struct http_span){"Keep-Alive", 10}, "keep-alive"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_post_with_body),
        cmocka_unit_test(test_every_prefix_is_more),
        cmocka_unit_test(test_lf_only_and_leading_blank_lines),
        cmocka_unit_test(test_refusals),
        cmocka_unit_test(test_duplicate_equal_length_and_te),
        cmocka_unit_test(test_limits),
        cmocka_unit_test(test_list_has),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
