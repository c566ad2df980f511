/*
 * test_ws_frame.c - RFC 6455 framing (worker/cdp/ws_frame.c), SHA-1 and the
 * handshake key, and the WebSocket transport (worker/cdp/ws.c) against a
 * scripted in-process server on 127.0.0.1.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "base64.h"
#include "clock.h"
#include "transport.h"
#include "ws_frame.h"

/* ---- base64 and Sec-WebSocket-Accept (OpenSSL underneath) ---- */

static void test_base64(void **state)
{
    (void)state;
    static const char *vec[][2] = {{"", ""},
                                   {"f", "Zg=="},
                                   {"fo", "Zm8="},
                                   {"foo", "Zm9v"},
                                   {"foob", "Zm9vYg=="},
                                   {"fooba", "Zm9vYmE="},
                                   {"foobar", "Zm9vYmFy"}};
    char out[16];
    for (size_t i = 0; i < sizeof vec / sizeof vec[0]; i++) {
        size_t n = base64_encode_to(vec[i][0], strlen(vec[i][0]), out, sizeof out);
        assert_int_equal(n, strlen(vec[i][1]));
        assert_string_equal(out, vec[i][1]);
    }
    /* Too small an output buffer (needs 9 for "foobar"): refused, not overrun. */
    assert_int_equal(base64_encode_to("foobar", 6, out, 8), 0);
}

/* proto/base64.c's decoder: padded, unpadded, the 2- and 3-character tails,
 * and what it refuses (a character outside the alphabet, whitespace, a '='
 * inside, a length no encoding has); it never reads past len. */
static void test_base64_decode(void **state)
{
    (void)state;
    static const char *vec[][2] = {{"", ""},        {"Zg==", "f"},       {"Zg", "f"},
                                   {"Zm8=", "fo"},  {"Zm8", "fo"},       {"Zm9v", "foo"},
                                   {"Zm9vYg", "foob"}, {"Zm9vYmE=", "fooba"}, {"Zm9vYmFy", "foobar"}};
    unsigned char out[16];
    for (size_t i = 0; i < sizeof vec / sizeof vec[0]; i++) {
        long n = base64_decode(vec[i][0], strlen(vec[i][0]), out);
        assert_int_equal(n, (long)strlen(vec[i][1]));
        assert_memory_equal(out, vec[i][1], (size_t)n);
    }
    assert_int_equal(base64_decode("Zm9v!mFy", 8, out), -1);
    assert_int_equal(base64_decode("Zm9v YmFy", 9, out), -1);
    assert_int_equal(base64_decode("Zg==Zm8=", 8, out), -1);
    assert_int_equal(base64_decode("Zm9vY", 5, out), -1);
    /* Only len characters are read: what follows (no NUL) is not looked at. */
    char unterminated[4] = {'Z', 'm', '9', 'v'};
    assert_int_equal(base64_decode(unterminated, 4, out), 3);
    /* A 3-byte-aligned buffer round-trips through the encoder. */
    unsigned char bytes[256];
    for (int k = 0; k < 256; k++)
        bytes[k] = (unsigned char)k;
    char *enc = base64_encode(bytes, sizeof bytes);
    assert_non_null(enc);
    unsigned char back[260];
    assert_int_equal(base64_decode(enc, strlen(enc), back), 256);
    assert_memory_equal(back, bytes, 256);
    free(enc);
}

static void test_accept_key_rfc6455(void **state)
{
    (void)state;
    /* RFC 6455 section 1.3. (Not "s3pPLMBiTxaAGzYnbeCyuJvQ6wE=", which is
     * sometimes quoted: SHA-1 of the key + GUID really is the value below.) */
    char acc[WS_ACCEPT_LEN + 1];
    ws_accept_key("dGhlIHNhbXBsZSBub25jZQ==", acc);
    assert_string_equal(acc, "s3pPLMBiTxaQ9kYGzzhZRbK+xOo=");
}

/* ---- frame header parser ---- */

static int parse(const uint8_t *b, size_t n, enum ws_sender from, struct ws_frame *f,
                 const char **why)
{
    *why = NULL;
    return ws_frame_parse(b, n, from, f, why);
}

/* Every strict prefix of a valid header must ask for more, never fail. */
static void check_prefixes(const uint8_t *b, size_t hl, enum ws_sender from)
{
    struct ws_frame f;
    const char *why;
    for (size_t i = 0; i < hl; i++)
        assert_int_equal(parse(b, i, from, &f, &why), WS_PARSE_NEED_MORE);
}

