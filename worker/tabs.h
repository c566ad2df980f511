/*
 * tabs.h - the session's tabs: every page target of its browser context.
 *
 * The rest of the worker knows one page: the per-page fields of struct session
 * (target, CDP session, isolated world, refs, frames, navigation state,
 * dialog, settle state, console and network logs, last snapshot) always
 * describe the current tab. The other tabs keep theirs in a saved copy, and
 * tabs.c swaps them:
 *
 *   - selecting a tab moves its saved fields into session, so every tool acts
 *     on it;
 *   - an event of a background tab's CDP session (or one of its child
 *     sessions: out-of-process iframes, workers) is handled with that tab's
 *     fields swapped in for the duration, so its logs, dialog and frames stay
 *     right while it is not current;
 *   - refs are unique in the session: main-frame ref numbers continue from
 *     tab to tab (each tab's stint as current hands out its own range), frame
 *     numbers are session-wide, so a ref from another tab's snapshot is
 *     recognised and refused (STALE_REF naming the tab) instead of acting on
 *     whatever element of this page has the same number.
 *
 * Pages the page opens (window.open, target=_blank) reach us as target
 * discovery events the CDP bridge forwards for our context only; they are
 * attached and set up like our own tabs at the next safe point (between
 * calls, or at the start or end of one: never inside an event handler) and
 * are appended to the list without becoming current (as @playwright/mcp).
 * A tab that goes away (closed by us, by the page, or with its renderer) is
 * dropped at the next safe point; when it was current the tab at its index
 * (else the last) becomes current, and when none is left a fresh about:blank
 * tab is opened so the session stays usable.
 */
#ifndef TABVISOR_TABS_H
#define TABVISOR_TABS_H

#include <stdbool.h>
#include <jansson.h>

struct session;

/* Most tabs a session keeps; pages a page opens beyond it are closed. */
#define MAX_TABS 32

/* Create the list with the one (still empty) current tab; called before the
 * first page is created, so every event of it is routed. 0 or -1. */
int tabs_init(struct session *w);
/* Free every background tab and the list (the current tab's fields are the
 * caller's, as before). */
void tabs_free(struct session *w);
/* Create a page in the session's context, attach to it and set it up (events,
 * network policy, settling script, viewport) in the fields of session, which must
 * be clear. 0 or -1 with w->call.err set. */
int tabs_open_page(struct session *w);

/* Event routing (events.c): true when the event was handled here (a target
 * event, or one of a background tab whose fields were swapped in for it),
 * false when it is for the current tab's modules as usual. */
bool tabs_route(struct session *w, const char *session, const char *method, json_t *params);

/* Safe point: drop tabs that went away and adopt pages the page opened.
 * Waits on the browser (capped by w->call.deadline). */
void tabs_sync(struct session *w);
/* Why the current tab changed under the agent since the last call (the page
 * closed it), or NULL; tabs_lost_clear() once the agent was told. */
const char *tabs_lost(struct session *w);
void tabs_lost_clear(struct session *w);

/* Whether the current tab went away (it is dropped at the next safe point):
 * a call still running on it ends at once instead of waiting for a page
 * that will not answer. */
bool tabs_current_gone(struct session *w);
/* Call fn for the top-level CDP session of every tab (current and
 * background), e.g. to apply a session-wide setting to all pages. */
void tabs_each_session(struct session *w, void (*fn)(struct session *w, const char *sid, void *ud),
                       void *ud);
/* Number of tabs and the current one's index. */
/* The current tab's renderer crashed (w->page->crashed): close it and make
 * another tab current, or a fresh about:blank one when it was the only one
 * (the browser context, with cookies and storage, stays). was gets the
 * crashed page's URL. On failure to open a tab, w->broken is set. */
void tabs_replace_crashed(struct session *w, char *was, size_t len);
int tabs_count(struct session *w);
int tabs_current(struct session *w);
/* Make tab i current. 0, or -1 with TAB_NOT_FOUND. */
int tabs_select(struct session *w, int i);
/* Open a new about:blank tab and make it current. 0 or -1. */
int tabs_new(struct session *w);
/* Close tab i (-1: the current one). 0 or -1 with w->call.err set. */
int tabs_close(struct session *w, int i);
/* Close every tab and the browser context; continue in a fresh context with
 * one about:blank tab (browser_close). 0 or -1. */
int tabs_reset(struct session *w);
/* Extension mode, after a restarted relay forgot our tabs: drop them all
 * (no "closed by the page" notice) and open a fresh current tab. 0 or -1. */
int tabs_forget_all(struct session *w);
/* [{index, url, title, current}] of every tab (new reference). */
json_t *tabs_list_json(struct session *w);
/* The index of a tab other than the current one that shows a JavaScript
 * dialog (its type and message, borrowed, in *type and *message when not
 * NULL), or -1. Such a dialog blocks every page of its renderer process,
 * which the current tab may share (an opener and its popup do), so it is a
 * modal state of the whole session, as in @playwright/mcp. */
int tabs_other_dialog(struct session *w, const char **type, const char **message);
/* Fail with STALE_REF when target is a ref handed out by another tab. 0 or -1. */
int tabs_check_ref(struct session *w, const char *target);

#endif
