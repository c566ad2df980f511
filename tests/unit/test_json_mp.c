/* test_json_mp.c - JSON <-> msgpack conversion and the validator. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "json_mp.h"
#include "proto.h"

/* Encode, decode, and require the same value back. */
static void roundtrip(json_t *j)
{
    char *buf = NULL;
    size_t len = 0;
    char err[256] = "";

    assert_non_null(j);
    assert_int_equal(json_mp_encode(j, &buf, &len), 0);
    assert_non_null(buf);
    assert_true(len > 0);
    assert_int_equal(mp_validate(buf, len, PROTO_MAX_DEPTH, err, sizeof(err)), (long)len);
    json_t *back = json_mp_decode(buf, len, err, sizeof(err));
    if (!back)
        fail_msg("decode failed: %s", err);
    if (!json_equal(j, back)) {
        char *a = json_dumps(j, JSON_ENCODE_ANY), *b = json_dumps(back, JSON_ENCODE_ANY);
        fail_msg("round trip changed %s into %s", a, b);
    }
    /* Types survive exactly (json_equal would not tell 1 from 1.0 apart anyway). */
    assert_int_equal(json_typeof(back), json_typeof(j));
    json_decref(back);
    free(buf);
    json_decref(j);
}

/* Decoding must fail; returns nothing, checks an error message was given. */
static void reject(const void *buf, size_t len)
{
    char err[256] = "";
    json_t *j = json_mp_decode(buf, len, err, sizeof(err));
    if (j) {
        char *s = json_dumps(j, JSON_ENCODE_ANY);
        fail_msg("accepted bad input as %s", s);
    }
    assert_true(err[0] != '\0');
}

#define REJECT(lit) reject(lit, sizeof(lit) - 1)

static json_t *decode_ok(const void *buf, size_t len)
{
    char err[256] = "";
    json_t *j = json_mp_decode(buf, len, err, sizeof(err));
    if (!j)
        fail_msg("decode failed: %s", err);
    return j;
}

#define DECODE_OK(lit) decode_ok(lit, sizeof(lit) - 1)

static void test_scalars(void **state)
{
    (void)state;
    roundtrip(json_null());
    roundtrip(json_true());
    roundtrip(json_false());
    static const json_int_t ints[] = {0,
                                      1,
                                      -1,
                                      127,
                                      128,
                                      -32,
                                      -33,
                                      -128,
                                      -129,
                                      255,
                                      256,
                                      65535,
                                      65536,
                                      -32768,
                                      -32769,
                                      INT32_MAX,
                                      (json_int_t)INT32_MAX + 1,
                                      INT32_MIN,
                                      (json_int_t)INT32_MIN - 1,
                                      UINT32_MAX,
                                      (json_int_t)UINT32_MAX + 1,
                                      1234567890123456789LL,
                                      -1234567890123456789LL,
                                      INT64_MAX,
                                      INT64_MIN};
    for (size_t k = 0; k < sizeof(ints) / sizeof(ints[0]); k++)
        roundtrip(json_integer(ints[k]));
    static const double reals[] = {0.0,   -0.0,   0.5,    -1.5,   3.141592653589793,
                                   1e300, -1e300, 1e-300, 5e-324, 1.7976931348623157e308};
    for (size_t k = 0; k < sizeof(reals) / sizeof(reals[0]); k++)
        roundtrip(json_real(reals[k]));
}

static void test_strings(void **state)
{
    (void)state;
    roundtrip(json_string(""));
    roundtrip(json_string("hello"));
    roundtrip(json_stringn("a\0b\0", 4));
    roundtrip(json_stringn("\0", 1));
    roundtrip(json_string("h\xc3\xa9llo \xe2\x82\xac \xf0\x9d\x84\x9e \xe6\x97\xa5\xe6\x9c\xac"));
    /* str8, str16 and str32 headers */
    static const size_t sizes[] = {31, 32, 255, 256, 65535, 65536, 200000};
    for (size_t k = 0; k < sizeof(sizes) / sizeof(sizes[0]); k++) {
        char *s = malloc(sizes[k]);
        assert_non_null(s);
        memset(s, 'x', sizes[k]);
        roundtrip(json_stringn(s, sizes[k]));
        free(s);
    }
    /* Unicode and empty keys. */
    json_t *o = json_object();
    json_object_set_new(o, "", json_integer(1));
    json_object_set_new(o, "\xc3\xbc", json_string("\xc3\xbc"));
    roundtrip(o);

    /* A key with a NUL is refused both ways. */
    o = json_object();
    json_object_setn_new(o, "k\0ey", 4, json_integer(1));
    char *buf = NULL;
    size_t len = 0;
    assert_int_equal(json_mp_encode(o, &buf, &len), -1);
    json_decref(o);
    REJECT("\x81\xa3k\x00y\x01");
}

