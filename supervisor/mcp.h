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
#include "sessions.h"

#define MCP_LATEST_VERSION "2025-11-25"

struct server;
struct mcp_conn;

struct mcp_transport_ops {
    /* Deliver one JSON-RPC message to the client; msg is borrowed. */
    void (*send)(struct mcp_conn *c, json_t *msg);
    /* Optional: the client changed its logging/setLevel level. */
    void (*log_level_changed)(struct mcp_conn *c);
    /* The client is on another machine's terms: its roots are paths on
     * this server only if the operator says so (--http-client-roots). */
    bool remote;
};

struct mcp_conn {
    struct server *srv;
    const struct mcp_transport_ops *ops;
    void *transport;
    int initialized;
    char protocol[16];
    char default_session[SESSION_ID_LEN + 1]; /* "" until first used */
    /* Lowest log level (enum log_level) the client wants as
     * notifications/message; -1 until logging/setLevel; LOG_ERROR + 1 for
     * critical and above, which tabvisor never logs. */
    int log_level;
    /* The client's declared roots (MCP roots/list), as absolute paths:
     * files in them may be uploaded by this connection's calls
     * (upload_roots.h). Asked for after initialization and again on
     * notifications/roots/list_changed. */
    bool client_roots;    /* it declared the roots capability */
    json_t *roots;        /* array of path strings (NULL: none known) */
    char roots_asked[40]; /* the id of our roots/list request awaiting its answer */
    unsigned roots_seq;
};

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
void mcp_reply_error(struct mcp_conn *c, json_t *rpc_id, int code, const char *message);

/* True for the protocol versions we speak. */
int mcp_version_supported(const char *v);

#endif
