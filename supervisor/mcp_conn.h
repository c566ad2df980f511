/*
 * mcp_conn.h - one MCP client connection's state: what the transport gives
 * it, and what the front (mcp.c) and the router (the default session, the
 * client's roots) keep of it. Data only; mcp.c owns and frees it
 * (mcp_conn_new, mcp_conn_free).
 */
#ifndef TABVISOR_MCP_CONN_H
#define TABVISOR_MCP_CONN_H

#include <stdbool.h>
#include <jansson.h>

#include "sessions.h"

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

#endif
