/*
 * page_server.h - a tiny HTTP server on the host's 127.0.0.1 for tests and
 * benchmarks that load pages through Firefox's proxy (supervisor/firefox.h):
 * one fixed page for every request, each connection closed after it, on a
 * thread of its own.
 */
#ifndef TABVISOR_PAGE_SERVER_H
#define TABVISOR_PAGE_SERVER_H

/* Listen on 127.0.0.1, any port; its number into *port. The socket, or -1. */
int page_listen_local(int *port);
/* Serve page (HTML, kept by reference) on a new 127.0.0.1 port (*port) from
 * a detached thread. 0, or -1. */
int page_server_start(const char *page, int *port);
/* Requests answered so far. */
int page_server_hits(void);

#endif
