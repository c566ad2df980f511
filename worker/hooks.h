/*
 * hooks.h - the tables the worker's core calls through, so that no core file
 * names a module above it (tools/ above all): CDP events, a new page or
 * frame's set-up, and the notes every result carries. Modules are entered
 * once, at start-up, by the composition root (worker/main.c, register_hooks),
 * and run in the order they were entered. Nothing here owns the data a hook
 * is given: it is the caller's for the duration of the call.
 */
#ifndef TABVISOR_HOOKS_H
#define TABVISOR_HOOKS_H

#include <stdbool.h>
#include <jansson.h>

struct session;

/* A CDP event on session ("" for the browser's own), of the tab whose
 * fields w holds. Runs inside cdp_call/cdp_wait: records state or sends
 * fire-and-forget commands, never waits. */
typedef void (*event_hook)(struct session *w, const char *session, const char *method,
                           json_t *params);

/* Where a new CDP session came from: a tab's page, or an out-of-process
 * iframe of one. */
enum attach_kind { ATTACH_PAGE, ATTACH_IFRAME };
/* Set-up commands for a new session (fire-and-forget, as the rest of a
 * page's set-up). */
typedef void (*attach_hook)(struct session *w, const char *session, enum attach_kind kind);

/* Notes of the page's state a result carries (text items appended to
 * content, fields set in structured). */
typedef void (*notes_hook)(struct session *w, json_t *content, json_t *structured);

/* Enter a hook (start-up only; aborts past the table's room, a build error
 * in practice). */
void hooks_on_event(event_hook fn);
void hooks_on_attach(attach_hook fn);
void hooks_on_notes(notes_hook fn);

/* Run every hook of a table, in order. */
void hooks_run_event(struct session *w, const char *session, const char *method, json_t *params);
void hooks_run_attach(struct session *w, const char *session, enum attach_kind kind);
void hooks_run_notes(struct session *w, json_t *content, json_t *structured);

#endif
