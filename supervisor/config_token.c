/* config_token.c - the bearer token's buffer and its sources (config_token.h). */
#include "config_token.h"
#include "log.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char token_buf[4096];

void token_reset(void)
{
    memset(token_buf, 0, sizeof token_buf);
}

int token_set(struct config *c, const char *t, size_t n, const char *from)
{
    if (n == 0 || n >= sizeof token_buf) {
        fprintf(stderr, "tabvisor: the token from %s must be 1 to %zu bytes\n", from,
                sizeof token_buf - 1);
        return -1;
    }
    for (size_t k = 0; k < n; k++) {
        if ((unsigned char)t[k] <= ' ' || t[k] == 0x7f) {
            fprintf(stderr, "tabvisor: the token from %s has a space or control character\n", from);
            return -1;
        }
    }
    memcpy(token_buf, t, n);
    token_buf[n] = 0;
    c->auth_token = token_buf;
    return 0;
}

int token_read_file(struct config *c, const char *path, const char *from)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) < 0) {
        fprintf(stderr, "tabvisor: %s %s: %s\n", from, path, strerror(errno));
        if (fd >= 0)
            close(fd);
        return -1;
    }
    if (st.st_mode & 077)
        log_warn("%s %s can be read by other users (mode %03o); chmod 600 it", from, path,
                 (unsigned)(st.st_mode & 0777));
    char buf[sizeof token_buf + 2];
    size_t n = 0;
    ssize_t r;
    while (n < sizeof buf && (r = read(fd, buf + n, sizeof buf - n)) != 0) {
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0) {
            fprintf(stderr, "tabvisor: %s %s: %s\n", from, path, strerror(errno));
            close(fd);
            return -1;
        }
        n += (size_t)r;
    }
    close(fd);
    while (n && (buf[n - 1] == '\n' || buf[n - 1] == '\r'))
        n--;
    int rc = token_set(c, buf, n, from);
    memset(buf, 0, sizeof buf);
    return rc;
}

void token_wipe_env(void)
{
    static const char name[] = "TABVISOR_AUTH_TOKEN";
    char *value = getenv(name);
    if (!value)
        return;
    char *entry = value - sizeof name; /* "NAME=value" */
    unsetenv(name);                    /* finds it by name: before the wipe */
    memset(entry, 0, strlen(entry));
}
