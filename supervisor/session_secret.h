/*
 * session_secret.h - values derived from a session id under a key that only
 * this supervisor holds (drawn at start; sessions do not outlive it).
 *
 * Used where a name or a token must be the same for every worker a session
 * has (a restart, a pooled worker that gets its session later) and unknown
 * to anyone who does not hold it: the session's output directory's name
 * (outdirs.h) and the proof a worker shows the relay that it is the
 * session's own (relay/registry.h).
 */
#ifndef TABVISOR_SESSION_SECRET_H
#define TABVISOR_SESSION_SECRET_H

#include <stddef.h>

/* The first nhex (<= 64) hex digits of HMAC-SHA256(key, purpose ":" id),
 * NUL-terminated, into out (nhex + 1 bytes). */
void session_secret(const char *purpose, const char *session_id, char *out, size_t nhex);

#endif
