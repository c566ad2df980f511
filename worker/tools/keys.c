/* keys.c - browser_press_key: Playwright key names ("Enter", "ArrowDown",
 * "a", "KeyA", "F5") and chords ("Control+A", "Shift+Tab") as CDP key
 * events with the key, code, keyCode and text Chromium needs, so Enter
 * submits a form and Control+A selects all (US keyboard layout). */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "worker.h"

struct keydef {
    const char *key;  /* KeyboardEvent.key */
    const char *code; /* KeyboardEvent.code */
    int keycode;      /* windowsVirtualKeyCode */
    const char *text; /* what the key types, or NULL */
    int modifier;     /* CDP modifier bit it is (Alt 1, Control 2, Meta 4, Shift 8) */
    int location;     /* 1 for the left modifier keys */
};

static const struct keydef named[] = {
    {"Enter", "Enter", 13, "\r", 0, 0},
    {"Tab", "Tab", 9, NULL, 0, 0},
    {"Escape", "Escape", 27, NULL, 0, 0},
    {"Backspace", "Backspace", 8, NULL, 0, 0},
    {"Delete", "Delete", 46, NULL, 0, 0},
    {"Insert", "Insert", 45, NULL, 0, 0},
    {"Home", "Home", 36, NULL, 0, 0},
    {"End", "End", 35, NULL, 0, 0},
    {"PageUp", "PageUp", 33, NULL, 0, 0},
    {"PageDown", "PageDown", 34, NULL, 0, 0},
    {"ArrowLeft", "ArrowLeft", 37, NULL, 0, 0},
    {"ArrowUp", "ArrowUp", 38, NULL, 0, 0},
    {"ArrowRight", "ArrowRight", 39, NULL, 0, 0},
    {"ArrowDown", "ArrowDown", 40, NULL, 0, 0},
    {" ", "Space", 32, " ", 0, 0},
    {"Shift", "ShiftLeft", 16, NULL, 8, 1},
    {"Control", "ControlLeft", 17, NULL, 2, 1},
    {"Alt", "AltLeft", 18, NULL, 1, 1},
    {"Meta", "MetaLeft", 91, NULL, 4, 1},
    /* Playwright's ControlOrMeta is Control off macOS, and we run on Linux. */
    {"ControlOrMeta", "ControlLeft", 17, NULL, 2, 1},
    {"CapsLock", "CapsLock", 20, NULL, 0, 0},
    {"ContextMenu", "ContextMenu", 93, NULL, 0, 0},
    {NULL, NULL, 0, NULL, 0, 0},
};

/* Punctuation of a US keyboard: unshifted, shifted, code, keyCode. */
static const struct {
    char plain, shifted;
    const char *code;
    int keycode;
} punct[] = {
    {'-', '_', "Minus", 189},        {'=', '+', "Equal", 187},      {'[', '{', "BracketLeft", 219},
    {']', '}', "BracketRight", 221}, {'\\', '|', "Backslash", 220}, {';', ':', "Semicolon", 186},
    {'\'', '"', "Quote", 222},       {',', '<', "Comma", 188},      {'.', '>', "Period", 190},
    {'/', '?', "Slash", 191},        {'`', '~', "Backquote", 192},  {'1', '!', "Digit1", 49},
    {'2', '@', "Digit2", 50},        {'3', '#', "Digit3", 51},      {'4', '$', "Digit4", 52},
    {'5', '%', "Digit5", 53},        {'6', '^', "Digit6", 54},      {'7', '&', "Digit7", 55},
    {'8', '*', "Digit8", 56},        {'9', '(', "Digit9", 57},      {'0', ')', "Digit0", 48},
};

/* A key as events need it; buffers in *k hold the strings made up here. */
struct key {
    struct keydef d;
    char key[16], code[16], text[8];
};

