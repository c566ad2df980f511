/* test_codec.c - protocol envelopes. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bodies.h"
#include "codec.h"
#include "json_mp.h"
#include "proto.h"

/* The literal messages below carry version 3 ("\x94\x03..."). */
_Static_assert(PROTO_VERSION == 3, "update the version byte of the literal messages");

/* Pack an envelope by hand so every field can be wrong. */
struct env {
    msgpack_sbuffer sb;
    msgpack_packer pk;
};

static msgpack_packer *env_begin(struct env *e, size_t count)
{
    msgpack_sbuffer_init(&e->sb);
    msgpack_packer_init(&e->pk, &e->sb, msgpack_sbuffer_write);
    msgpack_pack_array(&e->pk, count);
    return &e->pk;
}

/* Pack a JSON value of the kinds the typed-body cases use. */
static void pack_json(msgpack_packer *pk, const json_t *v)
{
    const char *key;
    json_t *item;
    size_t i;
    switch (json_typeof(v)) {
    case JSON_OBJECT:
        msgpack_pack_map(pk, json_object_size(v));
        json_object_foreach((json_t *)v, key, item)
        {
            msgpack_pack_str_with_body(pk, key, strlen(key));
            pack_json(pk, item);
        }
        break;
    case JSON_ARRAY:
        msgpack_pack_array(pk, json_array_size(v));
        json_array_foreach(v, i, item) pack_json(pk, item);
        break;
    case JSON_STRING:
        msgpack_pack_str_with_body(pk, json_string_value(v), json_string_length(v));
        break;
    case JSON_INTEGER:
        msgpack_pack_int64(pk, json_integer_value(v));
        break;
    case JSON_TRUE:
        msgpack_pack_true(pk);
        break;
    case JSON_FALSE:
        msgpack_pack_false(pk);
        break;
    default:
        msgpack_pack_nil(pk);
        break;
    }
}

static void test_roundtrip(void **state)
{
    (void)state;
    json_error_t jerr;
    json_t *body =
        json_loads("{\"tool\": \"click\", \"args\": {\"ref\": \"e12\", \"n\": [1, 2.5]}, "
                   "\"deadline\": 123456789, \"progress\": true}",
                   0, &jerr);
    assert_non_null(body);
    static const struct {
        uint32_t type;
        uint64_t id;
    } cases[] = {{MSG_CALL, 1}, {MSG_CALL, UINT64_MAX}, {MSG_CALL, 1ull << 40}};
    for (size_t k = 0; k < sizeof(cases) / sizeof(cases[0]); k++) {
        char *buf = NULL;
        size_t len = 0;
        char err[256] = "";
        struct proto_msg msg;
        assert_int_equal(proto_encode(cases[k].type, cases[k].id, body, &buf, &len), 0);
        if (proto_decode(buf, len, &msg, err, sizeof(err)) != 0)
            fail_msg("decode: %s", err);
        assert_int_equal(msg.version, PROTO_VERSION);
        assert_int_equal(msg.type, cases[k].type);
        assert_true(msg.id == cases[k].id);
        assert_true(json_equal(msg.body, body));
        proto_msg_clear(&msg);
        assert_null(msg.body);
        assert_int_equal(msg.type, 0);
        free(buf);
    }
    json_decref(body);
}

/* Bodies are typed (bodies.h): a type proto.h does not list, a missing or
 * mistyped field, a field over its bound and an unknown field are refused
 * by both ends, each with a reason naming it. */
