/* test_channel.c - envelopes over nng pair1 on an ipc:// socket. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <nng/nng.h>
#include <nng/protocol/pair1/pair.h>

#include "channel.h"
#include "clock.h"
#include "codec.h"
#include "proto.h"

/* The literal messages below carry version 3 ("\x94\x03..."). */
_Static_assert(PROTO_VERSION == 3, "update the version byte of the literal messages");

struct fixture {
    char dir[64];
    char url[128];
};

static int setup(void **state)
{
    struct fixture *f = calloc(1, sizeof(*f));
    snprintf(f->dir, sizeof(f->dir), "/tmp/tvchanXXXXXX");
    if (!mkdtemp(f->dir)) {
        free(f);
        return -1;
    }
    snprintf(f->url, sizeof(f->url), "ipc://%s/x.sock", f->dir);
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    struct fixture *f = *state;
    char path[128];
    static const char *const names[] = {"x.sock", "y.sock"};
    for (size_t k = 0; k < 2; k++) {
        snprintf(path, sizeof(path), "%s/%s", f->dir, names[k]);
        unlink(path);
    }
    rmdir(f->dir);
    free(f);
    return 0;
}

/* Wait up to timeout_ms for one message via poll(channel_fd) and a
 * nonblocking recv, as the event loops do. */
static int recv_wait(struct channel *c, struct proto_msg *msg, int timeout_ms, char *err,
                     size_t errlen)
{
    long long until = mono_ms() + timeout_ms;
    for (;;) {
        int rc = channel_recv(c, msg, 1, err, errlen);
        if (rc != CHANNEL_AGAIN)
            return rc;
        long long left = until - mono_ms();
        if (left <= 0)
            return CHANNEL_AGAIN;
        struct pollfd pfd = {.fd = channel_fd(c), .events = POLLIN};
        poll(&pfd, 1, (int)left);
    }
}

static void expect_msg(struct channel *c, uint32_t type, uint64_t id, const char *key,
                       const char *val)
{
    struct proto_msg msg;
    char err[256] = "";
    int rc = recv_wait(c, &msg, 5000, err, sizeof(err));
    if (rc != 0)
        fail_msg("recv returned %d: %s", rc, err);
    assert_int_equal(msg.type, type);
    assert_true(msg.id == id);
    assert_string_equal(json_string_value(json_object_get(msg.body, key)), val);
    proto_msg_clear(&msg);
}

/* Bodies are typed (bodies.h): a log line carries free text, a call any
 * arguments. New references. */
static json_t *log_body(const char *message)
{
    return json_pack("{s:s, s:s}", "level", "info", "message", message);
}

static json_t *call_body(const char *tool, json_t *args)
{
    return json_pack("{s:s, s:o, s:i}", "tool", tool, "args", args ? args : json_object(),
                     "deadline", 1);
}

/* [2, MSG_LOG, 7, {"level": "i", "message": "v"}], packed by hand. */
static const char good_log[] = "\x94\x03\xcc\xc8\x07\x82\xa5level\xa1i\xa7message\xa1v";

static int readable(int fd, int timeout_ms)
{
    struct pollfd pfd = {.fd = fd, .events = POLLIN};
    return poll(&pfd, 1, timeout_ms) == 1 && (pfd.revents & POLLIN);
}

static void test_both_ways(void **state)
{
    struct fixture *f = *state;
    struct channel *sup = NULL, *wrk = NULL;
    /* The worker may dial before the supervisor listens: dial retries. */
    assert_int_equal(channel_dial(&wrk, f->url), 0);
    usleep(30 * 1000);
    assert_int_equal(channel_listen(&sup, f->url), 0);

    json_t *body = log_body("s1");
    assert_int_equal(channel_send(wrk, MSG_LOG, 0, body), 0);
    expect_msg(sup, MSG_LOG, 0, "message", "s1");
    json_decref(body);

    body = call_body("navigate", json_pack("{s:s}", "url", "about:blank"));
    assert_int_equal(channel_send(sup, MSG_CALL, 42, body), 0);
    /* A blocking receive on the worker side. */
    struct proto_msg msg;
    char err[256];
    assert_int_equal(channel_recv(wrk, &msg, 0, err, sizeof(err)), 0);
    assert_int_equal(msg.type, MSG_CALL);
    assert_true(msg.id == 42);
    assert_true(json_equal(msg.body, body));
    proto_msg_clear(&msg);

    /* Several in a row arrive in order; NULL body arrives as {}. */
    for (uint64_t k = 1; k <= 10; k++)
        assert_int_equal(channel_send(wrk, MSG_HEARTBEAT, k, NULL), 0);
    for (uint64_t k = 1; k <= 10; k++) {
        assert_int_equal(recv_wait(sup, &msg, 5000, err, sizeof(err)), 0);
        assert_int_equal(msg.type, MSG_HEARTBEAT);
        assert_true(msg.id == k);
        assert_int_equal(json_object_size(msg.body), 0);
        proto_msg_clear(&msg);
    }

    /* A body that cannot be encoded, or that its type's table refuses, is
     * refused at the sender. */
    json_t *arr = json_array();
    assert_int_equal(channel_send(wrk, MSG_RESULT, 1, (json_t *)arr), CHANNEL_TOO_BIG);
    json_decref(arr);
    json_t *untyped = json_pack("{s:s}", "sessionId", "s1");
    assert_int_equal(channel_send(wrk, MSG_HELLO, 0, untyped), CHANNEL_TOO_BIG);
    json_decref(untyped);

    json_decref(body);
    channel_close(wrk);
    channel_close(sup);
    channel_close(NULL);
}

