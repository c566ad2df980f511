/* stdio.h - MCP over stdin/stdout: one JSON message per line. stdout
 * carries nothing but MCP; it is written through a buffer so a slow client
 * never blocks the event loop. EOF on stdin shuts the server down. */
#ifndef TABVISOR_STDIO_H
#define TABVISOR_STDIO_H

struct server;

#define STDIO_MAX_LINE (64u * 1024 * 1024)

int stdio_transport_start(struct server *srv);
/* Write what is buffered (blocking, bounded by timeout_ms); for shutdown. */
void stdio_transport_flush(long long timeout_ms);
void stdio_transport_stop(void);

#endif