static void test_typed_bodies(void **state)
{
    (void)state;
    static const struct {
        uint32_t type;
        const char *body, *why;
    } cases[] = {
        {MSG_HELLO, "{\"pid\": 42, \"proto\": 1}", NULL},
        {MSG_HELLO, "{\"pid\": 42}", "field 'proto' is missing"},
        {MSG_HELLO, "{\"pid\": -1, \"proto\": 1}", "field 'pid' is not an unsigned integer"},
        {MSG_HELLO, "{\"pid\": \"42\", \"proto\": 1}", "field 'pid' is not an unsigned"},
        {MSG_HELLO, "{\"pid\": 42, \"proto\": 1, \"x\": 0}", "unknown field 'x'"},
        {MSG_CALL, "{\"tool\": \"t\", \"args\": [], \"deadline\": 1}", "field 'args' is not a map"},
        {MSG_CALL,
         "{\"tool\": \"ttttttttttttttttttttttttttttttttttttttttttttttttttttttttttttttttt\", "
         "\"args\": {}, \"deadline\": 1}",
         "field 'tool' is not a string within its bound"},
        {MSG_RESULT, "{\"content\": [1], \"structured\": {}, \"isError\": false}",
         "field 'content'[0] is not a map"},
        {MSG_CONFIG, "{\"sessionId\": \"s\"}", "is missing"},
        {MSG_LOG, "{\"level\": \"info\", \"message\": \"hi\"}", NULL},
        {MSG_SHUTDOWN, "{}", NULL},
        {MSG_SHUTDOWN, "{\"now\": true}", "unknown field 'now'"},
        {4, "{}", "unknown message type 4"},
        {UINT32_MAX, "{}", "unknown message type"},
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        json_t *body = json_loads(cases[k].body, 0, NULL);
        assert_non_null(body);
        char err[256] = "";
        assert_int_equal(body_check(cases[k].type, body, err, sizeof err), cases[k].why ? -1 : 0);
        if (cases[k].why && !strstr(err, cases[k].why))
            fail_msg("case %zu: \"%s\" does not say \"%s\"", k, err, cases[k].why);

        /* The encoder refuses what the decoder would. */
        char *buf = NULL;
        size_t len = 0;
        assert_int_equal(proto_encode(cases[k].type, 1, body, &buf, &len), cases[k].why ? -1 : 0);
        free(buf);

        /* The decoder refuses it even from a sender that did not check. */
        struct env e;
        msgpack_packer *pk = env_begin(&e, 4);
        msgpack_pack_uint32(pk, PROTO_VERSION);
        msgpack_pack_uint32(pk, cases[k].type);
        msgpack_pack_uint64(pk, 1);
        pack_json(pk, body);
        struct proto_msg msg;
        int rc = proto_decode(e.sb.data, e.sb.size, &msg, err, sizeof err);
        assert_int_equal(rc, cases[k].why ? -1 : 0);
        if (rc == 0)
            proto_msg_clear(&msg);
        else
            assert_non_null(strstr(err, cases[k].why));
        msgpack_sbuffer_destroy(&e.sb);
        json_decref(body);
    }
}

static void test_null_body(void **state)
{
    (void)state;
    char *buf = NULL;
    size_t len = 0;
    struct proto_msg msg;
    assert_int_equal(proto_encode(MSG_HEARTBEAT, 0, NULL, &buf, &len), 0);
    assert_int_equal(proto_decode(buf, len, &msg, NULL, 0), 0);
    assert_true(json_is_object(msg.body));
    assert_int_equal(json_object_size(msg.body), 0);
    assert_int_equal(msg.type, MSG_HEARTBEAT);
    proto_msg_clear(&msg);
    free(buf);

    /* Clearing a zeroed struct, or NULL, is harmless. */
    memset(&msg, 0, sizeof(msg));
    proto_msg_clear(&msg);
    proto_msg_clear(NULL);
}

static void test_encode_rejects(void **state)
{
    (void)state;
    char *buf = (char *)"untouched";
    size_t len = 99;
    json_t *arr = json_array();
    assert_int_equal(proto_encode(MSG_LOG, 0, arr, &buf, &len), -1);
    assert_null(buf);
    assert_int_equal(len, 0);
    json_decref(arr);

    /* The body map is level 2 inside the envelope, a call's args level 3:
     * they may nest 62 deep. */
    json_t *args = json_object();
    json_t *body = json_pack("{s:s, s:o, s:i}", "tool", "t", "args", args, "deadline", 1);
    json_t *cur = args;
    for (int k = 1; k < PROTO_MAX_DEPTH - 2; k++) {
        json_t *next = json_object();
        json_object_set_new(cur, "x", next);
        cur = next;
    }
    assert_int_equal(proto_encode(MSG_CALL, 1, body, &buf, &len), 0);
    struct proto_msg msg;
    assert_int_equal(proto_decode(buf, len, &msg, NULL, 0), 0);
    assert_true(json_equal(msg.body, body));
    proto_msg_clear(&msg);
    free(buf);
    json_object_set_new(cur, "x", json_array());
    assert_int_equal(proto_encode(MSG_CALL, 1, body, &buf, &len), -1);
    json_decref(body);
}

/* Decode e's bytes; expect failure with a reason that contains want. */
static void env_expect_fail(struct env *e, const char *want)
{
    char err[256] = "";
    struct proto_msg msg;
    memset(&msg, 0xa5, sizeof(msg));
    int rc = proto_decode(e->sb.data, e->sb.size, &msg, err, sizeof(err));
    if (rc != -1)
        fail_msg("accepted a bad envelope (wanted \"%s\")", want);
    assert_null(msg.body);
    if (!strstr(err, want))
        fail_msg("error \"%s\" does not mention \"%s\"", err, want);
    /* A NULL err is allowed. */
    assert_int_equal(proto_decode(e->sb.data, e->sb.size, &msg, NULL, 0), -1);
    msgpack_sbuffer_destroy(&e->sb);
}