static void test_parse_len7(void **state)
{
    (void)state;
    /* RFC 6455 5.7: a single-frame unmasked text message "Hello". */
    const uint8_t b[] = {0x81, 0x05, 'H', 'e', 'l', 'l', 'o'};
    struct ws_frame f;
    const char *why;
    assert_int_equal(parse(b, sizeof b, WS_FROM_SERVER, &f, &why), WS_PARSE_OK);
    assert_true(f.fin);
    assert_false(f.masked);
    assert_int_equal(f.opcode, WS_OP_TEXT);
    assert_int_equal(f.payload_len, 5);
    assert_int_equal(f.header_len, 2);
    check_prefixes(b, 2, WS_FROM_SERVER);
    /* The payload need not be there yet. */
    assert_int_equal(parse(b, 2, WS_FROM_SERVER, &f, &why), WS_PARSE_OK);
    /* 125 is the largest 7-bit length. */
    const uint8_t b125[] = {0x82, 125};
    assert_int_equal(parse(b125, 2, WS_FROM_SERVER, &f, &why), WS_PARSE_OK);
    assert_int_equal(f.payload_len, 125);
}

static void test_parse_len16(void **state)
{
    (void)state;
    /* RFC 6455 5.7: 256 bytes binary message in a single unmasked frame. */
    const uint8_t b[] = {0x82, 0x7E, 0x01, 0x00};
    struct ws_frame f;
    const char *why;
    assert_int_equal(parse(b, sizeof b, WS_FROM_SERVER, &f, &why), WS_PARSE_OK);
    assert_int_equal(f.opcode, WS_OP_BINARY);
    assert_int_equal(f.payload_len, 256);
    assert_int_equal(f.header_len, 4);
    check_prefixes(b, sizeof b, WS_FROM_SERVER);
    const uint8_t bmax[] = {0x81, 0x7E, 0xFF, 0xFF};
    assert_int_equal(parse(bmax, sizeof bmax, WS_FROM_SERVER, &f, &why), WS_PARSE_OK);
    assert_int_equal(f.payload_len, 65535);
}

static void test_parse_len64(void **state)
{
    (void)state;
    /* RFC 6455 5.7: 64 KiB binary message in a single unmasked frame. */
    const uint8_t b[] = {0x82, 0x7F, 0, 0, 0, 0, 0, 0x01, 0x00, 0x00};
    struct ws_frame f;
    const char *why;
    assert_int_equal(parse(b, sizeof b, WS_FROM_SERVER, &f, &why), WS_PARSE_OK);
    assert_int_equal(f.payload_len, 65536);
    assert_int_equal(f.header_len, 10);
    check_prefixes(b, sizeof b, WS_FROM_SERVER);

    const uint8_t big[] = {0x82, 0x7F, 0x7F, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF};
    assert_int_equal(parse(big, sizeof big, WS_FROM_SERVER, &f, &why), WS_PARSE_OK);
    assert_true(f.payload_len == 0x7FFFFFFFFFFFFFFFull);

    /* The most significant bit must be 0; caught as soon as its byte is seen. */
    const uint8_t hi[] = {0x82, 0x7F, 0x80, 0, 0, 0, 0, 0, 0, 0};
    for (size_t n = 3; n <= sizeof hi; n++) {
        assert_int_equal(parse(hi, n, WS_FROM_SERVER, &f, &why), WS_PARSE_ERROR);
        assert_non_null(why);
    }
    assert_int_equal(parse(hi, 2, WS_FROM_SERVER, &f, &why), WS_PARSE_NEED_MORE);
}

static void test_parse_fragmented(void **state)
{
    (void)state;
    /* RFC 6455 5.7: a fragmented unmasked text message "Hel" + "lo". */
    const uint8_t first[] = {0x01, 0x03, 'H', 'e', 'l'};
    const uint8_t last[] = {0x80, 0x02, 'l', 'o'};
    struct ws_frame f;
    const char *why;
    assert_int_equal(parse(first, sizeof first, WS_FROM_SERVER, &f, &why), WS_PARSE_OK);
    assert_false(f.fin);
    assert_int_equal(f.opcode, WS_OP_TEXT);
    assert_int_equal(f.payload_len, 3);
    assert_int_equal(parse(last, sizeof last, WS_FROM_SERVER, &f, &why), WS_PARSE_OK);
    assert_true(f.fin);
    assert_int_equal(f.opcode, WS_OP_CONT);
    assert_int_equal(f.payload_len, 2);
}

