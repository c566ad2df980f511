/* forms.c - browser_select_option and browser_fill_form. Options are
 * chosen the way Playwright's selectOption does: by value, else by label;
 * selected in the page, then input and change fired (a <select>'s native
 * popup cannot be driven by input events in headless Chromium). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "frames.h"
#include "worker.h"

static const char SELECT_JS[] =
    "(el, values) => {\n"
    "  const fail = (code, message, retry) => ({error: {code, message, retry}});\n"
    "  if (el.localName !== 'select') return fail('INVALID_PARAMETERS', 'the element is <' +\n"
    "      el.localName + '>, not a <select>', false);\n"
    "  const r = el.getBoundingClientRect();\n"
    "  if (!(r.width > 0 && r.height > 0) || (el.checkVisibility &&\n"
    "      !el.checkVisibility({visibilityProperty: true})))\n"
    "    return fail('ELEMENT_NOT_VISIBLE', 'the select is not visible', true);\n"
    "  if (el.matches(':disabled')) return fail('ELEMENT_NOT_CLICKABLE', 'the select is "
    "disabled', true);\n"
    "  const opts = Array.from(el.options), norm = (s) => s.replace(/\\s+/g, ' ').trim();\n"
    "  const show = (o) => JSON.stringify(norm(o.label)) + (o.value !== norm(o.label) ?\n"
    "      ' (value ' + JSON.stringify(o.value) + ')' : '');\n"
    "  const picked = [];\n"
    "  for (const v of values) {\n"
    "    const o = opts.find((o) => o.value === v) || opts.find((o) => norm(o.label) === "
    "norm(v));\n"
    "    if (!o) return fail('ELEMENT_NOT_FOUND', 'no option with value or label ' +\n"
    "        JSON.stringify(v) + '; options: ' + (opts.slice(0, 30).map(show).join(', ') ||\n"
    "        '(none)') + (opts.length > 30 ? ', ... (' + opts.length + ' in all)' : ''), true);\n"
    "    if (o.disabled) return fail('ELEMENT_NOT_CLICKABLE', 'option ' + show(o) + ' is "
    "disabled', true);\n"
    "    picked.push(o);\n"
    "  }\n"
    "  if (picked.length > 1 && !el.multiple) return fail('INVALID_PARAMETERS',\n"
    "      'the select takes one value, not ' + picked.length, false);\n"
    "  // Focus the select only where a user could reach it: one a script\n"
    "  // replaced with its own list (clipped to nothing, or under the list's\n"
    "  // button) is never focused by a user, and focusing it opens that list\n"
    "  // (Selectric opens on focus), which a choice made here never closes.\n"
    "  let clipped = false;\n"
    "  for (let p = el.parentElement; p && !clipped; p = p.parentElement) {\n"
    "    const pr = p.getBoundingClientRect();\n"
    "    clipped = getComputedStyle(p).overflow !== 'visible' && pr.width * pr.height < 4;\n"
    "  }\n"
    "  const cx = r.left + r.width / 2, cy = r.top + r.height / 2;\n"
    "  const inView = cx >= 0 && cy >= 0 && cx < innerWidth && cy < innerHeight;\n"
    "  const hit = inView ? el.getRootNode().elementFromPoint(cx, cy) : el;\n"
    "  // As a user's press on it: pointerdown and mousedown first, which a\n"
    "  // pop-up (a date picker holding month and year selects) takes as a\n"
    "  // press inside it and stays open, then focus; mouseup after the choice.\n"
    "  const user = !clipped && hit && (hit === el || el.contains(hit));\n"
    "  const press = (type) => el.dispatchEvent(new (type.startsWith('pointer') ? PointerEvent :\n"
    "      MouseEvent)(type, {bubbles: true, composed: true, cancelable: true, view: window,\n"
    "      clientX: cx, clientY: cy, button: 0, buttons: type.endsWith('down') ? 1 : 0}));\n"
    "  if (user) { press('pointerdown'); press('mousedown'); el.focus(); }\n"
    "  for (const o of opts) o.selected = picked.includes(o);\n"
    "  el.dispatchEvent(new Event('input', {bubbles: true, composed: true}));\n"
    "  el.dispatchEvent(new Event('change', {bubbles: true}));\n"
    "  if (user && el.isConnected) { press('pointerup'); press('mouseup'); }\n"
    "  const now = Array.from(el.options).filter((o) => o.selected);\n"
    "  if (now.length !== picked.length || !picked.every((o) => o.selected))\n"
    "    return fail('ELEMENT_NOT_EDITABLE', 'the page did not keep the choice: the select holds ' "
    "+\n"
    "        (now.map(show).join(', ') || 'nothing'), false);\n"
    "  return {selected: picked.map((o) => o.value), labels: picked.map((o) => norm(o.label))};\n"
    "}";

/* The engine's description (ref, role, name) of target's element. */
static json_t *describe_target(struct session *w, const char *target, const char *element)
{
    json_t *opts = json_pack("{s:b}", "force", true);
    json_t *info = until_actionable(w, "actionPoint", target, opts, element);
    json_decref(opts);
    return info;
}

