/*
 * result.c - tool results as the supervisor forwards them (MSG_RESULT body),
 * and the one place where every successful result is bounded by
 * --max-output-chars (DESIGN.md 4/5): a tool may build text of any size and
 * tool_ok cuts it at a line break, says so in a marker line and sets
 * structured.truncated. Tools that know their text (snapshots) cut it
 * themselves with a better marker, within the same bound (respond.c).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "proto.h"
#include "worker.h"

#define DEFAULT_MAX_OUTPUT 40000
/* Room kept for the marker line, so text plus marker stay within the bound. */
#define MARKER_ROOM 300

size_t max_output(const struct session *w)
{
    return w->max_output_chars > 0 ? (size_t)w->max_output_chars : DEFAULT_MAX_OUTPUT;
}

/* Append text to content, cut to *left characters (marker included);
 * missing: characters that followed text at its source and were already
 * left out (tool_ok_partial). */
static void add_text(json_t *content, const char *text, size_t missing, size_t *left,
                     json_t *structured)
{
    size_t len = strlen(text);
    /* A page's text cut inside a character somewhere upstream: its bytes
     * as U+FFFD, not a result without text (jansson takes only UTF-8). */
    char *repaired = NULL;
    if (!utf8_valid(text, len) &&
        (repaired = utf8_repaired(text, len, UTF8_REPLACEMENT, &len)) != NULL)
        text = repaired;
    size_t chars = utf8_chars(text, len);
    if (chars <= *left && !missing) {
        json_array_append_new(content, json_pack("{s:s, s:s}", "type", "text", "text", text));
        *left -= chars;
        free(repaired);
        return;
    }
    size_t room = *left > MARKER_ROOM ? *left - MARKER_ROOM : 0;
    size_t keep = chars <= room ? len : cut_text(text, len, room);
    char marker[MARKER_ROOM];
    int m = snprintf(marker, sizeof marker,
                     "%s[truncated: %zu more characters not shown (--max-output-chars). Pass "
                     "filename to save everything to a file, or narrow the output with target, "
                     "depth or interactive]",
                     keep && text[keep - 1] != '\n' ? "\n" : "",
                     chars - utf8_chars(text, keep) + missing);
    char *cut = malloc(keep + (size_t)m + 1);
    if (!cut)
        abort();
    memcpy(cut, text, keep);
    memcpy(cut + keep, marker, (size_t)m + 1);
    json_array_append_new(content, json_pack("{s:s, s:s}", "type", "text", "text", cut));
    free(cut);
    *left = 0;
    json_object_set_new(structured, "truncated", json_true());
    free(repaired);
}

/* The structured copy must not carry what the text had to leave out: cut
 * long strings the same way, drop big objects (the text keeps their start). */
static void bound_structured(json_t *structured, size_t max)
{
    const char *key;
    json_t *v;
    void *tmp;
    json_object_foreach_safe(structured, tmp, key, v)
    {
        if (json_is_string(v)) {
            const char *s = json_string_value(v);
            size_t len = json_string_length(v);
            if (utf8_chars(s, len) <= max)
                continue;
            json_object_set_new(structured, key, json_stringn(s, cut_text(s, len, max)));
            json_object_set_new(structured, "truncated", json_true());
        } else if (json_is_object(v) || json_is_array(v)) {
            char *d = json_dumps(v, JSON_COMPACT);
            size_t n = d ? utf8_chars(d, strlen(d)) : 0;
            free(d);
            if (n <= max)
                continue;
            json_object_del(structured, key);
            json_object_set_new(structured, "truncated", json_true());
        }
    }
}

void add_page(struct session *w, json_t *structured)
{
    json_object_set_new(structured, "url", json_string(w->page->url));
    json_object_set_new(structured, "title", json_string(w->page->title));
}

json_t *tool_ok(struct session *w, const char *text, json_t *structured)
{
    return tool_ok_partial(w, text, 0, structured);
}

json_t *tool_ok_partial(struct session *w, const char *text, size_t missing, json_t *structured)
{
    json_t *content = json_array();
    page_state_notes(w, content, structured);
    /* Notes above are short; what is left of the bound goes to the text. */
    size_t used = 0, i;
    json_t *item;
    json_array_foreach(content, i, item)
    {
        json_t *t = json_object_get(item, "text");
        used += utf8_chars(json_string_value(t), json_string_length(t));
    }
    size_t left = used < max_output(w) ? max_output(w) - used : 0;
    add_text(content, text, missing, &left, structured);
    bound_structured(structured, max_output(w));
    return json_pack("{s:o, s:o, s:b}", "content", content, "structured", structured, "isError", 0);
}

json_t *tool_fail(struct session *w)
{
    json_t *page = json_pack("{s:s, s:s}", "url", w->page->url, "title", w->page->title);
    /* No sessionId: the supervisor stamps every result with it, once
     * (router_workers.c, make_result). */
    json_t *body = tv_error_result_as(TV_RESULT_WIRE, w->call.err ? w->call.err : TV_BROWSER_ERROR,
                                      w->call.errmsg, w->call.errhint[0] ? w->call.errhint : NULL,
                                      NULL, page);
    json_decref(page);
    if (!body)
        abort(); /* out of memory (tv_error_result_as) */
    page_state_notes(w, json_object_get(body, "content"), json_object_get(body, "structured"));
    return body;
}

/*
 * The one way a result leaves the worker. A result the protocol cannot carry
 * (proto.h: 64 MiB, 48 MiB in one string, 262144 values, 64 levels) used to
 * be dropped here, so the caller waited for its timeout and the worker was
 * killed; it becomes an error result at once and the session carries on.
 */
int send_result(struct session *w, uint64_t id, json_t *result)
{
    int r = channel_send(w->ch, MSG_RESULT, id, result);
    if (r != CHANNEL_TOO_BIG)
        return r;
    fail_call(w, TV_NOT_SUPPORTED,
              "Pass filename (where the tool has it) to save the output to a file, or ask for "
              "less: the viewport instead of fullPage, a smaller value from the function.",
              "the result is too large to send: over %u MiB in all, %u MiB in one string, %u "
              "JSON values or %d levels of nesting (docs/limits.md)",
              PROTO_MAX_MESSAGE >> 20, PROTO_MAX_STRING >> 20, PROTO_MAX_ELEMENTS, PROTO_MAX_DEPTH);
    json_t *err = tool_fail(w);
    r = channel_send(w->ch, MSG_RESULT, id, err);
    json_decref(err);
    return r;
}

const char *arg_str(json_t *args, const char *name, const char *dflt)
{
    const char *s = json_string_value(json_object_get(args, name));
    return s ? s : dflt;
}

long long arg_int(json_t *args, const char *name, long long dflt)
{
    json_t *v = json_object_get(args, name);
    return json_is_number(v) ? (long long)json_number_value(v) : dflt;
}

bool arg_bool(json_t *args, const char *name, bool dflt)
{
    json_t *v = json_object_get(args, name);
    return json_is_boolean(v) ? json_is_true(v) : dflt;
}