static void test_nonblock_and_fd(void **state)
{
    struct fixture *f = *state;
    struct channel *sup = NULL, *wrk = NULL;
    assert_int_equal(channel_listen(&sup, f->url), 0);
    assert_int_equal(channel_dial(&wrk, f->url), 0);

    struct proto_msg msg;
    char err[256];
    assert_int_equal(channel_recv(sup, &msg, 1, err, sizeof(err)), CHANNEL_AGAIN);
    assert_null(msg.body);

    int fd = channel_fd(sup);
    assert_true(fd >= 0);
    assert_int_equal(channel_fd(sup), fd); /* cached */
    assert_false(readable(fd, 0));

    json_t *body = log_body("one");
    assert_int_equal(channel_send(wrk, MSG_LOG, 0, body), 0);
    assert_int_equal(channel_send(wrk, MSG_LOG, 0, body), 0);
    assert_true(readable(fd, 5000));
    assert_int_equal(channel_recv(sup, &msg, 1, err, sizeof(err)), 0);
    proto_msg_clear(&msg);
    /* Drain: the second may still be in flight. */
    assert_int_equal(recv_wait(sup, &msg, 5000, err, sizeof(err)), 0);
    proto_msg_clear(&msg);
    assert_int_equal(channel_recv(sup, &msg, 1, err, sizeof(err)), CHANNEL_AGAIN);
    /* Drained means not readable any more: a poll loop would spin otherwise. */
    assert_false(readable(fd, 0));

    json_decref(body);
    channel_close(wrk);
    channel_close(sup);
}

/* A peer that sends garbage gets -1 with a reason; the channel still works. */
static void test_malformed(void **state)
{
    struct fixture *f = *state;
    char url[160];
    snprintf(url, sizeof(url), "ipc://%s/y.sock", f->dir);
    struct channel *sup = NULL;
    assert_int_equal(channel_listen(&sup, url), 0);

    nng_socket raw;
    assert_int_equal(nng_pair1_open(&raw), 0);
    assert_int_equal(nng_socket_set_ms(raw, NNG_OPT_SENDTIMEO, 5000), 0);
    assert_int_equal(nng_dial(raw, url, NULL, 0), 0);

    static const struct {
        const char *bytes;
        size_t len;
        const char *why;
    } bad[] = {
        {"\xc1", 1, "0xc1"},
        {"\x94\x01\x01\x00\x80", 5, "version"},
        {"\x93\x03\x01\x00", 4, "expected 4"},
        {"\x94\x03\x01\x00\x90", 5, "not a map"},
        {"\x94\x03\x01\x00\xdf\xff\xff\xff\xff", 9, "cannot fit"},
        {"", 0, "truncated"},
        {"\x94\x03\x01\x00\x80", 5, "hello: field 'pid' is missing"},
        {"\x94\x03\x04\x00\x80", 5, "unknown message type 4"},
    };
    struct proto_msg msg;
    char err[256];
    for (size_t k = 0; k < sizeof(bad) / sizeof(bad[0]); k++) {
        assert_int_equal(nng_send(raw, (void *)bad[k].bytes, bad[k].len, 0), 0);
        err[0] = '\0';
        int rc = recv_wait(sup, &msg, 5000, err, sizeof(err));
        assert_int_equal(rc, -1);
        assert_null(msg.body);
        if (!strstr(err, bad[k].why))
            fail_msg("case %zu: reason \"%s\" lacks \"%s\"", k, err, bad[k].why);
    }
    /* A good message after the bad ones. */
    assert_int_equal(nng_send(raw, (void *)good_log, sizeof good_log - 1, 0), 0);
    expect_msg(sup, MSG_LOG, 7, "message", "v");

    nng_close(raw);
    channel_close(sup);
}