static void test_parse_masked(void **state)
{
    (void)state;
    /* RFC 6455 5.7: a single-frame masked text message "Hello". */
    uint8_t b[] = {0x81, 0x85, 0x37, 0xfa, 0x21, 0x3d, 0x7f, 0x9f, 0x4d, 0x51, 0x58};
    struct ws_frame f;
    const char *why;
    /* Servers must not mask. */
    assert_int_equal(parse(b, sizeof b, WS_FROM_SERVER, &f, &why), WS_PARSE_ERROR);
    assert_non_null(why);
    /* From a client it is fine, and unmasks to "Hello". */
    assert_int_equal(parse(b, sizeof b, WS_FROM_CLIENT, &f, &why), WS_PARSE_OK);
    assert_true(f.masked);
    assert_int_equal(f.header_len, 6);
    assert_memory_equal(f.mask, b + 2, 4);
    ws_mask(b + f.header_len, (size_t)f.payload_len, f.mask, 0);
    assert_memory_equal(b + f.header_len, "Hello", 5);
    check_prefixes(b, 6, WS_FROM_CLIENT);
    /* Clients must mask. */
    const uint8_t plain[] = {0x81, 0x05};
    assert_int_equal(parse(plain, sizeof plain, WS_FROM_CLIENT, &f, &why), WS_PARSE_ERROR);
}

static void test_parse_bad_opcodes(void **state)
{
    (void)state;
    struct ws_frame f;
    const char *why;
    for (unsigned op = 0; op < 16; op++) {
        uint8_t b[2] = {(uint8_t)(0x80 | op), 0x00};
        bool known = op <= 2 || (op >= 8 && op <= 10);
        int rc = parse(b, sizeof b, WS_FROM_SERVER, &f, &why);
        assert_int_equal(rc, known ? WS_PARSE_OK : WS_PARSE_ERROR);
        if (!known) {
            assert_non_null(why);
            /* Rejected from the first byte alone. */
            assert_int_equal(parse(b, 1, WS_FROM_SERVER, &f, &why), WS_PARSE_ERROR);
        } else {
            assert_int_equal(f.opcode, op);
        }
    }
}

static void test_parse_control_frames(void **state)
{
    (void)state;
    struct ws_frame f;
    const char *why;
    const uint8_t ping125[] = {0x89, 125};
    assert_int_equal(parse(ping125, 2, WS_FROM_SERVER, &f, &why), WS_PARSE_OK);
    /* Over 125 bytes, whichever length encoding claims it. */
    const uint8_t ping126[] = {0x89, 126, 0x00, 0x7E};
    assert_int_equal(parse(ping126, sizeof ping126, WS_FROM_SERVER, &f, &why), WS_PARSE_ERROR);
    assert_int_equal(parse(ping126, 2, WS_FROM_SERVER, &f, &why), WS_PARSE_ERROR);
    const uint8_t close127[] = {0x88, 127, 0, 0, 0, 0, 0, 0, 0, 1};
    assert_int_equal(parse(close127, sizeof close127, WS_FROM_SERVER, &f, &why), WS_PARSE_ERROR);
    /* Control frames must not be fragmented. */
    for (unsigned op = 8; op <= 10; op++) {
        const uint8_t frag[] = {(uint8_t)op, 0x00};
        assert_int_equal(parse(frag, sizeof frag, WS_FROM_SERVER, &f, &why), WS_PARSE_ERROR);
        assert_int_equal(parse(frag, 1, WS_FROM_SERVER, &f, &why), WS_PARSE_ERROR);
    }
}

static void test_parse_reserved_bits(void **state)
{
    (void)state;
    struct ws_frame f;
    const char *why;
    for (unsigned rsv = 1; rsv < 8; rsv++) {
        const uint8_t b[] = {(uint8_t)(0x81 | rsv << 4), 0x00};
        assert_int_equal(parse(b, sizeof b, WS_FROM_SERVER, &f, &why), WS_PARSE_ERROR);
        assert_non_null(why);
    }
}

/* ---- encoder ---- */

