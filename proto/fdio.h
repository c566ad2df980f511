/*
 * fdio.h - deadline-bounded waits and writes on non-blocking sockets.
 *
 * Shared by the two places that speak HTTP/WebSocket to a browser on their
 * own socket: the supervisor's endpoint discovery (supervisor/cdp_connect.c)
 * and the worker's WebSocket CDP transport (worker/cdp/ws.c). Deadlines are
 * mono_ms() values (proto/clock.h); 0 means no deadline.
 */
#ifndef TABVISOR_FDIO_H
#define TABVISOR_FDIO_H

#include <stddef.h>

/* Wait until fd is ready for events (POLLIN, POLLOUT) or the deadline passes.
 * Returns 1 ready, 0 at the deadline, -1 on a poll error (errno set).
 * EINTR and early wake-ups are retried. */
int fd_wait(int fd, short events, long long deadline_ms);

/* Send all len bytes of buf on a non-blocking socket, waiting for room until
 * the deadline. No SIGPIPE. Returns 0, or -1 with errno set (ETIMEDOUT at
 * the deadline). The caller keeps buf. */
int fd_send_all(int fd, const char *buf, size_t len, long long deadline_ms);

#endif