json_t *select_options(struct session *w, const char *target, json_t *values, const char *element)
{
    /* Described first: a change handler may navigate the page away. */
    json_t *info = describe_target(w, target, element);
    if (!info)
        return NULL;
    json_t *v = until_element(w, target, SELECT_JS, values, element);
    if (!v) {
        if (w->call.err == TV_ELEMENT_NOT_FOUND && strstr(w->call.errmsg, "no option with"))
            snprintf(w->call.errhint, sizeof w->call.errhint,
                     "Pass an option's value or its label, as listed.");
        json_decref(info);
        return NULL;
    }
    json_object_set(info, "selected", json_object_get(v, "selected"));
    json_decref(v);
    return info;
}

json_t *tool_select_option(struct session *w, json_t *args)
{
    nav_reset(w);
    json_t *info = select_options(w, arg_str(args, "target", ""), json_object_get(args, "values"),
                                  arg_str(args, "element", NULL));
    if (!info || settle(w) < 0) {
        json_decref(info);
        return tool_fail(w);
    }
    char *sel = json_dumps(json_object_get(info, "selected"), JSON_COMPACT);
    char verb[600];
    snprintf(verb, sizeof verb, "Selected %.400s in", sel ? sel : "[]");
    free(sel);
    json_t *res = action_result(w, verb, info);
    json_decref(info);
    return res;
}

/* --- browser_fill_form --- */

static const char CHECKED_JS[] =
    "(el) => {\n"
    "  if (el.localName === 'label' && el.control) el = el.control;\n"
    "  if (el.localName === 'input' && (el.type === 'checkbox' || el.type === 'radio'))\n"
    "    return {checked: el.checked, radio: el.type === 'radio'};\n"
    "  const role = el.getAttribute('role'), a = el.getAttribute('aria-checked');\n"
    "  if (['checkbox', 'radio', 'switch', 'menuitemcheckbox', 'menuitemradio'].includes(role))\n"
    "    return {checked: a === 'true', radio: role === 'radio' || role === 'menuitemradio'};\n"
    "  return {error: {code: 'INVALID_PARAMETERS', message: 'the element is <' + el.localName +\n"
    "      '>, not a checkbox or radio', retry: false}};\n"
    "}";

static const char SLIDER_JS[] =
    "(el, v) => {\n"
    "  if (!(el.localName === 'input' && el.type === 'range')) return {error: {code:\n"
    "      'INVALID_PARAMETERS', message: 'the element is <' + el.localName + '>, not a range "
    "input', retry: false}};\n"
    "  if (el.matches(':disabled')) return {error: {code: 'ELEMENT_NOT_CLICKABLE', message:\n"
    "      'the slider is disabled', retry: true}};\n"
    "  const set = Object.getOwnPropertyDescriptor(HTMLInputElement.prototype, 'value').set;\n"
    "  el.focus(); set.call(el, v);\n"
    "  el.dispatchEvent(new Event('input', {bubbles: true, composed: true}));\n"
    "  el.dispatchEvent(new Event('change', {bubbles: true}));\n"
    "  return {value: el.value};\n"
    "}";

/* Where to click a checkbox or radio that has no box of its own to click
 * (display:none or clipped, as CSS frameworks hide them behind a styled
 * label): the centre of its first label the hit test reaches. */
