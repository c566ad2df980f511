/* input.c - browser_click and browser_type: resolve the target, wait until
 * it is actionable (retrying until the deadline), then trusted CDP input. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "log.h"
#include "frames.h"
#include "worker.h"

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

json_t *tool_click(struct session *w, json_t *args)
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
    struct mouse_at at;
    mouse_at_point(w, pt, &at);
    nav_reset(w);
    /* Chromium holds a mouse move for the next animation frame, but a press
     * queued behind it flushes it at once: so the move is sent without
     * waiting for its answer, and the press's answer covers both. */
    json_t *move = json_pack("{s:s, s:f, s:f, s:s, s:i, s:i}", "type", "mouseMoved", "x", at.x, "y",
                             at.y, "button", "none", "clickCount", 0, "modifiers", mods);
    int st = cdp_send(w->cdp, at.session[0] ? at.session : w->page->cdp_session,
                      "Input.dispatchMouseEvent", move);
    json_decref(move);
    int rc = st == CDP_OK ? 0 : fail_cdp(w, st, "Input.dispatchMouseEvent");
    if (rc == 0)
        rc = mouse_clicks(w, at.session, at.x, at.y, button, count, 0, mods, 0);
    if (rc < 0 || settle(w) < 0) {
        json_decref(pt);
        return tool_fail(w);
    }
    struct frame *cf = frame_for_target(w, target);
    focus_in_frame(w, cf ? cf->k : 0);
    json_t *res = action_result(w, count == 2 ? "Double-clicked" : "Clicked", pt);
    json_decref(pt);
    return res;
}

static int press_enter(struct session *w)
{
    if (key_call(w, "Input.dispatchKeyEvent",
                 json_pack("{s:s, s:s, s:s, s:i, s:s}", "type", "keyDown", "key", "Enter", "code",
                           "Enter", "windowsVirtualKeyCode", 13, "text", "\r")) < 0)
        return -1;
    return key_call(w, "Input.dispatchKeyEvent",
                    json_pack("{s:s, s:s, s:s, s:i}", "type", "keyUp", "key", "Enter", "code",
                              "Enter", "windowsVirtualKeyCode", 13));
}

/* Type one character at a time as key events, so key handlers run. */
static int type_slowly(struct session *w, const char *text)
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
        if (key_call(w, "Input.dispatchKeyEvent",
                     json_pack("{s:s, s:s, s:s}", "type", "keyDown", "key", ch, "text", ch)) < 0 ||
            key_call(w, "Input.dispatchKeyEvent",
                     json_pack("{s:s, s:s}", "type", "keyUp", "key", ch)) < 0)
            return -1;
    }
    return 0;
}

/* Whether the field took what was typed: its value (an editing host's
 * text) holds the typed letters and digits in order, so a page that formats
 * input ("5551234567" shown as "(555) 123-4567") passes. When it does not,
 * what the page did decides (issue 37, item 1): the text changed or key and
 * input events reached the page (typingReport, snapshot.js) means the page
 * took the typing and filtered, cut or consumed it as designed (kept:
 * true); neither means nothing could be entered, and a native number
 * input left empty rejected the format. Not judged: a field that
 * lost focus (the page moved on, an autocomplete took over) and a proxy
 * field under 4 px, as code editors type through, whose value they empty at
 * once. */
static const char TYPED_CHECK_JS[] =
    "(el, want) => {\n"
    "  const probe = __tabvisor.typingReport();\n"
    "  if (el.localName === 'label' && el.control) el = el.control;\n"
    "  const r = el.getBoundingClientRect();\n"
    "  if (el.getRootNode().activeElement !== el || r.width < 4 || r.height < 4) return {};\n"
    "  const field = el.localName === 'input' || el.localName === 'textarea';\n"
    "  if (!field && !el.isContentEditable) return {};\n"
    "  const norm = (s) => s.normalize('NFKC').toLowerCase().replace(/[^\\p{L}\\p{N}]+/gu, '');\n"
    "  const have = field ? el.value : el.innerText;\n"
    "  if (norm(have).includes(norm(want))) return {};\n"
    "  return {have: el.type === 'password' ? null : have.slice(0, 160),\n"
    "      kept: !!probe && (have !== probe.before || probe.events > 0) &&\n"
    "          !(el.localName === 'input' && el.type === 'number' && !norm(have)),\n"
    "      maxLength: field && el.maxLength >= 0 ? el.maxLength : null,\n"
    "      type: field ? el.localName + (el.localName === 'input' ? ' type=' + el.type : '') :\n"
    "      'editable element'};\n"
    "}";