static void test_encode_round_trip(void **state)
{
    (void)state;
    static const uint64_t lens[] = {0, 1, 5, 125, 126, 127, 1000, 65535, 65536, 300000};
    static const size_t want_hl[] = {6, 6, 6, 6, 8, 8, 8, 8, 14, 14};
    for (size_t i = 0; i < sizeof lens / sizeof lens[0]; i++) {
        size_t n = (size_t)lens[i];
        uint8_t *frame = malloc(WS_MAX_HEADER + n);
        uint8_t *orig = malloc(n + 1);
        assert_non_null(frame);
        assert_non_null(orig);
        for (size_t j = 0; j < n; j++)
            orig[j] = (uint8_t)(j * 7 + i);
        uint8_t mask[4];
        assert_int_equal(ws_random_mask(mask), 0);

        size_t hl = ws_frame_encode(frame, true, WS_OP_TEXT, n, mask);
        assert_int_equal(hl, want_hl[i]);
        memcpy(frame + hl, orig, n);
        ws_mask(frame + hl, n, mask, 0);

        struct ws_frame f;
        const char *why;
        assert_int_equal(parse(frame, hl + n, WS_FROM_CLIENT, &f, &why), WS_PARSE_OK);
        assert_true(f.fin);
        assert_true(f.masked);
        assert_int_equal(f.opcode, WS_OP_TEXT);
        assert_int_equal(f.payload_len, n);
        assert_int_equal(f.header_len, hl);
        assert_memory_equal(f.mask, mask, 4);
        check_prefixes(frame, hl, WS_FROM_CLIENT);
        /* Unmask in uneven pieces to exercise the offset. */
        size_t off = 0, step = 3;
        while (off < n) {
            size_t k = n - off < step ? n - off : step;
            ws_mask(frame + hl + off, k, f.mask, off);
            off += k;
            step = step * 2 + 1;
        }
        if (n)
            assert_memory_equal(frame + hl, orig, n);

        /* Unmasked (server-style) headers parse as server frames. */
        hl = ws_frame_encode(frame, false, WS_OP_BINARY, n, NULL);
        assert_int_equal(hl, want_hl[i] - 4);
        assert_int_equal(parse(frame, hl, WS_FROM_SERVER, &f, &why), WS_PARSE_OK);
        assert_false(f.fin);
        assert_int_equal(f.opcode, WS_OP_BINARY);
        assert_int_equal(f.payload_len, n);
        free(frame);
        free(orig);
    }
}

static void test_mask_matches_bytewise(void **state)
{
    (void)state;
    const uint8_t mask[4] = {0xA1, 0x02, 0x7F, 0xE4};
    uint8_t a[103], b[103];
    for (size_t i = 0; i < sizeof a; i++)
        a[i] = b[i] = (uint8_t)(i * 13);
    for (uint64_t start = 0; start < 8; start++) {
        ws_mask(a + start, sizeof a - start, mask, start);
        for (size_t i = start; i < sizeof b; i++)
            b[i] ^= mask[i % 4];
        assert_memory_equal(a, b, sizeof a);
    }
}

/* ---- reader (reassembly) ---- */

/* Append a server frame (unmasked) to buf; returns the new length. */
static size_t put_frame(uint8_t *buf, size_t at, bool fin, enum ws_opcode op, const void *p,
                        size_t n)
{
    size_t hl = ws_frame_encode(buf + at, fin, op, n, NULL);
    memcpy(buf + at + hl, p, n);
    return at + hl + n;
}

