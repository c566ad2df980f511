/*
 * pairing.h - how the extension gets the pairing secret without it ever
 * being in a URL (docs/relay.md, "Pairing").
 *
 * The secret used to travel in the pairing page's URL fragment, and
 * Chromium kept that URL in the profile's History and session files, where
 * any reader of the profile found it. Now `tabvisor-relay pair` makes a
 * one-time code, shows it to the user, and keeps it (0600, with its expiry)
 * beside the secret file. The user types it into the extension's pairing
 * page; the extension proves it knows the code over the socket, the relay
 * proves it back and sends the secret wrapped with a key derived from the
 * code and both sides' nonces. The code is used once, lasts PAIR_CODE_TTL_S,
 * and is void after PAIR_MAX_TRIES wrong answers. It has 60 bits, so an
 * impostor relay (bound to the port while none runs) that records one
 * answer cannot search for the code offline either.
 *
 *   extension: mac   = HMAC(code, "tabvisor-relay-v1 pair extension" rn en)
 *   relay:     mac   = HMAC(code, "tabvisor-relay-v1 pair relay" rn en)
 *              key   = secret XOR HMAC(code, "tabvisor-relay-v1 pair key" rn en)
 * with the code as its 12 characters, no dashes (the key of the HMAC).
 */
#ifndef TABVISOR_RELAY_PAIRING_H
#define TABVISOR_RELAY_PAIRING_H

#include <stdbool.h>
#include <stddef.h>

#include "auth.h"

#define PAIR_CODE_LEN 12    /* characters of the code, shown as XXXX-XXXX-XXXX */
#define PAIR_CODE_TTL_S 600 /* how long a code lasts */
#define PAIR_MAX_TRIES 3    /* wrong answers before the code is void */

/* A fresh code for the secret at secret_path, kept (0600) in
 * secret_path + ".code" with its expiry; shown (with dashes) in out. */
int pair_code_make(const char *secret_path, char out[PAIR_CODE_LEN + 3], char *err, size_t errlen);
/* The live code (12 characters) into code, or -1 with why: none, expired,
 * or a file that is not ours and private. */
int pair_code_load(const char *secret_path, char code[PAIR_CODE_LEN + 1], char *err, size_t errlen);
/* The code is used, or void. */
void pair_code_remove(const char *secret_path);

/* The MAC a side of role sends, keyed by code (hex nonces of full length). */
int pair_mac(enum auth_role role, const char *code, const char *relay_nonce, const char *ext_nonce,
             char out[AUTH_MAC_HEX + 1]);
bool pair_verify(enum auth_role role, const char *code, const char *relay_nonce,
                 const char *ext_nonce, const char *mac);
/* The secret (64 hex) wrapped for the extension, as 64 hex. */
int pair_wrap(const char *code, const char *relay_nonce, const char *ext_nonce, const char *secret,
              char out[AUTH_SECRET_HEX + 1]);

#endif
