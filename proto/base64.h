/*
 * base64.h - standard base64 (RFC 4648, with padding), one implementation for
 * every process, on OpenSSL's EVP_EncodeBlock/EVP_DecodeBlock.
 *
 * Buffers are the caller's: nothing here keeps a pointer past the call.
 */
#ifndef TABVISOR_BASE64_H
#define TABVISOR_BASE64_H

#include <stddef.h>

/* Room base64_encode_to needs for len bytes, the NUL included. */
#define BASE64_ENCODED_SIZE(len) (4 * (((size_t)(len) + 2) / 3) + 1)

/* Encode len bytes into out (NUL-terminated). Returns the length written
 * (without the NUL), or 0 if outlen is below BASE64_ENCODED_SIZE(len) or
 * len is too large to encode in one piece (over INT_MAX / 2). */
size_t base64_encode_to(const void *in, size_t len, char *out, size_t outlen);

/* The same into a new buffer the caller frees; NULL when out of memory or
 * too large. */
char *base64_encode(const void *in, size_t len);

/* Decode len characters (padding optional, no whitespace) into out, which
 * needs len / 4 * 3 + 3 bytes. Returns the bytes written, or -1 on a
 * character outside the alphabet, a '=' inside, or an impossible length. */
long base64_decode(const char *in, size_t len, unsigned char *out);

#endif
