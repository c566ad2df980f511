/*
 * fuzz_socks_request.c - the Firefox proxy's parser of SOCKS5 requests
 * (supervisor/socks_proxy.c) on arbitrary bytes: never a crash or a read
 * outside the input; what it accepts has a host (NUL-terminated, within its
 * buffer), a port in 1..65535, and takes no more bytes than it was given;
 * what it refuses names a SOCKS reply code.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "socks_proxy.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > 4096)
        return 0;
    char host[256];
    memset(host, 'x', sizeof host);
    int port = -1, code = -1;
    int n = socks_parse_request(data, (int)size, host, sizeof host, &port, &code);
    if (n > 0) {
        if ((size_t)n > size || !memchr(host, '\0', sizeof host) || port < 1 || port > 65535)
            abort();
    } else if (n < 0) {
        if (code != 1 && code != 7 && code != 8)
            abort();
    }
    return 0;
}
