/*
 * page.c - the worker's view of its page: CDP calls with the call's
 * deadline and the failures they end in (a dialog that blocks the page, an
 * error the page's engine reports), our isolated world in each frame, key
 * input to the focused frame. With frames.c and tabs.c the tab core: the
 * three call each other, nothing else in the worker calls back into them
 * (navigation tracking and settling: settle.c).
 */
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "frames.h"
#include "js_snapshot.h"
#include "log.h"
#include "tabs.h"
#include "worker.h"

int fail_call(struct session *w, enum tv_err code, const char *hint, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(w->call.errmsg, sizeof w->call.errmsg, fmt, ap);
    va_end(ap);
    w->call.err = code;
    snprintf(w->call.errhint, sizeof w->call.errhint, "%s", hint ? hint : "");
    return -1;
}

#define RELAY_HINT                                                                                 \
    "Check that the tabvisor extension is connected (its popup shows the relay); the next call "   \
    "reconnects."

int fail_cdp(struct session *w, int st, const char *method)
{
    /* The renderer died: every wait on it ended (call_blocked), and its
     * pending answers will never come. */
    if (w->page->crashed && st != CDP_CLOSED)
        return fail_call(w, TV_PAGE_CRASHED, PAGE_CRASHED_HINT,
                         "the page crashed during the call (%s): its renderer process ended",
                         method);
    switch (st) {
    case CDP_TIMEOUT:
        return fail_call(w, TV_TIMEOUT, "Raise 'timeout' or check what the page is doing.",
                         "timed out waiting for the browser (%s)", method);
    case CDP_INTERRUPTED:
        if (relay_broke(w))
            return fail_call(w, TV_EXTENSION_NOT_CONNECTED, RELAY_HINT,
                             "the connection to the browser extension broke during the call (%s)",
                             method);
        if (dialog_fail(w)) /* a dialog blocks the page (dialogs.c) */
            return -1;
        if (w->shutdown)
            return fail_call(w, TV_CANCELLED, NULL, "the session is shutting down");
        return fail_call(w, TV_CANCELLED, NULL, "the call was cancelled");
    case CDP_CLOSED:
        /* The worker itself could not hold the answer (over its
         * --worker-max-memory, or the machine's): it restarts. */
        if (strstr(cdp_last_error(w->cdp), "out of memory") ||
            strstr(cdp_last_error(w->cdp), strerror(ENOMEM))) {
            w->out_of_memory = true;
            return fail_call(w, TV_SESSION_CRASHED,
                             "The next call starts a fresh worker and browser context (page "
                             "state is lost). Ask for less (no fullPage), or raise "
                             "--worker-max-memory.",
                             "the session's worker ran out of memory during %s (%s)", method,
                             cdp_last_error(w->cdp));
        }
        return fail_call(w, TV_BROWSER_CRASHED, "The next call starts a fresh browser context.",
                         "the connection to the browser was lost (%s)", cdp_last_error(w->cdp));
    default:
        switch (cdp_last_error_code(w->cdp)) {
        case CDP_ERR_EXTENSION_NOT_CONNECTED:
            return fail_call(w, TV_EXTENSION_NOT_CONNECTED, RELAY_HINT, "%s: %s", method,
                             cdp_last_error(w->cdp));
        case CDP_ERR_NOT_SUPPORTED:
            return fail_call(w, TV_NOT_SUPPORTED,
                             w->firefox ? "Firefox is driven through WebDriver BiDi, which has "
                                          "no counterpart for this; run it on Chromium "
                                          "(--browser chromium)."
                                        : "Extension mode drives the user's own browser through "
                                          "chrome.debugger; this needs --browser-mode shared.",
                             "%s: %s", method, cdp_last_error(w->cdp));
        case CDP_ERR_TAB_NOT_FOUND:
            return fail_call(w, TV_TAB_NOT_FOUND, "List the tabs with browser_tabs.", "%s: %s",
                             method, cdp_last_error(w->cdp));
        }
        return fail_call(w, TV_BROWSER_ERROR, NULL, "%s: %s", method, cdp_last_error(w->cdp));
    }
}

bool relay_broke(struct session *w)
{
    return w->relay && w->call.id && relay_transport_breaks(w->relay) != w->relay_breaks;
}

