/*
 * events.c - every CDP event the worker receives goes through here: to the
 * tab list (target events, and a background tab's events), else to the
 * modules that track page state, through the event table (hooks.h). Handlers
 * run inside cdp_call/cdp_wait, so they only record state (or
 * fire-and-forget with cdp_send); they never wait.
 */
#include "hooks.h"
#include "tabs.h"
#include "worker.h"

void page_on_event(void *ud, const char *session, const char *method, json_t *params)
{
    struct session *w = ud;
    /* Target events, and events of a background tab (run through the same
     * table with that tab's page fields swapped in), are the tab list's. */
    if (!tabs_route(w, session, method, params))
        hooks_run_event(w, session, method, params);
}
