/*
 * crash.c - the current tab's renderer died (Inspector.targetCrashed): what
 * becomes of the tab. It is reloaded in place, as a user reloads a crashed
 * tab (the same tab, its history and sessionStorage; the context's cookies
 * and storage were never touched); a tab that crashes again before a call
 * worked on it since its reload is closed instead and another becomes
 * current (tabs_replace_crashed). docs/design.md, "Lifecycle".
 */
#include <stdio.h>
#include <string.h>

#include "log.h"
#include "tabs.h"
#include "worker.h"

#define CRASH_RELOAD_MS 10000 /* longest reload of a crashed page */

/* Reload the current tab, whose renderer died, in place, as a user reloads
 * a crashed tab: the same tab, its history and sessionStorage. 0, or -1
 * (w->page->crashed set again) when the page cannot be reloaded. */
static int reload_crashed(struct session *w)
{
    if (strncmp(w->page->url, "http://", 7) != 0 && strncmp(w->page->url, "https://", 8) != 0)
        return -1;
    /* A page that crashes again before a call worked on it since its reload
     * (one that exhausts memory as it loads) would be reloaded for ever: it
     * is closed instead. */
    if (w->reload_unproven)
        return -1;
    w->reload_unproven = true;
    long long saved = w->call.deadline;
    long long cap = mono_ms() + CRASH_RELOAD_MS;
    if (w->call.deadline <= mono_ms() || w->call.deadline > cap)
        w->call.deadline = cap;
    w->page->crashed = false;
    nav_reset(w);
    int rc = page_call(w, "Page.reload", json_object(), NULL);
    if (rc == 0) {
        w->page->nav_started = true;
        rc = nav_wait(w, "load", CRASH_RELOAD_MS);
    }
    w->call.deadline = saved;
    if (rc < 0 || w->page->crashed) {
        log_warn("session %s: the crashed page could not be reloaded: %s", w->session_id,
                 w->call.errmsg);
        w->call.err = TV_OK;
        w->call.errmsg[0] = w->call.errhint[0] = 0;
        w->page->crashed = true;
        return -1;
    }
    return 0;
}

/* The current tab's renderer died: reload it (reload_crashed), or else
 * carry on in another tab of the same context (tabs_replace_crashed), and
 * write what happened into note, for the agent. Sets w->broken when no tab
 * can be opened. */
void replace_crashed_page(struct session *w, char *note, size_t len)
{
    char was[300];
    snprintf(was, sizeof was, "%s", w->page->url);
    bool told = w->crash_told; /* the call that met the crash said it is reloaded */
    w->crash_told = false;
    if (reload_crashed(w) == 0) {
        if (told)
            return;
        snprintf(note, len,
                 "Note: the page of the current tab (%.300s) crashed: its renderer process ended "
                 "(killed, or out of memory). The tab was reloaded: what the page held in memory "
                 "is lost; the session's cookies and storage are kept.",
                 was);
        return;
    }
    tabs_replace_crashed(w, was, sizeof was);
    if (w->broken)
        return;
    snprintf(note, len,
             "Note: the page of the current tab (%.300s) crashed: its renderer process ended "
             "(killed, or out of memory). That tab was closed; tab %d (%.200s) is now current. "
             "The session's cookies and storage are kept.",
             was, tabs_current(w), w->page->url);
}