static int call_on(struct session *w, const char *session, const char *method, json_t *params,
                   json_t **result)
{
    json_t *r = NULL;
    long long t0 = mono_ms();
    int st = cdp_call(w->cdp, session, method, params, &r, w->call.deadline);
    log_debug("cdp %s -> %d in %lld ms", method, st, mono_ms() - t0);
    json_decref(params);
    if (st == CDP_INTERRUPTED && dialog_cut_input(w, method)) {
        st = CDP_OK; /* the input arrived; its handler opened a dialog */
        r = json_object();
    }
    if (st != CDP_OK)
        return fail_cdp(w, st, method);
    if (result)
        *result = r;
    else
        json_decref(r);
    return 0;
}

int page_call(struct session *w, const char *method, json_t *params, json_t **result)
{
    return call_on(w, w->page->cdp_session, method, params, result);
}

int session_call(struct session *w, const char *session, const char *method, json_t *params,
                 json_t **result)
{
    return call_on(w, session && *session ? session : w->page->cdp_session, method, params, result);
}

int browser_call(struct session *w, const char *method, json_t *params, json_t **result)
{
    return call_on(w, NULL, method, params, result);
}

int key_call(struct session *w, const char *method, json_t *params)
{
    struct frame *f = w->focus_frame[0] ? frame_by_id(w, w->focus_frame) : NULL;
    return call_on(w, f && f->oopif ? f->session : w->page->cdp_session, method, params, NULL);
}

void focus_in_frame(struct session *w, int k)
{
    struct frame *f = w->firefox && k ? frame_by_k(w, k) : NULL;
    snprintf(w->focus_frame, sizeof w->focus_frame, "%s", f ? f->id : "");
}

int frame_cdp(struct session *w, const struct frame *f, const char *method, json_t *params,
              json_t **result)
{
    return call_on(w, f->session, method, params, result);
}

/* Create our isolated world in f's current document and load the injected
 * script into it, numbering refs from the frame's next free number (so a ref
 * of an earlier document never names an element of this one) with the
 * frame's prefix. */
static int util_install(struct session *w, struct frame *f)
{
    json_t *r;
    if (!*f->ctx) {
        if (frame_cdp(w, f, "Page.createIsolatedWorld",
                      json_pack("{s:s, s:s, s:b}", "frameId", f->id, "worldName", UTIL_WORLD,
                                "grantUniveralAccess", 1),
                      &r) < 0)
            return -1;
        *f->ctx = (int)json_integer_value(json_object_get(r, "executionContextId"));
        json_decref(r);
        *f->installed = false;
    }
    if (!*f->installed) {
        char init[96];
        if (f->k)
            snprintf(init, sizeof init, ";__tabvisor.init({refBase:%lld,prefix:\"f%d\"}).nextRef",
                     *f->next_ref, f->k);
        else
            snprintf(init, sizeof init, ";__tabvisor.init({refBase:%lld}).nextRef", *f->next_ref);
        size_t n = strlen(js_snapshot) + strlen(init) + 1;
        char *src = malloc(n);
        if (!src)
            abort();
        snprintf(src, n, "%s%s", js_snapshot, init);
        int rc = frame_cdp(w, f, "Runtime.evaluate",
                           json_pack("{s:s, s:i, s:b}", "expression", src, "contextId", *f->ctx,
                                     "returnByValue", 1),
                           &r);
        free(src);
        if (rc < 0)
            return -1;
        json_t *exc = json_object_get(r, "exceptionDetails");
        if (exc) {
            char *d = json_dumps(exc, JSON_COMPACT);
            log_error("injected script failed: %s", d ? d : "?");
            free(d);
            json_decref(r);
            return fail_call(w, TV_BROWSER_ERROR, NULL, "the snapshot script could not be loaded");
        }
        json_decref(r);
        *f->installed = true;
    }
    return 0;
}

const char *exception_text(json_t *details)
{
    const char *s =
        json_string_value(json_object_get(json_object_get(details, "exception"), "description"));
    return s ? s : json_string_value(json_object_get(details, "text"));
}

