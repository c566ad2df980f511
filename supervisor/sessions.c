/*
 * sessions.c - the session table. A flat array: lookups are linear, which is
 * fine for the hundreds of sessions one machine's browsers can hold.
 */
#include "sessions.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>

#include "log.h"

struct session_table {
    struct session **items;
    size_t n, max;
    long long idle_ms;
    char instance[INSTANCE_ID_MAX + 1]; /* --instance-id; "" for none */
    /* Ring of expired ids so they answer SESSION_EXPIRED, not SESSION_NOT_FOUND. */
    char tombstones[SESSION_TOMBSTONES][SESSION_ID_LEN + 1];
    size_t next_tombstone;
};

struct session_table *session_table_new(size_t max_sessions, long long idle_ms)
{
    struct session_table *t = calloc(1, sizeof *t);
    if (!t)
        return NULL;
    t->items = calloc(max_sessions ? max_sessions : 1, sizeof *t->items);
    if (!t->items) {
        free(t);
        return NULL;
    }
    t->max = max_sessions;
    t->idle_ms = idle_ms;
    return t;
}

void session_table_free(struct session_table *t)
{
    if (!t)
        return;
    for (size_t i = 0; i < t->n; i++)
        free(t->items[i]);
    free(t->items);
    free(t);
}

void session_table_set_instance(struct session_table *t, const char *name)
{
    snprintf(t->instance, sizeof t->instance, "%s", name ? name : "");
}

bool instance_id_valid(const char *s)
{
    size_t n = strspn(s, "abcdefghijklmnopqrstuvwxyz0123456789-");
    return n >= 1 && n <= INSTANCE_ID_MAX && s[n] == 0;
}

void session_new_id(char *buf, const char *instance)
{
    unsigned char b[16];
    size_t got = 0;
    while (got < sizeof b) {
        ssize_t r = getrandom(b + got, sizeof b - got, 0);
        if (r > 0)
            got += (size_t)r;
    }
    b[6] = (b[6] & 0x0f) | 0x40; /* version 4 */
    b[8] = (b[8] & 0x3f) | 0x80; /* RFC 4122 variant */
    bool named = instance && *instance;
    snprintf(buf, SESSION_ID_LEN + 1,
             "%.*s%s%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x",
             INSTANCE_ID_MAX, named ? instance : "", named ? "." : "", b[0], b[1], b[2], b[3], b[4],
             b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13], b[14], b[15]);
}

void format_iso8601(long long wall, char *buf, size_t len)
{
    time_t secs = (time_t)(wall / 1000);
    struct tm tm;
    gmtime_r(&secs, &tm);
    char base[24];
    strftime(base, sizeof base, "%Y-%m-%dT%H:%M:%S", &tm);
    snprintf(buf, len, "%s.%03lldZ", base, wall % 1000);
}

enum tv_err session_create(struct session_table *t, long long now, struct session **out)
{
    if (t->n >= t->max)
        return TV_MAX_SESSIONS_REACHED;
    struct session *s = calloc(1, sizeof *s);
    if (!s)
        return TV_BROWSER_ERROR;
    /* 128 random bits make a collision practically impossible; checking is cheap. */
    do {
        session_new_id(s->id, t->instance);
    } while (session_lookup(t, s->id, &(struct session *){NULL}) != TV_SESSION_NOT_FOUND);
    s->created_ms = now;
    s->last_used_ms = now;
    t->items[t->n++] = s;
    *out = s;
    return TV_OK;
}

enum tv_err session_create_with_id(struct session_table *t, long long now, const char *id,
                                   struct session **out)
{
    if (session_lookup(t, id, &(struct session *){NULL}) != TV_SESSION_NOT_FOUND)
        return TV_INVALID_PARAMETERS;
    enum tv_err e = session_create(t, now, out);
    if (e == TV_OK)
        snprintf((*out)->id, sizeof(*out)->id, "%s", id);
    return e;
}

enum tv_err session_lookup(struct session_table *t, const char *id, struct session **out)
{
    for (size_t i = 0; i < t->n; i++) {
        if (strcmp(t->items[i]->id, id) == 0) {
            *out = t->items[i];
            return TV_OK;
        }
    }
    for (size_t i = 0; i < SESSION_TOMBSTONES; i++)
        if (t->tombstones[i][0] && strcmp(t->tombstones[i], id) == 0)
            return TV_SESSION_EXPIRED;
    return TV_SESSION_NOT_FOUND;
}

void session_touch(struct session_table *t, struct session *s, long long now)
{
    (void)t;
    if (now > s->last_used_ms)
        s->last_used_ms = now;
}

long long session_expires_at(const struct session_table *t, const struct session *s)
{
    return s->last_used_ms + t->idle_ms;
}

void session_remove(struct session_table *t, struct session *s)
{
    for (size_t i = 0; i < t->n; i++) {
        if (t->items[i] == s) {
            t->items[i] = t->items[--t->n];
            free(s);
            return;
        }
    }
}

void session_expire(struct session_table *t, struct session *s)
{
    memcpy(t->tombstones[t->next_tombstone], s->id, sizeof s->id);
    t->next_tombstone = (t->next_tombstone + 1) % SESSION_TOMBSTONES;
    session_remove(t, s);
}

struct session *session_next_expired(struct session_table *t, long long now)
{
    for (size_t i = 0; i < t->n; i++) {
        struct session *s = t->items[i];
        if (!s->busy && now >= session_expires_at(t, s))
            return s;
    }
    return NULL;
}

size_t session_count(const struct session_table *t)
{
    return t->n;
}

size_t session_max(const struct session_table *t)
{
    return t->max;
}

long long session_idle_ms(const struct session_table *t)
{
    return t->idle_ms;
}

struct session *session_at(struct session_table *t, size_t i)
{
    return i < t->n ? t->items[i] : NULL;
}
