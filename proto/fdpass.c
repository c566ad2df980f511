/* fdpass.c - see fdpass.h. */
#include "fdpass.h"

#include <errno.h>
#include <string.h>
#include <sys/socket.h>

union fd_control {
    struct cmsghdr h;
    char buf[CMSG_SPACE(sizeof(int))];
};

ssize_t fdpass_send(int sock, const void *data, size_t len, int fd)
{
    struct iovec iov = {.iov_base = (void *)data, .iov_len = len};
    union fd_control u;
    struct msghdr mh = {.msg_iov = &iov, .msg_iovlen = 1};
    if (fd >= 0) {
        memset(&u, 0, sizeof u);
        mh.msg_control = u.buf;
        mh.msg_controllen = sizeof u.buf;
        struct cmsghdr *c = CMSG_FIRSTHDR(&mh);
        c->cmsg_level = SOL_SOCKET;
        c->cmsg_type = SCM_RIGHTS;
        c->cmsg_len = CMSG_LEN(sizeof(int));
        memcpy(CMSG_DATA(c), &fd, sizeof fd);
    }
    ssize_t n;
    while ((n = sendmsg(sock, &mh, MSG_NOSIGNAL)) < 0 && errno == EINTR)
        ;
    return n;
}

ssize_t fdpass_recv(int sock, void *buf, size_t cap, int *fd, int flags)
{
    *fd = -1;
    struct iovec iov = {.iov_base = buf, .iov_len = cap};
    union fd_control u;
    struct msghdr mh = {
        .msg_iov = &iov, .msg_iovlen = 1, .msg_control = u.buf, .msg_controllen = sizeof u.buf};
    ssize_t n;
    while ((n = recvmsg(sock, &mh, MSG_CMSG_CLOEXEC | flags)) < 0 && errno == EINTR)
        ;
    if (n < 0)
        return -1;
    for (struct cmsghdr *c = CMSG_FIRSTHDR(&mh); c; c = CMSG_NXTHDR(&mh, c))
        if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS &&
            c->cmsg_len == CMSG_LEN(sizeof(int)))
            memcpy(fd, CMSG_DATA(c), sizeof *fd);
    return n;
}