static int eval_once(struct session *w, struct frame *f, const char *expr, json_t **value,
                     bool *lost_context)
{
    json_t *r;
    *lost_context = false;
    if (util_install(w, f) < 0) {
        /* The world can vanish between creation and use during a navigation. */
        *lost_context = w->call.err == TV_BROWSER_ERROR;
        return -1;
    }
    json_t *params = json_pack("{s:s, s:i, s:b, s:b}", "expression", expr, "contextId", *f->ctx,
                               "returnByValue", 1, "awaitPromise", 1);
    long long t0 = mono_ms();
    int st = cdp_call(w->cdp, f->session, "Runtime.evaluate", params, &r, w->call.deadline);
    log_debug("util eval (frame %d ctx %d) %.60s -> %d in %lld ms", f->k, *f->ctx, expr, st,
              mono_ms() - t0);
    json_decref(params);
    if (st == CDP_ERROR) {
        const char *e = cdp_last_error(w->cdp);
        if (strstr(e, "context") || strstr(e, "Context")) {
            *lost_context = true;
            *f->ctx = 0;
            return fail_call(w, TV_BROWSER_ERROR, NULL, "the page navigated during the call");
        }
    }
    if (st != CDP_OK)
        return fail_cdp(w, st, "Runtime.evaluate");
    json_t *exc = json_object_get(r, "exceptionDetails");
    if (exc) {
        const char *text = exception_text(exc);
        /* Navigation mid-evaluation rejects the awaited promise this way. */
        if (text && strstr(text, "context")) {
            *lost_context = true;
            *f->ctx = 0;
        }
        int rc = fail_call(w, TV_BROWSER_ERROR, NULL, "injected script error: %.400s",
                           text ? text : "unknown");
        json_decref(r);
        return rc;
    }
    json_t *v = json_object_get(json_object_get(r, "result"), "value");
    *value = v ? json_incref(v) : json_null();
    json_decref(r);
    return 0;
}

int frame_eval(struct session *w, struct frame *f, const char *expr, json_t **value)
{
    bool lost;
    for (int attempt = 0; attempt < 3; attempt++) {
        if (eval_once(w, f, expr, value, &lost) == 0)
            return 0;
        if (!lost)
            return -1;
        *f->ctx = 0;
        *f->installed = false;
    }
    return -1;
}

int util_eval(struct session *w, const char *expr, json_t **value)
{
    return frame_eval(w, frame_main(w), expr, value);
}

int frame_call(struct session *w, struct frame *f, const char *fn, json_t *args, json_t **value)
{
    /* An array is the argument list; anything else is the single argument. */
    bool list = json_is_array(args);
    char *a = json_dumps(args, JSON_COMPACT | JSON_ENCODE_ANY);
    json_decref(args);
    if (!a)
        return fail_call(w, TV_INVALID_PARAMETERS, NULL, "arguments cannot be encoded");
    size_t alen = strlen(a);
    size_t n = alen + strlen(fn) + 32;
    char *expr = malloc(n);
    if (!expr)
        abort();
    if (list) /* strip the brackets: [a,b] -> a,b */
        snprintf(expr, n, "__tabvisor.%s(%.*s)", fn, (int)(alen - 2), a + 1);
    else
        snprintf(expr, n, "__tabvisor.%s(%s)", fn, a);
    free(a);
    int rc = frame_eval(w, f, expr, value);
    free(expr);
    /* Track the highest ref the frame handed out, so its next document
     * continues the numbering and an old ref can never name a new element. */
    if (rc == 0 && json_is_object(*value)) {
        json_t *nr = json_object_get(*value, "nextRef");
        if (json_is_integer(nr) && json_integer_value(nr) > *f->next_ref)
            *f->next_ref = json_integer_value(nr);
    }
    return rc;
}

void subcall_begin(struct session *w, struct subcall *s, long long cap_ms, enum subcall_kind kind)
{
    s->saved = w->call;
    long long cap = mono_ms() + cap_ms;
    if (kind == SUBCALL_OWN) {
        w->call.deadline = cap;
        w->call.cancelled = false;
    } else if (!w->call.deadline || w->call.deadline > cap) {
        w->call.deadline = cap;
    }
}

void subcall_end(struct session *w, const struct subcall *s)
{
    /* A cancel that came during the sub-call is the call's: kept. */
    bool cancelled = w->call.cancelled;
    w->call = s->saved;
    w->call.cancelled |= cancelled;
}

void page_refresh_info(struct session *w)
{
    json_t *v;
    /* Best effort: a failure here must not replace the failure being reported. */
    struct subcall sub;
    subcall_begin(w, &sub, 2000, SUBCALL_WITHIN);
    if (util_eval(w, "__tabvisor.pageInfo()", &v) == 0) {
        const char *u = json_string_value(json_object_get(v, "url"));
        const char *t = json_string_value(json_object_get(v, "title"));
        snprintf(w->page->url, sizeof w->page->url, "%s", u ? u : "");
        snprintf(w->page->title, sizeof w->page->title, "%s", t ? t : "");
        utf8_drop_partial_tail(w->page->url);
        utf8_drop_partial_tail(w->page->title);
        json_decref(v);
    }
    subcall_end(w, &sub);
}