static void test_reader_messages(void **state)
{
    (void)state;
    uint8_t s[512];
    size_t n = 0;
    n = put_frame(s, n, true, WS_OP_TEXT, "one", 3);
    n = put_frame(s, n, false, WS_OP_TEXT, "tw", 2);
    n = put_frame(s, n, true, WS_OP_PING, "pp", 2); /* control inside a fragmented message */
    n = put_frame(s, n, false, WS_OP_CONT, "o-", 2);
    n = put_frame(s, n, true, WS_OP_PONG, "", 0); /* swallowed */
    n = put_frame(s, n, true, WS_OP_CONT, "two", 3);
    n = put_frame(s, n, true, WS_OP_BINARY, "\x00\x01", 2);
    n = put_frame(s, n, true, WS_OP_TEXT, "", 0);
    const uint8_t close_payload[] = {0x03, 0xE9, 'b', 'y', 'e'};
    n = put_frame(s, n, true, WS_OP_CLOSE, close_payload, sizeof close_payload);

    /* Whole stream at once, then byte by byte: the same events. */
    for (int bytewise = 0; bytewise < 2; bytewise++) {
        struct ws_reader r;
        ws_reader_init(&r, 1 << 20);
        size_t fed = 0;
        int got = 0;
        const char *want[] = {"one", "ping", "two-two", "bin", "", "close"};
        if (!bytewise) {
            assert_int_equal(ws_reader_push(&r, s, n), 0);
            fed = n;
        }
        while (got < 6) {
            enum ws_event ev = ws_reader_next(&r);
            if (ev == WS_EV_NEED_MORE) {
                assert_true(fed < n);
                assert_int_equal(ws_reader_push(&r, s + fed, 1), 0);
                fed++;
                continue;
            }
            const char *w = want[got++];
            if (strcmp(w, "ping") == 0) {
                assert_int_equal(ev, WS_EV_PING);
                assert_int_equal(r.ctl_len, 2);
                assert_memory_equal(r.ctl, "pp", 2);
            } else if (strcmp(w, "close") == 0) {
                assert_int_equal(ev, WS_EV_CLOSE);
                assert_int_equal(ws_close_code(r.ctl, r.ctl_len), 1001);
            } else {
                assert_int_equal(ev, WS_EV_MESSAGE);
                char *m;
                size_t len;
                bool bin;
                ws_reader_take(&r, &m, &len, &bin);
                if (strcmp(w, "bin") == 0) {
                    assert_true(bin);
                    assert_int_equal(len, 2);
                    assert_memory_equal(m, "\x00\x01", 2);
                } else {
                    assert_false(bin);
                    assert_string_equal(m, w);
                    assert_int_equal(len, strlen(w));
                }
                free(m);
            }
        }
        /* Close is sticky. */
        assert_int_equal(ws_reader_next(&r), WS_EV_CLOSE);
        ws_reader_free(&r);
    }
}

static void test_reader_large_chunked(void **state)
{
    (void)state;
    /* A 5 MiB message in 3 frames, fed in odd-sized chunks. */
    size_t total = 5u << 20, parts[3] = {1000, 3u << 20, 0};
    parts[2] = total - parts[0] - parts[1];
    char *payload = malloc(total + 1);
    uint8_t *stream = malloc(total + 3 * WS_MAX_HEADER);
    assert_non_null(payload);
    assert_non_null(stream);
    for (size_t i = 0; i < total; i++)
        payload[i] = (char)('a' + i % 26);
    payload[total] = '\0';
    size_t n = 0, off = 0;
    for (int i = 0; i < 3; i++) {
        n = put_frame(stream, n, i == 2, i ? WS_OP_CONT : WS_OP_TEXT, payload + off, parts[i]);
        off += parts[i];
    }
    struct ws_reader r;
    ws_reader_init(&r, 8u << 20);
    size_t fed = 0, chunk = 7;
    enum ws_event ev;
    while ((ev = ws_reader_next(&r)) == WS_EV_NEED_MORE) {
        size_t k = n - fed < chunk ? n - fed : chunk;
        assert_true(k > 0);
        assert_int_equal(ws_reader_push(&r, stream + fed, k), 0);
        fed += k;
        chunk = chunk * 3 % 200003 + 1;
        /* Payloads stream out: the raw buffer never holds a whole frame. */
        assert_true(r.end - r.start <= 200003 + WS_MAX_HEADER);
    }
    assert_int_equal(fed, n);
    assert_int_equal(ev, WS_EV_MESSAGE);
    char *m;
    size_t len;
    ws_reader_take(&r, &m, &len, NULL);
    assert_int_equal(len, total);
    assert_memory_equal(m, payload, total);
    assert_int_equal(m[len], '\0');
    free(m);
    ws_reader_free(&r);
    free(payload);
    free(stream);
}

static enum ws_event feed_all(struct ws_reader *r, const uint8_t *s, size_t n)
{
    assert_int_equal(ws_reader_push(r, s, n), 0);
    enum ws_event ev;
    while ((ev = ws_reader_next(r)) == WS_EV_MESSAGE) {
        char *m;
        size_t len;
        ws_reader_take(r, &m, &len, NULL);
        free(m);
    }
    return ev;
}

