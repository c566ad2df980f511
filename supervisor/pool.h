/*
 * pool.h - workers started ahead of need (--pool N): each is READY with its
 * browser context and a blank page, under a session id of its own, so that
 * browser_session_create or a connection's default session costs only the
 * hand-over. Shared mode only. The pool never holds more workers than
 * --max-sessions leaves room for beside the open sessions.
 */
#ifndef TABVISOR_POOL_H
#define TABVISOR_POOL_H

#include "sessions.h"

struct server;
struct worker;

/* Start workers until the pool is full (or there is no room). Idempotent;
 * called at start-up, after every hand-over, and from housekeeping (which
 * also replaces pooled workers that died). */
void pool_fill(struct server *srv);
/* A pooled worker, now the caller's: a READY one if any, else one still
 * starting (its READY then goes to the caller's events). Detached from the
 * pool; owner and events are the caller's to set. id gets the session id
 * the worker was started for, which the new session must take. NULL when
 * the pool is empty. */
struct worker *pool_take(struct server *srv, char id[SESSION_ID_LEN + 1]);
/* Pooled workers count against --max-sessions: how many there are. */
size_t pool_count(const struct server *srv);
/* Stop one pooled worker (a starting one first) to make room for a session
 * that cannot use it. Returns 0, or -1 when the pool is empty. */
int pool_evict_one(struct server *srv);
/* Stop every pooled worker (shutdown, or the browser went away). */
void pool_drain(struct server *srv);

#endif