/* Fill k for name (one key, no '+'), given the Shift state. 0 or -1. */
static int lookup(const char *name, bool shift, struct key *k)
{
    memset(k, 0, sizeof *k);
    /* Playwright's name for the space bar; its KeyboardEvent.key is " ". */
    if (strcmp(name, "Space") == 0)
        name = " ";
    for (const struct keydef *d = named; d->key; d++)
        if (strcmp(d->key, name) == 0) {
            k->d = *d;
            return 0;
        }
    size_t n = strlen(name);
    char c = 0;
    if (n == 1)
        c = name[0];
    else if (n == 4 && strncmp(name, "Key", 3) == 0 && isupper((unsigned char)name[3]))
        c = (char)tolower((unsigned char)name[3]); /* a code: KeyA */
    else if (n == 6 && strncmp(name, "Digit", 5) == 0 && isdigit((unsigned char)name[5]))
        c = name[5];
    else if (name[0] == 'F' && n <= 3 && atoi(name + 1) >= 1 && atoi(name + 1) <= 24 &&
             isdigit((unsigned char)name[1]) && (n == 2 || isdigit((unsigned char)name[2]))) {
        snprintf(k->key, sizeof k->key, "%s", name);
        snprintf(k->code, sizeof k->code, "%s", name);
        k->d.keycode = 111 + atoi(name + 1);
        k->d.key = k->key;
        k->d.code = k->code;
        return 0;
    }
    if (c && isalpha((unsigned char)c)) {
        char lower = (char)tolower((unsigned char)c), upper = (char)toupper((unsigned char)c);
        /* "A" types A; Shift+a types A too (Playwright's rule). */
        char typed = (shift || isupper((unsigned char)c)) ? upper : lower;
        snprintf(k->key, sizeof k->key, "%c", typed);
        snprintf(k->code, sizeof k->code, "Key%c", upper);
        snprintf(k->text, sizeof k->text, "%c", typed);
        k->d.keycode = upper;
    } else if (c && (unsigned char)c < 0x80) {
        size_t i;
        for (i = 0; i < sizeof punct / sizeof punct[0]; i++)
            if (punct[i].plain == c || punct[i].shifted == c)
                break;
        if (i == sizeof punct / sizeof punct[0])
            return -1;
        char typed = c;
        if (shift && punct[i].plain == c)
            typed = punct[i].shifted;
        snprintf(k->key, sizeof k->key, "%c", typed);
        snprintf(k->code, sizeof k->code, "%s", punct[i].code);
        snprintf(k->text, sizeof k->text, "%c", typed);
        k->d.keycode = punct[i].keycode;
    } else if (n > 1 && n <= 4 && ((unsigned char)name[0] & 0xC0) == 0xC0 &&
               (size_t)((unsigned char)name[0] < 0xe0   ? 2
                        : (unsigned char)name[0] < 0xf0 ? 3
                                                        : 4) == n) {
        /* Any other single character: typed as text, no key code. */
        snprintf(k->key, sizeof k->key, "%s", name);
        snprintf(k->text, sizeof k->text, "%s", name);
    } else {
        return -1;
    }
    k->d.key = k->key;
    k->d.code = k->code;
    if (k->text[0])
        k->d.text = k->text;
    return 0;
}

static int key_event(struct session *w, const char *type, const struct keydef *d, int mods,
                     bool with_text)
{
    json_t *p = json_pack("{s:s, s:s, s:i, s:i}", "type", type, "key", d->key,
                          "windowsVirtualKeyCode", d->keycode, "modifiers", mods);
    if (d->code && *d->code)
        json_object_set_new(p, "code", json_string(d->code));
    if (d->location)
        json_object_set_new(p, "location", json_integer(d->location));
    if (with_text && d->text) {
        json_object_set_new(p, "text", json_string(d->text));
        json_object_set_new(p, "unmodifiedText", json_string(d->text));
    }
    return key_call(w, "Input.dispatchKeyEvent", p);
}

#define MAX_CHORD 8

