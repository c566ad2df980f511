/*
 * fuzz_relay_spwire.c - the relay's reader of nng's pair1-over-ipc wire
 * (relay/spwire.c), on arbitrary bytes from a worker: never a crash, a leak
 * or a read outside the input; and the bytes cut into pieces (sizes taken
 * from the input's first byte) give the same messages and the same verdict
 * as the bytes in one piece.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "spwire.h"

#define MAX_BODY 4096

struct seen {
    uint64_t hash; /* of every body, in order */
    size_t count;
};

static int on_msg(void *ud, const uint8_t *body, size_t len)
{
    struct seen *s = ud;
    if (len > MAX_BODY)
        abort();
    uint64_t h = s->hash ^ (len + 0x9e3779b97f4a7c15ull);
    for (size_t i = 0; i < len; i++)
        h = (h ^ body[i]) * 0x100000001b3ull;
    s->hash = h;
    s->count++;
    return 0;
}

static int feed(const uint8_t *data, size_t size, size_t piece, struct seen *s)
{
    struct spwire_reader rd;
    spwire_reader_init(&rd, MAX_BODY);
    char err[200];
    int rc = 0;
    for (size_t at = 0; at < size && rc == 0; at += piece) {
        size_t n = size - at < piece ? size - at : piece;
        rc = spwire_read(&rd, data + at, n, on_msg, s, err, sizeof err);
        if (rc < 0 && !err[0])
            abort(); /* a refusal gives its reason */
    }
    spwire_reader_free(&rd);
    return rc;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    size_t piece = (size_t)data[0] % 17 + 1;
    struct seen whole = {0}, cut = {0};
    int a = feed(data + 1, size - 1, size, &whole);
    int b = feed(data + 1, size - 1, piece, &cut);
    if (a != b || whole.count != cut.count || whole.hash != cut.hash)
        abort();
    return 0;
}
