/*
 * http.h - MCP Streamable HTTP transport (MCP 2025-11-25; 2025-06-18 and
 * 2025-03-26 clients accepted) on the supervisor's poll loop, with our own
 * small HTTP/1.1 server (see docs/http.md for why not libwebsockets).
 *
 * Endpoint /mcp: POST one JSON-RPC message (a request is answered as
 * application/json, or as an SSE stream once a progress or log notification
 * for it has to go out first; notifications and responses get 202), GET
 * opens the session's standalone SSE stream, DELETE ends the MCP session
 * and closes its default browser session. /healthz and /metrics beside it.
 * Security: Host and Origin checked (DNS rebinding), optional bearer token,
 * all on the request head before its body is read; capped heads, bodies,
 * buffered bodies, connections, MCP sessions and SSE streams; slow and idle
 * connections closed; accepting paused when out of descriptors. Log lines
 * reach a client only when they concern its own MCP session.
 */
#ifndef TABVISOR_HTTP_H
#define TABVISOR_HTTP_H

struct server;

/* Listen on srv->cfg.http_host:http_port and print
 * "Listening on http://HOST:PORT/mcp" on stderr. Returns 0 or -1 (logged). */
int http_transport_start(struct server *srv);
/* Write what is buffered (bounded by timeout_ms); for shutdown. */
void http_transport_flush(long long timeout_ms);
/* End every MCP session and connection, close the listener. */
void http_transport_stop(void);

#endif
