/* pointer.c - browser_hover and browser_drag: trusted mouse input at the
 * points the engine says are actionable, so :hover menus open and both
 * mouse-event drags (jQuery UI, sortable lists) and HTML5 drag and drop
 * work. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "frames.h"
#include "worker.h"

/* Moves between the drag's start and end: enough for libraries that start
 * a drag after a few pixels and for dragenter/dragover on the way. */
#define DRAG_STEPS 6
/* How long a draggable element gets to start a native drag after the first
 * move; the page has no drag handler when it does not. */
#define NATIVE_DRAG_WAIT_MS 300

/* Where a drag's input goes: to the frame's own session, in its viewport,
 * when both ends are in the same out-of-process frame (why: frames.h,
 * struct input_point), else to the page ("" session), whose path may cross
 * frames. Only the page's session intercepts a native drag
 * (Input.setInterceptDrags on the frame's session never reported one),
 * wherever its events are then sent. */
struct drag {
    char session[sizeof((struct mouse_at *)0)->session];
    double x0, y0, x1, y1; /* in the session's viewport */
};

static int move_to(struct session *w, const struct drag *d, double x, double y, int buttons)
{
    return input_mouse(w, d->session, "mouseMoved", x, y, buttons ? "left" : "none", buttons, 0, 0);
}

static int button(struct session *w, const struct drag *d, const char *type, double x, double y)
{
    return input_mouse(w, d->session, type, x, y, "left", strcmp(type, "mousePressed") == 0, 1, 0);
}

json_t *tool_hover(struct session *w, json_t *args)
{
    json_t *opts = json_pack("{s:b}", "force", arg_bool(args, "force", false));
    json_t *pt = until_actionable(w, "actionPoint", arg_str(args, "target", ""), opts,
                                  arg_str(args, "element", NULL));
    json_decref(opts);
    if (!pt)
        return tool_fail(w);
    struct mouse_at at;
    mouse_at_point(w, pt, &at);
    nav_reset(w);
    if (input_mouse(w, at.session, "mouseMoved", at.x, at.y, "none", 0, 0, 0) < 0 ||
        settle(w) < 0) {
        json_decref(pt);
        return tool_fail(w);
    }
    json_t *res = action_result(w, "Hovered", pt);
    json_decref(pt);
    return res;
}

/* HTML5 drag and drop: with drags intercepted, Chromium reports a native
 * drag the page started (Input.dragIntercepted) instead of running its own
 * drag loop, which headless mouse events cannot drive; the drop is then
 * sent as drag events with the drag's data. */
static json_t *drag_data; /* from the last Input.dragIntercepted, or NULL */

void drag_on_event(struct session *w, const char *session, const char *method, json_t *params)
{
    (void)w;
    (void)session;
    if (strcmp(method, "Input.dragIntercepted") == 0) {
        json_decref(drag_data);
        drag_data = json_incref(json_object_get(params, "data"));
    }
}

static int drag_event(struct session *w, const struct drag *d, const char *type, double x, double y)
{
    return session_call(
        w, d->session, "Input.dispatchDragEvent",
        json_pack("{s:s, s:f, s:f, s:O}", "type", type, "x", x, "y", y, "data", drag_data), NULL);
}

static int drag_started(void *ud)
{
    (void)ud;
    return drag_data != NULL;
}

/* Whether a mouse drag from the element may start a native drag: it or an
 * ancestor is draggable (links and images are by default). */
static const char DRAGGABLE_JS[] =
    "(el) => ({html5: !!(el.closest('[draggable=\"true\"]') || el.closest('a[href]') ||\n"
    "    el.closest('img'))})";

/* Move to d's start and press the button there. */
static int drag_press(struct session *w, const struct drag *d)
{
    if (move_to(w, d, d->x0, d->y0, 0) < 0)
        return -1;
    return button(w, d, "mousePressed", d->x0, d->y0);
}

/* The moves of a direct drag, as Playwright's dragTo makes them: a few
 * pixels toward the end (past the threshold where libraries start a drag),
 * then the end, then a little further on the same way (a library that
 * places the item on one move shows it over its target on the next, and
 * jQuery UI's sortable moves an item past another only once the pointer
 * is beyond its middle, going that way). Crossing the items between, as a path of
 * DRAG_STEPS moves does, reorders a sortable grid on the way (issue 37,
 * item 5); a page that needs the path gets it when the direct drag changed
 * nothing (tool_drag). */
#define DRAG_NUDGE_PX 6.0
#define DRAG_PAST_PX 3.0
#define DIRECT_STEPS 3

