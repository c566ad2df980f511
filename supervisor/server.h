/*
 * server.h - the supervisor's process-wide state, owned by the loop thread.
 */
#ifndef TABVISOR_SERVER_H
#define TABVISOR_SERVER_H

#include <limits.h>
#include <stdint.h>

#include "config.h"
#include "loop.h"
#include "sessions.h"

struct browser;
struct worker;
struct router_front;

struct server {
    struct config cfg;
    struct loop *loop;
    struct session_table *sessions;
    struct browser *browser;
    struct relay_proc *relay; /* extension mode only (then no browser is started) */
    char run_dir[PATH_MAX];   /* runtime_base/run-PID, 0700 */
    int http_port;            /* the port --http listens on (0: none); pages may not reach it */
    uint64_t next_call_id;
    uint64_t next_worker_seq;
    struct worker *workers; /* every live worker process (list) */
    uint64_t housekeeping_timer;
    int shutting_down;
    /* How answers reach the client (router.h; main.c sets mcp.c's). */
    const struct router_front *front;
};

#endif