static void test_wrong_version(void **state)
{
    (void)state;
    struct env e;
    msgpack_packer *pk = env_begin(&e, 4);
    msgpack_pack_uint32(pk, PROTO_VERSION + 1);
    msgpack_pack_uint32(pk, MSG_HELLO);
    msgpack_pack_uint64(pk, 0);
    msgpack_pack_map(pk, 0);
    env_expect_fail(&e, "version");

    pk = env_begin(&e, 4);
    msgpack_pack_str_with_body(pk, "1", 1);
    msgpack_pack_uint32(pk, MSG_HELLO);
    msgpack_pack_uint64(pk, 0);
    msgpack_pack_map(pk, 0);
    env_expect_fail(&e, "version");
}

static void test_wrong_length(void **state)
{
    (void)state;
    struct env e;
    msgpack_packer *pk = env_begin(&e, 3);
    msgpack_pack_uint32(pk, PROTO_VERSION);
    msgpack_pack_uint32(pk, MSG_HELLO);
    msgpack_pack_uint64(pk, 0);
    env_expect_fail(&e, "expected 4");

    pk = env_begin(&e, 5);
    msgpack_pack_uint32(pk, PROTO_VERSION);
    msgpack_pack_uint32(pk, MSG_HELLO);
    msgpack_pack_uint64(pk, 0);
    msgpack_pack_map(pk, 0);
    msgpack_pack_nil(pk);
    env_expect_fail(&e, "expected 4");

    /* Not an array at all. */
    msgpack_sbuffer_init(&e.sb);
    msgpack_packer_init(&e.pk, &e.sb, msgpack_sbuffer_write);
    msgpack_pack_map(&e.pk, 0);
    env_expect_fail(&e, "not an array");
}

static void test_body_not_map(void **state)
{
    (void)state;
    struct env e;
    msgpack_packer *pk = env_begin(&e, 4);
    msgpack_pack_uint32(pk, PROTO_VERSION);
    msgpack_pack_uint32(pk, MSG_RESULT);
    msgpack_pack_uint64(pk, 3);
    msgpack_pack_array(pk, 0);
    env_expect_fail(&e, "not a map");

    pk = env_begin(&e, 4);
    msgpack_pack_uint32(pk, PROTO_VERSION);
    msgpack_pack_uint32(pk, MSG_RESULT);
    msgpack_pack_uint64(pk, 3);
    msgpack_pack_nil(pk);
    env_expect_fail(&e, "not a map");

    /* A map whose contents JSON cannot hold. */
    pk = env_begin(&e, 4);
    msgpack_pack_uint32(pk, PROTO_VERSION);
    msgpack_pack_uint32(pk, MSG_RESULT);
    msgpack_pack_uint64(pk, 3);
    msgpack_pack_map(pk, 1);
    msgpack_pack_int(pk, 1);
    msgpack_pack_int(pk, 2);
    env_expect_fail(&e, "key");
}

static void test_type_not_uint(void **state)
{
    (void)state;
    struct env e;
    msgpack_packer *pk = env_begin(&e, 4);
    msgpack_pack_uint32(pk, PROTO_VERSION);
    msgpack_pack_int(pk, -1);
    msgpack_pack_uint64(pk, 0);
    msgpack_pack_map(pk, 0);
    env_expect_fail(&e, "type");

    pk = env_begin(&e, 4);
    msgpack_pack_uint32(pk, PROTO_VERSION);
    msgpack_pack_str_with_body(pk, "call", 4);
    msgpack_pack_uint64(pk, 0);
    msgpack_pack_map(pk, 0);
    env_expect_fail(&e, "type");

    pk = env_begin(&e, 4);
    msgpack_pack_uint32(pk, PROTO_VERSION);
    msgpack_pack_uint64(pk, (uint64_t)UINT32_MAX + 1);
    msgpack_pack_uint64(pk, 0);
    msgpack_pack_map(pk, 0);
    env_expect_fail(&e, "type");

    pk = env_begin(&e, 4);
    msgpack_pack_uint32(pk, PROTO_VERSION);
    msgpack_pack_double(pk, 100.0);
    msgpack_pack_uint64(pk, 0);
    msgpack_pack_map(pk, 0);
    env_expect_fail(&e, "type");

    pk = env_begin(&e, 4);
    msgpack_pack_uint32(pk, PROTO_VERSION);
    msgpack_pack_uint32(pk, MSG_CALL);
    msgpack_pack_int64(pk, -5);
    msgpack_pack_map(pk, 0);
    env_expect_fail(&e, "id");
}

