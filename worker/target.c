/*
 * target.c - from a `target` argument to an element the page says is
 * actionable: resolution and actionability run in the injected engine;
 * this side retries until the call's deadline.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "worker.h"

/* Read an {error:{code,message,retry}} object from the page into w->err.
 * Returns 1 when the page says the condition may pass later. */
int page_error(struct wctx *w, json_t *err, const char *element)
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

/* Poll fn(target, opts) in the page until it succeeds, fails for good, or the
 * deadline passes. The page side checks stability over two animation
 * frames, so each attempt already waits for the page; between attempts we
 * back off from 10 to 100 ms. Returns the success value or NULL. */
json_t *until_actionable(struct wctx *w, const char *fn, const char *target, json_t *opts,
                         const char *element)
{
    long long delay_ms = 10;
    for (;;) {
        json_t *v;
        if (util_call(w, fn, json_pack("[s,O]", target, opts), &v) < 0)
            return NULL;
        json_t *err = json_object_get(v, "error");
        if (!err)
            return v;
        int retry = page_error(w, err, element);
        json_decref(v);
        if (!retry)
            return NULL;
        if (mono_ms() + delay_ms >= w->deadline) {
            char last[1024];
            snprintf(last, sizeof last, "%s", w->errmsg);
            enum tv_err code = w->err;
            fail_call(w, code, "The element did not become actionable before the timeout.", "%s",
                      last);
            return NULL;
        }
        /* Wait on the browser connection rather than sleeping blind, so a
         * cancel still interrupts us. */
        int st = cdp_wait(w->cdp, NULL, NULL, mono_ms() + delay_ms);
        if (st == CDP_INTERRUPTED || st == CDP_CLOSED) {
            fail_call(w, st == CDP_CLOSED ? TV_BROWSER_CRASHED : TV_CANCELLED, NULL,
                      st == CDP_CLOSED ? "the connection to the browser was lost"
                                       : "the call was cancelled");
            return NULL;
        }
        if (delay_ms < 100)
            delay_ms *= 2;
    }
}