/* Point i (1-based) of d's mouse path: direct, or DRAG_STEPS even steps. */
static void drag_point(const struct drag *d, bool direct, int i, double *x, double *y)
{
    if (!direct) {
        *x = d->x0 + (d->x1 - d->x0) * i / DRAG_STEPS;
        *y = d->y0 + (d->y1 - d->y0) * i / DRAG_STEPS;
        return;
    }
    double dx = d->x1 - d->x0, dy = d->y1 - d->y0, len = sqrt(dx * dx + dy * dy);
    if (i == 1 && len > DRAG_NUDGE_PX) {
        *x = d->x0 + dx * DRAG_NUDGE_PX / len;
        *y = d->y0 + dy * DRAG_NUDGE_PX / len;
        return;
    }
    double on = i == DIRECT_STEPS && len > DRAG_NUDGE_PX ? DRAG_PAST_PX / len : 0;
    *x = d->x1 + dx * on;
    *y = d->y1 + dy * on;
}

/* The mouse path of d with the button held (drag_press was done); html5:
 * the element may start a native drag, whose interception is then waited for
 * after the first move (it comes from the browser, not with the move's
 * answer). */
static int drag_path(struct session *w, const struct drag *d, bool html5, bool direct)
{
    bool native = false, entered = false;
    for (int i = 1; i <= (direct ? DIRECT_STEPS : DRAG_STEPS); i++) {
        double x, y;
        drag_point(d, direct, i, &x, &y);
        if (native) {
            if (drag_event(w, d, entered ? "dragOver" : "dragEnter", x, y) < 0)
                return -1;
            entered = true;
        } else if (move_to(w, d, x, y, 1) < 0) {
            return -1;
        }
        if (!native && html5 && i == 1) {
            long long end = mono_ms() + NATIVE_DRAG_WAIT_MS;
            int st = cdp_wait(w->cdp, drag_started, NULL,
                              w->call.deadline && w->call.deadline < end ? w->call.deadline : end);
            if (st != CDP_OK && st != CDP_TIMEOUT)
                return fail_cdp(w, st, "waiting for the drag to start");
        }
        if (!native && drag_data)
            native = true;
    }
    if (native) {
        if ((!entered && drag_event(w, d, "dragEnter", d->x1, d->y1) < 0) ||
            drag_event(w, d, "dragOver", d->x1, d->y1) < 0 ||
            drag_event(w, d, "drop", d->x1, d->y1) < 0)
            return -1;
        return button(w, d, "mouseReleased", d->x1, d->y1);
    }
    /* Released where the pointer last moved to. */
    double x, y;
    drag_point(d, direct, direct ? DIRECT_STEPS : DRAG_STEPS, &x, &y);
    return button(w, d, "mouseReleased", x, y);
}

/* Where the drag from point a to point b runs (struct drag); a and b are
 * until_actionable's points. page_only: on the page's session, in its
 * viewport, even when both ends are in one out-of-process frame. */
static void drag_between(struct session *w, json_t *a, json_t *b, bool page_only, struct drag *d)
{
    struct mouse_at from, to;
    mouse_at_point(w, a, &from);
    mouse_at_point(w, b, &to);
    if (!page_only && from.session[0] && strcmp(from.session, to.session) == 0) {
        memcpy(d->session, from.session, sizeof d->session);
        d->x0 = from.x, d->y0 = from.y, d->x1 = to.x, d->y1 = to.y;
        return;
    }
    d->session[0] = 0;
    d->x0 = json_number_value(json_object_get(a, "x"));
    d->y0 = json_number_value(json_object_get(a, "y"));
    d->x1 = json_number_value(json_object_get(b, "x"));
    d->y1 = json_number_value(json_object_get(b, "y"));
}

/* A fingerprint of what a drag can change in the element's document (and
 * its shadow root): the markup, and the values of form fields, which are
 * not in it. A drag after which neither end's fingerprint changed moved
 * nothing. */
static const char DRAG_PRINT_JS[] =
    "(el) => {\n"
    "  const doc = el.ownerDocument, root = el.getRootNode();\n"
    "  let s = doc.documentElement.outerHTML;\n"
    "  if (root !== doc) s += root.innerHTML;\n"
    "  for (const f of root.querySelectorAll('input, select, textarea')) s += '\\u0000' + "
    "f.value;\n"
    "  let h = 0x811c9dc5;\n"
    "  for (let i = 0; i < s.length; i++) { h ^= s.charCodeAt(i); h = Math.imul(h, 16777619); }\n"
    "  return (h >>> 0) + ':' + s.length;\n"
    "}";

/* The fingerprints of both ends' documents, joined (a new string the
 * caller frees), or NULL when an end cannot be read (gone: it changed). */
