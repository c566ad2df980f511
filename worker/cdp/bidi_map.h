/*
 * bidi_map.h - the one place where the worker's CDP becomes WebDriver BiDi
 * (Firefox) and BiDi's answers and events become CDP again (issue 23).
 *
 * The worker's tools speak CDP to their page. On Firefox the transport
 * under them (bidi.c) passes every command through this map, which gives
 * one of three outcomes:
 *
 *   - one BiDi command (a CDP command never becomes two, so the BiDi id is
 *     the CDP id and the answer comes back under it): Runtime.evaluate in
 *     our isolated world is script.evaluate in a sandbox named like it,
 *     Input.dispatchMouseEvent/dispatchKeyEvent/insertText are
 *     input.performActions, Page.navigate is browsingContext.navigate, a
 *     screenshot is browsingContext.captureScreenshot, and so on;
 *   - an answer of its own, for set-up commands Firefox needs no
 *     counterpart of (Page.enable: BiDi events are subscribed browser-wide
 *     by the supervisor's bridge, which routes them to us);
 *   - NOT_SUPPORTED (CDP_ERR_NOT_SUPPORTED) naming the method, for what BiDi
 *     cannot do or this map does not do yet: the tool fails with that code,
 *     never with a silent success.
 *
 * A CDP session is a top-level browsing context here: the session id of
 * a page is its context id. BiDi events of a context (or of a frame inside
 * it) become the CDP events the worker's modules follow, on that session:
 * navigationStarted/domContentLoaded/load are Page.lifecycleEvent init,
 * DOMContentLoaded and load (networkIdle is reported with load: BiDi has no
 * such event), user prompts are JavaScript dialogs, log entries are console
 * calls and exceptions, network events are Network.* for the settling and
 * the request log, a closed context is a destroyed target.
 *
 * Values: script results come back as BiDi remote values and are turned
 * into the JSON a CDP returnByValue gives. An isolated world's script
 * that is gone (a new document: BiDi sandboxes live per document) answers
 * as CDP does for a context that no longer exists, so the worker installs
 * its engine again.
 *
 * Pure: no I/O. Ownership: params and messages given are borrowed; every
 * json_t returned is new and the caller's.
 */
#ifndef TABVISOR_BIDI_MAP_H
#define TABVISOR_BIDI_MAP_H

#include <stdbool.h>
#include <jansson.h>

struct bidi_map;

struct bidi_map *bidi_map_new(void);
void bidi_map_free(struct bidi_map *m);
/* The session's network policy for navigations (worker/netpolicy.h's
 * netpolicy_check: NULL allowed, else why not). Firefox's proxy refuses
 * the connection either way; this makes the navigation fail as Chromium's
 * does, with net::ERR_BLOCKED_BY_CLIENT, instead of a refused connection. */
void bidi_map_set_url_check(struct bidi_map *m, const char *(*check)(const char *url));

enum bidi_outcome {
    BIDI_SEND,   /* *out is the BiDi command to send (its id is id) */
    BIDI_ANSWER, /* *out is the CDP answer to give back at once */
};

/* Map the CDP command id/method/params (params may be NULL) on session
 * (NULL or "": the browser). */
enum bidi_outcome bidi_map_command(struct bidi_map *m, long long id, const char *session,
                                   const char *method, json_t *params, json_t **out);
/* A BiDi answer (it has "id"): emit gets the CDP answer to hand the client
 * (none for an id the map never sent), then any event it implies. */
void bidi_map_answer(struct bidi_map *m, json_t *msg, void (*emit)(void *ud, json_t *cdp),
                     void *ud);
/* A BiDi event: the CDP events it makes, in order (emit gets each message,
 * borrowed for the call; it may be none). */
void bidi_map_event(struct bidi_map *m, json_t *msg, void (*emit)(void *ud, json_t *cdp), void *ud);

/* A BiDi remote value as the JSON CDP's returnByValue would give (new
 * reference; JSON null for undefined and for what JSON cannot hold). */
json_t *bidi_remote_value_json(json_t *rv);

#endif