static void test_containers(void **state)
{
    (void)state;
    roundtrip(json_array());
    roundtrip(json_object());
    json_error_t jerr;
    roundtrip(json_loads("[[], {}, [[[]]], {\"a\": {\"b\": {\"c\": []}}}]", 0, &jerr));
    roundtrip(json_loads("{\"tool\": \"navigate\", \"args\": {\"url\": \"https://example.com/\", "
                         "\"timeout\": 30000, \"ratio\": 0.25, \"flags\": [true, false, null]}, "
                         "\"n\": -9223372036854775808}",
                         0, &jerr));
    /* array16/array32 and map16/map32 headers */
    json_t *a = json_array();
    for (int k = 0; k < 70000; k++)
        json_array_append_new(a, json_integer(k));
    roundtrip(a);
    json_t *o = json_object();
    for (int k = 0; k < 70000; k++) {
        char key[16];
        snprintf(key, sizeof(key), "k%d", k);
        json_object_set_new(o, key, k % 2 ? json_null() : json_real(k + 0.5));
    }
    roundtrip(o);
}

static json_t *nested_arrays(int depth)
{
    json_t *j = json_array();
    for (int k = 1; k < depth; k++) {
        json_t *outer = json_array();
        json_array_append_new(outer, j);
        j = outer;
    }
    return j;
}

static void test_depth(void **state)
{
    (void)state;
    /* Exactly the cap works: more than libmsgpackc's own unpacker allows (32). */
    roundtrip(nested_arrays(PROTO_MAX_DEPTH));

    /* The encoder refuses what the decoder would refuse. */
    json_t *deep = nested_arrays(PROTO_MAX_DEPTH + 1);
    char *buf = NULL;
    size_t len = 0;
    assert_int_equal(json_mp_encode(deep, &buf, &len), -1);
    assert_null(buf);
    json_decref(deep);

    /* Hand-made bytes one level too deep, with maps and arrays mixed. */
    unsigned char b[2 * PROTO_MAX_DEPTH + 8];
    size_t n = 0;
    for (int k = 0; k <= PROTO_MAX_DEPTH; k++) {
        if (k % 2) {
            b[n++] = 0x91;
        } else {
            b[n++] = 0x81;
            b[n++] = 0xa0; /* key "" */
        }
    }
    b[n++] = 0xc0;
    reject(b, n);
    char err[128];
    assert_int_equal(mp_validate(b, n, PROTO_MAX_DEPTH, err, sizeof(err)), -1);
    assert_non_null(strstr(err, "nesting"));
    assert_int_equal(mp_validate(b, n, PROTO_MAX_DEPTH + 1, err, sizeof(err)), (long)n);
    /* An empty container counts as a level too. */
    assert_int_equal(mp_validate("\x91\x90", 2, 1, NULL, 0), -1);
    assert_int_equal(mp_validate("\x91\x90", 2, 2, NULL, 0), 2);
    assert_int_equal(mp_validate("\xc0", 1, 0, NULL, 0), 1);
}

