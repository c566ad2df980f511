/* vision.c - the mouse by viewport coordinates (CSS pixels), for agents
 * that work from screenshots: move, click, drag, press, release and wheel,
 * as trusted Input.dispatchMouseEvent. The mouse's position and held
 * buttons carry over between calls (press here, move, release there), as a
 * real mouse's do. */
#include <stdio.h>
#include <string.h>

#include "worker.h"

/* Moves between a drag's start and end, so pages that start a drag after a
 * few pixels, and mouseover on the way, see it. */
#define DRAG_STEPS 5

static struct {
    double x, y;
    int buttons; /* DOM MouseEvent.buttons mask held down */
} mouse;

/* The button CDP reports with a move: the first one held, else none. */
static const char *held_button(void)
{
    return mouse.buttons & 1   ? "left"
           : mouse.buttons & 2 ? "right"
           : mouse.buttons & 4 ? "middle"
                               : "none";
}

/* (x, y) must be inside the viewport: input outside it reaches no element,
 * which would look like a success that did nothing. */
static int check_point(struct session *w, double x, double y)
{
    if (x < w->viewport_w && y < w->viewport_h)
        return 0;
    return fail_call(w, TV_INVALID_PARAMETERS,
                     "Coordinates are CSS pixels of the viewport; take a screenshot to see it, or "
                     "scroll with browser_mouse_wheel.",
                     "(%g, %g) is outside the %dx%d viewport", x, y, w->viewport_w, w->viewport_h);
}

static int move(struct session *w, double x, double y)
{
    if (input_mouse(w, NULL, "mouseMoved", x, y, held_button(), mouse.buttons, 0, 0) < 0)
        return -1;
    mouse.x = x;
    mouse.y = y;
    return 0;
}

static int press(struct session *w, const char *button, int count)
{
    if (input_mouse(w, NULL, "mousePressed", mouse.x, mouse.y, button,
                    mouse.buttons | mouse_button_bit(button), count, 0) < 0)
        return -1;
    mouse.buttons |= mouse_button_bit(button);
    return 0;
}

static int release(struct session *w, const char *button, int count)
{
    if (input_mouse(w, NULL, "mouseReleased", mouse.x, mouse.y, button,
                    mouse.buttons & ~mouse_button_bit(button), count, 0) < 0)
        return -1;
    mouse.buttons &= ~mouse_button_bit(button);
    return 0;
}

/* Settle after the input, then the response: summary, position, snapshot. */
static json_t *finish(struct session *w, int rc, const char *summary)
{
    if (rc < 0 || settle(w) < 0)
        return tool_fail(w);
    return page_action_result(w, summary, json_pack("{s:f, s:f}", "x", mouse.x, "y", mouse.y));
}

json_t *tool_mouse_move_xy(struct session *w, json_t *args)
{
    double x = json_number_value(json_object_get(args, "x"));
    double y = json_number_value(json_object_get(args, "y"));
    if (check_point(w, x, y) < 0)
        return tool_fail(w);
    nav_reset(w);
    char line[120];
    snprintf(line, sizeof line, "Moved the mouse to (%g, %g)", x, y);
    return finish(w, move(w, x, y), line);
}

json_t *tool_mouse_click_xy(struct session *w, json_t *args)
{
    double x = json_number_value(json_object_get(args, "x"));
    double y = json_number_value(json_object_get(args, "y"));
    const char *button = arg_str(args, "button", "left");
    int count = (int)arg_int(args, "clickCount", 1);
    long long delay = arg_int(args, "delay", 0);
    if (check_point(w, x, y) < 0)
        return tool_fail(w);
    nav_reset(w);
    int rc = move(w, x, y);
    if (rc == 0)
        rc = mouse_clicks(w, NULL, x, y, button, count, delay, 0, mouse.buttons);
    char line[120];
    snprintf(line, sizeof line, "%s at (%g, %g)%s",
             count == 2   ? "Double-clicked"
             : count == 3 ? "Triple-clicked"
                          : "Clicked",
             x, y,
             strcmp(button, "left") ? (!strcmp(button, "right") ? " (right)" : " (middle)") : "");
    return finish(w, rc, line);
}

json_t *tool_mouse_drag_xy(struct session *w, json_t *args)
{
    double x0 = json_number_value(json_object_get(args, "startX"));
    double y0 = json_number_value(json_object_get(args, "startY"));
    double x1 = json_number_value(json_object_get(args, "endX"));
    double y1 = json_number_value(json_object_get(args, "endY"));
    if (check_point(w, x0, y0) < 0 || check_point(w, x1, y1) < 0)
        return tool_fail(w);
    nav_reset(w);
    int rc = move(w, x0, y0);
    if (rc == 0)
        rc = press(w, "left", 1);
    for (int i = 1; rc == 0 && i <= DRAG_STEPS; i++)
        rc = move(w, x0 + (x1 - x0) * i / DRAG_STEPS, y0 + (y1 - y0) * i / DRAG_STEPS);
    /* Release even after a failed move, so no button stays held. */
    if (mouse.buttons & 1) {
        int r2 = release(w, "left", 1);
        if (rc == 0)
            rc = r2;
    }
    char line[160];
    snprintf(line, sizeof line, "Dragged from (%g, %g) to (%g, %g)", x0, y0, x1, y1);
    return finish(w, rc, line);
}

/* browser_mouse_down / _up: press or release a button where the mouse is. */
static json_t *mouse_button(struct session *w, json_t *args, bool down)
{
    const char *button = arg_str(args, "button", "left");
    nav_reset(w);
    char line[120];
    snprintf(line, sizeof line, "%s the %s button at (%g, %g)", down ? "Pressed" : "Released",
             button, mouse.x, mouse.y);
    return finish(w, down ? press(w, button, 1) : release(w, button, 1), line);
}

json_t *tool_mouse_down(struct session *w, json_t *args)
{
    return mouse_button(w, args, true);
}

json_t *tool_mouse_up(struct session *w, json_t *args)
{
    return mouse_button(w, args, false);
}

json_t *tool_mouse_wheel(struct session *w, json_t *args)
{
    double dx = json_number_value(json_object_get(args, "deltaX"));
    double dy = json_number_value(json_object_get(args, "deltaY"));
    nav_reset(w);
    int rc = page_call(w, "Input.dispatchMouseEvent",
                       json_pack("{s:s, s:f, s:f, s:f, s:f, s:s, s:i}", "type", "mouseWheel", "x",
                                 mouse.x, "y", mouse.y, "deltaX", dx, "deltaY", dy, "button",
                                 held_button(), "buttons", mouse.buttons),
                       NULL);
    char line[160];
    snprintf(line, sizeof line, "Scrolled the wheel by (%g, %g) at (%g, %g)", dx, dy, mouse.x,
             mouse.y);
    return finish(w, rc, line);
}
