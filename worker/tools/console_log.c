/* console_log.c - browser_console_messages: every console message and uncaught
 * exception of the current tab (the newest MAX_LOG), by level. console.c in
 * worker/ keeps the separate per-response tally of errors. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "worker.h"

#define MAX_LOG 1000
#define TEXT_CHARS 2000

static const char *level_of(const char *type)
{
    if (!strcmp(type, "error") || !strcmp(type, "assert"))
        return "error";
    if (!strcmp(type, "warning"))
        return "warning";
    if (!strcmp(type, "debug"))
        return "debug";
    return "info";
}

static int rank(const char *level)
{
    return !strcmp(level, "error")     ? 3
           : !strcmp(level, "warning") ? 2
           : !strcmp(level, "info")    ? 1
                                       : 0;
}

static void add(struct session *w, const char *level, const char *type, const char *text,
                json_t *stack)
{
    if (!w->page->console.log)
        w->page->console.log = json_array();
    json_t *top = json_array_get(json_object_get(stack, "callFrames"), 0);
    json_t *m = json_pack("{s:s, s:s, s:s}", "level", level, "type", type, "text", text);
    const char *url = json_string_value(json_object_get(top, "url"));
    if (url && *url) {
        char loc[600];
        snprintf(loc, sizeof loc, "%.500s:%lld", url,
                 (long long)json_integer_value(json_object_get(top, "lineNumber")) + 1);
        json_object_set_new(m, "location", json_string(loc));
    }
    json_array_append_new(w->page->console.log, m);
    if (json_array_size(w->page->console.log) > MAX_LOG) {
        json_array_remove(w->page->console.log, 0);
        w->page->console.log_dropped++;
    }
}

void console_log_on_event(struct session *w, const char *session, const char *method, json_t *params)
{
    (void)session;
    char text[TEXT_CHARS];
    if (!strcmp(method, "Runtime.consoleAPICalled")) {
        const char *type = json_string_value(json_object_get(params, "type"));
        if (!type)
            return;
        console_args_text(params, text, sizeof text);
        add(w, level_of(type), type, text, json_object_get(params, "stackTrace"));
    } else if (!strcmp(method, "Runtime.exceptionThrown")) {
        json_t *d = json_object_get(params, "exceptionDetails");
        const char *s = exception_text(d);
        snprintf(text, sizeof text, "%s", s ? s : "Uncaught exception");
        /* A description carries the stack; its first line is the message
         * (the location says where). */
        char *nl = strchr(text, '\n');
        if (nl)
            *nl = 0;
        add(w, "error", "exception", text, json_object_get(d, "stackTrace"));
    }
}

json_t *tool_console_messages(struct session *w, json_t *args)
{
    /* onlyErrors: the argument of older @playwright/mcp versions. */
    const char *level =
        arg_bool(args, "onlyErrors", false) ? "error" : arg_str(args, "level", "info");
    int min = rank(level);
    bool only_new = arg_bool(args, "onlyNew", false);
    size_t first = 0, total = json_array_size(w->page->console.log);
    if (only_new && w->page->console.log_read > w->page->console.log_dropped)
        first = w->page->console.log_read - w->page->console.log_dropped;
    json_t *list = json_array();
    struct sb b = {0};
    for (size_t i = first; i < total; i++) {
        json_t *m = json_array_get(w->page->console.log, i);
        if (rank(json_string_value(json_object_get(m, "level"))) < min)
            continue;
        const char *loc = json_string_value(json_object_get(m, "location"));
        sb_printf(&b, "[%s] %s%s%s%s\n", json_string_value(json_object_get(m, "type")),
                  json_string_value(json_object_get(m, "text")), loc ? " (" : "", loc ? loc : "",
                  loc ? ")" : "");
        json_array_append(list, m);
    }
    w->page->console.log_read = w->page->console.log_dropped + total;
    json_t *out = json_pack("{s:o, s:I}", "messages", list, "dropped",
                            (json_int_t)(first ? 0 : w->page->console.log_dropped));
    page_refresh_info(w);
    add_page(w, out);
    if (!b.p)
        sb_printf(&b, "No console messages%s at level %s or above.",
                  only_new ? " since the last call" : "", level);
    else if (!first && w->page->console.log_dropped)
        sb_printf(&b, "(%zu older messages were dropped; the newest %d are kept)",
                  w->page->console.log_dropped, MAX_LOG);
    while (b.len && b.p[b.len - 1] == '\n')
        b.p[--b.len] = 0;
    json_t *res = tool_ok(w, b.p, out);
    free(b.p);
    return res;
}
