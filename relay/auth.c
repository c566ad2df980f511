/* auth.c - see auth.h. */
#include "auth.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>

#include "errbuf.h"

static const char hexdig[] = "0123456789abcdef";

void auth_to_hex(const unsigned char *in, size_t n, char *out)
{
    for (size_t i = 0; i < n; i++) {
        out[2 * i] = hexdig[in[i] >> 4];
        out[2 * i + 1] = hexdig[in[i] & 15];
    }
    out[2 * n] = '\0';
}

bool auth_is_hex(const char *s, size_t n)
{
    if (!s)
        return false;
    for (size_t i = 0; i < n; i++)
        if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
            return false;
    return s[n] == '\0';
}

/* 32 random bytes as hex into out (65 bytes). */
static int random_hex32(char *out)
{
    unsigned char raw[32];
    size_t got = 0;
    while (got < sizeof(raw)) {
        ssize_t n = getrandom(raw + got, sizeof(raw) - got, 0);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            return -1;
        }
        got += (size_t)n;
    }
    auth_to_hex(raw, sizeof(raw), out);
    OPENSSL_cleanse(raw, sizeof(raw));
    return 0;
}

int auth_nonce(char out[AUTH_NONCE_HEX + 1])
{
    return random_hex32(out);
}

int auth_mac(enum auth_role role, const char *secret, const char *relay_nonce,
             const char *ext_nonce, char out[AUTH_MAC_HEX + 1])
{
    if (!auth_is_hex(secret, AUTH_SECRET_HEX) || !auth_is_hex(relay_nonce, AUTH_NONCE_HEX) ||
        !auth_is_hex(ext_nonce, AUTH_NONCE_HEX))
        return -1;
    const char *label =
        role == AUTH_EXTENSION ? "tabvisor-relay-v1 extension" : "tabvisor-relay-v1 relay";
    char msg[64 + AUTH_NONCE_HEX * 2];
    size_t ll = strlen(label);
    memcpy(msg, label, ll);
    memcpy(msg + ll, relay_nonce, AUTH_NONCE_HEX);
    memcpy(msg + ll + AUTH_NONCE_HEX, ext_nonce, AUTH_NONCE_HEX);
    unsigned char md[EVP_MAX_MD_SIZE];
    unsigned int mdlen = 0;
    if (!HMAC(EVP_sha256(), secret, AUTH_SECRET_HEX, (const unsigned char *)msg,
              ll + 2 * AUTH_NONCE_HEX, md, &mdlen) ||
        mdlen != 32)
        return -1;
    auth_to_hex(md, mdlen, out);
    return 0;
}

bool auth_verify(enum auth_role role, const char *secret, const char *relay_nonce,
                 const char *ext_nonce, const char *mac)
{
    char want[AUTH_MAC_HEX + 1];
    if (!mac || strnlen(mac, AUTH_MAC_HEX + 1) != AUTH_MAC_HEX)
        return false;
    if (auth_mac(role, secret, relay_nonce, ext_nonce, want) != 0)
        return false;
    return CRYPTO_memcmp(want, mac, AUTH_MAC_HEX) == 0;
}

int auth_load_secret(const char *path, char out[AUTH_SECRET_HEX + 1], char *err, size_t errlen)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
    if (fd < 0) {
        errbuf_set(err, errlen, "%s: %s (run `tabvisor-relay pair` first)", path, strerror(errno));
        return -1;
    }
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_uid != geteuid() ||
        (st.st_mode & 077)) {
        close(fd);
        errbuf_set(err, errlen, "%s: not a private (0600) file of ours", path);
        return -1;
    }
    char buf[AUTH_SECRET_HEX + 2];
    ssize_t n = read(fd, buf, sizeof(buf));
    close(fd);
    if (n == AUTH_SECRET_HEX + 1 && buf[AUTH_SECRET_HEX] == '\n')
        n--;
    if (n != AUTH_SECRET_HEX) {
        errbuf_set(err, errlen, "%s: not a pairing secret", path);
        return -1;
    }
    buf[AUTH_SECRET_HEX] = '\0';
    if (!auth_is_hex(buf, AUTH_SECRET_HEX)) {
        errbuf_set(err, errlen, "%s: not a pairing secret", path);
        return -1;
    }
    memcpy(out, buf, AUTH_SECRET_HEX + 1);
    OPENSSL_cleanse(buf, sizeof(buf));
    return 0;
}

/* mkdir -p of path's parent directories, each new one 0700. */
static int make_parents(const char *path)
{
    char dir[PATH_MAX];
    if (strlen(path) >= sizeof(dir))
        return -1;
    strcpy(dir, path);
    for (char *p = dir + 1; *p; p++) {
        if (*p != '/')
            continue;
        *p = '\0';
        if (mkdir(dir, 0700) != 0 && errno != EEXIST)
            return -1;
        *p = '/';
    }
    return 0;
}

int auth_make_secret(const char *path, bool rotate, char out[AUTH_SECRET_HEX + 1], char *err,
                     size_t errlen)
{
    if (make_parents(path) != 0) {
        errbuf_set(err, errlen, "%s: cannot make its directory: %s", path, strerror(errno));
        return -1;
    }
    if (!rotate && access(path, F_OK) == 0)
        return auth_load_secret(path, out, err, errlen);
    char tmp[PATH_MAX];
    if (snprintf(tmp, sizeof(tmp), "%s.%d.tmp", path, (int)getpid()) >= (int)sizeof(tmp)) {
        errbuf_set(err, errlen, "%s: path too long", path);
        return -1;
    }
    char secret[AUTH_SECRET_HEX + 2];
    if (random_hex32(secret) != 0) {
        errbuf_set(err, errlen, "no randomness: %s", strerror(errno));
        return -1;
    }
    secret[AUTH_SECRET_HEX] = '\n';
    int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
    if (fd < 0) {
        errbuf_set(err, errlen, "%s: %s", tmp, strerror(errno));
        return -1;
    }
    ssize_t n = write(fd, secret, AUTH_SECRET_HEX + 1);
    OPENSSL_cleanse(secret, sizeof(secret));
    if (n != AUTH_SECRET_HEX + 1 || fsync(fd) != 0 || close(fd) != 0) {
        unlink(tmp);
        errbuf_set(err, errlen, "%s: write failed", tmp);
        return -1;
    }
    /* rename: an existing secret is replaced atomically; without rotate a
     * concurrent `pair` may have won the race, and link() keeps its secret. */
    int rc = rotate ? rename(tmp, path) : link(tmp, path);
    int saved = errno;
    if (!rotate)
        unlink(tmp);
    if (rc != 0 && !(saved == EEXIST && !rotate)) {
        unlink(tmp);
        errbuf_set(err, errlen, "%s: %s", path, strerror(saved));
        return -1;
    }
    return auth_load_secret(path, out, err, errlen);
}