/* Connect sup and wrk and make sure the connection is up. */
static void connect_pair(struct fixture *f, struct channel **sup, struct channel **wrk)
{
    assert_int_equal(channel_listen(sup, f->url), 0);
    assert_int_equal(channel_dial(wrk, f->url), 0);
    json_t *body = log_body("up");
    assert_int_equal(channel_send(*wrk, MSG_LOG, 0, body), 0);
    expect_msg(*sup, MSG_LOG, 0, "message", "up");
    json_decref(body);
}

/*
 * Issue 7 #12: the limit is the same at both ends. The largest message the
 * encoder makes (exactly PROTO_MAX_MESSAGE bytes) arrives whole; anything
 * over a limit is refused at the sender with CHANNEL_TOO_BIG, before nng
 * (whose receiver would drop it and the connection with it) sees it, and the
 * channel keeps working.
 */
static void test_size_limit(void **state)
{
    struct fixture *f = *state;
    struct channel *sup = NULL, *wrk = NULL;
    connect_pair(f, &sup, &wrk);

    /* [2, 100, 1, {"tool": "t", "args": {"a": str32, "b": str32},
     * "deadline": 1}]: 42 bytes besides the strings. */
    size_t a = 32u * 1024 * 1024, b = PROTO_MAX_MESSAGE - 42 - a;
    char *s = malloc(a);
    assert_non_null(s);
    memset(s, 'x', a);
    json_t *args = json_object();
    json_object_set_new(args, "a", json_stringn(s, a));
    json_object_set_new(args, "b", json_stringn(s, b));
    json_t *body = call_body("t", json_incref(args));
    char *buf;
    size_t len;
    assert_int_equal(proto_encode(MSG_CALL, 1, body, &buf, &len), 0);
    assert_int_equal(len, PROTO_MAX_MESSAGE);
    free(buf);
    assert_int_equal(channel_send(wrk, MSG_CALL, 1, body), 0);
    struct proto_msg msg;
    char err[256] = "";
    if (recv_wait(sup, &msg, 20000, err, sizeof(err)) != 0)
        fail_msg("the largest message did not arrive: %s", err);
    assert_int_equal(json_string_length(json_object_get(json_object_get(msg.body, "args"), "b")),
                     b);
    proto_msg_clear(&msg);

    /* One byte more, a string over PROTO_MAX_STRING, too many elements. */
    json_object_set_new(args, "b", json_stringn(s, b + 1));
    assert_int_equal(channel_send(wrk, MSG_CALL, 2, body), CHANNEL_TOO_BIG);
    assert_int_equal(channel_send(sup, MSG_CALL, 2, body), CHANNEL_TOO_BIG);
    json_decref(body);
    json_decref(args);
    free(s);
    s = malloc(PROTO_MAX_STRING + 1);
    assert_non_null(s);
    memset(s, 'y', PROTO_MAX_STRING + 1);
    body = call_body("t", json_pack("{s:s%}", "s", s, (size_t)PROTO_MAX_STRING + 1));
    free(s);
    assert_int_equal(channel_send(wrk, MSG_CALL, 3, body), CHANNEL_TOO_BIG);
    json_decref(body);
    json_t *arr = json_array();
    for (size_t k = 0; k < PROTO_MAX_ELEMENTS; k++)
        json_array_append_new(arr, json_true());
    body = call_body("t", json_pack("{s:o}", "a", arr));
    assert_int_equal(channel_send(wrk, MSG_CALL, 4, body), CHANNEL_TOO_BIG);
    json_decref(body);

    /* The channel still works; nothing of the refused ones arrived. */
    body = log_body("after");
    assert_int_equal(channel_send(wrk, MSG_LOG, 5, body), 0);
    expect_msg(sup, MSG_LOG, 5, "message", "after");
    json_decref(body);
    channel_close(wrk);
    channel_close(sup);
}

/* What the sender's check protects against: nng at the receiving end
 * (NNG_OPT_RECVMAXSZ = PROTO_MAX_MESSAGE) drops a longer message, and the
 * connection with it, without the receiver ever hearing of it. */
