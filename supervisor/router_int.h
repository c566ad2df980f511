/*
 * router_int.h - the router's own state, shared by router.c (calls, queues,
 * workers) and session_tools.c (browser_session_create/close/list and
 * files handed between sessions). Not for other files.
 */
#ifndef TABVISOR_ROUTER_INT_H
#define TABVISOR_ROUTER_INT_H

#include <stdbool.h>
#include <stdint.h>

#include <jansson.h>

#include "catalog.h"
#include "errors.h"
#include "mcp_conn.h"
#include "router.h"
#include "server.h"
#include "sessions.h"
#include "workers.h"

#define STOP_GRACE_MS 2000

struct sess;

struct call {
    uint64_t id;
    struct mcp_conn *conn; /* NULL once the client is gone */
    json_t *rpc_id;
    const struct tool_def *tool;
    json_t *args;
    json_t *progress_token;
    long long deadline; /* mono ms */
    long long started;  /* mono ms, for the latency metric */
    uint64_t timer;
    uint64_t progress_timer; /* heartbeat progress while in flight (progressToken given) */
    double progress_last;    /* last progress value sent: values must only grow */
    struct sess *sess;
    bool sent;    /* handed to the worker */
    bool replied; /* the client has its answer (or wants none) */
    struct call *next;
};

/* Router state of one session (session->ctx). */
struct sess {
    struct server *srv;
    struct session *s;
    struct worker *w;
    struct call *head, *tail; /* head may be in flight */
    struct call *create_call; /* browser_session_create waiting for READY */
    bool ever_ready;          /* a worker of this session has been ready before */
    bool restarted_notice;    /* tell the next result that state was lost */
    json_t *state;            /* the worker's last MSG_STATE, for a restart (owned) */
    size_t state_bytes;       /* its size as compact JSON */
    json_t *restored;         /* what the restart restored, for that notice (owned) */
};

static inline json_t *router_error(enum tv_err e, const char *msg, const char *hint,
                                   const char *sid)
{
    return tv_error_result(e, msg, hint, sid, NULL);
}

/* router.c */
/* Answer c with result (stolen) through the server's front, unless it has
 * its answer already: the one place a call's later answer is sent from. */
void call_reply(struct call *c, json_t *result);
void call_free(struct server *srv, struct call *c);
/* A call of tool with args (borrowed; the call takes its own references). */
struct call *call_new(struct server *srv, struct mcp_conn *conn, json_t *rpc_id,
                      const struct tool_def *tool, json_t *args, json_t *ptoken);
/* c becomes ss's: it keeps the session busy and gets its deadline timer. */
void call_attach(struct sess *ss, struct call *c);
/* The first call of ss's queue, taken off it (NULL: none). */
struct call *call_pop_head(struct sess *ss);
/* notifications/progress for c: params (stolen) with value, above the last one sent. */
void call_send_progress(struct call *c, json_t *params, double value);
/* Start ss's worker if it needs one, or send its next call. */
void sess_pump(struct sess *ss);
/* Close a session: fail its calls, stop its worker, drop it from the table
 * (as expired when expired is true, so the id answers SESSION_EXPIRED). */
void sess_close(struct sess *ss, bool expired, const char *why);
/* A new session, on a pooled worker when may_pool and one is ready. */
enum tv_err sess_create(struct server *srv, bool may_pool, struct sess **out);
/* The session a worker tool runs in, or NULL with *err the error result
 * (the caller's) to answer with. */
struct sess *sess_resolve(struct server *srv, struct mcp_conn *conn, json_t *args, json_t **err);

/* session_tools.c: the session tools. Each returns its result (the
 * caller's), or NULL when the answer comes later (browser_session_create
 * waiting for its worker's READY: session_created answers it). */
json_t *tool_session_create(struct server *srv, struct mcp_conn *conn, json_t *rpc_id,
                            const struct tool_def *tool, json_t *args);
json_t *tool_session_close(struct server *srv, struct mcp_conn *conn, json_t *args);
json_t *tool_session_list(struct server *srv, struct mcp_conn *conn);
/* ss's first worker is ready: answer its browser_session_create. */
void session_created(struct server *srv, struct sess *ss);
/* A worker tool's fromSessionId: copy its file from that session's
 * directory into ss's and drop the argument. NULL when done, else the
 * error result (the caller's) to answer with. */
json_t *session_hand_over(struct server *srv, struct sess *ss, json_t *args, const char *file_arg);

#endif