static void test_malformed(void **state)
{
    (void)state;
    char err[256];
    struct proto_msg msg;
    /* Trailing bytes after a valid envelope. */
    char *buf;
    size_t len;
    assert_int_equal(proto_encode(MSG_HEARTBEAT, 0, NULL, &buf, &len), 0);
    char *longer = malloc(len + 1);
    memcpy(longer, buf, len);
    longer[len] = 0;
    assert_int_equal(proto_decode(longer, len + 1, &msg, err, sizeof(err)), -1);
    assert_non_null(strstr(err, "trailing"));
    /* Every prefix fails. */
    for (size_t k = 0; k < len; k++)
        assert_int_equal(proto_decode(longer, k, &msg, NULL, 0), -1);
    free(longer);
    free(buf);
    assert_int_equal(proto_decode(NULL, 0, &msg, err, sizeof(err)), -1);
    /* A huge container count. */
    assert_int_equal(
        proto_decode("\x94\x03\x01\x00\xdf\xff\xff\xff\xff", 9, &msg, err, sizeof(err)), -1);
    assert_non_null(strstr(err, "malformed"));
    /* The smallest good message, made by hand: a heartbeat (type 300). */
    assert_int_equal(proto_decode("\x94\x03\xcd\x01\x2c\x00\x80", 7, &msg, err, sizeof(err)), 0);
    assert_int_equal(msg.type, MSG_HEARTBEAT);
    proto_msg_clear(&msg);
}

static void test_oversized(void **state)
{
    (void)state;
    char err[256];
    struct proto_msg msg;
    /* Refused on the length alone; calloc'd pages are never touched. */
    size_t len = (size_t)PROTO_MAX_MESSAGE + 1;
    char *big = calloc(1, len);
    assert_non_null(big);
    assert_int_equal(proto_decode(big, len, &msg, err, sizeof(err)), -1);
    assert_non_null(strstr(err, "exceeds"));
    free(big);

    /* A string over PROTO_MAX_STRING cannot be encoded ... */
    size_t slen = (size_t)PROTO_MAX_STRING + 1;
    char *s = malloc(slen);
    assert_non_null(s);
    memset(s, 'a', slen);
    json_t *st = json_object();
    json_object_set_new(st, "s", json_stringn_nocheck(s, slen));
    json_t *body = json_pack("{s:[], s:o, s:b}", "content", "structured", st, "isError", 0);
    char *buf;
    assert_int_equal(proto_encode(MSG_RESULT, 1, body, &buf, &len), -1);
    json_decref(body);

    /* ... nor two that together exceed PROTO_MAX_MESSAGE. */
    size_t half = PROTO_MAX_MESSAGE / 2 + 16;
    st = json_object();
    json_object_set_new(st, "a", json_stringn_nocheck(s, half));
    json_object_set_new(st, "b", json_stringn_nocheck(s, half));
    body = json_pack("{s:[], s:o, s:b}", "content", "structured", st, "isError", 0);
    assert_int_equal(proto_encode(MSG_RESULT, 1, body, &buf, &len), -1);
    json_decref(body);
    free(s);
}

/* jansson's memory, counted: live and peak bytes (with malloc's own
 * per-block overhead estimated at 16 bytes). */
static size_t live_bytes, peak_bytes;

static void *count_malloc(size_t n)
{
    size_t *p = malloc(n + sizeof(size_t) * 2);
    if (!p)
        return NULL;
    p[0] = n + 16;
    live_bytes += p[0];
    if (live_bytes > peak_bytes)
        peak_bytes = live_bytes;
    return p + 2;
}

static void count_free(void *ptr)
{
    if (!ptr)
        return;
    size_t *p = (size_t *)ptr - 2;
    live_bytes -= p[0];
    free(p);
}

/* Decode and return jansson's peak bytes; *ok says whether it decoded. */
static size_t decode_peak(const void *buf, size_t len, int *ok)
{
    struct proto_msg msg;
    char err[256];
    json_set_alloc_funcs(count_malloc, count_free);
    live_bytes = peak_bytes = 0;
    *ok = proto_decode(buf, len, &msg, err, sizeof(err)) == 0;
    proto_msg_clear(&msg);
    json_set_alloc_funcs(malloc, free);
    assert_int_equal(live_bytes, 0);
    return peak_bytes;
}