static char *drag_print(struct session *w, const char *from, const char *to)
{
    json_t *a = NULL, *b = NULL;
    char *out = NULL;
    if (element_eval(w, from, DRAG_PRINT_JS, NULL, &a) == 0 &&
        element_eval(w, to, DRAG_PRINT_JS, NULL, &b) == 0 && json_is_string(a) &&
        json_is_string(b) &&
        asprintf(&out, "%s/%s", json_string_value(a), json_string_value(b)) < 0)
        out = NULL;
    json_decref(a);
    json_decref(b);
    w->call.err = TV_OK; /* a failed read is an answer here, not the call's error */
    return out;
}

/* The start's point without scrolling, if it is still in view and
 * actionable within a short wait (the end's scrolling may have moved it),
 * else NULL. */
static json_t *start_in_view(struct session *w, const char *from, const char *element)
{
    long long saved = w->call.deadline, quick = mono_ms() + 300;
    if (!saved || quick < saved)
        w->call.deadline = quick;
    json_t *opts = json_pack("{s:b, s:b}", "force", false, "noScroll", true);
    json_t *pt = until_actionable(w, "actionPoint", from, opts, element);
    json_decref(opts);
    w->call.deadline = saved;
    w->call.err = TV_OK;
    return pt;
}

/* The first of the given argument names that is set. */
static const char *either(json_t *args, const char *a, const char *b)
{
    const char *s = arg_str(args, a, NULL);
    return s ? s : arg_str(args, b, NULL);
}

/* An HTML5 drag as its events: dragstart on the source (with a fresh
 * DataTransfer its handlers fill), then dragenter, dragover and, when the
 * target accepts (cancels dragover), drop on the target, and dragend. */
static const char DROP_JS[] = "function (target) {\n"
                              "  const dt = new DataTransfer();\n"
                              "  const at = (el) => { const r = el.getBoundingClientRect(); return "
                              "[r.left + r.width / 2, r.top + r.height / 2]; };\n"
                              "  const fire = (el, type) => { const [x, y] = at(el); return "
                              "el.dispatchEvent(new DragEvent(type,\n"
                              "    {bubbles: true, cancelable: true, composed: true, clientX: x, "
                              "clientY: y, dataTransfer: dt})); };\n"
                              "  if (!fire(this, 'dragstart')) return {started: false};\n"
                              "  fire(target, 'dragenter');\n"
                              "  const accepted = !fire(target, 'dragover');\n"
                              "  if (accepted) fire(target, 'drop');\n"
                              "  fire(this, 'dragend');\n"
                              "  return {started: true, dropped: accepted};\n"
                              "}";

/* Firefox: run DROP_JS from `from` to `to`, both in one frame's main world.
 * 0 or -1 with w->call.err set. */
static int drop_in_page(struct session *w, const char *from, const char *to)
{
    struct frame *f = frame_for_target(w, from);
    char src[256], dst[256];
    if (!f)
        return -1;
    if (frame_for_target(w, to) != f)
        return fail_call(w, TV_NOT_SUPPORTED, "Drag within one frame.",
                         "on Firefox an HTML5 drag from one frame into another is not supported");
    if (main_world_element(w, f, from, src, sizeof src) < 0 ||
        main_world_element(w, f, to, dst, sizeof dst) < 0)
        return -1;
    json_t *r = NULL;
    int rc = frame_cdp(w, f, "Runtime.callFunctionOn",
                       json_pack("{s:s, s:s, s:[{s:s}], s:b, s:b}", "functionDeclaration", DROP_JS,
                                 "objectId", src, "arguments", "objectId", dst, "returnByValue", 1,
                                 "userGesture", 1),
                       &r);
    json_decref(r);
    return rc;
}