static const char LABEL_POINT_JS[] =
    "(el) => {\n"
    "  const input = el.localName === 'label' && el.control ? el.control : el;\n"
    "  if (input.matches(':disabled')) return {error: {code: 'ELEMENT_NOT_CLICKABLE', message:\n"
    "      'the control is disabled', retry: true}};\n"
    "  for (const l of Array.from(input.labels || [])) {\n"
    "    let r = l.getBoundingClientRect();\n"
    "    if (!(r.width > 0 && r.height > 0)) continue;\n"
    "    if (r.bottom < 0 || r.top > innerHeight || r.right < 0 || r.left > innerWidth) {\n"
    "      l.scrollIntoView({block: 'center', inline: 'center'});\n"
    "      r = l.getBoundingClientRect();\n"
    "    }\n"
    "    const x = (r.left + r.right) / 2, y = (r.top + r.bottom) / 2;\n"
    "    const hit = document.elementFromPoint(x, y);\n"
    "    if (hit && (l === hit || l.contains(hit))) return {x, y};\n"
    "  }\n"
    "  return {error: {code: 'ELEMENT_NOT_VISIBLE', message: 'neither the control nor a label "
    "of it can be clicked', retry: true}};\n"
    "}";

/* Where to click target's checkbox or radio: its own point (actionable:
 * visible, stable, not covered), else a label's. 0 or -1 with w->call.err. */
static int check_point(struct session *w, const char *target, const char *element, struct mouse_at *at)
{
    /* One short round for the control itself: a hidden one stays hidden. */
    long long saved = w->call.deadline, quick = mono_ms() + 300;
    if (!saved || quick < saved)
        w->call.deadline = quick;
    json_t *opts = json_pack("{s:b}", "force", false);
    json_t *pt = until_actionable(w, "actionPoint", target, opts, element);
    json_decref(opts);
    w->call.deadline = saved;
    if (!pt && w->call.err != TV_ELEMENT_NOT_VISIBLE && w->call.err != TV_ELEMENT_NOT_CLICKABLE &&
        !(w->call.err == TV_TIMEOUT && mono_ms() < saved))
        return -1;
    if (!pt) {
        struct frame *f;
        pt = until_element(w, target, LABEL_POINT_JS, NULL, element);
        if (!pt || !(f = frame_for_target(w, target)) || point_to_top(w, f, pt, element) != 0) {
            json_decref(pt);
            return -1;
        }
    }
    mouse_at_point(w, pt, at);
    json_decref(pt);
    return 0;
}

/* Type value into target, replacing what is there (browser_type's way). */
static json_t *fill_text(struct session *w, const char *target, const char *value, const char *element)
{
    json_t *opts = json_pack("{s:b, s:s}", "clear", true, "text", value);
    json_t *info = until_actionable(w, "prepareTyping", target, opts, element);
    json_decref(opts);
    if (!info)
        return NULL;
    if (json_object_get(info, "valueSet"))
        return info; /* a date, time, color or range input: the engine set it */
    struct frame *tf = frame_for_target(w, target);
    focus_in_frame(w, tf ? tf->k : 0);
    int rc = *value ? key_call(w, "Input.insertText", json_pack("{s:s}", "text", value))
                    : key_call(w, "Input.dispatchKeyEvent",
                               json_pack("{s:s, s:s, s:s, s:i}", "type", "keyDown", "key", "Delete",
                                         "code", "Delete", "windowsVirtualKeyCode", 46));
    if (rc == 0 && *value)
        rc = check_typed(w, target, value, element, NULL, 0);
    if (rc < 0) {
        json_decref(info);
        return NULL;
    }
    return info;
}

/* Click a checkbox or radio when its state is not the one asked for. */
static json_t *fill_check(struct session *w, const char *target, const char *value,
                          const char *element)
{
    bool want;
    if (!strcmp(value, "true") || !strcmp(value, "checked") || !strcmp(value, "on"))
        want = true;
    else if (!strcmp(value, "false") || !strcmp(value, "unchecked") || !strcmp(value, "off"))
        want = false;
    else {
        fail_call(w, TV_INVALID_PARAMETERS, NULL,
                  "%s: value must be \"true\" or \"false\" for a checkbox or radio, not \"%.60s\"",
                  element ? element : target, value);
        return NULL;
    }
    json_t *st = until_element(w, target, CHECKED_JS, NULL, element);
    if (!st)
        return NULL;
    bool now = json_is_true(json_object_get(st, "checked"));
    bool radio = json_is_true(json_object_get(st, "radio"));
    json_decref(st);
    json_t *info = describe_target(w, target, element);
    if (!info || now == want)
        return info;
    if (radio && !want) {
        json_decref(info);
        fail_call(w, TV_INVALID_PARAMETERS, "Check another radio button of the group instead.",
                  "%s: a radio button cannot be unchecked by clicking it",
                  element ? element : target);
        return NULL;
    }
    struct mouse_at at;
    if (check_point(w, target, element, &at) < 0 || mouse_click_at(w, &at) < 0 ||
        !(st = until_element(w, target, CHECKED_JS, NULL, element))) {
        json_decref(info);
        return NULL;
    }
    now = json_is_true(json_object_get(st, "checked"));
    json_decref(st);
    if (now != want) {
        json_decref(info);
        fail_call(w, TV_ELEMENT_NOT_CLICKABLE, NULL,
                  "%s: clicking it did not change its state (the page keeps it %s)",
                  element ? element : target, now ? "checked" : "unchecked");
        return NULL;
    }
    return info;
}