static void test_reader_errors(void **state)
{
    (void)state;
    uint8_t s[256];
    struct ws_reader r;
    size_t n;

    /* Continuation with nothing to continue. */
    ws_reader_init(&r, 1024);
    n = put_frame(s, 0, true, WS_OP_CONT, "x", 1);
    assert_int_equal(feed_all(&r, s, n), WS_EV_ERROR);
    assert_non_null(r.error);
    assert_int_equal(r.error_close_code, WS_CLOSE_PROTOCOL);
    assert_int_equal(ws_reader_next(&r), WS_EV_ERROR); /* sticky */
    ws_reader_free(&r);

    /* A new message while one is unfinished. */
    ws_reader_init(&r, 1024);
    n = put_frame(s, 0, false, WS_OP_TEXT, "a", 1);
    n = put_frame(s, n, true, WS_OP_TEXT, "b", 1);
    assert_int_equal(feed_all(&r, s, n), WS_EV_ERROR);
    ws_reader_free(&r);

    /* Over the size cap, as one frame and as fragments. */
    ws_reader_init(&r, 10);
    n = put_frame(s, 0, true, WS_OP_TEXT, "0123456789", 10);
    assert_int_equal(feed_all(&r, s, n), WS_EV_NEED_MORE); /* exactly the cap is fine */
    n = put_frame(s, 0, true, WS_OP_TEXT, "0123456789A", 11);
    assert_int_equal(feed_all(&r, s, n), WS_EV_ERROR);
    assert_int_equal(r.error_close_code, WS_CLOSE_TOO_BIG);
    ws_reader_free(&r);
    ws_reader_init(&r, 10);
    n = put_frame(s, 0, false, WS_OP_TEXT, "012345", 6);
    n = put_frame(s, n, true, WS_OP_CONT, "6789A", 5);
    assert_int_equal(feed_all(&r, s, n), WS_EV_ERROR);
    ws_reader_free(&r);

    /* A header announcing 2^62 bytes is refused before any allocation. */
    ws_reader_init(&r, 1 << 20);
    const uint8_t huge[] = {0x81, 0x7F, 0x40, 0, 0, 0, 0, 0, 0, 0};
    assert_int_equal(feed_all(&r, huge, sizeof huge), WS_EV_ERROR);
    ws_reader_free(&r);

    /* Masked server frame. */
    ws_reader_init(&r, 1024);
    const uint8_t masked[] = {0x81, 0x81, 1, 2, 3, 4, 'x'};
    assert_int_equal(feed_all(&r, masked, sizeof masked), WS_EV_ERROR);
    ws_reader_free(&r);
}

/* ---- transport against a scripted server ---- */

enum server_mode { SRV_NORMAL, SRV_403, SRV_BAD_ACCEPT };

struct server {
    int lfd;
    int port;
    enum server_mode mode;
    pthread_t th;
    /* results, read after join */
    bool saw_origin;
    bool got_pong;
    bool got_text;
    bool got_close;
    unsigned close_code;
    char fail[200];
};

static int read_frame(int fd, uint8_t *buf, size_t cap, struct ws_frame *f)
{
    size_t have = 0;
    for (;;) {
        const char *why;
        int rc = ws_frame_parse(buf, have, WS_FROM_CLIENT, f, &why);
        if (rc == WS_PARSE_ERROR)
            return -1;
        if (rc == WS_PARSE_OK && have >= f->header_len + f->payload_len) {
            ws_mask(buf + f->header_len, (size_t)f->payload_len, f->mask, 0);
            return 0;
        }
        if (have == cap)
            return -1;
        ssize_t n = recv(fd, buf + have, 1, 0); /* 1 byte: never read past this frame */
        if (n <= 0)
            return -1;
        have += (size_t)n;
    }
}

