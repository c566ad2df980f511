/*
 * http_int.h - the HTTP transport's own objects and helpers, shared by its
 * files: http.c (connections, accept, the public API), http_out.c (writing
 * responses and SSE), http_requests.c (admitting and handling requests),
 * http_sessions.c (MCP sessions, replay) and http_log.c (log delivery).
 * Not for other files: http.h is the transport's interface. The comment
 * at the top of http.c describes the objects.
 */
#ifndef TABVISOR_HTTP_INT_H
#define TABVISOR_HTTP_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "http.h"
#include "http_parse.h"
#include "jsonrpc.h"
#include "log.h"
#include "loop.h"
#include "mcp.h"
#include "sessions.h"

#define MAX_HEAD (16 * 1024)
#define IDLE_MS 60000    /* keep-alive connection with nothing to say */
#define REQUEST_MS 30000 /* first byte to whole request (slow clients) */
#define PING_MS 15000    /* SSE comment so proxies keep streams open */
#define LINGER_MS 2000   /* after the last answer: drop what the client still sends */
#define LINGER_BYTES (8u << 20)
#define MAX_OUT (64u << 20) /* a client that stops reading loses its connection */
#define HOUSEKEEPING_MS 1000
#define MAX_PENDING_LOG 256      /* log lines waiting for the deferred flush */
#define ACCEPT_PAUSE_MS 1000     /* out of descriptors: stop accepting this long (as tmux) */
#define SMALL_BODY (64 * 1024)   /* bodies up to this size need no reservation */
#define MAX_RESERVED (64u << 20) /* larger bodies together (or one --http-max-body) */
#define MAX_MSESS_PER_CONN 64    /* live MCP sessions initialized over one connection */
#define MAX_POSTS_PER_MSESS 64   /* unanswered requests of one MCP session */
#define REPLAY_EVENTS 64         /* SSE events kept per MCP session for Last-Event-ID */
#define REPLAY_BYTES (1u << 20)  /* ... and their size, per session */
#define REPLAY_TOTAL (32u << 20) /* ... and over all sessions */

enum hc_state {
    HC_READ,    /* reading a request (or idle between requests) */
    HC_WAIT,    /* a POST waits for its JSON-RPC response (maybe streaming SSE) */
    HC_STREAM,  /* the standalone GET SSE stream of a session */
    HC_CLOSING, /* write what is buffered, then linger */
    HC_DRAIN    /* sending side shut: drop input until EOF or LINGER_MS */
};

struct msess;

struct hconn {
    struct hconn *next;
    int fd;
    uint64_t serial; /* MCP sessions remember which connection initialized them */
    enum hc_state state;
    char *in;
    size_t in_len, in_cap;
    size_t need;     /* once the head is admitted: bytes of head and body */
    size_t reserved; /* bytes of hs.reserved this request's body holds */
    char *out;
    size_t out_len, out_off, out_cap;
    size_t drained; /* HC_DRAIN: bytes dropped */
    uint64_t timer;
    uint64_t resume_timer; /* reads a request pipelined behind an answered one */
    long long idle_since;  /* mono ms; HC_READ with nothing buffered */
    bool request_timer;    /* the timer is the slow-request one */
    bool keep_alive;
    bool http11;   /* the current request is HTTP/1.1 (chunked responses allowed) */
    bool chunked;  /* the current streamed response uses chunked coding */
    bool peer_eof; /* the client shut its sending side */
    bool closed;
    struct post *post;       /* HC_WAIT */
    struct msess *stream_of; /* HC_STREAM */
};

struct post {
    struct post *next;
    struct hconn *hc;
    json_t *rpc_id;
    json_t *progress_token;
    uint64_t stream; /* SSE stream number once sse */
    bool sse;        /* SSE headers sent: further messages are events */
    bool is_init;    /* the response carries the new Mcp-Session-Id */
};

/* One SSE event kept for replay. */
struct sse_ev {
    struct sse_ev *next;
    uint64_t stream, n;
    size_t len;
    char text[];
};

struct msess {
    struct msess *next;
    char id[SESSION_ID_LEN + 1];
    struct mcp_conn *mcp;
    struct hconn *stream;
    struct post *posts;
    size_t nposts;
    long long last_used;  /* mono ms */
    uint64_t conn_serial; /* the connection that sent initialize */
    bool used;            /* made a request after initialize */
    bool had_get;         /* a GET stream was opened once: stream 0 exists */
    uint64_t next_stream, next_event;
    struct sse_ev *replay, *replay_tail;
    size_t replay_count, replay_bytes;
};

struct http_state {
    struct server *srv;
    int lfd;
    int port;
    char url_host[300];   /* host as printed in URLs ([v6] bracketed) */
    char self_hosts[900]; /* Host values that name us, comma-separated */
    struct hconn *conns;
    size_t nconns;
    uint64_t next_serial;
    size_t reserved; /* body bytes reserved by admitted large requests */
    struct msess *sessions;
    size_t nsessions;
    size_t replay_bytes;   /* over all sessions */
    struct post *current;  /* the request mcp_conn_handle is handling now */
    struct msess *log_ctx; /* the session whose message is being handled */
    uint64_t housekeeping;
    uint64_t accept_timer; /* accepting paused (out of descriptors) */
    json_t *pending_logs;  /* array of [session id, notification] */
    bool flush_scheduled;
    bool running;
};

/* The transport's one state, owned by the loop thread (http.c). */
extern struct http_state hs;

/* http.c */
void hc_update(struct hconn *hc);
void http_release_reservation(struct hconn *hc);
void hc_close(struct hconn *hc);
void hc_linger(struct hconn *hc);

/* http_out.c */
void http_buf_reserve(char **p, size_t *cap, size_t need);
void http_try_flush(struct hconn *hc);
void http_respond_h(struct hconn *hc, int status, const char *ctype, const char *extra,
                    const char *body, size_t len);
void http_respond(struct hconn *hc, int status, const char *ctype, const char *body, size_t len);
void http_respond_rpc_error(struct hconn *hc, int status, int code, const char *msg,
                            const char *extra);
void http_start_sse(struct hconn *hc, const char *session_header);
void http_sse_write(struct hconn *hc, uint64_t stream, uint64_t n, const char *data, size_t len);
void http_sse_end(struct hconn *hc);

/* http_requests.c */
void http_process_input(struct hconn *hc);

/* http_sessions.c */
struct msess *http_find_msess(const struct http_span *id);
void http_replay(struct msess *ms, uint64_t stream, uint64_t after, struct hconn *hc);
void http_session_notify(struct msess *ms, json_t *msg);
void http_post_abandon(struct msess *ms, struct post *p);
struct msess *http_msess_new(uint64_t conn_serial);
void http_msess_end(struct msess *ms, const char *why);
size_t http_sessions_of_conn(uint64_t serial);
struct msess *http_oldest_unused(void);
void http_housekeeping(struct loop *l, void *ud);

/* http_log.c */
void http_log_sink(void *ud, enum log_level lvl, const char *text);
void http_recompute_log_sink(void);

#endif