json_t *tool_drag(struct session *w, json_t *args)
{
    const char *from = either(args, "startTarget", "startRef");
    const char *to = either(args, "endTarget", "endRef");
    if (!from || !to) {
        fail_call(w, TV_INVALID_PARAMETERS, "Pass startTarget and endTarget (refs or selectors).",
                  "missing %s", from ? "endTarget" : "startTarget");
        return tool_fail(w);
    }
    const char *from_el = arg_str(args, "startElement", NULL);
    const char *to_el = arg_str(args, "endElement", NULL);
    json_t *opts = json_pack("{s:b}", "force", false);
    json_t *a = until_actionable(w, "actionPoint", from, opts, from_el);
    json_t *b = a ? until_actionable(w, "actionPoint", to, opts, to_el) : NULL;
    if (!a || !b) {
        json_decref(opts);
        json_decref(a);
        return tool_fail(w);
    }
    /* Scrolling the end into view may have moved the start: read it again
     * where it is now. When it left the view, the two do not fit in it
     * together: the drag then presses on the start (scrolled back), brings
     * the end into view with the button held, and moves there, as a user
     * would with the wheel; its input goes to the page. */
    json_t *a_now = start_in_view(w, from, from_el);
    bool apart = a_now == NULL;
    json_decref(a);
    a = apart ? until_actionable(w, "actionPoint", from, opts, from_el) : a_now;
    if (!a) {
        json_decref(opts);
        json_decref(b);
        return tool_fail(w);
    }
    struct drag path;
    drag_between(w, a, b, apart, &path);
    json_t *d = until_element(w, from, DRAGGABLE_JS, NULL, from_el);
    bool html5 = d && json_is_true(json_object_get(d, "html5"));
    json_decref(d);
    if (!d) {
        json_decref(opts);
        json_decref(a);
        json_decref(b);
        return tool_fail(w);
    }
    char *before = drag_print(w, from, to);
    nav_reset(w);
    json_decref(drag_data);
    drag_data = NULL;
    /* Firefox starts no native drag from BiDi's input: an HTML5 drag there
     * is the drag events themselves, in the page (untrusted ones). A link or
     * an image is draggable by default, yet many libraries (jQuery UI,
     * dragula) follow the mouse on them and cancel the native drag: when the
     * drag events changed nothing, the mouse drag follows, which a page
     * without drag handlers takes as a press, moves and a release. */
    int rc = 0;
    bool done = false;
    if (w->firefox && html5) {
        rc = drop_in_page(w, from, to);
        if (rc == 0 && (rc = settle(w)) == 0) {
            char *mid = before ? drag_print(w, from, to) : NULL;
            done = !before || !mid || strcmp(before, mid) != 0;
            free(mid);
        }
        html5 = false; /* no native drag to wait for on the mouse path */
    }
    if (rc == 0 && !done)
        rc = page_call(w, "Input.setInterceptDrags", json_pack("{s:b}", "enabled", 1), NULL);
    if (rc == 0 && !done)
        rc = drag_press(w, &path);
    if (rc == 0 && apart && !done) {
        json_t *b_held = until_actionable(w, "actionPoint", to, opts, to_el);
        if (b_held) {
            json_decref(b);
            b = b_held;
            path.x1 = json_number_value(json_object_get(b, "x"));
            path.y1 = json_number_value(json_object_get(b, "y"));
        } else {
            rc = -1;
            /* Let go where it was pressed, keeping the end's error. */
            enum tv_err e = w->call.err;
            button(w, &path, "mouseReleased", path.x0, path.y0);
            w->call.err = e;
        }
    }
    json_decref(opts);
    if (rc == 0 && !done)
        rc = drag_path(w, &path, html5, true);
    if (rc == 0 && !done && before && (rc = settle(w)) == 0) {
        /* Nothing moved: a page that follows the whole way (a drop zone
         * that needs the pointer to enter it) gets the path of moves. */
        char *mid = drag_print(w, from, to);
        if (mid && strcmp(before, mid) == 0) {
            json_decref(drag_data);
            drag_data = NULL;
            rc = drag_press(w, &path);
            if (rc == 0)
                rc = drag_path(w, &path, html5, false);
        }
        free(mid);
    }
    /* Best effort: a failed drag must still leave drags to Chromium. */
    json_t *off = json_pack("{s:b}", "enabled", 0);
    cdp_send(w->cdp, w->page->cdp_session, "Input.setInterceptDrags", off);
    json_decref(off);
    json_decref(drag_data);
    drag_data = NULL;
    if (rc < 0 || settle(w) < 0) {
        free(before);
        json_decref(a);
        json_decref(b);
        return tool_fail(w);
    }
    char *after = before ? drag_print(w, from, to) : NULL;
    bool unchanged = before && after && strcmp(before, after) == 0;
    free(before);
    free(after);
    char from_s[400], to_s[400], line[1100];
    describe_element(a, from_s, sizeof from_s);
    describe_element(b, to_s, sizeof to_s);
    snprintf(line, sizeof line, "Dragged %s to %s%s", from_s, to_s,
             unchanged ? "\nWarning: the drag changed nothing on the page (no element moved, "
                         "no value changed): the page may take the drag from another handle, or "
                         "not at all."
                       : "");
    json_t *out = json_object();
    json_object_set_new(out, "changed", json_boolean(!unchanged));
    if (json_object_get(a, "ref"))
        json_object_set(out, "ref", json_object_get(a, "ref"));
    if (json_object_get(b, "ref"))
        json_object_set(out, "endRef", json_object_get(b, "ref"));
    json_decref(a);
    json_decref(b);
    return page_action_result(w, line, out);
}