void page_unstick(struct session *w)
{
    if (!w->page->cdp_session[0] || w->page->dialog.open)
        return;
    /* A page that answers a trivial evaluate quickly is not stuck: then
     * nothing is terminated (Runtime.terminateExecution with no script
     * running would end the page's next one instead). */
    json_t *p = json_pack("{s:s}", "expression", "0");
    int st = cdp_call(w->cdp, w->page->cdp_session, "Runtime.evaluate", p, NULL, mono_ms() + 300);
    json_decref(p);
    if (st != CDP_TIMEOUT)
        return;
    log_warn("session %s: the page's script is still running after the call timed out; "
             "terminating it",
             w->session_id);
    cdp_send(w->cdp, w->page->cdp_session, "Runtime.terminateExecution", NULL);
}

int pause_ms(struct session *w, long long ms)
{
    long long end = mono_ms() + ms;
    bool capped = w->call.deadline && w->call.deadline < end;
    if (capped)
        end = w->call.deadline;
    int st = cdp_wait(w->cdp, NULL, NULL, end);
    if (st == CDP_TIMEOUT && capped)
        return fail_call(w, TV_TIMEOUT, "Raise 'timeout'.", "the call's timeout passed");
    if (st != CDP_TIMEOUT && st != CDP_OK)
        return fail_cdp(w, st, "waiting");
    return 0;
}

/* --- a page a JavaScript dialog blocks: how its calls end --- */

int dialog_blocks(void *ud)
{
    struct session *w = ud;
    /* Between calls events must keep flowing (the idle loop pumps them). */
    return (w->page->dialog.open || tabs_other_dialog(w, NULL, NULL) >= 0) && !w->page->dialog.answering &&
           w->call.id != 0;
}

int dialog_fail(struct session *w)
{
    const char *type, *message;
    int other = w->page->dialog.open ? -1 : tabs_other_dialog(w, &type, &message);
    if ((!w->page->dialog.open && other < 0) || w->call.cancelled || w->shutdown)
        return 0;
    if (other >= 0) {
        fail_call(w, TV_MODAL_STATE,
                  "Answer it with browser_handle_dialog (it selects that tab), then retry.",
                  "tab %d shows a %s dialog (\"%.300s\"); the session's pages are blocked until "
                  "it is answered",
                  other, type, message);
        return 1;
    }
    fail_call(w, TV_MODAL_STATE,
              "Answer it with browser_handle_dialog (accept: true or false; promptText for a "
              "prompt), then retry.",
              "a %s dialog is open (\"%.300s\"); the page is blocked until it is answered",
              w->page->dialog.type, w->page->dialog.message);
    return 1;
}

bool dialog_cut_input(struct session *w, const char *method)
{
    /* The input reached the page (its handler opened the dialog, which is why
     * Chromium holds the answer), so for the action this is success. */
    return w->page->dialog.open && !w->call.cancelled && !w->shutdown && strncmp(method, "Input.", 6) == 0;
}

/* Read an {error:{code,message,retry}} object from the page into w->call.err.
 * Returns 1 when the page says the condition may pass later. */
int page_error(struct session *w, json_t *err, const char *element)
{
    const char *code = json_string_value(json_object_get(err, "code"));
    const char *msg = json_string_value(json_object_get(err, "message"));
    enum tv_err e = tv_err_from_code(code ? code : "");
    const char *hint = NULL;
    if (e == TV_STALE_REF || e == TV_ELEMENT_NOT_FOUND)
        hint = "Take a new browser_snapshot and use a ref from it.";
    else if (e == TV_ELEMENT_AMBIGUOUS)
        hint = "Use one of the candidate refs, or a more specific selector.";
    char full[900];
    snprintf(full, sizeof full, "%s%s%s", element ? element : "", element ? ": " : "",
             msg ? msg : "element not actionable");
    json_t *cands = json_object_get(err, "candidates");
    if (json_is_array(cands) && json_array_size(cands)) {
        char *c = json_dumps(cands, JSON_COMPACT);
        size_t n = strlen(full);
        snprintf(full + n, sizeof full - n, "; candidates: %.600s", c ? c : "");
        free(c);
    }
    fail_call(w, e ? e : TV_BROWSER_ERROR, hint, "%s", full);
    return json_is_true(json_object_get(err, "retry"));
}
