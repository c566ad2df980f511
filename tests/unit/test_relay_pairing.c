/*
 * test_relay_pairing.c - the one-time pairing code (relay/pairing.c): its
 * file (0600, expiry, used once), the MACs both sides send (against HMACs
 * computed here with OpenSSL directly) and the secret's wrap.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

#include <openssl/evp.h>
#include <openssl/hmac.h>

#include "pairing.h"

static char dir[64], secret_path[128], code_path[160];

static int setup(void **state)
{
    snprintf(dir, sizeof dir, "/tmp/tv-pair-XXXXXX");
    assert_non_null(mkdtemp(dir));
    snprintf(secret_path, sizeof secret_path, "%s/relay.secret", dir);
    snprintf(code_path, sizeof code_path, "%s.code", secret_path);
    return 0;
}

static int teardown(void **state)
{
    unlink(code_path);
    rmdir(dir);
    return 0;
}

static void test_code_file(void **state)
{
    char shown[PAIR_CODE_LEN + 3], code[PAIR_CODE_LEN + 1], err[300];
    assert_int_equal(pair_code_make(secret_path, shown, err, sizeof err), 0);
    assert_int_equal(strlen(shown), 14);
    assert_true(shown[4] == '-' && shown[9] == '-');
    for (int i = 0; i < 14; i++)
        if (i != 4 && i != 9)
            assert_non_null(strchr("ABCDEFGHJKLMNPQRSTUVWXYZ23456789", shown[i]));
    struct stat st;
    assert_int_equal(stat(code_path, &st), 0);
    assert_int_equal(st.st_mode & 0777, 0600);
    assert_int_equal(pair_code_load(secret_path, code, err, sizeof err), 0);
    char undashed[PAIR_CODE_LEN + 1];
    snprintf(undashed, sizeof undashed, "%.4s%.4s%.4s", shown, shown + 5, shown + 10);
    assert_string_equal(code, undashed);
    /* A new code replaces the old one. */
    char again[PAIR_CODE_LEN + 3];
    assert_int_equal(pair_code_make(secret_path, again, err, sizeof err), 0);
    assert_int_equal(pair_code_load(secret_path, code, err, sizeof err), 0);
    assert_string_not_equal(code, undashed);
    /* Used (or void): gone. */
    pair_code_remove(secret_path);
    assert_int_equal(pair_code_load(secret_path, code, err, sizeof err), -1);
    assert_non_null(strstr(err, "no pairing code"));
    /* Expired: refused and removed. */
    FILE *f = fopen(code_path, "w");
    fprintf(f, "ABCDEFGHJKLM %lld\n", (long long)time(NULL) - 1);
    fclose(f);
    chmod(code_path, 0600);
    assert_int_equal(pair_code_load(secret_path, code, err, sizeof err), -1);
    assert_non_null(strstr(err, "expired"));
    assert_int_equal(access(code_path, F_OK), -1);
    /* Open to others, or malformed: refused. */
    f = fopen(code_path, "w");
    fprintf(f, "ABCDEFGHJKLM %lld\n", (long long)time(NULL) + 60);
    fclose(f);
    chmod(code_path, 0644);
    assert_int_equal(pair_code_load(secret_path, code, err, sizeof err), -1);
    chmod(code_path, 0600);
    assert_int_equal(pair_code_load(secret_path, code, err, sizeof err), 0);
    f = fopen(code_path, "w");
    fprintf(f, "SHORT 99999999999\n");
    fclose(f);
    assert_int_equal(pair_code_load(secret_path, code, err, sizeof err), -1);
}

static void hmac_hex(const char *key, const char *msg, char out[65])
{
    unsigned char md[32];
    unsigned int len = 0;
    HMAC(EVP_sha256(), key, (int)strlen(key), (const unsigned char *)msg, strlen(msg), md, &len);
    for (int i = 0; i < 32; i++)
        sprintf(out + 2 * i, "%02x", md[i]);
}

static void test_macs_and_wrap(void **state)
{
    const char *code = "K7QXM2ZDH9RA";
    const char *rn = "1111111111111111111111111111111111111111111111111111111111111111";
    const char *en = "2222222222222222222222222222222222222222222222222222222222222222";
    const char *secret = "00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff";
    char mac[65], want[65], msg[300];
    assert_int_equal(pair_mac(AUTH_EXTENSION, code, rn, en, mac), 0);
    snprintf(msg, sizeof msg, "tabvisor-relay-v1 pair extension%s%s", rn, en);
    hmac_hex(code, msg, want);
    assert_string_equal(mac, want);
    assert_true(pair_verify(AUTH_EXTENSION, code, rn, en, mac));
    assert_false(pair_verify(AUTH_RELAY, code, rn, en, mac)); /* not reflected */
    assert_false(pair_verify(AUTH_EXTENSION, "K7QXM2ZDH9RB", rn, en, mac));
    assert_false(pair_verify(AUTH_EXTENSION, code, en, rn, mac)); /* nonces swapped */
    mac[10] ^= 1;
    assert_false(pair_verify(AUTH_EXTENSION, code, rn, en, mac));
    assert_false(pair_verify(AUTH_EXTENSION, code, rn, en, "short"));
    assert_int_equal(pair_mac(AUTH_RELAY, code, rn, en, mac), 0);
    snprintf(msg, sizeof msg, "tabvisor-relay-v1 pair relay%s%s", rn, en);
    hmac_hex(code, msg, want);
    assert_string_equal(mac, want);
    /* The wrap: XOR with HMAC(code, "... pair key" rn en); unwrapping gives the secret. */
    char key[65], pad[65];
    assert_int_equal(pair_wrap(code, rn, en, secret, key), 0);
    assert_string_not_equal(key, secret);
    snprintf(msg, sizeof msg, "tabvisor-relay-v1 pair key%s%s", rn, en);
    hmac_hex(code, msg, pad);
    for (int i = 0; i < 64; i += 2) {
        unsigned a, b, s;
        sscanf(key + i, "%2x", &a);
        sscanf(pad + i, "%2x", &b);
        sscanf(secret + i, "%2x", &s);
        assert_int_equal(a ^ b, s);
    }
    /* Bad inputs. */
    assert_int_equal(pair_mac(AUTH_RELAY, "SHORT", rn, en, mac), -1);
    assert_int_equal(pair_wrap(code, rn, en, "not hex", key), -1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_code_file, setup, teardown),
        cmocka_unit_test(test_macs_and_wrap),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
