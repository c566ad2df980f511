/* peer_uid.c - see peer_uid.h. */
#include "peer_uid.h"

#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdint.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <linux/inet_diag.h>
#include <linux/netlink.h>
#include <linux/sock_diag.h>

#include "errbuf.h"

#define DIAG_TIMEOUT_MS 1000

/* Fill the socket id of the peer's end: its address and port as source, ours
 * as destination. */
static int fill_id(int fd, struct inet_diag_req_v2 *req, char *err, size_t errlen)
{
    struct sockaddr_storage me, peer;
    socklen_t ml = sizeof me, pl = sizeof peer;
    if (getsockname(fd, (struct sockaddr *)&me, &ml) < 0 ||
        getpeername(fd, (struct sockaddr *)&peer, &pl) < 0) {
        errbuf_set(err, errlen, "getpeername: %s", strerror(errno));
        return -1;
    }
    if (me.ss_family != peer.ss_family || (me.ss_family != AF_INET && me.ss_family != AF_INET6)) {
        errbuf_set(err, errlen, "not a TCP/IP connection");
        return -1;
    }
    req->sdiag_family = (uint8_t)me.ss_family;
    req->sdiag_protocol = IPPROTO_TCP;
    req->idiag_states = ~0u;
    req->id.idiag_cookie[0] = req->id.idiag_cookie[1] = INET_DIAG_NOCOOKIE;
    if (me.ss_family == AF_INET) {
        const struct sockaddr_in *m = (const void *)&me, *p = (const void *)&peer;
        req->id.idiag_sport = p->sin_port;
        req->id.idiag_dport = m->sin_port;
        memcpy(req->id.idiag_src, &p->sin_addr, 4);
        memcpy(req->id.idiag_dst, &m->sin_addr, 4);
    } else {
        const struct sockaddr_in6 *m = (const void *)&me, *p = (const void *)&peer;
        req->id.idiag_sport = p->sin6_port;
        req->id.idiag_dport = m->sin6_port;
        memcpy(req->id.idiag_src, &p->sin6_addr, 16);
        memcpy(req->id.idiag_dst, &m->sin6_addr, 16);
    }
    return 0;
}

/* One netlink socket for the server's life, opened at the first check: a
 * socket per connection would fail exactly when descriptors run out, and
 * costs a system call more. The loop thread only, so no lock. */
static int nl = -1;
static uint32_t seq;

int peer_uid(int fd, uid_t *uid, char *err, size_t errlen)
{
    struct {
        struct nlmsghdr nlh;
        struct inet_diag_req_v2 req;
    } q;
    memset(&q, 0, sizeof q);
    if (fill_id(fd, &q.req, err, errlen) < 0)
        return -1;
    if (nl < 0 && (nl = socket(AF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC, NETLINK_SOCK_DIAG)) < 0) {
        errbuf_set(err, errlen, "netlink: %s", strerror(errno));
        return -1;
    }
    q.nlh.nlmsg_len = sizeof q;
    q.nlh.nlmsg_type = SOCK_DIAG_BY_FAMILY;
    q.nlh.nlmsg_flags = NLM_F_REQUEST;
    q.nlh.nlmsg_seq = ++seq;
    struct sockaddr_nl kernel = {.nl_family = AF_NETLINK};
    if (sendto(nl, &q, sizeof q, 0, (struct sockaddr *)&kernel, sizeof kernel) < 0) {
        errbuf_set(err, errlen, "sock_diag: %s", strerror(errno));
        close(nl);
        nl = -1;
        return -1;
    }
    /* The kernel answers at once; the poll only bounds a broken one. An
     * answer to an earlier query that timed out is skipped by its number. */
    long buf[1024];
    for (;;) {
        struct pollfd pf = {.fd = nl, .events = POLLIN};
        ssize_t n = poll(&pf, 1, DIAG_TIMEOUT_MS) == 1 ? recv(nl, buf, sizeof buf, 0) : -1;
        if (n < 0) {
            errbuf_set(err, errlen, "sock_diag: no answer");
            close(nl);
            nl = -1;
            return -1;
        }
        for (struct nlmsghdr *h = (struct nlmsghdr *)buf; NLMSG_OK(h, (size_t)n);
             h = NLMSG_NEXT(h, n)) {
            if (h->nlmsg_seq != seq)
                break; /* a late answer to an earlier query */
            if (h->nlmsg_type == SOCK_DIAG_BY_FAMILY &&
                h->nlmsg_len >= NLMSG_LENGTH(sizeof(struct inet_diag_msg))) {
                const struct inet_diag_msg *m = NLMSG_DATA(h);
                *uid = m->idiag_uid;
                return 0;
            }
            errbuf_set(err, errlen, "sock_diag: the peer's socket is not known (it closed?)");
            return -1;
        }
    }
}

int peer_is_us(int fd, char *why, size_t whylen)
{
    uid_t uid;
    char err[200];
    if (peer_uid(fd, &uid, err, sizeof err) < 0) {
        errbuf_set(why, whylen,
                   "could not tell which local user connected (%s); this server takes loopback "
                   "connections without a token only from its own user",
                   err);
        return -1;
    }
    if (uid != geteuid()) {
        errbuf_set(why, whylen,
                   "uid %u connected, and without --auth-token this server takes loopback "
                   "connections only from its own user (uid %u)",
                   (unsigned)uid, (unsigned)geteuid());
        return -1;
    }
    return 0;
}