int check_typed(struct session *w, const char *target, const char *text, const char *element,
                char *kept, size_t keptlen)
{
    if (kept && keptlen)
        kept[0] = '\0';
    json_t *want = json_string(text);
    json_t *v = NULL;
    int rc = element_eval(w, target, TYPED_CHECK_JS, want, &v);
    json_decref(want);
    if (rc < 0 || !json_is_object(v) || !json_object_get(v, "type") ||
        json_object_get(v, "error")) {
        /* The element went away with the typing (a search box that became a
         * results page): nothing left to judge, and no error of the call. */
        json_decref(v);
        w->call.err = TV_OK;
        return 0;
    }
    const char *have = json_string_value(json_object_get(v, "have"));
    if (json_is_true(json_object_get(v, "kept"))) {
        /* The page took the typing and kept what it wanted: its own doing. */
        if (kept && keptlen) {
            snprintf(kept, keptlen, "%s", have ? have : "(a password)");
            utf8_drop_partial_tail(kept);
        }
        json_decref(v);
        return 0;
    }
    json_int_t maxlen = json_integer_value(json_object_get(v, "maxLength"));
    char held[240], limit[64] = "";
    if (have)
        snprintf(held, sizeof held, "holds \"%s\"", have);
    else
        snprintf(held, sizeof held, "holds something else");
    if (json_is_integer(json_object_get(v, "maxLength")))
        snprintf(limit, sizeof limit, " (maxlength %lld)", (long long)maxlen);
    fail_call(w, TV_ELEMENT_NOT_EDITABLE,
              "Nothing reached the page: no key or input event, and the field did not change. "
              "Check the field's format and length, or type with slowly: true so its key "
              "handlers run.",
              "%s: the page did not take the text: the %s %s%s", element ? element : target,
              json_string_value(json_object_get(v, "type")), held, limit);
    json_decref(v);
    return -1;
}

json_t *tool_type(struct session *w, json_t *args)
{
    const char *target = arg_str(args, "target", "");
    const char *element = arg_str(args, "element", NULL);
    const char *text = arg_str(args, "text", "");
    bool clear = arg_bool(args, "clear", true);
    json_t *opts = json_pack("{s:b, s:s}", "clear", clear, "text", text);
    json_t *info = until_actionable(w, "prepareTyping", target, opts, element);
    json_decref(opts);
    if (!info)
        return tool_fail(w);
    nav_reset(w);
    int rc = 0;
    struct frame *tf = frame_for_target(w, target);
    focus_in_frame(w, tf ? tf->k : 0);
    if (json_object_get(info, "valueSet"))
        ; /* a date, time, color or range input: the engine set its value */
    else if (clear && !*text)
        rc = key_call(w, "Input.dispatchKeyEvent",
                      json_pack("{s:s, s:s, s:s, s:i}", "type", "keyDown", "key", "Delete", "code",
                                "Delete", "windowsVirtualKeyCode", 46));
    else if (arg_bool(args, "slowly", false))
        rc = type_slowly(w, text);
    else if (*text)
        rc = key_call(w, "Input.insertText", json_pack("{s:s}", "text", text));
    char kept[200] = "";
    if (rc == 0 && *text && !json_object_get(info, "valueSet"))
        rc = check_typed(w, target, text, element, kept, sizeof kept);
    if (rc == 0 && arg_bool(args, "submit", false))
        rc = press_enter(w);
    if (rc < 0 || settle(w) < 0) {
        json_decref(info);
        return tool_fail(w);
    }
    json_t *res;
    if (kept[0]) {
        /* Success, saying what the page made of the text. */
        json_t *out = json_object();
        if (json_is_string(json_object_get(info, "ref")))
            json_object_set(out, "ref", json_object_get(info, "ref"));
        json_object_set_new(out, "kept", json_string(kept));
        char what[400];
        describe_element(info, what, sizeof what);
        struct sb line = {0};
        sb_printf(&line,
                  "Typed into %s\nThe page kept \"%s\" of \"%.200s\" (it filters, formats "
                  "or consumes what is typed).",
                  what, kept, text);
        res = page_action_result(w, line.p, out);
        free(line.p);
    } else {
        res = action_result(w, "Typed into", info);
    }
    json_decref(info);
    return res;
}
