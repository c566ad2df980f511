/*
 * cdp.h - a Chrome DevTools Protocol client over any cdp_transport, for a
 * single-threaded worker.
 *
 * The worker runs one tool call at a time and calls cdp_call() like a
 * function: it sends the command and waits for the matching response,
 * dispatching every event that arrives meanwhile to the event handler. While
 * waiting it also polls an optional interrupt fd (the worker's nng channel):
 * when that fd is readable it calls the interrupt callback, and if the
 * callback returns nonzero the wait ends with CDP_INTERRUPTED (cancel or
 * shutdown). A response that arrives for an abandoned call is dropped.
 *
 * WebDriver BiDi (Firefox) has the same envelope ({"id", "method", "params"}
 * out; "result" or an error back; events with "method" and "params"), so
 * the same client speaks it: its error shape ("error" a string, "message")
 * comes back as CDP_ERROR with code CDP_ERR_BIDI (supervisor/firefox.h).
 *
 * Ownership: params are borrowed; *result is a new reference owned by the caller.
 * Event params passed to the handler are borrowed for the handler's duration.
 */
#ifndef TABVISOR_CDP_H
#define TABVISOR_CDP_H

#include <jansson.h>
#include "transport.h"
#include "clock.h"

enum cdp_status {
    CDP_OK = 0,
    CDP_ERROR = -1,       /* the browser answered with an error; see cdp_last_error() */
    CDP_TIMEOUT = -2,     /* deadline passed */
    CDP_CLOSED = -3,      /* transport closed or broken */
    CDP_INTERRUPTED = -4, /* interrupt callback asked to stop */
};

struct cdp;

typedef void (*cdp_event_fn)(void *ud, const char *session_id, const char *method, json_t *params);
typedef int (*cdp_interrupt_fn)(void *ud);

/* Takes ownership of t (destroyed even when cdp_new fails). NULL on failure. */
struct cdp *cdp_new(struct cdp_transport *t);
void cdp_free(struct cdp *c);
/* The handler gets params as an object (an empty one when the event has none).
 * It may call cdp_call()/cdp_wait() itself (re-entrancy is supported: the
 * outer call's response is kept if it arrives meanwhile), so it must also
 * tolerate being re-entered by events arriving during such a nested call. */
void cdp_set_event_handler(struct cdp *c, cdp_event_fn fn, void *ud);
/* fd < 0 disables. When fd is readable the callback runs; it must consume
 * what made fd readable or return nonzero, else the wait spins. fn NULL
 * means "readable = interrupt". An interrupt ends all nested waits. */
void cdp_set_interrupt(struct cdp *c, int fd, cdp_interrupt_fn fn, void *ud);
/* fn(ud) nonzero means "the page cannot answer now" (a JavaScript dialog is
 * blocking it): cdp_call() then returns CDP_INTERRUPTED without sending, and
 * every wait already under way ends with CDP_INTERRUPTED (its late response
 * is dropped). Checked before each send and on each turn of a wait. */
void cdp_set_abort(struct cdp *c, int (*fn)(void *ud), void *ud);

/* Send method(params) to session_id (NULL = browser target) and wait until
 * deadline_ms (CLOCK_MONOTONIC ms; 0 = no limit). params NULL sends {};
 * result may be NULL when the caller does not want it. On CDP_OK *result is
 * the "result" object. After CDP_TIMEOUT/CDP_INTERRUPTED the connection stays
 * usable: the late response is dropped when it comes. */
int cdp_call(struct cdp *c, const char *session_id, const char *method, const json_t *params,
             json_t **result, long long deadline_ms);
/* Send without waiting for the answer (it is dropped when it comes). */
int cdp_send(struct cdp *c, const char *session_id, const char *method, const json_t *params);
/* The transport's fd, for an idle event loop to poll (POLLIN) between calls.
 * Messages may already be buffered when a call returns, so before sleeping on
 * it, and whenever it is readable, run cdp_wait(c, NULL, NULL, mono_ms()). */
int cdp_fd(struct cdp *c);
/* Dispatch incoming events until deadline_ms, or until cond(ud) returns true
 * (checked first and after each event). Returns CDP_OK when cond held, else a
 * status. cond NULL pumps events until the deadline (then CDP_TIMEOUT).
 * A wait whose deadline has passed still handles what has already arrived
 * (one non-blocking look), so deadline mono_ms() dispatches pending events. */
int cdp_wait(struct cdp *c, int (*cond)(void *ud), void *ud, long long deadline_ms);
/* The browser's error message of the last CDP_ERROR ("" if none):
 * error.message, then ": " and error.data when present. Other failures
 * (timeout, closed with the transport's reason, interrupted) leave a
 * description here too. Valid until the next call on c. */
const char *cdp_last_error(struct cdp *c);
/* error.code of the last CDP_ERROR from the browser (e.g. -32601 for an
 * unknown method); 0 for failures that did not come from the browser. */
int cdp_last_error_code(struct cdp *c);
/* True once the transport has failed: no call on c can succeed again. */
bool cdp_closed(const struct cdp *c);

#endif