int press_key(struct session *w, const char *spec)
{
    /* Split on '+', where a '+' right after another (or alone) is the key. */
    char buf[256];
    snprintf(buf, sizeof buf, "%s", spec);
    char *parts[MAX_CHORD];
    int n = 0;
    char *p = buf;
    bool dangling = false; /* "Control+": a '+' with no key after it */
    while (*p && n < MAX_CHORD) {
        char *plus = strchr(p + 1, '+'); /* p + 1: a leading '+' is the key itself */
        parts[n++] = p;
        if (!plus)
            break;
        *plus = 0;
        p = plus + 1;
        dangling = !*p;
    }
    if (n == 0 || dangling || n == MAX_CHORD || !*parts[n - 1])
        return fail_call(w, TV_INVALID_PARAMETERS,
                         "Use a key name like Enter, ArrowDown, a or a chord like Control+A.",
                         "cannot parse key \"%.100s\"", spec);
    bool shift = false;
    for (int i = 0; i < n - 1; i++)
        shift |= strcmp(parts[i], "Shift") == 0;
    struct key keys[MAX_CHORD];
    for (int i = 0; i < n; i++) {
        if (lookup(parts[i], shift, &keys[i]) < 0 || (i < n - 1 && !keys[i].d.modifier))
            return fail_call(w, TV_INVALID_PARAMETERS,
                             "Key names are Playwright's: Enter, Tab, Escape, Backspace, Delete, "
                             "ArrowUp, Home, PageDown, F1-F24, a single character, and modifiers "
                             "Shift, Control, Alt, Meta before a '+'.",
                             "unknown key \"%.60s\" in \"%.100s\"", parts[i], spec);
    }
    int mods = 0, rc = 0, down = 0;
    for (; down < n - 1 && rc == 0; down++) {
        mods |= keys[down].d.modifier;
        rc = key_event(w, "rawKeyDown", &keys[down].d, mods, false);
    }
    if (rc == 0) {
        struct keydef *d = &keys[n - 1].d;
        /* Chromium types nothing for a chord with Control, Alt or Meta:
         * those are shortcuts (Playwright sends no text either). */
        bool text = d->text && !(mods & (1 | 2 | 4));
        rc = key_event(w, text ? "keyDown" : "rawKeyDown", d, mods | d->modifier, text);
        if (rc == 0)
            rc = key_event(w, "keyUp", d, mods, false);
    }
    /* Release what was pressed, even after a failure, so no modifier stays. */
    while (down-- > 0) {
        mods &= ~keys[down].d.modifier;
        if (key_event(w, "keyUp", &keys[down].d, mods, false) < 0 && rc == 0)
            rc = -1;
    }
    return rc;
}

/* Focus target's element first (a field, a menu) when the call names one. */
static const char FOCUS_JS[] =
    "(el) => { if (typeof el.focus !== 'function') return {error: {code: "
    "'ELEMENT_NOT_CLICKABLE', message: 'element cannot take focus'}};\n"
    "  el.focus(); return {ok: true}; }";

json_t *tool_press_key(struct session *w, json_t *args)
{
    const char *key = arg_str(args, "key", "");
    const char *target = arg_str(args, "target", NULL);
    json_t *info = NULL;
    if (target) {
        /* actionPoint gives the element's ref, role and name for the result
         * and waits until it is visible and enabled. */
        json_t *opts = json_pack("{s:b}", "force", false);
        info = until_actionable(w, "actionPoint", target, opts, arg_str(args, "element", NULL));
        json_decref(opts);
        json_t *ok;
        if (!info || !(ok = until_element(w, target, FOCUS_JS, NULL, NULL))) {
            json_decref(info);
            return tool_fail(w);
        }
        json_decref(ok);
    } else {
        page_focus_for_keys(w); /* keys go to the focused element */
    }
    nav_reset(w);
    if (press_key(w, key) < 0 || settle(w) < 0) {
        json_decref(info);
        return tool_fail(w);
    }
    char line[300];
    snprintf(line, sizeof line, "Pressed %.100s", key);
    json_t *res = info ? action_result(w, line, info) : page_action_result(w, line, NULL);
    json_decref(info);
    return res;
}
