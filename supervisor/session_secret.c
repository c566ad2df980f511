/* session_secret.c - see session_secret.h. */
#include "session_secret.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>

#include <openssl/evp.h>
#include <openssl/hmac.h>

static unsigned char run_key[32];
static bool have_key;

static void draw_key(void)
{
    size_t got = 0;
    while (got < sizeof run_key) {
        ssize_t r = getrandom(run_key + got, sizeof run_key - got, 0);
        if (r > 0)
            got += (size_t)r;
        else if (errno != EINTR)
            break; /* cannot happen on Linux >= 3.17 */
    }
    have_key = true;
}

void session_secret(const char *purpose, const char *session_id, char *out, size_t nhex)
{
    if (!have_key)
        draw_key();
    char msg[256];
    int n = snprintf(msg, sizeof msg, "%s:%s", purpose, session_id);
    if (n < 0 || (size_t)n >= sizeof msg)
        n = (int)sizeof msg - 1;
    unsigned char mac[32];
    unsigned int len = sizeof mac;
    HMAC(EVP_sha256(), run_key, sizeof run_key, (const unsigned char *)msg, (size_t)n, mac, &len);
    static const char hex[] = "0123456789abcdef";
    if (nhex > 64)
        nhex = 64;
    for (size_t i = 0; i < nhex; i++)
        out[i] = hex[(mac[i / 2] >> (i % 2 ? 0 : 4)) & 15];
    out[nhex] = 0;
}
