/*
 * peer_uid.h - which local user holds the other end of a loopback TCP
 * connection.
 *
 * On loopback without a bearer token, tabvisor's HTTP transport serves only
 * its own user: every local uid can connect to 127.0.0.1, and a session
 * drives a browser and reads files as the server's user (the audit's uid
 * 65534 drove a root-run server). Linux tells who owns a local socket
 * through NETLINK_SOCK_DIAG: the inet_diag answer for the client's end of
 * the connection (local = the peer's address, remote = ours) carries its
 * owner's uid.
 */
#ifndef TABVISOR_PEER_UID_H
#define TABVISOR_PEER_UID_H

#include <stddef.h>
#include <sys/types.h>

/* The uid owning the peer end of the accepted TCP connection fd. 0 with
 * *uid, or -1 with why in err (not loopback TCP, no answer, no such socket:
 * the peer may already have closed). */
int peer_uid(int fd, uid_t *uid, char *err, size_t errlen);

/* 0 when the peer of fd is our own user (euid); else -1 with a sentence for
 * the client and the log in why (another uid, or none could be found: the
 * check fails closed). */
int peer_is_us(int fd, char *why, size_t whylen);

#endif