static void *server_main(void *arg)
{
    struct server *s = arg;
    int fd = accept(s->lfd, NULL, NULL);
    if (fd < 0) {
        snprintf(s->fail, sizeof s->fail, "accept failed");
        return NULL;
    }
    char req[4096];
    size_t have = 0;
    while (have < sizeof req - 1) {
        ssize_t n = recv(fd, req + have, sizeof req - 1 - have, 0);
        if (n <= 0)
            break;
        have += (size_t)n;
        req[have] = '\0';
        if (strstr(req, "\r\n\r\n"))
            break;
    }
    req[have] = '\0';
    s->saw_origin = strcasestr(req, "\r\nOrigin:") != NULL;
    const char *k = strcasestr(req, "\r\nSec-WebSocket-Key: ");
    char key[64] = "", acc[WS_ACCEPT_LEN + 1];
    if (k)
        sscanf(k + 21, "%63[^\r]", key);
    ws_accept_key(key, acc);
    if (s->mode == SRV_BAD_ACCEPT)
        acc[0] = acc[0] == 'A' ? 'B' : 'A';

    char resp[512];
    int rl;
    if (s->mode == SRV_403)
        rl = snprintf(resp, sizeof resp, "HTTP/1.1 403 Forbidden\r\nContent-Length: 0\r\n\r\n");
    else
        rl = snprintf(resp, sizeof resp,
                      "HTTP/1.1 101 WebSocket Protocol Handshake\r\nUpgrade: WebSocket\r\n"
                      "Connection: Upgrade\r\nSec-WebSocket-Accept: %s\r\n\r\n",
                      acc);
    /* Frames right behind the response head, in the same write: a fragmented
     * message with a ping inside it, then a second message. */
    uint8_t out[1024];
    size_t n = (size_t)rl;
    memcpy(out, resp, n);
    if (s->mode == SRV_NORMAL) {
        n = put_frame(out, n, false, WS_OP_TEXT, "{\"a\":", 5);
        n = put_frame(out, n, true, WS_OP_PING, "hi", 2);
        n = put_frame(out, n, true, WS_OP_CONT, "1}", 2);
        n = put_frame(out, n, true, WS_OP_TEXT, "{\"b\":2}", 7);
    }
    send(fd, out, n, MSG_NOSIGNAL);
    if (s->mode != SRV_NORMAL) {
        close(fd);
        return NULL;
    }

    uint8_t buf[4096];
    struct ws_frame f;
    for (int i = 0; i < 2; i++) {
        if (read_frame(fd, buf, sizeof buf, &f) < 0) {
            snprintf(s->fail, sizeof s->fail, "bad frame from client");
            close(fd);
            return NULL;
        }
        const uint8_t *p = buf + f.header_len;
        if (f.opcode == WS_OP_PONG && f.payload_len == 2 && memcmp(p, "hi", 2) == 0)
            s->got_pong = true;
        if (f.opcode == WS_OP_TEXT && f.payload_len == 5 && memcmp(p, "hello", 5) == 0)
            s->got_text = true;
    }
    /* Close with 1001; expect the client to echo it. */
    n = put_frame(out, 0, true, WS_OP_CLOSE, "\x03\xe9", 2);
    send(fd, out, n, MSG_NOSIGNAL);
    if (read_frame(fd, buf, sizeof buf, &f) == 0 && f.opcode == WS_OP_CLOSE) {
        s->got_close = true;
        s->close_code = ws_close_code(buf + f.header_len, (size_t)f.payload_len);
    }
    close(fd);
    return NULL;
}

