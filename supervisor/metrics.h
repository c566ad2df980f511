/*
 * metrics.h - process counters for GET /metrics (Prometheus text format
 * 0.0.4). Owned by the loop thread like all supervisor state; no locks.
 *
 * Calls are counted by tool and outcome ("ok" or the error code of an
 * isError result, e.g. "TIMEOUT"), so the label sets stay bounded by the
 * catalog and the error list; latency is a histogram per tool. Names follow
 * Prometheus conventions: the unit in the name (_seconds, _bytes), _total on
 * counters; docs/deploy.md lists them.
 */
#ifndef TABVISOR_METRICS_H
#define TABVISOR_METRICS_H

#include <stddef.h>

/* Browser sessions by state (router_session_gauges fills them). */
enum { SESSION_STARTING, SESSION_IDLE, SESSION_BUSY, SESSION_STOPPING, SESSION_STATES };

/* What the caller knows at render time: metrics pulls nothing from the
 * rest of the supervisor. */
struct metrics_gauges {
    const char *instance_id;              /* --instance-id, or NULL */
    size_t sessions;                      /* open browser sessions */
    size_t by_state[SESSION_STATES];      /* of them, by state */
    size_t mcp_sessions, http_connections; /* the HTTP transport's */
};

/* A tool call got its answer after latency_ms; outcome is "ok" or an error code. */
void metrics_call_done(const char *tool, const char *outcome, long long latency_ms);
void metrics_worker_crash(void);    /* a worker died while its session was live */
void metrics_worker_restart(void);  /* a session got a fresh worker after a crash */
void metrics_browser_restart(void); /* the shared browser exited (it restarts on demand) */
void metrics_http_request(int status);
/* n bytes went out to MCP clients over a transport ("http" or "stdio"). */
void metrics_bytes_sent(const char *transport, size_t n);

/* Render every metric with the gauges g (borrowed); the caller frees the
 * string. */
char *metrics_render(const struct metrics_gauges *g);
/* Forget everything (tests). */
void metrics_reset(void);

#endif
