/*
 * events.c - every CDP event the worker receives goes through here, to the
 * modules that track page state. Handlers run inside cdp_call/cdp_wait, so
 * they only record state (or fire-and-forget with cdp_send); they never wait.
 */
#include "netpolicy.h"
#include "tabs.h"
#include "worker.h"

void page_on_event(void *ud, const char *session, const char *method, json_t *params)
{
    struct wctx *w = ud;
    /* Target events, and events of a background tab (dispatched below with
     * that tab's page fields swapped in), are the tab list's. */
    if (!tabs_route(w, session, method, params))
        page_dispatch(w, session, method, params);
}

void page_dispatch(struct wctx *w, const char *session, const char *method, json_t *params)
{
    nav_on_event(w, session, method, params);
    frames_on_event(w, session, method, params);
    dialogs_on_event(w, session, method, params);
    settle_on_event(w, session, method, params);
    console_on_event(w, session, method, params);
    netpolicy_on_event(w, session, method, params);
    console_log_on_event(w, session, method, params);
    network_log_on_event(w, session, method, params);
    drag_on_event(w, session, method, params);
    upload_on_event(w, session, method, params);
    storage_state_on_event(w, session, method, params);
    storage_helper_on_event(w, session, method, params);
    routes_on_event(w, session, method, params);
    downloads_on_event(w, session, method, params);
}
