/*
 * fuzz_json_mp.c - the JSON <-> msgpack converters.
 *
 * The bytes are tried twice:
 *  - as msgpack: json_mp_decode must not crash; what it accepts must round
 *    trip; and where libmsgpackc's own unpacker manages the input (it stops at
 *    nesting 32), msgpack_to_json must agree with json_mp_decode.
 *  - as JSON text: whatever jansson parses must encode (unless nested deeper
 *    than PROTO_MAX_DEPTH) and decode back to an equal value.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "json_mp.h"
#include "proto.h"

static void check(int ok, const char *what)
{
    if (!ok) {
        fprintf(stderr, "fuzz_json_mp: %s\n", what);
        abort();
    }
}

static int depth_of(const json_t *j)
{
    int max = 0;
    if (json_is_array(j)) {
        for (size_t k = 0; k < json_array_size(j); k++) {
            int d = depth_of(json_array_get(j, k));
            max = d > max ? d : max;
        }
        return max + 1;
    }
    if (json_is_object(j)) {
        const char *key;
        json_t *v;
        json_object_foreach((json_t *)j, key, v)
        {
            int d = depth_of(v);
            max = d > max ? d : max;
        }
        return max + 1;
    }
    return 0;
}

/* Encode j, decode it, require equality. */
static void roundtrip(const json_t *j)
{
    char *buf = NULL;
    size_t len = 0;
    char err[256] = "";
    check(json_mp_encode(j, &buf, &len) == 0, "encode failed");
    json_t *back = json_mp_decode(buf, len, err, sizeof(err));
    if (!back)
        fprintf(stderr, "decode: %s\n", err);
    check(back != NULL, "encoded value does not decode");
    check(json_equal(j, back), "round trip changed the value");
    json_decref(back);
    free(buf);
}

static void as_msgpack(const uint8_t *data, size_t size)
{
    char err[256] = "";
    json_t *j = json_mp_decode(data, size, err, sizeof(err));
    if (j)
        roundtrip(j);
    else
        check(err[0] != '\0', "failure without a reason");

    /* Differential check against libmsgpackc on validated input only: its
     * unpacker would otherwise allocate whatever a header claims. */
    if (mp_validate(data, size, PROTO_MAX_DEPTH, NULL, 0) == (long)size) {
        msgpack_unpacked u;
        size_t off = 0;
        msgpack_unpacked_init(&u);
        if (msgpack_unpack_next(&u, (const char *)data, size, &off) == MSGPACK_UNPACK_SUCCESS) {
            json_t *k = msgpack_to_json(&u.data, err, sizeof(err));
            check((k != NULL) == (j != NULL), "msgpack_to_json and json_mp_decode disagree");
            check(!k || json_equal(j, k), "msgpack_to_json and json_mp_decode differ");
            json_decref(k);
        }
        msgpack_unpacked_destroy(&u);
    }
    json_decref(j);
}

static void as_json(const uint8_t *data, size_t size)
{
    json_error_t jerr;
    json_t *j = json_loadb((const char *)data, size, JSON_DECODE_ANY | JSON_ALLOW_NUL, &jerr);
    if (!j)
        return;
    if (depth_of(j) > PROTO_MAX_DEPTH) {
        char *buf = NULL;
        size_t len = 0;
        check(json_mp_encode(j, &buf, &len) == -1, "too deep a value encoded");
        check(buf == NULL, "failed encode left a buffer");
    } else {
        roundtrip(j);
    }
    json_decref(j);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    as_msgpack(data, size);
    as_json(data, size);
    return 0;
}
