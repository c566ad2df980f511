/*
 * sessions.h - the session table: ids, limits, sliding idle expiry.
 *
 * Pure bookkeeping with the clock passed in, so the rules can be tested
 * with generated interleavings (tests/unit/test_sessions.c). Processes and
 * call queues hang off a session through the opaque `ctx` pointer, owned by
 * the caller (supervisor/router.c).
 *
 * Rules: ids are 128 random bits printed as a UUID, after "NAME." when the
 * table has an instance name (--instance-id: a proxy in front of several
 * replicas routes by it, docs/deploy.md); expiresAt = last use +
 * idle timeout; a closed id is forgotten (SESSION_NOT_FOUND afterwards); an
 * expired id is remembered in a bounded list of tombstones so that it
 * answers SESSION_EXPIRED; the number of live sessions never exceeds the
 * limit.
 */
#ifndef TABVISOR_SESSIONS_H
#define TABVISOR_SESSIONS_H

#include <stdbool.h>
#include <stddef.h>
#include "errors.h"
#include "proto.h"

/* --instance-id: 1..INSTANCE_ID_MAX characters of [a-z0-9-]. */
#define INSTANCE_ID_MAX 32
#define SESSION_UUID_LEN 36
/* The longest id: "NAME." + UUID (the catalog bounds sessionId by it). */
#define SESSION_ID_LEN TV_SESSION_ID_MAX
_Static_assert(SESSION_ID_LEN == INSTANCE_ID_MAX + 1 + SESSION_UUID_LEN, "TV_SESSION_ID_MAX");
#define SESSION_TOMBSTONES 1024

struct session {
    char id[SESSION_ID_LEN + 1];
    long long created_ms;   /* wall clock */
    long long last_used_ms; /* wall clock of the last use */
    int busy;               /* calls queued or running: never expires while > 0 */
    void *owner;            /* MCP connection that created it (for listing), or NULL */
    bool is_default;        /* the owner's default session */
    void *ctx;              /* caller's per-session state */
};

struct session_table;

struct session_table *session_table_new(size_t max_sessions, long long idle_ms);
void session_table_free(struct session_table *t); /* ctx pointers are the caller's to free first */
/* Prefix the ids session_create makes with "name." (copied; NULL or "":
 * none). name must pass instance_id_valid(). */
void session_table_set_instance(struct session_table *t, const char *name);

/* New session at time now. TV_OK with *out, or TV_MAX_SESSIONS_REACHED. */
enum tv_err session_create(struct session_table *t, long long now, struct session **out);
/* Same, under a given id (a pooled worker's, pool.h); TV_INVALID_PARAMETERS
 * if a session has it already. */
enum tv_err session_create_with_id(struct session_table *t, long long now, const char *id,
                                   struct session **out);
/* TV_OK with *out, TV_SESSION_EXPIRED for a tombstoned id, else TV_SESSION_NOT_FOUND. */
enum tv_err session_lookup(struct session_table *t, const char *id, struct session **out);
void session_touch(struct session_table *t, struct session *s, long long now);
long long session_expires_at(const struct session_table *t, const struct session *s);
/* Remove s (the caller has released s->ctx). */
void session_remove(struct session_table *t, struct session *s);
/* Remove s and remember its id as expired. */
void session_expire(struct session_table *t, struct session *s);
/* The first session due to expire at time now (idle, not busy), or NULL. */
struct session *session_next_expired(struct session_table *t, long long now);

size_t session_count(const struct session_table *t);
size_t session_max(const struct session_table *t);
long long session_idle_ms(const struct session_table *t);
struct session *session_at(struct session_table *t, size_t i);

/* Fill buf (>= SESSION_ID_LEN + 1 bytes) with a fresh random UUID v4 string,
 * after "instance." when instance is neither NULL nor "". */
void session_new_id(char *buf, const char *instance);
/* Whether s is a valid --instance-id: 1..INSTANCE_ID_MAX of [a-z0-9-]. The
 * characters are those of a DNS label, so the name can be a pod's, and none
 * of them is the '.' that ends the prefix. */
bool instance_id_valid(const char *s);
/* Format wall-clock ms as ISO 8601 UTC "2026-11-21T06:14:22.123Z" into buf (>= 32). */
void format_iso8601(long long wall_ms, char *buf, size_t len);

#endif