static void server_start(struct server *s, enum server_mode mode)
{
    memset(s, 0, sizeof *s);
    s->mode = mode;
    s->lfd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    assert_true(s->lfd >= 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    assert_int_equal(bind(s->lfd, (struct sockaddr *)&a, sizeof a), 0);
    assert_int_equal(listen(s->lfd, 1), 0);
    socklen_t al = sizeof a;
    assert_int_equal(getsockname(s->lfd, (struct sockaddr *)&a, &al), 0);
    s->port = ntohs(a.sin_port);
    assert_int_equal(pthread_create(&s->th, NULL, server_main, s), 0);
}

static void server_join(struct server *s)
{
    pthread_join(s->th, NULL);
    close(s->lfd);
}

/* recv() one message, polling up to 5 s; returns the recv status. */
static int recv_wait(struct cdp_transport *t, char **m, size_t *n)
{
    long long deadline = mono_ms() + 5000;
    for (;;) {
        int rc = t->ops->recv(t, m, n);
        if (rc != TRANSPORT_AGAIN || mono_ms() > deadline)
            return rc;
        struct pollfd p = {.fd = t->ops->fd(t), .events = POLLIN};
        poll(&p, 1, 100);
    }
}

static void test_transport_scripted_server(void **state)
{
    (void)state;
    struct server s;
    server_start(&s, SRV_NORMAL);
    char url[64], err[256];
    snprintf(url, sizeof url, "ws://localhost:%d/devtools/browser/x", s.port);
    struct cdp_transport *t = ws_transport_connect(url, mono_ms() + 5000, err, sizeof err);
    assert_non_null(t);
    assert_string_equal(t->ops->error(t), "");

    char *m;
    size_t n;
    assert_int_equal(recv_wait(t, &m, &n), 0);
    assert_string_equal(m, "{\"a\":1}");
    assert_int_equal(n, 7);
    free(m);
    /* The second message came in the same read: recv needs no fd readiness. */
    assert_true(t->ops->pending(t));
    assert_int_equal(t->ops->recv(t, &m, &n), 0);
    assert_string_equal(m, "{\"b\":2}");
    free(m);
    assert_false(t->ops->pending(t));

    assert_int_equal(t->ops->send(t, "hello", 5, mono_ms() + 5000), 0);
    /* The server now closes; recv reports it after answering. */
    assert_int_equal(recv_wait(t, &m, &n), -1);
    assert_non_null(strstr(t->ops->error(t), "closed"));
    assert_int_equal(t->ops->send(t, "late", 4, mono_ms() + 1000), -1);
    server_join(&s);
    t->ops->destroy(t);

    assert_string_equal(s.fail, "");
    assert_false(s.saw_origin);
    assert_true(s.got_pong);
    assert_true(s.got_text);
    assert_true(s.got_close);
    assert_int_equal(s.close_code, 1001);
}

static void test_transport_refused_upgrade(void **state)
{
    (void)state;
    char url[64], err[256];
    struct server s;

    server_start(&s, SRV_403);
    snprintf(url, sizeof url, "ws://127.0.0.1:%d/devtools/browser/x", s.port);
    assert_null(ws_transport_connect(url, mono_ms() + 5000, err, sizeof err));
    assert_non_null(strstr(err, "403"));
    server_join(&s);

    server_start(&s, SRV_BAD_ACCEPT);
    snprintf(url, sizeof url, "ws://127.0.0.1:%d/devtools/browser/x", s.port);
    assert_null(ws_transport_connect(url, mono_ms() + 5000, err, sizeof err));
    assert_non_null(strstr(err, "Sec-WebSocket-Accept"));
    server_join(&s);
}

static void test_transport_bad_urls(void **state)
{
    (void)state;
    static const char *bad[][2] = {
        {"http://127.0.0.1:9222/devtools/browser/x", "ws://"},
        {"wss://127.0.0.1:9222/devtools/browser/x", "wss://"},
        {"ws://example.com:9222/devtools/browser/x", "loopback"},
        {"ws://10.0.0.1:9222/", "loopback"},
        {"ws://0.0.0.0:9222/", "loopback"},
        {"ws://[::2]:9222/", "loopback"},
        {"ws://127.0.0.1.example.com:9222/", "loopback"},
        {"ws://user@127.0.0.1:9222/", "user"},
        {"ws://127.0.0.1:0/", "port"},
        {"ws://127.0.0.1:65536/", "port"},
        {"ws://127.0.0.1:92a2/", "port"},
        {"ws://127.0.0.1:/", "port"},
        {"ws://127.0.0.1:9222/a b", "path"},
        {"ws://127.0.0.1:9222/a\r\nOrigin: x", "path"},
    };
    char err[256];
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        err[0] = '\0';
        assert_null(ws_transport_connect(bad[i][0], mono_ms() + 1000, err, sizeof err));
        if (!strstr(err, bad[i][1]))
            fail_msg("%s: error \"%s\" lacks \"%s\"", bad[i][0], err, bad[i][1]);
    }

    /* A loopback port nobody listens on: a prompt, clear failure. Port 1
     * (tcpmux) is privileged and unused on test machines. */
    long long t0 = mono_ms();
    assert_null(ws_transport_connect("ws://127.0.0.1:1/devtools/browser/x", mono_ms() + 3000, err,
                                     sizeof err));
    assert_true(mono_ms() - t0 < 2000);
    assert_non_null(strstr(err, "refused"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_base64),
        cmocka_unit_test(test_base64_decode),
        cmocka_unit_test(test_accept_key_rfc6455),
        cmocka_unit_test(test_parse_len7),
        cmocka_unit_test(test_parse_len16),
        cmocka_unit_test(test_parse_len64),
        cmocka_unit_test(test_parse_fragmented),
        cmocka_unit_test(test_parse_masked),
        cmocka_unit_test(test_parse_bad_opcodes),
        cmocka_unit_test(test_parse_control_frames),
        cmocka_unit_test(test_parse_reserved_bits),
        cmocka_unit_test(test_encode_round_trip),
        cmocka_unit_test(test_mask_matches_bytewise),
        cmocka_unit_test(test_reader_messages),
        cmocka_unit_test(test_reader_large_chunked),
        cmocka_unit_test(test_reader_errors),
        cmocka_unit_test(test_transport_scripted_server),
        cmocka_unit_test(test_transport_refused_upgrade),
        cmocka_unit_test(test_transport_bad_urls),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
