/*
 * fdio.c - deadline-bounded waits and writes on non-blocking sockets.
 */
#include "fdio.h"

#include <errno.h>
#include <poll.h>
#include <sys/socket.h>

#include "clock.h"

int fd_wait(int fd, short events, long long deadline_ms)
{
    for (;;) {
        struct pollfd p = {.fd = fd, .events = events};
        int n = poll(&p, 1, poll_timeout_ms(deadline_ms, mono_ms()));
        if (n > 0)
            return 1;
        if (n == 0) {
            /* poll may wake a little before the deadline (rounding). */
            if (deadline_ms && mono_ms() >= deadline_ms)
                return 0;
            continue;
        }
        if (errno != EINTR)
            return -1;
    }
}

int fd_send_all(int fd, const char *buf, size_t len, long long deadline_ms)
{
    while (len) {
        ssize_t n = send(fd, buf, len, MSG_NOSIGNAL | MSG_DONTWAIT);
        if (n > 0) {
            buf += n;
            len -= (size_t)n;
            continue;
        }
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
            int r = fd_wait(fd, POLLOUT, deadline_ms);
            if (r == 0)
                errno = ETIMEDOUT;
            if (r <= 0)
                return -1;
            continue;
        }
        return -1;
    }
    return 0;
}