/* A call whose body is {"tool": "t", "args": {"a": [x, x, ...]},
 * "deadline": 1} with n copies of the one-byte msgpack object x. */
static char *env_of_many(unsigned char x, size_t n, size_t *len)
{
    struct env e;
    msgpack_packer *pk = env_begin(&e, 4);
    msgpack_pack_uint32(pk, PROTO_VERSION);
    msgpack_pack_uint32(pk, MSG_CALL);
    msgpack_pack_uint64(pk, 1);
    msgpack_pack_map(pk, 3);
    msgpack_pack_str_with_body(pk, "tool", 4);
    msgpack_pack_str_with_body(pk, "t", 1);
    msgpack_pack_str_with_body(pk, "deadline", 8);
    msgpack_pack_uint64(pk, 1);
    msgpack_pack_str_with_body(pk, "args", 4);
    msgpack_pack_map(pk, 1);
    msgpack_pack_str_with_body(pk, "a", 1);
    msgpack_pack_array(pk, n);
    for (size_t k = 0; k < n; k++)
        msgpack_sbuffer_write(&e.sb, (const char *)&x, 1);
    *len = e.sb.size;
    return msgpack_sbuffer_release(&e.sb);
}

/* A message can expand only so far once decoded (issue 7 #8: 41x before). */
static void test_expansion_bound(void **state)
{
    (void)state;
    /* The envelope (4), the body map, its 3 keys, tool's and deadline's
     * values, the args map, its key and the array take 13 objects. */
    const size_t most = PROTO_MAX_ELEMENTS - 13;
    /* The costliest one-byte objects: empty maps and arrays, small ints. */
    static const unsigned char costly[] = {0x80, 0x90, 0x01, 0xa0};
    for (size_t k = 0; k < sizeof costly; k++) {
        size_t len;
        int ok;
        char *buf = env_of_many(costly[k], most, &len);
        size_t peak = decode_peak(buf, len, &ok);
        free(buf);
        assert_true(ok);
        /* The documented bound (docs/limits.md, proto.h): 256 bytes per
         * object (an empty map costs ~240), 64 MiB in all. */
        if (peak > (size_t)PROTO_MAX_ELEMENTS * 256)
            fail_msg("0x%02x: %zu bytes of JSON from %zu bytes of msgpack", costly[k], peak, len);
        printf("# %zu objects 0x%02x: %zu bytes of msgpack -> %zu bytes of JSON\n", most, costly[k],
               len, peak);

        /* One object more is refused before anything is allocated. */
        buf = env_of_many(costly[k], most + 1, &len);
        assert_int_equal(decode_peak(buf, len, &ok), 0);
        assert_false(ok);
        free(buf);
    }

    /* A full-size message of tiny objects: refused, nothing allocated. */
    size_t len;
    int ok;
    char *buf = env_of_many(0x00, PROTO_MAX_MESSAGE - 40, &len);
    assert_true(len <= PROTO_MAX_MESSAGE);
    assert_int_equal(decode_peak(buf, len, &ok), 0);
    assert_false(ok);
    free(buf);

    /* The encoder agrees: a body one object over the cap is refused. */
    json_t *arr = json_array();
    for (size_t k = 0; k < most; k++)
        json_array_append_new(arr, json_object());
    json_t *body = json_pack("{s:s, s:{s:o}, s:i}", "tool", "t", "args", "a", arr, "deadline", 1);
    assert_int_equal(proto_encode(MSG_CALL, 1, body, &buf, &len), 0);
    free(buf);
    json_array_append_new(arr, json_object());
    assert_int_equal(proto_encode(MSG_CALL, 1, body, &buf, &len), -1);
    json_decref(body);
}

static void test_names(void **state)
{
    (void)state;
    assert_string_equal(proto_msg_name(MSG_HELLO), "hello");
    assert_string_equal(proto_msg_name(MSG_CALL), "call");
    assert_string_equal(proto_msg_name(MSG_SHUTDOWN), "shutdown");
    assert_string_equal(proto_msg_name(4), "unknown");
    assert_string_equal(proto_msg_name(UINT32_MAX), "unknown");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_roundtrip),     cmocka_unit_test(test_typed_bodies),
        cmocka_unit_test(test_null_body),     cmocka_unit_test(test_encode_rejects),
        cmocka_unit_test(test_wrong_version), cmocka_unit_test(test_wrong_length),
        cmocka_unit_test(test_body_not_map),  cmocka_unit_test(test_type_not_uint),
        cmocka_unit_test(test_malformed),     cmocka_unit_test(test_oversized),
        cmocka_unit_test(test_names),         cmocka_unit_test(test_expansion_bound),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
