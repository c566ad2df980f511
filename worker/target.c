/*
 * target.c - from a `target` argument to an element the page says is
 * actionable: resolution and actionability run in the injected engine of
 * the target's frame (a ref f<K>e<N> names frame K); this side retries until
 * the call's deadline and moves points into the top page's viewport.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "frames.h"
#include "log.h"
#include "worker.h"

/* A point {x, y} the engine of frame f returned is in f's viewport: move it
 * into the top page's (frames.c checks each owner iframe is hit too), and
 * when mouse input for it goes to an out-of-process frame's own session
 * (frames.h, struct input_point) add that frame as "ik" and the point in
 * its viewport as "ix", "iy" (read by mouse_at_point). 0 done, 1 retry, -1
 * failed with w->call.err set. */
int point_to_top(struct session *w, struct frame *f, json_t *v, const char *element)
{
    json_t *jx = json_object_get(v, "x"), *jy = json_object_get(v, "y");
    if (f->k == 0 || !json_is_number(jx) || !json_is_number(jy))
        return 0;
    double x = json_number_value(jx), y = json_number_value(jy);
    struct input_point in;
    int rc = frame_to_top(w, f, &x, &y, &in);
    if (rc != 0) {
        if (element) {
            char msg[sizeof w->call.errmsg];
            snprintf(msg, sizeof msg, "%s", w->call.errmsg);
            snprintf(w->call.errmsg, sizeof w->call.errmsg, "%s: %s", element, msg);
        }
        return rc;
    }
    json_object_set_new(v, "x", json_real(x));
    json_object_set_new(v, "y", json_real(y));
    if (in.k) {
        json_object_set_new(v, "ik", json_integer(in.k));
        json_object_set_new(v, "ix", json_real(in.x));
        json_object_set_new(v, "iy", json_real(in.y));
    }
    return 0;
}

json_t *retry_until(struct session *w, retry_attempt_fn attempt, void *ud, const char *hint)
{
    long long delay_ms = 10;
    /* Why the last attempt did not pass: when the deadline then cuts an
     * attempt or the pause short, that is the answer, not a bare TIMEOUT. */
    enum tv_err last_code = TV_OK;
    char last[sizeof w->call.errmsg] = "";
    for (int n = 0;; n++) {
        json_t *v = NULL;
        int r = attempt(w, ud, &v, n);
        if (r > 0)
            return v;
        if (r < 0) {
            if (w->call.err == TV_TIMEOUT && last_code != TV_OK)
                break;
            return NULL;
        }
        last_code = w->call.err;
        memcpy(last, w->call.errmsg, sizeof last);
        if (mono_ms() + delay_ms >= w->call.deadline)
            break;
        /* Waits on the browser connection, so a cancel or a dialog ends it. */
        if (pause_ms(w, delay_ms) < 0) {
            if (w->call.err == TV_TIMEOUT)
                break;
            return NULL;
        }
        if (delay_ms < 100)
            delay_ms *= 2;
    }
    fail_call(w, last_code, hint, "%s", last);
    return NULL;
}

struct actionable_try {
    const char *fn, *target, *element;
    json_t *opts;
};

/* One go of the engine's fn on the target, with the point mapped to the
 * top page; the frame is looked up each time (it may go away meanwhile). */
static int try_actionable(struct session *w, void *ud, json_t **out, int n)
{
    struct actionable_try *a = ud;
    struct frame *f = frame_for_target(w, a->target);
    if (!f || (f->k && n == 0 && frame_reveal(w, f) < 0))
        return -1;
    json_t *v;
    if (frame_call(w, f, a->fn, json_pack("[s,O]", a->target, a->opts), &v) < 0)
        return -1;
    int retry;
    if (!json_object_get(v, "error")) {
        retry = point_to_top(w, f, v, a->element);
        if (retry == 0) {
            *out = v;
            return 1;
        }
    } else {
        retry = page_error(w, json_object_get(v, "error"), a->element);
    }
    json_decref(v);
    return retry > 0 ? 0 : -1;
}

/* The page side checks stability over two animation frames, so each
 * attempt already waits for the page. */
json_t *until_actionable(struct session *w, const char *fn, const char *target, json_t *opts,
                         const char *element)
{
    struct actionable_try a = {.fn = fn, .target = target, .element = element, .opts = opts};
    json_t *v = retry_until(w, try_actionable, &a,
                            "The element did not become actionable before the timeout.");
    if (v && json_is_false(json_object_get(v, "focused")))
        page_take_focus(w);
    return v;
}

void page_focus_for_keys(struct session *w)
{
    if (!w->firefox)
        return;
    json_t *focused = NULL;
    if (util_eval(w, "document.hasFocus()", &focused) == 0 && json_is_false(focused))
        page_take_focus(w);
    json_decref(focused);
    w->call.err = TV_OK;
    w->call.errmsg[0] = w->call.errhint[0] = 0;
}

void page_take_focus(struct session *w)
{
    /* Firefox gives focus to one window of the browser at a time: a
     * session's page that does not have it gets no focus events, and
     * widgets that open on focus stay shut (issue 37, item 6). Its window
     * is made the active one before input; best effort. On Chromium every
     * page is focused (focus emulation). */
    if (!w->firefox)
        return;
    if (page_call(w, "Page.bringToFront", json_object(), NULL) < 0) {
        /* The action goes on without: no error of the call. */
        log_debug("could not give the page focus: %s", w->call.errmsg);
        w->call.err = TV_OK;
        w->call.errmsg[0] = w->call.errhint[0] = 0;
    }
}
