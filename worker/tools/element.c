/* element.c - what the new tools share: running a JavaScript check or
 * change on a target's element until it holds (like until_actionable, but
 * with the tool's own function), and trusted mouse input. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "frames.h"
#include "worker.h"

int element_eval(struct session *w, const char *target, const char *js, json_t *arg, json_t **value)
{
    struct frame *f = frame_for_target(w, target);
    if (!f)
        return -1;
    json_t *ts = json_string(target);
    char *tj = json_dumps(ts, JSON_ENCODE_ANY);
    json_decref(ts);
    char *aj = json_dumps(arg ? arg : json_null(), JSON_ENCODE_ANY | JSON_COMPACT);
    if (!tj || !aj) {
        free(tj);
        free(aj);
        return fail_call(w, TV_INVALID_PARAMETERS, NULL, "arguments cannot be encoded");
    }
    struct sb src = {0};
    sb_printf(&src,
              "(async () => { const el = __tabvisor.resolve(%s);\n"
              "  if (!el || el.error) return el || {error: {code: 'ELEMENT_NOT_FOUND', message: "
              "'no element'}};\n"
              "  return await (%s)(el, %s); })()",
              tj, js, aj);
    free(tj);
    free(aj);
    int rc = frame_eval(w, f, src.p, value);
    free(src.p);
    return rc;
}

struct element_try {
    const char *target, *js, *element;
    json_t *arg;
};

static int try_element(struct session *w, void *ud, json_t **out, int n)
{
    struct element_try *e = ud;
    json_t *v = NULL;
    if (element_eval(w, e->target, e->js, e->arg, &v) < 0) {
        json_decref(v);
        return -1;
    }
    json_t *err = json_object_get(v, "error");
    if (!err) {
        *out = v;
        return 1;
    }
    int retry = page_error(w, err, e->element);
    json_decref(v);
    return retry ? 0 : -1;
}

json_t *until_element(struct session *w, const char *target, const char *js, json_t *arg,
                      const char *element)
{
    struct element_try e = {.target = target, .js = js, .element = element, .arg = arg};
    return retry_until(w, try_element, &e, "The element did not get there before the timeout.");
}

void mouse_at_point(struct session *w, json_t *pt, struct mouse_at *at)
{
    at->session[0] = 0;
    at->x = json_number_value(json_object_get(pt, "x"));
    at->y = json_number_value(json_object_get(pt, "y"));
    json_t *ik = json_object_get(pt, "ik");
    struct frame *f = json_is_integer(ik) ? frame_by_k(w, (int)json_integer_value(ik)) : NULL;
    if (!f || !f->oopif)
        return;
    snprintf(at->session, sizeof at->session, "%s", f->session);
    at->x = json_number_value(json_object_get(pt, "ix"));
    at->y = json_number_value(json_object_get(pt, "iy"));
}

int input_mouse(struct session *w, const char *session, const char *type, double x, double y,
                const char *button, int buttons, int count, int modifiers)
{
    return session_call(w, session, "Input.dispatchMouseEvent",
                        json_pack("{s:s, s:f, s:f, s:s, s:i, s:i, s:i}", "type", type, "x", x, "y",
                                  y, "button", button, "buttons", buttons, "clickCount", count,
                                  "modifiers", modifiers),
                        NULL);
}

int mouse_button_bit(const char *button)
{
    return !strcmp(button, "right") ? 2 : !strcmp(button, "middle") ? 4 : 1;
}

int mouse_clicks(struct session *w, const char *session, double x, double y, const char *button,
                 int count, long long delay_ms, int modifiers, int held)
{
    if (w->firefox && count > 1)
        return session_call(w, session, "Input.dispatchMouseEvent",
                            json_pack("{s:s, s:f, s:f, s:s, s:i, s:I, s:i}", "type", "mouseClicks",
                                      "x", x, "y", y, "button", button, "clickCount", count,
                                      "delay", (json_int_t)delay_ms, "modifiers", modifiers),
                            NULL);
    int rc = 0;
    for (int i = 1; rc == 0 && i <= count; i++) {
        rc = input_mouse(w, session, "mousePressed", x, y, button, held | mouse_button_bit(button),
                         i, modifiers);
        if (rc == 0 && delay_ms > 0)
            rc = pause_ms(w, delay_ms);
        if (rc == 0)
            rc = input_mouse(w, session, "mouseReleased", x, y, button,
                             held & ~mouse_button_bit(button), i, modifiers);
    }
    return rc;
}

int mouse_click_at(struct session *w, const struct mouse_at *at)
{
    if (input_mouse(w, at->session, "mouseMoved", at->x, at->y, "none", 0, 0, 0) < 0 ||
        input_mouse(w, at->session, "mousePressed", at->x, at->y, "left", 1, 1, 0) < 0)
        return -1;
    return input_mouse(w, at->session, "mouseReleased", at->x, at->y, "left", 0, 1, 0);
}
