/*
 * auth.h - the pairing secret and the challenge-response of every extension
 * connection (docs/relay.md, "Authentication").
 *
 * The secret is 32 random bytes written once, as 64 lowercase hex digits, to
 * a 0600 file. The extension receives it through the pairing page's URL
 * fragment. On every connection both sides send a fresh 32-byte nonce (hex)
 * and prove knowledge of the secret with HMAC-SHA256, key = the 64 ASCII hex
 * digits of the secret, message = label || relay nonce || extension nonce:
 *   extension: mac_ext   = HMAC(key, "tabvisor-relay-v1 extension" rn en)
 *   relay:     mac_relay = HMAC(key, "tabvisor-relay-v1 relay" rn en)
 * so the secret itself never crosses the socket and a replayed answer is
 * useless against a new relay nonce.
 */
#ifndef TABVISOR_RELAY_AUTH_H
#define TABVISOR_RELAY_AUTH_H

#include <stdbool.h>
#include <stddef.h>

#define AUTH_SECRET_HEX 64 /* hex digits of the secret */
#define AUTH_NONCE_HEX 64  /* hex digits of a nonce */
#define AUTH_MAC_HEX 64    /* hex digits of an HMAC-SHA256 */

enum auth_role { AUTH_EXTENSION, AUTH_RELAY };

/* Fill out (AUTH_NONCE_HEX+1 bytes) with a fresh random nonce from
 * getrandom(2). Returns 0, or -1 when no randomness is available. */
int auth_nonce(char out[AUTH_NONCE_HEX + 1]);

/* n bytes as 2n lowercase hex digits, NUL-terminated, into out. */
void auth_to_hex(const unsigned char *in, size_t n, char *out);

/* Whether s is exactly n lowercase hex digits. */
bool auth_is_hex(const char *s, size_t n);

/* The HMAC a side of role sends, as lowercase hex into out. All inputs must
 * be hex strings of their full length (checked; -1 otherwise). */
int auth_mac(enum auth_role role, const char *secret, const char *relay_nonce,
             const char *ext_nonce, char out[AUTH_MAC_HEX + 1]);

/* Whether mac (any string) is the one role must send; compared in constant
 * time over the full length. */
bool auth_verify(enum auth_role role, const char *secret, const char *relay_nonce,
                 const char *ext_nonce, const char *mac);

/* Read the secret from path into out. The file must be a regular file of
 * ours, mode 0600 (no group/other bits), holding the hex secret and an
 * optional newline. Returns 0, or -1 with a reason in err. */
int auth_load_secret(const char *path, char out[AUTH_SECRET_HEX + 1], char *err, size_t errlen);

/* Create path with a new secret (O_EXCL, 0600) unless it exists; with
 * rotate, replace an existing one. Then load it into out. Returns 0, or -1
 * with a reason in err. Parent directories are made 0700 when missing. */
int auth_make_secret(const char *path, bool rotate, char out[AUTH_SECRET_HEX + 1], char *err,
                     size_t errlen);

#endif
