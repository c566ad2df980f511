/*
 * console.c - console errors since the last response: console.error and
 * failed console.assert calls (Runtime.consoleAPICalled) and uncaught
 * exceptions (Runtime.exceptionThrown). Every response reports how many
 * there were and the first few messages, then the tally starts again, so an
 * agent learns of a page error on the call that caused it.
 */
#include <stdio.h>
#include <string.h>

#include "worker.h"

#define KEEP_MESSAGES 5
#define MESSAGE_CHARS 300

/* Cut s to at most max bytes at a UTF-8 boundary, with an ellipsis. */
static json_t *short_string(const char *s)
{
    size_t n = strlen(s);
    if (n <= MESSAGE_CHARS)
        return json_string(s);
    size_t k = utf8_cut(s, n, MESSAGE_CHARS);
    char buf[MESSAGE_CHARS + 8];
    memcpy(buf, s, k);
    memcpy(buf + k, "\xE2\x80\xA6", 4); /* … */
    return json_string(buf);
}

static void record(struct session *w, const char *text)
{
    w->page->console.count++;
    if (!w->page->console.messages)
        w->page->console.messages = json_array();
    if (json_array_size(w->page->console.messages) < KEEP_MESSAGES)
        json_array_append_new(w->page->console.messages, short_string(text));
}

void console_args_text(json_t *params, char *text, size_t size)
{
    size_t used = 0, i;
    json_t *arg;
    text[0] = 0;
    json_array_foreach(json_object_get(params, "args"), i, arg)
    {
        json_t *v = json_object_get(arg, "value");
        const char *s = json_string_value(v);
        char num[64];
        if (!s && json_is_number(v)) {
            snprintf(num, sizeof num, "%g", json_number_value(v));
            s = num;
        }
        if (!s && json_is_boolean(v))
            s = json_is_true(v) ? "true" : "false";
        if (!s)
            s = json_string_value(json_object_get(arg, "description"));
        if (!s)
            s = json_string_value(json_object_get(arg, "type"));
        if (!s || used >= size - 1)
            continue;
        int n = snprintf(text + used, size - used, "%s%s", used ? " " : "", s);
        used = n < 0 ? used : used + (size_t)n;
        if (used >= size)
            used = size - 1;
    }
    const char *type = json_string_value(json_object_get(params, "type"));
    if (type && strcmp(type, "assert") == 0 && !text[0])
        snprintf(text, size, "Assertion failed");
}

static void record_console(struct session *w, json_t *params)
{
    char text[MESSAGE_CHARS * 2 + 1];
    console_args_text(params, text, sizeof text);
    record(w, text);
}

static void record_exception(struct session *w, json_t *params)
{
    const char *s = exception_text(json_object_get(params, "exceptionDetails"));
    /* A description carries the stack; its first line is the message. */
    char text[MESSAGE_CHARS * 2 + 1];
    snprintf(text, sizeof text, "%s", s ? s : "Uncaught exception");
    char *nl = strchr(text, '\n');
    if (nl)
        *nl = 0;
    record(w, text);
}

void console_on_event(struct session *w, const char *session, const char *method, json_t *params)
{
    (void)session;
    if (strcmp(method, "Runtime.consoleAPICalled") == 0) {
        const char *type = json_string_value(json_object_get(params, "type"));
        if (type && (strcmp(type, "error") == 0 || strcmp(type, "assert") == 0))
            record_console(w, params);
    } else if (strcmp(method, "Runtime.exceptionThrown") == 0) {
        record_exception(w, params);
    }
}

void console_notes(struct session *w, json_t *content, json_t *structured)
{
    if (!w->page->console.count)
        return;
    char text[MESSAGE_CHARS * 2 * KEEP_MESSAGES + 200];
    size_t used = (size_t)snprintf(text, sizeof text, "### Console errors since the last call: %d",
                                   w->page->console.count);
    size_t i;
    json_t *m;
    json_array_foreach(w->page->console.messages, i, m)
    {
        if (used < sizeof text)
            used +=
                (size_t)snprintf(text + used, sizeof text - used, "\n- %s", json_string_value(m));
    }
    if (w->page->console.count > (int)json_array_size(w->page->console.messages) && used < sizeof text)
        snprintf(text + used, sizeof text - used, "\n- ... and %d more",
                 w->page->console.count - (int)json_array_size(w->page->console.messages));
    json_array_append_new(content, json_pack("{s:s, s:s}", "type", "text", "text", text));
    json_object_set_new(structured, "consoleErrors",
                        json_pack("{s:i, s:o}", "count", w->page->console.count, "messages",
                                  w->page->console.messages ? w->page->console.messages : json_array()));
    w->page->console.messages = NULL;
    w->page->console.count = 0;
}