/* Every proper prefix of a valid message must fail, never crash or hang. */
static void test_truncated(void **state)
{
    (void)state;
    json_error_t jerr;
    json_t *j = json_loads("{\"a\": [1, -200, 70000, 4294967296, -5000000000, 0.5, \"x\", "
                           "\"a long string that needs str8\", null, true, {\"b\": {}}, []], "
                           "\"c\": \"\\u0000\"}",
                           JSON_ALLOW_NUL, &jerr);
    assert_non_null(j);
    char *buf = NULL;
    size_t len = 0;
    assert_int_equal(json_mp_encode(j, &buf, &len), 0);
    for (size_t k = 0; k < len; k++) {
        /* A heap copy of exactly k bytes, so ASan catches any overread. */
        unsigned char *p = malloc(k ? k : 1);
        memcpy(p, buf, k);
        reject(p, k);
        assert_int_equal(mp_validate(p, k, PROTO_MAX_DEPTH, NULL, 0), -1);
        free(p);
    }
    json_t *back = decode_ok(buf, len);
    assert_true(json_equal(j, back));
    json_decref(back);
    json_decref(j);
    free(buf);
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* 5-byte headers claiming 2^32-1 elements must fail without reserving memory. */
static void test_huge_counts(void **state)
{
    (void)state;
    double t0 = now_s();
    for (int k = 0; k < 1000; k++) {
        REJECT("\xdf\xff\xff\xff\xff");
        REJECT("\xdd\xff\xff\xff\xff");
        REJECT("\x91\xdd\xff\xff\xff\xff");
        REJECT("\x81\xa1k\xdf\xff\xff\xff\xff");
    }
    assert_true(now_s() - t0 < 2.0);

    char err[128];
    assert_int_equal(mp_validate("\xdd\xff\xff\xff\xff", 5, PROTO_MAX_DEPTH, err, sizeof(err)), -1);
    assert_non_null(strstr(err, "cannot fit"));
    /* Each element takes one byte; a map entry two. */
    assert_int_equal(mp_validate("\x93\x01\x02", 3, 8, NULL, 0), -1);
    assert_int_equal(mp_validate("\x93\x01\x02\x03", 4, 8, NULL, 0), 4);
    assert_int_equal(mp_validate("\x82\xa0\x01\xa0", 4, 8, NULL, 0), -1);
    /* Counts add up across open containers: each inner array alone would fit
     * in the bytes left, together they cannot. */
    assert_int_equal(mp_validate("\x92\x93\x01\x02\x03\x93\x01\x02", 8, 8, NULL, 0), -1);
    assert_int_equal(mp_validate("\x92\x92\x01\x02\x92\x01\x02\x01", 8, 8, NULL, 0), 7);
}

/* An array of n fixint zeros: n + 1 objects in 5 + n bytes. */
static unsigned char *zeros(size_t n, size_t *len)
{
    unsigned char *b = calloc(1, 5 + n);
    assert_non_null(b);
    b[0] = 0xdd;
    b[1] = (unsigned char)(n >> 24);
    b[2] = (unsigned char)(n >> 16);
    b[3] = (unsigned char)(n >> 8);
    b[4] = (unsigned char)n;
    *len = 5 + n;
    return b;
}

/* At most PROTO_MAX_ELEMENTS objects (containers, scalars, map keys) in one
 * object, both ways, so a small message cannot become a huge tree. */
static void test_element_cap(void **state)
{
    (void)state;
    char err[128] = "";
    size_t len;
    unsigned char *b = zeros(PROTO_MAX_ELEMENTS - 1, &len);
    assert_int_equal(mp_validate(b, len, PROTO_MAX_DEPTH, err, sizeof(err)), (long)len);
    json_t *j = decode_ok(b, len);
    assert_int_equal(json_array_size(j), PROTO_MAX_ELEMENTS - 1);
    /* What decodes encodes; one element more does neither. */
    char *out;
    size_t outlen;
    assert_int_equal(json_mp_encode(j, &out, &outlen), 0);
    free(out);
    json_array_append_new(j, json_integer(0));
    assert_int_equal(json_mp_encode(j, &out, &outlen), -1);
    assert_null(out);
    json_decref(j);
    free(b);

    b = zeros(PROTO_MAX_ELEMENTS, &len);
    assert_int_equal(mp_validate(b, len, PROTO_MAX_DEPTH, err, sizeof(err)), -1);
    assert_non_null(strstr(err, "elements"));
    reject(b, len);
    msgpack_unpacked u;
    msgpack_unpacked_init(&u);
    assert_int_equal(msgpack_unpack_next(&u, (const char *)b, len, NULL), MSGPACK_UNPACK_SUCCESS);
    assert_null(msgpack_to_json(&u.data, err, sizeof(err)));
    assert_non_null(strstr(err, "elements"));
    msgpack_unpacked_destroy(&u);
    free(b);

    /* Map keys count: {"k0": 0, ...} with half the cap in entries is one
     * object too many. */
    json_t *m = json_object();
    for (size_t k = 0; k < PROTO_MAX_ELEMENTS / 2; k++) {
        char key[16];
        snprintf(key, sizeof key, "%zx", k);
        json_object_set_new(m, key, json_null());
    }
    assert_int_equal(json_mp_encode(m, &out, &outlen), -1);
    json_object_del(m, "0");
    assert_int_equal(json_mp_encode(m, &out, &outlen), 0);
    assert_int_equal(mp_validate(out, outlen, PROTO_MAX_DEPTH, NULL, 0), (long)outlen);
    free(out);
    json_decref(m);
}

static void test_lengths(void **state)
{
    (void)state;
    REJECT("\xdb\x00\x00\x10\x00"
           "abc");                          /* str32 longer than the buffer */
    REJECT("\xdb\xff\xff\xff\xff");         /* str32 of 4 GiB */
    REJECT("\xc6\x00\x00\x00\x05\x61\x62"); /* bin32 past the end */
    REJECT("\xd9\x05\x61");                 /* str8 past the end */
    REJECT("\xda\x00");                     /* str16 header cut short */
    REJECT("\xcf\x00\x00");                 /* uint64 cut short */

    char err[128];
    /* Over PROTO_MAX_STRING is refused before looking at the buffer size. */
    unsigned char big[5] = {0xdb};
    uint32_t n = PROTO_MAX_STRING + 1;
    big[1] = (unsigned char)(n >> 24);
    big[2] = (unsigned char)(n >> 16);
    big[3] = (unsigned char)(n >> 8);
    big[4] = (unsigned char)n;
    assert_int_equal(mp_validate(big, sizeof(big), 8, err, sizeof(err)), -1);
    assert_non_null(strstr(err, "limit"));
}

static void test_integers(void **state)
{
    (void)state;
    REJECT("\xcf\x80\x00\x00\x00\x00\x00\x00\x00");
    REJECT("\xcf\xff\xff\xff\xff\xff\xff\xff\xff");
    json_t *j = DECODE_OK("\xcf\x7f\xff\xff\xff\xff\xff\xff\xff");
    assert_true(json_is_integer(j));
    assert_true(json_integer_value(j) == INT64_MAX);
    json_decref(j);
    j = DECODE_OK("\xd3\x80\x00\x00\x00\x00\x00\x00\x00");
    assert_true(json_integer_value(j) == INT64_MIN);
    json_decref(j);
    /* Signed encodings of small values, as other packers emit them. */
    j = DECODE_OK("\xd0\x05");
    assert_int_equal(json_integer_value(j), 5);
    json_decref(j);
    j = DECODE_OK("\xd1\xff\x00");
    assert_int_equal(json_integer_value(j), -256);
    json_decref(j);
    j = DECODE_OK("\xcd\x01\x00");
    assert_int_equal(json_integer_value(j), 256);
    json_decref(j);
}

static void test_floats(void **state)
{
    (void)state;
    json_t *j = DECODE_OK("\xca\x3f\xc0\x00\x00"); /* float32 1.5 */
    assert_true(json_is_real(j));
    assert_true(json_real_value(j) == 1.5);
    json_decref(j);
    REJECT("\xca\x7f\xc0\x00\x00");                 /* float32 NaN */
    REJECT("\xca\x7f\x80\x00\x00");                 /* float32 +inf */
    REJECT("\xcb\x7f\xf8\x00\x00\x00\x00\x00\x00"); /* float64 NaN */
    REJECT("\xcb\xff\xf0\x00\x00\x00\x00\x00\x00"); /* float64 -inf */
}

static void test_types(void **state)
{
    (void)state;
    REJECT("\x81\x01\x02");             /* int key */
    REJECT("\x81\xc0\x02");             /* nil key */
    REJECT("\x81\xc4\x01k\x02");        /* bin key */
    REJECT("\x81\x90\x02");             /* array key */
    REJECT("\xd4\x01\x00");             /* fixext1 */
    REJECT("\xc7\x01\x05\x00");         /* ext8 */
    REJECT("\xd6\xff\x00\x00\x00\x01"); /* timestamp32 */
    REJECT("\x91\xd4\x01\x00");         /* ext inside an array */
    REJECT("\xc1");
    REJECT("\x92\x01\xc1");
    REJECT("\x81\xa1k\xc1");
    REJECT("\xa1\xff");         /* str that is not UTF-8 */
    REJECT("\xc4\x02\xc3\x28"); /* bin that is not UTF-8 */
    REJECT("\x81\xa1\xff\x01"); /* key that is not UTF-8 */
    REJECT("");
    assert_null(json_mp_decode(NULL, 0, NULL, 0));
    assert_int_equal(mp_validate(NULL, 0, 8, NULL, 0), -1);

    /* ext is structurally fine: only the converter refuses it. */
    assert_int_equal(mp_validate("\xd4\x01\x00", 3, 8, NULL, 0), 3);

    json_t *j = DECODE_OK("\xc4\x03"
                          "abc");
    assert_string_equal(json_string_value(j), "abc");
    json_decref(j);
    j = DECODE_OK("\x82\xa1k\x01\xa1k\x02"); /* duplicate key: last wins */
    assert_int_equal(json_object_size(j), 1);
    assert_int_equal(json_integer_value(json_object_get(j, "k")), 2);
    json_decref(j);
}

static void test_trailing(void **state)
{
    (void)state;
    REJECT("\xc0\xc0");
    REJECT("\x91\x01\x02");
    REJECT("\x80\x00");
    /* The validator itself reports the size of the first object. */
    assert_int_equal(mp_validate("\x91\x01\x02", 3, 8, NULL, 0), 2);
}

/* msgpack_to_json on objects from libmsgpackc's unpacker: same rules. */
static json_t *via_unpacker(const char *buf, size_t len, char *err, size_t errlen)
{
    msgpack_unpacked u;
    size_t off = 0;
    msgpack_unpacked_init(&u);
    assert_int_equal(msgpack_unpack_next(&u, buf, len, &off), MSGPACK_UNPACK_SUCCESS);
    json_t *j = msgpack_to_json(&u.data, err, errlen);
    msgpack_unpacked_destroy(&u);
    return j;
}

static void test_msgpack_to_json(void **state)
{
    (void)state;
    char err[128];
    static const struct {
        const char *buf;
        size_t len;
        int ok;
    } cases[] = {
        {"\x81\xa1k\x93\x01\xff\xc3", 7, 1},
        {"\xa3\x61\x00\x62", 4, 1},
        {"\xc4\x01\x61", 3, 1},
        {"\x94\x63\xa0\x74\x65", 5, 1}, /* empty str: NULL ptr from the unpacker */
        {"\x81\xa0\xc4\x00", 4, 1},     /* empty key, empty bin */
        {"\xcb\x3f\xe0\x00\x00\x00\x00\x00\x00", 9, 1},
        {"\xca\x3f\xc0\x00\x00", 5, 1},
        {"\xcf\x80\x00\x00\x00\x00\x00\x00\x00", 9, 0},
        {"\x81\x01\x02", 3, 0},
        {"\x81\xa3k\x00y\x01", 6, 0},
        {"\xd4\x01\x00", 3, 0},
        {"\xa1\xff", 2, 0},
        {"\xca\x7f\xc0\x00\x00", 5, 0},
    };
    for (size_t k = 0; k < sizeof(cases) / sizeof(cases[0]); k++) {
        json_t *a = via_unpacker(cases[k].buf, cases[k].len, err, sizeof(err));
        json_t *b = json_mp_decode(cases[k].buf, cases[k].len, NULL, 0);
        assert_int_equal(a != NULL, cases[k].ok);
        assert_int_equal(b != NULL, cases[k].ok);
        if (a)
            assert_true(json_equal(a, b));
        json_decref(a);
        json_decref(b);
    }
}

static void test_reader(void **state)
{
    (void)state;
    struct mp_reader r = {.p = (const unsigned char *)"\x93\xd0\x07\xff\x81\xa1k\xc0", .end = NULL};
    r.end = r.p + 8;
    uint64_t v;
    assert_int_equal(mp_read_uint(&r, &v), -1); /* an array, not consumed */
    assert_int_equal(mp_read_array(&r, &v), 0);
    assert_int_equal(v, 3);
    assert_int_equal(mp_read_uint(&r, &v), 0);
    assert_int_equal(v, 7);
    assert_int_equal(mp_read_uint(&r, &v), -1); /* -1 is not unsigned */
    assert_false(mp_peek_map(&r));
    json_t *j = mp_read_json(&r, 4, NULL, 0);
    assert_int_equal(json_integer_value(j), -1);
    json_decref(j);
    assert_true(mp_peek_map(&r));
    j = mp_read_json(&r, 4, NULL, 0);
    assert_true(json_is_null(json_object_get(j, "k")));
    json_decref(j);
    assert_ptr_equal(r.p, r.end);
    assert_false(mp_peek_map(&r));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_scalars),    cmocka_unit_test(test_strings),
        cmocka_unit_test(test_containers), cmocka_unit_test(test_depth),
        cmocka_unit_test(test_truncated),  cmocka_unit_test(test_huge_counts),
        cmocka_unit_test(test_lengths),    cmocka_unit_test(test_integers),
        cmocka_unit_test(test_floats),     cmocka_unit_test(test_types),
        cmocka_unit_test(test_trailing),   cmocka_unit_test(test_msgpack_to_json),
        cmocka_unit_test(test_reader),     cmocka_unit_test(test_element_cap),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
