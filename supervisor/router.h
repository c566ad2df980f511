/*
 * router.h - tool calls -> sessions -> workers.
 *
 * Calls to one session run one at a time in arrival order (a FIFO per
 * session); calls to different sessions run in parallel in their own
 * workers. Every call has a deadline; notifications/cancelled stops it; a
 * worker that dies fails its in-flight call with SESSION_CRASHED at once and
 * the session's next call gets a fresh worker.
 */
#ifndef TABVISOR_ROUTER_H
#define TABVISOR_ROUTER_H

#include <jansson.h>
#include <sys/types.h>

#include "browser.h"
#include "catalog.h"
#include "metrics.h"
#include "workers.h"

struct server;
struct mcp_conn;
struct worker;
struct proto_msg;
struct session;

/* How the router answers the client: the MCP front's functions (mcp.c's
 * mcp_front, given to the server by main.c). The router and the session
 * tools never send: a call answered at once returns its result to the
 * front; a call answered later (by its worker, a timeout, a cancel) is
 * answered through reply, from one place (call_reply in router.c). */
struct router_front {
    /* The result of request rpc_id (borrowed) of c; result stolen. */
    void (*reply)(struct mcp_conn *c, json_t *rpc_id, json_t *result);
    /* A notification (notifications/progress) to c; msg borrowed. */
    void (*notify)(struct mcp_conn *c, json_t *msg);
};

/* tools/call after catalog validation. rpc_id, args and progress_token are
 * borrowed (the router takes its own references). Returns the result
 * (the caller's) when the call is answered at once (a session tool, an
 * error before any worker), or NULL when it runs: its result then comes
 * through the front's reply. */
json_t *router_tool_call(struct server *srv, struct mcp_conn *conn, json_t *rpc_id,
                         const struct tool_def *tool, json_t *args, json_t *progress_token);
/* notifications/cancelled for conn's request rpc_id. */
void router_cancel(struct server *srv, struct mcp_conn *conn, json_t *rpc_id);
/* The connection is gone: its calls lose their reply path. */
void router_conn_closed(struct server *srv, struct mcp_conn *conn);
/* Close the browser session sid if it is open (the HTTP transport ending
 * an MCP session closes its default session); queued calls get CANCELLED. */
void router_close_session(struct server *srv, const char *sid, const char *why);
/* Closes every session (shutdown). */
void router_close_all(struct server *srv);
/* Start the periodic housekeeping (idle expiry). */
void router_start_housekeeping(struct server *srv);

/* The open browser sessions by state, for /metrics (metrics.h): starting
 * (no ready worker yet, or one restarting), idle, busy (a call running),
 * stopping. */
void router_session_gauges(struct server *srv, size_t by_state[SESSION_STATES]);

/* Callbacks from workers.c and browser.c. */
void router_worker_ready(struct server *srv, struct worker *w, const char *error);
void router_worker_message(struct server *srv, struct worker *w, struct proto_msg *msg);
void router_worker_exited(struct server *srv, struct worker *w, int status);
/* Browser b died: the sessions whose worker drove it (all, in shared mode)
 * fail their call in flight with BROWSER_CRASHED and restart on the next. */
void router_browser_died(struct server *srv, struct browser *b);

/* The tables above, given to worker_start() and browser_new(). */
extern const struct worker_events router_worker_events;
extern const struct browser_events router_browser_events;

#endif
