/* test_relay_auth.c - the pairing secret, the HMAC challenge-response, and the
 * extension id pinned by extension/manifest.json's key. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <jansson.h>
#include <openssl/evp.h>
#include <openssl/sha.h>

#include "auth.h"
#include "relay.h"

#define SECRET "00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff"
#define RN "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
#define EN "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"

/* Known answers computed independently (node's crypto.createHmac). */
static void test_mac_vectors(void **state)
{
    (void)state;
    char mac[AUTH_MAC_HEX + 1];
    assert_int_equal(auth_mac(AUTH_EXTENSION, SECRET, RN, EN, mac), 0);
    assert_string_equal(mac, "3ca665cad89ac1ef17f52ac588c7a458d61ae1f2dc88e198302adb748330e9ac");
    assert_int_equal(auth_mac(AUTH_RELAY, SECRET, RN, EN, mac), 0);
    assert_string_equal(mac, "c17571f167201afe43c504fa6d6608ad4fbacc084e1bc7459438b0be51da6f5f");
}

static void test_verify(void **state)
{
    (void)state;
    char mac[AUTH_MAC_HEX + 1];
    assert_int_equal(auth_mac(AUTH_EXTENSION, SECRET, RN, EN, mac), 0);
    assert_true(auth_verify(AUTH_EXTENSION, SECRET, RN, EN, mac));
    /* The relay's proof is not the extension's: a reflected MAC fails. */
    assert_false(auth_verify(AUTH_RELAY, SECRET, RN, EN, mac));
    /* Swapped nonces, another secret, one digit changed, truncated, longer. */
    assert_false(auth_verify(AUTH_EXTENSION, SECRET, EN, RN, mac));
    char other[] = SECRET;
    other[0] = '1';
    assert_false(auth_verify(AUTH_EXTENSION, other, RN, EN, mac));
    char bad[AUTH_MAC_HEX + 2];
    memcpy(bad, mac, sizeof(mac));
    bad[10] = bad[10] == '0' ? '1' : '0';
    assert_false(auth_verify(AUTH_EXTENSION, SECRET, RN, EN, bad));
    memcpy(bad, mac, sizeof(mac));
    bad[63] = '\0';
    assert_false(auth_verify(AUTH_EXTENSION, SECRET, RN, EN, bad));
    memcpy(bad, mac, sizeof(mac));
    bad[64] = 'a';
    bad[65] = '\0';
    assert_false(auth_verify(AUTH_EXTENSION, SECRET, RN, EN, bad));
    assert_false(auth_verify(AUTH_EXTENSION, SECRET, RN, EN, NULL));
    assert_false(auth_verify(AUTH_EXTENSION, SECRET, RN, EN, ""));
    /* Malformed inputs are refused rather than hashed. */
    assert_int_equal(auth_mac(AUTH_EXTENSION, SECRET, "short", EN, mac), -1);
    assert_int_equal(auth_mac(AUTH_EXTENSION, SECRET, RN,
                              "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA",
                              mac),
                     -1);
}

static void test_nonce(void **state)
{
    (void)state;
    char a[AUTH_NONCE_HEX + 1], b[AUTH_NONCE_HEX + 1];
    assert_int_equal(auth_nonce(a), 0);
    assert_int_equal(auth_nonce(b), 0);
    assert_true(auth_is_hex(a, AUTH_NONCE_HEX));
    assert_true(auth_is_hex(b, AUTH_NONCE_HEX));
    assert_string_not_equal(a, b);
}

static void test_secret_file(void **state)
{
    (void)state;
    char dir[] = "/tmp/tv-auth-XXXXXX";
    assert_non_null(mkdtemp(dir));
    char path[256], s1[AUTH_SECRET_HEX + 1], s2[AUTH_SECRET_HEX + 1], err[512];
    snprintf(path, sizeof(path), "%s/cfg/tabvisor/relay.secret", dir);
    assert_int_equal(auth_load_secret(path, s1, err, sizeof(err)), -1);
    assert_non_null(strstr(err, "pair"));
    assert_int_equal(auth_make_secret(path, false, s1, err, sizeof(err)), 0);
    assert_true(auth_is_hex(s1, AUTH_SECRET_HEX));
    struct stat st;
    assert_int_equal(stat(path, &st), 0);
    assert_int_equal(st.st_mode & 0777, 0600);
    char parent[256];
    snprintf(parent, sizeof(parent), "%s/cfg/tabvisor", dir);
    assert_int_equal(stat(parent, &st), 0);
    assert_int_equal(st.st_mode & 0777, 0700);
    /* Made once: `pair` again keeps it; --new replaces it. */
    assert_int_equal(auth_make_secret(path, false, s2, err, sizeof(err)), 0);
    assert_string_equal(s1, s2);
    assert_int_equal(auth_make_secret(path, true, s2, err, sizeof(err)), 0);
    assert_string_not_equal(s1, s2);
    assert_int_equal(auth_load_secret(path, s1, err, sizeof(err)), 0);
    assert_string_equal(s1, s2);
    /* A secret others can read is refused. */
    assert_int_equal(chmod(path, 0644), 0);
    assert_int_equal(auth_load_secret(path, s1, err, sizeof(err)), -1);
    assert_non_null(strstr(err, "0600"));
    /* Garbage is not a secret. */
    assert_int_equal(chmod(path, 0600), 0);
    FILE *f = fopen(path, "w");
    fputs("not hex at all\n", f);
    fclose(f);
    assert_int_equal(auth_load_secret(path, s1, err, sizeof(err)), -1);
    unlink(path);
    rmdir(parent);
    snprintf(parent, sizeof(parent), "%s/cfg", dir);
    rmdir(parent);
    rmdir(dir);
}

/* The id Chrome gives an extension: SHA-256 of its public key (DER), the
 * first 32 hex digits written with the letters a..p. The relay's pinned id
 * must be the one of the key in extension/manifest.json. */
static void test_pinned_extension_id(void **state)
{
    (void)state;
    json_error_t jerr;
    json_t *m = json_load_file(TV_SOURCE_DIR "/extension/manifest.json", 0, &jerr);
    assert_non_null(m);
    const char *key = json_string_value(json_object_get(m, "key"));
    assert_non_null(key);
    size_t klen = strlen(key);
    unsigned char *der = malloc(klen);
    int n = EVP_DecodeBlock(der, (const unsigned char *)key, (int)klen);
    assert_true(n > 200);
    while (klen && key[klen - 1] == '=') { /* DecodeBlock counts padding as zeros */
        n--;
        klen--;
    }
    unsigned char md[SHA256_DIGEST_LENGTH];
    SHA256(der, (size_t)n, md);
    char id[33];
    for (int i = 0; i < 16; i++) {
        id[2 * i] = (char)('a' + (md[i] >> 4));
        id[2 * i + 1] = (char)('a' + (md[i] & 15));
    }
    id[32] = '\0';
    assert_string_equal(id, RELAY_EXTENSION_ID);
    free(der);
    json_decref(m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_mac_vectors),
        cmocka_unit_test(test_verify),
        cmocka_unit_test(test_nonce),
        cmocka_unit_test(test_secret_file),
        cmocka_unit_test(test_pinned_extension_id),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
