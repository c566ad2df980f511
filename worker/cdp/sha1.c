/* sha1.c - see sha1.h. Straight from FIPS 180-4 section 6.1. */
#include "sha1.h"

#include <string.h>

static uint32_t rol(uint32_t x, unsigned n)
{
    return (x << n) | (x >> (32 - n));
}

static void sha1_block(uint32_t h[5], const uint8_t *p)
{
    uint32_t w[80];
    for (int i = 0; i < 16; i++)
        w[i] = (uint32_t)p[4 * i] << 24 | (uint32_t)p[4 * i + 1] << 16 |
               (uint32_t)p[4 * i + 2] << 8 | (uint32_t)p[4 * i + 3];
    for (int i = 16; i < 80; i++)
        w[i] = rol(w[i - 3] ^ w[i - 8] ^ w[i - 14] ^ w[i - 16], 1);

    uint32_t a = h[0], b = h[1], c = h[2], d = h[3], e = h[4];
    for (int i = 0; i < 80; i++) {
        uint32_t f, k;
        if (i < 20) {
            f = (b & c) | (~b & d);
            k = 0x5A827999;
        } else if (i < 40) {
            f = b ^ c ^ d;
            k = 0x6ED9EBA1;
        } else if (i < 60) {
            f = (b & c) | (b & d) | (c & d);
            k = 0x8F1BBCDC;
        } else {
            f = b ^ c ^ d;
            k = 0xCA62C1D6;
        }
        uint32_t t = rol(a, 5) + f + e + k + w[i];
        e = d;
        d = c;
        c = rol(b, 30);
        b = a;
        a = t;
    }
    h[0] += a;
    h[1] += b;
    h[2] += c;
    h[3] += d;
    h[4] += e;
}

void sha1_init(struct sha1_ctx *ctx)
{
    static const uint32_t iv[5] = {0x67452301, 0xEFCDAB89, 0x98BADCFE, 0x10325476, 0xC3D2E1F0};
    memcpy(ctx->h, iv, sizeof iv);
    ctx->total = 0;
    ctx->used = 0;
}

void sha1_update(struct sha1_ctx *ctx, const void *data, size_t len)
{
    const uint8_t *p = data;
    ctx->total += len;
    if (ctx->used) {
        size_t n = 64 - ctx->used < len ? 64 - ctx->used : len;
        memcpy(ctx->block + ctx->used, p, n);
        ctx->used += n;
        p += n;
        len -= n;
        if (ctx->used < 64)
            return;
        sha1_block(ctx->h, ctx->block);
        ctx->used = 0;
    }
    for (; len >= 64; p += 64, len -= 64)
        sha1_block(ctx->h, p);
    memcpy(ctx->block, p, len);
    ctx->used = len;
}

void sha1_final(struct sha1_ctx *ctx, uint8_t out[SHA1_DIGEST_LEN])
{
    uint64_t bits = ctx->total * 8;
    uint8_t pad[72] = {0x80};
    /* Pad with 0x80 and zeros so that 8 bytes of length end a block. */
    size_t padlen = (ctx->used < 56 ? 56 : 120) - ctx->used;
    for (int i = 0; i < 8; i++)
        pad[padlen + i] = (uint8_t)(bits >> (56 - 8 * i));
    sha1_update(ctx, pad, padlen + 8);
    for (int i = 0; i < 5; i++) {
        out[4 * i] = (uint8_t)(ctx->h[i] >> 24);
        out[4 * i + 1] = (uint8_t)(ctx->h[i] >> 16);
        out[4 * i + 2] = (uint8_t)(ctx->h[i] >> 8);
        out[4 * i + 3] = (uint8_t)ctx->h[i];
    }
}

void sha1(const void *data, size_t len, uint8_t out[SHA1_DIGEST_LEN])
{
    struct sha1_ctx ctx;
    sha1_init(&ctx);
    sha1_update(&ctx, data, len);
    sha1_final(&ctx, out);
}
