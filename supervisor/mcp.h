/*
 * mcp.h - MCP (JSON-RPC 2.0) for one client connection, independent of the
 * transport. A transport (stdio_transport.c, http.c) feeds whole messages in with
 * mcp_conn_handle() and gets replies through its send callback.
 */
#ifndef TABVISOR_MCP_H
#define TABVISOR_MCP_H

#include <stdbool.h>
#include <stddef.h>
#include <jansson.h>

#include "jsonrpc.h"
#include "mcp_conn.h"
#include "router.h"

#define MCP_LATEST_VERSION "2025-11-25"

struct server;
struct mcp_conn;

struct mcp_conn *mcp_conn_new(struct server *srv, const struct mcp_transport_ops *ops,
                              void *transport);
/* The transport can now carry requests of ours to the client (HTTP: its
 * GET stream opened): ask what was asked before and never answered. */
void mcp_conn_stream_opened(struct mcp_conn *c);
/* The transport is gone: cancel what the connection started, then free it. */
void mcp_conn_free(struct mcp_conn *c);
/* Handle one message (the bytes of one JSON value). */
void mcp_conn_handle(struct mcp_conn *c, const char *data, size_t len);
/* Handle one message the transport has parsed already (m stays the
 * caller's). Invalid messages get their error reply here. */
void mcp_conn_dispatch(struct mcp_conn *c, const struct jsonrpc_msg *m);

/* Replies (rpc_id borrowed). */
void mcp_reply_result(struct mcp_conn *c, json_t *rpc_id, json_t *result /* stolen */);
/* The front the router answers calls through (router.h): the replies above
 * and notifications, for main.c to give the server. */
extern const struct router_front mcp_front;
void mcp_reply_error(struct mcp_conn *c, json_t *rpc_id, int code, const char *message);

/* True for the protocol versions we speak. */
int mcp_version_supported(const char *v);

#endif
