/*
 * registry.h - sessions and the tabs they own (docs/relay.md, "Ownership").
 *
 * A session is one worker connection, named by the worker's session id and
 * bound to its nng pipe. A tab has at most one owner. A session sees only
 * its own tabs: every lookup on behalf of a session goes through
 * reg_tab_owned(), which answers NULL (TAB_NOT_FOUND) for a tab that is not
 * its own, whether the tab exists or not. Popups of an owned tab join the
 * owner (reg_tab_opened_by). When a worker's pipe drops, its session is kept
 * orphaned until a deadline so a restarted worker can take it back with the
 * same id; reg_expired() lists the ones whose time is up.
 *
 * Pure data: no I/O, no clock (times are passed in), so unit tests can
 * drive every rule. Not thread-safe: the relay's loop thread only.
 */
#ifndef TABVISOR_RELAY_REGISTRY_H
#define TABVISOR_RELAY_REGISTRY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define REG_MAX_SESSIONS 256
#define REG_MAX_TABS 4096
#define REG_SESSION_ID 64 /* bytes of a session id, at most */
#define REG_PROOF 64      /* hex digits of a worker's proof (relay-hello) */

struct reg_session {
    bool used;
    char id[REG_SESSION_ID + 1];
    uint64_t serial; /* unique for the relay's life: a handle that never dangles */
    /* What its worker showed in relay-hello (the supervisor derives it from
     * the session id under its own key): a later hello naming the session
     * must show the same, so another worker that learnt the id cannot take
     * an orphaned session over. Empty for a session known only from the
     * extension's claims (a relay restart): its first hello sets it. */
    char proof[REG_PROOF + 1];
    uint32_t pipe;        /* nng pipe id; 0 while orphaned */
    int64_t orphan_until; /* CLOCK_MONOTONIC ms; 0 while a worker holds it */
};

struct reg_tab {
    int64_t id;    /* Chrome's tab id */
    int owner;     /* index into sessions[] */
    bool created;  /* made by the session (or a popup of its tab): closed with it */
    bool attached; /* chrome.debugger attached, as far as the relay knows */
};

struct registry {
    struct reg_session sessions[REG_MAX_SESSIONS];
    struct reg_tab *tabs;
    size_t ntabs, cap;
    uint64_t next_serial;
};

void reg_init(struct registry *r);
void reg_free(struct registry *r);

/* Open (or take back) the session id for pipe, with the worker's proof.
 * Returns its index; *resumed tells whether an orphaned session was taken
 * back. -1 with a reason in err when the id or the proof is malformed, the
 * session is held by a live worker or was opened with another proof, the
 * pipe already has a session, or the table is full. */
int reg_session_open(struct registry *r, const char *id, const char *proof, uint32_t pipe,
                     bool *resumed, char *err, size_t errlen);
/* A session named by the extension's claims after a relay restart (no
 * worker yet): the existing one with that id, else a new orphaned one kept
 * until until_ms, which a worker's hello with the same id takes back
 * (resumed). -1 when the id is malformed or the table is full. */
int reg_session_claim(struct registry *r, const char *id, int64_t until_ms);
int reg_session_by_pipe(const struct registry *r, uint32_t pipe);
int reg_session_by_id(const struct registry *r, const char *id);
int reg_session_by_serial(const struct registry *r, uint64_t serial);
/* The worker left without closing: keep the session until until_ms. */
void reg_session_orphan(struct registry *r, int idx, int64_t until_ms);
/* Forget session idx and every tab it owns. */
void reg_session_free(struct registry *r, int idx);
size_t reg_session_count(const struct registry *r);

/* Tabs of session idx, at most max, into out (pointers valid until the next
 * change). Returns how many it has in all. */
size_t reg_session_tabs(struct registry *r, int idx, struct reg_tab **out, size_t max);

/* The tab, whoever owns it (relay-internal use only: never answer a session
 * with it). */
struct reg_tab *reg_tab_get(struct registry *r, int64_t tab_id);
/* The tab if session idx owns it, else NULL: the only lookup for a session. */
struct reg_tab *reg_tab_owned(struct registry *r, int idx, int64_t tab_id);
/* Give tab_id to session idx. -1 when another session owns it or the table
 * is full; 0 also when idx already owns it. */
int reg_tab_add(struct registry *r, int64_t tab_id, int idx, bool created);
/* A new tab tab_id was opened by opener: when the opener is owned, the new
 * tab joins its owner (created, so it closes with the session). Returns the
 * owner's index, or -1 when the opener is nobody's (the tab stays free). */
int reg_tab_opened_by(struct registry *r, int64_t tab_id, int64_t opener);
/* The tab is gone. Returns the index of its former owner, or -1. */
int reg_tab_remove(struct registry *r, int64_t tab_id);
size_t reg_tab_count(const struct registry *r);

/* Indices of orphaned sessions whose deadline is at or before now_ms, at
 * most max into out. Returns how many were written. */
size_t reg_expired(const struct registry *r, int64_t now_ms, int *out, size_t max);

#endif
