/*
 * bidi_input.c - CDP's Input.* commands as BiDi's input.performActions
 * (bidi_map.h): a mouse event is a pointer move (and a press or release) of
 * one pointer source, a key event a key action of one keyboard source,
 * inserted text a key press per character. Firefox keeps the sources'
 * state (buttons and keys held) from one command to the next.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "bidi_map_int.h"
#include "transport.h"

/* WebDriver's code points for keys that type nothing (WebDriver spec,
 * "Keyboard actions"), by KeyboardEvent.key. Enter is WebDriver's "Return"
 * (U+E006, code Enter); its "Enter" (U+E007) is the keypad's. */
static const struct {
    const char *key;
    unsigned cp;
} special_keys[] = {
    {"Backspace", 0xE003}, {"Tab", 0xE004},      {"Enter", 0xE006},      {"Shift", 0xE008},
    {"Control", 0xE009},   {"Alt", 0xE00A},      {"Pause", 0xE00B},      {"Escape", 0xE00C},
    {"PageUp", 0xE00E},    {"PageDown", 0xE00F}, {"End", 0xE010},        {"Home", 0xE011},
    {"ArrowLeft", 0xE012}, {"ArrowUp", 0xE013},  {"ArrowRight", 0xE014}, {"ArrowDown", 0xE015},
    {"Insert", 0xE016},    {"Delete", 0xE017},   {"F1", 0xE031},         {"F2", 0xE032},
    {"F3", 0xE033},        {"F4", 0xE034},       {"F5", 0xE035},         {"F6", 0xE036},
    {"F7", 0xE037},        {"F8", 0xE038},       {"F9", 0xE039},         {"F10", 0xE03A},
    {"F11", 0xE03B},       {"F12", 0xE03C},      {"Meta", 0xE03D},
};

/* One code point as UTF-8 into out (at least 5 bytes). */
static void utf8_put(unsigned cp, char *out)
{
    if (cp < 0x80) {
        out[0] = (char)cp;
        out[1] = 0;
    } else if (cp < 0x800) {
        out[0] = (char)(0xC0 | cp >> 6);
        out[1] = (char)(0x80 | (cp & 0x3F));
        out[2] = 0;
    } else {
        out[0] = (char)(0xE0 | cp >> 12);
        out[1] = (char)(0x80 | ((cp >> 6) & 0x3F));
        out[2] = (char)(0x80 | (cp & 0x3F));
        out[3] = 0;
    }
}

/* Length of the UTF-8 sequence s starts with (1 for a stray byte). */
static size_t utf8_len(const char *s)
{
    unsigned char c = (unsigned char)*s;
    size_t n = c < 0xC0 ? 1 : c < 0xE0 ? 2 : c < 0xF0 ? 3 : 4;
    for (size_t i = 1; i < n; i++)
        if (!s[i])
            return i;
    return n;
}

/* The BiDi key value of a CDP key event: the character it names, or
 * WebDriver's code for a named key. false when there is none. */
static bool key_value(json_t *params, char out[8])
{
    const char *key = bm_str(params, "key");
    if (!key || !*key)
        key = bm_str(params, "text");
    if (!key || !*key)
        return false;
    if (strcmp(key, "\r") == 0 || strcmp(key, "\n") == 0)
        key = "Enter";
    if (utf8_len(key) == strlen(key)) {
        snprintf(out, 8, "%s", key);
        return true;
    }
    for (size_t i = 0; i < sizeof special_keys / sizeof special_keys[0]; i++) {
        if (strcmp(special_keys[i].key, key) == 0) {
            utf8_put(special_keys[i].cp, out);
            return true;
        }
    }
    return false;
}

static json_t *key_source(json_t *actions)
{
    return json_pack("[{s:s, s:s, s:o}]", "type", "key", "id", "keyboard", "actions", actions);
}

static int mouse_button(const char *b)
{
    if (!b || !strcmp(b, "left"))
        return 0;
    if (!strcmp(b, "middle"))
        return 1;
    if (!strcmp(b, "right"))
        return 2;
    if (!strcmp(b, "back"))
        return 3;
    if (!strcmp(b, "forward"))
        return 4;
    return 0;
}

/* Input.dispatchMouseEvent: a move, a move and a press, a move and a
 * release, or a wheel turn. NULL when the type is not one of those. */
/* CDP's modifier bits (Alt 1, Control 2, Meta 4, Shift 8) as WebDriver keys. */
static const struct {
    int bit;
    unsigned cp;
} modifier_keys[] = {{1, 0xE00A}, {2, 0xE009}, {4, 0xE03D}, {8, 0xE008}};

/* A press or release with modifiers held (a Control-click): BiDi's pointer
 * actions carry no modifiers, so a key source in the same command holds
 * them, tick by tick beside the pointer's: pressed before the button goes
 * down, let go after it comes up. *keys gets that source's actions (NULL
 * when none), and the pointer's acts are padded with pauses to match. */
static void with_modifiers(json_t *acts, const char *type, int mods, json_t **keys)
{
    *keys = NULL;
    bool press = !strcmp(type, "mousePressed"), release = !strcmp(type, "mouseReleased");
    if (!mods || (!press && !release))
        return;
    *keys = json_array();
    size_t n = json_array_size(acts);
    for (size_t i = 0; release && i < n; i++)
        json_array_append_new(*keys, json_pack("{s:s}", "type", "pause"));
    for (size_t k = 0; k < sizeof modifier_keys / sizeof modifier_keys[0]; k++) {
        if (!(mods & modifier_keys[k].bit))
            continue;
        char v[8];
        utf8_put(modifier_keys[k].cp, v);
        json_array_append_new(
            *keys, json_pack("{s:s, s:s}", "type", press ? "keyDown" : "keyUp", "value", v));
        if (press)
            json_array_insert_new(acts, 0, json_pack("{s:s}", "type", "pause"));
        else
            json_array_append_new(acts, json_pack("{s:s}", "type", "pause"));
    }
}

