/*
 * errors.c - stable error codes and the failed tools/call result.
 */
#include "errors.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Indexed by enum tv_err; the strings are part of the public API. */
static const char *const codes[TV_ERR_COUNT] = {
    [TV_OK] = "OK",
    [TV_INVALID_PARAMETERS] = "INVALID_PARAMETERS",
    [TV_SESSION_NOT_FOUND] = "SESSION_NOT_FOUND",
    [TV_SESSION_EXPIRED] = "SESSION_EXPIRED",
    [TV_SESSION_CRASHED] = "SESSION_CRASHED",
    [TV_MAX_SESSIONS_REACHED] = "MAX_SESSIONS_REACHED",
    [TV_NAVIGATION_FAILED] = "NAVIGATION_FAILED",
    [TV_TIMEOUT] = "TIMEOUT",
    [TV_CANCELLED] = "CANCELLED",
    [TV_ELEMENT_NOT_FOUND] = "ELEMENT_NOT_FOUND",
    [TV_ELEMENT_AMBIGUOUS] = "ELEMENT_AMBIGUOUS",
    [TV_ELEMENT_NOT_VISIBLE] = "ELEMENT_NOT_VISIBLE",
    [TV_ELEMENT_NOT_CLICKABLE] = "ELEMENT_NOT_CLICKABLE",
    [TV_ELEMENT_NOT_EDITABLE] = "ELEMENT_NOT_EDITABLE",
    [TV_STALE_REF] = "STALE_REF",
    [TV_TAB_NOT_FOUND] = "TAB_NOT_FOUND",
    [TV_MODAL_STATE] = "MODAL_STATE",
    [TV_BROWSER_ERROR] = "BROWSER_ERROR",
    [TV_BROWSER_CRASHED] = "BROWSER_CRASHED",
    [TV_PAGE_CRASHED] = "PAGE_CRASHED",
    [TV_EXTENSION_NOT_CONNECTED] = "EXTENSION_NOT_CONNECTED",
    [TV_NOT_SUPPORTED] = "NOT_SUPPORTED",
    [TV_PATH_NOT_ALLOWED] = "PATH_NOT_ALLOWED",
    [TV_VERIFICATION_FAILED] = "VERIFICATION_FAILED",
};

const char *tv_err_code(enum tv_err e)
{
    if ((unsigned)e >= TV_ERR_COUNT || !codes[e])
        return "UNKNOWN";
    return codes[e];
}

enum tv_err tv_err_from_code(const char *code)
{
    if (!code)
        return TV_OK;
    for (int e = 0; e < TV_ERR_COUNT; e++)
        if (codes[e] && strcmp(codes[e], code) == 0)
            return (enum tv_err)e;
    return TV_OK;
}

/* A JSON string that cannot fail on bad input: messages may quote page text,
 * and an error path that itself errors helps nobody. If s is not valid UTF-8,
 * every non-ASCII byte becomes '?'. */
static json_t *lenient_string(const char *s, size_t n)
{
    json_t *j = json_stringn(s, n);
    if (j)
        return j;
    char *copy = malloc(n ? n : 1);
    if (!copy)
        return NULL;
    for (size_t k = 0; k < n; k++)
        copy[k] = (unsigned char)s[k] < 0x80 ? s[k] : '?';
    j = json_stringn(copy, n);
    free(copy);
    return j;
}

/* Build obj[key] = v, consuming v; -1 if v is NULL or the set fails. */
static int put(json_t *obj, const char *key, json_t *v)
{
    return v ? json_object_set_new(obj, key, v) : -1;
}

json_t *tv_error_result(enum tv_err e, const char *message, const char *hint,
                        const char *session_id, json_t *page)
{
    return tv_error_result_as(TV_RESULT_MCP, e, message, hint, session_id, page);
}

json_t *tv_error_result_as(enum tv_result_shape shape, enum tv_err e, const char *message,
                           const char *hint, const char *session_id, json_t *page)
{
    const char *code = tv_err_code(e);
    if (!message)
        message = "";

    char *text = NULL;
    int n = hint ? asprintf(&text, "%s: %s\nHint: %s", code, message, hint)
                 : asprintf(&text, "%s: %s", code, message);
    if (n < 0)
        return NULL;

    json_t *result = json_object();
    json_t *error = json_object();
    json_t *structured = json_object();
    json_t *content = json_array();
    json_t *item = json_object();
    int bad = !result || !error || !structured || !content || !item;

    bad = bad || put(error, "code", json_string(code)) < 0;
    bad = bad || put(error, "message", lenient_string(message, strlen(message))) < 0;
    bad = bad || (hint && put(error, "hint", lenient_string(hint, strlen(hint))) < 0);
    bad = bad || put(item, "type", json_string("text")) < 0;
    bad = bad || put(item, "text", lenient_string(text, (size_t)n)) < 0;
    bad = bad || (session_id &&
                  put(structured, "sessionId", lenient_string(session_id, strlen(session_id))) < 0);
    bad = bad || (page && json_object_set(structured, "page", page) < 0);
    free(text);
    if (bad) {
        json_decref(result);
        json_decref(error);
        json_decref(structured);
        json_decref(content);
        json_decref(item);
        return NULL;
    }
    /* Ownership moves into the tree; the _new setters consume even on failure. */
    json_array_append_new(content, item);
    json_object_set_new(structured, "error", error);
    json_object_set_new(result, "content", content);
    json_object_set_new(result, shape == TV_RESULT_WIRE ? "structured" : "structuredContent",
                        structured);
    json_object_set_new(result, "isError", json_true());
    return result;
}
