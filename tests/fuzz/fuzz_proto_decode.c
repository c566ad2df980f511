/*
 * fuzz_proto_decode.c - proto_decode on arbitrary bytes.
 *
 * Invariants: decoding never crashes, leaks or over-allocates; a failure
 * always carries a reason; whatever decodes re-encodes, decodes to the same
 * message, and re-encodes to the same bytes (the encoding is canonical).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codec.h"
#include "proto.h"

static void check(int ok, const char *what)
{
    if (!ok) {
        fprintf(stderr, "fuzz_proto_decode: %s\n", what);
        abort();
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct proto_msg m, m2;
    char err[256] = "";

    if (proto_decode(data, size, &m, err, sizeof(err)) != 0) {
        check(err[0] != '\0', "failure without a reason");
        check(m.body == NULL, "failure left a body");
        return 0;
    }
    check(json_is_object(m.body), "body is not an object");
    check(m.version == PROTO_VERSION, "wrong version accepted");

    /* Inputs here are far below PROTO_MAX_MESSAGE, so re-encoding cannot
     * hit the size cap (float32 -> float64 is the only growth). */
    char *buf = NULL, *buf2 = NULL;
    size_t len = 0, len2 = 0;
    check(proto_encode(m.type, m.id, m.body, &buf, &len) == 0, "decoded message does not encode");
    check(proto_decode(buf, len, &m2, err, sizeof(err)) == 0, "re-encoded message does not decode");
    check(m2.type == m.type && m2.id == m.id && m2.version == m.version, "header changed");
    check(json_equal(m.body, m2.body), "body changed");
    check(proto_encode(m2.type, m2.id, m2.body, &buf2, &len2) == 0, "second encode failed");
    check(len2 == len && memcmp(buf, buf2, len) == 0, "encoding is not stable");

    free(buf);
    free(buf2);
    proto_msg_clear(&m);
    proto_msg_clear(&m2);
    return 0;
}
