/*
 * worker.h - state of the one browser session a worker process serves, and
 * the helpers every tool uses.
 *
 * A worker runs one call at a time (the supervisor queues the rest), so
 * tools are plain sequential C: each CDP command is a function call that
 * returns when the browser answers, the call's deadline passes, or the
 * supervisor cancels (see cdp.h). A helper that fails records why in
 * w->err (code + message) and returns -1; the tool then returns
 * tool_fail(w), which turns that record into the error result.
 */
#ifndef TABVISOR_WORKER_H
#define TABVISOR_WORKER_H

#include <stdbool.h>
#include <stdint.h>
#include <limits.h>
#include <jansson.h>

#include "cdp.h"
#include "channel.h"
#include "errors.h"

#define UTIL_WORLD "tabvisor" /* name of our isolated world */

struct wctx {
    struct channel *ch;
    int parent_fd;
    struct cdp *cdp;

    char session_id[64]; /* tabvisor session (for messages) */
    char context_id[64]; /* CDP browserContextId */
    char target_id[64];  /* the page target; also its main frame id */
    char cdp_session[64];
    char output_dir[PATH_MAX];
    int viewport_w, viewport_h;

    /* The isolated world of the main frame's current document. */
    int util_ctx;
    bool util_installed;
    long long next_ref; /* ref numbers continue across documents */

    /* Main-frame navigation tracking, fed by CDP events. */
    char loader_id[64];
    bool seen_dcl, seen_load, seen_idle;
    bool nav_started; /* a new document started loading in the main frame */
    bool crashed;

    /* Last known page, for error results when the page cannot answer. */
    char url[2048];
    char title[512];

    /* Dialog dismissed since the last result, reported once. */
    char dialog_note[512];

    /* The call being run. */
    uint64_t call_id;
    long long deadline;
    bool cancelled, shutdown;

    /* Failure record of the last helper that returned -1. */
    enum tv_err err;
    char errmsg[1024];
    char errhint[256];
};

/* Record a failure (always returns -1 for `return fail_call(...)`). */
int fail_call(struct wctx *w, enum tv_err code, const char *hint, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* CDP command on the page session with the call's deadline; maps transport
 * failures to TIMEOUT / CANCELLED / BROWSER_CRASHED / BROWSER_ERROR. params
 * is stolen (may be NULL); *result (may be NULL) is owned by the caller. */
int page_call(struct wctx *w, const char *method, json_t *params, json_t **result);
/* The same on the browser target (Target.* commands). */
int browser_call(struct wctx *w, const char *method, json_t *params, json_t **result);

/* Evaluate expr in our isolated world (installed on demand) and return its
 * JSON value in *value (new reference; JSON null for undefined). Retries once
 * when navigation destroyed the world mid-call. */
int util_eval(struct wctx *w, const char *expr, json_t **value);
/* Build "__tabvisor.<fn>(<json args...>)" and util_eval it. args stolen. */
int util_call(struct wctx *w, const char *fn, json_t *args, json_t **value);

/* Refresh w->url and w->title from the page (best effort, short deadline). */
void page_refresh_info(struct wctx *w);
/* Wait until the main frame's new document reached DOMContentLoaded, if a
 * navigation started since nav_reset(); capped by cap_ms and the deadline. */
void nav_reset(struct wctx *w);
int nav_wait(struct wctx *w, const char *until, long long cap_ms);
/* Let the page react to input: a navigation it started, then one animation
 * frame. No fixed sleeps. */
int settle(struct wctx *w);

/* CDP event sink (set up by main.c): events.c fans each event out to the
 * modules below. */
void page_on_event(void *ud, const char *session, const char *method, json_t *params);
void nav_on_event(struct wctx *w, const char *session, const char *method, json_t *params);
void dialogs_on_event(struct wctx *w, const char *session, const char *method, json_t *params);

/* --- targets (target.c) --- */
/* Run the engine's fn(target, opts) ("actionPoint", "prepareTyping") until it
 * succeeds, fails for good, or the deadline passes; returns the engine's
 * success value ({x, y, ref, role, name, ...}) or NULL with w->err set.
 * element is the caller's description, used in messages (may be NULL). */
json_t *until_actionable(struct wctx *w, const char *fn, const char *target, json_t *opts,
                         const char *element);
/* Copy an engine {code, message, retry, candidates} error into w->err;
 * returns 1 when the engine says the condition may pass later. */
int page_error(struct wctx *w, json_t *err, const char *element);

/* --- results (new references) --- */
json_t *tool_ok(struct wctx *w, const char *text, json_t *structured /* stolen */);
json_t *tool_fail(struct wctx *w);
/* Add {url,title} of the page to structured (for action results). */
void add_page(struct wctx *w, json_t *structured);
/* The result of an action tool: "<verb> <role> "<name>" [ref=..]" plus the
 * page; target_info is the engine's description of the element (borrowed). */
json_t *action_result(struct wctx *w, const char *verb, json_t *target_info);

/* --- tools --- */
typedef json_t *(*tool_fn)(struct wctx *w, json_t *args);
/* The handler of a worker tool, or NULL. */
tool_fn tools_find(const char *name);

json_t *tool_navigate(struct wctx *w, json_t *args);
json_t *tool_snapshot(struct wctx *w, json_t *args);
json_t *tool_click(struct wctx *w, json_t *args);
json_t *tool_type(struct wctx *w, json_t *args);
json_t *tool_evaluate(struct wctx *w, json_t *args);
json_t *tool_screenshot(struct wctx *w, json_t *args);

/* Convenience accessors for validated args. */
const char *arg_str(json_t *args, const char *name, const char *dflt);
long long arg_int(json_t *args, const char *name, long long dflt);
bool arg_bool(json_t *args, const char *name, bool dflt);

#endif
