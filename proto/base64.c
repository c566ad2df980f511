/*
 * base64.c - see base64.h.
 */
#include "base64.h"

#include <limits.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/evp.h>

static bool is_base64_char(unsigned char c)
{
    return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '+' ||
           c == '/';
}

size_t base64_encode_to(const void *in, size_t len, char *out, size_t outlen)
{
    if (len > INT_MAX / 2 || outlen < BASE64_ENCODED_SIZE(len))
        return 0;
    /* OpenSSL writes the encoding and a NUL, and returns the length. */
    return (size_t)EVP_EncodeBlock((unsigned char *)out, in, (int)len);
}

char *base64_encode(const void *in, size_t len)
{
    if (len > INT_MAX / 2)
        return NULL;
    char *out = malloc(BASE64_ENCODED_SIZE(len));
    if (out)
        base64_encode_to(in, len, out, BASE64_ENCODED_SIZE(len));
    return out;
}

long base64_decode(const char *in, size_t len, unsigned char *out)
{
    while (len && in[len - 1] == '=')
        len--;
    if (len % 4 == 1 || len > (size_t)INT_MAX / 2)
        return -1;
    /* EVP_DecodeBlock trims whitespace at both ends; here none is allowed
     * (in need not end in a NUL, so no strspn). */
    for (size_t k = 0; k < len; k++)
        if (!is_base64_char((unsigned char)in[k]))
            return -1;
    size_t whole = len - len % 4;
    long n = 0;
    if (whole) {
        int got = EVP_DecodeBlock(out, (const unsigned char *)in, (int)whole);
        if (got < 0)
            return -1;
        n = got;
    }
    if (len % 4) {
        /* The last 2 or 3 characters, padded for OpenSSL: 1 or 2 bytes. */
        unsigned char block[4] = {'=', '=', '=', '='}, bytes[3];
        memcpy(block, in + whole, len % 4);
        if (EVP_DecodeBlock(bytes, block, 4) < 0)
            return -1;
        size_t tail = len % 4 - 1;
        memcpy(out + n, bytes, tail);
        n += (long)tail;
    }
    return n;
}
