/*
 * test_relay_spwire.c - nng's pair1-over-ipc wire as the relay reads and
 * writes it (relay/spwire.c): what nng sends is read whole however the
 * bytes arrive, and every breach of the wire is refused with a reason.
 * (e2e.relay talks to the relay through nng itself.)
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "spwire.h"

struct got {
    int n;
    char bodies[8][64];
    size_t lens[8];
    int stop_after; /* ask to stop after this many; 0: never */
};

static int on_msg(void *ud, const uint8_t *body, size_t len)
{
    struct got *g = ud;
    if (g->n < 8 && len < sizeof g->bodies[0]) {
        memcpy(g->bodies[g->n], body, len);
        g->lens[g->n] = len;
    }
    g->n++;
    return g->stop_after && g->n >= g->stop_after;
}

/* A stream as nng's pair1 sends it: greeting, then each body framed. */
static size_t stream(uint8_t *out, const char *const *bodies, int n)
{
    size_t at = 0;
    spwire_greeting(out);
    at += SPWIRE_GREETING_LEN;
    for (int i = 0; i < n; i++) {
        size_t len = strlen(bodies[i]);
        spwire_frame_head(out + at, len);
        at += SPWIRE_FRAME_HEAD;
        memcpy(out + at, bodies[i], len);
        at += len;
    }
    return at;
}

static void test_greeting_and_frame_head_are_nngs(void **state)
{
    (void)state;
    uint8_t g[SPWIRE_GREETING_LEN], h[SPWIRE_FRAME_HEAD];
    spwire_greeting(g);
    const uint8_t want_g[] = {0, 'S', 'P', 0, 0x00, 0x11, 0, 0};
    assert_memory_equal(g, want_g, sizeof want_g);
    spwire_frame_head(h, 300);
    /* type 1, length 304 (the hop count's 4 bytes and the body), one hop */
    const uint8_t want_h[] = {1, 0, 0, 0, 0, 0, 0, 0x01, 0x30, 0, 0, 0, 1};
    assert_memory_equal(h, want_h, sizeof want_h);
}

static void test_read_whole_however_split(void **state)
{
    (void)state;
    const char *const bodies[] = {"first", "", "third message"};
    uint8_t buf[256];
    size_t len = stream(buf, bodies, 3);
    for (size_t step = 1; step <= len; step++) {
        struct spwire_reader rd;
        spwire_reader_init(&rd, 1024);
        struct got g = {0};
        char err[200];
        for (size_t at = 0; at < len; at += step) {
            size_t n = len - at < step ? len - at : step;
            assert_int_equal(spwire_read(&rd, buf + at, n, on_msg, &g, err, sizeof err), 0);
        }
        assert_int_equal(g.n, 3);
        for (int i = 0; i < 3; i++) {
            assert_int_equal(g.lens[i], strlen(bodies[i]));
            assert_memory_equal(g.bodies[i], bodies[i], g.lens[i]);
        }
        spwire_reader_free(&rd);
    }
}

static void test_stop_when_asked(void **state)
{
    (void)state;
    const char *const bodies[] = {"a", "b", "c"};
    uint8_t buf[128];
    size_t len = stream(buf, bodies, 3);
    struct spwire_reader rd;
    spwire_reader_init(&rd, 1024);
    struct got g = {.stop_after = 2};
    char err[200];
    assert_int_equal(spwire_read(&rd, buf, len, on_msg, &g, err, sizeof err), 1);
    assert_int_equal(g.n, 2);
    spwire_reader_free(&rd);
}

/* Feed a greeting then head (13 bytes) and expect a refusal naming what. */
static void refused(const uint8_t *head, size_t max_body, const char *what)
{
    struct spwire_reader rd;
    spwire_reader_init(&rd, max_body);
    struct got g = {0};
    char err[200] = "";
    uint8_t greet[SPWIRE_GREETING_LEN];
    spwire_greeting(greet);
    assert_int_equal(spwire_read(&rd, greet, sizeof greet, on_msg, &g, err, sizeof err), 0);
    assert_int_equal(spwire_read(&rd, head, SPWIRE_FRAME_HEAD, on_msg, &g, err, sizeof err), -1);
    assert_non_null(strstr(err, what));
    assert_int_equal(g.n, 0);
    spwire_reader_free(&rd);
}

static void test_breaches_refused(void **state)
{
    (void)state;
    uint8_t h[SPWIRE_FRAME_HEAD];
    spwire_frame_head(h, 2000);
    refused(h, 1000, "at most 1004");
    spwire_frame_head(h, 10);
    h[0] = 2;
    refused(h, 1000, "frame type 2");
    const uint8_t short_len[] = {1, 0, 0, 0, 0, 0, 0, 0, 3, 0, 0, 0, 1};
    refused(short_len, 1000, "no hop count");
    const uint8_t huge[] = {1, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0, 0, 0, 1};
    refused(huge, 1000, "at most");
    spwire_frame_head(h, 10);
    h[12] = 0;
    refused(h, 1000, "hop count 0");
    h[12] = SPWIRE_MAX_HOPS + 1;
    refused(h, 1000, "hop count 9");

    /* Another protocol's greeting (pair0, 0x10), and no greeting at all. */
    struct spwire_reader rd;
    char err[200];
    struct got g = {0};
    const uint8_t pair0[] = {0, 'S', 'P', 0, 0x00, 0x10, 0, 0};
    spwire_reader_init(&rd, 1000);
    assert_int_equal(spwire_read(&rd, pair0, sizeof pair0, on_msg, &g, err, sizeof err), -1);
    assert_non_null(strstr(err, "greeting"));
    spwire_reader_init(&rd, 1000);
    assert_int_equal(
        spwire_read(&rd, (const uint8_t *)"GET / HTTP/1.1\r\n", 16, on_msg, &g, err, sizeof err),
        -1);
}

/* A head that announces the most allowed and then a trickle: memory grows
 * with what came, not with what was announced. */
static void test_announced_size_is_not_allocated(void **state)
{
    (void)state;
    struct spwire_reader rd;
    spwire_reader_init(&rd, 64u << 20);
    uint8_t greet[SPWIRE_GREETING_LEN], h[SPWIRE_FRAME_HEAD];
    spwire_greeting(greet);
    spwire_frame_head(h, 64u << 20);
    struct got g = {0};
    char err[200];
    assert_int_equal(spwire_read(&rd, greet, sizeof greet, on_msg, &g, err, sizeof err), 0);
    assert_int_equal(spwire_read(&rd, h, sizeof h, on_msg, &g, err, sizeof err), 0);
    assert_int_equal(spwire_read(&rd, (const uint8_t *)"abc", 3, on_msg, &g, err, sizeof err), 0);
    assert_true(rd.msg_cap <= 4096);
    assert_int_equal(g.n, 0);
    spwire_reader_free(&rd);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_greeting_and_frame_head_are_nngs),
        cmocka_unit_test(test_read_whole_however_split),
        cmocka_unit_test(test_stop_when_asked),
        cmocka_unit_test(test_breaches_refused),
        cmocka_unit_test(test_announced_size_is_not_allocated),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
