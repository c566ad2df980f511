/*
 * bidi_policy.h - which WebDriver BiDi commands a worker may send to the
 * one Firefox all sessions share, and on what (docs/firefox.md, issue 23).
 *
 * Firefox allows one BiDi session per browser, so the supervisor holds it
 * and each tabvisor session gets a user context of its own (its own
 * cookies and storage). A worker's command then passes only when everything
 * it names is that session's: its browsing contexts (the top-level ones it
 * created and their frames), its user context, its cookie partition, its
 * event subscriptions and preload scripts. Commands of the whole browser
 * (sessions, user contexts, windows, extensions) never pass, nor do those
 * that hand the browser a local path (input.setFiles), as DESIGN.md section
 * 9 has it for CDP. URLs are judged as the browser parses them
 * (url_policy.h), with the shared browser's allowlist.
 *
 * One table (bidi_policy.c), one rule per command; a command the table does
 * not name is refused. Pure: the caller says what the session owns.
 */
#ifndef TABVISOR_BIDI_POLICY_H
#define TABVISOR_BIDI_POLICY_H

#include <stdbool.h>

#include <jansson.h>

/* What a session owns, as the supervisor's BiDi bridge tracks it. */
struct bidi_owner {
    const char *user_context; /* the session's own */
    /* Whether the browsing context id is the session's (top-level or frame). */
    bool (*owns_context)(void *ud, const char *context);
    /* Whether a preload script id, an intercept id or a request id is the
     * session's (the bridge notes them from replies and events). */
    bool (*owns_handle)(void *ud, const char *kind, const char *id);
    void *ud;
};

/* NULL when the command msg ({"id", "method", "params"}) may be sent for
 * owner, else a static sentence saying why not. */
const char *bidi_policy_check(const json_t *msg, const struct bidi_owner *owner);

/* The number of commands the table names (for tests). */
int bidi_policy_rules(void);

#endif