static void test_receiver_drops_oversize(void **state)
{
    struct fixture *f = *state;
    struct channel *sup = NULL;
    assert_int_equal(channel_listen(&sup, f->url), 0);
    nng_socket raw;
    assert_int_equal(nng_pair1_open(&raw), 0);
    assert_int_equal(nng_socket_set_ms(raw, NNG_OPT_SENDTIMEO, 5000), 0);
    assert_int_equal(nng_socket_set_ms(raw, NNG_OPT_RECONNMINT, 10), 0);
    assert_int_equal(nng_dial(raw, f->url, NULL, 0), 0);

    size_t len = (size_t)PROTO_MAX_MESSAGE + 1;
    char *big = calloc(1, len);
    assert_non_null(big);
    assert_int_equal(nng_send(raw, big, len, 0), 0); /* the sender's nng takes it */
    free(big);
    struct proto_msg msg;
    char err[256] = "";
    assert_int_equal(recv_wait(sup, &msg, 1000, err, sizeof(err)), CHANNEL_AGAIN);

    /* The dialer reconnects; a message of a good size gets through. */
    long long until = mono_ms() + 5000;
    int rc;
    do {
        assert_int_equal(nng_send(raw, (void *)good_log, sizeof good_log - 1, 0), 0);
        rc = recv_wait(sup, &msg, 200, err, sizeof(err));
    } while (rc == CHANNEL_AGAIN && mono_ms() < until);
    assert_int_equal(rc, 0);
    assert_int_equal(msg.type, MSG_LOG);
    proto_msg_clear(&msg);
    nng_close(raw);
    channel_close(sup);
}

/*
 * Issue 7 #12: a worker that stops reading must not block the supervisor.
 * Sends from the listening end queue up (nng writes them out as the peer
 * reads) and, once the queue is full, fail at once with CHANNEL_FULL instead
 * of waiting (before: 5 s per send). When the peer reads again, the queue
 * drains in order and sends work again.
 */
static void test_full_never_blocks(void **state)
{
    struct fixture *f = *state;
    struct channel *sup = NULL, *wrk = NULL;
    connect_pair(f, &sup, &wrk);

    /* 256 KiB bodies: a few fill the kernel's socket buffers, then nng's queue. */
    size_t n = 256 * 1024;
    char *s = malloc(n);
    assert_non_null(s);
    memset(s, 'z', n);
    json_t *body = call_body("t", json_pack("{s:s%}", "s", s, n));
    free(s);
    long long t0 = mono_ms(), slowest = 0;
    int rc = 0;
    uint64_t sent = 0;
    while (sent < 10000) {
        long long t = mono_ms();
        rc = channel_send(sup, MSG_CALL, sent + 1, body);
        if (mono_ms() - t > slowest)
            slowest = mono_ms() - t;
        if (rc != 0)
            break;
        sent++;
    }
    long long took = mono_ms() - t0;
    assert_int_equal(rc, CHANNEL_FULL);
    /* Never waited: each send is a copy into a queue (1 s allows for load). */
    if (slowest > 1000 || took > 5000)
        fail_msg("sends blocked: slowest %lld ms, %lld ms for %llu sends", slowest, took,
                 (unsigned long long)sent);
    assert_true(sent >= CHANNEL_QUEUE);
    assert_int_equal(channel_send(sup, MSG_CANCEL, 1, NULL), CHANNEL_FULL);

    /* The peer reads again: everything queued arrives, in order. */
    struct proto_msg msg;
    char err[256] = "";
    for (uint64_t k = 1; k <= sent; k++) {
        if (recv_wait(wrk, &msg, 10000, err, sizeof(err)) != 0)
            fail_msg("message %llu of %llu missing: %s", (unsigned long long)k,
                     (unsigned long long)sent, err);
        assert_true(msg.id == k);
        proto_msg_clear(&msg);
    }
    json_decref(body);
    body = call_body("again", NULL);
    long long until = mono_ms() + 5000;
    while ((rc = channel_send(sup, MSG_CALL, 99, body)) == CHANNEL_FULL && mono_ms() < until)
        usleep(10 * 1000);
    assert_int_equal(rc, 0);
    expect_msg(wrk, MSG_CALL, 99, "tool", "again");
    json_decref(body);
    channel_close(wrk);
    channel_close(sup);
}

static void test_bad_url(void **state)
{
    (void)state;
    struct channel *c = (struct channel *)1;
    assert_int_equal(channel_listen(&c, "nosuchscheme://x"), -1);
    assert_null(c);
    c = (struct channel *)1;
    assert_int_equal(channel_dial(&c, "nosuchscheme://x"), -1);
    assert_null(c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_both_ways, setup, teardown),
        cmocka_unit_test_setup_teardown(test_nonblock_and_fd, setup, teardown),
        cmocka_unit_test_setup_teardown(test_malformed, setup, teardown),
        cmocka_unit_test_setup_teardown(test_size_limit, setup, teardown),
        cmocka_unit_test_setup_teardown(test_receiver_drops_oversize, setup, teardown),
        cmocka_unit_test_setup_teardown(test_full_never_blocks, setup, teardown),
        cmocka_unit_test(test_bad_url),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
