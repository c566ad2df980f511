/* input.c - browser_click and browser_type: resolve the target, wait until
 * it is actionable (retrying until the deadline), then trusted CDP input. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "log.h"
#include "worker.h"

/* Read an {error:{code,message,retry}} object from the page into w->err.
 * Returns 1 when the page says the condition may pass later. */
static int page_error(struct wctx *w, json_t *err, const char *element)
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
static json_t *until_actionable(struct wctx *w, const char *fn, const char *target, json_t *opts,
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

static int modifiers_mask(json_t *args)
{
    int mask = 0;
    size_t i;
    json_t *m;
    json_array_foreach(json_object_get(args, "modifiers"), i, m)
    {
        const char *s = json_string_value(m);
        if (!s)
            continue;
        if (!strcmp(s, "Alt"))
            mask |= 1;
        else if (!strcmp(s, "Control") || !strcmp(s, "ControlOrMeta"))
            mask |= 2;
        else if (!strcmp(s, "Meta"))
            mask |= 4;
        else if (!strcmp(s, "Shift"))
            mask |= 8;
    }
    return mask;
}

static int mouse(struct wctx *w, const char *type, double x, double y, const char *button,
                 int count, int mods)
{
    return page_call(w, "Input.dispatchMouseEvent",
                     json_pack("{s:s, s:f, s:f, s:s, s:i, s:i}", "type", type, "x", x, "y", y,
                               "button", button, "clickCount", count, "modifiers", mods),
                     NULL);
}

static json_t *action_result(struct wctx *w, const char *verb, json_t *target_info)
{
    const char *ref = json_string_value(json_object_get(target_info, "ref"));
    const char *role = json_string_value(json_object_get(target_info, "role"));
    const char *name = json_string_value(json_object_get(target_info, "name"));
    page_refresh_info(w);
    json_t *out = json_object();
    if (ref)
        json_object_set_new(out, "ref", json_string(ref));
    add_page(w, out);
    char text[3000];
    snprintf(text, sizeof text, "%s %s \"%.200s\"%s%s%s\nPage URL: %s\nPage Title: %s", verb,
             role ? role : "element", name ? name : "", ref ? " [ref=" : "", ref ? ref : "",
             ref ? "]" : "", w->url, w->title);
    return tool_ok(w, text, out);
}

json_t *tool_click(struct wctx *w, json_t *args)
{
    const char *target = arg_str(args, "target", "");
    const char *element = arg_str(args, "element", NULL);
    const char *button = arg_str(args, "button", "left");
    int count = (int)arg_int(args, "clickCount", arg_bool(args, "doubleClick", false) ? 2 : 1);
    int mods = modifiers_mask(args);
    json_t *opts = json_pack("{s:b}", "force", arg_bool(args, "force", false));
    json_t *pt = until_actionable(w, "actionPoint", target, opts, element);
    json_decref(opts);
    if (!pt)
        return tool_fail(w);
    double x = json_number_value(json_object_get(pt, "x"));
    double y = json_number_value(json_object_get(pt, "y"));
    nav_reset(w);
    int rc = mouse(w, "mouseMoved", x, y, "none", 0, mods);
    for (int i = 1; rc == 0 && i <= count; i++) {
        rc = mouse(w, "mousePressed", x, y, button, i, mods);
        if (rc == 0)
            rc = mouse(w, "mouseReleased", x, y, button, i, mods);
    }
    if (rc < 0 || settle(w) < 0) {
        json_decref(pt);
        return tool_fail(w);
    }
    json_t *res = action_result(w, count == 2 ? "Double-clicked" : "Clicked", pt);
    json_decref(pt);
    return res;
}

static int press_enter(struct wctx *w)
{
    if (page_call(w, "Input.dispatchKeyEvent",
                  json_pack("{s:s, s:s, s:s, s:i, s:s}", "type", "keyDown", "key", "Enter", "code",
                            "Enter", "windowsVirtualKeyCode", 13, "text", "\r"),
                  NULL) < 0)
        return -1;
    return page_call(w, "Input.dispatchKeyEvent",
                     json_pack("{s:s, s:s, s:s, s:i}", "type", "keyUp", "key", "Enter", "code",
                               "Enter", "windowsVirtualKeyCode", 13),
                     NULL);
}

/* Type one character at a time as key events, so key handlers run. */
static int type_slowly(struct wctx *w, const char *text)
{
    const unsigned char *p = (const unsigned char *)text;
    while (*p) {
        size_t n = *p < 0x80 ? 1 : *p < 0xe0 ? 2 : *p < 0xf0 ? 3 : 4;
        char ch[5] = {0};
        for (size_t i = 0; i < n && p[i]; i++)
            ch[i] = (char)p[i];
        p += strlen(ch);
        if (ch[0] == '\n') {
            if (press_enter(w) < 0)
                return -1;
            continue;
        }
        if (page_call(w, "Input.dispatchKeyEvent",
                      json_pack("{s:s, s:s, s:s}", "type", "keyDown", "key", ch, "text", ch),
                      NULL) < 0 ||
            page_call(w, "Input.dispatchKeyEvent",
                      json_pack("{s:s, s:s}", "type", "keyUp", "key", ch), NULL) < 0)
            return -1;
    }
    return 0;
}

json_t *tool_type(struct wctx *w, json_t *args)
{
    const char *target = arg_str(args, "target", "");
    const char *element = arg_str(args, "element", NULL);
    const char *text = arg_str(args, "text", "");
    bool clear = arg_bool(args, "clear", true);
    json_t *opts = json_pack("{s:b}", "clear", clear);
    json_t *info = until_actionable(w, "prepareTyping", target, opts, element);
    json_decref(opts);
    if (!info)
        return tool_fail(w);
    nav_reset(w);
    int rc = 0;
    if (clear && !*text)
        rc = page_call(w, "Input.dispatchKeyEvent",
                       json_pack("{s:s, s:s, s:s, s:i}", "type", "keyDown", "key", "Delete", "code",
                                 "Delete", "windowsVirtualKeyCode", 46),
                       NULL);
    else if (arg_bool(args, "slowly", false))
        rc = type_slowly(w, text);
    else if (*text)
        rc = page_call(w, "Input.insertText", json_pack("{s:s}", "text", text), NULL);
    if (rc == 0 && arg_bool(args, "submit", false))
        rc = press_enter(w);
    if (rc < 0 || settle(w) < 0) {
        json_decref(info);
        return tool_fail(w);
    }
    json_t *res = action_result(w, "Typed into", info);
    json_decref(info);
    return res;
}
