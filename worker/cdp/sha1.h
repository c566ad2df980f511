/*
 * sha1.h - SHA-1 (FIPS 180-4), only for the WebSocket handshake.
 *
 * RFC 6455 fixes Sec-WebSocket-Accept = base64(SHA-1(key + GUID)); SHA-1 is
 * not used here for anything that needs collision resistance. A 100-line
 * implementation saves a dependency on OpenSSL for one hash per connection.
 */
#ifndef TABVISOR_SHA1_H
#define TABVISOR_SHA1_H

#include <stddef.h>
#include <stdint.h>

#define SHA1_DIGEST_LEN 20

struct sha1_ctx {
    uint32_t h[5];
    uint64_t total; /* bytes hashed so far */
    uint8_t block[64];
    size_t used; /* bytes waiting in block */
};

void sha1_init(struct sha1_ctx *ctx);
void sha1_update(struct sha1_ctx *ctx, const void *data, size_t len);
void sha1_final(struct sha1_ctx *ctx, uint8_t out[SHA1_DIGEST_LEN]);
/* One-shot convenience. */
void sha1(const void *data, size_t len, uint8_t out[SHA1_DIGEST_LEN]);

#endif