static json_t *fill_one(struct session *w, json_t *field, size_t i)
{
    const char *target = json_string_value(json_object_get(field, "target"));
    if (!target)
        target = json_string_value(json_object_get(field, "ref"));
    const char *type = json_string_value(json_object_get(field, "type"));
    const char *value = json_string_value(json_object_get(field, "value"));
    const char *name = json_string_value(json_object_get(field, "name"));
    if (!name)
        name = json_string_value(json_object_get(field, "element"));
    json_t *jv = json_object_get(field, "value");
    char num[64];
    if (!value && json_is_boolean(jv))
        value = json_is_true(jv) ? "true" : "false";
    if (!value && json_is_number(jv)) {
        snprintf(num, sizeof num, "%g", json_number_value(jv));
        value = num;
    }
    if (!json_is_object(field) || !target || !*target || !type || !value) {
        fail_call(w, TV_INVALID_PARAMETERS,
                  "Each field is {target, type, value} (type textbox, checkbox, radio, "
                  "combobox or slider).",
                  "fields[%zu] needs target (or ref), type and value", i);
        return NULL;
    }
    if (!strcmp(type, "textbox"))
        return fill_text(w, target, value, name);
    if (!strcmp(type, "checkbox") || !strcmp(type, "radio"))
        return fill_check(w, target, value, name);
    if (!strcmp(type, "combobox")) {
        json_t *values = json_pack("[s]", value);
        json_t *info = select_options(w, target, values, name);
        json_decref(values);
        return info;
    }
    if (!strcmp(type, "slider")) {
        json_t *info = describe_target(w, target, name);
        json_t *jval = json_string(value);
        json_t *v = info ? until_element(w, target, SLIDER_JS, jval, name) : NULL;
        json_decref(jval);
        if (!v) {
            json_decref(info);
            return NULL;
        }
        json_decref(v);
        return info;
    }
    fail_call(w, TV_INVALID_PARAMETERS, NULL,
              "fields[%zu].type must be textbox, checkbox, radio, combobox or slider", i);
    return NULL;
}

json_t *tool_fill_form(struct session *w, json_t *args)
{
    json_t *fields = json_object_get(args, "fields");
    json_t *done = json_array();
    struct sb b = {0};
    size_t i;
    json_t *field;
    nav_reset(w);
    json_array_foreach(fields, i, field)
    {
        json_t *info = fill_one(w, field, i);
        if (!info) {
            /* Say which field failed and that the ones before it are filled. */
            char msg[sizeof w->call.errmsg];
            snprintf(msg, sizeof msg, "%s", w->call.errmsg);
            snprintf(w->call.errmsg, sizeof w->call.errmsg, "fields[%zu]: %s (%zu field%s before it filled)",
                     i, msg, i, i == 1 ? "" : "s");
            json_decref(done);
            free(b.p);
            return tool_fail(w);
        }
        char d[400];
        describe_element(info, d, sizeof d);
        sb_printf(&b, "%s%s", i ? ", " : "", d);
        json_array_append_new(done,
                              json_pack("{s:O?, s:O, s:O}", "ref", json_object_get(info, "ref"),
                                        "type", json_object_get(field, "type"), "value",
                                        json_object_get(field, "value")));
        json_decref(info);
    }
    if (settle(w) < 0) {
        json_decref(done);
        free(b.p);
        return tool_fail(w);
    }
    char line[1200];
    snprintf(line, sizeof line, "Filled %zu field%s: %.1000s", json_array_size(done),
             json_array_size(done) == 1 ? "" : "s", b.p ? b.p : "");
    free(b.p);
    return page_action_result(w, line, json_pack("{s:o}", "fields", done));
}
