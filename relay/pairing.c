/* pairing.c - see pairing.h. */
#include "pairing.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>

#include "errbuf.h"

/* 32 symbols, none easily misread (no 0/O, 1/I): 5 bits each. */
static const char ALPHABET[] = "ABCDEFGHJKLMNPQRSTUVWXYZ23456789";

static void code_path(const char *secret_path, char *out, size_t len)
{
    snprintf(out, len, "%s.code", secret_path);
}

int pair_code_make(const char *secret_path, char out[PAIR_CODE_LEN + 3], char *err, size_t errlen)
{
    unsigned char rnd[PAIR_CODE_LEN];
    if (getrandom(rnd, sizeof rnd, 0) != (ssize_t)sizeof rnd) {
        errbuf_set(err, errlen, "getrandom: %s", strerror(errno));
        return -1;
    }
    char code[PAIR_CODE_LEN + 1];
    for (int i = 0; i < PAIR_CODE_LEN; i++)
        code[i] = ALPHABET[rnd[i] & 31];
    code[PAIR_CODE_LEN] = 0;
    char path[PATH_MAX + 8];
    code_path(secret_path, path, sizeof path);
    unlink(path); /* a new code replaces an old one; O_EXCL below then holds */
    int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd < 0) {
        errbuf_set(err, errlen, "%s: %s", path, strerror(errno));
        return -1;
    }
    char line[64];
    int n = snprintf(line, sizeof line, "%s %lld\n", code, (long long)time(NULL) + PAIR_CODE_TTL_S);
    bool ok = write(fd, line, (size_t)n) == n;
    if (close(fd) != 0 || !ok) {
        errbuf_set(err, errlen, "%s: cannot write", path);
        unlink(path);
        return -1;
    }
    snprintf(out, PAIR_CODE_LEN + 3, "%.4s-%.4s-%.4s", code, code + 4, code + 8);
    return 0;
}

int pair_code_load(const char *secret_path, char code[PAIR_CODE_LEN + 1], char *err, size_t errlen)
{
    char path[PATH_MAX + 8];
    code_path(secret_path, path, sizeof path);
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
    if (fd < 0) {
        errbuf_set(err, errlen, "no pairing code (run `tabvisor pair` to make one)");
        return -1;
    }
    struct stat st;
    char buf[64];
    ssize_t n = -1;
    if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_uid == geteuid() && !(st.st_mode & 077))
        n = read(fd, buf, sizeof buf - 1);
    close(fd);
    long long expiry = 0;
    char c[PAIR_CODE_LEN + 2];
    if (n <= 0 || (buf[n] = 0, sscanf(buf, "%13s %lld", c, &expiry) != 2) ||
        strlen(c) != PAIR_CODE_LEN) {
        errbuf_set(err, errlen, "%s: not a private pairing code file of ours", path);
        return -1;
    }
    if (time(NULL) >= expiry) {
        unlink(path);
        errbuf_set(err, errlen, "the pairing code expired (run `tabvisor pair` again)");
        return -1;
    }
    memcpy(code, c, PAIR_CODE_LEN + 1);
    return 0;
}

void pair_code_remove(const char *secret_path)
{
    char path[PATH_MAX + 8];
    code_path(secret_path, path, sizeof path);
    unlink(path);
}

/* HMAC(code, label rn en) into md (32 bytes). */
static int code_hmac(const char *code, const char *label, const char *rn, const char *en,
                     unsigned char md[32])
{
    if (strlen(code) != PAIR_CODE_LEN || !auth_is_hex(rn, AUTH_NONCE_HEX) ||
        !auth_is_hex(en, AUTH_NONCE_HEX))
        return -1;
    char msg[64 + 2 * AUTH_NONCE_HEX];
    size_t ll = strlen(label);
    memcpy(msg, label, ll);
    memcpy(msg + ll, rn, AUTH_NONCE_HEX);
    memcpy(msg + ll + AUTH_NONCE_HEX, en, AUTH_NONCE_HEX);
    unsigned int len = 0;
    if (!HMAC(EVP_sha256(), code, PAIR_CODE_LEN, (const unsigned char *)msg,
              ll + 2 * AUTH_NONCE_HEX, md, &len) ||
        len != 32)
        return -1;
    return 0;
}

int pair_mac(enum auth_role role, const char *code, const char *relay_nonce, const char *ext_nonce,
             char out[AUTH_MAC_HEX + 1])
{
    unsigned char md[32];
    const char *label = role == AUTH_EXTENSION ? "tabvisor-relay-v1 pair extension"
                                               : "tabvisor-relay-v1 pair relay";
    if (code_hmac(code, label, relay_nonce, ext_nonce, md) != 0)
        return -1;
    auth_to_hex(md, sizeof md, out);
    return 0;
}

bool pair_verify(enum auth_role role, const char *code, const char *relay_nonce,
                 const char *ext_nonce, const char *mac)
{
    char want[AUTH_MAC_HEX + 1];
    if (!mac || strnlen(mac, AUTH_MAC_HEX + 1) != AUTH_MAC_HEX ||
        pair_mac(role, code, relay_nonce, ext_nonce, want) != 0)
        return false;
    return CRYPTO_memcmp(want, mac, AUTH_MAC_HEX) == 0;
}

static int hexval(char c)
{
    return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

int pair_wrap(const char *code, const char *relay_nonce, const char *ext_nonce, const char *secret,
              char out[AUTH_SECRET_HEX + 1])
{
    unsigned char pad[32], raw[32];
    if (!auth_is_hex(secret, AUTH_SECRET_HEX) ||
        code_hmac(code, "tabvisor-relay-v1 pair key", relay_nonce, ext_nonce, pad) != 0)
        return -1;
    for (int i = 0; i < 32; i++)
        raw[i] = (unsigned char)((hexval(secret[2 * i]) << 4 | hexval(secret[2 * i + 1])) ^ pad[i]);
    auth_to_hex(raw, sizeof raw, out);
    OPENSSL_cleanse(pad, sizeof pad);
    return 0;
}
