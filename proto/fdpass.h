/*
 * fdpass.h - one message on a Unix socket with a descriptor riding along
 * (SCM_RIGHTS): how Firefox's holder hands its BiDi connection to the
 * supervisor and the proxy's share listeners to the proxy (firefox.c,
 * socks_proxy.c). Ownership: the sender keeps its fd (close it after); a
 * received fd is the receiver's, close-on-exec.
 */
#ifndef TABVISOR_FDPASS_H
#define TABVISOR_FDPASS_H

#include <stddef.h>
#include <sys/types.h>

/* Send data[0..len) (len >= 1) on sock, with fd attached when fd >= 0.
 * Retries EINTR; no SIGPIPE. The bytes sent, or -1 with errno. */
ssize_t fdpass_send(int sock, const void *data, size_t len, int fd);

/* Receive one message of at most cap bytes into buf, and the descriptor it
 * carried into *fd (-1 when none). flags as recvmsg's (MSG_DONTWAIT). The
 * bytes, 0 at end of stream, -1 with errno. */
ssize_t fdpass_recv(int sock, void *buf, size_t cap, int *fd, int flags);

#endif