static json_t *mouse_actions(json_t *p)
{
    json_t *keys;
    const char *type = bm_str(p, "type");
    json_int_t x = (json_int_t)lround(bm_num(p, "x")), y = (json_int_t)lround(bm_num(p, "y"));
    if (!type)
        return NULL;
    if (!strcmp(type, "mouseWheel"))
        return json_pack("[{s:s, s:s, s:[{s:s, s:I, s:I, s:I, s:I}]}]", "type", "wheel", "id",
                         "wheel", "actions", "type", "scroll", "x", x, "y", y, "deltaX",
                         (json_int_t)lround(bm_num(p, "deltaX")), "deltaY",
                         (json_int_t)lround(bm_num(p, "deltaY")));
    json_t *acts = json_pack("[{s:s, s:I, s:I}]", "type", "pointerMove", "x", x, "y", y);
    if (!strcmp(type, "mouseClicks")) {
        /* Ours, not CDP's (worker/tools/element.c, mouse_clicks): clickCount
         * presses and releases in one chain, the only way WebDriver counts
         * them as a double or triple click. */
        int button = mouse_button(bm_str(p, "button"));
        json_int_t n = json_integer_value(json_object_get(p, "clickCount"));
        json_int_t delay = json_integer_value(json_object_get(p, "delay"));
        for (json_int_t i = 0; i < n && i < 3; i++) {
            json_array_append_new(acts,
                                  json_pack("{s:s, s:i}", "type", "pointerDown", "button", button));
            if (delay > 0)
                json_array_append_new(acts,
                                      json_pack("{s:s, s:I}", "type", "pause", "duration", delay));
            json_array_append_new(acts,
                                  json_pack("{s:s, s:i}", "type", "pointerUp", "button", button));
        }
    } else if (!strcmp(type, "mousePressed") || !strcmp(type, "mouseReleased"))
        json_array_append_new(acts, json_pack("{s:s, s:i}", "type",
                                              type[5] == 'P' ? "pointerDown" : "pointerUp",
                                              "button", mouse_button(bm_str(p, "button"))));
    else if (strcmp(type, "mouseMoved") != 0) {
        json_decref(acts);
        return NULL;
    }
    with_modifiers(acts, type, (int)json_integer_value(json_object_get(p, "modifiers")), &keys);
    json_t *out = json_pack("[{s:s, s:s, s:{s:s}, s:o}]", "type", "pointer", "id", "mouse",
                            "parameters", "pointerType", "mouse", "actions", acts);
    if (keys) {
        json_t *ks = key_source(keys);
        json_array_append(out, json_array_get(ks, 0));
        json_decref(ks);
    }
    return out;
}

enum bidi_outcome bm_input_command(struct bidi_map *m, long long id, const char *ctx,
                                   const char *method, json_t *p, json_t **out)
{
    if (!strcmp(method, "Input.dispatchMouseEvent")) {
        json_t *acts = mouse_actions(p);
        if (!acts) {
            *out = bm_error(id, -32602, "mouse event type %s is not one tabvisor sends",
                            bm_str(p, "type") ?: "?");
            return BIDI_ANSWER;
        }
        return bm_send(m, id, K_EMPTY, ctx, "input.performActions",
                       json_pack("{s:s, s:o}", "context", ctx, "actions", acts), out);
    }
    if (!strcmp(method, "Input.dispatchKeyEvent")) {
        const char *type = bm_str(p, "type");
        char v[8];
        if (type && !strcmp(type, "char")) { /* the keyDown typed it already */
            *out = bm_answer(id, NULL);
            return BIDI_ANSWER;
        }
        if (!type || !key_value(p, v)) {
            *out = bm_error(id, CDP_ERR_NOT_SUPPORTED,
                            "the key %s has no WebDriver key value (Firefox)",
                            bm_str(p, "key") ?: "?");
            return BIDI_ANSWER;
        }
        bool up = !strcmp(type, "keyUp");
        return bm_send(m, id, K_EMPTY, ctx, "input.performActions",
                       json_pack("{s:s, s:o}", "context", ctx, "actions",
                                 key_source(json_pack("[{s:s, s:s}]", "type",
                                                      up ? "keyUp" : "keyDown", "value", v))),
                       out);
    }
    if (!strcmp(method, "Input.insertText")) {
        const char *t = bm_str(p, "text");
        json_t *acts = json_array();
        for (const char *s = t ? t : ""; *s;) {
            size_t n = utf8_len(s);
            char ch[8];
            snprintf(ch, sizeof ch, "%.*s", (int)n, s);
            s += n;
            json_array_append_new(acts, json_pack("{s:s, s:s}", "type", "keyDown", "value", ch));
            json_array_append_new(acts, json_pack("{s:s, s:s}", "type", "keyUp", "value", ch));
        }
        return bm_send(m, id, K_EMPTY, ctx, "input.performActions",
                       json_pack("{s:s, s:o}", "context", ctx, "actions", key_source(acts)), out);
    }
    *out = bm_not_supported(id, method);
    return BIDI_ANSWER;
}
